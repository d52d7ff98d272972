"""Node heartbeats at scale: every node's Lease renewed through many writes in flight, in a process of its own.

The node agents (agents.py) are one Python process doing every node's work with synchronous writes: right for the
demo's nodes, far too slow for the envelope's 5,000 (a real kubelet renews its Lease every 10 s: 500 writes/s). An
envelope fleet read by dragoman needs of its nodes only that they stay Ready, so its node agents are the heartbeats
alone, renewing each Lease at a period floored in real time so that the machine keeps up; the node lifecycle
controller's grace period is raised to match (heartbeat_grace).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from dragoman.fleet.k8s.times import format_micro_time

# Renewals per second the heartbeats may send at most: beyond it the period grows (5,000 nodes: every 250 s). Each
# renewal is a write the loader and dragoman compete with on this 2-core machine.
HEARTBEAT_RATE = 20.0


def heartbeat_period(nodes: int, rate: float = HEARTBEAT_RATE) -> float:
    """Seconds between two renewals of one node's Lease: a kubelet's 10 s, or longer when `nodes` renewals in it would
    pass `rate` per second."""
    from dragoman.sim.controllers.nodelifecycle import RENEW_SECONDS

    return max(RENEW_SECONDS, nodes / rate)


def heartbeat_grace(period: float) -> float:
    """kube-controller-manager's --node-monitor-grace-period for that period: its default 50 s is five kubelet periods
    of 10 s; at least three periods here, so one late round under load does not turn nodes Unknown."""
    return max(50.0, 3 * period)


async def heartbeats(writer: Any, period: float, stop: asyncio.Event) -> int:
    """Every node's Lease in kube-node-lease, made if missing and renewed every `period` seconds, the renewals spread
    evenly over it, until `stop`; the number of renewals sent."""
    from datetime import UTC, datetime

    from dragoman.sim.controllers.nodelifecycle import LEASE_NAMESPACE, LEASE_SECONDS

    nodes: list[tuple[str, str]] = []
    cont = ""
    while True:
        code, page = await writer.send("GET", "/api/v1/nodes?limit=500" + (f"&continue={cont}" if cont else ""))
        if code != 200 or not isinstance(page, dict):
            raise RuntimeError(f"heartbeats: listing the nodes answered {code}")
        nodes += [(n["metadata"]["name"], n["metadata"]["uid"]) for n in page.get("items") or ()]
        cont = (page.get("metadata") or {}).get("continue") or ""
        if not cont:
            break
    path = f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases"

    def now() -> str:
        return format_micro_time(datetime.now(UTC))

    async def create(node: tuple[str, str]) -> None:
        name, uid = node
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": name,
                "namespace": LEASE_NAMESPACE,
                "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid}],
            },
            "spec": {"holderIdentity": name, "leaseDurationSeconds": LEASE_SECONDS, "renewTime": now()},
        }
        await writer.send("POST", path, body, answer=None)

    await writer.each(nodes, create)
    sent = 0
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        start = loop.time()
        slots = iter(enumerate(nodes))

        async def renew(start: float = start, slots: Any = slots) -> None:
            nonlocal sent
            for i, (name, _uid) in slots:
                due = start + i * period / max(1, len(nodes))
                if due > loop.time():
                    try:
                        await asyncio.wait_for(stop.wait(), due - loop.time())
                        return
                    except TimeoutError:
                        pass
                patch = {"spec": {"renewTime": now()}}
                await writer.send("PATCH", f"{path}/{name}", patch, "application/merge-patch+json", answer=None)
                sent += 1

        await asyncio.gather(*(renew() for _ in range(min(writer.in_flight, len(nodes)) or 1)))
        left = start + period - loop.time()
        if left > 0 and not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), left)
            except TimeoutError:
                pass
    return sent


class HeartbeatProcess:
    """`heartbeats` in a process of its own (not sharing a core's GIL with whatever the caller measures): the API
    server's address and token go to it on stdin, never on its command line; closing its stdin stops it."""

    def __init__(self, url: str, token: str, ca_pem: bytes | None, period: float) -> None:
        import json
        import subprocess
        import sys

        self.period = period
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dragoman.sim.controlplane.heartbeats"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdin is not None
        config = {"url": url, "token": token, "ca": (ca_pem or b"").decode(), "period": period}
        self.proc.stdin.write(json.dumps(config) + "\n")
        self.proc.stdin.flush()

    def stop(self) -> int:
        """Stop it; the renewals it sent."""
        import subprocess

        try:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.close()
            out = self.proc.stdout.read()
            self.proc.wait(30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
            return 0
        return int(out.split()[-1]) if out.split() and out.split()[-1].isdigit() else 0


async def _heartbeats_main() -> None:
    import json
    import sys

    from dragoman.sim.controlplane.loader import Writer

    loop = asyncio.get_running_loop()
    config = json.loads(await loop.run_in_executor(None, sys.stdin.readline))
    stop = asyncio.Event()

    def wait_eof() -> None:
        sys.stdin.read()
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=wait_eof, daemon=True).start()
    async with Writer(config["url"], config["token"], config["ca"].encode() or None, in_flight=8) as writer:
        sent = await heartbeats(writer, float(config["period"]), stop)
    print(sent, flush=True)


if __name__ == "__main__":
    asyncio.run(_heartbeats_main())
