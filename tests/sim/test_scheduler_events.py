"""kube-scheduler's events as client-go tools/events v0.37.2 records them (event_broadcaster.go): written through
events.k8s.io/v1, repeats by the isomorphic key counted in `series`, the 6-minute finish ticker ending a series."""

from __future__ import annotations

import pytest
from dragoman.sim.clock import Clock
from dragoman.sim.controllers.base import SeriesEvents
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
