"""Ctrl+C on `sim serve` while injected faults hold requests (`hang=60s`, latency): the simulator stops at once
instead of waiting every held request out (the HTTP runner's cleanup waited up to a minute)."""

from __future__ import annotations

import pathlib
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.request

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_ctrl_c_does_not_wait_for_held_requests(tmp_path: pathlib.Path) -> None:
    kubeconfig = tmp_path / "kc.yaml"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dragoman",
            "sim",
            "serve",
            "--no-controllers",
            "--write-kubeconfig",
            str(kubeconfig),
            "--faults",
            "error=1 code=timeout hang=60s verbs=list; latency=50s verbs=get",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not kubeconfig.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        cfg = yaml.safe_load(kubeconfig.read_text())
        server = cfg["clusters"][0]["cluster"]["server"]
        token = cfg["users"][0]["user"]["token"]
        ctx = ssl._create_unverified_context()
        held: list[str] = []

        def ask(path: str) -> None:
            req = urllib.request.Request(server + path, headers={"Authorization": f"Bearer {token}"})
            try:
                urllib.request.urlopen(req, context=ctx, timeout=120).read()
            except Exception as exc:  # noqa: BLE001 - any end is fine: the server stopped
                held.append(type(exc).__name__)

        paths = ("/api/v1/nodes", "/api/v1/namespaces/default")  # a list held by hang=, a get by latency
        threads = [threading.Thread(target=ask, args=(p,), daemon=True) for p in paths]
        for t in threads:
            t.start()
        time.sleep(2)  # both held by the faults now
        assert all(t.is_alive() for t in threads)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=45)
        assert time.monotonic() - started < 20, "the stop waited for the held requests"
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
