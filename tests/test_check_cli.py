"""`dragoman check` through the real CLI and in-process: the demo's marked findings from a snapshot, a live simulator
and
--demo, the documented JSON, exit codes 0/1/2, 80-column text, 403s as notes, and every bad input as one sentence."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import stat
import subprocess
import sys

import jsonschema
import pytest
import yaml
from dragoman.sim.scenarios import DEMO_PATH, TRANSIENT_FINDINGS, demo_marks, load_scenario
from dragoman.tui.cli import main
from dragoman.tui.commands.check import CHECK_JSON_SCHEMA

from tests.fleet.fleet_fixtures import dp_fleet, dra_fleet
from tests.support.serve import served

# Kinds the `partial` user may not list: that part of the picture is missing, the rest is read.
HIDDEN = ("events", "resourcequotas")
PARTIAL_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "dragoman-test-partial"},
    "rules": [
        {
            "apiGroups": [""],
            "resources": ["nodes", "pods", "namespaces", "configmaps"],
            "verbs": ["get", "list", "watch"],
        },
        {
            "apiGroups": ["apps", "batch", "policy", "coordination.k8s.io", "resource.k8s.io"],
            "resources": ["*"],
            "verbs": ["get", "list", "watch"],
        },
    ],
}
USERS = {
    "apiVersion": "sim.dragoman.io/v1",
    "kind": "SimulatorConfig",
    "users": [{"name": "partial", "clusterRoles": ["dragoman-test-partial"]}, {"name": "nobody"}],
}

VALIDATOR = jsonschema.Draft202012Validator(CHECK_JSON_SCHEMA)


def dragoman(*args: str, columns: int = 80, cwd: pathlib.Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(columns)}
    env.pop("KUBECONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "dragoman", *args], capture_output=True, text=True, env=env, timeout=180, cwd=cwd
    )


def run_in_process(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def ids_of(doc: dict) -> set[str]:
    return {f["id"] for f in doc["findings"]}


def assert_fits(text: str, width: int = 80) -> None:
    """No line longer than `width`, unless it is a single unbreakable token (a very long object name)."""
    for line in text.splitlines():
        assert len(line) <= width or " " not in line.strip(), f"line of {len(line)} columns: {line!r}"


@pytest.fixture(scope="module")
def marks() -> set[str]:
    return set(demo_marks(load_scenario("demo")))


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> pathlib.Path:
    """The demo served by `dragoman sim serve`, plus a user who may not list Events and ResourceQuotas and one who may
    list nothing."""
    tmp = tmp_path_factory.mktemp("check-live")
    scenario = tmp / "scenario.yaml"
    scenario.write_text(DEMO_PATH.read_text() + "\n---\n" + yaml.safe_dump_all([PARTIAL_ROLE, USERS]))
    with served(scenario, tmp) as kubeconfig:
        yield kubeconfig


@pytest.fixture()
def healthy(tmp_path: pathlib.Path) -> pathlib.Path:
    """A device-plugin pool and a DRA pool, each served by exactly one mechanism, nothing pending."""
    path = tmp_path / "healthy.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": dp_fleet(4) + dra_fleet(3)}))
    return path


# ---- the demo --------------------------------------------------------------------------------------------------


def test_demo_snapshot_json_has_every_marked_finding_and_the_documented_shape(marks):
    proc = dragoman("check", "--snapshot", str(DEMO_PATH), "--output", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    VALIDATOR.validate(doc)
    assert ids_of(doc) == marks
    assert doc["source"] == {
        "type": "snapshot",
        "snapshot": str(DEMO_PATH),
        "context": None,
        "server": None,
        "serverVersion": None,
        "resourceApiVersions": [],
        "forbiddenKinds": [],
    }
    assert doc["notes"] == [] and doc["summary"]["errors"] == sum(f["severity"] == "error" for f in doc["findings"]) > 0
    assert {p["name"] for p in doc["pools"]} >= {"h100-dra", "a100-serve", "a100-train"}


def test_demo_snapshot_text_reads_in_80_columns(marks):
    proc = dragoman("check", "--snapshot", str(DEMO_PATH), columns=80)
    assert proc.returncode == 1 and proc.stderr == ""
    text = proc.stdout
    assert text.startswith(f"Fleet read from snapshot {DEMO_PATH}")
    assert "POOL" in text and "SERVED BY" in text and "fix:" in text
    for fid in marks:
        assert f" {fid}" in text, fid
    assert_fits(text)
    # A wider terminal uses the room: fewer lines.
    wide = dragoman("check", "--snapshot", str(DEMO_PATH), columns=120)
    assert len(wide.stdout.splitlines()) < len(text.splitlines())


def test_live_simulator_gives_the_same_findings_as_its_snapshot(live, marks, capsys):
    proc = dragoman("check", "--kubeconfig", str(live), "-o", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    VALIDATOR.validate(doc)
    assert marks - TRANSIENT_FINDINGS <= ids_of(doc) <= marks
    src = doc["source"]
    assert (
        src["type"] == "cluster" and src["context"] == "dragoman-sim" and src["server"].startswith("https://127.0.0.1:")
    )
    assert src["serverVersion"].startswith("v1.") and "v1" in src["resourceApiVersions"] and src["forbiddenKinds"] == []

    # In-process, with the flags before the subcommand, the same picture.
    code, out, err = run_in_process(capsys, "--kubeconfig", str(live), "check", "--output", "json")
    assert code == 1 and err == ""
    again = json.loads(out)
    assert ids_of(again) == ids_of(doc) and again["summary"] == doc["summary"]

    code, text, _ = run_in_process(capsys, "check", "--kubeconfig", str(live))
    assert code == 1 and text.startswith("Fleet read from context dragoman-sim at https://127.0.0.1:")
    assert_fits(text)


def test_demo_flag_starts_the_demo_and_reads_it(marks):
    proc = dragoman("check", "--demo", "-o", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    VALIDATOR.validate(doc)
    assert doc["source"]["type"] == "demo" and marks - TRANSIENT_FINDINGS <= ids_of(doc) <= marks


def test_pool_label_flag_regroups(capsys):
    code, out, _ = run_in_process(
        capsys, "check", "--snapshot", str(DEMO_PATH), "--pool-label", "kubernetes.io/os", "-o", "json"
    )
    doc = json.loads(out)
    assert code == 1 and doc["poolLabel"] == "kubernetes.io/os"
    assert "h100-dra" not in {p["name"] for p in doc["pools"]}


# ---- exit 0 ----------------------------------------------------------------------------------------------------


def test_healthy_fleet_exits_0(healthy, capsys):
    code, out, err = run_in_process(capsys, "check", "--snapshot", str(healthy), "--output", "json")
    doc = json.loads(out)
    VALIDATOR.validate(doc)
    assert code == 0 and err == "" and doc["summary"]["errors"] == 0
    assert {p["name"]: p["ownership"] for p in doc["pools"] if p["gpuNodes"]} == {
        "l4-pool": "device-plugin",
        "h100-pool": "dra",
    }
    proc = dragoman("check", "--snapshot", str(healthy))
    assert proc.returncode == 0 and "0 errors" in proc.stdout
    assert_fits(proc.stdout)


# ---- 403 -------------------------------------------------------------------------------------------------------


def test_forbidden_kinds_are_a_note_not_a_failure(live, marks, capsys):
    code, out, err = run_in_process(
        capsys, "check", "--kubeconfig", str(live), "--context", "dragoman-sim-partial", "-o", "json"
    )
    assert code == 1, err
    doc = json.loads(out)
    VALIDATOR.validate(doc)
    assert sorted(doc["source"]["forbiddenKinds"]) == ["Event", "ResourceQuota"]
    assert len(doc["notes"]) == 2 and all("403" in n and "partial" in n for n in doc["notes"])
    assert any("events" in n for n in doc["notes"]) and any("resourcequotas" in n for n in doc["notes"])
    # The rest of the picture is there: every finding that does not need a quota.
    assert {"both-stacks", "no-slices", "pending-insufficient"} <= ids_of(doc)

    code, text, _ = run_in_process(capsys, "check", "--kubeconfig", str(live), "--context", "dragoman-sim-partial")
    assert code == 1 and "note: user 'partial' may not list events (403 Forbidden)" in " ".join(text.split())
    assert_fits(text)


def test_credentials_that_may_list_nothing_cannot_read_the_cluster(live, capsys):
    code, out, err = run_in_process(capsys, "check", "--kubeconfig", str(live), "--context", "dragoman-sim-nobody")
    assert code == 2 and out == ""
    assert err.startswith(
        "dragoman: the credentials of context 'dragoman-sim-nobody' may not list anything dragoman reads"
    )
    assert err.count("\n") == 1


# ---- exit 2 ----------------------------------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kubeconfig(server: str, user: dict, ca: dict | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "c",
        "clusters": [{"name": "a", "cluster": {"server": server, **(ca or {"insecure-skip-tls-verify": True})}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "a", "user": "u"}}],
    }


def bad_inputs(tmp: pathlib.Path, live: pathlib.Path) -> dict[str, tuple[list[str], str]]:
    """case → (arguments, a phrase its one sentence must hold)."""
    (tmp / "malformed.yaml").write_text("clusters:\n  - name: a\n   server: [\n")
    (tmp / "closed.yaml").write_text(yaml.safe_dump(_kubeconfig(f"https://127.0.0.1:{_closed_port()}", {"token": "t"})))
    (tmp / "not-k8s.yaml").write_text("groceries:\n  - milk\n  - bread\n")
    (tmp / "binary.yaml").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    cluster = yaml.safe_load(live.read_text())["clusters"][0]["cluster"]
    server, ca = cluster["server"], {k: v for k, v in cluster.items() if k != "server"}
    plugin = tmp / "expired-login"
    plugin.write_text(
        f"#!{sys.executable}\nimport sys\nprint('error: the SSO session has expired', file=sys.stderr)\nsys.exit(1)\n"
    )
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    exec_user = {
        "exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin), "interactiveMode": "Never"}
    }
    (tmp / "expired-exec.yaml").write_text(yaml.safe_dump(_kubeconfig(server, exec_user, ca)))
    (tmp / "rejected.yaml").write_text(yaml.safe_dump(_kubeconfig(server, {"token": "expired-or-revoked"}, ca)))
    return {
        "missing kubeconfig": (["--kubeconfig", str(tmp / "nope.yaml")], "does not exist"),
        "malformed kubeconfig": (["--kubeconfig", str(tmp / "malformed.yaml")], "is not valid YAML at line 3"),
        "unknown context": (
            ["--kubeconfig", str(live), "--context", "prod-eu"],
            "context 'prod-eu' is not in the kubeconfig",
        ),
        "unreachable server": (["--kubeconfig", str(tmp / "closed.yaml")], "cannot reach the cluster"),
        "snapshot not Kubernetes": (["--snapshot", str(tmp / "not-k8s.yaml")], "is not Kubernetes YAML"),
        "snapshot not text": (["--snapshot", str(tmp / "binary.yaml")], "is not Kubernetes YAML"),
        "missing snapshot": (["--snapshot", str(tmp / "gone.yaml")], "does not exist"),
        "expired exec credentials": (["--kubeconfig", str(tmp / "expired-exec.yaml")], "SSO session has expired"),
        "rejected token": (["--kubeconfig", str(tmp / "rejected.yaml")], "401 Unauthorized"),
        "two sources": (["--demo", "--snapshot", str(DEMO_PATH)], "two different sources"),
    }


def test_every_bad_input_is_one_sentence_and_exit_2(live, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    for name, (args, phrase) in bad_inputs(tmp_path, live).items():
        code, out, err = run_in_process(capsys, "check", *args)
        assert code == 2, f"{name}: exit {code}\n{err}"
        assert out == "" and err.startswith("dragoman: ") and err.count("\n") == 1, f"{name}: {err!r}"
        assert phrase in err and err.rstrip().endswith((".", ")")), f"{name}: {err!r}"


def test_bad_input_through_the_real_cli_has_no_traceback(live, tmp_path):
    cases = bad_inputs(tmp_path, live)
    names = ("unreachable server", "expired exec credentials", "snapshot not Kubernetes", "malformed kubeconfig")
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("KUBECONFIG", None)
    # Side by side: each is a short-lived process that mostly waits.
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-m", "dragoman", "check", *cases[name][0]],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        for name in names
    }
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 2 and out == "", f"{name}: exit {proc.returncode}\n{err}"
        assert "Traceback" not in err and err.count("\n") == 1 and cases[name][1] in err, f"{name}: {err!r}"


def test_kinds_the_server_does_not_serve_make_one_note():
    from dragoman.fleet.informer import FleetSource
    from dragoman.fleet.store import FORBIDDEN, LIVE, FleetStore
    from dragoman.tui.headless import Origin

    store = FleetStore()
    for kind in store.kinds:
        store.set_state(kind, LIVE, "", synced=True)
    for kind, plural in (("DeviceClass", "deviceclasses"), ("ResourceSlice", "resourceslices")):
        store.set_state(kind, LIVE, f"the server does not serve {plural}.", synced=True)
    store.set_state(
        "Event", FORBIDDEN, "user 'x' may not list events (403 Forbidden); that part of the picture is missing."
    )
    notes = Origin("cluster", FleetSource(store, "c", "https://k", "v1.33.2")).notes()
    assert notes == [
        "user 'x' may not list events (403 Forbidden); that part of the picture is missing.",
        "the server does not serve deviceclasses or resourceslices: the picture has none of them.",
    ]


async def test_check_reads_projected_pods_and_reports_exactly_what_whole_pods_give() -> None:
    """`dragoman check` keeps CPU pods as projections (read_fleet(project=True)), as the live store does: its report is
    the one the whole objects give, on a fleet with Deployment, Job, DaemonSet, GPU and DRA pods."""
    import json

    from dragoman.fleet.diagnose import diagnose
    from dragoman.fleet.informer import read_fleet
    from dragoman.fleet.model import FleetModel
    from dragoman.sim.scenarios.scale import generate_envelope
    from dragoman.tui.commands import check
    from dragoman.tui.headless import Origin

    from tests.support.sim import running_simulator

    async with running_simulator(
        objects=generate_envelope(
            nodes=12, gpu_nodes=4, pods=240, gpu_pods=40, job_pods=24, namespaces=2, cpu_pool_size=4, gpu_pool_size=2
        )
    ) as sim:
        docs, projected = [], []
        for project in (False, True):
            source = await read_fleet(str(sim.kubeconfig_path), None, project=project)
            model = FleetModel(None)
            model.load({k: source.store.objects(k) for k in source.store.kinds})
            origin = Origin("cluster", source)
            doc = check.check_document(model, diagnose(model), origin, (None, "no rules"))
            docs.append(json.dumps(doc, sort_keys=True, default=str))
            projected.append(source.store.projected("Pod"))
    assert projected[0] == 0 and projected[1] > 100
    assert docs[0] == docs[1]


def test_check_demo_reads_the_demo_scenario_once_and_its_rules_reach_the_report(capsys, monkeypatch):
    # The PrometheusRules come with the fleet's read: parsing the 840 KB scenario again for them cost a second.
    from dragoman.sim import scenario

    loads: list[str] = []
    real = scenario.load

    def counted(name: str, **kw):
        loads.append(name)
        return real(name, **kw)

    monkeypatch.setattr(scenario, "load", counted)
    code, out, _ = run_in_process(capsys, "check", "--demo", "-o", "json")
    assert code == 1 and loads == ["demo"]
    accounting = json.loads(out)["accounting"]
    expected = {r["metadata"]["name"] for r in load_scenario("demo") if r.get("kind") == "PrometheusRule"}
    assert expected and {r["name"] for r in accounting["prometheusRules"]} == expected
    assert not accounting["prometheusRulesNote"]
