"""Differential test: dragoman's words for a selector that does not parse, against cel-go's, to the character.

The malformed selectors are generated from valid ones (the upstream cases in upstream_cases.yaml and the oracle
differential's generator): cut at a random point, or one token deleted, doubled, swapped with its neighbour or
replaced by another. The cel-go oracle (controlplane/celoracle, Kubernetes' own compile path) answers each; for every
one it refuses as a syntax error, dragoman must refuse it too, and `CelCompileError.display()` must equal what the
API server writes after "compilation failed: " — every error, the `ERROR: <input>:L:C:` prefixes, the snippets and
the carets. One that cel-go's parser takes, dragoman's parser must take too.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import yaml
from dragoman.fleet.cel import CelCompileError
from dragoman.fleet.cel.engine import check_expression
from dragoman.fleet.cel.syntax import parse
from dragoman.sim.controlplane.celoracle import Oracle

from tests.cel import cel_generators as gen

CASES = 600
SEED = 1637
PREFIX = "compilation failed: "

# A CEL token as a person sees one: a string or bytes literal (with its prefixes), a number, a name, a two-character
# operator, any other character.
_TOKEN = re.compile(
    r"""[bB]?[rR]?(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")"""
    r"|0x[0-9a-fA-F]+[uU]?|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[uU]?|[A-Za-z_][A-Za-z0-9_]*|==|!=|<=|>=|&&|\|\||\S",
    re.S,
)
# What a slip of the keyboard puts in: brackets, operators, reserved words, literals of every kind.
_STRAYS = [
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ".",
    ",",
    ":",
    "?",
    "!",
    "-",
    "+",
    "&&",
    "||",
    "==",
    "in",
    "if",
    "true",
    "null",
    "'",
    '"',
    "`",
    "\\",
    "#",
    "@",
    ";",
    "1",
    "1u",
    "1.5",
    "0x",
    "'x'",
    "b'x'",
    "x",
    "has",
    "all",
    "cel",
    ".?",
]


# cel-go's parser limits and error paths no mutation reaches: nesting at and past 250 (its listener's and its visitor's
# limits), more than 100 errors, more than 30 recoveries, empty and blank text, escapes, an escaped name with a space.
EDGES = [
    "(" * 300 + "1" + ")" * 300,
    "(" * 240 + "true" + ")" * 240,
    "1" + " + 1" * 300 + " == 1",
    "device" + ".a" * 300,
    "[" * 260 + "]" * 260,
    ")" * 150,
    "1 " * 150,
    "a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k l m n o p q r s t u v w x y z",
    ", ".join(["(("] * 40),
    "",
    " \t\n",
    "@" * 120,
    "'" + "\\z" * 3 + "'",
    "xxxxx`y",
    "{" * 120,
    'device.attributes["dra.example.com"].?`a b`.orValue(1) == 1',
    "has(device) || 'abc",
]


def _valid_selectors(rng: random.Random) -> list[str]:
    upstream = [c["expr"] for c in yaml.safe_load(Path(__file__).with_name("upstream_cases.yaml").read_text())]
    generated = [gen.Gen(rng, depth=rng.randint(1, 3)).expr("bool") for _ in range(150)]
    return [e for e in upstream + generated if isinstance(e, str) and 0 < len(e) < 400]


def malformed(n: int, seed: int = SEED) -> list[str]:
    """n distinct broken selectors: cuts and single-token mutations of valid ones."""
    rng = random.Random(seed)
    sources = _valid_selectors(rng)
    out: dict[str, None] = {}
    while len(out) < n:
        text = rng.choice(sources)
        toks = [m.group(0) for m in _TOKEN.finditer(text)]
        spans = [m.span() for m in _TOKEN.finditer(text)]
        if not toks:
            continue
        i = rng.randrange(len(toks))
        start, end = spans[i]
        how = rng.randrange(6)
        if how == 0:  # cut at any character
            broken = text[: rng.randrange(len(text))]
        elif how == 1:  # cut after a token
            broken = text[:end]
        elif how == 2:  # a token lost
            broken = text[:start] + text[end:]
        elif how == 3:  # a token doubled
            broken = text[:end] + " " + toks[i] + text[end:]
        elif how == 4 and i + 1 < len(toks):  # two neighbours swapped
            nstart, nend = spans[i + 1]
            broken = text[:start] + toks[i + 1] + text[end:nstart] + toks[i] + text[nend:]
        else:  # a token replaced
            broken = text[:start] + rng.choice(_STRAYS) + text[end:]
        if broken != text and not gen._BYTES_KEY.search(broken):  # a bytes map key takes the oracle down
            out[broken] = None
    return list(out)


def spread_over_lines(text: str, rng: random.Random) -> str:
    """The same selector as pasted from a manifest: over several lines, with tabs, CRLF, a comment, non-ASCII text
    (cel-go's locations count code points per line, and its caret line draws a wide dot under a wide character)."""
    parts = text.split(" ")
    out = parts[0]
    for p in parts[1:]:
        out += rng.choice([" ", "\n", "\n\t", "\r\n  ", " "]) + p
    if rng.random() < 0.3:
        out = out.replace('"', '"é', 1)
    if rng.random() < 0.2:
        out = "// a comment ✓\n" + out
    return out


def _parser_refuses(expr: str) -> bool:
    """Whether dragoman's parser (not its checker) refuses the text."""
    try:
        parse(expr)
    except CelCompileError:
        return True
    return False


def _ours(expr: str) -> CelCompileError | None:
    try:
        check_expression(expr)
    except CelCompileError as exc:
        return exc
    return None


def test_generated_cases_are_malformed_mutations():
    cases = malformed(50)
    assert len(set(cases)) == 50
    # Deterministic, so a failure names a case that can be rerun.
    assert cases == malformed(50)


def test_syntax_errors_read_as_cel_go_writes_them():
    rng = random.Random(SEED)
    cases = [spread_over_lines(e, rng) if i % 4 == 3 else e for i, e in enumerate(malformed(CASES))] + EDGES
    oracle = Oracle()
    try:
        answers = oracle.ask({"op": "eval", "expression": e, "devices": []} for e in cases)
    finally:
        oracle.close()
    syntax = equal = 0
    different: list[str] = []
    for expr, ans in zip(cases, answers):
        c = ans["compile"]
        ours = _ours(expr)
        if c.get("kind") != "syntax":
            if _parser_refuses(expr):
                different.append(f"{expr!r}\n  cel-go parses it ({c.get('kind') or 'compiles'})\n  dragoman: {ours}")
            continue
        syntax += 1
        theirs = c["message"].removeprefix(PREFIX)
        mine = ours.display(expr) if ours is not None else "(compiles)"
        if ours is not None and ours.kind == "syntax" and mine == theirs:
            equal += 1
        else:
            kind = ours.kind if ours is not None else "-"
            different.append(f"{expr!r}\n  cel-go:\n{theirs}\n  dragoman ({kind}):\n{mine}")
    print(f"\n{len(cases)} malformed selectors: {syntax} syntax errors for cel-go, {equal} worded identically")
    assert syntax >= CASES // 2, "the generator should break most selectors"
    assert not different, f"{len(different)} differ:\n\n" + "\n\n".join(different[:15])
