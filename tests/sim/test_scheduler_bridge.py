"""The KEP-5004 bridge, table-driven: allocatable × serving class × slices × kubelet, through schedule, claim, status,
admission."""

from __future__ import annotations

import json
import re

import pytest
from dragoman.sim.controllers import admission
from dragoman.sim.controllers.scheduling import ClusterView, apply_decision, schedule_one
from scheduler_fixtures import device_class, gpu_pod, gpu_slice, node

NOW = "2026-11-30T12:00:00Z"
NAME_RE = re.compile(r"^trainer-extended-resources-[bcdfghjklmnpqrstvwxz2456789]{5}$")
NO_CLASS_MSG = (
    "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
    "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
)
NO_DEVICES_MSG = (
    "0/1 nodes are available: 1 cannot allocate all claims. "
    "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
)


def _classes(kind: str) -> list[dict]:
    if kind == "serves":
        return [device_class("gpu.nvidia.com")]
    if kind == "none":
        # The class exists but names no extended resource: only its implicit name is served.
        return [device_class("gpu.nvidia.com", extended=None)]
    # Two classes name nvidia.com/gpu with the same creationTimestamp: the smaller name wins.
    return [device_class("gpu.nvidia.com"), device_class("gpu-a", created="2026-06-01T10:00:00Z")]


CASES = [
    (alloc, classes, slices, kubelet)
    for alloc in ("8", "0", "absent")
    for classes in ("serves", "none", "two")
    for slices in (True, False)
    for kubelet in ("v1.37.1", "v1.35.4")
]


@pytest.mark.parametrize("alloc,classes,slices,kubelet", CASES, ids=["-".join(map(str, c)) for c in CASES])
def test_bridge_table(alloc: str, classes: str, slices: bool, kubelet: str) -> None:
    gpu = None if alloc == "absent" else int(alloc)
    n = node("gpu-1", gpu, kubelet=kubelet)
    pod = gpu_pod("trainer", 2)
    view = ClusterView(
        nodes=[n], pods=[pod], deviceclasses=_classes(classes), resourceslices=[gpu_slice("gpu-1")] if slices else []
    )
    dec = schedule_one(pod, view, NOW)

    if gpu:
        # Allocatable > 0: the device plugin serves the name on this node, whatever classes and slices exist.
        assert dec.outcome == "scheduled" and dec.node == "gpu-1"
        assert (
            dec.event["reason"] == "Scheduled"
            and dec.event["message"] == "Successfully assigned default/trainer to gpu-1"
        )
        assert dec.claims_to_create == [] and "extendedResourceClaimStatus" not in dec.pod_status_patch
        assert dec.condition["type"] == "PodScheduled" and dec.condition["status"] == "True"
        apply_decision(view, dec)
        bound = view.pods[("default", "trainer")]
        res = admission.admit(bound, n, view)
        assert res.admitted and res.gpu_source == "device-plugin" and res.devices == []
        return

    if classes == "none":
        assert dec.outcome == "unschedulable" and dec.node is None
        assert dec.message == NO_CLASS_MSG and dec.event["message"] == NO_CLASS_MSG
        assert dec.event["reason"] == "FailedScheduling" and dec.event["type"] == "Warning"
        assert dec.condition == {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": NOW,
            "reason": "Unschedulable",
            "message": NO_CLASS_MSG,
        }
        assert dec.claims_to_create == []
        return

    if not slices:
        assert dec.outcome == "unschedulable"
        assert dec.message == NO_DEVICES_MSG
        assert dec.claims_to_create == []
        return

    # Served through DRA: one scheduler-made claim, the status field, and the bridge kubelet gets the devices.
    winner = "gpu-a" if classes == "two" else "gpu.nvidia.com"
    assert dec.outcome == "scheduled" and dec.node == "gpu-1"
    assert len(dec.claims_to_create) == 1
    claim = dec.claims_to_create[0]
    meta = claim["metadata"]
    assert NAME_RE.match(meta["name"]) and meta["generateName"] == "trainer-extended-resources-"
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert "resource.kubernetes.io/pod-claim-name" not in meta["annotations"] and "labels" not in meta
    assert meta["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": "uid-trainer", "controller": True}
    ]
    assert meta["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    # requests: {cpu, memory, nvidia.com/gpu} sorted → nvidia.com/gpu is j=2.
    assert claim["spec"]["devices"]["requests"] == [
        {
            "name": "container-0-request-2",
            "exactly": {"deviceClassName": winner, "allocationMode": "ExactCount", "count": 2},
        }
    ]
    alloc_ = claim["status"]["allocation"]
    assert alloc_["devices"]["results"] == [
        {"request": "container-0-request-2", "driver": "gpu.nvidia.com", "pool": "gpu-1", "device": "gpu-0"},
        {"request": "container-0-request-2", "driver": "gpu.nvidia.com", "pool": "gpu-1", "device": "gpu-1"},
    ]
    assert alloc_["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-1"]}]}]
    }
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": "uid-trainer"}]
    assert dec.pod_status_patch["extendedResourceClaimStatus"] == {
        "resourceClaimName": meta["name"],
        "requestMappings": [
            {"containerName": "main", "resourceName": "nvidia.com/gpu", "requestName": "container-0-request-2"}
        ],
    }
    assert dec.event["message"] == "Successfully assigned default/trainer to gpu-1"

    apply_decision(view, dec)
    bound = view.pods[("default", "trainer")]
    assert bound["spec"]["nodeName"] == "gpu-1"
    assert view.alloc_state.devices == {("gpu.nvidia.com", "gpu-1", "gpu-0"), ("gpu.nvidia.com", "gpu-1", "gpu-1")}
    res = admission.admit(bound, n, view)
    if kubelet == "v1.37.1":
        assert res.admitted and res.gpu_source == "dra"
        assert res.devices == ["GPU-gpu-1-0000", "GPU-gpu-1-0001"]
        assert res.environment() == {"NVIDIA_VISIBLE_DEVICES": "GPU-gpu-1-0000,GPU-gpu-1-0001"}
    elif alloc == "absent":
        # A kubelet without the bridge drops the unknown extended resource and runs the pod without a GPU.
        assert res.admitted and res.gpu_source == "none" and res.devices == []
        assert res.dropped_resources == ["nvidia.com/gpu"]
    else:
        # nvidia.com/gpu: 0 still reported: the old kubelet rejects the pod.
        assert not res.admitted
        assert res.reason == "OutOfnvidia.com/gpu"
        assert (
            res.message
            == "Pod was rejected: Node didn't have enough resource: nvidia.com/gpu, requested: 2, used: 0, capacity: 0"
        )
        assert res.status_patch() == {"phase": "Failed", "reason": "OutOfnvidia.com/gpu", "message": res.message}


def test_newest_class_wins_the_name() -> None:
    old = device_class("gpu.nvidia.com", created="2026-01-01T00:00:00Z")
    new = device_class("zz-gpu", created="2026-03-01T00:00:00Z")
    view = ClusterView(nodes=[node("gpu-1")], deviceclasses=[old, new], resourceslices=[gpu_slice("gpu-1")])
    pod = gpu_pod("trainer", 1)
    view.upsert_pod(pod)
    dec = schedule_one(pod, view, NOW)
    assert dec.claims_to_create[0]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "zz-gpu"
    # Deleting the winner does not promote the next one (v1.37.2 extendedresourcecache removes the name): the pod
    # waits, and no claim is made, until the remaining class is updated (or the scheduler lists classes again).
    view.remove_class("zz-gpu")
    dec = schedule_one(pod, view, NOW)
    assert dec.outcome != "scheduled" and not dec.claims_to_create
    assert "Insufficient nvidia.com/gpu" in dec.message
    touched = json.loads(json.dumps(old))
    touched["metadata"]["annotations"] = {"touched": "1"}
    view.upsert_class(touched)
    dec = schedule_one(pod, view, NOW)
    assert dec.claims_to_create[0]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.nvidia.com"


def test_deleting_a_shadowed_class_unmaps_the_name_from_the_winner() -> None:
    """removeResourceName2class deletes the class's extendedResourceName whoever holds it: deleting the older class
    that lost the name leaves nothing serving it, though the winner still exists."""
    old = device_class("aa-gpu", created="2026-01-01T00:00:00Z")
    new = device_class("zz-gpu", created="2026-03-01T00:00:00Z")
    view = ClusterView(nodes=[node("gpu-1")], deviceclasses=[old, new], resourceslices=[gpu_slice("gpu-1")])
    assert view.class_for("nvidia.com/gpu")["metadata"]["name"] == "zz-gpu"
    # The initial list comes in name order: aa-gpu first (it holds both names), then zz-gpu takes the explicit one.
    assert view.class_for("deviceclass.resource.kubernetes.io/aa-gpu")["metadata"]["name"] == "aa-gpu"
    view.remove_class("aa-gpu")
    assert view.class_for("nvidia.com/gpu") is None
    assert view.class_for("deviceclass.resource.kubernetes.io/zz-gpu")["metadata"]["name"] == "zz-gpu"


def test_a_class_that_loses_the_name_at_listing_keeps_no_implicit_name() -> None:
    """A newer class listed first (name order) makes the older one return early: not even its implicit
    deviceclass.resource.kubernetes.io/<name> is served."""
    newer = device_class("aa-gpu", created="2026-03-01T00:00:00Z")
    older = device_class("zz-gpu", created="2026-01-01T00:00:00Z")
    view = ClusterView(nodes=[node("gpu-1")], deviceclasses=[older, newer], resourceslices=[gpu_slice("gpu-1")])
    assert view.class_for("nvidia.com/gpu")["metadata"]["name"] == "aa-gpu"
    assert view.class_for("deviceclass.resource.kubernetes.io/zz-gpu") is None


def test_implicit_name_is_served() -> None:
    view = ClusterView(
        nodes=[node("gpu-1")],
        deviceclasses=[device_class("gpu.nvidia.com", extended=None)],
        resourceslices=[gpu_slice("gpu-1")],
    )
    pod = gpu_pod("trainer", 0, extra_resources={"deviceclass.resource.kubernetes.io/gpu.nvidia.com": "1"})
    view.upsert_pod(pod)
    dec = schedule_one(pod, view, NOW)
    assert dec.outcome == "scheduled"
    req = dec.claims_to_create[0]["spec"]["devices"]["requests"][0]
    # keys sorted: cpu, deviceclass.resource.kubernetes.io/gpu.nvidia.com, memory → j=1
    assert req == {
        "name": "container-0-request-1",
        "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1},
    }


def test_stale_bridge_claim_is_deleted_then_retried() -> None:
    pod = gpu_pod("trainer", 1)
    stale = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": "trainer-extended-resources-x7k2p",
            "namespace": "default",
            "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": "uid-trainer", "controller": True}
            ],
        },
        "spec": {
            "devices": {
                "requests": [
                    {"name": "container-0-request-2", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}
                ]
            }
        },
    }
    view = ClusterView(
        nodes=[node("gpu-1"), node("gpu-2")],
        deviceclasses=[device_class()],
        resourceslices=[gpu_slice("gpu-1"), gpu_slice("gpu-2")],
        resourceclaims=[stale],
        pods=[pod],
    )
    dec = schedule_one(pod, view, NOW)
    assert dec.outcome == "unschedulable"
    assert dec.message == (
        "0/2 nodes are available: 2 cannot schedule extended resource claim. deletion of ResourceClaim completed, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert dec.claims_to_delete == [("default", "trainer-extended-resources-x7k2p")]
    apply_decision(view, dec)
    again = schedule_one(view.pods[("default", "trainer")], view, NOW)
    assert again.outcome == "scheduled" and len(again.claims_to_create) == 1


def test_bridge_on_mixed_fleet_picks_per_node() -> None:
    # gpu-1 runs the device plugin (allocatable 8) but also has slices; gpu-2 is on DRA only.
    view = ClusterView(
        nodes=[node("gpu-1", 8), node("gpu-2", 0)],
        deviceclasses=[device_class()],
        resourceslices=[gpu_slice("gpu-1"), gpu_slice("gpu-2")],
    )
    p1 = gpu_pod("a", 1, node_selector={"kubernetes.io/hostname": "gpu-1"})
    p2 = gpu_pod("b", 1, node_selector={"kubernetes.io/hostname": "gpu-2"})
    for p in (p1, p2):
        view.upsert_pod(p)
    d1, d2 = schedule_one(p1, view, NOW), schedule_one(p2, view, NOW)
    assert d1.node == "gpu-1" and d1.claims_to_create == []
    assert (
        d2.node == "gpu-2"
        and d2.claims_to_create[0]["status"]["allocation"]["devices"]["results"][0]["pool"] == "gpu-2"
    )


def test_dra_devices_run_out() -> None:
    view = ClusterView(nodes=[node("gpu-1")], deviceclasses=[device_class()], resourceslices=[gpu_slice("gpu-1", 2)])
    first, second = gpu_pod("first", 2), gpu_pod("second", 1)
    for p in (first, second):
        view.upsert_pod(p)
    d = schedule_one(first, view, NOW)
    apply_decision(view, d)
    d2 = schedule_one(second, view, NOW)
    assert d2.outcome == "unschedulable" and d2.message == NO_DEVICES_MSG
    # Deleting the first pod's claim (garbage collection with the pod) frees the devices.
    view.remove_pod("default", "first")
    view.remove_claim("default", d.claims_to_create[0]["metadata"]["name"])
    assert schedule_one(second, view, NOW).outcome == "scheduled"


def test_failed_prepare_when_driver_not_ready() -> None:
    n = node("gpu-1")
    view = ClusterView(nodes=[n], deviceclasses=[device_class()], resourceslices=[gpu_slice("gpu-1")])
    pod = gpu_pod("trainer", 1)
    view.upsert_pod(pod)
    apply_decision(view, schedule_one(pod, view, NOW))
    res = admission.admit(view.pods[("default", "trainer")], n, view, drivers_ready=set())
    assert res.admitted and res.waiting and res.event_reason == "FailedPrepareDynamicResources"
    assert res.event_message.startswith("Failed to prepare dynamic resources: ")
    ok = admission.admit(view.pods[("default", "trainer")], n, view, drivers_ready={"gpu.nvidia.com"})
    assert not ok.waiting and ok.devices == ["GPU-gpu-1-0000"]


def test_unexpected_admission_error_during_plugin_grace() -> None:
    # The plugin stopped: allocatable 0 at once, capacity still 8 during the endpoint grace.
    n = node("gpu-1", 0, capacity_gpu=8, kubelet="v1.35.4")
    view = ClusterView(nodes=[n], deviceclasses=[device_class()], resourceslices=[gpu_slice("gpu-1")])
    pod = gpu_pod("trainer", 1)
    view.upsert_pod(pod)
    apply_decision(view, schedule_one(pod, view, NOW))
    res = admission.admit(view.pods[("default", "trainer")], n, view)
    assert not res.admitted and res.reason == "UnexpectedAdmissionError"
    assert res.event_message == (
        "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
        "Requested: 1, Available: 0, which is unexpected"
    )


def test_the_serving_mechanism_flips_with_allocatable() -> None:
    # A crash-looping device plugin on a node with slices: allocatable flips 8 → 0 → 8 and the mechanism with it.
    n = node("gpu-1", 8)
    view = ClusterView(nodes=[n], deviceclasses=[device_class()], resourceslices=[gpu_slice("gpu-1")])
    a, b, c = gpu_pod("a", 1), gpu_pod("b", 1), gpu_pod("c", 1)
    for p in (a, b, c):
        view.upsert_pod(p)
    da = schedule_one(a, view, NOW)
    assert da.node == "gpu-1" and da.claims_to_create == []
    apply_decision(view, da)
    n0 = node("gpu-1", 0, capacity_gpu=8)
    view.upsert_node(n0)
    db = schedule_one(b, view, NOW)
    assert db.node == "gpu-1" and len(db.claims_to_create) == 1
    apply_decision(view, db)
    view.upsert_node(n)
    dc = schedule_one(c, view, NOW)
    # Back on the device plugin: pods a, b and c all count against allocatable (b's request stays on the node).
    assert dc.node == "gpu-1" and dc.claims_to_create == []
    assert view.nodes["gpu-1"].requested["nvidia.com/gpu"] == 2
