"""events.k8s.io/v1 Events: the core Events in the other API's shape, converted on every read, write and watch, with
that API's stricter strategy. Expected answers are kube-apiserver v1.37.2's (recorded against the real control
plane; the differential corpus's `events:` cases keep comparing them)."""

from __future__ import annotations

import asyncio
import json

import pytest
from dragoman.sim import resources
from dragoman.sim.api import events as event_view
from dragoman.sim.store import ApiError, Store
from kubernetes_asyncio import client, watch

from tests.support.sim import api_client, running_simulator

NS = "ev"
VIEW = resources.BY_KEY["events.events.k8s.io"]


def _core_event(name: str = "p1.core", **extra) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": NS},
        "involvedObject": {"kind": "Pod", "name": "p1", "namespace": NS, "apiVersion": "v1"},
        "reason": "Testing",
        "message": "written through core v1",
        "type": "Normal",
        "source": {"component": "tester"},
        **extra,
    }


def _v1_event(name: str = "p1.v1", **extra) -> dict:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": NS},
        "eventTime": "2026-01-02T03:04:05.123456Z",
        "reportingController": "dragoman.io/tester",
        "reportingInstance": "tester-1",
        "action": "Testing",
        "reason": "Tested",
        "regarding": {"kind": "Pod", "name": "p1", "namespace": NS, "apiVersion": "v1"},
        "note": "written through events.k8s.io/v1",
        "type": "Warning",
        **extra,
    }


@pytest.fixture
def store() -> Store:
    s = Store()
    s.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}])
    return s


def test_a_core_event_reads_through_events_k8s_io_with_the_view_names(store):
    store.create("events", _core_event(), field_manager="a")
    view = store.entry(VIEW, NS, "p1.core").obj
    assert view["apiVersion"] == "events.k8s.io/v1"
    assert view["regarding"]["name"] == "p1"
    assert view["note"] == "written through core v1"
    assert view["deprecatedSource"] == {"component": "tester"}
    # Go writes these three even when unset (no omitempty reaches a struct or a metav1.Time).
    assert view["eventTime"] is None and view["deprecatedFirstTimestamp"] is None
    assert "involvedObject" not in view and "message" not in view and "reportingController" not in view
    assert view["metadata"]["managedFields"][0]["apiVersion"] == "v1"


def test_conversion_keeps_every_field_both_ways():
    core = _core_event(
        eventTime="2026-01-02T03:04:05.123456Z",
        series={"count": 3, "lastObservedTime": "2026-01-02T03:05:00.000000Z"},
        action="Act",
        related={"kind": "Node", "name": "n1"},
        reportingComponent="dragoman.io/tester",
        reportingInstance="i-1",
        firstTimestamp="2026-01-02T03:04:05Z",
        lastTimestamp="2026-01-02T03:04:06Z",
        count=4,
    )
    view = event_view.to_view(core)
    assert (view["reportingController"], view["deprecatedCount"], view["deprecatedLastTimestamp"]) == (
        "dragoman.io/tester",
        4,
        "2026-01-02T03:04:06Z",
    )
    assert event_view.to_core(view) == core


def test_an_events_k8s_io_write_is_stored_as_the_core_event(store):
    answer = store.create(VIEW, _v1_event(), field_manager="recorder")
    assert answer["apiVersion"] == "events.k8s.io/v1" and answer["note"] == "written through events.k8s.io/v1"
    core = store.get("events", NS, "p1.v1")
    assert core["involvedObject"]["name"] == "p1" and core["message"] == "written through events.k8s.io/v1"
    assert core["reportingComponent"] == "dragoman.io/tester" and core["source"] == {}
    entry = core["metadata"]["managedFields"][0]
    # The writer owns the view's fields, under the view's apiVersion.
    assert entry["apiVersion"] == "events.k8s.io/v1"
    assert {"f:note", "f:regarding", "f:reportingController", "f:eventTime"} <= set(entry["fieldsV1"])


def test_the_events_k8s_io_strategy_is_stricter_than_core(store):
    bad = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "BAD_name", "namespace": NS},
        "deprecatedCount": 3,
        "deprecatedSource": {"component": "x"},
        "type": "Odd",
        "series": {"count": 1},
        "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z",
    }
    with pytest.raises(ApiError) as exc:
        store.create(VIEW, bad)
    status = exc.value.status
    # v1.37.2's answer: the legacy check first, then ObjectMeta, the series, and the fields that must be set/unset;
    # field paths in the core type's names (but reportingController), the kind without a group.
    assert [c["field"] for c in status["details"]["causes"]] == [
        "involvedObject.namespace",
        "metadata.name",
        "series.count",
        "series.lastObservedTime",
        "eventTime",
        "type",
        "firstTimestamp",
        "count",
        "source",
    ]
    assert status["message"].startswith('Event "BAD_name" is invalid: [involvedObject.namespace: Invalid value: "": ')
    assert 'type: Invalid value: "": has invalid value: Odd' in status["message"]
    assert "group" not in status["details"]
    # The same body through core v1 only meets the legacy check (no eventTime: namespaces must agree).
    with pytest.raises(ApiError) as exc:
        store.create("events", event_view.to_core({**bad, "regarding": {"kind": "Pod", "name": "p"}}))
    assert [c["field"] for c in exc.value.status["details"]["causes"]] == ["involvedObject.namespace"]
    store.create("events", event_view.to_core({**bad, "regarding": {"kind": "Pod", "name": "p", "namespace": NS}}))


def test_a_core_event_with_event_time_needs_its_reporter(store):
    with pytest.raises(ApiError) as exc:
        store.create("events", _core_event(eventTime="2026-01-02T03:04:05.000000Z"))
    fields = [c["field"] for c in exc.value.status["details"]["causes"]]
    assert fields[:2] == ["reportingComponent", "reportingComponent"] and fields[-2:] == [
        "reportingInstance",
        "action",
    ]


def test_updates_through_the_view_leave_only_the_series_mutable(store):
    store.create(VIEW, _v1_event())
    with pytest.raises(ApiError) as exc:
        store.patch(VIEW, NS, "p1.v1", {"note": "changed", "type": "Normal"}, "merge")
    assert exc.value.status["message"] == (
        'Event "p1.v1" is invalid: [message: Invalid value: "changed": field is immutable, '
        'type: Invalid value: "Normal": field is immutable]'
    )
    series = {"count": 2, "lastObservedTime": "2026-01-02T03:05:00.000001Z"}
    out, _ = store.patch(VIEW, NS, "p1.v1", {"series": series}, "merge")
    assert out["series"] == series and store.get("events", NS, "p1.v1")["series"] == series
    # Through core v1 the same change of the message is allowed (legacy checks only).
    core, _ = store.patch("events", NS, "p1.v1", {"message": "changed"}, "merge")
    assert store.entry(VIEW, NS, "p1.v1").obj["note"] == "changed"


def test_a_write_through_the_other_api_drops_the_managers_it_cannot_convert(store):
    store.create("events", _core_event(), field_manager="a")
    out, _ = store.patch(VIEW, NS, "p1.core", {"metadata": {"labels": {"x": "y"}}}, "merge", field_manager="b")
    # As v1.37.2 answers: structured-merge-diff cannot convert to core v1 within events.k8s.io, so `a` goes.
    assert [(m["manager"], m["apiVersion"]) for m in out["metadata"]["managedFields"]] == [("b", "events.k8s.io/v1")]


def test_field_selectors_of_the_view(store):
    store.create("events", _core_event())
    store.create(VIEW, _v1_event())
    assert [o["metadata"]["name"] for o in store.list(VIEW, NS, field_selector="regarding.name=p1,type=Warning")] == [
        "p1.v1"
    ]
    assert [
        o["metadata"]["name"] for o in store.list(VIEW, NS, field_selector="reportingController=dragoman.io/tester")
    ] == ["p1.v1"]
    # The core `source` label falls back to reportingComponent (ToSelectableFields).
    assert [o["metadata"]["name"] for o in store.list("events", NS, field_selector="source=dragoman.io/tester")] == [
        "p1.v1"
    ]


async def test_discovery_field_labels_table_and_watch_over_http():
    async with running_simulator(objects=[{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}]) as sim:
        c = await api_client(sim)
        try:
            api = client.EventsV1Api(c)
            r = await client.ApisApi(c).get_api_versions(_preload_content=False)
            groups = [g["name"] for g in (await r.json())["groups"]]
            # kube-aggregator's order: events.k8s.io right after apps.
            assert groups[groups.index("apps") + 1] == "events.k8s.io"
            r = await api.get_api_resources(_preload_content=False)
            (events,) = (await r.json())["resources"]
            assert (events["name"], events["shortNames"], events["storageVersionHash"]) == (
                "events",
                ["ev"],
                "r2yiGXH7wu8=",
            )
            with pytest.raises(client.ApiException) as exc:
                await api.list_namespaced_event(NS, field_selector="involvedObject.name=p1")
            assert exc.value.status == 400
            assert json.loads(exc.value.body)["message"] == "field label not supported: involvedObject.name"

            stream = watch.Watch().stream(
                api.list_namespaced_event, NS, field_selector="regarding.name=p1", timeout_seconds=5
            )
            events_seen: list[dict] = []

            async def read() -> None:
                async for ev in stream:
                    events_seen.append(ev["raw_object"])
                    return

            reader = asyncio.create_task(read())
            await asyncio.sleep(0.3)
            # A core write with eventTime (the client's model requires one), seen in the view's shape.
            sim.store.create(
                "events",
                _core_event(
                    eventTime="2026-01-02T03:04:05.000000Z",
                    reportingComponent="dragoman.io/tester",
                    reportingInstance="i-1",
                    action="Act",
                ),
            )
            await asyncio.wait_for(reader, 10)
            assert events_seen[0]["apiVersion"] == "events.k8s.io/v1"
            assert (events_seen[0]["note"], events_seen[0]["reportingController"]) == (
                "written through core v1",
                "dragoman.io/tester",
            )

            r = await c.call_api(
                f"/apis/events.k8s.io/v1/namespaces/{NS}/events",
                "GET",
                header_params={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
                _preload_content=False,
                auth_settings=["BearerToken"],
            )
            table = await (r[0] if isinstance(r, tuple) else r).json()
            assert [c["name"] for c in table["columnDefinitions"]][:4] == ["Last Seen", "Type", "Reason", "Object"]
            assert table["rows"][0]["cells"][1:4] == ["Normal", "Testing", "pod/p1"]
        finally:
            await c.close()


async def test_aggregated_discovery_names_response_kinds_as_the_installer_does():
    # kube-apiserver v1.37.2: a built-in resource's responseKind leaves group and version empty (they are its
    # group-version's), a subresource of another group names it (pods/eviction: policy/v1 Eviction), a CRD's names
    # both. kubectl reads /api and /apis in this form.
    async with running_simulator(objects=[]) as sim:
        core = {r["resource"]: r for r in sim._aggregated(True)["items"][0]["versions"][0]["resources"]}
        groups = {g["metadata"]["name"]: g for g in sim._aggregated(False)["items"]}
    assert core["pods"]["responseKind"] == {"group": "", "version": "", "kind": "Pod"}
    subs = {s["subresource"]: s["responseKind"] for s in core["pods"]["subresources"]}
    assert subs["status"] == {"group": "", "version": "", "kind": "Pod"}
    assert subs["eviction"] == {"group": "policy", "version": "v1", "kind": "Eviction"}
    (events,) = groups["events.k8s.io"]["versions"][0]["resources"]
    assert events["responseKind"] == {"group": "", "version": "", "kind": "Event"}
    (rules,) = groups["monitoring.coreos.com"]["versions"][0]["resources"]
    assert rules["responseKind"] == {"group": "monitoring.coreos.com", "version": "v1", "kind": "PrometheusRule"}


def test_a_core_event_meets_the_generic_object_meta_check_once_its_strategy_passes(store):
    # kube-apiserver v1.37.2: the core event strategy checks no metadata; rest.ValidateCreate then runs the generic
    # ObjectMeta check (names need only be path segments) — but only when the strategy found nothing.
    store.create("events", _core_event(name="Not_A_Subdomain"))
    with pytest.raises(ApiError) as exc:
        store.create(
            "events", {**_core_event(), "metadata": {"name": "a/b%c", "namespace": NS, "labels": {"bad key!": "x"}}}
        )
    assert [(c["field"], c["message"].split(": ", 2)[-1]) for c in exc.value.status["details"]["causes"]] == [
        ("metadata.name", "may not contain '/'"),
        ("metadata.name", "may not contain '%'"),
        ("metadata.labels", exc.value.status["details"]["causes"][2]["message"].split(": ", 2)[-1]),
    ]
    bad_ns = {**_core_event(), "involvedObject": {"kind": "Pod", "name": "p"}}
    bad_ns["metadata"] = {"name": "x", "namespace": NS, "labels": {"bad key!": "x"}}
    with pytest.raises(ApiError) as exc:
        store.create("events", bad_ns)
    assert [c["field"] for c in exc.value.status["details"]["causes"]] == ["involvedObject.namespace"]


def test_generate_name_is_checked_with_the_kinds_name_rule(store):
    with pytest.raises(ApiError) as exc:
        store.create("configmaps", {"metadata": {"generateName": "Cm-", "namespace": NS}})
    fields = [c["field"] for c in exc.value.status["details"]["causes"]]
    assert fields == ["metadata.generateName", "metadata.name"]
    # A trailing '-' is what a prefix may end in (maskTrailingDash).
    assert store.create("configmaps", {"metadata": {"generateName": "cm-", "namespace": NS}})["metadata"][
        "name"
    ].startswith("cm-")


async def test_a_watch_from_history_and_its_bookmark_are_in_the_views_shape():
    async with running_simulator(objects=[{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}]) as sim:
        rv = sim.store.resource_version
        sim.store.create("events", _core_event(name="h1"))
        sim.store.patch("events", NS, "h1", {"type": "Warning"}, "merge")
        c = await api_client(sim)
        try:

            async def lines(query: str) -> list[dict]:
                r = await c.call_api(
                    f"/apis/events.k8s.io/v1/namespaces/{NS}/events?{query}",
                    "GET",
                    header_params={"Accept": "application/json"},
                    _preload_content=False,
                    auth_settings=["BearerToken"],
                )
                text = await (r[0] if isinstance(r, tuple) else r).text()
                return [json.loads(line) for line in text.splitlines() if line.strip()]

            history = await lines(f"watch=1&resourceVersion={rv}&fieldSelector=type%3DWarning&timeoutSeconds=1")
            # The change that brought it into the selection is an ADDED, in the view's shape.
            assert [(e["type"], e["object"]["apiVersion"], e["object"].get("note")) for e in history] == [
                ("ADDED", "events.k8s.io/v1", "written through core v1")
            ]
            initial = await lines(
                "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
                "&timeoutSeconds=1"
            )
            bookmark = next(e["object"] for e in initial if e["type"] == "BOOKMARK")
            # v1.37.2 sends an empty Event as Go encodes it.
            assert (bookmark["apiVersion"], bookmark["regarding"], bookmark["eventTime"]) == (
                "events.k8s.io/v1",
                {},
                None,
            )
        finally:
            await c.close()
