"""Why a selector left a device out: its top-level `&&` clauses by source text, and the first one that was false."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from dragoman.fleet.cel import CelCompileError, CelDevice, compile_expression


@dataclasses.dataclass(frozen=True)
class Clause:
    """One top-level `&&` operand: its source text and where it starts (0-based offset into the expression)."""

    text: str
    start: int


def _skip_string(expr: str, i: int) -> int:
    """Index just past the string literal starting at expr[i] (a quote, maybe after r/b prefixes handled by caller)."""
    q = expr[i]
    triple = expr[i : i + 3] == q * 3
    end = q * 3 if triple else q
    j = i + (3 if triple else 1)
    while j < len(expr):
        if expr[j] == "\\":
            j += 2
            continue
        if expr.startswith(end, j):
            return j + len(end)
        if not triple and expr[j] == "\n":
            return j
        j += 1
    return j


def split_and(expression: str) -> list[Clause]:
    """The operands of the expression's top-level `&&` chain, left to right (one clause when the top is not `&&`).

    `||` and `?:` bind looser than `&&`: when either appears at the top level the whole expression is one clause.
    Parentheses around the whole expression are looked through.
    """
    parts: list[Clause] = []
    depth = 0
    start = 0
    i = 0
    n = len(expression)
    looser = False
    while i < n:
        c = expression[i]
        if c in "\"'":
            i = _skip_string(expression, i)
            continue
        if c == "/" and expression.startswith("//", i):
            nl = expression.find("\n", i)
            i = n if nl < 0 else nl
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            if expression.startswith("&&", i):
                parts.append(_clause(expression, start, i))
                start = i + 2
                i += 2
                continue
            if expression.startswith("||", i) or c == "?":
                looser = True
        i += 1
    parts.append(_clause(expression, start, n))
    if looser or len(parts) == 1:
        whole = _clause(expression, 0, n)
        inner = _unwrap(whole)
        if inner is not None:
            sub = split_and(inner.text)
            if len(sub) > 1:
                return [Clause(c.text, inner.start + c.start) for c in sub]
        return [whole]
    return parts


def _clause(expression: str, a: int, b: int) -> Clause:
    raw = expression[a:b]
    stripped = raw.lstrip()
    return Clause(stripped.rstrip(), a + (len(raw) - len(stripped)))


def _unwrap(clause: Clause) -> Clause | None:
    """The inside of `( … )` when one pair of parentheses encloses the whole clause."""
    t = clause.text
    if not (t.startswith("(") and t.endswith(")")):
        return None
    depth = 0
    i = 0
    while i < len(t):
        c = t[i]
        if c in "\"'":
            i = _skip_string(t, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0 and i != len(t) - 1:
                return None
        i += 1
    return Clause(t[1:-1], clause.start + 1)


class Explainer:
    """Names the first false top-level clause of a selector for a device the whole selector did not match."""

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.clauses = split_and(expression)
        self._compiled: list = []
        if len(self.clauses) > 1:
            try:
                self._compiled = [compile_expression(c.text) for c in self.clauses]
            except CelCompileError:
                # A clause that only makes sense inside the whole (rare): no per-clause explanation.
                self._compiled = []

    def first_false(self, device: CelDevice) -> Clause | None:
        """The first clause that evaluates to false on `device` (errors are skipped: `&&` absorbs them)."""
        if not self._compiled:
            return self.clauses[0] if self.clauses else None
        for clause, sel in zip(self.clauses, self._compiled):
            out = sel.evaluate(device)
            if out.error is None and out.value is False:
                return clause
        return None

    def first_error(self, device: CelDevice) -> Clause | None:
        """The first clause whose evaluation fails on `device`."""
        for clause, sel in zip(self.clauses, self._compiled):
            if sel.evaluate(device).error is not None:
                return clause
        return None


def explain(expressions: Sequence[str], failed_at: int, device: CelDevice, cache: dict | None = None) -> str:
    """`selector #i: <first false clause>` for a device that selector `failed_at` rejected."""
    cache = {} if cache is None else cache
    expr = expressions[failed_at]
    ex = cache.get(expr)
    if ex is None:
        ex = cache[expr] = Explainer(expr)
    clause = ex.first_false(device)
    return clause.text if clause is not None else expr
