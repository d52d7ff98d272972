"""The demo with real kubelets on two pools' nodes: l4-serve (device plugin, kubelet v1.37.2) and the a100-serve node
whose kubelet predates the bridge (kubelet v1.35.4 in a DRA pool). The device plugin and the DRA kubelet plugin are
dragoman's Go plugins, started by the runtime when their DaemonSet's container starts.

- `migrate --pool l4-serve` and its rollback pass with the real kubelets: allocatable drops when the device-plugin
  pod leaves, the driver's slices appear, the canary's container was given exactly the GPU its claim allocated
  (the runtime's record), and the rollback brings the device plugin's GPUs back;
- the bridge-less kubelet admits a pod the scheduler bridged and runs it without the GPU (its claim never prepared),
  which is what `kubelet-too-old` says;
- how long allocatable takes to drop after the device-plugin pod leaves: the real kubelet beside the node agent."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.controlplane.support import Served, binaries_dir, wait_for
from tests.support import serve

pytestmark = pytest.mark.controlplane

L4 = ("gke-ml-prod-l4-serve-b6676f05-86vc", "gke-ml-prod-l4-serve-b6676f05-zj2f")
OLD = "gke-ml-prod-a100-serve-fb9bedd9-9jxp"  # kubelet v1.35 in the scenario, in a pool served by DRA
AGENT_DP_NODE = "gke-ml-prod-a100-train-0c603acf-k6nf"  # a device-plugin node the node agents run
DEPLOY_LABEL = "nvidia.com/gpu.deploy.device-plugin"


class Demo:
    def __init__(self, served: Served, root: pathlib.Path) -> None:
        self.served = served
        self.root = root

    def record(self, node: str) -> list[dict]:
        index = json.loads((self.root / "index.json").read_text())
        return json.loads((self.root / index[node]["folder"] / "containers.json").read_text())["containers"]

    def node(self, name: str) -> dict:
        code, body = self.served.request("GET", f"/api/v1/nodes/{name}")
        assert code == 200, body
        return body

    def gpus(self, name: str, field: str = "allocatable") -> str:
        return (self.node(name)["status"].get(field) or {}).get("nvidia.com/gpu", "0")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[Demo]:
    tmp = tmp_path_factory.mktemp("real-kubelets-demo")
    log = tmp / "serve.log"
    kubeconfig = tmp / "kubeconfig"
    args = ["--demo", "--control-plane", str(binaries_dir()), "--write-kubeconfig", str(kubeconfig)]
    args += ["--real-kubelets", ",".join((*L4, OLD))]
    proc = serve.start(args, log, cwd=tmp)
    try:
        wait_for(lambda: "press Ctrl+C" in log.read_text() or proc.poll() is not None, 600, "serving", 1.0)
        assert proc.poll() is None, log.read_text()
        root = next(
            pathlib.Path(line.split("their folders: ", 1)[1].split(" ", 1)[0])
            for line in log.read_text().splitlines()
            if "their folders: " in line
        )
        yield Demo(Served(proc, kubeconfig, log, tmp / "no-audit"), root)
    finally:
        serve.stop(proc, 90)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dragoman", *args], capture_output=True, text=True, timeout=900, check=False
    )


def test_the_bridge_less_kubelet_runs_a_bridged_pod_without_the_gpu(demo: Demo) -> None:
    node = demo.node(OLD)
    assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.35.4"
    pods = [
        p
        for p in demo.served.items("/api/v1/pods", query=f"fieldSelector=spec.nodeName%3D{OLD}")
        if (p.get("status") or {}).get("extendedResourceClaimStatus")
    ]
    assert pods, "the scheduler bridged pods onto the old kubelet's node"
    records = demo.record(OLD)
    for pod in pods:
        # Admitted and running: not refused at admission.
        assert pod["status"]["phase"] == "Running", pod["status"]
        ns, claim_name = pod["metadata"]["namespace"], pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
        (rec,) = [r for r in records if r["pod"] == pod["metadata"]["name"] and r["state"] == "running"]
        # ... without the GPU: no CDI device, no NVIDIA_VISIBLE_DEVICES, nothing a GPU container is given.
        assert rec["cdiDevices"] == [] and rec["visibleGPUs"] == [] and rec["devices"] == []
        assert "NVIDIA_VISIBLE_DEVICES" not in rec["env"]
        # ... while the scheduler's claim holds a GPU for it.
        code, claim = demo.served.request(
            "GET", f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims/{claim_name}"
        )
        assert code == 200
        assert claim["status"]["allocation"]["devices"]["results"]
        assert pod["metadata"]["uid"] in [r["uid"] for r in claim["status"].get("reservedFor") or ()]
    # The DRA plugin on that node was never asked to prepare those claims.
    index = json.loads((demo.root / "index.json").read_text())
    plugin_log = (demo.root / index[OLD]["folder"] / "dragoman-dra-plugin.log").read_text()
    assert "serving" in plugin_log and "prepared claim" not in plugin_log
    # What kubelet-too-old says is what happened.
    out = run("check", "--kubeconfig", str(demo.served.kubeconfig), "--output", "json")
    report = json.loads(out.stdout)
    found = [f for f in report["findings"] if f["id"] == "kubelet-too-old" and OLD in json.dumps(f)]
    assert found, out.stdout[-2000:]
    said = json.dumps(found[0])
    assert "admits an nvidia.com/gpu pod placed through DRA and runs it without the GPU" in said
    assert "rejects" not in said


def test_allocatable_drops_after_the_device_plugin_pod_leaves_real_kubelet_beside_the_agent(demo: Demo) -> None:
    """The device-plugin pod excluded by the GPU Operator's deploy label (what the migration writes) on a real
    kubelet's node and on a node agent's: both drop allocatable nvidia.com/gpu to 0 and keep capacity (the device
    manager keeps a resource's capacity for its grace period). The seconds are printed (pytest -s)."""
    nodes = (L4[0], AGENT_DP_NODE)
    before = {n: demo.gpus(n, "capacity") for n in nodes}
    assert all(int(v) > 0 for v in before.values()), before
    t0 = {}
    for n in nodes:
        code, body = demo.served.request(
            "PATCH",
            f"/api/v1/nodes/{n}",
            {"metadata": {"labels": {DEPLOY_LABEL: "false"}}},
            content_type="application/merge-patch+json",
        )
        assert code == 200, body
        t0[n] = time.monotonic()
    took: dict[str, float] = {}
    try:
        deadline = time.monotonic() + 60
        while len(took) < len(nodes) and time.monotonic() < deadline:
            for n in nodes:
                if n not in took and demo.gpus(n) == "0":
                    took[n] = time.monotonic() - t0[n]
                    assert demo.gpus(n, "capacity") == before[n], "capacity is kept"
            time.sleep(0.1)
        assert len(took) == len(nodes), f"allocatable nvidia.com/gpu still above 0 after 60 s: {took}"
        print(
            f"\nallocatable nvidia.com/gpu 0 after: real kubelet {took[L4[0]]:.1f} s, "
            f"node agent {took[AGENT_DP_NODE]:.1f} s"
        )
    finally:
        for n in nodes:
            demo.served.request(
                "PATCH",
                f"/api/v1/nodes/{n}",
                {"metadata": {"labels": {DEPLOY_LABEL: "true"}}},
                content_type="application/merge-patch+json",
            )
    for n in nodes:
        wait_for(lambda n=n: demo.gpus(n) == before[n], 120, f"the device plugin back on {n}", 0.5)


def test_migrate_l4_serve_with_real_kubelets_and_roll_back(demo: Demo, tmp_path: pathlib.Path) -> None:
    kube = ["--kubeconfig", str(demo.served.kubeconfig), "--pool", "l4-serve", "--audit-log", str(tmp_path / "a.log")]
    out = run("migrate", *kube, "--yes")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr
    assert "8/8 steps done" in out.stdout
    # The device plugin's pods left: the real kubelets dropped allocatable; the real DRA plugins publish the GPUs.
    assert all(demo.gpus(n) == "0" for n in L4)
    slices = [
        s for s in demo.served.items("/apis/resource.k8s.io/v1/resourceslices") if s["spec"].get("nodeName") in L4
    ]
    assert {s["spec"]["nodeName"] for s in slices if s["spec"].get("devices")} == set(L4)
    # The canary's container was given exactly the GPU its claim allocated (the runtime's record, not the log).
    seen = out.stdout.split("canary sees ", 1)[1].split()[0]
    canary = [r for n in L4 for r in demo.record(n) if r["pod"] == "dragoman-canary-l4-serve"]
    assert canary and canary[-1]["visibleGPUs"] == [seen], canary
    assert canary[-1]["cdiDevices"] and canary[-1]["cdiDevices"][0].startswith("k8s.gpu.nvidia.com/claim=")

    back = run("migrate", *kube, "--rollback", "--yes")
    assert back.returncode == 0, back.stdout[-3000:] + back.stderr
    for n in L4:
        wait_for(lambda n=n: demo.gpus(n) == "4", 120, f"the device plugin's 4 GPUs back on {n}", 0.5)
