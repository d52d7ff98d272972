"""A signal that lands inside a weakref callback or a __del__ cannot be raised there: Python prints "Exception ignored
in … Traceback … KeyboardInterrupt" and carries on. The command's unraisable hook sends such an interrupt again (seen
as a traceback from `check --demo` under SIGINT at a random point, on a loaded machine)."""

from __future__ import annotations

import signal
import types

from dragoman.tui.cli import Interrupted, _redeliver_interrupts


def _unraisable(exc: BaseException) -> types.SimpleNamespace:
    return types.SimpleNamespace(exc_type=type(exc), exc_value=exc, exc_traceback=None, err_msg=None, object=None)


def test_an_interrupt_swallowed_by_a_finalizer_is_sent_again_and_not_printed() -> None:
    passed_on, got = [], []
    redeliver = _redeliver_interrupts(passed_on.append)
    saved = {s: signal.signal(s, lambda signum, _frame: got.append(signum)) for s in (signal.SIGINT, signal.SIGHUP)}
    try:
        redeliver(_unraisable(KeyboardInterrupt()))
        redeliver(_unraisable(Interrupted(signal.SIGHUP)))
        other = _unraisable(ValueError("a finalizer's own error"))
        redeliver(other)
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
    assert got == [signal.SIGINT, signal.SIGHUP]  # each interrupt delivered again, by its own signal
    assert passed_on == [other]  # nothing else changes: other unraisables are reported as before
