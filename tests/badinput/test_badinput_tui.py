"""Bad-input corpus, TUI: a dead context picked with :ctx, an unknown view, garbage typed into the playground — a UI
notice each, the app still answering; a bad snapshot or kubeconfig given to the TUI is one sentence before it opens."""

from __future__ import annotations

import pathlib

import yaml
from dragoman.sim.scenarios import DEMO_PATH
from dragoman.tui.app import DragomanApp
from dragoman.tui.source import open_cluster_feed

from tests.badinput.badinput_support import assert_sentence, closed_port, kubeconfig_text, run_cli
from tests.support.sim import running_simulator
from tests.tui.conftest import SIZE, ready, wait_for


def _recording(app) -> list[tuple[str, str]]:
    notes: list[tuple[str, str]] = []
    original = app.notify

    def notify(message, *args, **kw):
        notes.append((str(message), str(kw.get("severity", "information"))))
        return original(message, *args, **kw)

    app.notify = notify
    return notes


async def test_tui_bad_input_gets_notices_and_the_app_keeps_answering(tmp_path: pathlib.Path) -> None:
    async with running_simulator(scenario_path=DEMO_PATH) as sim:
        kc = yaml.safe_load(pathlib.Path(sim.kubeconfig_path).read_text())
        kc["clusters"].append({"name": "dead", "cluster": {"server": f"https://127.0.0.1:{closed_port()}"}})
        kc["contexts"].append({"name": "dead", "context": {"cluster": "dead", "user": kc["users"][0]["name"]}})
        path = tmp_path / "kubeconfig"
        path.write_text(yaml.safe_dump(kc))
        feed = await open_cluster_feed(str(path), None, badge="DEMO")
        app = DragomanApp(feed, kubeconfig=str(path))
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: ready(app), 60, "the demo fleet to load")
            notes = _recording(app)

            # 1. An unknown view.
            await pilot.press("colon", *"no-such-view", "enter")
            await wait_for(pilot, lambda: any("no view named" in m for m, _ in notes), 10, "the unknown-view notice")

            # 2. A context whose server is down: an error notice, and the old connection stays.
            await pilot.press("colon", *"ctx", "enter")
            await wait_for(pilot, lambda: type(app.screen).__name__ == "ContextScreen", what="the context list")
            from textual.widgets import OptionList

            app.screen.query_one(OptionList).highlighted = app.screen.contexts.index("dead")
            await pilot.press("enter")
            await wait_for(
                pilot,
                lambda: any(s == "error" and "connection refused" in m for m, s in notes),
                60,
                "the dead-context notice",
            )
            assert app.feed.info.context != "dead"

            # 3. Garbage typed into the playground: a compile error on screen, generate refused with a notice.
            await pilot.press("colon", *"cel", "enter")
            await wait_for(pilot, lambda: type(app.screen).__name__ == "PlaygroundScreen", what="the playground")
            for garbage in ("((((", 'device.attributes["', "ü € \\u0000 ☃", "1 +", "device.driver == 1 ? :"):
                await pilot.press(*garbage)
                await pilot.pause(0.3)
                await pilot.press(*["backspace"] * len(garbage))
            await pilot.press(*"((((")
            await pilot.pause(0.5)
            await pilot.press("ctrl+g")
            await wait_for(pilot, lambda: any("compile error" in m for m, _ in notes), 20, "the compile-error notice")
            assert type(app.screen).__name__ == "PlaygroundScreen"
            await pilot.press("escape", "escape")
            await pilot.press("colon", *"pools", "enter")
            await wait_for(
                pilot,
                lambda: (
                    getattr(app.screen, "view_name", None) == "pools"
                    or "Pools" in type(app.screen).__name__
                    or "pools" in str(getattr(app.screen, "view", "")).lower()
                ),
                20,
                "the app to keep answering",
            )


def test_the_tui_given_a_bad_snapshot_or_kubeconfig_says_one_sentence(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: [x]}\n")
    assert_sentence(*run_cli("--snapshot", str(bad))[::2], words=["metadata.labels"])
    bad.write_text("{ not yaml")
    assert_sentence(*run_cli("--snapshot", str(bad))[::2], words=["not kubernetes yaml"])
    kc = tmp_path / "kubeconfig"
    kc.write_text(kubeconfig_text(f"https://127.0.0.1:{closed_port()}"))
    assert_sentence(*run_cli("--kubeconfig", str(kc))[::2], words=["connection refused"])
