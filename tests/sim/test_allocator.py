"""The DRA allocator through the scheduler: selectors, ExactCount/All, count, firstAvailable, constraints, exclusion,
CEL errors."""

from __future__ import annotations

from dragoman.fleet.cel import scheduler_error_message
from dragoman.fleet.k8s.allocator import AllocatedState, Allocator, Inventory
from dragoman.sim.controllers.scheduling import (
    ClusterView,
    apply_decision,
    claim_from_template,
    pod_claim_status_patch,
    schedule_one,
)
from scheduler_fixtures import GPU_CLASS_SELECTOR, claim, device_class, exactly, gpu_device, gpu_pod, gpu_slice, node

NOW = "2026-11-30T12:00:00Z"
GPU = device_class("gpu.nvidia.com", selectors=[GPU_CLASS_SELECTOR])


def _mixed_slice(name: str = "gpu-1") -> dict:
    devs = [
        gpu_device(name, 0, product="NVIDIA A100-SXM4-80GB"),
        gpu_device(name, 1, product="NVIDIA H100 80GB HBM3"),
        gpu_device(name, 2, product="NVIDIA A100-SXM4-80GB"),
        gpu_device(name, 3, dtype="mig"),
        gpu_device(name, 4, product="NVIDIA H100 80GB HBM3"),
    ]
    return gpu_slice(name, devices=devs)


def _run(
    claims: list[dict],
    slices: list[dict] | None = None,
    classes: list[dict] | None = None,
    nodes: list[dict] | None = None,
):
    pod = gpu_pod(
        "worker",
        0,
        claims=[{"name": c["metadata"]["name"], "resourceClaimName": c["metadata"]["name"]} for c in claims],
    )
    view = ClusterView(
        nodes=nodes or [node("gpu-1")],
        deviceclasses=classes or [GPU],
        resourceslices=slices or [_mixed_slice()],
        resourceclaims=claims,
        pods=[pod],
    )
    return view, pod, schedule_one(pod, view, NOW)


def _devices(dec, claim_name: str) -> list[str]:
    for c in dec.claim_updates:
        if c["metadata"]["name"] == claim_name:
            return [r["device"] for r in c["status"]["allocation"]["devices"]["results"]]
    raise AssertionError(f"no update for {claim_name}")


def test_class_and_request_selectors_both_apply() -> None:
    c = claim(
        "h100",
        [exactly("gpu", selectors=["device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"])],
    )
    view, pod, dec = _run([c])
    assert dec.outcome == "scheduled"
    assert _devices(dec, "h100") == ["gpu-1"]
    updated = dec.claim_updates[0]
    assert updated["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert updated["status"]["reservedFor"] == [{"resource": "pods", "name": "worker", "uid": "uid-worker"}]


def test_count_takes_distinct_devices_and_skips_mig() -> None:
    view, pod, dec = _run([claim("four", [exactly("gpu", count=4)])])
    assert _devices(dec, "four") == ["gpu-0", "gpu-1", "gpu-2", "gpu-4"]
    view2, pod2, dec2 = _run([claim("five", [exactly("gpu", count=5)])])
    assert dec2.outcome == "unschedulable" and "1 cannot allocate all claims." in dec2.message


def test_allocated_devices_are_excluded() -> None:
    taken = claim(
        "taken",
        [exactly("gpu")],
        status={
            "allocation": {
                "devices": {
                    "results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-1", "device": "gpu-0"}]
                }
            }
        },
    )
    mine = claim("mine", [exactly("gpu", count=2)])
    pod = gpu_pod("worker", 0, claims=[{"name": "mine", "resourceClaimName": "mine"}])
    view = ClusterView(
        nodes=[node("gpu-1")],
        deviceclasses=[GPU],
        resourceslices=[_mixed_slice()],
        resourceclaims=[taken, mine],
        pods=[pod],
    )
    dec = schedule_one(pod, view, NOW)
    assert _devices(dec, "mine") == ["gpu-1", "gpu-2"]


def test_all_mode_needs_every_matching_device_free_unless_admin() -> None:
    view, pod, dec = _run([claim("all", [exactly("gpu", mode="All")])])
    assert _devices(dec, "all") == ["gpu-0", "gpu-1", "gpu-2", "gpu-4"]
    taken = claim(
        "taken",
        [exactly("gpu")],
        status={
            "allocation": {
                "devices": {
                    "results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-1", "device": "gpu-2"}]
                }
            }
        },
    )
    all_ = claim("all", [exactly("gpu", mode="All")])
    pod = gpu_pod("worker", 0, claims=[{"name": "all", "resourceClaimName": "all"}])
    view = ClusterView(
        nodes=[node("gpu-1")],
        deviceclasses=[GPU],
        resourceslices=[_mixed_slice()],
        resourceclaims=[taken, all_],
        pods=[pod],
    )
    assert schedule_one(pod, view, NOW).outcome == "unschedulable"
    admin = claim("admin", [exactly("gpu", mode="All", admin=True)])
    pod = gpu_pod("monitor", 0, claims=[{"name": "admin", "resourceClaimName": "admin"}])
    view = ClusterView(
        nodes=[node("gpu-1")],
        deviceclasses=[GPU],
        resourceslices=[_mixed_slice()],
        resourceclaims=[taken, admin],
        pods=[pod],
    )
    dec = schedule_one(pod, view, NOW)
    results = dec.claim_updates[0]["status"]["allocation"]["devices"]["results"]
    assert [r["device"] for r in results] == ["gpu-0", "gpu-1", "gpu-2", "gpu-4"] and all(
        r["adminAccess"] for r in results
    )
    # Admin access does not take the devices away from others.
    apply_decision(view, dec)
    assert view.alloc_state.devices == {("gpu.nvidia.com", "gpu-1", "gpu-2")}


def test_first_available_falls_back_in_order() -> None:
    req = {
        "name": "gpu",
        "firstAvailable": [
            {"name": "big", "deviceClassName": "gpu.nvidia.com", "count": 8},
            {
                "name": "h100",
                "deviceClassName": "gpu.nvidia.com",
                "count": 2,
                "selectors": [
                    {"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName.contains('H100')"}}
                ],
            },
            {"name": "any", "deviceClassName": "gpu.nvidia.com", "count": 1},
        ],
    }
    view, pod, dec = _run([claim("flex", [req])])
    results = dec.claim_updates[0]["status"]["allocation"]["devices"]["results"]
    assert [(r["request"], r["device"]) for r in results] == [("gpu/h100", "gpu-1"), ("gpu/h100", "gpu-4")]


def test_match_and_distinct_attribute_constraints_backtrack() -> None:
    same = claim("same", [exactly("gpu", count=2)], constraints=[{"matchAttribute": "gpu.nvidia.com/productName"}])
    view, pod, dec = _run([same])
    # gpu-0 (A100) then gpu-1 (H100) mismatch; the allocator backtracks to the two A100s.
    assert _devices(dec, "same") == ["gpu-0", "gpu-2"]
    diff = claim(
        "diff",
        [exactly("a"), exactly("b")],
        constraints=[{"requests": ["a", "b"], "distinctAttribute": "gpu.nvidia.com/productName"}],
    )
    view, pod, dec = _run([diff])
    assert _devices(dec, "diff") == ["gpu-0", "gpu-1"]
    missing = claim(
        "missing", [exactly("gpu", count=2)], constraints=[{"matchAttribute": "gpu.nvidia.com/notPublished"}]
    )
    view, pod, dec = _run([missing])
    assert dec.outcome == "unschedulable"


def test_cel_runtime_error_aborts_the_attempt() -> None:
    stale = device_class("gpu-by-index", extended=None, selectors=["device.attributes['gpu.nvidia.com'].index == 0"])
    view, pod, dec = _run([claim("idx", [exactly("gpu", cls="gpu-by-index")])], classes=[GPU, stale])
    assert dec.outcome == "error" and dec.is_error
    # The CEL engine owns the wording after "CEL runtime error: " (upstream's hint about optional chaining).
    expected = 'running "DynamicResources" filter plugin: ' + scheduler_error_message(
        "class gpu-by-index", 0, "gpu.nvidia.com", "gpu-1", "gpu-0", "no such key: index"
    )
    assert expected.startswith(
        'running "DynamicResources" filter plugin: class gpu-by-index: selector #0 on device '
        "gpu.nvidia.com/gpu-1/gpu-0: "
        "CEL runtime error: no such key: index"
    )
    assert dec.message == expected and dec.event["message"] == expected
    assert dec.condition["reason"] == "SchedulerError" and dec.node is None
    # Guarded, the same intent is simply unschedulable.
    guarded = device_class(
        "gpu-by-index",
        extended=None,
        selectors=["'index' in device.attributes['gpu.nvidia.com'] && device.attributes['gpu.nvidia.com'].index == 0"],
    )
    view, pod, dec = _run([claim("idx", [exactly("gpu", cls="gpu-by-index")])], classes=[GPU, guarded])
    assert dec.outcome == "unschedulable" and "1 cannot allocate all claims." in dec.message


def test_claim_selector_error_names_the_claim() -> None:
    c = claim("bad", [exactly("gpu", selectors=["device.attributes['gpu.nvidia.com'].minor > 1"])])
    view, pod, dec = _run([c])
    assert dec.message.startswith(
        'running "DynamicResources" filter plugin: claim default/bad: selector #0 on device '
        "gpu.nvidia.com/gpu-1/gpu-0: "
        "CEL runtime error: no such key: minor"
    )


def test_missing_class_fails_prefilter() -> None:
    view, pod, dec = _run([claim("c", [exactly("gpu", cls="nope")])])
    assert dec.message == (
        "0/1 nodes are available: request gpu: device class nope does not exist. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_claim_allocated_elsewhere_is_deallocated_by_postfilter() -> None:
    c = claim(
        "pinned",
        [exactly("gpu")],
        status={
            "allocation": {
                "devices": {
                    "results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-2", "device": "gpu-0"}]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-2"]}]}
                    ]
                },
            }
        },
    )
    view, pod, dec = _run([c], nodes=[node("gpu-1"), node("gpu-2", labels={"pool": "other"})])
    assert dec.outcome == "scheduled" and dec.node == "gpu-2"
    pod2 = gpu_pod(
        "worker", 0, node_selector={"pool": "h100"}, claims=[{"name": "pinned", "resourceClaimName": "pinned"}]
    )
    view = ClusterView(
        nodes=[node("gpu-1"), node("gpu-2", labels={"pool": "other"})],
        deviceclasses=[GPU],
        resourceslices=[_mixed_slice()],
        resourceclaims=[c],
        pods=[pod2],
    )
    dec = schedule_one(pod2, view, NOW)
    assert dec.message == (
        "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 resourceclaim not "
        "available on the node. deallocation of ResourceClaim completed, preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling."
    )
    assert "allocation" not in dec.claim_updates[0]["status"]


def test_template_claims() -> None:
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "default"},
        "spec": {"metadata": {"labels": {"app": "train"}}, "spec": {"devices": {"requests": [exactly("gpu")]}}},
    }
    pod = gpu_pod("trainer-0", 0, claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    view = ClusterView(
        nodes=[node("gpu-1")],
        deviceclasses=[GPU],
        resourceslices=[_mixed_slice()],
        resourceclaimtemplates=[template],
        pods=[pod],
    )
    waiting = schedule_one(pod, view, NOW)
    assert waiting.outcome == "waiting" and waiting.event is None
    assert waiting.message == 'pod "default/trainer-0": ResourceClaim not created yet'
    made = claim_from_template(pod, pod["spec"]["resourceClaims"][0], template)
    meta = made["metadata"]
    assert (
        meta["generateName"] == "trainer-0-gpu-"
        and meta["name"].startswith("trainer-0-gpu-")
        and len(meta["name"]) == len("trainer-0-gpu-") + 5
    )
    assert meta["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"} and meta["labels"] == {
        "app": "train"
    }
    assert meta["ownerReferences"][0]["uid"] == "uid-trainer-0" and meta["ownerReferences"][0]["controller"] is True
    view.upsert_claim(made)
    pod = dict(pod, status={**pod["status"], **pod_claim_status_patch(pod, pod["spec"]["resourceClaims"][0], made)})
    view.upsert_pod(pod)
    dec = schedule_one(pod, view, NOW)
    assert dec.outcome == "scheduled" and dec.claim_updates[0]["metadata"]["name"] == meta["name"]
    assert dec.claim_updates[0]["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"


def test_long_template_names_are_truncated_proportionally() -> None:
    pod = gpu_pod("a" * 60, 0)
    made = claim_from_template(pod, {"name": "b" * 20, "resourceClaimTemplateName": "t"}, {"spec": {"spec": {}}})
    base = made["metadata"]["generateName"]
    # 60*57//82 characters of the pod name, 20*57//82 of the claim name (resourceclaim controller).
    assert base == "a" * 41 + "-" + "b" * 13


def test_allocate_directly_with_the_fleet_allocator() -> None:
    """The simulator's scheduler and dragoman share fleet/k8s/allocator.py: the same call answers both."""
    inv = Inventory([gpu_slice("n", devices=[gpu_device("n", i) for i in range(3)])])
    held = claim("held", [exactly("gpu")])
    held["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n", "device": "gpu-0"}]}
        }
    }
    alloc = Allocator(inv, AllocatedState.from_claims([held]), {"gpu.nvidia.com": GPU})
    out = alloc.allocate(node("n"), [claim("c", [exactly("gpu", count=2)])])
    assert [r["device"] for r in out.allocations[0]["devices"]["results"]] == ["gpu-1", "gpu-2"]
    assert alloc.allocate(node("n"), [claim("c", [exactly("gpu", count=3)])]).allocations is None


def test_constraints_over_a_list_typed_attribute_compare_no_values() -> None:
    # constraint.go (v0.37.2 incubating) compares string, int, bool and version only: a list-typed attribute is set
    # (so the first device may be taken) but equal to nothing, so a second device fails matchAttribute and
    # distinctAttribute alike, even with the same list.
    numa = {"numa": {"ints": [0, 1]}}
    slc = gpu_slice("gpu-1", devices=[gpu_device("gpu-1", i, extra=numa) for i in range(2)])
    for kind in ("matchAttribute", "distinctAttribute"):
        one = claim("one", [exactly("gpu")], constraints=[{kind: "gpu.nvidia.com/numa"}])
        view, pod, dec = _run([one], slices=[slc])
        assert _devices(dec, "one") == ["gpu-0"], kind
        two = claim("two", [exactly("gpu", count=2)], constraints=[{kind: "gpu.nvidia.com/numa"}])
        view, pod, dec = _run([two], slices=[slc])
        assert dec.outcome == "unschedulable", kind
