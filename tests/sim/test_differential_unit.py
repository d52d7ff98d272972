"""The differential harness's normalizer and comparer, on answers recorded from both control planes
(differential_fixtures/answers.json: the same requests sent to the embedded simulator and to the real v1.37.2
kube-apiserver), and on the embedded simulator against itself: two servers that differ only in what must differ
(uids, timestamps, resourceVersions, generated names, addresses) must compare equal."""

from __future__ import annotations

import copy
import json
import pathlib
import re

import pytest
from dragoman.sim.controlplane import differential as d

ANSWERS = json.loads((pathlib.Path(__file__).parent / "differential_fixtures" / "answers.json").read_text())


def _normalized(side: str, key: str) -> dict:
    norm = d.Normalizer(server=ANSWERS[side]["server"])
    for k in ANSWERS[side]:
        if k != "server":
            norm.learn(ANSWERS[side][k]["body"])
    return norm.value(ANSWERS[side][key])


def _strings(v):
    if isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from _strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from _strings(x)
    elif isinstance(v, str):
        yield v


@pytest.mark.parametrize("side", ["embedded", "real"])
@pytest.mark.parametrize("key", ["created", "list", "got"])
def test_nothing_per_server_survives_normalizing(side: str, key: str) -> None:
    raw = json.dumps(ANSWERS[side][key])
    assert d.UUID.search(raw) and d.TIME.search(raw), "the recording holds uids and timestamps"
    out = _normalized(side, key)
    text = "\n".join(_strings(out))
    assert not d.UUID.search(text)
    assert not d.TIME.search(text)
    body = out["body"]
    items = body["items"] if "items" in body else [body]
    for obj in items:
        md = obj["metadata"]
        assert md["uid"] == "<uid>" and md["resourceVersion"] == "<rv>" and md["creationTimestamp"] == "<time>"
        # The generated suffix is gone wherever the name appears (the volume's own suffix is the server's too).
        assert md["name"] == "rec-<sfx>"
        assert not re.search(r"rec-[a-z0-9]{5}\b", json.dumps(obj))


def test_the_same_object_from_another_server_compares_equal() -> None:
    """The recorded real Pod, re-issued with new uids, times, resourceVersions, suffix and server: no difference."""
    raw = copy.deepcopy(ANSWERS["real"]["got"])
    text = json.dumps(raw)
    name = raw["body"]["metadata"]["name"]
    other = text.replace(name, "rec-zzzzz")
    other = d.UUID.sub("11111111-2222-3333-4444-555555555555", other)
    other = d.TIME.sub("2030-01-01T00:00:00Z", other)
    other = other.replace(
        f'"resourceVersion": "{raw["body"]["metadata"]["resourceVersion"]}"', '"resourceVersion": "9"'
    )
    twin = json.loads(other)
    a = d.Normalizer(server=ANSWERS["real"]["server"])
    a.learn(raw["body"])
    b = d.Normalizer(server="https://127.0.0.1:1")
    b.learn(twin["body"])
    assert d.compare("api", "x", a.value(raw), b.value(twin)) == []


def test_a_changed_value_and_a_missing_field_are_differences() -> None:
    raw = ANSWERS["real"]["got"]
    twin = copy.deepcopy(raw)
    twin["body"]["spec"]["containers"][0]["image"] = "busybox:1.37"
    del twin["body"]["spec"]["dnsPolicy"]
    n = d.Normalizer()
    diffs = {x.path: (x.embedded, x.real) for x in d.compare("api", "x", n.value(raw), n.value(twin))}
    assert diffs == {
        "body.spec.containers[0].image": ("busybox:1.36", "busybox:1.37"),
        "body.spec.dnsPolicy": ("ClusterFirst", d.MISSING),
    }


def test_the_recorded_answers_differ_where_the_servers_did() -> None:
    """The recording is of two different servers: the comparer must see what differed then (service-account
    admission, per the recording) and nothing of what must differ."""
    diffs = d.compare("api", "got", _normalized("embedded", "got"), _normalized("real", "got"))
    paths = {x.path for x in diffs}
    real_only = {x.path for x in diffs if x.embedded == d.MISSING}
    assert any(p.startswith("body.spec.volumes") for p in real_only) == (
        "kube-api-access" in json.dumps(ANSWERS["real"]["got"])
        and "kube-api-access" not in json.dumps(ANSWERS["embedded"]["got"])
    )
    assert not any(p.endswith((".uid", ".resourceVersion", ".creationTimestamp")) for p in paths)


def test_an_error_against_an_object_compares_by_headline() -> None:
    """A 400 Status against a 200 list: code, kind, reason and message, not every field of the list."""
    ok = {"code": 200, "kind": "NodeList", "body": {"kind": "NodeList", "items": [{"metadata": {"name": "n"}}]}}
    bad = _normalized("real", "bad rv")
    assert bad["code"] == 400 and bad["reason"] == "BadRequest"
    diffs = d.compare("api", "rv", ok, bad)
    assert {x.path for x in diffs} == {"code", "kind", "reason", "message"}


def test_a_too_old_watch_quotes_no_resource_version() -> None:
    obs = d.Normalizer().value(ANSWERS["embedded"]["watch too old"])
    (event,) = obs["body"]["events"]
    assert event["type"] == "ERROR" and event["object"]["reason"] == "Expired"
    assert event["object"]["message"] == "too old resource version: 1 (<rv>)"
    # kube-apiserver's words for a future version (its current revision is per server).
    assert d.Normalizer().message("Too large resource version: 999999999, current: 3121") == (
        "Too large resource version: 999999999, current: <rv>"
    )


def test_conditions_and_managed_fields_are_compared_as_maps() -> None:
    a = {
        "status": {"conditions": [{"type": "A", "status": "True"}, {"type": "B", "status": "False"}]},
        "metadata": {
            "managedFields": [
                {
                    "manager": "m",
                    "operation": "Update",
                    "time": "2026-01-01T00:00:00Z",
                    "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:x": {}}}},
                },
                {"manager": "s", "operation": "Update", "subresource": "status", "fieldsV1": {"f:status": {}}},
            ]
        },
    }
    b = copy.deepcopy(a)
    b["status"]["conditions"].reverse()
    b["metadata"]["managedFields"].reverse()
    b["metadata"]["managedFields"][1]["time"] = "2027-01-01T00:00:00Z"
    b["metadata"]["managedFields"][1]["fieldsV1"]["f:metadata"]["f:labels"].pop(".")
    n = d.Normalizer()
    assert d.compare("api", "x", n.value(a), n.value(b)) == []
    b["metadata"]["managedFields"][1]["manager"] = "other"
    assert {x.path.split("[")[0] for x in d.compare("api", "x", n.value(a), n.value(b))} == {
        "metadata.managedFields.m Update",
        "metadata.managedFields.other Update",
    }


def test_the_allowlist_matches_by_literal_paths_with_star_wildcards(tmp_path: pathlib.Path) -> None:
    p = tmp_path / "allow.yaml"
    p.write_text("- {area: 'api/*', case: 'pods: *', path: 'body.items[0].kind', reason: 'because'}\n")
    allow = d.load_allowlist(p)
    hit = d.Difference("api/pods", "pods: list", "body.items[0].kind", "Pod", d.MISSING)
    miss = d.Difference("api/pods", "pods: list", "body.items[1].kind", "Pod", d.MISSING)
    left, used = d.split([hit, miss], allow)
    assert left == [miss] and list(used.values()) == [1]
    p.write_text("- {area: api, case: x, path: y}\n")
    with pytest.raises(ValueError, match="reason"):
        d.load_allowlist(p)


def test_the_repository_allowlist_is_small_and_says_why() -> None:
    allow = d.load_allowlist()
    assert len(allow) < 25
    for a in allow:
        assert len(a.reason.split()) >= 5, a


async def test_two_embedded_simulators_do_not_differ() -> None:
    """Two servers of the same scenario, differing only in what must differ: the API corpus finds nothing. If a
    uid, a timestamp, a resourceVersion or a generated name escaped normalizing, this would list it."""
    import asyncio

    from dragoman.sim.controlplane.differential_corpus import api_requests

    def both() -> d.Result:
        with d.embedded_side() as one, d.embedded_side() as two:
            two.name = "real"
            sides = {"embedded": d.Side("embedded", one), "real": d.Side("real", two)}
            # The two "terminating" reads race each side's namespace controller (it may finish the deletion before
            # the read on one side and not the other under load): timing, not a wire difference, so not here.
            corpus = [r for r in api_requests() if "{web_pod}" not in r.path and "terminating" not in r.name]
            return d.run_corpus(sides, corpus, settle_scale=0.25)  # the embedded controllers react at once

    result = await asyncio.to_thread(both)
    assert sum(result.counts.values()) >= 100
    assert not result.errors
    assert result.differences == [], d.table(result, result.differences, {})


def test_a_generic_answer_keeps_its_http_code_whatever_versions_were_seen() -> None:
    """ "406: Not Acceptable" on a server whose objects reached resourceVersion 406 is still the code, not a version."""
    n = d.Normalizer(rvs={"406", "1234"})
    assert n.message("406: Not Acceptable") == "406: Not Acceptable"
    assert n.message("too old resource version: 406 (1234)") == "too old resource version: <rv> (<rv>)"


def test_only_numbers_quoted_as_resource_versions_are_normalized() -> None:
    """A side whose objects reached resourceVersion 63 still reads "no more than 63 bytes" as written; a
    resourceVersion is normalized where a message's phrasing quotes one."""
    n = d.Normalizer(rvs={"63", "1234", "1240"})
    long_name = 'metadata.name: Invalid value: "x": must be no more than 63 bytes'
    assert n.message(long_name) == long_name
    assert n.message("0/63 nodes are available: 63 Insufficient nvidia.com/gpu.") == (
        "0/63 nodes are available: 63 Insufficient nvidia.com/gpu."
    )
    assert n.message(
        "Precondition failed: ResourceVersion in precondition: 1234, ResourceVersion in object meta: 1240"
    ) == ("Precondition failed: ResourceVersion in precondition: <rv>, ResourceVersion in object meta: <rv>")
    # A number the client sent alike to both sides is kept; the server's current revision never is.
    assert n.message("too old resource version: 1 (1240)") == "too old resource version: 1 (<rv>)"
    assert n.message('metadata.resourceVersion: Invalid value: "1234": must be empty') == (
        'metadata.resourceVersion: Invalid value: "<rv>": must be empty'
    )


def test_watch_events_compare_the_api_version_of_their_objects() -> None:
    core = {"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}}}
    view = {"type": "ADDED", "object": {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"}}}
    diffs = d.compare("api", "watch", d.watch_event(core), d.watch_event(view))
    assert [x.path for x in diffs] == ["apiVersion"]


def test_behaviour_events_compare_how_they_were_written_not_when() -> None:
    from dragoman.sim.controlplane.differential_behaviour import event_shape

    core = {
        "source": {"component": "default-scheduler"},
        "count": 3,
        "firstTimestamp": "2026-01-02T03:04:05Z",
        "lastTimestamp": "2026-01-02T03:05:05Z",
        "reportingComponent": "default-scheduler",
        "reportingInstance": "",
    }
    v1 = {
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "eventTime": "2026-01-02T03:04:05.000001Z",
        "action": "Scheduling",
        "reportingComponent": "default-scheduler",
        "reportingInstance": "default-scheduler-host",
    }
    assert event_shape(core) != event_shape(v1)
    # A repeat (series) and other times are timing, not shape.
    later = {**v1, "eventTime": "2026-01-02T04:00:00.5Z", "series": {"count": 2, "lastObservedTime": "x"}}
    assert event_shape(later) == event_shape(v1)


async def test_a_case_write_order_counts_only_its_own_pod_and_claims() -> None:
    """An earlier case's pod still ending in the namespace writes a bound pod after `since`; the order of writes of
    the case's own pod must not count it (it once put "pod bound" before the binding condition the pod waited for)."""
    import asyncio

    from dragoman.sim.controlplane import differential_behaviour as b

    def run() -> tuple[list[str], list[str]]:
        with d.embedded_side() as target:
            side = d.Side("embedded", target)
            b._ensure_namespace(side)
            since = b._list_rv(side)
            mine = b._gpu_pod("mine", 0, nodeSelector={"kubernetes.io/hostname": "nowhere"})
            assert side.call("POST", b._ns_path("pods"), mine).code == 201
            node = (side.get("/api/v1/nodes") or {})["items"][0]["metadata"]["name"]
            other = b._gpu_pod("other", 0, nodeName=node, nodeSelector={})
            assert side.call("POST", b._ns_path("pods"), other).code == 201
            claim = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "theirs", "namespace": b.NS},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
            }
            assert side.call("POST", b._ns_path("claims"), claim).code == 201
            return b.write_order(side, since, "mine"), b.write_order(side, since, "other", ("theirs",))

    own, theirs = await asyncio.to_thread(run)
    assert "pod added" in own and "pod bound" not in own and "claim added" not in own, own
    assert "pod bound" in theirs and "claim added" in theirs, theirs


def test_a_case_alongside_the_one_before_it_runs_at_the_same_time_and_is_compared_as_its_own() -> None:
    """run_corpus runs a Behaviour marked `alongside` (the name of the case before it) at once with that case, on
    both sides, and compares each case's answer under its own name; one whose named case did not run just before it
    runs alone (a by-hand selection that left the other out)."""
    import threading
    import time
    import types

    running: set[str] = set()
    met: list[tuple[str, str]] = []
    lock = threading.Lock()

    def case(name: str, answer: dict):
        def run(side: d.Side):
            with lock:
                met.extend((name, other) for other in running if other.endswith(side.name))
                running.add(f"{name}@{side.name}")
            time.sleep(0.3)
            with lock:
                running.discard(f"{name}@{side.name}")
            return {**answer, "side": answer.get(side.name, "same")}

        return run

    sides = {n: types.SimpleNamespace(name=n, norm=d.Normalizer(), notes=[]) for n in d.SIDES}
    cases = [
        d.Behaviour("first", case("first", {})),
        d.Behaviour("beside first", case("beside", {"real": "other"}), alongside="first"),
        d.Behaviour("beside nothing", case("alone", {}), alongside="a case left out"),
    ]
    t0 = time.monotonic()
    result = d.run_corpus(sides, cases)  # type: ignore[arg-type]
    took = time.monotonic() - t0
    assert sorted(met) == [("beside", "first@embedded"), ("beside", "first@real")]
    assert 0.6 <= took < 0.9, took  # two batches of 0.3 s, not three
    assert [(x.case, x.path) for x in result.differences] == [("beside first", "side")]
    assert result.counts == {"behaviour": 3} and not result.errors


def test_a_deleted_pods_stopping_write_before_its_terminal_one_is_not_a_state_to_compare() -> None:
    """A real kubelet's status manager sometimes writes a deleted pod as Running with its containers terminated, just
    before its terminal phase (when its sync falls between the two); the agent writes the terminal phase at once:
    the pod's history drops that write when a terminal one follows, and keeps it when none does."""
    from dragoman.sim.controlplane.differential_behaviour import _without_stopping_writes

    dt = [True, "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint"]
    running = ["MODIFIED", "Running", True, dt, {"cuda": {"running": None}}]
    stopping = ["MODIFIED", "Running", True, dt, {"cuda": {"terminated": 137}}]
    failed = ["MODIFIED", "Failed", True, dt, {"cuda": {"terminated": 137}}]
    gone = ["DELETED", "Failed", True, dt, {"cuda": {"terminated": 137}}]
    assert _without_stopping_writes([running, stopping, failed, gone]) == [running, failed, gone]
    assert _without_stopping_writes([running, failed, gone]) == [running, failed, gone]
    assert _without_stopping_writes([running, stopping]) == [running, stopping], "no terminal write after it"


async def test_a_cases_node_events_leave_out_the_ones_an_earlier_case_left_unless_recorded_again() -> None:
    """The cases share one node: a real kubelet that caught the drain's cordon in a status sync recorded
    NodeNotSchedulable and NodeSchedulable (or did not: timing). A later case's node events must not carry them; an
    event recorded again during the case (its count raised) is the case's."""
    import asyncio

    from dragoman.sim.controlplane import differential_behaviour as b

    def event(name: str, reason: str, count: int = 1) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": "default"},
            "involvedObject": {"kind": "Node", "name": b.NODE, "apiVersion": "v1"},
            "reason": reason,
            "message": f"Node {b.NODE} status is now: {reason}",
            "type": "Normal",
            "source": {"component": "kubelet", "host": b.NODE},
            "count": count,
        }

    def run() -> list:
        with d.embedded_side() as target:
            side = d.Side("embedded", target)
            path = "/api/v1/namespaces/default/events"
            for name, reason in (("n.1", "NodeNotSchedulable"), ("n.2", "NodeSchedulable"), ("n.3", "NodeReady")):
                assert side.call("POST", path, event(name, reason)).code == 201
            marks = b.node_event_marks(side)
            assert side.call("POST", path, event("n.4", "NodeNotReady")).code == 201
            again = side.call("PATCH", f"{path}/n.3", {"count": 2}, content_type="application/merge-patch+json")
            assert again.code == 200
            return [e[1] for e in b._node_events(side, since=marks)], [e[1] for e in b._node_events(side)]

    scoped, everything = await asyncio.to_thread(run)
    assert sorted(scoped) == ["NodeNotReady", "NodeReady"], scoped
    assert sorted(everything) == ["NodeNotReady", "NodeNotSchedulable", "NodeReady", "NodeSchedulable"]


async def test_the_cordon_case_sees_the_python_kubelet_record_both_schedulable_events() -> None:
    """The case the real kubelet judges them by (a cordon held across its status syncs): on the embedded simulator the
    Python kubelet records NodeNotSchedulable while cordoned and NodeSchedulable once uncordoned, each once."""
    import asyncio

    from dragoman.sim.controlplane import differential_behaviour as b

    def run() -> dict:
        with d.embedded_side() as target:
            side = d.Side("embedded", target)
            b.node_joins(side)
            return b.node_cordoned(side)

    seen = await asyncio.to_thread(run)
    assert seen["NodeNotSchedulable recorded while cordoned"] and seen["NodeSchedulable recorded once uncordoned"]
    assert seen["unschedulable after"] is None
    assert sorted(e[1] for e in seen["node events"]) == ["NodeNotSchedulable", "NodeSchedulable"], seen


def test_a_sides_note_reaches_the_report_and_is_never_a_difference() -> None:
    """A case's note (Side.note: a scenario run again after the side's own transient failure) is printed in the
    table and carried by the result, while the observations alone are compared."""

    class _Target:
        server, netloc = "https://127.0.0.1:1", "127.0.0.1:1"

    def case(side: d.Side) -> dict:
        if side.name == "real":
            side.note("noted", "s1 ran again: the scheduler gave up")
        return {"same": 1}

    sides = {n: d.Side(n, _Target()) for n in ("embedded", "real")}  # type: ignore[arg-type]
    result = d.run_corpus(sides, [d.Behaviour("noted", case)])
    assert result.differences == []
    assert result.notes == ["noted on real: s1 ran again: the scheduler gave up"]
    assert "note: noted on real: s1 ran again" in d.table(result, [], {})


async def test_the_cordon_case_waits_out_a_kubelet_that_still_holds_the_drains_cordon() -> None:
    """The drain just before it cordoned and uncordoned the node; when the kubelet's sync caught that cordon it records
    NodeSchedulable only at its next sync, and a cordon before then is one it never sees change. The case waits until
    the kubelet's last word is NodeSchedulable, then judges both events as before (CI failed once without that)."""
    import asyncio

    from dragoman.sim.controlplane import differential_behaviour as b

    def run() -> dict:
        with d.embedded_side() as target:
            side = d.Side("embedded", target)
            b.node_joins(side)
            path = f"/api/v1/nodes/{b.NODE}"

            def cordon(on: bool) -> None:
                body = {"spec": {"unschedulable": True if on else None}}
                side.call("PATCH", path, body, content_type="application/merge-patch+json")

            cordon(True)
            assert side.wait(lambda: b._kubelet_last_said_unschedulable(side), 30)
            cordon(False)  # the drain's uncordon: the case starts before the kubelet's next sync
            return b.node_cordoned(side)

    seen = await asyncio.to_thread(run)
    assert seen["NodeNotSchedulable recorded while cordoned"], seen
    assert seen["NodeSchedulable recorded once uncordoned"], seen


def test_the_kubelet_still_holds_a_cordon_while_its_last_schedulable_event_is_not_schedulable() -> None:
    import types

    from dragoman.sim.controlplane import differential_behaviour as b

    def side(*events: tuple[str, str]) -> object:
        items = [{"reason": r, "lastTimestamp": t} for r, t in events]
        return types.SimpleNamespace(get=lambda path: {"items": items})

    assert not b._kubelet_last_said_unschedulable(side())
    assert b._kubelet_last_said_unschedulable(side(("NodeNotSchedulable", "2026-12-06T13:50:01Z")))
    held = side(("NodeSchedulable", "2026-12-06T13:40:00Z"), ("NodeNotSchedulable", "2026-12-06T13:50:01Z"))
    assert b._kubelet_last_said_unschedulable(held)
    back = side(("NodeNotSchedulable", "2026-12-06T13:50:01Z"), ("NodeSchedulable", "2026-12-06T13:50:11Z"))
    assert not b._kubelet_last_said_unschedulable(back)


async def test_a_real_kubelet_case_waits_for_the_node_to_shed_the_case_befores_marks_or_says_what_was_left(
    monkeypatch,
) -> None:
    """The real-kubelet corpus runs its cases on one node in a fixed order: each case after the join first waits until
    the node is Ready, uncordoned, its kubelet's last word not NodeNotSchedulable and no pod of the cases' namespace
    terminating (b.node_unsettled). A node that settles while the case waits runs the case on a settled node; one that
    does not runs it anyway, with a note saying what was left."""
    import asyncio
    import threading

    from dragoman.sim.controlplane import differential_behaviour as b
    from dragoman.sim.controlplane import differential_kubelets as dk

    monkeypatch.setattr(dk, "SETTLE_BEFORE", 4.0)

    def run() -> tuple:
        with d.embedded_side() as target:
            side = d.Side("embedded", target)
            assert b.node_unsettled(side) == [], "no node yet: nothing to wait for"
            b.node_joins(side)
            assert side.wait(lambda: not b.node_unsettled(side), 30), b.node_unsettled(side)
            path = f"/api/v1/nodes/{b.NODE}"

            def cordon(on: bool) -> None:
                body = {"spec": {"unschedulable": True if on else None}}
                side.call("PATCH", path, body, content_type="application/merge-patch+json")

            cordon(True)
            held = b.node_unsettled(side)
            seen: list = []

            def case(s: d.Side) -> dict:
                seen.append((s.get(path) or {}).get("spec", {}).get("unschedulable"))
                return {}

            threading.Timer(1.0, cordon, (False,)).start()  # an uncordon that lands while the case waits
            dk._settled_first("waits", case)(side)
            cordon(True)
            dk._settled_first("left", case)(side)  # never uncordoned: runs anyway, with a note
            return held, seen, side.notes

    held, seen, notes = await asyncio.to_thread(run)
    assert "cordoned" in held
    assert seen == [None, True], "the first case ran only once the node was uncordoned; the second ran anyway"
    assert len(notes) == 1 and notes[0].startswith("left on embedded: the node had not settled after 4 s: "), notes
    assert "cordoned" in notes[0]
