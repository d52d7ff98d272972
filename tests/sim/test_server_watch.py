"""LIST pagination with consistent snapshots, WATCH resume, bookmarks and 410 through kubernetes-asyncio over
loopback."""

from __future__ import annotations

import asyncio

import pytest
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.exceptions import ApiException

from tests.support.sim import api_client, running_simulator


def _cm(i: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"cm-{i:03d}",
            "namespace": "default",
            "labels": {"n": str(i), "parity": "odd" if i % 2 else "even"},
        },
    }


@pytest.fixture
async def sim():
    objs = [_cm(i) for i in range(25)]
    objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    async with running_simulator(objects=objs, history_size=50) as s:
        s.bookmark_interval = 0.3
        yield s


@pytest.fixture
async def v1(sim):
    c = await api_client(sim)
    yield client.CoreV1Api(c)
    await c.close()


async def _list_json(v1, **kw) -> dict:
    r = await v1.list_namespaced_config_map("default", _preload_content=False, **kw)
    return await r.json()


async def _collect(stream, n: int, timeout: float = 20.0) -> list[dict]:
    out: list[dict] = []

    async def run() -> None:
        async for ev in stream:
            out.append(ev)
            if len(out) >= n:
                return

    await asyncio.wait_for(run(), timeout)
    return out


async def test_pagination_is_a_consistent_snapshot(sim, v1):
    first = await _list_json(v1, limit=10)
    assert [i["metadata"]["name"] for i in first["items"]] == [f"cm-{i:03d}" for i in range(10)]
    # 15 more of the test's own and kube-root-ca.crt, which every namespace holds.
    assert first["metadata"]["remainingItemCount"] == 16
    token = first["metadata"]["continue"]
    # Changes after the first page do not leak into the rest of this list.
    await v1.create_namespaced_config_map("default", {"metadata": {"name": "cm-100"}})
    await v1.delete_namespaced_config_map("cm-020", "default")
    names = [i["metadata"]["name"] for i in first["items"]]
    while token:
        page = await _list_json(v1, limit=10, _continue=token)
        assert page["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
        names += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue")
    assert names == [*(f"cm-{i:03d}" for i in range(25)), "kube-root-ca.crt"]
    fresh = [i["metadata"]["name"] for i in (await _list_json(v1))["items"]]
    assert "cm-100" in fresh and len([n for n in fresh if n.startswith("cm-")]) == 25


async def test_selectors_filter_before_paging(v1):
    odd = await _list_json(v1, label_selector="parity=odd", limit=5)
    # A filtered page says there is more (continue) but not how much: kube-apiserver cannot count it unread.
    assert len(odd["items"]) == 5 and "remainingItemCount" not in odd["metadata"]
    rest = await _list_json(v1, label_selector="parity=odd", _continue=odd["metadata"]["continue"])
    assert len(rest["items"]) == 7
    ranged = await _list_json(v1, label_selector="n in (1,2,3),parity!=odd")
    assert [i["metadata"]["name"] for i in ranged["items"]] == ["cm-002"]
    byname = await _list_json(v1, field_selector="metadata.name=cm-007")
    assert [i["metadata"]["name"] for i in byname["items"]] == ["cm-007"]


async def test_an_unknown_continue_token_is_410(v1):
    first = await _list_json(v1, limit=10)
    token = first["metadata"]["continue"]
    bogus = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    with pytest.raises(ApiException) as err:
        await v1.list_namespaced_config_map("default", limit=10, _continue=bogus)
    assert err.value.status in (400, 410)


async def test_watch_resumes_from_a_resource_version(sim, v1):
    rv = (await _list_json(v1))["metadata"]["resourceVersion"]
    await v1.create_namespaced_config_map("default", {"metadata": {"name": "late-1"}})
    await v1.patch_namespaced_config_map("late-1", "default", {"data": {"k": "v"}})
    await v1.delete_namespaced_config_map("cm-000", "default")
    w = watch.Watch()
    events = await _collect(
        w.stream(v1.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=10), 3
    )
    w.stop()
    assert [(e["type"], e["raw_object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "late-1"),
        ("MODIFIED", "late-1"),
        ("DELETED", "cm-000"),
    ]
    rvs = [int(e["raw_object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[0] > int(rv)
    # Resume after the first event: exactly the later two arrive.
    w = watch.Watch()
    events = await _collect(
        w.stream(v1.list_namespaced_config_map, "default", resource_version=str(rvs[0]), timeout_seconds=10), 2
    )
    w.stop()
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]


async def test_live_watch_sees_changes_and_bookmarks(sim, v1):
    rv = (await _list_json(v1))["metadata"]["resourceVersion"]
    w = watch.Watch()
    seen: list[dict] = []

    async def consume() -> None:
        async for ev in w.stream(
            v1.list_namespaced_config_map,
            "default",
            resource_version=rv,
            allow_watch_bookmarks=True,
            timeout_seconds=15,
        ):
            seen.append(ev)
            if ev["type"] == "BOOKMARK" and any(e["type"] == "ADDED" for e in seen):
                return

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.2)
    await v1.create_namespaced_config_map("default", {"metadata": {"name": "live"}})
    await asyncio.wait_for(task, 20)
    w.stop()
    added = [e for e in seen if e["type"] == "ADDED"]
    assert added and added[0]["raw_object"]["metadata"]["name"] == "live"
    bookmark = [e for e in seen if e["type"] == "BOOKMARK"][-1]
    assert int(bookmark["raw_object"]["metadata"]["resourceVersion"]) >= int(
        added[0]["raw_object"]["metadata"]["resourceVersion"]
    )


async def test_watch_from_a_compacted_version_is_410(sim, v1):
    rv = (await _list_json(v1))["metadata"]["resourceVersion"]
    for i in range(60):  # history keeps 50 events
        await v1.patch_namespaced_config_map("cm-001", "default", {"data": {"i": str(i)}})
    w = watch.Watch()
    with pytest.raises(ApiException) as err:
        await _collect(w.stream(v1.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=5), 1)
    assert err.value.status == 410
    assert "too old resource version" in err.value.reason


async def test_watch_without_version_starts_with_the_current_state_and_times_out(sim, v1):
    w = watch.Watch()
    events = []
    async for ev in w.stream(
        v1.list_namespaced_config_map, "default", field_selector="metadata.name=cm-003", timeout_seconds=1
    ):
        events.append(ev)
    assert [(e["type"], e["raw_object"]["metadata"]["name"]) for e in events] == [("ADDED", "cm-003")]


async def test_an_object_leaving_a_selection_is_deleted_for_the_watcher(sim, v1):
    rv = (await _list_json(v1))["metadata"]["resourceVersion"]
    w = watch.Watch()
    stream = w.stream(
        v1.list_namespaced_config_map, "default", label_selector="parity=odd", resource_version=rv, timeout_seconds=10
    )
    await v1.patch_namespaced_config_map("cm-001", "default", {"metadata": {"labels": {"parity": "none"}}})
    await v1.patch_namespaced_config_map("cm-002", "default", {"metadata": {"labels": {"parity": "odd"}}})
    events = await _collect(stream, 2)
    w.stop()
    assert [(e["type"], e["raw_object"]["metadata"]["name"]) for e in events] == [
        ("DELETED", "cm-001"),
        ("ADDED", "cm-002"),
    ]


async def test_store_subscribers_see_every_commit(sim):
    seen = []
    unsubscribe = sim.store.subscribe(lambda t, key, obj, old: seen.append((t, key, obj["metadata"]["name"])))
    sim.store.create("configmaps", {"metadata": {"name": "inproc", "namespace": "default"}})
    sim.store.patch("configmaps", "default", "inproc", {"data": {"a": "b"}}, "merge")
    sim.store.delete("configmaps", "default", "inproc")
    unsubscribe()
    assert seen == [
        ("ADDED", "configmaps", "inproc"),
        ("MODIFIED", "configmaps", "inproc"),
        ("DELETED", "configmaps", "inproc"),
    ]


async def test_watch_list_sends_initial_events_then_an_end_bookmark(sim):
    import json as _json

    import aiohttp

    token = sim.users["admin"].token
    url = (
        sim.url
        + "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
        + "&allowWatchBookmarks=true&timeoutSeconds=2"
    )
    async with aiohttp.ClientSession() as s:
        async with s.get(url, headers={"Authorization": f"Bearer {token}"}, ssl=False) as r:
            lines = [_json.loads(x) for x in (await r.read()).splitlines() if x.strip()]
    types = [e["type"] for e in lines]
    assert types[:25] == ["ADDED"] * 25
    end = next(e for e in lines if e["type"] == "BOOKMARK")
    assert end["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(end["object"]["metadata"]["resourceVersion"]) == sim.store.resource_version
