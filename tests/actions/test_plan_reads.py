"""A plan reads the pool's picture once (actions/steps.py: Context.reading_once): every step's plan and the preflight
share it while nothing is written, the plan is exactly the one built with every step reading for itself, and a step
that applies reads the cluster afresh."""

from __future__ import annotations

import contextlib
import pathlib

import pytest
from dragoman.actions import picture
from dragoman.actions.runner import Runner
from dragoman.actions.steps import Context
from dragoman.fleet.cluster import connect

from tests.actions.migrate_support import L4, demo


def _full_pod_lists(sim) -> int:
    return sum(
        1
        for r in sim.request_log
        if r.method == "GET" and r.path == "/api/v1/pods" and "watch" not in r.query and "fieldSelector" not in r.query
    )


async def _plan(sim, tmp: pathlib.Path) -> dict:
    cluster = await connect(str(sim.kubeconfig_path), None)
    try:
        runner = Runner(cluster, L4, audit_path=str(tmp / "audit.jsonl"))
        plan = await runner.prepare()
    finally:
        await cluster.close()
    out = plan.to_json()
    out.pop("createdAt", None)
    return out


async def test_a_plan_lists_every_pod_once_and_is_the_plan_of_unshared_reads(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with demo() as sim:
        shared = await _plan(sim, tmp_path)
        assert _full_pod_lists(sim) == 1  # the picture's LIST, shared by the switch steps and the preflight
        assert {"exclude-device-plugin", "scope-driver", "device-class"} <= {
            s["step"] for s in shared["steps"]
        }  # the steps that read the picture ran

        sim.request_log.clear()
        monkeypatch.setattr(Context, "reading_once", lambda self: contextlib.nullcontext())
        unshared = await _plan(sim, tmp_path)
        assert _full_pod_lists(sim) >= 4  # each step read every pod for itself
        assert unshared == shared


async def test_outside_a_plan_each_read_of_the_picture_is_fresh() -> None:
    class Ctx:
        reads = None

    calls = []

    async def fake(ctx):
        calls.append(ctx)
        return object()

    original = picture._read_picture
    picture._read_picture = fake  # type: ignore[assignment]
    try:
        ctx = Ctx()
        a, b = await picture.read_picture(ctx), await picture.read_picture(ctx)
        assert a is not b and len(calls) == 2  # applying: read afresh every time
        ctx.reads = {}
        c, d = await picture.read_picture(ctx), await picture.read_picture(ctx)
        assert c is d and len(calls) == 3  # planning: read once
    finally:
        picture._read_picture = original  # type: ignore[assignment]
