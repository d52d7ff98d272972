"""A DataTable that says where its rows go on past its edges, as the virtual tables do (widgets/vtable.py): `→` at the
right edge of a row whose cells go on, `←` at the left edge when scrolled past cells. The wizard's steps, the
playground's devices, Accounting and Load draw with it (issue 30: their rows were cut at the edge without a mark)."""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import DataTable


class MarkedTable(DataTable):
    """DataTable + cut markers. Only the lines on screen are looked at, each once per repaint."""

    def _content_y(self, y: int) -> int:
        """The table's own line for screen line `y` (as DataTable.render_line reckons it: the header stays)."""
        fixed = self.get_row_height(self._header_row_key) if self.show_header else 0
        for i in range(self.fixed_rows):
            key = self._row_locations.get_key(i)
            if key is not None:
                fixed += self.get_row_height(key)
        return y + int(self.scroll_offset.y) if y >= fixed else y

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        view = self.scrollable_content_region.width or self.size.width
        total = self.virtual_size.width
        sx = int(self.scroll_offset.x)
        if total <= view and not sx:
            return strip
        line = self._content_y(y)
        style = self.rich_style
        beyond = self._render_line(line, sx + view, sx + view + self.size.width, style)
        right = total > sx + view and bool(beyond.text.strip())
        left = sx > 0 and bool(self._render_line(line, 0, sx, style).text[:sx].strip())
        if not (left or right):
            return strip
        strip = strip.crop(0, view).extend_cell_length(view, style)

        def mark(glyph: str, at: int) -> Strip:
            # In the style of the cell it replaces: the cursor's row keeps its highlight to the edge.
            segs = list(strip.crop(at, at + 1))
            return Strip([Segment(glyph, segs[0].style if segs else style)])

        parts = []
        if left:
            parts.append(mark("←", 0))
        parts.append(strip.crop(1 if left else 0, view - (1 if right else 0)))
        if right:
            parts.append(mark("→", view - 1))
        return Strip.join(parts).extend_cell_length(self.size.width, style)
