"""Read-only proof: with --read-only, a scripted session through every view, the playground and the migration wizard,
pressing every write key there is, sends no write verb (the simulator's request log); headless migrate exits 3 with nothing written."""

from __future__ import annotations

import asyncio
import pathlib

from dragoman.sim.scenarios import DEMO_PATH
from dragoman.tui.app import DragomanApp
from dragoman.tui.source import open_cluster_feed
from dragoman.tui.views import JUMPS
from tests.actions.migrate_support import L4, T4, base_args, cli, demo
from tests.support.sim import running_simulator
from tests.tui.conftest import SIZE, ready, wait_for

# Keys that write somewhere in the app when it is read-write: the wizard's apply and roll back, the playground
# generator's server dry run and apply, then answers a confirmation would take.
WRITE_KEYS = ("a", "r", "y", "enter", "ctrl+t", "ctrl+g", "y", "enter")


async def _settle(pilot, seconds: float = 0.5) -> None:
    await pilot.pause(seconds)


async def test_a_read_only_session_through_every_view_writes_nothing(tmp_path: pathlib.Path) -> None:
    async with running_simulator(scenario_path=DEMO_PATH) as sim:
        feed = await open_cluster_feed(str(sim.kubeconfig_path), None, badge="DEMO", read_only=True)
        app = DragomanApp(feed, kubeconfig=str(sim.kubeconfig_path), read_only=True)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: ready(app), 60, "the demo fleet to load")
            sim.request_log.clear()
            visited = []
            for target in sorted(set(JUMPS.values())):
                await pilot.press("colon", *target, "enter")
                await _settle(pilot)
                visited.append(type(app.screen).__name__)
                # Every way in: drill down, the detail pages, then every key that writes when writing is allowed.
                await pilot.press("j", "d")
                await _settle(pilot, 0.2)
                await pilot.press("escape")
                if target == "cel":
                    await pilot.press(*'device.driver == "gpu.nvidia.com"')
                    await _settle(pilot, 1.0)
                    await pilot.press("ctrl+g")  # the generator: save, dry run and apply are absent in read-only
                    await _settle(pilot)
                    await pilot.press("ctrl+t", "ctrl+g", "y", "enter")
                    await _settle(pilot)
                if target == "migrate":
                    await _settle(pilot, 1.0)
                for key in WRITE_KEYS:
                    await pilot.press(key)
                    await pilot.pause(0.05)
                await _settle(pilot)
                while len(app.screen_stack) > 2:
                    await pilot.press("escape")
                    await pilot.pause(0.05)
            # The wizard of a pool picked from the Pools view too (m), pressing apply and roll back.
            await pilot.press("colon", *"pools", "enter")
            await _settle(pilot)
            await pilot.press("j", "m")
            await _settle(pilot, 1.5)
            visited.append(type(app.screen).__name__)
            await pilot.press("a", "y", "enter", "r", "y", "enter")
            await _settle(pilot, 1.0)
            await pilot.press("ctrl+r")  # a relist is reads only
            await _settle(pilot, 1.0)
            assert app.read_only
        writes = sim.request_log.writes()
        reads = [r for r in sim.request_log if r.method == "GET"]
    assert "PlaygroundScreen" in visited and "MigrateScreen" in visited, visited
    assert reads, "the session did talk to the cluster"
    assert writes == [], [f"{w.method} {w.path}" for w in writes]


async def test_headless_migrate_read_only_yes_exits_3_and_writes_nothing(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        for pool in (T4, L4):
            code = await cli(base_args(sim, tmp_path, pool, "--read-only", "--yes"))
            err = capsys.readouterr().err
            assert code == 3, err
            assert "read-only" in err and "Traceback" not in err
        code = await cli(base_args(sim, tmp_path, T4, "--read-only", "--rollback", "--yes"))
        assert code in (0, 3)
        assert sim.request_log.writes() == []
        assert not (tmp_path / "audit.jsonl").exists() or "intent" not in (tmp_path / "audit.jsonl").read_text()


async def test_the_playground_apply_is_refused_in_read_only_even_when_called_directly() -> None:
    from dragoman.actions.apply_objects import apply_objects
    from dragoman.fleet.cluster import connect
    from dragoman.fleet.errors import UserError

    async with running_simulator(scenario_path=DEMO_PATH) as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            sim.request_log.clear()
            obj = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "x"}, "spec": {}}
            try:
                await apply_objects(cluster, [obj], audit=None, read_only=True)
            except UserError as exc:
                assert exc.exit_code == 3
        finally:
            await cluster.close()
        await asyncio.sleep(0)
        assert sim.request_log.writes() == []
