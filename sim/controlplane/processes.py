"""Run the real control plane on loopback: etcd, kube-apiserver, kube-scheduler and kube-controller-manager.

Everything a run needs — certificates, the token file, kubeconfigs, etcd's data, logs — lives in one 0700 folder
that `stop()` removes. etcd speaks only TLS with client certificates, the API server only TLS; users authenticate
with per-run bearer tokens and are authorized by real RBAC. Kubernetes 1.37's default feature gates are used as
they are (the extended-resource bridge, KEP-5004, is GA).
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import os
import pathlib
import re
import secrets
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import yaml
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.sim.controlplane import procgroups
from dragoman.sim.controlplane.pki import Pki

# The most of one API answer read (the loader's and the waits' requests are small): a server answering without end
# must not fill memory.
MAX_ANSWER_BYTES = 64 * 1024 * 1024

SERVICE_CIDR = "10.96.0.0/16"
ADMIN = "admin"
# Who reads the components' /metrics (Prometheus, the metric-name test): a per-run token in the group that Kubernetes'
# bootstrap RBAC lets get /metrics (ClusterRole system:monitoring). Not a kubeconfig user: it can read nothing else.
MONITORING_USER = "dragoman-prometheus"
MONITORING_GROUP = "system:monitoring"
# What the audit log records: every request's metadata (who, verb, resource, code) — enough to prove that no write
# reached the server, without request bodies that could hold secrets.
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [{"level": "Metadata"}],
}


# hold=HOLD_ALL: kube-scheduler and every kube-controller-manager controller wait for release(), but those a load needs:
# the service accounts pods name (start() waits for `default`), their tokens, each namespace's CA ConfigMap. A settled
# fleet loads while nothing acts on half of it, and no informer spends CPU on events that the restart at release()
# lists again. What the node lifecycle controller does to a joining node (lift the not-ready taint) is the loader's to
# do (loader.load_settled): left, the scheduler started at release() finds every node tainted and retries its Pending
# pods at each node patch (1,643 attempts for 10 pods at 250 nodes).
HOLD_ALL = ("*",)
_RUN_WHILE_ALL_HELD = (
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "root-ca-certificate-publisher-controller",
)


# kube-apiserver's --token-auth-file is CSV (token,user,uid,"group1,group2"): a name holding a comma, a quote or a line
# break would end its field or its line and write a user of its own choosing (a known token in system:masters). Names
# and groups are checked against that grammar before anything is written; control characters and spaces at the ends
# (which CSV readers trim or keep differently) are refused too.
_TOKEN_FILE_FIELD = re.compile(r"[^,\"\x00-\x1f\x7f\s](?:[^,\"\x00-\x1f\x7f]{0,251}[^,\"\x00-\x1f\x7f\s])?")


def check_users(users: object) -> list[dict]:
    """The scenario's users as kube-apiserver's token file can hold them: a list of {name, groups}; a sentence
    (UserError, exit 2) naming the first one that cannot be written."""
    from dragoman.fleet.errors import printable

    if users is None:
        return []
    if not isinstance(users, list):
        raise UserError(
            f"the scenario's users must be a list of {{name, groups}}, not {type(users).__name__}.", ExitCode.INPUT
        )
    seen: set[str] = set()
    for n, u in enumerate(users, 1):
        if not isinstance(u, dict):
            raise UserError(
                f"user {n} of the scenario must be a mapping with a name (and groups), not {type(u).__name__}.",
                ExitCode.INPUT,
            )
        name, groups = u.get("name"), u.get("groups")
        if not isinstance(name, str) or not _TOKEN_FILE_FIELD.fullmatch(name):
            raise UserError(
                f"user {n} of the scenario has the name {printable(repr(name), 80)}: kube-apiserver's token file "
                "cannot hold it (1-253 characters; no comma, quote, line break, control character or space at the "
                "ends).",
                ExitCode.INPUT,
            )
        if name in seen:
            raise UserError(f"the scenario names user {name!r} twice.", ExitCode.INPUT)
        seen.add(name)
        if groups is not None and not (
            isinstance(groups, list) and all(isinstance(g, str) and _TOKEN_FILE_FIELD.fullmatch(g) for g in groups)
        ):
            raise UserError(
                f"user {name!r} of the scenario has the groups {printable(repr(groups), 80)}: a list of group names "
                "kube-apiserver's token file can hold (no comma, quote, line break, control character or space at "
                "the ends).",
                ExitCode.INPUT,
            )
    return users


@dataclasses.dataclass
class CpUser:
    name: str
    token: str
    groups: tuple[str, ...] = ()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ControlPlane:
    """`start()` brings the four processes up and waits until the API server is ready and the default service
    accounts exist; `stop()` ends them and removes the run's folder (also on Ctrl+C and SIGTERM via `atexit`-style
    use in a `with` block)."""

    def __init__(
        self,
        binaries: dict[str, pathlib.Path],
        users: list[dict] | None = None,
        *,
        audit_log: str | None = None,
        hold: tuple[str, ...] = (),
        controller_args: tuple[str, ...] = (),
        kubelet_egress: bool = False,
    ) -> None:
        """`hold`: kube-controller-manager controllers not started until `release()` (a settled fleet loads while
        they wait), or HOLD_ALL (kube-scheduler too; loader.load_settled); `controller_args`: more of its flags.
        `kubelet_egress`: real kubelets will join (kubelets.py): the API server reaches them (logs, exec) through the
        egress proxy on the run's `kubelet-egress.sock`, with a client certificate of the run's CA."""
        self.bin = binaries
        self.hold = tuple(hold)
        self.controller_args = tuple(controller_args)
        self._args: dict[str, list[str]] = {}
        self.kubelet_egress = kubelet_egress
        users = check_users(users)  # before the run's folder exists: a refused name leaves nothing behind
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="dragoman-cp-"))
        procgroups.REAPER.own_folder(self.dir)  # removed with the processes if dragoman is killed outright
        os.chmod(self.dir, 0o700)
        self.procs: dict[str, subprocess.Popen] = {}
        self.users: dict[str, CpUser] = {}
        self.audit_log = pathlib.Path(audit_log) if audit_log else self.dir / "audit.log"
        self.port = 0
        self.url = ""
        # Where each component serves /metrics (https, the run's CA): filled by start().
        self.metrics_ports: dict[str, int] = {}
        self.monitoring_token = secrets.token_urlsafe(32)
        self._ssl: ssl.SSLContext | None = None
        # stop() may come from another thread while start() is still spawning (a SIGTERM or SIGHUP at startup):
        # spawning and stopping take this lock, and nothing is spawned once stop() began.
        self._lock = threading.Lock()
        self._stopping = False
        self._add_user({"name": ADMIN, "groups": ["system:masters"]})
        for u in users or ():
            if u.get("name") != ADMIN:
                self._add_user(u)

    # ------------------------------------------------------------------ users and kubeconfigs

    def _add_user(self, u: dict) -> None:
        # Tokens are made per run: a fixed token would let any local user be admin of any running control plane.
        self.users[u["name"]] = CpUser(u["name"], secrets.token_urlsafe(32), tuple(u.get("groups") or ()))

    @property
    def admin_token(self) -> str:
        return self.users[ADMIN].token

    def kubeconfig(self, user: str | None = None) -> dict:
        """One context per user (`dragoman-cp` for the admin, `dragoman-cp-<user>` for others), verified TLS."""
        from dragoman.sim.server.kubeconfig import users_kubeconfig

        return users_kubeconfig("dragoman-cp", self.url, self.pki.ca_pem, self.users, user)

    def token_file(self) -> str:
        """kube-apiserver's --token-auth-file: one CSV line per user, every field checked by check_users."""
        lines = []
        for u in self.users.values():
            for field in (u.name, *u.groups):
                # The admin is ours; every other name passed check_users. Checked again here, where the file is made.
                if not _TOKEN_FILE_FIELD.fullmatch(field):
                    raise UserError(f"refusing to write the user {field!r} into the token file.", ExitCode.INPUT)
            lines.append(
                f'{u.token},{u.name},{u.name},"{",".join(u.groups)}"' if u.groups else f"{u.token},{u.name},{u.name}"
            )
        # The Prometheus identity the API server's /metrics is scraped with (system:monitoring may read it).
        lines.append(f'{self.monitoring_token},{MONITORING_USER},{MONITORING_USER},"{MONITORING_GROUP}"')
        return "".join(line + "\n" for line in lines)

    def _write_private(self, name: str, text: str) -> pathlib.Path:
        p = self.dir / name
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return p

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 120.0) -> None:
        try:
            self._start(timeout)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout: float) -> None:
        self.pki = Pki(self.dir)
        etcd_port, peer_port, self.port = free_port(), free_port(), free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        p = self.pki.path
        self._spawn(
            "etcd",
            [
                "--name=dragoman",
                f"--data-dir={self.dir / 'etcd'}",
                f"--listen-client-urls=https://127.0.0.1:{etcd_port}",
                f"--advertise-client-urls=https://127.0.0.1:{etcd_port}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-cluster=dragoman=http://127.0.0.1:{peer_port}",
                f"--cert-file={p('etcd.crt')}",
                f"--key-file={p('etcd.key')}",
                f"--trusted-ca-file={p('ca.crt')}",
                "--client-cert-auth=true",
                # A throwaway cluster on one machine: fsync buys nothing and costs most of etcd's write latency.
                "--unsafe-no-fsync=true",
                "--quota-backend-bytes=8589934592",
                "--log-level=warn",
            ],
        )
        token_file = self._write_private("tokens.csv", self.token_file())
        policy = self._write_private("audit-policy.yaml", yaml.safe_dump(AUDIT_POLICY))
        kubelet_flags: list[str] = []
        if self.kubelet_egress:
            # Every kubelet listens on a loopback address of its own, which a kubelet may not report as its node IP:
            # the API server's connections to kubelets go through an HTTP CONNECT proxy on a unix socket (the egress
            # selector's "cluster" traffic, as konnectivity carries it), which finds the kubelet by its port.
            crt, key = self.pki.client("apiserver-kubelet-client", "kube-apiserver-kubelet-client", ("system:masters",))
            egress = {
                "apiVersion": "apiserver.k8s.io/v1beta1",
                "kind": "EgressSelectorConfiguration",
                "egressSelections": [
                    {
                        "name": "cluster",
                        "connection": {
                            "proxyProtocol": "HTTPConnect",
                            "transport": {"uds": {"udsName": str(self.dir / "kubelet-egress.sock")}},
                        },
                    }
                ],
            }
            kubelet_flags = [
                f"--kubelet-client-certificate={crt}",
                f"--kubelet-client-key={key}",
                f"--egress-selector-config-file={self._write_private('egress.yaml', yaml.safe_dump(egress))}",
            ]
        self._spawn(
            "kube-apiserver",
            [
                f"--etcd-servers=https://127.0.0.1:{etcd_port}",
                f"--etcd-cafile={p('ca.crt')}",
                f"--etcd-certfile={p('etcd-client.crt')}",
                f"--etcd-keyfile={p('etcd-client.key')}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.port}",
                # Loopback may not be an endpoint of the `kubernetes` Service; nothing here needs that endpoint.
                "--endpoint-reconciler-type=none",
                f"--tls-cert-file={p('apiserver.crt')}",
                f"--tls-private-key-file={p('apiserver.key')}",
                f"--client-ca-file={p('ca.crt')}",
                f"--token-auth-file={token_file}",
                "--anonymous-auth=false",
                "--authorization-mode=Node,RBAC",
                "--enable-admission-plugins=NodeRestriction",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={p('sa.pub')}",
                f"--service-account-signing-key-file={p('sa.key')}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--allow-privileged=true",
                f"--audit-log-path={self.audit_log}",
                f"--audit-policy-file={policy}",
                "--audit-log-mode=blocking",
                "--profiling=false",
                "-v=0",
                *kubelet_flags,
            ],
        )
        self._wait_ready(timeout)
        kc = yaml.safe_dump(self.kubeconfig())
        kc_file = self._write_private("admin.kubeconfig", kc)
        self.metrics_ports = {"etcd": etcd_port, "kube-apiserver": self.port}
        self.metrics_ports.update({"kube-scheduler": free_port(), "kube-controller-manager": free_port()})

        def common(name: str) -> list[str]:
            # A secure port for /metrics, on loopback with a certificate of the run's CA; tokens and access checked
            # by the API server (TokenReview, SubjectAccessReview), so only the monitoring token and admins read it.
            return [
                f"--kubeconfig={kc_file}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.metrics_ports[name]}",
                f"--tls-cert-file={p('components.crt')}",
                f"--tls-private-key-file={p('components.key')}",
                f"--authentication-kubeconfig={kc_file}",
                f"--authorization-kubeconfig={kc_file}",
                "--profiling=false",
                "-v=0",
            ]

        if self.hold == HOLD_ALL:
            self._args["kube-scheduler"] = common("kube-scheduler")  # spawned by release()
            held = ["--controllers=" + ",".join(_RUN_WHILE_ALL_HELD)]
        else:
            self._spawn("kube-scheduler", common("kube-scheduler"))
            held = ["--controllers=*," + ",".join("-" + c for c in self.hold)] if self.hold else []
        self._spawn(
            "kube-controller-manager",
            common("kube-controller-manager")
            + list(self.controller_args)
            + held
            + [
                f"--service-account-private-key-file={p('sa.key')}",
                f"--root-ca-file={p('ca.crt')}",
                "--use-service-account-credentials=false",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--allocate-node-cidrs=false",
                # Seconds, not minutes, between a ReplicaSet's pods and their garbage after a test's deletes.
                "--concurrent-gc-syncs=20",
            ],
        )
        self._wait_default_sa(timeout)

    def release(self) -> None:
        """Restart kube-controller-manager with every controller (and start a held kube-scheduler): the held ones start
        on the fleet as it is now."""
        if not self.hold:
            return
        args = [a for a in self._args["kube-controller-manager"] if not a.startswith("--controllers=")]
        _end(self.procs["kube-controller-manager"])
        self.hold = ()
        self._spawn("kube-controller-manager", args)
        if "kube-scheduler" not in self.procs:
            self._spawn("kube-scheduler", self._args["kube-scheduler"])

    def retire(self, names: tuple[str, ...] = ("kube-scheduler", "kube-controller-manager")) -> None:
        """End some components for good, leaving etcd and kube-apiserver serving: once a loaded fleet has settled,
        kube-scheduler's and kube-controller-manager's informers hold every object (3.6 and 4.1 GB at Kubernetes'
        envelope), memory a benchmark of kube-apiserver's readers needs for them."""
        for name in names:
            with self._lock:
                proc = self.procs.pop(name, None)
            if proc is not None and proc.poll() is None:
                _end(proc)

    def _spawn(self, name: str, args: list[str]) -> None:
        self._args[name] = list(args)
        with self._lock:
            if self._stopping:
                raise UserError(f"the control plane was stopped while starting (before {name}).", ExitCode.INPUT)
            # The process keeps its own copy of the log's descriptor; ours is closed once it has started.
            with open(self.dir / f"{name}.log", "wb") as log:
                # Their own process group: a Ctrl+C meant for dragoman reaches them only through stop(); the reaper
                # ends them if dragoman is killed first (sim/controlplane/procgroups.py).
                self.procs[name] = procgroups.spawn(
                    [str(self.bin[name]), *[a for a in args if a]],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )

    def log_tail(self, name: str, lines: int = 20) -> str:
        try:
            # The end of the log only: a process that printed without end must not be read whole into memory.
            with open(self.dir / f"{name}.log", "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - 65536))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def _check_alive(self) -> None:
        if self._stopping:
            raise UserError("the control plane was stopped while starting.", ExitCode.INPUT)
        for name, proc in list(self.procs.items()):
            if proc.poll() is not None:
                tail = self.log_tail(name)
                said = f"; its last words:\n{tail}" if tail.strip() else " and wrote nothing to its log."
                raise UserError(f"{name} exited with code {proc.returncode} while starting{said}", ExitCode.INPUT)

    def ssl_context(self) -> ssl.SSLContext:
        # Made once: the readiness and service-account waits ask many times, and a context costs a CA parse.
        if self._ssl is None:
            self._ssl = ssl.create_default_context(cadata=self.pki.ca_pem.decode())
        return self._ssl

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        content_type: str = "application/json",
    ) -> tuple[int, Any]:
        """One API request as `token` (default the admin): (code, decoded JSON or text)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {token or self.admin_token}")
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self.ssl_context(), timeout=timeout) as resp:
                raw = resp.read(MAX_ANSWER_BYTES)
                code = resp.status
        except urllib.error.HTTPError as exc:
            raw, code = exc.read(MAX_ANSWER_BYTES), exc.code
        except http.client.HTTPException as exc:
            # An answer that broke off or is not HTTP (a server dying mid-answer): a connection error like the others.
            said = f"{method} {path}: the API server's answer broke off ({type(exc).__name__})"
            raise ConnectionError(said) from None
        try:
            return code, json.loads(raw)
        except ValueError:
            return code, raw.decode(errors="replace")

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                code, body = self.request("GET", "/readyz", timeout=5)
                if code == 200:
                    return
                last = str(body)[-300:]
            except (OSError, ssl.SSLError) as exc:
                last = str(exc)
            time.sleep(0.3)
        raise UserError(
            f"kube-apiserver was not ready after {timeout:.0f} s ({last}); its log:\n{self.log_tail('kube-apiserver')}",
            ExitCode.INPUT,
        )

    def _wait_default_sa(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                code, body = self.request("GET", "/api/v1/namespaces/default/serviceaccounts/default", timeout=10)
            except (OSError, ssl.SSLError):
                code, body = 0, None  # not answering for a moment; _check_alive says so when it died
            if code == 200 and isinstance(body, dict):  # a 200 of HTML is not the ServiceAccount
                return
            time.sleep(0.3)
        raise UserError(
            "kube-controller-manager made no default ServiceAccount in time; its log:\n"
            + self.log_tail("kube-controller-manager"),
            ExitCode.INPUT,
        )

    def stop(self) -> None:
        """End every process (SIGTERM, then SIGKILL after 10 s) and remove the run's folder. Idempotent, and safe
        while start() runs in another thread: nothing is spawned after it."""
        with self._lock:
            self._stopping = True
            procs = dict(self.procs)
        # Clients first, etcd last: SIGTERM to all at once, then one 10 s deadline for all.
        order = ("prometheus", "kube-controller-manager", "kube-scheduler", "kube-apiserver", "etcd")
        procgroups.end_groups([procs[n] for n in order if n in procs] + [p for n, p in procs.items() if n not in order])
        with self._lock:
            for name, proc in procs.items():
                if self.procs.get(name) is proc:
                    del self.procs[name]
        shutil.rmtree(self.dir, ignore_errors=True)
        procgroups.REAPER.disown_folder(self.dir)

    def __enter__(self) -> ControlPlane:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _end(proc: subprocess.Popen) -> None:
    """SIGTERM to a component's process group, SIGKILL after 10 s."""
    procgroups.end_groups([proc])
