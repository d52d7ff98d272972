"""The node agents on a real control plane: the same kubelet, device-plugin, DRA kubelet plugin and GPU Operator code
that serves the embedded simulator (sim/controllers), run as ordinary API clients through `RemoteStore`.

What a real controller or the real scheduler does (DaemonSets, Deployments, ReplicaSets, StatefulSets, Jobs, garbage
collection, the ResourceClaim controller, quota, scheduling and the bridge, PDB status, node lifecycle) is theirs:
none of the simulator's own controllers for those runs here.
"""

from __future__ import annotations

import asyncio
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
    """The agents of every node, in start order. The one list of what node behaviour is (both control planes)."""
    from dragoman.sim.controllers.dra_plugin import DraKubeletPlugin
    from dragoman.sim.controllers.gpu_operator import GpuOperator
    from dragoman.sim.controllers.kubelet import Kubelets

    return [GpuOperator(host), Kubelets(host), DraKubeletPlugin(host)]


class Agents:
    """Start the node agents against a real API server; `stop()` ends them and their watches."""

    def __init__(self, url: str, token: str, ca_pem: bytes | None) -> None:
        self.clock = Clock(1.0)
        self.store = RemoteStore(url, token, ca_pem, CACHED, self.clock)
        self.host = AgentHost(self.store, self.clock)
        self.controllers: list[Controller] = [*node_agents(self.host), NodeLeases(self.host)]

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        # The first LIST of every kind blocks: run it off the loop so a slow server cannot freeze the caller.
        await loop.run_in_executor(None, self.store.start_lists)
        self.store.start_watches(loop)
        for c in self.controllers:
            await c.start(self.host)

    async def stop(self) -> None:
        for c in reversed(self.controllers):
            await c.stop()
        self.store.stop()
