"""Detail pages as data: an object's YAML and a describe-like page (sections of lines plus the links it follows), built
from the model."""

from __future__ import annotations

import re
from typing import Any

import yaml
from dragoman.fleet.k8s.slices import attribute_value
from dragoman.fleet.model import DeviceView, is_bridge_claim, key_of, pod_extended_requests
from dragoman.fleet.projection import whole_of
from dragoman.fleet.views.attributes import node_pools_of
from dragoman.fleet.views.cells import short_product
from dragoman.fleet.views.pending import scheduler_message

Ref = tuple[str, str, str]
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def find_device(model, ref: Ref) -> DeviceView | None:
    driver, _, pool = ref[1].partition("/")
    for s in model.pool_slices(driver, pool)[0]:
        for d in (s.get("spec") or {}).get("devices") or ():
            if d.get("name") == ref[2]:
                node = (s.get("spec") or {}).get("nodeName") or model.slice_pool_node((driver, pool))
                return DeviceView(driver, pool, ref[2], node, key_of(s)[1], d)
    return None


# Rows that are dragoman's own summaries, not API objects: `y` shows them as dragoman computes them (and says so).
NOT_API = {
    "Pool": "# a pool is dragoman's grouping of nodes by their pool label, not an API object: its nodes and totals as\n"
    "# `dragoman check -o json` reports them\n",
    "Attribute": "# an attribute as the fleet's ResourceSlices publish it (dragoman's catalogue, not an API object)\n",
}


def raw_object(model, ref: Ref, fleet=None) -> dict | None:
    kind, ns, name = ref
    if kind == "Device":
        d = find_device(model, ref)
        return d.raw if d else None
    if kind == "Pool":
        p = model.pool(name)
        return None if p is None else {**p.to_json(), "nodeNames": list(p.nodes)}
    if kind == "Attribute":
        entry = ((getattr(fleet, "catalogue", None) or model.attribute_catalogue()).get(ns) or {}).get(name)
        return None if entry is None else {"driver": ns, "name": name, **entry}
    objs = model.objects.get(kind)
    # A projected pod (fleet/projection.py) shows as its whole object once the page has fetched it.
    return whole_of(objs.get((ns, name))) if objs is not None else None


def yaml_text(obj: dict | None, kind: str = "") -> str:
    if obj is None:
        return "# the object is gone (deleted since the view was drawn)\n"
    if kind in NOT_API:
        return NOT_API[kind] + yaml.dump(
            obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=200
        )
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=200)


class Page:
    """A describe page: titled sections of lines, and the objects it links to (in order, for `enter`)."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.sections: list[tuple[str, list[str]]] = []
        self.links: list[tuple[str, Ref]] = []

    def section(self, name: str, lines: list[str]) -> None:
        if lines:
            self.sections.append((name, lines))

    def link(self, label: str, ref: Ref) -> None:
        if all(r != ref for _, r in self.links):
            self.links.append((label, ref))

    def text(self) -> str:
        out = [self.title, ""]
        for name, lines in self.sections:
            out.append(f"{name}:")
            out.extend(f"  {line}" for line in lines)
            out.append("")
        return "\n".join(out)


_HANG = re.compile(r"^(\s*(?:· |fix: |\[(?:error|warning|info)\] |[A-Za-z][\w .()/-]{0,24}: )?)(.*)$")


class PageText:
    """A page's text drawn with hanging indents: a long line wraps under its own text, after its indent and its
    bullet, `fix:` or `label:` (it restarted at column 1). Short lines stay plain. `str()` is the plain text."""

    def __init__(self, text: str, plain_below: int = 60) -> None:
        self.plain = text
        self.plain_below = plain_below

    def __str__(self) -> str:
        return self.plain

    __repr__ = __str__  # a Static's visual names its renderable by repr: the text, not an address

    def __rich_console__(self, console, options):
        from rich.table import Table
        from rich.text import Text

        for line in self.plain.split("\n"):
            m = _HANG.match(line)
            prefix, rest = (m.group(1), m.group(2)) if m else ("", line)
            if len(line) < self.plain_below or not prefix or not rest:
                yield Text(line, overflow="fold")
                continue
            grid = Table.grid(padding=0, expand=True)
            grid.add_column(width=len(prefix), no_wrap=True)
            grid.add_column(ratio=1, overflow="fold")
            grid.add_row(Text(prefix), Text(rest))
            yield grid


def page_renderable(text: str) -> PageText:
    return PageText(text)


def _ref_text(ref: Ref) -> str:
    kind, ns, name = ref
    if kind == "Attribute":
        return f"Attribute {name}"
    return f"{kind} {ns + '/' if ns and kind != 'Device' else ''}{name}" if kind != "Device" else f"Device {ns}/{name}"


def kind_of(ref: Ref) -> str:
    return ref[0]


def _findings(page: Page, fleet, ref: Ref) -> None:
    lines = []
    for f in fleet.findings:
        if tuple(ref) not in [tuple(o) for o in f.objects]:
            continue
        lines.append(f"[{f.severity}] {f.id}: {f.summary}")
        lines.extend(f"    · {e}" for e in f.evidence)
        lines.append(f"    fix: {f.fix}")
        for o in f.objects[1:]:
            page.link(_ref_text(tuple(o)), tuple(o))
    if kind_of(ref) not in ("Pool", "Attribute") or lines:
        page.section("Findings", lines or (["none"] if fleet.diagnosed else ["diagnosis still running"]))


def describe(fleet, ref: Ref) -> Page:
    """The describe page of an object, following links: a node's slices and pods, a claim's pod and devices, a pod's
    claims (through `extendedResourceClaimStatus` too), a class and what it matches."""
    m = fleet.model
    kind, ns, name = ref
    page = Page(_ref_text(ref))
    obj = raw_object(m, ref, fleet)
    if obj is None:
        page.section("Gone", ["this object no longer exists in the cluster"])
        return page
    # Findings first: the page exists to say what is wrong and what to do.
    _findings(page, fleet, ref)
    fn = globals().get(f"_describe_{kind}")
    if fn is not None:
        fn(page, fleet, ref, obj)
    else:
        meta = obj.get("metadata") or {}
        page.section("Object", [f"namespace: {ns or '—'}", f"labels: {meta.get('labels') or {}}"])
    _events(page, fleet, ref)
    return page


EVENTS_SHOWN = 12


def _events(page: Page, fleet, ref: Ref) -> None:
    """The object's Events last, as kubectl describe and k9s show them (core/v1 and events.k8s.io/v1 alike), newest
    at the bottom; a message the page already quotes (a finding's evidence, the scheduler's words) is not said twice."""
    from dragoman.fleet.model import event_count, event_last_seen
    from dragoman.fleet.views.cells import age_text

    kind, ns, name = ref
    if kind in ("Pool", "Attribute", "Device"):
        return
    m = fleet.model
    evs = m.events_for(kind, ns, name)
    if not evs:
        page.section("Events", ["none (an API server keeps events for an hour after they last happen)"])
        return
    said = page.text()
    lines = []
    for ev in evs[-EVENTS_SHOWN:]:
        msg = " ".join(str(ev.get("message") or ev.get("note") or "").split())
        count = event_count(ev)
        when = age_text(event_last_seen(ev) or None, m.now)
        head = (
            f"{when + ' ago' if when != '—' else 'at a time not recorded'}  {ev.get('type') or 'Normal'} "
            f"{ev.get('reason') or ''}" + (f" ×{count}" if count > 1 else "")
        )
        lines.append(f"{head}: " + ("(its words are quoted above)" if msg and msg in said else msg or "—"))
    more = len(evs) - EVENTS_SHOWN
    page.section("Events", ([f"{more} older ones: :events lists every event"] if more > 0 else []) + lines)


def _describe_Node(page: Page, fleet, ref: Ref, obj: dict) -> None:
    m = fleet.model
    v = m.node(ref[2])
    page.link(f"Pool {v.pool}", ("Pool", "", v.pool))
    page.section(
        "GPUs",
        [
            f"pool: {v.pool}   product: {v.product or '—'}   kubelet: {v.kubelet_version or '?'}"
            + ("" if v.bridge_capable else "  (no extended-resource bridge: older than v1.36)"),
            f"ownership: {v.ownership} (mechanism {v.mechanism})",
            f"nvidia.com/gpu capacity {v.capacity_gpu}, allocatable {v.allocatable_gpu}"
            + (f"; MIG {v.mig_allocatable}" if v.mig_allocatable else ""),
            f"DRA devices published: {v.devices_total} ({v.devices_allocated} allocated, {v.devices_free} free)",
            (
                f"sharing: {v.sharing or 'none'}   schedulable: {'yes' if v.schedulable else 'no (cordoned)'}   "
                f"ready: {'yes' if v.ready else 'no'}"
            ),
        ]
        + ([f"taint {t.get('key')}={t.get('value', '')}:{t.get('effect')}" for t in v.taints]),
    )
    stack = []
    for label, pods in (("device plugin", v.device_plugin), ("DRA driver", v.dra_driver)):
        for p in pods:
            state = f"{p.phase}{', ready' if p.ready else ', not ready'}" + (
                f", crash-looping ({p.restarts} restarts: {p.flapping_reason})" if p.flapping else ""
            )
            stack.append(f"{label}: {p.key[0]}/{p.key[1]} ({state})")
            page.link(f"Pod {p.key[0]}/{p.key[1]} ({label})", ("Pod", p.key[0], p.key[1]))
        if not pods:
            stack.append(f"{label}: no pod")
    page.section("Stacks", stack)
    page.section("ResourceSlices", v.slices + [f"{s} (stale or incomplete)" for s in v.stale_slices])
    for s in v.slices:
        page.link(f"ResourceSlice {s}", ("ResourceSlice", "", s))
    for d in v.devices[:16]:
        page.link(
            f"Device {d.name} ({d.attribute('productName') or d.type or ''})",
            ("Device", f"{d.driver}/{d.pool}", d.name),
        )
    pods = []
    for pod in sorted(m.pods_on_node(ref[2]), key=lambda p: key_of(p)):
        pk = key_of(pod)
        asks = pod_extended_requests(pod)
        pods.append(
            f"{pk[0]}/{pk[1]}  {(pod.get('status') or {}).get('phase', '')}" + (f"  asks {asks}" if asks else "")
        )
        page.link(f"Pod {pk[0]}/{pk[1]}", ("Pod", pk[0], pk[1]))
    page.section("Pods", pods)


def _describe_Pod(page: Page, fleet, ref: Ref, obj: dict) -> None:
    m = fleet.model
    status = obj.get("status") or {}
    node = (obj.get("spec") or {}).get("nodeName")
    lines = [f"phase: {status.get('phase', '?')}   node: {node or '(not scheduled)'}"]
    asks = pod_extended_requests(obj)
    if asks:
        lines.append(f"asks through limits: {', '.join(f'{k}: {v}' for k, v in asks.items())}")
    msg = scheduler_message(obj)
    # Said once: a finding's evidence already quotes the scheduler's words (the FailedScheduling event) more often
    # than not.
    if msg and not any(msg in line for name, said in page.sections if name == "Findings" for line in said):
        lines.append(f"scheduler: {msg}")
    page.section("Pod", lines)
    if node:
        page.link(f"Node {node}", ("Node", "", node))
    claims = []
    ext = status.get("extendedResourceClaimStatus") or {}
    if ext.get("resourceClaimName"):
        claims.append(
            f"{ext['resourceClaimName']} (made by the scheduler for the extended resource: extendedResourceClaimStatus)"
        )
        page.link(
            f"ResourceClaim {ext['resourceClaimName']} (bridge)", ("ResourceClaim", ref[1], ext["resourceClaimName"])
        )
    for pod_claim, cname in m.pod_claims(obj):
        if cname and cname != ext.get("resourceClaimName"):
            claims.append(f"{pod_claim} → {cname}")
            page.link(f"ResourceClaim {cname}", ("ResourceClaim", ref[1], cname))
        elif not cname:
            claims.append(f"{pod_claim} → (no claim yet)")
    page.section("Claims", claims)
    chain = m.owner_chain(obj)
    page.section("Owners", [f"{k} {n}" for k, _ns, n in chain] if chain else [])
    for k, ons, n in chain:
        if k in m.objects:
            page.link(_ref_text((k, ons, n)), (k, ons, n))


def _describe_ResourceClaim(page: Page, fleet, ref: Ref, obj: dict) -> None:
    m = fleet.model
    status = obj.get("status") or {}
    lines = [
        ("made by the scheduler for a pod's extended resource (the bridge)" if is_bridge_claim(obj) else "a claim"),
        f"allocated: {'yes' if status.get('allocation') else 'no'}",
    ]
    for req in ((obj.get("spec") or {}).get("devices") or {}).get("requests") or ():
        body = req.get("exactly") or req
        cls = body.get("deviceClassName")
        lines.append(
            f"request {req.get('name', '')}: {body.get('count', 1)}× class {cls}"
            + (
                f", selectors {[s.get('cel', {}).get('expression') for s in body.get('selectors') or ()]}"
                if body.get("selectors")
                else ""
            )
        )
        if cls:
            page.link(f"DeviceClass {cls}", ("DeviceClass", "", cls))
    page.section("Claim", lines)
    for pk in m.claim_pods(obj):
        page.link(f"Pod {pk[0]}/{pk[1]}", ("Pod", pk[0], pk[1]))
    page.section("Pods", [f"{pk[0]}/{pk[1]}" for pk in m.claim_pods(obj)])
    devs = m.claim_devices(obj)
    page.section("Devices", [f"{d[0]} / {d[1]} / {d[2]}" + _result_words(obj, d) for d in devs])
    # What the drivers wrote about the devices (status.devices): conditions, binding ones included, and network data.
    dev_status = []
    for e in status.get("devices") or ():
        if not isinstance(e, dict):
            continue
        conds = ", ".join(
            f"{c.get('type')}={c.get('status')}" + (f" ({c.get('message')})" if c.get("message") else "")
            for c in e.get("conditions") or ()
            if isinstance(c, dict)
        )
        dev_status.append(f"{e.get('device', '')} on {e.get('pool', '')}: {conds or 'no conditions'}")
    if dev_status:
        page.section("Device status", dev_status)
    for d in devs:
        page.link(f"Device {d[2]} on {d[1]}", ("Device", f"{d[0]}/{d[1]}", d[2]))
    node = m.claim_node(obj)
    if node:
        page.link(f"Node {node}", ("Node", "", node))


def _result_words(claim: dict, device: tuple[str, str, str]) -> str:
    """What one allocation result says beyond its device: admin access, a share, binding state."""
    from dragoman.fleet.k8s.devicestate import binding_state, result_entries

    out = []
    for d, r in result_entries(claim):
        if d != device:
            continue
        if r.get("adminAccess"):
            out.append("admin access (holds nothing)")
        if r.get("consumedCapacity"):
            out.append("share " + ", ".join(f"{k} {v}" for k, v in r["consumedCapacity"].items()))
        b = binding_state(claim, d, r)
        if b is not None:
            out.append(f"{'binding failed' if b[0] == 'binding-failed' else 'binding pending'}: {b[1]}")
    return ("  — " + "; ".join(out)) if out else ""


def _describe_DeviceClass(page: Page, fleet, ref: Ref, obj: dict) -> None:
    m = fleet.model
    cv = m.classes().get(ref[2])
    spec = obj.get("spec") or {}
    lines = [f"extendedResourceName: {spec.get('extendedResourceName') or '—'}"]
    if cv is not None:
        lines.append(f"serves: {', '.join(cv.serves) or 'nothing'}")
        for res, winner in (cv.shadowed_by or {}).items():
            lines.append(f"names {res} but {winner} wins it (newer)")
    for s in spec.get("selectors") or ():
        lines.append(f"selector: {(s.get('cel') or {}).get('expression', '')}")
    page.section("Class", lines)
    res = m.class_matches(ref[2])
    by_node: dict[str, int] = {}
    for d in res.matched:
        n = m.slice_pool_node(d[:2]) or "?"
        by_node[n] = by_node.get(n, 0) + 1
    match = [
        f"{len(res.matched)} devices match of {res.evaluated}"
        + (f"; {len(res.errors)} fail at runtime" if res.errors else "")
    ]
    if res.compile_error:
        match.append(f"compile error: {res.compile_error}")
    if res.errors:
        match.append(f"first error: {next(iter(res.errors.values()))}")
    match.extend(f"{n}: {c}" for n, c in sorted(by_node.items()))
    page.section("Matches", match)
    for n in sorted(by_node):
        page.link(f"Node {n}", ("Node", "", n))


def _describe_ResourceSlice(page: Page, fleet, ref: Ref, obj: dict) -> None:
    spec = obj.get("spec") or {}
    pool = spec.get("pool") or {}
    page.section(
        "Slice",
        [
            f"driver: {spec.get('driver')}   node: {spec.get('nodeName') or '—'}",
            f"pool: {pool.get('name')} generation {pool.get('generation')} ({pool.get('resourceSliceCount')} slices)",
            f"devices: {len(spec.get('devices') or ())}",
        ],
    )
    if spec.get("nodeName"):
        page.link(f"Node {spec['nodeName']}", ("Node", "", spec["nodeName"]))
    for d in spec.get("devices") or ():
        page.link(f"Device {d.get('name')}", ("Device", f"{spec.get('driver')}/{pool.get('name')}", d.get("name", "")))


def _describe_Device(page: Page, fleet, ref: Ref, obj: dict) -> None:
    m = fleet.model
    d = find_device(m, ref)
    assert d is not None  # describe() calls this only for a device raw_object found
    lines = [f"driver: {d.driver}   pool: {d.pool}   node: {d.node or '—'}   slice: {d.slice}"]
    page.section("Device", lines)
    attrs = [f"{k} = {attribute_value(v)[1]}" for k, v in sorted((obj.get("attributes") or {}).items())]
    page.section("Attributes", attrs)
    caps = [
        f"{k} = {(v or {}).get('value') if isinstance(v, dict) else v}"
        for k, v in sorted((obj.get("capacity") or {}).items())
    ]
    page.section("Capacity", caps)
    st = m.device_state(d.id)
    alloc = [f"state: {st.words()}" + ("" if st.allocatable else "  (the allocator cannot give it to a new claim now)")]
    alloc += [f"held by claim {ns}/{n}" for ns, n in st.holders]
    alloc += [f"seen with admin access by claim {ns}/{n} (holds nothing)" for ns, n in st.admin]
    if st.binding is not None:
        alloc.append(f"binding: {st.binding[0]} for claim {st.binding[1][0]}/{st.binding[1][1]}: {st.binding[2]}")
    page.section("Allocation", alloc)
    if st.shared:
        page.section("Shared capacity", [sh.text() for sh in st.shares] or ["allowMultipleAllocations, no capacity"])
    if st.taints:
        page.section(
            "Taints",
            [t.text() + ("" if t.blocking else "  (informational)") for t in st.taints],
        )
        for t in st.taints:
            if t.source.startswith("DeviceTaintRule "):
                name = t.source.removeprefix("DeviceTaintRule ")
                page.link(t.source, ("DeviceTaintRule", "", name))
    consumes = d.consumes_counters
    if consumes:
        sets = m.device_states().counter_sets(d.id[:2])
        lines = []
        for cc in consumes:
            cs = str(cc.get("counterSet", ""))
            names = ", ".join(sorted((cc.get("counters") or {}).keys()))
            lines.append(f"consumes {names} of counter set {cs} ({len(sets.get(cs, {}))} counters published)")
        lines += [b.text() for b in st.counters]
        page.section("Counters", lines)
    for ns, n in dict.fromkeys([*st.holders, *st.admin, *(b for c in st.counters for b in c.claims)]):
        page.link(f"ResourceClaim {ns}/{n}", ("ResourceClaim", ns, n))
    if d.node:
        page.link(f"Node {d.node}", ("Node", "", d.node))
    page.link(f"ResourceSlice {d.slice}", ("ResourceSlice", "", d.slice))


def _describe_Pool(page: Page, fleet, ref: Ref, obj: Any) -> None:
    m = fleet.model
    p = m.pool(ref[2])
    if p is None:
        page.section("Gone", ["no node carries this pool any more"])
        return

    def counts(d: dict) -> str:
        return ", ".join(f"{v} {k}" for k, v in sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"

    page.section(
        "Pool",
        [
            f"ownership: {p.ownership}"
            + (f" ({counts(p.ownership_counts)} nodes)" if p.ownership_counts else "")
            + f"   target: {p.target or '—'}",
            f"GPU models: {', '.join(f'{short_product(k)} ×{v}' for k, v in p.products.items()) or '—'}",
            (
                f"GPUs via device plugin (allocatable): {p.allocatable_gpus}   DRA devices: "
                f"{p.devices_free}/{p.devices} free"
            ),
            f"kubelets: {counts(p.kubelet_versions)}   sharing: {counts(p.sharing)}   cordoned: {p.cordoned}",
        ]
        + ([f"migration: {counts(p.migration)}"] if p.migration else []),
    )
    for n in p.nodes:
        page.link(f"Node {n}", ("Node", "", n))
    lines = [f"[{f.severity}] {f.id}: {f.summary}" for f in fleet.by_pool.get(ref[2], ())]
    page.section("Findings of the pool", lines)


def _describe_Attribute(page: Page, fleet, ref: Ref, entry: dict) -> None:
    """An attribute across the fleet: its type, every value with its device count, the node pools, and how to filter."""
    driver, qn = ref[1], ref[2]
    short = qn.split("/", 1)[-1]
    values = entry.get("values") or {}
    kind = entry.get("type", "?") if entry.get("kind") == "attribute" else "capacity"
    page.section("Attribute", [f"{qn} ({kind}) published by driver {driver} on {entry.get('devices', 0)} devices"])
    page.section("Values (devices)", [f"{v}: {n}" for v, n in values.items()] or ["none"])
    pools = node_pools_of(fleet, driver, entry)
    page.section("Node pools", [", ".join(pools) or "—"])
    first = next(iter(values), None)
    page.section(
        "Use it",
        [
            f"Devices view: / {short}={first}" if first is not None else f"Devices view: / {short}=VALUE",
            f'CEL: device.attributes["{qn.split("/", 1)[0]}"].{short}'
            if kind != "capacity"
            else f'CEL: device.capacity["{qn.split("/", 1)[0]}"].{short}',
        ],
    )
    for p in pools:
        page.link(f"Pool {p}", ("Pool", "", p))
