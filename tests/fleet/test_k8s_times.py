"""metav1.Time and MicroTime as the API server writes them (fleet/k8s/times.py): the one home of the time formats the
client, the migration's lock and audit, and the simulator write (eleven strftime copies before)."""

from __future__ import annotations

import datetime as dt

import pytest
from dragoman.fleet.k8s.times import format_micro_time, format_time, parse_datetime, parse_time

PLUS2 = dt.timezone(dt.timedelta(hours=2))
CASES = [
    (dt.datetime(2026, 12, 5, 23, 4, 5, 123456, tzinfo=dt.UTC), "2026-12-05T23:04:05Z", "2026-12-05T23:04:05.123456Z"),
    (dt.datetime(2026, 12, 6, 1, 4, 5, 7, tzinfo=PLUS2), "2026-12-05T23:04:05Z", "2026-12-05T23:04:05.000007Z"),
    (dt.datetime(2026, 12, 5, 23, 4, 5), "2026-12-05T23:04:05Z", "2026-12-05T23:04:05.000000Z"),  # naive: UTC
]


@pytest.mark.parametrize(("t", "seconds", "micro"), CASES)
def test_times_are_written_in_utc_with_z(t: dt.datetime, seconds: str, micro: str) -> None:
    assert format_time(t) == seconds
    assert format_micro_time(t) == micro


def test_a_written_time_reads_back() -> None:
    t = dt.datetime(2026, 12, 5, 23, 4, 5, tzinfo=dt.UTC)
    assert parse_datetime(format_time(t)) == t
    assert parse_time(format_micro_time(t)) == t.timestamp()
    assert parse_time("yesterday") is None and parse_time(None) is None


def test_the_strict_parse_raises_and_reads_a_time_without_offset_as_utc() -> None:
    from dragoman.fleet.k8s.times import parse_rfc3339

    assert parse_rfc3339("2026-12-05T23:04:05") == dt.datetime(2026, 12, 5, 23, 4, 5, tzinfo=dt.UTC)
    assert parse_rfc3339("2026-12-06T01:04:05+02:00") == dt.datetime(2026, 12, 5, 23, 4, 5, tzinfo=dt.UTC)
    with pytest.raises(ValueError):
        parse_rfc3339("not a time")
