"""The NVIDIA DRA driver's kubelet plugin: publishes a node's GPUs and MIG devices as ResourceSlices while its pod runs
there, withdraws them when it stops.

Where a scenario asks for binding conditions (the node's BINDING_CONDITIONS annotation, `binding_request`), every
published device carries them, and the plugin, as the driver's controller does once a device is attached (KEP-5007),
sets them True in the status.devices of each claim allocated from its pool, the asked delay after it first sees the
allocation: what dragoman's real-kubelet DRA plugin (controlplane/cmd/dragoman-dra-plugin, from the devices.json of
sim/controlplane/nodedevices.py) does, so the differential compares the two."""

from __future__ import annotations

import json
from typing import Any

from dragoman.fleet.nvidia_schema import DRIVER
from dragoman.sim.controllers.base import (
    BINDING_CONDITIONS,
    Controller,
    binding_request,
    containers_running,
    dra_plugin_image,
    is_dra_kubelet_plugin_pod,
)
from dragoman.sim.controllers.nodelifecycle import kubelet_stopped

# kubelet cm/dra defaultWipingDelay: a driver's ResourceSlices are deleted this long after its plugin unregistered,
# so a restarted plugin (its DaemonSet pod replaced) finds them in place and publishes nothing new.
WIPING_DELAY_SECONDS = 30.0
CLAIMS = "resourceclaims.resource.k8s.io"


def _devices_key(slices: list[dict]) -> str:
    """What a pool publishes, independent of slice names and generation: compare this to decide whether to write."""
    devices = []
    for sl in slices:
        spec = sl.get("spec") or {}
        devices.extend(spec.get("devices") or [])
    devices.sort(key=lambda d: d.get("name", ""))
    return json.dumps(devices, sort_keys=True)


class DraKubeletPlugin(Controller):
    """Keyed by node name. The published pool is the node's name, as the real driver does."""

    name = "dra-kubelet-plugin"

    def __init__(self, sim: Any) -> None:
        super().__init__(sim)
        # The schema version each node's slices were published with, and what a node published before its
        # plugin stopped (a snapshot node without GFD labels gets the same devices back when the plugin returns).
        self._version: dict[str, str] = {}
        self._remembered: dict[str, list[dict]] = {}
        self._hardware: dict[str, Any] = {}
        self._wipe_at: dict[str, float] = {}  # node → when the kubelet deletes the slices of its stopped plugin
        self._binding: dict[str, dict | None] = {}  # node → the binding request its devices were published with
        # Claims whose binding conditions this plugin sets: uid → when (the asked delay after it saw the allocation).
        # Once per claim, as the real plugin's binding writer keeps a claim's uid once it has taken it.
        self._attach_at: dict[str, float] = {}

    def initial_keys(self):
        nodes = {n["metadata"]["name"] for n in self.cache.all("nodes")}
        nodes |= {
            n
            for n, slices in self.cache.slices_by_node.items()
            if any(s["spec"].get("driver") == DRIVER for s in slices.values())
        }
        return sorted(nodes)

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        if resource == "pods":
            if is_dra_kubelet_plugin_pod(obj):
                for p in (obj, old):
                    node = (p or {}).get("spec", {}).get("nodeName")
                    if node:
                        self.enqueue(node)
        elif resource == "nodes":
            if etype == "DELETED":
                self._version.pop(obj["metadata"]["name"], None)
                self._remembered.pop(obj["metadata"]["name"], None)
                self._hardware.pop(obj["metadata"]["name"], None)
                self._wipe_at.pop(obj["metadata"]["name"], None)
                self._binding.pop(obj["metadata"]["name"], None)
            elif (
                old is None
                or old["metadata"].get("labels") != obj["metadata"].get("labels")
                or _binding_annotation(old) != _binding_annotation(obj)
            ):
                self.enqueue(obj["metadata"]["name"])
        elif resource == CLAIMS:
            if etype == "DELETED":
                self._attach_at.pop(obj["metadata"].get("uid", ""), None)
            elif self._attaches(obj):
                self.enqueue(("claim", obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))
        elif resource == "resourceslices.resource.k8s.io":
            spec = obj.get("spec") or {}
            if spec.get("driver") == DRIVER and spec.get("nodeName"):
                self.enqueue(spec["nodeName"])

    def plugin_pod(self, node_name: str) -> dict | None:
        for pod in self.cache.pods_by_node.get(node_name, {}).values():
            if is_dra_kubelet_plugin_pod(pod) and containers_running(pod):
                return pod
        return None

    def _published(self, node_name: str) -> list[dict]:
        return sorted(
            (s for s in self.cache.slices_by_node.get(node_name, {}).values() if s["spec"].get("driver") == DRIVER),
            key=lambda s: s["metadata"]["name"],
        )

    def reconcile(self, key: str | tuple) -> None:
        if isinstance(key, tuple):
            self._attach(key[1], key[2])
        else:
            self._publish(key)

    def _publish(self, node_name: str) -> None:
        from dragoman.fleet import nvidia_schema as nvidia

        node = self.cache.get("nodes", "", node_name)
        if kubelet_stopped(node):
            return  # the machine is down: nothing registers or wipes; the slices stay as they were
        published = self._published(node_name)
        pod = self.plugin_pod(node_name) if node is not None else None
        if pod is None:
            if not published:
                self._wipe_at.pop(node_name, None)
                return
            now = self.clock.seconds()
            due = self._wipe_at.setdefault(node_name, now + (WIPING_DELAY_SECONDS if node is not None else 0.0))
            if now < due:
                self.enqueue_at(node_name, due)
                return
            self._wipe_at.pop(node_name, None)
            self._remembered[node_name] = [base_copy(s) for s in published]
            for sl in published:
                self._delete(sl)
            return
        self._wipe_at.pop(node_name, None)  # registered again before the wipe: the slices stay as they are
        version = nvidia.driver_version_from_image(dra_plugin_image(pod))
        hardware = nvidia.node_hardware_from_labels(node["metadata"].get("labels") or {})
        generation = max(
            (int(s["spec"]["pool"].get("generation", 0)) for s in published + self._remembered.get(node_name, [])),
            default=0,
        )
        if hardware is None:
            if published:
                return  # a snapshot's slices are the node's truth when no GFD labels say otherwise
            remembered = self._remembered.get(node_name)
            if not remembered:
                return
            desired = []
            for s in remembered:
                s = base_copy(s)
                s["spec"]["pool"]["generation"] = generation + 1
                desired.append(s)
        else:
            if published and node_name not in self._version:
                # First sight of a node that already publishes (a loaded snapshot): its slices are adopted as what
                # the running version published for this hardware; they change when the version or hardware does.
                self._version[node_name] = version
                self._hardware[node_name] = hardware
                return
            binding = binding_request(node)
            if (
                published
                and self._version.get(node_name) == version
                and self._hardware.get(node_name) == hardware
                and self._binding.get(node_name) == binding
            ):
                return
            desired = nvidia.resource_slices_for_node(
                node_name, hardware, version, generation=max(1, generation + 1), node_uid=node["metadata"].get("uid")
            )
            if binding:
                for sl in desired:
                    for dev in sl["spec"].get("devices") or ():
                        dev["bindingConditions"] = list(binding["conditions"])
                        dev["bindingFailureConditions"] = list(binding["failureConditions"])
                        dev["bindsToNode"] = binding["bindsToNode"]
            self._hardware[node_name] = hardware
            self._binding[node_name] = binding
            if published and _devices_key(published) == _devices_key(desired):
                self._version[node_name] = version
                return
        self._version[node_name] = version
        self._write(node_name, published, desired)

    def _write(self, node_name: str, published: list[dict], desired: list[dict]) -> None:
        # Update slices in place (bumping the pool generation) and create or delete the difference, as the driver does.
        for i, want in enumerate(desired):
            if i < len(published):
                cur = self.store.get("resourceslices.resource.k8s.io", None, published[i]["metadata"]["name"])
                if cur is None:
                    continue
                cur["spec"] = want["spec"]
                self.store.update("resourceslices.resource.k8s.io", cur)
            else:
                md = want["metadata"]
                body = {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {
                        "name": md["name"],
                        **({"ownerReferences": md["ownerReferences"]} if md.get("ownerReferences") else {}),
                    },
                    "spec": want["spec"],
                }
                if self.store.get_ref("resourceslices.resource.k8s.io", None, md["name"]) is not None:
                    body["metadata"] = {
                        "generateName": md.get("generateName") or f"{node_name}-{DRIVER}-",
                        **({"ownerReferences": md["ownerReferences"]} if md.get("ownerReferences") else {}),
                    }
                self.store.create("resourceslices.resource.k8s.io", body)
        for sl in published[len(desired) :]:
            self._delete(sl)

    # ---- binding conditions: the driver's controller attaching the devices a claim was allocated ----------------

    def _attaches(self, claim: dict) -> bool:
        """Whether a claim holds a device of this driver that waits for binding conditions."""
        alloc = (claim.get("status") or {}).get("allocation") or {}
        return any(
            r.get("driver") == DRIVER and r.get("bindingConditions")
            for r in (alloc.get("devices") or {}).get("results") or ()
        )

    def _attach(self, ns: str, name: str) -> None:
        """Set True, the node's asked delay after the allocation was first seen, every binding condition of the
        claim's devices from a pool whose plugin runs here (the pool is the node's name): reason Attached, message
        "attached to NODE". Failure conditions are never set: the attach succeeds."""
        claim = self.store.get(CLAIMS, ns, name)
        if claim is None or not self._attaches(claim):
            return
        uid = claim["metadata"].get("uid", "")
        due = self._attach_at.get(uid)
        if due is not None and due < 0:
            return  # written once already
        results = (claim["status"]["allocation"].get("devices") or {}).get("results") or ()
        want = []
        delay = 0.0
        for r in results:
            node_name = r.get("pool", "")
            if r.get("driver") != DRIVER or not r.get("bindingConditions"):
                continue
            node = self.cache.get("nodes", "", node_name)
            if node is None or kubelet_stopped(node) or self.plugin_pod(node_name) is None:
                continue
            delay = max(delay, (binding_request(node) or {}).get("delaySeconds", 0.0))
            now = self.clock.timestamp()
            conds = [
                {
                    "type": t,
                    "status": "True",
                    "reason": "Attached",
                    "message": f"attached to {node_name}",
                    "lastTransitionTime": now,
                    "observedGeneration": claim["metadata"].get("generation", 1),
                }
                for t in r["bindingConditions"]
            ]
            want.append({"driver": r["driver"], "pool": r["pool"], "device": r.get("device"), "conditions": conds})
        if not want:
            return
        if due is None:
            due = self.clock.seconds() + delay
            self._attach_at[uid] = due
        if self.clock.seconds() < due:
            self.enqueue_at(("claim", ns, name), due)
            return
        mine = {(w["driver"], w["pool"], w["device"]) for w in want}
        status = claim.setdefault("status", {})
        kept = [d for d in status.get("devices") or () if (d.get("driver"), d.get("pool"), d.get("device")) not in mine]
        status["devices"] = kept + want
        self.store.update(CLAIMS, claim, "status", namespace=ns)
        self._attach_at[uid] = -1.0

    def _delete(self, sl: dict) -> None:
        try:
            self.store.delete("resourceslices.resource.k8s.io", None, sl["metadata"]["name"])
        except Exception as exc:
            if getattr(exc, "code", None) != 404:
                raise


def _binding_annotation(node: dict) -> str | None:
    return ((node.get("metadata") or {}).get("annotations") or {}).get(BINDING_CONDITIONS)


def base_copy(obj: dict) -> dict:
    return json.loads(json.dumps(obj))
