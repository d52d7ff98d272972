"""The feed's first load: what the store holds when the snapshot is taken is indexed once, and what arrives while the
thread indexes is applied after it, never lost."""

from __future__ import annotations

import asyncio
import copy

from dragoman.fleet.store import KINDS, LIVE, FleetStore
from dragoman.sim.scenarios.scale import generate_scale
from dragoman.tui.feed import Feed, SourceInfo


def _by_kind(objects: list[dict]) -> dict[str, list[dict]]:
    by_kind: dict[str, list[dict]] = {k: [] for k in KINDS}
    for o in objects:
        if o.get("kind") in by_kind:
            by_kind[o["kind"]].append(o)
    return by_kind


async def _until(cond, timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not cond():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_the_last_lists_changes_are_not_applied_again_after_the_load() -> None:
    """As an informer syncs: the last kind's LIST replaces the store (its ADDEDs held back for coalescing) and marks it
    synced in the same turn of the loop. The load copies those objects; the held-back ADDEDs must not come through the
    pump afterwards (on the envelope that was 150,000 pods indexed twice, slice by slice, beside the diagnosis)."""
    store = FleetStore()
    by_kind = _by_kind(generate_scale(nodes=40, pods=200, pending=5))
    feed = Feed(store, SourceInfo(cluster="t"))
    feed.start()
    for kind, objs in by_kind.items():
        store.replace(kind, objs)  # within a running loop: the store's flush is scheduled, not done
        store.set_state(kind, LIVE, synced=True)
    await _until(lambda: feed.loaded)
    await _until(lambda: feed.fleet.diagnosed)
    await asyncio.sleep(0.2)  # past PUMP_INTERVAL: any held change would have been absorbed by now
    assert feed.events == 0
    assert len(feed.model.objects["Pod"]) == len(by_kind["Pod"]) > 0
    assert len(feed.model.objects["Node"]) == 40
    await feed.stop()


async def test_a_change_made_while_the_model_loads_is_applied_after_it() -> None:
    store = FleetStore()
    by_kind = _by_kind(generate_scale(nodes=40, pods=200, pending=5))
    for kind, objs in by_kind.items():
        store.replace(kind, objs)
        store.set_state(kind, LIVE, synced=True)
    store.flush()
    feed = Feed(store, SourceInfo(cluster="t"))
    feed.start()  # synced: the load starts at once, in a thread
    assert feed._busy and not feed.loaded
    pod = copy.deepcopy(next(p for p in store.objects("Pod").values() if (p.get("spec") or {}).get("nodeName")))
    pod["metadata"]["resourceVersion"] = "90000001"
    pod["metadata"]["labels"] = {**(pod["metadata"].get("labels") or {}), "changed": "while-loading"}
    store.apply("Pod", "MODIFIED", pod)
    gone = next(iter(store.objects("Node")))
    store.apply("Node", "DELETED", store.objects("Node")[gone])
    await _until(lambda: feed.loaded)
    await _until(lambda: feed.events >= 2)
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
    assert feed.model.objects["Pod"][key]["metadata"]["labels"]["changed"] == "while-loading"
    assert gone not in feed.model.objects["Node"]
    assert len(feed.model.objects["Node"]) == 39
    await feed.stop()


async def test_first_lists_before_the_load_make_no_changes_and_a_kind_listed_after_it_reaches_the_model() -> None:
    """Until its first load the feed reads the store whole, so a kind's first LIST is stored without a change per
    object; once loaded, a kind listed for the first time (allowed at last, or served at last) comes as changes."""
    store = FleetStore()
    by_kind = _by_kind(generate_scale(nodes=40, pods=200, pending=5))
    feed = Feed(store, SourceInfo(cluster="t"))
    feed.start()
    late = "DeviceClass"
    assert by_kind[late], "the late kind must have objects: none proves nothing"
    for kind, objs in by_kind.items():
        store.replace(kind, [] if kind == late else objs)
        assert not store._pending, f"{kind}: a first LIST before the load made changes"
        store.set_state(kind, LIVE, synced=True)
    await _until(lambda: feed.loaded)
    assert len(feed.model.objects["Pod"]) == len(by_kind["Pod"])
    assert not feed.model.objects[late]
    store.replace(late, by_kind[late])  # its first objects, after the load
    await _until(lambda: len(feed.model.objects[late]) == len(by_kind[late]))
    await feed.stop()


async def test_each_listener_gets_its_own_typed_messages_until_it_stops_listening() -> None:
    """The feed's news reaches each listening screen as tui/messages.py's messages, a copy each (Textual marks a
    message as it is handled); a screen that stopped listening gets nothing more."""
    from dragoman.tui.messages import FleetLoaded, RowsTouched

    class Screen:
        def __init__(self) -> None:
            self.got: list = []

        def post_message(self, message) -> bool:
            self.got.append(message)
            return True

    store = FleetStore()
    by_kind = _by_kind(generate_scale(nodes=40, pods=200, pending=5))
    for kind, objs in by_kind.items():
        store.replace(kind, objs)
        store.set_state(kind, LIVE, synced=True)
    store.flush()
    pools, nodes = Screen(), Screen()
    feed = Feed(store, SourceInfo(cluster="t"))
    feed.listen(pools)
    feed.listen(nodes)
    feed.start()
    await _until(lambda: feed.loaded)
    node = copy.deepcopy(next(iter(store.objects("Node").values())))
    node["metadata"]["resourceVersion"] = "90000002"
    node["spec"]["unschedulable"] = True
    store.apply("Node", "MODIFIED", node)
    await _until(lambda: any(isinstance(m, RowsTouched) for m in pools.got))
    feed.unlisten(nodes)
    heard = len(nodes.got)
    node = copy.deepcopy(node)
    node["metadata"]["resourceVersion"] = "90000003"
    node["spec"]["unschedulable"] = False
    store.apply("Node", "MODIFIED", node)
    await _until(lambda: sum(isinstance(m, RowsTouched) for m in pools.got) == 2)
    assert isinstance(pools.got[0], FleetLoaded) and isinstance(nodes.got[0], FleetLoaded)
    touched = [m for m in pools.got if isinstance(m, RowsTouched)]
    assert node["metadata"]["name"] in touched[0].touched.nodes
    assert pools.got[0] is not nodes.got[0]  # a copy each
    assert len(nodes.got) == heard  # nothing after unlisten
    await feed.stop()
