"""The fleet model at scale: complete model from scratch, one watch event, events/s with the model consistent,
memory."""

from __future__ import annotations

import copy
import gc
import os
import random
import time
import tracemalloc
from collections import defaultdict

from dragoman.benchmarks.harness import Figure
from dragoman.fleet.diagnose import diagnose
from dragoman.fleet.model import FleetModel, key_of
from dragoman.fleet.store import Change
from dragoman.sim.scenarios.scale import generate_scale


def _by_kind(objs: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = defaultdict(dict)
    for o in objs:
        out[o["kind"]][key_of(o)] = o
    return out


def _complete(by_kind: dict) -> FleetModel:
    """Load, then every node and pool view: what the first screen of the TUI and `dragoman check` need."""
    m = FleetModel()
    m.load(by_kind)
    m.nodes()
    m.pools()
    return m


def _events(by_kind: dict, n: int, seed: int = 1) -> list[Change]:
    """A watch-like mix: pod status updates (most), device-plugin pod restarts, claim and slice updates."""
    rng = random.Random(seed)
    pods = [p for p in by_kind["Pod"].values() if (p.get("spec") or {}).get("nodeName")]
    stack = [p for p in pods if any(o.get("kind") == "DaemonSet" for o in p["metadata"].get("ownerReferences") or ())]
    claims = list(by_kind.get("ResourceClaim", {}).values())
    slices = list(by_kind.get("ResourceSlice", {}).values())
    out = []
    rv = 10_000_000
    for _ in range(n):
        rv += 1
        r = rng.random()
        if r < 0.7 or not (stack and claims and slices):
            base = rng.choice(pods)
        elif r < 0.85:
            base = rng.choice(stack)
        elif r < 0.95:
            base = rng.choice(claims)
        else:
            base = rng.choice(slices)
        obj = dict(base)
        obj["metadata"] = {**base["metadata"], "resourceVersion": str(rv)}
        if base["kind"] == "Pod":
            status = copy.deepcopy(base.get("status") or {})
            for cs in status.get("containerStatuses") or ():
                cs["restartCount"] = int(cs.get("restartCount") or 0) + 1
            obj["status"] = status
        out.append(Change(base["kind"], "MODIFIED", obj, base))
    return out


def _touched_nodes(m: FleetModel, ch: Change) -> set[str]:
    if ch.kind == "Pod" or ch.kind == "ResourceSlice":
        n = (ch.obj.get("spec") or {}).get("nodeName")
        return {n} if n else set()
    if ch.kind == "ResourceClaim":
        n = m.claim_node(ch.obj)
        return {n} if n else set()
    return set()


def _read_views(m: FleetModel, nodes: set[str]) -> None:
    for n in nodes:
        v = m.node(n)
        if v is not None:
            m.pool(v.pool)


def _consistent(m: FleetModel) -> bool:
    fresh = FleetModel()
    fresh.load(m.objects)
    return [v.to_json() for v in m.nodes()] == [v.to_json() for v in fresh.nodes()] and [
        p.to_json() for p in m.pools()
    ] == [p.to_json() for p in fresh.pools()]


def run(quick: bool) -> list[Figure]:
    nodes, pods = (500, 2000) if quick else (5000, 20000)
    runs = 2 if quick else 3
    objs = generate_scale(nodes=nodes, gpus_per_node=8, pods=pods, pending=pods // 100)
    by_kind = _by_kind(objs)
    scale = f"{nodes:,} nodes, {nodes * 8:,} GPUs, {pods:,} pods"

    build = []
    model = None
    for _ in range(runs):
        model = None
        gc.collect()
        t0 = time.perf_counter()
        model = _complete(by_kind)
        build.append(time.perf_counter() - t0)

    diag = []
    for _ in range(runs):
        fresh = _complete(by_kind)
        t0 = time.perf_counter()
        findings = diagnose(fresh)
        diag.append(time.perf_counter() - t0)

    # The same fleet with a DeviceClass serving nvidia.com/gpu without a `type == "gpu"` clause: class-too-broad reads
    # back every device the class matches (once; it was once per device, quadratic: 20,000 devices took 35 s).
    broad = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "all-nvidia", "creationTimestamp": "2030-01-01T00:00:00Z"},
        "spec": {
            "selectors": [{"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}],
            "extendedResourceName": "nvidia.com/gpu",
        },
    }
    with_broad = {**by_kind, "DeviceClass": {**by_kind.get("DeviceClass", {}), ("", "all-nvidia"): broad}}
    diag_broad = []
    for _ in range(runs):
        fresh = _complete(with_broad)
        n_devices = sum(1 for _ in fresh.devices())
        t0 = time.perf_counter()
        diagnose(fresh)
        diag_broad.append(time.perf_counter() - t0)

    # One event: apply it and read back the node and pool it touched.
    singles = []
    for ch in _events(by_kind, 2000, seed=2):
        t0 = time.perf_counter()
        model.apply([ch])
        _read_views(model, _touched_nodes(model, ch))
        singles.append((time.perf_counter() - t0) * 1000)
    p99 = sorted(singles)[int(len(singles) * 0.99)]

    # Sustained: events one by one, every touched view read back, then checked against a rebuild.
    rates = []
    n_events = 2000 if quick else 10000
    for i in range(runs):
        evs = _events(by_kind, n_events, seed=10 + i)
        t0 = time.perf_counter()
        for ch in evs:
            model.apply([ch])
            _read_views(model, _touched_nodes(model, ch))
        rates.append(n_events / (time.perf_counter() - t0))
    consistent = _consistent(model)

    # Memory: the model's own allocations on top of the raw objects, and the whole process.
    del model
    gc.collect()
    tracemalloc.start()
    m = _complete(by_kind)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = None
    try:
        import psutil

        rss = psutil.Process(os.getpid()).memory_info().rss / 2**20
    except ImportError:  # psutil is a test extra
        pass
    del m

    figures = [
        Figure("model: complete from scratch", "s", build, "< 2 s", lambda v: v < 2.0, scale),
        Figure("model: diagnose (all findings)", "s", diag, note=f"{len(findings)} findings"),
        Figure(
            'model: diagnose, a class without type == "gpu"',
            "s",
            diag_broad,
            note=f"{n_devices:,} devices; linear (tests/badinput/test_badinput_diagnosis_scale.py counts the walks)",
        ),
        Figure(
            "model: one event",
            "ms",
            singles,
            "< 1 ms",
            lambda v: v < 1.0,
            f"apply + read back its node and pool; p99 {p99:.3f} ms over {len(singles)} events",
        ),
        Figure("model: one event, p99", "ms", [p99], note="scheduling noise of a shared machine shows here"),
        Figure(
            "model: events absorbed",
            "events/s",
            rates if consistent else [0.0],
            ">= 5,000",
            lambda v: v >= 5000,
            "consistent with a rebuild" if consistent else "INCONSISTENT with a rebuild",
        ),
        Figure("model: its own peak allocations", "MiB", [peak / 2**20], note="tracemalloc, over the raw objects"),
    ]
    if rss is not None:
        figures.append(Figure("model: process RSS (fleet + model)", "MiB", [rss], "< 1,024 MiB", lambda v: v < 1024))
    return figures
