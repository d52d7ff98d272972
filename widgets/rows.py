"""Pure render functions: one model object in, one table row (cells) out, for every view of the fleet; no Textual, tested on fixtures."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from dragoman.fleet.findings import SEVERITY_ORDER, Finding
from dragoman.widgets.cells import Cell, ownership_cell, severity_cell

SEV_GLYPH = {"error": "✖", "warning": "▲", "info": "ℹ"}


def short_product(product: str) -> str:
    """GPU Feature Discovery's product label, without the vendor prefix a pool column has no room for."""
    for prefix in ("NVIDIA-", "NVIDIA ", "Tesla-"):
        if product.startswith(prefix) and prefix != "Tesla-":
            return product[len(prefix) :]
    return product


def counts_text(counts: dict[str, int], *, shorten=lambda s: s, sep: str = ", ") -> str:
    return sep.join(
        f"{shorten(k)}×{v}" if v != 1 else shorten(k) for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def findings_cell(findings: Iterable[Finding]) -> Cell:
    """Counts by severity with glyphs: `✖2 ▲1`; the tone is the worst severity present."""
    c = Counter(f.severity for f in findings)
    if not c:
        return Cell("—", "muted")
    parts = [f"{SEV_GLYPH[s]}{c[s]}" for s in ("error", "warning", "info") if c.get(s)]
    worst = min(c, key=lambda s: SEVERITY_ORDER.get(s, 9))
    return Cell(" ".join(parts), worst if worst != "info" else "info")


# ---------------------------------------------------------------------------- pools

POOL_COLUMNS = (
    ("pool", "POOL", 8, 24),
    ("ownership", "OWNERSHIP", 8, 14),
    ("nodes", "NODES", 5, 7),
    ("models", "GPU MODELS", 8, 34),
    ("plugin", "PLUGIN", 5, 10),
    ("dra", "DRA FREE", 5, 14),
    ("findings", "FINDINGS", 6, 14),
    ("sharing", "SHARING", 5, 20),
    ("kubelet", "KUBELET", 6, 26),
    ("migration", "MIGRATION", 6, None),
)


def pool_row(p, findings: Sequence[Finding] = ()) -> tuple:
    """A PoolView as a row: GPUs through the device plugin are node allocatable; DRA devices are free/total."""
    own = p.ownership
    if own == "mixed":
        # Glyph and count per mechanism (▲ plugin, ● DRA, ✖ both, ↯ flapping): the words are in the legend and on the nodes.
        order = ("both", "flapping", "dra", "device-plugin", "migrating", "none")
        parts = [
            f"{ownership_cell(k).text.split(' ')[0]}{v}"
            for k, v in sorted(p.ownership_counts.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 9)
        ]
        own_cell = Cell(
            "◐ " + " ".join(parts),
            "both" if "both" in p.ownership_counts or "flapping" in p.ownership_counts else "warning",
        )
    else:
        own_cell = ownership_cell(own)
    nodes = f"{len(p.gpu_nodes)}/{len(p.nodes)}" if len(p.gpu_nodes) != len(p.nodes) else str(len(p.nodes))
    kubelets = counts_text({k.split("-")[0]: v for k, v in _merge_kubelets(p.kubelet_versions).items()}, sep=" ")
    migration = (
        counts_text(p.migration) if p.migration else (f"→ target {p.target}" if p.target and own == "mixed" else "—")
    )
    return (
        p.name,
        own_cell,
        nodes + (f" ⊘{p.cordoned}" if p.cordoned else ""),
        counts_text(p.products, shorten=short_product) or "—",
        str(p.allocatable_gpus) if p.allocatable_gpus or p.capacity_gpus else "—",
        # Free of all, in the CLI's words (`dragoman check` prints "106/112 free").
        f"{p.devices_free}/{p.devices} free" if p.devices else "—",
        findings_cell(findings),
        counts_text(p.sharing) or "—",
        kubelets or "—",
        migration,
    )


def _merge_kubelets(versions: dict[str, int]) -> dict[str, int]:
    out: Counter = Counter()
    for k, v in versions.items():
        out[k.split("-")[0]] += v
    return dict(out)


def fleet_summary(pools: Sequence, findings: Sequence[Finding]) -> str:
    """The one line above the Pools table: nodes, GPUs on each mechanism, pools per ownership, findings."""
    gpu_nodes = sum(len(p.gpu_nodes) for p in pools)
    nodes = sum(len(p.nodes) for p in pools)
    alloc = sum(p.allocatable_gpus for p in pools)
    devices = sum(p.devices for p in pools)
    free = sum(p.devices_free for p in pools)
    owners = Counter(p.ownership for p in pools if p.is_gpu)
    own_text = " ".join(
        f"{ownership_cell(k).text if k != 'mixed' else '◐ mixed'} {v}" for k, v in sorted(owners.items())
    )
    sev = Counter(f.severity for f in findings)
    f_text = " ".join(f"{SEV_GLYPH[s]}{sev[s]}" for s in ("error", "warning", "info") if sev.get(s)) or "none"
    return (
        f"{len(pools)} pools · {nodes} nodes ({gpu_nodes} GPU) · {alloc} GPUs via plugin · "
        f"{devices} DRA devices ({devices - free} allocated) · pools: {own_text} · findings {f_text}"
    )


# ---------------------------------------------------------------------------- nodes

NODE_COLUMNS = (
    ("node", "NODE", 14, 48),
    ("ownership", "OWNERSHIP", 8, 12),
    ("sched", "STATE", 5, 11),
    ("plugin", "PLUGIN POD", 6, 14),
    ("driver", "DRA POD", 6, 14),
    ("gpu", "GPU CAP/ALLOC", 5, 13),
    ("devices", "DEV USED/ALL", 5, 12),
    ("findings", "FINDINGS", 5, 12),
    ("kubelet", "KUBELET", 6, 10),
    ("taints", "TAINTS", 5, None),
)


def stack_pod_cell(pods) -> Cell:
    if not pods:
        return Cell("—", "muted")
    p = pods[0]
    if p.flapping:
        return Cell(f"↯ crash ×{p.restarts}", "error")
    if p.running and p.ready:
        return Cell("✔ running", "ok")
    if p.running:
        return Cell("… unready", "warning")
    return Cell(f"… {p.phase.lower() or 'pending'}", "warning")


def node_row(v, findings: Sequence[Finding] = ()) -> tuple:
    if not v.ready:
        state = Cell("✖ NotReady", "error")
    elif not v.schedulable:
        state = Cell("⊘ cordoned", "warning")
    else:
        state = Cell("ready", None)
    gpu = f"{v.capacity_gpu}/{v.allocatable_gpu}" if (v.capacity_gpu or v.has_allocatable_key) else "—"
    if v.mig_capacity:
        gpu += " +mig"
    devices = f"{v.devices_allocated}/{v.devices_total}" if v.devices_total else "—"
    taints = ", ".join(f"{t.get('key')}:{t.get('effect')}" for t in v.taints) or "—"
    return (
        v.name,
        ownership_cell(v.ownership),
        state,
        stack_pod_cell(v.device_plugin),
        stack_pod_cell(v.dra_driver),
        gpu,
        devices,
        findings_cell(findings),
        (v.kubelet_version or "?").split("-")[0],
        taints,
    )


def node_facets(v) -> dict:
    return {**{k: str(val) for k, val in v.labels.items()}, "pool": v.pool, "ownership": v.ownership, "node": v.name}


# ---------------------------------------------------------------------------- devices

DEVICE_COLUMNS = (
    ("driver", "DRIVER", 6, 16),
    ("pool", "POOL", 6, 22),
    ("node", "NODE", 10, 48),
    ("device", "DEVICE", 5, 16),
    ("type", "TYPE", 3, 8),
    ("product", "PRODUCT", 6, 26),
    ("memory", "MEMORY", 4, 8),
    ("claim", "CLAIM", 5, None),
)


def attr_value(attr) -> object:
    if not isinstance(attr, dict):
        return attr
    for t in ("string", "int", "bool", "version", "strings", "ints", "bools", "versions"):
        if attr.get(t) is not None:
            return attr[t]
    return None


def device_row(d, node_pool: str | None, claim: tuple[str, str] | None) -> tuple:
    """A DeviceView as a row: its node pool (not the ResourceSlice pool), its type, product, memory and holder."""
    mem = (d.raw.get("capacity") or {}).get("memory") or {}
    mem = mem.get("value") if isinstance(mem, dict) else mem
    return (
        d.driver,
        node_pool or "—",
        d.node or "(network)",
        d.name,
        str(d.type or "—"),
        str(d.attribute("productName") or "—"),
        str(mem or "—"),
        Cell(f"{claim[0]}/{claim[1]}", "accent") if claim else Cell("free", "ok"),
    )


def device_facets(d, node_pool: str | None) -> dict:
    out = {"driver": d.driver, "pool": node_pool or "", "node": d.node or "", "device": d.name}
    for name, attr in (d.raw.get("attributes") or {}).items():
        v = attr_value(attr)
        out[name] = str(v).lower() if isinstance(v, bool) else str(v)
        if "/" in name:
            out.setdefault(name.split("/", 1)[1], out[name])
    for name, cap in (d.raw.get("capacity") or {}).items():
        out.setdefault(name, str(cap.get("value") if isinstance(cap, dict) else cap))
    return out


# ---------------------------------------------------------------------------- attributes

ATTRIBUTE_COLUMNS = (
    ("attribute", "ATTRIBUTE", 10, 40),
    ("type", "TYPE", 8, 9),
    ("devices", "DEVICES", 7, 7),
    ("values", "VALUES (devices)", 16, 60),
    ("pools", "NODE POOLS", 10, None),
)


def attribute_row(qualified: str, entry: dict, node_pools: Sequence[str] | None = None) -> tuple:
    """One attribute or capacity across the fleet; `node_pools` are the node pools whose devices publish it."""
    values = entry.get("values") or {}
    shown = ", ".join(f"{v} ({n})" for v, n in list(values.items())[:4])
    if len(values) > 4:
        shown += f", +{len(values) - 4} more"
    pools = list(node_pools) if node_pools is not None else list(entry.get("pools") or [])
    kind = entry.get("type", "?") if entry.get("kind") == "attribute" else "capacity"
    return (qualified, kind, str(entry.get("devices", 0)), shown, ", ".join(pools) or "—")


# ---------------------------------------------------------------------------- claims

CLAIM_COLUMNS = (
    ("state", "STATE", 6, 12),
    ("claim", "CLAIM", 10, 80),
    ("source", "MADE BY", 8, 10),
    ("pod", "POD", 6, 48),
    ("devices", "DEVICES", 4, 24),
    ("node", "NODE", 6, None),
)

CLAIM_RANK = {"failed": 0, "pending": 1, "reserved": 2, "allocated": 3}


def claim_state(claim: dict, pod_phase: str | None) -> str:
    status = claim.get("status") or {}
    if pod_phase == "Failed":
        return "failed"
    if not status.get("allocation"):
        return "pending"
    return "reserved" if status.get("reservedFor") else "allocated"


def claim_row(
    claim: dict,
    state: str,
    bridge: bool,
    pods: Sequence[tuple[str, str]],
    devices: Sequence[tuple[str, str, str]],
    node: str | None,
) -> tuple:
    meta = claim.get("metadata") or {}
    tone = {"failed": "error", "pending": "warning", "reserved": "ok", "allocated": "ok"}[state]
    glyph = {"failed": "✖", "pending": "…", "reserved": "●", "allocated": "○"}[state]
    if bridge:
        source = Cell("⇄ bridge", "dra")
    elif meta.get("ownerReferences"):
        source = Cell("template", None)
    else:
        source = Cell("claim", None)
    dev = ", ".join(d[2] for d in devices[:3]) + (f" +{len(devices) - 3}" if len(devices) > 3 else "")
    return (
        Cell(f"{glyph} {state}", tone),
        f"{meta.get('namespace', '')}/{meta.get('name', '')}",
        source,
        ", ".join(p[1] for p in pods) or "—",
        dev or "—",
        node or "—",
    )


# ---------------------------------------------------------------------------- stuck pods and findings

STUCK_COLUMNS = (
    ("pod", "POD", 12, 48),
    ("finding", "FINDING", 8, 22),
    ("why", "WHY", 16, None),
    ("namespace", "NAMESPACE", 6, 16),
    ("phase", "PHASE", 5, 9),
    ("asks", "ASKS FOR", 6, 26),
)


def pod_asks(pod: dict) -> str:
    from dragoman.fleet.model import pod_extended_requests

    parts = [f"{k}: {v}" for k, v in sorted(pod_extended_requests(pod).items())]
    claims = (pod.get("spec") or {}).get("resourceClaims") or ()
    if claims:
        parts.append(f"{len(claims)} claim{'s' if len(claims) != 1 else ''}")
    return ", ".join(parts) or "—"


def stuck_row(pod: dict, findings: Sequence[Finding]) -> tuple:
    meta = pod.get("metadata") or {}
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    f = sorted(findings, key=lambda f: SEVERITY_ORDER.get(f.severity, 9))
    first = f[0] if f else None
    finding = Cell(f"{SEV_GLYPH[first.severity]} {first.id}", first.severity) if first else Cell("—", "muted")
    why = first.summary if first else scheduler_message(pod) or "no finding explains it yet"
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    why = without_subject(why, "Pod", ns, name)
    return (
        name,
        finding,
        why,
        ns,
        Cell(phase, "warning" if phase == "Pending" else "error" if phase == "Failed" else None),
        pod_asks(pod),
    )


def scheduler_message(pod: dict) -> str:
    """The scheduler's words: the PodScheduled=False condition's message, or the kubelet's reason for a failed pod."""
    status = pod.get("status") or {}
    for c in status.get("conditions") or ():
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return str(c.get("message") or c.get("reason") or "")
    if status.get("phase") == "Failed":
        return f"{status.get('reason', '')}: {status.get('message', '')}".strip(": ")
    return ""


FINDING_COLUMNS = (
    ("severity", "SEVERITY", 6, 10),
    ("id", "ID", 8, 26),
    ("pool", "POOL", 4, 16),
    ("object", "OBJECT", 10, 64),
    ("summary", "SUMMARY", 10, None),
)


def finding_row(f: Finding) -> tuple:
    kind, ns, name = f.objects[0] if f.objects else ("", "", "")
    obj = f"{kind} {ns + '/' if ns else ''}{name}" if kind else "—"
    return (severity_cell(f.severity), f.id, f.pool or "—", obj, without_subject(f.summary, kind, ns, name))


def without_subject(summary: str, kind: str, ns: str, name: str) -> str:
    """A summary without its leading object name, which the row's own OBJECT (or POD) column already shows."""
    full = f"{ns}/{name}" if ns else name
    for subject in (f"{kind} {full}", f"{kind.lower()} {full}", full):
        for sep in (": ", " "):
            if subject and summary.startswith(subject + sep):
                return summary[len(subject) + len(sep) :]
    return summary


def finding_facets(f: Finding) -> dict:
    kind, ns, name = f.objects[0] if f.objects else ("", "", "")
    return {"severity": f.severity, "id": f.id, "pool": f.pool or "", "kind": kind, "namespace": ns, "name": name}
