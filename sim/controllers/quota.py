"""ResourceQuota usage and admission for pods and ResourceClaims, with the DRA extended-resource rules of v1.37."""

from __future__ import annotations

from dragoman.fleet.k8s.extended import is_dra_extended_resource_name, is_extended_resource_name
from dragoman.fleet.k8s.podresources import pod_requests
from dragoman.fleet.k8s.quantity import amount as resource_amount
from dragoman.fleet.k8s.quantity import format_quantity
from dragoman.sim.controllers.bridge import BRIDGE_ANNOTATION, DRA_PREFIX
from dragoman.sim.controllers.scheduling import ClusterView

CLAIM_COUNT = "count/resourceclaims.resource.k8s.io"
PER_CLASS_SUFFIX = ".deviceclass.resource.k8s.io/devices"
IMPLICIT_REQUEST_PREFIX = "requests." + DRA_PREFIX
ALL_MODE_WORST_CASE = 32  # resourceapi.AllocationResultsMaxSize

_POD_NAMES = {
    "pods",
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
}


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _add(out: dict[str, int], name: str, value: int) -> None:
    out[name] = out.get(name, 0) + value


# --- what one object charges ---


def pod_usage(pod: dict) -> dict[str, int]:
    """The pods evaluator: counts, cpu/memory requests and limits, and `requests.<extended>` whatever backs it."""
    if ((pod.get("status") or {}).get("phase")) in ("Succeeded", "Failed"):
        return {}
    out: dict[str, int] = {"pods": 1, "count/pods": 1}
    reqs = pod_requests(pod)
    for name, value in reqs.items():
        if name in ("cpu", "memory", "ephemeral-storage"):
            _add(out, f"requests.{name}", value)
            _add(out, name, value)
        elif is_extended_resource_name(name) or name.startswith(DRA_PREFIX):
            # Extended resources are only quota-able with the requests. prefix.
            _add(out, f"requests.{name}", value)
    limits: dict[str, int] = {}
    for c in (pod.get("spec") or {}).get("containers") or []:
        for name, v in ((c.get("resources") or {}).get("limits") or {}).items():
            if name in ("cpu", "memory", "ephemeral-storage"):
                limits[name] = limits.get(name, 0) + resource_amount(name, v)
    for name, value in limits.items():
        _add(out, f"limits.{name}", value)
    return out


def _pod_extended_requests(pod: dict) -> list[tuple[str, int]]:
    """verifyOwner: the owning pod's DRA extended-resource requests, as (quota name, quantity), per long-lived
    container."""
    spec = pod.get("spec") or {}
    inits = spec.get("initContainers") or []
    containers = list(inits) + list(spec.get("containers") or [])
    reqs: list[tuple[str, int]] = []
    sums: dict[str, int] = {}
    for i, c in enumerate(containers):
        for r, q in ((c.get("resources") or {}).get("requests") or {}).items():
            if not is_dra_extended_resource_name(r):
                continue
            if i < len(inits) and c.get("restartPolicy") != "Always":
                sums.setdefault(r, 0)
                continue
            v = resource_amount(r, q)
            reqs.append((f"requests.{r}", v))
            sums[r] = sums.get(r, 0) + v
    total = pod_requests(pod)
    for r, s in sums.items():
        if total.get(r, 0) > s:
            reqs.append((f"requests.{r}", total[r] - s))
    return reqs


def claim_usage(claim: dict, view: ClusterView | None = None) -> dict[str, int]:
    """The resourceclaims evaluator (DRAExtendedResource on): count, per-class devices, implicit and explicit requests.

    A scheduler-made claim does not charge again what its owning pod already charges for the same request.
    """
    out: dict[str, int] = {CLAIM_COUNT: 1}
    bridge = False
    reqs: list[tuple[str, int]] = []
    if (_meta(claim).get("annotations") or {}).get(BRIDGE_ANNOTATION) == "true" and view is not None:
        owner = next((o for o in _meta(claim).get("ownerReferences") or [] if o.get("controller")), None)
        if owner and owner.get("kind") == "Pod" and owner.get("apiVersion") == "v1":
            pod = view.pods.get((_meta(claim).get("namespace", ""), owner.get("name", "")))
            if pod is not None and _meta(pod).get("uid") == owner.get("uid"):
                ers = (pod.get("status") or {}).get("extendedResourceClaimStatus")
                if not ers or ers.get("resourceClaimName") == _meta(claim).get("name"):
                    bridge = True
                    reqs = _pod_extended_requests(pod)
    classes = view.classes if view is not None else {}

    def charge(target: dict[str, int], qty: int, cls_name: str) -> None:
        nonlocal reqs
        _add(target, cls_name + PER_CLASS_SUFFIX, qty)
        implicit = IMPLICIT_REQUEST_PREFIX + cls_name
        is_implicit = bridge and (implicit, qty) in reqs
        explicit_name = ((classes.get(cls_name) or {}).get("spec") or {}).get("extendedResourceName")
        explicit = f"requests.{explicit_name}" if explicit_name else None
        is_explicit = bool(explicit) and not is_implicit and bridge and (explicit, qty) in reqs
        if not bridge or not is_implicit or is_explicit:
            _add(target, implicit, qty)
        if explicit and (not bridge or is_implicit or not is_explicit):
            _add(target, explicit, qty)
        if is_implicit:
            reqs.remove((implicit, qty))
        elif is_explicit:
            reqs.remove((explicit, qty))

    for req in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        if req.get("firstAvailable"):
            # Worst case per device class over the alternatives.
            best: dict[str, int] = {}
            for sub in req["firstAvailable"]:
                mode = sub.get("allocationMode") or "ExactCount"
                n = int(sub.get("count") or 1) if mode == "ExactCount" else ALL_MODE_WORST_CASE if mode == "All" else 0
                key = sub.get("deviceClassName", "") + PER_CLASS_SUFFIX
                if n > best.get(key, 0):
                    scratch: dict[str, int] = {}
                    charge(scratch, n, sub.get("deviceClassName", ""))
                    for k, v in scratch.items():
                        best[k] = max(best.get(k, 0), v)
            for k, v in best.items():
                _add(out, k, v)
        elif req.get("exactly") is not None:
            body = req["exactly"]
            mode = body.get("allocationMode") or "ExactCount"
            n = int(body.get("count") or 1) if mode == "ExactCount" else ALL_MODE_WORST_CASE if mode == "All" else 0
            charge(out, n, body.get("deviceClassName", ""))
    return out


_VALIDATION_SET = {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}


def _missing_compute(pod: dict, required: set[str]) -> str:
    """The pods evaluator's Constraints: with cpu or memory under quota, every container must state them."""
    if not required:
        return ""
    missing: dict[str, set[str]] = {}
    spec = pod.get("spec") or {}
    for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        res = c.get("resources") or {}
        limits = res.get("limits") or {}
        requests = dict(limits)
        requests.update(res.get("requests") or {})
        have = set()
        for r in ("cpu", "memory"):
            if r in requests:
                have |= {r, f"requests.{r}"}
            if r in limits:
                have.add(f"limits.{r}")
        for r in required - have:
            missing.setdefault(r, set()).add(c.get("name", ""))
    return "; ".join(f"{r} for: {','.join(sorted(names))}" for r, names in sorted(missing.items()))


def _matches(name: str, kind: str) -> bool:
    """Which evaluator covers a quota resource name (MatchingResources)."""
    if kind == "Pod":
        return name in _POD_NAMES or (
            name.startswith("requests.") and name[len("requests.") :] not in ("cpu", "memory", "ephemeral-storage")
        )
    return (
        name == CLAIM_COUNT
        or name.endswith(PER_CLASS_SUFFIX)
        or name.startswith(IMPLICIT_REQUEST_PREFIX)
        or (name.startswith("requests.") and is_extended_resource_name(name[len("requests.") :]))
    )


def usage(namespace: str, view: ClusterView) -> dict[str, int]:
    """Everything the namespace's pods and claims charge (the quota controller's status.used, unmasked)."""
    out: dict[str, int] = {}
    for (ns, _), pod in view.pods.items():
        if ns == namespace:
            for k, v in pod_usage(pod).items():
                _add(out, k, v)
    for (ns, _), claim in view.claims.items():
        if ns == namespace:
            for k, v in claim_usage(claim, view).items():
                _add(out, k, v)
    return out


def _covered(name: str) -> bool:
    return _matches(name, "Pod") or _matches(name, "ResourceClaim")


def quota_status(quota: dict, view: ClusterView) -> dict:
    """`status` of a ResourceQuota: hard as in spec, used for every hard resource."""
    hard = dict((quota.get("spec") or {}).get("hard") or {})
    used_all = usage(_meta(quota).get("namespace", ""), view)
    used = {k: format_quantity(k, used_all.get(k, 0)) for k in hard if _covered(k)}
    return {"hard": hard, "used": used}


def _pretty(values: dict[str, int]) -> str:
    return ",".join(f"{k}={format_quantity(k, v)}" for k, v in sorted(values.items()))


def charge(obj: dict, quotas: list[dict] | None, view: ClusterView, old: dict | None = None) -> tuple[bool, str]:
    """Quota admission for creating (or updating, with `old`) a Pod or ResourceClaim: (allowed, the 403 message)."""
    kind = obj.get("kind") or ("Pod" if "containers" in (obj.get("spec") or {}) else "ResourceClaim")
    ns = _meta(obj).get("namespace", "")
    if quotas is None:
        quotas = [q for (qns, _), q in sorted(view.quotas.items()) if qns == ns]
    delta = pod_usage(obj) if kind == "Pod" else claim_usage(obj, view)
    if old is not None:
        prev = pod_usage(old) if kind == "Pod" else claim_usage(old, view)
        delta = {k: delta.get(k, 0) - prev.get(k, 0) for k in set(delta) | set(prev)}
    current = usage(ns, view) if quotas else {}
    resource = "pods" if kind == "Pod" else "resourceclaims.resource.k8s.io"
    name = _meta(obj).get("name", "")
    for quota in quotas:
        if (quota.get("spec") or {}).get("scopes") or (quota.get("spec") or {}).get("scopeSelector"):
            continue  # scoped quotas are not simulated
        hard = {
            k: resource_amount(k.split(".", 1)[-1] if k.endswith("cpu") else k, v)
            for k, v in ((quota.get("spec") or {}).get("hard") or {}).items()
        }
        matched = [k for k in hard if _matches(k, kind)]
        if not matched:
            continue
        if kind == "Pod":
            missing = _missing_compute(obj, set(matched) & _VALIDATION_SET)
            if missing:
                who = f'{resource} "{name}" is forbidden' if name else f"{resource} is forbidden"
                return False, f"{who}: failed quota: {_meta(quota).get('name', '')}: must specify {missing}"
        requested = {k: delta.get(k, 0) for k in matched if delta.get(k, 0) > 0}
        exceeded = [k for k in matched if current.get(k, 0) + delta.get(k, 0) > hard[k] and delta.get(k, 0) > 0]
        if exceeded:
            failed_req = {k: requested.get(k, 0) for k in exceeded}
            failed_used = {k: current.get(k, 0) for k in exceeded}
            failed_hard = {k: hard[k] for k in exceeded}
            reason = (
                f"exceeded quota: {_meta(quota).get('name', '')}, requested: {_pretty(failed_req)}, used: "
                f"{_pretty(failed_used)}, limited: {_pretty(failed_hard)}"
            )
            who = f'{resource} "{name}" is forbidden' if name else f"{resource} is forbidden"
            return False, f"{who}: {reason}"
    return True, ""


def pod_gpu_request(pod: dict) -> int:
    """The pod's `nvidia.com/gpu` request (containers + init rules), for callers that only care about GPUs."""
    return pod_requests(pod).get("nvidia.com/gpu", 0)


__all__ = [
    "CLAIM_COUNT",
    "charge",
    "claim_usage",
    "pod_usage",
    "quota_status",
    "usage",
    "pod_gpu_request",
]
