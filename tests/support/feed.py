"""The app's way of keeping a model live: a Feed (tui/feed.py) on a FleetStore, loaded and then following its change
batches, as `dragoman` runs it (no App needed)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from dragoman.fleet.store import FleetStore
from dragoman.tui.feed import Feed, SourceInfo


@contextlib.asynccontextmanager
async def following(store: FleetStore, *, timeout: float = 60.0) -> AsyncIterator[Feed]:
    """`async with following(store) as feed:` — `feed.model` is loaded from the store (synced, or a snapshot's) and
    absorbs its changes until the block ends."""
    feed = Feed(store, SourceInfo(cluster="test"))
    feed.start()
    try:
        deadline = asyncio.get_running_loop().time() + timeout
        while not feed.loaded:
            assert asyncio.get_running_loop().time() < deadline, "the feed never loaded the store"
            await asyncio.sleep(0.01)
        yield feed
    finally:
        await feed.stop()
