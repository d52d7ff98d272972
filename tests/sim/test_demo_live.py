"""The demo in a running simulator: starting every controller on it writes only what its transient cases must change."""

from __future__ import annotations

import asyncio
import functools
import re
import time

from dragoman.sim.controllers import default_controllers
from dragoman.sim.scenarios import TRANSIENT_FINDINGS, demo_marks, load_scenario
from dragoman.sim.scenarios.demo_build import LIVE_CHURN_FINDINGS, LIVE_REWRITTEN_VERDICTS

from tests.support.sim import running_simulator

SPEED = 20.0
MIN_SIM_SECONDS = 30.0  # the first seconds of a start: every pending pod tried, the stale claim replaced
WALL_TIMEOUT = 120.0  # generous: two loaded cores


@functools.cache
def _demo() -> tuple[dict, ...]:
    return tuple(load_scenario("demo"))


@functools.cache
def _start():
    """When the demo's clock starts (its SimulatorConfig startTime): the ages its stories are written for."""
    from dragoman.sim import scenario as scenario_mod

    return scenario_mod.load("demo").start


def _ref(obj: dict) -> tuple[str, str, str]:
    md = obj["metadata"]
    return obj["kind"], md.get("namespace", ""), md["name"]


def _labels_match(selector: dict, labels: dict) -> bool:
    return all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())


def _allowed(objs: list[dict]) -> set[tuple[str, str, str]]:
    """The objects a start may rewrite: those marked with a transient or churning finding, and what follows from them
    (a pod's generated claims, owners and budgets; a flapping node's daemon pods and their DaemonSets)."""
    marks = demo_marks(objs)
    allowed = {ref for fid in TRANSIENT_FINDINGS | LIVE_CHURN_FINDINGS for ref in marks.get(fid, ())}
    by_ref = {_ref(o): o for o in objs}
    nodes = {name for kind, _, name in allowed if kind == "Node"}
    for o in objs:
        if (
            o["kind"] == "Pod"
            and o["spec"].get("nodeName") in nodes
            and any(r["kind"] == "DaemonSet" for r in o["metadata"].get("ownerReferences", ()))
        ):
            allowed.add(_ref(o))
    for kind, ns, name in list(allowed):
        if kind != "Pod":
            continue
        pod = by_ref[(kind, ns, name)]
        todo = list(pod["metadata"].get("ownerReferences", ()))
        while todo:
            ref = todo.pop()
            allowed.add((ref["kind"], ns, ref["name"]))
            todo.extend(
                (by_ref.get((ref["kind"], ns, ref["name"])) or {"metadata": {}})["metadata"].get("ownerReferences", ())
            )
        for o in objs:
            if (
                o["kind"] == "PodDisruptionBudget"
                and o["metadata"]["namespace"] == ns
                and _labels_match(o["spec"]["selector"], pod["metadata"].get("labels", {}))
            ):
                allowed.add(_ref(o))
    return allowed


def _is_allowed(ref: tuple[str, str, str], obj: dict, allowed: set, pending: set) -> bool:
    kind, ns, name = ref
    if ref in allowed:
        return True
    if kind == "Lease" and ns == "kube-node-lease":
        return True  # a kubelet's heartbeat: every running node renews its Lease
    if kind == "ResourceClaim" and any(
        name.startswith(p + "-extended-resources-") for k, pns, p in allowed if k == "Pod" and pns == ns
    ):
        return True  # a bridge claim the scheduler made for a transient pod
    if kind == "Event":
        inv = obj.get("involvedObject") or {}
        about = (inv.get("kind", ""), inv.get("namespace", ""), inv.get("name", ""))
        # A restarted scheduler tries every pending pod and reports each attempt, as kube-scheduler does.
        return about in allowed or (about in pending and obj.get("reason") == "FailedScheduling")
    return False


async def _start_and_record(objs: list[dict]) -> tuple[list[tuple], list[dict]]:
    """Start the demo with every controller; record each committed write until the start has played out."""
    # kube-scheduler's PreEnqueue keeps a pod whose claim does not exist (or cannot be made) out of its queue: no
    # attempt, no event.
    unqueued = {ref for fid in ("claim-missing", "admin-access-forbidden") for ref in demo_marks(objs).get(fid, ())}
    pending = {
        _ref(o)
        for o in objs
        if o["kind"] == "Pod" and not o["spec"].get("nodeName") and o["status"].get("phase") == "Pending"
    } - unqueued
    stale = {ref for ref in demo_marks(objs)["stale-bridge-claim"] if ref[0] == "Pod"}
    writes: list[tuple] = []
    async with running_simulator(objects=[dict(o) for o in objs], speed=SPEED, start=_start()) as sim:
        sim.store.subscribe(lambda etype, resource, obj, old: writes.append((etype, resource, _ref(obj), obj)))
        start = sim.clock.seconds()
        for c in default_controllers(sim):
            sim.add_controller(c)
        deadline = time.monotonic() + WALL_TIMEOUT
        while time.monotonic() < deadline:
            await asyncio.sleep(0.25)
            tried = {
                (
                    o["involvedObject"].get("kind", ""),
                    o["involvedObject"].get("namespace", ""),
                    o["involvedObject"]["name"],
                )
                for _, _, ref, o in writes
                if ref[0] == "Event" and o.get("reportingComponent") == "default-scheduler"
            }
            bound = all(
                (sim.store.get("pods", ns, name) or {}).get("status", {}).get("phase") == "Running"
                for _, ns, name in stale
            )
            if pending <= tried and bound and sim.clock.seconds() - start >= MIN_SIM_SECONDS:
                break
        else:
            raise AssertionError(
                f"the demo start did not play out in {WALL_TIMEOUT:.0f}s: untried {sorted(pending - tried)}"
            )
        live = [o for key in sim.store.counts() for o in sim.store.list(key)]
    return writes, live


async def test_a_demo_start_writes_only_what_its_transient_cases_change() -> None:
    """Every write of the first seconds belongs to a transient or churning case (or is the scheduler's report of a
    retried pending pod), and every pending pod keeps its pinned PodScheduled condition: the pinned verdicts are the
    live scheduler's words. The quota-blocked pod's differs only in the claim name generated for the attempt."""
    objs = list(_demo())
    marks = demo_marks(objs)
    allowed = _allowed(objs)
    # kube-scheduler's PreEnqueue keeps a pod whose claim does not exist (or cannot be made) out of its queue: no
    # attempt, no event.
    unqueued = {ref for fid in ("claim-missing", "admin-access-forbidden") for ref in demo_marks(objs).get(fid, ())}
    pending = {
        _ref(o)
        for o in objs
        if o["kind"] == "Pod" and not o["spec"].get("nodeName") and o["status"].get("phase") == "Pending"
    } - unqueued
    writes, live = await _start_and_record(objs)

    outside = sorted(
        {
            f"{etype} {ref[0]} {ref[1]}/{ref[2]}"
            + (f" ({obj.get('reason')} about {obj['involvedObject']['name']})" if ref[0] == "Event" else "")
            for etype, _, ref, obj in writes
            if not _is_allowed(ref, obj, allowed, pending)
        }
    )
    assert outside == [], f"{len(outside)} writes at demo start outside the transient cases: " + "; ".join(outside)
    # Not vacuous: the scheduler did try the pending pods, and the transient case did move.
    assert sum(1 for _, _, ref, _ in writes if ref[0] == "Event") >= len(pending)
    assert any(ref in allowed and ref[0] == "Pod" for _, _, ref, _ in writes)

    live_by_ref = {_ref(o): o for o in live}
    quota_pods = {ref for ref in marks["quota-blocks-claim"] if ref[0] == "Pod"}
    strip = functools.partial(re.sub, r'-extended-resources-[a-z0-9]{5}"', '-extended-resources-?"')
    checked = 0
    lacked = {ref for fid in LIVE_REWRITTEN_VERDICTS for ref in marks.get(fid, ())}
    for ref in sorted(pending - set(marks["stale-bridge-claim"]) - lacked):
        pod = next(o for o in objs if _ref(o) == ref)
        if not any(c["type"] == "PodScheduled" for c in pod["status"].get("conditions") or ()):
            continue  # waiting in PreBind for its devices' binding conditions: no verdict written
        (pinned,) = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
        (now,) = [c for c in live_by_ref[ref]["status"]["conditions"] if c["type"] == "PodScheduled"]
        if ref in quota_pods:
            assert strip(now["message"]) == strip(pinned["message"]), (ref, now["message"], pinned["message"])
            assert (now["reason"], now["lastTransitionTime"]) == (pinned["reason"], pinned["lastTransitionTime"])
        else:
            assert now == pinned, (ref, now["message"], pinned["message"])
        checked += 1
    assert checked >= 5


async def test_binding_failed_and_filter_timeout_are_read_on_every_look_at_a_running_demo() -> None:
    """The two stories a running scheduler moves past (LIVE_REWRITTEN_VERDICTS) keep their findings on every look:
    the fabric's manager fails each attach of allgather's device again and the scheduler deallocates and retries
    (binding-failed from the claim's failure condition or the scheduler's FailedScheduling Events), and sweep-nvlink's
    search ends in time now (filter-timeout from the Events of the attempts that timed out). The looks span the
    retries, one past the 600 s binding timeout of the other fabric pod."""
    from dragoman.fleet.diagnose import diagnose
    from dragoman.fleet.model import FleetModel

    objs = list(_demo())
    marks = demo_marks(objs)
    want = {(fid, ref) for fid in LIVE_REWRITTEN_VERDICTS for ref in marks[fid] if ref[0] == "Pod"}
    assert {fid for fid, _ in want} == set(LIVE_REWRITTEN_VERDICTS)
    seen_claims: list[dict] = []
    seen_conditions: list[str] = []
    async with running_simulator(objects=[dict(o) for o in objs], speed=SPEED, start=_start()) as sim:
        for c in default_controllers(sim):
            sim.add_controller(c)
        start = sim.clock.seconds()
        for at in (15.0, 45.0, 120.0, 640.0):
            deadline = time.monotonic() + WALL_TIMEOUT
            while sim.clock.seconds() - start < at:
                assert time.monotonic() < deadline, f"the simulated clock did not reach {at:.0f} s"
                await asyncio.sleep(0.25)
            live = [o for key in sim.store.counts() for o in sim.store.list(key)]
            m = FleetModel(None)
            m.load_list(live)
            found = {(f.id, ref) for f in diagnose(m) for ref in f.objects if ref[0] == "Pod"}
            assert want <= found, (at, sorted(want - found))
            for fid, (_, ns, name) in want:
                if fid == "binding-failed":
                    seen_claims.append(sim.store.get("resourceclaims.resource.k8s.io", ns, name) or {})
                else:
                    pod = sim.store.get("pods", ns, name) or {}
                    seen_conditions += [
                        c.get("message", "")
                        for c in pod.get("status", {}).get("conditions") or ()
                        if c["type"] == "PodScheduled"
                    ]
    # Not vacuous: the scheduler did move past both stories. The failed claim was deallocated and allocated again
    # (a new allocation time), and the timeout pod's condition is the scheduler's own verdict now.
    pinned = next(o for o in objs if o["kind"] == "ResourceClaim" and o["metadata"]["name"] == "allgather")
    stamps = {((c.get("status") or {}).get("allocation") or {}).get("allocationTimestamp") for c in seen_claims}
    assert stamps - {pinned["status"]["allocation"]["allocationTimestamp"], None}
    assert seen_conditions and "timed out" not in seen_conditions[-1]


async def _allreduce_after(sim_seconds: float, *, real_time: bool) -> tuple[list[str], str | None]:
    """The scheduler's FailedScheduling messages for allreduce and its claim's allocation time, `sim_seconds` into a
    live demo whose clock starts where the scenario says (or now, `real_time`)."""
    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.server import Simulator

    sc = scenario_mod.load("demo")
    start = Simulator.from_scenario(sc, real_time=real_time).clock.now()
    async with running_simulator(objects=sc.objects, users=sc.users, speed=SPEED, start=start) as sim:
        for c in default_controllers(sim):
            sim.add_controller(c)
        t0 = sim.clock.seconds()
        deadline = time.monotonic() + WALL_TIMEOUT
        while sim.clock.seconds() - t0 < sim_seconds:
            assert time.monotonic() < deadline, f"the simulated clock did not reach {sim_seconds:.0f} s"
            await asyncio.sleep(0.25)
        said = [
            str(e.get("note") or e.get("message") or "")
            for key in ("events", "events.events.k8s.io")
            if key in sim.store.counts()
            for e in sim.store.list(key)
            if (e.get("regarding") or e.get("involvedObject") or {}).get("name") == "allreduce"
            and e.get("reason") == "FailedScheduling"
        ]
        claim = sim.store.get("resourceclaims.resource.k8s.io", "dra-lab", "allreduce") or {}
        return said, ((claim.get("status") or {}).get("allocation") or {}).get("allocationTimestamp")


async def test_a_live_demo_meets_the_fabric_attach_waiting_as_check_reads_it() -> None:
    """The demo's clock starts at its snapshot (SimulatorConfig startTime): allreduce's attach, allocated two minutes
    before it, is still waiting a minute into a live demo, as `check --demo` reads it (binding-pending). Started at
    the wall's now instead, as before, the scheduler's first look finds the allocation days past its 600 s binding
    timeout: the claim is "not available on the node" (v1.37.2 Filter, isClaimTimeout), PostFilter deallocates it and
    allocates it again, maybe to the fabric device whose attach fails (the binding-failed the live TUI showed and
    check did not)."""
    pinned = next(o for o in _demo() if o["kind"] == "ResourceClaim" and o["metadata"]["name"] == "allreduce")
    allocated = pinned["status"]["allocation"]["allocationTimestamp"]

    said, now_stamp = await _allreduce_after(60.0, real_time=False)
    assert not [m for m in said if "deallocation of ResourceClaim" in m], said
    assert now_stamp == allocated

    said, then_stamp = await _allreduce_after(60.0, real_time=True)
    assert [m for m in said if "deallocation of ResourceClaim" in m], said
    assert then_stamp != allocated
