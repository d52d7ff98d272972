"""Helpers for the migration tests: the demo on a fast clock, the CLI in a thread or a subprocess, the audit log read
back."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import pathlib
import sys
from collections.abc import AsyncIterator

from tests.support.sim import running_simulator

SPEED = 120.0  # a 30 s grace period passes in a quarter of a second
T4 = "t4-batch"  # 2 nodes, one already cordoned, one Job pod to evict
T4_NODES = ("gke-ml-prod-t4-batch-c3418deb-tq7g", "gke-ml-prod-t4-batch-c3418deb-wh8x")
L4 = "l4-inference"  # 3 nodes, 6 Deployment pods, no PDB
A100 = "a100-train"  # llama-pretrain's PDB (maxUnavailable 0) blocks the drain


@contextlib.asynccontextmanager
async def demo(controllers: bool = False) -> AsyncIterator:
    async with running_simulator(scenario_path="demo", speed=SPEED) as sim:
        if controllers:
            from dragoman.sim.controllers import default_controllers

            for c in default_controllers(sim):
                sim.add_controller(c)
        sim.request_log.clear()
        yield sim


def base_args(sim, tmp: pathlib.Path, pool: str, *extra: str, context: str | None = None) -> list[str]:
    args = [
        "migrate",
        "--kubeconfig",
        str(sim.kubeconfig_path),
        "--pool",
        pool,
        "--audit-log",
        str(tmp / "audit.jsonl"),
        "--evict-retry",
        "0.3",
        "--lease-seconds",
        "30",
        *extra,
    ]
    if context:
        args += ["--context", context]
    return args


async def cli(argv: list[str]) -> int:
    """The CLI in a thread (it runs its own event loop), so the simulator keeps serving on this one."""
    from dragoman.tui.cli import main

    return await asyncio.to_thread(main, argv)


async def cli_process(argv: list[str], env: dict | None = None, timeout: float = 120.0) -> tuple[int, str, str]:
    """The CLI in a child process (a crash point may os._exit it)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "dragoman",
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode, out.decode(), err.decode()


def audit_records(tmp: pathlib.Path) -> list[dict]:
    path = tmp / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def assert_one_intent_one_outcome(records: list[dict]) -> dict[str, int]:
    """Every write id has exactly one intent then one outcome, and no write key was applied under two ids: a key is
    written again (a new id) only after its write failed outright (a 409 on a busy machine, say), never after one
    that was applied or may have landed (that one is sent again under its own id)."""
    by_id: dict[str, list[str]] = collections.defaultdict(list)
    ids_by_key: dict[str, list[str]] = collections.defaultdict(list)
    result: dict[str, str] = {}
    for r in records:
        if r["record"] in ("intent", "outcome"):
            by_id[r["writeId"]].append(r["record"])
            if r["writeId"] not in ids_by_key[r["key"]]:
                ids_by_key[r["key"]].append(r["writeId"])
            if r["record"] == "outcome":
                result[r["writeId"]] = r.get("result", "")
    for wid, recs in by_id.items():
        assert recs == ["intent", "outcome"], (wid, recs)
    for key, ids in ids_by_key.items():
        assert all(result[i] == "failed" for i in ids[:-1]), (key, [(i, result[i]) for i in ids])
    return {k: len(v) for k, v in ids_by_key.items()}


def real_writes(sim, user: str | None = None) -> list:
    return [r for r in sim.request_log.writes() if user is None or r.user == user]


def evictions(sim) -> collections.Counter:
    """Eviction POSTs that were made (non-dry-run, successful even when the answer was lost), per pod path."""
    return collections.Counter(r.path for r in sim.request_log.writes() if r.subresource == "eviction" and r.made)


def node(sim, name: str) -> dict:
    return sim.store.get_ref("nodes", None, name)
