"""`dragoman migrate --pool l4-serve --yes` on the demo as shipped: the default plan is the whole switch, and it
finishes."""

from __future__ import annotations

import json
import pathlib
import time

from dragoman.fleet.migration import STEP_ORDER
from migrate_support import base_args, cli, demo
from switch_support import NeverBoth, pool_nodes

POOL = "l4-serve"
CLAIMS = "resourceclaims.resource.k8s.io"


async def test_the_clean_demo_pool_switches_to_dra_with_the_default_plan(tmp_path: pathlib.Path, capsys) -> None:
    async with demo(controllers=True) as sim:
        nodes = pool_nodes(sim, POOL)
        assert len(nodes) == 2
        watcher = NeverBoth(sim, POOL)
        started = time.monotonic()
        # No --step: the default plan is every step, preflight to the canary.
        rc = await cli(base_args(sim, tmp_path, POOL, "--yes", "--switch-timeout", "60"))
        took = time.monotonic() - started
        out = capsys.readouterr().out
        assert rc == 0, out[-3000:]
        assert f"{len(STEP_ORDER)}/{len(STEP_ORDER)} steps done" in out
        print(f"switch of {POOL}: {took:.1f}s wall")
        assert watcher.violations == [] and watcher.seen_dra == set(nodes)
        # The pool is owned by DRA: the operator's device plugin is off, no allocatable nvidia.com/gpu, slices
        # published.
        for n in nodes:
            node = sim.store.get_ref("nodes", None, n)
            assert node["metadata"]["labels"]["nvidia.com/gpu.deploy.device-plugin"] == "false"
            assert not node["spec"].get("unschedulable")
            assert int(node["status"]["allocatable"].get("nvidia.com/gpu", "0")) == 0
        # The Deployment kept limits nvidia.com/gpu and its pods run on the pool through bridge claims.
        pods = [
            e.obj
            for e in sim.store.entries("pods")
            if e.obj["metadata"].get("namespace") == "ml-inference"
            and e.obj["metadata"]["name"].startswith("embed-serve-")
            and e.obj["status"].get("phase") != "Succeeded"
        ]
        assert len(pods) == 4
        for p in pods:
            assert p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]
            assert p["status"]["phase"] == "Running", p["metadata"]["name"]
            assert p["spec"]["nodeName"] in nodes
            claim = sim.store.get_ref(
                CLAIMS, "ml-inference", p["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
            )
            assert claim["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"] == "true"
            assert claim["status"]["allocation"]["devices"]["results"]
        # The canary saw exactly the GPUs it was allocated, and is gone.
        assert sim.store.get_ref("pods", "default", f"dragoman-canary-{POOL}") is None
        state = json.loads(
            sim.store.get_ref("configmaps", "kube-system", f"dragoman-pool-{POOL}")["data"]["state.json"]
        )
        assert state["status"] == "done"
        canary = state["switch"]["canary"]
        assert canary["seenUUIDs"] and canary["seenUUIDs"] == canary["allocatedUUIDs"] and canary["node"] in nodes


async def test_t4_batch_is_proven_on_dra_though_its_returning_workloads_take_the_only_gpu(
    tmp_path: pathlib.Path,
) -> None:
    """Issue 30 (3a): t4-batch has one schedulable node with one GPU; after the uncordon its GPU pods take it through
    the bridge and the canary found none, so the switch stopped at verify (7/8). The preflight now says so, and the
    workloads' own bridge claims are taken as the proof."""
    from dragoman.actions.runner import Runner
    from dragoman.actions.steps import Options
    from dragoman.fleet.cluster import connect

    async with demo(controllers=True) as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            options = Options(evict_retry=0.3, lease_seconds=30, switch_timeout=30)
            runner = Runner(cluster, "t4-batch", options=options, audit_path=str(tmp_path / "audit.jsonl"))
            plan = await runner.prepare()
            assert any("no free GPU for the verify step's canary" in w for w in plan.steps[0].warnings)
            result = await runner.run(plan)
            assert result.exit_code == 0, result.problems
            assert result.steps["verify"] == "done"
        finally:
            await cluster.close()
        state = json.loads(
            sim.store.get_ref("configmaps", "kube-system", "dragoman-pool-t4-batch")["data"]["state.json"]
        )
        canary = state["switch"]["canary"]
        # Either the canary found the GPU free, or the pods holding it through bridge claims are named as the proof.
        assert canary["provenByWorkloads"] or (canary["seenUUIDs"] and canary["seenUUIDs"] == canary["allocatedUUIDs"])
        assert sim.store.get_ref("pods", "default", "dragoman-canary-t4-batch") is None
