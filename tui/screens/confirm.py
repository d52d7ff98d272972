"""The confirmation modal of a write: the pool name typed for a dangerous step, the context name for a
production-looking
context; focus starts in the first name to type, else on Cancel."""

from __future__ import annotations

from dragoman.tui.screens.base import DragomanModal
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Static


class ConfirmWriteScreen(DragomanModal[bool]):
    """Dismissed with True only by Confirm, which stays disabled until every required word is typed exactly."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="confirm.cancel", tooltip="Write nothing")]

    DEFAULT_CSS = """
    ConfirmWriteScreen { align: center middle; }
    ConfirmWriteScreen > Vertical {
        width: 76; max-width: 100%; height: auto; max-height: 100%; border: thick $warning; background: $panel;
        padding: 0 1; }
    /* The plan's lines scroll; the name to type and the buttons always stay on screen (at 80x24 they were cut off). */
    ConfirmWriteScreen #confirm-scroll { height: auto; max-height: 40vh; margin-bottom: 1; }
    ConfirmWriteScreen .confirm-text { height: auto; }
    ConfirmWriteScreen Input { margin-bottom: 1; }
    ConfirmWriteScreen Horizontal { height: auto; align-horizontal: right; }
    ConfirmWriteScreen Button { margin-left: 2; }
    /* Disabled until the word is typed, but still a word that reads (Textual's own dim label was 2.5:1). */
    ConfirmWriteScreen Button#confirm:disabled {
        color: $text-muted; background: $panel-lighten-1; text-style: none; text-opacity: 1; }
    """

    def __init__(
        self, title: str, text: str, *, typed: list[tuple[str, str]] | None = None, confirm_label: str = "Apply"
    ) -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.typed = list(typed or [])  # (prompt, the exact word to type)
        self.confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"[b]{self.title_text}[/b]")
            with VerticalScroll(id="confirm-scroll"):
                yield Static(self.text, classes="confirm-text", markup=False)
            for i, (prompt, _word) in enumerate(self.typed):
                yield Label(prompt)
                yield Input(placeholder="type it here", id=f"typed-{i}")
            with Horizontal():
                yield Button("Cancel", id="cancel", variant="primary")
                yield Button(self.confirm_label, id="confirm", variant="error", disabled=bool(self.typed))

    def on_mount(self) -> None:
        # An enter pressed by habit must write nothing: focus starts where typing is wanted (enter there only moves on
        # once the word is right), or on Cancel.
        if self.typed:
            self.query_one("#typed-0", Input).focus()
        else:
            self.query_one("#cancel", Button).focus()

    def _satisfied(self) -> bool:
        return all(
            self.query_one(f"#typed-{i}", Input).value.strip() == word for i, (_p, word) in enumerate(self.typed)
        )

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_one("#confirm", Button).disabled = not self._satisfied()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self._satisfied():
            self.query_one("#confirm", Button).focus()
        elif event.input.id and event.input.id.startswith("typed-"):
            nxt = int(event.input.id.removeprefix("typed-")) + 1
            if nxt < len(self.typed) and event.value.strip() == self.typed[nxt - 1][1]:
                self.query_one(f"#typed-{nxt}", Input).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "confirm" and self._satisfied():
            self.dismiss(True)
        elif event.button.id == "cancel":
            self.dismiss(False)

    def action_cancel(self) -> None:
        self.dismiss(False)
