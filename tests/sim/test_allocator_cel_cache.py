"""The allocator compiles each CEL selector once, through the one cache of fleet/cel/engine.compile_expression (the
playground's and fleeteval's too): not once per device, per node, per pod, per allocator or per diagnosis."""

from __future__ import annotations

import collections

import pytest
from dragoman.fleet.cel import engine
from dragoman.fleet.k8s.allocator import Allocator, SelectorCache
from dragoman.sim.controllers.scheduling import ClusterView, apply_decision, schedule_one
from scheduler_fixtures import device_class, gpu_pod, gpu_slice, node

NOW = "2026-11-30T12:00:00Z"


@pytest.fixture
def compiles(monkeypatch) -> collections.Counter:
    """Every real compile (a check of the expression) by expression text."""
    seen: collections.Counter = collections.Counter()
    real = engine.check_expression

    def counting(expression, environment=None):
        seen[expression] += 1
        return real(expression, environment)

    monkeypatch.setattr(engine, "check_expression", counting)
    return seen


def test_scheduling_many_pods_on_many_nodes_compiles_the_class_selector_once(compiles) -> None:
    # An expression no other test compiled, so the engine's process-wide cache starts without it.
    expr = (
        f"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu' && {id(compiles)} > 0"
    )
    nodes = [node(f"gpu-{i}") for i in range(12)]
    view = ClusterView(
        nodes=nodes,
        deviceclasses=[device_class("gpu.nvidia.com", selectors=[expr])],
        resourceslices=[gpu_slice(n["metadata"]["name"], 4) for n in nodes],
    )
    placed = 0
    for i in range(30):
        dec = schedule_one(gpu_pod(f"p{i}", 1), view, NOW)
        placed += dec.outcome == "scheduled" and bool(dec.claims_to_create)
        apply_decision(view, dec)
    assert placed == 30  # every pod went through the bridge: the allocator judged devices on many nodes
    assert compiles[expr] == 1

    # A second allocator over the same devices (what each diagnosis and the capacity gate build): still no compile.
    fresh = Allocator(view.inventory, view.alloc_state, view.classes, cache=SelectorCache())
    free = sum(len(fresh.request_devices(n, "gpu.nvidia.com").candidates) for n in nodes)
    assert free == 12 * 4 - 30
    assert compiles[expr] == 1


def test_a_selector_that_does_not_compile_is_refused_from_the_same_cache(compiles) -> None:
    bad = f"device.driver == {id(compiles)} &&"
    cache = SelectorCache()
    first, second = cache.compile(bad), SelectorCache().compile(bad)
    assert isinstance(first, engine.CelCompileError) and str(first) == str(second)
    assert compiles[bad] == 1


def test_the_allocator_shares_verdicts_only_among_devices_the_plainness_rule_calls_plain() -> None:
    """Verdict sharing (allocator._shared_key) rests on a device converting plainly; the rule is
    fleet/cel/device.converts_plainly, the one fleeteval groups by. An attribute whose value is not its field's type
    (`{"string": 5}`, `{"int": true}`) is not plain: a second plainness check in the allocator once called it plain."""
    from dragoman.fleet.cel.device import converts_plainly
    from dragoman.fleet.k8s.allocator import Inventory, _plain

    attrs = [
        {"model": {"string": "H100"}},
        {"model": {"string": 5}},
        {"count": {"int": True}},
        {"count": {"int": 4}, "ok": {"bool": True}},
        {"v": {"version": "1.2.3"}},
        {"v": {"version": "not.a.version"}},
        {"l": {"list": {"strings": ["a"]}}},
    ]
    devices = [
        {"name": f"gpu-{i}", "attributes": a, "capacity": {"memory": {"value": "80Gi"}}} for i, a in enumerate(attrs)
    ]
    devices.append({"name": "bad-cap", "attributes": {}, "capacity": {"memory": {"value": "eighty"}}})
    sl = gpu_slice("n1", 1)
    sl["spec"]["devices"] = devices
    got = {d.name: _plain(d) for d in Inventory([sl]).devices()}
    want = {d["name"]: converts_plainly(d) for d in devices}
    assert got == want
    assert want == {
        "gpu-0": True,
        "gpu-1": False,
        "gpu-2": False,
        "gpu-3": True,
        "gpu-4": True,
        "gpu-5": False,
        "gpu-6": False,
        "bad-cap": False,
    }
