"""The scale fleet's figures against the README's table (issue 21: "no worse than today's"): one row per figure of this
run that the table also holds, with the README's value as the target.

The README is read when the run ends, so the baseline is whatever table the README shows (the lead updates it from a
quiet run); nothing here repeats its numbers. A figure is "no worse" within NOISE of the README's value: wall-clock
figures on a shared 2-core machine move by more than that between quiet runs, so a miss here on a busy machine says
"rerun quietly" before it says "regression"."""

from __future__ import annotations

import pathlib
import re

from dragoman.benchmarks.harness import Figure, _fmt

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
NOISE = 0.10
_NUMBER = re.compile(r"[\d,]*\.?\d+")

# (README row label prefix, which number of its median cell, figure name pattern of this run, README unit -> figure
# unit factor, True when higher is better).
ROWS: tuple[tuple[str, int, str, float, bool], ...] = (
    ("sim: start with", 0, r"^sim: start with the fleet loaded$", 1.0, False),
    ("sim: peak server memory", 0, r"^sim: peak server memory$", 1.0, False),
    ("sim: full paginated LIST of", 0, r"^sim: full paginated LIST of [\d,]+ pods$", 1.0, False),
    ("sim: full paginated LIST of", 1, r"^sim: full paginated LIST of [\d,]+ slices$", 1.0, False),
    ("model: complete from scratch", 0, r"^model: complete from scratch$", 1.0, False),
    ("model: one event / events absorbed", 0, r"^model: one event$", 1.0, False),
    ("model: one event / events absorbed", 1, r"^model: events absorbed$", 1.0, True),
    ("sync: connect + LIST all 17 kinds", 0, r"^sync: connect \+ LIST all 17 kinds until live$", 1.0, False),
    ("sync ÷ `kubectl get pods", 0, r"^sync of all kinds ÷ kubectl pair$", 1.0, False),
    ("sync: peak memory", 0, r"^sync: peak memory of the syncing process$", 1.0, False),
    ("watch: one event decoded and applied", 0, r"^watch: one event decoded and applied$", 1.0, False),
    ("watch: one event decoded and applied", 1, r"^watch: burst of [\d,]+ DELETED events absorbed$", 1.0, True),
    ("TUI: first paint / every view populated", 0, r"^tui: first paint$", 1.0, False),
    ("TUI: first paint / every view populated", 1, r"^tui: every view populated$", 1.0, False),
    ("TUI: keystroke p95", 0, r"^tui: keystroke to screen, p95$", 1.0, False),
    ("playground: keystroke → counts p95", 0, r"^playground keystroke -> counts, p95 \(", 1.0, False),
    ("playground: keystroke → counts p95", 1, r"^playground keystroke -> counts, CPU p95 \(", 1.0, False),
    (
        "playground: keystrokes whose text compiles",
        0,
        r"^playground keystroke -> counts, compiling prefixes",
        1.0,
        False,
    ),
    ("migration: plan / run", 0, r"^migration: plan a [\d,]+-node pool$", 1.0, False),
)


def readme_rows(text: str) -> dict[str, str]:
    """The median cells of the README's first Benchmarks table, by figure label."""
    section = text.split("## Benchmarks", 1)[-1]
    rows: dict[str, str] = {}
    started = False
    for line in section.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 2 and cells[0] not in ("figure", "---"):
                rows[cells[0]] = cells[1]
            started = True
        elif started:
            break  # the first table only: the envelope's and the control plane's come later
    return rows


def compare(figures: list[Figure], text: str | None = None) -> list[Figure]:
    """A row per figure of this run that the README's table holds: now vs then, met when no worse (within NOISE)."""
    try:
        rows = readme_rows(README.read_text(encoding="utf-8") if text is None else text)
    except OSError:
        return []
    out = []
    for label, index, pattern, factor, higher in ROWS:
        cell = next((v for k, v in rows.items() if k.startswith(label)), None)
        fig = next((f for f in figures if re.search(pattern, f.name) and f.runs and f.median), None)
        if cell is None or fig is None:
            continue
        numbers = _NUMBER.findall(cell)
        if len(numbers) <= index:
            continue
        then = float(numbers[index].replace(",", "")) * factor
        now = fig.median
        bound = then * (1 - NOISE) if higher else then * (1 + NOISE)

        def meets(v: float, bound: float = bound, higher: bool = higher) -> bool:
            return v >= bound if higher else v <= bound

        out.append(
            Figure(
                f"vs README: {fig.name}",
                fig.unit,
                [now],
                f"{'>=' if higher else '<='} {_fmt(then)} (README) {'-' if higher else '+'}{NOISE:.0%}",
                meets,
                f"README: {cell}",
            )
        )
    return out
