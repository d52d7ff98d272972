"""Help tells the truth for the screen it is opened on: no key listed twice, the wizard's and the picker's moves, the
playground's typed `?` and `:`, and the views' descriptions wrapped under themselves."""

from __future__ import annotations

import pathlib
import sys

from dragoman.tui.screens.help import HelpScreen, views_table
from rich.console import Console

from tests.tui.conftest import snapshot_app, snapshot_copy, static_text, wait_for
from tests.tui.test_first_ten_minutes import settle

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "actions"))


def listed(help_screen: HelpScreen) -> dict[str, list[tuple[str, str]]]:
    return dict(help_screen.groups)


def test_a_views_wrapped_lines_start_under_its_description() -> None:
    console = Console(width=60, record=True)
    console.print(views_table())
    lines = console.export_text().splitlines()
    start = lines[1].index("pools, their GPUs")  # the first view's description column
    wrapped = [line for line in lines[1:] if line.strip() and not line.lstrip().startswith((":", *"1234567"))]
    assert wrapped, "at 60 columns some descriptions wrap"
    for line in wrapped:
        assert len(line) - len(line.lstrip()) == start, line


async def test_pools_help_lists_each_cursor_key_once(tmp_path) -> None:
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        groups = listed(app.screen)
        focused = {t for k, _d in groups["Focused"] for t in k.split(" / ")}
        assert {"↑", "k", "g", "G", "pgup", "pgdn", "space", "⏎"} <= focused
        also = [k for k, _d in groups["Also"]]
        # "Also" had "j / k / ↑ / ↓", "g / G", "pgup / pgdn", "space" and "enter" again.
        assert also == ["tab", "mouse"], also
        assert "Views (: then a name or alias, or the digit):" in static_text(app.screen.query_one("#help-views"))


async def test_the_wizard_help_says_tab_scrolls_the_plan_and_the_picker_help_says_arrows_and_enter(tmp_path) -> None:
    from dragoman.fleet.cluster import connect
    from dragoman.tui.screens.migrate import MigrateScreen
    from migrate_support import demo

    from tests.tui.test_migrate_wizard import WizardApp, options, until

    async with demo() as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            screen = MigrateScreen(
                None, cluster=cluster, options=options(), audit_path=str(tmp_path / "a.jsonl"), read_only=False
            )
            app = WizardApp(screen)
            async with app.run_test(size=(80, 24)) as pilot:
                await until(pilot, lambda: screen.query_one("#mig-pools").option_count > 1)
                app.push_screen(HelpScreen(screen))
                await pilot.pause(0.2)
                also = dict(listed(app.screen)["Also"])
                assert "choose a pool" in also["↑ / ↓ / j / k"] and "plan the chosen pool" in also["enter"]
                # No digit jumps on the wizard: the views' heading does not offer them.
                assert "Views (: then a name or alias):" in static_text(app.screen.query_one("#help-views"))
                await pilot.press("escape")
                await pilot.pause(0.1)
                await pilot.press("down", "enter")
                await until(pilot, lambda: screen.plan is not None)
                app.push_screen(HelpScreen(screen))
                await pilot.pause(0.2)
                also = dict(listed(app.screen)["Also"])
                assert "the plan's text" in also["tab"] and "pgup / pgdn scroll it" in also["tab"]
                await pilot.press("escape")
                await pilot.pause(0.1)
                # What help says is what tab does: the plan's text takes the focus and scrolls.
                await pilot.press("tab")
                await pilot.pause(0.1)
                log = screen.query_one("#mig-log")
                assert app.focused is log
                await pilot.press("pagedown")
                await pilot.pause(0.2)
                assert log.scroll_y > 0
        finally:
            await cluster.close()


async def test_the_playground_help_says_f1_and_that_the_editor_types_question_mark_and_colon(tmp_path) -> None:
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("colon", *"cel", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "cel" and app.screen.ready, what="playground")
        playground = app.screen
        await pilot.press("question_mark")  # typed: the editor takes it
        await pilot.pause(0.2)
        assert app.screen is playground and playground.editor.text.endswith("?")
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="playground help")
        groups = listed(app.screen)
        keys = {k for _g, rows in groups.items() for k, _d in rows}
        assert "f1" in keys and "? / f1" not in keys and ":" not in keys
        also = dict(groups["Also"])
        assert "typed into the editor" in also["? / :"] and "f1 is help" in also["? / :"]
        views = static_text(app.screen.query_one("#help-views"))
        assert "^t to the device table, then : and a name" in views
        assert "Views (: then a name" not in views and "1 :pools" not in views  # no digits here
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is playground, what="back to the playground")
        # What help says holds: from the device table, ? is help and : opens the jump bar.
        await pilot.press("ctrl+t")
        await pilot.pause(0.1)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help from the table")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is playground, what="back again")
        await pilot.press("colon")
        await pilot.pause(0.1)
        assert playground.prompt_mode == "jump"
