"""The Nodes view (of a pool after enter on it): ownership, the plugin and driver pods, GPUs, devices, findings;
enter opens the node's devices.

Rows follow `Delta.nodes` (fleet/delta.py); a new diagnosis redoes the nodes whose findings changed."""

from __future__ import annotations

from collections.abc import Sequence

from dragoman.fleet.findings import Finding
from dragoman.fleet.glyphs import glyph, labelled
from dragoman.fleet.model import NodeView, StackPod
from dragoman.fleet.views.base import View
from dragoman.fleet.views.cells import Cell, findings_cell, ownership_cell

COLUMNS = (
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


def stack_pod_cell(pods: Sequence[StackPod]) -> Cell:
    if not pods:
        return Cell("—", "muted")
    p = pods[0]
    if p.flapping:
        return Cell(f"{labelled('crash', 'crash')} ×{p.restarts}", "error")
    if p.running and p.ready:
        return Cell(labelled("up", "running"), "ok")
    if p.running:
        return Cell(labelled("waiting", "unready"), "warning")
    return Cell(f"{glyph('waiting')} {p.phase.lower() or 'pending'}", "warning")


def node_row(v: NodeView, findings: Sequence[Finding] = ()) -> tuple:
    if not v.ready:
        state = Cell(labelled("error", "NotReady"), "error")
    elif not v.schedulable:
        state = Cell(labelled("cordoned", "cordoned"), "warning")
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


def node_facets(v: NodeView) -> dict:
    return {**{k: str(val) for k, val in v.labels.items()}, "pool": v.pool, "ownership": v.ownership, "node": v.name}


class NodesView(View):
    name, title = "nodes", "Nodes"
    columns = COLUMNS
    uses_findings = True
    empty = "no nodes here"

    def _keys(self, fleet) -> list[str]:
        if self.scope and self.scope[0] == "pool":
            return fleet.model.pool_members(self.scope[1])
        return fleet.model.node_names()

    def row(self, fleet, key):
        v = fleet.model.node(key)
        if v is None or (self.scope and self.scope[0] == "pool" and v.pool != self.scope[1]):
            return None
        return node_row(v, fleet.by_object.get(("Node", "", key), ())), node_facets(v)

    def order(self, fleet):
        # Sorted by name (the default sort_key: the key); every node `_keys` names has a row.
        return ((n, n) for n in self._keys(fleet))

    def all_rows(self, fleet):
        for n in self._keys(fleet):
            r = self.row(fleet, n)
            if r:
                yield n, r[0], r[1]

    def affected(self, fleet, t):
        return None if t.everything else t.nodes

    def findings_changed(self, fleet, refs, pools):
        return [n for kind, _ns, n in refs if kind == "Node"]

    def ref(self, fleet, key):
        return ("Node", "", key)

    def drill(self, fleet, key):
        return ("devices", ("node", key))
