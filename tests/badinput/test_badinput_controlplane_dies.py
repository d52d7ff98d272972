"""An API server that dies, or answers what is not JSON, after its /readyz said ready (fake binaries,
tests/badinput/fake_controlplane.py): `sim serve --control-plane` ends with one sentence and exit 2, every process
stopped — not a traceback from the service-account wait, the loader or the node agents' lists."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from tests.badinput import fake_controlplane

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _survivors(directory: pathlib.Path) -> list[str]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if str(directory) in cmd and "pytest" not in cmd:
                out.append(cmd)
    return out


@pytest.mark.parametrize("mode", ["die", "html", "truncated-json"])
def test_a_server_failing_after_readyz_is_one_sentence(tmp_path: pathlib.Path, mode: str) -> None:
    binaries = fake_controlplane.make(tmp_path / "bin", on_serve=mode)
    proc = subprocess.run(
        [sys.executable, "-m", "dragoman", "sim", "serve", "--control-plane", str(binaries), "--scenario", "demo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("dragoman: ") and ("kube-apiserver exited" in last or "API server stopped answering" in last)
    assert _survivors(binaries) == [], "every fake process was stopped"
