"""Reading a fleet at scale through fleet/: full sync of every kind, LIST decoding, watch events absorbed, against
kubectl."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from dragoman.benchmarks.harness import Figure
from dragoman.sim.controlplane import procgroups

BURST_NS = "bench"


def _fleet(nodes: int, pods: int, burst: int) -> list[dict]:
    from dragoman.sim.scenarios.scale import generate_scale

    objs = generate_scale(nodes=nodes, pods=pods)
    objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": BURST_NS}})
    for i in range(burst):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": f"dragoman-burst-{i:06d}",
                    "namespace": BURST_NS,
                    "labels": {"app.kubernetes.io/managed-by": "dragoman"},
                },
                "data": {"k": "v"},
            }
        )
    return objs


def _peak_rss_mib() -> float:
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _child(kubeconfig: str) -> dict:
    """Runs in a fresh process so its peak memory is the sync's own."""
    from dragoman.fleet.cluster import connect
    from dragoman.fleet.informer import sync
    from dragoman.fleet.store import FleetStore

    out: dict = {}
    t0 = time.perf_counter()
    c0 = time.process_time()
    cluster = await connect(kubeconfig, None)
    store = FleetStore()
    syncer = await sync(cluster, store)
    await syncer.wait_synced(300)
    out["sync_s"] = time.perf_counter() - t0
    out["sync_cpu_s"] = time.process_time() - c0
    out["peak_mib"] = _peak_rss_mib()
    out["objects"] = store.count()
    out["pods"] = store.count("Pod")
    out["slices"] = store.count("ResourceSlice")

    # Pods and slices alone, the same reads as the kubectl pair below.
    t = time.perf_counter()
    await asyncio.gather(cluster.list_all("/api/v1/pods"), cluster.list_all("/apis/resource.k8s.io/v1/resourceslices"))
    out["pods_slices_s"] = time.perf_counter() - t

    # A burst: one DELETE collection makes the server send every ConfigMap's DELETED event; time until all are applied.
    burst = store.count("ConfigMap")
    t = time.perf_counter()
    c = time.process_time()
    await cluster.request(
        "DELETE",
        f"/api/v1/namespaces/{BURST_NS}/configmaps",
        query={"labelSelector": "app.kubernetes.io/managed-by=dragoman"},
        timeout=600,
    )
    deadline = time.monotonic() + 300
    while store.count("ConfigMap") and time.monotonic() < deadline:
        await asyncio.sleep(0.005)
    out["burst"] = burst
    out["burst_s"] = time.perf_counter() - t
    out["burst_cpu_s"] = time.process_time() - c
    await syncer.stop()
    await cluster.close()
    return out


def _decode_figures(pages: list[bytes]) -> tuple[list[float], list[float], list[float] | None]:
    from dragoman.fleet.cluster import decode

    def run_with(fn) -> float:
        keep = []
        # CPU time, not wall-clock: on a shared machine the decode's own cost is what this figure is about.
        t = time.process_time()
        for p in pages:
            keep.append(fn(p))
        dt = time.process_time() - t
        del keep
        gc.collect()
        return dt

    plain = [run_with(json.loads) for _ in range(3)]
    paused = [run_with(decode) for _ in range(3)]
    try:
        import orjson  # type: ignore[import-not-found]
    except ImportError:
        return plain, paused, None

    def orjson_paused(raw: bytes) -> object:
        gc.disable()
        try:
            return orjson.loads(raw)
        finally:
            gc.enable()

    return plain, paused, [run_with(orjson_paused) for _ in range(3)]


async def _pages(kubeconfig: str, path: str) -> list[bytes]:
    from dragoman.fleet.cluster import connect, read_body

    cluster = await connect(kubeconfig, None)
    pages: list[bytes] = []
    cont = None
    try:
        while True:
            q = {"limit": 500, **({"continue": cont} if cont else {})}
            resp = await cluster._send("GET", path, query=q)
            raw = await read_body(
                resp, 1 << 30, path, "the simulator"
            )  # inflated when gzipped, as kube-apiserver sends
            resp.release()
            pages.append(raw)
            cont = json.loads(raw)["metadata"].get("continue")
            if not cont:
                return pages
    finally:
        await cluster.close()


def _event_cost(pod_pages: list[bytes]) -> float:
    """Seconds per watch event through the informer's path: decode one line, apply it to a full store."""
    from dragoman.fleet.cluster import Cluster
    from dragoman.fleet.store import FleetStore

    pods = [p for page in pod_pages for p in json.loads(page)["items"]]
    store = FleetStore(["Pod"])
    store.replace("Pod", pods)
    gc.freeze()  # as fleet/cluster.decode leaves a synced store: out of the collector's way
    n = min(len(pods), 10_000)
    lines = []
    for i, p in enumerate(pods[:n]):
        p = dict(p, metadata={**p["metadata"], "resourceVersion": str(10**9 + i)})
        lines.append(json.dumps({"type": "MODIFIED", "object": p}).encode())
    event = Cluster._event
    dummy = object.__new__(Cluster)
    t = time.process_time()
    for line in lines:
        etype, obj = event(dummy, line, "/api/v1/pods")
        store.apply("Pod", etype, obj)
    store.flush()
    return (time.process_time() - t) / n


def _kubectl() -> str | None:
    """kubectl from PATH, else the one benchmarks/kubectl.py fetches (the tests' cache); None drops the kubectl
    figures."""
    found = shutil.which("kubectl")
    if found:
        return found
    try:
        from dragoman.benchmarks.kubectl import ensure_binary

        return str(ensure_binary("kubectl"))
    except Exception:  # noqa: BLE001 - no kubectl only drops one figure
        return None


def _time_kubectl(kubectl: str, kubeconfig: str, home: str) -> float:
    env = {**os.environ, "KUBECONFIG": kubeconfig, "HOME": home}
    t = time.perf_counter()
    for args in (["get", "pods", "-A", "-o", "json"], ["get", "resourceslices", "-o", "json"]):
        subprocess.run(
            [kubectl, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, timeout=600
        )
    return time.perf_counter() - t


def run(quick: bool) -> list[Figure]:
    nodes, pods, burst, runs = (500, 2_000, 2_000, 2) if quick else (5_000, 20_000, 10_000, 3)
    figures: list[Figure] = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="dragoman-bench-sync-") as tmp:
        tmpd = pathlib.Path(tmp)
        scenario = tmpd / "fleet.json"
        scenario.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _fleet(nodes, pods, burst)}))
        kubeconfig = tmpd / "kubeconfig"
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
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 300
            while not kubeconfig.exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "sim serve failed: " + (proc.stderr.read().decode() if proc.poll() is not None else "timeout")
                    )
                time.sleep(0.05)
            kc = str(kubeconfig)
            child = subprocess.run(
                [sys.executable, "-m", "dragoman.benchmarks.bench_sync", "--child", kc],
                capture_output=True,
                text=True,
                timeout=900,
            )
            if child.returncode != 0:
                raise RuntimeError("sync child failed: " + child.stderr[-2000:])
            res = json.loads(child.stdout.strip().splitlines()[-1])
            pod_pages = asyncio.run(_pages(kc, "/api/v1/pods"))
            plain, paused, fast = _decode_figures(pod_pages)
            per_event = [_event_cost(pod_pages) for _ in range(runs)]
            kubectl = _kubectl()
            kubectl_runs = [_time_kubectl(kubectl, kc, tmp) for _ in range(runs)] if kubectl else []
        finally:
            procgroups.end_groups([proc], grace=30)
    load = [load_before, os.getloadavg()[0]]
    scale = f"{nodes:,} nodes, {res['slices']:,} slices, {res['pods']:,} pods; {res['objects']:,} objects of 17 kinds"
    mib = sum(len(p) for p in pod_pages) / 2**20
    figures += [
        Figure(
            "machine load average (1 min), before and after",
            "",
            load,
            "",
            None,
            "others' work inflates every time below",
        ),
        Figure("sync: connect + LIST all 17 kinds until live", "s", [res["sync_s"]], "< 5 s", lambda v: v < 5, scale),
        Figure(
            "sync: client CPU time of that sync",
            "s",
            [res["sync_cpu_s"]],
            "",
            None,
            "the rest is the server and the machine",
        ),
        Figure(
            "sync: peak memory of the syncing process",
            "MiB",
            [res["peak_mib"]],
            "< 1024 MiB",
            lambda v: v < 1024,
            "VmHWM, Python included",
        ),
        Figure(
            f"sync: LIST {res['pods']:,} pods + all slices (raw JSON)",
            "s",
            [res["pods_slices_s"]],
            "",
            None,
            "paginated, limit=500, concurrently",
        ),
        Figure(
            f"decode {res['pods']:,} pods ({mib:.0f} MiB), json.loads", "CPU s", plain, "", None, "cyclic GC running"
        ),
        Figure(
            f"decode {res['pods']:,} pods ({mib:.0f} MiB), GC paused then frozen",
            "CPU s",
            paused,
            "",
            None,
            "what fleet/cluster.decode does",
        ),
    ]
    if fast is not None:
        figures.append(
            Figure(
                f"decode {res['pods']:,} pods, orjson, GC paused",
                "CPU s",
                fast,
                "",
                None,
                "not a dependency; for comparison",
            )
        )
    figures += [
        Figure(
            "watch: one event decoded and applied",
            "CPU µs",
            [v * 1e6 for v in per_event],
            "< 1000 µs",
            lambda v: v < 1000,
            "MODIFIED pod into a full store",
        ),
        Figure(
            f"watch: burst of {res['burst']:,} DELETED events absorbed",
            "events/s",
            [res["burst"] / res["burst_s"]],
            ">= 5,000/s",
            lambda v: v >= 5000,
            "server send + client apply",
        ),
        Figure(
            "watch: the client's CPU per burst event",
            "µs",
            [res["burst_cpu_s"] / max(res["burst"], 1) * 1e6],
            "",
            None,
            "1e6 / this = the client's own ceiling in events/s",
        ),
    ]
    if kubectl_runs:
        k = sorted(kubectl_runs)[len(kubectl_runs) // 2]
        figures.append(
            Figure(
                "kubectl get pods -A -o json + get resourceslices -o json", "s", kubectl_runs, "", None, "same server"
            )
        )
        figures.append(
            Figure(
                "sync of all kinds ÷ kubectl pair",
                "×",
                [res["sync_s"] / k],
                "<= 3×",
                lambda v: v <= 3,
                "lower is better",
            )
        )
        figures.append(
            Figure("pods + slices LIST ÷ kubectl pair", "×", [res["pods_slices_s"] / k], "", None, "same reads")
        )
    return figures


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(asyncio.run(_child(sys.argv[2]))))
    else:
        from dragoman.benchmarks.harness import format_table

        print(format_table(run(quick="--quick" in sys.argv)))
