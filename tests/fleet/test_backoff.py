"""fleet/backoff.py: the one rule for waiting before asking again, tested once for every caller (informers, reads,
writes, the simulator's scheduler and remote store)."""

from __future__ import annotations

import asyncio
import random

import pytest
from dragoman.actions import steps
from dragoman.fleet import backoff, informer
from dragoman.fleet.cluster import ApiError, Unreachable


def test_delay_doubles_from_initial_and_stops_at_the_cap() -> None:
    assert [backoff.delay(n, 1.0, 10.0) for n in range(7)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0]
    assert [backoff.delay(n, 0.2, 5.0) for n in range(6)] == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0]
    assert backoff.delay(10_000, 0.5, 30.0) == 30.0  # a huge attempt count neither overflows nor exceeds the cap


def test_jitter_stays_within_the_upper_half_of_the_doubled_delay() -> None:
    random.seed(7)
    seen = [backoff.delay(3, 0.5, 30.0, jitter=True) for _ in range(200)]
    assert all(2.0 <= d <= 4.0 for d in seen)
    assert len({round(d, 6) for d in seen}) > 100  # spread out, not one value


@pytest.mark.parametrize("hint", [None, "", "nan", "inf", "-inf", "-5", "1e400", "soon", float("nan"), -1, [3]])
def test_a_hint_that_is_not_a_number_of_seconds_keeps_the_default(hint: object) -> None:
    assert backoff.server_delay(hint, 0.25) == 0.25  # type: ignore[arg-type]


def test_a_server_hint_is_honoured_up_to_the_cap() -> None:
    assert backoff.server_delay("2", 0.25) == 2.0
    assert backoff.server_delay(3, 0.25) == 3.0
    assert backoff.server_delay("86400", 0.25) == backoff.SERVER_DELAY_CAP == 5.0


def test_a_writes_wait_reads_the_status_hint_else_doubles_from_a_tenth_of_a_second() -> None:
    shed = ApiError(429, "PATCH", "/api/v1/nodes/n1", {"details": {"retryAfterSeconds": 2}})
    assert steps.backoff(shed, 0) == 2.0
    assert steps.backoff(ApiError(429, "PATCH", "/n", {"details": {"retryAfterSeconds": 600}}), 0) == 5.0
    # 0 is what a Status never carries (omitempty): no hint, so the doubling applies.
    assert steps.backoff(ApiError(429, "PATCH", "/n", {"details": {"retryAfterSeconds": 0}}), 2) == 0.4
    assert [steps.backoff(Unreachable("down"), n) for n in range(7)] == [0.1, 0.2, 0.4, 0.8, 1.6, 3.0, 3.0]


def test_an_informers_wait_is_the_jittered_doubling_from_its_own_numbers() -> None:
    for attempt in range(8):
        d = min(30.0, 0.5 * 2**attempt)
        assert d / 2 <= informer.backoff_delay(attempt) <= d


def test_retrying_tries_again_only_what_is_retryable_and_raises_the_last() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    def run(fails: list[BaseException], attempts: int = 4) -> tuple[object, list[int]]:
        calls: list[int] = []

        async def attempt(n: int) -> str:
            calls.append(n)
            if fails:
                raise fails.pop(0)
            return "made"

        async def go() -> object:
            return await backoff.retrying(
                attempt,
                attempts=attempts,
                retryable=lambda exc: isinstance(exc, ApiError) and exc.status == 503,
                wait=lambda _exc, n: backoff.delay(n, 0.1, 3.0),
                sleep=sleep,
            )

        return asyncio.run(go()), calls

    assert run([ApiError(503, "GET", "a", None), ApiError(503, "GET", "b", None)]) == ("made", [0, 1, 2])
    assert waits == [0.1, 0.2]
    with pytest.raises(ApiError) as err:  # not retryable: raised at once
        run([ApiError(403, "GET", "no", None)])
    assert err.value.status == 403
    with pytest.raises(ApiError) as err:  # retryable, but the last try's error is raised
        run([ApiError(503, "GET", str(n), None) for n in range(5)], attempts=3)
    assert err.value.path == "2"
