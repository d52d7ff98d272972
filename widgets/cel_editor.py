"""The CEL editor: a TextArea whose tab accepts a completion, and the completion list beside it (types and common
values)."""

from __future__ import annotations

from collections.abc import Callable

from dragoman.widgets.completion import Candidate
from textual import events
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option


class CelEditor(TextArea):
    """A selector being written. Tab takes the highlighted completion when the list is showing (else moves focus)."""

    DEFAULT_CSS = """
    CelEditor { height: 6; border: round $primary; }
    CelEditor:focus { border: round $accent; }
    """

    class Accepted(Message):
        """Tab took a completion."""

    def __init__(self, text: str = "", **kw) -> None:
        super().__init__(text, soft_wrap=True, tab_behavior="focus", show_line_numbers=False, **kw)
        # Set by the screen: candidates for the text before the cursor, and which of them the list has highlighted.
        self.completer: Callable[[str], list[Candidate]] | None = None
        self.chosen: Callable[[list[Candidate]], Candidate] = lambda cands: cands[0]

    def text_before_cursor(self) -> str:
        row, col = self.cursor_location
        return self.get_text_range((0, 0), (row, col))

    def apply(self, cand: Candidate) -> None:
        """Replace the partial word before the cursor with the candidate."""
        row, col = self.cursor_location
        # Candidates never span lines: the partial word sits on the cursor's line.
        self.replace(cand.insert, (row, max(0, col - cand.replace)), (row, col))

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "tab" and self.completer is not None:
            # Decided here, synchronously, from the text as it is now: keys typed in a burst (a paste, tmux) are
            # already in the document, while the list's own update waits behind them in the queue.
            cands = self.completer(self.text_before_cursor())
            if cands:
                event.stop()
                event.prevent_default()
                self.apply(self.chosen(cands))
                self.post_message(self.Accepted())
                return
        await super()._on_key(event)


class CompletionList(OptionList):
    """Candidates for the text at the cursor: name, then type, device count and the commonest values."""

    DEFAULT_CSS = """
    CompletionList { height: auto; max-height: 8; border: none; background: $panel; }
    """

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.candidates: list[Candidate] = []

    def show(self, candidates: list[Candidate]) -> None:
        if not candidates and not self.candidates and not self.display:
            return  # called on every keystroke: most have nothing to offer, and an empty hidden list needs no rebuild
        shown = [(c.label, c.detail) for c in self.candidates]
        same = bool(candidates) and self.display and [(c.label, c.detail) for c in candidates] == shown
        self.candidates = candidates
        if same:
            # The list reads the same (another letter of the word it completes, a keystroke inside a string): keep
            # it. Rebuilding costs a relayout of the whole screen, a frame of the device table with it, and would
            # lose the highlight the operator moved. What tab inserts is taken from `candidates`, now the new ones.
            return
        self.clear_options()
        self.add_options([Option(f"{c.label}  [dim]{c.detail}[/dim]" if c.detail else c.label) for c in candidates])
        if candidates:
            self.highlighted = 0
        self.display = bool(candidates)

    def current(self) -> Candidate | None:
        i = self.highlighted
        if i is None or not self.candidates:
            return None
        return self.candidates[min(i, len(self.candidates) - 1)]
