"""A real Prometheus beside the real control plane: `dragoman sim serve --control-plane --with-prometheus`.

Prometheus 2.x from the machine (Debian's `prometheus` package: `apt-get install -y prometheus`), run as dragoman's
own process — never the package's service — on loopback, with its configuration and data in the run's folder, so
that `ControlPlane.stop()` ends it with the other processes and removes its files. It scrapes the four components
with the run's credentials: kube-apiserver, kube-scheduler and kube-controller-manager over https with the run's CA
and the per-run monitoring token (group system:monitoring), etcd with a client certificate of the run's CA.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import time
import urllib.error
import urllib.request

import yaml
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.sim.controlplane.processes import ControlPlane, free_port

INSTALL_HINT = "on Debian or Ubuntu: `apt-get install -y prometheus` (dragoman runs the binary itself, not the service)"
SCRAPE_INTERVAL = 5.0  # seconds: a migration lasts minutes, and the rates are taken over minutes
JOBS = ("kube-apiserver", "kube-scheduler", "kube-controller-manager", "etcd")


def find_binary() -> pathlib.Path:
    """The `prometheus` on PATH (or /usr/bin/prometheus), else a sentence saying how to install it."""
    debian = pathlib.Path("/usr/bin/prometheus")
    found = shutil.which("prometheus") or (str(debian) if debian.is_file() else "")
    if not found:
        raise UserError(f"--with-prometheus needs Prometheus 2.x on PATH; {INSTALL_HINT}.", ExitCode.INPUT)
    return pathlib.Path(found)


def scrape_config(cp: ControlPlane, folder: pathlib.Path, interval: float = SCRAPE_INTERVAL) -> dict:
    """prometheus.yml for the four components of `cp` (its ports, CA and monitoring credentials)."""
    ca = str(cp.pki.path("ca.crt"))
    token = str(folder / "token")
    jobs: list[dict] = []
    for job in JOBS:
        cfg: dict = {
            "job_name": job,
            "scheme": "https",
            "static_configs": [{"targets": [f"127.0.0.1:{cp.metrics_ports[job]}"]}],
        }
        if job == "etcd":
            cfg["tls_config"] = {
                "ca_file": ca,
                "cert_file": str(cp.pki.path("metrics-client.crt")),
                "key_file": str(cp.pki.path("metrics-client.key")),
            }
        else:
            cfg["tls_config"] = {"ca_file": ca}
            cfg["authorization"] = {"type": "Bearer", "credentials_file": token}
        jobs.append(cfg)
    return {
        "global": {"scrape_interval": f"{interval:g}s", "scrape_timeout": f"{min(interval, 10):g}s"},
        "scrape_configs": jobs,
    }


class Prometheus:
    """One Prometheus process of a control-plane run: `start()` writes its configuration, spawns it through the
    control plane (so `cp.stop()` ends it) and waits until it is ready; `url` is its HTTP API on loopback."""

    def __init__(self, cp: ControlPlane, binary: pathlib.Path | None = None) -> None:
        self.cp = cp
        self.binary = binary or find_binary()
        self.port = 0
        self.url = ""

    @property
    def folder(self) -> pathlib.Path:
        return self.cp.dir / "prometheus"

    def start(self, timeout: float = 60.0) -> None:
        self.folder.mkdir(mode=0o700, exist_ok=True)
        (self.folder / "data").mkdir(mode=0o700, exist_ok=True)
        self.cp._write_private("prometheus/token", self.cp.monitoring_token)
        text = yaml.safe_dump(scrape_config(self.cp, self.folder))
        config = self.cp._write_private("prometheus/prometheus.yml", text)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.cp.bin["prometheus"] = self.binary
        self.cp._spawn(
            "prometheus",
            [
                f"--config.file={config}",
                f"--storage.tsdb.path={self.folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--storage.tsdb.retention.time=1d",
                "--log.level=warn",
            ],
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.cp._check_alive()
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.3)
        raise UserError(
            f"Prometheus was not ready after {timeout:.0f} s; its log:\n{self.cp.log_tail('prometheus')}",
            ExitCode.INPUT,
        )

    def get(self, path: str, timeout: float = 10.0) -> dict:
        """One GET of its HTTP API, decoded."""
        with urllib.request.urlopen(self.url + path, timeout=timeout) as resp:
            return json.loads(resp.read())

    def targets(self) -> dict[str, str]:
        """Each job's health as Prometheus last saw it ("up", "down", "unknown"), with the error when down."""
        out = {}
        for t in (self.get("/api/v1/targets").get("data") or {}).get("activeTargets") or ():
            job = (t.get("labels") or {}).get("job", "")
            out[job] = t.get("health", "") + (f": {t['lastError']}" if t.get("lastError") else "")
        return out

    def wait_up(self, timeout: float = 60.0) -> dict[str, str]:
        """Until every job has been scraped successfully once; the last health seen either way."""
        deadline = time.monotonic() + timeout
        health: dict[str, str] = {}
        while time.monotonic() < deadline:
            try:
                health = self.targets()
            except (OSError, ValueError):
                health = {}
            if set(JOBS) <= set(health) and all(health[j] == "up" for j in JOBS):
                return health
            time.sleep(1.0)
        return health
