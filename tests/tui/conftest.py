"""Fixtures for the TUI tests: the demo fleet on an in-process simulator (no controllers, so nothing moves unless a test
moves it)."""

from __future__ import annotations

import contextlib
import pathlib
import time

from dragoman.sim.scenarios import DEMO_PATH
from dragoman.tui.app import DragomanApp
from dragoman.tui.source import open_cluster_feed, open_snapshot_feed

from tests.support.sim import running_simulator

SIZE = (120, 40)


async def wait_for(pilot, predicate, timeout: float = 30.0, what: str = "condition") -> None:
    """Poll the UI until `predicate()` holds; generous timeouts, because the machine is shared and loaded."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def ready(app) -> bool:
    screen = app.screen
    return app.feed.loaded and app.feed.fleet.diagnosed and getattr(screen, "populated", True)


@contextlib.asynccontextmanager
async def demo_app(size=SIZE, **informer_kw):
    """The TUI on the demo simulator, connected through the kubeconfig like `dragoman --demo`."""
    async with running_simulator(scenario_path=DEMO_PATH) as sim:
        feed = await open_cluster_feed(str(sim.kubeconfig_path), None, badge="DEMO", **informer_kw)
        app = DragomanApp(feed, kubeconfig=str(sim.kubeconfig_path))
        async with app.run_test(size=size) as pilot:
            await wait_for(pilot, lambda: ready(app), 60, "the demo fleet to load")
            yield sim, app, pilot


def snapshot_copy(tmp_path: pathlib.Path) -> str:
    """The pinned demo as a snapshot file with a fixed provenance line, so the SNAPSHOT badge's date never changes."""
    path = tmp_path / "demo-snapshot.yaml"
    path.write_text(
        "# dragoman snapshot of https://demo (context demo, v1.37.1) at 2026-11-01T10:00:00Z\n" + DEMO_PATH.read_text()
    )
    return str(path)


def snapshot_app(path: str) -> DragomanApp:
    return DragomanApp(open_snapshot_feed(path))


def table_text(app) -> str:
    return "\n".join(app.screen.table.visible_text())


def static_text(widget, width: int = 120) -> str:
    """A Static's content as plain text at `width`, whatever it holds (a string, a Rich table or group)."""
    import io

    from rich.console import Console

    console = Console(width=width, record=True, file=io.StringIO())
    console.print(widget.content)
    return console.export_text()
