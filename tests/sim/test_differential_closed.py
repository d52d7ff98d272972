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


async def test_a_pending_pod_is_evicted_whatever_its_budget_says_and_the_answer_is_201() -> None:
    import base64
    import json
    import ssl

    import aiohttp

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
        "status": {"phase": "Pending"},
    }
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    async with running_simulator(objects=[pod, pdb]) as sim:
        cfg = sim.kubeconfig()
        ca = base64.b64decode(cfg["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        headers = {"Authorization": f"Bearer {sim.users['admin'].token}", "Content-Type": "application/json"}
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p", "namespace": "default"}}
        async with aiohttp.ClientSession() as s:
            url = sim.url + "/api/v1/namespaces/default/pods/p/eviction"
            async with s.post(
                url, data=json.dumps(body), headers=headers, ssl=ssl.create_default_context(cadata=ca)
            ) as r:
                code, answer = r.status, json.loads(await r.read())
        # eviction.go canIgnorePDB; the real server's answer: Status{Success, code 201}, no details.
        assert code == 201
        assert answer == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
        assert sim.store.get("pods", "default", "p") is None
