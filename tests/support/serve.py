"""Test helper: `dragoman sim serve` in a child process on a free loopback port, for tests that run the real CLI against
it. The one home of starting and stopping that child: `start`/`stop` for tests that need the process itself (signals,
the real control plane), `served` for the common case."""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence


def start(
    args: Sequence[str],
    log_path: pathlib.Path,
    *,
    cwd: pathlib.Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen:
    """`python -m dragoman sim serve ARGS`, its output (unbuffered) to `log_path`, no stdin; `env` adds to this
    process's environment."""
    with log_path.open("w") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "dragoman", "sim", "serve", *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=str(cwd) if cwd is not None else None,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )


def stop(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM (serve's clean stop), then SIGKILL if it has not ended within `timeout`."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


@contextlib.contextmanager
def served(
    scenario: str | pathlib.Path,
    tmp: pathlib.Path,
    *,
    controllers: bool = False,
    timeout: float = 90.0,
    env: Mapping[str, str] | None = None,
) -> Iterator[pathlib.Path]:
    """Serve `scenario` until the block ends; yields the kubeconfig (one context per user, admin current).

    Without controllers by default: the objects stay as loaded, and reads are fast and deterministic under load.
    """
    kubeconfig = tmp / "kubeconfig"
    log_path = tmp / "serve.log"
    proc = start(
        [
            "--scenario",
            str(scenario),
            "--write-kubeconfig",
            str(kubeconfig),
            *([] if controllers else ["--no-controllers"]),
        ],
        log_path,
        cwd=tmp,
        env=env,
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
        stop(proc)
