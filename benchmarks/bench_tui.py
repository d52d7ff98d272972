"""The TUI against the scale simulator: first paint, every view populated, keystroke-to-screen latency under 1,000 watch
events/s, peak memory."""

from __future__ import annotations

import argparse
import asyncio
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from dragoman.benchmarks.harness import Figure

VIEWS = ("pools", "nodes", "devices", "attributes", "claims", "pending", "findings")
SIZE = (120, 40)


# ---------------------------------------------------------------------------- the simulator side (a child process)


async def _serve(kubeconfig: str, nodes: int, pods: int) -> None:
    from dragoman.sim.scenarios.scale import generate_scale
    from dragoman.sim.server import Simulator

    sim = Simulator(generate_scale(nodes=nodes, pods=pods, pending=max(10, pods // 200)), history_size=200_000)
    await sim.start()
    sim.write_kubeconfig(kubeconfig)
    print("READY", flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    running = [p for p in sim.store.list("pods") if (p.get("spec") or {}).get("nodeName")]
    try:
        while True:
            line = (await reader.readline()).decode().split()
            if not line:
                break
            if line[0] == "churn":
                rate, seconds = float(line[1]), float(line[2])
                sent = await _churn(sim, running, rate, seconds)
                print(f"SENT {sent}", flush=True)
    finally:
        await sim.stop()


async def _churn(sim, pods: list[dict], rate: float, seconds: float) -> int:
    """Modify pods at `rate` per second (an annotation, as a status heartbeat would), in 10 ms ticks.

    Commits straight into the simulator's store (skipping request decoding, validation and managedFields): the
    point is the watch stream the UI reads, and the full write path cannot produce 1,000 writes/s on this machine.
    """
    rt = sim.store._rt("pods")
    tick = 0.01
    per_tick = rate * tick
    start = time.monotonic()
    sent, owed, i = 0, 0.0, 0
    while time.monotonic() - start < seconds:
        owed += per_tick
        while owed >= 1:
            p = pods[i % len(pods)]
            i += 1
            md = p["metadata"]
            entry = sim.store.entry(rt, md["namespace"], md["name"])
            if entry is not None:
                cur = entry.obj
                obj = {
                    **cur,
                    "metadata": {
                        **cur["metadata"],
                        "annotations": {**(cur["metadata"].get("annotations") or {}), "bench/tick": str(i)},
                    },
                }
                sim.store._commit("MODIFIED", rt, obj, entry)
                sent += 1
            owed -= 1
        # Ahead of schedule: wait for it; behind: only yield, so the watch streams go out.
        await asyncio.sleep(max(0.0, start + (sent / rate if rate else seconds) - time.monotonic()))
    return sent


class ScaleSim:
    """The scale fleet in a child process (its CPU is not the UI's), reached through a kubeconfig like any cluster."""

    def __init__(self, nodes: int, pods: int) -> None:
        self.dir = tempfile.mkdtemp(prefix="dragoman-bench-tui-")
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        # The child keeps its own copy of the log's descriptor; ours is closed once it has started.
        with open(os.path.join(self.dir, "sim.log"), "wb") as log_file:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dragoman.benchmarks.bench_tui",
                    "serve",
                    self.kubeconfig,
                    str(nodes),
                    str(pods),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log_file,
            )
        line = self.proc.stdout.readline()
        if not line.startswith(b"READY"):
            self.stop()
            raise RuntimeError(
                "the scale simulator did not start: " + pathlib.Path(self.dir, "sim.log").read_text()[-400:]
            )

    def churn(self, rate: float, seconds: float) -> None:
        self.proc.stdin.write(f"churn {rate} {seconds}\n".encode())
        self.proc.stdin.flush()

    def churned(self) -> int:
        line = self.proc.stdout.readline().split()
        return int(line[1]) if len(line) == 2 else 0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


# ---------------------------------------------------------------------------- the UI side (this process)


async def _measure(sim: ScaleSim, keystrokes: int, churn_seconds: float) -> dict:
    from dragoman.tui.app import DragomanApp
    from dragoman.tui.screens.table import TableScreen
    from dragoman.tui.source import open_cluster_feed
    from textual import events

    out: dict = {}
    t0 = time.perf_counter()
    c0 = time.process_time()  # the app's CPU (every thread): steadier than wall time on a shared machine
    k0 = _children_cpu()  # its diagnosis children's (tui/feed.py forks them; the simulator is not reaped, not counted)
    feed = await open_cluster_feed(sim.kubeconfig, None)
    out["connect"] = time.perf_counter() - t0
    app = DragomanApp(feed, kubeconfig=sim.kubeconfig)
    t_app = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        while not (isinstance(app.screen, TableScreen) and app.screen.ready):
            await asyncio.sleep(0.005)
        await pilot.pause(0)
        out["first_paint"] = time.perf_counter() - t_app
        while not feed._synced():
            await asyncio.sleep(0.01)
        out["listed"] = time.perf_counter() - t0
        out["cpu_listed"] = time.process_time() - c0
        out["cpu_children_listed"] = _children_cpu() - k0
        while not feed.loaded:
            await asyncio.sleep(0.01)
        out["loaded"] = time.perf_counter() - t0
        out["cpu_loaded"] = time.process_time() - c0
        out["cpu_children_loaded"] = _children_cpu() - k0
        while not (feed.fleet.diagnosed and feed.fleet.catalogue and app.screen.populated):
            await asyncio.sleep(0.01)
        out["diagnosed"] = time.perf_counter() - t0
        out["cpu_diagnosed"] = time.process_time() - c0
        out["cpu_children_diagnosed"] = _children_cpu() - k0
        # Each view's own time to populated (wall and the app's CPU), opened one after the other: which views are slow.
        views: dict[str, tuple[float, float]] = {}
        for name in VIEWS[1:]:
            tv, cv = time.perf_counter(), time.process_time()
            app.open_view(name)
            await pilot.pause(0)
            while not getattr(app.screen, "populated", False):
                await asyncio.sleep(0.01)
            views[name] = (time.perf_counter() - tv, time.process_time() - cv)
            app.back()
            await pilot.pause(0)
        out["views"] = views
        out["populated"] = time.perf_counter() - t0
        out["cpu_populated"] = time.process_time() - c0
        out["cpu_children_populated"] = _children_cpu() - k0

        # Keystrokes on the Nodes view (every node) while the watch delivers pod events at 1,000/s.
        app.open_view("nodes")
        while not getattr(app.screen, "populated", False):
            await asyncio.sleep(0.01)
        table = app.screen.table
        rendered = asyncio.Event()
        state = {"target": -1}
        original = table.render_line

        def spy(y: int):
            strip = original(y)
            if table.cursor == state["target"]:
                rendered.set()
            return strip

        table.render_line = spy  # type: ignore[method-assign]
        events_before = feed.events
        sim.churn(1000, churn_seconds)
        await asyncio.sleep(1.0)  # let the stream reach its rate
        latencies = []
        t_keys = time.perf_counter()
        for i in range(keystrokes):
            key = "j" if i % 2 == 0 else "k"
            state["target"] = table.cursor + (1 if key == "j" else -1)
            rendered.clear()
            t = time.perf_counter()
            app.post_message(events.Key(key, key))
            await asyncio.wait_for(rendered.wait(), 10)
            latencies.append(time.perf_counter() - t)
            await asyncio.sleep(0.05)
        keys_span = time.perf_counter() - t_keys
        sent = await asyncio.to_thread(sim.churned)
        out["latencies"] = latencies
        out["event_rate"] = (feed.events - events_before) / max(1e-9, keys_span + 1.0)
        out["sent"] = sent
    out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def view_figures(prefix: str, tui: dict) -> list[Figure]:
    """One row per view: its time from being opened to populated (wall, with the app's CPU beside it), each opened
    after the first view and the first diagnosis were shown; the slowest views are the ones to make fast."""
    return [
        Figure(
            f"{prefix} view {name} populated",
            "s",
            [wall],
            "",
            None,
            f"opened after the first; the app's CPU {cpu:.2f} s",
        )
        for name, (wall, cpu) in (tui.get("views") or {}).items()
    ]


def _children_cpu() -> float:
    """CPU time of this process's children that have ended and been reaped."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _imports() -> float:
    t = time.perf_counter()
    import dragoman.fleet.cluster  # kubernetes-asyncio: the heaviest import
    import dragoman.tui.app  # noqa: F401  (Textual)

    return time.perf_counter() - t


def run(quick: bool = False) -> list[Figure]:
    nodes, pods = (1000, 4000) if quick else (5000, 20000)
    imports = _imports()
    keystrokes = 30 if quick else 100
    sim = ScaleSim(nodes, pods)
    try:
        res = asyncio.run(_measure(sim, keystrokes, churn_seconds=keystrokes * 0.08 + 3))
    finally:
        sim.stop()
    lat = sorted(res["latencies"])
    p95 = lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))]
    fleet = f"{nodes} nodes, {pods} GPU pods"
    return [
        Figure(
            "tui: imports (Textual, kubernetes-asyncio)",
            "s",
            [imports],
            "",
            None,
            "once per process, before connecting",
        ),
        Figure(
            "tui: connect (version, API groups, identity)",
            "s",
            [res["connect"]],
            "",
            None,
            "before the UI opens, by design",
        ),
        Figure("tui: first paint", "s", [res["first_paint"]], "< 1 s", lambda v: v < 1.0, "from App start, connected"),
        Figure("tui: every kind listed (informers)", "s", [res["listed"]], "", None, "from connect; shared LIST path"),
        Figure("tui: model loaded (thread)", "s", [res["loaded"]], "", None, "from connect"),
        Figure("tui: first diagnosis and catalogue (thread)", "s", [res["diagnosed"]], "", None, "from connect"),
        Figure(
            "tui: every view populated", "s", [res["populated"]], "< 6 s", lambda v: v < 6.0, fleet + "; from connect"
        ),
        Figure(
            "tui: keystroke to screen, median",
            "ms",
            [statistics.median(lat) * 1000],
            "",
            None,
            f"{len(lat)} keys, {res['event_rate']:.0f} watch events/s absorbed",
        ),
        Figure(
            "tui: keystroke to screen, p95",
            "ms",
            [p95 * 1000],
            "< 100 ms",
            lambda v: v < 100,
            "while 1,000 events/s arrive",
        ),
        Figure("tui: peak memory (RSS)", "MB", [res["maxrss_mb"]], "", None, fleet),
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m dragoman.benchmarks.bench_tui")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="(internal) serve the scale fleet for the benchmark")
    s.add_argument("kubeconfig")
    s.add_argument("nodes", type=int)
    s.add_argument("pods", type=int)
    args = p.parse_args(argv)
    asyncio.run(_serve(args.kubeconfig, args.nodes, args.pods))
    return 0


if __name__ == "__main__":
    sys.exit(main())
