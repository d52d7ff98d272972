"""The status line every screen shows: cluster, context, server version, read-only state, connection state and the DEMO/SNAPSHOT badge."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from dragoman.widgets.cells import Cell

STATE_CELLS = {
    "live": Cell("● live", "ok"),
    "syncing": Cell("◌ syncing", "warning"),
    "reconnecting": Cell("↻ reconnecting", "error"),
    "unreachable": Cell("✖ unreachable", "error"),
    "forbidden": Cell("⊘ forbidden", "error"),
    "snapshot": Cell("■ snapshot", "muted"),
    "stopped": Cell("■ stopped", "muted"),
}


def header_cells(info, status: str, message: str = "") -> list[Cell]:
    """The header as cells (pure): what is shown, in order, each with a tone."""
    # The state and read-only come first: on a narrow terminal the tail is what gets cut.
    cells = [Cell(" dragoman ", "title")]
    if info.badge:
        cells.append(Cell(f" {info.badge} ", "badge"))
    state = STATE_CELLS.get(status, Cell(status, None))
    cells.append(Cell(" " + state.text, state.tone))
    cells.append(Cell(" READ-ONLY" if info.read_only else " read-write", "warning" if info.read_only else "muted"))
    cells.append(Cell(f" ctx {info.context or '?'}", None))
    cells.append(Cell(f" {info.cluster or '?'}", None))
    cells.append(Cell(f" {info.version or 'v?'}", "muted"))
    if message and status not in ("live", "snapshot"):
        cells.append(Cell(f" {message}", state.tone))
    return cells


class StatusHeader(Static):
    """One line, docked at the top; the app updates it on every connection-state change."""

    DEFAULT_CSS = """
    StatusHeader { dock: top; height: 1; background: $panel; color: $text; }
    """

    STYLES = {
        "title": "bold $primary", "badge": "bold reverse $warning", "ok": "$success", "warning": "$warning",
        "error": "bold $error", "muted": "$text-muted",
    }

    def show(self, info, status: str, message: str = "") -> None:
        parts: list = []
        cells = header_cells(info, status, message)
        width = self.size.width or 80
        if sum(len(c.text) + 2 for c in cells) > width:
            cells = cells[1:]  # the app's name is the first thing an operator can do without
        for c in cells:
            parts.append((c.text, self.STYLES.get(c.tone or "", "")))
            if c.tone not in ("title", "badge"):
                parts.append(" │")
        self.update(Content.assemble(*parts))
