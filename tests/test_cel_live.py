"""`dragoman cel` on a live cluster: the devices it matches through the API equal those of a snapshot of the same
cluster."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest
from dragoman.sim.scenarios import DEMO_PATH
from dragoman.tui.cli import main

from tests.support.serve import served

# Guarded by the driver: the demo's a100-lab also publishes PCIe-fabric devices, where the unguarded form is a
# runtime error (no such key), as the scheduler would find it.
A100 = 'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100")'
# Whole GPUs have no profile: a runtime error on them, a match on small MIG slices; both must be the same devices.
UNGUARDED = 'device.attributes["gpu.nvidia.com"].profile.startsWith("1g")'


def dragoman(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    return subprocess.run(
        [sys.executable, "-m", "dragoman", *args], capture_output=True, text=True, env=env, timeout=180
    )


def dragoman_all(*argvs: list[str]) -> list[subprocess.CompletedProcess]:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "dragoman", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for argv in argvs
    ]
    done = []
    for argv, proc in zip(argvs, procs):
        out, err = proc.communicate(timeout=180)
        done.append(subprocess.CompletedProcess(argv, proc.returncode, out, err))
    return done


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> tuple[pathlib.Path, pathlib.Path]:
    """The demo served by `dragoman sim serve`, and a snapshot of it taken with `dragoman snapshot`."""
    tmp = tmp_path_factory.mktemp("cel-live")
    with served(DEMO_PATH, tmp) as kubeconfig:
        snap = tmp / "snap.yaml"
        proc = dragoman("snapshot", str(snap), "--kubeconfig", str(kubeconfig))
        assert proc.returncode == 0, proc.stderr
        yield kubeconfig, snap


def by_device(doc: dict) -> dict[tuple[str, str, str], str]:
    return {(r["driver"], r["pool"], r["device"]): r["result"] for r in doc["results"]}


def cel_json(capsys, *args: str) -> tuple[int, dict]:
    code = main(["cel", *args, "--output", "json"])
    out = capsys.readouterr()
    assert out.err == "", out.err
    return code, json.loads(out.out)


@pytest.mark.parametrize("expr, cls", [(A100, None), (A100, "gpu.nvidia.com"), (UNGUARDED, None)])
def test_live_cluster_matches_the_same_devices_as_its_snapshot(live, capsys, expr, cls):
    kubeconfig, snap = live
    extra = ["--class", cls] if cls else []
    live_code, live_doc = cel_json(capsys, expr, "--kubeconfig", str(kubeconfig), *extra)
    snap_code, snap_doc = cel_json(capsys, expr, "--snapshot", str(snap), *extra)
    assert live_code == snap_code
    assert by_device(live_doc) == by_device(snap_doc) and live_doc["summary"] == snap_doc["summary"]
    assert live_doc["summary"]["devices"] > 100 and live_doc["summary"]["matched"] > 0
    if expr == UNGUARDED:
        assert live_doc["summary"]["errors"] > 0 and live_code == 1


def test_runtime_errors_and_matches_through_the_real_cli(live):
    kubeconfig, snap = live
    # Four short-lived processes side by side: each mostly waits on imports and the server.
    live_proc, snap_proc, live_text, snap_text = dragoman_all(
        ["cel", UNGUARDED, "--kubeconfig", str(kubeconfig), "-o", "json"],
        ["cel", UNGUARDED, "--snapshot", str(snap), "-o", "json"],
        ["cel", A100, "--kubeconfig", str(kubeconfig)],
        ["cel", A100, "--snapshot", str(snap)],
    )
    assert live_proc.returncode == snap_proc.returncode == 1
    assert by_device(json.loads(live_proc.stdout)) == by_device(json.loads(snap_proc.stdout))
    # The text counts the same devices and slices.
    assert live_text.returncode == snap_text.returncode == 0 and live_text.stderr == ""
    assert live_text.stdout.splitlines()[1] == snap_text.stdout.splitlines()[1]
    assert " devices in " in live_text.stdout.splitlines()[1]


def test_flags_before_the_subcommand_and_a_context(live, capsys):
    kubeconfig, _ = live
    code = main(["--kubeconfig", str(kubeconfig), "--context", "dragoman-sim-viewer", "cel", A100, "-o", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["summary"]["matched"] > 0


def test_demo_flag_reads_the_demo(capsys):
    code, doc = cel_json(capsys, A100, "--demo")
    _, from_file = cel_json(capsys, A100, "--snapshot", str(DEMO_PATH))
    assert code == 0 and by_device(doc) == by_device(from_file)


def test_live_input_errors_are_sentences(live, capsys):
    kubeconfig, _ = live
    assert main(["cel", A100, "--kubeconfig", str(kubeconfig), "--class", "no-such-class"]) == 2
    assert "DeviceClass no-such-class is not in the cluster." in capsys.readouterr().err
    assert main(["cel", A100, "--kubeconfig", str(kubeconfig), "--context", "nope"]) == 2
    assert "context 'nope' is not in the kubeconfig" in capsys.readouterr().err
