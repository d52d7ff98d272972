"""Preview = writes, proven on the embedded simulator for every pool of the demo: the whole plan and then its rollback
run, and each step's audit intents are exactly the writes its preview listed (objects, count, bodies)."""

from __future__ import annotations

import pathlib

import pytest
from dragoman.actions.steps import Options
from dragoman.fleet.cluster import connect
from migrate_support import demo

from tests.support.preview_writes import compare, demo_pools, forward_and_back, intents, previewed

# Every pool of the demo, each on its own simulator.
POOLS = demo_pools()


def options() -> Options:
    o = Options(evict_retry=0.3, lease_seconds=30, switch_timeout=20, drain_timeout=10)
    o.canary_timeout = 20.0  # type: ignore[attr-defined]  # read through ops.option, as the CLI leaves it unset
    return o


@pytest.mark.parametrize("pool", POOLS)
async def test_every_step_forward_and_back_writes_exactly_what_it_previewed(tmp_path: pathlib.Path, pool: str) -> None:
    async with demo(controllers=True) as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            seen = await forward_and_back(cluster, pool, tmp_path / "audit.jsonl", options())
        finally:
            await cluster.close()
    for way in ("forward", "back"):
        assert not seen[way].get("differences"), (pool, way, seen[way])
        if "blocked" not in seen[way]:
            # A step that ran to its end wrote its preview: a plan that finished wrote everything it showed.
            if not seen[way]["problems"]:
                assert seen[way]["written"] == seen[way]["previewed"], (pool, way, seen[way])
    print(pool, {w: {k: v for k, v in seen[w].items() if k in ("previewed", "written")} for w in ("forward", "back")})


async def test_l4_serve_counts_that_were_wrong(tmp_path: pathlib.Path) -> None:
    """The two defects found by hand: forward, the canary's deletion was not previewed (12 shown, 13 written); back,
    the uncordon of the cordon's rollback was previewed as no change (9 shown, 11 written)."""
    from dragoman.actions.runner import Runner

    audit = tmp_path / "audit.jsonl"
    async with demo(controllers=True) as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            runner = Runner(cluster, "l4-serve", options=options(), audit_path=str(audit))
            plan = await runner.prepare()
            verify = next(s for s in plan.steps if s.step == "verify")
            assert [(c.verb, c.name) for c in verify.changes] == [
                ("create", "dragoman-canary-l4-serve"),
                ("delete", "dragoman-canary-l4-serve"),
            ]
            result = await runner.run(plan)
            assert result.exit_code == 0, result.problems
            assert compare(plan, result, audit) == []
            assert sum(previewed(plan).values()) == sum(intents(audit, plan.id).values()) == 13
            runner = Runner(cluster, "l4-serve", options=options(), audit_path=str(audit))
            back = await runner.prepare(rollback=True)
            undo_cordon = next(s for s in back.steps if s.id == "rollback:cordon")
            assert undo_cordon.title == "Uncordon again" and len(undo_cordon.changes) == 2
            assert next(s for s in back.steps if s.id == "rollback:uncordon").title == "Cordon and drain again"
            result = await runner.run(back)
            assert result.exit_code == 0, result.problems
            assert compare(back, result, audit) == []
            assert sum(previewed(back).values()) == sum(intents(audit, back.id).values()) == 11
            # One step id per preview row: the re-cordon's halves are no longer audited as `…/cordon`, `…/drain`.
            assert {k[0] for k in intents(audit, back.id)} <= {s.id for s in back.steps}
        finally:
            await cluster.close()


async def test_a_write_refused_with_a_conflict_and_sent_again_is_the_one_write_its_preview_listed(
    tmp_path: pathlib.Path,
) -> None:
    """A DaemonSet or node changed since it was read (its status, a heartbeat) answers 409; the write is read again and
    sent again. The audit logs two attempts of one write, which is what the preview listed once (a real control plane
    showed it as `previewed [x] wrote [x, x]` when the DaemonSet controller updated the driver's status meanwhile)."""
    import json

    audit = tmp_path / "audit.jsonl"
    async with demo(controllers=True) as sim:
        sim.faults.set("conflict=0.25 verbs=patch resources=daemonsets.apps,nodes; seed=5")
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            seen = await forward_and_back(cluster, "t4-batch", audit, options())
        finally:
            await cluster.close()
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    refused = [r for r in records if r["record"] == "outcome" and r["result"] == "failed"]
    assert refused and all("409" in r["message"] or "onflict" in r["message"] for r in refused), refused
    for way in ("forward", "back"):
        assert not seen[way].get("differences"), (way, seen[way])
        assert seen[way]["written"] == seen[way]["previewed"] and not seen[way]["problems"], (way, seen[way])


async def test_a_mig_pools_canary_asks_for_what_the_pool_serves(tmp_path: pathlib.Path) -> None:
    """a100-mig publishes MIG partitions only, and the class serving nvidia.com/gpu selects `type == "gpu"`: a canary
    asking for nvidia.com/gpu stayed Pending ("cannot allocate all claims") on the real scheduler and the simulator
    alike, and verify failed. It asks for the resource the pool's devices serve; a pool of whole GPUs keeps
    nvidia.com/gpu. The write is the preview."""
    from dragoman.actions.runner import Runner

    audit = tmp_path / "audit.jsonl"
    async with demo(controllers=True) as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            whole = await Runner(cluster, "l4-serve", options=options(), audit_path=str(audit)).prepare()
            canary = next(c for s in whole.steps if s.step == "verify" for c in s.changes if c.verb == "create")
            assert canary.after["spec"]["limits"] == {"nvidia.com/gpu": "1"}
            runner = Runner(cluster, "a100-mig", options=options(), audit_path=str(audit))
            plan = await runner.prepare()
            verify = next(s for s in plan.steps if s.step == "verify")
            canary = next(c for c in verify.changes if c.verb == "create")
            assert canary.after["spec"]["limits"] == {"nvidia.com/mig-1g.10gb": "1"}
            assert any("asks for nvidia.com/mig-1g.10gb instead" in n for n in verify.notes)
            result = await runner.run(plan)
            assert result.steps["verify"] == "done", result.problems
            assert compare(plan, result, audit) == []
        finally:
            await cluster.close()
