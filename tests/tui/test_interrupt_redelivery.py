"""A signal that lands inside a weakref callback or a __del__ cannot be raised there: Python prints "Exception ignored
in … Traceback … KeyboardInterrupt" and carries on. The command's unraisable hook sends such an interrupt again (seen
as a traceback from `check --demo` under SIGINT at a random point, on a loaded machine), from another thread a moment
later: raised inside the hook itself, Python would print "Exception ignored in sys.unraisablehook" and drop it (seen
too, under SIGTERM)."""

from __future__ import annotations

import signal
import time
import types

import pytest
from dragoman.tui.cli import Interrupted, _redeliver_interrupts


def _unraisable(exc: BaseException) -> types.SimpleNamespace:
    return types.SimpleNamespace(exc_type=type(exc), exc_value=exc, exc_traceback=None, err_msg=None, object=None)


def _wait_for(cond, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.01)  # Python runs a signal's handler between these lines, in this (the main) thread


def test_an_interrupt_swallowed_by_a_finalizer_is_sent_again_and_not_printed() -> None:
    passed_on, got = [], []
    redeliver = _redeliver_interrupts(passed_on.append)
    saved = {s: signal.signal(s, lambda signum, _frame: got.append(signum)) for s in (signal.SIGINT, signal.SIGHUP)}
    try:
        redeliver(_unraisable(KeyboardInterrupt()))
        redeliver(_unraisable(Interrupted(signal.SIGHUP)))
        other = _unraisable(ValueError("a finalizer's own error"))
        redeliver(other)
        _wait_for(lambda: len(got) == 2)
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
    assert sorted(got) == sorted([signal.SIGINT, signal.SIGHUP])  # each interrupt delivered again, by its own signal
    assert passed_on == [other]  # nothing else changes: other unraisables are reported as before


def test_the_interrupt_is_raised_after_the_hook_returns_not_inside_it() -> None:
    """The command's handler raises; raised inside the hook it would be lost. The hook returns, and the interrupt
    unwinds the ordinary code after it."""

    def raise_interrupted(signum: int, _frame: object) -> None:
        raise Interrupted(signum)

    saved = signal.signal(signal.SIGTERM, raise_interrupted)
    try:
        redeliver = _redeliver_interrupts(lambda _u: None)
        redeliver(_unraisable(Interrupted(signal.SIGTERM)))  # returns: nothing raised inside the hook
        with pytest.raises(Interrupted) as caught:
            _wait_for(lambda: False, 5.0)
    finally:
        signal.signal(signal.SIGTERM, saved)
    assert caught.value.signum == signal.SIGTERM


def test_an_interrupt_still_on_its_way_when_the_command_ends_is_dropped() -> None:
    """The command restores its handlers as it ends; an interrupt sent again after that would only kill the exit."""
    from dragoman.tui.cli import _catch_signals

    got: list[int] = []
    saved = signal.signal(signal.SIGINT, lambda signum, _frame: got.append(signum))
    try:
        restore = _catch_signals()
        import sys

        sys.unraisablehook(_unraisable(KeyboardInterrupt()))
        restore()
        time.sleep(0.3)  # six times the delay: long enough for a signal that was still coming
    finally:
        signal.signal(signal.SIGINT, saved)
    assert got == []


def test_ctrl_c_while_the_command_line_is_read_is_a_sentence_not_a_traceback(monkeypatch, capsys) -> None:
    """SIGINT 0.15 s into `migrate --demo --plan` on a loaded CI machine landed inside the import of a command module
    (build_parser), before the command's own handling: the KeyboardInterrupt's traceback was printed."""
    from dragoman.tui import cli

    def interrupted(prog: str):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["migrate", "--demo", "--plan"]) == 130
    err = capsys.readouterr().err
    assert err == "dragoman: interrupted.\n"
