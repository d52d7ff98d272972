"""The model's device states (fleet/k8s/devicestate.py: what the views and DRA FREE show) and the allocator
(fleet/k8s/allocator.py: what the scheduler would do) must agree on which devices could be given now: on the scheduler
differential's generated scenarios (taints, DeviceTaintRules, counters, shared capacity, network and per-device node
selection), after the simulated scheduler — which allocates through the allocator — placed their pods."""

from __future__ import annotations

from dragoman.fleet.k8s.allocator import AllocatedState, Allocator, Inventory
from dragoman.fleet.model import FleetModel
from dragoman.sim.controllers.scheduling import ClusterView, apply_decision, schedule_one
from dragoman.sim.controlplane import differential_dra as dd

NODE = {
    "kind": "Node",
    "metadata": {"name": dd.NODE, "labels": {"kubernetes.io/hostname": dd.NODE}},
    "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"}},
}


def _placed(sc: dict) -> list[dict]:
    view = ClusterView(
        nodes=[NODE], deviceclasses=[sc["class"]], resourceslices=sc["slices"], devicetaintrules=sc["rules"]
    )
    for claim in sc["claims"]:
        view.upsert_claim(claim)
        pod = dd._pod(claim)
        pod["metadata"]["uid"] = "uid-" + claim["metadata"]["name"]
        view.upsert_pod(pod)
        apply_decision(view, schedule_one(pod, view, "2026-12-05T10:00:00Z"))
    return list(view.claims.values())


def test_device_states_agree_with_the_allocator() -> None:
    judged = held = 0
    for i in range(150):
        sc = dd.scenario(i, 7)
        claims = _placed(sc)
        objects = {
            "Node": [NODE],
            "ResourceSlice": [{"kind": "ResourceSlice", **s} for s in sc["slices"]],
            "DeviceClass": [{"kind": "DeviceClass", **sc["class"]}],
            "ResourceClaim": [{"kind": "ResourceClaim", **c} for c in claims],
            "DeviceTaintRule": [{"kind": "DeviceTaintRule", **r} for r in sc["rules"]],
        }
        model = FleetModel("pool")
        model.load(objects)
        name = sc["class"]["metadata"]["name"]
        alloc = Allocator(Inventory(sc["slices"], sc["rules"]), AllocatedState.from_claims(claims), {name: sc["class"]})
        rq = alloc.request_devices(NODE, name)
        could = {c.device for c in rq.candidates}
        states = model.device_states()
        for did in [*could, *(d for d, ex in rq.excluded if ex.kind != "node-selection")]:
            judged += 1
            held += bool(states.state(did).holders)
            assert states.state(did).allocatable == (did in could), (i, sc["kind"], did, dict(rq.excluded).get(did))
    assert judged > 400 and held > 50
