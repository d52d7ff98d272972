"""The `:` jump and `/` filter bar every view shares: a visible line above the footer with the text being typed, and a
hint line (view names that match after `:`, the syntax and live count after `/`)."""

from __future__ import annotations

from dragoman.tui.views import jump_candidates
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Static

SIGILS = {"jump": ":", "filter": "/"}


class CommandBar(Vertical):
    """Hidden until `:` or `/`; the Input keeps the id `prompt` because the app routes typed keys to it."""

    DEFAULT_CSS = """
    CommandBar { height: auto; display: none; background: $boost; }
    CommandBar.-open { display: block; }
    CommandBar > Horizontal { height: 1; }
    CommandBar #prompt-sigil { width: 3; padding: 0 0 0 1; color: $text-accent; text-style: bold; background: $boost; }
    CommandBar > Horizontal > Input#prompt {
        height: 1; width: 1fr; border: none; padding: 0; background: $boost; color: $foreground; }
    CommandBar > Horizontal > Input#prompt:focus { border: none; background: $boost; }
    CommandBar > Horizontal > Input#prompt > .input--placeholder { color: $text-muted; }
    CommandBar #prompt-hint {
        height: 1; padding: 0 1; color: $text-muted; background: $boost; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self) -> None:
        super().__init__(id="command-bar")
        self.mode = ""

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Static(":", id="prompt-sigil")
            yield Input(id="prompt", select_on_focus=False)
        yield Static("", id="prompt-hint", markup=True)

    @property
    def input(self) -> Input:
        return self.query_one("#prompt", Input)

    def open(self, mode: str, placeholder: str) -> Input:
        self.mode = mode
        self.query_one("#prompt-sigil", Static).update(SIGILS.get(mode, ">"))
        prompt = self.input
        # Always empty: the current filter is in the heading; typing replaces it rather than appending to it.
        prompt.value = ""
        prompt.placeholder = placeholder
        self.add_class("-open")
        return prompt

    def close(self) -> None:
        self.mode = ""
        self.remove_class("-open")

    def hint(self, markup: str) -> None:
        self.query_one("#prompt-hint", Static).update(markup)


def jump_hint(text: str) -> str:
    """The hint under `:`: the views whose names or aliases start with what is typed, the first one bold (tab takes
    it)."""
    from rich.markup import escape

    cands, seen = [], set()
    for alias, target in jump_candidates(text):
        if target not in seen:  # each view once, by the first name that matched
            seen.add(target)
            cands.append((alias, target))
    if not cands:
        return f"[b $text-error]no view named {escape(text)!r}[/] — backspace, or esc closes"
    shown = [escape(a if a == t else f"{a}→{t}") for a, t in cands]
    shown[0] = f"[b reverse]{shown[0]}[/]"
    return "  ".join(shown) + "   [dim]tab completes · enter jumps · esc closes[/]"


class PromptMixin:
    """What a screen with the bar does: `:` (and `/` where the screen filters) opens it, enter submits, esc closes.

    The screen provides `focus_main()`; a filtering screen sets FILTERS and provides `apply_filter(text)` and
    `preview_filter(text)` (live, as the operator types) and `filter_text`.
    """

    FILTERS = False

    @property
    def _prompt_mode(self) -> str:
        bars = self.query(CommandBar)
        return bars.first().mode if bars else ""

    @property
    def command_bar(self) -> CommandBar:
        return self.query_one(CommandBar)

    def focus_main(self) -> None:
        pass

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

    def filter_hint(self, text: str) -> str:
        return ""

    def complete_prompt(self) -> None:
        """tab: take the first view name that matches (jump), nothing in the filter."""
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
        if event.input.id == "prompt" and self._prompt_mode:
            event.stop()
            self.prompt_changed(event.value)

    def close_prompt(self, restore: bool = True) -> None:
        """esc: close; a filter being typed gives way to the one that was there before."""
        bar = self.command_bar
        if bar.mode == "filter" and restore:
            self.apply_filter(getattr(self, "_filter_before", ""))
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
        if event.input.id == "prompt" and self._prompt_mode:
            event.stop()
            self.submit_prompt()
