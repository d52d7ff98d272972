"""Bad-input corpus, the TUI against a hostile server and odd snapshots (issue 19): wrong-typed Nodes once made the
TUI wait forever, a snapshot with mixed-type pool labels or unquoted timestamps ended it with a Rich traceback. Now
the malformed objects are left out with a note, and the app loads and answers keys."""

from __future__ import annotations

import pathlib

from dragoman.tui.app import DragomanApp
from dragoman.tui.source import open_cluster_feed, open_snapshot_feed

from tests.badinput.hostile_server import kubeconfig, serve
from tests.tui.conftest import SIZE, ready, wait_for


async def test_the_tui_on_a_server_with_wrong_typed_nodes_loads_the_rest(tmp_path: pathlib.Path) -> None:
    with serve("node-labels-a-list") as (url, _):
        feed = await open_cluster_feed(kubeconfig(tmp_path, url), None)
        app = DragomanApp(feed, kubeconfig=kubeconfig(tmp_path, url))
        async with app.run_test(size=(200, 50)) as pilot:
            await wait_for(pilot, lambda: ready(app), 60, "the fleet to load")
            store = app.feed.store
            assert store.get("Node", None, "good-node") is not None
            assert store.get("Node", None, "bad-node") is None
            assert any("bad-node" in n and "metadata.labels" in n for n in store.notes.values())
            # The operator sees it too: the header names the kind, the object and the field that was wrong.
            await pilot.pause(0.2)
            header = app.screen._compositor.render_strips()[0].text
            assert "⚠ skipped Node 'bad-node'" in header and "metadata.labels" in header, header
            await pilot.press("colon", *"pools", "enter")
            await pilot.pause(0.5)
            assert app.is_running


async def test_the_tui_on_a_snapshot_of_mixed_label_types_and_bare_timestamps(tmp_path: pathlib.Path) -> None:
    snap = tmp_path / "snap.yaml"
    snap.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n1, "
        "labels: {pool: 1, gpus: 8}, creationTimestamp: 2026-01-02T03:04:05Z}\n  status: {allocatable: "
        "{nvidia.com/gpu: 8}, capacity: {nvidia.com/gpu: 8}}\n- apiVersion: v1\n  kind: Node\n  metadata: "
        "{name: n2, labels: {pool: a, gpus: true}, creationTimestamp: 2026-01-03T03:04:05Z}\n"
    )
    app = DragomanApp(open_snapshot_feed(str(snap)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: ready(app), 60, "the snapshot to load")
        node = app.feed.store.get("Node", None, "n1")
        assert node["metadata"]["labels"] == {"pool": "1", "gpus": "8"}
        assert node["metadata"]["creationTimestamp"] == "2026-01-02T03:04:05Z"
        await pilot.press("colon", *"nodes", "enter")
        await pilot.pause(0.5)
        assert app.is_running
