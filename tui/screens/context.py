"""`:ctx`: pick another kubeconfig context; the app reconnects and rebuilds its views."""

from __future__ import annotations

from dragoman.fleet.glyphs import glyph
from dragoman.tui.screens.base import DragomanModal
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import OptionList
from textual.widgets.option_list import Option


class ContextScreen(DragomanModal[str | None]):
    BINDINGS = [Binding("escape,q", "cancel", "Cancel", id="ctx.cancel", tooltip="Keep the current context")]

    DEFAULT_CSS = """
    ContextScreen { align: center middle; }
    ContextScreen > OptionList { width: 60; max-height: 20; border: round $primary; background: $panel; }
    """

    def __init__(self, contexts: list[str], current: str) -> None:
        super().__init__()
        self.contexts = contexts
        self.current = current

    def compose(self) -> ComposeResult:
        ol = OptionList(*[Option((glyph("up") + " " if c == self.current else "  ") + c, id=c) for c in self.contexts])
        ol.border_title = "switch context (enter)"
        yield ol

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        if self.current in self.contexts:
            ol.highlighted = self.contexts.index(self.current)
        ol.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
