"""Reading a generated GPU fleet from the real Kubernetes v1.37 control plane, against kubectl, and what dragoman's
watches cost that API server.

Not in the default run (it starts etcd and kube-apiserver and loads tens of thousands of objects): select it with
`python -m dragoman.benchmarks --controlplane` or by name. The binaries come from `dragoman controlplane build`.

The fleet is the scale scenario (sim/scenarios/scale.py), loaded as a settled picture by sim/controlplane/loader.py's
`load_settled` (many requests in flight, statuses per kind, the workload controllers held until it is in): pods keep
their `spec.nodeName`, so kube-scheduler does nothing. The nodes' only agents are their heartbeats (heartbeats.py),
which keep them Ready. `--only controlplane:envelope` (or `--controlplane --envelope`) is Kubernetes' envelope on this
server and on the simulator side by side (bench_cp_envelope.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading
import time

import yaml
from dragoman.benchmarks.bench_sync import _kubectl, _peak_rss_mib
from dragoman.benchmarks.harness import Figure
from dragoman.sim.controlplane.loader import IN_FLIGHT

# How long dragoman's informers sit live (and, before that, the server sits without them) for the cost figures.
LIVE_S = 30.0


# ------------------------------------------------------------------------------------------------ loading the fleet


def control_plane(binaries: dict, nodes: int):
    """A control plane for a settled fleet of `nodes`: the scheduler and the controllers held until the fleet is in, the
    node lifecycle controller's grace period raised to the heartbeats' real-time period (agents.heartbeat_grace)."""
    from dragoman.sim.controlplane.heartbeats import heartbeat_grace, heartbeat_period
    from dragoman.sim.controlplane.processes import HOLD_ALL, ControlPlane

    grace = heartbeat_grace(heartbeat_period(nodes))
    return ControlPlane(
        binaries, users=None, hold=HOLD_ALL, controller_args=(f"--node-monitor-grace-period={grace:.0f}s",)
    )


def load_fleet(cp, objects: list[dict]):
    """The fleet through the API as a settled picture (loader.load_settled), then the nodes' heartbeats started and
    the held scheduler and controllers released: the node lifecycle controller, the heartbeats' only reader, is held
    while the fleet loads. (report, heartbeats)."""
    from dragoman.sim.controlplane.heartbeats import HeartbeatProcess, heartbeat_period
    from dragoman.sim.controlplane.loader import Writer, load_settled

    nodes = sum(1 for o in objects if o.get("kind") == "Node")

    def progress(stage: str, writes: int, seconds: float) -> None:
        print(
            f"  load: {stage}: {writes:,} writes in {seconds:.1f} s ({writes / max(seconds, 1e-9):.0f}/s)",
            file=sys.stderr,
            flush=True,
        )

    async def go():
        async with Writer(cp.url, cp.admin_token, cp.pki.ca_pem) as writer:
            return await load_settled(writer, objects, progress=progress)

    report = asyncio.run(go())
    beat = HeartbeatProcess(cp.url, cp.admin_token, cp.pki.ca_pem, heartbeat_period(nodes))
    cp.release()
    return report, beat


class _Memory:
    """Peak RSS of the control plane's processes, sampled twice a second in a thread."""

    def __init__(self, cp) -> None:
        import psutil

        # kube-apiserver and etcd: the controller manager is restarted when the held controllers are released.
        self.procs = {name: psutil.Process(cp.procs[name].pid) for name in ("kube-apiserver", "etcd")}
        self.peak = {name: 0.0 for name in self.procs}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def now(self) -> dict[str, float]:
        return {name: p.memory_info().rss / 2**20 for name, p in self.procs.items()}

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            for name, mib in self.now().items():
                self.peak[name] = max(self.peak[name], mib)

    def __enter__(self) -> _Memory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


# ------------------------------------------------------------------------------------------------ the server's view

_SAMPLE = re.compile(r"^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _metrics(cp, names: tuple[str, ...]) -> list[tuple[str, dict, float]]:
    """kube-apiserver's /metrics samples of the metrics `names` (Prometheus text format)."""
    code, text = cp.request("GET", "/metrics", timeout=60)
    if code != 200:
        raise RuntimeError(f"GET /metrics: {code}")
    out = []
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m and m.group(1) in names:
            out.append((m.group(1), dict(_LABEL.findall(m.group(2) or "")), float(m.group(3))))
    return out


class _ServerSnapshot:
    """Request counts by (verb, resource), WATCH requests open, and CPU seconds of kube-apiserver and etcd at one
    moment."""

    def __init__(self, cp) -> None:
        import psutil

        self.t = time.monotonic()
        self.cpu = {}
        for name in ("kube-apiserver", "etcd"):
            ct = psutil.Process(cp.procs[name].pid).cpu_times()
            self.cpu[name] = ct.user + ct.system
        self.requests: dict[tuple[str, str], float] = {}
        self.watches = 0.0
        for name, labels, value in _metrics(cp, ("apiserver_request_total", "apiserver_longrunning_requests")):
            if name == "apiserver_request_total":
                key = (
                    labels.get("verb", ""),
                    labels.get("resource", "") + ("/" + labels["subresource"] if labels.get("subresource") else ""),
                )
                self.requests[key] = self.requests.get(key, 0.0) + value
            elif labels.get("verb") == "WATCH":
                self.watches += value

    def since(self, before: _ServerSnapshot) -> dict:
        reqs = {k: v - before.requests.get(k, 0.0) for k, v in self.requests.items()}
        return {
            "s": self.t - before.t,
            "requests": {k: v for k, v in reqs.items() if v > 0},
            "cpu": {k: v - before.cpu[k] for k, v in self.cpu.items()},
            "watches": self.watches,
        }


WRITES = ("POST", "PUT", "PATCH", "DELETE", "APPLY")


def _settle(cp, timeout: float = 120.0, window: float = 10.0) -> float:
    """Wait until the server takes fewer than one write a second (all clients), at most `timeout`; the last window's
    writes/s. Without kubelets it may not get there: the node lifecycle controller keeps patching the nodes."""
    deadline = time.monotonic() + timeout
    rate = float("inf")
    while time.monotonic() < deadline:
        before = _ServerSnapshot(cp)
        time.sleep(window)
        delta = _ServerSnapshot(cp).since(before)
        # The nodes' heartbeats are the steady state, not the controllers' catching up.
        rate = sum(n for (v, r), n in delta["requests"].items() if v in WRITES and r != "leases") / delta["s"]
        if rate < 1.0:
            break
    return rate


def _verbs(delta: dict, verb: str) -> float:
    return sum(n for (v, _r), n in delta["requests"].items() if v == verb)


# ------------------------------------------------------------------------------------------------ dragoman's side


async def _child(kubeconfig: str) -> None:
    """Connect + LIST + watch until live (as bench_sync measures it) in a fresh process; say so on stdout, stay live
    until stdin closes, then report the watch events absorbed meanwhile."""
    from dragoman.fleet.cluster import connect
    from dragoman.fleet.informer import sync
    from dragoman.fleet.store import FleetStore

    t0 = time.perf_counter()
    c0 = time.process_time()
    cluster = await connect(kubeconfig, None)
    store = FleetStore()
    syncer = await sync(cluster, store)
    await syncer.wait_synced(600)
    out = {
        "sync_s": time.perf_counter() - t0,
        "sync_cpu_s": time.process_time() - c0,
        "peak_mib": _peak_rss_mib(),
        "objects": store.count(),
        "pods": store.count("Pod"),
        "nodes": store.count("Node"),
        "slices": store.count("ResourceSlice"),
        "kinds": len(syncer.informers),
    }
    print(json.dumps(out), flush=True)
    c1 = time.process_time()
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    print(json.dumps({"live_cpu_s": time.process_time() - c1}), flush=True)
    await syncer.stop()
    await cluster.close()


def _sync(kubeconfig: str, hold=None) -> tuple[dict, dict]:
    """One sync in a child process; `hold(first_report)` runs while the child sits live. (sync report, live report)"""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dragoman.benchmarks.bench_controlplane", "--child", kubeconfig],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        if not line:
            proc.wait(30)
            raise RuntimeError("sync child failed: " + proc.stderr.read()[-2000:])
        first = json.loads(line)
        if hold is not None:
            hold(first)
        proc.stdin.close()
        live = json.loads(proc.stdout.readline() or "{}")
        proc.wait(60)
        return first, live
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# What `dragoman check` imports before it reads anything: its start-up, timed apart from the read and the analysis.
CHECK_IMPORTS = (
    "import dragoman.tui.cli, dragoman.tui.commands.check, dragoman.tui.headless, dragoman.fleet.informer, "
    "dragoman.fleet.diagnose, dragoman.fleet.model, dragoman.fleet.report"
)


def byte_compile() -> None:
    """dragoman's modules compiled to bytecode once, as `pip install` leaves them: with PYTHONDONTWRITEBYTECODE set (as
    on this project's shared machine) an editable checkout is otherwise compiled from source by every process, which
    once made up most of a small fleet's check."""
    import compileall
    import importlib.util

    for name in ("dragoman", "dragoman.fleet", "dragoman.actions", "dragoman.widgets", "dragoman.tui", "dragoman.sim"):
        spec = importlib.util.find_spec(name)
        for where in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(where, maxlevels=0 if name == "dragoman" else 10, quiet=2, workers=1)


def _time_check_startup() -> float:
    """Seconds for a fresh process to import what `dragoman check` imports (interpreter start included)."""
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", CHECK_IMPORTS], check=True, timeout=300)
    return time.perf_counter() - t


def _time_check(kubeconfig: str) -> float:
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "dragoman", "check", "--kubeconfig", kubeconfig, "--output", "json"],
        capture_output=True,
        timeout=900,
    )
    dt = time.perf_counter() - t
    # Exit 1 is "error findings", a verdict on the fleet; 2 is a fleet that could not be read.
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"dragoman check exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    json.loads(proc.stdout)
    return dt


KUBECTL_READS = (
    ["get", "pods", "-A", "-o", "json"],
    ["get", "nodes", "-o", "json"],
    ["get", "resourceslices", "-o", "json"],
)


def _time_kubectl(kubectl: str, kubeconfig: str, home: str) -> float:
    env = {**os.environ, "KUBECONFIG": kubeconfig, "HOME": home}
    t = time.perf_counter()
    for args in KUBECTL_READS:
        subprocess.run(
            [kubectl, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, timeout=900
        )
    return time.perf_counter() - t


# ------------------------------------------------------------------------------------------------ the benchmark


# `--only controlplane:envelope` (or `--controlplane --envelope`): Kubernetes' envelope on the real server and on the
# simulator (bench_cp_envelope.py); the default is the scale fleet alone.
PARTS = ("scale", "envelope")


def run(quick: bool, parts: list[str] | None = None) -> list[Figure]:
    figures: list[Figure] = []
    for part in parts or ["scale"]:
        if part == "envelope":
            from dragoman.benchmarks import bench_cp_envelope

            figures += bench_cp_envelope.run(quick)
        else:
            figures += _run_scale(quick)
    return figures


def _run_scale(quick: bool) -> list[Figure]:
    from dragoman.sim.controlplane.build import KUBE_VERSION, built, cache_dir
    from dragoman.sim.scenarios.scale import generate_scale

    # 1,000 nodes (8,000 GPUs, half published in 500 ResourceSlices), 5,000 GPU pods and 1,000 driver pods: what loads
    # in a few
    # minutes on the 2-core machine these figures come from (README, "Against the real control plane").
    nodes, pods, runs, live_s = (100, 500, 1, 5.0) if quick else (1_000, 5_000, 3, LIVE_S)
    # DRAGOMAN_CP_FLEET=nodes,pods[,runs] tries another size (how large a fleet the real control plane holds here).
    if os.environ.get("DRAGOMAN_CP_FLEET"):
        sizes = [int(x) for x in os.environ["DRAGOMAN_CP_FLEET"].split(",")]
        nodes, pods, runs = sizes[0], sizes[1], sizes[2] if len(sizes) > 2 else runs
    binaries = built()
    if binaries is None:
        raise RuntimeError(
            f"the control plane {KUBE_VERSION} is not built in {cache_dir()}; `dragoman controlplane build` makes it"
        )
    objects = generate_scale(nodes=nodes, pods=pods)
    figures: list[Figure] = []
    load_before = os.getloadavg()[0]
    cp = control_plane(binaries, nodes)
    beat = None
    with tempfile.TemporaryDirectory(prefix="dragoman-bench-cp-") as home:
        try:
            t = time.perf_counter()
            cp.start()
            ready_s = time.perf_counter() - t
            with _Memory(cp) as mem:
                t = time.perf_counter()
                loaded, beat = load_fleet(cp, objects)
                load_s = time.perf_counter() - t
            created, sent, refused = loaded.objects, loaded.stats.requests, loaded.stats.refused
            if refused:
                print(f"{len(refused)} creates refused, e.g. {refused[0]}", file=sys.stderr)
            print(f"loaded {created:,} objects in {load_s:.0f} s", file=sys.stderr, flush=True)
            kc = pathlib.Path(home) / "kubeconfig"
            fd = os.open(kc, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(yaml.safe_dump(cp.kubeconfig()))
            kc = str(kc)

            # Without kubelets every node goes NotReady and the controllers react with writes of their own (taints,
            # pod conditions) at kube-controller-manager's 20 requests/s: let them drain, so the intervals below
            # compare a server as idle as it gets.
            t = time.perf_counter()
            writes = _settle(cp)
            settle_s = time.perf_counter() - t
            print(f"settled in {settle_s:.0f} s ({writes:.1f} writes/s)", file=sys.stderr, flush=True)
            # The server without dragoman, then with dragoman's informers listing and then sitting live, as long.
            base0 = _ServerSnapshot(cp)
            time.sleep(live_s)
            base = _ServerSnapshot(cp).since(base0)
            costs: dict = {}

            def hold(_first: dict) -> None:
                s1 = _ServerSnapshot(cp)
                costs["sync"] = s1.since(s0)
                time.sleep(live_s)
                costs["live"] = _ServerSnapshot(cp).since(s1)

            s0 = _ServerSnapshot(cp)
            first, live = _sync(kc, hold)
            # Interleaved, so the machine's other work weighs on both sides alike.
            syncs, checks, kubectl_runs, startups = [first], [], [], []
            byte_compile()
            kubectl = _kubectl()
            for i in range(runs):
                if i:
                    syncs.append(_sync(kc)[0])
                startups.append(_time_check_startup())
                checks.append(_time_check(kc))
                if kubectl:
                    kubectl_runs.append(_time_kubectl(kubectl, kc, home))
            print(
                "dragoman synced in "
                + ", ".join(f"{s['sync_s']:.1f}" for s in syncs)
                + " s; check "
                + ", ".join(f"{c:.1f}" for c in checks)
                + " s; kubectl "
                + ", ".join(f"{k:.1f}" for k in kubectl_runs)
                + " s",
                file=sys.stderr,
                flush=True,
            )
            mem_after = mem.now()
        finally:
            if beat is not None:
                beat.stop()
            cp.stop()
    load = [load_before, os.getloadavg()[0]]
    sync_s = sorted(s["sync_s"] for s in syncs)
    scale = (
        f"{first['nodes']:,} nodes, {first['slices']:,} slices, {first['pods']:,} pods; {first['objects']:,} "
        f"objects of {first['kinds']} kinds"
    )
    figures += [
        Figure(
            "machine load average (1 min), before and after",
            "",
            load,
            "",
            None,
            "others' work inflates every time below",
        ),
        Figure(
            "control plane: etcd + kube-apiserver + scheduler + controller-manager ready",
            "s",
            [ready_s],
            "",
            None,
            "v1.37.2, on loopback",
        ),
        Figure(
            f"load: {created:,} objects created through the API",
            "objects/s",
            [created / load_s],
            "",
            None,
            f"{load_s:.0f} s, {sent:,} requests, {IN_FLIGHT} in flight; {len(refused)} refused; "
            f"{loaded.stats.throttled} answered 429",
        ),
    ]
    figures.append(
        Figure(
            "load: waiting for the controllers' writes to drain (< 1/s, at most 120 s)",
            "s",
            [settle_s],
            "",
            None,
            f"{writes:.1f} writes/s at the end (every client)",
        )
    )
    for name in ("etcd", "kube-apiserver"):
        figures.append(
            Figure(
                f"load: {name} peak memory during the load",
                "MiB",
                [mem.peak[name]],
                "",
                None,
                f"RSS; {mem_after[name]:,.0f} MiB at the end of the run",
            )
        )
    figures += [
        Figure("sync: connect + LIST all kinds until live (real API server)", "s", sync_s, "", None, scale),
        Figure(
            "sync: client CPU time of that sync",
            "s",
            [s["sync_cpu_s"] for s in syncs],
            "",
            None,
            "the rest is the server and the machine",
        ),
        Figure(
            "sync: peak memory of the syncing process",
            "MiB",
            [s["peak_mib"] for s in syncs],
            "",
            None,
            "VmHWM, Python included",
        ),
        Figure("dragoman check --output json", "s", checks, "", None, "a fresh process: imports, sync, analysis, JSON"),
        Figure(
            "dragoman check: start-up (interpreter and imports)",
            "s",
            startups,
            "",
            None,
            "the rest, reading and analysis: "
            f"{sorted(checks)[len(checks) // 2] - sorted(startups)[len(startups) // 2]:.2f} s",
        ),
    ]
    if kubectl_runs:
        k = sorted(kubectl_runs)[len(kubectl_runs) // 2]
        figures += [
            Figure(
                "kubectl get pods -A + get nodes + get resourceslices, -o json",
                "s",
                kubectl_runs,
                "",
                None,
                "same server, same objects",
            ),
            Figure(
                "sync of all kinds ÷ kubectl trio",
                "×",
                [sync_s[len(sync_s) // 2] / k],
                "<= 0.3×",
                lambda v: v <= 0.3,
                "lower is better",
            ),
            Figure(
                "dragoman check ÷ kubectl trio",
                "×",
                [sorted(checks)[len(checks) // 2] / k],
                "<= 0.3×",
                lambda v: v <= 0.3,
                "lower is better",
            ),
        ]
    sync, livec = costs["sync"], costs["live"]
    for label, d in (("without dragoman", base), ("with dragoman live", livec)):
        top = sorted(d["requests"].items(), key=lambda kv: -kv[1])[:8]
        print(
            f"requests {label}: " + ", ".join(f"{v} {r or '-'} {int(n)}" for (v, r), n in top),
            file=sys.stderr,
            flush=True,
        )
    listed = ", ".join(f"{r} {int(n)}" for (v, r), n in sorted(sync["requests"].items()) if v == "LIST")
    figures += [
        Figure("server: LIST requests of one sync", "requests", [_verbs(sync, "LIST")], "", None, listed[:120]),
    ]
    for label, d in (("without dragoman", base), ("with dragoman live", livec)):
        figures += [
            Figure(
                f"server: WATCH requests open, {label}",
                "watches",
                [d["watches"]],
                "",
                None,
                "apiserver_longrunning_requests{verb=WATCH}",
            ),
            Figure(
                f"server: requests in {live_s:.0f} s, {label}",
                "requests",
                [sum(d["requests"].values())],
                "",
                None,
                "apiserver_request_total, every client",
            ),
            Figure(
                f"server: kube-apiserver CPU in {live_s:.0f} s, {label}",
                "CPU s",
                [d["cpu"]["kube-apiserver"]],
                "",
                None,
                "psutil user + system",
            ),
            Figure(
                f"server: etcd CPU in {live_s:.0f} s, {label}",
                "CPU s",
                [d["cpu"]["etcd"]],
                "",
                None,
                "psutil user + system",
            ),
        ]
    rewatch = lambda d: _verbs(d, "LIST") + _verbs(d, "WATCH")  # noqa: E731
    figures += [
        Figure(
            "server: WATCH requests dragoman holds open while live",
            "watches",
            [livec["watches"] - base["watches"]],
            "",
            None,
            f"one informer per kind: {first['kinds']} kinds",
        ),
        Figure(
            f"server: LIST + finished WATCH requests in {live_s:.0f} s, without dragoman",
            "requests",
            [rewatch(base)],
            "",
            None,
            "the controllers' own",
        ),
        Figure(
            f"server: LIST + finished WATCH requests in {live_s:.0f} s, with dragoman live",
            "requests",
            [rewatch(livec)],
            "",
            None,
            "a relist or re-watch would show here",
        ),
        Figure(
            "server: kube-apiserver CPU of one sync",
            "CPU s",
            [sync["cpu"]["kube-apiserver"]],
            "",
            None,
            f"over {sync['s']:.1f} s",
        ),
        Figure(
            f"client: dragoman's CPU while live {live_s:.0f} s",
            "CPU s",
            [live.get("live_cpu_s", float("nan"))],
            "",
            None,
            "watch events and bookmarks",
        ),
    ]
    return figures


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        asyncio.run(_child(sys.argv[2]))
    else:
        from dragoman.benchmarks.harness import format_table

        print(format_table(run(quick="--quick" in sys.argv)))
