"""The TUI driven by keyboard on the demo simulator: each view, drill-down, filter, jump, detail pages."""

from __future__ import annotations

from tests.tui.conftest import demo_app, ready, table_text, wait_for


def screen_name(app) -> str:
    return getattr(getattr(app.screen, "view", None), "name", type(app.screen).__name__)


async def test_pools_then_the_node_running_both_stacks() -> None:
    async with demo_app() as (sim, app, pilot):
        text = table_text(app)
        assert "a100-serve" in text and "✖ BOTH" in text  # l4-dev is owned by both stacks
        # The summary line hears of the diagnosis by a message (FindingsChanged) after `ready`: on a loaded machine
        # it may still read "findings still computing…" for a frame or two.
        await wait_for(
            pilot, lambda: "findings ✖" in str(app.screen.query_one("#summary").render()), what="the findings count"
        )
        assert "pools" in str(app.screen.query_one("#summary").render())
        # Drill into the pool whose ownership is mixed with both, by keyboard.
        app.screen.table.move_to("a100-serve")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen_name(app) == "nodes" and app.screen.populated, what="nodes of a100-serve")
        nodes = table_text(app)
        assert "gke-ml-prod-a100-serve-fb9bedd9-zsgd" in nodes and "✖ BOTH" in nodes
        assert "↯" in nodes  # the crash-looping device plugin
        # Filter to the node owned by both, then describe it: its slices and pods are links.
        await pilot.press("slash", *"ownership=both", "enter")
        assert app.screen.table.visible_count == 1
        await pilot.press("d")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "DetailScreen", what="describe page")
        body = str(app.screen.query_one("#detail-text").render())
        assert "both-stacks" in body and "fix:" in body and "ResourceSlices:" in body
        links = [label for label, _ in app.screen.links]
        assert any(label.startswith("ResourceSlice ") for label in links)
        assert "device plugin: gpu-operator/" in body and "DRA driver: dra-driver-nvidia-gpu/" in body
        assert sum(1 for _label, ref in app.screen.links if ref[0] == "Pod") >= 2
        await pilot.press("escape")
        await pilot.press("escape")  # clears the filter first
        assert app.screen.table.visible_count > 1
        await pilot.press("escape")
        assert screen_name(app) == "pools"


async def test_stuck_pods_say_why_with_the_schedulers_words_and_the_fix() -> None:
    async with demo_app() as (sim, app, pilot):
        await pilot.press("colon", *"pending", "enter")
        await wait_for(pilot, lambda: screen_name(app) == "pending" and app.screen.populated, what="stuck pods")
        text = table_text(app)
        for finding in (
            "pending-unmapped",
            "pending-selector",
            "pending-insufficient",
            "quota-blocks-claim",
            "running-without-gpu",
            "failed-admission",
            "prepare-failed",
        ):
            assert finding in text, finding
        app.screen.table.move_to(("ml-inference", "asr-batch-large-wr6l9"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "DetailScreen", what="the pod's page")
        body = str(app.screen.query_one("#detail-text").render())
        assert "pending-unmapped" in body and "fix:" in body
        # The scheduler's words once (issue 30: the event, then "scheduler:" again, said the same).
        assert body.count("Insufficient nvidia.com/mig-3g.40gb") == 1, body
        await pilot.press("y")
        await wait_for(pilot, lambda: getattr(app.screen, "mode", "") == "yaml", what="yaml")
        assert "kind: Pod" in str(app.screen.query_one("#detail-text").render())


async def test_devices_attributes_claims_findings_by_keyboard() -> None:
    async with demo_app() as (sim, app, pilot):
        await pilot.press("colon", *"devices", "enter")
        await wait_for(pilot, lambda: screen_name(app) == "devices" and app.screen.populated, what="devices")
        total = app.screen.table.row_count
        assert total > 100
        await pilot.press("slash", *"productName=NVIDIA*H100*", "enter")
        await pilot.press("slash")
        app.screen.query_one("#prompt").value = ""
        await pilot.press(*"h100", "enter")
        h100 = app.screen.table.visible_count
        assert 0 < h100 < total and all("H100" in line for line in app.screen.table.visible_text())
        await pilot.press("d")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "DetailScreen", what="device page")
        body = str(app.screen.query_one("#detail-text").render())
        assert "Attributes:" in body and "productName = NVIDIA H100" in body and "Capacity:" in body
        await pilot.press("colon", *"attributes", "enter")
        await wait_for(
            pilot, lambda: screen_name(app) == "attributes" and app.screen.table.row_count > 0, what="attributes"
        )
        assert "gpu.nvidia.com/productName" in table_text(app)
        await pilot.press("colon", *"claims", "enter")
        await wait_for(pilot, lambda: screen_name(app) == "claims" and app.screen.populated, what="claims")
        lines = app.screen.table.visible_text()
        assert "⇄ bridge" in "\n".join(lines)
        ranks = [0 if l.startswith(("✖", "…")) else 1 for l in lines]
        assert ranks == sorted(ranks)  # pending and failed first
        await pilot.press("colon", *"findings", "enter")
        await wait_for(pilot, lambda: screen_name(app) == "findings" and app.screen.populated, what="findings")
        await pilot.press("slash", *"severity=warning", "enter")
        assert all(l.startswith("▲ warning") for l in app.screen.table.visible_text())
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "HelpScreen", what="help")
        await pilot.press("escape")
        await pilot.press("q")
        assert screen_name(app) == "pools"


async def test_a_change_on_the_cluster_shows_without_a_key_press() -> None:
    async with demo_app() as (sim, app, pilot):
        from dragoman.fleet.cluster import connect

        node = "gke-ml-prod-t4-batch-c3418deb-tq7g"
        await pilot.press("colon", *"nodes", "enter")
        await wait_for(pilot, lambda: screen_name(app) == "nodes" and app.screen.populated, what="nodes")
        table = app.screen.table
        assert "⊘ cordoned" not in str(table.row(node)[2])
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            await cluster.request(
                "PATCH",
                f"/api/v1/nodes/{node}",
                {"spec": {"unschedulable": True}},
                content_type="application/merge-patch+json",
            )
            await wait_for(pilot, lambda: "cordoned" in str(table.row(node)[2]), what="the cordon to show")
            # Delete a device-plugin pod: its node's plugin cell changes.
            dp = app.feed.model.node(node).device_plugin[0].key
            await cluster.request("DELETE", f"/api/v1/namespaces/{dp[0]}/pods/{dp[1]}")
            await wait_for(pilot, lambda: str(table.row(node)[3]) == "—", what="the plugin pod to disappear")
        finally:
            await cluster.close()


async def test_connection_loss_shows_and_recovers() -> None:
    async with demo_app(backoff_initial=0.1, backoff_max=0.5) as (sim, app, pilot):
        from dragoman.widgets.header import StatusHeader

        header = lambda: str(app.screen.query_one(StatusHeader).render())  # noqa: E731
        assert "✔ live" in header()
        port = sim.port
        await sim.stop()
        await wait_for(pilot, lambda: "reconnecting" in header() or "unreachable" in header(), what="the loss to show")
        assert "a100-serve" in table_text(app)  # the last picture stays on screen
        await pilot.press("colon", *"claims", "enter")  # and the UI still answers keys
        await wait_for(pilot, lambda: screen_name(app) == "claims", what="navigation while disconnected")
        await sim.start(port=port)
        await wait_for(pilot, lambda: "✔ live" in header(), 60, what="the connection to come back")


async def test_conventions_marks_mouse_palette_relist_and_context_switch() -> None:
    async with demo_app() as (sim, app, pilot):
        from dragoman.widgets.header import StatusHeader
        from dragoman.widgets.vtable import VTable

        table = app.screen.table
        # space marks rows (and moves on); the heading counts them.
        await pilot.press("space", "space")
        assert len(table.marked) == 2 and "marked: 2" in str(app.screen.query_one("#heading").render())
        # G / g, j / k.
        await pilot.press("G")
        assert table.cursor == table.visible_count - 1
        await pilot.press("g", "j")
        assert table.cursor == 1
        # The mouse: a click on the fourth row selects it (line 0 is the column header).
        await pilot.click(VTable, offset=(5, 4))
        assert table.cursor == 3
        # ctrl+r lists every kind again.
        lists = sum(i.lists for i in app.feed.syncer.informers.values())
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: sum(i.lists for i in app.feed.syncer.informers.values()) > lists, what="a relist")
        # The palette offers this screen's commands and the views.
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        await pilot.press(*"view: claims")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen_name(app) == "claims", what="the palette to jump")
        # :ctx switches context: the demo's read-only viewer.
        await pilot.press("colon", *"ctx", "enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ContextScreen", what="the context list")
        assert "dragoman-sim-viewer" in app.screen.contexts
        from textual.widgets import OptionList

        ol = app.screen.query_one(OptionList)
        ol.highlighted = app.screen.contexts.index("dragoman-sim-viewer")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: app.feed.info.context == "dragoman-sim-viewer" and ready(app), 60, what="the new context"
        )
        await wait_for(
            pilot, lambda: "ctx dragoman-sim-viewer" in str(app.screen.query_one(StatusHeader).render()), what="header"
        )
        assert screen_name(app) == "pools" and "a100-serve" in table_text(app)
