"""The simulator's clock: an API timestamp read as seconds on the clock's own scale (one home for every controller
that compares a stamp with `clock.seconds()`)."""

from __future__ import annotations

import datetime

import pytest
from dragoman.sim.clock import Clock

START = datetime.datetime(2026, 11, 30, 8, 0, 0, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("stamp", "seconds"),
    [
        ("2026-11-30T08:00:00Z", 0.0),  # the clock's start
        ("2026-11-30T08:00:10Z", 10.0),
        ("2026-11-30T07:58:00Z", -120.0),  # before the clock started: a stamp from the scenario's past
        ("2026-11-30T08:00:01.250000Z", 1.25),  # metav1.MicroTime (a Lease's renewTime)
        ("2026-11-30T09:00:00+01:00", 0.0),  # an offset is honoured
        ("2026-11-30T08:00:05", 5.0),  # no offset: UTC
        ("2026-12-01T08:00:00Z", 86_400.0),
        (None, None),
        ("", None),
        ("yesterday", None),
        ("2026-13-99T00:00:00Z", None),
        (12, None),  # hostile: not a string
    ],
)
def test_seconds_at_reads_a_stamp_on_the_clocks_scale(stamp, seconds):
    assert Clock(start=START).seconds_at(stamp) == seconds


def test_seconds_at_agrees_with_seconds_as_the_clock_runs_and_steps():
    clock = Clock(speed=60, start=START)
    clock.step(3600)
    now = clock.seconds()
    assert abs(clock.seconds_at(clock.timestamp()) - now) < 1.0  # timestamp() is whole seconds
    stamp = (clock.now() - datetime.timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert abs(clock.seconds_at(stamp) - (clock.seconds() - 30)) < 0.5
