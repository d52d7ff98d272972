"""The playground's live result: counts overall and by pool and product, runtime errors with their reach, and the device table."""

from __future__ import annotations

from typing import Callable

from rich.markup import escape
from rich.text import Text
from textual.widgets import DataTable

from dragoman.fleet.cel_playground import BLOCKS, Outcome, counts_text

GLYPH = {"match": "✓ match", "no-match": "· no match", "error": "✗ error"}
COLUMNS = ("result", "pool", "device", "product", "why")


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


def counts_markup(out: Outcome, pool_of: Callable[[str | None], str | None] | None = None, *, top: int = 5) -> str:
    """Counts, the breakdown by product and by node pool (the most matched first), errors beside each."""
    s = out.summary
    if s is None:
        return ""
    lines = [f"[b]{counts_text(s)}[/b]"]
    prods = sorted(s["products"], key=lambda p: (-p["matched"], p["product"]))
    lines.append("by product: " + " · ".join(f"{escape(p['product'])} {p['matched']}/{p['devices']}"
                                              + (f" ({p['errors']} err)" if p["errors"] else "") for p in prods[:top])
                 + (f" · … {len(prods) - top} more" if len(prods) > top else ""))
    pools = by_node_pool(s, pool_of) if pool_of is not None else s["pools"]
    pools = sorted(pools, key=lambda p: (-p["matched"], -p["errors"], p["pool"]))
    lines.append("by pool: " + " · ".join(f"{escape(p['pool'])} {p['matched']}/{p['devices']}"
                                           + (f" ({p['errors']} err)" if p["errors"] else "") for p in pools[:top])
                 + (f" · … {len(pools) - top} more" if len(pools) > top else ""))
    return "\n".join(lines)


def errors_markup(out: Outcome, top: int = 2) -> str:
    """Runtime errors with their reach (each blocks scheduling), then the clauses that left devices out, most first."""
    lines = [f"[b $error]✗ {escape(reason)}[/] on {n} device{'s' if n != 1 else ''} — {BLOCKS}" for reason, n in out.errors[:2]]
    if out.false_clauses:
        lines.append("left out by: " + " · ".join(f"{escape(c)} ×{n}" for c, n in out.false_clauses[:top])
                     + (f" · … {len(out.false_clauses) - top} more" if len(out.false_clauses) > top else ""))
    return "\n".join(lines)


def _cell(text: str) -> Text:
    # Plain text, as the table would make of a string without markup, minus the markup parse: a refill measures and
    # renders every cell, on every keystroke that compiles. Selector text is shown as typed (`[x]` is not a style).
    return Text(text, no_wrap=True, end="")


def fill(table: DataTable, out: Outcome) -> None:
    """Rows as the explanation produced them (errors, then non-matches with their first false clause, then matches)."""
    table.clear()
    for i, (kind, _driver, pool, device, _node, product, reason) in enumerate(out.rows):
        table.add_row(_cell(GLYPH[kind]), _cell(pool), _cell(device), _cell(product), _cell(reason), key=str(i))
