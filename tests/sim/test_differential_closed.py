"""Differences the differential harness found between the simulated controllers and the real v1.37.2 binaries,
closed in the simulator; each test here fails if the simulator goes back to its old answer."""

from __future__ import annotations

import asyncio

from dragoman.sim.controllers import default_controllers

from tests.support.sim import running_simulator

NS = "q"


async def test_a_replicaset_refused_by_quota_reports_failed_create_and_replica_failure() -> None:
    objs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "no-gpus", "namespace": NS},
            "spec": {"hard": {"requests.nvidia.com/gpu": "0"}},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "oq", "namespace": NS},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "oq"}},
                "template": {
                    "metadata": {"labels": {"app": "oq"}},
                    "spec": {
                        "containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]
                    },
                },
            },
        },
    ]
    async with running_simulator(objects=objs) as sim:
        for c in default_controllers(sim):
            sim.add_controller(c)
        for _ in range(100):
            rs = sim.store.get("replicasets.apps", NS, "oq")
            if (rs.get("status") or {}).get("conditions"):
                break
            await asyncio.sleep(0.05)
        (cond,) = rs["status"]["conditions"]
        assert (cond["type"], cond["status"], cond["reason"]) == ("ReplicaFailure", "True", "FailedCreate")
        assert "is forbidden: exceeded quota: no-gpus" in cond["message"]
        events = [e for e in sim.store.list("events", NS) if e.get("reason") == "FailedCreate"]
        assert events and events[0]["type"] == "Warning"
        assert events[0]["message"].startswith('Error creating: pods "oq-')
        assert events[0]["source"]["component"] == "replicaset-controller"
        assert not sim.store.list("pods", NS)
        # The quota lifted: the pod is made and the condition goes.
        q = sim.store.get("resourcequotas", NS, "no-gpus")
        assert q is not None
        sim.store.delete("resourcequotas", NS, "no-gpus")
        for _ in range(400):
            rs = sim.store.get("replicasets.apps", NS, "oq")
            if sim.store.list("pods", NS) and not (rs.get("status") or {}).get("conditions"):
                break
            await asyncio.sleep(0.05)
        assert sim.store.list("pods", NS)
        assert not (rs.get("status") or {}).get("conditions")
