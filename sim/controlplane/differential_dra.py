"""The scheduler differential (issue 28's second judge): generated DRA scenarios created on both control planes, the
real kube-scheduler's outcome (bound where, which devices, or Pending and why) against the embedded simulator's,
whose scheduler allocates through fleet/k8s/allocator.py — dragoman's prediction.

Each scenario is self-contained: its own driver (so its DeviceClass selects only its own devices), its own pool(s)
on the behaviour cases' joined node (node-local slices, `allNodes` and `nodeSelector` network slices, per-device node
selection), a mix of what v1.37.2 turns on by default — devices tainted by the slice or by a DeviceTaintRule
(NoSchedule: eviction is another controller's business), partitions sharing a counter set, shared devices with
consumable capacity and request policies, `firstAvailable`, `All`, tolerations, matchAttribute/distinctAttribute,
admin access — and one to three pods, created one after the other (each waits until the scheduler decided), so the
later ones meet what the earlier ones hold. Devices with binding conditions nobody sets: the pod is reserved and
nominated, and waits unbound in PreBind on both sides.

Scenarios come from a seed: `DRAGOMAN_DRA_SCENARIOS` (default 200, the few hundred CI runs: 91 s for both sides at
load 2, 0 differences) and `DRAGOMAN_DRA_SEED` pick them; a larger run by hand is
`DRAGOMAN_DRA_SCENARIOS=1000 DRAGOMAN_DRA_SEED=7 dragoman controlplane diff --case 'a node*' --case 'DRA scheduler*'`.
"""

from __future__ import annotations

import os
import random
from typing import Any

from dragoman.sim.controlplane.differential import Behaviour, Side

NS = "dragoman-diff-dra"
NODE = "dragoman-diff-h100"  # differential_behaviour's joined node
DOMAIN = "diff.example.com"
SETTLE = 30.0
PROFILE = ("a", "b")
CASE = "DRA scheduler: generated scenarios"


def _driver(i: int) -> str:
    return f"s{i}.{DOMAIN}"


def _attrs(rng: random.Random) -> dict:
    return {"model": {"string": rng.choice(PROFILE)}, "numa": {"int": rng.randrange(2)}}


def scenario(i: int, seed: int) -> dict:
    """Scenario i of the run: the objects to create in order, deterministic from (seed, i)."""
    rng = random.Random(seed * 100_003 + i)
    driver = _driver(i)
    kind = rng.choice(("plain", "plain", "taint", "rule", "counters", "shared", "network", "perdevice", "binding"))
    devices: list[dict] = []
    slices: list[dict] = []
    rules: list[dict] = []
    n = rng.randrange(2, 5)
    for d in range(n):
        dev: dict[str, Any] = {"name": f"dev-{d}", "attributes": _attrs(rng)}
        if kind == "taint" and rng.random() < 0.5:
            dev["taints"] = [{"key": "maint", "value": "yes", "effect": rng.choice(("NoSchedule", "None"))}]
        if kind == "binding" and rng.random() < 0.6:
            # Nobody sets the conditions: the pod stays reserved and nominated, unbound, on both sides.
            dev["bindingConditions"] = ["FabricAttached"]
            dev["bindingFailureConditions"] = ["FabricFailed"]
            dev["bindsToNode"] = rng.random() < 0.5
        if kind == "shared":
            dev["allowMultipleAllocations"] = True
            cap: dict[str, Any] = {"value": "8Gi"}
            if rng.random() < 0.5:
                cap["requestPolicy"] = {"default": "2Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}
            dev["capacity"] = {"mem": cap}
        devices.append(dev)
    pool = {"name": f"pool-{i}", "generation": 1, "resourceSliceCount": 1}
    spec: dict[str, Any] = {"driver": driver, "pool": pool, "devices": devices}
    if kind == "network":
        if rng.random() < 0.5:
            spec["allNodes"] = True
        else:
            spec["nodeSelector"] = {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE]}]}
                ]
            }
    elif kind == "perdevice":
        spec["perDeviceNodeSelection"] = True
        for d, dev in enumerate(devices):
            if d % 2 == 0:
                dev["nodeName"] = NODE
            else:
                dev["nodeName"] = "dragoman-diff-elsewhere"
    else:
        spec["nodeName"] = NODE
    if kind == "counters":
        pool["resourceSliceCount"] = 2
        total = rng.choice((4, 8))
        for dev in devices:
            dev["consumesCounters"] = [
                {"counterSet": "gpu-0", "counters": {"memory": {"value": str(rng.choice((2, 4, 8)))}}}
            ]
        slices.append(
            {
                "metadata": {"name": f"s{i}-counters"},
                "spec": {
                    "driver": driver,
                    "pool": dict(pool),
                    "nodeName": NODE,
                    "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": str(total)}}}],
                },
            }
        )
    slices.append({"metadata": {"name": f"s{i}-devices"}, "spec": spec})
    if kind == "rule":
        target = rng.randrange(n)
        rules.append(
            {
                "metadata": {"name": f"s{i}-maint"},
                "spec": {
                    "deviceSelector": {"driver": driver, "pool": f"pool-{i}", "device": f"dev-{target}"},
                    "taint": {"key": "maint", "value": "yes", "effect": "NoSchedule"},
                },
            }
        )
    cls = {
        "metadata": {"name": f"s{i}.{DOMAIN}"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }
    claims: list[dict] = []
    for p in range(rng.randrange(1, 4)):
        claims.append(_claim(rng, i, p, kind))
    # A monitoring claim with admin access first, in about a quarter of the scenarios (its own random stream, so the
    # rest of the scenario is the one it always was): it sees its devices without holding them, so the pods after it
    # are placed as if it were not there (the namespace carries resource.kubernetes.io/admin-access=true).
    admin = random.Random(seed * 7_919 + i)
    if admin.random() < 0.25:
        first = claims[0]["spec"]["devices"]["requests"]
        for req in first:
            if "exactly" in req:
                req["exactly"]["adminAccess"] = True
                req["exactly"].pop("capacity", None)
    return {"index": i, "kind": kind, "class": cls, "slices": slices, "rules": rules, "claims": claims}


def _request(rng: random.Random, i: int, kind: str, name: str) -> dict:
    cls = f"s{i}.{DOMAIN}"
    body: dict[str, Any] = {"deviceClassName": cls}
    shape = rng.random()
    if shape < 0.15:
        body["allocationMode"] = "All"
    else:
        body["allocationMode"] = "ExactCount"
        body["count"] = rng.choice((1, 1, 1, 2, 3))
    if rng.random() < 0.3:
        body["selectors"] = [
            {"cel": {"expression": f'device.attributes["{_driver(i)}"].model == "{rng.choice(PROFILE)}"'}}
        ]
    if kind in ("taint", "rule") and rng.random() < 0.4:
        body["tolerations"] = [{"key": "maint", "operator": "Exists", "effect": "NoSchedule"}]
    if kind == "shared" and rng.random() < 0.7:
        body["capacity"] = {"requests": {"mem": rng.choice(("1Gi", "2Gi", "3Gi", "5Gi", "1500Mi"))}}
    if rng.random() < 0.2:
        # firstAvailable: the first subrequest asks more than the second.
        first = dict(body, count=min(int(body.get("count") or 1) + 1, 4), allocationMode="ExactCount", name="big")
        second = dict(body, count=1, allocationMode="ExactCount", name="small")
        return {"name": name, "firstAvailable": [first, second]}
    return {"name": name, "exactly": body}


def _claim(rng: random.Random, i: int, p: int, kind: str) -> dict:
    requests = [_request(rng, i, kind, f"r{r}") for r in range(rng.choice((1, 1, 2)))]
    devices: dict[str, Any] = {"requests": requests}
    if len(requests) == 2 and rng.random() < 0.4:
        attr = f"{_driver(i)}/numa"
        devices["constraints"] = [{"requests": [], rng.choice(("matchAttribute", "distinctAttribute")): attr}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"s{i}-c{p}", "namespace": NS},
        "spec": {"devices": devices},
    }


def _pod(claim: dict) -> dict:
    name = claim["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": NODE},
            "terminationGracePeriodSeconds": 0,
            "resourceClaims": [{"name": "dev", "resourceClaimName": name}],
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"claims": [{"name": "dev"}]},
                }
            ],
        },
    }


def _decided(p: dict | None, claim: dict | None) -> bool:
    """Bound, refused, or reserved and waiting for binding conditions (nominated, its claim's devices have some)."""
    if p is None:
        return False
    if (p.get("spec") or {}).get("nodeName"):
        return True
    results = ((((claim or {}).get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
    if (p.get("status") or {}).get("nominatedNodeName") and any(r.get("bindingConditions") for r in results):
        return True
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "False"
        for c in (p.get("status") or {}).get("conditions") or ()
    )


def _outcome(side: Side, claim: dict) -> dict:
    name = claim["metadata"]["name"]
    p = side.get(f"/api/v1/namespaces/{NS}/pods/{name}") or {}
    c = side.get(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/{name}") or {}
    cond = next((x for x in (p.get("status") or {}).get("conditions") or () if x.get("type") == "PodScheduled"), {})
    alloc = (c.get("status") or {}).get("allocation") or {}
    results = []
    for r in (alloc.get("devices") or {}).get("results") or ():
        results.append(
            {
                "request": r.get("request"),
                "device": r.get("device"),
                "pool": r.get("pool"),
                "tolerations": r.get("tolerations"),
                "shared": "shareID" in r,
                "consumedCapacity": r.get("consumedCapacity"),
                "bindingConditions": r.get("bindingConditions"),
            }
        )
    return {
        "pod": name,
        "node": (p.get("spec") or {}).get("nodeName"),
        "nominated": (p.get("status") or {}).get("nominatedNodeName"),
        "scheduled": [cond.get("status"), cond.get("reason"), cond.get("message")],
        "devices": sorted(results, key=lambda r: (str(r["request"]), str(r["device"]))),
        "nodeSelector": alloc.get("nodeSelector"),
    }


def _create(side: Side, path: str, body: dict) -> int:
    ans = side.call("POST", path, body)
    return ans.code


def run_scenario(side: Side, sc: dict) -> dict:
    """Create the scenario's objects on one side, its pods one after the other; what the scheduler decided.

    Once, a scenario runs again from nothing when the side's scheduler abandoned a binding it had begun (_abandoned):
    that is no decision of either scheduler but the side's own transient failure, and the report says so (a note with
    the scheduler's words), so a flaky API call is neither a difference nor hidden."""
    seen = _run_once(side, sc)
    abandoned = [o["pod"] for o in seen["pods"] if _abandoned(o)]
    if abandoned:
        words = _failed_scheduling(side, abandoned)
        gone = _remove_everything(side, sc)
        side.note(
            CASE,
            f"s{sc['index']} ran again: its scheduler began binding {', '.join(abandoned)} and gave up"
            + (f" ({'; '.join(words)})" if words else "")
            + ("" if gone else "; its objects were still there after 30 s"),
        )
        seen = _run_once(side, sc)
    return seen


def _abandoned(outcome: dict) -> bool:
    """Nominated, unbound, Unschedulable, and no binding condition to wait for: the scheduler named the node when the
    binding cycle began (v1.37 nominates a pod whose PreBind has work: every pod with a claim), then PreBind or Bind
    failed — an API call under load — and its retry met what the half-undone attempt left. No scenario preempts, so
    nothing else nominates a pod that stays unschedulable."""
    status, reason = outcome["scheduled"][0], outcome["scheduled"][1]
    return bool(
        outcome["nominated"]
        and not outcome["node"]
        and (status, reason) == ("False", "Unschedulable")
        and not any(d.get("bindingConditions") for d in outcome["devices"])
    )


def _failed_scheduling(side: Side, pods: list[str]) -> list[str]:
    """The scheduler's FailedScheduling messages about these pods, each once, oldest first."""
    words: list[str] = []
    for name in pods:
        ans = side.get(
            f"/api/v1/namespaces/{NS}/events?fieldSelector=involvedObject.name%3D{name},reason%3DFailedScheduling"
        )
        events = sorted((ans or {}).get("items") or [], key=lambda e: str(e.get("firstTimestamp") or ""))
        for e in events:
            msg = " ".join(str(e.get("message") or "").split())
            if msg and msg not in words:
                words.append(msg)
    return words


def _remove_everything(side: Side, sc: dict) -> bool:
    """The scenario's objects, its claims too, gone before it runs again under the same names: whether they went."""
    remove_scenario(side, sc)
    for claim in sc["claims"]:
        side.call("DELETE", f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/{claim['metadata']['name']}")
    names = [c["metadata"]["name"] for c in sc["claims"]]
    return bool(
        side.wait(
            lambda: all(
                side.get(f"/api/v1/namespaces/{NS}/pods/{n}") is None
                and side.get(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/{n}") is None
                for n in names
            ),
            SETTLE,
            0.2,
        )
    )


def _run_once(side: Side, sc: dict) -> dict:
    created = [
        _create(side, "/apis/resource.k8s.io/v1/deviceclasses", {"apiVersion": "resource.k8s.io/v1", **sc["class"]})
    ]
    for rule in sc["rules"]:
        created.append(
            _create(side, "/apis/resource.k8s.io/v1/devicetaintrules", {"apiVersion": "resource.k8s.io/v1", **rule})
        )
    for s in sc["slices"]:
        created.append(
            _create(side, "/apis/resource.k8s.io/v1/resourceslices", {"apiVersion": "resource.k8s.io/v1", **s})
        )
    outcomes = []
    for claim in sc["claims"]:
        created.append(_create(side, f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims", claim))
        created.append(_create(side, f"/api/v1/namespaces/{NS}/pods", _pod(claim)))
        name = claim["metadata"]["name"]
        side.wait(
            lambda name=name: _decided(
                side.get(f"/api/v1/namespaces/{NS}/pods/{name}"),
                side.get(f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/{name}"),
            ),
            SETTLE,
            0.2,
        )
        outcomes.append(_outcome(side, claim))
    return {"kind": sc["kind"], "created": created, "pods": outcomes}


def remove_scenario(side: Side, sc: dict) -> None:
    for claim in sc["claims"]:
        name = claim["metadata"]["name"]
        side.call("DELETE", f"/api/v1/namespaces/{NS}/pods/{name}?gracePeriodSeconds=0")
    for s in sc["slices"]:
        side.call("DELETE", f"/apis/resource.k8s.io/v1/resourceslices/{s['metadata']['name']}")
    for rule in sc["rules"]:
        side.call("DELETE", f"/apis/resource.k8s.io/v1/devicetaintrules/{rule['metadata']['name']}")
    side.call("DELETE", f"/apis/resource.k8s.io/v1/deviceclasses/{sc['class']['metadata']['name']}")


def scenario_count() -> tuple[int, int]:
    return int(os.environ.get("DRAGOMAN_DRA_SCENARIOS", "200")), int(os.environ.get("DRAGOMAN_DRA_SEED", "28"))


def dra_scenarios(side: Side) -> Any:
    """Every generated scenario on this side: {scenario: outcome}."""
    ans = side.call(
        "POST",
        "/api/v1/namespaces",
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": NS, "labels": {"resource.kubernetes.io/admin-access": "true"}},
        },
    )
    assert ans.code in (201, 409), (ans.code, ans.body)
    count, seed = scenario_count()
    out: dict[str, Any] = {}
    for i in range(count):
        sc = scenario(i, seed)
        out[f"s{i} ({sc['kind']})"] = run_scenario(side, sc)
        remove_scenario(side, sc)
    out["scenarios"] = count
    return out


def cleanup(side: Side) -> None:
    count, seed = scenario_count()
    for i in range(count):
        remove_scenario(side, scenario(i, seed))
    side.call("DELETE", f"/api/v1/namespaces/{NS}")


def cases() -> list[Behaviour]:
    return [Behaviour(CASE, dra_scenarios, group="behaviour/dra-scheduler")]
