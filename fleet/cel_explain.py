"""Why a selector left a device out: its top-level `&&` clauses by source text, the first one that was false, and the
near misses (devices only one clause leaves out, with what they publish for what it reads, per product)."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

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

    def only_false(self, device: CelDevice) -> int | None:
        """The index of the one clause that is false on `device` while every other clause is true (a near miss), or
        None (several false, an error, or one clause only: then nothing is "almost" matched)."""
        if not self._compiled:
            return None
        false_at = None
        for i, sel in enumerate(self._compiled):
            out = sel.evaluate(device)
            if out.error is not None:
                return None
            if out.value is False:
                if false_at is not None:
                    return None
                false_at = i
        return false_at

    def reads(self, clause: int) -> list[tuple[str, str]]:
        """(domain, name) of what one clause reads from attributes and capacity, in a stable order."""
        if not self._compiled:
            return []
        read = self._compiled[clause].attributes_read or frozenset()
        return sorted((d, n) for d, n in read if n)

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


_MISSING = object()


def device_value(device: CelDevice, domain: str, name: str) -> Any:
    """What `device` publishes as capacity or attribute `domain/name` (a Quantity, str, int, bool, Semver or list), or
    None."""
    for table in (device.capacity, device.attributes):
        v = (table.get(domain) or {}).get(name, _MISSING)
        if v is not _MISSING:
            return v
    return None


def value_text(value: Any) -> str:
    """A published value as the slice writes it: `81559Mi`, `Hopper`, `true`, `535.104.5`."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    return str(value)


def have(values: Sequence[str], devices: int) -> str:
    """`they have 81559Mi` / `it has 40Gi, 80Gi and 2 more`: the values a set of devices publishes, the first three."""
    shown = ", ".join(values[:3]) + (f" and {len(values) - 3} more" if len(values) > 3 else "")
    return f"{'it has' if devices == 1 else 'they have'} {shown}"


_READ = re.compile(r"device\.(?:attributes|capacity)\[\s*(['\"])[^'\"]*\1\s*\]\.(\w+)")
_COMPARE = re.compile(r"\.compareTo\(\s*quantity\(\s*(['\"])([^'\"]+)\1\s*\)\s*\)\s*(>=|<=|==|!=|>|<)\s*0\b")
_IS = re.compile(r"\.is(GreaterThan|LessThan)\(\s*quantity\(\s*(['\"])([^'\"]+)\2\s*\)\s*\)")


def short_clause(text: str) -> str:
    """A clause as a person reads it: `device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0`
    → `memory >= 80Gi`. Display only: the source text is what the object holds."""
    out = _READ.sub(lambda m: m.group(2), text)
    out = _COMPARE.sub(lambda m: f" {m.group(3)} {m.group(2)}", out)
    out = _IS.sub(lambda m: f" {'>' if m.group(1) == 'GreaterThan' else '<'} {m.group(3)}", out)
    return re.sub(r"\s+", " ", out).strip()


@dataclasses.dataclass
class NearMiss:
    """Devices of one product that one clause alone leaves out (every other clause is true on them)."""

    clause: str  # the clause's source text
    product: str
    devices: int
    values: list[Any]  # distinct values they publish for what the clause reads (one read: the value; else name=value)

    @property
    def value_texts(self) -> list[str]:
        return [value_text(v) if not isinstance(v, tuple) else f"{v[0]}={value_text(v[1])}" for v in self.values]

    def sentence(self) -> str:
        """`24 NVIDIA H100 80GB HBM3 left out only by `memory >= 80Gi`: they have 81559Mi`."""
        text = f"{self.devices} {self.product} left out only by `{short_clause(self.clause)}`"
        if self.values and self.value_texts != [self.product]:  # "they have NVIDIA L4" adds nothing to "1 NVIDIA L4"
            text += f": {have(self.value_texts, self.devices)}"
        return text

    def suggestion(self) -> str | None:
        """What to write so the clause keeps these devices (suggestions' first), or None."""
        hints = suggestions(self.clause, self.values)
        return hints[0] if hints else None


def suggestions(clause: str, values: Sequence[Any]) -> list[str]:
    """What to write so a clause comparing one quantity with a literal keeps devices publishing `values`:
    `quantity('80G')` when the same number in decimal units does (a GPU's "80GB" is decimal), and the literal rounded
    to what they have in the literal's unit (`quantity('79Gi')`). [] when the clause is not
    `x.compareTo(quantity('Q')) op 0` / `isGreaterThan` / `isLessThan`, or the values are not all quantities."""
    from dragoman.fleet.cel.values import Quantity
    from dragoman.fleet.k8s.quantity import BINARY as _BINARY
    from dragoman.fleet.k8s.quantity import DECIMAL as _DECIMAL

    m = _COMPARE.search(clause)
    if m is not None:
        literal, op = m.group(2), m.group(3)
    else:
        m2 = _IS.search(clause)
        if m2 is None:
            return []
        literal, op = m2.group(3), ">" if m2.group(1) == "GreaterThan" else "<"
    if op not in (">=", ">", "<=", "<") or not values or not all(isinstance(v, Quantity) for v in values):
        return []
    try:
        q = Quantity.parse(literal)
    except Exception:  # noqa: BLE001 - a literal the API server would refuse: nothing to suggest
        return []
    num = re.match(r"^([0-9]+)([A-Za-z]*)$", literal)
    if num is None:
        return []
    suffix = num.group(2)
    upward = op in (">=", ">")
    edge = min(v.value for v in values) if upward else max(v.value for v in values)

    def keeps(value: Fraction) -> bool:
        return {">=": edge >= value, ">": edge > value, "<=": edge <= value, "<": edge < value}[op]

    if keeps(q.value):
        return []  # the literal keeps them already: something else leaves them out
    out: list[str] = []
    if suffix in _BINARY:
        decimal = suffix[:-1] if suffix[:-1] in _DECIMAL else None
        if decimal is not None:
            alt = Fraction(int(num.group(1))) * Fraction(10) ** _DECIMAL[decimal]
            if keeps(alt):
                out.append(f"quantity('{num.group(1)}{decimal}')")
        unit = Fraction(2 ** _BINARY[suffix])
    elif suffix in _DECIMAL:
        unit = Fraction(10) ** _DECIMAL[suffix]
    else:
        return out
    n = math.floor(edge / unit) if upward else math.ceil(edge / unit)
    for cand in (n, n - 1, n + 1) if upward else (n, n + 1, n - 1):
        if cand >= 0 and keeps(cand * unit):
            out.append(f"quantity('{cand}{suffix}')")
            break
    return out


def clause_values(clause: str, devices: Iterable[CelDevice]) -> list[Any]:
    """The distinct values `devices` publish for what `clause` reads (one read: the values; several: (name, value)
    pairs), in a stable order; [] when the clause does not compile or reads nothing."""
    try:
        read = compile_expression(clause).attributes_read or frozenset()
    except CelCompileError:
        return []
    reads = sorted((d, n) for d, n in read if n)
    if not reads:
        return []
    out: list[Any] = []
    for device in devices:
        for v in _values(device, reads):
            if v not in out:
                out.append(v)
    return _sorted(out)


def _values(device: CelDevice, reads: list[tuple[str, str]]) -> list[Any]:
    if len(reads) == 1:
        return [device_value(device, *reads[0])]
    return [(name, device_value(device, d, name)) for d, name in reads]


def _sorted(values: list[Any]) -> list[Any]:
    try:
        return sorted(values, key=lambda v: (str(type(v)), v))
    except TypeError:
        return values


@dataclasses.dataclass(frozen=True)
class Miss:
    """One group's near miss: the one false clause (source text) and what the group publishes for what it reads."""

    clause: str
    values: tuple[str, ...]

    def reason(self) -> str:
        """`only `memory >= 80Gi` is false: it has 81559Mi` (one device's reason)."""
        text = f"only `{short_clause(self.clause)}` is false"
        return text + (f": {have(list(self.values), 1)}" if self.values else "")


def near_misses(
    expression: str, groups: Sequence[tuple[CelDevice, Iterable[tuple[str, int]]]]
) -> tuple[list[NearMiss], list[Miss | None]]:
    """The devices `expression` leaves out by one clause only: summed per (clause, product), those of later clauses
    first and then most devices first, and
    each group's own near miss (None when it is not one), in the order of `groups`.

    `groups` are (device, [(product, devices)]): a representative of devices that are equal in everything the
    expression reads, and how many of each product it stands for (the playground's groups; one device and one count
    elsewhere). Only devices every *other* selector already accepts belong here."""
    ex = Explainer(expression)
    found: dict[tuple[int, str], NearMiss] = {}
    per_group: list[Miss | None] = []
    for device, counts in groups:
        at = ex.only_false(device)
        if at is None:
            per_group.append(None)
            continue
        vals = _values(device, ex.reads(at))
        clause = ex.clauses[at].text
        miss = NearMiss(clause, "", 0, vals)
        per_group.append(Miss(clause, tuple(miss.value_texts)))
        for product, n in counts:
            nm = found.get((at, product))
            if nm is None:
                nm = found[(at, product)] = NearMiss(clause, product, 0, [])
            nm.devices += n
            for v in vals:
                if v not in nm.values:
                    nm.values.append(v)
    out = list(found.values())
    for nm in out:
        nm.values = _sorted(nm.values)
    # Later clauses first: a selector names the kind of device first and refines it after (`architecture == 'Hopper'
    # && memory >= 80Gi`), so the devices that pass the kind and miss a refinement are the ones it almost took.
    position = {ex.clauses[at].text: at for at, _ in found}
    return sorted(out, key=lambda nm: (-position[nm.clause], -nm.devices, nm.product)), per_group
