"""Migration benchmark: plan, then run, the migration of one 500-node device-plugin pool on the simulator's scale
fleet."""

from __future__ import annotations

import asyncio
import collections
import os
import tempfile
import time

from dragoman.benchmarks.harness import Figure

HEARTBEATS = ("node-leases", "node-lifecycle")


async def _measure(
    nodes: int,
    pool_size: int,
    pods: int,
    objects: list[dict] | None = None,
    run_plan: bool = True,
    controllers: bool = True,
) -> dict:
    """Plan (and with `run_plan`, run) the migration of the largest device-plugin pool. `controllers`: run the
    simulator's controllers in this process, which a run needs (evictions, DaemonSets, kubelets); a plan alone only
    reads, and at the envelope the controllers' start-up (146,000 pods reconciled) would share its event loop."""
    from dragoman.actions.runner import Runner
    from dragoman.actions.steps import Options
    from dragoman.fleet.cluster import connect
    from dragoman.fleet.errors import UserError
    from dragoman.sim.scenarios.scale import POOL_LABEL, generate_scale
    from dragoman.sim.server import Simulator

    if objects is None:
        objects = generate_scale(nodes=nodes, pods=pods, pool_size=pool_size)
    # A pool of the device-plugin half: its nodes report allocatable nvidia.com/gpu.
    pools = collections.Counter(
        o["metadata"]["labels"].get(POOL_LABEL)
        for o in objects
        if o.get("kind") == "Node"
        and str(((o.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu", "0")) not in ("", "0")
    )
    pool, size = max(pools.items(), key=lambda kv: kv[1])
    sim = Simulator(objects, speed=120.0)
    from dragoman.sim.controllers import default_controllers

    for c in default_controllers(sim) if controllers or run_plan else ():
        # Not the node heartbeats and their monitor: each node's Lease renewed every 10 simulated seconds is, on this
        # clock 120 times fast, ~24,000 writes per real second for 2,000 nodes, and the run never ends (measured
        # 2026-12-02). The migration touches no Lease and no node health; the benchmark measures dragoman's run.
        if c.name not in HEARTBEATS:
            sim.add_controller(c)
    out: dict = {"pool": pool, "size": size}
    with tempfile.TemporaryDirectory(prefix="dragoman-bench-migration-") as tmp:
        await sim.start()
        try:
            kubeconfig = os.path.join(tmp, "kubeconfig")
            sim.write_kubeconfig(kubeconfig)
            cluster = await connect(kubeconfig)
            try:
                options = Options(drain_concurrency=16, drain_timeout=600.0, evict_retry=0.5)
                runner = Runner(
                    cluster, pool, pool_label=POOL_LABEL, options=options, audit_path=os.path.join(tmp, "audit.jsonl")
                )
                t0 = time.perf_counter()
                try:
                    plan = await runner.prepare()
                except UserError as exc:  # reported as a row: a pool this size cannot be planned
                    out["error"] = exc.message
                    return out
                out["plan_s"] = time.perf_counter() - t0
                out["steps"] = len(plan.steps)
                out["changes"] = sum(len(s.changes) for s in plan.steps)
                out["blockers"] = list(plan.blockers)
                if not plan.blockers and run_plan:
                    sim.request_log.clear()
                    t0 = time.perf_counter()
                    try:
                        result = await runner.run(plan)
                    except UserError as exc:
                        out["error"] = exc.message
                        return out
                    out["run_s"] = time.perf_counter() - t0
                    out["done"] = sum(1 for v in result.steps.values() if v == "done")
                    out["problems"] = list(result.problems)
                    out["writes"] = len(sim.request_log.writes())
            finally:
                await cluster.close()
        finally:
            await sim.stop()
    return out


def run(quick: bool) -> list[Figure]:
    nodes, pool_size, pods = (200, 50, 400) if quick else (2000, 500, 4000)
    res = asyncio.run(_measure(nodes, pool_size, pods))
    scale = f"pool {res['pool']} of {res['size']} nodes in a {nodes}-node fleet"
    if "plan_s" not in res:
        return [
            Figure(
                f"migration: plan a {res['size']}-node pool (failed)",
                "",
                [0.0],
                "",
                lambda v: False,
                res.get("error", "")[:160],
            )
        ]
    figures = [
        Figure(
            f"migration: plan a {res['size']}-node pool",
            "s",
            [res["plan_s"]],
            "",
            None,
            f"{res['steps']} steps, {res['changes']} changes; {scale}",
        )
    ]
    if res.get("error"):
        figures.append(
            Figure(
                f"migration: run the whole plan on {res['size']} nodes (failed)",
                "",
                [0.0],
                "",
                lambda v: False,
                res["error"][:160],
            )
        )
    elif res.get("blockers"):
        figures.append(
            Figure(
                "migration: run (refused by preflight)",
                "",
                [0.0],
                "",
                lambda v: False,
                "; ".join(res["blockers"])[:120],
            )
        )
    elif "run_s" in res:
        note = f"{res['done']}/{res['steps']} steps done, {res['writes']} writes" + (
            f"; {res['problems'][0][:80]}" if res["problems"] else ""
        )
        figures.append(
            Figure(
                f"migration: run the whole plan on {res['size']} nodes",
                "s",
                [res["run_s"]],
                "",
                lambda v, ok=not res["problems"]: ok,
                note,
            )
        )
    return figures


if __name__ == "__main__":
    import sys

    from dragoman.benchmarks.harness import format_table

    print(format_table(run(quick="--quick" in sys.argv)))
