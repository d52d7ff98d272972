"""fleet/cel/device.converts_plainly, the check fleeteval groups devices by: its fast reading (one lookup for a string
or a version attribute) against the field-by-field reading it replaced, and against the conversion itself, on a
table of attributes and capacities well-formed or not."""

from __future__ import annotations

import itertools

from dragoman.fleet.cel.device import (
    _SCALAR_TYPES,
    UnsupportedAttribute,
    _parse_version,
    cel_device,
    converts_plainly,
    parse_quantity,
)
from dragoman.fleet.cel.values import ValueError_


def _field_by_field(device: dict) -> bool:
    """The reading converts_plainly had before its fast path: every attribute unpacked, then its field looked up."""
    for attr in (device.get("attributes") or {}).values():
        if attr.__class__ is not dict or len(attr) != 1:
            return False
        ((k, v),) = attr.items()
        t = _SCALAR_TYPES.get(k)
        if t is not None:
            if v.__class__ is not t:
                return False
        elif k != "version" or v is None:
            return False
        elif _parse_version(str(v)).__class__ is UnsupportedAttribute:
            return False
    for cap in (device.get("capacity") or {}).values():
        raw = cap.get("value") if isinstance(cap, dict) else cap
        try:
            parse_quantity(str(raw))
        except ValueError_:
            return False
    return True


ATTRIBUTES = [
    {"string": "gpu"},
    {"string": 7},
    {"string": None},
    {"int": 8},
    {"int": True},
    {"int": "8"},
    {"bool": False},
    {"bool": 0},
    {"version": "1.2.3"},
    {"version": "580.105.8"},
    {"version": "not-a-version"},
    {"version": None},
    {"version": 1},
    {"strings": ["a", "b"]},
    {"ints": [1]},
    {"string": "a", "int": 1},
    {},
    {"float": 1.5},
    "gpu",
    None,
]
CAPACITIES = [{"value": "80Gi"}, {"value": "81559Mi"}, {"value": "lots"}, {"value": 4}, "40Gi", {}, None]


def test_the_fast_reading_answers_as_the_field_by_field_reading_and_as_the_conversion() -> None:
    answers = set()
    cases = 0
    for a, b in itertools.product(ATTRIBUTES, repeat=2):
        for cap in [None, *CAPACITIES]:
            device = {"name": "gpu-0", "attributes": {"productName": {"string": "H100"}, "x": a, "y": b}}
            if cap is not None:
                device["capacity"] = {"memory": cap}
            want = _field_by_field(device)
            assert converts_plainly(device) is want, device
            if want:
                # A plain device converts without error, each attribute to its raw scalar.
                dev = cel_device("gpu.nvidia.com", device)
                assert "conversion_error" not in dev.cache, device
            answers.add(want)
            cases += 1
    assert answers == {True, False} and cases > 2000
