"""One meaning per glyph: every glyph dragoman draws beside a word or a count, what it means, and the legend that every
help screen shows. Cells, the header, the wizard and the playground take their glyphs from here (issue 30: `▲` was
both "device plugin" and "warning", `●` was DRA, a reserved claim and a marked row)."""

from __future__ import annotations

from typing import NamedTuple

ANY = "…"  # in a glyph's words: it opens a sentence of any words (✗ and why it failed)


class Glyph(NamedTuple):
    char: str
    meaning: str  # what the glyph says, as the legend writes it
    words: tuple[str, ...]  # the words it may stand beside (a count needs none): all of them say that one meaning
    group: str  # the legend's line


# name -> glyph. A char appears once: a second meaning gets a glyph of its own (tests/fleet/test_glyphs.py).
GLYPHS: dict[str, Glyph] = {
    g[0]: Glyph(*g[1:])
    for g in (
        # What serves a pool's or a node's GPUs.
        ("plugin", "◇", "device plugin (nvidia.com/gpu)", ("plugin", "planned"), "GPUs served by"),
        ("dra", "●", "DRA (ResourceSlices and claims)", ("DRA", "migrated"), "GPUs served by"),
        ("mixed", "◐", "mixed: the nodes of the pool differ", ("mixed", "partly"), "GPUs served by"),
        ("migrating", "»", "moving to DRA", ("migrating", "target"), "GPUs served by"),
        (
            "none",
            "·",
            "none: nothing serves, matches or has run yet",
            ("none", "unserved", "no match", "pending"),
            "GPUs served by",
        ),
        # How bad.
        (
            "error",
            "✖",
            "error (✖ BOTH: two stacks own the same GPUs)",
            ("error", "BOTH", "NotReady", "failed", "bind failed", "unreachable", "forbidden"),
            "Severity",
        ),
        ("warning", "▲", "warning", ("warning",), "Severity"),
        ("info", "ℹ", "info", ("info",), "Severity"),
        ("crash", "↯", "crash-looping (×restarts)", ("flapping", "crash"), "Severity"),
        # Nodes, pods, steps and the connection.
        ("cordoned", "⊘", "cordoned", ("cordoned",), "State"),
        ("up", "✔", "up: running, live, in use", ("running", "live", "current"), "State"),
        # ✓ and ✗ also open a sentence: what passed, what failed and why.
        ("done", "✓", "done, passed", ("done", "match", "saved", ANY), "State"),
        ("failed", "✗", "failed, refused", ("failed", "blocked", ANY), "State"),
        ("now", "▶", "running now (a wizard step)", ("running",), "State"),
        (
            "waiting",
            "◌",
            "waiting (a claim for its devices, the header for the first sync)",
            ("pending", "syncing", "unready"),
            "State",
        ),
        ("binding", "⧗", "waiting for its binding conditions", ("binding",), "State"),
        ("reconnecting", "↻", "reconnecting", ("reconnecting",), "State"),
        ("still", "■", "not live (a snapshot, a stopped feed)", ("snapshot", "stopped"), "State"),
        ("same", "=", "no change", ("no change",), "State"),
        ("new-meaning", "≈", "the same number with a new meaning (accounting)", ("same number",), "State"),
        ("skipped", "-", "skipped", ("skipped",), "State"),
        ("near", "~", "near miss (one clause false)", ("near miss",), "State"),
        # Claims.
        ("reserved", "◉", "reserved: a pod holds the claim", ("reserved",), "Claims"),
        ("allocated", "○", "allocated: no pod holds it yet", ("allocated",), "Claims"),
        ("bridge", "⇄", "made by the scheduler's extended-resource bridge", ("bridge",), "Claims"),
        # Rows.
        ("marked", "*", "in the left gutter: a marked row (space)", (), "Rows"),
        ("selected", "▸", "the selected step, said whole", (ANY,), "Rows"),
        (
            "dangerous",
            "⚠",
            "dangerous: evicts pods or removes a stack (the pool's name is typed to confirm)",
            (ANY,),
            "Severity",
        ),
        ("more-right", "→", "at a row's end: more to the right (→ ← scroll)", (), "Rows"),
        ("more-left", "←", "after the first column: scrolled past", (), "Rows"),
        ("cut", "…", "a value wider than its column (whole on its describe page)", (), "Rows"),
        ("focus", "›", "the form field that has the focus", (), "Rows"),
        ("more-above", "↑", "more above: scroll up", (ANY,), "Rows"),
        ("more-below", "↓", "more below: scroll down", (ANY,), "Rows"),
    )
}

# A glyph straight before a number counts: `●2 ◇1 ·1` nodes of a mixed pool, `4 ⊘1` one of four nodes cordoned,
# `✖5 ▲3 ℹ1` findings by severity.
COUNTS = (
    "A glyph before a number counts: ●2 ◇1 ·1 nodes of a mixed pool · 4 ⊘1: one of 4 nodes cordoned · ✖5 ▲3 ℹ1 findings"
)


def glyph(name: str) -> str:
    return GLYPHS[name].char


def labelled(name: str, word: str) -> str:
    """`◇ plugin`: a glyph and one of its words (a word it does not stand for is a second meaning: refused)."""
    g = GLYPHS[name]
    if word not in g.words and ANY not in g.words:
        raise ValueError(f"{g.char} means {g.meaning}; {word!r} is not one of its words {g.words}")
    return f"{g.char} {word}"


def legend() -> str:
    """The legend every help screen ends with: each glyph once, by group, then how counts read."""
    groups: dict[str, list[str]] = {}
    for g in GLYPHS.values():
        groups.setdefault(g.group, []).append(f"{g.char} {g.meaning}")
    return "\n".join(f"{name}: " + " · ".join(items) for name, items in groups.items()) + "\n" + COUNTS
