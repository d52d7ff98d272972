"""The fleet summary and findings as `dragoman check` prints them: JSON (schemaVersion 1) and text for an 80-column
terminal."""

from __future__ import annotations

import shutil
import textwrap
from collections import Counter

from dragoman.fleet.accounting import account
from dragoman.fleet.accounting import text_lines as accounting_lines
from dragoman.fleet.errors import NAME_SHOWN, printable, shown_words
from dragoman.fleet.findings import ERROR, INFO, WARNING, Finding
from dragoman.fleet.model import FleetModel
from dragoman.fleet.pools import PoolView

SCHEMA_VERSION = 1
_LABEL = {ERROR: "ERROR", WARNING: "WARN", INFO: "INFO"}


def counts(findings: list[Finding]) -> dict[str, int]:
    c = Counter(f.severity for f in findings)
    return {"errors": c[ERROR], "warnings": c[WARNING], "info": c[INFO]}


def check_report(
    model: FleetModel, findings: list[Finding], rules: list[dict] | None = None, rules_note: str = ""
) -> dict:
    """The JSON document of `dragoman check --output json`; `rules`: PrometheusRules when the monitoring API was
    read."""
    pools = model.pools()
    nodes = model.nodes()
    # From the slices, not from the nodes: network-attached devices and a snapshot's slices without their Node objects
    # count too.
    devices, free = model.device_totals()
    return {
        "schemaVersion": SCHEMA_VERSION,
        "poolLabel": model.pool_label,
        "summary": {
            "pools": len(pools),
            "nodes": len(nodes),
            "gpuNodes": sum(1 for v in nodes if v.is_gpu),
            "allocatableGpus": sum(v.allocatable_gpu for v in nodes),
            "devices": devices,
            "devicesFree": free,
            **counts(findings),
        },
        "pools": [p.to_json() for p in pools],
        "accounting": account(model, rules=rules, rules_note=rules_note).to_json(),
        "findings": [f.to_json() for f in findings],
    }


def _served_by(p: PoolView) -> str:
    if p.ownership != "mixed":
        return p.ownership
    parts = ", ".join(f"{n} {o}" for o, n in sorted(p.ownership_counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"mixed ({parts})"


def pools_table(model: FleetModel, width: int = 80) -> list[str]:
    rows = [("POOL", "NODES", "PLUGIN GPUS", "DRA DEVICES", "SERVED BY")]
    for p in model.pools():
        if not p.is_gpu:
            continue
        nodes = f"{len(p.gpu_nodes)}" + (f"/{len(p.nodes)}" if len(p.nodes) != len(p.gpu_nodes) else "")
        devices = f"{p.devices_free}/{p.devices} free" if p.devices else "-"
        rows.append(
            (
                printable(p.name, NAME_SHOWN),
                nodes,
                str(p.allocatable_gpus) if p.allocatable_gpus else "-",
                devices,
                _served_by(p),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lead = sum(widths) + 2 * 4
    out = []
    for r in rows:
        head = "  ".join(cell.ljust(widths[i]) if i in (0,) else cell.rjust(widths[i]) for i, cell in enumerate(r[:4]))
        last = textwrap.wrap(r[4], max(20, width - lead)) or [""]
        out.append(f"{head}  {last[0]}".rstrip())
        out += [" " * lead + more for more in last[1:]]
    return out


def _devices_outside_pools(model: FleetModel, width: int) -> list[str]:
    """Devices no node pool counts: network-attached ones, and a snapshot's slices whose Node objects it lacks."""
    devices, free = model.device_totals()
    pools = model.pools()
    outside = devices - sum(p.devices for p in pools)
    if outside <= 0:
        return []
    outside_free = max(free - sum(p.devices_free for p in pools), 0)
    text = (
        f"DRA devices of no known node (network-attached, or their Node objects are not in view): {outside}, "
        f"{outside_free} free"
    )
    return [""] + textwrap.wrap(text, width)


def _obj(ref: tuple[str, str, str]) -> str:
    kind, ns, name = ref
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def finding_lines(f: Finding, width: int = 80, evidence: bool = True) -> list[str]:
    label = _LABEL[f.severity]
    head = f"{label:<5} {f.id}" + (f"  (pool {printable(f.pool, NAME_SHOWN)})" if f.pool else "")
    body_indent = " " * 6
    wrap = lambda text, first=body_indent, rest=body_indent + "  ": textwrap.wrap(  # noqa: E731
        shown_words(text),
        width,
        initial_indent=first,
        subsequent_indent=rest,
        break_on_hyphens=False,
        break_long_words=True,
    )
    out = [head]
    out += wrap(f.summary, body_indent, body_indent)
    if evidence:
        for e in f.evidence:
            out += wrap(e, body_indent + "- ", body_indent + "  ")
        objs = ", ".join(_obj(o) for o in f.objects[:4]) + (
            f" and {len(f.objects) - 4} more" if len(f.objects) > 4 else ""
        )
        out += wrap(f"objects: {objs}", body_indent, body_indent + "  ")
    out += wrap(f"fix: {f.fix}", body_indent, body_indent + "     ")
    return out


def render_text(
    model: FleetModel,
    findings: list[Finding],
    width: int | None = None,
    evidence: bool = True,
    rules: list[dict] | None = None,
    rules_note: str = "",
) -> str:
    """The fleet's pools and every finding, most severe first, wrapped to the terminal (80 columns when unknown)."""
    if width is None:
        width = min(shutil.get_terminal_size((80, 24)).columns, 120)
    width = max(60, width)
    lines = [f"Pools (by {model.pool_label or 'no pool label: one group'})", ""]
    lines += pools_table(model, width)
    lines += _devices_outside_pools(model, width)
    lines += ["", "Accounting (what sums of node allocatable see)", ""] + accounting_lines(
        account(model, rules=rules, rules_note=rules_note), width
    )
    c = counts(findings)
    lines += ["", f"{len(findings)} findings: {c['errors']} errors, {c['warnings']} warnings, {c['info']} info"]
    for f in findings:
        lines.append("")
        lines += finding_lines(f, width, evidence)
    if not findings:
        lines.append("Nothing to report: every GPU node is served by exactly one mechanism and no pod is stuck.")
    return "\n".join(lines) + "\n"
