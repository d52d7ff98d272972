"""One implementation of node behaviour, two ways to reach a control plane.

The node agents (kubelet, DRA kubelet plugin, GPU Operator) normally run inside the embedded simulator on its store.
On the real control plane they run as API clients through `RemoteStore`. Here the same agents run as API clients
against the embedded simulator (its own scheduler and workload controllers stay in-process): the fleet must settle
to exactly the picture it settles to when the agents run in-process.
"""

from __future__ import annotations

import asyncio
import base64
import threading
import time

from dragoman.sim import scenario as scenario_mod
from dragoman.sim.controllers import default_controllers
from dragoman.sim.controlplane.agents import Agents, node_agents
from dragoman.sim.server import Simulator

AGENTS = {type(a).__name__ for a in node_agents(type("H", (), {"store": None, "clock": None})())}
# What runs through the API in the remote case: the node agents and the heartbeat, which `Agents` runs apart on its
# own connection (one heartbeat per node: an in-process one beside it would renew the same Leases).
REMOTE = AGENTS | {"NodeLeases"}


def _picture(sim: Simulator) -> dict:
    return {
        "pods": {
            (p["metadata"]["namespace"], p["metadata"]["name"]): p.get("status", {}).get("phase")
            for p in sim.store.list("pods")
        },
        "slices": sorted(s["metadata"]["name"] for s in sim.store.list("resourceslices.resource.k8s.io")),
        "allocatable": {
            n["metadata"]["name"]: (n.get("status", {}).get("allocatable") or {}).get("nvidia.com/gpu")
            for n in sim.store.list("nodes")
        },
    }


async def _settled(sim: Simulator, timeout: float = 60.0, quiet: float = 3.0) -> dict:
    """The picture once nothing in it has changed for `quiet` seconds."""
    deadline = time.monotonic() + timeout
    last, since = _picture(sim), time.monotonic()
    while time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        now = _picture(sim)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet and any(v == "Running" for v in now["pods"].values()):
            return now
    raise AssertionError("the demo fleet did not settle")


async def _run(remote: bool) -> dict:
    sc = scenario_mod.load("demo")
    sim = Simulator(sc.objects, users=sc.users, speed=1.0)
    for c in default_controllers(sim):
        if not (remote and type(c).__name__ in REMOTE):
            sim.add_controller(c)
    await sim.start()
    stop = threading.Event()
    thread = None
    writes: list[int] = []
    try:
        if remote:
            kc = sim.kubeconfig()
            token = kc["users"][0]["user"]["token"]
            ca = base64.b64decode(kc["clusters"][0]["cluster"]["certificate-authority-data"])

            def agents_thread() -> None:
                # Their own loop, as in their own process: their writes are synchronous HTTP to this server.
                async def go() -> None:
                    ag = Agents(sim.url, token, ca)
                    await ag.start()
                    while not stop.is_set():
                        await asyncio.sleep(0.1)
                    writes.append(ag.store.writes + ag.heartbeat_store.writes)
                    await ag.stop()

                asyncio.run(go())

            thread = threading.Thread(target=agents_thread, daemon=True)
            thread.start()
        picture = await _settled(sim)
    finally:
        stop.set()
        if thread is not None:
            await asyncio.to_thread(thread.join, 30)
        await sim.stop()
    if remote:
        assert writes and writes[0] > 20, "the agents wrote through the API"
    return picture


async def test_agents_through_the_api_settle_the_demo_as_in_process():
    in_process = await _run(remote=False)
    through_api = await _run(remote=True)
    assert AGENTS == {"GpuOperator", "Kubelets", "DraKubeletPlugin", "FabricManager"}
    running = [k for k, v in in_process["pods"].items() if v == "Running"]
    assert len(running) > 50 and in_process["slices"]
    assert through_api == in_process


async def test_the_heartbeat_keeps_renewing_while_the_other_agents_loop_is_busy():
    """The agents' writes are synchronous in their loop: a slow API server holds that loop. The Lease renewals run on
    their own connection and loop (as a kubelet's heartbeat client), so a busy agent loop does not let a node's Lease
    lapse into the node lifecycle controller's grace period — which on the real control plane marks the node Unknown
    and taints it unreachable, so no DaemonSet pod is placed on a node that just joined."""
    from tests.sim.test_controllers_gpu import gpu_node
    from tests.support.sim import running_simulator

    async with running_simulator(objects=[gpu_node("gpu-1", "p")]) as sim:
        kc = sim.kubeconfig()
        token = kc["users"][0]["user"]["token"]
        ca = base64.b64decode(kc["clusters"][0]["cluster"]["certificate-authority-data"])
        renewals: list[str] = []
        ready = threading.Event()
        done = threading.Event()

        def agents_thread() -> None:
            async def go() -> None:
                ag = Agents(sim.url, token, ca)
                await ag.start()
                ready.set()
                # The agents' loop is held for 12 s: a renewal period (10 s) passes in it.
                time.sleep(12)
                await ag.stop()
                done.set()

            asyncio.run(go())

        def renew_time() -> str | None:
            lease = sim.store.get("leases.coordination.k8s.io", "kube-node-lease", "gpu-1")
            return (lease or {}).get("spec", {}).get("renewTime")

        thread = threading.Thread(target=agents_thread, daemon=True)
        thread.start()
        await asyncio.to_thread(ready.wait, 30)
        while not done.is_set():
            t = renew_time()
            if t and t not in renewals:
                renewals.append(t)
            await asyncio.sleep(0.2)
        await asyncio.to_thread(thread.join, 30)
    assert len(renewals) >= 2, f"the Lease was renewed while the agents' loop was held: {renewals}"
