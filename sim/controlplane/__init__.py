"""The real Kubernetes v1.37 control plane on loopback, with dragoman's node agents: the simulator's judge.

`RealCluster` = the four upstream processes (processes.py) + the scenario loaded through the API (loader.py) + the
node agents every node needs (agents.py), and optionally a Prometheus scraping them (prometheus.py). `dragoman sim
serve --control-plane DIR` and `dragoman --demo --control-plane DIR` run one; `dragoman controlplane build` makes the
binaries (build.py).
"""

from __future__ import annotations

import asyncio
import pathlib
import time
from typing import Any

from dragoman.sim.controlplane.agents import Agents
from dragoman.sim.controlplane.build import check_dir
from dragoman.sim.controlplane.kubelets import RealKubelets, restart_period, select_nodes
from dragoman.sim.controlplane.loader import LoadReport, load
from dragoman.sim.controlplane.processes import ControlPlane
from dragoman.sim.controlplane.prometheus import Prometheus
from dragoman.sim.controlplane.prometheus import find_binary as find_prometheus


class RealCluster:
    def __init__(
        self,
        binaries_dir: str | pathlib.Path | dict[str, pathlib.Path],
        objects: list[dict],
        users: list[dict] | None = None,
        *,
        audit_log: str | None = None,
        prometheus: bool = False,
        real_kubelets: str | None = None,
        node_binaries: dict[str, pathlib.Path] | None = None,
        joining: frozenset[str] = frozenset(),
    ) -> None:
        """`real_kubelets`: which of the scenario's nodes a real kubelet runs (kubelets.select_nodes: "all", node
        names, or KEY=VALUE labels), with `node_binaries` (build.node_binaries); the node agents run the others.
        `joining`: names of nodes that join later through a real kubelet (`join_kubelet`); no agent drives them."""
        # A dict: binaries check_dir already checked (before a signal handler or an event loop was in place).
        self.binaries = dict(binaries_dir) if isinstance(binaries_dir, dict) else check_dir(binaries_dir)
        # A Prometheus scraping the four processes (prometheus.py): its binary found before anything is made.
        prometheus_binary = find_prometheus() if prometheus else None
        self.objects = objects
        with_kubelets = real_kubelets is not None or bool(joining)
        self.cp = ControlPlane(self.binaries, users, audit_log=audit_log, kubelet_egress=with_kubelets)
        self.prometheus = Prometheus(self.cp, prometheus_binary) if prometheus_binary else None
        self.agents: Agents | None = None
        self.kubelets: RealKubelets | None = None
        self.kubelet_nodes: frozenset[str] = frozenset(joining)
        self._kubelet_choice: list[dict] = []
        self._node_binaries = dict(node_binaries or {})
        if real_kubelets is not None:
            chosen = select_nodes(objects, real_kubelets)  # a sentence for a selector that matches nothing
            for n in chosen:
                restart_period(n)  # a sentence for a restart period the kubelet would refuse, before anything starts
            self.kubelet_nodes |= frozenset(n["metadata"]["name"] for n in chosen)
            self._kubelet_choice = chosen
        self.report: LoadReport | None = None
        self.timings: dict[str, float] = {}

    @property
    def url(self) -> str:
        return self.cp.url

    def kubeconfig(self, user: str | None = None) -> dict:
        return self.cp.kubeconfig(user)

    async def start(self) -> None:
        """Start the processes, load the scenario, start the node agents. Any failure of the API server on the way
        (it died, or answered with something that is not the JSON it should) is one sentence (UserError), not a
        traceback: a dead server raises connection errors, a broken one odd shapes, wherever it was being asked."""
        from dragoman.fleet.errors import ExitCode, UserError

        try:
            await self._start()
        except (UserError, asyncio.CancelledError):
            raise
        except Exception as exc:  # noqa: BLE001 - whatever a failing server made a step trip on, said once
            self.cp._check_alive()  # a process that died says so itself, with its last words
            what = " ".join(str(exc).split())[:300] or type(exc).__name__
            raise UserError(
                f"the control plane's API server stopped answering as an API server does while it started ({what}); "
                "every process was stopped.",
                ExitCode.INPUT,
            ) from None

    async def _start(self) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        t0 = time.monotonic()
        await loop.run_in_executor(None, self.cp.start)
        self.timings["control plane ready"] = time.monotonic() - t0
        if self.prometheus is not None:
            # Before the fleet is loaded: the load's claims and scheduling are in its figures.
            await loop.run_in_executor(None, self.prometheus.start)
        t1 = time.monotonic()
        uids: dict[str, str] = {}
        self.report = await loop.run_in_executor(
            None,
            lambda: load(
                self.cp.request, self.objects, phase="infrastructure", uids=uids, kubelet_nodes=self.kubelet_nodes
            ),
        )
        if self._kubelet_choice or self.kubelet_nodes:
            t_k = time.monotonic()
            self.kubelets = RealKubelets(self.cp, self._kubelet_choice, self._node_binaries, objects=self.objects)
            await loop.run_in_executor(None, self.kubelets.start)
            await loop.run_in_executor(None, self.kubelets.wait_ready)
            self.timings["real kubelets ready"] = time.monotonic() - t_k
        self.agents = Agents(self.cp.url, self.cp.admin_token, self.cp.pki.ca_pem, kubelet_nodes=self.kubelet_nodes)
        await self.agents.start()
        await loop.run_in_executor(None, self._wait_daemonsets)
        self.timings["nodes settled"] = time.monotonic() - t1
        t2 = time.monotonic()
        workloads = await loop.run_in_executor(
            None, lambda: load(self.cp.request, self.objects, phase="workloads", uids=uids)
        )
        self.report.merge(workloads)
        self.timings["workloads loaded"] = time.monotonic() - t2

    def join_kubelet(self, node: dict) -> None:
        """Node `node` (a Node's metadata and the scenario's status: capacity, nodeInfo.kubeletVersion) joins through
        a real kubelet; its name must be one of `joining`. Blocks until it is Ready."""
        from dragoman.fleet.errors import ExitCode, UserError

        if self.kubelets is None or node["metadata"]["name"] not in self.kubelet_nodes:
            raise UserError(f"node {node['metadata']['name']} was not named to join through a kubelet.", ExitCode.INPUT)
        self.kubelets.join(node)

    def node_fault(self, node: str, what: str, on: bool) -> None:
        """Stop (`on`) or start again the real kubelet ("kubelet") or container runtime ("runtime") of node `node`
        (RealKubelets.fault)."""
        from dragoman.fleet.errors import ExitCode, UserError

        if self.kubelets is None or node not in self.kubelets.procs:
            raise UserError(f"node {node} has no real kubelet.", ExitCode.INPUT)
        self.kubelets.fault(node, what, on)

    def _wait_daemonsets(self, timeout: float = 180.0) -> None:
        """Until every DaemonSet has its pods scheduled and ready (device plugins, DRA drivers, operands), but for the
        pods a node's fault keeps from ever being ready (its sim.dragoman.io/pod-faults: a crash loop, a probe that
        never passes) or from staying ready (a container that crashes every N seconds)."""
        from dragoman.sim.controllers.base import unready_daemonsets

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code, body = self.cp.request("GET", "/apis/apps/v1/daemonsets")
            ncode, nodes = self.cp.request("GET", "/api/v1/nodes")
            if code == 200 and isinstance(body, dict) and ncode == 200 and isinstance(nodes, dict):
                pending = unready_daemonsets(body.get("items") or (), nodes.get("items") or ())
                if not pending:
                    return
            time.sleep(1.0)

    async def stop(self) -> None:
        if self.kubelets is not None:
            # First: a kubelet whose API server went away would retry for its whole grace period.
            await asyncio.get_running_loop().run_in_executor(None, self.kubelets.stop)
        if self.agents is not None:
            try:
                await self.agents.stop()
            except Exception:  # noqa: BLE001 - stopping goes on to the processes whatever the agents did
                pass
        self.cp.stop()

    def request(self, method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        return self.cp.request(method, path, body, **kw)
