"""The playground's live result: counts overall and by pool and product, runtime errors with their reach, and the device table."""

from __future__ import annotations

from rich.markup import escape
from textual.widgets import DataTable

from dragoman.fleet.cel_playground import BLOCKS, Outcome, counts_text

GLYPH = {"match": "✓ match", "no-match": "· no match", "error": "✗ error"}
COLUMNS = ("result", "pool", "device", "product", "why")


def counts_markup(out: Outcome, *, top: int = 4) -> str:
    """Counts, the breakdown by product and pool (the most matched first), and every runtime error with its reach."""
    s = out.summary
    if s is None:
        return ""
    lines = [f"[b]{counts_text(s)}[/b]"]
    prods = sorted(s["products"], key=lambda p: (-p["matched"], p["product"]))
    lines.append("by product: " + " · ".join(f"{escape(p['product'])} {p['matched']}/{p['devices']}"
                                              + (f" ({p['errors']} err)" if p["errors"] else "") for p in prods[:top])
                 + (f" · … {len(prods) - top} more" if len(prods) > top else ""))
    pools = sorted(s["pools"], key=lambda p: (-p["matched"], -p["errors"], p["pool"]))
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


def fill(table: DataTable, out: Outcome) -> None:
    """Rows as the explanation produced them (errors, then non-matches with their first false clause, then matches)."""
    table.clear()
    for i, (kind, _driver, pool, device, _node, product, reason) in enumerate(out.rows):
        table.add_row(GLYPH[kind], pool, device, product, reason, key=str(i))
