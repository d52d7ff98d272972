"""The confirmation modal of a write: the plan's summary and every one of its warnings, the pool name typed for a
dangerous step, the context name for a production-looking context; focus starts in the first name to type, else on
Cancel."""

from __future__ import annotations

from dragoman.tui.screens.base import DragomanModal
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Static

# Rows of the box that are not the plan's text: its border and the room the fit keeps free below it.
_BORDER = 2


class _PlanText(VerticalScroll):
    """The plan's scrolling text: tells its screen when its size or its content's changes, so the line under it says
    how much is out of view."""

    def on_mount(self) -> None:
        self.watch(self, "virtual_size", lambda _s: self._tell(), init=False)

    def on_resize(self, event) -> None:
        self._tell()

    def _tell(self) -> None:
        say = getattr(self.screen, "_say_more", None)
        if callable(say):
            self.call_after_refresh(say)


class _Line(Static):
    """A line shown now and then under the plan's text (what is out of view, a wrong name): once laid out, the plan's
    text is fitted again to the rows left."""

    def on_resize(self, event) -> None:
        fit = getattr(self.screen, "_fit", None)
        if callable(fit):
            self.call_after_refresh(fit)


class ConfirmWriteScreen(DragomanModal[bool]):
    """Dismissed with True only by Confirm, which stays disabled until every required word is typed exactly."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="confirm.cancel", tooltip="Write nothing"),
        # From the name field too: the warnings are read before the name is typed, without leaving the field.
        Binding("pageup", "scroll_plan(-1)", "Scroll up", id="confirm.pageup", tooltip="Scroll the plan's text up"),
        Binding(
            "pagedown", "scroll_plan(1)", "Scroll down", id="confirm.pagedown", tooltip="Scroll the plan's text down"
        ),
    ]

    DEFAULT_CSS = """
    ConfirmWriteScreen { align: center middle; }
    ConfirmWriteScreen > Vertical {
        width: 100; max-width: 100%; height: auto; max-height: 100%; border: thick $warning; background: $panel;
        padding: 0 1; border-title-style: bold; border-title-color: $text; }
    /* The plan's text takes the rows the prompt, the field and the buttons leave (set by _fit): every warning in view
       at 80x24 when it fits; when it does not, the line under it says how much is below and which key scrolls. */
    ConfirmWriteScreen #confirm-scroll { height: auto; }
    ConfirmWriteScreen .confirm-text { height: auto; }
    ConfirmWriteScreen #confirm-more { height: 1; color: $text-warning; text-style: bold; display: none; }
    ConfirmWriteScreen .typed-prompt { margin-top: 1; }
    ConfirmWriteScreen #confirm-wrong { height: auto; color: $text-error; text-style: bold; display: none; }
    ConfirmWriteScreen #confirm-ready { height: auto; color: $text-success; text-style: bold; display: none; }
    ConfirmWriteScreen Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmWriteScreen Button { margin-left: 2; }
    /* Disabled until the word is typed, but still a word that reads (Textual's own dim label was 2.5:1). */
    ConfirmWriteScreen Button#confirm:disabled {
        color: $text-muted; background: $panel-lighten-1; text-style: none; text-opacity: 1; }
    """

    def __init__(
        self,
        title: str,
        text: str,
        *,
        warnings: list[str] | None = None,
        footnote: str = "",
        typed: list[tuple[str, str]] | None = None,
        confirm_label: str = "Apply",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.warnings = list(warnings or [])
        self.footnote = footnote
        self.typed = list(typed or [])  # (prompt, the exact word to type)
        self.confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        from rich.table import Table
        from rich.text import Text

        with Vertical() as box:
            box.border_title = self.title_text  # on the border: one more row for the plan's text
            with _PlanText(id="confirm-scroll"):
                yield Static(self.text, classes="confirm-text", markup=False)
                if self.warnings:
                    # A grid, so a warning's wrapped lines start under its words, not under the ⚠.
                    grid = Table.grid()
                    grid.add_column(width=2, no_wrap=True)
                    grid.add_column()
                    for w in self.warnings:
                        grid.add_row(Text("⚠", style="bold"), Text(w))
                    yield Static(grid, classes="confirm-text", id="confirm-warnings")
                if self.footnote:
                    yield Static(self.footnote, classes="confirm-text", markup=False)
            yield _Line("", id="confirm-more", markup=False)
            for i, (prompt, _word) in enumerate(self.typed):
                yield Label(prompt, classes="typed-prompt", markup=False)
                yield Input(placeholder="type it here", id=f"typed-{i}")
            yield _Line("", id="confirm-wrong", markup=False)
            yield _Line("", id="confirm-ready", markup=False)
            with Horizontal():
                # Compact (one row each): two more rows for the warnings at 80x24.
                yield Button("Cancel", id="cancel", variant="primary", compact=True)
                yield Button(self.confirm_label, id="confirm", variant="error", disabled=bool(self.typed), compact=True)

    def on_mount(self) -> None:
        # An enter pressed by habit must write nothing: focus starts where typing is wanted (enter there only moves on
        # once the word is right), or on Cancel.
        if self.typed:
            self.query_one("#typed-0", Input).focus()
        else:
            self.query_one("#cancel", Button).focus()
        scroll = self.query_one("#confirm-scroll", VerticalScroll)
        self.watch(scroll, "scroll_y", lambda _y: self._say_more(), init=False)
        self.call_after_refresh(self._fit)

    def on_resize(self, event) -> None:
        self.call_after_refresh(self._fit)

    # ------------------------------------------------------------------ the plan's text in the room there is
    def _fit(self) -> None:
        """Give the plan's text every row the rest of the box leaves. With a fixed share (40% of the screen) the
        warnings scrolled out of sight at 80x24 while the box had empty rows under its buttons."""
        scroll = self.query_one("#confirm-scroll", VerticalScroll)
        box = self.query_one(Vertical)
        others = sum(
            w.outer_size.height + w.styles.margin.top + w.styles.margin.bottom
            for w in box.children
            if w is not scroll and w.display
        )
        room = max(3, self.size.height - _BORDER - others)
        if scroll.styles.max_height is None or scroll.styles.max_height.value != room:
            scroll.styles.max_height = room
            # Again once laid out: a line just shown (the wrong-name sentence) has its height only then.
            self.call_after_refresh(self._fit)
        self.call_after_refresh(self._say_more)

    def _say_more(self) -> None:
        """The line under the plan's text: how many of its lines are out of view, and the keys that bring them."""
        scroll = self.query_one("#confirm-scroll", VerticalScroll)
        more = self.query_one("#confirm-more", _Line)
        below = max(0, round(scroll.max_scroll_y - scroll.scroll_y))
        if scroll.max_scroll_y <= 0:
            if more.display:
                more.display = False
                self.call_after_refresh(self._fit)
            return
        if below:
            lines = f"{below} more line{'s' if below != 1 else ''}"
            more.update(f"↓ {lines} of the plan below: read them first (pgdn or the wheel)")
        else:
            more.update("↑ the end of the plan: pgup scrolls back")
        if not more.display:
            more.display = True
            self.call_after_refresh(self._fit)

    def action_scroll_plan(self, direction: int) -> None:
        scroll = self.query_one("#confirm-scroll", VerticalScroll)
        if direction > 0:
            scroll.scroll_page_down(animate=False)
        else:
            scroll.scroll_page_up(animate=False)

    # ------------------------------------------------------------------ the words to type
    def _satisfied(self) -> bool:
        return all(
            self.query_one(f"#typed-{i}", Input).value.strip() == word for i, (_p, word) in enumerate(self.typed)
        )

    def _wrong(self, text: str) -> None:
        wrong = self.query_one("#confirm-wrong", _Line)
        if wrong.display != bool(text):
            self.call_after_refresh(self._fit)
        wrong.update(text)
        wrong.display = bool(text)

    def _ready(self) -> None:
        """Once every word is right, the line says what enter does next: it moves to the button, and only enter there
        writes. Without it, the first enter seemed to do nothing."""
        ready = self.query_one("#confirm-ready", _Line)
        show = bool(self.typed) and self._satisfied()
        if ready.display != show:
            self.call_after_refresh(self._fit)
        label = self.confirm_label
        on = self.focused.id if self.focused is not None else None
        if not show:
            ready.update("")
        elif on == "confirm":
            ready.update(f"✓ Enter on {label} writes. Esc cancels.")
        elif on == "cancel":
            ready.update(f"✓ Typed right. Enter on Cancel writes nothing; {label} writes.")
        else:
            ready.update(f"✓ Typed right. Enter moves to {label}; enter there writes. Esc cancels.")
        ready.display = show

    def on_descendant_focus(self, event) -> None:
        self._ready()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_one("#confirm", Button).disabled = not self._satisfied()
        self._wrong("")
        self._ready()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not (event.input.id and event.input.id.startswith("typed-")):
            return
        i = int(event.input.id.removeprefix("typed-"))
        word = self.typed[i][1]
        if event.value.strip() != word:
            # Enter with the wrong word confirms nothing, and says so: it used to do nothing and say nothing.
            typed = event.value.strip()
            said = f"“{typed}” is not the name" if typed else "Nothing typed yet"
            self._wrong(f"✗ {said}: type {word} exactly to enable {self.confirm_label}")
            return
        if self._satisfied():
            self.query_one("#confirm", Button).focus()
        else:
            nxt = next(
                j for j, (_p, w) in enumerate(self.typed) if self.query_one(f"#typed-{j}", Input).value.strip() != w
            )
            self.query_one(f"#typed-{nxt}", Input).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "confirm" and self._satisfied():
            self.dismiss(True)
        elif event.button.id == "cancel":
            self.dismiss(False)

    def action_cancel(self) -> None:
        self.dismiss(False)
