"""DRASchedulerFilterTimeout as kube-scheduler v1.37.2 runs it (dynamicresources.go Filter, allocateOne's ctx check):
each node's Allocate gets `filterTimeout` (10 s by default); a search past it aborts the attempt with an Error status,
"running "DynamicResources" filter plugin: node N: timed out trying to allocate devices" (reason SchedulerError, the
pod retried with backoff), which the diagnosis reads as filter-timeout. Time is a fake clock that advances one second
each time it is read, so a search's length in allocateOne calls decides, not the machine's speed."""

from __future__ import annotations

import itertools

import pytest
from dragoman.fleet.diagnose.devices import FILTER_TIMEOUT
from dragoman.fleet.k8s import allocator as allocator_mod
from dragoman.fleet.k8s.allocator import FILTER_TIMEOUT_SECONDS, AllocatedState, AllocationTimeout, Allocator, Inventory
from dragoman.sim.controllers import scheduling
from dragoman.sim.controllers.scheduling import ClusterView, schedule_one
from scheduler_fixtures import GPU_CLASS_SELECTOR, claim, device_class, exactly, gpu_device, gpu_pod, gpu_slice, node

NOW = "2026-11-30T12:00:00Z"
NUMA = "gpu.nvidia.com/numa"


class _Clock:
    """time.monotonic() that moves one second per reading."""

    def __init__(self) -> None:
        self._t = itertools.count(1000)

    def monotonic(self) -> float:
        return float(next(self._t))


@pytest.fixture
def clock(monkeypatch) -> _Clock:
    c = _Clock()
    monkeypatch.setattr(allocator_mod, "time", c)
    monkeypatch.setattr(scheduling, "time", c)
    return c


def _slice() -> dict:
    # Eight GPUs on three NUMA nodes: four GPUs on distinct NUMA nodes do not exist, which only a search finds.
    return gpu_slice("gpu-1", devices=[gpu_device("gpu-1", i, extra={NUMA: {"int": i % 3}}) for i in range(8)])


def _claim(count: int, distinct: bool) -> dict:
    cons = [{"requests": ["gpus"], "distinctAttribute": NUMA}] if distinct else None
    return claim("sweep", [exactly("gpus", count=count)], constraints=cons)


CASES = {
    # (claim, filter timeout) -> (outcome, condition reason, words in the message)
    "a short search binds": (
        _claim(1, False),
        FILTER_TIMEOUT_SECONDS,
        ("scheduled", None, ""),
    ),
    "a long search past the timeout aborts the attempt": (
        _claim(4, True),
        FILTER_TIMEOUT_SECONDS,
        (
            "error",
            "SchedulerError",
            'running "DynamicResources" filter plugin: node gpu-1: timed out trying to allocate devices',
        ),
    ),
    "the same search with the timeout off ends unschedulable": (
        _claim(4, True),
        0,
        ("unschedulable", "Unschedulable", "1 cannot allocate all claims"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_filter_timeout(case, clock) -> None:
    c, timeout, (outcome, reason, words) = CASES[case]
    pod = gpu_pod("sweep", 0, claims=[{"name": "gpus", "resourceClaimName": "sweep"}])
    view = ClusterView(
        nodes=[node("gpu-1")],
        deviceclasses=[device_class("gpu.nvidia.com", selectors=[GPU_CLASS_SELECTOR])],
        resourceslices=[_slice()],
        resourceclaims=[c],
        pods=[pod],
        filter_timeout=timeout,
    )
    dec = schedule_one(pod, view, NOW)
    assert dec.outcome == outcome, dec.message
    if reason is not None:
        assert dec.condition["reason"] == reason and words in dec.message, dec.message
        assert dec.is_error == (outcome == "error")
        # The diagnosis knows the scheduler's words for a timeout, and only those.
        assert (FILTER_TIMEOUT in dec.message) == (outcome == "error")


def test_the_allocator_stops_at_its_deadline_on_its_first_step() -> None:
    a = Allocator(Inventory([_slice()]), AllocatedState(), {"gpu.nvidia.com": device_class("gpu.nvidia.com")})
    with pytest.raises(AllocationTimeout, match="context deadline exceeded"):
        a.allocate(node("gpu-1"), [_claim(1, False)], deadline=0.0)
    assert a.allocate_one_calls == 1
    assert a.allocate(node("gpu-1"), [_claim(1, False)]).allocations is not None
