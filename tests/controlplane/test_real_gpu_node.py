"""One GPU node under a real kubelet v1.37.2 (`sim serve --control-plane --real-kubelets`): dragoman's DRA kubelet
plugin and device plugin run there as the DaemonSets' containers (dragoman-cri supervises them), and what the real
kubelet does is read from the runtime's record of what each container was given.

In order, on one node (two L4s, tests/controlplane/data/real_gpu_node.yaml):
- the DRA driver's pod starts and its ResourceSlices appear (timed);
- a pod asking for nvidia.com/gpu is placed through the bridge: its container gets exactly the GPU its claim
  allocated (the CDI name of the claim's device);
- the device plugin arrives: the node's allocatable moves to 2, and a second nvidia.com/gpu pod, placed by counting,
  is given the SAME GPU by the kubelet's device manager — both stacks on one node, for real; `both-stacks` names it;
- the device plugin's pod leaves (allocatable 0 at once, capacity kept) and comes back;
- the device plugin is killed, then crash-loops by a fault of its node (sim.dragoman.io/pod-faults, which
  dragoman-cri plays as the Python agents do): allocatable drops to 0 while capacity stays (the kubelet's grace),
  and `plugin-flapping` fires on the real restart count — in seconds, the node's kubelet being configured with a
  5 s maxContainerRestartPeriod (sim.dragoman.io/max-container-restart-seconds); the pod that got its GPU from the
  plugin still holds it (the kubelet reports it in allocatedResourcesStatus), so `running-without-gpu` does not
  accuse it;
- the driver's pod leaves: its slices are wiped after the kubelet's delay.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from dragoman.fleet import nvidia_schema as nv
from dragoman.sim.controlplane import nodedevices as nd

from tests.controlplane.support import Served, binaries_dir, wait_for
from tests.support import serve

pytestmark = pytest.mark.controlplane

SCENARIO = pathlib.Path(__file__).parent / "data" / "real_gpu_node.yaml"
NODE = "rk-gpu-a"
NS = "rk-gpu"
DP_NS = "nvidia-device-plugin"
DRA_NS = "dra-driver-nvidia-gpu"
GPU = "nvidia.com/gpu"


@contextlib.contextmanager
def served_with_kubelets(tmp: pathlib.Path) -> Iterator[Served]:
    kubeconfig, log_path, audit = tmp / "kubeconfig", tmp / "serve.log", tmp / "audit.log"
    args = ["--scenario", str(SCENARIO), "--control-plane", str(binaries_dir()), "--real-kubelets", "all"]
    args += ["--write-kubeconfig", str(kubeconfig), "--audit-log-path", str(audit)]
    proc = serve.start(args, log_path, cwd=tmp)
    try:
        deadline = time.monotonic() + 600
        while "press Ctrl+C" not in log_path.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("sim serve --real-kubelets did not start:\n" + log_path.read_text())
            time.sleep(0.5)
        yield Served(proc, kubeconfig, log_path, audit)
    finally:
        serve.stop(proc, 60)


@pytest.fixture(scope="module")
def gpu(tmp_path_factory) -> Iterator[Served]:
    with served_with_kubelets(tmp_path_factory.mktemp("realgpu")) as s:
        yield s


def node_folder(s: Served) -> pathlib.Path:
    assert s.run_dir is not None
    return s.run_dir / "nodes" / "n00"


def record(s: Served) -> list[dict]:
    return json.loads((node_folder(s) / "containers.json").read_text())["containers"]


def container(s: Served, ns: str, pod_prefix: str, name: str, state: str = "running") -> dict | None:
    found = [
        c
        for c in record(s)
        if c["namespace"] == ns and c["pod"].startswith(pod_prefix) and c["name"] == name and c["state"] == state
    ]
    return found[-1] if found else None


def node_gpus(s: Served) -> tuple[str | None, str | None]:
    code, node = s.request("GET", f"/api/v1/nodes/{NODE}")
    assert code == 200, node
    st = node.get("status") or {}
    return (st.get("capacity") or {}).get(GPU), (st.get("allocatable") or {}).get(GPU)


def gpu_pod(s: Served, name: str) -> dict:
    body = {
        "metadata": {"name": name},
        "spec": {
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "main", "image": "registry.example/cuda:12", "resources": {"limits": {GPU: "1"}}}],
        },
    }
    code, pod = s.request("POST", f"/api/v1/namespaces/{NS}/pods", body)
    assert code == 201, pod
    return wait_for(lambda: running(s, name), 60, f"pod {name} Running")


def running(s: Served, name: str) -> dict | None:
    code, pod = s.request("GET", f"/api/v1/namespaces/{NS}/pods/{name}")
    return pod if code == 200 and (pod.get("status") or {}).get("phase") == "Running" else None


def findings(s: Served) -> list[dict]:
    run = subprocess.run(
        [sys.executable, "-m", "dragoman", "check", "--kubeconfig", str(s.kubeconfig), "--output", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)["findings"]


def named(fs: list[dict], fid: str) -> list[dict]:
    return [f for f in fs if f["id"] == fid]


def doc(s: Served) -> dict:
    return json.loads((node_folder(s) / "devices.json").read_text())


def test_slices_appear_when_the_driver_pod_starts(gpu):
    def started() -> Any:
        pods = gpu.items(f"/api/v1/namespaces/{DRA_NS}/pods")
        return pods and (pods[0]["status"].get("containerStatuses") or [{}])[0].get("state", {}).get("running")

    state = wait_for(started, 90, "the DRA driver's kubelet-plugin pod running")
    slices = wait_for(
        lambda: gpu.items("/apis/resource.k8s.io/v1/resourceslices", query=f"fieldSelector=spec.nodeName={NODE}"),
        60,
        "the node's ResourceSlices",
    )
    # Published by the real plugin under the real kubelet: the devices the Python agent publishes for this node.
    devices = sorted(d["name"] for s in slices for d in s["spec"].get("devices") or ())
    want = sorted(d["name"] for s in nd.published_specs(doc(gpu)) for d in s.get("devices") or ())
    assert devices == want == ["gpu-0", "gpu-1"]
    owner = slices[0]["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("Node", NODE)
    started_at = state["startedAt"]
    created = min(s["metadata"]["creationTimestamp"] for s in slices)
    print(f"driver container started {started_at}, first slice created {created}")
    assert created >= started_at  # RFC 3339 in UTC, second resolution: comparable as text


def test_a_bridged_pod_gets_exactly_the_gpu_its_claim_allocated(gpu):
    pod = gpu_pod(gpu, "bridged")
    ercs = pod["status"].get("extendedResourceClaimStatus")
    assert ercs, "placed through the bridge: the scheduler made its claim"
    code, claim = gpu.request(
        "GET", f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/{ercs['resourceClaimName']}"
    )
    assert code == 200, claim
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    assert (result["driver"], result["pool"]) == (nv.DRIVER, NODE)
    c = wait_for(lambda: container(gpu, NS, "bridged", "main"), 30, "the runtime's record of bridged")
    # The kubelet handed the container the CDI device the DRA plugin prepared for the claim's device: that GPU.
    assert c["cdiDevices"] == [f"k8s.gpu.nvidia.com/claim={claim['metadata']['uid']}-{result['device']}"]
    assert "NVIDIA_VISIBLE_DEVICES" not in c["env"]
    assert nd.uuid_of_cdi_name(doc(gpu), c["cdiDevices"][0]) == nv.gpu_uuid(NODE, int(result["device"].split("-")[1]))


def test_both_stacks_on_one_node_give_two_pods_the_same_gpu(gpu):
    assert node_gpus(gpu) == (None, None)  # no device plugin yet
    label_node(gpu, "dragoman.io/device-plugin", "on")
    t0 = time.monotonic()
    wait_for(lambda: node_gpus(gpu) == ("2", "2"), 90, "the device plugin's GPUs in the node's allocatable")
    print(f"allocatable nvidia.com/gpu = 2 {time.monotonic() - t0:.1f} s after the node was labelled")
    pod = gpu_pod(gpu, "dp-pod")
    assert not pod["status"].get("extendedResourceClaimStatus"), "placed by counting the device plugin's GPUs"
    dp = wait_for(lambda: container(gpu, NS, "dp-pod", "main"), 30, "the runtime's record of dp-pod")
    bridged = container(gpu, NS, "bridged", "main")
    assert bridged is not None
    dp_uuid = dp["env"]["NVIDIA_VISIBLE_DEVICES"]
    assert dp["cdiDevices"] == [f"nvidia.com/gpu={dp_uuid}"]
    # The over-admission: the device manager does not know the DRA claim holds that GPU.
    assert nd.uuid_of_cdi_name(doc(gpu), bridged["cdiDevices"][0]) == dp_uuid
    (f,) = named(findings(gpu), "both-stacks")
    assert f["objects"][0] == {"kind": "Node", "namespace": None, "name": NODE}


def label_node(s: Served, key: str, value: str | None) -> None:
    code, body = s.request(
        "PATCH",
        f"/api/v1/nodes/{NODE}",
        {"metadata": {"labels": {key: value}}},
        content_type="application/merge-patch+json",
    )
    assert code == 200, body


def test_the_device_plugin_pod_leaving_then_returning(gpu):
    """The migration's exclusion step, as the real kubelet accounts for it: the plugin's pod is deleted (SIGTERM: the
    plugin stops and removes its socket), allocatable drops to 0 and capacity stays through the device manager's
    5-minute grace (the Python kubelet's ENDPOINT_GRACE_SECONDS); back, it serves again at once."""
    assert node_gpus(gpu) == ("2", "2")
    label_node(gpu, "dragoman.io/device-plugin", None)
    t0 = time.monotonic()
    wait_for(lambda: node_gpus(gpu)[1] == "0", 60, "allocatable nvidia.com/gpu dropping to 0")
    print(f"device-plugin pod deleted: allocatable 0 after {time.monotonic() - t0:.1f} s, capacity {node_gpus(gpu)[0]}")
    assert node_gpus(gpu)[0] == "2"
    wait_for(lambda: not gpu.items(f"/api/v1/namespaces/{DP_NS}/pods"), 60, "the plugin's pod gone")
    # The supervisor stopped the plugin with SIGTERM: it said so and left (its socket with it).
    plugin_log = (node_folder(gpu) / "dragoman-device-plugin.log").read_text()
    assert plugin_log.rstrip().endswith(f"node {NODE}: stopped"), plugin_log[-500:]
    label_node(gpu, "dragoman.io/device-plugin", "on")
    t0 = time.monotonic()
    wait_for(lambda: node_gpus(gpu) == ("2", "2"), 90, "the device plugin serving again")
    print(f"device plugin back: allocatable 2 after {time.monotonic() - t0:.1f} s")


def kill_device_plugin(s: Served) -> int:
    c = wait_for(lambda: container(s, DP_NS, "nvidia-device-plugin", "nvidia-device-plugin-ctr"), 90, "the plugin")
    os.kill(c["supervisedPid"], signal.SIGKILL)
    return c["attempt"]


def restarts(s: Served) -> int:
    pods = s.items(f"/api/v1/namespaces/{DP_NS}/pods")
    return int((pods[0]["status"].get("containerStatuses") or [{}])[0].get("restartCount") or 0)


def test_the_device_plugin_killed_then_crash_looping(gpu):
    assert node_gpus(gpu) == ("2", "2")
    # The rehearsal's kubelet caps its crash-loop back-off at 5 s (the node's max-container-restart-seconds).
    config = yaml.safe_load((node_folder(gpu) / "kubelet.yaml").read_text())
    assert config["crashLoopBackOff"] == {"maxContainerRestartPeriod": "5s"}
    # Killed once and restarted at once (no back-off the first time): it registers again in well under the node
    # status period, so allocatable need not move at all.
    kill_device_plugin(gpu)
    wait_for(lambda: restarts(gpu) >= 1, 30, "the first restart")
    # Then it crash-loops as the demo's a100-serve plugin does: a fault of the node (sim.dragoman.io/pod-faults, the
    # scenario's one contract, which the Python agents play too), read by dragoman-cri at each start of the
    # DaemonSet's container: it runs 1 s and exits 1, every time; the kubelet's back-off (5 s here) between. The
    # kubelet marks the resource unhealthy when the plugin's stream ends: allocatable drops to 0 at a status update
    # that finds the plugin down (it is down 5 s of every 6); capacity stays through its grace.
    set_pod_faults(gpu, {"nvidia-device-plugin-daemonset": {"sim.dragoman.io/crash-loop-seconds": "1"}})
    kill_device_plugin(gpu)
    t0 = time.monotonic()
    wait_for(lambda: node_gpus(gpu)[1] == "0", 60, "allocatable nvidia.com/gpu dropping to 0")
    print(f"allocatable 0 {time.monotonic() - t0:.1f} s after the kill; capacity {node_gpus(gpu)[0]}")
    assert node_gpus(gpu)[0] == "2"
    wait_for(lambda: restarts(gpu) >= 3, 60, "three restarts")
    print(f"three restarts {time.monotonic() - t0:.1f} s after the fault")
    crashed = [
        c for c in record(gpu) if c["namespace"] == DP_NS and c["state"] in ("exited", "removed") and c.get("faults")
    ]
    assert crashed, "dragoman-cri played the node's fault"
    assert crashed[-1]["faults"] == {"sim.dragoman.io/crash-loop-seconds": "1"} and crashed[-1]["exitCode"] == 1
    before = node_gpus(gpu)[1]
    fs = findings(gpu)
    after = node_gpus(gpu)[1]
    (flap,) = named(fs, "plugin-flapping")
    assert flap["objects"][0]["name"] == NODE
    assert any("restarts" in e for e in flap["evidence"]), flap["evidence"]
    # What the node says at the check's read (the plugin is up about one second in six, so it flips).
    assert {f"node allocatable nvidia.com/gpu = {a} now, capacity 2" for a in (before, after)} & set(flap["evidence"])
    # dp-pod still holds the GPU the plugin gave it (the real kubelet says so in its status): not "without a GPU".
    code, pod = gpu.request("GET", f"/api/v1/namespaces/{NS}/pods/dp-pod")
    assert code == 200
    held = pod["status"]["containerStatuses"][0].get("allocatedResourcesStatus") or []
    assert [r["name"] for r in held] == [GPU] and held[0]["resources"][0]["resourceID"].startswith("GPU-")
    assert not [f for f in named(fs, "running-without-gpu") if "dp-pod" in f["summary"]]
    set_pod_faults(gpu, None)


def set_pod_faults(s: Served, faults: dict | None) -> None:
    code, body = s.request(
        "PATCH",
        f"/api/v1/nodes/{NODE}",
        {"metadata": {"annotations": {"sim.dragoman.io/pod-faults": json.dumps(faults) if faults else None}}},
        content_type="application/merge-patch+json",
    )
    assert code == 200, body


def test_the_driver_leaving_wipes_its_slices_after_the_kubelets_delay(gpu):
    """The DRA driver's pod deleted: the plugin stops (SIGTERM), the kubelet unregisters it and deletes its
    ResourceSlices once its wiping delay has passed (cm/dra defaultWipingDelay, 30 s: the Python agent's
    WIPING_DELAY_SECONDS), not at once."""
    label_node(gpu, "dragoman.io/dra", None)
    wait_for(lambda: not gpu.items(f"/api/v1/namespaces/{DRA_NS}/pods"), 60, "the driver's pod gone")
    t0 = time.monotonic()
    slices = f"/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName={NODE}"
    assert gpu.items(slices.split("?")[0], query=slices.split("?")[1]), "the slices stay at first"
    wait_for(lambda: not gpu.items(slices.split("?")[0], query=slices.split("?")[1]), 90, "the slices wiped")
    waited = time.monotonic() - t0
    print(f"slices wiped {waited:.1f} s after the driver's pod was gone")
    assert waited > 15, "wiped after a delay, not at once"
