"""Real kubectl v1.37 against `dragoman sim serve` with a file scenario: get, watch, describe, explain, can-i, apply,
patch, drain."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import subprocess
import time

import pytest
import yaml

from tests.support import sim_scenario
from tests.support.kubectl import ensure_binary
from tests.support.serve import served

pytestmark = pytest.mark.kubectl

KINDS = [
    "namespaces",
    "nodes",
    "pods",
    "events",
    "configmaps",
    "resourcequotas",
    "serviceaccounts",
    "daemonsets",
    "deployments",
    "replicasets",
    "statefulsets",
    "jobs",
    "poddisruptionbudgets",
    "leases",
    "roles",
    "clusterroles",
    "rolebindings",
    "clusterrolebindings",
    "deviceclasses",
    "resourceslices",
    "resourceclaims",
    "resourceclaimtemplates",
]


class Kubectl:
    def __init__(self, binary: pathlib.Path, kubeconfig: pathlib.Path, home: pathlib.Path) -> None:
        self.binary = binary
        self.env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(kubeconfig)}

    def run(
        self, *args: str, check: bool = True, stdin: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [str(self.binary), *args], capture_output=True, text=True, env=self.env, input=stdin, timeout=timeout
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def json(self, *args: str) -> dict:
        return json.loads(self.run(*args, "-o", "json").stdout)

    def popen(self, *args: str, out: pathlib.Path) -> subprocess.Popen:
        return subprocess.Popen(
            [str(self.binary), *args], stdout=out.open("w"), stderr=subprocess.STDOUT, env=self.env, text=True
        )


@contextlib.contextmanager
def _simulator(tmp: pathlib.Path):
    binary = ensure_binary("kubectl")
    scenario = sim_scenario.write(tmp / "scenario.yaml")
    with served(scenario, tmp, timeout=60) as kubeconfig:
        (tmp / "home").mkdir()
        yield Kubectl(binary, kubeconfig, tmp / "home")


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory):
    with _simulator(tmp_path_factory.mktemp("kubectl-sim")) as k:
        yield k


@pytest.fixture
def own_kubectl(tmp_path):
    """A simulator of the test's own: for a test that changes what the others read (a drain evicts node-1's pods, which
    the module's tests name), so that no order of the tests, under xdist or by name, makes one fail."""
    (tmp_path / "sim").mkdir()
    with _simulator(tmp_path / "sim") as k:
        yield k


def _wait_for(pred, timeout: float = 60.0, step: float = 0.3):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("condition not reached in time")


def test_get_every_kind_in_table_yaml_and_json(kubectl):
    for kind in KINDS:
        out = kubectl.run("get", kind, "-A", "-o", "wide").stdout
        assert "NAME" in out.splitlines()[0], (kind, out)
        assert len(out.splitlines()) >= 2, (kind, out)
    slices = kubectl.run("get", "resourceslices").stdout.splitlines()
    assert slices[0].split() == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert slices[1].split()[:4] == ["node-2-gpu.nvidia.com-abcde", "node-2", "gpu.nvidia.com", "node-2"]
    claims = kubectl.run("get", "resourceclaims").stdout.splitlines()
    assert claims[0].split() == ["NAME", "STATE", "AGE"] and claims[1].split()[:2] == ["one-gpu", "pending"]
    everything = kubectl.json("get", ",".join(KINDS), "-A")
    kinds_seen = {i["kind"] for i in everything["items"]}
    assert len(kinds_seen) == len(KINDS)
    docs = yaml.safe_load(kubectl.run("get", ",".join(KINDS), "-A", "-o", "yaml").stdout)
    assert docs["kind"] == "List" and len(docs["items"]) == len(everything["items"])
    one = kubectl.json("get", "pod", "web-5d8f7-aaaaa")
    assert one["metadata"]["uid"] == "uid-web-5d8f7-aaaaa"
    fs = kubectl.run(
        "get", "resourceslices", "--field-selector", "spec.driver=gpu.nvidia.com", "-o", "name"
    ).stdout.split()
    assert fs == ["resourceslice.resource.k8s.io/node-2-gpu.nvidia.com-abcde"]
    missing = kubectl.run("get", "widgets", check=False)
    assert missing.returncode != 0 and "the server doesn't have a resource type" in missing.stderr


def test_get_watch_streams_changes(kubectl, tmp_path):
    out = tmp_path / "watch.txt"
    watcher = kubectl.popen("get", "configmaps", "-w", out=out)
    single = kubectl.popen("get", "configmap", "settings", "-w", "-o", "name", out=tmp_path / "single.txt")
    try:
        _wait_for(lambda: "settings" in out.read_text())
        time.sleep(0.5)
        kubectl.run("label", "configmap", "settings", "watched=yes")
        kubectl.run("create", "configmap", "watch-new", "--from-literal=a=b")
        _wait_for(lambda: "watch-new" in out.read_text())
        _wait_for(lambda: (tmp_path / "single.txt").read_text().count("configmap/settings") >= 1)
    finally:
        watcher.terminate()
        single.terminate()
        watcher.wait(10)
        single.wait(10)
    text = out.read_text()
    assert text.count("settings") >= 2  # the listed row and the watched update
    kubectl.run("delete", "configmap", "watch-new")


def test_describe_pod_shows_its_events(kubectl):
    out = kubectl.run("describe", "pod", "web-5d8f7-aaaaa").stdout
    assert "Node:" in out and "node-1" in out
    assert "Events:" in out and "Successfully assigned default/web-5d8f7-aaaaa to node-1" in out
    # The scheduler's event has no source (written through events.k8s.io/v1): "From" is its reportingController.
    row = next(line for line in out.splitlines() if "Successfully assigned" in line).split()
    assert row[:2] == ["Normal", "Scheduled"] and "default-scheduler" in row


def test_explain_deviceclass_spec(kubectl):
    out = kubectl.run("explain", "deviceclass.spec").stdout
    assert "KIND:" in out and "DeviceClass" in out
    assert "selectors" in out and "extendedResourceName" in out


def test_auth_can_i_evict_admin_yes_viewer_no(kubectl):
    yes = kubectl.run("auth", "can-i", "create", "pods", "--subresource=eviction")
    assert yes.stdout.strip() == "yes"
    no = kubectl.run(
        "auth", "can-i", "create", "pods", "--subresource=eviction", "--context", "dragoman-sim-viewer", check=False
    )
    assert no.returncode == 1 and no.stdout.strip().startswith("no")
    reads = kubectl.run("auth", "can-i", "list", "pods", "--context", "dragoman-sim-viewer")
    assert reads.stdout.strip() == "yes"
    denied = kubectl.run("label", "node", "node-2", "x=y", "--context", "dragoman-sim-viewer", check=False)
    assert denied.returncode != 0 and "forbidden" in denied.stderr


def test_create_apply_twice_server_side_and_delete(kubectl, tmp_path):
    cm = tmp_path / "cm.yaml"
    cm.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "applied", "namespace": "default"},
                "data": {"k": "v"},
            }
        )
    )
    first = kubectl.run("apply", "-f", str(cm))
    assert "configmap/applied created" in first.stdout
    rv1 = kubectl.json("get", "configmap", "applied")["metadata"]["resourceVersion"]
    second = kubectl.run("apply", "-f", str(cm))
    assert "configmap/applied unchanged" in second.stdout
    assert kubectl.json("get", "configmap", "applied")["metadata"]["resourceVersion"] == rv1
    created = kubectl.run("create", "configmap", "made", "--from-literal=a=1")
    assert "configmap/made created" in created.stdout
    again = kubectl.run("create", "configmap", "made", "--from-literal=a=1", check=False)
    assert again.returncode != 0 and 'configmaps "made" already exists' in again.stderr
    dc = tmp_path / "dc.yaml"
    dc.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": "ssa.example.com"},
                "spec": {"selectors": [{"cel": {"expression": "device.driver == 'ssa.example.com'"}}]},
            }
        )
    )
    out = kubectl.run("apply", "--server-side", "-f", str(dc))
    assert "serverside-applied" in out.stdout
    rv = kubectl.json("get", "deviceclass", "ssa.example.com")["metadata"]["resourceVersion"]
    kubectl.run("apply", "--server-side", "-f", str(dc))
    assert kubectl.json("get", "deviceclass", "ssa.example.com")["metadata"]["resourceVersion"] == rv
    for what in (["configmap", "applied"], ["configmap", "made"], ["deviceclass", "ssa.example.com"]):
        assert "deleted" in kubectl.run("delete", *what).stdout
    assert kubectl.run("get", "configmap", "applied", check=False).returncode != 0


def test_cordon_uncordon_label_and_each_patch_type(kubectl):
    assert "cordoned" in kubectl.run("cordon", "node-2").stdout
    assert kubectl.json("get", "node", "node-2")["spec"]["unschedulable"] is True
    assert "already cordoned" in kubectl.run("cordon", "node-2").stdout
    assert "uncordoned" in kubectl.run("uncordon", "node-2").stdout
    assert "unschedulable" not in kubectl.json("get", "node", "node-2")["spec"]
    kubectl.run("label", "node", "node-2", "dragoman.io/pool=h100")
    assert kubectl.json("get", "node", "node-2")["metadata"]["labels"]["dragoman.io/pool"] == "h100"
    kubectl.run("label", "node", "node-2", "dragoman.io/pool-")
    assert "dragoman.io/pool" not in kubectl.json("get", "node", "node-2")["metadata"]["labels"]
    kubectl.run("patch", "deployment", "web", "--type", "merge", "-p", '{"metadata":{"annotations":{"m":"1"}}}')
    kubectl.run(
        "patch",
        "deployment",
        "web",
        "-p",
        '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}',
    )
    kubectl.run(
        "patch", "deployment", "web", "--type", "json", "-p", '[{"op":"replace","path":"/spec/replicas","value":3}]'
    )
    d = kubectl.json("get", "deployment", "web")
    assert d["metadata"]["annotations"]["m"] == "1"
    assert d["spec"]["template"]["spec"]["containers"] == [
        {**d["spec"]["template"]["spec"]["containers"][0], "name": "app", "image": "nginx:1.28"}
    ]
    assert d["spec"]["replicas"] == 3 and d["metadata"]["generation"] >= 3


def test_drain_evicts_with_the_budget_respected(own_kubectl, tmp_path):
    kubectl = own_kubectl
    out = tmp_path / "drain.txt"
    drain = kubectl.popen("drain", "node-1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=120s", out=out)
    try:
        # The budget (minAvailable 1 of 2) lets one pod go and blocks the second: kubectl reports and retries.
        _wait_for(lambda: "will retry after 5s" in out.read_text(), timeout=60)
        assert "Cannot evict pod as it would violate the pod's disruption budget." in out.read_text()
        replacement = sim_scenario._pod("web-5d8f7-ccccc", "default", "node-2", {"app": "web"}, None, "10.244.2.20")
        for k in ("uid", "creationTimestamp"):
            replacement["metadata"].pop(k)
        kubectl.run("create", "-f", "-", stdin=json.dumps(replacement))
        kubectl.run(
            "patch",
            "pod",
            "web-5d8f7-ccccc",
            "--subresource",
            "status",
            "--type",
            "merge",
            "-p",
            json.dumps({"status": replacement["status"]}),
        )
        assert drain.wait(120) == 0, out.read_text()
    finally:
        if drain.poll() is None:
            drain.kill()
    text = out.read_text()
    assert "node/node-1 drained" in text
    assert "Warning: ignoring DaemonSet-managed Pods: gpu-operator/gpu-plugin-n1" in text
    pods = kubectl.json("get", "pods", "-A", "--field-selector", "spec.nodeName=node-1")["items"]
    assert [p["metadata"]["name"] for p in pods] == ["gpu-plugin-n1"]
    assert kubectl.json("get", "node", "node-1")["spec"]["unschedulable"] is True


def test_scale_through_the_scale_subresource(kubectl):
    assert "scaled" in kubectl.run("scale", "statefulset", "db", "--replicas=2").stdout
    assert kubectl.json("get", "statefulset", "db")["spec"]["replicas"] == 2
    scale = json.loads(kubectl.run("get", "--raw", "/apis/apps/v1/namespaces/default/statefulsets/db/scale").stdout)
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 2 and scale["status"]["selector"] == "app=db"


def test_logs_of_a_running_container_and_of_a_waiting_one(kubectl):
    out = kubectl.run("logs", "gpu-plugin-n2", "-n", "gpu-operator")
    assert out.returncode == 0 and out.stdout == ""
    pending = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "not-started", "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}], "nodeName": "node-2"},
    }
    kubectl.run("create", "-f", "-", stdin=json.dumps(pending))
    waiting = kubectl.run("logs", "not-started", check=False)
    assert (
        waiting.returncode != 0
        and 'container "app" in pod "not-started" is waiting to start: ContainerCreating' in waiting.stderr
    )
    kubectl.run("delete", "pod", "not-started")
    # A pod no node holds: kube-apiserver answers 204 (no kubelet to ask), and kubectl prints nothing.
    unplaced = {**pending, "metadata": {"name": "unplaced", "namespace": "default"}}
    unplaced["spec"] = {"containers": [{"name": "app", "image": "nginx"}]}
    kubectl.run("create", "-f", "-", stdin=json.dumps(unplaced))
    out = kubectl.run("logs", "unplaced", check=False)
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
    kubectl.run("delete", "pod", "unplaced")
