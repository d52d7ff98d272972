"""One CEL evaluation path for the model (fleet/selectors.py): every selector of the diagnosis, the views and the
playground is evaluated by fleet/cel/fleeteval.evaluate_fleet over the model's one DeviceIndex, whose conversions
survive a change of one slice; and the diagnosis counts exactly the devices the playground counts (the newest
generation of each complete pool, as the scheduler does)."""

from __future__ import annotations

import copy

from dragoman.fleet import cel_playground as P
from fleet_fixtures import GPU_CLASS_EXPR, change, device_class, gpu_slice, model_of, node


def _fleet():
    return model_of(
        node("n1"), node("n2"), gpu_slice("n1", 4), gpu_slice("n2", 4, product="NVIDIA A100-SXM4-80GB"),
        device_class("gpu", [GPU_CLASS_EXPR]),
    )  # fmt: skip


def test_the_diagnosis_and_the_playground_share_one_index_and_agree() -> None:
    m = _fleet()
    index = m.selectors.index(m)
    assert m.selectors.index(m) is index  # built once per change of slices or classes
    res = m.class_matches("gpu")
    out, ev = P.evaluate(index, [], "", GPU_CLASS_EXPR)
    assert ev is not None and ev.index is index
    assert len(res.matched) == out.summary["matched"] == 8
    h100 = m.evaluate_selectors(["device.attributes['gpu.nvidia.com'].productName.contains('H100')"])
    assert sorted(h100.matched) == [("gpu.nvidia.com", "n1", f"gpu-{i}") for i in range(4)]


def test_an_incomplete_pool_counts_for_neither() -> None:
    """The scheduler allocates nothing from a pool whose newest generation misses a slice (fleet/k8s/slices.py): the
    diagnosis once counted its devices as matching while the playground (and the scheduler) did not."""
    half = gpu_slice("n2", 4)
    half["spec"]["pool"]["resourceSliceCount"] = 2  # the other slice of the pool never came
    m = model_of(node("n1"), node("n2"), gpu_slice("n1", 4), half, device_class("gpu", [GPU_CLASS_EXPR]))
    res = m.class_matches("gpu")
    out, _ = P.evaluate(m.selectors.index(m), [], "", GPU_CLASS_EXPR)
    assert {d[1] for d in res.matched} == {"n1"} and len(res.matched) == out.summary["matched"] == 4


def test_a_changed_slice_is_converted_again_and_the_others_are_not() -> None:
    m = _fleet()
    before = m.selectors.index(m)
    kept = {(d.raw["name"], id(d.raw)): d for d in before.devices}
    old = next(o for o in m.objects["ResourceSlice"].values() if o["spec"]["nodeName"] == "n2")
    new = copy.deepcopy(old)
    new["metadata"]["resourceVersion"] = "99"
    new["spec"]["devices"][0]["attributes"]["productName"] = {"string": "NVIDIA H100 80GB HBM3"}
    m.apply([change(new, old=old)])
    after = m.selectors.index(m)
    assert after is not before
    reused = [d for d in after.devices if kept.get((d.raw["name"], id(d.raw))) is d]
    assert len(reused) == 4 and {d.raw["name"] for d in reused} == {f"gpu-{i}" for i in range(4)}
    # And the evaluation reads the new slice.
    h100 = m.evaluate_selectors(["device.attributes['gpu.nvidia.com'].productName.contains('H100')"])
    assert ("gpu.nvidia.com", "n2", "gpu-0") in h100.matched and len(h100.matched) == 5


def test_a_subset_of_devices_is_evaluated_over_the_same_index() -> None:
    m = _fleet()
    subset = [d for d in m.devices() if d.node == "n2"]
    res = m.evaluate_selectors([GPU_CLASS_EXPR], subset)
    assert res.evaluated == 4 and sorted(res.matched) == sorted(d.id for d in subset)


def test_an_index_of_the_current_slices_describes_its_devices_as_one_sorting_them_again() -> None:
    """The model's index is built from its current slices (current=True: not sorted by pool and generation again) and
    describes its devices (refs, pools, products) only when read: the same ids, refs, pools and products as an index
    that sorts the slices itself, read before or after a grouping; a device with its own nodeName is its own pool."""
    from dragoman.fleet.cel.fleeteval import DeviceIndex

    m = _fleet()
    own = gpu_slice("n3", 2)
    own["spec"].pop("nodeName", None)
    own["spec"]["perDeviceNodeSelection"] = True
    for i, d in enumerate(own["spec"]["devices"]):
        d["nodeName"] = f"n3-{i}"
    slices = [*m.current_slices(), own]
    sorted_again, current = DeviceIndex(slices), DeviceIndex(slices, current=True)
    assert current.ids == sorted_again.ids == [r[:3] for r in sorted_again.refs]
    current.grouping(frozenset({("gpu.nvidia.com", "productName")}))  # grouped before anything is described
    assert current.refs == sorted_again.refs and len(current.refs) == 10
    assert current.pools == sorted_again.pools and ("gpu.nvidia.com", "n3", "n3-1") in current.pools
    assert current.products == sorted_again.products == ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"]
    assert current.pool_of == sorted_again.pool_of and current.product_of == sorted_again.product_of
    # An index of devices in no slice yet describes them too.
    extra = DeviceIndex.of_devices("gpu.nvidia.com", own["spec"]["devices"], pool="p", node="n9")
    assert [r.node for r in extra.refs] == ["n9", "n9"] and extra.ids[0] == ("gpu.nvidia.com", "p", "gpu-0")
