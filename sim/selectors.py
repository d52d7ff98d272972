"""Label and field selectors as the API server parses them, compiled to predicates over raw objects."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from dragoman.fleet.placement import match_label_selector  # noqa: F401  (one copy, shared with the app)

Predicate = Callable[[dict], bool]


class SelectorError(ValueError):
    """A selector the server cannot parse (answered with 400 BadRequest)."""


_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"


def _split_top(text: str) -> list[str]:
    """Split at commas that are not inside parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def parse_label_selector(text: str | None) -> Predicate | None:
    """`a=b,c!=d,e in (x,y),f notin (z),g,!h` → predicate over an object's metadata.labels."""
    if not text or not text.strip():
        return None
    reqs: list[Callable[[dict], bool]] = []
    for part in _split_top(text):
        m = re.fullmatch(rf"({_KEY})\s+(in|notin)\s+\((.*)\)", part)
        if m:
            key, op, values = m.group(1), m.group(3), {v.strip() for v in m.group(4).split(",") if v.strip()}
            if op == "in":
                reqs.append(lambda labels, k=key, vs=values: labels.get(k) in vs)
            else:
                reqs.append(lambda labels, k=key, vs=values: labels.get(k) not in vs)
            continue
        m = re.fullmatch(rf"({_KEY})\s*(==|=|!=)\s*([-A-Za-z0-9_.]*)", part)
        if m:
            key, op, value = m.group(1), m.group(3), m.group(4)
            if op == "!=":
                reqs.append(lambda labels, k=key, v=value: labels.get(k) != v)
            else:
                reqs.append(lambda labels, k=key, v=value: labels.get(k) == v)
            continue
        m = re.fullmatch(rf"(!?)\s*({_KEY})", part)
        if m:
            key = m.group(2)
            if m.group(1):
                reqs.append(lambda labels, k=key: k not in labels)
            else:
                reqs.append(lambda labels, k=key: k in labels)
            continue
        raise SelectorError(f"unable to parse requirement: {part!r}")

    def pred(obj: dict) -> bool:
        labels = obj.get("metadata", {}).get("labels") or {}
        return all(r(labels) for r in reqs)

    return pred


def _field_value(obj: dict, path: str) -> str:
    if path == "source":
        src = obj.get("source") or {}
        return src.get("component", "")
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
            if (_field_value(obj, field) == value) == negate:
                return False
        return True

    # What an object must equal, for a store's index to pick candidates by (sim/store.py: spec.nodeName).
    pred.equals = {field: value for field, negate, value in reqs if not negate}  # type: ignore[attr-defined]
    return pred
