"""The simulated scheduler's own words for the demo's pending pods: filled in once the fleet is complete, so a live
demo's scheduler finds nothing to rewrite."""

from __future__ import annotations

import json

from dragoman.sim.scenarios.demofleet.objects import sfx


def unschedulable_condition(message: str, at: str, reason: str = "Unschedulable") -> list[dict]:
    # As the scheduler writes it (sim/controllers/scheduler.py _fail): observedGeneration is the pod's generation,
    # 1 for a pod never updated.
    return [
        {
            "type": "PodScheduled",
            "status": "False",
            "observedGeneration": 1,
            "lastProbeTime": None,
            "lastTransitionTime": at,
            "reason": reason,
            "message": message,
        }
    ]


# Stands for the scheduler's message in a pod built before the fleet is complete; scheduler_verdicts() replaces it.
VERDICT = "<the simulated scheduler's verdict>"
# kube-scheduler's PreBind failure as the simulator's scheduler words it (sim/controllers/scheduler.py): the
# DynamicResources plugin wraps the apiserver's refusal of the claim it creates for a pod's extended resources.
PREBIND_CLAIM_ERROR = 'running PreBind plugin "DynamicResources": create claim for extended resources {ns}/: {message}'


def scheduler_verdicts(objects: list[dict]) -> dict[str, dict]:
    """Pod uid → the PodScheduled condition the simulated scheduler writes for each pod still waiting for its verdict.

    Each such pod gets one attempt (`schedule_one`) against the whole demo, so the pinned file says exactly what the
    live scheduler says when the demo starts, and its first retry finds nothing to rewrite. A pod the scheduler would
    place must be one whose bridge claim quota refuses (`charge`, the admission the simulator's apiserver runs); the
    claim's generated name is made deterministic here, where the apiserver would pick a random one.
    """
    from dragoman.sim.controllers import quota
    from dragoman.sim.controllers.scheduling import ClusterView, schedule_one

    by_kind: dict[str, list[dict]] = {}
    for o in objects:
        by_kind.setdefault(o["kind"], []).append(o)
    view = ClusterView(
        nodes=by_kind.get("Node", ()),
        pods=by_kind.get("Pod", ()),
        resourceslices=by_kind.get("ResourceSlice", ()),
        deviceclasses=by_kind.get("DeviceClass", ()),
        resourceclaims=by_kind.get("ResourceClaim", ()),
        resourceclaimtemplates=by_kind.get("ResourceClaimTemplate", ()),
        resourcequotas=by_kind.get("ResourceQuota", ()),
        namespaces=by_kind.get("Namespace", ()),
        devicetaintrules=by_kind.get("DeviceTaintRule", ()),
    )
    out: dict[str, dict] = {}
    for pod in by_kind.get("Pod", ()):
        conds = [c for c in pod["status"].get("conditions") or [] if c.get("message") == VERDICT]
        if not conds:
            continue
        (cond,) = conds
        md = pod["metadata"]
        dec = schedule_one(pod, view, cond["lastTransitionTime"])
        if dec.outcome == "unschedulable":
            reason, message = dec.condition["reason"], dec.message
        elif dec.outcome == "scheduled" and len(dec.claims_to_create) == 1:
            claim = json.loads(json.dumps(dec.claims_to_create[0]))
            claim["metadata"]["name"] = claim["metadata"]["generateName"] + sfx("rejected", md["name"])
            allowed, refusal = quota.charge(claim, None, view)
            if allowed:
                raise AssertionError(f"demo: quota admits the bridge claim of {md['name']}, so the pod would run")
            reason, message = "SchedulerError", PREBIND_CLAIM_ERROR.format(ns=md["namespace"], message=refusal)
        else:
            raise AssertionError(f"demo: the scheduler's verdict on {md['name']} is {dec.outcome!r}: {dec.message}")
        if reason != cond["reason"]:
            raise AssertionError(f"demo: {md['name']} expects reason {cond['reason']}, the scheduler says {reason}")
        # The events recorder's 1024-character cut would make the Event differ from the condition.
        assert len(message) <= 1024, md["name"]
        cond["message"] = message
        out[md["uid"]] = cond
    return out
