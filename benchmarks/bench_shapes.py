"""What the hostile-input shape checks (fleet/shapes.py, issue 19) cost, before and after their fast path, in one run.

"Before" is the walk alone (shapes.shape_problem_walk, every item checked again after decoding); "after" is what
Cluster.admit and Cluster._event run now (the compiled check; pods projected by the LIST decoder checked once per
distinct shared part). "None" is the same path with no check at all, so the rows say what the checks add. All CPU
time of this process, interleaved rounds, so the ratios hold on a busy machine."""

from __future__ import annotations

import gc
import json
import statistics
import time

from dragoman.benchmarks.harness import Figure


def _envelope_pods(quick: bool) -> tuple[list[dict], list[dict]]:
    from dragoman.sim.scenarios.scale import generate_envelope

    size = dict(nodes=100, gpu_nodes=50, pods=3_000, gpu_pods=300, job_pods=250)
    if not quick:
        size = dict(nodes=400, gpu_nodes=200, pods=12_000, gpu_pods=1_600, job_pods=1_000)
    objs = json.loads(json.dumps(generate_envelope(**size)))
    return [o for o in objs if o["kind"] == "Pod"], [o for o in objs if o["kind"] in ("Node", "ResourceSlice")]


def _pages(items: list[dict], kind: str) -> list[bytes]:
    plain = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in items]
    return [
        json.dumps({"kind": f"{kind}List", "apiVersion": "v1", "metadata": {}, "items": plain[i : i + 500]}).encode()
        for i in range(0, len(plain), 500)
    ]


class _Mode:
    """shapes.shape_problem as it is ("after"), as it was ("before": the walk, no decoder marks), or no check."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        from dragoman.fleet import shapes

        self.saved = shapes.shape_problem
        if self.mode == "before":
            shapes.shape_problem = shapes.shape_problem_walk
        elif self.mode == "none":
            shapes.shape_problem = lambda obj, kind="": None

    def __exit__(self, *exc) -> None:
        from dragoman.fleet import shapes

        shapes.shape_problem = self.saved


def _cluster():
    from dragoman.fleet.cluster import Cluster

    c = Cluster.__new__(Cluster)
    c.malformed, c.malformed_count = {}, 0
    c._who = lambda: "bench"
    return c


def _list_cpu(pages: list[bytes], kind: str, project: bool) -> float:
    """CPU seconds to decode these LIST pages (projecting pods, as a live store does) and admit their items."""
    from dragoman.fleet.cluster import decode
    from dragoman.fleet.projection import PodListDecoder

    cluster = _cluster()
    path = "/api/v1/pods" if kind == "Pod" else "/api/v1/nodes"
    decoder = PodListDecoder() if project else decode
    was = gc.isenabled()
    gc.disable()
    try:
        t = time.process_time()
        for raw in pages:
            page = decoder(raw)
            cluster.admit(path, page, page["items"])
        return time.process_time() - t
    finally:
        if was:
            gc.enable()


def _event_cpu(lines: list[bytes], store) -> float:
    """CPU seconds per watch event: one line decoded and checked (Cluster._event), applied to a projecting store."""
    cluster = _cluster()
    t = time.process_time()
    for line in lines:
        etype, obj = cluster._event(line, "/api/v1/pods")
        store.apply("Pod", etype, obj)
    store.flush()
    return (time.process_time() - t) / len(lines)


def _walk_vs_fast(objs: list[dict]) -> tuple[float, float]:
    from dragoman.fleet import shapes

    out = []
    for fn in (shapes.shape_problem_walk, shapes.shape_problem):
        t = time.process_time()
        for o in objs:
            fn(o)
        out.append((time.process_time() - t) / len(objs))
    return out[0], out[1]


def run(quick: bool) -> list[Figure]:
    from dragoman.fleet.store import FleetStore

    pods, others = _envelope_pods(quick)
    pod_pages, other_pages = _pages(pods, "Pod"), _pages([o for o in others if o["kind"] == "Node"], "Node")
    cpu_pods = [p for p in pods if (p["metadata"].get("ownerReferences") or [{}])[0].get("kind") == "ReplicaSet"]
    lines = []
    for i, p in enumerate(cpu_pods[:4000]):
        p = dict(p, metadata={**p["metadata"], "resourceVersion": str(10**12 + i)})
        lines.append(json.dumps({"type": "MODIFIED", "object": p}).encode())
    store = FleetStore(["Pod"])
    store.serve_whole_from(object())  # projects as a live store does; nothing here fetches
    store.replace("Pod", pods)
    store.flush()
    gc.collect()
    gc.freeze()
    rounds = 3 if quick else 5
    res: dict[str, dict[str, list[float]]] = {
        m: {"list": [], "nodes": [], "event": []} for m in ("before", "after", "none")
    }
    per_object: dict[str, list[float]] = {}
    for r in range(rounds):
        for mode in ("before", "after", "none") if r % 2 == 0 else ("none", "after", "before"):
            with _Mode(mode):
                res[mode]["list"].append(_list_cpu(pod_pages, "Pod", project=True))
                res[mode]["nodes"].append(_list_cpu(other_pages, "Node", project=False))
                res[mode]["event"].append(_event_cpu(lines, store))
        for name, objs in (("Pod", pods), ("Node", [o for o in others if o["kind"] == "Node"])):
            walk, fast = _walk_vs_fast(objs)
            per_object.setdefault(f"{name} walk", []).append(walk * 1e6)
            per_object.setdefault(f"{name} fast", []).append(fast * 1e6)
    med = {m: {k: statistics.median(v) for k, v in d.items()} for m, d in res.items()}
    n = len(pods)

    def share(mode: str, what: str) -> float:
        return 100 * (med[mode][what] - med["none"][what]) / med[mode][what]

    figures = []
    for mode, words in (("before", "the walk (before)"), ("after", "compiled, once per shared part (after)")):
        figures.append(
            Figure(
                f"shapes: LIST of {n:,} envelope pods decoded (projecting) + admitted, {words}",
                "CPU s",
                res[mode]["list"],
                "",
                None,
                f"the checks are {share(mode, 'list'):.0f}% of it (no check: {med['none']['list']:.2f} s)",
            )
        )
    figures += [
        Figure(
            "shapes: LIST CPU of pods, after ÷ before",
            "×",
            [a / b for a, b in zip(res["after"]["list"], res["before"]["list"], strict=True)],
            "",
            None,
            "same run, interleaved rounds; lower is better",
        ),
        Figure(
            "shapes: LIST CPU of nodes (kept whole), after ÷ before",
            "×",
            [a / b for a, b in zip(res["after"]["nodes"], res["before"]["nodes"], strict=True)],
            "",
            None,
            f"before {med['before']['nodes'] * 1e3:.0f} ms, after {med['after']['nodes'] * 1e3:.0f} ms, "
            f"no check {med['none']['nodes'] * 1e3:.0f} ms",
        ),
    ]
    for mode, words in (("before", "the walk (before)"), ("after", "compiled (after)")):
        figures.append(
            Figure(
                f"shapes: watch, one MODIFIED pod decoded, checked, applied; {words}",
                "CPU µs",
                [v * 1e6 for v in res[mode]["event"]],
                "< 1000 µs",
                lambda v: v < 1000,
                f"no check {med['none']['event'] * 1e6:.0f} µs; {len(lines):,} Deployment pods, projecting store",
            )
        )
    figures.append(
        Figure(
            "shapes: watch event CPU, after ÷ before",
            "×",
            [a / b for a, b in zip(res["after"]["event"], res["before"]["event"], strict=True)],
            "",
            None,
            "same run, interleaved rounds",
        )
    )
    for name in ("Pod", "Node"):
        walk, fast = per_object[f"{name} walk"], per_object[f"{name} fast"]
        figures.append(
            Figure(
                f"shapes: one whole {name} checked, compiled ÷ walk",
                "×",
                [f / w for f, w in zip(fast, walk, strict=True)],
                "",
                None,
                f"walk {statistics.median(walk):.0f} µs, compiled {statistics.median(fast):.0f} µs CPU",
            )
        )
    return figures


if __name__ == "__main__":
    import sys

    from dragoman.benchmarks.harness import format_table

    print(format_table(run(quick="--quick" in sys.argv)))
