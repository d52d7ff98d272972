"""The diagnosis on the machine's other core: a forked child computes it from the model as it stood, the UI's process
goes on absorbing changes meanwhile, and a child that fails or never answers is said so (or replaced by a thread)."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest
from dragoman.fleet.diagnose import diagnose
from dragoman.fleet.forked import ChildUnavailable
from dragoman.fleet.store import LIVE, FleetStore
from dragoman.sim.scenarios.scale import generate_scale
from dragoman.tui import feed as feed_mod
from dragoman.tui.feed import Feed, SourceInfo
from dragoman.tui.offload import CHILD_TIMEOUT, in_child_process

from tests.tui.test_feed_load import _by_kind, _until

pytestmark = pytest.mark.skipif(not feed_mod.DIAGNOSE_IN_CHILD, reason="forks only on Linux")


async def test_the_work_runs_in_another_process_and_its_answer_comes_back() -> None:
    pid, answer = await in_child_process(lambda: (os.getpid(), {"findings": [1, 2, 3]}))
    assert pid != os.getpid()
    assert answer == {"findings": [1, 2, 3]}


async def test_the_child_works_on_the_objects_as_they_were_when_it_started() -> None:
    state = {"n": 1}

    def slow():
        time.sleep(0.3)
        return state["n"]

    task = asyncio.ensure_future(in_child_process(slow))
    await asyncio.sleep(0.05)  # forked by now
    state["n"] = 2  # changed here while the child works: not seen there
    assert await task == 1


async def test_an_error_in_the_child_is_raised_with_its_traceback() -> None:
    def broken():
        raise KeyError("no such pool")

    with pytest.raises(RuntimeError, match="KeyError: 'no such pool'"):
        await in_child_process(broken)


async def test_a_child_that_never_answers_is_killed() -> None:
    pids = []

    def hang():
        time.sleep(60)

    real_fork = os.fork

    def fork():
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    os.fork = fork
    try:
        with pytest.raises(ChildUnavailable, match="no answer"):
            await in_child_process(hang, timeout=0.5)
    finally:
        os.fork = real_fork
    await _until(lambda: not os.path.exists(f"/proc/{pids[0]}"), 10)


async def test_the_feeds_diagnosis_is_the_in_process_one_and_changes_flow_while_it_runs(monkeypatch) -> None:
    store = FleetStore()
    by_kind = _by_kind(generate_scale(nodes=40, pods=200, pending=5))
    seen = {}
    real = feed_mod.in_child_process

    async def spy(fn, timeout=CHILD_TIMEOUT):
        seen["busy"] = feed._busy  # the model is not held while the child diagnoses
        seen["pid"] = os.getpid()
        return await real(lambda: (os.getpid(), fn()), timeout)

    async def unwrap(fn, timeout=CHILD_TIMEOUT):
        pid, result = await spy(fn, timeout)
        seen["child"] = pid
        return result

    monkeypatch.setattr(feed_mod, "in_child_process", unwrap)
    feed = Feed(store, SourceInfo(cluster="t"))
    feed.start()
    for kind, objs in by_kind.items():
        store.replace(kind, objs)
        store.set_state(kind, LIVE, synced=True)
    await _until(lambda: feed.fleet.diagnosed)
    assert seen["busy"] is False and seen["child"] != seen["pid"]
    expected = diagnose(feed.model)
    assert expected, "a fleet with pending pods has findings: an empty list proves nothing"
    assert [f.key for f in feed.fleet.findings] == [f.key for f in expected]
    assert feed.fleet.catalogue == feed.model.attribute_catalogue()
    await feed.stop()


async def test_without_a_child_the_diagnosis_runs_in_a_thread(monkeypatch) -> None:
    async def unavailable(fn, timeout=CHILD_TIMEOUT):
        raise ChildUnavailable("test")

    monkeypatch.setattr(feed_mod, "in_child_process", unavailable)
    store = FleetStore()
    feed = Feed(store, SourceInfo(cluster="t"))
    feed.start()
    for kind, objs in _by_kind(generate_scale(nodes=20, pods=100, pending=5)).items():
        store.replace(kind, objs)
        store.set_state(kind, LIVE, synced=True)
    await _until(lambda: feed.fleet.diagnosed)
    assert [f.key for f in feed.fleet.findings] == [f.key for f in diagnose(feed.model)]
    await feed.stop()


class _HeldOpen:
    """A Feed on a generated fleet whose model method `name` waits for `gate` when called: which thread called it,
    and what the feed told a screen meanwhile."""

    def __init__(self, monkeypatch, name: str) -> None:
        self.store = FleetStore()
        self.feed = Feed(self.store, SourceInfo(cluster="t"))
        self.gate = threading.Event()
        self.called_in: list[str] = []
        self.told: list[str] = []
        self.real = getattr(self.feed.model, name)

        def held_open():
            self.called_in.append(threading.current_thread().name)
            self.gate.wait(20)
            return self.real()

        monkeypatch.setattr(self.feed.model, name, held_open)
        self.feed.listen(self)

    def post_message(self, message) -> None:
        self.told.append(type(message).__name__)

    async def start(self) -> None:
        self.feed.start()
        for kind, objs in _by_kind(generate_scale(nodes=40, pods=200, pending=5)).items():
            self.store.replace(kind, objs)
            self.store.set_state(kind, LIVE, synced=True)
        await _until(lambda: self.called_in)

    def change_a_node(self) -> str:
        """A Node change arriving now; its name."""
        node = dict(next(iter(self.store.objects("Node").values())))
        node["metadata"] = {**node["metadata"], "labels": {**(node["metadata"].get("labels") or {}), "seen": "yes"}}
        self.store.apply("Node", "MODIFIED", node)
        return node["metadata"]["name"]

    def seen(self, name: str) -> bool:
        return self.feed.model.objects["Node"][("", name)]["metadata"]["labels"].get("seen") == "yes"


async def _loop_turns(n: int = 5) -> int:
    turns = 0
    for _ in range(n):
        await asyncio.sleep(0.01)
        turns += 1
    return turns


async def test_the_catalogue_is_made_in_a_thread_while_the_loop_runs_and_changes_wait_for_it(monkeypatch) -> None:
    # 0.4-0.6 s at 40,000 devices: made on the loop, it froze the screen that long on every slice change.
    held = _HeldOpen(monkeypatch, "attribute_catalogue")
    feed = held.feed
    await held.start()
    assert held.called_in == ["dragoman-catalogue"], "made in its thread, not on the loop"
    # The loop is free meanwhile (this test runs on it); a change arriving now waits for the catalogue.
    turns = await _loop_turns()
    name = held.change_a_node()
    assert not held.seen(name), "held while it reads"
    held.gate.set()
    await _until(lambda: feed.fleet.diagnosed and feed.fleet.catalogue is not None)
    assert turns == 5 and feed.fleet.catalogue == held.real()
    await _until(lambda: held.seen(name))
    await feed.stop()


async def test_the_node_and_pool_views_are_built_in_a_thread_before_the_screens_are_told(monkeypatch) -> None:
    # On the loop, the Pools screen's first row settled every pool: ~1 s frozen at 5,000 nodes. Built first, in a
    # thread, the rows are read from them, and the first diagnosis's child inherits them.
    held = _HeldOpen(monkeypatch, "pools")
    feed = held.feed
    await held.start()
    assert held.called_in == ["dragoman-views"], "built in its thread, not on the loop"
    assert await _loop_turns() == 5, "the loop runs meanwhile"
    assert "FleetLoaded" not in held.told and not feed.fleet.diagnosed, "nothing reads the views before they are built"
    name = held.change_a_node()
    assert not held.seen(name), "held while it reads"
    held.gate.set()
    await _until(lambda: "FleetLoaded" in held.told and feed.fleet.diagnosed)
    await _until(lambda: held.seen(name))
    assert len(feed.model._node_cache) >= 39, "the views built in the thread are the model's (one node changed since)"
    await feed.stop()
