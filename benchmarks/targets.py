"""The targets of issue 21 (Kubernetes' envelope on a laptop), each beside the figure of this run that measures it: the
table the README's envelope section shows, printed after every run so a piece of a run says what it did not measure.

Each row names the issue's words, the figure it reads (by name, as the benchmarks print it) and, where the figure has
a steadier companion on a shared machine (CPU time, a ratio against kubectl in the same run), that one in the note."""

from __future__ import annotations

import re

from dragoman.benchmarks.harness import Figure, _fmt

# (the words, the figure's name pattern, the companion figure's name pattern shown in the note or "", and the
# companion's label).
TARGETS: tuple[tuple[str, str, str, str], ...] = (
    (
        "live model of the envelope fleet (connect + LIST + watch until live)",
        r"^envelope: connect \+ LIST \+ watch all 17 kinds until live$",
        r"^envelope: client CPU time of that sync$",
        "client CPU",
    ),
    ("peak memory of the syncing process", r"^envelope: peak memory of the syncing process$", "", ""),
    (
        "live model ÷ the kubectl pair's time",
        r"^envelope: live model ÷ kubectl pair$",
        r"^envelope: kubectl get pods",
        "the kubectl pair",
    ),
    (
        "one watch event decoded and applied",
        r"^envelope: watch, one MODIFIED pod decoded and applied$",
        "",
        "",
    ),
    (
        "events absorbed during a burst",
        r"^envelope: watch, burst of [\d,]+ churn events absorbed$",
        r"^envelope: the client's CPU per burst event$",
        "client CPU per event",
    ),
    ("TUI first paint", r"^envelope tui: first paint$", "", ""),
    (
        "TUI every view populated",
        r"^envelope tui: every view populated$",
        r"^envelope tui: every kind listed$",
        "every kind listed",
    ),
    ("TUI keystroke p95 while 1,000 events/s arrive", r"^envelope tui: keystroke to screen, p95$", "", ""),
    (
        "playground keystroke p95 over 40,000 devices",
        r"^envelope playground keystroke -> counts, p95 ",
        r"^envelope playground keystroke -> counts, CPU p95 ",
        "CPU p95",
    ),
    ("a 500-node pool's migration plan", r"^envelope migration: plan a ", "", ""),
)
# The last target: the scale fleet's figures no worse than the README's table (benchmarks/readme_baseline.py's rows).
README_PREFIX = "vs README: "


def _find(figures: list[Figure], pattern: str) -> Figure | None:
    return next((f for f in figures if pattern and re.search(pattern, f.name)), None)


def _value(f: Figure) -> str:
    return f"{_fmt(f.median)} {f.unit}".strip() if f.runs else ""


def rows(figures: list[Figure]) -> list[tuple[str, str, str, str, str]]:
    """(target, measured, target, verdict, note) for every target of the issue; "not run" where this run (or these
    pieces) did not measure it."""
    out = []
    for words, pattern, companion, label in TARGETS:
        f = _find(figures, pattern)
        if f is None:
            out.append((words, "", "", "not run", ""))
            continue
        c = _find(figures, companion)
        note = f"{label}: {_value(c)}; {f.note}" if c is not None else f.note
        out.append((words, _value(f), f.target, f.verdict or "(no target)", note))
    vs = [f for f in figures if f.name.startswith(README_PREFIX)]
    if vs:
        missed = [f for f in vs if f.verdict == "MISSED"]
        out.append(
            (
                "the scale fleet's figures no worse than the README's table",
                f"{len(vs) - len(missed)} of {len(vs)} no worse",
                "all, within 10%",
                "MISSED" if missed else "met",
                "worse: " + "; ".join(f"{f.name[len(README_PREFIX) :]} {_value(f)} ({f.note})" for f in missed)
                if missed
                else "",
            )
        )
    else:
        out.append(("the scale fleet's figures no worse than the README's table", "", "", "not run", ""))
    return out


def format_rows(figures: list[Figure], *, markdown: bool = False) -> str:
    table = [("issue 21 target", "measured", "target", "verdict", "note"), *rows(figures)]
    if markdown:
        esc = lambda c: c.replace("|", "\\|")  # noqa: E731
        return "\n".join(
            ["| " + " | ".join(table[0]) + " |", "|---|---:|---|---|---|"]
            + ["| " + " | ".join(esc(c) for c in r) + " |" for r in table[1:]]
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = []
    for n, r in enumerate(table):
        lines.append("  ".join(c.rjust(widths[i]) if i == 1 else c.ljust(widths[i]) for i, c in enumerate(r)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
