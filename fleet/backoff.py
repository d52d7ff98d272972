"""How long to wait before asking again, and the loop that asks again: one rule for the client (reads, watches,
writes) and the simulator (its scheduler's pod backoff, its remote store's watches).

Each caller keeps its own numbers (client-go's informers back off from 0.5 s to 30 s, kube-scheduler from 1 s to
10 s, a write from 0.1 s to 3 s); the doubling, the cap, the jitter and how a server's hint is read live here.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

# The longest wait a server's Retry-After (or a Status' retryAfterSeconds) may ask for: a hostile or confused server
# must not park a migration for a day.
SERVER_DELAY_CAP = 5.0


def delay(attempt: int, initial: float, maximum: float, *, jitter: bool = False) -> float:
    """Seconds before try `attempt + 1`: initial * 2**attempt, capped at maximum; with jitter a random point of
    [d/2, d], so that many clients who failed together do not come back together."""
    d = min(maximum, initial * (2 ** min(attempt, 30)))
    return random.uniform(d / 2, d) if jitter else d


def server_delay(hint: str | float | None, default: float, cap: float = SERVER_DELAY_CAP) -> float:
    """The server's hint (a Retry-After header, a Status' details.retryAfterSeconds) when it is a number of seconds,
    capped; else `default`. None, "", text, `nan`, `inf` and negative values are not numbers of seconds (nan once
    defeated the cap)."""
    if hint is None or hint == "":
        return default
    try:
        seconds = float(hint)
    except (TypeError, ValueError):
        return default
    return min(seconds, cap) if math.isfinite(seconds) and seconds >= 0 else default


async def retrying(
    attempt: Callable[[int], Awaitable[T]],
    *,
    attempts: int,
    retryable: Callable[[BaseException], bool],
    wait: Callable[[BaseException, int], float],
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> T:
    """`attempt(n)` for n = 0, 1, ... until it returns; an exception that is `retryable` means another try after
    `wait(exc, n)` seconds, anything else (or the last try's) is raised."""
    for n in range(attempts):
        try:
            return await attempt(n)
        except Exception as exc:
            if not retryable(exc) or n == attempts - 1:
                raise
            await sleep(wait(exc, n))
    raise ValueError("retrying() needs at least one attempt")
