"""The migration's picture of a pool, read fresh from the cluster once per plan: its nodes, its device-plugin and
DRA-driver DaemonSets, their pods and the driver's published devices, and the allocator over them.

The Picture's one index is the FleetModel it loads from what it listed (a write reads the server, not the UI's
cache): pods by node, classes, node views come from it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dragoman.fleet import gpustack, k8s
from dragoman.fleet.cluster import ApiError
from dragoman.fleet.k8s import quantity
from dragoman.fleet.k8s.allocator import AllocatedState, Allocator, Inventory, RequestExplanation
from dragoman.fleet.k8s.registry import of_kind
from dragoman.fleet.k8s.slices import newest_slices
from dragoman.fleet.model import FleetModel
from dragoman.fleet.nvidia_schema import DRIVER
from dragoman.fleet.ownership import GPU

# What the switch reads, listed whole (a kind the credentials may not list is read as none).
READ = ("Node", "Pod", "DaemonSet", "ResourceSlice", "DeviceClass", "ResourceClaim", "DeviceTaintRule")


@dataclasses.dataclass
class Stack:
    """A device-plugin or DRA-driver DaemonSet and how it is deployed."""

    workload: gpustack.Workload
    ds: dict

    @property
    def ref(self) -> str:
        return f"DaemonSet {self.workload.namespace}/{self.workload.name}"

    @property
    def path(self) -> str:
        return f"/apis/apps/v1/namespaces/{self.workload.namespace}/daemonsets/{self.workload.name}"

    @property
    def pod_spec(self) -> dict:
        return ((self.ds.get("spec") or {}).get("template") or {}).get("spec") or {}

    @property
    def image(self) -> str:
        cs = self.pod_spec.get("containers") or []
        for c in cs:
            if c.get("name") == "gpus":
                return c.get("image", "")
        return cs[0].get("image", "") if cs else ""


@dataclasses.dataclass
class Picture:
    """What the switch steps read about one pool, fresh from the cluster."""

    pool: str
    pool_label: str
    model: FleetModel
    nodes: dict[str, dict]  # the pool's raw nodes
    device_plugins: list[Stack]  # device-plugin DaemonSets selecting or running on the pool
    driver: Stack | None  # the NVIDIA DRA driver's kubelet plugin DaemonSet
    objects: dict[str, list[dict]]

    def node_view(self, name: str):
        return self.model.node(name)

    def selects(self, stack: Stack, node: dict) -> bool:
        labels = stack.workload.selected_labels((node.get("metadata") or {}).get("labels") or {})
        return k8s.pod_matches_node(stack.pod_spec, node, labels=labels)

    def slices_of(self, node: str) -> list[dict]:
        """The NVIDIA driver's slices for the node (indexed once: a pool's nodes are asked one by one)."""
        if self._slices_by_node is None:
            self._slices_by_node = {}
            for s in self.objects["ResourceSlice"]:
                spec = s.get("spec") or {}
                if spec.get("driver") == DRIVER:
                    self._slices_by_node.setdefault(spec.get("nodeName") or "", []).append(s)
        return self._slices_by_node.get(node, [])

    def published(self, node: str) -> list[dict]:
        """Devices of the newest generation the driver publishes for the node."""
        return [d for s in newest_slices(self.slices_of(node)) for d in (s.get("spec") or {}).get("devices") or []]

    def plugin_pods(self, node: str) -> list[dict]:
        """The node's device-plugin pods, Running or Pending and not being deleted."""
        out = []
        plugins: dict[tuple[str, str], gpustack.Workload | None] = {
            (s.workload.namespace, s.workload.name): s.workload for s in self.device_plugins
        }
        for p in self.model.pods_on_node(node):  # the model's index by node, not every pod of the fleet
            w = gpustack.classify_pod(p, plugins)
            if (
                w is not None
                and w.role == "device-plugin"
                and (p.get("status") or {}).get("phase") in ("Running", "Pending")
                and not (p.get("metadata") or {}).get("deletionTimestamp")
            ):
                out.append(p)
        return out

    def driver_pods(self, node: str) -> list[dict]:
        """The node's DRA-driver pods, whatever their phase."""
        out = []
        for p in self.model.pods_on_node(node):
            w = gpustack.classify_pod(p, {})
            if w is not None and w.role == "dra-driver":
                out.append(p)
        return out

    def allocatable(self, node: str) -> int:
        n = self.nodes.get(node) or {}
        return quantity.count(((n.get("status") or {}).get("allocatable") or {}).get(GPU))

    def serving_class(self) -> str | None:
        names = self.model.classes_naming(GPU)
        return names[0] if names else None

    def class_expressions(self, name: str) -> list[str]:
        c = self.model.classes().get(name)
        return list(c.expressions) if c else []

    def allocator(self, *, holding: bool, extra_classes: tuple[dict, ...] = ()) -> Allocator:
        """fleet's allocator over this picture: slices with their DeviceTaintRules, the cluster's classes (and
        `extra_classes`), and what allocated claims hold when `holding` (free now) or nothing (what a node can
        serve once drained)."""
        key = ("holding" if holding else "capacity", tuple(class_name(c) for c in extra_classes))
        hit = self._allocators.get(key)
        if hit is not None:
            return hit
        inv = self._inventory
        if inv is None:
            inv = self._inventory = Inventory(self.objects["ResourceSlice"], self.objects.get("DeviceTaintRule") or ())
        classes = {class_name(c): c for c in self.objects["DeviceClass"]}
        classes.update({class_name(c): c for c in extra_classes})
        state = AllocatedState.from_claims(self.objects["ResourceClaim"]) if holding else AllocatedState()
        made = self._allocators[key] = Allocator(inv, state, classes)
        return made

    def servable(self, node: str, cls: dict, *, holding: bool) -> RequestExplanation | None:
        """The devices of DeviceClass `cls` the allocator could give a bridged nvidia.com/gpu pod (no tolerations)
        on `node`, and why not the others; None when the node is unknown."""
        raw = self.nodes.get(node) or self.node_objects().get(node)
        if raw is None:
            return None
        name = class_name(cls)
        known = any(class_name(c) == name and c is cls for c in self.objects["DeviceClass"])
        return self.allocator(holding=holding, extra_classes=() if known else (cls,)).request_devices(raw, name)

    def node_objects(self) -> dict[str, dict]:
        if self._node_objects is None:
            self._node_objects = {(n.get("metadata") or {}).get("name", ""): n for n in self.objects["Node"]}
        return self._node_objects

    _allocators: dict = dataclasses.field(default_factory=dict)
    _inventory: Inventory | None = None
    _node_objects: dict[str, dict] | None = None
    _slices_by_node: dict[str, list[dict]] | None = None


async def read_picture(ctx: Any) -> Picture:
    """List what the switch needs and classify the pool's stacks; once per plan while one is built
    (Context.reading_once): at 150,000 pods each read of every pod costs seconds, and the plan's steps all read it."""
    memo = getattr(ctx, "reads", None)
    if memo is not None and "picture" in memo:
        return memo["picture"]
    pic = await _read_picture(ctx)
    if memo is not None:
        memo["picture"] = pic
    return pic


async def _read_picture(ctx: Any) -> Picture:
    objects: dict[str, list[dict]] = {}
    for kind in READ:
        try:
            items, _ = await ctx.cluster.list_all(of_kind(kind).collection_path())
        except ApiError as exc:
            if exc.status not in (403, 404):
                raise
            items = []
        for it in items:
            it.setdefault("kind", kind)
        objects[kind] = items
    model = FleetModel(ctx.pool_label)
    model.load(objects)
    nodes = {
        n["metadata"]["name"]: n
        for n in objects["Node"]
        if ((n.get("metadata") or {}).get("labels") or {}).get(ctx.pool_label) == ctx.pool
    }
    dps: list[Stack] = []
    drivers: list[Stack] = []
    for ds in objects["DaemonSet"]:
        w = gpustack.classify_daemonset(ds)
        if w is None:
            continue
        st = Stack(w, ds)
        if w.role == "device-plugin":
            dps.append(st)
        elif w.role == "dra-driver":
            drivers.append(st)
    pic = Picture(ctx.pool, ctx.pool_label, model, nodes, [], None, objects)
    for st in dps:
        running_here = any(
            gpustack.classify_pod(p, {(st.workload.namespace, st.workload.name): st.workload}) == st.workload
            for n in nodes
            for p in model.pods_on_node(n)
        )
        if running_here or any(pic.selects(st, n) for n in nodes.values()):
            pic.device_plugins.append(st)
    # The GPU kubelet plugin (a container named gpus or the chart's kubelet-plugin DaemonSet) over other driver parts.
    drivers.sort(key=lambda s: (0 if "kubelet-plugin" in s.workload.name else 1, s.workload.name))
    pic.driver = drivers[0] if drivers else None
    return pic


def driver_version(pic: Picture) -> str:
    """The attribute schema the pool's devices will be published with (the driver's image tag; newest when none)."""
    if pic.driver is not None and pic.driver.image:
        return pic.driver.image
    return "v0.4.0"


def class_name(cls: dict) -> str:
    return str((cls.get("metadata") or {}).get("name", ""))
