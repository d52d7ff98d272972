"""The fleet model fed live from the simulator as the app feeds it (tui/feed.py): every ownership state of the demo
through the informers, and a change made through the API reaching the model's views and diagnosis."""

from __future__ import annotations

import asyncio
import json
import pathlib
import time

from dragoman.fleet.cluster import connect
from dragoman.fleet.informer import sync
from dragoman.fleet.store import FleetStore

from tests.support.feed import following
from tests.support.sim import running_simulator

DEMO = pathlib.Path(__file__).resolve().parents[2] / "sim" / "scenarios" / "demo.yaml"
FAST = {"backoff_initial": 0.05, "backoff_max": 0.3, "forbidden_retry": 0.5}


async def until(predicate, timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def test_live_demo_ownership_states_and_a_migration_step_reaching_the_model() -> None:
    async with running_simulator(scenario_path=DEMO) as sim:
        cluster = await connect(str(sim.kubeconfig_path), None)
        store = FleetStore()
        syncer = await sync(cluster, store, **FAST)
        try:
            await syncer.wait_synced(60)
            async with following(store) as feed:
                await _live(cluster, feed)
        finally:
            await syncer.stop()
            await cluster.close()


async def _live(cluster, feed) -> None:
    model = feed.model
    by_pool = {p.name: p for p in model.pools()}
    # The demo has a pool per state: device plugin, DRA, both, and a mid-migration pool with a flapping plugin.
    assert by_pool["a100-train"].ownership == "device-plugin"
    assert by_pool["a100-mig"].ownership == "dra"
    assert by_pool["l4-dev"].ownership == "both"
    assert by_pool["a100-serve"].ownership_counts.get("flapping") == 1
    assert any(v.capacity_window and v.allocatable_gpu == 0 for v in model.pool_nodes("a100-serve"))
    assert any(v.ownership == "none" for v in model.pool_nodes("h100-dra"))
    # The feed's own diagnosis (in a child process, as the app runs it) reads the same model.
    await until(lambda: feed.fleet.diagnosed, what="the feed's first diagnosis")
    assert {f.id for f in feed.fleet.findings} >= {"both-stacks", "plugin-flapping", "no-slices"}

    # A migration step recorded on a node through the API shows in the model within a second or so.
    target = model.pool_nodes("a100-train")[0].name
    absorbed = feed.events
    ann = json.dumps({"pool": "a100-train", "step": "cordon", "state": "running", "by": "test"})
    t0 = time.monotonic()
    await cluster.request(
        "PATCH",
        f"/api/v1/nodes/{target}",
        body={"metadata": {"annotations": {"dragoman.io/migration": ann}}, "spec": {"unschedulable": True}},
        content_type="application/merge-patch+json",
    )
    await until(lambda: model.node(target).ownership == "migrating", what="the migration step in the model")
    assert time.monotonic() - t0 < 5.0 and feed.events > absorbed
    pool = model.pool("a100-train")
    assert pool.migration == {"cordon running": 1} and pool.cordoned == 1
