"""A `dragoman migrate` process killed at every step boundary and in the middle of the drain, then resumed: each write
made once."""

from __future__ import annotations

import json
import pathlib

import pytest
from migrate_support import L4, assert_one_intent_one_outcome, audit_records, base_args, cli_process, demo, evictions

# These tests are about cordon and drain; the default plan is now the whole switch.
CD = ("--step", "cordon", "--step", "drain")

CRASH_POINTS = [
    "after:preflight",  # boundary preflight -> cordon
    "cordon:2:sent",  # the second node cordoned, its outcome not yet recorded
    "after:cordon",  # boundary cordon -> drain
    "evict:1:intent",  # the first eviction's intent recorded, the eviction not sent
    "evict:3:sent",  # the middle of the drain: the third eviction made, its outcome not recorded
    "after:drain",  # the last boundary: every write made, the run not finished
]


@pytest.mark.parametrize("point", CRASH_POINTS)
async def test_killed_run_resumes_without_repeating_a_write(tmp_path: pathlib.Path, point: str) -> None:
    async with demo() as sim:
        args = base_args(sim, tmp_path, L4, *CD, "--yes", "--drain-concurrency", "2")
        rc, out, err = await cli_process(args, env={"DRAGOMAN_CRASH_AT": point})
        assert rc == 97, (out, err)  # the crash point fired
        rc, out, err = await cli_process(args)
        assert rc == 0, (out, err)
        if point not in ("after:preflight",):
            assert "taking its lock over" in err  # the dead run's lease on this machine
        # The cluster ends migrated, every pod evicted exactly once (the server's own log).
        nodes = [
            e.obj
            for e in sim.store.entries("nodes")
            if e.obj["metadata"]["labels"].get("cloud.google.com/gke-nodepool") == L4
        ]
        assert all(n["spec"].get("unschedulable") for n in nodes)
        ev = evictions(sim)
        assert len(ev) == 6 and set(ev.values()) == {1}, ev
        # One intent and one outcome per write: 3 cordons, 6 evictions, none written twice.
        records = audit_records(tmp_path)
        counts = assert_one_intent_one_outcome(records)
        assert sum(1 for k in counts if "/cordon/" in k) == 3
        assert sum(1 for k in counts if "/drain/" in k) == 6
        if point.endswith(":sent"):
            assert any(r.get("observedOnResume") for r in records if r["record"] == "outcome")
        state = json.loads(sim.store.get_ref("configmaps", "kube-system", f"dragoman-pool-{L4}")["data"]["state.json"])
        assert state["status"] == "done"
        if point != "evict:3:sent":
            return
        # A third run finds nothing to do and writes nothing.
        sim.request_log.clear()
        rc, out, err = await cli_process(args)
        assert rc == 0 and "nothing to do" in out
        assert sim.request_log.writes() == []


async def test_resume_against_a_copied_state_of_another_cluster_is_refused(tmp_path: pathlib.Path) -> None:
    async with demo() as sim:
        args = base_args(sim, tmp_path, L4, "--yes", "--step", "cordon")
        rc, out, err = await cli_process(args, env={"DRAGOMAN_CRASH_AT": "cordon:1:sent"})
        assert rc == 97
        cm = sim.store.get_ref("configmaps", "kube-system", f"dragoman-pool-{L4}")
        state = json.loads(cm["data"]["state.json"])
        state["cluster"]["kubeSystemUID"] = "uid-of-the-cluster-this-was-copied-from"
        new = json.loads(json.dumps(cm))
        new["data"]["state.json"] = json.dumps(state)
        sim.store.update("configmaps", new, check_rv=False)
        sim.request_log.clear()
        rc, out, err = await cli_process(args)
        assert rc == 3 and "written by another cluster" in err
        assert sim.request_log.writes() == []


async def test_a_rollback_killed_after_its_last_step_is_finished_by_the_next_run(tmp_path: pathlib.Path) -> None:
    async with demo() as sim:
        rc, out, err = await cli_process(base_args(sim, tmp_path, L4, "--step", "cordon", "--yes"))
        assert rc == 0, (out, err)
        back = base_args(sim, tmp_path, L4, "--rollback", "--yes")
        rc, out, err = await cli_process(back, env={"DRAGOMAN_CRASH_AT": "after:rollback:cordon"})
        assert rc == 97, (out, err)
        state = json.loads(sim.store.get_ref("configmaps", "kube-system", f"dragoman-pool-{L4}")["data"]["state.json"])
        assert state["status"] == "running"  # every node uncordoned, the run killed before it could say so
        rc, out, err = await cli_process(back)
        assert rc == 0, (out, err)
        state = json.loads(sim.store.get_ref("configmaps", "kube-system", f"dragoman-pool-{L4}")["data"]["state.json"])
        assert state["status"] == "rolled-back"
        nodes = [
            e.obj
            for e in sim.store.entries("nodes")
            if e.obj["metadata"]["labels"].get("cloud.google.com/gke-nodepool") == L4
        ]
        assert not any(n["spec"].get("unschedulable") for n in nodes)
        assert_one_intent_one_outcome(audit_records(tmp_path))
