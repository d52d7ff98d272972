"""The simulated scheduler placing pending GPU pods on a generated fleet: half through the device plugin, half through
the bridge."""

from __future__ import annotations

import random
import time

from dragoman.benchmarks.harness import Figure

GPU_CLASS_SELECTOR = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"


def _fleet(nodes: int, gpus: int) -> tuple[list[dict], list[dict], list[dict]]:
    """Half the nodes on the device plugin (allocatable nvidia.com/gpu), half on DRA (slices, no allocatable)."""
    from dragoman.fleet import nvidia_schema as nv

    hw = nv.NodeHardware(nv.CATALOG["h100-80gb"], gpus)
    node_objs, slices = [], []
    for i in range(nodes):
        dra = i % 2 == 1
        name = f"gke-prod-{'h100-dra' if dra else 'h100-dp'}-{i:05d}"
        alloc = {"cpu": "208", "memory": "1843Gi", "pods": "110", "ephemeral-storage": "3Ti"}
        if not dra:
            alloc["nvidia.com/gpu"] = str(gpus)
        node_objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "uid": f"uid-{name}",
                    "labels": {
                        "kubernetes.io/hostname": name,
                        "cloud.google.com/gke-nodepool": "h100-dra" if dra else "h100-dp",
                        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                    },
                },
                "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
                "status": {"allocatable": alloc, "capacity": dict(alloc), "nodeInfo": {"kubeletVersion": "v1.37.1"}},
            }
        )
        if dra:
            slices.extend(nv.resource_slices_for_node(name, hw, "v0.4.0"))
    classes = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.nvidia.com", "creationTimestamp": "2026-06-01T10:00:00Z"},
            "spec": {
                "selectors": [{"cel": {"expression": GPU_CLASS_SELECTOR}}],
                "extendedResourceName": "nvidia.com/gpu",
            },
        }
    ]
    return node_objs, slices, classes


def _pods(count: int) -> list[dict]:
    pods = []
    for i in range(count):
        pool = "h100-dra" if i % 2 else "h100-dp"
        name = f"train-{i:06d}"
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
                "spec": {
                    "schedulerName": "default-scheduler",
                    "nodeSelector": {"cloud.google.com/gke-nodepool": pool},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [
                        {
                            "name": "main",
                            "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                            "resources": {
                                "requests": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "1"},
                                "limits": {"nvidia.com/gpu": "1"},
                            },
                        }
                    ],
                },
                "status": {"phase": "Pending"},
            }
        )
    return pods


def _scale_objects(nodes: int, pods: int, gpus: int) -> tuple[list[dict], list[dict], list[dict], list[dict]] | None:
    """sim/scenarios/scale.py's fleet with every GPU pod pending (half device plugin, half bridge), when it exists."""
    try:
        from dragoman.sim.scenarios.scale import generate_scale
    except ImportError:
        return None
    objs = generate_scale(nodes=nodes, gpus_per_node=gpus, pods=pods, pending=pods)
    by_kind: dict[str, list[dict]] = {}
    for o in objs:
        by_kind.setdefault(o.get("kind", ""), []).append(o)
    return (
        by_kind.get("Node", []),
        by_kind.get("ResourceSlice", []),
        by_kind.get("DeviceClass", []),
        by_kind.get("Pod", []),
    )


def place_all(nodes: int, pods: int, gpus: int = 8, use_scale: bool = True) -> dict:
    from dragoman.sim.controllers.scheduling import ClusterView, apply_decision, schedule_one

    scale = _scale_objects(nodes, pods, gpus) if use_scale else None
    if scale is not None:
        node_objs, slices, classes, all_pods = scale
        pending = [p for p in all_pods if not (p.get("spec") or {}).get("nodeName")]
        source = "sim/scenarios/scale.py"
    else:
        node_objs, slices, classes = _fleet(nodes, gpus)
        all_pods = pending = _pods(pods)
        source = "built-in generator"
    t0 = time.perf_counter()
    view = ClusterView(
        nodes=node_objs,
        resourceslices=slices,
        deviceclasses=classes,
        pods=all_pods,
        rng=random.Random(1),
    )
    build = time.perf_counter() - t0
    outcomes: dict[str, int] = {}
    bridged = 0
    t1 = time.perf_counter()
    for pod in pending:
        dec = schedule_one(pod, view, "2026-11-30T12:00:00Z")
        outcomes[dec.outcome] = outcomes.get(dec.outcome, 0) + 1
        bridged += bool(dec.claims_to_create)
        apply_decision(view, dec)
    elapsed = time.perf_counter() - t1
    return {
        "build": build,
        "elapsed": elapsed,
        "rate": len(pending) / elapsed,
        "outcomes": outcomes,
        "bridged": bridged,
        "pending": len(pending),
        "source": source,
    }


def run(quick: bool) -> list[Figure]:
    nodes, pods = (500, 2000) if quick else (5000, 20000)
    runs = 1 if quick else 2
    results = [place_all(nodes, pods) for _ in range(runs)]
    r0 = results[0]
    note = f"{r0['outcomes']}, {r0['bridged']} bridge claims, fleet from {r0['source']}"
    return [
        Figure(
            f"scheduler: place {r0['pending']:,} pending GPU pods on {nodes:,} nodes",
            "pods/s",
            [r["rate"] for r in results],
            target=">= 500",
            meets=lambda v: v >= 500,
            note=note,
        ),
        Figure("scheduler: index the fleet (ClusterView)", "s", [r["build"] for r in results]),
    ]


if __name__ == "__main__":
    import sys

    out = place_all(int(sys.argv[1]) if len(sys.argv) > 1 else 5000, int(sys.argv[2]) if len(sys.argv) > 2 else 20000)
    print(out)
