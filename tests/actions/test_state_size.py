"""A pool's state ConfigMap stays under the API's 1 MiB object limit however large the plan is."""

from __future__ import annotations

import base64
import gzip
import json

from dragoman.actions.state import PLAN_TEXT_LIMIT, PoolState
from dragoman.fleet.cluster import connect
from support.sim import running_simulator

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}


def _plan(nodes: int) -> dict:
    # Shaped like a real plan: one change per node with its diff and command.
    changes = [
        {
            "kind": "Node",
            "name": f"gke-pool-{i:04d}",
            "verb": "patch",
            "diff": f"- spec.unschedulable: false, + spec.unschedulable: true ({i})",
            "command": f"kubectl cordon gke-pool-{i:04d}",
            "before": {"metadata": {"name": f"gke-pool-{i:04d}", "labels": {"pool": "big", "zone": "a"}}},
        }
        for i in range(nodes)
    ]
    return {"schemaVersion": 1, "id": "mig-big-1", "pool": "big", "steps": [{"id": "cordon", "changes": changes}] * 4}


async def test_a_large_plan_is_kept_gzipped_and_reads_back_whole() -> None:
    async with running_simulator(objects=[NAMESPACE]) as sim:
        cluster = await connect(str(sim.kubeconfig_path), None)
        try:
            plan = _plan(3000)
            assert len(json.dumps(plan)) > 1024 * 1024  # as text it would not fit in a ConfigMap
            state = PoolState(cluster, "big", "kube-system")
            await state.load()
            await state.begin(plan, {"server": sim.url}, {"name": "test"})
            cm = sim.store.get("configmaps", "kube-system", state.name)
            assert "plan.json" not in cm["data"]
            packed = base64.b64decode(cm["binaryData"]["plan.json.gz"])
            assert len(packed) < 1024 * 1024
            assert json.loads(gzip.decompress(packed)) == plan
            again = await PoolState(cluster, "big", "kube-system").load()
            assert again.plan == plan and again.plan_id == state.plan_id

            # A small plan goes back to readable text and drops the packed copy.
            small = {"schemaVersion": 1, "id": "mig-big-2", "pool": "big", "steps": []}
            await again.begin(small, {"server": sim.url}, {"name": "test"})
            cm = sim.store.get("configmaps", "kube-system", state.name)
            assert json.loads(cm["data"]["plan.json"]) == small and len(cm["data"]["plan.json"]) < PLAN_TEXT_LIMIT
            assert "plan.json.gz" not in (cm.get("binaryData") or {})
        finally:
            await cluster.close()
