"""Work kept off the UI: read-only work in a forked child process (the machine's other core, a copy-on-write image of
the model) or in a daemon thread a quit never waits for."""

from __future__ import annotations

import asyncio
import gc
import os
import pickle
import signal
import threading
import traceback
from collections.abc import Callable
from typing import Any

CHILD_TIMEOUT = 120.0  # a child that has not answered by then is killed and the work done in a thread instead


class ChildUnavailable(Exception):
    """The work could not be done in a child process (no fork, or the child never answered): do it another way."""


async def in_child_process(fn: Callable[[], Any], timeout: float = CHILD_TIMEOUT) -> Any:
    """`fn()` in a forked child process, its result pickled back: for read-only work on what this process holds
    (the model), on the machine's other core instead of this process's GIL.

    The child starts with a copy-on-write image of this process as it is at the call (so the caller may go on changing
    its objects meanwhile), runs only `fn` and leaves with os._exit: no atexit handler, no buffered output, nothing of
    the terminal's. An exception in `fn` is raised here as a RuntimeError carrying the child's traceback. Raises
    ChildUnavailable when the fork fails or the child does not answer within `timeout` (it is killed)."""
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError as exc:
        os.close(read_fd)
        os.close(write_fd)
        raise ChildUnavailable(f"cannot fork ({exc})") from None
    if pid == 0:  # pragma: no cover - the child; it reports through the pipe and never returns
        _child_main(fn, read_fd, write_fd)
    os.close(write_fd)
    done: asyncio.Future = loop.create_future()

    def settle(value: Any) -> None:
        if not done.done():
            done.set_result(value)

    def collect() -> None:
        # Read to the end, reap the child, unpickle: the read and the wait release the GIL.
        with os.fdopen(read_fd, "rb") as pipe:
            data = pipe.read()
        os.waitpid(pid, 0)
        try:
            value: Any = pickle.loads(data) if data else (False, "the child process ended without an answer")
        except Exception as exc:  # noqa: BLE001 - reported to the awaiting task
            value = (False, f"the child's answer could not be read: {exc}")
        try:
            loop.call_soon_threadsafe(settle, value)
        except RuntimeError:
            pass  # the loop closed: the app quit, nobody waits for this result

    threading.Thread(target=collect, name="dragoman-child-reader", daemon=True).start()
    try:
        ok, value = await asyncio.wait_for(asyncio.shield(done), timeout)
    except TimeoutError:
        _kill(pid)
        raise ChildUnavailable(f"the child process gave no answer in {timeout:.0f} s") from None
    except BaseException:
        _kill(pid)  # cancelled (the app quits): the child's work is nobody's now
        raise
    if not ok:
        raise RuntimeError(f"in the child process: {value}")
    return value


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _child_main(fn: Callable[[], Any], read_fd: int, write_fd: int) -> None:  # pragma: no cover - runs in the child
    code = 1
    try:
        os.close(read_fd)
        try:
            os.setpgid(0, 0)  # the terminal's signals (resize, ^C) are the app's, not this child's
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
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(data)
        code = 0
    finally:
        os._exit(code)


async def in_daemon_thread(fn: Callable[[], Any], name: str) -> Any:
    """`fn()` in a daemon thread of its own, awaited: unlike asyncio.to_thread (the loop's executor, which asyncio.run
    and the interpreter join at exit), a quit never waits for it. For read-only work whose result a quitting app
    drops: the diagnosis of a large fleet takes seconds, and Ctrl+Q waited for it."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not done.done():
            (done.set_result if ok else done.set_exception)(value)

    def run() -> None:
        try:
            result, ok = fn(), True
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            result, ok = exc, False
        try:
            loop.call_soon_threadsafe(settle, ok, result)
        except RuntimeError:
            pass  # the loop closed meanwhile: the app quit, nobody waits for this result

    threading.Thread(target=run, name=name, daemon=True).start()
    return await done
