"""The simulator's event recorders as client-go v0.37.2's record: kube-scheduler's through tools/events
(event_broadcaster.go: events.k8s.io/v1, repeats by the isomorphic key counted in `series`, the 6-minute finish
ticker ending a series), the controllers' and the kubelet's through tools/record (events_cache.go: count, the spam
filter, the aggregation of similar events)."""

from __future__ import annotations

import pytest
from dragoman.sim.clock import Clock
from dragoman.sim.controllers.base import Events, SeriesEvents
from dragoman.sim.controllers.scheduling import truncate_note
from dragoman.sim.store import Store

NS = "ev"


@pytest.fixture
def world():
    store = Store()
    store.load([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}])
    pod = store.create(
        "pods",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": NS},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        },
    )
    clock = Clock(speed=1e-9)  # stands still unless stepped
    store.actor = "kube-scheduler"  # as while the scheduler reconciles
    return store, clock, pod, SeriesEvents(store, clock, "default-scheduler", "default-scheduler-host")


def _events(store: Store) -> list[dict]:
    return store.list("events", NS)


def test_an_event_is_written_in_the_events_k8s_io_shape(world):
    store, _, pod, rec = world
    rec.emit(pod, "Warning", "FailedScheduling", "Scheduling", "0/1 nodes are available")
    (core,) = _events(store)
    assert core["metadata"]["name"].startswith("p.")
    assert (core["reportingComponent"], core["reportingInstance"], core["action"]) == (
        "default-scheduler",
        "default-scheduler-host",
        "Scheduling",
    )
    assert core["source"] == {} and core.get("count") is None and core.get("firstTimestamp") is None
    assert core["eventTime"].endswith("Z") and "." in core["eventTime"]  # MicroTime
    assert core["involvedObject"]["resourceVersion"] == pod["metadata"]["resourceVersion"]
    assert core["metadata"]["managedFields"][0]["apiVersion"] == "events.k8s.io/v1"


def test_repeats_are_a_series_written_at_the_second_and_when_it_ends(world):
    store, clock, pod, rec = world
    for i in range(5):
        # The note is not part of the isomorphic key: a repeat keeps the first note.
        rec.emit(pod, "Warning", "FailedScheduling", "Scheduling", f"attempt {i}")
        clock.step(10)
    (core,) = _events(store)
    assert core["message"] == "attempt 0"
    # Only the 2nd occurrence is written; the 3rd to 5th count in the recorder's cache.
    assert core["series"]["count"] == 2
    # The finish ticker (every 6 minutes from the start) writes the final count once 6 minutes pass quietly.
    clock.step(360)
    rec.tick()
    assert _events(store)[0]["series"]["count"] == 2  # the tick at 360 s: last seen at 40 s, not yet 6 min before
    clock.step(360)
    rec.tick()
    (core,) = _events(store)
    assert core["series"]["count"] == 5 and core["series"]["lastObservedTime"].endswith("Z")
    # The series is over: the next occurrence is a new Event.
    rec.emit(pod, "Warning", "FailedScheduling", "Scheduling", "again")
    assert sorted(e.get("message") for e in _events(store)) == ["again", "attempt 0"]


def test_another_version_of_the_object_or_another_action_is_another_event(world):
    store, _, pod, rec = world
    rec.emit(pod, "Warning", "FailedScheduling", "Scheduling", "m")
    newer = store.patch("pods", NS, "p", {"metadata": {"labels": {"x": "y"}}}, "merge")[0]
    rec.emit(newer, "Warning", "FailedScheduling", "Scheduling", "m")
    rec.emit(newer, "Normal", "Scheduled", "Binding", "Successfully assigned ev/p to n")
    evs = _events(store)
    assert len(evs) == 3 and not any(e.get("series") for e in evs)


def test_a_long_note_is_cut_as_the_scheduler_cuts_it():
    long = "x" * 2000
    assert truncate_note(long) == "x" * 1020 + " ..." and len(truncate_note(long)) == 1024
    assert truncate_note("short") == "short"


# ---- the core recorder (client-go tools/record) of kube-controller-manager's controllers and the kubelet


def test_the_core_recorder_counts_repeats_and_filters_a_burst(world):
    store, clock, pod, _ = world
    rec = Events(store, clock, "kubelet", "node-1")
    for _ in range(30):
        rec.emit(pod, "Warning", "BackOff", "Back-off restarting failed container")
    (core,) = _events(store)
    assert core["source"] == {"component": "kubelet", "host": "node-1"} and core["reportingInstance"] == "node-1"
    # 25 at once (the spam filter's burst); the 5 after it are dropped, though counted.
    assert core["count"] == 25
    clock.step(300)  # one token back
    rec.emit(pod, "Warning", "BackOff", "Back-off restarting failed container")
    assert _events(store)[0]["count"] == 31


def test_the_core_recorder_combines_ten_messages_of_one_reason(world):
    store, clock, pod, _ = world
    rec = Events(store, clock, "replicaset-controller")
    for i in range(12):
        rec.emit(pod, "Warning", "FailedCreate", f"attempt {i} refused")
        clock.step(1)
    evs = _events(store)
    assert sorted(e["message"] for e in evs if not e["message"].startswith("(combined"))[:2] == [
        "attempt 0 refused",
        "attempt 1 refused",
    ]
    (combined,) = [e for e in evs if e["message"].startswith("(combined from similar events): ")]
    # The 10th to 12th are one Event, counted, showing the latest message.
    assert combined["message"] == "(combined from similar events): attempt 11 refused" and combined["count"] == 3
    assert len(evs) == 10
