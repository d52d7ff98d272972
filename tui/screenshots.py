"""Regenerate the README's SVG screenshots of every main view from the demo fleet: `python -m dragoman.tui.screenshots
[DIR]`."""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import sys
import tempfile
import time

SIZE = (120, 40)
SHOT_PORT = 16443


# (file name, keys pressed from the Pools view; a callable gets the app)
def _cel(expression: str):
    def load(app) -> None:
        app.screen.editor.load_text(expression)

    return load


# (file name, keys pressed from the Pools view; a callable gets the app)
SHOTS = (
    ("pools", ()),
    ("nodes", (lambda app: app.screen.table.move_to("a100-serve"), "enter")),
    ("node-both-stacks", ("colon", *"nodes", "enter", "slash", *"ownership=both", "enter", "d")),
    # What the H100s publish: every attribute and capacity their pool's devices carry, with values and counts.
    ("devices-h100", ("colon", *"attributes", "enter", "slash", *"pools=*h100*", "enter")),
    ("attributes", ("colon", *"attributes", "enter")),
    ("claims", ("colon", *"claims", "enter")),
    ("stuck-pods", ("colon", *"pending", "enter")),
    ("stuck-pod-describe", ("colon", *"pending", "enter", "enter")),
    ("findings", ("colon", *"findings", "enter")),
    (
        "playground",
        (
            "colon",
            *"cel",
            "enter",
            _cel(
                'device.attributes["gpu.nvidia.com"].productName.contains("H100") &&\n'
                'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0'
            ),
        ),
    ),
    ("wizard", (lambda app: app.screen.table.move_to("l4-serve"), "m")),
    ("accounting", ("colon", *"accounting", "enter")),
    ("load", ("colon", *"load", "enter", "s")),
    ("help", ("question_mark",)),
    # Step mode (last: the preflight run records the pool's state in the simulator): `s` ran the preflight alone; the
    # wizard stopped, says what it verified and offers the next step; then `s` asks to confirm that step alone.
    ("wizard-step", (lambda app: app.screen.table.move_to("l4-serve"), "m", "!plan", "s", "!step")),
    ("wizard-step-confirm", (lambda app: app.screen.table.move_to("l4-serve"), "m", "!plan", "s")),
)


def _settled(app) -> bool:
    fleet = app.feed.fleet
    return app.feed.loaded and fleet.diagnosed and bool(fleet.catalogue) and getattr(app.screen, "populated", True)


async def _settle(pilot, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not _settled(pilot.app) and time.monotonic() < deadline:
        await pilot.pause(0.05)
    await pilot.pause(0.2)


async def _ready(pilot, name: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    screen = pilot.app.screen
    while time.monotonic() < deadline:
        if name == "playground" and getattr(screen, "explained_gen", -2) == getattr(screen, "gen", -1):
            break
        if name == "wizard" and (getattr(screen, "plan", None) is not None or bool(getattr(screen, "error", ""))):
            break
        if (
            name == "load"
            and len(sampler.samples if (sampler := getattr(pilot.app.feed, "load_sampler", None)) else ()) >= 2
        ):
            break
        await pilot.pause(0.1)
    await pilot.pause(0.5)


async def take(out: pathlib.Path) -> list[pathlib.Path]:
    """Start the demo simulator with the controllers' first pass run and none running after (every picture is the fleet
    `dragoman --demo` settles to at once, with the same counts, and nothing moves between pictures), connect as
    `dragoman --demo` does, and save one SVG per view."""
    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.controllers import default_controllers
    from dragoman.sim.controllers.base import settle
    from dragoman.sim.server import Simulator
    from dragoman.tui.app import DragomanApp
    from dragoman.tui.source import open_cluster_feed

    out.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 - a script; nothing else is on the loop yet
    sc = scenario_mod.load("demo")
    sim = Simulator.from_scenario(sc)
    # As check --demo reads it (tui/headless.py): the stale bridge claim the live scheduler deletes at once is gone, so
    # the pictures count ✖16 ▲9 ℹ7 as the live demo does (they said ▲10).
    settle(default_controllers(sim))
    written = []
    with tempfile.TemporaryDirectory(prefix="dragoman-shots-") as tmp:
        try:
            # A fixed port, so the wizard's "cluster https://127.0.0.1:PORT" line is the same in every regeneration
            # (a random port changed wizard.svg each time); any free port when another program holds it.
            await sim.start(port=SHOT_PORT)
        except OSError:
            await sim.start()
        try:
            kubeconfig = str(pathlib.Path(tmp) / "kubeconfig")
            sim.write_kubeconfig(kubeconfig)
            for name, keys in SHOTS:
                feed = await open_cluster_feed(kubeconfig, None, badge="DEMO")
                app = DragomanApp(feed, kubeconfig=kubeconfig)
                async with app.run_test(size=SIZE) as pilot:
                    await _settle(pilot)
                    for k in keys:
                        if callable(k):
                            k(app)
                        elif k == "!plan":
                            await _ready(pilot, "wizard")
                        elif k == "!step":  # the step ran and the wizard planned again
                            screen = app.screen
                            deadline = time.monotonic() + 60
                            while time.monotonic() < deadline and (
                                getattr(screen, "result", None) is None
                                or getattr(screen, "busy", False)
                                or getattr(screen, "plan", None) is None
                            ):
                                await pilot.pause(0.1)
                            await pilot.pause(0.5)
                        else:
                            await pilot.press(k)
                        await _settle(pilot)
                    if name in ("playground", "wizard", "load"):
                        # The playground evaluates, the wizard reads the cluster and plans: give them time to draw.
                        await _ready(pilot, name)
                    path = out / f"{name}.svg"
                    app.save_screenshot(path.name, str(out))
                    written.append(path)
        finally:
            await sim.stop()
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m dragoman.tui.screenshots", description=__doc__)
    p.add_argument("out", nargs="?", default="screenshots", help="folder to write the SVGs into (default: screenshots)")
    args = p.parse_args(argv)
    for path in asyncio.run(take(pathlib.Path(args.out))):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
