"""A DataTable that says where its rows go on past its edges, as the virtual tables do (widgets/vtable.py): `→` at the
right edge of a row whose cells go on, `←` at the left edge when scrolled past cells. The wizard's steps, the
playground's devices, Accounting and Load draw with it (issue 30: their rows were cut at the edge without a mark)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import DataTable


def _blank(cell: list[Segment], start: int, end: int | None = None) -> bool:
    """Whether the cell's line holds only spaces from column `start` of it to `end` (or its end). Segment by segment:
    only a segment the bounds cut, if it is not plain ASCII, is cut as a Strip (cell widths)."""
    x = 0
    for seg in cell:
        text = seg.text
        a, x = x, x + (len(text) if text.isascii() else cell_len(text))
        if x <= start:
            continue
        if end is not None and a >= end:
            break
        if a < start or (end is not None and x > end):
            lo, hi = max(start - a, 0), (end - a if end is not None and x > end else None)
            text = text[lo:hi] if text.isascii() else Strip([seg]).crop(lo, hi).text
        if text.strip():
            return False
    return True


def _style_at(strip: Strip, at: int, default: Style) -> Style:
    """The style of the strip at column `at` (the default past its end)."""
    x = 0
    for seg in strip:
        x += len(seg.text) if seg.text.isascii() else cell_len(seg.text)
        if x > at:
            return seg.style or default
    return default


class MarkedTable(DataTable):
    """DataTable + cut markers. Only the lines on screen are looked at, each once per repaint: from the row's cells as
    the table rendered them for the screen (its own cache), column by column — the part off screen is not rendered
    again (that was a tenth of the playground's repaint while typing, issue 29)."""

    def _content_y(self, y: int) -> int:
        """The table's own line for screen line `y` (as DataTable.render_line reckons it: the header stays)."""
        fixed = self.get_row_height(self._header_row_key) if self.show_header else 0
        for i in range(self.fixed_rows):
            key = self._row_locations.get_key(i)
            if key is not None:
                fixed += self.get_row_height(key)
        return y + int(self.scroll_offset.y) if y >= fixed else y

    def _cut(self, line: int, sx: int, edge: int, style: Style) -> tuple[bool, bool]:
        """Whether text lies left of column `sx` (scrolled past) and right of column `edge` (past the view) on the
        table's line `line`. The cells are those DataTable.render_line just drew (a hit in its row cache); the tables
        that use this have no fixed columns and no row labels, so cell x is table x."""
        try:
            row_key, in_row = self._get_offsets(line)
        except LookupError:
            return False, False
        _fixed, cells = self._render_line_in_row(
            row_key, in_row, style, cursor_location=self.cursor_coordinate, hover_location=self.hover_coordinate
        )
        left = right = False
        x = 0
        for column, cell in zip(self.ordered_columns, cells):
            end = x + column.get_render_width(self)
            if not left and x < sx:
                left = not _blank(cell, 0, None if end <= sx else sx - x)
            if end > edge and not _blank(cell, max(0, edge - x)):
                right = True
                break  # every column left of `sx` came before this one
            x = end
        return left, right

    _style: Style | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # line → (DataTable's strip, its geometry, the marked strip): a line DataTable answers from its own cache (the
        # same Strip object: same row, cursor, scroll, style, content) is marked from here, not cut and joined again.
        self._marked: LRUCache[int, tuple[Strip, tuple[int, int, int], Strip]] = LRUCache(1000)

    def render_lines(self, crop: Region) -> list[Strip]:
        # The widget's style, once a repaint: DataTable.render_line asks for it on every line, and each ask walks the
        # widget's ancestors (a fifth of the playground table's repaint while typing, issue 29).
        self._style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._style = None

    def render_line(self, y: int) -> Strip:
        # DataTable.render_line, with the style above and the marks.
        style = self._style or self.rich_style
        line = self._content_y(y)
        sx = int(self.scroll_offset.x)
        strip = self._render_line(line, sx, sx + self.size.width, style)
        view = self.scrollable_content_region.width or self.size.width
        total = self.virtual_size.width
        if total <= view and not sx:
            return strip
        geometry = (sx, view, total)
        hit = self._marked.get(line)
        if hit is not None and hit[0] is strip and hit[1] == geometry:
            return hit[2]
        marked = self._mark(strip, line, geometry, style)
        self._marked.discard(line)  # LRUCache.set leaves a key's old value in place
        self._marked[line] = (strip, geometry, marked)
        return marked

    def _mark(self, strip: Strip, line: int, geometry: tuple[int, int, int], style: Style) -> Strip:
        sx, view, total = geometry
        left, right = self._cut(line, sx, sx + view, style)
        right = right and total > sx + view
        left = left and sx > 0
        if not (left or right):
            return strip
        # The mark takes the style of the cell it replaces: the cursor's row keeps its highlight to the edge.
        parts = []
        if left:
            parts.append(Strip([Segment("←", _style_at(strip, 0, style))], 1))
        body = strip.crop(int(left), view - int(right))
        parts.append(body.extend_cell_length(view - int(left) - int(right), style))
        if right:
            parts.append(Strip([Segment("→", _style_at(strip, view - 1, style))], 1))
        return Strip.join(parts).extend_cell_length(self.size.width, style)
