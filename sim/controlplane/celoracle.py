"""The cel-go oracle: Kubernetes' own DRA CEL code (controlplane/celoracle), built once into the control plane's
cache and driven over its line-delimited JSON protocol (documented at the top of controlplane/celoracle/main.go).

`oracle_binary()` builds it idempotently; `Oracle` keeps one process for many questions, so a test or a
benchmark pays the Go start-up once. The differential test (tests/cel/test_cel_oracle.py) and the benchmark
(benchmarks/bench_cel.py) both drive it from here. It lives beside the control-plane build because it is built
from the same Go module with the same toolchain checks; fleet/ may not import the simulator's package.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import time
from collections.abc import Iterable
from typing import Any

from dragoman.fleet.errors import UserError
from dragoman.sim.controlplane.build import GO_MIN, cache_dir, go_version, module_dir

BUILD_TIMEOUT = 1800  # a cold Go build cache compiles apiserver's CEL and cel-go: minutes on two busy cores


class OracleUnavailable(RuntimeError):
    """The oracle cannot be built here; the message says what is missing."""


def _module() -> pathlib.Path:
    """The repository's controlplane/ Go module; the oracle's sources are its celoracle/ package."""
    try:
        return module_dir()
    except UserError as exc:
        raise OracleUnavailable(str(exc)) from None


def oracle_path() -> pathlib.Path:
    return cache_dir() / "celoracle"


def _inputs() -> list[pathlib.Path]:
    module = _module()
    return sorted((module / "celoracle").glob("*.go")) + [module / "go.mod", module / "go.sum"]


def _digest() -> str:
    h = hashlib.sha256()
    for p in _inputs():
        if p.exists():
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _stale(binary: pathlib.Path) -> bool:
    # By content, not only by time: a fresh clone (CI) has every file newer than yesterday's binary.
    if not binary.is_file():
        return True
    stamp = binary.with_name("celoracle.inputs")
    if stamp.is_file():
        return stamp.read_text().strip() != _digest()
    built_at = binary.stat().st_mtime  # a binary from before the stamp: by time
    return any(p.stat().st_mtime > built_at for p in _inputs() if p.exists())


def oracle_binary() -> pathlib.Path:
    """The built oracle; `go build` runs only when the binary is missing or was built from other sources
    (controlplane/celoracle/*.go, go.mod, go.sum)."""
    binary = oracle_path()
    if not _stale(binary):
        return binary
    go = shutil.which("go")
    if go is None:
        raise OracleUnavailable(
            f"the cel-go oracle is built from {_module() / 'celoracle'} with Go {GO_MIN[0]}.{GO_MIN[1]} or newer, "
            "and go is not on PATH; install Go (the Go module proxy must be reachable for a first build)"
        )
    have = go_version(go)
    if have is None or have < GO_MIN:
        raise OracleUnavailable(
            f"the cel-go oracle needs Go {GO_MIN[0]}.{GO_MIN[1]} or newer; {go} is {have or 'of unknown version'}"
        )
    binary.parent.mkdir(parents=True, exist_ok=True)
    # pytest-xdist workers (and a benchmark) may ask at once: one builds, the others wait and reuse it.
    with open(binary.parent / ".celoracle.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _stale(binary):
            return binary
        tmp = binary.with_name(f".celoracle.{os.getpid()}")
        # -trimpath as the control-plane build uses, so both share Go's build cache for apiserver and cel-go.
        cmd = [go, "build", "-trimpath", "-o", str(tmp), "./celoracle"]
        t0 = time.monotonic()
        module = _module()
        proc = subprocess.run(cmd, cwd=module, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
        if proc.returncode != 0:
            tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
            raise OracleUnavailable(f"go build ./celoracle in {module} failed (exit {proc.returncode}):\n{tail}")
        os.replace(tmp, binary)  # never a half-written binary under the final name
        binary.with_name("celoracle.inputs").write_text(_digest() + "\n")
        (binary.parent / "celoracle.buildtime").write_text(f"{time.monotonic() - t0:.1f}\n")
    return binary


class OracleError(RuntimeError):
    """The oracle refused a request (a bug in the caller) or died."""


class Oracle:
    """One oracle process; `ask` sends requests and returns their answers, in order."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [str(oracle_binary())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1 << 20,
        )
        self.info = self.ask([{"op": "info"}])[0]

    def ask(self, requests: Iterable[dict]) -> list[dict]:
        reqs = list(requests)
        if self.proc.poll() is not None:
            raise OracleError(f"the oracle exited ({self.proc.returncode}): {self.proc.stderr.read()[-2000:]}")
        # Write and read in chunks so neither pipe fills while the other side waits.
        out: list[dict] = []
        for i in range(0, len(reqs), 64):
            chunk = reqs[i : i + 64]
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in chunk))
            self.proc.stdin.flush()
            for _ in chunk:
                line = self.proc.stdout.readline()
                if not line:
                    raise OracleError(f"the oracle died: {self.proc.stderr.read()[-2000:]}")
                ans = json.loads(line)
                if "error" in ans and "compile" not in ans:
                    raise OracleError(f"the oracle refused a request: {ans['error']}")
                out.append(ans)
        return out

    def define(self, name: str, devices: list[dict]) -> dict:
        """A named device set, sent once; `eval` requests then name it with "set"."""
        return self.ask([{"op": "devices", "set": name, "devices": devices}])[0]

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def oracle_device(driver: str, raw: dict) -> dict[str, Any]:
    """A raw ResourceSlice device with its slice's driver, as the oracle reads it."""
    return {**raw, "driver": driver}
