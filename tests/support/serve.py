"""Test helper: `dragoman sim serve` in a child process on a free loopback port, for tests that run the real CLI against
it."""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
import sys
import time
from collections.abc import Iterator


@contextlib.contextmanager
def served(
    scenario: str | pathlib.Path, tmp: pathlib.Path, *, controllers: bool = False, timeout: float = 90.0
) -> Iterator[pathlib.Path]:
    """Serve `scenario` until the block ends; yields the kubeconfig (one context per user, admin current).

    Without controllers by default: the objects stay as loaded, and reads are fast and deterministic under load.
    """
    kubeconfig = tmp / "kubeconfig"
    log_path = tmp / "serve.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dragoman",
                "sim",
                "serve",
                "--scenario",
                str(scenario),
                "--write-kubeconfig",
                str(kubeconfig),
                *([] if controllers else ["--no-controllers"]),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=str(tmp),
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        deadline = time.monotonic() + timeout
        # The kubeconfig is written once the server listens.
        while not (kubeconfig.exists() and "kubeconfig:" in log_path.read_text()):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("sim serve did not start:\n" + log_path.read_text())
            time.sleep(0.1)
        yield kubeconfig
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
