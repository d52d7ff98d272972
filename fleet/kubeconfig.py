"""kubeconfig resolution as kubectl does it (files, merging, contexts, in-cluster) and the credentials it yields, exec
plugins refreshed before expiry."""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import json
import os
import pathlib
import shutil
import stat
import time
from collections.abc import Callable, Mapping
from typing import Any

import yaml
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.fleet.k8s.times import parse_rfc3339

INCLUSTER_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
# Run the exec plugin again this long before its credential expires (an EKS token lasts 15 minutes).
REFRESH_BEFORE_SECONDS = 60.0
# client-go re-reads a tokenFile about once a minute; a projected service-account token rotates in place.
TOKEN_FILE_RELOAD_SECONDS = 60.0
EXEC_TIMEOUT_SECONDS = 60.0
EXEC_OUTPUT_LIMIT = 4 * 1024 * 1024  # bytes of an exec plugin's stdout; an ExecCredential is a few KB
EXEC_STDERR_KEPT = 64 * 1024  # the tail of its stderr kept for the sentence; the rest is read and dropped
EXEC_STDERR_QUOTED = 300  # characters of that tail quoted in the sentence
# An exec credential is not asked for again sooner than this, even when it says it has already expired: a plugin
# that hands out stale credentials ran twice per request.
EXEC_MIN_INTERVAL = 5.0
MAX_TOKEN_BYTES = 1024 * 1024


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
    # The cluster's `disable-compression` (kubectl 1.26+): answers are asked for uncompressed.
    disable_compression: bool = False
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


def kubeconfig_paths(
    kubeconfig: str | None, environ: Mapping[str, str], home: str | None = None
) -> tuple[list[str], bool]:
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


MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024  # a kubeconfig of many clusters is tens of KB; /dev/zero is endless
MAX_KUBECONFIG_NODES = 200_000  # values its YAML aliases may expand to
MAX_SHOWN_PATHS = 3  # paths named in one sentence; a KUBECONFIG of 5,000 missing files is not read out


def _paths_text(paths: list[str]) -> str:
    shown = ", ".join(paths[:MAX_SHOWN_PATHS])
    return shown + (f" and {len(paths) - MAX_SHOWN_PATHS} more" if len(paths) > MAX_SHOWN_PATHS else "")


_TYPE_WORDS = {str: "a string", bool: "a boolean (true or false)", list: "a list", dict: "a mapping", int: "a number"}


def _type_name(value: Any) -> str:
    return {
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


def field(body: Mapping[str, Any], key: str, typ: type, where: str) -> Any:
    """`body[key]` when it has the type kubectl's Go struct gives that field, None when absent (or null); any other
    value is a sentence naming the field and where it is (a quoted `insecure-skip-tls-verify: 'false'` is a string,
    and kubectl refuses it: it must never be truth-tested into turning verification off)."""
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        raise _err(
            f"{where} is malformed: `{key}` is {_type_name(value)}, where kubectl expects "
            f"{_TYPE_WORDS.get(typ, typ.__name__)}."
        )
    return value


def _load_file(path: str) -> dict:
    from dragoman.fleet.safefile import read_documents

    docs = read_documents(
        path,
        "the kubeconfig",
        max_bytes=MAX_KUBECONFIG_BYTES,
        expect="a kubeconfig",
        loader=yaml.SafeLoader,
        extra_values=MAX_KUBECONFIG_NODES,
    )
    if len(docs) > 1:
        raise _err(f"the kubeconfig {path} is not a kubeconfig: it holds {len(docs)} YAML documents, not one.")
    data = docs[0] if docs else None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _err(f"the kubeconfig {path} is not a kubeconfig: expected a mapping with clusters, contexts and users.")
    kind = data.get("kind")
    if kind not in (None, "Config"):
        raise _err(f"the kubeconfig {path} is not a kubeconfig: it holds a {kind}, not a Config.")
    field(data, "current-context", str, f"the kubeconfig {path}")
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
    # name -> the file that defined it, for sentences about a malformed field
    files: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)


def load_merged(paths: list[str], explicit_flag: bool) -> _Merged:
    """Merge kubeconfig files with kubectl's rules: the first file to define a name wins, the first current-context set
    wins.

    With --kubeconfig the file must exist; files listed in KUBECONFIG that do not exist are skipped, as kubectl does.
    """
    merged = _Merged({}, {}, {}, "", [])
    for path in paths:
        if not explicit_flag and not os.path.exists(path):
            continue
        data = _load_file(path)
        merged.sources.append(path)
        folder = os.path.dirname(os.path.abspath(path))
        # Any: the three sections hold different values.
        sections: tuple[tuple[str, dict[str, Any]], ...] = (
            ("clusters", merged.clusters),
            ("contexts", merged.contexts),
            ("users", merged.users),
        )
        for section, target in sections:
            for e in data.get(section) or []:
                if e["name"] in target:
                    continue
                body = e.get(section[:-1]) or {}
                target[e["name"]] = body if section == "contexts" else (body, folder)
                merged.files[(section, e["name"])] = path
        if not merged.current_context and isinstance(data.get("current-context"), str):
            merged.current_context = data["current-context"]
    return merged


def _resolve_path(folder: str, path: str) -> str:
    if "\x00" in path:  # no file has such a name; os.open would raise ValueError
        raise _err(f"the kubeconfig names the file {path!r}, which holds a NUL character; no path can.")
    path = os.path.expanduser(path)
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(folder, path))


def _file_or_data(body: dict, key: str, folder: str, what: str, where: str = "") -> bytes | None:
    data = field(body, f"{key}-data", str, where or what)
    if data:
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise _err(f"the kubeconfig's {key}-data of {what} is not valid base64.") from None
    path = field(body, key, str, where or what)
    if path:
        full = _resolve_path(folder, path)
        try:
            with open(full, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise _err(f"the {key} file {full} of {what} is not a regular file.")
                data = f.read(MAX_KUBECONFIG_BYTES + 1)
        except OSError as exc:
            raise _err(f"the {key} file {full} of {what} cannot be read ({exc.strerror or exc}).") from None
        if len(data) > MAX_KUBECONFIG_BYTES:
            raise _err(
                f"the {key} file {full} of {what} is larger than {MAX_KUBECONFIG_BYTES >> 20} MiB; it is "
                "not a certificate."
            )
        return data
    return None


def _check_header_value(value: str, name: str, what: str) -> str:
    """A credential that goes into an HTTP header: CR, LF or NUL would split the header (and aiohttp raises)."""
    if any(c in value for c in "\r\n\x00") or not value.isprintable():
        raise _err(f"the {name} of {what} holds a line break or control character; a credential is one line of text.")
    return value


# ---------------------------------------------------------------------------- resolution


def incluster_possible(environ: Mapping[str, str], incluster_dir: str = INCLUSTER_DIR) -> bool:
    return (
        bool(environ.get("KUBERNETES_SERVICE_HOST"))
        and bool(environ.get("KUBERNETES_SERVICE_PORT"))
        and os.path.isfile(os.path.join(incluster_dir, "token"))
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
            raise _err(
                f"no kubeconfig found in KUBECONFIG ({_paths_text(paths)}); none of its files exists or "
                "defines a context."
            )
        raise _err(f"no kubeconfig found: {paths[0]} does not exist; pass --kubeconfig PATH or set KUBECONFIG.")
    where = _paths_text(merged.sources)
    name = context or merged.current_context
    known = ", ".join(sorted(merged.contexts)[:20]) or "none"
    if not merged.contexts:
        raise _err(f"the kubeconfig ({where}) defines no contexts; add one, or point --kubeconfig at another file.")
    if not name:
        raise _err(f"the kubeconfig ({where}) sets no current-context; pass --context NAME (contexts: {known}).")
    ctx = merged.contexts.get(name)
    if ctx is None:
        raise _err(f"context {name!r} is not in the kubeconfig ({where}); known contexts: {known}.")
    cwhere = f"context {name!r} in {merged.files.get(('contexts', name), where)}"
    cluster_name = field(ctx, "cluster", str, cwhere) or ""
    if cluster_name not in merged.clusters:
        raise _err(f"context {name!r} names cluster {cluster_name!r}, which the kubeconfig ({where}) does not define.")
    cluster, cfolder = merged.clusters[cluster_name]
    kwhere = f"cluster {cluster_name!r} in {merged.files.get(('clusters', cluster_name), where)}"
    server = field(cluster, "server", str, kwhere) or ""
    if not server:
        raise _err(f"cluster {cluster_name!r} in the kubeconfig ({where}) has no server address.")
    if not server.startswith(("https://", "http://")):
        server = "https://" + server
    server, url_user, url_password = _split_userinfo(server)
    if not server.isprintable():
        raise _err(f"the `server` of {kwhere} holds a control character; it must be a URL.")
    user_name = field(ctx, "user", str, cwhere) or ""
    if user_name and user_name not in merged.users:
        raise _err(f"context {name!r} names user {user_name!r}, which the kubeconfig ({where}) does not define.")
    user, ufolder = merged.users.get(user_name, ({}, cfolder))
    uwhere = f"user {user_name!r} in {merged.files.get(('users', user_name), where)}"
    insecure = field(cluster, "insecure-skip-tls-verify", bool, kwhere)
    proxy_url = field(cluster, "proxy-url", str, kwhere) or None
    if proxy_url:
        scheme = proxy_url.split("://", 1)[0].lower() if "://" in proxy_url else ""
        if scheme not in ("http", "https"):
            # aiohttp speaks HTTP CONNECT proxies only; sending the cluster's traffic to a SOCKS port as HTTP is wrong.
            from dragoman.fleet.debugtrace import redact_url

            raise _err(
                f"the proxy-url {redact_url(proxy_url)} of {kwhere} is not an http:// or https:// proxy; "
                "dragoman supports HTTP proxies only (socks5 is not supported)."
            )

    rc = ResolvedConfig(
        context=name,
        cluster=cluster_name,
        user=user_name,
        server=server.rstrip("/"),
        namespace=field(ctx, "namespace", str, cwhere) or "default",
        insecure=bool(insecure),
        tls_server_name=field(cluster, "tls-server-name", str, kwhere) or None,
        proxy_url=proxy_url,
        disable_compression=bool(field(cluster, "disable-compression", bool, kwhere)),
        sources=merged.sources,
    )
    rc.ca_data = _file_or_data(cluster, "certificate-authority", cfolder, f"cluster {cluster_name!r}", kwhere)
    if rc.insecure and rc.ca_data and server.startswith("https://"):
        raise _err(
            f"cluster {cluster_name!r} sets both insecure-skip-tls-verify and a certificate authority; "
            "kubectl refuses that too — keep one."
        )
    what = f"user {user_name!r}"
    rc.client_cert_data = _file_or_data(user, "client-certificate", ufolder, what, uwhere)
    rc.client_key_data = _file_or_data(user, "client-key", ufolder, what, uwhere)
    if bool(rc.client_cert_data) != bool(rc.client_key_data):
        raise _err(
            f"{what} in the kubeconfig has a client certificate without its key, or a key without its certificate."
        )
    token = field(user, "token", str, uwhere)
    rc.token = _check_header_value(token, "token", uwhere) if token else None
    token_file = field(user, "tokenFile", str, uwhere)
    if not rc.token and token_file:
        rc.token_file = _resolve_path(ufolder, token_file)
        _check_token_file(rc.token_file, what)
    rc.username = field(user, "username", str, uwhere) or None
    rc.password = field(user, "password", str, uwhere) or None
    if not rc.username and not rc.password and (url_user or url_password):
        # Go's HTTP client sends a URL's userinfo as basic auth unless the request carries its own Authorization;
        # the address itself keeps no password, so nothing that shows or records it can leak it.
        rc.username, rc.password = url_user, url_password
    for key in ("username", "password"):
        if getattr(rc, key):
            _check_header_value(getattr(rc, key), key, uwhere)
    provider = field(user, "auth-provider", dict, uwhere)
    if provider:
        pname = provider.get("name", "?")
        raise _err(
            f"{what} authenticates with the `{pname}` auth-provider, which kubectl itself no longer supports; "
            "switch the kubeconfig to the provider's exec plugin (e.g. gke-gcloud-auth-plugin, kubelogin)."
        )
    if user.get("exec") is not None:
        rc.exec = _exec_config(field(user, "exec", dict, uwhere), ufolder, what, uwhere)
    return rc


def _split_userinfo(server: str) -> tuple[str, str | None, str | None]:
    """(the URL without userinfo, user, password): `https://u:p@host` becomes `https://host`, u, p."""
    import urllib.parse

    scheme, rest = server.split("://", 1)
    authority, sep, tail = rest.partition("/")
    if "@" not in authority:
        return server, None, None
    userinfo, _, host = authority.rpartition("@")
    user, _, password = userinfo.partition(":")
    return f"{scheme}://{host}{sep}{tail}", urllib.parse.unquote(user) or None, urllib.parse.unquote(password) or None


def _check_token_file(path: str, what: str) -> None:
    import stat as stat_mod

    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise _err(f"the tokenFile {path} of {what} does not exist.") from None
    except OSError as exc:
        raise _err(f"the tokenFile {path} of {what} cannot be read ({exc.strerror or exc}).") from None
    if stat_mod.S_ISDIR(st.st_mode):
        raise _err(f"the tokenFile {path} of {what} is a directory, not a file.")
    if not stat_mod.S_ISREG(st.st_mode):
        raise _err(
            f"the tokenFile {path} of {what} is not a regular file (a pipe or a device); a token file is "
            "re-read every minute."
        )


def _exec_config(raw: dict, folder: str, what: str, where: str = "") -> ExecConfig:
    where = where or what
    command = field(raw, "command", str, f"the exec section of {where}")
    if not command:
        raise _err(f"the exec section of {what} in the kubeconfig names no command.")
    api_version = field(raw, "apiVersion", str, f"the exec section of {where}") or ""
    if api_version not in EXEC_API_VERSIONS:
        raise _err(
            f"the exec plugin of {what} asks for apiVersion {api_version or '(none)'}; "
            f"supported are {' and '.join(EXEC_API_VERSIONS)}."
        )
    # kubectl resolves a command relative to the kubeconfig only when it contains a path separator.
    if os.sep in command and not os.path.isabs(command):
        command = os.path.normpath(os.path.join(folder, command))
    exwhere = f"the exec section of {where}"
    env = {}
    for item in field(raw, "env", list, exwhere) or []:
        if not isinstance(item, dict):
            raise _err(
                f"{exwhere} is malformed: an entry of `env` is {_type_name(item)}, where kubectl expects a "
                "mapping with name and value."
            )
        ename = field(item, "name", str, f"{exwhere}, env entry")
        value = field(item, "value", str, f"{exwhere}, env entry {ename!r}")
        if not ename or "=" in ename or "\x00" in ename or "\x00" in (value or ""):
            raise _err(
                f"{exwhere} is malformed: the env name {ename!r} is empty or holds '=' or NUL, which no "
                "environment can carry."
            )
        env[ename] = value or ""
    args = field(raw, "args", list, exwhere) or []
    if not all(isinstance(a, str) for a in args):
        raise _err(f"{exwhere} is malformed: `args` must be a list of strings.")
    if any("\x00" in a for a in args) or "\x00" in command:
        raise _err(f"{exwhere} is malformed: a NUL character cannot be part of a command or its arguments.")
    mode = field(raw, "interactiveMode", str, exwhere) or ("IfAvailable" if api_version.endswith("v1beta1") else "")
    if not mode:
        raise _err(
            f"the exec plugin of {what} must set interactiveMode (Never, IfAvailable or Always) for {api_version}."
        )
    return ExecConfig(
        command=command,
        args=list(args),
        env=env,
        api_version=api_version,
        install_hint=str(field(raw, "installHint", str, exwhere) or "").strip(),
        provide_cluster_info=bool(field(raw, "provideClusterInfo", bool, exwhere)),
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
    try:
        return parse_rfc3339(value.strip()).timestamp()
    except ValueError:
        raise ValueError(f"expirationTimestamp {value!r} is not an RFC 3339 time") from None


class CredentialSource:
    """Hands out the current credential of a resolved config; runs the exec plugin or re-reads the token file when due.

    `current()` is cheap when nothing is due; `invalidate()` is called after a 401 so the next `current()` fetches anew.
    """

    def __init__(
        self,
        rc: ResolvedConfig,
        *,
        clock: Callable[[], float] = time.time,
        refresh_before: float = REFRESH_BEFORE_SECONDS,
    ) -> None:
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
            return now >= cred.expires - margin and now - self._fetched_at >= EXEC_MIN_INTERVAL
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
            from dragoman.fleet.safefile import read_bounded

            _check_token_file(rc.token_file, f"user {rc.user!r}")
            raw = read_bounded(rc.token_file, MAX_TOKEN_BYTES, "the token file")
            try:
                token = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                raise _err(
                    f"the token file {rc.token_file} is not text (invalid UTF-8); a token is one line of text."
                ) from None
            if token:
                _check_header_value(token, "token file", rc.token_file)
            return Credential(
                token=token or None, client_cert_data=rc.client_cert_data, client_key_data=rc.client_key_data
            )
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
            if self.rc.disable_compression:
                cluster["disable-compression"] = True
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
        if program is None or not os.path.exists(program):  # noqa: ASYNC240 - one stat, before a spawn
            hint = f" {ex.install_hint}" if ex.install_hint else ""
            raise _err(f"the exec plugin `{ex.command}` that {user} needs is not installed (not found on PATH).{hint}")
        env = dict(os.environ)
        env.update(ex.env)
        env["KUBERNETES_EXEC_INFO"] = self._exec_info(ex)
        try:
            # Its own session (process group): on a timeout the plugin and every child it started are killed.
            proc = await asyncio.create_subprocess_exec(
                program,
                *ex.args,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except PermissionError:
            raise _err(f"the exec plugin {program} of {user} is not executable.") from None
        except (OSError, ValueError) as exc:
            raise _err(
                f"the exec plugin {program} of {user} could not be started ({getattr(exc, 'strerror', None) or exc})."
            ) from None
        try:
            out, err, too_much = await asyncio.wait_for(_collect(proc), EXEC_TIMEOUT_SECONDS)
        except (TimeoutError, asyncio.CancelledError) as exc:
            _kill_group(proc)
            await _reap(proc)
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise _err(
                f"the exec plugin {program} of {user} did not answer within {EXEC_TIMEOUT_SECONDS:g} s; it was stopped."
            ) from None
        self.exec_runs += 1
        if too_much:
            raise _err(
                f"the exec plugin {ex.command} of {user} printed more than "
                f"{EXEC_OUTPUT_LIMIT // (1024 * 1024)} MiB; an ExecCredential is a few KB."
            )
        if proc.returncode != 0:
            from dragoman.fleet.errors import printable

            last = (err.decode(errors="replace").strip().splitlines() or [""])[-1]
            last = printable(last.strip(), EXEC_STDERR_QUOTED)
            detail = f": {last.rstrip('.')}" if last else ""
            raise _err(
                f"the exec plugin {ex.command} of {user} failed (exit {proc.returncode}){detail}; its "
                "credentials may have expired — log in again."
            )
        try:
            data = json.loads(out)
            if not isinstance(data, dict) or data.get("kind") != "ExecCredential":
                raise ValueError("not an ExecCredential")
            if data.get("apiVersion") != ex.api_version:
                raise ValueError(f"it answered {data.get('apiVersion')} instead of {ex.api_version}")
            status = data.get("status") or {}
            if not isinstance(status, dict):
                raise ValueError("its status is not an object")
            for key in ("token", "clientCertificateData", "clientKeyData", "expirationTimestamp"):
                if status.get(key) is not None and not isinstance(status[key], str):
                    raise ValueError(f"its status.{key} is {_type_name(status[key])}, not a string")
            if status.get("token"):
                _check_header_value(status["token"], "token", f"the exec plugin {ex.command}")
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
        except (ValueError, RecursionError) as exc:
            raise _err(f"the exec plugin {ex.command} of {user} printed no usable ExecCredential ({exc}).") from None
        return cred


async def _collect(proc: asyncio.subprocess.Process) -> tuple[bytes, bytes, bool]:
    """stdout (at most EXEC_OUTPUT_LIMIT bytes) and the tail of stderr, then the exit; (out, err tail, too much)."""
    assert proc.stdout is not None and proc.stderr is not None
    too_much = False

    async def out() -> bytes:
        nonlocal too_much
        buf = bytearray()
        assert proc.stdout is not None  # PIPE
        while chunk := await proc.stdout.read(65536):
            if len(buf) + len(chunk) > EXEC_OUTPUT_LIMIT:
                too_much = True
                _kill_group(proc)
                break
            buf += chunk
        return bytes(buf)

    async def err() -> bytes:
        tail = bytearray()
        assert proc.stderr is not None  # PIPE
        while chunk := await proc.stderr.read(65536):
            tail += chunk
            del tail[:-EXEC_STDERR_KEPT]
        return bytes(tail)

    o, e = await asyncio.gather(out(), err())
    await proc.wait()
    return o, e, too_much


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass


async def _reap(proc: asyncio.subprocess.Process) -> None:
    try:
        await asyncio.wait_for(proc.wait(), 5)
    except (TimeoutError, ProcessLookupError):
        pass
