"""Helpers for the ownership-switch tests: the full step list, a never-both watcher on the simulator's store, pool
lookups."""

from __future__ import annotations

from dragoman.sim.controllers.base import is_device_plugin_pod

POOL_LABEL = "cloud.google.com/gke-nodepool"
ALL_STEPS = [
    "--step",
    "cordon",
    "--step",
    "drain",
    "--step",
    "exclude-device-plugin",
    "--step",
    "scope-driver",
    "--step",
    "device-class",
    "--step",
    "uncordon",
    "--step",
    "verify",
]
SLICES = "resourceslices.resource.k8s.io"


def pool_nodes(sim, pool: str) -> list[str]:
    return sorted(
        e.obj["metadata"]["name"]
        for e in sim.store.entries("nodes")
        if e.obj["metadata"].get("labels", {}).get(POOL_LABEL) == pool
    )


class NeverBoth:
    """Subscribed to every committed change: after each one, no node of the pool may have the device plugin
    (a Running plugin pod, or allocatable nvidia.com/gpu > 0) and DRA devices at the same time."""

    def __init__(self, sim, pool: str) -> None:
        self.nodes = set(pool_nodes(sim, pool))
        self.plugin: dict[str, set[str]] = {n: set() for n in self.nodes}
        self.alloc: dict[str, int] = {n: 0 for n in self.nodes}
        self.devices: dict[str, dict[str, int]] = {n: {} for n in self.nodes}
        self.events = 0
        self.violations: list[str] = []
        self.seen_dra: set[str] = set()
        self.seen_plugin: set[str] = set()
        for e in sim.store.entries("pods"):
            self._pod(e.obj, False)
        for e in sim.store.entries("nodes"):
            self._node(e.obj, False)
        for e in sim.store.entries(SLICES):
            self._slice(e.obj, False)
        self.unsubscribe = sim.store.subscribe(self.on_event)

    def _pod(self, pod: dict, deleted: bool) -> None:
        node = (pod.get("spec") or {}).get("nodeName")
        if node not in self.nodes or not is_device_plugin_pod(pod):
            return
        uid = pod["metadata"].get("uid", pod["metadata"]["name"])
        if not deleted and (pod.get("status") or {}).get("phase") == "Running":
            self.plugin[node].add(uid)
        else:
            self.plugin[node].discard(uid)

    def _node(self, node: dict, deleted: bool) -> None:
        name = node["metadata"]["name"]
        if name in self.nodes:
            v = ((node.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu") or "0"
            self.alloc[name] = 0 if deleted else int(v)

    def _slice(self, sl: dict, deleted: bool) -> None:
        spec = sl.get("spec") or {}
        node = spec.get("nodeName")
        if node in self.nodes and spec.get("driver") == "gpu.nvidia.com":
            if deleted:
                self.devices[node].pop(sl["metadata"]["name"], None)
            else:
                self.devices[node][sl["metadata"]["name"]] = len(spec.get("devices") or [])

    def on_event(self, etype: str, key: str, obj: dict, old: dict | None) -> None:
        deleted = etype == "DELETED"
        if key == "pods":
            self._pod(obj, deleted)
        elif key == "nodes":
            self._node(obj, deleted)
        elif key == SLICES:
            self._slice(obj, deleted)
        else:
            return
        self.events += 1
        for n in self.nodes:
            dra = sum(self.devices[n].values()) > 0
            plugin = bool(self.plugin[n]) or self.alloc[n] > 0
            if dra:
                self.seen_dra.add(n)
            if plugin:
                self.seen_plugin.add(n)
            if dra and plugin:
                self.violations.append(
                    f"event {self.events} ({etype} {key} {obj['metadata'].get('name')}): node {n} plugin "
                    f"pods {len(self.plugin[n])} allocatable {self.alloc[n]} devices "
                    f"{sum(self.devices[n].values())}"
                )
