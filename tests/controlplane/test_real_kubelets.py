"""Real kubelets (v1.37.2, built by `dragoman controlplane build`) under the real control plane, with dragoman's
image-less container runtime: `dragoman sim serve --control-plane --real-kubelets` on a two-node scenario.

The nodes register through their kubelets with the scenario's size (cAdvisor is shown the scenario's CPUs and memory),
a pod runs and its container's configuration is read back from the runtime's record, a Job's container exits on
request and the real Job controller completes the Job, a crash loop is the real kubelet's back-off, and a stop leaves
no process, mount, file or changed kernel tunable behind."""

from __future__ import annotations

import http.client
import json
import pathlib
import socket
import time
from collections.abc import Iterator

import pytest

from tests.controlplane.support import Served, binaries_dir, wait_for
from tests.support import serve

pytestmark = pytest.mark.controlplane

SCENARIO = pathlib.Path(__file__).parent / "data" / "real_kubelets.yaml"
NS = "rk"
HOST_TUNABLES = ("vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops")


class _UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=30)
        self.unix_path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.unix_path)


def control(folder: pathlib.Path, method: str, path: str) -> tuple[int, str]:
    """The node runtime's control API (dragoman-cri --control): GET /record, POST /exit?..."""
    conn = _UnixHTTP(str(folder / "control.sock"))
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


def _tunables() -> dict[str, str]:
    return {k: pathlib.Path("/proc/sys", k).read_text().strip() for k in HOST_TUNABLES}


class Nodes:
    def __init__(self, served: Served, root: pathlib.Path) -> None:
        self.served = served
        self.root = root

    def folder(self, node: str) -> pathlib.Path:
        index = json.loads((self.root / "index.json").read_text())
        return self.root / index[node]["folder"]

    def record(self, node: str) -> list[dict]:
        return json.loads((self.folder(node) / "containers.json").read_text())["containers"]


@pytest.fixture(scope="module")
def nodes(tmp_path_factory) -> Iterator[Nodes]:
    tmp = tmp_path_factory.mktemp("real-kubelets")
    before = _tunables()
    log = tmp / "serve.log"
    kubeconfig = tmp / "kubeconfig"
    args = ["--scenario", str(SCENARIO), "--control-plane", str(binaries_dir())]
    args += ["--real-kubelets", "--write-kubeconfig", str(kubeconfig)]
    proc = serve.start(args, log, cwd=tmp)
    try:
        wait_for(lambda: "press Ctrl+C" in log.read_text() or proc.poll() is not None, 300, "serving", 0.5)
        assert proc.poll() is None, log.read_text()
        served = Served(proc, kubeconfig, log, tmp / "no-audit")
        root = next(
            pathlib.Path(line.split("their folders: ", 1)[1].split(" ", 1)[0])
            for line in log.read_text().splitlines()
            if "their folders: " in line
        )
        yield Nodes(served, root)
    finally:
        serve.stop(proc, 90)
    # The kubelets set six kernel tunables at start: each node's are files of its own, the host's never change.
    assert _tunables() == before


def _pod(name: str, node: str, env: dict[str, str] | None = None, restart: str = "Always", cpu: str = "6") -> dict:
    """A pod for `node`; its CPU request is more than this machine has (the node's size is the scenario's)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node},
            "restartPolicy": restart,
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example/app:1.0",
                    "command": ["serve", "--port=8080"],
                    "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
                    "resources": {"requests": {"cpu": cpu}},
                }
            ],
        },
    }


def _get(served: Served, path: str) -> dict:
    code, body = served.request("GET", path)
    assert code == 200, (path, code, body)
    return body


def test_nodes_register_through_real_kubelets_with_the_scenarios_size(nodes: Nodes) -> None:
    for name, cpu, memory in (("rk-cpu-a", "48", "192Gi"), ("rk-cpu-b", "16", "64Gi")):
        node = _get(nodes.served, f"/api/v1/nodes/{name}")
        info = node["status"]["nodeInfo"]
        assert info["kubeletVersion"] == "v1.37.2"
        assert info["containerRuntimeVersion"].startswith("fakeRuntime://")  # dragoman-cri answered the kubelet
        assert node["status"]["capacity"]["cpu"] == cpu
        assert node["status"]["capacity"]["memory"] == memory
        assert any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"])
        # The kubelet renews its own Lease (no node agent drives this node).
        lease = _get(nodes.served, f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{name}")
        assert lease["spec"]["holderIdentity"] == name
        assert (nodes.folder(name) / "kubelet.log").stat().st_size > 0


def test_a_pod_runs_and_its_container_config_is_recorded(nodes: Nodes) -> None:
    served = nodes.served
    code, body = served.request(
        "POST", f"/api/v1/namespaces/{NS}/pods", _pod("web", "rk-cpu-a", {"MODE": "rehearsal"}, cpu="40")
    )
    assert code == 201, body
    wait_for(
        lambda: _get(served, f"/api/v1/namespaces/{NS}/pods/web").get("status", {}).get("phase") == "Running",
        90,
        "the pod Running through the real kubelet",
    )
    pod = _get(served, f"/api/v1/namespaces/{NS}/pods/web")
    assert pod["status"]["containerStatuses"][0]["ready"] is True
    (rec,) = [c for c in nodes.record("rk-cpu-a") if c["pod"] == "web"]
    assert rec["namespace"] == NS and rec["name"] == "main" and rec["podUid"] == pod["metadata"]["uid"]
    assert rec["image"] == "registry.example/app:1.0" and rec["command"] == ["serve", "--port=8080"]
    assert rec["env"]["MODE"] == "rehearsal" and rec["env"]["KUBERNETES_SERVICE_HOST"]
    assert any(m["containerPath"] == "/var/run/secrets/kubernetes.io/serviceaccount" for m in rec["mounts"])
    assert rec["state"] == "running" and rec["devices"] == [] and rec["cdiDevices"] == []
    # `kubectl logs`: the API server reaches the kubelet (its egress proxy) and the kubelet reads the runtime's log.
    code, text = served.request("GET", f"/api/v1/namespaces/{NS}/pods/web/log")
    assert code == 200 and "dragoman-cri: container main of rk/web created" in str(text), (code, text)
    # The control API serves the same record.
    code, text = control(nodes.folder("rk-cpu-a"), "GET", "/record")
    assert code == 200 and any(c["pod"] == "web" for c in json.loads(text)["containers"])
    # Deleted: the kubelet stops and removes the container, the runtime records it.
    served.request("DELETE", f"/api/v1/namespaces/{NS}/pods/web")
    wait_for(
        lambda: all(c["state"] in ("exited", "removed") for c in nodes.record("rk-cpu-a") if c["pod"] == "web"),
        60,
        "the container stopped",
    )


def test_a_jobs_container_exits_on_request_and_the_job_completes(nodes: Nodes) -> None:
    served = nodes.served
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": NS},
        "spec": {"backoffLimit": 0, "template": {"spec": _pod("x", "rk-cpu-b", restart="Never")["spec"]}},
    }
    code, body = served.request("POST", f"/apis/batch/v1/namespaces/{NS}/jobs", job)
    assert code == 201, body

    def running() -> str | None:
        for p in served.items(f"/api/v1/namespaces/{NS}/pods", query="labelSelector=job-name%3Dtrain"):
            if p.get("status", {}).get("phase") == "Running":
                return p["metadata"]["name"]
        return None

    pod = wait_for(running, 90, "the Job's pod Running")
    code, text = control(nodes.folder("rk-cpu-b"), "POST", f"/exit?namespace={NS}&pod={pod}&code=0")
    assert code == 200, text
    wait_for(
        lambda: (_get(served, f"/apis/batch/v1/namespaces/{NS}/jobs/train").get("status") or {}).get("succeeded"),
        90,
        "the Job complete",
    )
    status = _get(served, f"/api/v1/namespaces/{NS}/pods/{pod}")["status"]
    assert status["phase"] == "Succeeded"
    assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    # Nothing running is found for a second request: a sentence, not a crash.
    code, text = control(nodes.folder("rk-cpu-b"), "POST", f"/exit?namespace={NS}&pod={pod}&code=0")
    assert code == 404 and "no running container" in text


def test_a_crash_loop_is_played_and_the_real_kubelet_backs_off(nodes: Nodes) -> None:
    served = nodes.served
    pod = _pod("flaky", "rk-cpu-b", {"DRAGOMAN_EXIT_AFTER": "1s", "DRAGOMAN_EXIT_CODE": "3"})
    code, body = served.request("POST", f"/api/v1/namespaces/{NS}/pods", pod)
    assert code == 201, body

    def backing_off() -> dict | None:
        st = (_get(served, f"/api/v1/namespaces/{NS}/pods/flaky").get("status") or {}).get("containerStatuses")
        if st and st[0].get("restartCount", 0) >= 1 and st[0].get("lastState", {}).get("terminated"):
            return st[0]
        return None

    st = wait_for(backing_off, 90, "a restart after the container exited with code 3")
    assert st["lastState"]["terminated"]["exitCode"] == 3
    attempts = [c for c in nodes.record("rk-cpu-b") if c["pod"] == "flaky"]
    assert len(attempts) >= 2 and {c["attempt"] for c in attempts} >= {0, 1}
    assert attempts[0]["exitCode"] == 3
    served.request("DELETE", f"/api/v1/namespaces/{NS}/pods/flaky", query="gracePeriodSeconds=0")


def test_a_not_ready_fault_fails_the_real_kubelets_readiness_probe(nodes: Nodes) -> None:
    """sim.dragoman.io/not-ready, the fault the Python agents play (on the pod, or from its node's pod-faults for a
    DaemonSet's pod): under a real kubelet dragoman-cri plays it where a runtime can, by failing the container's exec
    readiness probe. The container runs and the kubelet keeps the pod unready; the same probe without the fault
    passes."""
    served = nodes.served
    for name, faults in (("unready", {"sim.dragoman.io/not-ready": "true"}), ("probed-ready", {})):
        pod = _pod(name, "rk-cpu-a", cpu="1")
        pod["metadata"]["annotations"] = faults
        pod["spec"]["containers"][0]["readinessProbe"] = {"exec": {"command": ["ready"]}, "periodSeconds": 1}
        code, body = served.request("POST", f"/api/v1/namespaces/{NS}/pods", pod)
        assert code == 201, body

    def ready_of(name: str) -> bool | None:
        st = (_get(served, f"/api/v1/namespaces/{NS}/pods/{name}").get("status") or {}).get("containerStatuses") or []
        return st[0].get("ready") if st and "running" in (st[0].get("state") or {}) else None

    wait_for(lambda: ready_of("probed-ready"), 90, "the pod without the fault ready by its probe")
    wait_for(lambda: ready_of("unready") is False, 30, "the faulted pod's container running")
    time.sleep(3)  # a few more probes, each failing
    assert ready_of("unready") is False
    (rec,) = [c for c in nodes.record("rk-cpu-a") if c["pod"] == "unready"]
    assert rec["faults"] == {"sim.dragoman.io/not-ready": "true"} and rec["state"] == "running"
    for name in ("unready", "probed-ready"):
        served.request("DELETE", f"/api/v1/namespaces/{NS}/pods/{name}", query="gracePeriodSeconds=0")
