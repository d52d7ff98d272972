"""Counts believed from outside are capped with a sentence: a node's own label `nvidia.com/gpu.count` never makes a
prediction of a billion devices, and a ReplicaSet of 10^9 replicas written through the API never holds the
simulator's loop for one burst (the scenario-file caps are in test_badinput_scenario)."""

from __future__ import annotations

import json
import pathlib
import tracemalloc

import pytest
from dragoman.fleet import nvidia_schema as nvs

from tests.actions.migrate_support import base_args, cli, demo
from tests.actions.switch_support import ALL_STEPS

A100 = "a100-train"
LABELS = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "1000000000"}


@pytest.mark.parametrize(
    "extra,most",
    [
        ({}, nvs.MAX_GPUS_PER_NODE),
        ({"nvidia.com/mig.strategy": "mixed", "nvidia.com/mig-1g.10gb.count": "1000000000"}, nvs.MAX_DEVICES_PER_NODE),
        (
            {"nvidia.com/mig.strategy": "single", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"},
            nvs.MAX_DEVICES_PER_NODE,
        ),
    ],
    ids=["whole-gpus", "mig-mixed", "mig-single"],
)
def test_a_billion_gpus_in_a_label_predicts_a_bounded_number_of_devices(extra: dict, most: int) -> None:
    node = {"metadata": {"name": "n", "labels": {**LABELS, **extra}}}
    tracemalloc.start()
    try:
        devices = nvs.predict_devices(node, "v0.4.0")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert devices is not None and 0 < len(devices) <= most
    assert peak < 64 << 20
    assert "at most 64 GPUs" in nvs.count_cap_note(node["metadata"]["labels"])
    assert nvs.count_cap_note({**LABELS, "nvidia.com/gpu.count": "8"}) == ""


async def test_migrate_plan_on_a_node_claiming_a_billion_gpus_says_so(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        nodes = sorted(
            e.obj["metadata"]["name"]
            for e in sim.store.entries("nodes")
            if e.obj["metadata"].get("labels", {}).get("cloud.google.com/gke-nodepool") == A100
        )
        sim.store.patch("nodes", None, nodes[0], {"metadata": {"labels": {"nvidia.com/gpu.count": "1000000000"}}})
        rc = await cli(base_args(sim, tmp_path, A100, "--plan", "--output", "json", *ALL_STEPS))
        plan = json.loads(capsys.readouterr().out)
    blockers = " ".join(plan["steps"][0]["blockers"])
    assert rc == 3, "the gate stops a node whose count after the switch differs from today's"
    assert f"node {nodes[0]}" in blockers and "64 after the switch" in blockers
    assert "nvidia.com/gpu.count says 1000000000, more than any server holds" in blockers


def test_a_replicaset_of_a_billion_creates_pods_in_bursts() -> None:
    from dragoman.sim.controllers.workloads import BURST_REPLICAS, Workloads
    from dragoman.sim.server import Simulator

    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {
            "replicas": 1_000_000_000,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
    }
    sim = Simulator([rs])  # as a client could write it: the API allows int32 replicas
    w = Workloads(sim)
    w.start_sync()
    w.process(limit=len(w._queue))  # one pass over the initial keys
    assert sim.store.count("pods") == BURST_REPLICAS
    assert not w.idle or w._timers, "the rest is queued for the next sync, not dropped"
