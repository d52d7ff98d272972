"""fleet/forked: the one fork-and-pipe helper (the TUI's diagnosis child and `sim serve`'s scenario check use it)."""

from __future__ import annotations

import os
import signal
import time

import pytest
from dragoman.fleet.forked import ChildUnavailable, Forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")


def test_the_answer_comes_back_from_another_process_and_stays() -> None:
    child = Forked(lambda: (os.getpid(), "a" * 200_000))  # more than a pipe holds: the parent reads as it comes
    pid, text = child.result()
    assert pid == child.pid != os.getpid()
    assert text == "a" * 200_000
    assert child.result() == (pid, text), "a second call gives the same answer"
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)  # reaped by result(): no zombie left


def test_an_exception_in_the_child_is_a_runtime_error_with_its_traceback() -> None:
    def broken() -> None:
        raise KeyError("no such pool")

    child = Forked(broken)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="KeyError: 'no such pool'"):
            child.result()


def test_a_child_killed_before_it_answers_is_unavailable_not_an_error() -> None:
    child = Forked(lambda: time.sleep(60))
    child.kill()
    started = time.monotonic()
    with pytest.raises(ChildUnavailable, match="without an answer"):
        child.result()
    assert time.monotonic() - started < 10


def test_a_child_that_exits_on_its_own_without_an_answer_is_unavailable() -> None:
    child = Forked(lambda: os._exit(9))  # as the out-of-memory killer would end it
    with pytest.raises(ChildUnavailable):
        child.result()


def test_the_child_stays_in_the_group_unless_it_asks_for_its_own() -> None:
    same = Forked(lambda: os.getpgid(0))
    own = Forked(lambda: os.getpgid(0), own_group=True)
    assert same.result() == os.getpgid(0)
    assert own.result() == own.pid != os.getpgid(0)


def test_a_fork_that_fails_is_unavailable_and_leaves_no_descriptor(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    before = len(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "fork", no_fork)
    with pytest.raises(ChildUnavailable, match="cannot fork"):
        Forked(lambda: 1)
    assert len(os.listdir("/proc/self/fd")) == before


def test_interrupted_while_waiting_the_parent_kills_its_child() -> None:
    child = Forked(lambda: time.sleep(60))

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(KeyboardInterrupt):
            child.result()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)  # killed and reaped: no such child left
