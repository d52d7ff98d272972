"""Which DaemonSets a wait for a settled fleet still waits for: the real start's and the differential's waits share
this rule. A pod a node's fault keeps from ever being ready (h100-dra's crash-looping driver) is not waited for: the
differential's and the kernel-rule tests' waits each sat out their whole 240 s timeout on it."""

from __future__ import annotations

import json

from dragoman.sim.controllers.base import CRASH_AT_START, POD_FAULTS, unready_daemonsets


def _ds(name: str, ready: int, desired: int, generation: int = 1, observed: int = 1) -> dict:
    return {
        "metadata": {"name": name, "generation": generation},
        "status": {"numberReady": ready, "desiredNumberScheduled": desired, "observedGeneration": observed},
    }


def _node(name: str, faults: dict | None = None) -> dict:
    ann = {POD_FAULTS: json.dumps(faults)} if faults else {}
    return {"metadata": {"name": name, "annotations": ann}}


def test_a_ready_daemonset_is_not_waited_for() -> None:
    assert unready_daemonsets([_ds("plugin", 2, 2)], [_node("a"), _node("b")]) == []


def test_a_pod_still_coming_up_is_waited_for() -> None:
    ds = _ds("driver", 1, 2)
    assert unready_daemonsets([ds], [_node("a"), _node("b")]) == [ds]


def test_a_pod_its_nodes_fault_keeps_unready_is_not_waited_for() -> None:
    ds = _ds("driver", 1, 2)
    nodes = [_node("a"), _node("b", {"driver": {CRASH_AT_START: "true"}})]
    assert unready_daemonsets([ds], nodes) == []
    # The fault names another DaemonSet: this one's missing pod is still coming.
    other = [_node("a"), _node("b", {"plugin": {CRASH_AT_START: "true"}})]
    assert unready_daemonsets([ds], other) == [ds]


def test_a_spec_not_yet_observed_is_waited_for() -> None:
    ds = _ds("plugin", 2, 2, generation=3, observed=2)
    assert unready_daemonsets([ds], [_node("a")]) == [ds]


def test_a_pod_its_nodes_fault_crashes_every_n_seconds_is_not_waited_for() -> None:
    """a100-serve's flapping device plugin: ready half the time, so a wait may catch it down."""
    ds = _ds("plugin", 1, 2)
    nodes = [_node("a"), _node("b", {"plugin": {"sim.dragoman.io/crash-loop-seconds": "120"}})]
    assert unready_daemonsets([ds], nodes) == []
