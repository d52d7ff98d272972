"""The Pools view: one row per node pool (ownership, GPUs on each mechanism, findings); enter opens its nodes.

Rows follow `Delta.pools` (a node's change reaches its pool through fleet/delta.py); a new diagnosis redoes the pools
whose findings changed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from dragoman.fleet.findings import Finding
from dragoman.fleet.glyphs import glyph, labelled
from dragoman.fleet.pools import PoolView
from dragoman.fleet.views.base import Fleet, View
from dragoman.fleet.views.cells import SEV_GLYPH, Cell, counts_text, findings_cell, ownership_cell, short_product

COLUMNS = (
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


def pool_row(p: PoolView, findings: Sequence[Finding] = ()) -> tuple:
    """A PoolView as a row: GPUs through the device plugin are node allocatable; DRA devices are free/total."""
    own = p.ownership
    if own == "mixed":
        # Glyph and count per mechanism (◇ plugin, ● DRA, ✖ both, ↯ flapping): the words are in the legend and on
        # the nodes.
        order = ("both", "flapping", "dra", "device-plugin", "migrating", "none")
        parts = [
            f"{ownership_cell(k).text.split(' ')[0]}{v}"
            for k, v in sorted(p.ownership_counts.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 9)
        ]
        own_cell = Cell(
            glyph("mixed") + " " + " ".join(parts),
            "both" if "both" in p.ownership_counts or "flapping" in p.ownership_counts else "warning",
        )
    else:
        own_cell = ownership_cell(own)
    nodes = f"{len(p.gpu_nodes)}/{len(p.nodes)}" if len(p.gpu_nodes) != len(p.nodes) else str(len(p.nodes))
    kubelets = counts_text({k.split("-")[0]: v for k, v in _merge_kubelets(p.kubelet_versions).items()}, sep=" ")
    migration = (
        counts_text(p.migration)
        if p.migration
        else (f"{labelled('migrating', 'target')} {p.target}" if p.target and own == "mixed" else "—")
    )
    return (
        p.name,
        own_cell,
        nodes + (f" {glyph('cordoned')}{p.cordoned}" if p.cordoned else ""),
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


def fleet_summary(pools: Sequence[PoolView], findings: Sequence[Finding], diagnosed: bool = True) -> str:
    """The one line above the Pools table: nodes, GPUs on each mechanism, pools per ownership, findings (or that the
    first diagnosis is still running: "none" before it ends would be a false all-clear)."""
    gpu_nodes = sum(len(p.gpu_nodes) for p in pools)
    nodes = sum(len(p.nodes) for p in pools)
    alloc = sum(p.allocatable_gpus for p in pools)
    devices = sum(p.devices for p in pools)
    free = sum(p.devices_free for p in pools)
    owners = Counter(p.ownership for p in pools if p.is_gpu)
    own_text = " ".join(f"{ownership_cell(k).text} {v}" for k, v in sorted(owners.items()))
    sev = Counter(f.severity for f in findings)
    f_text = " ".join(f"{SEV_GLYPH[s]}{sev[s]}" for s in ("error", "warning", "info") if sev.get(s)) or "none"
    if not diagnosed:
        f_text = "still computing…"
    return (
        f"{len(pools)} pools · {nodes} nodes ({gpu_nodes} GPU) · {alloc} GPUs via plugin · "
        f"{devices} DRA devices ({devices - free} allocated) · pools: {own_text} · findings {f_text}"
    )


class PoolsView(View):
    name, title = "pools", "Pools"
    columns = COLUMNS
    uses_findings = True
    shows_summary = True
    empty = "no nodes in this cluster"

    def row(self, fleet, key):
        p = fleet.model.pool(key)
        if p is None:
            return None
        return pool_row(p, fleet.by_pool.get(key, ())), {"pool": key, "ownership": p.ownership}

    def all_rows(self, fleet):
        for name in fleet.model.pool_names():
            r = self.row(fleet, name)
            if r:
                yield name, r[0], r[1]

    def affected(self, fleet, t):
        return None if t.everything else t.pools

    def findings_changed(self, fleet, refs, pools):
        return pools

    def summary(self, fleet: Fleet) -> str:
        return fleet_summary(fleet.model.pools(), fleet.findings, fleet.diagnosed)

    def ref(self, fleet, key):
        return ("Pool", "", key)

    def drill(self, fleet, key):
        return ("nodes", ("pool", key))
