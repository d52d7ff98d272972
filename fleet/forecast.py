"""Before a pool moves: GPU pods created per hour on it (from pods' creationTimestamps) and the claim objects per hour and API share that makes once each such pod gets a claim."""

from __future__ import annotations

import dataclasses
import time

from dragoman.fleet import ownership as own
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
            "pool": self.pool, "windowHours": self.window_hours, "gpuPodsCreated": self.gpu_pods_created,
            "podsPerHour": round(self.pods_per_hour, 3), "claimsPerHour": round(self.claims_per_hour, 3),
            "claimsPerHourToday": round(self.already_claims_per_hour, 3), "standingClaimsAdded": self.standing_claims_added,
            "apiObjects": self.api_objects, "apiObjectsSource": self.api_objects_source, "shareAfter": round(self.share_after, 5),
            "source": "model (pod creationTimestamps; deleted pods unseen, so a lower bound)",
        }


def _gpu_request(pod: dict) -> bool:
    return any(k == own.GPU or k.startswith(own.MIG_PREFIX) or k.startswith("deviceclass.resource.kubernetes.io/")
               for k in pod_extended_requests(pod))


def _on_pool(model: FleetModel, pod: dict, members: set[str], pool: str) -> bool:
    spec = pod.get("spec") or {}
    node = spec.get("nodeName")
    if node:
        return node in members
    label = model.pool_label
    return bool(label) and (spec.get("nodeSelector") or {}).get(label) == pool


def forecast(model: FleetModel, pool: str, window_hours: float = DEFAULT_WINDOW_HOURS, now: float | None = None,
             api_objects: int | None = None) -> Forecast:
    """The claim rate moving `pool` brings: its GPU pods created per hour over the last `window_hours` (ending at the
    cluster's clock, else now), one claim each; and the share of the API's objects (from /metrics when given)."""
    if now is None:
        now = model.now if model.now is not None else time.time()
    p = model.pool(pool)
    members = set(p.nodes) if p else set()
    start = now - window_hours * 3600
    created = already = standing = 0
    for pod in model.objects["Pod"].values():
        if not _gpu_request(pod) or not _on_pool(model, pod, members, pool):
            continue
        served_by_dra = bool((pod.get("status") or {}).get("extendedResourceClaimStatus"))
        t = own.parse_time((pod.get("metadata") or {}).get("creationTimestamp"))
        if t is not None and start <= t <= now:
            created += 1
            already += served_by_dra
        if not pod_terminal(pod) and not served_by_dra and (pod.get("spec") or {}).get("nodeName"):
            standing += 1
    source = "apiserver /metrics"
    if api_objects is None:
        api_objects = sum(len(objs) for objs in model.objects.values())
        source = "model"
    rate = created / window_hours if window_hours > 0 else 0.0
    total_after = api_objects + standing
    share = (standing + sum(1 for c in model.objects["ResourceClaim"].values() if _claim_on(model, c, members))) / total_after \
        if total_after else 0.0
    return Forecast(pool, window_hours, created, rate, rate, already / window_hours if window_hours > 0 else 0.0, standing,
                    api_objects, source, share)


def _claim_on(model: FleetModel, claim: dict, members: set[str]) -> bool:
    return model.claim_node(claim) in members
