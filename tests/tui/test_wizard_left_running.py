"""Leaving the wizard while its run goes on: the run is not cancelled (Textual removes a popped screen and cancels its
workers unless it is installed), nothing raises on a screen that is gone, and :migrate comes back to the run."""

from __future__ import annotations

import pathlib

from dragoman.tui.app import DragomanApp
from dragoman.tui.screens.migrate import RUNNING, MigrateScreen
from dragoman.tui.source import open_cluster_feed

from tests.actions.migrate_support import T4, demo
from tests.test_readonly_proof import _wizard_apply
from tests.tui.conftest import SIZE, ready, wait_for


async def test_a_run_left_goes_on_and_the_wizard_comes_back_to_it(tmp_path: pathlib.Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    async with demo(controllers=True) as sim:
        feed = await open_cluster_feed(str(sim.kubeconfig_path), None, badge="DEMO")
        app = DragomanApp(feed, kubeconfig=str(sim.kubeconfig_path))
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: ready(app), 60, "the demo fleet to load")
            sim.request_log.clear()
            # Every write answered 400 ms late: the run is surely still going when the operator leaves it.
            sim.faults.set("latency=400ms verbs=patch,create,update,delete")
            assert await _wizard_apply(pilot, app, T4), "read-write, apply asks for confirmation"
            wizard = app.screen
            assert isinstance(wizard, MigrateScreen)
            await wait_for(pilot, lambda: bool(sim.request_log.writes()), 60, "the wizard's first write")
            assert wizard.busy
            await pilot.press("escape")  # leave it mid-run
            await wait_for(pilot, lambda: wizard not in app.screen_stack, 10, "the wizard to be left")
            # Removed, its worker would have been cancelled: the run must end by itself, with its steps' states.
            await wait_for(pilot, lambda: wizard.result is not None, 120, "the run left behind to finish")
            sim.faults.clear()
            assert not wizard.busy and wizard.result.steps
            assert app.return_code is None and app._exception is None  # nothing raised on a screen out of sight
            assert "steps done" in "\n".join(wizard.run_lines)  # its log lines were kept while away
            # :migrate comes back to that run, not to a new picker.
            await pilot.press("colon", *"migrate", "enter")
            await wait_for(pilot, lambda: app.screen is wizard, 10, "the wizard left running")
            # Left now with no run going, it is let go: the next :migrate is a new wizard.
            await pilot.press("escape")
            await wait_for(pilot, lambda: not app.is_screen_installed(RUNNING), 10, "the finished wizard let go")
            await pilot.press("colon", *"migrate", "enter")
            await wait_for(pilot, lambda: isinstance(app.screen, MigrateScreen), 10, "a wizard")
            assert app.screen is not wizard
