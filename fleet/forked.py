"""Read-only work in a forked child process: the machine's other core, on a copy-on-write image of this process.

The one home of the fork, the pipe and the reaping. The TUI awaits a child's diagnosis through it
(tui/offload.in_child_process); `sim serve` checks a large scenario in one while it loads the store (sim/scenario).
The child starts as this process is at the fork, so the caller may go on changing its objects meanwhile; it runs only
the given function, pickles its answer down a pipe and leaves with os._exit: no atexit handler, no stdio buffer
flushed a second time, nothing of the terminal's.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import threading
import traceback
from collections.abc import Callable
from typing import Any


class ChildUnavailable(Exception):
    """The work could not be done in a child process (no fork, or the child ended without an answer): do it another
    way."""


def worth_forking() -> bool:
    """Whether a child can work beside this process: fork exists, a second CPU is ours (on one, a child only takes
    turns with its parent), and no other thread runs. A fork copies only the calling thread, so a lock another thread
    held would stay held in the child; callers that fork beside threads (the TUI) make their child touch nothing a
    thread of theirs locks, and do not ask this."""
    if not hasattr(os, "fork") or threading.active_count() != 1:
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus >= 2


class Forked:
    """`fn()` running in a forked child; result() waits for its answer.

    `own_group`: the child leaves this process's group, so the terminal's signals (a resize, ^C) reach only the
    parent, which kills the child itself (a TUI's child). Without it a ^C or a kill of the group ends both, as a
    command line's child should. Raises ChildUnavailable at once when the fork fails."""

    def __init__(self, fn: Callable[[], Any], *, own_group: bool = False) -> None:
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError as exc:
            os.close(read_fd)
            os.close(write_fd)
            raise ChildUnavailable(f"cannot fork ({exc})") from None
        if pid == 0:  # pragma: no cover - the child; it reports through the pipe and never returns
            _child_main(fn, read_fd, write_fd, own_group)
        os.close(write_fd)
        self.pid = pid
        self._read: int | None = read_fd
        self._answer: tuple[bool, Any] | None = None

    def result(self) -> Any:
        """Block until the child answers, and reap it. Returns what `fn` returned; raises RuntimeError carrying the
        child's traceback when `fn` raised, ChildUnavailable when the child ended without an answer (killed, out of
        memory). Interrupted while waiting (Ctrl+C), it kills the child first. A second call gives the same answer.
        The read and the wait release the GIL, so a thread may wait here while others run."""
        if self._answer is None:
            self._answer = self._collect()
        ok, value = self._answer
        if ok:
            return value
        if value is None:
            raise ChildUnavailable("the child process ended without an answer")
        raise RuntimeError(f"in the child process: {value}")

    def kill(self) -> None:
        """End the child now (its answer is nobody's); the one waiting in result() sees no answer."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _collect(self) -> tuple[bool, Any]:
        assert self._read is not None
        chunks: list[bytes] = []
        try:
            while chunk := os.read(self._read, 1 << 16):
                chunks.append(chunk)
        except BaseException:
            self.kill()
            raise
        finally:
            os.close(self._read)
            self._read = None
            os.waitpid(self.pid, 0)
        data = b"".join(chunks)
        if not data:
            return False, None
        try:
            answer = pickle.loads(data)
        except Exception as exc:  # noqa: BLE001 - reported as the child's failure
            return False, f"its answer could not be read: {exc}"
        return answer if isinstance(answer, tuple) and len(answer) == 2 else (False, "its answer was not one")


def _child_main(fn: Callable[[], Any], read_fd: int, write_fd: int, own_group: bool) -> None:  # pragma: no cover
    code = 1
    try:
        os.close(read_fd)
        try:
            if own_group:
                os.setpgid(0, 0)
            signal.set_wakeup_fd(-1)  # the parent's event loop's wake-up pipe is not this process's to write
        except (OSError, ValueError):
            pass
        gc.disable()  # a short life: nothing to collect that exiting does not free
        try:
            payload: tuple[bool, Any] = (True, fn())
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            payload = (False, "".join(traceback.format_exception(exc)).strip())
        try:
            data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001
            data = pickle.dumps((False, f"the answer cannot be pickled: {exc}"))
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view) :]
        code = 0
    finally:
        os._exit(code)
