"""Runtime values and the function library of Kubernetes' CEL, on native Python values, shared by both engines."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import re2
from dragoman.fleet.cel import timelib
from dragoman.fleet.cel.formats import FORMATS, NamedFormat
from dragoman.fleet.cel.netlib import CIDR, IP, NetParseError, is_cidr, is_ip, parse_cidr, parse_ip_addr
from dragoman.fleet.cel.syntax import Uint
from dragoman.fleet.cel.timelib import Duration, TimeError, Timestamp
from dragoman.fleet.cel.urls import URL, URLError, is_url, url_of
from dragoman.fleet.cel.values import Quantity, Semver, ValueError_, is_quantity, is_semver

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_UINT64_MAX = 2**64 - 1


class CelRuntimeError(Exception):
    """A per-device evaluation error; `message` is what the scheduler would report after 'CEL runtime error: '."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def no_overload(name: str = "") -> CelRuntimeError:
    return CelRuntimeError("no such overload")


def no_such_key(key: Any) -> CelRuntimeError:
    return CelRuntimeError(f"no such key: {format_key(key)}")


def format_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


class DefaultMap(dict):
    """`device.attributes` / `device.capacity`: an unknown domain reads as an empty map (cel/compile.go mapper.Find)."""

    __slots__ = ()


EMPTY_MAP: dict = {}


class Optional_:
    """cel-go's optional type: `optional.of(v)` or `optional.none()`."""

    __slots__ = ("present", "value")

    def __init__(self, present: bool, value: Any = None) -> None:
        self.present = present
        self.value = value

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Optional_)
            and self.present == other.present
            and (not self.present or equals(self.value, other.value))
        )

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.present else "optional.none()"


NONE = Optional_(False)


class CelType:
    """A value of CEL's `type` type, as returned by `type(x)`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelType) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return self.name


def type_name(v: Any) -> str:
    t = type(v)
    if t is bool:
        return "bool"
    if t is Uint:
        return "uint"
    if t is int:
        return "int"
    if t is float:
        return "double"
    if t is str:
        return "string"
    if t is bytes:
        return "bytes"
    if v is None:
        return "null_type"
    if t is list:
        return "list"
    if t is dict or t is DefaultMap:
        return "map"
    if t is Semver:
        return "kubernetes.Semver"
    if t is Quantity:
        return "kubernetes.Quantity"
    if t is Optional_:
        return "optional_type"
    if t is CelType:
        return "type"
    if t is IP:
        return "net.IP"
    if t is CIDR:
        return "net.CIDR"
    if t is Timestamp:
        return "google.protobuf.Timestamp"
    if t is Duration:
        return "google.protobuf.Duration"
    if t is URL:
        return "kubernetes.URL"
    if t is NamedFormat:
        return "kubernetes.NamedFormat"
    return t.__name__


def go_type_name(v: Any) -> str:
    """The Go type (%T) of the cel-go value this Python value stands for, as cel-go's errors print it."""
    t = type(v)
    names = {
        bool: "types.Bool",
        Uint: "types.Uint",
        int: "types.Int",
        float: "types.Double",
        str: "types.String",
        bytes: "types.Bytes",
        Semver: "cel.Semver",
        Quantity: "cel.Quantity",
        IP: "cel.IP",
        CIDR: "cel.CIDR",
        Optional_: "*types.Optional",
        CelType: "*types.Type",
        Timestamp: "types.Timestamp",
        Duration: "types.Duration",
        URL: "cel.URL",
    }
    if v is None:
        return "types.Null"
    return names.get(t, t.__name__)


_NUMERIC = (int, Uint, float)
_TIME_TYPES = (Timestamp, Duration)
_COMPARERS = (int, Uint, float, str, bool, bytes, Timestamp, Duration)  # the values that implement traits.Comparer


_K8S_VALUE_TYPES = (Semver, Quantity, IP, CIDR)


def equals(a: Any, b: Any) -> bool:
    """cel-go `types.Equal`: null first, then the left operand's Equal (heterogeneous numbers, errors for k8s types)."""
    if a is None or b is None:
        return a is None and b is None
    ta = type(a)
    if ta is str:
        return type(b) is str and a == b
    if ta is bool:
        return type(b) is bool and a == b
    if ta is int or ta is Uint or ta is float:
        if type(b) in _NUMERIC:
            return a == b
        return False
    if ta is Semver or ta is IP or ta is CIDR:
        if type(b) is ta:
            return a == b
        raise no_overload("_==_")
    if ta is Quantity:
        if type(b) is Quantity and not b.boxed:
            return a == b
        raise no_overload("_==_")
    # baseList.Equal / baseMap.Equal: only an element that compares False makes the aggregates unequal; one whose
    # comparison is an error (a semver against an int) is skipped, so [semver("1.0.0")] == [dyn(1)] is true.
    if ta is list:
        if type(b) is not list or len(a) != len(b):
            return False
        return all(_not_false(x, y) for x, y in zip(a, b))
    if ta is dict or ta is DefaultMap:
        if type(b) not in (dict, DefaultMap) or len(a) != len(b):
            return False
        for k, v in a.items():
            found, bv = _map_find(b, k)
            if not found or not _not_false(v, bv):
                return False
        return True
    if ta is bytes:
        return type(b) is bytes and a == b
    if ta is Optional_:
        return a == b
    if ta is CelType:
        return a == b
    if ta is Timestamp or ta is Duration:
        return a == b  # Bool(ok && equal): another type is unequal, not an error
    if ta is URL or ta is NamedFormat:
        if type(b) is not ta:
            raise no_overload("_==_")
        return a == b
    return a == b


def _map_find(m: dict, k: Any) -> tuple[bool, Any]:
    if type(k) is bool:
        for mk, mv in m.items():
            if type(mk) is bool and mk == k:
                return True, mv
        return False, None
    if type(k) in _NUMERIC:
        # Numeric keys match across int/uint/double when the value is the same.
        if type(k) is float and not k.is_integer():
            return False, None
        for mk, mv in m.items():
            if type(mk) in _NUMERIC and mk == k:
                return True, mv
        return False, None
    if type(k) is str:
        if k in m:
            return True, m[k]
        return False, None
    raise no_overload("_[_]")


def compare(a: Any, b: Any, op: str) -> bool:
    """`<`, `<=`, `>`, `>=`: same-type orderings plus cross-type numeric comparison; nothing for versions/quantities."""
    ta, tb = type(a), type(b)
    if (ta is int or ta is float or ta is Uint) and (tb is int or tb is float or tb is Uint):
        pass
    elif ta is tb and ta in (str, bool, bytes, Timestamp, Duration):
        pass
    else:
        raise no_overload(op)
    if op == "_<_":
        return a < b
    if op == "_<=_":
        return a <= b
    if op == "_>_":
        return a > b
    return a >= b


def op_in(item: Any, container: Any) -> bool:
    t = type(container)
    if t is list:
        # baseList.Contains: item.Equal(element) == True; a comparison that is an error is no match.
        for x in container:
            if _equal_or_false(item, x):
                return True
        return False
    if t is dict or t is DefaultMap:
        if type(item) not in (str, int, Uint, float, bool):
            raise no_overload("@in")
        return _map_find(container, item)[0]
    raise no_overload("@in")


def _check_int(v: int) -> int:
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise CelRuntimeError("integer overflow")
    return v


def _check_uint(v: int) -> Uint:
    if not 0 <= v <= _UINT64_MAX:
        raise CelRuntimeError("unsigned integer overflow")
    return Uint(v)


def arith(op: str, a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta in _TIME_TYPES or tb in _TIME_TYPES:
        return _time_arith(op, a, b)
    if ta is not tb:
        raise no_overload(op)
    if ta is int:
        if op == "_+_":
            return _check_int(a + b)
        if op == "_-_":
            return _check_int(a - b)
        if op == "_*_":
            return _check_int(a * b)
        if op == "_/_":
            if b == 0:
                raise CelRuntimeError("division by zero")
            q = abs(a) // abs(b)
            return _check_int(q if (a >= 0) == (b >= 0) else -q)
        if op == "_%_":
            if b == 0:
                raise CelRuntimeError("modulus by zero")
            r = abs(a) % abs(b)
            return r if a >= 0 else -r
    if ta is Uint:
        if op == "_+_":
            return _check_uint(a + b)
        if op == "_-_":
            return _check_uint(a - b)
        if op == "_*_":
            return _check_uint(a * b)
        if op == "_/_":
            if b == 0:
                raise CelRuntimeError("division by zero")
            return Uint(a // b)
        if op == "_%_":
            if b == 0:
                raise CelRuntimeError("modulus by zero")
            return Uint(a % b)
    if ta is float:
        if op == "_+_":
            return a + b
        if op == "_-_":
            return a - b
        if op == "_*_":
            return a * b
        if op == "_/_":
            if b == 0:
                return math.copysign(math.inf, a) * math.copysign(1, b) if a != 0 else math.nan
            return a / b
    if op == "_+_" and ta in (str, bytes, list):
        return a + b
    raise no_overload(op)


def _time_arith(op: str, a: Any, b: Any) -> Any:
    """timestamp and duration arithmetic (types/timestamp.go, duration.go), overflow-checked."""
    ta, tb = type(a), type(b)
    try:
        if op == "_+_":
            if ta is Duration and tb is Duration:
                return timelib.add_durations(a, b)
            if ta is Timestamp and tb is Duration:
                return timelib.add_time(a, b)
            if ta is Duration and tb is Timestamp:
                return timelib.add_time(b, a)
        elif op == "_-_":
            if ta is Duration and tb is Duration:
                return timelib.sub_durations(a, b)
            if ta is Timestamp and tb is Duration:
                return timelib.sub_time_duration(a, b)
            if ta is Timestamp and tb is Timestamp:
                return timelib.sub_times(a, b)
    except TimeError as exc:
        raise CelRuntimeError(str(exc)) from None
    raise no_overload(op)


def negate(a: Any) -> Any:
    t = type(a)
    if t is int:
        return _check_int(-a)
    if t is float:
        return -a
    raise no_overload("-_")


def logical_not(a: Any) -> bool:
    if type(a) is bool:
        return not a
    raise no_overload("!_")


def index(container: Any, key: Any) -> Any:
    t = type(container)
    if t is DefaultMap:
        found, v = _map_find(container, key)
        return v if found else EMPTY_MAP
    if t is dict:
        found, v = _map_find(container, key)
        if not found:
            raise no_such_key(key)
        return v
    if t is list:
        tk = type(key)
        if tk is float:
            if not key.is_integer():
                raise CelRuntimeError(f"unsupported index value {key}")
            key = int(key)
        elif tk is not int and tk is not Uint:
            raise no_overload("_[_]")
        if not 0 <= key < len(container):
            raise CelRuntimeError(f"index '{key}' out of range in list size '{len(container)}'")
        return container[key]
    if t is Optional_:
        if not container.present:
            return NONE
        return opt_index(container.value, key)
    raise no_overload("_[_]")


def select(operand: Any, field: str) -> Any:
    t = type(operand)
    if t is DefaultMap:
        return operand.get(field, EMPTY_MAP)
    if t is dict:
        try:
            return operand[field]
        except KeyError:
            raise no_such_key(field) from None
    if t is Optional_:
        if not operand.present:
            return NONE
        return opt_select(operand.value, field)
    raise CelRuntimeError(f"type '{type_name(operand)}' does not support field selection")


def has_field(operand: Any, field: str) -> bool:
    t = type(operand)
    if t is DefaultMap:
        return True  # the wrapper's Find always succeeds (the default value)
    if t is dict:
        return field in operand
    raise CelRuntimeError(f"type '{type_name(operand)}' does not support field selection")


def opt_select(operand: Any, field: str) -> Optional_:
    t = type(operand)
    if t is Optional_:
        if not operand.present:
            return NONE
        operand = operand.value
        t = type(operand)
    if t is DefaultMap:
        return Optional_(True, operand.get(field, EMPTY_MAP))
    if t is dict:
        if field in operand:
            return Optional_(True, operand[field])
        return NONE
    raise CelRuntimeError(f"type '{type_name(operand)}' does not support field selection")


def opt_index(container: Any, key: Any) -> Optional_:
    t = type(container)
    if t is Optional_:
        if not container.present:
            return NONE
        container = container.value
        t = type(container)
    if t is DefaultMap:
        found, v = _map_find(container, key)
        return Optional_(True, v if found else EMPTY_MAP)
    if t is dict:
        found, v = _map_find(container, key)
        return Optional_(True, v) if found else NONE
    if t is list:
        try:
            return Optional_(True, index(container, key))
        except CelRuntimeError as exc:
            if "out of range" in exc.message:
                return NONE
            raise
    raise no_overload("_[?_]")


# ---- the library -----------------------------------------------------------------------------------------------


def _str(*vals: Any) -> None:
    for v in vals:
        if type(v) is not str:
            raise no_overload()


def _int(*vals: Any) -> None:
    for v in vals:
        if type(v) is not int:
            raise no_overload()


def f_size(x: Any) -> int:
    t = type(x)
    if t is str:
        return len(x)
    if t in (bytes, list, dict, DefaultMap):
        return len(x)
    raise no_overload("size")


def f_contains(s: Any, sub: Any) -> bool:
    _str(s, sub)
    return sub in s


def f_startswith(s: Any, p: Any) -> bool:
    _str(s, p)
    return s.startswith(p)


def f_endswith(s: Any, p: Any) -> bool:
    _str(s, p)
    return s.endswith(p)


_REGEX_CACHE: dict[str, Any] = {}
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # RE2 would print every rejected pattern on stderr


def _has_escape_c(pattern: str) -> bool:
    """Whether the pattern uses \\C (one linear scan: escapes pair up left to right)."""
    i = pattern.find("\\")
    while i != -1 and i + 1 < len(pattern):
        if pattern[i + 1] == "C":
            return True
        i = pattern.find("\\", i + 2)
    return False


# RE2's C++ error codes as Go's regexp/syntax words them (cel-go reports Go's text).
_GO_REGEXP_ERRORS = {
    "bad repetition operator": "invalid nested repetition operator",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "invalid escape sequence": "invalid escape sequence",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "invalid repetition size": "invalid repeat count",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    "trailing \\": "trailing backslash at end of expression",
}


def _go_regexp_error(detail: str) -> str:
    code, sep, arg = detail.partition(": ")
    go = _GO_REGEXP_ERRORS.get(code)
    if go is None:
        return detail
    return f"{go}: `{arg}`" if sep else f"{go}: ``"


def regex_error(pattern: str) -> str | None:
    """Why RE2 (the dialect and linear-time engine of Go's regexp, which cel-go uses) rejects a pattern; None if it
    takes it."""
    try:
        compile_regex(pattern)
    except CelRuntimeError as exc:
        return exc.message
    return None


def compile_regex(pattern: str) -> Any:
    r = _REGEX_CACHE.get(pattern)
    if r is None:
        try:
            if "\\C" in pattern and _has_escape_c(pattern):
                # \C (any byte) is RE2-in-C++ only; Go's parser refuses it.
                raise re2.error(b"invalid escape sequence: \\C")
            r = re2.compile(pattern, options=_RE2_OPTIONS)
        except re2.error as exc:
            detail = exc.args[0] if exc.args else exc
            if isinstance(detail, bytes):
                detail = detail.decode("utf-8", "replace")
            raise CelRuntimeError(f"error parsing regexp: {_go_regexp_error(str(detail))}") from None
        if len(_REGEX_CACHE) >= 4096:
            _REGEX_CACHE.clear()
        _REGEX_CACHE[pattern] = r
    return r


def f_matches(s: Any, pattern: Any) -> bool:
    _str(s, pattern)
    return compile_regex(pattern).search(s) is not None


def f_find(s: Any, pattern: Any) -> str:
    _str(s, pattern)
    m = compile_regex(pattern).search(s)
    return m.group(0) if m else ""


def f_findall(s: Any, pattern: Any, limit: Any = None) -> list:
    _str(s, pattern)
    n = -1
    if limit is not None:
        _int(limit)
        n = limit
    rx = compile_regex(pattern)
    # Go's Regexp.FindAllString: successive non-overlapping matches; an empty match right after a
    # previous match is skipped (Python's finditer keeps it).
    out: list[str] = []
    pos, prev_end, end = 0, -1, len(s)
    while (n < 0 or len(out) < n) and pos <= end:
        m = rx.search(s, pos)
        if m is None:
            break
        start, stop = m.span()
        accept = True
        if stop == pos:
            # An empty match here: not right after the previous match, and the search moves one character on.
            if start == prev_end:
                accept = False
            pos += 1
        else:
            pos = stop
        prev_end = stop
        if accept:
            out.append(m.group(0))
    return out


_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}


def f_lower(s: Any) -> str:
    _str(s)
    # ASCII only, like ext.Strings: str.lower() would also fold non-ASCII letters.
    return s.lower() if s.isascii() else s.translate(_LOWER)


def f_upper(s: Any) -> str:
    _str(s)
    return s.upper() if s.isascii() else s.translate(_UPPER)


def f_char_at(s: Any, i: Any) -> str:
    _str(s)
    _int(i)
    if i < 0 or i > len(s):
        raise CelRuntimeError(f"index out of range: {i}")
    return s[i : i + 1]


def f_index_of(x: Any, sub: Any, offset: Any = None) -> int:
    if type(x) is list:
        if offset is not None:
            raise no_overload()
        for i, v in enumerate(x):
            if equals(v, sub):
                return i
        return -1
    _str(x, sub)
    start = 0
    if offset is not None:
        _int(offset)
        if offset < 0 or offset > len(x):
            raise CelRuntimeError(f"index out of range: {offset}")
        start = offset
    return x.find(sub, start)


def f_last_index_of(x: Any, sub: Any, offset: Any = None) -> int:
    if type(x) is list:
        if offset is not None:
            raise no_overload()
        for i in range(len(x) - 1, -1, -1):
            if equals(x[i], sub):
                return i
        return -1
    _str(x, sub)
    if offset is not None:
        _int(offset)
        if offset < 0 or offset >= max(1, len(x)) and not (offset == 0):
            raise CelRuntimeError(f"index out of range: {offset}")
        return x.rfind(sub, 0, offset + len(sub))
    return x.rfind(sub)


def f_replace(s: Any, old: Any, new: Any, n: Any = None) -> str:
    _str(s, old, new)
    if n is None:
        return s.replace(old, new)
    _int(n)
    return s.replace(old, new, n if n >= 0 else -1)


def f_split(s: Any, sep: Any, n: Any = None) -> list:
    _str(s, sep)
    if n is not None:
        _int(n)
        if n == 0:
            return []
    if sep == "":
        parts = list(s)
        if n is not None and n > 0 and len(parts) > n:
            parts = parts[: n - 1] + ["".join(parts[n - 1 :])]
        return parts
    if n is None or n < 0:
        return s.split(sep)
    return s.split(sep, n - 1)


def f_substring(s: Any, start: Any, end: Any = None) -> str:
    _str(s)
    _int(start)
    if end is None:
        end = len(s)
    _int(end)
    if start < 0 or start > len(s):
        raise CelRuntimeError(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise CelRuntimeError(f"index out of range: {end}")
    if start > end:
        raise CelRuntimeError(f"invalid substring range. start: {start}, end: {end}")
    return s[start:end]


def f_trim(s: Any) -> str:
    _str(s)
    return s.strip()


def f_join(lst: Any, sep: Any = "") -> str:
    if type(lst) is not list:
        raise no_overload("join")
    _str(sep)
    for v in lst:
        if type(v) is not str:
            raise no_overload("join")
    return sep.join(lst)


def f_reverse(x: Any) -> Any:
    if type(x) is str:
        return x[::-1]
    if type(x) is list:
        return x[::-1]
    raise no_overload("reverse")


def f_quote(s: Any) -> str:
    _str(s)
    out = ['"']
    for c in s:
        out.append(
            {
                "\\": "\\\\",
                '"': '\\"',
                "\n": "\\n",
                "\t": "\\t",
                "\r": "\\r",
                "\a": "\\a",
                "\b": "\\b",
                "\f": "\\f",
                "\v": "\\v",
            }.get(c, c)
        )
    out.append('"')
    return "".join(out)


def to_string(v: Any) -> str:
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int or t is Uint:
        return str(int(v))
    if t is float:
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "+Inf" if v > 0 else "-Inf"
        r = repr(v)
        return r[:-2] if r.endswith(".0") else r
    if t is bytes:
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise CelRuntimeError("invalid UTF-8 in bytes, cannot convert to string") from None
    if t is IP or t is CIDR or t is Timestamp or t is Duration:
        return str(v)
    # cel-go's string() has no overload for the other types, Kubernetes' semver and quantity included (the oracle).
    raise CelRuntimeError(f"no such overload: string({type_name(v)})")


_FMT = re.compile(r"%(?:(\.\d+)?([sdfeExXobc%]))")


def f_format(fmt: Any, args: Any) -> str:
    _str(fmt)
    if type(args) is not list:
        raise no_overload("format")
    out: list[str] = []
    argi = 0
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        m = _FMT.match(fmt, i)
        if not m:
            raise CelRuntimeError(
                f'could not parse formatting clause: unrecognized formatting clause "{fmt[i + 1 : i + 2]}"'
            )
        prec, verb = m.group(1), m.group(2)
        i = m.end()
        if verb == "%":
            out.append("%")
            continue
        if argi >= len(args):
            raise CelRuntimeError(f"index {argi} out of range")
        a = args[argi]
        argi += 1
        if verb == "s":
            out.append(_format_s(a))
        elif verb == "d":
            if type(a) not in (int, Uint):
                raise CelRuntimeError(
                    f"error during formatting: decimal clause can only be used on integers, was given {type_name(a)}"
                )
            out.append(str(int(a)))
        elif verb in "fFeE":
            if type(a) not in (float, int, Uint):
                raise CelRuntimeError(
                    f"error during formatting: fixed-point clause can only be used on doubles, was given {type_name(a)}"
                )
            p = int(prec[1:]) if prec else 6
            out.append(format(float(a), f".{p}{verb}"))
        elif verb in "xX":
            if type(a) in (int, Uint):
                s = format(int(a), "x")
            elif type(a) is str:
                s = a.encode().hex()
            elif type(a) is bytes:
                s = a.hex()
            else:
                raise CelRuntimeError(
                    "error during formatting: only integers, byte buffers, and strings can be formatted as hex"
                )
            out.append(s.upper() if verb == "X" else s)
        elif verb == "o":
            out.append(format(int(a), "o"))
        elif verb == "b":
            out.append(format(int(a), "b") if type(a) in (int, Uint) else _format_s(a))
        else:
            raise CelRuntimeError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')
    return "".join(out)


def _format_s(a: Any) -> str:
    if type(a) is list:
        return "[" + ", ".join(_format_s(x) if type(x) is not str else x for x in a) + "]"
    if type(a) in (dict, DefaultMap):
        return (
            "{"
            + ", ".join(f"{_format_s(k)}: {_format_s(v)}" for k, v in sorted(a.items(), key=lambda kv: str(kv[0])))
            + "}"
        )
    if a is None:
        return "null"
    return to_string(a)


def f_int(v: Any) -> int:
    t = type(v)
    if t is int:
        return v
    if t is Uint:
        return _check_int(int(v))
    if t is float:
        if math.isnan(v) or math.isinf(v) or not (-(2.0**63) <= v < 2.0**63):
            raise CelRuntimeError("integer overflow")
        return int(v)
    if t is str:
        try:
            return _check_int(int(v, 10))
        except ValueError:
            raise CelRuntimeError(f"strconv.ParseInt: parsing {v!r}: invalid syntax") from None
    if t is Timestamp:
        return v.sec  # Unix seconds
    if t is Duration:
        return v.nanos  # nanoseconds
    raise no_overload("int")


def f_uint(v: Any) -> Uint:
    t = type(v)
    if t is Uint:
        return v
    if t is int:
        return _check_uint(v)
    if t is float:
        if math.isnan(v) or v < 0 or v >= 2.0**64:
            raise CelRuntimeError("unsigned integer overflow")
        return Uint(int(v))
    if t is str:
        try:
            return _check_uint(int(v, 10))
        except ValueError:
            raise CelRuntimeError(f"strconv.ParseUint: parsing {v!r}: invalid syntax") from None
    raise no_overload("uint")


def f_double(v: Any) -> float:
    t = type(v)
    if t is float:
        return v
    if t is int or t is Uint:
        return float(v)
    if t is str:
        # strconv.ParseFloat: no surrounding spaces, and out of range (1e400) is an error, not infinity.
        try:
            f = float(v) if v == v.strip() else None
        except ValueError:
            f = None
        if f is None or (math.isinf(f) and "inf" not in v.lower()):
            raise CelRuntimeError("type conversion error from 'string' to 'double'")
        return f
    raise no_overload("double")


def f_bool(v: Any) -> bool:
    if type(v) is bool:
        return v
    if type(v) is str:
        if v in ("true", "True", "TRUE", "t", "1"):
            return True
        if v in ("false", "False", "FALSE", "f", "0"):
            return False
        raise CelRuntimeError("type conversion error from 'string' to 'bool'")
    raise no_overload("bool")


def f_bytes(v: Any) -> bytes:
    if type(v) is bytes:
        return v
    if type(v) is str:
        return v.encode("utf-8")
    raise no_overload("bytes")


def f_type(v: Any) -> CelType:
    return CelType(type_name(v))


# Kubernetes semver library
def f_semver(s: Any, normalize: Any = False) -> Semver:
    _str(s)
    if type(normalize) is not bool:
        raise no_overload("semver")
    try:
        return Semver.parse(s, normalize)
    except ValueError_ as exc:
        raise CelRuntimeError(str(exc)) from None


def f_is_semver(s: Any, normalize: Any = False) -> bool:
    _str(s)
    if type(normalize) is not bool:
        raise no_overload("isSemver")
    return is_semver(s, normalize)


def f_quantity(s: Any) -> Quantity:
    _str(s)
    try:
        return Quantity.parse(s)
    except ValueError_ as exc:
        raise CelRuntimeError(str(exc)) from None


def f_is_quantity(s: Any) -> bool:
    _str(s)
    return is_quantity(s)


def _same_kind(a: Any, b: Any, name: str) -> None:
    if not (type(a) is type(b) and type(a) in (Semver, Quantity)):
        raise no_overload(name)


def f_compare_to(a: Any, b: Any) -> int:
    _same_kind(a, b, "compareTo")
    return a.compare(b)


def f_greater(a: Any, b: Any) -> bool:
    _same_kind(a, b, "isGreaterThan")
    return a.compare(b) > 0


def f_less(a: Any, b: Any) -> bool:
    _same_kind(a, b, "isLessThan")
    return a.compare(b) < 0


def _semver_part(name: str) -> Callable[[Any], int]:
    def part(v: Any) -> int:
        if type(v) is not Semver:
            raise no_overload(name)
        return getattr(v, name)

    return part


def _as_quantity(v: Any, name: str) -> Quantity:
    if type(v) is Quantity:
        return v
    if type(v) is int:
        from fractions import Fraction

        return Quantity(Fraction(v), amount=(v, 0))  # resource.NewQuantity(i, DecimalExponent)
    raise no_overload(name)


def f_add(a: Any, b: Any) -> Quantity:
    if type(a) is not Quantity:
        raise no_overload("add")
    return a.plus(_as_quantity(b, "add"))


def f_sub(a: Any, b: Any) -> Quantity:
    if type(a) is not Quantity:
        raise no_overload("sub")
    return a.plus(_as_quantity(b, "sub"), negate=True)


def _q(name: str, fn: Callable[[Quantity], Any]) -> Callable[[Any], Any]:
    def method(q: Any) -> Any:
        if type(q) is not Quantity:
            raise no_overload(name)
        try:
            return fn(q)
        except ValueError_ as exc:
            raise CelRuntimeError(str(exc)) from None

    return method


# Kubernetes lists library
def _list(x: Any, name: str) -> list:
    if type(x) is not list:
        raise no_overload(name)
    return x


def _orderable(lst: list, name: str) -> None:
    if not lst:
        return
    t0 = type(lst[0])
    for v in lst:
        if not (type(v) is t0 or (type(v) in _NUMERIC and t0 in _NUMERIC)):
            raise no_overload(name)
        # traits.Comparer: Kubernetes' semver and quantity values are not (the oracle: isSorted/max of them is "no
        # such overload", sort() "list elements must be comparable"); compareTo() is their only ordering.
        if type(v) not in _COMPARERS:
            raise no_overload(name)


def f_is_sorted(x: Any) -> bool:
    lst = _list(x, "isSorted")
    _orderable(lst, "isSorted")
    return all(not (lst[i + 1] < lst[i]) for i in range(len(lst) - 1))


def f_sum(x: Any) -> Any:
    lst = _list(x, "sum")
    if not lst:
        return 0
    total = lst[0]
    for v in lst[1:]:
        total = arith("_+_", total, v)
    if type(total) not in _NUMERIC and type(total) is not Duration:
        raise no_overload("sum")
    return total


def f_min(x: Any) -> Any:
    lst = _list(x, "min")
    if not lst:
        raise CelRuntimeError("min called on empty list")
    _orderable(lst, "min")
    return min(lst)


def f_max(x: Any) -> Any:
    lst = _list(x, "max")
    if not lst:
        raise CelRuntimeError("max called on empty list")
    _orderable(lst, "max")
    return max(lst)


# cel-go ext lists and sets
def f_slice(x: Any, start: Any, end: Any) -> list:
    lst = _list(x, "slice")
    _int(start, end)
    if start < 0 or end < 0:
        raise CelRuntimeError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CelRuntimeError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(lst):
        raise CelRuntimeError(f"cannot slice({start}, {end}), list is length {len(lst)}")
    return lst[start:end]


def f_flatten(x: Any, depth: Any = None) -> list:
    if type(x) is not list:
        # ext lists declares flatten without type guards: its own words, naming the receiver's type.
        arg = "" if depth is None else type_name(depth)
        raise CelRuntimeError(f"no such overload: {type_name(x)}.flatten({arg})")
    lst = x
    depth = 1 if depth is None else depth
    _int(depth)
    if depth < 0:
        raise CelRuntimeError("level must be non-negative")
    out: list = []
    for v in lst:
        if type(v) is list and depth > 0:
            out.extend(f_flatten(v, depth - 1))
        else:
            out.append(v)
    return out


def f_distinct(x: Any) -> list:
    lst = _list(x, "distinct")
    out: list = []
    for v in lst:
        if not any(
            equals(v, o) if type(v) is type(o) or (type(v) in _NUMERIC and type(o) in _NUMERIC) else False for o in out
        ):
            out.append(v)
    return out


def f_sort(x: Any) -> list:
    # ext/lists.go sortList: the list sorted by itself, with sortBy's errors.
    return f_sort_by_keys(_list(x, "sort"), x)


def f_sort_by_keys(lst: Any, keys: Any) -> list:
    """ext/lists.go sortListByAssociatedKeys, what sortBy expands to: the list ordered by its keys. Go's sort.Slice
    is an insertion sort on the short lists a selector holds, so equal keys keep their order, as here."""
    lst, keys = _list(lst, "@sortByAssociatedKeys"), _list(keys, "@sortByAssociatedKeys")
    if len(lst) != len(keys):
        raise CelRuntimeError(
            "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got "
            f"{len(lst)} and {len(keys)} elements respectively"
        )
    if not lst:
        return lst
    t0 = type(keys[0])
    if t0 not in _COMPARERS:
        raise CelRuntimeError("list elements must be comparable")
    if len(keys) > 1 and any(type(k) is not t0 for k in keys):
        raise CelRuntimeError("list elements must have the same type")
    order = sorted(range(len(lst)), key=lambda i: keys[i])
    return [lst[i] for i in order]


def map_insert_all(target: dict, update: Any) -> dict:
    """cel.@mapInsert(map, map), transformMapEntry's step: every entry added; a key already there is an error."""
    if type(update) not in (dict, DefaultMap):
        raise no_overload("cel.@mapInsert")
    for k, v in update.items():
        if _map_find(target, k)[0]:
            raise CelRuntimeError(f"insert failed: key {format_key(k)} already exists")
        target[k] = v
    return target


def f_lists_range(n: Any) -> list:
    _int(n)
    if n < 0:  # cel-go's lists library (the oracle's message); not an empty list
        raise CelRuntimeError(f"lists.range: size must be non-negative, got {n}")
    return list(range(n))


def f_first(x: Any) -> Optional_:
    lst = _list(x, "first")
    return Optional_(True, lst[0]) if lst else NONE


def f_last(x: Any) -> Optional_:
    lst = _list(x, "last")
    return Optional_(True, lst[-1]) if lst else NONE


def f_sets_contains(a: Any, b: Any) -> bool:
    _list(a, "sets.contains")
    _list(b, "sets.contains")
    return all(any(equals(x, y) for x in a) for y in b)


def f_sets_equivalent(a: Any, b: Any) -> bool:
    return f_sets_contains(a, b) and f_sets_contains(b, a)


def f_sets_intersects(a: Any, b: Any) -> bool:
    _list(a, "sets.intersects")
    _list(b, "sets.intersects")
    return any(equals(x, y) for x in a for y in b)


# optional values
def f_opt_of(v: Any) -> Optional_:
    return Optional_(True, v)


def f_opt_none() -> Optional_:
    return NONE


def _is_zero(v: Any) -> bool:
    if v is None:
        return True
    t = type(v)
    if t in (bool, int, Uint, float, str, bytes, list, dict, DefaultMap):
        return not v
    if t is Duration:
        return v.nanos == 0
    if t is Timestamp:
        return v.key() == (timelib.MIN_UNIX, 0)  # time.Time's zero: 0001-01-01T00:00:00Z
    return False


def f_opt_of_non_zero(v: Any) -> Optional_:
    return NONE if _is_zero(v) else Optional_(True, v)


def _opt(v: Any, name: str) -> Optional_:
    if type(v) is not Optional_:
        raise no_overload(name)
    return v


def f_or_value(o: Any, default: Any) -> Any:
    o = _opt(o, "orValue")
    return o.value if o.present else default


def f_unwrap(lst: Any) -> list:
    """optional.unwrap / unwrapOpt (cel-go library.go optUnwrap): the values of the optionals that have one."""
    out = []
    for v in _list(lst, "unwrapOpt"):
        if type(v) is not Optional_:
            raise CelRuntimeError(
                f"value {to_string(v) if type(v) in (str, int, Uint, float, bool) else v} is not optional"
            )
        if v.present:
            out.append(v.value)
    return out


def f_has_value(o: Any) -> bool:
    return _opt(o, "hasValue").present


def f_value(o: Any) -> Any:
    o = _opt(o, "value")
    if not o.present:
        raise CelRuntimeError("optional.none() dereference")
    return o.value


def f_or(o: Any, other: Any) -> Any:
    o = _opt(o, "or")
    return o if o.present else other  # evalOptionalOr: the alternative as it is


# Kubernetes IP and CIDR library (apiserver library/ip.go, cidr.go)
def f_ip(v: Any) -> IP:
    if type(v) is CIDR:
        return v.ip  # cidr.ip(): the address as written, not masked
    _str(v)
    try:
        return parse_ip_addr(v)
    except NetParseError as exc:
        raise CelRuntimeError(str(exc)) from None


def f_cidr(v: Any) -> CIDR:
    _str(v)
    try:
        return parse_cidr(v)
    except NetParseError as exc:
        raise CelRuntimeError(f"network address parse error during conversion from string: {exc}") from None


def f_ip_is_canonical(v: Any) -> bool:
    _str(v)
    try:
        return str(parse_ip_addr(v)) == v
    except NetParseError as exc:
        raise CelRuntimeError(str(exc)) from None


def f_is_ip(v: Any) -> bool:
    _str(v)
    return is_ip(v)


def f_is_cidr(v: Any) -> bool:
    _str(v)
    return is_cidr(v)


def _ip_method(name: str, fn: Callable[[IP], Any]) -> Callable[[Any], Any]:
    def method(v: Any) -> Any:
        if type(v) is not IP:
            raise no_overload(name)
        return fn(v)

    return method


def _cidr_of(v: Any, name: str) -> CIDR:
    if type(v) is not CIDR:
        raise no_overload(name)
    return v


def f_contains_ip(c: Any, other: Any) -> bool:
    c = _cidr_of(c, "containsIP")
    ip = f_ip(other) if type(other) is str else other
    if type(ip) is not IP:
        raise no_overload("containsIP")
    return c.contains(ip)


def f_contains_cidr(c: Any, other: Any) -> bool:
    c = _cidr_of(c, "containsCIDR")
    o = f_cidr(other) if type(other) is str else other
    if type(o) is not CIDR:
        raise no_overload("containsCIDR")
    return c.contains_cidr(o)


# DRA's includes(): a list attribute holds the value, or a scalar equals it (dynamic-resource-allocation cel
# includesFunc).
MAX_INCLUDES_LIST = 48  # resourceapi.ResourceSliceMaxAttributeValuesPerDevice


def f_includes(target: Any, arg: Any) -> bool:
    if type(target) is list:
        for i, item in enumerate(target):
            if i >= MAX_INCLUDES_LIST:
                raise CelRuntimeError(
                    f"'includes' function cannot be applied to lists longer than {MAX_INCLUDES_LIST} values"
                )
            if _equal_or_false(item, arg):
                return True
        return False
    return _equal_or_false(target, arg)


def not_equals(a: Any, b: Any) -> bool:
    """`a != b` as cel-go's evalNe answers it: `types.Equal(a, b) != types.True`, so a pair whose `==` is an error
    (a semver against an int, a quantity against add()'s result) is unequal (the oracle; oracle_regressions.yaml)."""
    try:
        return not equals(a, b)
    except CelRuntimeError:
        return True


def _equal_or_false(a: Any, b: Any) -> bool:
    # `item.Equal(arg) == types.True`: an error (e.g. Semver against an int) counts as not equal.
    try:
        return equals(a, b)
    except CelRuntimeError:
        return False


def _not_false(a: Any, b: Any) -> bool:
    # `types.Equal(a, b) != types.False`: an error counts as equal (how baseList.Equal and baseMap.Equal go on).
    try:
        return equals(a, b)
    except CelRuntimeError:
        return True


def set_member(item: Any, members: frozenset | None) -> bool:
    """`x in [constants]` as cel-go plans it (interpreter/decorators.go maybeOptimizeSetMembership): a Go map of the
    constants, so the lookup is by exact type and value: no error from comparing unlike types (false), but Go
    panics hashing a semver or bytes (slices inside); `members` is None for the empty list, which is always false
    (folded to a constant: x is never evaluated)."""
    t = type(item)
    if t is Semver or t is bytes:
        raise CelRuntimeError(f"internal error: runtime error: hash of unhashable type {go_type_name(item)}")
    if t not in _SET_KEY_TYPES:
        return False
    return members is not None and (t, item) in members


# Python types that can be keys of cel-go's membership set (bool, int, uint, double, string); others never match.
_SET_KEY_TYPES = (bool, int, Uint, float, str)


def set_members(values: list) -> frozenset | None:
    """The lookup set of a constant list of primitives (None when it is empty); raises ValueError for a list
    cel-go does not plan as a set (an element that is not a primitive, or bytes)."""
    if not values:
        return None
    out = set()
    for v in values:
        t = type(v)
        if t not in _SET_KEY_TYPES:
            raise ValueError("not a set of primitives")
        out.add((t, v))
        # the lossless conversions cel-go adds beside each number
        if t is float:
            if v == v and not math.isinf(v) and v == int(v):
                iv = int(v)
                if -(2**63) <= iv < 2**63:
                    out.add((int, iv))
                if 0 <= iv < 2**64:
                    out.add((Uint, Uint(iv)))
        elif t is int:
            out.add((float, float(v)))
            if v >= 0:
                out.add((Uint, Uint(v)))
        elif t is Uint:
            out.add((float, float(v)))
            if v < 2**63:
                out.add((int, int(v)))
    return frozenset(out)


def f_duration(v: Any) -> Duration:
    if type(v) is Duration:
        return v
    if type(v) is str:
        try:
            return timelib.parse_duration(v)
        except TimeError as exc:
            raise CelRuntimeError(str(exc)) from None
    raise no_overload("duration")


def f_timestamp(v: Any) -> Timestamp:
    t = type(v)
    try:
        if t is Timestamp:
            return v
        if t is str:
            return timelib.parse_timestamp(v)
        if t is int:
            return timelib.timestamp_of_unix(v)
    except TimeError as exc:
        raise CelRuntimeError(str(exc)) from None
    raise no_overload("timestamp")


def _time_getter(name: str) -> Callable[..., int]:
    def getter(v: Any, tz: Any = None) -> int:
        if type(v) is Timestamp:
            if tz is not None and type(tz) is not str:
                raise no_overload(name)
            try:
                return timelib.get(v, name, "UTC" if tz is None else tz)
            except TimeError as exc:
                raise CelRuntimeError(str(exc)) from None
        if type(v) is Duration and tz is None and name in timelib.DURATION_GETTERS:
            return timelib.DURATION_GETTERS[name](v)
        raise no_overload(name)

    return getter


def f_url(v: Any) -> URL:
    _str(v)
    try:
        return url_of(v)
    except URLError as exc:
        raise CelRuntimeError(str(exc)) from None


def f_is_url(v: Any) -> bool:
    _str(v)
    return is_url(v)


def f_format_named(name: Any) -> Optional_:
    _str(name)
    f = FORMATS.get(name)
    return NONE if f is None else Optional_(True, f)


def f_validate(f: Any, s: Any) -> Optional_:
    if type(f) is not NamedFormat:
        raise no_overload("validate")
    _str(s)
    problems = f.validate(s)
    return Optional_(True, list(problems)) if problems else NONE


def _url_of(v: Any, name: str) -> URL:
    if type(v) is not URL:
        raise no_overload(name)
    return v


# name -> implementation; a method call x.m(a) calls FUNCTIONS["m"](x, a).
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "size": f_size,
    "contains": f_contains,
    "startsWith": f_startswith,
    "endsWith": f_endswith,
    "matches": f_matches,
    "find": f_find,
    "findAll": f_findall,
    "lowerAscii": f_lower,
    "upperAscii": f_upper,
    "charAt": f_char_at,
    "indexOf": f_index_of,
    "lastIndexOf": f_last_index_of,
    "replace": f_replace,
    "split": f_split,
    "substring": f_substring,
    "trim": f_trim,
    "join": f_join,
    "reverse": f_reverse,
    "strings.quote": f_quote,
    "format": f_format,
    "int": f_int,
    "uint": f_uint,
    "double": f_double,
    "string": to_string,
    "bool": f_bool,
    "bytes": f_bytes,
    "dyn": lambda v: v,
    "type": f_type,
    "semver": f_semver,
    "isSemver": f_is_semver,
    "quantity": f_quantity,
    "isQuantity": f_is_quantity,
    "compareTo": f_compare_to,
    "isGreaterThan": f_greater,
    "isLessThan": f_less,
    "major": _semver_part("major"),
    "minor": _semver_part("minor"),
    "patch": _semver_part("patch"),
    "add": f_add,
    "sub": f_sub,
    "asInteger": _q("asInteger", Quantity.as_integer),
    "asApproximateFloat": _q("asApproximateFloat", Quantity.as_float),
    "sign": _q("sign", Quantity.sign),
    "isInteger": _q("isInteger", Quantity.is_integer),
    "isSorted": f_is_sorted,
    "sum": f_sum,
    "min": f_min,
    "max": f_max,
    "slice": f_slice,
    "flatten": f_flatten,
    "distinct": f_distinct,
    "sort": f_sort,
    "lists.range": f_lists_range,
    "first": f_first,
    "last": f_last,
    "sets.contains": f_sets_contains,
    "sets.equivalent": f_sets_equivalent,
    "sets.intersects": f_sets_intersects,
    "__optional_of": f_opt_of,
    "__optional_none": f_opt_none,
    "__optional_ofNonZeroValue": f_opt_of_non_zero,
    "orValue": f_or_value,
    "__optional_unwrap": f_unwrap,
    "unwrapOpt": f_unwrap,
    "hasValue": f_has_value,
    "value": f_value,
    "or": f_or,
    "ip": f_ip,
    "cidr": f_cidr,
    "ip.isCanonical": f_ip_is_canonical,
    "isIP": f_is_ip,
    "isCIDR": f_is_cidr,
    "family": _ip_method("family", lambda ip: 4 if ip.is4 else 6),
    "isUnspecified": _ip_method("isUnspecified", IP.is_unspecified),
    "isLoopback": _ip_method("isLoopback", IP.is_loopback),
    "isLinkLocalMulticast": _ip_method("isLinkLocalMulticast", IP.is_link_local_multicast),
    "isLinkLocalUnicast": _ip_method("isLinkLocalUnicast", IP.is_link_local_unicast),
    "isGlobalUnicast": _ip_method("isGlobalUnicast", IP.is_global_unicast),
    "containsIP": f_contains_ip,
    "containsCIDR": f_contains_cidr,
    "prefixLength": lambda c: _cidr_of(c, "prefixLength").bits,
    "masked": lambda c: _cidr_of(c, "masked").masked(),
    "includes": f_includes,
    "@sortByAssociatedKeys": f_sort_by_keys,
    "duration": lambda v: f_duration(v),
    "timestamp": lambda v: f_timestamp(v),
    "url": lambda v: f_url(v),
    "isURL": lambda v: f_is_url(v),
    "getScheme": lambda u: _url_of(u, "getScheme").scheme,
    "getHost": lambda u: _url_of(u, "getHost").host.decode("utf-8", "replace"),
    "getHostname": lambda u: _url_of(u, "getHostname").hostname(),
    "getPort": lambda u: _url_of(u, "getPort").port(),
    "getEscapedPath": lambda u: _url_of(u, "getEscapedPath").escaped_path(),
    "getQuery": lambda u: _url_of(u, "getQuery").query(),
}
for _name, _format in FORMATS.items():
    FUNCTIONS[f"format.{_name}"] = lambda f=_format: f
FUNCTIONS["format.named"] = lambda name: f_format_named(name)
FUNCTIONS["validate"] = lambda f, s: f_validate(f, s)
for _getter in timelib.TIMESTAMP_GETTERS:
    FUNCTIONS[_getter] = _time_getter(_getter)
