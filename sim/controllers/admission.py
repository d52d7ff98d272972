"""Kubelet admission of a bound pod as a real kubelet decides it: device plugin, the bridge (or its absence), DRA
prepare."""

from __future__ import annotations

import dataclasses

from dragoman.fleet.k8s import kubelet
from dragoman.fleet.k8s.extended import is_extended_resource_name
from dragoman.fleet.k8s.podclaims import pod_claim_names
from dragoman.fleet.k8s.podresources import container_requests, pod_requests
from dragoman.fleet.k8s.quantity import amount as resource_amount
from dragoman.sim.controllers.scheduling import ClusterView


@dataclasses.dataclass
class AdmissionResult:
    """What the kubelet does with the pod.

    `admitted` False: the pod is rejected (`phase` Failed, `reason`, `message` as written to the pod status; the event
    carries `event_reason`/`event_message`). `waiting`: admitted but stuck before containers start (e.g.
    FailedPrepareDynamicResources), with an event. `devices`: the uuids of the DRA devices the containers get;
    `gpu_source` says how `nvidia.com/gpu` is served: "device-plugin", "dra", "none" (ran without it) or "".
    """

    admitted: bool
    reason: str = ""
    message: str = ""
    event_reason: str = ""
    event_message: str = ""
    waiting: bool = False
    devices: list[str] = dataclasses.field(default_factory=list)
    gpu_source: str = ""
    dropped_resources: list[str] = dataclasses.field(default_factory=list)

    @property
    def phase(self) -> str:
        return "Failed" if not self.admitted else ("Pending" if self.waiting else "Running")

    def status_patch(self) -> dict | None:
        """The pod status a rejecting kubelet writes (rejectPod), or None."""
        if self.admitted:
            return None
        return {"phase": "Failed", "reason": self.reason, "message": self.message}

    def environment(self) -> dict[str, str]:
        """What the container sees: NVIDIA_VISIBLE_DEVICES from CDI injection of the claim's devices."""
        if self.devices:
            return {"NVIDIA_VISIBLE_DEVICES": ",".join(self.devices)}
        return {}


def has_bridge(node: dict) -> bool:
    """A kubelet from v1.36 on runs with DRAExtendedResource (fleet/k8s/kubelet.py); an unreadable version is taken
    for one that does."""
    version = ((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")
    return kubelet.has_bridge(version) is not False


def _claim_names(pod: dict) -> list[str]:
    return [name for _, name in pod_claim_names(pod) if name]


def admit(
    pod: dict, node: dict, view: ClusterView, *, drivers_ready: set[str] | frozenset[str] | None = None
) -> AdmissionResult:
    """Admit `pod`, bound to `node`. `drivers_ready`: DRA drivers with a registered kubelet plugin on the node (None =
    all)."""
    ns = (pod.get("metadata") or {}).get("namespace", "")
    status = node.get("status") or {}
    alloc = status.get("allocatable") or {}
    cap = status.get("capacity") or {}
    bridge = has_bridge(node)
    ext_status = (pod.get("status") or {}).get("extendedResourceClaimStatus") if bridge else None
    bridged = {m.get("resourceName") for m in (ext_status or {}).get("requestMappings") or []}

    spec = pod.get("spec") or {}
    containers = list(spec.get("initContainers") or []) + list(spec.get("containers") or [])
    wanted: dict[str, int] = {}
    for c in containers:
        for k, v in container_requests(c).items():
            if is_extended_resource_name(k):
                wanted[k] = max(wanted.get(k, 0), resource_amount(k, v))
    result = AdmissionResult(True)
    used = _used_on_node(view, node, pod)
    for rname, amount in sorted(wanted.items()):
        if not amount or rname in bridged:
            continue
        if rname not in alloc:
            # removeMissingExtendedResources: a name the node does not report is dropped from the check,
            # so the pod runs, without the device.
            result.dropped_resources.append(rname)
            continue
        have = resource_amount(rname, alloc[rname])
        capacity = resource_amount(rname, cap.get(rname, alloc[rname]))
        if have == 0 and capacity > 0:
            # The device manager still knows the resource (endpoint grace) but has no healthy device.
            msg = (
                f"Allocate failed due to requested number of devices unavailable for {rname}. Requested: "
                f"{amount}, Available: 0, which is unexpected"
            )
            return AdmissionResult(
                False,
                "UnexpectedAdmissionError",
                "Pod was rejected: " + msg,
                "UnexpectedAdmissionError",
                msg,
                gpu_source="",
            )
        if amount > have - used.get(rname, 0):
            msg = (
                f"Node didn't have enough resource: {rname}, requested: {amount}, used: {used.get(rname, 0)}, "
                f"capacity: {have}"
            )
            return AdmissionResult(False, f"OutOf{rname}", "Pod was rejected: " + msg, f"OutOf{rname}", msg)
    if "nvidia.com/gpu" in wanted:
        if "nvidia.com/gpu" in bridged:
            result.gpu_source = "dra"
        elif "nvidia.com/gpu" in result.dropped_resources:
            result.gpu_source = "none"
        else:
            result.gpu_source = "device-plugin"

    # DRA: the pod's own claims, and the bridge claim when this kubelet knows the status field.
    claim_names = _claim_names(pod)
    if ext_status and ext_status.get("resourceClaimName"):
        claim_names.append(ext_status["resourceClaimName"])
    devices: list[str] = []
    for cname in claim_names:
        claim = view.claims.get((ns, cname))
        if claim is None:
            continue
        results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        for r in results:
            driver = r.get("driver", "")
            if drivers_ready is not None and driver not in drivers_ready:
                msg = (
                    f"Failed to prepare dynamic resources: failed to get gRPC client for driver {driver}: DRA "
                    f"driver {driver} is not registered"
                )
                return AdmissionResult(
                    True,
                    waiting=True,
                    event_reason="FailedPrepareDynamicResources",
                    event_message=msg,
                    gpu_source=result.gpu_source,
                )
            dev = view.device((driver, r.get("pool"), r.get("device")))
            if dev is not None and dev.uuid:
                devices.append(dev.uuid)
    result.devices = devices
    return result


def _used_on_node(view: ClusterView, node: dict, exclude: dict) -> dict[str, int]:
    """Extended resources other admitted pods on the node hold through the device plugin."""
    name = (node.get("metadata") or {}).get("name", "")
    info = view.nodes.get(name)
    if info is None:
        return {}
    used = dict(info.requested)
    uid = (exclude.get("metadata") or {}).get("uid")
    if uid and uid in info.pods:
        # The pod itself is already counted by the scheduler's accounting.
        for k, v in _requests_of(exclude).items():
            used[k] = used.get(k, 0) - v
    return used


def _requests_of(pod: dict) -> dict[str, int]:
    return pod_requests(pod)
