"""How many feasible nodes an attempt looks for, and where it starts, as kube-scheduler v1.37.2 does
(schedule_one.go: numFeasibleNodesToFind, nextStartNodeIndex), and the Filter answers the simulated scheduler keeps
per node: the same placements as running the allocator on every node of every attempt."""

from __future__ import annotations

import pathlib

import pytest
import yaml
from dragoman.sim.controllers.scheduling import ClusterView, apply_decision, num_feasible_nodes_to_find, schedule_one
from scheduler_fixtures import device_class, gpu_pod, gpu_slice, node

CASES = yaml.safe_load((pathlib.Path(__file__).parent / "data" / "num_feasible_nodes_to_find.yaml").read_text())
NOW = "2026-11-30T12:00:00Z"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_upstream_table(case: dict) -> None:
    got = num_feasible_nodes_to_find(case["globalPercentage"], case["profilePercentage"], case["numAllNodes"])
    assert got == case["wantNumNodes"]


def test_the_adaptive_percentage_between_the_table_rows() -> None:
    # Under 100 nodes every node; 100 at least; 50 - nodes/125 percent, never below 5 %.
    assert [num_feasible_nodes_to_find(0, None, n) for n in (1, 99, 100, 199, 200, 5000, 20000)] == [
        1,
        99,
        100,
        100,
        100,
        500,
        1000,
    ]


def _cpu_pod(i: int) -> dict:
    return gpu_pod(f"p{i}", gpus=0, cpu="100m", memory="64Mi")


def test_every_node_gets_its_turn_across_attempts() -> None:
    """upstream's TestFairEvaluationForNodes: 500 nodes that all fit, percentageOfNodesToScore 30 (150 nodes, and 500
    is no multiple of it): each attempt starts where the last one stopped."""
    view = ClusterView(nodes=[node(f"n{i:03d}") for i in range(500)], percentage_of_nodes_to_score=30)
    want = num_feasible_nodes_to_find(30, None, 500)
    assert want == 150
    for i in range(2 * (500 // want + 1)):
        dec = schedule_one(_cpu_pod(i), view, NOW)
        assert dec.outcome == "scheduled"
        assert view.next_start_node_index == (i + 1) * want % 500


def test_nodes_the_static_filters_refuse_are_processed_too() -> None:
    """A cordoned node is filtered like any other (NodeUnschedulable): it counts in how far the round went."""
    nodes = [node(f"n{i:03d}", unschedulable=i % 2 == 1) for i in range(300)]
    view = ClusterView(nodes=nodes)
    assert num_feasible_nodes_to_find(0, None, 300) == 144  # 48 % of 300
    dec = schedule_one(_cpu_pod(0), view, NOW)
    assert dec.outcome == "scheduled"
    # The 144th schedulable node from the start is n286: 287 nodes processed.
    assert view.next_start_node_index == 287
    schedule_one(_cpu_pod(1), view, NOW)
    # From n287: the 6 schedulable nodes n288..n298, then round to n274 for the other 138: 288 processed.
    assert view.next_start_node_index == (287 + 288) % 300


def _gpu_fleet(nodes: int, gpus: int) -> ClusterView:
    return ClusterView(
        nodes=[node(f"n{i}") for i in range(nodes)],
        resourceslices=[gpu_slice(f"n{i}", gpus) for i in range(nodes)],
        deviceclasses=[device_class()],
    )


def test_a_kept_filter_answer_is_dropped_once_its_node_allocated_a_device() -> None:
    """Bridged pods of one shape, one GPU per node: each attempt after the first reuses the other nodes' answers,
    never the answer of the node whose device was just allocated."""
    view = _gpu_fleet(3, 1)
    placed = []
    for i in range(4):
        dec = schedule_one(gpu_pod(f"g{i}", gpus=1), view, NOW)
        if dec.outcome == "scheduled":
            placed.append(dec.node)
        apply_decision(view, dec)
    assert sorted(placed) == ["n0", "n1", "n2"]
    assert view.filter_answers, "the answers were kept"
    last = schedule_one(gpu_pod("g9", gpus=1), view, NOW)
    assert last.outcome == "unschedulable" and "cannot allocate all claims" in last.message


def test_a_kept_filter_answer_is_dropped_when_a_network_device_is_allocated() -> None:
    """A device no single node owns (an allNodes slice) reached by bridged pods of one shape: its allocation moves
    every node's answer, not only the answer of the node the pod went to."""
    fabric = gpu_slice("fabric", 1, name="fabric-gpus")
    fabric["spec"].pop("nodeName")
    fabric["spec"]["allNodes"] = True
    view = ClusterView(nodes=[node("n0"), node("n1")], resourceslices=[fabric], deviceclasses=[device_class()])
    outcomes = []
    for i in range(2):
        dec = schedule_one(gpu_pod(f"u{i}", gpus=1), view, NOW)
        outcomes.append(dec.outcome)
        apply_decision(view, dec)
    assert outcomes == ["scheduled", "unschedulable"]


def test_kept_answers_place_exactly_as_fresh_ones() -> None:
    """Twenty nodes of four GPUs, pods of one to three GPUs: the same placements, node for node, as a view that
    keeps no answer (every attempt runs the allocator on every node)."""
    sizes = [1 + (i * 7) % 3 for i in range(40)]
    kept = _gpu_fleet(20, 4)
    fresh = _gpu_fleet(20, 4)
    a, b = [], []
    for i, n in enumerate(sizes):
        for view, out in ((kept, a), (fresh, b)):
            if view is fresh:
                view.filter_answers.clear()
            dec = schedule_one(gpu_pod(f"g{i}", gpus=n), view, NOW)
            out.append((dec.outcome, dec.node))
            apply_decision(view, dec)
    assert a == b and sum(o == "scheduled" for o, _ in a) > 20
