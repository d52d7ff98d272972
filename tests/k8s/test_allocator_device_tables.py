"""What the allocator converts once per device is shared where devices publish the same thing: a fleet's GPUs of one
model publish one capacity table, and most devices carry no taints and consume no counters. Shared, but never
mixed up: a different text or a request policy gets its own table."""

from __future__ import annotations

from fractions import Fraction

from dragoman.fleet.k8s.allocator import Device, Inventory


def _slice(name: str, devices: list[dict]) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": name,
            "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _devices(inv: Inventory) -> dict[str, Device]:
    return {f"{d.slice.name}/{d.name}": d for d in inv.devices()}


def test_devices_publishing_the_same_capacity_share_one_table_and_others_get_their_own() -> None:
    policy = {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}
    inv = Inventory(
        [
            _slice("a", [{"name": "gpu-0", "capacity": {"memory": {"value": "80Gi"}}}]),
            _slice("b", [{"name": "gpu-0", "capacity": {"memory": {"value": "80Gi"}}}]),
            _slice("c", [{"name": "gpu-0", "capacity": {"memory": {"value": "40Gi"}}}]),
            _slice("d", [{"name": "gpu-0", "capacity": {"memory": {"value": "80Gi", "requestPolicy": policy}}}]),
            _slice("e", [{"name": "gpu-0"}]),
        ]
    )
    d = _devices(inv)
    a, b, c, pol, bare = (d[f"{s}/gpu-0"] for s in "abcde")
    assert a.capacity is b.capacity
    assert a.capacity["memory"][0].value == Fraction(80 * 2**30)
    assert c.capacity["memory"][0].value == Fraction(40 * 2**30)
    assert c.capacity is not a.capacity
    _, parsed = pol.capacity["memory"]
    assert pol.capacity is not a.capacity and parsed is not None and parsed.default.value == Fraction(2**30)
    assert pol.has_policy and not a.has_policy
    assert dict(bare.capacity) == {}


def test_untainted_devices_without_counters_hold_no_list_of_their_own_and_rules_still_taint_them() -> None:
    inv = Inventory(
        [
            _slice("a", [{"name": "gpu-0"}, {"name": "gpu-1", "taints": [{"key": "k", "effect": "NoSchedule"}]}]),
        ]
    )
    d = _devices(inv)
    plain, tainted = d["a/gpu-0"], d["a/gpu-1"]
    assert plain.own_taints == () and plain.taints == () and plain.consumes == ()
    assert [t for t, _ in tainted.taints] == [{"key": "k", "effect": "NoSchedule"}]
    rule = {
        "metadata": {"name": "maint"},
        "spec": {"deviceSelector": {"device": "gpu-0"}, "taint": {"key": "m", "effect": "NoExecute"}},
    }
    inv.set_taint_rules([rule])
    assert plain.taints == [({"key": "m", "effect": "NoExecute"}, "DeviceTaintRule maint")]
