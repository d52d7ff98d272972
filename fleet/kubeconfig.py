"""kubeconfig resolution as kubectl does it (files, merging, contexts, in-cluster) and the credentials it yields, exec plugins refreshed before expiry."""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import datetime
import json
import os
import pathlib
import shutil
import time
from typing import Any, Callable, Mapping

import yaml

from dragoman.fleet.errors import ExitCode, UserError

INCLUSTER_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
# Run the exec plugin again this long before its credential expires (an EKS token lasts 15 minutes).
REFRESH_BEFORE_SECONDS = 60.0
# client-go re-reads a tokenFile about once a minute; a projected service-account token rotates in place.
TOKEN_FILE_RELOAD_SECONDS = 60.0
EXEC_TIMEOUT_SECONDS = 60.0


def _err(message: str) -> UserError:
    return UserError(message, ExitCode.INPUT)


@dataclasses.dataclass
class ExecConfig:
    """A `users[].user.exec` stanza, with the command already resolved against the kubeconfig's folder."""

    command: str
    args: list[str]
    env: dict[str, str]
    api_version: str
    install_hint: str = ""
    provide_cluster_info: bool = False
    interactive_mode: str = "IfAvailable"


@dataclasses.dataclass
class ResolvedConfig:
    """Everything needed to talk to one cluster as one user, as kubectl would for the same flags and environment."""

    context: str
    cluster: str
    user: str
    server: str
    namespace: str = "default"
    insecure: bool = False
    ca_data: bytes | None = None  # PEM
    tls_server_name: str | None = None
    proxy_url: str | None = None
    client_cert_data: bytes | None = None  # PEM
    client_key_data: bytes | None = None  # PEM
    token: str | None = None
    token_file: str | None = None
    username: str | None = None
    password: str | None = None
    exec: ExecConfig | None = None
    in_cluster: bool = False
    # Files the configuration came from, in kubectl's order of precedence (empty for in-cluster).
    sources: list[str] = dataclasses.field(default_factory=list)

    @property
    def where(self) -> str:
        if self.in_cluster:
            return "the in-cluster service account"
        return ", ".join(self.sources) or "the kubeconfig"


# ---------------------------------------------------------------------------- files


def kubeconfig_paths(kubeconfig: str | None, environ: Mapping[str, str], home: str | None = None) -> tuple[list[str], bool]:
    """The files to merge, and whether the list was given explicitly (flag or KUBECONFIG) rather than the default."""
    if kubeconfig:
        return [kubeconfig], True
    env = environ.get("KUBECONFIG", "")
    if env:
        seen: list[str] = []
        for part in env.split(os.pathsep):
            if part and part not in seen:
                seen.append(part)
        return seen, True
    home = home or environ.get("HOME") or str(pathlib.Path.home())
    return [os.path.join(home, ".kube", "config")], False


def _load_file(path: str) -> dict:
    try:
        text = pathlib.Path(path).read_text()
    except FileNotFoundError:
        raise _err(f"the kubeconfig {path} does not exist.") from None
    except IsADirectoryError:
        raise _err(f"the kubeconfig {path} is a directory, not a file.") from None
    except PermissionError:
        raise _err(f"the kubeconfig {path} cannot be read (permission denied).") from None
    except UnicodeDecodeError:
        raise _err(f"the kubeconfig {path} is not a text file.") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "it cannot be parsed"
        raise _err(f"the kubeconfig {path} is not valid YAML{where}: {problem}.") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _err(f"the kubeconfig {path} is not a kubeconfig: expected a mapping with clusters, contexts and users.")
    kind = data.get("kind")
    if kind not in (None, "Config"):
        raise _err(f"the kubeconfig {path} is not a kubeconfig: it holds a {kind}, not a Config.")
    for section in ("clusters", "contexts", "users"):
        entries = data.get(section)
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise _err(f"the kubeconfig {path} is malformed: `{section}` must be a list of named entries.")
        for e in entries:
            if not isinstance(e.get("name"), str) or not e["name"]:
                raise _err(f"the kubeconfig {path} is malformed: an entry of `{section}` has no name.")
            body = e.get(section[:-1])
            if body is not None and not isinstance(body, dict):
                raise _err(f"the kubeconfig {path} is malformed: {section[:-1]} {e['name']!r} is not a mapping.")
    return data


@dataclasses.dataclass
class _Merged:
    clusters: dict[str, tuple[dict, str]]  # name -> (body, folder of the file it came from)
    contexts: dict[str, dict]
    users: dict[str, tuple[dict, str]]
    current_context: str
    sources: list[str]


def load_merged(paths: list[str], explicit_flag: bool) -> _Merged:
    """Merge kubeconfig files with kubectl's rules: the first file to define a name wins, the first current-context set wins.

    With --kubeconfig the file must exist; files listed in KUBECONFIG that do not exist are skipped, as kubectl does.
    """
    merged = _Merged({}, {}, {}, "", [])
    for path in paths:
        if not explicit_flag and not os.path.exists(path):
            continue
        data = _load_file(path)
        merged.sources.append(path)
        folder = os.path.dirname(os.path.abspath(path))
        for e in data.get("clusters") or []:
            merged.clusters.setdefault(e["name"], (e.get("cluster") or {}, folder))
        for e in data.get("contexts") or []:
            merged.contexts.setdefault(e["name"], e.get("context") or {})
        for e in data.get("users") or []:
            merged.users.setdefault(e["name"], (e.get("user") or {}, folder))
        if not merged.current_context and isinstance(data.get("current-context"), str):
            merged.current_context = data["current-context"]
    return merged


def _resolve_path(folder: str, path: str) -> str:
    path = os.path.expanduser(path)
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(folder, path))


def _file_or_data(body: dict, key: str, folder: str, what: str) -> bytes | None:
    data = body.get(f"{key}-data")
    if data:
        try:
            return base64.b64decode(str(data), validate=True)
        except (binascii.Error, ValueError):
            raise _err(f"the kubeconfig's {key}-data of {what} is not valid base64.") from None
    path = body.get(key)
    if path:
        full = _resolve_path(folder, str(path))
        try:
            return pathlib.Path(full).read_bytes()
        except OSError as exc:
            raise _err(f"the {key} file {full} of {what} cannot be read ({exc.strerror or exc}).") from None
    return None


# ---------------------------------------------------------------------------- resolution


def incluster_possible(environ: Mapping[str, str], incluster_dir: str = INCLUSTER_DIR) -> bool:
    return bool(environ.get("KUBERNETES_SERVICE_HOST")) and bool(environ.get("KUBERNETES_SERVICE_PORT")) and os.path.isfile(
        os.path.join(incluster_dir, "token")
    )


def incluster_config(environ: Mapping[str, str], incluster_dir: str = INCLUSTER_DIR) -> ResolvedConfig:
    host = environ["KUBERNETES_SERVICE_HOST"]
    port = environ["KUBERNETES_SERVICE_PORT"]
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    ca_path = os.path.join(incluster_dir, "ca.crt")
    ns_path = os.path.join(incluster_dir, "namespace")
    return ResolvedConfig(
        context="in-cluster",
        cluster="in-cluster",
        user="service-account",
        server=f"https://{host}:{port}",
        namespace=pathlib.Path(ns_path).read_text().strip() if os.path.isfile(ns_path) else "default",
        ca_data=pathlib.Path(ca_path).read_bytes() if os.path.isfile(ca_path) else None,
        token_file=os.path.join(incluster_dir, "token"),
        in_cluster=True,
    )


def resolve(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    home: str | None = None,
    incluster_dir: str = INCLUSTER_DIR,
) -> ResolvedConfig:
    """Resolve the cluster, user and credentials for `--kubeconfig`/`--context` as kubectl would.

    Raises UserError (exit 2) with one sentence for every bad input.
    """
    environ = os.environ if environ is None else environ
    paths, explicit = kubeconfig_paths(kubeconfig, environ, home)
    merged = load_merged(paths, explicit_flag=bool(kubeconfig))
    if not merged.contexts and not merged.clusters and not context and not kubeconfig:
        if incluster_possible(environ, incluster_dir):
            return incluster_config(environ, incluster_dir)
        if explicit:
            raise _err(f"no kubeconfig found in KUBECONFIG ({environ.get('KUBECONFIG')}); none of its files exists or defines a context.")
        raise _err(f"no kubeconfig found: {paths[0]} does not exist; pass --kubeconfig PATH or set KUBECONFIG.")
    where = ", ".join(merged.sources)
    name = context or merged.current_context
    known = ", ".join(sorted(merged.contexts)) or "none"
    if not merged.contexts:
        raise _err(f"the kubeconfig ({where}) defines no contexts; add one, or point --kubeconfig at another file.")
    if not name:
        raise _err(f"the kubeconfig ({where}) sets no current-context; pass --context NAME (contexts: {known}).")
    ctx = merged.contexts.get(name)
    if ctx is None:
        raise _err(f"context {name!r} is not in the kubeconfig ({where}); known contexts: {known}.")
    cluster_name = ctx.get("cluster") or ""
    if cluster_name not in merged.clusters:
        raise _err(f"context {name!r} names cluster {cluster_name!r}, which the kubeconfig ({where}) does not define.")
    cluster, cfolder = merged.clusters[cluster_name]
    server = str(cluster.get("server") or "")
    if not server:
        raise _err(f"cluster {cluster_name!r} in the kubeconfig ({where}) has no server address.")
    if not server.startswith(("https://", "http://")):
        server = "https://" + server
    user_name = ctx.get("user") or ""
    if user_name and user_name not in merged.users:
        raise _err(f"context {name!r} names user {user_name!r}, which the kubeconfig ({where}) does not define.")
    user, ufolder = merged.users.get(user_name, ({}, cfolder))

    rc = ResolvedConfig(
        context=name,
        cluster=cluster_name,
        user=user_name,
        server=server.rstrip("/"),
        namespace=ctx.get("namespace") or "default",
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        tls_server_name=cluster.get("tls-server-name") or None,
        proxy_url=cluster.get("proxy-url") or None,
        sources=merged.sources,
    )
    rc.ca_data = _file_or_data(cluster, "certificate-authority", cfolder, f"cluster {cluster_name!r}")
    if rc.insecure and rc.ca_data and server.startswith("https://"):
        raise _err(
            f"cluster {cluster_name!r} sets both insecure-skip-tls-verify and a certificate authority; kubectl refuses that too — keep one."
        )
    what = f"user {user_name!r}"
    rc.client_cert_data = _file_or_data(user, "client-certificate", ufolder, what)
    rc.client_key_data = _file_or_data(user, "client-key", ufolder, what)
    if bool(rc.client_cert_data) != bool(rc.client_key_data):
        raise _err(f"{what} in the kubeconfig has a client certificate without its key, or a key without its certificate.")
    rc.token = user.get("token") or None
    if not rc.token and user.get("tokenFile"):
        rc.token_file = _resolve_path(ufolder, str(user["tokenFile"]))
        if not os.path.isfile(rc.token_file):
            raise _err(f"the tokenFile {rc.token_file} of {what} does not exist.")
    rc.username = user.get("username") or None
    rc.password = user.get("password") or None
    if user.get("auth-provider"):
        provider = (user["auth-provider"] or {}).get("name", "?")
        raise _err(
            f"{what} authenticates with the `{provider}` auth-provider, which kubectl itself no longer supports; "
            "switch the kubeconfig to the provider's exec plugin (e.g. gke-gcloud-auth-plugin, kubelogin)."
        )
    if user.get("exec"):
        rc.exec = _exec_config(user["exec"], ufolder, what)
    return rc


def _exec_config(raw: Any, folder: str, what: str) -> ExecConfig:
    if not isinstance(raw, dict) or not raw.get("command"):
        raise _err(f"the exec section of {what} in the kubeconfig names no command.")
    api_version = raw.get("apiVersion") or ""
    if api_version not in EXEC_API_VERSIONS:
        raise _err(
            f"the exec plugin of {what} asks for apiVersion {api_version or '(none)'}; "
            f"supported are {' and '.join(EXEC_API_VERSIONS)}."
        )
    command = str(raw["command"])
    # kubectl resolves a command relative to the kubeconfig only when it contains a path separator.
    if os.sep in command and not os.path.isabs(command):
        command = os.path.normpath(os.path.join(folder, command))
    env = {}
    for item in raw.get("env") or []:
        if isinstance(item, dict) and "name" in item:
            env[str(item["name"])] = str(item.get("value", ""))
    mode = raw.get("interactiveMode") or ("IfAvailable" if api_version.endswith("v1beta1") else "")
    if not mode:
        raise _err(f"the exec plugin of {what} must set interactiveMode (Never, IfAvailable or Always) for {api_version}.")
    return ExecConfig(
        command=command,
        args=[str(a) for a in raw.get("args") or []],
        env=env,
        api_version=api_version,
        install_hint=str(raw.get("installHint") or "").strip(),
        provide_cluster_info=bool(raw.get("provideClusterInfo")),
        interactive_mode=mode,
    )


# ---------------------------------------------------------------------------- credentials


@dataclasses.dataclass
class Credential:
    """What goes on a request: a bearer token and/or a client certificate, and when it stops being valid."""

    token: str | None = None
    client_cert_data: bytes | None = None
    client_key_data: bytes | None = None
    expires: float | None = None  # epoch seconds


def _parse_time(value: str) -> float:
    text = value.strip().replace("Z", "+00:00")
    try:
        dt = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"expirationTimestamp {value!r} is not an RFC 3339 time") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.timezone.utc)
    return dt.timestamp()


class CredentialSource:
    """Hands out the current credential of a resolved config; runs the exec plugin or re-reads the token file when due.

    `current()` is cheap when nothing is due; `invalidate()` is called after a 401 so the next `current()` fetches anew.
    """

    def __init__(self, rc: ResolvedConfig, *, clock: Callable[[], float] = time.time, refresh_before: float = REFRESH_BEFORE_SECONDS) -> None:
        self.rc = rc
        self.clock = clock
        self.refresh_before = refresh_before
        self._cred: Credential | None = None
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()
        self.exec_runs = 0  # how many times the plugin ran (for the header's tooltip and for tests)

    @property
    def refreshable(self) -> bool:
        return self.rc.exec is not None or self.rc.token_file is not None

    def _due(self) -> bool:
        cred = self._cred
        if cred is None:
            return True
        now = self.clock()
        if self.rc.exec is not None:
            if cred.expires is None:
                return False
            # Refresh a margin before expiry; a credential that lives shorter than twice the margin gets half its life.
            margin = min(self.refresh_before, max(0.0, (cred.expires - self._fetched_at) / 2))
            return now >= cred.expires - margin
        if self.rc.token_file is not None:
            return now - self._fetched_at >= TOKEN_FILE_RELOAD_SECONDS
        return False

    def invalidate(self, used: Credential | None = None) -> None:
        """Forget the credential (after a 401), unless a newer one was fetched since `used` was handed out."""
        if used is None or used is self._cred:
            self._cred = None

    async def current(self) -> Credential:
        if not self._due():
            assert self._cred is not None
            return self._cred
        async with self._lock:
            if self._due():
                self._cred = await self._fetch()
                self._fetched_at = self.clock()
            assert self._cred is not None
            return self._cred

    async def _fetch(self) -> Credential:
        rc = self.rc
        if rc.exec is not None:
            return await self._run_exec(rc.exec)
        if rc.token_file is not None:
            try:
                token = pathlib.Path(rc.token_file).read_text().strip()
            except OSError as exc:
                raise _err(f"the token file {rc.token_file} cannot be read ({exc.strerror or exc}).") from None
            return Credential(token=token or None, client_cert_data=rc.client_cert_data, client_key_data=rc.client_key_data)
        return Credential(token=rc.token, client_cert_data=rc.client_cert_data, client_key_data=rc.client_key_data)

    def _exec_info(self, ex: ExecConfig) -> str:
        spec: dict[str, Any] = {"interactive": False}
        if ex.provide_cluster_info:
            cluster: dict[str, Any] = {"server": self.rc.server}
            if self.rc.ca_data:
                cluster["certificate-authority-data"] = base64.b64encode(self.rc.ca_data).decode()
            if self.rc.insecure:
                cluster["insecure-skip-tls-verify"] = True
            if self.rc.tls_server_name:
                cluster["tls-server-name"] = self.rc.tls_server_name
            if self.rc.proxy_url:
                cluster["proxy-url"] = self.rc.proxy_url
            spec["cluster"] = cluster
        return json.dumps({"kind": "ExecCredential", "apiVersion": ex.api_version, "spec": spec})

    async def _run_exec(self, ex: ExecConfig) -> Credential:
        user = f"user {self.rc.user!r}"
        if ex.interactive_mode == "Always":
            raise _err(
                f"the exec plugin {ex.command} of {user} needs an interactive terminal (interactiveMode: Always); "
                "log in once with kubectl, or set interactiveMode to IfAvailable."
            )
        program = ex.command if os.sep in ex.command else shutil.which(ex.command)
        if program is None or not os.path.exists(program):
            hint = f" {ex.install_hint}" if ex.install_hint else ""
            raise _err(f"the exec plugin `{ex.command}` that {user} needs is not installed (not found on PATH).{hint}")
        env = dict(os.environ)
        env.update(ex.env)
        env["KUBERNETES_EXEC_INFO"] = self._exec_info(ex)
        try:
            proc = await asyncio.create_subprocess_exec(
                program, *ex.args, env=env, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )
            out, err = await asyncio.wait_for(proc.communicate(), EXEC_TIMEOUT_SECONDS)
        except PermissionError:
            raise _err(f"the exec plugin {program} of {user} is not executable.") from None
        except OSError as exc:
            raise _err(f"the exec plugin {program} of {user} could not be started ({exc.strerror or exc}).") from None
        except asyncio.TimeoutError:
            proc.kill()
            raise _err(f"the exec plugin {program} of {user} did not answer within {EXEC_TIMEOUT_SECONDS:.0f} s.") from None
        self.exec_runs += 1
        if proc.returncode != 0:
            last = (err.decode(errors="replace").strip().splitlines() or [""])[-1]
            detail = f": {last.rstrip('.')}" if last else ""
            raise _err(f"the exec plugin {ex.command} of {user} failed (exit {proc.returncode}){detail}; its credentials may have expired — log in again.")
        try:
            data = json.loads(out)
            if not isinstance(data, dict) or data.get("kind") != "ExecCredential":
                raise ValueError("not an ExecCredential")
            if data.get("apiVersion") != ex.api_version:
                raise ValueError(f"it answered {data.get('apiVersion')} instead of {ex.api_version}")
            status = data.get("status") or {}
            if not isinstance(status, dict):
                raise ValueError("its status is not an object")
            cred = Credential(token=status.get("token") or None)
            if status.get("clientCertificateData") or status.get("clientKeyData"):
                cred.client_cert_data = str(status.get("clientCertificateData", "")).encode()
                cred.client_key_data = str(status.get("clientKeyData", "")).encode()
            else:
                cred.client_cert_data, cred.client_key_data = self.rc.client_cert_data, self.rc.client_key_data
            if status.get("expirationTimestamp"):
                cred.expires = _parse_time(str(status["expirationTimestamp"]))
            if not cred.token and not cred.client_cert_data:
                raise ValueError("it holds neither a token nor a client certificate")
        except ValueError as exc:
            raise _err(f"the exec plugin {ex.command} of {user} printed no usable ExecCredential ({exc}).") from None
        return cred


def describe_for_errors(rc: ResolvedConfig) -> str:
    """`context "kind-a" (server https://…)`: how error sentences name the cluster."""
    return f"context {rc.context!r} (server {rc.server})"

