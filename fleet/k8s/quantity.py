"""resource.Quantity (k8s.io/apimachinery@v0.37.2 pkg/api/resource): the one parser of "500m", "64Gi", "1e3".

`parse_quantity` is ParseQuantity: the exact value (rounded away from zero to nano units, as apimachinery keeps it)
or QuantityError in its words. `amount` is what the scheduler, quota and the diagnosis count with: cpu in millicores
(MilliValue), everything else as Value(), both rounded up. CEL's `quantity()` (fleet/cel/values.py) parses with
`split_quantity` and `parse_quantity` too.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

QUANTITY_RE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_NANO = Fraction(1, 10**9)
_EXPONENT = re.compile(r"[eE][-+]?[0-9]+")


class QuantityError(ValueError):
    """Text ParseQuantity refuses (the message is apimachinery's)."""


def split_quantity(text: str) -> tuple[int, str, str, str]:
    """(sign, whole digits, fraction digits, suffix) of a quantity, or QuantityError."""
    if not isinstance(text, str) or not text:
        raise QuantityError(FORMAT_ERROR)
    m = QUANTITY_RE.match(text)
    if not m:
        raise QuantityError(FORMAT_ERROR)
    num, suffix = m.group(1), m.group(2)
    sign = 1
    if num[0] in "+-":
        sign = -1 if num[0] == "-" else 1
        num = num[1:]
    if num.count(".") > 1 or num in ("", "."):
        raise QuantityError(FORMAT_ERROR)
    whole, _, frac = num.partition(".")
    if suffix not in BINARY and suffix not in DECIMAL:
        if not _EXPONENT.fullmatch(suffix):
            raise QuantityError("unable to parse quantity's suffix")
        if abs(int(suffix[1:])) > 1000:
            raise QuantityError("quantity is too large")
    return sign, whole, frac, suffix


_CACHE: dict[str, Fraction] = {}


def parse_quantity(text: str) -> Fraction:
    """ParseQuantity's value, exact: at most nano precision, rounded away from zero."""
    hit = _CACHE.get(text) if isinstance(text, str) else None
    if hit is not None:
        return hit
    sign, whole, frac, suffix = split_quantity(text)
    mantissa = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    if suffix in BINARY:
        value = mantissa * (2 ** BINARY[suffix])
    elif suffix in DECIMAL:
        value = mantissa * Fraction(10) ** DECIMAL[suffix]
    else:
        value = mantissa * Fraction(10) ** int(suffix[1:])
    value = sign * value
    if value.denominator != 1 and (value / _NANO).denominator != 1:
        scaled = value / _NANO
        value = Fraction(math.ceil(scaled) if scaled > 0 else math.floor(scaled)) * _NANO
    if len(_CACHE) < 100_000:
        _CACHE[text] = value
    return value


def quantity_of(value: object) -> Fraction:
    """A quantity field of a raw object: a JSON string (trimmed, as Quantity.UnmarshalJSON does) or number."""
    if isinstance(value, bool):
        raise QuantityError(FORMAT_ERROR)
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        value = repr(value)
    if not isinstance(value, str):
        raise QuantityError(FORMAT_ERROR)
    return parse_quantity(value.strip())


def _ceil(q: Fraction) -> int:
    n = q.numerator // q.denominator
    return n if n == q else n + 1


def amount(name: str, value: object) -> int:
    """A resource's amount as the scheduler and quota count it: cpu in millicores (MilliValue), anything else
    Value(); both round up. A value that is not a quantity counts as 0: the API server refuses one on write, so only
    a hand-written snapshot or scenario can hold it, and a reader must not fail on it."""
    milli = name == "cpu"
    if type(value) is str:  # the stored shape: a fleet repeats a few values, each counted once
        hit = _AMOUNTS.get((milli, value))
        if hit is not None:
            return hit
    try:
        q = quantity_of(value)
    except QuantityError:
        return 0
    n = _ceil(q * 1000 if milli else q)
    if type(value) is str and len(_AMOUNTS) < 100_000:
        _AMOUNTS[(milli, value)] = n
    return n


_AMOUNTS: dict[tuple[bool, str], int] = {}


def count(value: object) -> int:
    """A count a node or label reports ("8", 8, "1k"): Value(), 0 when missing or not a quantity."""
    return 0 if value is None else amount("", value)


def format_quantity(name: str, value: int) -> str:
    """The canonical string of an integer amount (cpu in millicores), enough for quota and status output."""
    if name.endswith("cpu") and not name.startswith("count/"):
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    if ("memory" in name or "storage" in name) and value:
        for suf, mult in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value % mult == 0:
                return f"{value // mult}{suf}"
    return str(value)
