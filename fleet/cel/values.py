"""Kubernetes' CEL value types for DRA: semantic versions and resource quantities, parsed as the API server does."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import total_ordering

from dragoman.fleet.k8s.quantity import BINARY, DECIMAL, QuantityError, parse_quantity, split_quantity

# blang/semver v4 `Parse` (strict SemVer 2.0.0), which apiserver's Semver wraps.
_NUM = r"(0|[1-9][0-9]*)"
_PRE_ID = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_BUILD_ID = r"[0-9A-Za-z-]+"
SEMVER_RE = re.compile(
    rf"^{_NUM}\.{_NUM}\.{_NUM}(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?(?:\+({_BUILD_ID}(?:\.{_BUILD_ID})*))?$"
)
_INT64_MAX = 2**63 - 1
_UINT64_MAX = 2**64 - 1


class ValueError_(Exception):
    """A CEL runtime error raised by a library function (the message is what Kubernetes reports)."""


@total_ordering
class Semver:
    """A `kubernetes.Semver`: compared by precedence (build metadata ignored), no `<` operator in CEL."""

    __slots__ = ("major", "minor", "patch", "pre", "build", "_key", "_hash")

    def __init__(self, major: int, minor: int, patch: int, pre: tuple = (), build: tuple = ()) -> None:
        self.major, self.minor, self.patch, self.pre, self.build = major, minor, patch, pre, build
        # SemVer precedence: a release outranks its pre-releases; numeric ids rank below alphanumeric ones.
        pre_key = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre)
        self._key = (major, minor, patch, 1 if not pre else 0, pre_key)
        self._hash = hash(self._key)

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        """Parse as apiserver's `semver()` does (blang/semver Parse); `normalize` as its normalizeAndParse."""
        if not isinstance(text, str):
            raise ValueError_("semver must be a string")
        s = _normalize_semver(text) if normalize else text
        if not s:
            raise ValueError_("Version string empty")
        parts = s.split(".", 2)
        if len(parts) != 3:
            raise ValueError_("No Major.Minor.Patch elements found")
        for label, part in (("major", parts[0]), ("minor", parts[1])):
            if not part.isdigit() or not part.isascii():
                raise ValueError_(f"Invalid character(s) found in {label} number {part!r}".replace("'", '"'))
            if len(part) > 1 and part[0] == "0":
                raise ValueError_(
                    f"{label.capitalize()} number must not contain leading zeroes {part!r}".replace("'", '"')
                )
        m = SEMVER_RE.match(s)
        if not m:
            raise ValueError_(f"Invalid semantic version {text!r}".replace("'", '"'))
        major, minor, patch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if max(major, minor, patch) > _UINT64_MAX:
            raise ValueError_(f"Invalid semantic version {text!r}".replace("'", '"'))
        pre = tuple(m.group(4).split(".")) if m.group(4) else ()
        build = tuple(m.group(5).split(".")) if m.group(5) else ()
        return cls(major, minor, patch, pre, build)

    def compare(self, other: Semver) -> int:
        return (self._key > other._key) - (self._key < other._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self._key == other._key

    def __lt__(self, other: Semver) -> bool:
        return self._key < other._key

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(self.pre)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def __repr__(self) -> str:
        return f"semver({str(self)!r})"


def _normalize_semver(s: str) -> str:
    # apiserver semverlib normalizeAndParse: drop one leading "v", strip leading zeros, pad to three parts.
    if s.startswith("v"):
        s = s[1:]
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or p[0] not in "0123456789":
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise ValueError_("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def is_semver(text: str, normalize: bool = False) -> bool:
    try:
        Semver.parse(text, normalize)
        return True
    except ValueError_:
        return False


# k8s.io/apimachinery resource.Quantity: parsed by fleet/k8s/quantity.py


@total_ordering
class Quantity:
    """A `kubernetes.Quantity`: an exact value (rounded up to nanounits, as apimachinery does) and its text."""

    __slots__ = ("value", "text", "_hash", "boxed", "amount")
    _hash: int

    def __init__(
        self,
        value: Fraction,
        text: str | None = None,
        boxed: bool = False,
        amount: tuple[int, int] | None = None,
    ) -> None:
        self.value = value
        # apimachinery's representation: an int64Amount (value, scale) when it fits, else an inf.Dec (None).
        # asInteger/isInteger go by it, not by the number: "1.5" + "1.5" is int64Amount{30, -1}, not an integer.
        self.amount = amount
        self.text = text if text is not None else _format_quantity(value)
        # library/quantity.go's add() and sub() return *apiservercel.Quantity, quantity() and a device's capacity a
        # Quantity: Quantity.Equal's type assertion refuses the pointer, so `q == q2.add(1)` is no-such-overload.
        self.boxed = boxed

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """ParseQuantity (fleet/k8s/quantity.py, the one parser), with the representation it builds."""
        try:
            sign, whole, frac, suffix = split_quantity(text)
            value = parse_quantity(text)
        except QuantityError as exc:
            raise ValueError_(str(exc)) from None
        return cls(value, text, amount=_int64_amount(text, sign > 0, whole, frac, suffix))

    def compare(self, other: Quantity) -> int:
        return (self.value > other.value) - (self.value < other.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        # Kept: devices share their parsed quantities, and grouping 40,000 of them by capacity hashes each one
        # (a Fraction's hash takes a modular inverse every time).
        try:
            return self._hash
        except AttributeError:
            self._hash = h = hash(("q", self.value))
            return h

    def is_integer(self) -> bool:
        # Quantity.AsInt64: an inf.Dec never; an int64Amount at scale 0, or a positive scale that fits in int64.
        if self.amount is None:
            return False
        v, scale = self.amount
        return scale >= 0 and -(2**63) <= v * 10**scale <= _INT64_MAX

    def plus(self, other: Quantity, negate: bool = False) -> Quantity:
        """Quantity.Add / Quantity.Sub (library/quantity.go add() and sub() return the pointer: boxed)."""
        value = self.value - other.value if negate else self.value + other.value
        amount = None
        if self.amount is not None and other.amount is not None:
            amount = _int64_add(self.amount, (-other.amount[0], other.amount[1]) if negate else other.amount)
        return Quantity(value, boxed=True, amount=amount)

    def as_integer(self) -> int:
        if not self.is_integer():
            raise ValueError_("cannot convert value to integer")
        return int(self.value)

    def as_float(self) -> float:
        return float(self.value)

    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"quantity({self.text!r})"


def _int64_amount(text: str, positive: bool, whole: str, frac: str, suffix: str) -> tuple[int, int] | None:
    """The int64Amount ParseQuantity builds, or None where it falls back to inf.Dec (quantity.go)."""
    if text == "0":
        return (0, 0)
    num = whole.lstrip("0") or "0"
    if suffix in BINARY:
        exponent = BINARY[suffix]
        if frac:
            return None
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        mantissa, scale = 1 << exponent, 0
    else:
        exponent = DECIMAL[suffix] if suffix in DECIMAL else int(suffix[1:])
        precision = 18 - (len(num) + len(frac))
        mantissa, scale = 1, exponent
    if precision < 0:
        return None
    scale -= len(frac)
    if scale < -9:
        return None
    shifted = int(num + frac)
    if shifted > _INT64_MAX:
        return None
    result = shifted * mantissa
    if not -(2**63) <= result <= _INT64_MAX:
        return None
    return (result if positive else -result, scale)


def _int64_add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """int64Amount.Add: aligned to the smaller scale; None on overflow (the sum goes to inf.Dec)."""
    (av, ascale), (bv, bscale) = a, b
    if bv == 0:
        return a
    if av == 0:
        return b
    scale = min(ascale, bscale)
    av, bv = av * 10 ** (ascale - scale), bv * 10 ** (bscale - scale)
    total = av + bv
    if not all(-(2**63) <= x <= _INT64_MAX for x in (av, bv, total)):
        return None
    return (total, scale)


def _format_quantity(value: Fraction) -> str:
    if value.denominator == 1:
        v = int(value)
        for suffix, shift in sorted(BINARY.items(), key=lambda kv: -kv[1]):
            if v and v % (1 << shift) == 0:
                return f"{v >> shift}{suffix}"
        return str(v)
    for suffix in ("m", "u", "n"):
        scaled = value / Fraction(10) ** DECIMAL[suffix]
        if scaled.denominator == 1:
            return f"{int(scaled)}{suffix}"
    return str(float(value))


def is_quantity(text: str) -> bool:
    try:
        Quantity.parse(text)
        return True
    except ValueError_:
        return False
