"""The NVIDIA GPU Operator, as far as a migration meets it: its device-plugin DaemonSet is reconciled back to the
operator's spec, and missing `nvidia.com/gpu.deploy.*` labels are filled on GPU nodes."""

from __future__ import annotations

import json
from typing import Any

from dragoman.sim.controllers.base import Controller

DS = "daemonsets.apps"
DEVICE_PLUGIN_DS = "nvidia-device-plugin-daemonset"
OPERATOR_NAMESPACES = ("gpu-operator", "nvidia-gpu-operator", "gpu-operator-resources")
# The operator's desired spec as JSON: a scenario may pin it here; otherwise the spec at first sight is the desired one.
DESIRED_SPEC = "sim.dragoman.io/operator-desired-spec"
DEPLOY_PREFIX = "nvidia.com/gpu.deploy."
# Operand labels the operator puts on every GPU node (state_manager.go gpuStateLabels, container workloads).
OPERANDS = (
    "driver",
    "gpu-feature-discovery",
    "container-toolkit",
    "device-plugin",
    "dcgm",
    "dcgm-exporter",
    "node-status-exporter",
    "operator-validator",
)


def is_operator_device_plugin(ds: dict) -> bool:
    """The GPU Operator's device-plugin DaemonSet (owned by a ClusterPolicy, or named and placed as the operator
    does)."""
    md = ds["metadata"]
    if md.get("name") != DEVICE_PLUGIN_DS:
        return False
    if any(ref.get("kind") == "ClusterPolicy" for ref in md.get("ownerReferences") or ()):
        return True
    labels = md.get("labels") or {}
    if labels.get("app.kubernetes.io/managed-by") == "gpu-operator" or "nvidia.com/gpu-operator" in str(labels):
        return True
    return md.get("namespace") in OPERATOR_NAMESPACES


def wanted_labels(node: dict) -> dict[str, str]:
    """Deploy labels the operator would add to this node (only missing or empty ones; a user's `false` stays)."""
    labels = node["metadata"].get("labels") or {}
    if labels.get("nvidia.com/gpu.present") != "true" or labels.get(DEPLOY_PREFIX + "operands") == "false":
        return {}
    operands = list(OPERANDS)
    if labels.get("nvidia.com/mig.capable") == "true":
        operands.append("mig-manager")
    return {DEPLOY_PREFIX + op: "true" for op in operands if not labels.get(DEPLOY_PREFIX + op)}


class GpuOperator(Controller):
    """Keys ("ds", ns, name) and ("node", name). Idle unless the scenario has the operator's device-plugin DaemonSet."""

    name = "gpu-operator"

    def __init__(self, sim: Any) -> None:
        super().__init__(sim)
        self._desired: dict[str, dict] = {}  # DaemonSet uid → spec
        self._recreate: dict[tuple[str, str], dict] = {}

    def _operator_present(self) -> bool:
        return any(is_operator_device_plugin(ds) for ds in self.cache.all(DS))

    def initial_keys(self):
        keys = []
        for ds in list(self.cache.all(DS)):
            if is_operator_device_plugin(ds):
                self._remember(ds)
                keys.append(("ds", ds["metadata"].get("namespace", ""), ds["metadata"]["name"]))
        if keys:
            keys.extend(("node", n["metadata"]["name"]) for n in list(self.cache.all("nodes")))
        return keys

    def _remember(self, ds: dict) -> dict:
        uid = ds["metadata"].get("uid", "")
        if uid not in self._desired:
            pinned = (ds["metadata"].get("annotations") or {}).get(DESIRED_SPEC)
            spec = None
            if pinned:
                try:
                    spec = json.loads(pinned)
                except ValueError:
                    spec = None
            self._desired[uid] = spec if isinstance(spec, dict) else json.loads(json.dumps(ds.get("spec") or {}))
        return self._desired[uid]

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        if resource == DS and is_operator_device_plugin(obj):
            if etype == "DELETED":
                # The operator recreates a deleted operand from its ClusterPolicy, with the spec it wants.
                spec = self._desired.pop(obj["metadata"].get("uid", ""), None)
                if spec is not None:
                    md = obj["metadata"]
                    self._recreate[(md.get("namespace", ""), md["name"])] = {
                        "apiVersion": "apps/v1",
                        "kind": "DaemonSet",
                        "metadata": {
                            k: md[k]
                            for k in ("name", "namespace", "labels", "annotations", "ownerReferences")
                            if md.get(k)
                        },
                        "spec": spec,
                    }
                    self.enqueue(("recreate", md.get("namespace", ""), md["name"]))
                return
            first = obj["metadata"].get("uid", "") not in self._desired
            self._remember(obj)
            self.enqueue(("ds", obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))
            if first:
                for n in list(self.cache.all("nodes")):
                    self.enqueue(("node", n["metadata"]["name"]))
        elif resource == "nodes" and etype != "DELETED" and self._desired:
            if old is None or old["metadata"].get("labels") != obj["metadata"].get("labels"):
                self.enqueue(("node", obj["metadata"]["name"]))

    def reconcile(self, key) -> None:
        if key[0] == "recreate":
            body = self._recreate.pop((key[1], key[2]), None)
            if body is not None and self.cache.get(DS, key[1], key[2]) is None:
                self.store.create(DS, body)
            return
        if key[0] == "ds":
            ds = self.cache.get(DS, key[1], key[2])
            if ds is None or not is_operator_device_plugin(ds):
                return
            desired = self._remember(ds)
            if (ds.get("spec") or {}) == desired:
                return
            cur = self.store.get(DS, key[1], key[2])
            if cur is None:
                return
            cur["spec"] = json.loads(json.dumps(desired))
            self.store.update(DS, cur)
            return
        if not self._operator_present():
            return
        node = self.cache.get("nodes", "", key[1])
        if node is None:
            return
        missing = wanted_labels(node)
        if missing:
            self.store.patch("nodes", None, key[1], {"metadata": {"labels": missing}})
