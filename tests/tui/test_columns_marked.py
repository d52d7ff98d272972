"""No cell is cut without a marker (issue 30): every table view at 80×24 and 120×40, scrolled sideways too. A row whose
cells go on past the right edge ends in `→`, one scrolled past cells on the left shows `←` after the pinned column, and
a cell wider than its column ends in `…`; anything else drawn must be exactly the row's own text."""

from __future__ import annotations

import pytest
from dragoman.fleet.views.cells import text_of
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
    "events": ("colon", *"events", "enter"),
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
    shown, hidden, right = table._spans(widths, width)
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
        window = "".join(full[a:b] for a, b in shown).ljust(width)
        hidden_right = full[right:].strip()
        hidden_left = "".join(full[a:b] for a, b in hidden).strip()
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


async def test_scrolled_sideways_the_devices_view_keeps_the_device_name_not_the_driver(tmp_path) -> None:
    """Scrolled sideways at 80 columns, DRIVER (gpu.nvidia.com on most rows) stayed at the left edge and DEVICE, the
    column that tells the rows apart, scrolled away. The device's name is the one that stays."""
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await _keys("3", *["shift+right"] * 6)(pilot)
        table = app.screen.query_one(VTable)
        assert table.hscroll == table.max_hscroll() > 0
        header = table.render_line(0).text
        assert header[2:].startswith("DEVICE ") and "DRIVER" not in header, header
        # What scrolled beneath it is still there: the last column, MEMORY, is now on screen.
        assert header.rstrip().endswith("MEMORY"), header
        keys = table.keys()[: table.size.height - 1]
        assert keys
        for y, key in enumerate(keys, 1):
            line = table.render_line(y).text
            assert line[2:].startswith(key[2] + " "), (key, line)
        # And back: shift+← brings the columns before it again, DRIVER first.
        await _keys(*["shift+left"] * 6)(pilot)
        assert table.hscroll == 0 and table.render_line(0).text[2:].startswith("DRIVER")


# ------------------------------------------------------------------------------------------ the DataTable screens
def unmarked_datatable_cuts(table) -> list[str]:
    """The same rule on a DataTable (widgets/marked_table.py): drawn = the row's own text in the window, but for `→`
    at the right edge when the row goes on, `←` at the left when scrolled past cells."""
    view = table.scrollable_content_region.width or table.size.width
    total, sx, width = table.virtual_size.width, int(table.scroll_offset.x), table.size.width
    style = table.rich_style
    bad = []
    rows = (1 if table.show_header else 0) + table.row_count
    for y in range(min(table.size.height, rows)):
        line = table._content_y(y)
        full = "".join(
            table._render_line(line, x, x + width, style).text[: min(width, total - x)] for x in range(0, total, width)
        )
        drawn = table.render_line(y).text[:view]
        window = full[sx : sx + view].ljust(view)
        hidden_right, hidden_left = full[sx + view :].strip(), full[:sx].strip()
        for i, (d, w) in enumerate(zip(drawn, window)):
            if d == w or (d == "→" and i == view - 1 and hidden_right) or (d == "←" and i == 0 and hidden_left):
                continue
            bad.append(f"{y}: {drawn!r} | {window!r}")
            break
        else:
            if hidden_right and not drawn.endswith("→"):
                bad.append(f"{y}: {drawn!r} goes on past the edge without →: {hidden_right[:20]!r}…")
    return bad


async def _open_load(pilot) -> None:
    await _keys("colon", *"load", "enter")(pilot)
    if hasattr(pilot.app.screen, "sampling"):
        pilot.app.screen.sampling.pause()


SCREENS = {
    "accounting": _keys("colon", *"accounting", "enter"),
    "load": _open_load,
    "playground": _keys("colon", *"cel", "enter"),
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("screen", sorted(SCREENS))
async def test_no_datatable_cell_is_cut_without_a_marker(screen, size, tmp_path) -> None:
    from textual.widgets import DataTable

    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=size) as pilot:
        await SCREENS[screen](pilot)
        await pilot.pause(0.5)
        tables = [t for t in app.screen.query(DataTable) if t.row_count]
        assert tables, f"{screen}: no table with rows on screen"
        for table in tables:
            bad = unmarked_datatable_cuts(table)
            assert not bad, f"{screen} at {size}:\n" + "\n".join(bad[:5])


async def test_a_datatable_row_cut_at_the_edge_ends_in_an_arrow() -> None:
    """The marker itself, on a table certainly wider than its screen."""
    from dragoman.widgets.marked_table import MarkedTable
    from textual.app import App

    class Wide(App):
        def compose(self):
            t = MarkedTable(id="t")
            t.add_columns("NAME", "WHAT")
            t.add_row("a", "x" * 200)
            t.add_row("b", "short")
            yield t

    app = Wide()
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause(0.2)
        table = app.query_one(MarkedTable)
        first = table.render_line(1).text.rstrip()
        assert first.endswith("→"), first
        assert not table.render_line(2).text.rstrip().endswith("→")  # nothing of "short" is hidden
        assert not unmarked_datatable_cuts(table)
        table.scroll_to(x=30, animate=False)
        await pilot.pause(0.2)
        assert table.render_line(1).text.startswith("←")
        assert not unmarked_datatable_cuts(table)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_devices_tell_apart_and_show_their_state_on_the_first_screen(size, tmp_path) -> None:
    """A person at 80×24 tells devices apart and reads what each is doing without scrolling sideways: every drawn
    row carries its device's whole name (NODE, 36 wide, kept its width while DEVICE was cut to `gpu-0-mig-1→`, the
    same on every MIG row), and the first screen shows a tainted, a shared and a counter-blocked device's state."""
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=size) as pilot:
        await _keys(*VIEWS["devices"])(pilot)
        table = next(iter(app.screen.query(VTable)))
        device = [c.key for c in table.columns].index("device")
        state = [c.key for c in table.columns].index("claim")
        top = int(table.scroll_offset.y)
        drawn = []
        for y in range(1, min(table.size.height, len(table.keys()) - top + 1)):
            cells = table.row(table.keys()[top + y - 1])
            line = table.render_line(y).text[: table.view_width]
            name = text_of(cells[device])
            assert f" {name} " in line, f"{name!r} is not whole in {line!r}"
            drawn.append((name, text_of(cells[state]), line))
        assert len({line for _, _, line in drawn}) == len(drawn), "two rows read the same"
        mig = [line for name, _, line in drawn if "-mig-" in name]
        assert len(mig) >= 5 and len(set(mig)) == len(mig)
        for word in ("tainted ", "shared by ", "counters used by "):
            rows = [line for _, text, line in drawn if text.startswith(word)]
            assert rows and all(word in line for line in rows), f"no {word.strip()!r} device readable on screen"


async def test_the_marks_are_right_at_every_sideways_scroll() -> None:
    """The marks are read from the row's cells column by column (not from the line rendered again off screen): at every
    scroll position, a cell cut by either edge, a blank cell past the edge and a row that ends early are marked exactly
    when text is hidden — on the cursor's row too."""
    from dragoman.widgets.marked_table import MarkedTable
    from textual.app import App

    class Wide(App):
        def compose(self):
            t = MarkedTable(id="t", cursor_type="row")
            t.add_columns("NAME", "WHAT", "MORE", "LAST")
            t.add_row("alpha", "x" * 40, "", "")  # ends in blank cells: nothing hidden once WHAT is seen
            t.add_row("b", "", "", "y" * 30)  # text only at the far right, past blank cells
            t.add_row("gamma " * 4, "mid dle", "z" * 25, "end")
            t.add_row("", "", "", "")
            t.add_row("δέλτα ✓", "déjà vu … " * 3, "", "ñ")  # not ASCII: measured in cells, cut by the edges too
            yield t

    app = Wide()
    async with app.run_test(size=(50, 9)) as pilot:
        await pilot.pause(0.2)
        table = app.query_one(MarkedTable)
        assert table.max_scroll_x > 40
        marked = set()
        for x in range(0, table.max_scroll_x + 1):
            table.scroll_to(x=x, animate=False)
            await pilot.pause()
            assert int(table.scroll_offset.x) == x
            bad = unmarked_datatable_cuts(table)
            assert not bad, f"scrolled to {x}:\n" + "\n".join(bad)
            for y in range(1, 6):
                text = table.render_line(y).text
                marked |= {("←", y)} if text.startswith("←") else set()
                marked |= {("→", y)} if text.rstrip().endswith("→") else set()
        assert {("→", 1), ("→", 2), ("→", 3), ("←", 1), ("←", 3), ("→", 5), ("←", 5)} <= marked
        assert not {m for m in marked if m[1] == 4}, "an empty row has nothing to hide"


async def test_a_mark_follows_a_changed_cell() -> None:
    """The marked lines are kept while the table's own line is the same: a cell changed under a kept line, the cursor
    moved onto it, or a scroll, redraws its mark."""
    from dragoman.widgets.marked_table import MarkedTable
    from textual.app import App

    class Wide(App):
        def compose(self):
            t = MarkedTable(id="t", cursor_type="row")
            t.add_columns("NAME", "WHAT")
            t.add_row("a", "x" * 200, key="a")
            t.add_row("b", "short", key="b")
            yield t

    app = Wide()
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause(0.2)
        table = app.query_one(MarkedTable)
        assert table.render_line(1).text.rstrip().endswith("→")
        assert table.render_line(1) is table.render_line(1), "an unchanged line is drawn once"
        table.update_cell("a", table.ordered_columns[1].key, "now short", update_width=False)
        await pilot.pause(0.1)
        assert not table.render_line(1).text.rstrip().endswith("→"), table.render_line(1).text
        table.update_cell("b", table.ordered_columns[1].key, "y" * 200, update_width=True)
        await pilot.pause(0.1)
        assert table.render_line(2).text.rstrip().endswith("→")
        table.move_cursor(row=1)
        await pilot.pause(0.1)
        line = table.render_line(2)
        assert line.text.rstrip().endswith("→") and line.text.startswith(" b")
        table.scroll_to(x=table.max_scroll_x, animate=False)
        await pilot.pause(0.1)
        assert not table.render_line(2).text.rstrip().endswith("→") and table.render_line(2).text.startswith("←")
        assert not unmarked_datatable_cuts(table)


def test_blank_measures_cells_not_characters() -> None:
    """The cut test reads wide characters by their cells: `界` is two columns (half of one is a blank, as a cut strip
    draws it)."""
    from dragoman.widgets.marked_table import _blank
    from rich.segment import Segment

    cell = [Segment(" "), Segment("界界"), Segment("  ")]  # columns 0 | 1-4 | 5-6
    assert not _blank(cell, 0) and not _blank(cell, 3) and _blank(cell, 4) and _blank(cell, 5)
    assert _blank(cell, 0, 2) and not _blank(cell, 0, 3) and not _blank(cell, 1, 3) and _blank(cell, 2, 4)
    assert not _blank([Segment("ab  cd")], 1, 3) and _blank([Segment("ab  cd")], 2, 4)
