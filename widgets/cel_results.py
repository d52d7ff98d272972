"""The playground's live result: counts overall and by pool and product, runtime errors with their reach, and the device
table."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, cast

from dragoman.fleet.cel_explain import short_clause
from dragoman.fleet.cel_playground import BLOCKS, ORDER, Outcome, counts_text
from dragoman.fleet.glyphs import labelled
from dragoman.fleet.views.cells import short_product
from dragoman.widgets.marked_table import MarkedTable
from rich.cells import cell_len
from rich.markup import escape
from rich.text import Text
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.widgets import DataTable

# One glyph per meaning: `·` is "left out" (a near miss is left out too, by one clause: the word says which).
GLYPH = {
    "match": labelled("done", "match"),
    "no-match": labelled("none", "no match"),
    "near-miss": labelled("near", "near miss"),
    "error": labelled("error", "error"),
}
# Why before where: at 80 columns the reason (the clause, the device's value) is what must not fall off the edge.
COLUMNS = ("result", "why", "product", "device", "pool")


def by_node_pool(summary: dict, pool_of: Callable[[str | None], str | None]) -> list[dict]:
    """The per-resource-pool counts (one per node for the NVIDIA driver) summed by the nodes' pool label."""
    acc: dict[str, list[int]] = {}
    for p in summary["pools"]:
        name = pool_of(p.get("node")) or p["pool"]
        a = acc.setdefault(name, [0, 0, 0])
        a[0] += p["devices"]
        a[1] += p["matched"]
        a[2] += p["errors"]
    return [{"pool": k, "devices": v[0], "matched": v[1], "errors": v[2]} for k, v in acc.items()]


# The last breakdown made, with the summary and pool_of it was made from: an outcome's counts are drawn twice (when it
# is evaluated, then with "allocatable now" when it is explained), and summing 5,000 per-node pools on the UI thread
# took ~10 ms each time. The summary is kept here so that its id cannot be reused while it is.
_last_breakdown: tuple[dict, Callable[[str | None], str | None], list[dict]] | None = None


def _breakdown(summary: dict, pool_of: Callable[[str | None], str | None]) -> list[dict]:
    global _last_breakdown
    last = _last_breakdown
    if last is not None and last[0] is summary and last[1] == pool_of:
        return last[2]
    pools = by_node_pool(summary, pool_of)
    _last_breakdown = (summary, pool_of, pools)
    return pools


def counts_markup(out: Outcome, pool_of: Callable[[str | None], str | None] | None = None, *, top: int = 5) -> str:
    """Counts, the breakdown by product and by node pool (the most matched first), errors beside each."""
    s = out.summary
    if s is None:
        return ""
    lines = [f"[b]{counts_text(s)}[/b]" + (f" · {escape(out.allocatable)}" if out.allocatable else "")]
    prods = sorted(s["products"], key=lambda p: (-p["matched"], p["product"]))
    lines.append(
        "by product: "
        + " · ".join(
            f"{escape(short_product(p['product']))} {p['matched']}/{p['devices']}"
            + (f" ({p['errors']} err)" if p["errors"] else "")
            for p in prods[:top]
        )
        + (f" · … {len(prods) - top} more" if len(prods) > top else "")
    )
    pools = _breakdown(s, pool_of) if pool_of is not None else s["pools"]
    pools = sorted(pools, key=lambda p: (-p["matched"], -p["errors"], p["pool"]))
    lines.append(
        "by pool: "
        + " · ".join(
            f"{escape(p['pool'])} {p['matched']}/{p['devices']}" + (f" ({p['errors']} err)" if p["errors"] else "")
            for p in pools[:top]
        )
        + (f" · … {len(pools) - top} more" if len(pools) > top else "")
    )
    return "\n".join(lines)


def errors_markup(out: Outcome, lines: int = 3) -> str:
    """Runtime errors with their reach (each blocks scheduling), then the near misses (devices one clause alone leaves
    out, per product, with what they publish for it), then the clauses that left devices out, most first; `lines` at
    most."""
    rows = [
        f"[b $error]✗ {escape(reason)}[/] on {n} device{'s' if n != 1 else ''} — {BLOCKS}"
        for reason, n in out.errors[:2]
    ]
    shown = 0
    for nm in out.near:
        if len(rows) >= lines - (1 if out.false_clauses and len(out.near) > 1 else 0):
            break
        rows.append(f"[b]{escape(nm.sentence())}[/b]")
        shown += 1
    hidden = len(out.near) - shown
    if out.false_clauses and len(rows) < lines:
        top = 2
        rows.append(
            (f"… {hidden} more near misses · " if hidden > 0 else "")
            + "left out by: "
            + " · ".join(f"{escape(short_clause(c))} ×{n}" for c, n in out.false_clauses[:top])
            + (f" · … {len(out.false_clauses) - top} more" if len(out.false_clauses) > top else "")
        )
    return "\n".join(rows[:lines])


def caret_in_view(caret: str, width: int) -> str:
    """A compile error's snippet and caret lines (CelCompileError.caret) cut around the caret to fit `width` columns:
    on a long selector the caret fell past the line's end, cut off with the rest. Both lines are cut at the same
    character (the caret line has one mark per character of the snippet), the cut shown as `…`."""
    lines = caret.split("\n")
    if len(lines) != 2 or not lines[1].startswith(" | "):
        return caret
    snippet, marks = lines[0][3:], lines[1][3:]
    room = width - 3
    if room < 10 or cell_len(marks) <= room:
        return caret
    # The caret about two thirds along: what leads up to an error says more than what follows it. Walked back from
    # the caret, one character at a time (a pasted selector's line can be 100,000 characters long).
    target, shown, start = room * 2 // 3 + 1, 0, len(marks)
    while start > 1 and shown + cell_len(marks[start - 1]) <= target:
        start -= 1
        shown += cell_len(marks[start])
    start = min(start, len(marks) - 1)
    return f" | …{snippet[start + 1 :]}\n | .{marks[start + 1 :]}"


def _cell(text: str) -> Text:
    # Plain text, as the table would make of a string without markup, minus the markup parse: a refill measures and
    # renders every cell, on every keystroke that compiles. Selector text is shown as typed (`[x]` is not a style).
    # Rows are one line high: the table keeps a string's first line only, and so does this.
    cut = text.find("\n")
    if cut != -1 and cut != len(text) - 1:
        text = text[:cut]
    return Text(text, no_wrap=True, end="")


class ResultTable(MarkedTable):
    """The playground's device table, moved as every table view is: j/k, g/home first row, G/end last row."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="cel.table.down", tooltip="Next row"),
        Binding("k", "cursor_up", "Up", show=False, id="cel.table.up", tooltip="Previous row"),
        Binding("g,home", "first", "First", show=False, id="cel.table.first", tooltip="First row"),
        Binding("G,end", "last", "Last", show=False, id="cel.table.last", tooltip="Last row"),
    ]

    def action_first(self) -> None:
        if self.row_count:
            self.move_cursor(row=0, animate=False)

    def action_last(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1, animate=False)


def row_facets(row: tuple) -> dict[str, str]:
    """What `key=value` of the `/` filter reads on an Outcome row (result=near-miss, pool=…, product=…)."""
    kind, driver, pool, device, node, product, reason = row
    return {
        "result": kind,
        "driver": driver,
        "pool": pool,
        "device": device,
        "node": node,
        "product": product,
        "productName": product,
        "why": reason,
    }


def filtered(out: Outcome, row_filter: Callable | None) -> Outcome:
    """The outcome with only the rows the `/` filter keeps (counts unchanged: they are the fleet's)."""
    if row_filter is None:
        return out
    keep = [r for r in out.rows if row_filter(None, (GLYPH.get(r[0], r[0]),) + r[1:], row_facets(r))]
    return dataclasses.replace(out, rows=keep)


def table_rows(out: Outcome) -> list[tuple[str, ...]]:
    """The table's rows: errors (they block scheduling), near misses, what the selector picks, then the rest it leaves
    out (cel_playground.ORDER)."""
    ordered = sorted(out.rows, key=lambda r: ORDER.index(r[0]) if r[0] in ORDER else len(ORDER))
    return [
        (GLYPH[kind], reason, short_product(product), device, pool)
        for kind, _driver, pool, device, _node, product, reason in ordered
    ]


def fill(table: DataTable, out: Outcome) -> None:
    """Rows: errors, then matches, then non-matches with their first false clause."""
    rows = table_rows(out)
    shown = getattr(table, "_cel_rows", None)
    cast(Any, table)._cel_rows = rows  # remembered on the table: the rows it shows
    if shown is None or len(shown) != len(rows) or table.row_count != len(rows) or len(table.columns) != len(COLUMNS):
        table.clear()
        for i, row in enumerate(rows):
            table.add_row(*(_cell(v) for v in row), key=str(i))
        return
    # As many rows as on screen (typing mostly changes the reasons): change only the cells that differ. A refill
    # measured and laid out all 750 cells again, on every keystroke that compiles.
    keys = list(table.columns)
    changed = [
        (i, j, new[j]) for i, (old, new) in enumerate(zip(shown, rows)) for j in range(len(COLUMNS)) if old[j] != new[j]
    ]
    # Columns grow to fit, never shrink (as a refill's widths do): only the widest new cell, when wider, asks for it.
    widest: dict[int, tuple[int, int]] = {}
    for n, (_i, j, v) in enumerate(changed):
        w = cell_len(_cell(v).plain.rstrip("\n"))
        if w > table.columns[keys[j]].content_width and w > widest.get(j, (-1, 0))[1]:
            widest[j] = (n, w)
    grow = {n for n, _ in widest.values()}
    for n, (i, j, v) in enumerate(changed):
        table.update_cell(str(i), keys[j], _cell(v), update_width=n in grow)
    # Where a refill leaves the cursor and the scroll: at the top.
    table.cursor_coordinate = Coordinate(0, 0)
    table.hover_coordinate = Coordinate(0, 0)
    table.scroll_to(0, 0, animate=False)
