"""On the scale fleet (2,000 nodes, 8,000 DRA devices, 6,000 GPU pods): one watch event costs a constant number of row
operations in every open view."""

from __future__ import annotations

import copy

from dragoman.fleet.store import KINDS, LIVE, FleetStore
from dragoman.sim.scenarios.scale import generate_scale
from dragoman.tui.app import DragomanApp
from dragoman.tui.feed import Feed, SourceInfo

from tests.tui.conftest import wait_for

VIEWS = ("pools", "nodes", "devices", "claims", "pending", "findings")


async def test_one_event_touches_constant_rows_on_the_scale_fleet() -> None:
    objects = generate_scale(nodes=2000, pods=6000, pending=100)
    store = FleetStore()
    by_kind: dict[str, list] = {k: [] for k in KINDS}
    for o in objects:
        if o.get("kind") in by_kind:
            by_kind[o["kind"]].append(o)
    for kind, objs in by_kind.items():
        store.replace(kind, objs)
        store.set_state(kind, LIVE, synced=True)
    store.flush()
    feed = Feed(store, SourceInfo(cluster="scale", context="scale", version="v1.37.1"))
    app = DragomanApp(feed)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: feed.loaded and feed.fleet.diagnosed, 120, "the scale fleet to load")
        screens = {}
        for name in VIEWS:
            app.open_view(name)
            await wait_for(pilot, lambda: getattr(app.screen, "populated", False), 120, f"{name} to fill")
            screens[name] = app.screen
            app.back()
            await pilot.pause(0.05)
        # Every view stays open underneath and keeps updating: push them all back on the stack.
        for name in VIEWS:
            app.push_screen(screens[name])
        await pilot.pause(0.2)
        tables = {name: s.table for name, s in screens.items()}
        assert tables["nodes"].row_count == 2000
        assert tables["devices"].row_count >= 8000
        assert tables["claims"].row_count >= 2000
        # The Devices and Nodes views built only the rows drawn and a sample for the widths (VTable.set_lazy).
        assert tables["devices"].unbuilt > tables["devices"].row_count // 2
        assert tables["nodes"].unbuilt > tables["nodes"].row_count // 2
        before = {name: t.ops for name, t in tables.items()}
        pumps = feed.pumps

        # One pod event: a running bridge pod is marked for deletion (a new resourceVersion, its node and claim
        # touched).
        pod = next(
            p
            for p in store.objects("Pod").values()
            if (p.get("status") or {}).get("extendedResourceClaimStatus") and (p.get("spec") or {}).get("nodeName")
        )
        new = copy.deepcopy(pod)
        new["metadata"]["resourceVersion"] = "90000001"
        new["status"]["phase"] = "Failed"
        store.apply("Pod", "MODIFIED", new)
        await wait_for(pilot, lambda: feed.pumps > pumps, 60, "the event to be absorbed")
        await pilot.pause(0.2)
        after = {name: t.ops - before[name] for name, t in tables.items()}
        # The pod's node, its pool, its claim, its row among stuck pods: a handful, never the view's size.
        assert max(after.values()) <= 3, after
        assert after["claims"] >= 1 and after["pending"] == 1  # it did show: the claim fails, the pod is now stuck
        # A slice event: one node's slice republished touches that node's devices only.
        sl = next(iter(store.objects("ResourceSlice").values()))
        new_sl = copy.deepcopy(sl)
        new_sl["metadata"]["resourceVersion"] = "90000002"
        new_sl["spec"]["devices"][0]["attributes"]["productName"] = {"string": "NVIDIA H200"}
        before = {name: t.ops for name, t in tables.items()}
        pumps = feed.pumps
        store.apply("ResourceSlice", "MODIFIED", new_sl)
        await wait_for(pilot, lambda: feed.pumps > pumps, 60, "the slice event")
        await pilot.pause(0.2)
        after = {name: t.ops - before[name] for name, t in tables.items()}
        # Devices rows are built only when read (VTable.set_lazy): one not drawn yet takes its new cells without an
        # operation; either way the row reads the new product.
        assert after["devices"] <= 1 and max(after.values()) <= 3, after
        d0 = new_sl["spec"]["devices"][0]["name"]
        pool = (new_sl["spec"]["driver"], new_sl["spec"]["pool"]["name"], d0)
        assert "NVIDIA H200" in [str(c) for c in tables["devices"].row(pool)]
        # A filter reads every row: all are built, and it finds the one device that changed.
        screens["devices"].set_filter("h200")
        assert tables["devices"].unbuilt == 0
        assert tables["devices"].keys() == [pool]
