"""Installable as a user installs tools: the standard build front end makes an sdist and a wheel from it, pipx (from
PyPI, in a throwaway venv) installs the wheel into an environment of its own with no test dependency, and that
dragoman runs: --version, `check --demo`, the TUI's first screen in tmux, kubectl-dragoman beside it.

Slow (a build and a fresh install of every dependency from PyPI: a few minutes here): run with -m slow.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import time
import venv

import pytest

from dragoman import __version__

pytestmark = pytest.mark.slow
ROOT = pathlib.Path(__file__).resolve().parents[1]


def _ok(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    assert out.returncode == 0, (cmd, out.stdout[-2000:], out.stderr[-3000:])
    return out


def test_the_wheel_installs_with_pipx_and_runs_the_demo(tmp_path: pathlib.Path) -> None:
    dist = tmp_path / "dist"
    # sdist first, then the wheel built from the sdist: what the sdist leaves out, the wheel misses too.
    _ok([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)])
    (wheel,) = dist.glob(f"dragoman-{__version__}-py3-none-any.whl")

    tools = tmp_path / "tools"
    venv.create(tools, with_pip=True)
    _ok([str(tools / "bin" / "python"), "-m", "pip", "install", "-q", "pipx"])
    env = {
        "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
    }
    _ok([str(tools / "bin" / "pipx"), "install", str(wheel)], env=env)
    bin_dir = tmp_path / "bin"
    assert (bin_dir / "dragoman").exists() and (bin_dir / "kubectl-dragoman").exists()
    # Its own environment: dragoman's dependencies, none of the test extra.
    python = tmp_path / "pipx" / "venvs" / "dragoman" / "bin" / "python"
    for absent in ("pytest", "hypothesis", "build", "ruff"):
        probe = subprocess.run([str(python), "-c", f"import {absent}"], capture_output=True, env=env)
        assert probe.returncode != 0, f"{absent} is installed with the wheel"

    assert _ok([str(bin_dir / "dragoman"), "--version"], env=env).stdout == f"dragoman {__version__}\n"
    check = subprocess.run(
        [str(bin_dir / "dragoman"), "check", "--demo"], capture_output=True, text=True, env=env, timeout=300
    )
    assert check.returncode == 1, check.stderr  # the demo fleet has error findings by design
    assert check.stdout.startswith("Fleet read from the demo simulator") and "pending-selector" in check.stdout
    assert "dragoman-pod" in _ok([str(bin_dir / "dragoman"), "k9s-plugin"], env=env).stdout
    assert "explain" in _ok([str(bin_dir / "dragoman"), "completion", "bash"], env=env).stdout

    # The TUI starts from the installed wheel (its styles and the demo scenario are package data).
    if shutil.which("tmux") is None:
        pytest.fail("tmux is needed to see the TUI start")
    # A tmux server of its own (-L): the session gets this environment, and no one else's sessions are touched.
    tmux = ["tmux", "-L", f"dragoman-wheel-{os.getpid()}"]
    tmux_env = {**env, "TERM": "xterm-256color"}
    app = f"{bin_dir / 'dragoman'} --demo; echo dragoman exited $?; sleep 600"
    _ok([*tmux, "new", "-d", "-s", "w", "-x", "120", "-y", "40", app], env=tmux_env)
    try:
        deadline = time.monotonic() + 120
        screen = ""
        while time.monotonic() < deadline:
            screen = _ok([*tmux, "capture-pane", "-p", "-t", "w"], env=tmux_env).stdout
            if ("DEMO" in screen and "l4-serve" in screen) or "dragoman exited" in screen:
                break
            time.sleep(1)
        assert "DEMO" in screen and "l4-serve" in screen and "Traceback" not in screen, screen
        subprocess.run([*tmux, "send-keys", "-t", "w", "C-q"], env=tmux_env)
        deadline = time.monotonic() + 30
        while "dragoman exited 0" not in screen and time.monotonic() < deadline:
            time.sleep(1)
            screen = _ok([*tmux, "capture-pane", "-p", "-t", "w"], env=tmux_env).stdout
        assert "dragoman exited 0" in screen, screen
    finally:
        subprocess.run([*tmux, "kill-server"], env=tmux_env, capture_output=True)
