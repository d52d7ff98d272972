"""Real kubectl v1.37 and helm v4 on the embedded simulator for what they need beyond get/apply (issue 16, item 3):
imperative `kubectl create` (protobuf bodies), cluster-info, auth whoami, auth can-i --list, and helm's release
Secrets."""

from __future__ import annotations

import json
import pathlib
import subprocess

import pytest
import yaml

from tests.sim.test_kubectl_sim import Kubectl
from tests.support.kubectl import ensure_binary
from tests.support.serve import served

pytestmark = pytest.mark.kubectl

SCENARIO = [
    {
        "apiVersion": "sim.dragoman.io/v1",
        "kind": "SimulatorConfig",
        "users": [{"name": "viewer", "clusterRoles": ["view"]}],
    },
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kubectl-tools")
    scenario = tmp / "scenario.yaml"
    scenario.write_text(yaml.safe_dump_all(SCENARIO))
    (tmp / "home").mkdir()
    with served(scenario, tmp) as kubeconfig:
        yield Kubectl(ensure_binary("kubectl"), kubeconfig, tmp / "home"), kubeconfig, tmp


def test_imperative_creates_send_protobuf_and_store_what_a_real_server_stores(cluster):
    k, _kc, _tmp = cluster
    assert "deployment.apps/web created" in k.run("create", "deployment", "web", "--image=busybox").stdout
    dep = k.json("get", "deployment", "web")
    spec = dep["spec"]
    assert spec["replicas"] == 1 and spec["selector"] == {"matchLabels": {"app": "web"}}
    container = spec["template"]["spec"]["containers"][0]
    assert (container["name"], container["image"], container["resources"]) == ("busybox", "busybox", {})
    # Go's zero values on the wire that JSON never shows (paused: false, minReadySeconds: 0) are not stored.
    assert "paused" not in spec and "minReadySeconds" not in spec
    # A pointer's zero is the client's value: replicas 0 stays 0 (not defaulted to 1).
    k.run("create", "deployment", "idle", "--image=busybox", "--replicas=0")
    assert k.json("get", "deployment", "idle")["spec"]["replicas"] == 0

    k.run("create", "job", "once", "--image=busybox")
    job = k.json("get", "job", "once")
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never" and job["spec"]["backoffLimit"] == 6
    k.run("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *")
    cj = k.json("get", "cronjob", "tick")
    assert cj["spec"]["schedule"] == "*/5 * * * *" and cj["spec"]["concurrencyPolicy"] == "Allow"
    assert cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    k.run("create", "pdb", "budget", "--selector=app=web", "--min-available=1")
    assert k.json("get", "pdb", "budget")["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}
    k.run("create", "pdb", "share", "--selector=app=web", "--max-unavailable=50%")
    assert k.json("get", "pdb", "share")["spec"]["maxUnavailable"] == "50%"
    k.run("create", "quota", "q", "--hard=pods=10,requests.cpu=2", "--scopes=NotTerminating")
    quota = k.json("get", "quota", "q")
    assert quota["spec"] == {"hard": {"pods": "10", "requests.cpu": "2"}, "scopes": ["NotTerminating"]}
    k.run("create", "secret", "generic", "creds", "--from-literal=user=ops")
    assert k.json("get", "secret", "creds")["data"] == {"user": "b3Bz"}
    # The columns kubectl's printers have for the new kinds (server-side tables).
    secrets = [line.split() for line in k.run("get", "secrets").stdout.splitlines()]
    assert secrets[0] == ["NAME", "TYPE", "DATA", "AGE"] and secrets[1][:3] == ["creds", "Opaque", "1"]
    services = [line.split() for line in k.run("get", "services").stdout.splitlines()]
    assert services[0][:5] == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)"]
    assert services[1][:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    cronjobs = [line.split() for line in k.run("get", "cronjobs").stdout.splitlines()]
    assert cronjobs[0][:3] == ["NAME", "SCHEDULE", "TIMEZONE"] and cronjobs[1][:8] == [
        "tick",
        "*/5",
        "*",
        "*",
        "*",
        "*",
        "<none>",
        "False",
    ]


def test_cluster_info_whoami_and_can_i_list(cluster):
    k, kubeconfig, _tmp = cluster
    server = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
    out = k.run("cluster-info").stdout
    assert f"Kubernetes control plane is running at {server}" in out
    who = k.run("auth", "whoami", "-o", "json").stdout
    assert json.loads(who)["status"]["userInfo"] == {
        "username": "admin",
        "groups": ["system:masters", "system:authenticated"],
    }
    assert "viewer" in k.run("auth", "whoami", "--context", "dragoman-sim-viewer").stdout
    rules = k.run("auth", "can-i", "--list", "--context", "dragoman-sim-viewer").stdout
    lines = [line.split() for line in rules.splitlines()]
    assert ["*.*", "[]", "[]", "[get", "list", "watch]"] in lines
    assert any(line[:1] == ["selfsubjectreviews.authentication.k8s.io"] for line in lines)
    assert "[*]" not in rules.split("Verbs", 1)[1].split("\n", 2)[1]  # the viewer's first rule is not everything


def test_helm_install_upgrade_and_uninstall_with_its_default_secret_storage(cluster, tmp_path: pathlib.Path):
    k, kubeconfig, _tmp = cluster
    helm = ensure_binary("helm")
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: tiny\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  "
        'greeting: {{ .Values.greeting | default "hello" }}\n'
    )
    env = {
        **k.env,
        "HOME": str(tmp_path),
        "HELM_CACHE_HOME": str(tmp_path / "cache"),
        "HELM_CONFIG_HOME": str(tmp_path / "config"),
        "HELM_DATA_HOME": str(tmp_path / "data"),
    }

    def helm_run(*args: str) -> str:
        proc = subprocess.run([str(helm), *args], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, f"helm {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    assert "STATUS: deployed" in helm_run("install", "web", str(chart))
    secrets = k.json("get", "secrets", "-l", "owner=helm")["items"]
    assert [s["metadata"]["name"] for s in secrets] == ["sh.helm.release.v1.web.v1"] and secrets[0][
        "type"
    ] == "helm.sh/release.v1"
    assert k.json("get", "configmap", "web-config")["data"] == {"greeting": "hello"}
    helm_run("upgrade", "web", str(chart), "--set", "greeting=hi")
    assert k.json("get", "configmap", "web-config")["data"] == {"greeting": "hi"}
    assert "deployed" in helm_run("list")
    helm_run("uninstall", "web")
    assert k.json("get", "secrets", "-l", "owner=helm")["items"] == []
    assert k.run("get", "configmap", "web-config", check=False).returncode != 0
