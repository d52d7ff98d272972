"""A write whose answer is lost (or that the server fails) is read again and tried again under the same write id."""

from __future__ import annotations

import pathlib

from migrate_support import L4, assert_one_intent_one_outcome, audit_records, base_args, cli, demo, evictions

CD = ("--step", "cordon", "--step", "drain")


async def test_lost_answers_and_5xx_on_writes_neither_repeat_a_write_nor_end_the_run(
    tmp_path: pathlib.Path, capsys
) -> None:
    async with demo() as sim:
        # 30% of node patches and pod evictions are made but answered 500; 10% fail before being made.
        sim.faults.set(
            "lost-answer=0.3 resources=nodes,pods; error=0.1 code=503 verbs=patch,create resources=nodes,pods; seed=5"
        )
        rc = await cli(base_args(sim, tmp_path, L4, *CD, "--yes"))
        out, err = capsys.readouterr()
        sim.faults.clear()
        assert rc == 0, out[-2000:] + err
        nodes = [
            e.obj
            for e in sim.store.entries("nodes")
            if e.obj["metadata"]["labels"].get("cloud.google.com/gke-nodepool") == L4
        ]
        assert len(nodes) == 3 and all(n["spec"].get("unschedulable") for n in nodes)
        lost = [r for r in sim.request_log if r.lost_answer and not r.dry_run]
        assert len(lost) >= 2  # the faults fired on real writes
        # Each eviction was made once, even those whose answer was lost; each write key has one id, one intent, one
        # outcome.
        ev = evictions(sim)
        assert len(ev) == 6 and set(ev.values()) == {1}, ev
        counts = assert_one_intent_one_outcome(audit_records(tmp_path))
        assert len(counts) == 3 + 6
        outcomes = [r for r in audit_records(tmp_path) if r["record"] == "outcome"]
        assert {r["result"] for r in outcomes} == {"applied"}
        # A lost answer is recorded as made once the re-read shows it (not as a failure).
        assert any(r.get("observedOnResume") or r.get("observed_on_resume") for r in outcomes)
