"""Real k9s (v0.50.16, built once with `GOBIN=~/.cache/dragoman/tools go install github.com/derailed/k9s@v0.50.16`)
on the demo simulator with dragoman's plugin: select the stuck llm-eval pod, press Shift-E, read dragoman's finding on
screen, q back to k9s. Slow (k9s is a separate 240 MB build): run with -m slow; it fails, never skips, without k9s."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

import pytest
from dragoman.sim.scenarios import DEMO_PATH

from tests.support.serve import served

pytestmark = pytest.mark.slow
K9S = pathlib.Path(os.environ.get("DRAGOMAN_K9S", pathlib.Path.home() / ".cache" / "dragoman" / "tools" / "k9s"))


def test_shift_e_in_k9s_shows_dragomans_finding_for_the_stuck_pod(tmp_path: pathlib.Path) -> None:
    if not K9S.is_file():
        pytest.fail(f"no k9s at {K9S}: GOBIN=~/.cache/dragoman/tools go install github.com/derailed/k9s@v0.50.16")
    xdg = {k: tmp_path / k.lower() for k in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")}
    plugins = xdg["XDG_CONFIG_HOME"] / "k9s" / "plugins"
    plugins.mkdir(parents=True)
    dragoman = pathlib.Path(sys.executable).parent / "dragoman"
    out = subprocess.run([str(dragoman), "k9s-plugin"], capture_output=True, text=True, check=True)
    (plugins / "dragoman.yaml").write_text(out.stdout)
    env = {**os.environ, **{k: str(v) for k, v in xdg.items()}, "TERM": "xterm-256color"}
    tmux = ["tmux", "-L", f"dragoman-k9s-{os.getpid()}"]

    def screen() -> str:
        return subprocess.run([*tmux, "capture-pane", "-p", "-t", "k"], capture_output=True, text=True, env=env).stdout

    def wait(text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            shown = screen()
            if text in shown:
                return shown
            time.sleep(0.5)
        raise AssertionError(f"{text!r} not on screen:\n{shown}")

    with served(DEMO_PATH, tmp_path) as kubeconfig:
        k9s = f"{K9S} --kubeconfig {kubeconfig} --context dragoman-sim -n research -c pods"
        subprocess.run([*tmux, "new", "-d", "-s", "k", "-x", "120", "-y", "40", k9s], env=env, check=True)
        try:
            shown = wait("llm-eval-tjswx")
            rows = [line for line in shown.splitlines() if "Pending" in line or "Running" in line]
            for _ in range(next(i for i, r in enumerate(rows) if "llm-eval-tjswx" in r)):
                subprocess.run([*tmux, "send-keys", "-t", "k", "j"], env=env)
                time.sleep(0.3)
            subprocess.run([*tmux, "send-keys", "-t", "k", "E"], env=env)
            page = wait("(END)", 90)
            assert page.startswith("Describe Pod research/llm-eval-tjswx"), page
            assert "[error] pending-selector: pod research/llm-eval-tjswx cannot get its devices" in page, page
            subprocess.run([*tmux, "send-keys", "-t", "k", "q"], env=env)
            wait("pods(research)", 30)  # back in k9s
        finally:
            subprocess.run([*tmux, "kill-server"], env=env, capture_output=True)
