"""The capacity gate and the drain-room estimate count what fleet's allocator could give a bridged nvidia.com/gpu pod:
a GPU tainted by its slice or by a DeviceTaintRule serves no such pod (the scheduler's claim has no tolerations)."""

from __future__ import annotations

import types

from dragoman.actions import capacity as cap
from dragoman.actions import picture
from dragoman.actions.preflight import room_warnings
from dragoman.actions.steps import Change, StepPlan
from dragoman.fleet.model import FleetModel


def _gpu(i: int, taints: list | None = None) -> dict:
    d: dict = {"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"}, "uuid": {"string": f"GPU-{i}"}}}
    if taints:
        d["taints"] = taints
    return d


def _node(name: str, pool: str, allocatable: str | None) -> dict:
    alloc = {"nvidia.com/gpu": allocatable} if allocatable is not None else {}
    return {"kind": "Node", "metadata": {"name": name, "labels": {"pool": pool}}, "status": {"allocatable": alloc}}


def _slice(node: str, devices: list[dict]) -> dict:
    return {
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


CLASS = {
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com", "creationTimestamp": "2026-06-01T00:00:00Z"},
    "spec": {"extendedResourceName": "nvidia.com/gpu", "selectors": [{"cel": {"expression": cap.CANONICAL_SELECTOR}}]},
}
RULE = {
    "kind": "DeviceTaintRule",
    "metadata": {"name": "maintenance-gpu-3"},
    "spec": {"deviceSelector": {"device": "gpu-3"}, "taint": {"key": "maintenance", "effect": "NoSchedule"}},
}


def _picture(nodes: list[dict], slices: list[dict], *, rules=(), claims=(), pods=()) -> picture.Picture:
    objects = {
        "Node": nodes,
        "Pod": list(pods),
        "DaemonSet": [],
        "ResourceSlice": slices,
        "DeviceClass": [CLASS],
        "ResourceClaim": list(claims),
        "DeviceTaintRule": list(rules),
    }
    model = FleetModel("pool")
    model.load(objects)
    pool_nodes = {n["metadata"]["name"]: n for n in nodes if n["metadata"]["labels"]["pool"] == "a"}
    return picture.Picture("a", "pool", model, pool_nodes, [], None, objects)


def test_a_gpu_tainted_by_a_rule_does_not_count_after_the_switch() -> None:
    pic = _picture([_node("n1", "a", "4")], [_slice("n1", [_gpu(i) for i in range(4)])], rules=[RULE])
    (g,) = cap.gate(pic)
    assert (g.served, g.after, g.ok) == (4, 3, False)
    assert "maintenance" in g.reason and "DeviceTaintRule maintenance-gpu-3" in g.reason
    # Without the rule the same pool passes.
    (g,) = cap.gate(_picture([_node("n1", "a", "4")], [_slice("n1", [_gpu(i) for i in range(4)])]))
    assert (g.served, g.after, g.ok) == (4, 4, True)


def test_a_slice_taint_counts_the_same_as_a_rule() -> None:
    taint = [{"key": "gpu-fault", "value": "xid-79", "effect": "NoExecute"}]
    pic = _picture([_node("n1", "a", "2")], [_slice("n1", [_gpu(0), _gpu(1, taint)])])
    (g,) = cap.gate(pic)
    assert (g.served, g.after) == (2, 1) and "gpu-fault=xid-79:NoExecute (from slice)" in g.reason


async def test_room_counts_free_untainted_dra_devices_on_the_rest_of_the_fleet() -> None:
    # The drained pool "a" has one GPU pod (2 GPUs); the only other node serves nvidia.com/gpu through DRA with
    # 4 GPUs: one held by a claim, one tainted by a rule — 2 left, room for the pod. A third held GPU leaves none.
    nodes = [_node("a1", "a", "2"), _node("b1", "b", None)]
    devices = [_gpu(i) for i in range(4)]
    held = {
        "kind": "ResourceClaim",
        "metadata": {"namespace": "team", "name": "busy"},
        "status": {
            "allocation": {
                "devices": {"results": [{"request": "r", "driver": "gpu.nvidia.com", "pool": "b1", "device": "gpu-0"}]}
            }
        },
    }
    pod = {
        "kind": "Pod",
        "metadata": {"namespace": "team", "name": "trainer"},
        "spec": {
            "nodeName": "a1",
            "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}],
        },
        "status": {"phase": "Running"},
    }
    plan = StepPlan(
        "drain", "drain", "Drain", True, False, ["a1"], [Change("Pod", "trainer", "team", "evict", detail={"gpus": 2})]
    )
    pic = _picture(nodes, [_slice("b1", devices)], rules=[RULE], claims=[held], pods=[pod])
    assert await room_warnings(types.SimpleNamespace(reads={"picture": pic}), [plan]) == []
    held2 = {**held, "metadata": {"namespace": "team", "name": "busy2"}}
    held2["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "r", "driver": "gpu.nvidia.com", "pool": "b1", "device": "gpu-1"}]}
        }
    }
    pic = _picture(nodes, [_slice("b1", devices)], rules=[RULE], claims=[held, held2], pods=[pod])
    (warning,) = await room_warnings(types.SimpleNamespace(reads={"picture": pic}), [plan])
    assert "no room for 1 evicted GPU pod" in warning
