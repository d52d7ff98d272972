"""The write confirmation as a person meets it: every warning on screen (or a line saying how much is below and the key
that brings it), a wrong name answered with the exact name expected, no empty rows under the buttons."""

from __future__ import annotations

import pathlib
import re
import sys

from dragoman.tui.screens.confirm import ConfirmWriteScreen
from textual.app import App

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "actions"))


class ConfirmApp(App):
    def __init__(self, modal: ConfirmWriteScreen) -> None:
        super().__init__()
        self.modal = modal
        self.answer: bool | None = None

    def on_mount(self) -> None:
        def done(ok: bool | None) -> None:
            self.answer = ok

        self.push_screen(self.modal, done)


def screen_lines(app) -> list[str]:
    return [s.text for s in app.screen._compositor.render_strips()]


def words(text: str) -> str:
    """The box's text without its frame and wrapping: what a person reads, as one line."""
    # The scrollbar's thumb (▃▃) sits just inside the right frame: it goes with the frame.
    inner = [re.sub(r"^\W*█ ?|[▁▂▃▄▅▆▇]*\s*█.*$|[▁▂▃▄▅▆▇█]+\s*$", "", line).strip() for line in text.splitlines()]
    return re.sub(r"\s+", " ", " ".join(inner))


def modal(warnings: list[str], word: str = "a100-train") -> ConfirmWriteScreen:
    return ConfirmWriteScreen(
        "Apply — pool a100-train",
        "Apply plan p1 on ctx: 17 writes on 3 nodes.",
        warnings=warnings,
        footnote="A server dry run precedes each write; each write is recorded in the audit log.",
        typed=[("This plan evicts pods. Type the pool name (a100-train):", word)],
    )


async def test_a_wrong_name_and_enter_says_the_exact_name_and_confirms_nothing() -> None:
    app = ConfirmApp(modal(["one warning"]))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for ch in "a100-trian":
            await pilot.press(ch)
        await pilot.press("enter")
        await pilot.pause(0.2)
        text = "\n".join(screen_lines(app))
        assert "“a100-trian” is not the name: type a100-train exactly to enable Apply" in text, text
        assert isinstance(app.screen, ConfirmWriteScreen) and app.answer is None
        assert app.screen.query_one("#confirm").disabled
        # Corrected, the sentence goes; enter then moves to Apply, and only Apply confirms.
        await pilot.press("backspace", "backspace", "backspace", "a", "i", "n")
        await pilot.pause(0.2)
        text = "\n".join(screen_lines(app))
        assert "is not the name" not in text
        # What the next enter does is on screen (it moves to Apply; the one after writes), inside the 80x24 box.
        assert "✓ Typed right. Enter moves to Apply; enter there writes. Esc cancels." in text, text
        await pilot.press("backspace")
        await pilot.pause(0.2)
        assert "Typed right" not in "\n".join(screen_lines(app))
        await pilot.press("n")
        await pilot.pause(0.2)
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "confirm" and app.answer is None
        assert "✓ Enter on Apply writes. Esc cancels." in "\n".join(screen_lines(app))
        await pilot.press("shift+tab")
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "cancel"
        assert "Enter on Cancel writes nothing; Apply writes." in "\n".join(screen_lines(app))
        await pilot.press("tab")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.answer is True


async def test_enter_on_an_empty_field_says_what_to_type() -> None:
    app = ConfirmApp(modal([]))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert "type a100-train exactly" in "\n".join(screen_lines(app))
        assert app.answer is None


async def test_warnings_too_long_for_the_screen_say_so_and_pgdn_from_the_name_field_brings_each() -> None:
    warnings = [f"warning {i}: " + " ".join(f"consequence-{i}-{j}" for j in range(12)) + f" END{i}" for i in range(8)]
    app = ConfirmApp(modal(warnings))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        assert app.focused is not None and app.focused.id == "typed-0"
        seen = ""
        lines = screen_lines(app)
        assert any("more lines of the plan below" in line and "pgdn" in line for line in lines), "\n".join(lines)
        for _ in range(12):
            lines = screen_lines(app)
            seen += "\n" + "\n".join(lines)
            # The field and the buttons stay on screen while the text scrolls; the bottom border follows the buttons.
            buttons = next(i for i, line in enumerate(lines) if "Cancel" in line and "Apply" in line)
            assert "▄▄▄" in lines[buttons + 1], "\n".join(lines)
            assert any("This plan evicts pods" in line for line in lines)
            await pilot.press("pagedown")
            await pilot.pause(0.1)
        assert app.focused is not None and app.focused.id == "typed-0"  # scrolled without leaving the field
        assert "the end of the plan" in "\n".join(screen_lines(app))
        for i in range(8):
            assert f"END{i}" in seen, i
        assert "dry run precedes each write" in words(seen)


async def test_the_demo_pools_plan_brings_every_warning_and_the_dry_run_line_at_80x24(tmp_path: pathlib.Path) -> None:
    """a100-train's plan (a PodDisruptionBudget that allows no disruption, no room for the evicted pods, no free GPU
    for the canary): each warning in full and the dry-run line reach an 80x24 screen — at once, or by pgdn from the
    name field, which says so — while the field and the buttons stay on screen."""
    from tests.tui.test_migrate_wizard import until, wizard

    async with wizard(tmp_path, "a100-train", size=(80, 24)) as (sim, _screen, app, pilot):
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen))
        await pilot.pause(0.3)
        confirm = app.screen
        assert isinstance(confirm, ConfirmWriteScreen)
        warnings = confirm.warnings
        assert any("PodDisruptionBudget" in w for w in warnings)
        assert any("no room for 6 evicted" in w for w in warnings)
        first = "\n".join(screen_lines(app))
        screens = [first]
        if "more lines of the plan below" in first:
            assert "pgdn" in first, first  # the screen says how to bring the rest
            for _ in range(12):
                await pilot.press("pagedown")
                await pilot.pause(0.1)
                screens.append("\n".join(screen_lines(app)))
            assert app.focused is not None and app.focused.id == "typed-0"  # scrolled without leaving the field
        read = [words(shown) for shown in screens]
        for w in warnings:  # each warning whole on one screen
            assert any(re.sub(r"\s+", " ", w) in r for r in read), f"{w!r} never whole on screen:\n" + screens[-1]
        assert any("A server dry run precedes each write" in r for r in read)
        lines = screen_lines(app)
        text = "\n".join(lines)
        buttons = next(i for i, line in enumerate(lines) if "Cancel" in line and "Apply" in line)
        assert "▄▄▄" in lines[buttons + 1], text  # no empty rows under the buttons
        assert sim.request_log.writes() == []
