"""Node pools: the pool label (auto-detected from the common cloud labels) and the per-pool aggregate view."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import TYPE_CHECKING, Iterable

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


def pool_target(views: Iterable["NodeView"]) -> str | None:
    """Which mechanism a pool is meant to be on: the one most of its GPU nodes use alone.

    Nodes served by both (or flapping) say nothing about intent; a dragoman migration in progress means DRA.
    """
    dra = dp = 0
    migrating = plugin_alloc = False
    for v in views:
        if v.mechanism == own.DRA or (v.migration is not None and v.migration.finished):
            dra += 1
        elif v.mechanism == own.DEVICE_PLUGIN:
            dp += 1
        if v.migration is not None and v.migration.in_progress:
            migrating = True
        if v.allocatable_gpu > 0:
            plugin_alloc = True
    if dra > dp:
        return "dra"
    if dp > dra:
        return "device-plugin"
    if migrating:
        return "dra"
    if dra:
        return "dra"
    if plugin_alloc:
        return "device-plugin"
    return None


def build_pool_view(name: str, views: list["NodeView"]) -> PoolView:
    gpu = [v for v in views if v.is_gpu]
    counts = Counter(v.ownership for v in gpu)
    mech = Counter(v.mechanism for v in gpu)
    if not gpu:
        ownership = own.NONE
    elif len(counts) == 1:
        ownership = next(iter(counts))
    else:
        ownership = "mixed"
    products: Counter = Counter()
    sharing: Counter = Counter()
    migration: Counter = Counter()
    for v in gpu:
        n = v.devices_gpu or v.capacity_gpu or v.gpu_count_label
        if v.product:
            products[v.product] += n
        if v.sharing:
            sharing[v.sharing] += 1
        if v.migration is not None:
            migration[v.migration.describe()] += 1
    return PoolView(
        name=name,
        nodes=sorted(v.name for v in views),
        gpu_nodes=sorted(v.name for v in gpu),
        ownership=ownership,
        ownership_counts=dict(counts),
        mechanism_counts=dict(mech),
        target=pool_target(gpu),
        products=dict(products),
        allocatable_gpus=sum(v.allocatable_gpu for v in gpu),
        capacity_gpus=sum(v.capacity_gpu for v in gpu),
        devices=sum(v.devices_total for v in gpu),
        devices_free=sum(v.devices_free for v in gpu),
        kubelet_versions=dict(Counter(v.kubelet_version or "?" for v in views)),
        sharing=dict(sharing),
        migration=dict(migration),
        cordoned=sum(1 for v in views if not v.schedulable),
    )
