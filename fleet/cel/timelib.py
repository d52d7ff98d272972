"""CEL's timestamp and duration types as cel-go v0.29 implements them (common/types/timestamp.go, duration.go,
overflow.go, stdlib/standard.go) over Go's time package: parsing (time.Parse RFC3339, time.ParseDuration), the
getters (UTC unless a zone is named, as Kubernetes' DefaultUTCTimeZone(true) has it), arithmetic with overflow
checks, and the string forms (RFC3339Nano, seconds with the shortest digits)."""

from __future__ import annotations

import datetime as _dt
import re
import zoneinfo
from decimal import Decimal

NANOS = 1_000_000_000
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# Seconds from the Unix epoch of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z (timestamp.go minUnixTime/maxUnixTime).
MIN_UNIX, MAX_UNIX = -62135596800, 253402300799
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


class TimeError(Exception):
    """A conversion or arithmetic failure; the message is cel-go's."""


class Duration:
    """A time.Duration: signed nanoseconds in int64."""

    __slots__ = ("nanos",)

    def __init__(self, nanos: int) -> None:
        self.nanos = nanos

    def __eq__(self, other: object) -> bool:
        return type(other) is Duration and other.nanos == self.nanos

    def __hash__(self) -> int:
        return hash(("duration", self.nanos))

    def __lt__(self, other: Duration) -> bool:
        return self.nanos < other.nanos

    def __le__(self, other: Duration) -> bool:
        return self.nanos <= other.nanos

    def __gt__(self, other: Duration) -> bool:
        return self.nanos > other.nanos

    def __ge__(self, other: Duration) -> bool:
        return self.nanos >= other.nanos

    def __repr__(self) -> str:
        return f'duration("{self}")'

    def __str__(self) -> str:
        # strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s": the shortest digits that round-trip, never an exponent.
        secs = self.nanos // NANOS if self.nanos >= 0 else -((-self.nanos) // NANOS)
        seconds = float(secs) + float(self.nanos - secs * NANOS) / 1e9
        return format(Decimal(repr(seconds)).normalize(), "f") + "s"

    def hours(self) -> int:
        return _trunc_div(self.nanos, 3600 * NANOS)

    def minutes(self) -> int:
        return _trunc_div(self.nanos, 60 * NANOS)

    def seconds(self) -> int:
        return _trunc_div(self.nanos, NANOS)

    def milliseconds(self) -> int:
        return _trunc_div(self.nanos, 1_000_000)


class Timestamp:
    """A time.Time within CEL's range: Unix seconds, nanoseconds [0, 1e9), and the UTC offset it was written with
    (kept for its string form, as Go's time.Time keeps its location)."""

    __slots__ = ("nanos", "offset", "sec")

    def __init__(self, sec: int, nanos: int = 0, offset: int = 0) -> None:
        self.sec = sec
        self.nanos = nanos
        self.offset = offset

    def key(self) -> tuple[int, int]:
        return (self.sec, self.nanos)

    def __eq__(self, other: object) -> bool:
        return type(other) is Timestamp and other.key() == self.key()

    def __hash__(self) -> int:
        return hash(("timestamp", self.sec, self.nanos))

    def __lt__(self, other: Timestamp) -> bool:
        return self.key() < other.key()

    def __le__(self, other: Timestamp) -> bool:
        return self.key() <= other.key()

    def __gt__(self, other: Timestamp) -> bool:
        return self.key() > other.key()

    def __ge__(self, other: Timestamp) -> bool:
        return self.key() >= other.key()

    def __repr__(self) -> str:
        return f'timestamp("{self}")'

    def __str__(self) -> str:
        # t.Format(time.RFC3339Nano) in the timestamp's own offset.
        civil = _civil(self.sec + self.offset)
        text = civil.strftime("%Y-%m-%dT%H:%M:%S").rjust(19, "0")
        if civil.year < 1000:
            text = f"{civil.year:04d}" + text[text.index("-") :]
        if self.nanos:
            text += "." + f"{self.nanos:09d}".rstrip("0")
        if self.offset == 0:
            return text + "Z"
        sign = "+" if self.offset > 0 else "-"
        h, m = divmod(abs(self.offset) // 60, 60)
        return f"{text}{sign}{h:02d}:{m:02d}"

    def in_zone(self, tz: str) -> _dt.datetime:
        """The civil time in the zone `tz` (an IANA name or "[+-]hh:mm"), as cel-go's inTimeZone gives it."""
        if ":" not in tz:
            return _in_location(self, tz)
        # strconv.Atoi on each side of the first colon; the sign of the hour applies the minutes' direction.
        hr_s, min_s = tz.split(":", 1)
        hr, mins = _atoi(hr_s), _atoi(min_s)
        offset = hr * 60 - mins if tz[0] == "-" else hr * 60 + mins
        return _civil(self.sec + offset * 60).replace(microsecond=0)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // b
    return q if a >= 0 else -q


def _civil(unix: int) -> _dt.datetime:
    try:
        return (_EPOCH + _dt.timedelta(seconds=unix)).replace(tzinfo=None)
    except OverflowError:
        raise TimeError("timestamp out of range for the time zone") from None


def _atoi(s: str) -> int:
    # strconv.Atoi: an optional sign and decimal digits only.
    if not re.fullmatch(r"[+-]?[0-9]+", s):
        raise TimeError(f'strconv.Atoi: parsing "{s}": invalid syntax')
    v = int(s)
    if not INT64_MIN <= v <= INT64_MAX:
        raise TimeError(f'strconv.Atoi: parsing "{s}": value out of range')
    return v


def _in_location(ts: Timestamp, name: str) -> _dt.datetime:
    # time.LoadLocation: "" and "UTC" are UTC; "Local" is this machine's zone (UTC in a container); else the
    # IANA database.
    if name in ("", "UTC", "Local"):
        return _civil(ts.sec)
    if name.startswith("/") or ".." in name or "\\" in name:
        raise TimeError(f"time: invalid location name {name!r}".replace("'", '"'))
    try:
        zone = zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise TimeError(f"unknown time zone {name}") from None
    try:
        return (_EPOCH + _dt.timedelta(seconds=ts.sec)).astimezone(zone).replace(tzinfo=None)
    except (OverflowError, ValueError):
        raise TimeError("timestamp out of range for the time zone") from None


# --- getters: stdlib/standard.go's timestampGet* (the civil fields in the zone) and types.DurationGet* ---------


def get(ts: Timestamp, name: str, tz: str = "UTC") -> int:
    c = ts.in_zone(tz)
    if name == "getFullYear":
        return c.year
    if name == "getMonth":
        return c.month - 1
    if name == "getDayOfYear":
        return c.timetuple().tm_yday - 1
    if name == "getDayOfMonth":
        return c.day - 1
    if name == "getDate":
        return c.day
    if name == "getDayOfWeek":
        return (c.weekday() + 1) % 7  # Go's Weekday: Sunday is 0
    if name == "getHours":
        return c.hour
    if name == "getMinutes":
        return c.minute
    if name == "getSeconds":
        return c.second
    if name == "getMilliseconds":
        return ts.nanos // 1_000_000
    raise KeyError(name)


TIMESTAMP_GETTERS = (
    "getFullYear",
    "getMonth",
    "getDayOfYear",
    "getDayOfMonth",
    "getDate",
    "getDayOfWeek",
    "getHours",
    "getMinutes",
    "getSeconds",
    "getMilliseconds",
)
DURATION_GETTERS = {
    "getHours": Duration.hours,
    "getMinutes": Duration.minutes,
    "getSeconds": Duration.seconds,
    "getMilliseconds": Duration.milliseconds,
}


# --- parsing ----------------------------------------------------------------------------------------------------

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))", re.ASCII
)
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def parse_timestamp(s: str) -> Timestamp:
    """string -> timestamp: time.Parse(time.RFC3339, s), then CEL's range (0001-01-01 to 9999-12-31)."""
    m = _RFC3339.fullmatch(s)
    if m is None:
        raise TimeError("type conversion error from 'string' to 'google.protobuf.Timestamp'")
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    frac, zulu, sign, oh, om = m.group(7), m.group(8), m.group(9), m.group(10), m.group(11)
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if (
        not 1 <= month <= 12
        or not 1 <= day <= (_DAYS[month - 1] if month != 2 or leap else 28)
        or hour > 23
        or minute > 59
        or second > 59
    ):
        raise TimeError("type conversion error from 'string' to 'google.protobuf.Timestamp'")
    offset = 0
    if not zulu:
        if int(oh) > 23 or int(om) > 59:  # Go 1.20+ parses RFC3339 offsets strictly
            raise TimeError("type conversion error from 'string' to 'google.protobuf.Timestamp'")
        offset = (int(oh) * 3600 + int(om) * 60) * (1 if sign == "+" else -1)
    nanos = int((frac or "")[:9].ljust(9, "0")) if frac else 0
    days = (_dt.date(year, month, day) - _dt.date(1970, 1, 1)).days
    sec = days * 86400 + hour * 3600 + minute * 60 + second - offset
    if not MIN_UNIX <= sec <= MAX_UNIX:
        raise TimeError("timestamp overflow")
    return Timestamp(sec, nanos, offset)


def timestamp_of_unix(sec: int) -> Timestamp:
    if not MIN_UNIX <= sec <= MAX_UNIX:
        raise TimeError("timestamp overflow")
    return Timestamp(sec, 0, 0)


_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": NANOS,
    "m": 60 * NANOS,
    "h": 3600 * NANOS,
}
_DURATION_ERROR = "type conversion error from 'string' to 'google.protobuf.Duration'"


def parse_duration(s: str) -> Duration:
    """time.ParseDuration: [-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+, units ns us µs ms s m h, within int64 nanoseconds."""
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return Duration(0)
    if s == "":
        raise TimeError(_DURATION_ERROR)
    total = 0
    while s:
        # The next character must be [0-9.].
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise TimeError(_DURATION_ERROR)
        i = 0
        while i < len(s) and "0" <= s[i] <= "9":
            i += 1
        pre = i > 0
        v = int(s[:i]) if pre else 0
        s = s[i:]
        frac, scale, post = 0, 1, False
        if s.startswith("."):
            s = s[1:]
            i = 0
            while i < len(s) and "0" <= s[i] <= "9":
                i += 1
            post = i > 0
            digits = s[:i]
            s = s[i:]
            # leadingFraction: digits past int64 precision are dropped.
            for ch in digits:
                if scale > INT64_MAX // 10:
                    break
                frac = frac * 10 + int(ch)
                scale *= 10
        if not pre and not post:
            raise TimeError(_DURATION_ERROR)
        i = 0
        while i < len(s) and s[i] != "." and not ("0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise TimeError(_DURATION_ERROR)  # missing unit
        unit_name = s[:i]
        s = s[i:]
        unit = _UNITS.get(unit_name)
        if unit is None:
            raise TimeError(_DURATION_ERROR)
        if v > (2**63) // unit:
            raise TimeError(_DURATION_ERROR)
        v *= unit
        if frac > 0:
            v += int(frac * (unit / scale))  # Go: float64(f) * (float64(unit) / scale)
            if v > 2**63:
                raise TimeError(_DURATION_ERROR)
        total += v
        if total > 2**63:
            raise TimeError(_DURATION_ERROR)
    if neg:
        return Duration(-total)
    if total > INT64_MAX:
        raise TimeError(_DURATION_ERROR)
    return Duration(total)


# --- arithmetic (overflow.go) -------------------------------------------------------------------------------------


def _int64(v: int) -> int:
    if not INT64_MIN <= v <= INT64_MAX:
        raise TimeError("integer overflow")
    return v


def add_durations(a: Duration, b: Duration) -> Duration:
    return Duration(_int64(a.nanos + b.nanos))


def sub_durations(a: Duration, b: Duration) -> Duration:
    return Duration(_int64(a.nanos - b.nanos))


def add_time(t: Timestamp, d: Duration) -> Timestamp:
    sec2 = _trunc_div(d.nanos, NANOS)
    nsec2 = d.nanos - sec2 * NANOS
    sec = _int64(t.sec + sec2)
    nsec = t.nanos + nsec2
    sec += nsec // NANOS
    nsec %= NANOS
    if not MIN_UNIX <= sec <= MAX_UNIX:
        raise TimeError("timestamp overflow")
    return Timestamp(sec, nsec, t.offset)


def sub_time_duration(t: Timestamp, d: Duration) -> Timestamp:
    return add_time(t, Duration(_int64(-d.nanos)))


def sub_times(a: Timestamp, b: Timestamp) -> Duration:
    return Duration(_int64(_int64(_int64(a.sec - b.sec) * NANOS) + (a.nanos - b.nanos)))
