"""Node pools: the pool label (auto-detected from the common cloud labels) and the per-pool aggregate view."""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from dragoman.fleet import nvidia_schema
from dragoman.fleet import ownership as own

if TYPE_CHECKING:
    from dragoman.fleet.model import NodeView

# Tried in this order when no --pool-label is given; the first one carried by the most nodes wins.
POOL_LABELS = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "machine.openshift.io/cluster-api-machineset",
    "node.kubernetes.io/pool",
    "node-pool",
    "nodepool",
    "pool",
)
UNLABELED = "(no pool)"


def detect_pool_label(label_counts: dict[str, int]) -> str | None:
    """The candidate label present on the most nodes (ties: the order of POOL_LABELS); None when no node carries one."""
    best, best_n = None, 0
    for key in POOL_LABELS:
        n = label_counts.get(key, 0)
        if n > best_n:
            best, best_n = key, n
    return best


def pool_label_of(nodes: Iterable[dict]) -> str | None:
    """The pool label of these nodes (detect_pool_label over the candidates each node carries)."""
    counts: Counter[str] = Counter()
    for node in nodes:
        labels = (node.get("metadata") or {}).get("labels") or {}
        counts.update(k for k in POOL_LABELS if k in labels)
    return detect_pool_label(counts)


@dataclasses.dataclass
class PoolView:
    """One pool: its nodes and what serves their GPUs, in aggregate."""

    name: str
    nodes: list[str]
    gpu_nodes: list[str]
    ownership: str  # one ownership value when all GPU nodes agree, "mixed" otherwise, "none" without GPU nodes
    ownership_counts: dict[str, int]
    mechanism_counts: dict[str, int]
    target: str | None  # "dra" | "device-plugin" | None: the mechanism the pool is meant to be on
    products: dict[str, int]  # GPU model -> GPUs
    allocatable_gpus: int
    capacity_gpus: int
    devices: int
    devices_free: int
    kubelet_versions: dict[str, int]
    sharing: dict[str, int]  # "time-slicing x4" / "mps x2" / "mig single" / "mig mixed" -> nodes
    migration: dict[str, int]  # "<step> <state>" -> nodes
    cordoned: int

    @property
    def is_gpu(self) -> bool:
        return bool(self.gpu_nodes)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "nodes": len(self.nodes),
            "gpuNodes": len(self.gpu_nodes),
            "ownership": self.ownership,
            "ownershipCounts": dict(self.ownership_counts),
            "target": self.target,
            "gpuModels": dict(self.products),
            "allocatableGpus": self.allocatable_gpus,
            "capacityGpus": self.capacity_gpus,
            "devices": self.devices,
            "devicesFree": self.devices_free,
            "kubeletVersions": dict(self.kubelet_versions),
            "sharing": dict(self.sharing),
            "migration": dict(self.migration),
            "cordonedNodes": self.cordoned,
        }


def _target(t: Counter) -> str | None:
    """Which mechanism a pool is meant to be on: the one most of its GPU nodes use alone.

    Nodes served by both (or flapping) say nothing about intent; a dragoman migration in progress means DRA.
    """
    dra, dp = t["dra"], t["dp"]
    if dra > dp:
        return "dra"
    if dp > dra:
        return "device-plugin"
    if t["migrating"] or dra:
        return "dra"
    if t["plugin_alloc"]:
        return "device-plugin"
    return None


def _contribution(v: NodeView) -> tuple:
    """What one node adds to its pool's aggregate: (bucket, key, amount) triples, subtracted again when it changes."""
    items: list[tuple[str, object, int]] = [
        ("kubelet", v.kubelet_version or "?", 1),
        ("sum", "cordoned", 0 if v.schedulable else 1),
    ]
    if v.is_gpu:
        items += [
            ("own", v.ownership, 1),
            ("mech", v.mechanism, 1),
            ("sum", "gpu_nodes", 1),
            ("sum", "alloc", v.allocatable_gpu),
            ("sum", "cap", v.capacity_gpu),
            ("sum", "devices", v.devices_total),
            ("sum", "free", v.devices_free),
        ]
        if v.product:
            # Physical GPUs: GFD's count, else what the plugin or the driver reports (MIG devices are not GPUs).
            whole = sum(1 for d in v.devices if d.driver == nvidia_schema.DRIVER and d.type in (None, "gpu"))
            items.append(("products", v.product, v.gpu_count_label or v.capacity_gpu or whole))
        if v.sharing:
            items.append(("sharing", v.sharing, 1))
        if v.migration is not None:
            items.append(("migration", v.migration.describe(), 1))
        if v.mechanism == own.DRA or (v.migration is not None and v.migration.finished):
            items.append(("t", "dra", 1))
        elif v.mechanism == own.DEVICE_PLUGIN:
            items.append(("t", "dp", 1))
        if v.migration is not None and v.migration.in_progress:
            items.append(("t", "migrating", 1))
        if v.allocatable_gpu > 0:
            items.append(("t", "plugin_alloc", 1))
    return (v.is_gpu, tuple(items))


class PoolAggregate:
    """A pool's totals kept up to date node by node: a changed node costs its own contribution, not the pool's size."""

    BUCKETS = ("kubelet", "sum", "own", "mech", "products", "sharing", "migration", "t")

    def __init__(self, name: str) -> None:
        self.name = name
        self.members: set[str] = set()
        self.dirty: set[str] = set()
        self._contrib: dict[str, tuple] = {}
        self._c: dict[str, Counter] = {b: Counter() for b in self.BUCKETS}
        self._view: PoolView | None = None
        self._names: tuple[list[str], list[str]] | None = None
        # The diagnosis thread (tui/feed.py) and the UI thread both read pools, and reading settles the dirty nodes:
        # unserialized, one reader's `for n in self.dirty` met the other's clear() ("Set changed size during
        # iteration") or both applied one node's contribution (doubled counts).
        self._lock = threading.Lock()

    def add_member(self, node: str) -> None:
        self.members.add(node)
        self.mark(node)
        self._names = None

    def remove_member(self, node: str) -> None:
        self.members.discard(node)
        self.dirty.discard(node)
        old = self._contrib.pop(node, None)
        if old is not None:
            self._apply(old, -1)
        self._names = None
        self._view = None

    def mark(self, node: str) -> None:
        self.dirty.add(node)
        self._view = None

    def _apply(self, contrib: tuple, sign: int) -> None:
        c = self._c
        for bucket, key, amount in contrib[1]:
            c[bucket][key] += sign * amount

    def view(self, node_view) -> PoolView:
        """The pool's view; `node_view(name)` gives a node's current NodeView (or None)."""
        if self._view is not None and not self.dirty:
            return self._view
        with self._lock:
            return self._settle(node_view)

    def _settle(self, node_view) -> PoolView:
        if self._view is not None and not self.dirty:
            return self._view  # another reader settled it while this one waited
        for n in self.dirty:
            old = self._contrib.pop(n, None)
            if old is not None:
                self._apply(old, -1)
            v = node_view(n)
            new = _contribution(v) if v is not None else None
            if new is not None:
                self._contrib[n] = new
                self._apply(new, +1)
            if (old is None) != (new is None) or (old is not None and new is not None and old[0] != new[0]):
                self._names = None
        self.dirty.clear()
        if self._names is None:
            self._names = (sorted(self._contrib), sorted(n for n, c in self._contrib.items() if c[0]))
        c = self._c
        nz = lambda counter: {k: v for k, v in counter.items() if v}  # noqa: E731
        owners = nz(c["own"])
        gpu_nodes = self._names[1]
        if not gpu_nodes:
            ownership = own.NONE
        elif len(owners) == 1:
            ownership = next(iter(owners))
        else:
            ownership = "mixed"
        s = c["sum"]
        self._view = PoolView(
            name=self.name,
            nodes=list(self._names[0]),
            gpu_nodes=list(gpu_nodes),
            ownership=ownership,
            ownership_counts=owners,
            mechanism_counts=nz(c["mech"]),
            target=_target(c["t"]),
            products=nz(c["products"]),
            allocatable_gpus=s["alloc"],
            capacity_gpus=s["cap"],
            devices=s["devices"],
            devices_free=s["free"],
            kubelet_versions=nz(c["kubelet"]),
            sharing=nz(c["sharing"]),
            migration=nz(c["migration"]),
            cordoned=s["cordoned"],
        )
        return self._view
