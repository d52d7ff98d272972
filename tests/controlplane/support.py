"""The real control plane for tests: `dragoman sim serve --control-plane` in a child process, as a user runs it."""

from __future__ import annotations

import contextlib
import json
import pathlib
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import yaml
from dragoman.sim.controlplane.build import built, cache_dir

from tests.support import serve

START_TIMEOUT = 600.0


def binaries_dir() -> pathlib.Path:
    """The cached build; the suite builds it first (`dragoman controlplane build` in .ci/run), never skips."""
    if built() is None:
        from dragoman.sim.controlplane.build import build

        build()
    return cache_dir()


class Served:
    def __init__(
        self,
        proc: subprocess.Popen,
        kubeconfig: pathlib.Path,
        log: pathlib.Path,
        audit: pathlib.Path,
        prometheus: str | None = None,
    ) -> None:
        self.proc = proc
        self.kubeconfig = kubeconfig
        self.log = log
        self.audit = audit
        self.config = yaml.safe_load(kubeconfig.read_text())
        # The Prometheus `sim serve --with-prometheus` started beside it (its URL, as the banner prints it).
        self.prometheus = prometheus or _banner_value(log, "prometheus: ")

    @property
    def run_dir(self) -> pathlib.Path | None:
        """The run's folder (certificates, tokens, Prometheus' configuration), as the banner prints it."""
        found = _banner_value(self.log, "run folder: ")
        return pathlib.Path(found) if found else None

    def token(self, user: str = "admin") -> str:
        return next(u["user"]["token"] for u in self.config["users"] if u["name"] == user)

    @property
    def server(self) -> str:
        return self.config["clusters"][0]["cluster"]["server"]

    def ca_file(self, tmp: pathlib.Path) -> pathlib.Path:
        import base64

        p = tmp / "ca.crt"
        p.write_bytes(base64.b64decode(self.config["clusters"][0]["cluster"]["certificate-authority-data"]))
        return p

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        user: str = "admin",
        content_type: str = "application/json",
        query: str = "",
    ) -> tuple[int, Any]:
        import base64
        import ssl
        import urllib.error
        import urllib.request

        ca = base64.b64decode(self.config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        ctx = ssl.create_default_context(cadata=ca)
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server + path + (("?" + query) if query else ""), data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token(user)}")
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=60) as resp:
                raw, code = resp.read(), resp.status
        except urllib.error.HTTPError as exc:
            raw, code = exc.read(), exc.code
        try:
            return code, json.loads(raw)
        except ValueError:
            return code, raw.decode(errors="replace")

    def items(self, path: str, **kw: Any) -> list[dict]:
        code, body = self.request("GET", path, **kw)
        assert code == 200, (path, code, body)
        return body["items"]

    def audit_events(self) -> list[dict]:
        out = []
        for line in self.audit.read_text().splitlines():
            if line.strip():
                out.append(json.loads(line))
        return out


def _banner_value(log: pathlib.Path, key: str) -> str | None:
    try:
        text = log.read_text()
    except OSError:
        return None
    return next((line.split(key, 1)[1].split(" ", 1)[0] for line in text.splitlines() if key in line), None)


def wait_for(check: Callable[[], Any], timeout: float, what: str, interval: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"{what}: not reached in {timeout:.0f} s (last: {last!r})")


@contextlib.contextmanager
def real_served(tmp: pathlib.Path, scenario: str = "demo") -> Iterator[Served]:
    kubeconfig = tmp / "kubeconfig"
    log_path = tmp / "serve.log"
    audit = tmp / "audit.log"
    args = [
        "--scenario",
        scenario,
        "--control-plane",
        str(binaries_dir()),
        "--write-kubeconfig",
        str(kubeconfig),
        "--audit-log-path",
        str(audit),
        # A real Prometheus scraping the four components (tests/controlplane/test_real_prometheus.py reads it).
        "--with-prometheus",
    ]
    proc = serve.start(args, log_path, cwd=tmp)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while "press Ctrl+C" not in log_path.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("sim serve --control-plane did not start:\n" + log_path.read_text())
            time.sleep(0.5)
        yield Served(proc, kubeconfig, log_path, audit)
    finally:
        serve.stop(proc, 60)
    # Stopping ends every control-plane process and removes the run's folder (its keys and tokens with it).
    run_dir = next(
        (
            line.split("run folder: ", 1)[1].split(" ", 1)[0]
            for line in log_path.read_text().splitlines()
            if "run folder: " in line
        ),
        None,
    )
    assert run_dir, "the run folder was printed"
    assert not pathlib.Path(run_dir).exists(), f"{run_dir} left behind"
    left = subprocess.run(["pgrep", "-f", run_dir], capture_output=True, text=True).stdout.split()
    assert not left, f"processes of the run left running: {left}"
