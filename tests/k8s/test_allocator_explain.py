"""The allocator's *why not*: for each request, the devices its selectors kept and what excluded each other one."""

from __future__ import annotations

from dragoman.fleet.k8s.allocator import AllocatedState, Allocator, Inventory, admin_access_allowed

NODE = {"metadata": {"name": "n1", "labels": {"zone": "a"}}}
GPU_CLASS = {
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}


def _slice(name: str, devices: list[dict], **spec) -> dict:
    body = {"driver": "gpu.example.com", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1}}
    body.update(spec)
    if devices:
        body["devices"] = devices
    if "nodeName" not in body and not any(k in body for k in ("allNodes", "nodeSelector", "perDeviceNodeSelection")):
        body["nodeName"] = "n1"
    return {"metadata": {"name": name}, "spec": body}


def _claim(name: str, count: int = 1, **exactly) -> dict:
    body = {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": count, **exactly}
    return {
        "metadata": {"namespace": "team", "name": name},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": body}]}},
    }


def _held(name: str, *devices: str, **extra) -> dict:
    claim = _claim(name)
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": d, **extra} for d in devices
                ]
            }
        }
    }
    return claim


def _explain(slices, held=(), rules=(), claim=None):
    inv = Inventory(slices, taint_rules=rules)
    alloc = Allocator(inv, AllocatedState.from_claims(held), {"gpu.example.com": GPU_CLASS})
    return alloc.explain(NODE, [claim or _claim("want")])


def test_held_and_tainted_devices_are_named_with_their_cause() -> None:
    devices = [
        {"name": "gpu-0"},
        {"name": "gpu-1", "taints": [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]},
        {"name": "gpu-2"},
    ]
    rule = {
        "metadata": {"name": "drain-gpu-2"},
        "spec": {"deviceSelector": {"device": "gpu-2"}, "taint": {"key": "broken", "effect": "NoExecute"}},
    }
    ex = _explain([_slice("s", devices)], held=[_held("trainer", "gpu-0")], rules=[rule])
    assert ex.allocations is None
    (rq,) = ex.requests
    assert rq.candidates == []
    why = {d[2]: e for d, e in rq.excluded}
    assert why["gpu-0"].kind == "in-use" and why["gpu-0"].holders == ("team/trainer",)
    assert why["gpu-1"].kind == "taint" and why["gpu-1"].source == "slice"
    assert why["gpu-1"].taint["key"] == "maintenance"
    assert why["gpu-2"].kind == "taint" and why["gpu-2"].source == "DeviceTaintRule drain-gpu-2"
    assert "0 of 1 device(s) usable" in ex.why_not() and "taint" in ex.why_not()


def test_a_toleration_makes_the_tainted_device_usable() -> None:
    devices = [{"name": "gpu-1", "taints": [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]}]
    claim = _claim("want", tolerations=[{"key": "maintenance", "operator": "Exists"}])
    ex = _explain([_slice("s", devices)], claim=claim)
    assert ex.allocations is not None
    assert ex.allocations[0]["devices"]["results"][0]["tolerations"] == [{"key": "maintenance", "operator": "Exists"}]


def test_counters_exhausted_by_a_claim_blocks_the_partitions() -> None:
    counters = _slice(
        "counters", [], sharedCounters=[{"name": "gpu-0-counters", "counters": {"memory": {"value": "8"}}}]
    )
    counters["spec"]["pool"]["resourceSliceCount"] = 2
    parts = _slice(
        "parts",
        [
            {
                "name": "whole",
                "consumesCounters": [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "8"}}}],
            },
            {
                "name": "half",
                "consumesCounters": [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "4"}}}],
            },
        ],
    )
    parts["spec"]["pool"]["resourceSliceCount"] = 2
    ex = _explain([counters, parts], held=[_held("big", "whole")])
    (rq,) = ex.requests
    why = {d[2]: e for d, e in rq.excluded}
    assert why["whole"].kind == "in-use"
    assert why["half"].kind == "counters" and why["half"].counter_set == "gpu-0-counters"
    assert why["half"].holders == ("team/big",)
    assert ex.allocations is None


def test_a_shared_device_reports_the_capacity_left() -> None:
    dev = {"name": "gpu-0", "allowMultipleAllocations": True, "capacity": {"memory": {"value": "80Gi"}}}
    held = _held("first", "gpu-0", shareID="11111111-1111-1111-1111-111111111111", consumedCapacity={"memory": "60Gi"})
    ok = _explain([_slice("s", [dev])], held=[held], claim=_claim("small", capacity={"requests": {"memory": "20Gi"}}))
    assert ok.allocations is not None
    result = ok.allocations[0]["devices"]["results"][0]
    assert result["consumedCapacity"] == {"memory": "20Gi"} and result["shareID"]
    no = _explain([_slice("s", [dev])], held=[held], claim=_claim("big", capacity={"requests": {"memory": "40Gi"}}))
    (rq,) = no.requests
    ((_, why),) = rq.excluded
    assert why.kind == "shares" and why.holders == ("team/first",) and "20Gi of 80Gi left" in why.message


def test_admin_access_does_not_hold_and_needs_the_namespace_label() -> None:
    admin = _held("monitor", "gpu-0", adminAccess=True)
    ex = _explain([_slice("s", [{"name": "gpu-0"}])], held=[admin])
    assert ex.allocations is not None  # the admin-access result holds nothing
    assert admin_access_allowed({"metadata": {"labels": {"resource.kubernetes.io/admin-access": "true"}}})
    assert not admin_access_allowed({"metadata": {"name": "team"}})


def test_a_missing_class_is_an_error_not_a_selector_miss() -> None:
    claim = _claim("want")
    claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "absent"
    ex = _explain([_slice("s", [{"name": "gpu-0"}])], claim=claim)
    assert ex.error is not None and "could not retrieve device class absent" in ex.error
    assert ex.requests[0].error == "DeviceClass absent does not exist"


def test_network_devices_without_a_node_name_serve_matching_nodes() -> None:
    fabric = _slice("fabric", [{"name": "nic-0"}], allNodes=True)
    fabric["spec"]["pool"]["name"] = "fabric"
    elsewhere = _slice(
        "zone-b",
        [{"name": "nic-1"}],
        nodeSelector={
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]
        },
    )
    elsewhere["spec"]["pool"]["name"] = "zone-b"
    ex = _explain([fabric, elsewhere])
    assert ex.allocations is not None
    assert ex.allocations[0]["devices"]["results"][0]["device"] == "nic-0"
    assert "nodeSelector" not in ex.allocations[0]  # allNodes: available everywhere
    assert [c.device[2] for c in ex.requests[0].candidates] == ["nic-0"]


def test_a_bridged_pod_is_explained_with_the_claim_the_scheduler_makes() -> None:
    from dragoman.fleet.k8s.allocator import extended_resources_claim

    pod = {
        "metadata": {"namespace": "team", "name": "trainer"},
        "spec": {"containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "2", "cpu": "1"}}}]},
    }
    cls = {**GPU_CLASS, "spec": {**GPU_CLASS["spec"], "extendedResourceName": "nvidia.com/gpu"}}
    claim, mappings = extended_resources_claim(pod, {"nvidia.com/gpu": 2}, lambda name: cls)
    (req,) = claim["spec"]["devices"]["requests"]
    # j indexes the sorted keys of the container's requests: cpu, nvidia.com/gpu.
    assert req["name"] == "container-0-request-1" and req["exactly"]["count"] == 2
    assert mappings == [{"containerName": "main", "resourceName": "nvidia.com/gpu", "requestName": req["name"]}]
    devices = [{"name": "gpu-0"}, {"name": "gpu-1", "taints": [{"key": "maint", "effect": "NoSchedule"}]}]
    ex = _explain([_slice("s", devices)], claim=claim)
    assert ex.allocations is None and "1 of 2 device(s) usable" in ex.why_not()
    assert extended_resources_claim(pod, {"nvidia.com/gpu": 2}, lambda name: None) is None


def _sweep(count: int = 25) -> tuple[list[dict], dict]:
    """48 devices in two groups of 24 by an attribute, a request for `count` of them sharing it: the search tries
    every subset of a group before it can say no (2^23 from each first device), as kube-scheduler's does."""
    devices = [{"name": f"chip-{i}", "attributes": {"domain": {"string": "ab"[i // 24]}}} for i in range(48)]
    claim = _claim("sweep", count=count)
    claim["spec"]["devices"]["constraints"] = [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/domain"}]
    return [_slice("chips", devices)], claim


def test_a_search_that_does_not_end_in_time_is_said_so_not_waited_for() -> None:
    from dragoman.fleet.k8s.allocator import explain

    slices, claim = _sweep()
    alloc = Allocator(Inventory(slices), AllocatedState.from_claims([]), {"gpu.example.com": GPU_CLASS})
    ex = explain(alloc, NODE, [claim], seconds=0.2)
    assert ex.searched_out and ex.outcome is None and ex.error is None
    assert "did not end within 0.2 s" in ex.why_not() and "gives up after 10 s" in ex.why_not()
    # Each request alone has its devices: it is the search, not the counts.
    assert all(rq.satisfiable_alone for rq in ex.requests)
    # One group large enough, and the same search ends at once with an allocation.
    slices, claim = _sweep(count=24)
    ok = Allocator(Inventory(slices), AllocatedState.from_claims([]), {"gpu.example.com": GPU_CLASS})
    done = explain(ok, NODE, [claim], seconds=0.2)
    assert not done.searched_out and done.outcome is not None and done.outcome.ok
