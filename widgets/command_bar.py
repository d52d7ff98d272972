"""The `:` jump and `/` filter bar every view shares: a visible line above the footer with the text being typed, and
a hint line (view names that match after `:`, the syntax and live count after `/`). What the keys do is the screen's
prompt component (tui/screens/prompt.py); the bar only shows."""

from __future__ import annotations

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
