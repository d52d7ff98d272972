"""The simulator's controllers at fleet scale: building a 5,000-node fleet's daemon pods and node status, restarting on
it, and one node's change."""

from __future__ import annotations

import json
import time

from dragoman.benchmarks.harness import Figure


def _fleet(n: int) -> list[dict]:
    from dragoman.fleet import nvidia_schema as nvidia

    hw = nvidia.NodeHardware(model=nvidia.CATALOG["h100-80gb"], gpu_count=8)
    labels = hw.gfd_labels()
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"gpu-{i:05d}",
                "labels": {"pool": f"pool-{i % 10}", "kubernetes.io/hostname": f"gpu-{i:05d}", **labels},
            },
            "status": {"nodeInfo": {"kubeletVersion": "v1.37.1"}, "conditions": [{"type": "Ready", "status": "True"}]},
        }
        for i in range(n)
    ]
    dp_labels = {"app.kubernetes.io/name": "nvidia-device-plugin"}
    dp = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "nvdp-nvidia-device-plugin", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": dp_labels},
            "template": {
                "metadata": {"labels": dp_labels},
                "spec": {
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["pool-9"]}]}
                                ]
                            }
                        }
                    },
                    "containers": [
                        {"name": "nvidia-device-plugin-ctr", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.4"}
                    ],
                },
            },
        },
    }
    dra_labels = {
        "app.kubernetes.io/name": "dra-driver-nvidia-gpu",
        "dra-driver-nvidia-gpu-component": "kubelet-plugin",
    }
    dra = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "dra-driver-nvidia-gpu-kubelet-plugin", "namespace": "dra-driver-nvidia-gpu"},
        "spec": {
            "selector": {"matchLabels": dra_labels},
            "template": {
                "metadata": {"labels": dra_labels},
                "spec": {
                    "nodeSelector": {"pool": "pool-9"},
                    "containers": [
                        {"name": "gpus", "image": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.0"}
                    ],
                },
            },
        },
    }
    return nodes + [dp, dra]


def run(quick: bool) -> list[Figure]:
    from dragoman.sim.controllers import default_controllers
    from dragoman.sim.controllers.base import settle
    from dragoman.sim.server import Simulator

    n = 500 if quick else 5000
    runs = 1 if quick else 3
    cold, restart, relabel, restart_writes = [], [], [], []
    for _ in range(runs):
        sim = Simulator(_fleet(n))
        t0 = time.perf_counter()
        controllers = default_controllers(sim, scheduler=False)
        settle(controllers)
        cold.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        sim.store.patch("nodes", None, "gpu-00001", {"metadata": {"labels": {"pool": "pool-9"}}})
        settle(controllers)
        relabel.append(time.perf_counter() - t0)

        # The settled fleet's state, its kubelets' Leases included, restarted at the moment it was taken: a
        # restarted controller set writes nothing (each heartbeat resumes at its Lease's period).
        settle(controllers)
        snapshot = [
            json.loads(json.dumps(o))
            for r in (
                "nodes",
                "pods",
                "daemonsets.apps",
                "resourceslices.resource.k8s.io",
                "leases.coordination.k8s.io",
            )
            for o in sim.store.list(r)
        ]
        again = Simulator(snapshot, start=sim.clock.now())
        rv = again.store.resource_version
        t0 = time.perf_counter()
        settle(default_controllers(again, scheduler=False))
        restart.append(time.perf_counter() - t0)
        restart_writes.append(float(again.store.resource_version - rv))
    return [
        Figure(
            f"controllers: cold start, {n} nodes (daemon pods, node status, slices)",
            "s",
            cold,
            note="every daemon pod created and started, every node's status and the DRA pool's slices written",
        ),
        Figure(f"controllers: restart on a consistent {n}-node fleet", "s", restart, "< 5 s", lambda v: v < 5.0),
        Figure("controllers: writes on that restart", "writes", restart_writes, "0", lambda v: v == 0),
        Figure(
            f"controllers: one node moved between pools ({n} nodes)",
            "s",
            relabel,
            "< 0.5 s",
            lambda v: v < 0.5,
            note="plugin pod replaced by the DRA driver's, allocatable dropped, slices published",
        ),
    ]
