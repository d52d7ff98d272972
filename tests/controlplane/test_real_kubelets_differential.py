"""The differential's behaviour cases with real kubelets (sim/controlplane/differential_kubelets.py): the same cases
on two real control planes serving the same small fleet, the joined node run by the Python node agents on one and
by a real kubelet v1.37.2 (dragoman-cri, dragoman's plugins) on the other. Every difference not on
differential_kubelets_allowlist.yaml fails. CI runs every case with a node half (`all_cases`), the node lifecycle's
too (NotReady, the container runtime down, a deleted node); DRAGOMAN_KUBELET_DIFF=WORD;WORD picks some by hand.

Then, on both sides at once and compared like the cases: a node whose devices ask for a binding condition (the
scenario's sim.dragoman.io/binding-conditions annotation), and the real scheduler waiting for it in PreBind until the
node's DRA kubelet plugin, as the driver's controller, sets it True: the Python agent (sim/controllers/dra_plugin.py)
on one side, dragoman's Go plugin under the real kubelet on the other. It runs apart from the corpus because its
assertions read what each side saw (and it leaves its node joined, so it runs once per cluster)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from dragoman.sim.controlplane import differential as diff
from dragoman.sim.controlplane import differential_behaviour as b
from dragoman.sim.controlplane import differential_kubelets as dk

from tests.controlplane.support import binaries_dir

pytestmark = pytest.mark.controlplane


@pytest.fixture(scope="module")
def both() -> Iterator[dict[str, diff.Side]]:
    with dk.sides(binaries_dir()) as sides:
        yield sides


@pytest.fixture(scope="module")
def result(both: dict[str, diff.Side]) -> diff.Result:
    return diff.run_corpus(both, dk.selected_cases())


def test_the_cases_ran_on_both(result: diff.Result) -> None:
    assert not result.errors, "\n".join(result.errors)
    assert sum(result.counts.values()) == len(dk.selected_cases())


def test_no_difference_between_agents_and_real_kubelets_outside_the_allowlist(result: diff.Result) -> None:
    left, used = diff.split(result.differences, dk.load_allowlist())
    assert not left, "differences between the Python node agents and the real kubelet:\n" + diff.table(
        result, left, used, titles=dk.TITLES
    )


def test_the_real_scheduler_waits_for_the_binding_condition_the_scenario_asks_on_both_sides(
    both: dict[str, diff.Side], result: diff.Result
) -> None:
    with ThreadPoolExecutor(2, thread_name_prefix="binding") as pool:
        futures = {name: pool.submit(b.device_binding_conditions, side) for name, side in both.items()}
        seen = {name: f.result() for name, f in futures.items()}
    for name, s in seen.items():
        # The DRA plugin (the agent's, the real kubelet's) published the devices with the condition the node asks for.
        assert s["devices ask"] == [b.BIND_CONDITION], name
        # Allocated and reserved, the node nominated, and the pod not bound while the condition was not yet True.
        assert s["reserved, waiting"] == {"nodeName": None, "nominatedNodeName": b.BIND_NODE, "claim reserved": True}
        assert s["allocated"] == [(True, [b.BIND_CONDITION])], name
        # The plugin (as the driver's controller) set it True; then the scheduler bound the pod and it ran.
        assert s["conditions"] == [[(b.BIND_CONDITION, "True", "Attached")]], name
        assert s["pod"]["phase"] == "Running" and s["pod"]["nodeName"] == b.BIND_NODE, name
        order = s["order of writes"]
        assert (
            order.index("claim reserved for the pod") < order.index("claim device status") < order.index("pod bound")
        ), name
    # And the rest as the corpus compares its cases: no difference outside the allowlist.
    group, case = "behaviour/dra", "a device asks for binding conditions"
    # Normalized as run_corpus does: each side's answer, then again with what both runs taught.
    norm = {name: both[name].norm.value(both[name].norm.value(s)) for name, s in seen.items()}
    diffs = diff.compare(group, case, norm["embedded"], norm["real"])
    left, used = diff.split(diffs, dk.load_allowlist())
    assert not left, "binding conditions: the Python DRA agent and the real kubelet's plugin differ:\n" + diff.table(
        diff.Result(diffs, {group: 1}, 0.0), left, used, titles=dk.TITLES
    )
