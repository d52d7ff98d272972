"""The :migrate wizard driven by Pilot against the demo simulator: plan, cancel, typed names, apply, progress, rollback,
read-only."""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
import sys

from textual.app import App

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "actions"))
from dragoman.actions.steps import Options
from dragoman.fleet.migration import STEP_ORDER
from dragoman.tui.screens.confirm import ConfirmWriteScreen
from dragoman.tui.screens.migrate import MigrateScreen
from migrate_support import L4, T4, T4_NODES, assert_one_intent_one_outcome, audit_records, demo, evictions, node


class WizardApp(App):
    def __init__(self, screen: MigrateScreen) -> None:
        super().__init__()
        self.wizard = screen

    def on_mount(self) -> None:
        self.push_screen(self.wizard)


async def until(pilot, predicate, timeout: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, "timed out waiting"
        await pilot.pause(0.05)


def options(**kw) -> Options:
    return Options(evict_retry=0.3, lease_seconds=30, **kw)


@contextlib.asynccontextmanager
async def wizard(tmp_path: pathlib.Path, pool: str, *, size=(110, 40), context: str | None = None, read_only=False):
    """The demo simulator and the wizard of `pool` in a WizardApp at `size` (through `context`, the kubeconfig's
    default else), its plan made: (sim, screen, app, pilot)."""
    from dragoman.fleet.cluster import connect

    async with demo() as sim:
        cluster = await connect(str(sim.kubeconfig_path), context)
        try:
            screen = MigrateScreen(
                pool, cluster=cluster, options=options(), audit_path=str(tmp_path / "a.jsonl"), read_only=read_only
            )
            app = WizardApp(screen)
            async with app.run_test(size=size) as pilot:
                await until(pilot, lambda: screen.plan is not None)
                yield sim, screen, app, pilot
        finally:
            await cluster.close()


async def test_wizard_cancel_then_typed_pool_name_then_apply_and_rollback(tmp_path: pathlib.Path) -> None:
    from dragoman.fleet.cluster import connect

    async with demo() as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            screen = MigrateScreen(
                L4,
                cluster=cluster,
                options=options(),
                audit_path=str(tmp_path / "audit.jsonl"),
                read_only=False,
                steps=["cordon", "drain"],
            )  # this test is about cordon and drain
            app = WizardApp(screen)
            async with app.run_test(size=(110, 40)) as pilot:
                await until(pilot, lambda: screen.plan is not None)
                assert [s.id for s in screen.plan.steps] == ["preflight", "cordon", "drain"]
                table = screen.query_one("#mig-steps")
                assert table.row_count == 3
                # The name to type is focused: enter by habit writes nothing, escape cancels.
                await pilot.press("a")
                await until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen))
                assert app.focused is not None and app.focused.id == "typed-0"
                await pilot.press("enter")
                await pilot.pause()
                assert isinstance(app.screen, ConfirmWriteScreen) and app.screen.query_one("#confirm").disabled
                await pilot.press("escape")
                await until(pilot, lambda: app.screen is screen)
                assert sim.request_log.writes() == []
                # The drain is dangerous: Confirm stays disabled until the pool name is typed exactly.
                await pilot.press("a")
                await until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen))
                modal = app.screen
                confirm = modal.query_one("#confirm")
                assert confirm.disabled
                for ch in "l4-inferenc":  # typed straight away: the field has the focus
                    await pilot.press(ch)
                await pilot.pause()
                assert confirm.disabled
                await pilot.click("#confirm")
                await pilot.pause()
                assert isinstance(app.screen, ConfirmWriteScreen) and sim.request_log.writes() == []
                await pilot.press("e")
                await until(pilot, lambda: not confirm.disabled)
                await pilot.click("#confirm")
                await until(pilot, lambda: screen.result is not None, timeout=120)
                assert screen.result.exit_code == 0, screen.result.problems
                assert screen.step_state == {"preflight": "done", "cordon": "done", "drain": "done"}
                assert screen.query_one("#mig-overall").progress == 3
                assert len(evictions(sim)) == 6
                log_text = "\n".join(str(line.text) for line in screen.query_one("#mig-log").lines)
                assert "✓ drain: verified" in log_text and "evicted" in log_text
                # Roll back the cordon (not dangerous: no typed name, still a confirmation with Cancel focused).
                await pilot.press("r")
                await until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen))
                assert not app.screen.typed
                # Behind the confirmation the title names the keys as they act on a rollback plan.
                title = str(screen.query_one("#mig-title").render())
                assert (
                    "rollback plan" in title
                    and "r rolls these steps back; a plans and applies the migration instead" in title
                )
                assert app.focused is not None and app.focused.id == "cancel"  # nothing to type: Cancel has the focus
                await pilot.click("#confirm")
                await until(
                    pilot,
                    lambda: (
                        screen.result is not None
                        and screen.plan is not None
                        and screen.plan.rollback
                        and screen.result.steps.get("rollback:cordon") == "done"
                    ),
                    timeout=60,
                )
                title = str(screen.query_one("#mig-title").render())
                assert "rolled back" in title and "done" in title and "a: apply" not in title
            nodes = [
                e.obj
                for e in sim.store.entries("nodes")
                if e.obj["metadata"]["labels"].get("cloud.google.com/gke-nodepool") == L4
            ]
            assert not any(n["spec"].get("unschedulable") for n in nodes)
            assert_one_intent_one_outcome(audit_records(tmp_path))
        finally:
            await cluster.close()


async def test_wizard_production_context_needs_its_name_typed_too(tmp_path: pathlib.Path) -> None:
    from dragoman.fleet.cluster import connect

    async with demo() as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            # The simulator's context is `dragoman-sim`; call `sim` a production word for this test.
            screen = MigrateScreen(
                T4,
                cluster=cluster,
                options=options(prod_patterns=("sim",)),
                audit_path=str(tmp_path / "a.jsonl"),
                read_only=False,
            )
            app = WizardApp(screen)
            async with app.run_test(size=(110, 40)) as pilot:
                await until(pilot, lambda: screen.plan is not None)
                await pilot.press("a")
                await until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen))
                modal = app.screen
                assert [w for _p, w in modal.typed] == ["dragoman-sim", T4]
                assert app.focused is not None and app.focused.id == "typed-0"
                for ch in "dragoman-sim":
                    await pilot.press(ch)
                await pilot.press("enter")  # the context is right: on to the pool name
                await pilot.pause()
                assert app.focused is not None and app.focused.id == "typed-1"
                assert modal.query_one("#confirm").disabled  # the pool name is still missing
                for ch in T4:
                    await pilot.press(ch)
                await pilot.press("enter")
                await pilot.pause()
                assert not modal.query_one("#confirm").disabled and app.focused.id == "confirm"
                await pilot.press("escape")
                await until(pilot, lambda: app.screen is screen)
            assert sim.request_log.writes() == []
            assert not node(sim, T4_NODES[0])["spec"].get("unschedulable")
        finally:
            await cluster.close()


async def test_wizard_read_only_has_no_write_keys(tmp_path: pathlib.Path) -> None:
    from dragoman.fleet.cluster import connect

    async with demo() as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            screen = MigrateScreen(
                T4, cluster=cluster, options=options(), audit_path=str(tmp_path / "a.jsonl"), read_only=True
            )
            app = WizardApp(screen)
            async with app.run_test(size=(110, 40)) as pilot:
                await until(pilot, lambda: screen.plan is not None)
                assert screen.check_action("apply", ()) is False and screen.check_action("rollback", ()) is False
                shown = {b.binding.action for b in screen.active_bindings.values() if b.enabled}
                assert "apply" not in shown and "rollback" not in shown and "replan" in shown
                await pilot.press("a")
                await pilot.press("r")
                await pilot.pause(0.3)
                assert app.screen is screen
                assert "READ-ONLY" in str(screen.query_one("#mig-title").render())
            assert sim.request_log.writes() == []
        finally:
            await cluster.close()


async def test_wizard_without_a_pool_lists_the_pools_to_pick(tmp_path: pathlib.Path) -> None:
    from dragoman.fleet.cluster import connect

    async with demo() as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            screen = MigrateScreen(
                None, cluster=cluster, options=options(), audit_path=str(tmp_path / "a.jsonl"), read_only=True
            )
            app = WizardApp(screen)
            # The node LIST is held until the placeholder has been seen: on a fast machine it answered before the
            # first check, and the test read the filled list instead of what the box shows while it waits.
            listed = asyncio.Event()
            list_all = cluster.list_all

            async def held_list_all(*args, **kwargs):
                await listed.wait()
                return await list_all(*args, **kwargs)

            cluster.list_all = held_list_all  # type: ignore[method-assign]
            async with app.run_test(size=(110, 40)) as pilot:
                ol = screen.query_one("#mig-pools")
                # A wizard with a cluster of its own lists the nodes: until then the box says so (it stood empty).
                await pilot.pause()
                assert "reading the cluster's nodes" in str(ol.get_option_at_index(0).prompt)
                listed.set()

                def ids() -> list:
                    return [ol.get_option_at_index(i).id for i in range(ol.option_count)]

                await until(pilot, lambda: "-reading" not in ids() and ol.option_count > 0)
                ids = ids()
                assert T4 in ids and L4 in ids and "system" in ids
                ol.highlighted = ids.index(T4)
                await pilot.press("enter")
                await until(pilot, lambda: screen.plan is not None)
                assert screen.plan.pool == T4
        finally:
            await cluster.close()


async def test_m_on_the_pools_view_opens_the_wizard_of_that_pool_and_migrate_jumps_there(
    tmp_path: pathlib.Path, monkeypatch
) -> None:
    from tests.tui.conftest import demo_app, wait_for

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    async with demo_app() as (sim, app, pilot):
        await pilot.press("slash", *T4, "enter")
        await pilot.pause(0.2)
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, MigrateScreen), 30, "the wizard")
        wizard = app.screen
        assert wizard.pool == T4
        await wait_for(pilot, lambda: wizard.plan is not None, 60, "the plan")
        # The whole switch by default, every step in the table.
        assert list(dict.fromkeys(s.step for s in wizard.plan.steps)) == list(STEP_ORDER)
        assert wizard.query_one("#mig-steps").row_count == len(wizard.plan.steps)
        assert wizard.cluster is app.feed.cluster
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, MigrateScreen), 30, "back to the pools")
        await pilot.press("colon", *"migrate", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, MigrateScreen), 30, ":migrate")
        assert app.screen.pool is None  # it asks which pool
    assert sim.request_log.writes() == []


async def test_the_wizard_title_shows_the_words_it_is_given_verbatim_brackets_and_all() -> None:
    # An API error or a step's words naming `spec.devices[0]` or holding `[/]` reach the title: read as Textual markup
    # they lost the bracketed part, or failed to render at all.
    screen = MigrateScreen("l4-serve", cluster=None, options=None, audit_path=None, read_only=True)
    app = WizardApp(screen)
    async with app.run_test(size=(120, 24)) as pilot:
        await pilot.pause(0.1)
        words = "pool l4-serve: ✗ 422 spec.devices[0]: invalid [/] [gpu-0]"
        screen._title(words)
        await pilot.pause(0.1)
        shown = str(screen.query_one("#mig-title").render())
        assert words + "  [READ-ONLY: plan only]" in shown, shown


async def test_at_80_columns_the_title_is_one_line_and_the_selected_steps_whole_title_is_under_the_table(
    tmp_path: pathlib.Path,
) -> None:
    """The title does not repeat the footer's keys (it wrapped mid-parenthesis at 80 columns); WHAT is cut at 80
    columns, so the line under the table says the selected step whole, and follows the cursor."""
    async with wizard(tmp_path, "a100-train", size=(80, 24)) as (_sim, screen, app, pilot):
        await pilot.pause(0.2)
        lines = [s.text.rstrip() for s in app.screen._compositor.render_strips()]
        title = next(i for i, line in enumerate(lines) if "migration plan" in line)
        assert lines[title].endswith("— 8 steps") and "(a:" not in lines[title], lines[title]
        assert lines[title + 1].split()[:2] == ["#", "STEP"]  # the table's header right under: one line
        assert "Exclude the device plug…" in "\n".join(lines)  # WHAT is cut at this width ...
        await pilot.press("down", "down", "down")
        await pilot.pause(0.2)
        detail = str(screen.query_one("#mig-detail").render())
        # ... and the line under the table says it whole, with what the step does.
        assert "4. Exclude the device plugin from the pool — 3 changes, dangerous, 3 nodes" in detail
        lines = [s.text.rstrip() for s in app.screen._compositor.render_strips()]
        assert any(line.strip().startswith("▸ 4. Exclude the device plugin from the pool") for line in lines)
        assert all(len(line) <= 80 for line in lines)
        await pilot.press("up", "up", "up")
        await pilot.pause(0.2)
        # The third warning: the pool will have no free GPU for the canary.
        assert "1. Preflight checks — 0 changes, ! 3 warnings in the plan" in str(
            screen.query_one("#mig-detail").render()
        )


async def _run_selected_step(pilot, app, screen, pool: str) -> str:
    """Press s on the selected step; type the pool name when asked; confirm; wait until the wizard stops again.
    Returns the step id that ran."""
    sid = screen.plan.steps[screen.query_one("#mig-steps").cursor_row].id
    before = screen.result
    await pilot.press("s")
    await until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen) or screen.busy or screen.result is not before)
    if isinstance(app.screen, ConfirmWriteScreen):
        modal = app.screen
        # Its own confirmation: the one step, its writes one per line, and the promise to stop after it.
        assert f"step {sid}" in modal.text and "The wizard stops after this step" in modal.text
        if modal.typed:
            assert [w for _p, w in modal.typed] == [pool]
            for ch in pool:
                await pilot.press(ch)
            await pilot.press("enter")
        await until(pilot, lambda: not modal.query_one("#confirm").disabled)
        await pilot.click("#confirm")
    await until(pilot, lambda: screen.result is not before and not screen.busy and screen.plan is not None, 120)
    return sid


async def test_step_mode_runs_one_confirmed_step_at_a_time_in_batches_with_a_canary_then_rolls_back(
    tmp_path: pathlib.Path,
) -> None:
    """Issue 30: `a` ran all 8 steps after one confirmation and drained both nodes at once. Opened as the app opens
    it (no options), the wizard suggests a canary node and batches of 1 for l4-serve; each step runs alone after its
    own confirmation (the drain's asks for the pool name), the wizard stops and says what the step verified and which
    step is next; log lines carry the time; the pool is then rolled back step by step too."""
    import json
    import re

    from dragoman.fleet.cluster import connect

    pool = "l4-serve"
    async with demo(controllers=True) as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            screen = MigrateScreen(pool, cluster=cluster, audit_path=str(tmp_path / "audit.jsonl"), read_only=False)
            app = WizardApp(screen)
            async with app.run_test(size=(120, 40)) as pilot:
                await until(pilot, lambda: screen.plan is not None, 60)
                opts = screen.plan.options
                assert opts["batchSize"] == 1 and opts["canaryNode"].startswith("gke-ml-prod-l4-serve-")
                ids = [s.id for s in screen.plan.steps]
                assert ids[:5] == ["preflight", "cordon@canary", "drain@canary", "cordon@batch-2", "drain@batch-2"]
                assert ids[-1] == "verify"
                screen.runner.options.switch_timeout = 60  # type: ignore[union-attr]
                screen.runner.options.evict_retry = 0.3  # type: ignore[union-attr]
                # Out of order is refused: the cursor goes back to the step that comes first.
                await pilot.press("down", "down", "s")
                await pilot.pause(0.2)
                assert not isinstance(app.screen, ConfirmWriteScreen) and sim.request_log.writes() == []
                assert screen.query_one("#mig-steps").cursor_row == 0
                audit = tmp_path / "audit.jsonl"
                ran = []
                while screen.next_step() is not None:
                    count = len(audit.read_text().splitlines()) if audit.exists() else 0
                    sid = await _run_selected_step(pilot, app, screen, pool)
                    ran.append(sid)
                    assert screen.result.exit_code == 0, (sid, screen.result.problems)
                    # The step alone was written: every new intent is this step's.
                    new = [json.loads(x) for x in audit.read_text().splitlines()[count:]] if audit.exists() else []
                    assert {r["step"] for r in new if r["record"] == "intent"} <= {sid}
                    verified = str(screen.query_one("#mig-verified").render())
                    assert verified.startswith(f"✓ {sid} verified"), verified
                    title = str(screen.query_one("#mig-title").render())
                    nxt = screen.next_step()
                    assert (f"next: {nxt.id}" in title) if nxt else ("every step is done" in title), title
                    if sid == "drain@canary":
                        # Elapsed time and the step's timeout stood beside it while it ran.
                        label = str(screen.query_one("#mig-step-label").render())
                        assert re.fullmatch(r"drain@canary \d+:\d\d of 5:00", label.strip()), label
                        # One batch at a time: the other node still runs its pods.
                        other = next(n for n in screen.runner.ctx.nodes if n != opts["canaryNode"])
                        assert not node(sim, other)["spec"].get("unschedulable")
                assert ran == ids
                lines = [str(x.text) for x in screen.query_one("#mig-log").lines]
                assert any(re.match(r"\d\d:\d\d:\d\d ✓ drain@canary: verified", x) for x in lines), lines[-20:]
                # Rolled back step by step as well (r shows the rollback plan's confirmation; s runs one step).
                await screen._build_plan(rollback=True)
                assert screen.plan.rollback and screen.plan.steps
                while screen.plan.steps:
                    sid = await _run_selected_step(pilot, app, screen, pool)
                    assert screen.result.exit_code == 0, (sid, screen.result.problems)
                    assert sid.startswith("rollback:")
            assert not any(node(sim, n)["spec"].get("unschedulable") for n in screen.runner.ctx.nodes)
            assert_one_intent_one_outcome(audit_records(tmp_path))
        finally:
            await cluster.close()


async def test_the_production_confirmation_with_two_names_fits_at_80x24(tmp_path: pathlib.Path) -> None:
    """Issue 30: the production-context confirmation (the context's name and the pool's typed) must fit at 80x24:
    both fields, both buttons and the line saying what of the plan is below, inside the screen."""
    async with demo() as sim:
        from dragoman.fleet.cluster import connect

        cluster = await connect(str(sim.kubeconfig_path))
        try:
            screen = MigrateScreen(
                "l4-serve",
                cluster=cluster,
                options=options(prod_patterns=("sim",)),
                audit_path=str(tmp_path / "a.jsonl"),
                read_only=False,
            )
            app = WizardApp(screen)
            async with app.run_test(size=(80, 24)) as pilot:
                await until(pilot, lambda: screen.plan is not None)
                await pilot.press("a")
                await until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen))
                await pilot.pause(0.5)
                modal = app.screen
                assert [w for _p, w in modal.typed] == ["dragoman-sim", "l4-serve"]
                for wid in ("#typed-0", "#typed-1", "#confirm", "#cancel"):
                    region = modal.query_one(wid).region
                    assert region.height and 0 <= region.y and region.bottom <= 24 and region.right <= 80, (wid, region)
        finally:
            await cluster.close()


async def test_the_plan_text_follows_the_selected_step(tmp_path: pathlib.Path) -> None:
    async with wizard(tmp_path, "l4-serve", size=(100, 30)) as (_sim, screen, app, pilot):
        await pilot.pause(0.3)
        log = screen.query_one("#mig-log")
        assert log.scroll_y == 0  # the first step: the plan from its top
        await pilot.press("j", "j", "j")
        await pilot.pause(0.3)
        step = screen.plan.steps[3]
        assert log.scroll_y == screen.step_offsets[step.id] > 0
        assert str(log.lines[int(log.scroll_y)].text).startswith(f" 4. {step.id} — ")


async def test_progress_arriving_after_the_app_shut_down_is_kept_not_raised(tmp_path: pathlib.Path) -> None:
    """A run outlives the wizard's widgets while the app shuts down (CI once saw `NoMatches: #mig-log` raised from the
    runner's progress into the app, failing the run): its lines and states are kept, and nothing raises."""
    from dragoman.actions.steps import ProgressEvent

    async with wizard(tmp_path, "t4-batch") as (_sim, screen, _app, _pilot):
        assert screen.query("#mig-log")
    assert not screen.query("#mig-log"), "the app's shutdown removed the wizard's widgets"
    screen.on_progress(ProgressEvent("cordon", 0, 2, "cordon: started"))
    screen.on_progress(ProgressEvent("cordon", 1, 2, "cordoned", node="n1"))
    screen.on_progress(ProgressEvent("cordon", 2, 2, "cordon: done, verified"))
    screen.log_line("after the end")
    assert screen.step_state["cordon"] == "done"
    assert [line.split(" ", 1)[1] for line in screen.run_lines[-2:]] == [
        "  cordon 2/2 cordon: done, verified",
        "after the end",
    ]
