"""Read-only proof: with --read-only, a scripted session through every view, the playground and the migration wizard,
pressing every write key there is, sends no write verb (the simulator's request log); headless migrate exits 3 with
nothing written."""

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


async def _confirm_if_asked(pilot, app) -> bool:
    """Do what an operator must to confirm a write: type every required word, then press the confirm button."""
    from dragoman.tui.screens.confirm import ConfirmWriteScreen
    from textual.widgets import Input

    await _settle(pilot, 1.0)
    screen = app.screen
    if not isinstance(screen, ConfirmWriteScreen):
        return False
    for i, (_prompt, word) in enumerate(screen.typed):
        screen.query_one(f"#typed-{i}", Input).value = word
    await pilot.pause(0.2)
    await pilot.click("#confirm")
    return True


async def _wizard_apply(pilot, app, pool: str) -> bool:
    """The wizard of `pool`, picked in the Pools view (filter, m), asked to apply; True when a confirmation came up."""
    await pilot.press("colon", *"pools", "enter")
    await _settle(pilot)
    await pilot.press("slash", *pool, "enter")
    await _settle(pilot)
    await pilot.press("m")
    await wait_for(
        pilot,
        lambda: type(app.screen).__name__ == "MigrateScreen" and app.screen.plan is not None,
        60,
        "the wizard's plan",
    )
    await pilot.press("a")
    return await _confirm_if_asked(pilot, app)


async def test_a_read_only_session_through_every_view_writes_nothing(tmp_path: pathlib.Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))  # any audit log lands here, not in the home folder
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
                    await pilot.press("ctrl+g")  # the generator: dry run and apply are absent in read-only
                    await _settle(pilot)
                    await pilot.press("enter", "ctrl+t", "ctrl+g", "y", "enter")
                    await _settle(pilot)
                if target == "migrate":
                    await _settle(pilot, 1.0)
                for key in WRITE_KEYS:
                    await pilot.press(key)
                    await pilot.pause(0.05)
                await _confirm_if_asked(pilot, app)
                while len(app.screen_stack) > 2:
                    await pilot.press("escape")
                    await pilot.pause(0.05)
            # The wizard of a pool whose plan writes, asked to apply and to roll back: no confirmation ever comes up.
            asked = await _wizard_apply(pilot, app, T4)
            visited.append(type(app.screen).__name__)
            await pilot.press("r")
            asked = await _confirm_if_asked(pilot, app) or asked
            await pilot.press("ctrl+r")  # a relist is reads only
            await _settle(pilot, 1.0)
            assert app.read_only
        writes = sim.request_log.writes()
        reads = [r for r in sim.request_log if r.method == "GET"]
    assert "PlaygroundScreen" in visited and "MigrateScreen" in visited, visited
    assert not asked, "read-only offers no confirmation of a write"
    assert reads, "the session did talk to the cluster"
    assert writes == [], [f"{w.method} {w.path}" for w in writes]


async def test_the_same_wizard_steps_read_write_do_write(tmp_path: pathlib.Path, monkeypatch) -> None:
    """The control: the script above would catch a write, because read-write it makes them."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    async with demo() as sim:
        feed = await open_cluster_feed(str(sim.kubeconfig_path), None, badge="DEMO")
        app = DragomanApp(feed, kubeconfig=str(sim.kubeconfig_path))
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: ready(app), 60, "the demo fleet to load")
            sim.request_log.clear()
            assert await _wizard_apply(pilot, app, T4), "read-write, apply asks for confirmation"
            await wait_for(pilot, lambda: bool(sim.request_log.writes()), 60, "the wizard's first write")
            await pilot.press("escape")


async def test_headless_migrate_read_only_yes_exits_3_and_writes_nothing(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        for pool in (T4, L4):
            code = await cli(
                base_args(sim, tmp_path, pool, "--step", "cordon", "--step", "drain", "--read-only", "--yes")
            )
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
