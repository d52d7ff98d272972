"""`dragoman sim serve --control-plane` ended by a signal — the terminal closed (SIGHUP), a service manager's SIGTERM,
at startup or while serving — stops every control-plane process it started and removes the run's folder: the
processes run in their own sessions, so nothing else would end them."""

from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess
import time

import pytest

from tests.controlplane.support import binaries_dir
from tests.support import serve

pytestmark = pytest.mark.controlplane

COMPONENTS = ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager")
SMALL_SCENARIO = pathlib.Path(__file__).parent / "data" / "real_kubelets.yaml"


def _children(pid: int) -> dict[int, str]:
    """The processes whose parent is `pid`, with their command's first word (from /proc)."""
    out = {}
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().split(b"\0")[0].decode()
        except OSError:
            continue
        # /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces, so split after its closing paren.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out[int(entry.name)] = os.path.basename(cmd)
    return out


def _alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _serve(tmp: pathlib.Path) -> tuple[subprocess.Popen, pathlib.Path]:
    # A two-node scenario: what a signal must end is the control plane's processes and folder, whatever the fleet; the
    # demo took 3.5 of the suite's minutes to load for this alone (load 10).
    log = tmp / "serve.log"
    args = ["--scenario", str(SMALL_SCENARIO), "--control-plane", str(binaries_dir())]
    return serve.start(args + ["--write-kubeconfig", str(tmp / "kubeconfig")], log), log


def _wait(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


def _run_dirs(children: dict[int, str]) -> set[pathlib.Path]:
    """The run's folder, as its processes name it on their command lines (etcd's --data-dir, the certificates)."""
    out = set()
    for pid in children:
        try:
            args = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        out.update(pathlib.Path(m) for m in re.findall(r"(/[^\s\0=]*?/dragoman-cp-[^/\s\0]+)", args))
    return out


def _ended_cleanly(proc: subprocess.Popen, children: dict[int, str], run_dirs: set[pathlib.Path], log) -> None:
    try:
        code = proc.wait(90)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("dragoman did not end after the signal:\n" + log.read_text()) from None
    left = {pid: name for pid, name in children.items() if _alive(pid)}
    for pid in left:  # never leave them to the next test, whatever the assertion says
        os.kill(pid, signal.SIGKILL)
    assert not left, f"left running after the signal: {left}\n{log.read_text()}"
    assert code == 0, log.read_text()
    assert "stopped (every control-plane process ended" in log.read_text()
    assert run_dirs, "the processes named their run folder"
    assert not [d for d in run_dirs if d.exists()], f"run folder left: {run_dirs}"


def test_sighup_while_serving_stops_every_process(tmp_path: pathlib.Path) -> None:
    proc, log = _serve(tmp_path)
    _wait(lambda: "press Ctrl+C" in log.read_text() or proc.poll() is not None, 600, "serving")
    assert proc.poll() is None, log.read_text()
    children = _children(proc.pid)
    assert set(COMPONENTS) <= set(children.values()), children
    dirs = _run_dirs(children)
    proc.send_signal(signal.SIGHUP)
    _ended_cleanly(proc, children, dirs, log)


def test_sigterm_while_starting_stops_what_was_started(tmp_path: pathlib.Path) -> None:
    proc, log = _serve(tmp_path)
    # The signal lands while the processes start and before the fleet is loaded.
    # (`kube-apiserver --version` runs first, a check of the binaries: wait for the served one, next to etcd.)
    children = _wait(
        lambda: (c := _children(proc.pid)) and {"etcd", "kube-apiserver"} <= set(c.values()) and _run_dirs(c) and c,
        120,
        "etcd and kube-apiserver spawned",
    )
    assert "press Ctrl+C" not in log.read_text()
    dirs = _run_dirs(children)
    proc.send_signal(signal.SIGTERM)
    time.sleep(1.0)  # anything spawned after the first look (a start that raced the signal) is a child too
    children = {**children, **_children(proc.pid)}
    _ended_cleanly(proc, children, dirs, log)


# ---------------------------------------------------------------------------- with real kubelets

REAL_KUBELETS_SCENARIO = SMALL_SCENARIO
HOST_TUNABLES = ("vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops")


def _tunables() -> dict[str, str]:
    return {k: pathlib.Path("/proc/sys", k).read_text().strip() for k in HOST_TUNABLES}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_a_signal_with_real_kubelets_leaves_no_kubelet_runtime_mount_or_file(
    sig: signal.Signals, tmp_path: pathlib.Path
) -> None:
    """Started, Ready, then Ctrl+C or SIGTERM: every kubelet and runtime ended, their namespaces (and mounts) gone,
    the run's folder removed, the host's kernel tunables and /var/lib as they were."""
    before = _tunables()
    had_var_lib_kubelet = pathlib.Path("/var/lib/kubelet").exists()
    log = tmp_path / "serve.log"
    args = [
        "--scenario",
        str(REAL_KUBELETS_SCENARIO),
        "--control-plane",
        str(binaries_dir()),
        "--real-kubelets",
        "rk-cpu-a",
    ]
    proc = serve.start(args + ["--write-kubeconfig", str(tmp_path / "kc")], log, cwd=tmp_path)
    try:
        _wait(lambda: "press Ctrl+C" in log.read_text() or proc.poll() is not None, 300, "serving")
        assert proc.poll() is None, log.read_text()
        assert "real kubelets: 1 nodes (rk-cpu-a v1.37.2" in log.read_text()
        run_dir = next(
            line.split("run folder: ", 1)[1].split(" ", 1)[0]
            for line in log.read_text().splitlines()
            if "run folder: " in line
        )
        mine = _pids_mentioning(run_dir)
        names = {pathlib.Path(_cmd(p)[0]).name for p in mine}
        assert {"kubelet", "dragoman-cri"} <= names, names
        # The node's mounts are in its own namespace, not the host's.
        assert run_dir not in pathlib.Path("/proc/self/mountinfo").read_text()
        assert any(run_dir in _mountinfo(p) for p in mine)
        proc.send_signal(sig)
        assert proc.wait(90) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    time.sleep(0.5)
    left = [p for p in _pids_mentioning(run_dir)]
    assert not left, f"left running: {[_cmd(p) for p in left]}"
    assert not [p for p in pathlib.Path("/proc").iterdir() if p.name.isdigit() and run_dir in _mountinfo(p.name)]
    assert not pathlib.Path(run_dir).exists()
    assert _tunables() == before
    assert pathlib.Path("/var/lib/kubelet").exists() == had_var_lib_kubelet


def _cmd(pid: str) -> list[str]:
    try:
        return pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return [""]


def _mountinfo(pid: str) -> str:
    try:
        return pathlib.Path(f"/proc/{pid}/mountinfo").read_text()
    except OSError:
        return ""


def _pids_mentioning(text: str) -> list[str]:
    out = subprocess.run(["pgrep", "-f", text], capture_output=True, text=True).stdout.split()
    return [p for p in out if p.isdigit()]
