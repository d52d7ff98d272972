"""dragoman's Go device plugin and DRA kubelet plugin, driven over their gRPC APIs from the kubelet's side without a
kubelet (dragoman-plugin-probe plays it: the fallback issue 31 names), the DRA plugin against the real kube-apiserver.

The device plugin: registration, ListAndWatch, Allocate as NVIDIA's plugin answers it, a device turned unhealthy, a
restarted kubelet, a crash, a clean stop. The DRA plugin: registration through the plugin registry, its
ResourceSlices on the real API server equal to what the Python agent publishes (devices.json, one source), prepare
with CDI device names, the checkpoint across a restart, health, binding conditions written to the claim.

Everything on the API server lives under names of its own (a node no demo object uses, a namespace of its own) and is
removed at the end, so the user flows of test_real_demo.py that follow see the demo as loaded.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import pytest
from dragoman.fleet import nvidia_schema as nv
from dragoman.sim.controlplane import nodedevices as nd
from dragoman.sim.controlplane.build import build, cache_dir

from tests.controlplane.support import Served, wait_for

pytestmark = pytest.mark.controlplane

NODE = "h31-plugin-probe-node"
NS = "dragoman-plugins"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
CLAIMS = f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims"
L4 = nv.NodeHardware(model=nv.CATALOG["l4"], gpu_count=4)
COMMANDS = ("dragoman-device-plugin", "dragoman-dra-plugin", "dragoman-plugin-probe")


@pytest.fixture(scope="module")
def binaries() -> dict[str, pathlib.Path]:
    """dragoman's own node commands as `dragoman controlplane build` left them beside the control plane (built when
    absent). DRAGOMAN_CP_NODE_BINARIES points a developer's run at a folder of freshly built ones instead."""
    d = pathlib.Path(os.environ.get("DRAGOMAN_CP_NODE_BINARIES") or cache_dir())
    if not all((d / c).is_file() for c in COMMANDS):
        build()
    return {c: d / c for c in COMMANDS}


class Probe:
    """dragoman-plugin-probe: the kubelet's side of both plugin APIs, one JSON line per question."""

    def __init__(self, path: pathlib.Path) -> None:
        self.proc = subprocess.Popen(
            [str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, stderr=subprocess.DEVNULL
        )

    def ask(self, **req: Any) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


@contextlib.contextmanager
def probe(binaries: dict[str, pathlib.Path]) -> Iterator[Probe]:
    p = Probe(binaries["dragoman-plugin-probe"])
    try:
        yield p
    finally:
        p.close()


def start_plugin(binaries: dict, name: str, env: dict, log: pathlib.Path) -> subprocess.Popen:
    with log.open("a") as out:
        return subprocess.Popen(
            [str(binaries[name])],
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop_plugin(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
    return proc.wait(15)


@pytest.fixture
def short_dir() -> Iterator[pathlib.Path]:
    """A folder with a short path: a unix socket's path must fit in 108 bytes, which pytest's tmp_path may not."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="dgm-plug-"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def gpu_node(name: str, hw: nv.NodeHardware) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": hw.gfd_labels()}}


# ----------------------------------------------------------------------------------------------- device plugin


def test_device_plugin_registers_lists_allocates_as_nvidia_and_reports_health(binaries, tmp_path):
    hw = nv.NodeHardware(model=nv.CATALOG["l4"], gpu_count=4, replicas=2, sharing_strategy="time-slicing")
    devices = nd.write_node_devices(gpu_node("dp-node", hw), tmp_path / "devices.json")
    doc = json.loads(devices.read_text())
    dp_dir = tmp_path / "device-plugins"
    dp_dir.mkdir()
    env = {"DRAGOMAN_NODE": "dp-node", "DRAGOMAN_NODE_DEVICES": str(devices), "DRAGOMAN_KUBELET_ROOT": str(tmp_path)}
    log = tmp_path / "dp.log"
    with probe(binaries) as k:
        assert k.ask(op="kubelet", dir=str(dp_dir))["ok"]
        plugin = start_plugin(binaries, "dragoman-device-plugin", env, log)
        try:
            regs = wait_for(lambda: k.ask(op="registrations")["registrations"], 20, "the plugin registering")
            assert regs == [
                {
                    "resource": "nvidia.com/gpu",
                    "endpoint": "nvidia-gpu.sock",
                    "version": "v1beta1",
                    "preferredAllocation": True,
                }
            ]
            listed = wait_for(lambda: k.ask(op="devices", resource="nvidia.com/gpu")["devices"], 10, "ListAndWatch")
            # Time-slicing: 4 GPUs x 2 replicas, each replica an annotated ID of its GPU, all healthy.
            assert [d["id"] for d in listed] == [d["id"] for d in doc["devicePlugin"][0]["devices"]]
            assert len(listed) == 8 and {d["health"] for d in listed} == {"Healthy"}
            gpu0, gpu1 = nv.gpu_uuid("dp-node", 0), nv.gpu_uuid("dp-node", 1)
            assert listed[0]["id"] == f"{gpu0}::0"

            # Allocate: two replicas of GPU 0 and one of GPU 1 → each GPU once, as NVIDIA_VISIBLE_DEVICES and CDI.
            got = k.ask(
                op="allocate", resource="nvidia.com/gpu", containers=[[f"{gpu0}::0", f"{gpu0}::1", f"{gpu1}::0"]]
            )
            (c,) = got["containers"]
            assert c["envs"] == {"NVIDIA_VISIBLE_DEVICES": f"{gpu0},{gpu1}"}
            assert c["cdiDevices"] == [f"nvidia.com/gpu={gpu0}", f"nvidia.com/gpu={gpu1}"]
            assert [nd.uuid_of_cdi_name(doc, n) for n in c["cdiDevices"]] == [gpu0, gpu1]
            bad = k.ask(op="allocate", resource="nvidia.com/gpu", containers=[["GPU-not-here"]])
            assert "unknown device: GPU-not-here" in bad["error"]

            # A GPU turned unhealthy on request: both its replicas go Unhealthy in a new ListAndWatch answer.
            before = k.ask(op="devices", resource="nvidia.com/gpu")["updates"]
            (tmp_path / "devices.json.unhealthy").write_text(gpu1 + "\n")
            wait_for(
                lambda: k.ask(op="devices", resource="nvidia.com/gpu")["updates"] > before, 10, "the health update"
            )
            health = {d["id"]: d["health"] for d in k.ask(op="devices", resource="nvidia.com/gpu")["devices"]}
            assert {i for i, h in health.items() if h == "Unhealthy"} == {f"{gpu1}::0", f"{gpu1}::1"}

            # A restarted kubelet (a new kubelet.sock): the plugin registers again on its own.
            assert k.ask(op="kubelet-restart")["ok"]
            wait_for(lambda: len(k.ask(op="registrations")["registrations"]) == 2, 15, "registering again")
        finally:
            code = stop_plugin(plugin)
        # SIGTERM: a clean exit that removes its socket (the kubelet's own stays).
        assert code == 0, log.read_text()
        assert sorted(p.name for p in dp_dir.iterdir()) == ["kubelet.sock"]

        # Killed (a crash loop's exit): its socket stays behind; started again it serves and registers anew.
        plugin = start_plugin(binaries, "dragoman-device-plugin", env, log)
        wait_for(lambda: len(k.ask(op="registrations")["registrations"]) == 3, 15, "the restarted plugin registering")
        assert stop_plugin(plugin, signal.SIGKILL) == -signal.SIGKILL
        assert (dp_dir / "nvidia-gpu.sock").exists()
        plugin = start_plugin(binaries, "dragoman-device-plugin", env, log)
        try:
            wait_for(lambda: len(k.ask(op="registrations")["registrations"]) == 4, 15, "registering after a crash")
            devs = wait_for(lambda: k.ask(op="devices", resource="nvidia.com/gpu")["devices"], 10, "listing again")
            assert sum(d["health"] == "Unhealthy" for d in devs) == 2  # the health file still says so
        finally:
            assert stop_plugin(plugin) == 0


def test_device_plugin_serves_one_resource_per_mig_profile(binaries, tmp_path):
    hw = nv.NodeHardware(
        model=nv.CATALOG["a100-80gb"], gpu_count=2, mig_strategy="mixed", mig_layout=("3g.40gb", "1g.10gb", "1g.10gb")
    )
    devices = nd.write_node_devices(gpu_node("mig-node", hw), tmp_path / "devices.json")
    (tmp_path / "device-plugins").mkdir()
    env = {"DRAGOMAN_NODE": "mig-node", "DRAGOMAN_NODE_DEVICES": str(devices), "DRAGOMAN_KUBELET_ROOT": str(tmp_path)}
    with probe(binaries) as k:
        k.ask(op="kubelet", dir=str(tmp_path / "device-plugins"))
        plugin = start_plugin(binaries, "dragoman-device-plugin", env, tmp_path / "dp.log")
        try:
            regs = wait_for(
                lambda: (r := k.ask(op="registrations")["registrations"]) and len(r) == 2 and r, 20, "two resources"
            )
            assert sorted((r["resource"], r["endpoint"]) for r in regs) == [
                ("nvidia.com/mig-1g.10gb", "nvidia-mig-1g.10gb.sock"),
                ("nvidia.com/mig-3g.40gb", "nvidia-mig-3g.40gb.sock"),
            ]
            small = wait_for(lambda: k.ask(op="devices", resource="nvidia.com/mig-1g.10gb")["devices"], 10, "MIG list")
            assert len(small) == 4 and all(d["id"].startswith("MIG-") for d in small)
            got = k.ask(op="allocate", resource="nvidia.com/mig-1g.10gb", containers=[[small[0]["id"]]])
            assert got["containers"][0]["envs"] == {"NVIDIA_VISIBLE_DEVICES": small[0]["id"]}
        finally:
            assert stop_plugin(plugin) == 0


def test_device_plugin_refuses_bad_input_with_a_sentence(binaries, tmp_path):
    bad = tmp_path / "devices.json"
    bad.write_text("{not json")
    for env, says in (
        ({}, "DRAGOMAN_NODE_DEVICES is not set"),
        ({"DRAGOMAN_NODE_DEVICES": str(bad)}, "is not a devices.json"),
        ({"DRAGOMAN_NODE_DEVICES": str(tmp_path / "missing.json")}, "read the node's devices"),
    ):
        env = {k: v for k, v in os.environ.items() if not k.startswith("DRAGOMAN_")} | env
        run = subprocess.run(
            [str(binaries["dragoman-device-plugin"])], env=env, capture_output=True, text=True, timeout=10
        )
        assert run.returncode == 2 and says in run.stderr and "goroutine" not in run.stderr, run.stderr
    nd.write_node_devices(gpu_node("a", L4), bad)
    run = subprocess.run(
        [str(binaries["dragoman-device-plugin"])],
        env={"DRAGOMAN_NODE": "b", "DRAGOMAN_NODE_DEVICES": str(bad)},
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert run.returncode == 2 and 'describes node "a", not "b"' in run.stderr


# ----------------------------------------------------------------------------------------------- DRA plugin


@pytest.fixture(scope="module")
def probe_node(real: Served) -> Iterator[dict]:
    """A node of the test's own on the real API server (GFD labels for 4 L4s), and a namespace; both removed after."""
    # Tainted against everything the demo runs: no DaemonSet's pod (a Python agent would publish slices for it too) and
    # no demo pod (the slices our plugin publishes would draw bridged pods) lands on it.
    node = gpu_node(NODE, L4)
    node["spec"] = {"taints": [{"key": "dragoman.io/plugin-probe", "value": "true", "effect": "NoSchedule"}]}
    code, node = real.request("POST", "/api/v1/nodes", node)
    assert code == 201, node
    code, body = real.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    assert code in (201, 409), body
    try:
        yield node
    finally:
        real.request("DELETE", f"/api/v1/namespaces/{NS}")
        real.request("DELETE", f"/api/v1/nodes/{NODE}")
        real.request("DELETE", SLICES, query=f"fieldSelector=spec.nodeName={NODE}")
        # The cluster is shared with the next modules: a namespace is deleted asynchronously, and until the namespace
        # controller empties it our probe claims still exist (test_real_demo's check comparison then counted them:
        # claim-equivalent-to-limits 4 against 1). Leave only when it is gone.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and real.request("GET", f"/api/v1/namespaces/{NS}")[0] != 404:
            time.sleep(1)


def node_slices(real: Served) -> list[dict]:
    return real.items(SLICES, query=f"fieldSelector=spec.nodeName={NODE}")


def _canonical(specs: list[dict]) -> list[str]:
    return sorted(
        json.dumps({k: v for k, v in s.items() if k != "pool"} | {"pool": s["pool"]["name"]}, sort_keys=True)
        for s in specs
    )


def allocated_claim(real: Served, name: str, device: str, *, binding: list[str] | None = None) -> dict:
    """A claim of the serving class allocated to one device of the node, as the scheduler's status write leaves it
    (`binding`: the device's binding condition, then its failure condition)."""
    code, claim = real.request(
        "POST",
        CLAIMS,
        {
            "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
        },
    )
    assert code == 201, claim
    result: dict[str, Any] = {"request": "gpu", "driver": nv.DRIVER, "pool": NODE, "device": device}
    if binding:
        result["bindingConditions"], result["bindingFailureConditions"] = binding[:1], binding[1:]
    claim["status"] = {
        "allocation": {
            "devices": {"results": [result]},
            "nodeSelector": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE]}]}]
            },
        }
    }
    code, claim = real.request("PUT", f"{CLAIMS}/{name}/status", claim)
    assert code == 200, claim
    return claim


def test_dra_plugin_publishes_registers_prepares_and_checkpoints(real, probe_node, binaries, tmp_path, short_dir):
    devices = nd.write_node_devices(probe_node, tmp_path / "devices.json")
    doc = json.loads(devices.read_text())
    root = short_dir / "kubelet"
    env = {
        "DRAGOMAN_NODE": NODE,
        "DRAGOMAN_NODE_DEVICES": str(devices),
        "DRAGOMAN_KUBELET_ROOT": str(root),
        "KUBECONFIG": str(real.kubeconfig),
    }
    log = tmp_path / "dra.log"
    plugin = start_plugin(binaries, "dragoman-dra-plugin", env, log)
    try:
        with probe(binaries) as k:
            reg = k.ask(op="dra-register", registry=str(root / "plugins_registry"), timeout=30)
            assert reg.get("ok"), (reg, log.read_text())
            assert reg["type"] == "DRAPlugin" and reg["name"] == nv.DRIVER
            assert reg["endpoint"] == str(root / "plugins" / nv.DRIVER / "dra.sock")
            assert "v1.DRAPlugin" in reg["versions"]

            # Its slices on the real API server: what the Python agent publishes for this node (one source).
            slices = wait_for(lambda: node_slices(real), 30, "the plugin's ResourceSlices")
            assert _canonical([s["spec"] for s in slices]) == _canonical(nd.published_specs(doc))
            assert slices[0]["metadata"]["ownerReferences"][0]["uid"] == probe_node["metadata"]["uid"]

            claim = allocated_claim(real, "probe-a", "gpu-2")
            ref = {"uid": claim["metadata"]["uid"], "namespace": NS, "name": "probe-a"}
            got = k.ask(op="dra-prepare", endpoint=reg["endpoint"], claims=[ref])
            assert got["claims"][ref["uid"]] == {
                "devices": [
                    {
                        "requests": ["gpu"],
                        "pool": NODE,
                        "device": "gpu-2",
                        # NVIDIA's driver v0.4.0 (the schema devices.json names): the claim's own CDI spec entry.
                        "cdiDeviceIDs": [f"k8s.gpu.nvidia.com/claim={ref['uid']}-gpu-2"],
                    }
                ],
                "error": "",
            }
            assert nd.uuid_of_cdi_name(doc, f"k8s.gpu.nvidia.com/claim={ref['uid']}-gpu-2") == nv.gpu_uuid(NODE, 2)
            # A second claim on the same device is refused: the driver is the last line of defence.
            other = allocated_claim(real, "probe-b", "gpu-2")
            oref = {"uid": other["metadata"]["uid"], "namespace": NS, "name": "probe-b"}
            refused = k.ask(op="dra-prepare", endpoint=reg["endpoint"], claims=[oref])["claims"][oref["uid"]]
            assert "gpu-2 is already prepared for claim dragoman-plugins/probe-a" in refused["error"]

            # Health: every device reported, gpu-1 Unhealthy once the file says so (by its UUID).
            (tmp_path / "devices.json.unhealthy").write_text(nv.gpu_uuid(NODE, 1) + "\n")
            (report,) = k.ask(op="dra-health", endpoint=reg["endpoint"], reports=1, timeout=15)["reports"]
            assert {d["device"]: d["health"] for d in report} == {
                "gpu-0": "HEALTHY",
                "gpu-1": "UNHEALTHY",
                "gpu-2": "HEALTHY",
                "gpu-3": "HEALTHY",
            }

        checkpoint = json.loads((root / "plugins" / nv.DRIVER / "checkpoint.json").read_text())
        assert list(checkpoint["claims"]) == [ref["uid"]]
        assert stop_plugin(plugin) == 0, log.read_text()

        # Restarted: the checkpoint says probe-a is prepared (prepare again answers the same), and it unprepares.
        plugin = start_plugin(binaries, "dragoman-dra-plugin", env, log)
        with probe(binaries) as k:
            reg = k.ask(op="dra-register", registry=str(root / "plugins_registry"), timeout=30)
            assert reg.get("ok"), reg
            again = k.ask(op="dra-prepare", endpoint=reg["endpoint"], claims=[ref])["claims"][ref["uid"]]
            assert again["devices"][0]["cdiDeviceIDs"] == [f"k8s.gpu.nvidia.com/claim={ref['uid']}-gpu-2"]
            gone = k.ask(op="dra-unprepare", endpoint=reg["endpoint"], claims=[ref, ref | {"uid": "never-prepared"}])
            assert gone["claims"] == {ref["uid"]: {"error": ""}, "never-prepared": {"error": ""}}
            # Now probe-b may have the device.
            ok = k.ask(op="dra-prepare", endpoint=reg["endpoint"], claims=[oref])["claims"][oref["uid"]]
            assert ok["error"] == "" and ok["devices"][0]["device"] == "gpu-2"
        checkpoint = json.loads((root / "plugins" / nv.DRIVER / "checkpoint.json").read_text())
        assert list(checkpoint["claims"]) == [oref["uid"]]
    finally:
        code = stop_plugin(plugin)
    assert code == 0, log.read_text()
    # Stopped, its slices stay (the kubelet wipes them after its delay); the fixture removes them.
    assert node_slices(real)


def test_dra_plugin_sets_binding_conditions_where_the_devices_ask(real, probe_node, binaries, tmp_path, short_dir):
    doc = nd.node_devices(probe_node)
    for sl in doc["slicesBySchema"][doc["schema"]]:
        for dev in sl.get("devices") or ():
            dev["bindingConditions"] = ["gpu.nvidia.com/attached"]
            dev["bindingFailureConditions"] = ["gpu.nvidia.com/attach-failed"]
    doc["binding"] = {"gpu.nvidia.com/attached": {"status": "True", "reason": "Attached", "message": "attached"}}
    devices = tmp_path / "devices.json"
    devices.write_text(json.dumps(doc))
    env = {
        "DRAGOMAN_NODE": NODE,
        "DRAGOMAN_NODE_DEVICES": str(devices),
        "DRAGOMAN_KUBELET_ROOT": str(short_dir / "kubelet"),
        "KUBECONFIG": str(real.kubeconfig),
    }
    log = tmp_path / "dra.log"
    plugin = start_plugin(binaries, "dragoman-dra-plugin", env, log)
    try:

        def with_conditions():
            devs = [d for s in node_slices(real) for d in s["spec"].get("devices") or ()]
            return devs and all(d.get("bindingConditions") == ["gpu.nvidia.com/attached"] for d in devs)

        wait_for(with_conditions, 30, "the plugin's ResourceSlices with binding conditions")
        allocated_claim(real, "fabric", "gpu-0", binding=["gpu.nvidia.com/attached", "gpu.nvidia.com/attach-failed"])

        def conditions():
            code, claim = real.request("GET", f"{CLAIMS}/fabric")
            st = (claim.get("status") or {}).get("devices") or []
            return st and st[0].get("conditions")

        (cond,) = wait_for(conditions, 30, "the binding condition written")
        assert (cond["type"], cond["status"], cond["reason"]) == ("gpu.nvidia.com/attached", "True", "Attached")
    finally:
        code = stop_plugin(plugin)
    assert code == 0, log.read_text()
