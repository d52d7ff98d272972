"""Preview = writes on the real Kubernetes v1.37.2 control plane, the twin of tests/actions/test_preview_is_writes.py
(the embedded simulator): a pool's whole plan, then its rollback, and each step's audit intents are exactly the writes
its preview listed (objects, count, bodies), with kube-apiserver, kube-scheduler and kube-controller-manager answering.

Every pool of the demo took 17.5 minutes by hand (load 8 on two cores: system 366 s, a100-mig 187 s, h100-dra and
a100-train 184 s each, waiting out PDBs and timeouts), too long for .ci/run. CI runs `CI_POOLS` in about 70 s: a Job
drained and coming back through the bridge (t4-batch), a pool on both stacks (l4-dev) and v1.37's stories (a100-lab);
`l4-serve` is migrated and rolled back through the CLI by test_real_demo.py. `DRAGOMAN_CP_POOLS=all` (or a comma
list) runs more.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import re

import pytest
from dragoman.actions.steps import Options
from dragoman.fleet.cluster import connect

from tests.controlplane.support import Served
from tests.support.preview_writes import demo_pools, forward_and_back

pytestmark = pytest.mark.controlplane

POOLS = demo_pools()
CI_POOLS = ("t4-batch", "l4-dev", "a100-lab")


def _pools() -> list[str]:
    chosen = os.environ.get("DRAGOMAN_CP_POOLS", "")
    if chosen == "all":
        return list(POOLS)
    if chosen:
        unknown = set(chosen.split(",")) - set(POOLS)
        assert not unknown, f"DRAGOMAN_CP_POOLS names pools the demo lacks: {sorted(unknown)}"
        return chosen.split(",")
    return list(CI_POOLS)


def options() -> Options:
    # The real scheduler and controllers answer in seconds, not in the simulator's milliseconds.
    o = Options(evict_retry=1.0, lease_seconds=60, switch_timeout=180, drain_timeout=180)
    o.canary_timeout = 180.0  # type: ignore[attr-defined]  # read through ops.option, as the CLI leaves it unset
    return o


def test_ci_pools_are_demo_pools() -> None:
    assert set(CI_POOLS) <= set(POOLS)


@pytest.mark.parametrize("pool", _pools())
def test_every_step_forward_and_back_writes_exactly_what_it_previewed_on_the_real_control_plane(
    real: Served, tmp_path: pathlib.Path, pool: str
) -> None:
    async def go() -> dict:
        cluster = await connect(str(real.kubeconfig))
        try:
            return await forward_and_back(cluster, pool, tmp_path / "audit.jsonl", options())
        finally:
            await cluster.close()

    seen = asyncio.run(go())
    for way in ("forward", "back"):
        assert not seen[way].get("differences"), (pool, way, seen[way])
        if "blocked" not in seen[way] and not seen[way]["problems"]:
            # A step that ran to its end wrote its preview: a plan that finished wrote everything it showed.
            assert seen[way]["written"] == seen[way]["previewed"], (pool, way, seen[way])
    shown = ("previewed", "written", "blocked", "problems")
    print(pool, {w: {k: v for k, v in seen[w].items() if k in shown} for w in ("forward", "back")})


CRASHLOOP_POOL = "h100-dra"
DRIVER_POD = re.compile(r"dra-driver-nvidia-gpu-kubelet-plugin-[a-z0-9]{5}\b")


def test_the_preflight_names_the_crash_looping_driver_on_the_real_control_plane_as_on_the_simulator(
    real: Served, tmp_path: pathlib.Path
) -> None:
    """h100-dra has a node whose DRA driver crash-loops: a fault of the node (its sim.dragoman.io/pod-faults), which
    the node agents play on whichever driver pod lands there — the demo's own on the embedded simulator, the fresh one
    the real DaemonSet controller made on the real control plane. No slices there, so the pool's preflight blocks, on
    both, with the same sentence naming that cause (not the capacity change it also causes)."""
    from dragoman.actions.runner import Runner
    from dragoman.sim.controllers import default_controllers

    from tests.support.sim import running_simulator

    async def blockers(kubeconfig: str) -> list[str]:
        cluster = await connect(kubeconfig)
        try:
            plan = await Runner(cluster, CRASHLOOP_POOL, audit_path=str(tmp_path / "audit.jsonl")).prepare()
            return [DRIVER_POD.sub("<driver pod>", b) for b in plan.blockers]
        finally:
            await cluster.close()

    async def both() -> tuple[list[str], list[str]]:
        on_real = await blockers(str(real.kubeconfig))
        async with running_simulator(scenario_path="demo") as sim:
            for c in default_controllers(sim):
                sim.add_controller(c)
            return on_real, await blockers(str(sim.kubeconfig_path))

    on_real, embedded = asyncio.run(both())
    assert on_real == embedded
    (blocker,) = on_real
    assert blocker.startswith("no-slices: node gke-ml-prod-h100-dra-") and "publishes no devices" in blocker
    assert "<driver pod> (DaemonSet dra-driver-nvidia-gpu-kubelet-plugin) crash-loops (Error, exit code 1)" in blocker
    assert "capacity" not in blocker
