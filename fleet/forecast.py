"""Before a pool moves: GPU pods created per hour on it (from pods' creationTimestamps) and the claim objects per hour
and API share that makes once each such pod gets a claim."""

from __future__ import annotations

import dataclasses
import time

from dragoman.fleet import ownership as own
from dragoman.fleet.k8s import DEVICECLASS_PREFIX, times
from dragoman.fleet.model import FleetModel, pod_extended_requests, pod_terminal

DEFAULT_WINDOW_HOURS = 24.0


@dataclasses.dataclass
class Forecast:
    """What moving one pool costs the control plane, from the pods seen on it (model-derived, a lower bound:
    pods deleted before dragoman read the cluster are not seen)."""

    pool: str
    window_hours: float
    gpu_pods_created: int  # in the window, on the pool (bound to its nodes, or Pending and pinned to it)
    pods_per_hour: float
    claims_per_hour: float  # each of those pods makes one scheduler-made claim once the pool is on DRA
    already_claims_per_hour: float  # of which the pool's pods already make today (served through DRA)
    standing_claims_added: int  # live GPU pods on the pool without a claim today: claims that will exist at once
    api_objects: int  # objects in the API today
    api_objects_source: str  # "apiserver /metrics" or "model" (only the kinds dragoman reads)
    share_after: float  # the pool's claims as a share of the API's objects after the move

    def to_json(self) -> dict:
        return {
            "pool": self.pool,
            "windowHours": self.window_hours,
            "gpuPodsCreated": self.gpu_pods_created,
            "podsPerHour": round(self.pods_per_hour, 3),
            "claimsPerHour": round(self.claims_per_hour, 3),
            "claimsPerHourToday": round(self.already_claims_per_hour, 3),
            "standingClaimsAdded": self.standing_claims_added,
            "apiObjects": self.api_objects,
            "apiObjectsSource": self.api_objects_source,
            "shareAfter": round(self.share_after, 5),
            "source": "model (pod creationTimestamps; deleted pods unseen, so a lower bound)",
        }


def _gpu_request(pod: dict) -> bool:
    return any(
        k == own.GPU or k.startswith(own.MIG_PREFIX) or k.startswith(DEVICECLASS_PREFIX)
        for k in pod_extended_requests(pod)
    )


def _pod_pool(model: FleetModel, pod: dict) -> str | None:
    """The pool a pod runs on, or is pinned to by a nodeSelector on the pool label while Pending."""
    spec = pod.get("spec") or {}
    node = spec.get("nodeName")
    if node:
        return model._node_pool.get(node)
    label = model.pool_label
    return (spec.get("nodeSelector") or {}).get(label) if label else None


def forecast_all(
    model: FleetModel,
    window_hours: float = DEFAULT_WINDOW_HOURS,
    now: float | None = None,
    api_objects: int | None = None,
    pools: list[str] | None = None,
) -> dict[str, Forecast]:
    """The forecast of every pool (or of `pools`) in one pass over the pods and claims: the claim rate moving a pool
    brings is its GPU pods created per hour over the last `window_hours` (ending at the cluster's clock, else now),
    one claim each; and the share of the API's objects (from /metrics when given, else the model's count)."""
    if now is None:
        now = model.now if model.now is not None else time.time()
    names = pools if pools is not None else model.pool_names()
    wanted = set(names)
    start = now - window_hours * 3600
    created = dict.fromkeys(names, 0)
    already = dict.fromkeys(names, 0)
    standing = dict.fromkeys(names, 0)
    claims = dict.fromkeys(names, 0)
    for pod in model.objects["Pod"].values():
        pool = _pod_pool(model, pod)
        if pool not in wanted or not _gpu_request(pod):
            continue
        served_by_dra = bool((pod.get("status") or {}).get("extendedResourceClaimStatus"))
        t = times.parse_time((pod.get("metadata") or {}).get("creationTimestamp"))
        if t is not None and start <= t <= now:
            created[pool] += 1
            already[pool] += served_by_dra
        if not pod_terminal(pod) and not served_by_dra and (pod.get("spec") or {}).get("nodeName"):
            standing[pool] += 1
    for claim in model.objects["ResourceClaim"].values():
        pool = model._node_pool.get(model.claim_node(claim) or "")
        if pool in wanted:
            claims[pool] += 1
    source = "apiserver /metrics"
    if api_objects is None:
        api_objects = sum(len(objs) for objs in model.objects.values())
        source = "model"
    out = {}
    for pool in names:
        rate = created[pool] / window_hours if window_hours > 0 else 0.0
        total_after = api_objects + standing[pool]
        share = (standing[pool] + claims[pool]) / total_after if total_after else 0.0
        out[pool] = Forecast(
            pool,
            window_hours,
            created[pool],
            rate,
            rate,
            already[pool] / window_hours if window_hours > 0 else 0.0,
            standing[pool],
            api_objects,
            source,
            share,
        )
    return out


def forecast(
    model: FleetModel,
    pool: str,
    window_hours: float = DEFAULT_WINDOW_HOURS,
    now: float | None = None,
    api_objects: int | None = None,
) -> Forecast:
    """The forecast of one pool (see forecast_all)."""
    return forecast_all(model, window_hours, now, api_objects, [pool])[pool]
