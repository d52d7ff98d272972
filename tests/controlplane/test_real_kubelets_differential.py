"""The differential's behaviour cases with real kubelets (sim/controlplane/differential_kubelets.py): the same cases
on two real control planes serving the same small fleet, the joined node run by the Python node agents on one and
by a real kubelet v1.37.2 (dragoman-cri, dragoman's plugins) on the other. Every difference not on
differential_kubelets_allowlist.yaml fails. CI runs a few cases; DRAGOMAN_KUBELET_DIFF=all runs every one with a
node half.

Then, on the real kubelets' side: a node whose devices ask for a binding condition (the scenario's
sim.dragoman.io/binding-conditions annotation), and the real scheduler waiting for it in PreBind until dragoman's DRA
kubelet plugin, as the driver's controller, sets it True."""

from __future__ import annotations

from collections.abc import Iterator

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


def test_the_real_scheduler_waits_for_the_binding_condition_the_scenario_asks(
    both: dict[str, diff.Side], result: diff.Result
) -> None:
    seen = b.device_binding_conditions(both["real"])
    # The real kubelet's DRA plugin published the devices with the condition the node's annotation asks for.
    assert seen["devices ask"] == [b.BIND_CONDITION]
    # Allocated and reserved, the node nominated, and the pod not bound while the condition was not yet True.
    assert seen["reserved, waiting"] == {"nodeName": None, "nominatedNodeName": b.BIND_NODE, "claim reserved": True}
    assert seen["allocated"] == [(True, [b.BIND_CONDITION])]
    # The plugin (as the driver's controller) set it True; then the scheduler bound the pod and the kubelet ran it.
    assert seen["conditions"] == [[(b.BIND_CONDITION, "True", "Attached")]]
    assert seen["pod"]["phase"] == "Running" and seen["pod"]["nodeName"] == b.BIND_NODE
    order = seen["order of writes"]
    assert order.index("claim reserved for the pod") < order.index("claim device status") < order.index("pod bound")
