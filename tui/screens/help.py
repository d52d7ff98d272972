"""The help screen: the keys of the screen it was opened on, read from that screen's live bindings, then the views and
the legend."""

from __future__ import annotations

from dragoman.fleet.glyphs import legend
from dragoman.tui.bindings import TABLE_MOVES
from dragoman.tui.screens.base import DragomanModal
from dragoman.tui.views import VIEW_DOCS
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

LEGEND = legend()  # fleet/glyphs.py: each glyph once, with its one meaning


VIEWS_HEADING = "Views (: then a name or alias, or the digit):"
VIEWS_HEADING_NO_DIGITS = "Views (: then a name or alias):"


def views_table(heading: str = VIEWS_HEADING, digits: bool = True):
    """The views, one per row: a description's wrapped lines start under the description (a plain text put them at
    the box's edge)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column()
    for name, digit, aliases, doc in VIEW_DOCS:
        alias = f" ({' '.join(':' + a for a in aliases)})" if aliases else ""
        keys = f"  {digit or ' '} :{name}" if digits else f"  :{name}"
        table.add_row(Text(keys), Text(doc + alias))
    return Group(Text(heading, style="bold underline"), table)


def screen_keys(app, screen: Screen) -> list[tuple[str, list[tuple[str, str]]]]:
    """(group, [(keys, what it does)]) for what `screen` answers right now: its own keys, the focused widget's, the
    app's.

    Read from the bindings Textual would dispatch (disabled ones left out), so help never lists a key the screen lacks.
    """
    groups: dict[str, dict[tuple, list]] = {"This screen": {}, "Focused": {}, "Everywhere": {}}
    for active in screen.active_bindings.values():
        b: Binding = active.binding
        node = active.node
        if not active.enabled or not b.id:
            continue  # every dragoman key has an id; the framework's unnamed ones (focus next, copy) are not news
        if node is app:
            group = "Everywhere"
        elif node is screen:
            group = "This screen"
        else:
            if not (b.tooltip or b.description):
                continue
            group = "Focused"
        if b.action in ("command_palette",) or (not b.description and not b.tooltip):
            continue
        entry = groups[group].setdefault((b.action, b.tooltip or b.description), [])
        shown = app.get_key_display(b)
        if shown not in entry:
            entry.append(shown)
    out = []
    for name, entries in groups.items():
        rows = [(" / ".join(keys), what) for (_action, what), keys in entries.items()]
        if name == "Everywhere":
            rows.append(
                (
                    app.get_key_display(Binding("ctrl+p", "command_palette")),
                    "The command palette: what this screen can do",
                )
            )
        if rows:
            out.append((name, rows))
    return out


def _covered(app, keys: str, groups) -> bool:
    """Whether every key of a "Also" row ("j / k / ↑ / ↓", "enter") is already listed with its own description (the
    focused table's bindings list ↑ / k, home / g, ⏎ ...): "Also" repeated the cursor keys "Focused" had listed."""
    listed = {t.strip() for _g, rows in groups for k, _d in rows for t in k.split(" / ")}
    tokens = [t.strip() for t in keys.split(" / ")]
    return all(t in listed or app.get_key_display(Binding(t, "noop")) in listed for t in tokens)


class HelpScreen(DragomanModal[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close", id="help.close", tooltip="Close the help")]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 96%; max-width: 124; height: 90%; border: round $primary; background: $panel; padding: 0 1;
                                  scrollbar-gutter: stable; }
    HelpScreen Static { width: 100%; }
    """

    def __init__(self, for_screen: Screen | None = None) -> None:
        super().__init__()
        self.for_screen = for_screen
        self.groups: list[tuple[str, list[tuple[str, str]]]] = []

    def compose(self) -> ComposeResult:
        screen = self.for_screen
        title = (
            getattr(screen, "help_title", None)
            or (getattr(getattr(screen, "view", None), "title", None))
            or type(screen).__name__
        )
        groups = screen_keys(self.app, screen) if screen is not None else []
        from dragoman.tui.screens.table import TableScreen

        # The keys a screen's widgets answer that are not bindings (a table's moves, tab to the wizard's plan): a
        # screen says them in `help_moves`; the table views share TABLE_MOVES.
        moves = getattr(screen, "help_moves", None)
        if moves is None and isinstance(screen, TableScreen):
            moves = TABLE_MOVES
        if moves:
            extra = [(k, d) for k, d in moves if not _covered(self.app, k, groups)]
            if extra:
                groups.append(("Also", extra))
        self.groups = groups  # what is listed, by group: read by the tests
        from rich.table import Table
        from rich.text import Text

        # A table, so a long description wraps under itself, not under the keys.
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True, style="bold")
        table.add_column()
        for name, rows in groups:
            table.add_row(Text(name, style="bold underline"), "")
            for k, d in rows:
                table.add_row(Text("  " + k), Text(d))
            table.add_row("", "")
        # A screen where `:` is typed (the playground's editor) says how to reach the views from it instead.
        # The digits only where the screen binds them (the wizard and the playground do not).
        digits = screen is not None and any(
            a.binding.action.startswith("jump_to(") for a in screen.active_bindings.values()
        )
        heading = getattr(screen, "help_views", None) or (VIEWS_HEADING if digits else VIEWS_HEADING_NO_DIGITS)
        with VerticalScroll() as vs:
            vs.border_title = f"help: {title} (esc closes)"
            yield Static(table, id="help-keys")
            yield Static(views_table(heading, digits), id="help-views")
            yield Static("\n" + LEGEND, markup=False, id="help-text")

    def on_mount(self) -> None:
        self.call_after_refresh(self._scroll_cue)

    def on_resize(self) -> None:
        self.call_after_refresh(self._scroll_cue)

    def _scroll_cue(self) -> None:
        """Long help says it scrolls (issue 30: the legend sat below the fold with nothing to say so)."""
        vs = self.query_one(VerticalScroll)
        more = vs.max_scroll_y > 0 and vs.scroll_y < vs.max_scroll_y
        vs.border_subtitle = "↓ more below: pgdn, ↓ or the wheel" if more else ""
        if vs.max_scroll_y > 0:
            self.watch(vs, "scroll_y", lambda _y: self._cue_only(vs), init=False)

    def _cue_only(self, vs: VerticalScroll) -> None:
        vs.border_subtitle = "↓ more below: pgdn, ↓ or the wheel" if vs.scroll_y < vs.max_scroll_y else "end of help"

    async def action_dismiss(self, result: None = None) -> None:  # Textual's signature: the key carries no result
        self.dismiss(None)
