"""The simulator's clock: wall time run `speed` times faster, which tests can also step forward by hand."""

from __future__ import annotations

import asyncio
import datetime
import time

from dragoman.fleet.k8s.times import format_time, parse_datetime


class Clock:
    """Simulated UTC time.

    `now()` advances `speed` simulated seconds per real second, plus whatever `step()` added. Everything
    time-driven in the simulator (graceful deletion, event TTL, lease expiry, kubelet grace periods) reads
    this clock and waits with `sleep()`, so `--speed 60` makes a five-minute grace pass in five seconds and a
    test can jump over it with `clock.step(300)`.
    """

    def __init__(self, speed: float = 1.0, start: datetime.datetime | None = None) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.speed = float(speed)
        self._start = (start or datetime.datetime.now(datetime.UTC)).replace(microsecond=0)
        self._real0 = time.monotonic()
        self._offset = 0.0
        self._stepped: asyncio.Event | None = None

    def seconds(self) -> float:
        """Simulated seconds since the clock started."""
        return (time.monotonic() - self._real0) * self.speed + self._offset

    def now(self) -> datetime.datetime:
        return self._start + datetime.timedelta(seconds=self.seconds())

    def seconds_at(self, stamp: str | None) -> float | None:
        """An API timestamp (RFC 3339, seconds or microseconds) on the scale of `seconds()`: when a Lease was renewed,
        a taint added, a deletion's grace ends, as the simulated clock counts. None when absent or not a time, for the
        caller to say what that means (usually: now)."""
        t = parse_datetime(stamp)
        return None if t is None else (t - self._start).total_seconds()

    def timestamp(self) -> str:
        """now() as the API prints times: RFC 3339, whole seconds, `Z`."""
        return format_time(self.now())

    def step(self, seconds: float) -> None:
        """Jump forward by `seconds` simulated seconds and wake every sleeper so it re-checks its deadline."""
        self._offset += seconds
        if self._stepped is not None:
            self._stepped.set()
            self._stepped = None

    async def sleep(self, seconds: float) -> None:
        """Wait until `seconds` simulated seconds have passed (steps count)."""
        deadline = self.seconds() + seconds
        while True:
            remaining = deadline - self.seconds()
            if remaining <= 0:
                return
            if self._stepped is None:
                self._stepped = asyncio.Event()
            event = self._stepped
            try:
                await asyncio.wait_for(event.wait(), timeout=remaining / self.speed)
            except TimeoutError:
                pass
