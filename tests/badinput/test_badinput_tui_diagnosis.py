"""The TUI before its first diagnosis: no false all-clear ("findings none", "the fleet is consistent") while the
diagnosis is still running — it says it is computing — and Ctrl+Q does not wait for that diagnosis to end (a large
fleet's took a minute, and the quit waited 25 s)."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap
import time

import pytest
from dragoman.tui import feed as feed_mod

from tests.tui.conftest import snapshot_app, snapshot_copy, table_text, wait_for


def _screen(app) -> str:
    return getattr(getattr(app.screen, "view", None), "name", type(app.screen).__name__)


async def test_no_all_clear_before_the_first_diagnosis(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The diagnosis runs in a forked child (tui/feed.in_child_process): a threading.Event set in this process never
    # reaches it, so the gate is a file both processes see.
    gate = tmp_path / "release-the-diagnosis"
    real = feed_mod.diagnose

    def slow(model):
        deadline = time.monotonic() + 120
        while not gate.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return real(model)

    monkeypatch.setattr(feed_mod, "diagnose", slow)
    app = snapshot_app(snapshot_copy(tmp_path))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.feed.loaded and getattr(app.screen, "populated", False), 60, "pools")
            summary = str(app.screen.query_one("#summary").render())
            assert "findings still computing" in summary and "findings none" not in summary
            await pilot.press("colon", *"findings", "enter")
            await wait_for(pilot, lambda: _screen(app) == "findings" and app.screen.populated, 30, "findings view")
            await pilot.pause(0.2)
            empty = app.screen.table.empty_text
            assert "diagnosing the fleet" in empty and "consistent" not in empty
            assert not app.feed.fleet.diagnosed
            gate.touch()
            await wait_for(pilot, lambda: app.feed.fleet.diagnosed and app.screen.table.row_count > 0, 60, "findings")
            assert "both-stacks" in table_text(app) or app.screen.table.row_count > 0
            await pilot.press("escape")
            await wait_for(pilot, lambda: _screen(app) == "pools", 30, "back to pools")
            await pilot.pause(0.6)  # the summary redraws at most twice a second
            app.screen.refresh_summary()
            assert "findings ✖" in str(app.screen.query_one("#summary").render())
    finally:
        gate.touch()


def test_ctrl_q_does_not_wait_for_a_running_diagnosis(tmp_path: pathlib.Path) -> None:
    # The app as `dragoman` runs it (asyncio.run, which joins the loop's executor at exit), with a diagnosis that
    # would take two minutes: Ctrl+Q must end the process long before.
    snapshot = snapshot_copy(tmp_path)
    script = textwrap.dedent(
        f"""
        import asyncio, threading, time
        from dragoman.tui import feed as feed_mod
        from tests.tui.conftest import snapshot_app

        feed_mod.diagnose = lambda model: (threading.Event().wait(120), [])[1]

        async def main():
            app = snapshot_app({snapshot!r})
            async with app.run_test(size=(80, 24)) as pilot:
                while not (app.feed.loaded and feed_mod.threading.active_count() > 1):
                    await pilot.pause(0.05)
                # The diagnosis under way: in a thread, or in a forked child whose answer a reader thread awaits.
                running = ("dragoman-diagnosis", "dragoman-child-reader")
                while not any(t.name in running or "asyncio" in t.name for t in threading.enumerate()):
                    await pilot.pause(0.05)
                await pilot.press("ctrl+q")
            print("quit", flush=True)

        asyncio.run(main())
        print("exited", flush=True)
        """
    )
    root = pathlib.Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["quit", "exited"]
