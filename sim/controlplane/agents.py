"""The node agents on a real control plane: the same kubelet, device-plugin, DRA kubelet plugin and GPU Operator code
that serves the embedded simulator (sim/controllers), run as ordinary API clients through `RemoteStore`.

What a real controller or the real scheduler does (DaemonSets, Deployments, ReplicaSets, StatefulSets, Jobs, garbage
collection, the ResourceClaim controller, quota, scheduling and the bridge, PDB status, node lifecycle) is theirs:
none of the simulator's own controllers for those runs here.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from dragoman.sim.clock import Clock
from dragoman.sim.controllers.base import CACHED, Controller
from dragoman.sim.controllers.nodelifecycle import NodeLeases
from dragoman.sim.controlplane.remote_store import RemoteStore


class AgentHost:
    """What a controller takes from its simulator: a store and a clock."""

    def __init__(self, store: Any, clock: Any) -> None:
        self.store = store
        self.clock = clock


def node_agents(host: Any) -> list[Controller]:
    """The agents of every node, in start order. The one list of what node behaviour is (both control planes); with
    them the manager of a scenario's network-attached devices, which no real controller plays either."""
    from dragoman.sim.controllers.dra_plugin import DraKubeletPlugin
    from dragoman.sim.controllers.fabric import FabricManager
    from dragoman.sim.controllers.gpu_operator import GpuOperator
    from dragoman.sim.controllers.kubelet import Kubelets

    return [GpuOperator(host), Kubelets(host), DraKubeletPlugin(host), FabricManager(host)]


class Agents:
    """Start the node agents against a real API server; `stop()` ends them and their watches.

    The heartbeat (NodeLeases) runs apart, on its own connection, node mirror and event loop in a thread, as the
    kubelet renews its Lease through its own heartbeat client: the other agents' writes are synchronous in their loop,
    and a slow API server under load must not hold a renewal back past the node lifecycle controller's 50 s grace
    (which marks the node Unknown and taints it unreachable, so no DaemonSet pod is placed on it)."""

    def __init__(
        self, url: str, token: str, ca_pem: bytes | None, *, kubelet_nodes: frozenset[str] = frozenset()
    ) -> None:
        """`kubelet_nodes`: the nodes real kubelets run (kubelets.py); no agent drives them."""
        self.clock = Clock(1.0)
        self.store = RemoteStore(url, token, ca_pem, CACHED, self.clock, hidden_nodes=kubelet_nodes)
        self.host = AgentHost(self.store, self.clock)
        self.controllers: list[Controller] = node_agents(self.host)
        # Its own clock too: a clock's sleepers belong to one event loop.
        hb_clock = Clock(1.0)
        self.heartbeat_store = RemoteStore(url, token, ca_pem, ("nodes",), hb_clock, hidden_nodes=kubelet_nodes)
        self.heartbeat = NodeLeases(AgentHost(self.heartbeat_store, hb_clock))
        self._heartbeat_loop: asyncio.AbstractEventLoop | None = None
        self._heartbeat_thread: threading.Thread | None = None

    @property
    def names(self) -> list[str]:
        return [type(c).__name__ for c in [*self.controllers, self.heartbeat]]

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        # The first LIST of every kind blocks: run it off the loop so a slow server cannot freeze the caller.
        await loop.run_in_executor(None, self.store.start_lists)
        self.store.start_watches(loop)
        for c in self.controllers:
            await c.start(self.host)
        await loop.run_in_executor(None, self._start_heartbeat)

    def _start_heartbeat(self) -> None:
        self.heartbeat_store.start_lists()
        hb = asyncio.new_event_loop()
        self._heartbeat_loop = hb
        self._heartbeat_thread = threading.Thread(target=hb.run_forever, name="node-heartbeat", daemon=True)
        self._heartbeat_thread.start()
        self.heartbeat_store.start_watches(hb)
        asyncio.run_coroutine_threadsafe(self.heartbeat.start(self.heartbeat.sim), hb).result(30)

    async def _stop_heartbeat(self) -> None:
        """In the heartbeat's loop: stop it, and let every task it leaves (its timer's sleep) finish cancelling."""
        await self.heartbeat.stop()
        me = asyncio.current_task()
        rest = [t for t in asyncio.all_tasks() if t is not me]
        for t in rest:
            t.cancel()
        await asyncio.gather(*rest, return_exceptions=True)

    async def stop(self) -> None:
        hb, self._heartbeat_loop = self._heartbeat_loop, None
        if hb is not None:
            try:
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._stop_heartbeat(), hb))
            finally:
                hb.call_soon_threadsafe(hb.stop)
                if self._heartbeat_thread is not None:
                    await asyncio.get_running_loop().run_in_executor(None, self._heartbeat_thread.join, 10)
                if not hb.is_running():
                    hb.close()
        self.heartbeat_store.stop()
        for c in reversed(self.controllers):
            await c.stop()
        self.store.stop()
