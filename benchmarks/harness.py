"""Timing helpers and the one table every benchmark prints into."""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable, Iterable


@dataclasses.dataclass
class Figure:
    """One measured figure: its runs, its unit, its target and whether the target is met."""

    name: str
    unit: str
    runs: list[float]
    target: str = ""
    # Returns True when the median meets the target; None when there is no target.
    meets: Callable[[float], bool] | None = None
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def low(self) -> float:
        return min(self.runs)

    @property
    def high(self) -> float:
        return max(self.runs)

    @property
    def verdict(self) -> str:
        if self.meets is None:
            return ""
        return "met" if self.meets(self.median) else "MISSED"


def time_runs(fn: Callable[[], object], runs: int = 5, warmup: int = 0) -> list[float]:
    """Wall-clock seconds of `fn` over `runs` runs, after `warmup` discarded ones."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def format_table(figures: Iterable[Figure], *, markdown: bool = False) -> str:
    """The one table: figure, median, min–max, unit, target, verdict and note (plain columns, or Markdown for the
    README)."""
    rows = [("figure", "median", "min–max", "unit", "target", "verdict", "note")]
    for f in figures:
        span = "" if len(f.runs) < 2 else f"{_fmt(f.low)}–{_fmt(f.high)}"
        rows.append((f.name, _fmt(f.median), span, f.unit, f.target, f.verdict, f.note))
    if markdown:
        esc = lambda c: c.replace("|", "\\|")  # noqa: E731
        lines = [
            "| " + " | ".join(rows[0]) + " |",
            "|" + "|".join(("---", "---:", "---:", "---", "---", "---", "---")) + "|",
        ]
        lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows[1:]]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        lines.append(
            "  ".join(
                cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) if i in (1, 2) else cell.ljust(widths[i])
                for i, cell in enumerate(r)
            ).rstrip()
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
