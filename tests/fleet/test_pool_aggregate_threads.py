"""A pool's aggregate is read by two threads at once: the TUI's diagnosis thread (tui/feed.py runs diagnose in
asyncio.to_thread) and the UI thread rendering Pools. Reading settles the nodes marked dirty, so it must be
serialized: the second reader arriving while the first is half-way must neither crash nor count a node twice."""

from __future__ import annotations

import threading

from dragoman.fleet.model import FleetModel
from fleet_fixtures import dp_fleet, model_of

POOL = "l4-pool"  # dp_fleet's pool


def _fresh_view(objs: list[dict]):
    return model_of(*objs).pool(POOL)


def test_a_second_reader_while_the_first_settles_the_pool_gets_the_same_counts_and_no_error() -> None:
    objs = dp_fleet(4)
    m: FleetModel = model_of(*objs)
    agg = m._pools[POOL]
    for node in list(agg.members):
        agg.mark(node)  # a watch batch touched every node: the next read settles them all
    first_call = threading.Event()
    second_started = threading.Event()
    errors: list[BaseException] = []
    views = []

    def slow_node_view(name: str):
        # The first reader pauses inside its walk over the dirty nodes, long enough for a second reader to run all
        # the way through if nothing keeps it out.
        if not first_call.is_set():
            first_call.set()
            second_started.wait(2.0)
            threading.Event().wait(0.3)
        return m.node(name)

    def read(node_view) -> None:
        try:
            views.append(agg.view(node_view))
        except BaseException as exc:  # noqa: BLE001 - the assertion below reports it
            errors.append(exc)

    a = threading.Thread(target=read, args=(slow_node_view,))
    a.start()
    assert first_call.wait(5.0)
    b = threading.Thread(target=read, args=(m.node,))
    b.start()
    second_started.set()
    a.join(10)
    b.join(10)
    assert not errors, errors
    want = _fresh_view(objs)
    assert len(views) == 2
    for v in views:
        assert (v.allocatable_gpus, v.capacity_gpus, v.nodes, v.ownership_counts) == (
            want.allocatable_gpus,
            want.capacity_gpus,
            want.nodes,
            want.ownership_counts,
        )
