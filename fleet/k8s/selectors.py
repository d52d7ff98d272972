"""Label and field selector strings (`-l`, `labelSelector=`, `fieldSelector=`) as kube-apiserver v1.37.2 parses
them (apimachinery labels.Parse and fields.ParseSelector), compiled to predicates over raw objects.

A parsed label requirement is matched by labels.py's match_requirement, the one rule the node-affinity and
metav1.LabelSelector matchers use too: Gt and Lt compare int64s as strconv.ParseInt reads them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from dragoman.fleet.k8s.labels import match_requirement, parse_int64
from dragoman.fleet.k8s.names import is_label_value, is_qualified_name

Predicate = Callable[[dict], bool]


class SelectorError(ValueError):
    """A selector the server cannot parse (answered with 400 BadRequest)."""


_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"


# ---------------------------------------------------------------- label selectors: apimachinery's lexer and parser

_SPECIAL = frozenset("=!(),><")
_TOKENS = {
    ")": "CLOSE",
    ",": "COMMA",
    "!": "NOT",
    "==": "DOUBLE_EQUALS",
    "=": "EQUALS",
    ">": "GT",
    "in": "IN",
    "<": "LT",
    "!=": "NOT_EQUALS",
    "notin": "NOTIN",
    "(": "OPEN",
}
_BINARY = ("in", "notin", "=", "==", "!=", "gt", "lt")
_OPERATOR = {
    "IN": "in",
    "EQUALS": "=",
    "DOUBLE_EQUALS": "==",
    "GT": "gt",
    "LT": "lt",
    "NOTIN": "notin",
    "NOT_EQUALS": "!=",
}


def _lex(text: str) -> list[tuple[str, str]]:
    """labels.Lexer: (token, literal) pairs ending with ("END", "")."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            out.append(("END", ""))
            return out
        if text[i] in _SPECIAL:
            buf, last, j = "", None, i
            while j < n and text[j] in _SPECIAL:
                buf += text[j]
                j += 1
                if buf in _TOKENS:
                    last = (_TOKENS[buf], buf, j)
                elif last is not None:
                    j -= 1
                    break
            if last is None:
                out.append(("ERROR", f"error expected: keyword found '{buf}'"))
                i = j
            else:
                out.append((last[0], last[1]))
                i = last[2]
            continue
        j = i
        while j < n and text[j] not in _SPECIAL and text[j] not in " \t\r\n":
            j += 1
        word = text[i:j]
        out.append((_TOKENS.get(word, "ID"), word))
        i = j


class _Parser:
    """labels.Parser, error messages included (`unable to parse requirement: found '=', expected: identifier`)."""

    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.pos = 0

    def _peek(self, values: bool = True) -> tuple[str, str]:
        tok, lit = self.items[self.pos]
        return ("ID" if values and tok in ("IN", "NOTIN") else tok), lit

    def _next(self, values: bool = True) -> tuple[str, str]:
        self.pos += 1
        tok, lit = self.items[self.pos - 1]
        return ("ID" if values and tok in ("IN", "NOTIN") else tok), lit

    def parse(self) -> list[tuple[str, str, list[str]]]:
        reqs = []
        while True:
            tok, lit = self._peek()
            if tok in ("ID", "NOT"):
                try:
                    reqs.append(self._requirement())
                except SelectorError as exc:
                    raise SelectorError(f"unable to parse requirement: {exc}") from None
                tok, lit = self._next()
                if tok == "END":
                    return reqs
                if tok == "COMMA":
                    t2, l2 = self._peek()
                    if t2 not in ("ID", "NOT"):
                        raise SelectorError(f"found '{l2}', expected: identifier after ','")
                    continue
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            if tok == "END":
                return reqs
            raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def _requirement(self) -> tuple[str, str, list[str]]:
        op = ""
        tok, lit = self._next()
        if tok == "NOT":
            op = "!"
            tok, lit = self._next()
        if tok != "ID":
            raise SelectorError(f"found '{lit}', expected: identifier")
        key = lit
        _check_key(key, "")
        if self._peek()[0] in ("END", "COMMA"):
            op = op or "exists"
            return _requirement(key, op, [])
        tok, lit = self._next(values=False)
        op = _OPERATOR.get(tok, "")
        if not op:
            raise SelectorError(f"found '{lit}', expected: {', '.join(_BINARY)}")
        values = self._values() if op in ("in", "notin") else self._exact()
        return _requirement(key, op, sorted(set(values)))

    def _values(self) -> list[str]:
        tok, lit = self._next()
        if tok != "OPEN":
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self._peek()
        if tok in ("ID", "COMMA"):
            out = self._identifiers()
            if self._next()[0] != "CLOSE":
                raise SelectorError(f"found '{lit}', expected: ')'")
            return out
        if tok == "CLOSE":
            self._next()
            return [""]
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def _identifiers(self) -> list[str]:
        out: list[str] = []
        while True:
            tok, lit = self._next()
            if tok == "ID":
                out.append(lit)
                t2, l2 = self._peek()
                if t2 == "COMMA":
                    continue
                if t2 == "CLOSE":
                    return out
                raise SelectorError(f"found '{l2}', expected: ',' or ')'")
            if tok == "COMMA":
                if not out:
                    out.append("")
                t2, _ = self._peek()
                if t2 == "CLOSE":
                    out.append("")
                    return out
                if t2 == "COMMA":
                    out.append("")
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def _exact(self) -> list[str]:
        tok, _ = self._peek()
        if tok in ("END", "COMMA"):
            return [""]
        tok, lit = self._next()
        if tok == "ID":
            return [lit]
        raise SelectorError(f"found '{lit}', expected: identifier")


def _check_key(key: str, path: str) -> None:
    problems = is_qualified_name(key)
    if problems:
        raise SelectorError(f'{path}Invalid value: "{key}": {"; ".join(problems)}')


def _requirement(key: str, op: str, values: list[str]) -> tuple[str, str, list[str]]:
    """NewRequirement's checks (its errors joined as an aggregate prints them)."""
    errs: list[str] = []
    shown = "[" + " ".join(values) + "]"
    if op in ("in", "notin") and not values:
        errs.append(f"values: Invalid value: {shown}: for 'in', 'notin' operators, values set can't be empty")
    if op in ("=", "==", "!=") and len(values) != 1:
        errs.append(f"values: Invalid value: {shown}: exact-match compatibility requires one single value")
    if op in ("gt", "lt"):
        for i, v in enumerate(values):
            if parse_int64(v) is None:
                errs.append(
                    f"values[{i}]: Invalid value: \"{v}\": for 'Gt', 'Lt' operators, the value must be an integer"
                )
    for i, v in enumerate(values):
        problems = is_label_value(v)
        if problems:
            errs.append(f'values[{i}][{key}]: Invalid value: "{v}": {"; ".join(problems)}')
    if errs:
        raise SelectorError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    return key, op, values


# The parser's operators as labels.Requirement's (selection.Operator): "=" and "==" are In with one value, "!=" is
# NotIn with one, a bare key Exists and "!key" DoesNotExist.
_REQUIREMENT_OPERATOR = {
    "=": "In",
    "==": "In",
    "in": "In",
    "!=": "NotIn",
    "notin": "NotIn",
    "exists": "Exists",
    "!": "DoesNotExist",
    "gt": "Gt",
    "lt": "Lt",
}


def parse_label_requirements(text: str | None) -> list[dict]:
    """`a=b,c!=d,e in (x,y),f notin (z),g,!h,n>1` → requirements in the LabelSelectorRequirement shape (key,
    operator In/NotIn/Exists/DoesNotExist/Gt/Lt, values); a selector the real parser refuses raises SelectorError
    with its words. An empty selector has no requirements (it selects everything)."""
    if not text or not text.strip():
        return []
    return [
        {"key": key, "operator": _REQUIREMENT_OPERATOR[op], "values": values}
        for key, op, values in _Parser(text).parse()
    ]


def label_selector_matcher(text: str | None) -> Callable[[dict], bool] | None:
    """A label selector string → predicate over a labels map (labels.Selector.Matches: every requirement by
    match_requirement); None for an empty selector, which selects everything."""
    reqs = [(r, r["key"]) for r in parse_label_requirements(text)]
    if not reqs:
        return None

    def matches(labels: dict) -> bool:
        return all(match_requirement(r, labels.get(k), k in labels) for r, k in reqs)

    return matches


def parse_label_selector(text: str | None) -> Predicate | None:
    """A label selector string → predicate over an object's metadata.labels; None for an empty selector."""
    matches = label_selector_matcher(text)
    if matches is None:
        return None

    def pred(obj: dict) -> bool:
        return matches(obj.get("metadata", {}).get("labels") or {})

    return pred


def field_value(obj: dict, path: str) -> str:
    """The value of a field label on an object, as the server's field label conversion prints it."""
    if path == "source":
        # An Event's `source` label: its source.component, else its reportingComponent (ToSelectableFields).
        src = obj.get("source") or {}
        return src.get("component") or obj.get("reportingComponent") or ""
    cur: object = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        # Unset booleans read as "false", as the server's field label conversion prints them.
        return "false" if path in ("spec.unschedulable", "spec.hostNetwork") else ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def parse_field_selector(text: str | None, allowed: Iterable[str]) -> Predicate | None:
    """`spec.nodeName=node-1,status.phase!=Running` → predicate; a label outside `allowed` is a SelectorError."""
    if not text or not text.strip():
        return None
    allowed = set(allowed)
    reqs: list[tuple[str, bool, str]] = []
    for part in re.split(r"(?<!\\),", text):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"([^=!]+?)\s*(==|=|!=)\s*(.*)", part)
        if not m:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        field, op, value = m.group(1).strip(), m.group(2), _unescape(m.group(3))
        if field not in allowed:
            raise SelectorError(f"field label not supported: {field}")
        reqs.append((field, op == "!=", value))

    def pred(obj: dict) -> bool:
        for field, negate, value in reqs:
            if (field_value(obj, field) == value) == negate:
                return False
        return True

    # What an object must equal, for a store's index to pick candidates by (sim/store.py: spec.nodeName).
    pred.equals = {field: value for field, negate, value in reqs if not negate}  # type: ignore[attr-defined]
    return pred
