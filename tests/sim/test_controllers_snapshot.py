"""Controllers started on a consistent snapshot write nothing (the demo, and a fleet they built themselves), and the
in-process run is deterministic."""

from __future__ import annotations

import datetime
import json

from dragoman.fleet import nvidia_schema as nvidia
from dragoman.fleet.k8s import registry
from dragoman.sim import scenario as scenario_mod
from dragoman.sim.controllers import default_controllers
from dragoman.sim.controllers.base import settle
from dragoman.sim.server import Simulator

from tests.sim.test_controllers_gpu import device_plugin_ds, dra_driver_ds, gpu_node

DEMO = scenario_mod.__file__.rsplit("/", 1)[0] + "/scenarios/demo.yaml"


LEASES = "leases.coordination.k8s.io"


def _writes(sim: Simulator) -> list[tuple[str, str, str]]:
    """Every write from now on, named (event type, resource, object), so a failure says which controller wrote."""
    seen: list[tuple[str, str, str]] = []
    sim.store.subscribe(lambda et, r, o, old: seen.append((et, r, o["metadata"]["name"])))
    return seen


def _state(sim: Simulator) -> list[dict]:
    """Every object the simulator holds, as a snapshot a restarted simulator loads."""
    return [json.loads(json.dumps(o)) for r in registry.RESOURCES if not r.storage for o in sim.store.list(r.key)]


def test_the_demo_does_not_churn_when_its_controllers_start():
    sc = scenario_mod.load(DEMO)
    # At the demo's own clock (its snapshot): the toleration of the Xid rule's notebook has not run out there.
    sim = Simulator.from_scenario(sc)
    writes = _writes(sim)
    ran = settle(default_controllers(sim, scheduler=False))
    assert ran > 0
    # The scenario carries no node Leases: each running kubelet creates its own, and nothing else is written.
    nodes = {n["metadata"]["name"] for n in sim.store.list("nodes")}
    assert sorted(w for w in writes if w[:2] != ("ADDED", LEASES)) == []
    assert {w[2] for w in writes} <= nodes


def test_the_demo_restarted_on_its_own_state_writes_nothing_and_its_heartbeats_resume():
    """A restarted controller set over a settled fleet writes nothing, Leases included: a kubelet's heartbeat
    resumes at its Lease's period rather than every node renewing in the first instant (one write per node on every
    restart, the benchmark's 5,000). Then each Lease is renewed once per period, as before the restart."""
    sim = Simulator.from_scenario(scenario_mod.load(DEMO))
    settle(default_controllers(sim, scheduler=False))
    state = _state(sim)
    renewed = {ls["metadata"]["name"]: ls["spec"]["renewTime"] for ls in sim.store.list(LEASES)}
    assert len(renewed) == len(sim.store.list("nodes")) > 0

    again = Simulator(state, start=sim.clock.now())
    writes = _writes(again)
    controllers = default_controllers(again, scheduler=False)
    settle(controllers)
    assert writes == []

    again.clock.step(11)  # past the kubelet's 10 s renewal period
    settle(controllers)
    assert sorted(writes) == sorted(("MODIFIED", LEASES, name) for name in renewed)
    assert all(ls["spec"]["renewTime"] > renewed[ls["metadata"]["name"]] for ls in again.store.list(LEASES))


def test_a_restart_after_the_heartbeat_period_renews_each_lease_once_and_writes_nothing_else():
    sim = Simulator.from_scenario(scenario_mod.load(DEMO))
    settle(default_controllers(sim, scheduler=False))
    again = Simulator(_state(sim), start=sim.clock.now() + datetime.timedelta(seconds=30))
    writes = _writes(again)
    settle(default_controllers(again, scheduler=False))
    assert sorted(writes) == sorted(("MODIFIED", LEASES, n["metadata"]["name"]) for n in sim.store.list("nodes"))


def _fleet() -> list[dict]:
    mig = nvidia.NodeHardware(
        model=nvidia.CATALOG["a100-80gb"], gpu_count=2, mig_strategy="mixed", mig_layout=("1g.10gb",) * 7
    )
    shared = nvidia.NodeHardware(model=nvidia.CATALOG["l4"], gpu_count=1, replicas=4, sharing_strategy="time-slicing")
    nodes = [
        gpu_node("gpu-a-1", "pool-a"),
        gpu_node("gpu-b-1", "pool-b"),
        gpu_node("mig-1", "pool-mig", hw=mig),
        gpu_node("ts-1", "pool-ts", hw=shared),
    ]
    dp = device_plugin_ds()
    for term in dp["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]:
        term["matchExpressions"].append({"key": "pool", "operator": "NotIn", "values": ["pool-b"]})
    return nodes + [dp, dra_driver_ds({"pool": "pool-b"})]


def test_device_plugin_resources_follow_the_hardware_and_a_reload_writes_nothing():
    sim = Simulator(_fleet())
    settle(default_controllers(sim, scheduler=False))
    alloc = {n["metadata"]["name"]: n["status"]["allocatable"] for n in sim.store.list("nodes")}
    assert alloc["gpu-a-1"]["nvidia.com/gpu"] == "8"
    assert alloc["ts-1"]["nvidia.com/gpu"] == "4"  # one L4, time-sliced four ways
    assert alloc["mig-1"]["nvidia.com/mig-1g.10gb"] == "14" and "nvidia.com/gpu" not in alloc["mig-1"]
    assert "nvidia.com/gpu" not in alloc["gpu-b-1"]
    assert [s["spec"]["nodeName"] for s in sim.store.list("resourceslices")] == ["gpu-b-1"]

    snapshot = [
        json.loads(json.dumps(o))
        for r in ("nodes", "pods", "daemonsets.apps", "resourceslices.resource.k8s.io", LEASES)
        for o in sim.store.list(r)
    ]
    again = Simulator(snapshot, start=sim.clock.now())
    writes = _writes(again)
    settle(default_controllers(again, scheduler=False))
    assert writes == []


def test_an_in_process_run_is_deterministic():
    def run() -> list[tuple[str, str]]:
        sim = Simulator(_fleet())
        settle(default_controllers(sim, scheduler=False))
        return sorted((p["metadata"]["name"], p["spec"]["nodeName"]) for p in sim.store.list("pods"))

    assert run() == run()


def test_mig_single_is_advertised_as_gpus_and_the_driver_publishes_mig_devices():
    hw = nvidia.NodeHardware(
        model=nvidia.CATALOG["a100-40gb"], gpu_count=2, mig_strategy="single", mig_layout=("1g.5gb",) * 7
    )
    node = gpu_node("mig-1", "pool-mig", hw=hw)
    dp = device_plugin_ds()
    sim = Simulator([node, dp, dra_driver_ds({"pool": "pool-mig"})])
    settle(default_controllers(sim, scheduler=False))
    status = sim.store.get("nodes", None, "mig-1")["status"]
    assert status["allocatable"]["nvidia.com/gpu"] == "14"
    devices = [d for s in sim.store.list("resourceslices") for d in s["spec"]["devices"]]
    assert len(devices) == 14 and {d["attributes"]["type"]["string"] for d in devices} == {"mig"}
    assert {d["attributes"]["profile"]["string"] for d in devices} == {"1g.5gb"}


def test_a_plugin_back_within_the_grace_keeps_capacity_and_restores_allocatable():
    sim = Simulator([gpu_node("gpu-a-1", "pool-a"), device_plugin_ds()])
    controllers = default_controllers(sim, scheduler=False)
    settle(controllers)
    pod = sim.store.list("pods", "nvidia-device-plugin")[0]
    sim.store.delete("pods", "nvidia-device-plugin", pod["metadata"]["name"], grace_period_seconds=0)
    settle(controllers)
    sim.clock.step(200)
    settle(controllers)
    status = sim.store.get("nodes", None, "gpu-a-1")["status"]
    assert (status["allocatable"]["nvidia.com/gpu"], status["capacity"]["nvidia.com/gpu"]) == ("8", "8")
    sim.clock.step(200)
    settle(controllers)
    status = sim.store.get("nodes", None, "gpu-a-1")["status"]
    assert status["capacity"]["nvidia.com/gpu"] == "8"  # the plugin came back: no grace expiry drops it later
    assert len(sim.store.list("pods", "nvidia-device-plugin")) == 1
