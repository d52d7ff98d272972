"""Where the TUI's picture comes from: a cluster through the kubeconfig, a snapshot file, or the demo simulator in a
child process."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from dragoman.fleet.errors import ExitCode, UserError
from dragoman.fleet.snapshot import snapshot_date, snapshot_provenance
from dragoman.tui.feed import Feed, SourceInfo

DEMO_START_TIMEOUT = 60.0
CONTROL_PLANE_START_TIMEOUT = 600.0


def list_contexts(kubeconfig: str | None) -> tuple[list[str], str]:
    """(context names, current context) of the kubeconfig kubectl would read."""
    from dragoman.fleet.kubeconfig import kubeconfig_paths, load_merged

    paths, explicit = kubeconfig_paths(kubeconfig, os.environ)
    merged = load_merged(paths, explicit)
    return sorted(merged.contexts), merged.current_context


async def open_cluster_feed(
    kubeconfig: str | None,
    context: str | None,
    *,
    badge: str = "",
    read_only: bool = False,
    pool_label: str | None = None,
    **informer_kw,
) -> Feed:
    """Connect as kubectl would (raises UserError with one sentence when the cluster cannot be reached) and
    prepare the informers; they start with the feed."""
    from dragoman.fleet.cluster import connect
    from dragoman.fleet.informer import Syncer
    from dragoman.fleet.store import FleetStore

    cluster = await connect(kubeconfig, context)
    store = FleetStore(source=f"cluster {cluster.server}")
    syncer = Syncer(cluster, store, **informer_kw)
    info = SourceInfo(
        cluster=cluster.config.cluster,
        context=cluster.context_name,
        server=cluster.server,
        version=cluster.version,
        user=cluster.user,
        read_only=read_only,
        badge=badge,
    )
    return Feed(store, info, pool_label=pool_label, cluster=cluster, syncer=syncer)


def open_snapshot_feed(path: str, *, pool_label: str | None = None) -> Feed:
    """A read-only feed of a snapshot file (raises UserError when it is not Kubernetes YAML)."""
    from dragoman.fleet.snapshot import store_from_snapshot

    store = store_from_snapshot(path)
    date = snapshot_date(path) if path != "-" else ""
    prov = snapshot_provenance(path) if path != "-" else {}
    info = SourceInfo(
        cluster=pathlib.Path(path).name if path != "-" else "(stdin)",
        context=prov.get("context", "—"),
        server=prov.get("server", path),
        version=prov.get("version", "v?"),
        read_only=True,
        badge=f"SNAPSHOT {date}".strip(),
    )
    return Feed(store, info, pool_label=pool_label)


class DemoProcess:
    """The demo simulator in a child process, so its controllers never take the UI's CPU time (the machine may have 2
    cores)."""

    def __init__(
        self,
        scenario: str = "demo",
        *,
        controllers: bool = True,
        control_plane: str | None = None,
        prometheus: bool = False,
    ) -> None:
        self.dir = tempfile.mkdtemp(prefix="dragoman-demo-")
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        self.log_path = os.path.join(self.dir, "sim.log")
        # The demo's writes are audited in the demo run's own directory, never in the operator's audit log.
        self.audit_path = os.path.join(self.dir, "audit.jsonl")
        self.scenario = scenario
        self.controllers = controllers
        # A directory of real control-plane binaries: the demo runs on real Kubernetes (sim/controlplane).
        self.control_plane = control_plane
        # With the control plane: a Prometheus scraping it, whose URL the child reports (`prometheus_url`).
        self.prometheus = prometheus
        self.prometheus_url: str | None = None
        self.proc: subprocess.Popen | None = None

    def start(self) -> str:
        """Start and wait until the simulator serves; returns its kubeconfig path. Whatever ends the wait (a failed
        start, Ctrl+C, SIGTERM), the child is stopped and the run's folder removed before it propagates."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> str:
        import select

        # -P: the working folder is not put on sys.path, so a folder named `dragoman` where the operator stands (a
        # checkout of this repository) cannot shadow the installed package, nor a stray module hijack the child.
        args = [sys.executable, "-P", "-m", "dragoman.tui.demo", "--kubeconfig", self.kubeconfig]
        args += ["--scenario", self.scenario]
        if not self.controllers:
            args.append("--no-controllers")
        timeout = DEMO_START_TIMEOUT
        if self.control_plane:
            args += ["--control-plane", self.control_plane] + (["--with-prometheus"] if self.prometheus else [])
            # Four processes to start and a fleet to load through the API: minutes on a busy 2-core machine.
            timeout = CONTROL_PLANE_START_TIMEOUT
        with open(self.log_path, "wb") as log:
            # A Ctrl+C or SIGTERM that lands inside Popen (between the fork and its return) would leave a child that
            # no one stops: it would start the simulator for nobody. Held until self.proc names the child, the signal
            # then stops it like any other (the child unblocks them first thing, dragoman/tui/demo.py).
            held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
            old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, held)
            try:
                self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        pending = b""
        fd = self.proc.stdout.fileno()
        while (left := deadline - time.monotonic()) > 0:
            # select, not readline: a child that hangs without a word must not hold the wait past its deadline.
            if not select.select([fd], [], [], min(left, 0.5))[0]:
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            pending += chunk
            if b"READY" in pending and b"\n" in pending[pending.index(b"READY") :]:
                line = pending[pending.index(b"READY") :].split(b"\n", 1)[0]
                words = line.decode(errors="replace").split()
                self.prometheus_url = words[2] if len(words) > 2 else None
                return self.kubeconfig
            if b"READY" not in pending:
                pending = pending[-8:]  # enough to find a READY split across two reads
        tail = (
            pathlib.Path(self.log_path).read_text(errors="replace").strip().splitlines()[-1:]
            if os.path.exists(self.log_path)
            else []
        )
        self.stop()
        why = f": {tail[0]}" if tail and tail[0].strip() else (" in time." if left <= 0 else ".")
        raise UserError("the demo simulator did not start" + why, ExitCode.INPUT)

    def stop(self) -> None:
        """End the child and remove the run's folder (its kubeconfig holds this run's admin token). Idempotent."""
        try:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.terminate()
                try:
                    # A real control plane needs time to end four processes; a kill would orphan them.
                    self.proc.wait(45 if self.control_plane else 5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(5)
        finally:
            if self.proc is not None and self.proc.stdout is not None:
                self.proc.stdout.close()
            self.proc = None
            shutil.rmtree(self.dir, ignore_errors=True)


def control_plane_dir(args: object) -> str | None:
    """The real control plane's binaries for `--demo --control-plane [DIR]`, or None for the embedded simulator."""
    value = getattr(args, "control_plane", None)
    if value is None:
        return None
    from dragoman.tui.commands.controlplane import resolve

    if not getattr(args, "demo", False):
        raise UserError(
            "--control-plane runs the demo fleet on the real control plane: it needs --demo (to serve a scenario on "
            "it, use `dragoman sim serve --control-plane`).",
            ExitCode.INPUT,
        )
    return resolve(value)


def with_prometheus(args: object) -> bool:
    """`--with-prometheus`: only beside the real control plane (`--demo --control-plane`); refused otherwise."""
    if not getattr(args, "with_prometheus", False):
        return False
    if not getattr(args, "control_plane", None):
        raise UserError(
            "--with-prometheus scrapes the real control plane's components: it needs --demo --control-plane.",
            ExitCode.INPUT,
        )
    return True
