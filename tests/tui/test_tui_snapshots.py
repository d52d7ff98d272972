"""Snapshot tests of the main views, from the pinned demo read as a snapshot file: fixed size, no clock, nothing
moving."""

from __future__ import annotations

import time

import pytest

from tests.tui.conftest import snapshot_app, snapshot_copy


def _settled(app) -> bool:
    return (
        app.feed.loaded
        and app.feed.fleet.diagnosed
        and getattr(app.screen, "populated", True)
        and bool(app.feed.fleet.catalogue)
    )


async def _wait(pilot) -> None:
    deadline = time.monotonic() + 60
    while not _settled(pilot.app) and time.monotonic() < deadline:
        await pilot.pause(0.05)
    await pilot.pause(0.1)


def _keys(*keys):
    async def run_before(pilot) -> None:
        await _wait(pilot)
        for k in keys:
            if callable(k):
                k(pilot.app)
            else:
                await pilot.press(k)
            await _wait(pilot)

    return run_before


def _move(key):
    return lambda app: app.screen.table.move_to(key)


CASES = {
    "pools": ((120, 40), ()),
    "pools_80x24": ((80, 24), ()),
    "nodes_of_a100_serve": ((120, 40), (_move("a100-serve"), "enter")),
    "stuck_pods": ((120, 40), ("colon", *"pending", "enter")),
    "describe_both_stacks_node": ((120, 40), ("colon", *"nodes", "enter", "slash", *"l4-dev", "enter", "d")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_view_snapshot(case, snap_compare, tmp_path) -> None:
    size, keys = CASES[case]
    app = snapshot_app(snapshot_copy(tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=_keys(*keys))
