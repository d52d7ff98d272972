"""A table screen an opaque screen covers applies the feed's news at once instead of queueing it as a message
(TableScreen.post_message; a message handled by the screen beneath the top one has Textual repaint the top one whole):
its rows stay what the view computes afresh, covered or not."""

from __future__ import annotations

from tests.tui.conftest import snapshot_app, snapshot_copy
from tests.tui.test_tui_snapshots import _wait


async def test_a_covered_screen_keeps_its_rows_without_handling_a_message(tmp_path) -> None:
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _wait(pilot)
        pools = app.screen
        app.open_view("nodes")
        await _wait(pilot)
        nodes = app.screen
        assert nodes is not pools and pools._covered() and not nodes._covered()
        queued: list = []
        pools.on_rows_touched = queued.append  # type: ignore[method-assign]
        store, fleet = app.feed.store, app.feed.fleet
        name, node = next(iter(store.objects("Node").items()))
        pool = fleet.model.pool_of_node(name[1])
        before = pools.view.row(fleet, pool)
        store.apply("Node", "DELETED", node)
        while name[1] in nodes.table.all_keys():
            await pilot.pause(0.05)
        after = pools.view.row(fleet, pool)
        assert after != before  # the pool lost a node: its row says so
        assert pools.table.row(pool) == tuple(after[0])  # covered, and up to date
        assert queued == []  # applied in the feed's turn, not as a message
        app.back()
        await _wait(pilot)
        assert app.screen is pools and pools.table.row(pool) == tuple(after[0])
