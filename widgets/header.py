"""The status line every screen shows: cluster, context, server version, read-only state, connection state and the
DEMO/SNAPSHOT badge."""

from __future__ import annotations

from dragoman.fleet.glyphs import labelled
from dragoman.fleet.views.cells import Cell
from textual.content import Content
from textual.widget import Widget

STATE_CELLS = {
    "live": Cell(labelled("up", "live"), "ok"),
    "syncing": Cell(labelled("waiting", "syncing"), "warning"),
    "reconnecting": Cell(labelled("reconnecting", "reconnecting"), "error"),
    "unreachable": Cell(labelled("error", "unreachable"), "error"),
    "forbidden": Cell(labelled("error", "forbidden"), "error"),
    "snapshot": Cell(labelled("still", "snapshot"), "muted"),
    "stopped": Cell(labelled("still", "stopped"), "muted"),
}


def header_cells(info, status: str, message: str = "", notes: dict[str, str] | None = None) -> list[Cell]:
    """The header as cells (pure): what is shown, in order, each with a tone."""
    # The state and read-only come first: on a narrow terminal the tail is what gets cut.
    cells = [Cell(" dragoman ", "title")]
    if info.badge:
        cells.append(Cell(f" {info.badge} ", "badge"))
    state = STATE_CELLS.get(status, Cell(status, None))
    cells.append(Cell(" " + state.text, state.tone))
    if info.read_only:
        cells.append(Cell(" READ-ONLY", "warning"))
    elif getattr(info, "may_write", None) is False:
        # The credentials cannot write (a viewer context): say so, rather than "read-write".
        cells.append(Cell(" READ-ONLY (RBAC)", "warning"))
    else:
        cells.append(Cell(" read-write", "muted"))
    cells.append(Cell(f" ctx {info.context or '?'}", None))
    cells.append(Cell(f" {info.cluster or '?'}", None))
    cells.append(Cell(f" {info.version or 'v?'}", "muted"))
    if message and status not in ("live", "snapshot"):
        cells.append(Cell(f" {message}", state.tone))
    if notes:
        # Objects skipped as malformed (fleet/cluster.py): the first one's note names its kind, name and field.
        first = next(iter(notes.values()))
        more = f" (+{len(notes) - 1} more)" if len(notes) > 1 else ""
        cells.append(Cell(f" ⚠ {first}{more}", "warning"))
    return cells


class StatusHeader(Widget):
    """One line, docked at the top; the app updates it on every connection-state change."""

    DEFAULT_CSS = """
    StatusHeader { dock: top; height: 1; background: $panel; color: $text; }
    """

    STYLES = {
        "title": "bold $text-primary",
        "badge": "bold reverse $warning",
        "ok": "$text-success",
        "warning": "$text-warning",
        "error": "bold $text-error",
        "muted": "$text-muted",
    }

    _state: tuple[object, str, str] | None = None  # show()'s info, status and message
    # Objects skipped as malformed (the store's notes: a dict the informers fill in place, so it stays current).
    _notes: dict[str, str] | None = None

    def show(self, info, status: str, message: str = "", notes: dict[str, str] | None = None) -> None:
        self._state = (info, status, message)
        self._notes = notes
        self.refresh()

    def render(self) -> Content:
        if self._state is None:
            return Content("")
        parts: list = []
        cells = header_cells(*self._state, notes=self._notes)
        # Decided at render time from the real width, so a narrow terminal drops the app's name first.
        if sum(len(c.text) + 2 for c in cells) > (self.size.width or 80):
            cells = cells[1:]
        for c in cells:
            parts.append((c.text, self.STYLES.get(c.tone or "", "")))
            if c.tone not in ("title", "badge"):
                parts.append(" │")
        return Content.assemble(*parts)
