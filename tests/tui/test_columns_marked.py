"""No cell is cut without a marker (issue 30): every table view at 80×24 and 120×40, scrolled sideways too. A row whose
cells go on past the right edge ends in `→`, one scrolled past cells on the left shows `←` after the first column, and
a cell wider than its column ends in `…`; anything else drawn must be exactly the row's own text."""

from __future__ import annotations

import pytest
from dragoman.widgets.cells import text_of
from dragoman.widgets.vtable import VTable, _cell_text

from tests.tui.conftest import snapshot_app, snapshot_copy
from tests.tui.test_tui_snapshots import _keys

SIZES = [(80, 24), (120, 40)]
VIEWS = {
    "pools": (),
    "nodes": ("2",),
    "devices": ("3",),
    "claims": ("4",),
    "stuck_pods": ("5",),
    "findings": ("6",),
    "attributes": ("7",),
    "nodes_of_a_pool": ("enter",),
    # Scrolled sideways: cells cut on the left say so too (Devices at 120×40 showed `l-prod-h100-dra-…`).
    "devices_scrolled": ("3", "right", "right", "right"),
    "findings_scrolled": ("6", "shift+right", "shift+right"),
    "nodes_scrolled": ("2", "shift+right"),
}


def unmarked_cuts(table: VTable) -> list[str]:
    """Rows drawn with a cut that carries no marker, as `row: drawn | the row's text` lines."""
    width = table.view_width
    widths = table._layout_widths(width)
    frozen = table._frozen_width(widths)
    bad = []
    top = int(table.scroll_offset.y)
    for y in range(1, min(table.size.height, len(table.keys()) - top + 1)):
        key = table.keys()[top + y - 1]
        cells = table.row(key) or ()
        # The row as it would be drawn on an endless screen: each cell padded (or cut with `…`) to its column.
        full = ("* " if key in table.marked else "  ") + " ".join(
            _cell_text(text_of(c) if i < len(cells) else "", w, table.columns[i].trim)
            for i, (c, w) in enumerate(zip(list(cells) + [""] * len(widths), widths))
        )
        drawn = table.render_line(y).text[:width]
        window = (full[:frozen] + full[frozen + table.hscroll : frozen + table.hscroll + width - frozen]).ljust(width)
        hidden_right = full[frozen + table.hscroll + width - frozen :].strip()
        hidden_left = full[frozen : frozen + table.hscroll].strip()
        for i, (d, w) in enumerate(zip(drawn, window)):
            if d == w:
                continue
            if (d == "→" and i == width - 1 and hidden_right) or (d == "←" and i == frozen and hidden_left):
                continue
            bad.append(f"{y}: {drawn!r} | {window!r}")
            break
        else:
            if hidden_right and not drawn.endswith("→"):
                bad.append(f"{y}: {drawn!r} goes on past the edge without →: {hidden_right[:20]!r}…")
            elif hidden_left and drawn[frozen] != "←":
                bad.append(f"{y}: {drawn!r} is scrolled past {hidden_left[-20:]!r} without ←")
    return bad


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("view", sorted(VIEWS))
async def test_no_cell_is_cut_without_a_marker(view, size, tmp_path) -> None:
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=size) as pilot:
        await _keys(*VIEWS[view])(pilot)
        tables = list(app.screen.query(VTable))
        assert tables, f"{view}: no table on screen"
        for table in tables:
            assert table.keys(), f"{view}: an empty table proves nothing"
            bad = unmarked_cuts(table)
            assert not bad, f"{view} at {size}:\n" + "\n".join(bad[:5])
            if view.endswith("_scrolled"):
                assert table.hscroll > 0
