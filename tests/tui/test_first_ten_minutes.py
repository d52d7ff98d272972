"""Issue 18: each defect a newcomer met in the first ten minutes, checked on the screen as drawn (one test per item)."""

from __future__ import annotations

import pathlib
import sys

import pytest

from tests.tui.conftest import demo_app, snapshot_app, snapshot_copy, static_text, wait_for
from tests.tui.contrast import problems

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "actions"))


def screen_text(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def settle(pilot, app) -> None:
    await wait_for(
        pilot,
        lambda: (
            app.feed.loaded
            and app.feed.fleet.diagnosed
            and bool(app.feed.fleet.catalogue)
            and getattr(app.screen, "populated", True)
        ),
        60,
        "the snapshot to load",
    )
    await pilot.pause(0.1)


@pytest.fixture
def snap(tmp_path):
    return snapshot_copy(tmp_path)


# 1 ---------------------------------------------------------------------------------------------------------------
async def test_1_prompt_shows_what_is_typed_and_starts_empty(snap) -> None:
    app = snapshot_app(snap)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("slash", *"h100")
        await pilot.pause(0.2)
        lines = screen_text(app)
        assert any(line.startswith(" / h100") for line in lines), lines[-4:]
        assert any("rows match" in line for line in lines)  # the count, live
        await pilot.press("enter", "slash", "X")
        await pilot.pause(0.2)
        assert app.screen.query_one("#prompt").value == "X"  # not "h100X"
        await pilot.press("escape")
        assert app.screen.filter_text == "h100"  # esc keeps the filter that was there
        await pilot.press("colon", *"po")
        await pilot.pause(0.2)
        lines = screen_text(app)
        assert any(line.startswith(" : po") for line in lines)
        # k9s's name, suggested first, and saying which screen it opens ("po→pending" read as some other view)
        assert any(line.lstrip().startswith("po→Stuck pods  pools") for line in lines), lines[-3:]
        await pilot.press("enter")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "pending", what=":po")
        for name in ("pods", "pod"):
            await pilot.press("1", "colon", *name)
            await pilot.pause(0.2)
            assert any(line.lstrip().startswith(f"{name}→Stuck pods") for line in screen_text(app))
            await pilot.press("enter")
            await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "pending", what=f":{name}")


# 2 ---------------------------------------------------------------------------------------------------------------
async def test_2_readme_filters_match_the_h100s_and_an_empty_result_says_why(snap) -> None:
    app = snapshot_app(snap)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("3")
        await wait_for(
            pilot, lambda: getattr(app.screen, "name", "") == "devices" and app.screen.populated, what="devices"
        )
        table = app.screen.table
        counts = {}
        for text in ("productName=NVIDIA*H100*", "*H100*", "*80GB*", "h100"):
            app.screen.set_filter(text)
            counts[text] = table.visible_count
        assert counts["productName=NVIDIA*H100*"] == counts["*H100*"] == counts["h100"] > 0
        assert counts["*80GB*"] >= counts["*H100*"]
        app.screen.set_filter("productName=NoSuchGPU*")
        await pilot.pause(0.1)
        assert table.visible_count == 0
        text = "\n".join(screen_text(app))
        assert "no ResourceSlice publishes devices" not in text and "matches the filter" in text
        app.screen.set_filter("colour=blue")
        await pilot.pause(0.1)
        assert "no row here has a field named colour" in "\n".join(screen_text(app))


# 3 ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_3_highlighted_rows_and_every_view_keep_their_contrast(snap, size) -> None:
    app = snapshot_app(snap)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        found = {}
        for keys in ((), ("j",), ("j", "j", "j"), ("2",), ("3",), ("4",), ("5",), ("6",), ("7",)):
            await pilot.press(*keys)
            await settle(pilot, app)
            found[keys] = [str(p) for p in problems(app)]
        # The cursor on a DRA row (a100-mig is first), then on a plugin row: the glyphs stay readable.
        assert app.screen.table.has_focus
        assert all(not v for v in found.values()), found


# 4 and 5 -----------------------------------------------------------------------------------------------------------
async def test_4_wizard_opens_at_the_top_with_the_blocked_reason_and_state_column_at_80(tmp_path) -> None:
    from tests.tui.test_migrate_wizard import wizard

    # The viewer may not write: preflight blocks.
    async with wizard(tmp_path, "l4-serve", size=(80, 24), context="dragoman-sim-viewer") as (_sim, screen, app, pilot):
        await pilot.pause(0.3)
        assert screen.plan.blockers
        text = "\n".join(screen_text(app))
        assert "✗ blocked:" in text and "STATE" in text and "· pending" in text
        log = screen.query_one("#mig-log")
        assert log.scroll_offset.y == 0  # the plan reads from its first line
        width_before = screen._plan_width
        await pilot.resize_terminal(120, 40)
        await pilot.pause(0.5)
        assert screen._plan_width == 120 != width_before  # re-flowed without `p`
        header = next(line for line in screen_text(app) if "STATE" in line and "WHAT" in line)
        longest = max(len(s.title) for s in screen.plan.steps)
        # WHAT no wider than its longest title: STATE stays next to the step it describes on a wide screen
        assert header.index("STATE") - header.index("WHAT") <= longest + len("CHANGES  ") + 2 * 2 + 1, header
        assert not any(row.display for row in screen.query(".bar-row"))  # no idle, pulsing bars


async def test_5_a_after_a_cancelled_rollback_applies_the_migration_plan(tmp_path) -> None:
    from dragoman.fleet.cluster import connect
    from dragoman.tui.screens.confirm import ConfirmWriteScreen
    from dragoman.tui.screens.migrate import MigrateScreen
    from migrate_support import demo

    from tests.tui.test_migrate_wizard import WizardApp, options, until

    async with demo() as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            screen = MigrateScreen(
                "l4-serve",
                cluster=cluster,
                options=options(),
                audit_path=str(tmp_path / "a.jsonl"),
                read_only=False,
                steps=["cordon"],
            )
            app = WizardApp(screen)
            async with app.run_test(size=(120, 40)) as pilot:
                await until(pilot, lambda: screen.plan is not None)
                await pilot.press("r")

                def rollback_answered() -> bool:
                    said = [n.message for n in app._notifications]
                    return isinstance(app.screen, ConfirmWriteScreen) or any("roll" in m for m in said)

                await until(pilot, rollback_answered)
                if isinstance(app.screen, ConfirmWriteScreen):
                    await pilot.press("escape")
                await until(
                    pilot, lambda: app.screen is screen and screen.plan is not None and not screen.plan.rollback
                )
                await pilot.press("a")
                await until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen))
                assert app.screen.title_text.startswith("Apply")
                await pilot.press("escape")
            assert sim.request_log.writes() == []
        finally:
            await cluster.close()


async def test_5_a_after_a_finished_rollback_applies_the_migration_plan(tmp_path) -> None:
    """A rollback run to the end leaves its plan on screen; `a` (the footer: "Apply plan") then asks to apply the
    migration again, not "nothing to roll back"."""
    from dragoman.fleet.cluster import connect
    from dragoman.tui.screens.confirm import ConfirmWriteScreen
    from dragoman.tui.screens.migrate import MigrateScreen
    from migrate_support import demo

    from tests.tui.test_migrate_wizard import WizardApp, options, until

    async with demo() as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            screen = MigrateScreen(
                "t4-batch",
                cluster=cluster,
                options=options(),
                audit_path=str(tmp_path / "a.jsonl"),
                read_only=False,
                steps=["cordon"],
            )
            app = WizardApp(screen)
            async with app.run_test(size=(120, 40)) as pilot:
                for key in ("a", "r"):  # apply the cordon, then roll it back, each confirmed with its button
                    await until(pilot, lambda: screen.plan is not None and not screen.busy)
                    screen.result = None
                    await pilot.press(key)
                    await until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen))
                    await pilot.press("tab", "enter")
                    await until(pilot, lambda: screen.result is not None and not screen.busy)
                assert screen.plan.rollback
                await pilot.press("a")
                await until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen))
                assert app.screen.title_text.startswith("Apply")
                await pilot.press("escape")
        finally:
            await cluster.close()


# 6 ---------------------------------------------------------------------------------------------------------------
async def test_6_esc_in_the_playground_keeps_the_selector_and_goes_back_where_it_came_from(snap) -> None:
    app = snapshot_app(snap)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("5")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "pending", what="stuck pods")
        await pilot.press("colon", *"cel", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "cel" and app.screen.ready, what="playground")
        app.screen.editor.load_text('device.attributes["gpu.nvidia.com"].productName.contains("H100")')
        await pilot.press("escape")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "pending", what="back to stuck pods")
        await pilot.press("colon", *"cel", "enter")
        await wait_for(
            pilot, lambda: getattr(app.screen, "name", "") == "cel" and app.screen.ready, what="playground again"
        )
        assert "H100" in app.screen.editor.text


async def test_6_a_prefilled_selector_opens_selected_so_typing_replaces_it(snap) -> None:
    """The example (or a class's, a pod's, a remembered selector) opens selected: typing replaces it, → keeps it and
    edits at its end. The cursor used to sit at the end, so typing a selector appended to the example: a syntax
    error."""
    app = snapshot_app(snap)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("colon", *"cel", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "cel" and app.screen.ready, what="playground")
        screen = app.screen
        assert screen.whole_selected()
        await wait_for(pilot, lambda: screen.outcome is not None, what="the first counts")
        assert any("type to replace it" in line for line in screen_text(app))
        typed = 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"'
        await pilot.press(*typed)
        await wait_for(
            pilot, lambda: screen.outcome is not None and screen.outcome.expression == typed, what="the typed selector"
        )
        assert screen.editor.text == typed and screen.outcome.compile_error is None
        assert not any("type to replace it" in line for line in screen_text(app))
        await pilot.press("escape")
        await pilot.press("colon", *"cel", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "cel" and app.screen.ready, what="again")
        screen = app.screen
        assert screen.editor.text == typed and screen.whole_selected()  # kept, and selected again
        await pilot.press("right", *" && true")
        await pilot.pause(0.2)
        assert screen.editor.text == typed + " && true"  # → edits at its end


# 7 ---------------------------------------------------------------------------------------------------------------
async def test_7_help_and_palette_show_what_each_screen_can_do(snap) -> None:
    app = snapshot_app(snap)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "HelpScreen", what="help")
        pools_help = static_text(app.screen.query_one("#help-views"))
        assert ":cel" in pools_help and ":migrate" in pools_help
        await pilot.press("escape")
        from dragoman.tui.commands_palette import ScreenCommands

        names = [n for n, _h, _cb in ScreenCommands(app.screen)._commands()]
        assert any("mig" in n for n in names)
        await pilot.press("colon", *"cel", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "cel", what="playground")
        await pilot.press("f1")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "HelpScreen", what="playground help")
        from dragoman.tui.screens.help import screen_keys

        keys = {k for _g, rows in screen_keys(app, app.screen_stack[-2]) for k, _ in rows}
        assert {"^g", "^o", "^t"} <= keys and "/" not in keys


async def test_7_help_key_is_in_the_footer_of_every_view_at_80_columns(snap) -> None:
    """A newcomer looks for help in the footer: at 80 columns "? Help" was cut off the end of every table view's."""
    app = snapshot_app(snap)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        for digit in "1234567":
            await pilot.press(digit)
            await settle(pilot, app)
            assert "? Help" in screen_text(app)[-1], (digit, screen_text(app)[-1])


# 8 ---------------------------------------------------------------------------------------------------------------
async def test_8_columns_are_not_cut_and_scroll_sideways(snap) -> None:
    app = snapshot_app(snap)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        header = screen_text(app)[5]
        assert "GPU MODELS" in header and "→" in header  # whole header words; an arrow says there is more
        for _ in range(12):
            await pilot.press("shift+right")
        header = screen_text(app)[5]
        assert "MIGRATION" in header and header.lstrip().startswith("POOL")  # the first column stays
        await pilot.press("4")
        await settle(pilot, app)
        names = [c[1] for c in (app.screen.table.row(k) for k in app.screen.table.keys())]
        widths = app.screen.table._layout_widths(80)
        assert widths[1] >= max(len(n) for n in names)  # CLAIM names whole


# 9 ---------------------------------------------------------------------------------------------------------------
async def test_9_generate_form_reads_at_80x24_and_checks_the_resource_name_first(snap) -> None:
    app = snapshot_app(snap)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("colon", *"cel", "enter")
        await wait_for(
            pilot,
            lambda: getattr(app.screen, "name", "") == "cel" and app.screen.outcome is not None,
            what="playground",
        )
        counts = "\n".join(screen_text(app))
        assert "by pool:" in counts  # the third counts line is on screen at 80 columns
        app.screen.editor.load_text('device.driver == "no.such.driver"')
        await wait_for(
            pilot,
            lambda: (
                app.screen.outcome is not None
                and app.screen.outcome.expression.endswith('driver"')
                and app.screen.shown_gen == app.screen.gen
            ),
            what="0 matches",
        )
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "cel-generate", what="generate")
        await pilot.pause(0.2)
        # The field being typed in is marked where the eye reads it: › and its label, on the name first (tab seemed
        # to skip it, because nothing showed it had the focus).
        assert " › name " in "\n".join(screen_text(app)) and app.screen.current_field() == "name"
        await pilot.press("tab", *"gpu.nvidia.com")
        await pilot.pause(0.3)
        text = "\n".join(screen_text(app))
        assert " › extendedResourceName " in text and " › name " not in text
        for label in ("generate", "name", "extendedResourceName", "namespace (template)", "save to (ctrl+s)"):
            assert any(line[3:].startswith(label) for line in text.splitlines()), label
        # one line a field: the kind picker does not take three
        form = [i for i, line in enumerate(text.splitlines()) if line[3:].startswith(("generate", "save to"))]
        assert form[1] - form[0] == 4, text
        assert "✗ extendedResourceName 'gpu.nvidia.com' needs a domain" in text
        assert "picks 0 of the fleet's" in text


async def test_9_generate_form_footer_ends_with_help_at_80_columns() -> None:
    """With the cluster's keys (dry run, apply) the footer still shows f1 Help whole at 80 columns (it read "f1 He")."""
    async with demo_app(size=(80, 24)) as (_sim, app, pilot):
        await pilot.press("colon", *"cel", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "cel" and app.screen.outcome is not None)
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "cel-generate", what="generate")
        await pilot.pause(0.3)
        footer = screen_text(app)[-1]
        for key in ("^s Save", "^t Dry run", "^g Apply", "f1 Help", "^p palette"):
            assert key in footer, footer


async def test_9_a_name_typed_just_before_ctrl_s_is_the_name_written(snap, tmp_path) -> None:
    """ctrl+s/ctrl+t/ctrl+g are priority keys: typed right after a name they ran before the field's Changed message, and
    the dry run sent the previous name's object (seen in tmux: "h100" typed, "my-gpu-class would be created")."""
    app = snapshot_app(snap)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("colon", *"cel", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "cel" and app.screen.outcome is not None)
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "cel-generate", what="generate")
        screen = app.screen
        out = tmp_path / "class.yaml"
        screen.query_one("#gen-path").value = str(out)
        await pilot.pause(0.2)
        screen.query_one("#gen-name").value = "h100-only"  # its Changed message not handled yet, as with a fast typist
        screen.action_save()
        assert "name: h100-only" in out.read_text()


# 10 --------------------------------------------------------------------------------------------------------------
async def test_10_digits_leave_load_and_one_sample_draws_no_bar(snap) -> None:
    from dragoman.widgets.load import spark_data

    assert spark_data([5.0]) == [] and spark_data([3.0, 3.0]) == [0.0, 0.0] and spark_data([1.0, 2.0]) == [1.0, 2.0]
    app = snapshot_app(snap)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("colon", *"load", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "load", what="load")
        await pilot.pause(0.3)
        assert "█" not in "\n".join(screen_text(app))
        await pilot.press("2")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "nodes", what="2 from load")


# 11 --------------------------------------------------------------------------------------------------------------
async def test_11_y_and_d_on_pools_and_attributes(snap) -> None:
    app = snapshot_app(snap)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("j", "y")  # a100-mig: the second pool, after the demo's a100-lab
        await wait_for(pilot, lambda: getattr(app.screen, "mode", "") == "yaml", what="pool yaml")
        body = str(app.screen.query_one("#detail-text").render())
        assert "gone" not in body and "name: a100-mig" in body and "not an API object" in body
        await pilot.press("escape")
        await pilot.press("j", "d")
        await wait_for(pilot, lambda: getattr(app.screen, "mode", "") == "describe", what="pool describe")
        body = str(app.screen.query_one("#detail-text").render())
        assert "{" not in body and "ownership: mixed (" in body
        await pilot.press("escape", "7")
        await wait_for(
            pilot, lambda: getattr(app.screen, "name", "") == "attributes" and app.screen.populated, what="attributes"
        )
        await pilot.press("y")
        await wait_for(pilot, lambda: getattr(app.screen, "mode", "") == "yaml", what="attribute yaml")
        assert "values:" in str(app.screen.query_one("#detail-text").render())
        await pilot.press("escape", "d")
        await wait_for(pilot, lambda: getattr(app.screen, "mode", "") == "describe", what="attribute describe")
        body = str(app.screen.query_one("#detail-text").render())
        assert "Values (devices):" in body and "Devices view: /" in body


# 12 --------------------------------------------------------------------------------------------------------------
def test_12_snapshot_header_reads_a_demo_snapshots_version(tmp_path) -> None:
    from dragoman.fleet.snapshot import snapshot_provenance

    path = tmp_path / "s.yaml"
    path.write_text(
        "# dragoman snapshot of the demo simulator (context dragoman-sim, v1.37.1) at 2026-12-01T20:43:21Z\n"
    )
    assert snapshot_provenance(str(path)) == {
        "server": "the demo simulator",
        "context": "dragoman-sim",
        "version": "v1.37.1",
    }


def test_12_header_says_read_only_when_rbac_refuses_writes() -> None:
    from dragoman.tui.feed import SourceInfo
    from dragoman.widgets.header import header_cells

    info = SourceInfo(context="dragoman-sim-viewer", may_write=False)
    text = "".join(c.text for c in header_cells(info, "live"))
    assert "READ-ONLY (RBAC)" in text and "read-write" not in text


def test_12_playground_lists_matches_before_non_matches() -> None:
    from dragoman.fleet.cel_playground import Outcome
    from dragoman.widgets.cel_results import table_rows

    out = Outcome(expression="x")
    out.rows = [
        ("no-match", "d", "p", "gpu-1", "n", "L4", "clause"),
        ("match", "d", "p", "gpu-0", "n", "H100", ""),
        ("error", "d", "p", "gpu-2", "n", "T4", "no such key"),
        ("near-miss", "d", "p", "gpu-3", "n", "A100", "only `x` is false: it has 1"),
    ]
    # Issue 30: the near misses first after the errors (the devices one clause alone left out).
    assert [r[0] for r in table_rows(out)] == ["✖ error", "~ near miss", "✓ match", "· no match"]


async def test_12_migrate_picker_offers_migrated_pools_for_rollback_and_j_k_move(tmp_path) -> None:
    """Issue 30: a pool already on DRA was greyed and skipped (`Down` wrapped), so its rollback was unreachable from
    the picker; now it is listed after the pools to move, selectable, and picking it plans its rollback."""
    async with demo_app() as (sim, app, pilot):
        node_reads = len(sim.request_log.find("GET", "/api/v1/nodes"))
        await pilot.press("colon", *"migrate", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "name", "") == "migrate", what="the wizard")
        # Filled on its first frame from the fleet the app watches, not after a LIST of nodes (an empty box for
        # 2-4 s); and no "a Apply plan" in the footer before there is a plan.
        await pilot.pause()
        assert app.screen.query_one("#mig-pools").option_count > 1
        assert len(sim.request_log.find("GET", "/api/v1/nodes")) == node_reads
        assert "Run all" not in screen_text(app)[-1] and "s Step" not in screen_text(app)[-1]
        ol = app.screen.query_one("#mig-pools")
        assert ol.highlighted == 0
        prompts = [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]
        moved = next(i for i, p in enumerate(prompts) if p.startswith("a100-mig"))
        assert "on DRA" in prompts[moved] and not ol.get_option_at_index(moved).disabled
        assert moved > 0  # the pools still to move come first
        # j and k move on the list, down to the migrated pool and back.
        for _ in range(moved):
            await pilot.press("j")
        await pilot.pause()
        assert ol.highlighted == moved
        await pilot.press("k")
        await pilot.pause()
        assert ol.highlighted == moved - 1
        await pilot.press("j", "enter")
        wizard = app.screen
        await wait_for(pilot, lambda: wizard.plan is not None, 60, "the plan of the migrated pool")
        assert wizard.pool == "a100-mig" and wizard.plan.rollback


async def test_12_marked_rows_are_what_y_shows(snap) -> None:
    app = snapshot_app(snap)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("j", "space", "space", "y")  # a100-mig and a100-serve, after the demo's a100-lab
        await wait_for(pilot, lambda: getattr(app.screen, "mode", "") == "yaml", what="yaml of marked")
        body = str(app.screen.query_one("#detail-text").render())
        assert "name: a100-mig" in body and "name: a100-serve" in body and "---" in body


async def test_12_check_demo_counts_the_findings_the_tui_demo_shows() -> None:
    """`dragoman check --demo` and `dragoman --demo` are the same fleet: the same findings, the same counts on screen
    (check read the demo as loaded and kept a stale bridge claim the TUI's live scheduler deletes at once: 16/10/7
    against ✖16 ▲9 ℹ7)."""
    import asyncio
    import json
    import subprocess

    from dragoman.tui.app import DragomanApp
    from dragoman.tui.source import DemoProcess, open_cluster_feed

    proc = subprocess.run(
        [sys.executable, "-m", "dragoman", "check", "--demo", "-o", "json"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    cli = sorted(
        (f["severity"], f["id"], tuple((o["kind"], o["namespace"] or "", o["name"]) for o in f["objects"]))
        for f in doc["findings"]
    )
    counts = doc["summary"]

    demo = DemoProcess()  # what `dragoman --demo` starts: the simulator with its controllers in a child process
    kubeconfig = await asyncio.to_thread(demo.start)
    try:
        feed = await open_cluster_feed(kubeconfig, None, badge="DEMO")
        app = DragomanApp(feed, kubeconfig=kubeconfig)
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(pilot, app)

            def tui() -> list:
                return sorted(
                    (f.severity, f.id, tuple((r[0], r[1] or "", r[2]) for r in f.objects))
                    for f in app.feed.fleet.findings
                )

            assert tui() == cli
            # Still the same a few seconds on: nothing the live controllers do next takes a finding away or adds one.
            # The demo's clock starts at its snapshot (SimulatorConfig startTime), so allreduce's fabric attach, two
            # minutes old, is eight minutes from the scheduler's binding timeout, not days past it.
            await pilot.pause(3.0)
            assert tui() == cli
            shown = f"findings ✖{counts['errors']} ▲{counts['warnings']} ℹ{counts['info']}"
            assert any(shown in line for line in screen_text(app)), shown
    finally:
        demo.stop()


# 13 --------------------------------------------------------------------------------------------------------------
def _svg_text(path: pathlib.Path) -> str:
    """The words an SVG screenshot draws (Textual writes each run of text as a <text> element)."""
    import html
    import re

    return " ".join(
        html.unescape(t).replace("\xa0", " ") for t in re.findall(r"<text [^>]*>([^<]*)</text>", path.read_text())
    )


async def test_13_screenshots_show_the_headline_features_with_the_live_demo_counts() -> None:
    """The script's pictures cover the playground, the wizard, Accounting and Load, each named in the README; the H100
    picture shows their attributes; the counts are those `dragoman --demo` shows (the committed SVGs went stale)."""
    from dragoman.tui.headless import _read_demo
    from dragoman.tui.screenshots import SHOTS

    root = pathlib.Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    names = [name for name, _keys in SHOTS]
    assert {"playground", "wizard", "accounting", "load"} <= set(names)
    for name in names:
        assert (root / "screenshots" / f"{name}.svg").exists() and f"(screenshots/{name}.svg)" in readme, name
    shots = {name: _svg_text(root / "screenshots" / f"{name}.svg") for name in names}
    assert "productName" in shots["devices-h100"] and "H100" in shots["devices-h100"]
    assert "match" in shots["playground"] and "by pool:" in shots["playground"]
    assert "STATE" in shots["wizard"] and "preflight" in shots["wizard"] and "l4-serve" in shots["wizard"]
    assert "ALLOCATABLE" in shots["accounting"] and "Forecast" in shots["load"]

    from dragoman.fleet.diagnose import diagnose
    from dragoman.fleet.model import FleetModel

    store = (await _read_demo(None))[0].store  # the fleet `dragoman check --demo` and `dragoman --demo` show
    model = FleetModel()
    model.load({k: store.objects(k) for k in store.kinds})
    sev = [f.severity for f in diagnose(model)]
    shown = f"findings ✖{sev.count('error')} ▲{sev.count('warning')} ℹ{sev.count('info')}"
    assert shown in shots["pools"], shown
