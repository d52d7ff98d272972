"""A virtualised, keyed table: rows set, updated and removed in place by key, only the visible lines rendered (tens of
thousands of rows stay instant).

A row may also be known only by its key and its place (`set_lazy`): its cells are asked of the table's source when the
row is drawn, filtered or read, so a view of 20,000 devices builds the few dozen on screen. Column widths then come
from the columns' declared widths, a sample of the rows and every row drawn (they only grow)."""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dragoman.fleet.glyphs import glyph
from dragoman.fleet.views.cells import TONES, Cell, CellLike, text_of, tone_of
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


def _merge(into: list, fresh: list) -> None:
    """Merge sorted `fresh` into sorted `into`, comparing only the part of `into` past where `fresh` begins: a view
    fills in chunks that mostly come in order, and sorting the whole list again would compare every row each time."""
    if into and fresh[0] < into[-1]:
        i = bisect.bisect_right(into, fresh[0])
        tail = into[i:]
        del into[i:]
        tail += fresh
        tail.sort()
        into += tail
    else:
        into += fresh


MARK = glyph("marked")  # a marked row's gutter


@dataclass(frozen=True)
class Column:
    """A column: its key, header, minimum width and maximum width (None: takes the rest of the line)."""

    key: str
    label: str
    min_width: int = 4
    max_width: int | None = 30
    # "end" cuts the tail; "middle" keeps both ends (generated node and pod names differ at the end).
    trim: str = "end"
    # When the row is wider than the screen, columns with a `give_way` rank (1 first, then 2, …; 0 never) give up width
    # down to their minimum, cut as `trim` says, until the table's `reach` column is on the first screen.
    give_way: int = 0


@functools.total_ordering
class _Descending:
    """A sort value that orders the other way round (a column sorted high to low keeps the view's order on ties)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Descending) and self.value == other.value

    def __lt__(self, other: _Descending) -> bool:
        return other.value < self.value

    def __hash__(self) -> int:
        return hash(self.value)


_DIGITS = re.compile(r"(\d+)")
_AGE = re.compile(r"^(\d+)([smhd])$")
_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def sort_value(text: str, column_key: str = "") -> tuple:
    """How a cell sorts, as k9s sorts a column: numbers inside text by value (`gke-…-10` after `gke-…-9`, `12/16`
    after `4/16`), an AGE by its duration (`3h` after `40m`); an empty or `—` cell last."""
    t = text.strip()
    if not t or t == "—":
        return (1,)
    if column_key == "age":
        m = _AGE.match(t)
        if m:
            return (0, (0, int(m.group(1)) * _AGE_UNITS[m.group(2)]))
    return (0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p.lower()) for p in _DIGITS.split(t) if p))


# Where a lazy row's cells come from: the rows the source builds for a key (that one, and any neighbours that are as
# cheap to build with it), each (key, cells, facets).
RowSource = Callable[[Hashable], Iterable[tuple[Hashable, Sequence[CellLike], dict]]]
WIDTH_SAMPLE = 64  # lazy rows built when a fill ends, spread over the order, for the column widths


def _cell_text(text: str, width: int, trim: str = "end") -> str:
    if len(text) > width:
        if width <= 1:
            return "…"[:width]
        if trim == "middle" and width >= 8:
            tail = (width - 1) // 2
            return text[: width - 1 - tail] + "…" + text[-tail:]
        return text[: width - 1] + "…"
    return text.ljust(width)


class VTable(ScrollView, can_focus=True):
    """Rows keyed by a hashable; `set_row`/`remove_row` touch one row; `ops` counts row operations (tests read it)."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="table.up", tooltip="Move the cursor up"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="table.down", tooltip="Move the cursor down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="table.pageup", tooltip="A page up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="table.pagedown", tooltip="A page down"),
        Binding("g,home", "first", "First", show=False, id="table.first", tooltip="First row"),
        Binding("G,end", "last", "Last", show=False, id="table.last", tooltip="Last row"),
        # Not in the footer (help lists it): at 80 columns the footer had no room left for "? Help".
        Binding("space", "mark", "Mark", show=False, id="table.mark", tooltip="Mark the row for a batch action"),
        Binding("enter", "select", "Open", show=True, id="table.select", tooltip="Drill down into the row"),
        Binding(
            "right",
            "hscroll(8)",
            "Scroll right",
            show=False,
            id="table.right",
            tooltip="Scroll the columns right (the first stays)",
        ),
        Binding("left", "hscroll(-8)", "Scroll left", show=False, id="table.left", tooltip="Scroll the columns left"),
        Binding(
            "shift+right",
            "hcolumn(1)",
            "Next column",
            show=False,
            id="table.next-column",
            tooltip="Scroll right by one column",
        ),
        Binding(
            "shift+left",
            "hcolumn(-1)",
            "Previous column",
            show=False,
            id="table.prev-column",
            tooltip="Scroll left by one column",
        ),
        # k9s's sort keys: Shift-N by name, Shift-A by age, ctrl+←/→ selects a column and ctrl+o sorts by it; the same
        # key again turns the order round.
        Binding(
            "N", "sort_name", "Sort name", show=False, id="table.sort-name", tooltip="Sort by name (again: reverse)"
        ),
        Binding("A", "sort_age", "Sort age", show=False, id="table.sort-age", tooltip="Sort by age (again: reverse)"),
        Binding(
            "ctrl+o",
            "sort_selected",
            "Sort column",
            show=False,
            id="table.sort-column",
            tooltip="Sort by the selected column (again: reverse; a third time: the view's own order)",
        ),
        Binding(
            "ctrl+right",
            "select_column(1)",
            "Select next column",
            show=False,
            id="table.select-next",
            tooltip="Select the next column (its header is underlined) for ctrl+o",
        ),
        Binding(
            "ctrl+left",
            "select_column(-1)",
            "Select previous column",
            show=False,
            id="table.select-prev",
            tooltip="Select the previous column for ctrl+o",
        ),
    ]

    COMPONENT_CLASSES = {
        "vtable--header",
        "vtable--cursor",
        "vtable--marked",
        "vtable--empty",
        "vtable--selected-column",
        *(f"vtable--tone-{t}" for t in TONES),
    }

    DEFAULT_CSS = """
    VTable { height: 1fr; background: $surface; scrollbar-size-vertical: 1; overflow-x: hidden; }
    VTable > .vtable--header { text-style: bold; color: $text; background: $panel; }
    VTable > .vtable--cursor { background: $block-cursor-blurred-background; color: $foreground; }
    VTable:focus > .vtable--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold; }
    VTable > .vtable--marked { color: $text-accent; text-style: bold; }
    VTable > .vtable--empty { color: $text-muted; text-style: italic; }
    VTable > .vtable--selected-column { text-style: bold underline; color: $text-accent; }
    /* $text-<hue>: the theme's hue made legible on its surfaces (plain $secondary drew ▲ plugin at 1.7:1). */
    VTable > .vtable--tone-dp { color: $text-secondary; }
    VTable > .vtable--tone-dra { color: $text-primary; }
    VTable > .vtable--tone-both { color: $text-error; text-style: bold; }
    VTable > .vtable--tone-error { color: $text-error; }
    VTable > .vtable--tone-warning { color: $text-warning; }
    VTable > .vtable--tone-info { color: $text-muted; }
    VTable > .vtable--tone-ok { color: $text-success; }
    VTable > .vtable--tone-muted { color: $text-muted; }
    VTable > .vtable--tone-accent { color: $text-accent; }
    """

    # Its watcher repaints: the two rows a move changes, not the whole table (a reactive's own repaint is the whole).
    cursor = reactive(0, always_update=True, init=False, repaint=False)

    class Highlighted(Message):
        def __init__(self, table: VTable, key: Hashable | None) -> None:
            super().__init__()
            self.table = table
            self.key = key

    class MarksChanged(Message):
        def __init__(self, table: VTable) -> None:
            super().__init__()
            self.table = table

    class SortChanged(Message):
        def __init__(self, table: VTable) -> None:
            super().__init__()
            self.table = table

    class Selected(Message):
        def __init__(self, table: VTable, key: Hashable) -> None:
            super().__init__()
            self.table = table
            self.key = key

    def __init__(
        self,
        columns: Sequence[Column],
        *,
        sort_key: Callable[[Hashable, tuple], Any] | None = None,
        name_column: str | None = None,
        pinned: str | None = None,
        empty: str = "nothing to show",
        reach: tuple[str, int] | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.columns = list(columns)
        self._view_sort_key = sort_key or (lambda key, row: key)
        self._sort_key = self._view_sort_key
        keys = [c.key for c in self.columns]
        # The column Shift-N sorts by (k9s's NAME); Shift-A sorts by a column keyed "age", where a view has one.
        self.name_column = keys.index(name_column) if name_column in keys else 0
        # The column that stays on screen when the rows scroll sideways (the first, unless the view names another).
        self.pinned = keys.index(pinned) if pinned in keys else 0
        # (column, cells): on a narrow screen the `give_way` columns shrink until that column's first cells are drawn
        # before the edge (the Devices view at 80 columns cut every MIG device to `gpu-0-mig-1→` while NODE kept 36).
        self._reach = (keys.index(reach[0]), reach[1]) if reach and reach[0] in keys else None
        self.sort_column: int | None = None  # None: the view's own order
        self.sort_descending = False
        self.selected_column = 0
        self._column_chosen = False  # the selected column is underlined once a sort or ctrl+←/→ has chosen one
        self._rows: dict[Hashable, tuple | None] = {}  # None: a lazy row not built yet
        self._unbuilt: set[Hashable] = set()
        self._source: RowSource | None = None
        self._facets: dict[Hashable, dict] = {}
        self._skey: dict[Hashable, tuple] = {}
        self._order_list: list[tuple] = []  # sorted [(sort key, seq)]: every row placed (read through `_order`)
        self._visible_list: list[tuple] = []  # sorted, filtered (read through `_visible`)
        # Rows added during a batch, not placed yet: key -> entry. A view's first fill adds tens of thousands of rows;
        # placing them with one sort when the batch ends costs a fraction of one bisect.insort each.
        self._fresh: dict[Hashable, tuple] = {}
        self._seq: dict[Hashable, int] = {}
        self._by_seq: dict[int, Hashable] = {}
        self._next_seq = 0
        self._widths = [max(c.min_width, len(c.label)) for c in self.columns]
        self._filter: Callable[[Hashable, tuple, dict], bool] | None = None
        self.marked: set[Hashable] = set()
        self.empty_text = empty
        self.ops = 0  # row operations (set that changed something, remove): one event should cost O(1) of them
        self._cursor_key: Hashable | None = None
        self._drawn_cursor: int | None = None  # the row drawn as the cursor's (None: to be repainted whole)
        self._widths_cache: tuple | None = None
        self._batch = 0
        self._batch_dirty = False
        self.hscroll = 0  # cells the columns after the first are scrolled left by

    # ------------------------------------------------------------------ data
    @property
    def _order(self) -> list[tuple]:
        if self._fresh:
            self._place_fresh()
        return self._order_list

    @property
    def _visible(self) -> list[tuple]:
        if self._fresh:
            self._place_fresh()
        return self._visible_list

    def _place_fresh(self) -> None:
        """Put the rows added during a batch in order (the same order one bisect.insort each would give: entries are
        unique by their sequence number), and among the visible ones those the filter passes."""
        fresh = sorted(self._fresh.values())
        self._fresh = {}
        _merge(self._order_list, fresh)
        shown = [e for e in fresh if self._passes(self._by_seq[e[1]])]
        if shown:
            _merge(self._visible_list, shown)

    def _entry(self, key: Hashable) -> tuple:
        return (self._skey[key], self._seq[key])

    # ------------------------------------------------------------------ lazy rows
    def set_source(self, source: RowSource | None) -> None:
        """Where the cells of rows added with `set_lazy` come from."""
        self._source = source

    def set_lazy(self, key: Hashable, order: Any) -> None:
        """Add a row by its key and its place (what the sort key would say of its cells), its cells built only when
        needed; a row held already is placed again and its cells forgotten (built anew when next needed)."""
        if self._sort_key is not self._view_sort_key:
            # Sorted by a column: the place is the column's, read from the cells, so the row is built now.
            for k, cells, facets in self._source(key) if self._source is not None else ():
                if k == key:
                    self.set_row(key, cells, facets)
            return
        skey = (order,)
        known = key in self._skey
        if known and self._rows.get(key) is None and self._skey[key] == skey:
            return  # already waiting to be built, in the same place
        self.ops += 1
        pending = key in self._fresh
        if known and not pending and skey != self._skey[key]:
            self._remove_entry(self._entry(key))
            known = False
        if key not in self._seq:
            self._seq[key] = self._next_seq
            self._by_seq[self._next_seq] = key
            self._next_seq += 1
        self._rows[key] = None
        self._facets.pop(key, None)
        self._unbuilt.add(key)
        self._skey[key] = skey
        if pending or (not known and self._batch):
            self._fresh[key] = (skey, self._seq[key])
        elif not known:
            entry = (skey, self._seq[key])
            bisect.insort(self._order_list, entry)
            if self._passes(key):
                bisect.insort(self._visible_list, entry)
        elif self._filter is not None:
            self._refilter(key)
        if self._batch:
            self._batch_dirty = True
        else:
            self._changed()

    @property
    def unbuilt(self) -> int:
        """How many rows wait for their cells."""
        return len(self._unbuilt)

    def _cells(self, key: Hashable) -> tuple:
        row = self._rows[key]
        if row is None:
            self._build(key)
            row = self._rows[key]
        return row if row is not None else ()

    def _build(self, key: Hashable) -> None:
        """The cells of a lazy row (and of the neighbours the source builds with it) from the source."""
        got = False
        if self._source is not None:
            for k, cells, facets in self._source(key):
                if k in self._unbuilt:
                    self._unbuilt.discard(k)
                    row = tuple(cells)
                    self._rows[k] = row
                    self._facets[k] = facets
                    self._grow(row)
                    got = got or k == key
        if not got and key in self._unbuilt:
            # The source no longer has it (a delta on its way will remove it): drawn blank meanwhile.
            self._unbuilt.discard(key)
            self._rows[key] = ()
            self._facets[key] = {}

    def _grow(self, row: tuple) -> None:
        widths = self._widths
        for i, cell in enumerate(row[: len(widths)]):
            n = len(cell.text if cell.__class__ is Cell else text_of(cell))
            if n > widths[i]:
                mx = self.columns[i].max_width
                widths[i] = min(n, mx) if mx else n

    def build_some(self, n: int) -> int:
        """Build up to `n` lazy rows (a filter is about to read them all); returns how many are left to build."""
        for key in list(itertools.islice(self._unbuilt, n)):
            if key in self._unbuilt:  # a neighbour built with an earlier one is done already
                self._build(key)
        return len(self._unbuilt)

    def sample_widths(self, n: int = WIDTH_SAMPLE) -> None:
        """Build up to `n` lazy rows spread over the order (the first ones among them), so the columns start about as
        wide as their content."""
        if not self._unbuilt:
            return
        order = self._order
        step = max(1, len(order) // n)
        for i in range(0, len(order), step):
            key = self._by_seq[order[i][1]]
            if key in self._unbuilt:
                self._build(key)

    def _build_window(self) -> None:
        """Build the lazy rows on screen before any is drawn; widths that grew redraw the whole table."""
        before = tuple(self._widths)
        top = int(self.scroll_offset.y)
        visible = self._visible
        for i in range(top, min(len(visible), top + max(1, self.size.height))):
            key = self._by_seq[visible[i][1]]
            if key in self._unbuilt:
                self._build(key)
        if tuple(self._widths) != before:
            self.refresh()

    def _refilter(self, key: Hashable) -> None:
        visible = self._visible_list
        entry = self._entry(key)
        i = bisect.bisect_left(visible, entry)
        present = i < len(visible) and visible[i] == entry
        passes = self._passes(key)
        if present and not passes:
            del visible[i]
        elif passes and not present:
            visible.insert(i, entry)

    # ------------------------------------------------------------------ rows
    def set_row(self, key: Hashable, cells: Sequence[CellLike], facets: dict | None = None) -> bool:
        """Add or replace one row; returns False (and counts nothing) when nothing changed."""
        row = tuple(cells)
        old = self._rows.get(key)
        if old is not None and old == row and (facets is None or self._facets.get(key) == facets):
            return False
        if key in self._unbuilt and (self._sort_key(key, row),) == self._skey[key]:
            # A lazy row nobody has read: whatever it was is unknown, and nothing shown changes. Its cells are kept.
            self._unbuilt.discard(key)
            self._rows[key] = row
            self._facets[key] = facets if facets is not None else {}
            self._grow(row)
            if self._filter is not None and key not in self._fresh:
                self._refilter(key)
            return False
        self.ops += 1
        skey = (self._sort_key(key, row),)
        pending = key in self._fresh  # added earlier in this batch: placed when it ends, as it is then
        known = key in self._skey  # placed (or pending), built or not
        self._unbuilt.discard(key)
        if known and not pending:
            entry = self._entry(key)
            if skey != self._skey[key]:
                self._remove_entry(entry)
                known = False
        if key not in self._seq:
            self._seq[key] = self._next_seq
            self._by_seq[self._next_seq] = key
            self._next_seq += 1
        self._rows[key] = row
        if facets is not None:
            self._facets[key] = facets
        widths = self._widths
        for i, cell in enumerate(row[: len(widths)]):
            # _grow, inlined without a call per cell: a view's first fill sets every cell of tens of thousands of rows.
            n = len(cell.text if cell.__class__ is Cell else text_of(cell))
            if n > widths[i]:
                mx = self.columns[i].max_width
                widths[i] = min(n, mx) if mx else n
        if pending or (not known and self._batch):
            self._skey[key] = skey
            self._fresh[key] = (skey, self._seq[key])
        elif not known:
            self._skey[key] = skey
            entry = (skey, self._seq[key])
            bisect.insort(self._order_list, entry)
            if self._passes(key):
                bisect.insort(self._visible_list, entry)
        else:
            self._refilter(key)
        if self._batch:
            self._batch_dirty = True  # what _changed does in a batch, without the call
        else:
            self._changed()
        return True

    def _remove_entry(self, entry: tuple) -> None:
        for lst in (self._order_list, self._visible_list):
            i = bisect.bisect_left(lst, entry)
            if i < len(lst) and lst[i] == entry:
                del lst[i]

    def remove_row(self, key: Hashable) -> bool:
        if key not in self._rows:
            return False
        self.ops += 1
        if self._fresh.pop(key, None) is None:
            self._remove_entry(self._entry(key))
        del self._rows[key]
        self._unbuilt.discard(key)
        self._facets.pop(key, None)
        del self._skey[key]
        del self._by_seq[self._seq.pop(key)]
        self.marked.discard(key)
        self._changed()
        return True

    def row(self, key: Hashable) -> tuple | None:
        return self._cells(key) if key in self._rows else None

    def keys(self) -> list[Hashable]:
        """Visible keys in display order."""
        return [self._by_seq[s] for _, s in self._visible]

    def all_keys(self) -> list[Hashable]:
        """Every row's key, the filtered-out ones too, in no particular order."""
        return list(self._rows)

    @property
    def row_count(self) -> int:
        return len(self._rows)

    @property
    def visible_count(self) -> int:
        return len(self._visible)

    def facets(self, key: Hashable) -> dict:
        if key in self._unbuilt:
            self._build(key)
        return self._facets.get(key, {})

    # ------------------------------------------------------------------ sort
    def sort_by(self, column: int | None, descending: bool = False) -> None:
        """Order the rows by one column's cells (None: the view's own order), the view's order breaking ties; rows set
        later take their place by the same rule. The cursor stays on its row."""
        self.sort_column, self.sort_descending = column, descending
        if column is None:
            self._sort_key = self._view_sort_key
        else:
            ckey, view_key = self.columns[column].key, self._view_sort_key
            wrap = _Descending if descending else (lambda v: v)

            def by_column(key: Hashable, row: tuple) -> Any:
                return (wrap(sort_value(text_of(row[column]) if column < len(row) else "", ckey)), view_key(key, row))

            self._sort_key = by_column
            # Room in the header for the order's arrow.
            self._widths[column] = max(self._widths[column], len(self.columns[column].label) + 1)
        if self._fresh:
            self._place_fresh()
        for key in self._rows:
            # A column's order reads every row's cells: lazy rows are built (a pool at a time, by the source).
            self._skey[key] = (self._sort_key(key, self._cells(key)),)
        self._order_list = sorted(self._entry(k) for k in self._rows)
        self._visible_list = [e for e in self._order_list if self._passes(self._by_seq[e[1]])]
        self._changed()

    def _toggle_sort(self, column: int, third_resets: bool = False) -> None:
        """k9s's way: a column's key sorts by it, the same key again reverses (ctrl+o a third time: the view's own)."""
        if self.sort_column != column:
            self.sort_by(column)
        elif not self.sort_descending:
            self.sort_by(column, descending=True)
        else:
            self.sort_by(None if third_resets else column)
        self.selected_column = column if self.sort_column is not None else self.selected_column
        self._column_chosen = True
        self.post_message(self.SortChanged(self))

    def action_sort_name(self) -> None:
        self._toggle_sort(self.name_column)

    def action_sort_age(self) -> None:
        keys = [c.key for c in self.columns]
        if "age" not in keys:
            self.notify("this view has no AGE column: ctrl+←/→ selects a column, ctrl+o sorts by it", timeout=4)
            return
        self._toggle_sort(keys.index("age"))

    def action_sort_selected(self) -> None:
        self._toggle_sort(self.selected_column, third_resets=True)

    def action_select_column(self, direction: int) -> None:
        self.selected_column = max(0, min(len(self.columns) - 1, self.selected_column + direction))
        self._column_chosen = True
        self._show_column(self.selected_column)
        self.refresh()

    def _show_column(self, column: int) -> None:
        """Scroll sideways so a selected column is in sight (the pinned one always is)."""
        widths = self._layout_widths(self.view_width)
        pinned = min(self.pinned, len(widths) - 1)
        if column == pinned:
            return
        before, pw = self._pin(widths)
        x = sum(w + 1 for w in widths[:column])  # where the column starts on an endless screen, after the gutter
        room = self.view_width - 2
        s = self.hscroll
        under = pw if column > pinned and s >= before else 0  # hidden under the stuck pinned column
        if x < s + under:
            s = x - (pw if column > pinned else 0)
        elif x + widths[column] > s + room:
            s = x + widths[column] - room + 1
        self.hscroll = max(0, min(self.max_hscroll(), s))

    def sort_label(self) -> str:
        """What the rows are ordered by, for a heading: `sorted by AGE ↓`, or "" in the view's own order."""
        if self.sort_column is None:
            return ""
        return f"sorted by {self.columns[self.sort_column].label} {'↓' if self.sort_descending else '↑'}"

    # ------------------------------------------------------------------ filter
    def _passes(self, key: Hashable) -> bool:
        if self._filter is None:
            return True
        return self._filter(key, self._cells(key), self.facets(key))

    def set_filter(self, predicate: Callable[[Hashable, tuple, dict], bool] | None) -> None:
        self._filter = predicate
        self._visible_list = [e for e in self._order if self._passes(self._by_seq[e[1]])]
        self._changed()

    # ------------------------------------------------------------------ cursor
    @property
    def cursor_key(self) -> Hashable | None:
        if 0 <= self.cursor < len(self._visible):
            return self._by_seq[self._visible[self.cursor][1]]
        return None

    def move_to(self, key: Hashable) -> bool:
        if key not in self._rows:
            return False
        entry = self._entry(key)
        i = bisect.bisect_left(self._visible, entry)
        if i < len(self._visible) and self._visible[i] == entry:
            self.cursor = i
            return True
        return False

    def begin_batch(self) -> None:
        """Defer layout and repaint until `end_batch`: thousands of row operations cost one refresh."""
        self._batch += 1

    def end_batch(self) -> None:
        self._batch = max(0, self._batch - 1)
        if self._batch == 0 and self._batch_dirty:
            self._batch_dirty = False
            self._changed()

    def _changed(self) -> None:
        if self._batch:
            self._batch_dirty = True
            return
        # Keep the cursor on the same object while rows come and go around it.
        key = self._cursor_key
        if key is not None and key in self._rows:
            entry = self._entry(key)
            i = bisect.bisect_left(self._visible, entry)
            if i < len(self._visible) and self._visible[i] == entry and i != self.cursor:
                self.set_reactive(VTable.cursor, i)
        n = len(self._visible)
        if self.cursor >= n:
            self.set_reactive(VTable.cursor, max(0, n - 1))
        # Sideways scrolling is the table's own (the pinned column stays), so the scroll view only ever scrolls down.
        self.virtual_size = Size(self.size.width, n + 1)
        self.refresh()
        self._drawn_cursor = self.cursor

    def watch_cursor(self, value: int) -> None:
        n = len(self._visible)
        if n and not 0 <= value < n:
            self.cursor = max(0, min(n - 1, value))
            return
        new_key = self.cursor_key
        changed = new_key != self._cursor_key
        self._cursor_key = new_key
        top = self.scroll_offset.y
        self._scroll_to_cursor()
        drawn, self._drawn_cursor = self._drawn_cursor, value
        if drawn is not None and self.scroll_offset.y == top:
            # The rows stay where they are: only the row the cursor left and the one it reached change (a keystroke
            # drew every row of the screen before: ~10 ms of the Nodes view's 36). Lines count from the header's, 0.
            self.refresh_line(drawn + 1)
            self.refresh_line(value + 1)
        else:
            self.refresh()
        if changed:
            self.post_message(self.Highlighted(self, new_key))

    def _scroll_to_cursor(self) -> None:
        body = max(1, self.size.height - 1)
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False, immediate=True)

    def on_resize(self, event: events.Resize) -> None:
        self._scroll_to_cursor()
        self.on_resize_hscroll()

    def action_cursor(self, delta: int) -> None:
        self.cursor = max(0, min(len(self._visible) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height - 2))

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = max(0, len(self._visible) - 1)

    def action_mark(self) -> None:
        key = self.cursor_key
        if key is None:
            return
        self.marked.symmetric_difference_update({key})
        self.action_cursor(1)
        self.refresh()
        self.post_message(self.MarksChanged(self))

    def action_select(self) -> None:
        key = self.cursor_key
        if key is not None:
            self.post_message(self.Selected(self, key))

    async def _on_click(self, event: events.Click) -> None:  # Textual's handler is a coroutine
        row = int(self.scroll_offset.y) + event.y - 1
        if event.y >= 1 and 0 <= row < len(self._visible):
            self.cursor = row
            if event.chain >= 2:
                self.action_select()

    # ------------------------------------------------------------------ rendering
    def _layout_widths(self, width: int) -> list[int]:
        """Each column as wide as its content (up to its maximum, never narrower than its header); the flexible column
        takes what is left. Wider than the screen: the `give_way` columns shrink (cut with …) until the `reach` column
        is on screen, then the columns after the first scroll sideways (→ ←)."""
        cache_key = (width, tuple(self._widths))
        if self._widths_cache is not None and self._widths_cache[0] == cache_key:
            return self._widths_cache[1]
        widths = list(self._widths)
        used = 2 + sum(widths) + len(widths) - 1  # the mark gutter takes 2 columns; one space between columns
        flex = [i for i, c in enumerate(self.columns) if c.max_width is None]
        if used < width and flex:
            widths[flex[-1]] += width - used
        elif used > width and self._reach is not None:
            r, cells = self._reach
            excess = 2 + sum(widths[:r]) + r + min(cells, widths[r]) - width
            for _rank, i in sorted((c.give_way, i) for i, c in enumerate(self.columns[:r]) if c.give_way):
                if excess <= 0:
                    break
                give = min(excess, widths[i] - max(self.columns[i].min_width, len(self.columns[i].label)))
                if give > 0:
                    widths[i] -= give
                    excess -= give
        self._widths_cache = (cache_key, widths)
        return widths

    @property
    def view_width(self) -> int:
        """The columns the rows are drawn in: the widget's width less a vertical scrollbar when one is shown (drawing
        to the full width let the scrollbar hide the last column, and the `→` that says a row goes on)."""
        return self.scrollable_content_region.width or self.size.width

    def _pin(self, widths: list[int]) -> tuple[int, int]:
        """(how wide the columns before the pinned one are, the pinned column's width with its space). Scrolled
        sideways, the columns before the pinned one go first, then it stays at the left edge while the ones after it
        scroll beneath (the Devices view keeps DEVICE, the device's name, not DRIVER, the same on most rows)."""
        if not widths:
            return 0, 0
        p = min(self.pinned, len(widths) - 1)
        return sum(w + 1 for w in widths[:p]), widths[p] + 1

    def _frozen_width(self, widths: list[int]) -> int:
        """What stays put at the current sideways scroll: the gutter, and the pinned column once it reached the edge."""
        before, pw = self._pin(widths)
        return 2 + pw if widths and self.hscroll >= before else 2

    def _spans(self, widths: list[int], width: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int]:
        """Which parts of a row drawn on an endless screen are shown `width` wide at the current scroll: (the spans
        drawn, left to right; the spans scrolled past on the left; where the part past the right edge begins)."""
        before, pw = self._pin(widths)
        frozen = self._frozen_width(widths)
        s = self.hscroll
        if frozen > 2:  # the pinned column stays at the left edge; what comes after it scrolls beneath
            start = 2 + pw + s
            shown = [(0, 2), (2 + before, 2 + before + pw)]
            hidden = [(2, 2 + before), (2 + before + pw, start)]
        else:
            start = 2 + s
            shown, hidden = [(0, 2)], [(2, start)]
        right = start + max(0, width - frozen)
        return [*shown, (start, right)], hidden, right

    def _total_width(self) -> int:
        widths = self._layout_widths(self.view_width)
        return 2 + sum(widths) + len(widths) - 1

    def max_hscroll(self) -> int:
        return max(0, self._total_width() - self.view_width)

    def action_hscroll(self, delta: int) -> None:
        new = max(0, min(self.max_hscroll(), self.hscroll + delta))
        if new != self.hscroll:
            self.hscroll = new
            self.refresh()

    def action_hcolumn(self, direction: int) -> None:
        """shift+→ / shift+←: scroll so that the next (previous) column starts at the left edge (or after the pinned
        one)."""
        widths = self._layout_widths(self.view_width)
        pinned = min(self.pinned, len(widths) - 1)
        _before, pw = self._pin(widths)
        found, x = set(), 0
        for i, w in enumerate(widths):
            found.add(x - pw if i > pinned else x)  # a column after the pinned one starts right after it
            x += w + 1
        starts = sorted(found)
        if direction > 0:
            nxt = [st for st in starts if st > self.hscroll]
            target = nxt[0] if nxt else self.max_hscroll()
        else:
            prev = [st for st in starts if st < self.hscroll]
            target = prev[-1] if prev else 0
        self.hscroll = max(0, min(self.max_hscroll(), target))
        self.refresh()

    def on_resize_hscroll(self) -> None:
        self.hscroll = min(self.hscroll, self.max_hscroll())

    def _line(
        self, cells: Sequence[CellLike], widths: list[int], base: Style, gutter: str, tone_style: bool = True
    ) -> list[Segment]:
        segs = [Segment(gutter, base)]
        for i, w in enumerate(widths):
            cell = cells[i] if i < len(cells) else ""
            style = base
            tone = tone_of(cell) if tone_style else None
            if tone:
                style = base + self.get_component_rich_style(f"vtable--tone-{tone}", partial=True)
            segs.append(Segment(_cell_text(text_of(cell), w, self.columns[i].trim), style))
            if i < len(widths) - 1:
                segs.append(Segment(" ", base))
        return segs

    def _scrolled(
        self, segs: list[Segment], widths: list[int], width: int, style: Style, header: bool = False
    ) -> Strip:
        """The pinned column stays; the others are cropped by the horizontal scroll."""
        strip = Strip(segs)
        frozen = self._frozen_width(widths)
        if self.hscroll or strip.cell_length > width:
            total = strip.cell_length
            shown, hidden, right = self._spans(widths, width)
            # A row whose cells go on past either edge says so where they are cut (issue 30: `✔ ru`, `Hopper (2`).
            more_right = not header and total > right and bool(strip.crop(right, total).text.strip())
            more_left = (
                not header and self.hscroll > 0 and any(strip.crop(a, b).text.strip() for a, b in hidden if b > a)
            )
            strip = Strip.join([strip.crop(a, b) for a, b in shown])
            if more_left or more_right:
                strip = strip.extend_cell_length(width, style)
                parts = [strip.crop(0, frozen)]
                if more_left:
                    parts.append(Strip([Segment("←", style)]))
                parts.append(strip.crop(frozen + (1 if more_left else 0), width - (1 if more_right else 0)))
                if more_right:
                    parts.append(Strip([Segment("→", style)]))
                strip = Strip.join(parts)
            if header:
                # Arrows on the header say there is more to either side (and which key shows it).
                more_left, more_right = self.hscroll > 0, self.hscroll < self.max_hscroll()
                strip = strip.extend_cell_length(width, style)
                parts = [strip.crop(0, frozen - 1)]
                parts.append(Strip([Segment("←" if more_left else " ", style)]))
                parts.append(strip.crop(frozen, width - 1))
                parts.append(Strip([Segment("→" if more_right else " ", style)]))
                strip = Strip.join(parts)
        return strip.extend_cell_length(width, style).crop(0, width)

    def render_line(self, y: int) -> Strip:
        if self._unbuilt:
            self._build_window()
        width = self.view_width
        widths = self._layout_widths(width)
        base = self.rich_style
        if y == 0:
            header = base + self.get_component_rich_style("vtable--header")
            labels = [c.label for c in self.columns]
            if self.sort_column is not None:
                labels[self.sort_column] += "↓" if self.sort_descending else "↑"
            segs = self._line(labels, widths, header, "  ", tone_style=False)
            if self._column_chosen and self.has_focus and self.selected_column < len(widths):
                # The selected column's header (ctrl+←/→), what ctrl+o sorts by: segment 1 + 2*i is column i's cell.
                i = 1 + 2 * self.selected_column
                segs[i] = Segment(
                    segs[i].text, header + self.get_component_rich_style("vtable--selected-column", partial=True)
                )
            return self._scrolled(segs, widths, width, header, header=True)
        index = int(self.scroll_offset.y) + y - 1
        if index >= len(self._visible):
            if index == 0 and not self._visible:
                style = base + self.get_component_rich_style("vtable--empty")
                return Strip([Segment(_cell_text("  " + self.empty_text, width), style)])
            return Strip.blank(width, base)
        key = self._by_seq[self._visible[index][1]]
        row = self._cells(key)
        style = base
        if key in self.marked:
            style = style + self.get_component_rich_style("vtable--marked")
        on_cursor = index == self.cursor
        if on_cursor:
            style = style + self.get_component_rich_style("vtable--cursor")
        gutter = MARK + " " if key in self.marked else "  "
        # On the highlighted row the cursor's own colours draw every cell: a tone's hue on the cursor's background can
        # vanish (● DRA in the highlight's colour); the glyph and the word still say what the hue said.
        segs = self._line(row, widths, style, gutter, tone_style=not (on_cursor and self.has_focus))
        return self._scrolled(segs, widths, width, style)

    def visible_text(self) -> list[str]:
        """What the rows say, as plain lines (tests and screenshots read it)."""
        out = []
        for _, s in self._visible:
            out.append("  ".join(text_of(c) for c in self._cells(self._by_seq[s])))
        return out
