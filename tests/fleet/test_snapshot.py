"""Snapshots: every accepted input shape, every rejection as one sentence, and a write/read round trip."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest
import yaml
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.fleet.snapshot import load_snapshot, store_from_snapshot, write_snapshot
from dragoman.fleet.store import SNAPSHOT, FleetStore

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "gpu-1", "labels": {"pool": "a"}},
    "status": {"allocatable": {"nvidia.com/gpu": "8"}},
}
SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "gpu-1-gpu.nvidia.com-x"},
    "spec": {
        "driver": "gpu.nvidia.com",
        "nodeName": "gpu-1",
        "pool": {"name": "gpu-1", "generation": 1, "resourceSliceCount": 1},
        "devices": [
            {"name": "gpu-0", "attributes": {"productName": {"string": "NVIDIA H100"}}, "futureField": {"kept": True}}
        ],
    },
}
OWN_CM = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": "dragoman-pool-a",
        "namespace": "kube-system",
        "labels": {"app.kubernetes.io/managed-by": "dragoman"},
    },
    "data": {"plan": "{}"},
}
OTHER_CM = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "app-config", "namespace": "default"},
    "data": {"password": "x"},
}
SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "s", "namespace": "default"},
    "data": {"k": "dg=="},
}


def write(tmp_path: pathlib.Path, text: str, name: str = "snap.yaml") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_reads_a_list(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, SLICE]}))
    objs = load_snapshot(path)
    assert [o["kind"] for o in objs] == ["Node", "ResourceSlice"]
    assert objs[1]["spec"]["devices"][0]["futureField"] == {"kept": True}


def test_reads_several_documents_and_a_single_object(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, "---\n" + yaml.safe_dump(NODE) + "---\n# comment only\n---\n" + yaml.safe_dump(SLICE))
    assert [o["metadata"]["name"] for o in load_snapshot(path)] == ["gpu-1", "gpu-1-gpu.nvidia.com-x"]
    assert load_snapshot(write(tmp_path, yaml.safe_dump(NODE), "one.yaml"))[0]["kind"] == "Node"


def test_reads_kubectl_json_and_typed_lists(tmp_path: pathlib.Path) -> None:
    # `kubectl get nodes -o json` is a List; the raw API answers a NodeList whose items have no kind.
    kubectl_json = json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": [NODE], "metadata": {"resourceVersion": ""}}
    )
    assert load_snapshot(write(tmp_path, kubectl_json, "k.json"))[0]["metadata"]["name"] == "gpu-1"
    bare = {k: v for k, v in NODE.items() if k not in ("kind", "apiVersion")}
    typed = yaml.safe_dump({"apiVersion": "v1", "kind": "NodeList", "metadata": {}, "items": [bare]})
    got = load_snapshot(write(tmp_path, typed, "typed.yaml"))
    assert got[0]["kind"] == "Node" and got[0]["apiVersion"] == "v1"


def test_reads_standard_input(tmp_path: pathlib.Path) -> None:
    code = "from dragoman.fleet.snapshot import load_snapshot; print(load_snapshot('-')[0]['metadata']['name'])"
    proc = subprocess.run(
        [sys.executable, "-c", code], input=yaml.safe_dump(NODE), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "gpu-1"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("kind: Node\nmetadata: {name: [unclosed\n", "not valid YAML at line"),
        ("just a string\n", "is a str, not an object"),
        ("- 1\n- 2\n", "item 1 of the document is a int"),
        ("metadata: {name: x}\n", "has no kind and apiVersion"),
        ("apiVersion: v1\nkind: Node\nmetadata: {}\n", "has no metadata.name"),
        ("---\n---\n", "holds no Kubernetes objects"),
        ("", "holds no Kubernetes objects"),
    ],
)
def test_not_kubernetes_yaml_is_one_sentence(tmp_path: pathlib.Path, text: str, fragment: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(UserError) as info:
        load_snapshot(path)
    assert info.value.exit_code == ExitCode.INPUT
    assert fragment in info.value.message and path in info.value.message
    assert "\n" not in info.value.message


def test_missing_and_binary_files(tmp_path: pathlib.Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        load_snapshot(str(tmp_path / "nope.yaml"))
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(UserError, match="not a text file"):
        load_snapshot(str(tmp_path / "bin"))
    with pytest.raises(UserError, match="is a directory"):
        load_snapshot(str(tmp_path))


def test_store_from_snapshot_keeps_only_what_dragoman_reads(tmp_path: pathlib.Path) -> None:
    lease_other = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "kube-scheduler", "namespace": "kube-system"},
    }
    wrong_group = {"apiVersion": "example.com/v1", "kind": "Node", "metadata": {"name": "fake"}}
    path = write(tmp_path, yaml.safe_dump_all([NODE, SLICE, OWN_CM, OTHER_CM, SECRET, lease_other, wrong_group]))
    store = store_from_snapshot(path)
    assert store.read_only and store.overall.status == SNAPSHOT and store.overall.synced
    assert list(store.objects("Node")) == [("", "gpu-1")]
    assert store.get("ResourceSlice", "", "gpu-1-gpu.nvidia.com-x") is not None
    assert list(store.objects("ConfigMap")) == [("kube-system", "dragoman-pool-a")]
    assert store.count("Lease") == 0
    assert store.count() == 3


def test_round_trip_never_writes_secrets_or_foreign_configmap_data(tmp_path: pathlib.Path) -> None:
    store = FleetStore()
    pod_bare = {
        "metadata": {"name": "p", "namespace": "ml", "resourceVersion": "3", "managedFields": [{"manager": "kubectl"}]},
        "spec": {"nodeName": "gpu-1"},
    }
    store.replace("Pod", [pod_bare])  # as a LIST delivers it: no kind/apiVersion
    store.replace("Node", [NODE])
    store.replace("ResourceSlice", [SLICE])
    store.replace("ConfigMap", [OWN_CM, OTHER_CM])  # a foreign one slipped in: must not be written
    out = tmp_path / "out.yaml"
    n = write_snapshot(store, str(out), header=["dragoman snapshot of test"])
    text = out.read_text()
    assert text.startswith("# dragoman snapshot of test\n")
    doc = yaml.safe_load(text)
    assert doc["kind"] == "List" and doc["apiVersion"] == "v1" and n == len(doc["items"]) == 4
    kinds = [i["kind"] for i in doc["items"]]
    assert kinds == ["Node", "Pod", "ConfigMap", "ResourceSlice"]
    assert "password" not in text and "Secret" not in kinds
    pod_out = doc["items"][1]
    assert pod_out["apiVersion"] == "v1" and "managedFields" not in pod_out["metadata"]
    assert "managedFields" in pod_bare["metadata"]  # the store's object is untouched
    again = store_from_snapshot(str(out))
    assert again.get("ResourceSlice", "", "gpu-1-gpu.nvidia.com-x")["spec"] == SLICE["spec"]
    assert again.get("Pod", "ml", "p")["spec"] == {"nodeName": "gpu-1"}


def test_write_into_a_missing_folder_is_a_sentence(tmp_path: pathlib.Path) -> None:
    with pytest.raises(UserError, match=r"folder .* does not exist"):
        write_snapshot(FleetStore(), str(tmp_path / "no" / "such" / "f.yaml"))


def test_snapshot_command_rewrites_a_snapshot_and_reports_bad_input(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dragoman.tui.cli import main

    src = write(tmp_path, yaml.safe_dump_all([NODE, SLICE, SECRET]))
    out = tmp_path / "copy.yaml"
    assert main(["snapshot", str(out), "--snapshot", src]) == 0
    assert "wrote 2 objects" in capsys.readouterr().err
    assert [i["kind"] for i in yaml.safe_load(out.read_text())["items"]] == ["Node", "ResourceSlice"]
    bad = write(tmp_path, "- not\n- objects\n", "bad.yaml")
    assert main(["snapshot", str(out), "--snapshot", bad]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith("dragoman: the snapshot") and len(err.strip().splitlines()) == 1


async def test_snapshot_command_against_the_simulator(tmp_path: pathlib.Path) -> None:
    import asyncio

    from tests.support.sim import running_simulator

    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "no-claims"},
        "rules": [
            {
                "apiGroups": ["", "apps", "batch", "policy", "coordination.k8s.io"],
                "resources": ["*"],
                "verbs": ["get", "list", "watch"],
            },
            {
                "apiGroups": ["resource.k8s.io"],
                "resources": ["deviceclasses", "resourceslices", "resourceclaimtemplates"],
                "verbs": ["list", "watch"],
            },
        ],
    }
    async with running_simulator(
        objects=[NODE, SLICE, OWN_CM, OTHER_CM, role], users=[{"name": "viewer", "clusterRoles": ["no-claims"]}]
    ) as sim:
        out = tmp_path / "snap.yaml"
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dragoman",
            "snapshot",
            str(out),
            "--kubeconfig",
            str(sim.kubeconfig_path),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()
        assert "wrote" in err.decode() and str(out) in err.decode()
        text = out.read_text()
        assert text.startswith(f"# dragoman snapshot of {sim.url} (context dragoman-sim, v1.")
        doc = yaml.safe_load(text)
        kinds = {i["kind"] for i in doc["items"]}
        assert {"Node", "ResourceSlice", "ConfigMap", "Namespace"} <= kinds and "Secret" not in kinds
        assert "password" not in text and "managedFields" not in text
        assert [i["metadata"]["name"] for i in doc["items"] if i["kind"] == "ConfigMap"] == ["dragoman-pool-a"]
        store = store_from_snapshot(str(out))
        assert store.get("ResourceSlice", "", "gpu-1-gpu.nvidia.com-x")["spec"]["devices"][0]["futureField"] == {
            "kept": True
        }

        # A user who may not read one kind still gets a snapshot, with a note and the gap recorded in it.
        kc = tmp_path / "viewer"
        sim.write_kubeconfig(kc, "viewer")
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dragoman",
            "snapshot",
            str(tmp_path / "v.yaml"),
            "--kubeconfig",
            str(kc),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()
        assert "note: user 'viewer' may not list resourceclaims" in err.decode()
        assert "missing: ResourceClaim" in (tmp_path / "v.yaml").read_text().splitlines()[1]


def test_snapshot_command_unreachable_server_is_one_sentence(tmp_path: pathlib.Path) -> None:
    kc = tmp_path / "kc"
    kc.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [
                    {"name": "x", "cluster": {"server": "https://127.0.0.1:9", "insecure-skip-tls-verify": True}}
                ],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "x", "user": "u"}}],
            }
        )
    )
    proc = subprocess.run(
        [sys.executable, "-m", "dragoman", "snapshot", str(tmp_path / "o.yaml"), "--kubeconfig", str(kc)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("dragoman: cannot reach the cluster of context 'c' (server https://127.0.0.1:9)")
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "o.yaml").exists()


def test_a_snapshot_of_the_demo_gives_the_same_diagnosis(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dragoman.tui.cli import main

    snap = tmp_path / "demo.yaml"
    assert main(["snapshot", str(snap), "--demo"]) == 0
    assert "wrote" in capsys.readouterr().err
    assert snap.read_text().startswith("# dragoman snapshot of the demo simulator (context dragoman-sim, v1.")
    main(["check", "--demo", "--output", "json"])
    live = json.loads(capsys.readouterr().out)
    main(["check", "--snapshot", str(snap), "--output", "json"])
    again = json.loads(capsys.readouterr().out)

    # The lab's binding, timeout and admin-access stories move on a running simulator (the scheduler retries, its
    # Events count up) between the two demos' readings: compared by id and objects, not by evidence.
    moving = {"binding-pending", "binding-failed", "filter-timeout", "admin-access-forbidden"}

    def findings(report: dict) -> list:
        return sorted(
            json.dumps({k: v for k, v in f.items() if f["id"] not in moving or k in ("id", "objects")}, sort_keys=True)
            for f in report["findings"]
        )

    assert live["findings"] and findings(live) == findings(again)


async def test_the_simulator_loads_a_snapshot_as_a_scenario(tmp_path: pathlib.Path) -> None:
    from dragoman.fleet.informer import read_fleet

    from tests.support.sim import running_simulator

    objs = [
        NODE,
        SLICE,
        OWN_CM,
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}},
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ml"},
            "spec": {
                "nodeName": "gpu-1",
                "containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
            },
        },
    ]
    async with running_simulator(objects=objs) as sim:
        first = await read_fleet(str(sim.kubeconfig_path), None)
    out = tmp_path / "snap.yaml"
    write_snapshot(first.store, str(out))
    async with running_simulator(scenario_path=out) as sim:
        second = await read_fleet(str(sim.kubeconfig_path), None)
    for kind in first.store.kinds:
        assert set(second.store.objects(kind)) == set(first.store.objects(kind)), kind
    assert (
        second.store.get("Pod", "ml", "p")["spec"]["containers"]
        == first.store.get("Pod", "ml", "p")["spec"]["containers"]
    )
    assert (
        second.store.get("ResourceSlice", "", "gpu-1-gpu.nvidia.com-x")["spec"]
        == first.store.get("ResourceSlice", "", "gpu-1-gpu.nvidia.com-x")["spec"]
    )
