"""Test helper: an aiohttp handler served on a free loopback port from its own thread and event loop, so it answers
while the client under test holds its own loop (decoding a page, blocking on a subprocess). The one home of this
harness: the hostile API server of the bad-input corpus and the fleet's paging tests both serve through it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterator

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@contextlib.contextmanager
def serving(handler: Handler) -> Iterator[str]:
    """Every method and path goes to `handler`; yields the http:// address until the block ends."""
    started = threading.Event()
    box: dict = {}

    def main() -> None:
        loop = asyncio.new_event_loop()
        box["loop"] = loop
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        # A short shutdown: handlers that stream forever (a hostile server's endless answer) are cancelled, not waited.
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        box["port"] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        started.set()
        loop.run_forever()
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.wait_for(runner.cleanup(), 5))
        loop.close()

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    assert started.wait(30)
    try:
        yield f"http://127.0.0.1:{box['port']}"
    finally:
        box["loop"].call_soon_threadsafe(box["loop"].stop)
        thread.join(30)
