"""What a pod requests (k8s.io/component-helpers@v0.37.2 resource.PodRequests), the one rule the simulated scheduler,
kubelet admission and quota, and the client's diagnosis and accounting count with.

Containers add up; each init container runs alone, beside the native sidecars (init containers with
`restartPolicy: Always`) started before it, so the pod needs at least the largest of those moments; sidecars keep
running, so they add to the containers. Pod-level `spec.resources` replaces the sum for cpu, memory and hugepages-*
(IsSupportedPodLevelResource), and `spec.overhead` is added last.

Read from a raw pod as it is stored, with the API server's defaulting applied at read time (a snapshot or a manifest
may not carry it): a container's requests default to its limits (SetDefaults_Pod), and pod-level requests to
pod-level limits (defaultPodRequests). The in-place resize status (UseStatusResources) is not read.
"""

from __future__ import annotations

from collections.abc import Callable

from dragoman.fleet.k8s.quantity import amount

SIDECAR_RESTART_POLICY = "Always"
_POD_LEVEL = ("cpu", "memory")
_HUGEPAGES = "hugepages-"


def is_pod_level_resource(name: str) -> bool:
    """IsSupportedPodLevelResource: cpu, memory and hugepages-<size>."""
    return name in _POD_LEVEL or name.startswith(_HUGEPAGES)


def is_sidecar(container: dict) -> bool:
    """A restartable init container (a native sidecar, KEP-753)."""
    return container.get("restartPolicy") == SIDECAR_RESTART_POLICY


def container_requests(container: dict) -> dict:
    """A container's requests as stored (quantity strings): its limits, overlaid by its requests (defaulting)."""
    res = container.get("resources") or {}
    limits = res.get("limits")
    requests = res.get("requests")
    if not limits:
        return dict(requests or {})
    out = dict(limits)
    out.update(requests or {})
    return out


def _container_amounts(container: dict, only: Callable[[str], bool] | None) -> dict[str, int]:
    """container_requests as amounts, only the names `only` keeps (read without copying: this runs per pod)."""
    res = container.get("resources")
    if not res:
        return _NONE
    limits = res.get("limits") or _NONE
    requests = res.get("requests") or _NONE
    out: dict[str, int] = {}
    for k, v in requests.items():
        if only is None or only(k):
            out[k] = amount(k, v)
    for k, v in limits.items():
        if k not in requests and (only is None or only(k)):
            out[k] = amount(k, v)
    return out


_NONE: dict = {}  # read only


def pod_requests(pod: dict, *, overhead: bool = True, only: Callable[[str], bool] | None = None) -> dict[str, int]:
    """resource.PodRequests: every resource the pod requests (or those `only` keeps: each resource is computed on
    its own, so filtering first changes nothing else), cpu in millicores, the rest as integer amounts."""
    spec = pod.get("spec") or _NONE
    total: dict[str, int] = {}
    for c in spec.get("containers") or ():
        for k, v in _container_amounts(c, only).items():
            total[k] = total.get(k, 0) + v
    inits = spec.get("initContainers")
    if inits:
        sidecars: dict[str, int] = {}
        init_peak: dict[str, int] = {}
        for c in inits:
            reqs = _container_amounts(c, only)
            if is_sidecar(c):
                for k, v in reqs.items():
                    total[k] = total.get(k, 0) + v
                    sidecars[k] = sidecars.get(k, 0) + v
                moment = sidecars
            else:
                moment = dict(sidecars)
                for k, v in reqs.items():
                    moment[k] = moment.get(k, 0) + v
            for k, v in moment.items():
                if v > init_peak.get(k, 0):
                    init_peak[k] = v
        for k, v in init_peak.items():
            if v > total.get(k, 0):
                total[k] = v
    pod_level = spec.get("resources")
    if pod_level:
        for k, v in _container_amounts({"resources": pod_level}, only).items():
            if is_pod_level_resource(k):
                total[k] = v
    if overhead and spec.get("overhead"):
        for k, v in (spec.get("overhead") or _NONE).items():
            if only is None or only(k):
                total[k] = total.get(k, 0) + amount(k, v)
    return total
