"""fleet/k8s/allocator.py at Kubernetes' envelope (5,000 nodes, 40,000 GPUs, sim/scenarios/scale.py): indexing the
slices once per snapshot, what the claims hold, the fleet's free counts (what the allocator could give a bridged
nvidia.com/gpu pod on every DRA node) and the *why not* of every Pending GPU pod over every node of its pool."""

from __future__ import annotations

import gc
import time

from dragoman.benchmarks.harness import Figure

GPU = "nvidia.com/gpu"


def _by_kind(objs: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for o in objs:
        out.setdefault(o.get("kind", ""), []).append(o)
    return out


def _gpus(pod: dict) -> int:
    n = 0
    for c in (pod.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        v = (res.get("limits") or {}).get(GPU) or (res.get("requests") or {}).get(GPU)
        n += int(v or 0)
    return n


def _results(claim: dict) -> list[tuple[tuple[str, str, str], dict]]:
    from dragoman.fleet.k8s.devicestate import result_entries

    return result_entries(claim)


def _bridge_claim(pod: dict, serving: str | None) -> dict:
    """The scheduler's <extended-resources> claim for a bridged GPU pod."""
    return {
        "metadata": {"namespace": pod["metadata"].get("namespace", ""), "name": "<extended-resources>"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "container-0-request-0",
                        "exactly": {"deviceClassName": serving, "allocationMode": "ExactCount", "count": _gpus(pod)},
                    }
                ]
            }
        },
    }


def measure(objs: list[dict]) -> dict:
    from dragoman.fleet.k8s.allocator import AllocatedState, Allocator, Inventory

    by = _by_kind(objs)
    nodes = {n["metadata"]["name"]: n for n in by.get("Node", [])}
    classes = {c["metadata"]["name"]: c for c in by.get("DeviceClass", [])}
    serving = next((n for n, c in classes.items() if (c.get("spec") or {}).get("extendedResourceName") == GPU), None)
    gc.collect()
    t0 = time.perf_counter()
    inv = Inventory(by.get("ResourceSlice", []), by.get("DeviceTaintRule", []))
    index_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    state = AllocatedState.from_claims(by.get("ResourceClaim", []))
    state_s = time.perf_counter() - t0
    alloc = Allocator(inv, state, classes)
    dra_nodes = [n for n in nodes if n in inv.on_node]
    t0 = time.perf_counter()
    free = 0
    devices = 0
    for name in dra_nodes:
        rq = alloc.request_devices(nodes[name], serving or "")
        free += len(rq.candidates)
        devices += len(rq.candidates) + len(rq.excluded)
    free_s = time.perf_counter() - t0
    # Every Pending GPU pod whose pool is served through DRA: its bridged claim explained on every node of its pool
    # (allocate, then each device's reason), as the diagnosis would.
    pool_label = "cloud.google.com/gke-nodepool"
    by_pool: dict[str, list[dict]] = {}
    for n in nodes.values():
        if n["metadata"]["name"] in inv.on_node:
            by_pool.setdefault((n["metadata"].get("labels") or {}).get(pool_label, ""), []).append(n)
    pending = [
        p
        for p in by.get("Pod", [])
        if not (p.get("spec") or {}).get("nodeName")
        and _gpus(p)
        and ((p.get("spec") or {}).get("nodeSelector") or {}).get(pool_label) in by_pool
    ]
    t0 = time.perf_counter()
    explained = 0
    for pod in pending:
        claim = _bridge_claim(pod, serving)
        for node in by_pool[pod["spec"]["nodeSelector"][pool_label]]:
            alloc.explain(node, [claim])
            explained += 1
    why_s = time.perf_counter() - t0
    # A/B of the CEL cache: the same why-not for the first pods, each with what an allocator that compiled per pod
    # would do (the engine's compiled-expression cache emptied, a verdict cache of its own), against the one allocator
    # and the one compiled-expression cache (fleet/cel/engine.compile_expression) the diagnosis uses.
    from dragoman.fleet.cel import engine
    from dragoman.fleet.k8s.allocator import SelectorCache

    ab_pods = pending[:10]
    t0 = time.perf_counter()
    for pod in ab_pods:
        engine._cache.clear()
        cold = Allocator(inv, state, classes, cache=SelectorCache())
        for node in by_pool[pod["spec"]["nodeSelector"][pool_label]]:
            cold.explain(node, [_bridge_claim(pod, serving)])
    per_pod_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for pod in ab_pods:
        for node in by_pool[pod["spec"]["nodeSelector"][pool_label]]:
            alloc.explain(node, [_bridge_claim(pod, serving)])
    shared_s = time.perf_counter() - t0
    # The fleet's device states as the model keeps them (fleet/k8s/devicestate.py, what DRA FREE, the Devices view and
    # the diagnosis read): built once on the same Inventory/AllocatedState reading, then every device's state and the
    # hardware units free now; then one claim changed, as a watch event brings it, and its pool read again.
    from dragoman.fleet.k8s.devicestate import FleetDevices

    gc.collect()
    t0 = time.perf_counter()
    fd = FleetDevices(
        by.get("ResourceSlice", []),
        (((c["metadata"].get("namespace", ""), c["metadata"]["name"]), c) for c in by.get("ResourceClaim", [])),
        by.get("DeviceTaintRule", []),
    )
    units: dict[tuple, bool] = {}
    for dev in fd.devices():
        unit = fd.physical_key(dev.id)
        units[unit] = units.get(unit, True) and fd.state(dev.id).allocatable
    states_s = time.perf_counter() - t0
    claims = by.get("ResourceClaim", [])
    t0 = time.perf_counter()
    for c in claims[:1000]:
        ck = (c["metadata"].get("namespace", ""), c["metadata"]["name"])
        fd.set_claim(ck, None)
        fd.set_claim(ck, c)
        for did, _ in _results(c):
            fd.state(did)
    event_ms = (time.perf_counter() - t0) * 1000 / max(min(len(claims), 1000), 1)
    return {
        "states": states_s,
        "units_free": sum(units.values()),
        "units": len(units),
        "claim_event": event_ms,
        "index": index_s,
        "state": state_s,
        "free": free_s,
        "free_devices": free,
        "devices": devices,
        "dra_nodes": len(dra_nodes),
        "pending": len(pending),
        "explained": explained,
        "why": why_s,
        "cel_ab": per_pod_s / max(shared_s, 1e-9),
        "ab_pods": len(ab_pods),
        "nodes": len(nodes),
    }


def run(quick: bool) -> list[Figure]:
    from dragoman.sim.scenarios.scale import generate_envelope

    if quick:
        objs = generate_envelope(nodes=600, gpu_nodes=250, pods=15_000, gpu_pods=2_000, job_pods=1_000)
    else:
        objs = generate_envelope()
    runs = 1 if quick else 3
    results = [measure(objs) for _ in range(runs)]
    r = results[0]
    scale = f"{r['nodes']:,} nodes, {r['devices']:,} DRA devices on {r['dra_nodes']:,} nodes"
    return [
        Figure(f"allocator: index the slices ({scale})", "s", [x["index"] for x in results]),
        Figure("allocator: what the claims hold (AllocatedState)", "s", [x["state"] for x in results]),
        Figure(
            f"allocator: free counts of every DRA node ({r['free_devices']:,} devices free)",
            "s",
            [x["free"] for x in results],
            target="< 2 s (the diagnosis' own pass over the fleet)",
            meets=lambda v: v < 2.0,
        ),
        Figure(
            f"allocator: why-not of every Pending DRA GPU pod over its pool ({r['pending']} pods, "
            f"{r['explained']:,} node checks)",
            "s",
            [x["why"] for x in results],
            target="< 5 s",
            meets=lambda v: v < 5.0,
        ),
        Figure(
            f"device states: every device's state and the free hardware units ({r['units_free']:,} of "
            f"{r['units']:,} free)",
            "s",
            [x["states"] for x in results],
            target="< 2 s (the diagnosis' own pass over the fleet)",
            meets=lambda v: v < 2.0,
        ),
        Figure(
            "device states: one claim changed, its pools read again",
            "ms",
            [x["claim_event"] for x in results],
            target="< 1 ms (the model's one-event target)",
            meets=lambda v: v < 1.0,
        ),
        Figure(
            f"allocator: why-not of {r['ab_pods']} pods, CEL compiled and judged per pod ÷ the one cache (A/B)",
            "×",
            [x["cel_ab"] for x in results],
        ),
        Figure(
            "allocator: one node's why-not",
            "ms",
            [x["why"] * 1000 / max(x["explained"], 1) for x in results],
        ),
    ]
