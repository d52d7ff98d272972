"""Work kept off the UI: read-only work in a forked child process (the machine's other core, a copy-on-write image of
the model) or in a daemon thread a quit never waits for."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from dragoman.fleet.forked import ChildUnavailable, Forked

CHILD_TIMEOUT = 120.0  # a child that has not answered by then is killed and the work done in a thread instead


async def in_child_process(fn: Callable[[], Any], timeout: float = CHILD_TIMEOUT) -> Any:
    """`fn()` in a forked child process (fleet/forked.Forked), awaited: for read-only work on what this process holds
    (the model), on the machine's other core instead of this process's GIL. The caller may go on changing its objects
    meanwhile: the child has them as they were at the call.

    An exception in `fn` is raised here as a RuntimeError carrying the child's traceback. Raises ChildUnavailable when
    the fork fails, or the child ends or does not answer within `timeout` (it is killed) without an answer; cancelled
    (the app quits), the child is killed too."""
    loop = asyncio.get_running_loop()
    child = Forked(fn, own_group=True)  # the terminal's signals are the app's
    done: asyncio.Future = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not done.done():
            (done.set_result if ok else done.set_exception)(value)

    def collect() -> None:
        try:
            value, ok = child.result(), True
        except Exception as exc:  # noqa: BLE001 - handed to the awaiting task
            value, ok = exc, False
        try:
            loop.call_soon_threadsafe(settle, ok, value)
        except RuntimeError:
            pass  # the loop closed: the app quit, nobody waits for this result

    threading.Thread(target=collect, name="dragoman-child-reader", daemon=True).start()
    try:
        return await asyncio.wait_for(asyncio.shield(done), timeout)
    except TimeoutError:
        child.kill()
        raise ChildUnavailable(f"the child process gave no answer in {timeout:.0f} s") from None
    except BaseException:
        child.kill()  # cancelled (the app quits): the child's work is nobody's now
        raise


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
