"""Tables carry kubectl's real columns and cells (pkg/printers/internalversion)."""

from __future__ import annotations

import datetime

import pytest
from dragoman.sim.api import tables
from dragoman.sim.api.tables import claim_state, human_duration, table_for

NOW = datetime.datetime(2026, 11, 30, 12, 0, 0, tzinfo=datetime.UTC)


def ts(seconds_ago: int) -> str:
    return (NOW - datetime.timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(
    "seconds, text",
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (59, "59s"),
        (119, "119s"),
        (120, "2m"),
        (303, "5m3s"),
        (600, "10m"),
        (179 * 60, "179m"),
        (3 * 3600 + 4 * 60, "3h4m"),
        (5 * 3600, "5h"),
        (47 * 3600, "47h"),
        (2 * 86400, "2d"),
        (2 * 86400 + 3600, "2d1h"),
        (30 * 86400, "30d"),
        (3 * 365 * 86400 + 10 * 86400, "3y10d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration(seconds, text):
    assert human_duration(seconds) == text


def names(resource):
    return [c["name"] for c in tables.columns_for(resource)]


def test_column_names_match_kubectl():
    assert names("nodes")[:5] == ["Name", "Status", "Roles", "Age", "Version"]
    assert names("pods") == [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
        "IP",
        "Node",
        "Nominated Node",
        "Readiness Gates",
    ]
    assert names("resourceslices") == ["Name", "Node", "Driver", "Pool", "Age"]
    assert names("resourceclaims") == ["Name", "State", "Age"]
    assert names("deviceclasses") == ["Name", "Age"]
    assert names("roles") == ["Name", "Created At"]
    wide = [c["name"] for c in tables.columns_for("pods") if c["priority"] == 1]
    assert wide == ["IP", "Node", "Nominated Node", "Readiness Gates"]


OBJECTS = {
    "pods": {
        "metadata": {"name": "p", "creationTimestamp": ts(300)},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
        "status": {
            "phase": "Running",
            "podIPs": [{"ip": "10.1.0.5"}],
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {
                    "name": "a",
                    "ready": True,
                    "restartCount": 2,
                    "state": {"running": {}},
                    "lastState": {"terminated": {"finishedAt": ts(60)}},
                },
                {"name": "b", "ready": False, "restartCount": 0, "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
            ],
        },
    },
    "nodes": {
        "metadata": {
            "name": "n1",
            "creationTimestamp": ts(3 * 86400),
            "labels": {"node-role.kubernetes.io/control-plane": ""},
        },
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "nodeInfo": {"kubeletVersion": "v1.37.1"},
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
        },
    },
    "daemonsets": {
        "metadata": {"name": "ds", "creationTimestamp": ts(10)},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {"spec": {"nodeSelector": {"gpu": "true"}, "containers": [{"name": "c", "image": "img:1"}]}},
        },
        "status": {
            "desiredNumberScheduled": 3,
            "currentNumberScheduled": 3,
            "numberReady": 2,
            "updatedNumberScheduled": 3,
            "numberAvailable": 2,
        },
    },
    "deployments": {
        "metadata": {"name": "d", "creationTimestamp": ts(10)},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
        "status": {"readyReplicas": 1, "updatedReplicas": 3, "availableReplicas": 1},
    },
    "resourceslices": {
        "metadata": {"name": "n1-gpu", "creationTimestamp": ts(7200)},
        "spec": {"nodeName": "n1", "driver": "gpu.nvidia.com", "pool": {"name": "n1"}},
    },
    "resourceclaims": {
        "metadata": {"name": "c", "creationTimestamp": ts(5)},
        "status": {"allocation": {"devices": {}}, "reservedFor": [{"name": "p"}]},
    },
    "deviceclasses": {"metadata": {"name": "gpu.nvidia.com", "creationTimestamp": ts(86400 * 2)}},
    "events": {
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "p"},
        "type": "Warning",
        "reason": "FailedScheduling",
        "message": " 0/3 nodes are available ",
        "firstTimestamp": ts(600),
        "lastTimestamp": ts(30),
        "count": 4,
        "source": {"component": "default-scheduler"},
    },
    "resourcequotas": {
        "metadata": {"name": "q"},
        "spec": {"hard": {"requests.nvidia.com/gpu": "8", "limits.cpu": "4"}},
        "status": {"used": {"requests.nvidia.com/gpu": "2"}},
    },
    "poddisruptionbudgets": {
        "metadata": {"name": "pdb"},
        "spec": {"minAvailable": 2},
        "status": {"disruptionsAllowed": 1},
    },
    "rolebindings": {
        "metadata": {"name": "rb"},
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "name": "viewer"}, {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}],
    },
    "jobs": {
        "metadata": {"name": "j"},
        "spec": {"completions": 2, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
        "status": {
            "succeeded": 2,
            "startTime": ts(400),
            "completionTime": ts(100),
            "conditions": [{"type": "Complete", "status": "True"}],
        },
    },
}

EXPECTED = {
    "pods": ["p", "1/2", "CrashLoopBackOff", "2 (60s ago)", "5m", "10.1.0.5", "n1", "<none>", "<none>"],
    "nodes": [
        "n1",
        "Ready,SchedulingDisabled",
        "control-plane",
        "3d",
        "v1.37.1",
        "10.0.0.1",
        "<none>",
        "<unknown>",
        "<unknown>",
        "<unknown>",
    ],
    "daemonsets": ["ds", 3, 3, 2, 3, 2, "gpu=true", "10s", "c", "img:1", "app=x"],
    "deployments": ["d", "1/3", 3, 1, "10s", "c", "i", "app=d"],
    "resourceslices": ["n1-gpu", "n1", "gpu.nvidia.com", "n1", "120m"],
    "resourceclaims": ["c", "allocated,reserved", "5s"],
    "deviceclasses": ["gpu.nvidia.com", "2d"],
    "events": [
        "30s",
        "Warning",
        "FailedScheduling",
        "pod/p",
        "",
        "default-scheduler",
        "0/3 nodes are available",
        "10m",
        4,
        "e1",
    ],
    "resourcequotas": ["q", "<unknown>", "requests.nvidia.com/gpu: 2/8", "limits.cpu: 0/4"],
    "poddisruptionbudgets": ["pdb", "2", "N/A", 1, "<unknown>"],
    "rolebindings": ["rb", "ClusterRole/view", "<unknown>", "viewer", "", "ns/sa"],
    "jobs": ["j", "Complete", "2/2", "5m", "<unknown>", "c", "i", "<none>"],
}


@pytest.mark.parametrize("resource", sorted(EXPECTED))
def test_cells(resource):
    table = table_for(resource, [OBJECTS[resource]], NOW, "42")
    assert (
        table["kind"] == "Table"
        and table["apiVersion"] == "meta.k8s.io/v1"
        and table["metadata"]["resourceVersion"] == "42"
    )
    (row,) = table["rows"]
    assert row["cells"] == EXPECTED[resource]
    assert len(row["cells"]) == len(table["columnDefinitions"])
    assert row["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": OBJECTS[resource]["metadata"],
    }


@pytest.mark.parametrize(
    "resource, obj",
    [
        (r, {"metadata": {"name": "x"}})
        for r in (
            "namespaces",
            "configmaps",
            "leases",
            "serviceaccounts",
            "replicasets",
            "statefulsets",
            "clusterrolebindings",
            "resourceclaimtemplates",
            "roles",
            "clusterroles",
            "devicetaintrules",
        )
    ],
)
def test_every_resource_has_one_cell_per_column(resource, obj):
    table = table_for(resource, [obj], NOW, "1")
    assert len(table["rows"][0]["cells"]) == len(table["columnDefinitions"])
    for col in table["columnDefinitions"]:
        assert set(col) == {"name", "type", "format", "description", "priority"}


@pytest.mark.parametrize(
    "claim, state",
    [
        ({}, "pending"),
        ({"status": {"allocation": {}}}, "pending"),
        ({"status": {"allocation": {"devices": {}}}}, "allocated"),
        ({"status": {"allocation": {"devices": {}}, "reservedFor": [{}]}}, "allocated,reserved"),
        ({"metadata": {"deletionTimestamp": "x"}}, "deleted"),
        (
            {"metadata": {"deletionTimestamp": "x"}, "status": {"allocation": {"a": 1}, "reservedFor": [{}]}},
            "deleted,allocated,reserved",
        ),
    ],
)
def test_claim_state(claim, state):
    assert claim_state(claim) == state


def test_pod_states():
    pending = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Pending"}}
    assert table_for("pods", [pending], NOW, "1")["rows"][0]["cells"][1:4] == ["0/1", "Pending", "0"]
    terminating = {
        "metadata": {"name": "p", "deletionTimestamp": ts(1)},
        "spec": {"containers": [{"name": "a"}]},
        "status": {"phase": "Running"},
    }
    assert table_for("pods", [terminating], NOW, "1")["rows"][0]["cells"][2] == "Terminating"
    done = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a"}]},
        "status": {
            "phase": "Succeeded",
            "containerStatuses": [{"name": "a", "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}],
        },
    }
    row = table_for("pods", [done], NOW, "1")["rows"][0]
    assert row["cells"][2] == "Completed" and row["conditions"][0]["reason"] == "Succeeded"


def test_continue_and_null_columns():
    table = table_for("pods", [], NOW, "9", continue_token="abc", remaining=3, include_columns=False)
    assert table["metadata"] == {"resourceVersion": "9", "continue": "abc", "remainingItemCount": 3}
    assert table["columnDefinitions"] is None and table["rows"] == []
