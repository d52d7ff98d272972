"""The `:` jump and `/` filter prompt, one component for every screen that has the bar (the table views, the
playground, Accounting, Load): the app routes typed keys to `PromptScreen`s only, through `prompt_mode`."""

from __future__ import annotations

from typing import TypeVar

from dragoman.tui.bindings import VIEW_DIGITS, textual_bindings
from dragoman.tui.screens.base import DragomanScreen
from dragoman.widgets.command_bar import CommandBar
from textual.binding import Binding
from textual.widgets import DataTable, Input

R = TypeVar("R")


def jump_hint(text: str) -> str:
    """The hint under `:`: the views whose names or aliases start with what is typed, the first bold (tab takes it).
    A short name says the screen it opens by its title (`po→Stuck pods`): "po→pending" read as the wrong view."""
    from dragoman.tui.views import BY_NAME, jump_candidates  # the registry imports the screens: read it when asked
    from rich.markup import escape

    cands, seen = [], set()
    for alias, target in jump_candidates(text):
        if target not in seen:  # each view once, by the first name that matched
            seen.add(target)
            cands.append((alias, target))
    if not cands:
        return f"[b $text-error]no view named {escape(text)!r}[/] — backspace, or esc closes"
    shown = [escape(a if a == t else f"{a}→{BY_NAME[t].title or t}") for a, t in cands]
    shown[0] = f"[b reverse]{shown[0]}[/]"
    return "  ".join(shown) + "   [dim]tab completes · enter jumps · esc closes[/]"


class PromptScreen(DragomanScreen[R]):
    """A screen with the bar: `:` (and `/` where the screen filters) opens it, enter submits, esc closes.

    The screen composes a CommandBar and provides `focus_main()`; a filtering screen sets FILTERS and provides
    `apply_filter(text)`, `preview_filter(text)` (live, as the operator types) and `filter_text`.
    """

    FILTERS = False
    filter_text = ""
    _filter_before = ""

    @property
    def prompt_mode(self) -> str:
        """ "jump" or "filter" while the bar is open, "" when closed."""
        bars = self.query(CommandBar)
        return bars.first().mode if bars else ""

    @property
    def command_bar(self) -> CommandBar:
        return self.query_one(CommandBar)

    def focus_main(self) -> None:
        pass

    def apply_filter(self, text: str) -> None:
        pass

    def preview_filter(self, text: str) -> None:
        pass

    def filter_hint(self, text: str) -> str:
        return ""

    def action_jump_prompt(self) -> None:
        prompt = self.command_bar.open(
            "jump", "a view: pools nodes devices claims pending findings cel migrate … (k9s names work: po no)"
        )
        self.command_bar.hint(jump_hint(""))
        # At once, not via call_later: the next keys typed (":pending") must land in the prompt, not on bindings.
        self.set_focus(prompt)

    def action_filter(self) -> None:
        if not self.FILTERS:
            self.notify("this view has no filter; : jumps to another view", severity="information")
            return
        self._filter_before = self.filter_text
        prompt = self.command_bar.open(
            "filter", "words or globs anywhere (h100, *80GB*), label=value, attr=value (NVIDIA*H100*)"
        )
        self.command_bar.hint(self.filter_hint(""))
        self.set_focus(prompt)

    def action_jump_to(self, name: str) -> None:
        self.app.jump(name)

    def complete_prompt(self) -> None:
        """tab: take the first view name that matches (jump), nothing in the filter."""
        from dragoman.tui.views import jump_candidates

        bar = self.command_bar
        if bar.mode != "jump":
            return
        cands = jump_candidates(bar.input.value.strip().lstrip(":"))
        if cands:
            bar.input.value = cands[0][0]
            bar.input.cursor_position = len(bar.input.value)

    def prompt_changed(self, value: str) -> None:
        bar = self.command_bar
        if bar.mode == "jump":
            bar.hint(jump_hint(value.strip().lstrip(":")))
        elif bar.mode == "filter":
            self.preview_filter(value.strip())
            bar.hint(self.filter_hint(value.strip()))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "prompt" and self.prompt_mode:
            event.stop()
            self.prompt_changed(event.value)

    def close_prompt(self, restore: bool = True) -> None:
        """esc: close; a filter being typed gives way to the one that was there before."""
        bar = self.command_bar
        if bar.mode == "filter" and restore:
            self.apply_filter(self._filter_before)
        bar.close()
        self.focus_main()

    def submit_prompt(self) -> None:
        """Enter: apply the filter or jump now, so the keys after it already see the result."""
        bar = self.command_bar
        mode, value = bar.mode, bar.input.value.strip()
        self.close_prompt(restore=False)
        if mode == "filter":
            self.apply_filter(value)
        elif mode == "jump":
            self.app.jump(value.lstrip(":"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "prompt" and self.prompt_mode:
            event.stop()
            self.submit_prompt()

    def close_prompt_first(self) -> bool:
        """esc with the bar open closes it (and nothing else): True when it did."""
        if self.prompt_mode:
            self.close_prompt()
            return True
        return False


class ToolScreen(PromptScreen[R]):
    """A tool view with the `:` bar and no filter (Accounting, Load): j/k and the view digits as in the tables."""

    BINDINGS = [
        Binding("j", "move(1)", "Down", show=False, id="tables.down", tooltip="Next row"),
        Binding("k", "move(-1)", "Up", show=False, id="tables.up", tooltip="Previous row"),
        *textual_bindings(VIEW_DIGITS),
    ]

    def __init__(self, name: str) -> None:
        super().__init__(name=name)
        self.ready = False

    def action_back(self) -> None:
        if not self.close_prompt_first():
            self.app.back()

    def action_move(self, delta: int) -> None:
        """j/k as in the other views: move the cursor of the focused table."""
        focused = self.focused
        if isinstance(focused, DataTable):
            (focused.action_cursor_down if delta > 0 else focused.action_cursor_up)()
