"""The demo's child and a signal that lands while it is being started: no child left running for nobody, and no run
folder (its kubeconfig holds the run's admin token) made again after the parent removed it. Found by the random-point
interrupt test under load: `migrate --demo --plan`, SIGINT after 3.80 s, left `dragoman-demo-*` behind."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

SMALL = pathlib.Path(__file__).parents[1] / "controlplane" / "data" / "real_kubelets.yaml"

# In a process of its own: the signal is sent to that process, as an operator's Ctrl+C would be.
_INTERRUPTED_INSIDE_POPEN = r"""
import os, signal, subprocess, sys, time
from dragoman.tui import source

real = subprocess.Popen
child = {}

def popen(*args, **kwargs):
    proc = real(*args, **kwargs)
    child["pid"] = proc.pid
    os.kill(os.getpid(), signal.SIGINT)  # the signal lands before Popen has returned
    for _ in range(100):
        time.sleep(0.001)  # bytecodes for a handler to run at, were the signal not held
    return proc

source.subprocess.Popen = popen
demo = source.DemoProcess(sys.argv[1])
try:
    demo.start()
    print("started", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
time.sleep(0.5)
try:
    os.kill(child["pid"], 0)
    alive = not open(f"/proc/{child['pid']}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
except ProcessLookupError:
    alive = False
print("child alive" if alive else "child gone", "folder left" if os.path.exists(demo.dir) else "folder gone")
if alive:
    os.kill(child["pid"], signal.SIGKILL)
"""


def test_a_signal_inside_the_childs_start_stops_the_child_and_removes_the_folder() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_INSIDE_POPEN, str(SMALL)], capture_output=True, text=True, timeout=90
    )
    assert out.stdout.split("\n")[:2] == ["interrupted", "child gone folder gone"], out.stdout + out.stderr


def test_the_child_never_makes_the_run_folder_again(tmp_path: pathlib.Path) -> None:
    # The parent gave the run up and removed the folder before the child wrote its kubeconfig: the child ends, and
    # writes nothing anywhere.
    gone = tmp_path / "dragoman-demo-gone"
    out = subprocess.run(
        [sys.executable, "-m", "dragoman.tui.demo", "--kubeconfig", str(gone / "kubeconfig"), "--scenario", str(SMALL)],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert out.returncode == 0 and "READY" not in out.stdout, out.stdout + out.stderr
    assert not gone.exists() and list(tmp_path.iterdir()) == []
