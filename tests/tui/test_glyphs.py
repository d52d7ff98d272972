"""One meaning per glyph (issue 30: `▲` was "device plugin" and "warning"; `●` was DRA, a reserved claim and a marked
row; `·1` and `⊘1` were in no legend). fleet/glyphs.py is the one table; this fails when a glyph gets a second
meaning: a char twice in the table, a glyph written beside a word that is not one of its own anywhere in the code, a
glyph drawn in a view that the legend does not explain, or a help screen without the legend."""

from __future__ import annotations

import ast
import pathlib
import unicodedata

import pytest
from dragoman.fleet.findings import CATALOGUE
from dragoman.fleet.glyphs import ANY, GLYPHS, labelled, legend
from dragoman.fleet.model import FleetModel
from dragoman.fleet.views.cells import text_of
from dragoman.sim.scenarios import DEMO_PATH, load_scenario
from dragoman.tui.views import VIEWS, Fleet

ROOT = pathlib.Path(__file__).resolve().parents[2]
BY_CHAR = {g.char: g for g in GLYPHS.values()}


def test_each_glyph_has_one_meaning_and_is_in_the_legend() -> None:
    chars = [g.char for g in GLYPHS.values()]
    assert len(chars) == len(set(chars)), sorted(c for c in chars if chars.count(c) > 1)
    text = legend()
    for g in GLYPHS.values():
        assert f"{g.char} {g.meaning}" in text
    # A word belongs to the one glyph that says it, within a group of the legend: "◇ plugin" and "▲ warning" differ.
    assert labelled("plugin", "plugin") == "◇ plugin" and labelled("warning", "warning") == "▲ warning"
    with pytest.raises(ValueError):
        labelled("warning", "plugin")  # ▲ beside "plugin" was the old second meaning


def _symbol(ch: str) -> bool:
    """A glyph: a symbol that is not ASCII (arrows, shapes, dingbats, the middle dot); ASCII glyphs (= - * ~) are
    punctuation too often to find in text: they are only ever written through fleet/glyphs.py."""
    return not ch.isascii() and unicodedata.category(ch)[0] in "SP" and ch not in "—–“”‘’…×"


def _own(g, word: str) -> bool:
    return ANY in g.words or any(word == w or word.startswith(w + " ") for w in g.words)


def _literals(path: pathlib.Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            if isinstance(node.values[0].value, str):
                yield node.lineno, node.values[0].value


def test_no_glyph_is_written_beside_a_word_that_is_not_its_own() -> None:
    """Every string in the app that starts with a glyph and a word ("▲ plugin", "● reserved") uses a glyph of the
    table with one of that glyph's words."""
    bad = []
    for folder in ("fleet", "widgets", "tui", "actions"):
        for path in (ROOT / folder).rglob("*.py"):
            if "cel/gen" in str(path) or path.name == "glyphs.py":
                continue
            for line, s in _literals(path):
                if len(s) < 3 or not _symbol(s[0]) or s[1] != " " or not s[2].isalpha():
                    continue
                word = s[2:].split(":")[0].split(" (")[0].strip()
                g = BY_CHAR.get(s[0])
                if g is None or not _own(g, word):
                    bad.append(f"{path.relative_to(ROOT)}:{line}: {s[:40]!r}")
    assert not bad, "\n".join(bad)


@pytest.fixture(scope="module")
def fleet() -> Fleet:
    m = FleetModel()
    m.load_list(load_scenario(DEMO_PATH))
    return Fleet(m)


def test_every_glyph_every_view_draws_on_the_demo_is_in_the_legend_with_its_own_word(fleet: Fleet) -> None:
    from dragoman.fleet.diagnose import diagnose

    fleet.set_findings(diagnose(fleet.model))
    seen: dict[str, set[str]] = {}
    for name, view in VIEWS.items():
        for _key, cells, _facets in view().all_rows(fleet):
            for cell in cells:
                for token in text_of(cell).split(" "):
                    if token and (_symbol(token[0]) or token[0] in BY_CHAR) and token[0] not in "/(→":
                        seen.setdefault(token[0], set()).add(f"{name}: {text_of(cell)}")
    assert {"◇", "●", "✖", "▲", "◉"} <= set(seen), sorted(seen)  # the demo has each of these
    unknown = {c: sorted(v)[:3] for c, v in seen.items() if c not in BY_CHAR}
    assert not unknown, unknown
    # Words beside a glyph in a cell are that glyph's own.
    for c, cells in seen.items():
        for where in cells:
            text = where.split(": ", 1)[1]
            if text.startswith(c + " ") and text[2:3].isalpha():
                word = text[2:].split(" ×")[0].split(" (")[0]
                # A severity glyph before a finding's id says that finding's severity.
                assert _own(BY_CHAR[c], word) or (c in "✖▲ℹ" and word in CATALOGUE), where
