"""Every screen and state a new user meets, as pictures, at 80×24 and 120×40 (issue 18), from the pinned demo read as a
snapshot file (no clock, nothing moving); the wizard's states from the demo simulator without controllers."""

from __future__ import annotations

import pathlib
import sys

import pytest

from tests.tui.conftest import snapshot_app, snapshot_copy
from tests.tui.contrast import problems
from tests.tui.test_tui_snapshots import _keys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "actions"))

SIZES = {"80x24": (80, 24), "120x40": (120, 40)}


def _text(expression: str):
    def load(app) -> None:
        app.screen.editor.load_text(expression)

    return load


async def _playground_settled(pilot) -> None:
    screen = pilot.app.screen
    if getattr(screen, "name", "") != "cel":
        await pilot.pause(0.3)
        return
    for _ in range(1200):
        # The outcome of the text now in the editor: right after load_text the edit's Changed message may not have
        # been handled yet, and the previous expression's results still look settled.
        current = getattr(screen, "outcome", None) is not None and screen.outcome.expression == screen.editor.text
        if current and (
            screen.explained_gen == screen.gen
            or (screen.outcome.compile_error is not None and screen.shown_gen == screen.gen)
        ):
            break
        await pilot.pause(0.05)
    await pilot.pause(0.2)


def _load(*more):
    """The Load view with its one sample on opening, its 5 s timer paused at once: under load the picture was taken
    after a second sample ("2 samples") now and then."""

    async def run_before(pilot) -> None:
        await _keys()(pilot)  # the app ready, then straight to the view
        await pilot.press("colon", *"load", "enter")
        screen = pilot.app.screen
        if hasattr(screen, "sampling"):
            screen.sampling.pause()
        await _keys(*more)(pilot)

    return run_before


def _cel(*steps):
    async def run_before(pilot) -> None:
        await _keys("colon", *"cel", "enter")(pilot)
        for s in steps:
            if callable(s):
                s(pilot.app)
            else:
                await pilot.press(s)
            await _playground_settled(pilot)

    return run_before


STATES = {
    "pools": _keys(),
    "pools_cursor_on_plugin_row": _keys("j", "j"),
    "pools_scrolled_right": _keys("shift+right", "shift+right", "shift+right"),
    "nodes": _keys("2"),
    "devices": _keys("3"),
    "claims": _keys("4"),
    "stuck_pods": _keys("5"),
    "findings": _keys("6"),
    "attributes": _keys("7"),
    "accounting": _keys("colon", *"accounting", "enter"),
    "load": _load(),
    "filter_typing": _keys("3", "slash", *"NVIDIA*H100"),
    "filter_applied_h100": _keys("3", "slash", *"productName=NVIDIA*H100*", "enter"),
    "filter_no_result": _keys("3", "slash", *"productName=NoSuchGPU*", "enter"),
    "jump_typing": _keys("colon", *"po"),
    "jump_no_such_view": _keys("colon", *"gpus"),
    # help per screen: each lists its own screen's keys first
    "help_pools": _keys("question_mark"),
    "help_nodes": _keys("2", "question_mark"),
    "help_devices": _keys("3", "question_mark"),
    "help_claims": _keys("4", "question_mark"),
    "help_stuck_pods": _keys("5", "question_mark"),
    "help_findings": _keys("6", "question_mark"),
    "help_attributes": _keys("7", "question_mark"),
    "help_accounting": _keys("colon", *"accounting", "enter", "question_mark"),
    "help_load": _load("question_mark"),
    "help_describe": _keys("5", "enter", "question_mark"),
    "describe_stuck_pod": _keys("5", "enter"),
    "yaml_pool": _keys("y"),
    "describe_attribute": _keys("7", "d"),
}

# The playground's states are checked as screen text: its result lines arrive from an evaluation thread, and the
# picture of the moment they land was not stable from run to run.
PLAYGROUND = {
    "playground_matches": _cel(_text('device.attributes["gpu.nvidia.com"].productName.contains("H100")')),
    "playground_compile_error": _cel(_text("device.driver ==")),
    "playground_runtime_errors": _cel(_text('device.attributes["gpu.nvidia.com"].index < 4')),
}
STATES.update(
    {
        "playground_help": _cel("f1"),
        "generate_form": _cel(_text('device.driver == "no.such.driver"'), "ctrl+g", "tab", *"gpu.nvidia.com"),
        "generate_help": _cel("ctrl+g", "f1"),
        "playground_opened": _cel(),  # the example selector, selected: typing replaces it
    }
)
PLAYGROUND_SAYS = {
    "playground_matches": "match 24",
    "playground_compile_error": "✗ line 1",
    "playground_runtime_errors": "✗ ",
}


@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize("state", sorted(PLAYGROUND))
async def test_playground_states(state, size, tmp_path) -> None:
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=SIZES[size]) as pilot:
        await PLAYGROUND[state](pilot)
        lines = [s.text for s in app.screen._compositor.render_strips()]
        low = [str(p) for p in problems(app)]
        assert not low, "drawn too close to its background:\n" + "\n".join(low)
    text = "\n".join(lines)
    assert PLAYGROUND_SAYS[state] in text, text
    assert "by pool:" in text or state == "playground_compile_error"


def _frozen(run_before):
    """The state, then every text cursor held still: a blinking cursor made the picture depend on the moment it was
    taken. Every picture is also checked for contrast (tests/tui/contrast.py): no glyph or word drawn in or near its
    background's colour, the highlighted row included."""

    async def run(pilot) -> None:
        await run_before(pilot)
        for w in pilot.app.screen.query("Input, TextArea"):
            w.cursor_blink = False
            if hasattr(w, "_cursor_visible"):
                w._cursor_visible = True
            if hasattr(w, "_line_cache"):
                w._line_cache.clear()  # a TextArea's lines drawn while the cursor blinked off stay cached otherwise
            w.refresh()
        await pilot.pause(0.2)
        low = [str(p) for p in problems(pilot.app)]
        assert not low, "drawn too close to its background:\n" + "\n".join(low)

    return run


@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize("state", sorted(STATES))
def test_screen_snapshot(state, size, snap_compare, tmp_path) -> None:
    app = snapshot_app(snapshot_copy(tmp_path))
    assert snap_compare(app, terminal_size=SIZES[size], run_before=_frozen(STATES[state]))


# ---------------------------------------------------------------------------------------------------- the wizard
def _wizard_app(cluster, pool: str, tmp_path, **kw):
    from dragoman.tui.screens.migrate import MigrateScreen

    from tests.tui.test_migrate_wizard import WizardApp, options

    screen = MigrateScreen(
        pool, cluster=cluster, options=options(), audit_path=str(tmp_path / "a.jsonl"), read_only=False, **kw
    )
    return WizardApp(screen), screen


def _strips(app):
    return app.screen._compositor.render_strips()


async def _until(pilot, predicate) -> None:
    for _ in range(1200):
        if predicate():
            break
        await pilot.pause(0.05)
    await pilot.pause(0.3)


WIZARD = {
    # (context, pool, steps, keys after the plan)
    "blocked_preflight": ("dragoman-sim-viewer", "l4-serve", None, ()),
    "plan": (None, "l4-serve", None, ()),
    "confirmation": (None, "l4-serve", None, ("a",)),
    "rollback_nothing_recorded": (None, "l4-serve", ["cordon"], ("r",)),
    "done": (None, "t4-batch", ["cordon"], ("a", "tab", "enter")),
    # A real rollback: the cordon applied and done, then r plans its undo and asks, then runs it.
    "rollback_confirmation": (None, "t4-batch", ["cordon"], ("a", "tab", "enter", "!until — done", "r")),
    "rolled_back": (
        None,
        "t4-batch",
        ["cordon"],
        ("a", "tab", "enter", "!until — done", "r", "!until Roll back —", "tab", "enter", "!until rolled back"),
    ),
    "help": (None, "l4-serve", None, ("!help",)),  # as the app's ? opens it (the test harness has no ? binding)
    # Step mode: s runs the selected step alone; the wizard stops, says what it verified and offers the next.
    "step_done": (None, "l4-serve", None, ("s", "!until next: cordon")),
    "step_confirmation": (None, "l4-serve", None, ("s", "!until next: cordon", "s")),
    # llama-pretrain's PDB (maxUnavailable 0) refuses every eviction, so the drain keeps retrying: held still.
    "running": (None, "a100-train", ["cordon", "drain"], ("a", *"a100-train", "#confirm")),
}


@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize("state", sorted(WIZARD))
async def test_wizard_snapshot(state, size, tmp_path) -> None:
    """The wizard's states against the demo simulator; compared as text (the plan names the simulator's random port)."""
    from dragoman.fleet.cluster import connect
    from migrate_support import demo

    context, pool, steps, keys = WIZARD[state]
    async with demo() as sim:
        cluster = await connect(str(sim.kubeconfig_path), context)
        try:
            app, screen = _wizard_app(cluster, pool, tmp_path, steps=steps)
            async with app.run_test(size=SIZES[size]) as pilot:
                await _until(pilot, lambda: screen.plan is not None or screen.error)
                for k in keys:
                    if k.startswith("!until "):
                        await _until(pilot, lambda k=k: k[7:] in "\n".join(s.text for s in _strips(app)))
                    elif k == "!help":
                        from dragoman.tui.screens.help import HelpScreen

                        app.push_screen(HelpScreen(app.screen))
                    else:
                        await (pilot.click(k) if k.startswith("#") else pilot.press(k))  # "#id": a button clicked
                    await pilot.pause(0.3)
                if state == "done":
                    await _until(pilot, lambda: screen.result is not None)
                if state == "running":
                    await _until(pilot, lambda: screen.step_state.get("drain") == "running")  # the step held still
                lines = [s.text.rstrip() for s in _strips(app)]
                low = [str(p) for p in problems(app)]
                assert not low, f"{state} {size}: drawn too close to its background:\n" + "\n".join(low)
        finally:
            await cluster.close()
    text = "\n".join(lines)
    expected = {
        "blocked_preflight": ["✗ blocked:", "STATE"],
        "plan": ["STATE", "preflight", "Migration plan"],
        "confirmation": ["Apply — pool l4-serve", "Cancel"],
        "rollback_nothing_recorded": ["Migration plan", "STATE"],
        "done": ["done"],
        "rollback_confirmation": ["Roll back — pool t4-batch", "Roll back plan", "rollback:cordon=1", "Cancel"],
        "rolled_back": ["rolled back", "— done", "✓ done", "STATE"],
        "help": ["help: migration wizard", "Run the selected step alone", "Undo the steps", "rebuild the plan"],
        "step_done": ["step preflight done", "next: cordon", "✓ preflight verified", "✓ done"],
        "step_confirmation": ["Apply — pool l4-serve, step cordon", "The wizard stops after this step", "Cancel"],
        "running": ["▶ running", "applying plan", "STATE"],
    }[state]
    for part in expected:
        assert part in text, f"{state} {size}: {part!r} not on screen:\n{text}"
    width = SIZES[size][0]
    assert all(len(line) <= width for line in lines)
    if state not in ("confirmation", "help", "rollback_confirmation", "step_confirmation"):
        assert "STATE" in text  # the state column is never cut
