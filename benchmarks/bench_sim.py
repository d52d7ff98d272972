"""The simulator's API server at fleet scale: load time, peak memory, full paginated LISTs, watch fan-out."""

from __future__ import annotations

import asyncio
import json
import pathlib
import ssl
import subprocess
import sys
import tempfile
import time

import aiohttp
import yaml
from dragoman.benchmarks.harness import Figure
from dragoman.sim.controlplane import procgroups

T0 = "2026-11-01T10:00:00Z"


def fleet(nodes: int, devices_per_slice: int, pods: int, configmaps: int) -> dict:
    """A Kubernetes List: `nodes` GPU nodes, one ResourceSlice per node, `pods` running pods, `configmaps` to delete."""
    items: list[dict] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in ("work", "bench")
    ]
    for n in range(nodes):
        name = f"gpu-node-{n:05d}"
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "creationTimestamp": T0,
                    "labels": {
                        "kubernetes.io/hostname": name,
                        "pool": f"pool-{n % 5}",
                        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                    },
                },
                "spec": {"podCIDR": f"10.{n // 256 % 256}.{n % 256}.0/24"},
                "status": {
                    "capacity": {"cpu": "96", "memory": "1056763244Ki", "pods": "110", "nvidia.com/gpu": "8"},
                    "allocatable": {"cpu": "95", "memory": "1056660844Ki", "pods": "110", "nvidia.com/gpu": "8"},
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "True",
                            "reason": "KubeletReady",
                            "message": "kubelet is posting ready status",
                            "lastHeartbeatTime": T0,
                            "lastTransitionTime": T0,
                        }
                    ],
                    "addresses": [
                        {"type": "InternalIP", "address": f"10.0.{n // 256 % 256}.{n % 256}"},
                        {"type": "Hostname", "address": name},
                    ],
                    "nodeInfo": {
                        "machineID": "m",
                        "systemUUID": "s",
                        "bootID": "b",
                        "kernelVersion": "6.8.0",
                        "osImage": "Ubuntu 24.04.1 LTS",
                        "containerRuntimeVersion": "containerd://2.1.4",
                        "kubeletVersion": "v1.37.1",
                        "kubeProxyVersion": "",
                        "operatingSystem": "linux",
                        "architecture": "amd64",
                    },
                },
            }
        )
        items.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{name}-gpu.nvidia.com-x7k2p", "creationTimestamp": T0},
                "spec": {
                    "driver": "gpu.nvidia.com",
                    "nodeName": name,
                    "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                    "devices": [
                        {
                            "name": f"gpu-{i}",
                            "attributes": {
                                "type": {"string": "gpu"},
                                "productName": {"string": "NVIDIA H100 80GB HBM3"},
                                "brand": {"string": "Nvidia"},
                                "architecture": {"string": "Hopper"},
                                "uuid": {"string": f"GPU-{n:05d}-{i}-0000-0000-000000000000"},
                                "driverVersion": {"version": "580.65.6"},
                                "cudaComputeCapability": {"version": "9.0.0"},
                                "resource.kubernetes.io/pciBusID": {"string": f"0000:{i:02x}:00.0"},
                            },
                            "capacity": {"memory": {"value": "80Gi"}},
                        }
                        for i in range(devices_per_slice)
                    ],
                },
            }
        )
    for p in range(pods):
        node = f"gpu-node-{p % max(nodes, 1):05d}"
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"train-{p:06d}",
                    "namespace": "work",
                    "creationTimestamp": T0,
                    "labels": {"app": "train", "shard": str(p % 50)},
                },
                "spec": {
                    "nodeName": node,
                    "containers": [
                        {
                            "name": "main",
                            "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                            "resources": {
                                "requests": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "2"},
                                "limits": {"nvidia.com/gpu": "2"},
                            },
                        }
                    ],
                },
                "status": {
                    "phase": "Running",
                    "podIP": f"10.{p // 65536 % 256}.{p // 256 % 256}.{p % 256}",
                    "startTime": T0,
                    "qosClass": "Burstable",
                    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": T0}],
                },
            }
        )
    for c in range(configmaps):
        items.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{c:06d}", "namespace": "bench"},
                "data": {"k": "v"},
            }
        )
    return {"apiVersion": "v1", "kind": "List", "items": items}


def _peak_rss_mib(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _full_list(session: aiohttp.ClientSession, url: str, headers: dict) -> int:
    n, token = 0, ""
    while True:
        q = "?limit=500" + (f"&continue={token}" if token else "")
        async with session.get(url + q, headers=headers) as r:
            body = json.loads(await r.read())
        n += len(body["items"])
        token = body["metadata"].get("continue", "")
        if not token:
            return n


async def _watch_fanout(session: aiohttp.ClientSession, base: str, headers: dict, watchers: int, events: int) -> float:
    url = base + "/api/v1/namespaces/bench/configmaps"
    async with session.get(url + "?limit=1", headers=headers) as r:
        rv = json.loads(await r.read())["metadata"]["resourceVersion"]
    ready = asyncio.Event()
    opened = 0
    done_at: list[float] = []

    async def watch() -> None:
        nonlocal opened
        async with session.get(
            url + f"?watch=true&resourceVersion={rv}", headers=headers, timeout=aiohttp.ClientTimeout(total=600)
        ) as r:
            opened += 1
            if opened == watchers:
                ready.set()
            seen = 0
            async for chunk in r.content.iter_any():
                seen += chunk.count(b"\n")
                if seen >= events:
                    done_at.append(time.perf_counter())
                    return

    tasks = [asyncio.create_task(watch()) for _ in range(watchers)]
    await asyncio.wait_for(ready.wait(), 120)
    await asyncio.sleep(0.5)
    t0 = time.perf_counter()
    async with session.delete(url, headers=headers, timeout=aiohttp.ClientTimeout(total=600)) as r:
        assert r.status == 200, await r.text()
        await r.read()
    await asyncio.wait_for(asyncio.gather(*tasks), 600)
    return max(done_at) - t0


def run(quick: bool) -> list[Figure]:
    nodes, pods, events, watchers = (500, 2_000, 1_000, 20) if quick else (5_000, 20_000, 10_000, 100)
    with tempfile.TemporaryDirectory(prefix="dragoman-bench-sim-") as tmp:
        tmpd = pathlib.Path(tmp)
        scenario = tmpd / "fleet.json"
        scenario.write_text(json.dumps(fleet(nodes, 8, pods, events)))
        kubeconfig = tmpd / "kubeconfig"
        t0 = time.perf_counter()
        # Its own process group, watched by the reaper: a benchmark killed outright does not leave the simulator
        # serving (it runs until signalled).
        proc = procgroups.spawn(
            [
                sys.executable,
                "-m",
                "dragoman",
                "sim",
                "serve",
                "--scenario",
                str(scenario),
                "--write-kubeconfig",
                str(kubeconfig),
                "--no-controllers",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            while not kubeconfig.exists():
                if proc.poll() is not None:
                    raise RuntimeError("sim serve failed: " + proc.stderr.read().decode())
                time.sleep(0.02)
            load = time.perf_counter() - t0
            cfg = yaml.safe_load(kubeconfig.read_text())
            base = cfg["clusters"][0]["cluster"]["server"]
            token = cfg["users"][0]["user"]["token"]
            headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE

            async def measure() -> tuple[list[float], list[float], float]:
                conn = aiohttp.TCPConnector(ssl=ctx, limit=0)
                async with aiohttp.ClientSession(connector=conn) as session:
                    pod_runs, slice_runs = [], []
                    for _ in range(2 if quick else 3):
                        t = time.perf_counter()
                        assert await _full_list(session, base + "/api/v1/pods", headers) == pods
                        pod_runs.append(time.perf_counter() - t)
                        t = time.perf_counter()
                        assert (
                            await _full_list(session, base + "/apis/resource.k8s.io/v1/resourceslices", headers)
                            == nodes
                        )
                        slice_runs.append(time.perf_counter() - t)
                    fan = await _watch_fanout(session, base, headers, watchers, events)
                return pod_runs, slice_runs, fan

            pod_runs, slice_runs, fan = asyncio.run(measure())
            peak = _peak_rss_mib(proc.pid)
        finally:
            procgroups.end_groups([proc], grace=30)
    scale = f"{nodes:,} nodes, {nodes * 8:,} devices, {pods:,} pods"
    return [
        Figure("sim: start with the fleet loaded", "s", [load], "< 10 s", lambda v: v < 10, scale),
        Figure("sim: peak server memory", "MiB", [peak], "< 1536 MiB", lambda v: v < 1536, scale),
        Figure(
            f"sim: full paginated LIST of {pods:,} pods",
            "s",
            pod_runs,
            "< 3 s",
            lambda v: v < 3,
            "limit=500, JSON parsed",
        ),
        Figure(
            f"sim: full paginated LIST of {nodes:,} slices",
            "s",
            slice_runs,
            "< 3 s",
            lambda v: v < 3,
            "limit=500, JSON parsed",
        ),
        Figure(
            f"sim: {watchers} watchers each receive {events:,} events", "s", [fan], "", None, "one DELETE collection"
        ),
    ]
