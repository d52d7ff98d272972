"""Cordon, taints and tolerations, nodeSelector and affinity, resources: the filters and the FailedScheduling text they
add up to."""

from __future__ import annotations

import pytest
from dragoman.fleet import k8s as sel
from dragoman.fleet.k8s.podresources import pod_requests
from dragoman.fleet.k8s.quantity import parse_quantity
from dragoman.sim.controllers.scheduling import ClusterView, apply_decision, schedule_one
from scheduler_fixtures import gpu_pod, node

NOW = "2026-11-30T12:00:00Z"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    "toleration,taint,expected",
    [
        ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}, GPU_TAINT, True),
        ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present"}, GPU_TAINT, True),
        ({"key": "nvidia.com/gpu", "value": "other"}, GPU_TAINT, False),
        ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, GPU_TAINT, False),
        ({"operator": "Exists"}, GPU_TAINT, True),
        # core/v1 ToleratesTaint compares the values when the key is empty (validation refuses it on a pod).
        ({"operator": "Equal", "value": "present"}, GPU_TAINT, True),
        ({"key": "other", "operator": "Exists"}, GPU_TAINT, False),
    ],
)
def test_toleration_rules(toleration: dict, taint: dict, expected: bool) -> None:
    assert sel.tolerates(toleration, taint) is expected


def test_prefer_no_schedule_is_not_a_filter() -> None:
    taints = [{"key": "a", "effect": "PreferNoSchedule"}, GPU_TAINT]
    assert sel.first_untolerated_taint(taints, []) == GPU_TAINT
    assert sel.first_untolerated_taint(taints[:1], []) is None


@pytest.mark.parametrize(
    "op,values,labels,expected",
    [
        ("In", ["a", "b"], {"k": "a"}, True),
        ("In", ["a"], {}, False),
        ("NotIn", ["a"], {"k": "b"}, True),
        ("NotIn", ["a"], {}, True),
        ("NotIn", ["a"], {"k": "a"}, False),
        ("Exists", [], {"k": ""}, True),
        ("DoesNotExist", [], {"k": "x"}, False),
        ("DoesNotExist", [], {}, True),
        ("Gt", ["7"], {"k": "8"}, True),
        ("Gt", ["8"], {"k": "8"}, False),
        ("Lt", ["8"], {"k": "7"}, True),
        ("Lt", ["8"], {"k": "x"}, False),
        ("Gt", ["1"], {}, False),
    ],
)
def test_node_selector_operators(op: str, values: list, labels: dict, expected: bool) -> None:
    n = {"metadata": {"name": "n1", "labels": labels}}
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": op, "values": values}]}]}
    assert sel.match_node_selector(selector, n) is expected


def test_terms_are_ored_and_expressions_anded() -> None:
    n = {"metadata": {"name": "gpu-7", "labels": {"pool": "h100", "zone": "a"}}}
    term_a = {
        "matchExpressions": [
            {"key": "pool", "operator": "In", "values": ["h100"]},
            {"key": "zone", "operator": "In", "values": ["b"]},
        ]
    }
    term_b = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-7"]}]}
    assert not sel.match_node_selector({"nodeSelectorTerms": [term_a]}, n)
    assert sel.match_node_selector({"nodeSelectorTerms": [term_a, term_b]}, n)
    assert not sel.match_node_selector({"nodeSelectorTerms": [{}]}, n)
    spec = {
        "nodeSelector": {"pool": "h100"},
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term_b]}}
        },
    }
    assert sel.pod_matches_node(spec, n)
    assert sel.affinity_node_names(spec) == {"gpu-7"}
    assert (
        sel.affinity_node_names(
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term_a, term_b]}
                    }
                }
            }
        )
        is None
    )


def test_label_selector() -> None:
    s = {"matchLabels": {"app": "x"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]}
    assert sel.match_label_selector(s, {"app": "x"})
    assert not sel.match_label_selector(s, {"app": "x", "tier": "db"})
    assert sel.match_label_selector({}, {"any": "thing"})
    assert not sel.match_label_selector(None, {"any": "thing"})


def test_five_node_message_counts_each_reason() -> None:
    nodes = [
        node("gpu-1", 1),
        node("gpu-2", 1),
        node("gpu-3", 8, unschedulable=True),
        node("gpu-4", 8, taints=[GPU_TAINT]),
        node("gpu-5", 8, taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]),
    ]
    busy = [gpu_pod("busy-1", 1), gpu_pod("busy-2", 1)]
    busy[0]["spec"]["nodeName"], busy[1]["spec"]["nodeName"] = "gpu-1", "gpu-2"
    pod = gpu_pod("trainer", 1)
    view = ClusterView(nodes=nodes, pods=busy + [pod])
    dec = schedule_one(pod, view, NOW)
    assert dec.message == (
        "0/5 nodes are available: 1 node(s) were unschedulable, 2 Insufficient nvidia.com/gpu, 2 node(s) "
        "had untolerated taint(s). preemption: 0/5 nodes are available: 2 No "
        "preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling."
    )
    assert dec.node_reasons["gpu-3"] == ["node(s) were unschedulable"]
    # A toleration for the GPU taint opens gpu-4.
    tolerant = gpu_pod(
        "tolerant", 1, tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    )
    view.upsert_pod(tolerant)
    assert schedule_one(tolerant, view, NOW).node == "gpu-4"


def test_cordon_is_tolerated_by_daemonset_pods() -> None:
    n = node("gpu-1", 8, unschedulable=True)
    daemon = gpu_pod(
        "nvidia-device-plugin-x",
        0,
        tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}],
    )
    daemon["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-1"]}]}
                ]
            }
        }
    }
    view = ClusterView(nodes=[n, node("gpu-2", 8)], pods=[daemon])
    assert schedule_one(daemon, view, NOW).node == "gpu-1"
    # The pinned pod that cannot fit: the other nodes were never candidates.
    big = gpu_pod("big", 0, cpu="64")
    big["spec"]["affinity"] = daemon["spec"]["affinity"]
    big["spec"]["tolerations"] = daemon["spec"]["tolerations"]
    view.upsert_pod(big)
    assert schedule_one(big, view, NOW).message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
        "scheduling."
    )


def test_node_selector_and_resources() -> None:
    view = ClusterView(nodes=[node("a100-1", 8, labels={"pool": "a100"}), node("h100-1", 8, cpu="2")])
    pod = gpu_pod("p", 1, node_selector={"pool": "h100"}, cpu="4")
    view.upsert_pod(pod)
    assert schedule_one(pod, view, NOW).message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
        "scheduling."
    )
    pod["spec"]["preemptionPolicy"] = "Never"
    assert schedule_one(pod, view, NOW).message.endswith("preemption: not eligible due to preemptionPolicy=Never.")


def test_too_many_pods_and_binding_updates_accounting() -> None:
    n = node("gpu-1", 8)
    n["status"]["allocatable"]["pods"] = "1"
    view = ClusterView(nodes=[n])
    a, b = gpu_pod("a", 4), gpu_pod("b", 4)
    for p in (a, b):
        view.upsert_pod(p)
    dec = schedule_one(a, view, NOW)
    assert dec.binding() == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "a", "namespace": "default", "uid": "uid-a"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "gpu-1"},
    }
    apply_decision(view, dec)
    assert view.nodes["gpu-1"].requested["nvidia.com/gpu"] == 4
    assert "1 Too many pods." in schedule_one(b, view, NOW).message
    view.remove_pod("default", "a")
    assert view.nodes["gpu-1"].requested["nvidia.com/gpu"] == 0
    assert schedule_one(b, view, NOW).outcome == "scheduled"


def test_pod_requests_follow_init_and_sidecar_rules() -> None:
    pod = {
        "spec": {
            "initContainers": [
                {"name": "init", "resources": {"requests": {"cpu": "2"}}},
                {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
            ],
            "containers": [
                {
                    "name": "main",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": "1"}},
                }
            ],
            "overhead": {"cpu": "100m"},
        }
    }
    reqs = pod_requests(pod)
    assert reqs == {"cpu": 2100, "memory": 2**30, "nvidia.com/gpu": 1}
    assert parse_quantity("1e3") == 1000 and parse_quantity("1500m") * 2 == 3 and parse_quantity("1Ki") == 1024


def test_scheduling_gates_and_other_schedulers_are_left_alone() -> None:
    view = ClusterView(nodes=[node("gpu-1", 8)])
    gated = gpu_pod("g", 1)
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    assert schedule_one(gated, view, NOW).outcome == "waiting"
    other = gpu_pod("o", 1)
    other["spec"]["schedulerName"] = "volcano"
    assert schedule_one(other, view, NOW).outcome == "skip"
    empty = ClusterView()
    dec = schedule_one(gpu_pod("x", 1), empty, NOW)
    assert dec.outcome == "error" and dec.message == "no nodes available to schedule pods"
