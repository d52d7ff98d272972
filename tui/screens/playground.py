"""The CEL playground (`:cel`): write a selector, see live which devices it picks and why the others are left out, then
generate, save or apply objects."""

from __future__ import annotations

import pathlib
import time
from typing import Any, cast

from dragoman.fleet import cel_generate as G
from dragoman.fleet import cel_playground as P
from dragoman.fleet.errors import printable
from dragoman.fleet.glyphs import glyph
from dragoman.tui.bindings import GENERATE_KEYS, PLAYGROUND_MOVES, dangerous_actions, textual_bindings
from dragoman.tui.screens.base import DragomanModal, DragomanScreen, PaletteCommand
from dragoman.tui.screens.prompt import PromptScreen
from dragoman.widgets.cel_editor import CelEditor, CompletionList
from dragoman.widgets.cel_results import (
    COLUMNS,
    ResultTable,
    caret_in_view,
    counts_markup,
    errors_markup,
    fill,
    filtered,
)
from dragoman.widgets.command_bar import CommandBar
from dragoman.widgets.completion import candidates
from dragoman.widgets.footer import SteadyFooter
from dragoman.widgets.header import StatusHeader
from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Input, Label, OptionList, Select, Static, TextArea
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

DEBOUNCE = 0.015  # seconds of quiet before a keystroke's evaluation starts (a paste or a burst evaluates once)
DEFAULT_EXPRESSION = 'device.driver == "gpu.nvidia.com"'
# A selector put in the editor whole (the example, a class's, a pod's, one from the history) opens selected, as an
# address bar does: typing replaces it, → or End keeps it and edits at its end (typing after it made a syntax error).
SELECTED_HINT = "[$text-muted]the whole selector is selected: type to replace it · → or End to edit it[/]"


def history(app) -> list[str]:
    """The session's expressions, oldest first (kept on the app, so leaving the playground keeps them)."""
    if not hasattr(app, "cel_history"):
        app.cel_history = []
    return app.cel_history


def remember(app, expression: str) -> None:
    h = history(app)
    expression = expression.strip()
    if expression and (not h or h[-1] != expression):
        if expression in h:
            h.remove(expression)
        h.append(expression)


def _show(static: Static, markup: str) -> None:
    """Update one of the fixed-height lines: nothing when the text is the same, and never a relayout (the size cannot
    change)."""
    if getattr(static, "_cel_markup", None) != markup:
        cast(Any, static)._cel_markup = markup  # remembered on the widget: the last markup it was given
        static.update(markup, layout=False)


class Evaluated(Message):
    """Counts for one keystroke's expression (posted by the evaluation thread)."""

    def __init__(self, gen: int, outcome: P.Outcome, seconds: float) -> None:
        super().__init__()
        self.gen, self.outcome, self.seconds = gen, outcome, seconds


class Explained(Message):
    """Rows and reasons for the same expression, once the first false clauses are known."""

    def __init__(self, gen: int, outcome: P.Outcome) -> None:
        super().__init__()
        self.gen, self.outcome = gen, outcome


class PlaygroundScreen(PromptScreen[None]):
    """One selector against every device of the fleet, evaluated as the operator types."""

    help_title = "CEL playground"
    # Help tells the truth for this screen: its editor types `:` and `?` (the app's words were ": then a name").
    help_moves = PLAYGROUND_MOVES
    help_views = "Views (^t to the device table, then : and a name or alias; esc goes back):"
    # `/` on the device table (the editor types `/`): its rows by words, result=near-miss, product=*H100*, pool=…
    FILTERS = True

    BINDINGS = [
        Binding("escape", "back", "Back", id="cel.back", tooltip="Close the completion list, or go back"),
        Binding(
            "ctrl+space",
            "complete",
            "Complete",
            id="cel.complete",
            tooltip="Attribute, capacity and value names the fleet publishes (tab takes the first)",
            priority=True,
        ),
        # Footer words kept short: at 120 columns the footer ran into "^p palette" ("^r Re ^pp alette").
        Binding(
            "ctrl+o",
            "open_from",
            "From",
            id="cel.open",
            tooltip="Start from an existing DeviceClass or claim request and see what it matches today",
            priority=True,
        ),
        Binding("ctrl+e", "history", "History", id="cel.history", tooltip="Expressions of this session", priority=True),
        Binding(
            "ctrl+g",
            "generate",
            "Generate",
            id="cel.generate",
            tooltip="DeviceClass, tier classes or a ResourceClaimTemplate from this selector",
            priority=True,
        ),
        Binding(
            "ctrl+t",
            "toggle_focus",
            "Table",
            id="cel.focus",
            tooltip="Move between the editor and the device table",
            priority=True,
        ),
        Binding(
            "f2",
            "copy_expression",
            "Copy",
            id="cel.copy",
            tooltip="Copy the expression to the clipboard",
            priority=True,
        ),
    ]
    DEFAULT_CSS = """
    PlaygroundScreen #cel-title { height: 1; padding: 0 1; text-style: bold; background: $boost; }
    PlaygroundScreen #cel-base { height: auto; padding: 0 1; color: $text-muted; }
    PlaygroundScreen #cel-error { height: 3; padding: 0 1; color: $error; text-wrap: nowrap; text-overflow: ellipsis; }
    PlaygroundScreen #cel-counts { height: 3; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    PlaygroundScreen #cel-errors { height: 3; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    PlaygroundScreen #cel-table { height: 1fr; }
    """

    def __init__(self, start: P.Start | None = None) -> None:
        super().__init__(name="cel")
        self._given_start = start
        self.start = start or P.Start(DEFAULT_EXPRESSION)
        self.ready = False
        self.gen = 0  # bumped by every edit; an evaluation of an older gen stops and its result is dropped
        self.shown_gen = -1  # the edit whose counts are on screen
        self.explained_gen = -1  # the edit whose rows and reasons are on screen
        self.outcome: P.Outcome | None = None
        self._rows_shown: list | None = None
        self._suppressed: str | None = None  # text before the cursor when esc closed the completion list
        self._epoch = None
        self._slices = None
        self._timer: Timer | None = None
        self._typed_at: dict[int, float] = {}
        self.latencies: list[float] = []  # keystroke → counts on screen, seconds (the benchmark reads them)
        self._row_filter: Any = None  # the `/` filter of the device table (fleet/views/filter.RowFilter)

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield StatusHeader()
        with Vertical(id="body"):
            yield Static("", id="cel-title")
            yield Static("", id="cel-base")
            yield CelEditor(self.start.expression, id="cel-editor")
            yield CompletionList(id="cel-completion")
            yield Static("", id="cel-error")
            yield Static("evaluating…", id="cel-counts")
            yield Static("", id="cel-errors")
            table: DataTable = ResultTable(id="cel-table", cursor_type="row", zebra_stripes=False)
            table.add_columns(*COLUMNS)
            yield table
        yield CommandBar()
        yield SteadyFooter()

    @property
    def editor(self) -> CelEditor:
        return self.query_one("#cel-editor", CelEditor)

    @property
    def completion(self) -> CompletionList:
        return self.query_one("#cel-completion", CompletionList)

    @property
    def model(self):
        return self.app.feed.model

    def catalogue(self) -> dict:
        return self.app.feed.fleet.catalogue or self.model.attribute_catalogue()

    def on_mount(self) -> None:
        resume = getattr(self.app, "cel_resume", None)
        if self._given_start is None and resume is not None:
            # `:cel` after esc: the selector the operator left, not the default.
            self.start = resume
            self.editor.load_text(resume.expression)
        self.completion.display = False
        self.app.refresh_header(self)
        self._show_start()
        self.editor.completer = self._auto_candidates
        self.editor.chosen = self._chosen
        self._select_whole()
        self.schedule(0)
        self.ready = True
        self.app.screen_ready()

    def on_resize(self, event) -> None:
        # At 24 lines a 4-line editor left the device table 2 rows: two lines of selector there, scrolling beyond.
        self.editor.styles.height = 4 if self.size.height < 30 else 6

    def _show_start(self) -> None:
        st = self.start
        self.query_one("#cel-title", Static).update(f"CEL playground — {escape(st.title)}")
        base = self.query_one("#cel-base", Static)
        if st.base:
            base.update(f"applied first ({escape(st.base_label)}): " + " ; ".join(escape(e) for e in st.base))
        base.display = bool(st.base)

    def load(self, start: P.Start) -> None:
        """Edit another selector (from a class, a claim request, a pod or the history)."""
        remember(self.app, self.editor.text)
        self.start = start
        self._show_start()
        self.editor.load_text(start.expression)
        self._select_whole()

    def _select_whole(self) -> None:
        """The editor focused with its whole text selected (see SELECTED_HINT)."""
        self.editor.focus()
        self.editor.select_all()
        self._show_hint()

    def whole_selected(self) -> bool:
        editor = self.editor
        return bool(editor.text) and not editor.selection.is_empty and editor.selected_text == editor.text

    def _show_hint(self) -> None:
        """The error line says the selector is selected while it is (and no compile error needs the line)."""
        out = self.outcome
        if out is not None and out.compile_error is not None and out.expression == self.editor.text:
            return
        _show(self.query_one("#cel-error", Static), SELECTED_HINT if self.whole_selected() else "")

    @on(TextArea.SelectionChanged, "#cel-editor")
    def _selection_moved(self, event: TextArea.SelectionChanged) -> None:
        self._show_hint()

    # ------------------------------------------------------------------ evaluation
    @on(TextArea.Changed, "#cel-editor")
    def _edited(self, event: TextArea.Changed) -> None:
        self.gen += 1
        self._typed_at[self.gen] = time.perf_counter()
        self._update_completion(auto=True)
        self.schedule(DEBOUNCE)

    def schedule(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.stop()
        if delay <= 0:
            self._kick()
        else:
            self._timer = self.set_timer(delay, self._kick)

    def _kick(self) -> None:
        self._timer = None
        epoch = self.model.cel_epoch
        if epoch != self._epoch or self._slices is None:
            # Slices or classes changed (or first run): the thread converts the new generation of devices.
            self._epoch = epoch
            self._slices = self.model.current_slices()
        self._gen_at_kick = self.gen
        self.evaluate(self.gen, self.editor.text, list(self.start.base), self.start.base_label, self._slices, epoch)

    @work(exclusive=True, thread=True, group="cel-eval", description="evaluate the selector on every device")
    def evaluate(self, gen: int, expression: str, base: list[str], base_label: str, slices, epoch: int) -> None:
        worker = get_current_worker()

        def stale() -> bool:
            # Called every few hundred evaluations: also hand the GIL to the UI thread, so keys keep flowing.
            time.sleep(0)
            return worker.is_cancelled or self.gen != gen

        # The model's one index of its devices (fleet/selectors.py), built here off the UI thread from the slices read
        # on it; kept by the model only if its slices and classes have not changed meanwhile.
        index = self.model.selectors.index(self.model, slices, epoch)
        # With the conversion, not on the first keystroke that reads a name: which names devices publish.
        index.published()
        if stale():
            return
        t0 = time.perf_counter()
        out, ev = P.evaluate(index, base, base_label, expression, cancel=stale)
        if out.cancelled or stale():
            return
        if ev is not None:
            # With the counts (a millisecond or two once the device states are read), so the counts line is drawn
            # once and whole: it grew when the explanation brought this, a redraw more on every keystroke that compiled.
            out.allocatable = P.allocatable_now(ev, self.model, short=True)
        self.post_message(Evaluated(gen, out, time.perf_counter() - t0))
        if ev is None:
            return
        P.explain(out, ev, base, base_label, cancel=stale)
        if not out.cancelled and not stale():
            self.post_message(Explained(gen, out))

    def on_evaluated(self, msg: Evaluated) -> None:
        if msg.gen != self.gen:
            return
        typed = self._typed_at.pop(msg.gen, None)
        if typed is not None:
            self.latencies.append(time.perf_counter() - typed)
        for g in [g for g in self._typed_at if g < msg.gen]:
            del self._typed_at[g]
        out = msg.outcome
        self.outcome = out
        self.shown_gen = msg.gen
        err = self.query_one("#cel-error", Static)
        counts = self.query_one("#cel-counts", Static)
        if out.compile_error is not None:
            e = out.compile_error
            where = f"line {e.line}, column {e.column}: " if e.line is not None else ""
            more = len(e.issues) + e.truncated - 1
            # cel-go recovered past it to more: the API server's answer lists them all (`dragoman cel` prints them).
            tail = f" (1 of {more + 1} errors)" if more > 0 else ""
            # A pasted control character is shown escaped, and the caret stays under the character it points at.
            caret = caret_in_view(e.caret(out.expression, terminal=True), err.content_region.width or err.size.width)
            # Fixed heights, shown or blank: a keystroke never changes the layout (a relayout costs a frame), see _show.
            # One line each, cut with an ellipsis: a wrapped message pushed the caret line out of sight.
            _show(err, f"✗ {escape(where + printable(e.message) + tail)}" + (f"\n{escape(caret)}" if caret else ""))
            _show(counts, "[dim](counts of the last expression that compiled are not shown: fix the error first)[/dim]")
            _show(self.query_one("#cel-errors", Static), "")
            return
        _show(err, SELECTED_HINT if self.whole_selected() else "")
        _show(counts, counts_markup(out, self.app.feed.fleet.model.pool_of_node))

    def on_explained(self, msg: Explained) -> None:
        if msg.gen != self.gen:
            return
        self.outcome = msg.outcome
        self.explained_gen = msg.gen
        # The counts line is Evaluated's: the explanation adds reasons and rows, not counts.
        _show(self.query_one("#cel-errors", Static), errors_markup(msg.outcome))
        self._fill_table()

    def _fill_table(self) -> None:
        out = self.outcome
        if out is None or self.explained_gen < 0:
            return
        shown = filtered(out, self._row_filter)
        if shown.rows != self._rows_shown:
            self._rows_shown = shown.rows
            fill(self.query_one("#cel-table", DataTable), shown)

    # ------------------------------------------------------------------ `/` on the device table
    def apply_filter(self, text: str) -> None:
        from dragoman.fleet.views.filter import parse_filter

        self.filter_text = text
        self._row_filter = parse_filter(text)
        self._fill_table()

    def preview_filter(self, text: str) -> None:
        self.apply_filter(text)

    def filter_hint(self, text: str) -> str:
        if not text:
            return "enter applies · e.g. h100  result=near-miss  product=*A100*  pool=*h100*  (counts stay the fleet's)"
        total = len(self.outcome.rows) if self.outcome is not None else 0
        shown = len(self._rows_shown or [])
        tone = "$text-success" if shown else "$text-error"
        return f"[{tone}]{shown} of {total} rows match[/] · enter applies · esc restores the previous filter"

    # ------------------------------------------------------------------ completion
    def _auto_candidates(self, before: str) -> list:
        cands = [c for c in candidates(self.catalogue(), before) if before[len(before) - c.replace :] != c.insert]
        cands = [c for c in cands if c.label != "device"]  # only on request: it would pop up on every "d"
        sup = self._suppressed
        if sup is not None and before.startswith(sup) and all(ch.isalnum() or ch == "_" for ch in before[len(sup) :]):
            return []  # esc closed the list: keep it closed while the same word is typed
        return cands

    def _chosen(self, cands: list):
        comp = self.completion
        if comp.display and [c.insert for c in comp.candidates] == [c.insert for c in cands]:
            return comp.current() or cands[0]
        return cands[0]

    def _update_completion(self, auto: bool) -> None:
        # Decided from the text alone (not from which key arrived): a burst of keys lands before its Changed events.
        before = self.editor.text_before_cursor()
        if auto:
            cands = self._auto_candidates(before)
        else:
            cands = [c for c in candidates(self.catalogue(), before) if before[len(before) - c.replace :] != c.insert]
        self.completion.show(cands)

    def action_complete(self) -> None:
        self._suppressed = None
        self._update_completion(auto=False)
        if not self.completion.candidates:
            self.notify('nothing to complete here; try after device. or device.attributes["', severity="information")
            return
        self.completion.focus()

    @on(CelEditor.Accepted)
    def _accepted(self) -> None:
        self.completion.display = False

    @on(OptionList.OptionSelected, "#cel-completion")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self._take(self.completion.candidates[event.option_index])

    def _take(self, cand) -> None:
        self.completion.display = False
        if cand is not None:
            self.editor.apply(cand)
        self.editor.focus()

    def _close_completion(self) -> bool:
        if self.completion.display:
            self._suppressed = self.editor.text_before_cursor()
            self.completion.display = False
            self.editor.focus()
            return True
        return False

    # ------------------------------------------------------------------ starts, history, generate
    def action_open_from(self) -> None:
        model = self.model
        items: list[tuple[str, P.Start]] = []
        for name in sorted(model.classes()):
            items.append((f"DeviceClass {name}", P.start_from_class(model, name)))
        for title, body, ns in P.claim_requests_of(model):
            items.append((title, P.start_from_request(model, body, title, ns)))
        self.app.push_screen(PickerScreen("Start from", [(t, s) for t, s in items]), self._picked_start)

    def _picked_start(self, start) -> None:
        if start is not None:
            self.load(start)

    def action_history(self) -> None:
        remember(self.app, self.editor.text)
        h = list(reversed(history(self.app)))
        if not h:
            self.notify("no expressions yet in this session", severity="information")
            return
        self.app.push_screen(
            PickerScreen("Expressions of this session (newest first)", [(e, e) for e in h]), self._picked_history
        )

    def _picked_history(self, expression) -> None:
        if expression is not None:
            self.editor.load_text(expression)
            self._select_whole()

    def action_generate(self) -> None:
        if (
            self.outcome is not None
            and self.outcome.compile_error is not None
            and self.outcome.expression == self.editor.text
        ):
            self.notify("fix the compile error first: Kubernetes would reject this selector", severity="error")
            return
        remember(self.app, self.editor.text)
        out = self.outcome
        counts = (
            out.summary if out is not None and out.summary is not None and out.expression == self.editor.text else None
        )
        self.app.push_screen(GenerateScreen(self.editor.text, self.start, self.catalogue(), counts=counts))

    def action_copy_expression(self) -> None:
        remember(self.app, self.editor.text)
        self.app.copy_to_clipboard(self.editor.text)
        self.notify("expression copied to the clipboard")

    def action_toggle_focus(self) -> None:
        table = self.query_one("#cel-table", DataTable)
        if self.focused is self.editor:
            table.focus()
        else:
            self.editor.focus()

    def action_back(self) -> None:
        if not self.close_prompt_first() and not self._close_completion():
            # Nothing is thrown away: the selector stays in the history and `:cel` opens on it again.
            remember(self.app, self.editor.text)
            import dataclasses

            self.app.cel_resume = dataclasses.replace(self.start, expression=self.editor.text)
            if self.editor.text.strip() != DEFAULT_EXPRESSION:
                self.app.notify("selector kept: :cel opens on it again, ctrl+e lists this session's expressions")
            self.app.back()

    # ------------------------------------------------------------------ `:` prompt (from the table; the editor takes
    # `:` as text)
    def action_filter(self) -> None:
        self._return_to = self.focused
        super().action_filter()

    def action_jump_prompt(self) -> None:
        self._return_to = self.focused
        super().action_jump_prompt()

    def focus_main(self) -> None:
        # Back where the `:` or `/` was typed (both open from the device table: the editor types them).
        table = self.query_one("#cel-table", DataTable)
        if getattr(self, "_return_to", None) is table:
            table.focus()
        else:
            self.editor.focus()

    def palette_commands(self) -> list[PaletteCommand]:
        return [
            ("playground: complete", "names the fleet publishes (ctrl+space)", self.action_complete),
            ("playground: start from", "a DeviceClass or a claim request (ctrl+o)", self.action_open_from),
            ("playground: history", "expressions of this session (ctrl+e)", self.action_history),
            ("playground: generate", "DeviceClass, tiers or claim template (ctrl+g)", self.action_generate),
            ("playground: copy expression", "to the clipboard (f2)", self.action_copy_expression),
        ]


class PickerScreen(DragomanModal):
    """A list to choose from (start points, history); enter picks, esc cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="picker.cancel", tooltip="Close without choosing")]
    DEFAULT_CSS = """
    PickerScreen { align: center middle; }
    PickerScreen > Vertical { width: 90%; height: auto; max-height: 80%; border: round $primary; background: $surface; }
    PickerScreen OptionList { height: auto; max-height: 30; }
    """

    def __init__(self, title: str, items: list[tuple[str, object]]) -> None:
        super().__init__()
        self.title_text = title
        self.items = items

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield OptionList(*[Option(escape(t)) for t, _ in self.items], id="picker")

    def on_mount(self) -> None:
        self.query_one("#picker", OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.items[event.option_index][1])

    def action_cancel(self) -> None:
        self.dismiss(None)


KINDS = [
    ("DeviceClass", "class"),
    ("tier classes, one per product", "tiers-product"),
    ("tier classes, one per MIG profile", "tiers-mig"),
    ("ResourceClaimTemplate (+ pod snippet)", "template"),
]


class GenerateScreen(DragomanScreen):
    """Objects from the selector: a YAML preview, its warnings, and save / server dry run / apply / copy."""

    help_title = "generate objects from the selector"
    # Its fields type `:`: the views are reached from the playground's device table.
    help_views = "Views (esc back to the playground, ^t to its device table, then : and a name or alias):"

    # One labelled field per line, so every label reads in full at 80 columns. The focused row is marked in code
    # (`-current`: ▶ and a reversed label), not with :focus-within, whose descendant rule kept a stale style (the label
    # of the first row stayed reversed while the name was being typed). Fields have a background of their own that
    # reads at 256 colours too (the old $boost fell one step from the screen's, and no box was seen).
    DEFAULT_CSS = """
    GenerateScreen #gen-form { height: auto; padding: 0 1; }
    GenerateScreen #gen-title { height: auto; max-height: 2; padding: 0 1; }
    GenerateScreen .gen-row { height: 1; }
    GenerateScreen .gen-row .gen-mark { width: 2; height: 1; color: $text-accent; }
    GenerateScreen .gen-row Label { width: 22; height: 1; color: $text-muted; }
    GenerateScreen .gen-row.-current Label { color: $text; text-style: bold reverse; }
    GenerateScreen .gen-row Input { width: 1fr; height: 1; border: none; padding: 0 1; background: $panel-lighten-2; }
    GenerateScreen .gen-row Input:focus { background: $primary-darken-1; }
    GenerateScreen .gen-row Input > .input--placeholder { color: $text-muted; }
    GenerateScreen .gen-row Select { width: 1fr; }
    GenerateScreen .gen-row Select > SelectCurrent { background: $panel-lighten-2; padding: 0 1; }
    GenerateScreen .gen-row Select > SelectCurrent .arrow { color: $foreground; }
    GenerateScreen .gen-row Select:focus > SelectCurrent { background: $primary-darken-1; }
    GenerateScreen #gen-problem { height: auto; padding: 0 1; color: $text-error; text-style: bold; }
    GenerateScreen #gen-warnings { height: auto; padding: 0 1; color: $text-warning; }
    GenerateScreen #gen-notes { height: auto; padding: 0 1; color: $text-muted; }
    GenerateScreen #gen-yaml { height: 1fr; }
    GenerateScreen #gen-status { height: auto; padding: 0 1; }
    """

    def __init__(self, expression: str, start: P.Start, catalogue: dict, counts: dict | None = None) -> None:
        super().__init__(name="cel-generate")
        self.counts = counts  # the playground's counts for this expression (None: not evaluated)
        self.expression = expression
        self.start = start
        self.catalogue = catalogue
        self.generated: G.Generated | None = None
        self.ready = False

    @property
    def read_only(self) -> bool:
        return bool(getattr(self.app, "read_only", False))

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        with Vertical():
            yield Static("[b]Generate[/b] from: " + escape(self.expression), id="gen-title")
            with Vertical(id="gen-form"):
                with Horizontal(classes="gen-row"):
                    yield Static(" ", classes="gen-mark")
                    yield Label("generate")
                    yield Select(KINDS, value="class", allow_blank=False, id="gen-kind", compact=True)
                for ident, label, value, hint in (
                    ("name", "name", "", "class or template name; prefix of tier names"),
                    ("ern", "extendedResourceName", "", "optional, e.g. example.com/gpu (pods ask for it in limits)"),
                    ("ns", "namespace (template)", self.start.namespace or "default", ""),
                    ("path", "save to (ctrl+s)", "", ""),
                ):
                    with Horizontal(classes="gen-row"):
                        yield Static(" ", classes="gen-mark")
                        yield Label(label)
                        yield Input(value, placeholder=hint, id=f"gen-{ident}", compact=True)
            yield Static("", id="gen-problem", markup=False)
            yield Static("", id="gen-warnings")
            yield Static("", id="gen-notes")
            yield TextArea("", read_only=True, id="gen-yaml")
            yield Static("", id="gen-status")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.app.refresh_header(self)
        self.query_one("#gen-name", Input).focus()
        self.regenerate()
        self.ready = True
        self.app.screen_ready()

    def on_descendant_focus(self, event) -> None:
        self.mark_current()

    def mark_current(self) -> None:
        """The focus mark (›) and a reversed label on the row whose field has the focus; nothing marked when the YAML
        has it."""
        focused = self.focused
        for row in self.query(".gen-row"):
            here = focused is not None and focused in row.query("Input, Select")
            row.set_class(here, "-current")
            row.query_one(".gen-mark", Static).update(glyph("focus") if here else " ")

    def current_field(self) -> str:
        """The label of the marked row ("" when none is): what a screen reader of the picture would call focus."""
        rows = self.query(".gen-row.-current")
        return str(rows.first().query_one(Label).render()) if rows else ""

    BINDINGS = textual_bindings(GENERATE_KEYS)
    DANGEROUS = dangerous_actions(GENERATE_KEYS)

    def check_action(self, action: str, parameters) -> bool | None:
        # Read-only mode: the keys that reach the cluster do not exist at all (not shown, not run).
        if action in self.DANGEROUS and self.read_only:
            return False
        return True

    def field(self, name: str) -> str:
        return self.query_one(f"#gen-{name}", Input).value.strip()

    @on(Input.Changed)
    @on(Select.Changed)
    def _changed(self, event) -> None:
        if getattr(event, "input", None) is not None and event.input.id == "gen-path":
            return
        self.regenerate()

    def regenerate(self) -> None:
        kind = cast(str, self.query_one("#gen-kind", Select).value)  # the Select has no blank choice
        name = self.field("name")
        model = self.app.feed.model
        exprs = [self.expression]
        by = "product" if kind == "tiers-product" else "mig-profile"
        problem = extended_resource_name_problem(self.field("ern")) if kind == "class" else ""
        self.query_one("#gen-problem", Static).update(problem)
        self.query_one("#gen-problem", Static).display = bool(problem)  # empty lines would take the YAML's rows
        if kind == "class":
            # A class from a claim request keeps the request's class selectors: the class must pick the same devices.
            exprs = list(self.start.base) + exprs
            ern = (self.field("ern") or None) if not problem else None
            served = {ern: serving} if ern and (serving := model.class_serving(ern)) else {}
            gen = G.device_class(name or "my-gpu-class", exprs, extended_resource_name=ern, served_by=served)
        elif kind in ("tiers-product", "tiers-mig"):
            values = [v for v, _ in G.tier_values(self.catalogue, by)]
            gen = G.tier_classes(values, by, prefix=(name + "-") if name else "", existing=model.classes())
        else:
            cname = self.start.class_name or "gpu.nvidia.com"
            cls = model.classes().get(cname)
            # The class's own selectors need not be repeated in the request.
            own = (
                [] if cls is not None and P.join_and(cls.expressions) == self.expression.strip() else [self.expression]
            )
            gen = G.claim_template(
                name or "my-gpu-claim", self.field("ns") or "default", cname, own, served=cls.serves if cls else ()
            )
        self.generated = gen
        text = gen.yaml()
        if gen.snippet:
            text += "\n" + G.snippet_yaml(gen.snippet)
        self.query_one("#gen-yaml", TextArea).load_text(text)
        warnings = list(gen.warnings)
        if self.counts is not None and kind in ("class", "template") and not self.counts.get("matched"):
            warnings.insert(
                0,
                f"this selector picks 0 of the fleet's {self.counts.get('devices', 0)} devices today: "
                "a pod using it stays Pending",
            )
        self.query_one("#gen-warnings", Static).update("\n".join(f"⚠ {escape(w)}" for w in warnings))
        self.query_one("#gen-warnings", Static).display = bool(warnings)
        self.query_one("#gen-notes", Static).update("\n".join(escape(n) for n in gen.notes))
        self.query_one("#gen-notes", Static).display = bool(gen.notes)
        path = self.query_one("#gen-path", Input)
        if not path.value or path.value == getattr(self, "_auto_path", ""):
            first = gen.objects[0]["metadata"]["name"] if gen.objects else "playground"
            self._auto_path = f"tiers-{by}.yaml" if kind.startswith("tiers") else f"{first}.yaml"
            path.value = self._auto_path

    def status(self, text: str) -> None:
        self.query_one("#gen-status", Static).update(text)

    def action_back(self) -> None:
        self.app.pop_screen()

    def _current(self) -> None:
        """Rebuild from the fields as they are now. A key bound with priority (ctrl+t, ctrl+g, ctrl+s) typed right
        after a name is handled before the field's Changed message: the dry run sent the previous name's object."""
        self.regenerate()

    def action_copy_yaml(self) -> None:
        self._current()
        self.app.copy_to_clipboard(self.query_one("#gen-yaml", TextArea).text)
        self.notify("YAML copied to the clipboard")

    def action_save(self) -> None:
        self._current()
        path = pathlib.Path(self.field("path") or "playground.yaml").expanduser()
        try:
            path.write_text(self.query_one("#gen-yaml", TextArea).text)
        except OSError as exc:
            self.status(f"[b $error]✗ could not write {escape(str(path))}: {escape(exc.strerror or str(exc))}[/]")
            return
        self.status(f"✓ saved to {escape(str(path.resolve()))}")
        self.notify(f"saved {path}")

    def _cluster(self):
        cluster = getattr(self.app.feed, "cluster", None)
        if cluster is None:
            self.status("[b $warning]a snapshot has no cluster to send objects to: save the YAML instead (ctrl+s)[/]")
        return cluster

    def _refused(self) -> bool:
        problem = (
            extended_resource_name_problem(self.field("ern"))
            if self.query_one("#gen-kind", Select).value == "class"
            else ""
        )
        if problem:
            self.status(f"[b $text-error]{escape(problem)}[/]: fix it first; nothing was sent")
            self.query_one("#gen-ern", Input).focus()
        return bool(problem)

    def action_dry_run(self) -> None:
        self._current()
        if not self._refused() and self._cluster() is not None and self.generated:
            self._dry_run(list(self.generated.objects))

    @work(exclusive=True, group="cel-apply", description="server-side dry run of the generated objects")
    async def _dry_run(self, objects: list[dict]) -> None:
        from dragoman.actions.apply_objects import dry_run

        self.status("sending with dryRun=All …")
        results = await dry_run(self._cluster(), objects)
        self.status(_results_text("server dry run", results))

    def action_apply(self) -> None:
        if self.read_only:
            return
        self._current()
        if self._refused():
            return
        if self._cluster() is None or not self.generated:
            return
        objs = list(self.generated.objects)
        # Plain text: the modal draws it without markup.
        text = "\n".join(
            f"  {o['kind']} "
            f"{o['metadata'].get('namespace', '') + '/' if o['metadata'].get('namespace') else ''}"
            f"{o['metadata']['name']}"
            for o in objs
        )

        def confirmed(ok: bool | None) -> None:
            if ok:
                self._apply(objs)
            else:
                self.status("not applied")

        # The one confirmation gate (actions/confirm.py), as the wizard draws it: a production-looking context's name
        # is typed before anything is written.
        from dragoman.actions.confirm import words_to_type
        from dragoman.tui.screens.confirm import ConfirmWriteScreen

        info = self.app.feed.info
        typed = [(t.prompt, t.word) for t in words_to_type(info.context or "", info.server or "")]
        n = len(objs)
        title = f"Apply {n} object{'s' if n != 1 else ''} to {info.context or 'the cluster'}"
        self.app.push_screen(
            ConfirmWriteScreen(
                title,
                text,
                warnings=list(self.generated.warnings),
                footnote="A server dry run goes first; each write is recorded in the audit log.",
                typed=typed,
            ),
            confirmed,
        )

    @work(exclusive=True, group="cel-apply", description="apply the generated objects")
    async def _apply(self, objects: list[dict]) -> None:
        from dragoman.actions.apply_objects import apply_objects
        from dragoman.actions.audit import AuditLog
        from dragoman.actions.runner import operator

        cluster = self._cluster()
        info = self.app.feed.info
        audit = AuditLog(
            getattr(self.app, "audit_path", None),  # a demo's own log, never the operator's
            user=operator(cluster),
            context=info.context or "",
            cluster={"server": info.server},
        )
        self.status("dry run, then apply …")
        try:
            results = await apply_objects(cluster, objects, audit=audit, read_only=self.read_only)
        except Exception as exc:  # noqa: BLE001 - the operator sees the sentence, the screen stays
            self.status(f"[b $error]✗ {escape(str(getattr(exc, 'message', exc)))}[/]")
            return
        self.status(_results_text("apply", results) + f"\naudit log: {escape(str(audit.path))}")


def extended_resource_name_problem(name: str) -> str:
    """Why `name` cannot be a DeviceClass's extendedResourceName (empty when it can, or when none is given), said here
    before the API server answers 422. The API server's rule decides (fleet/k8s/extended.py); this says it plainly."""
    from dragoman.fleet.k8s.extended import REQUESTS_PREFIX, extended_resource_name_errors, is_native_resource

    if not name or not extended_resource_name_errors(name):
        return ""
    if "/" not in name:
        return (
            f"✗ extendedResourceName {name!r} needs a domain: domain/name, e.g. "
            f"example.com/{name.split('.')[0] or 'gpu'}"
        )
    if is_native_resource(name) or name.startswith(REQUESTS_PREFIX):
        return f"✗ extendedResourceName {name!r} is in a domain Kubernetes reserves: use your own (example.com/…)"
    return f"✗ extendedResourceName {name!r} is not a resource name (lowercase domain/name, letters, digits, - _ .)"


def _results_text(what: str, results) -> str:
    lines = []
    for r in results:
        mark = "✗" if r.result == "failed" else "✓"
        lines.append(f"{mark} {escape(r.ref)}: {escape(r.result)}" + (f" — {escape(r.message)}" if r.message else ""))
    return f"[b]{what}[/b]\n" + "\n".join(lines)


def open_for_pod(app, pod_key: tuple[str, str]) -> bool:
    """Open the playground on a stuck pod's selector (its claim's request, or the class serving its extended
    resource)."""
    pod = app.feed.model.objects["Pod"].get(tuple(pod_key))
    if pod is None:
        return False
    start = P.start_from_pod(app.feed.model, pod)
    if start is None:
        app.notify("this pod asks for no claim and no extended resource a DeviceClass serves", severity="warning")
        return False
    app.push_screen(PlaygroundScreen(start))
    return True
