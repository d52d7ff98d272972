"""Completion for the CEL editor from what the fleet publishes: domains, attribute and capacity names with type and
common values."""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Mapping

_ATTR_OPEN = re.compile(r"device\.(attributes|capacity)\[\s*([\"'])([\w.\-]*)$")
_MEMBER = re.compile(r"device\.(attributes|capacity)\[\s*([\"'])([\w.\-/]+)\2\s*\]\s*(?:\.|\[\s*([\"']))(\w*)$")
_VALUE = re.compile(
    r"device\.attributes\[\s*([\"'])([\w.\-/]+)\1\s*\]\s*(?:\.(\w+)|\[\s*[\"'](\w+)[\"']\s*\])\s*==\s*([\"']?)([^\"']*)$"
)
_DEVICE = re.compile(r"device\.(\w*)$")
_WORD = re.compile(r"(\w+)$")
_DEVICE_FIELDS = (
    ("attributes", "map domain → attribute → value"),
    ("capacity", "map domain → capacity → Quantity"),
    ("driver", "string: the device's driver"),
    ("allowMultipleAllocations", "bool"),
)


@dataclasses.dataclass(frozen=True)
class Candidate:
    """Replace the `replace` characters before the cursor with `insert`; `label` and `detail` are what the list
    shows."""

    insert: str
    replace: int
    label: str
    detail: str = ""


_cache: list = [
    None,
    None,
]  # (catalogue object, its entries): the catalogue is replaced, never changed, when slices change


def _entries(catalogue: Mapping[str, Mapping[str, dict]]) -> dict[str, dict[str, dict]]:
    """domain -> id -> entry, across drivers (computed once per catalogue: value tables can hold 40,000 uuids)."""
    if _cache[0] is catalogue:
        return _cache[1]
    out: dict[str, dict[str, dict]] = {}
    for attrs in catalogue.values():
        for qn, entry in attrs.items():
            domain, _, ident = qn.rpartition("/")
            cur = out.setdefault(domain, {}).get(ident)
            if cur is None:
                out[domain][ident] = entry
            else:
                values = dict(cur.get("values") or {})
                for v, n in (entry.get("values") or {}).items():
                    values[v] = values.get(v, 0) + n
                out[domain][ident] = {
                    **cur,
                    "values": values,
                    "devices": cur.get("devices", 0) + entry.get("devices", 0),
                }
    _cache[0], _cache[1] = catalogue, out
    return out


def describe(entry: dict, top: int = 3) -> str:
    """`string · 177 devices · "Ampere" ×152, "Hopper" ×24, …`"""
    # The catalogue lists values most common first already.
    values = entry.get("values") or {}
    shown = ", ".join(f"{_lit(v, entry)} ×{n}" for v, n in itertools.islice(values.items(), top))
    more = f", … {len(values) - top} more" if len(values) > top else ""
    return f"{entry.get('type')} · {entry.get('devices', 0)} devices · {shown}{more}"


def _lit(v, entry: dict) -> str:
    if entry.get("type") == "string":
        return f'"{v}"'
    if entry.get("type") == "bool":
        return "true" if v else "false"
    return str(v)


def candidates(catalogue: Mapping[str, Mapping[str, dict]], before: str, limit: int = 50) -> list[Candidate]:
    """What can follow `before` (the text up to the cursor), from the attribute catalogue
    (FleetModel.attribute_catalogue)."""
    by_domain = _entries(catalogue)
    m = _VALUE.search(before)
    if m:
        domain, ident, quote, partial = m.group(2), m.group(3) or m.group(4), m.group(5), m.group(6)
        entry = by_domain.get(domain, {}).get(ident)
        if entry and entry.get("kind") == "attribute":
            out: list[Candidate] = []
            for v, n in entry["values"].items():  # most common first
                if len(out) >= limit:
                    break
                if entry["type"] == "string":
                    if not str(v).startswith(partial):
                        continue
                    q = quote or '"'
                    out.append(Candidate(f"{q}{v}{q}", len(partial) + len(quote), f'"{v}"', f"{n} devices"))
                elif entry["type"] == "version":
                    continue  # semver compares with isGreaterThan/compareTo, not ==
                else:
                    lit = _lit(v, entry)
                    if lit.startswith(partial) and not quote:
                        out.append(Candidate(lit, len(partial), lit, f"{n} devices"))
            return out[:limit]
    m = _MEMBER.search(before)
    if m:
        kind, quote, domain, bracket, partial = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)
        want = "attribute" if kind == "attributes" else "capacity"
        out = []
        for ident, entry in sorted(by_domain.get(domain, {}).items()):
            if entry.get("kind") != want or not ident.startswith(partial):
                continue
            text = f"{ident}{bracket}]" if bracket else ident
            out.append(Candidate(text, len(partial), ident, describe(entry)))
        return out[:limit]
    m = _ATTR_OPEN.search(before)
    if m:
        kind, quote, partial = m.group(1), m.group(2), m.group(3)
        want = "attribute" if kind == "attributes" else "capacity"
        out = []
        for domain, ids in sorted(by_domain.items()):
            n = sum(1 for e in ids.values() if e.get("kind") == want)
            if n and domain.startswith(partial):
                out.append(Candidate(f"{domain}{quote}]", len(partial), domain, f"{n} {want} names"))
        return out[:limit]
    m = _DEVICE.search(before)
    if m:
        partial = m.group(1)
        return [Candidate(f, len(partial), f, d) for f, d in _DEVICE_FIELDS if f.startswith(partial) and f != partial]
    m = _WORD.search(before)
    if m and "device".startswith(m.group(1)) and m.group(1) != "device":
        return [Candidate("device", len(m.group(1)), "device", "the device being tested")]
    return []
