"""`dragoman` with no subcommand: when no cluster can be reached, one sentence suggesting --demo and exit 2, before any
UI."""

from __future__ import annotations

import os
import subprocess
import sys

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: prod, context: {cluster: c, user: u}}]
current-context: prod
"""


def test_unreachable_cluster_is_one_sentence_suggesting_demo(tmp_path) -> None:
    kc = tmp_path / "config"
    kc.write_text(KUBECONFIG)
    env = {**os.environ, "KUBECONFIG": str(kc), "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "dragoman"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the cluster of context 'prod'" in lines[0] and "--demo" in lines[0]


def test_no_kubeconfig_at_all_suggests_demo(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["HOME"] = str(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "dragoman"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2 and "--demo" in proc.stderr and "Traceback" not in proc.stderr
