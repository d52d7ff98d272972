"""A connection to one cluster through kubernetes-asyncio with raw JSON: requests, paginated LISTs, WATCH streams, credentials refreshed, identity and versions."""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import os
import shutil
import socket
import ssl
import tempfile
import time
from typing import Any, AsyncIterator, Mapping

import aiohttp
from kubernetes_asyncio.client import ApiClient, Configuration

from dragoman import __version__
from dragoman.fleet import debugtrace
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.fleet.kubeconfig import CredentialSource, ResolvedConfig, resolve

LIST_PAGE = 500
READ_RETRIES = 3
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


def _retry_after(header: str | None, default: float) -> float:
    """Seconds to wait before asking again: the server's Retry-After when it gives one (capped), else the backoff."""
    try:
        return min(max(float(header), 0.0), 5.0) if header else default
    except ValueError:
        return default
CONNECT_TIMEOUT = 10.0
REQUEST_TIMEOUT = 60.0


# Bodies at least this large are decoded with the cyclic GC paused; from FREEZE_ABOVE on, their objects are frozen.
PAUSE_GC_ABOVE = 64 * 1024
FREEZE_ABOVE = 512 * 1024


def decode(raw: bytes) -> Any:
    """JSON bytes to Python objects; a large body (a LIST page) is decoded with the cyclic GC paused, then frozen.

    A LIST page of 500 pods makes ~100k containers. Left to the collector, a fleet's millions of dicts are
    rescanned by every full collection: 3-4x the decode time during a sync, and a pause of most of a second each
    time later on (benchmarks/bench_sync.py). API objects hold no reference cycles, so nothing is lost by moving
    them to the permanent generation: reference counting still frees them when the store drops them. Whatever
    else is alive at that moment is frozen too, which is why only big pages (fleet-sized clusters) do it.
    """
    if len(raw) < PAUSE_GC_ABOVE or not gc.isenabled():
        return json.loads(raw)
    gc.disable()
    try:
        return json.loads(raw)
    finally:
        if len(raw) >= FREEZE_ABOVE:
            gc.freeze()
        gc.enable()


class ClusterError(UserError):
    """Talking to the cluster failed; the message is a sentence for the operator."""


class Unreachable(ClusterError):
    """The server could not be reached (connection refused, DNS, TLS, timeout)."""


class ApiError(ClusterError):
    """The server answered with an error status."""

    def __init__(self, status: int, method: str, path: str, body: dict | None, text: str = "") -> None:
        self.status = status
        self.method = method
        self.path = path
        self.body = body or {}
        self.reason = str(self.body.get("reason") or "")
        detail = str(self.body.get("message") or text.strip()[:200] or f"HTTP {status}")
        self.detail = detail
        code = ExitCode.INPUT if method == "GET" or status in (401, 403) else ExitCode.PROBLEM
        what = f"{status} {self.reason}" if self.reason else str(status)
        super().__init__(f"the API server answered {method} {path} with {what}: {detail.rstrip('.')}.", code)

    @property
    def gone(self) -> bool:
        return self.status == 410


class WatchGone(Exception):
    """The watch's resourceVersion is too old (410 Gone, as a status or as an ERROR event): relist."""


def _query(query: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    out = []
    for k, v in (query or {}).items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        if isinstance(v, (list, tuple)):
            out.extend((k, str(x)) for x in v)
        else:
            out.append((k, str(v)))
    return out


def _why(exc: aiohttp.ClientConnectorError) -> str:
    err = exc.os_error
    if isinstance(err, ConnectionRefusedError):
        return "connection refused (is the API server up, and is this its address?)"
    if isinstance(err, socket.gaierror):
        return f"the name {exc.host} does not resolve"
    if isinstance(err, (TimeoutError, asyncio.TimeoutError)):
        return "no answer in time"
    return (err.strerror if isinstance(err, OSError) and err.strerror else str(err or exc)).rstrip(".")


class Cluster:
    """One cluster, one user: an ApiClient carrying refreshed credentials, and raw-JSON request helpers."""

    def __init__(self, rc: ResolvedConfig, credentials: CredentialSource | None = None) -> None:
        self.config = rc
        self.context_name = rc.context
        self.server = rc.server
        self.user = rc.user
        self.namespace = rc.namespace
        self.credentials = credentials or CredentialSource(rc)
        self.version_info: dict = {}  # the whole /version answer
        self.server_version = ""  # its gitVersion, e.g. "v1.37.1"
        self.resource_api_versions: list[str] = []
        self.kube_system_uid: str | None = None
        self._tmpdir = tempfile.mkdtemp(prefix="dragoman-tls-")
        os.chmod(self._tmpdir, 0o700)
        self._cert_in_use: tuple[bytes | None, bytes | None] = (None, None)
        try:
            self.api_client = self._new_api_client(rc.client_cert_data, rc.client_key_data)
        except BaseException:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            raise
        self._closed = False

    # ------------------------------------------------------------------ client construction
    def _write(self, name: str, data: bytes) -> str:
        path = os.path.join(self._tmpdir, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def _new_api_client(self, cert: bytes | None, key: bytes | None) -> ApiClient:
        rc = self.config
        cfg = Configuration(host=rc.server)
        cfg.verify_ssl = not rc.insecure
        if rc.ca_data:
            cfg.ssl_ca_cert = self._write("ca.crt", rc.ca_data)
        if cert and key:
            n = len(os.listdir(self._tmpdir))
            cfg.cert_file = self._write(f"client-{n}.crt", cert)
            cfg.key_file = self._write(f"client-{n}.key", key)
        cfg.tls_server_name = rc.tls_server_name
        cfg.proxy = rc.proxy_url
        try:
            client = ApiClient(cfg)
        except ssl.SSLError as exc:
            raise Unreachable(f"the TLS material of {self._who()} cannot be used ({exc.reason or exc}); check certificate-authority and the client certificate.") from None
        except FileNotFoundError as exc:
            raise Unreachable(f"a TLS file of {self._who()} is missing ({exc.filename}).") from None
        client.user_agent = f"dragoman/{__version__}"
        if rc.username and rc.password and not rc.token and rc.exec is None:
            basic = base64.b64encode(f"{rc.username}:{rc.password}".encode()).decode()
            client.set_default_header("Authorization", f"Basic {basic}")
        self._cert_in_use = (cert, key)
        return client

    async def _ensure_client_cert(self) -> None:
        # An exec plugin may hand out client certificates: a new one needs a new TLS context, hence a new session.
        cred = await self.credentials.current()
        pair = (cred.client_cert_data, cred.client_key_data)
        if pair != self._cert_in_use and cred.client_cert_data:
            old = self.api_client
            self.api_client = self._new_api_client(*pair)
            asyncio.get_running_loop().call_later(120, lambda: asyncio.ensure_future(old.close()))

    def _who(self) -> str:
        return f"context {self.context_name!r} (server {self.server})"

    @property
    def identity(self) -> dict:
        """The cluster's identity for the audit log: server URL and the kube-system namespace uid."""
        return {"server": self.server, "kubeSystemUID": self.kube_system_uid}

    @property
    def version(self) -> str:
        return self.server_version

    # ------------------------------------------------------------------ requests
    async def _send(
        self, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None,
        content_type: str | None = None, timeout: aiohttp.ClientTimeout | float | None = None,
    ) -> aiohttp.ClientResponse:
        """One request with the current credential; a 401 makes the credential be fetched anew and the request repeated once."""
        if self._closed:
            raise ClusterError("the connection to the cluster was closed.")
        if self.config.exec is not None:
            await self._ensure_client_cert()
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        elif body is not None:
            headers["Content-Type"] = "application/json"
        if timeout is None:
            timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT, sock_connect=CONNECT_TIMEOUT)
        retried_connection = refreshed = False
        for _attempt in range(3):
            # The bearer token goes in by hand: kubernetes-asyncio's refresh hook only runs once a key is set.
            cred = await self.credentials.current()
            sent = dict(headers)
            if cred.token:
                sent["Authorization"] = f"Bearer {cred.token}"
            try:
                resp = await self._call(method, path, query, sent, body, timeout)
            except aiohttp.ClientConnectorCertificateError as exc:
                raise Unreachable(f"the server of {self._who()} presented a certificate that is not trusted ({exc.certificate_error}); check certificate-authority in the kubeconfig.") from None
            except aiohttp.ClientConnectorError as exc:
                raise Unreachable(f"cannot reach the cluster of {self._who()}: {_why(exc)}.") from None
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, aiohttp.ClientPayloadError) as exc:
                if method == "GET" and not retried_connection:
                    # A kept-alive connection the server had already closed: a read is safe to send again at once.
                    retried_connection = True
                    continue
                raise Unreachable(f"the connection to the cluster of {self._who()} broke ({exc}).") from None
            except asyncio.TimeoutError:
                raise Unreachable(f"the cluster of {self._who()} did not answer in time.") from None
            except aiohttp.InvalidURL:
                raise Unreachable(f"the server address of {self._who()} is not a valid URL.") from None
            except aiohttp.ClientResponseError as exc:
                # Bytes that are not an HTTP answer (an SSH banner, a TLS port spoken to in plain HTTP, binary noise).
                raise Unreachable(f"the server of {self._who()} did not answer in HTTP ({str(exc.message).splitlines()[0]}); is this the API server's address?") from None
            if resp.status == 401 and not refreshed and self.credentials.refreshable:
                refreshed = True
                resp.release()
                self.credentials.invalidate(cred)
                continue
            return resp
        raise Unreachable(f"the connection to the cluster of {self._who()} keeps breaking.")

    async def _call(self, method: str, path: str, query: Mapping[str, Any] | None, headers: dict, body: Any, timeout: Any) -> aiohttp.ClientResponse:
        call = self.api_client.call_api(path, method, query_params=_query(query), header_params=headers, body=body,
                                        _preload_content=False, _request_timeout=timeout)
        if not debugtrace.enabled():
            return await call
        # --debug: method, path, status and time of each request; which kind of credential, never the credential.
        default_auth = {k.lower(): v for k, v in self.api_client.default_headers.items()}
        auth = debugtrace.auth_kind({**default_auth, **headers}, bool(self._cert_in_use[0]))
        t0 = time.monotonic()
        try:
            resp = await call
        except BaseException as exc:
            debugtrace.record(method, path, query, type(exc).__name__, time.monotonic() - t0, auth=auth)
            raise
        debugtrace.record(method, path, query, resp.status, time.monotonic() - t0, auth=auth)
        return resp

    async def _read(self, resp: aiohttp.ClientResponse, method: str, path: str) -> Any:
        try:
            raw = await resp.read()
        except (aiohttp.ClientPayloadError, aiohttp.ClientOSError, aiohttp.ServerDisconnectedError) as exc:
            raise Unreachable(f"the connection to the cluster of {self._who()} broke while reading {path} ({exc}).") from None
        except asyncio.TimeoutError:
            raise Unreachable(f"the cluster of {self._who()} stopped answering while sending {path}.") from None
        finally:
            resp.release()
        if resp.status >= 400:
            raise self._error(resp.status, method, path, raw)
        if not raw:
            return {}
        try:
            return decode(raw)
        except ValueError:
            raise ClusterError(f"the server of {self._who()} answered {method} {path} with something that is not JSON.") from None

    def _error(self, status: int, method: str, path: str, raw: bytes) -> ApiError:
        body = None
        try:
            parsed = json.loads(raw) if raw else None
            if isinstance(parsed, dict):
                body = parsed
        except ValueError:
            pass
        err = ApiError(status, method, path, body, raw.decode(errors="replace") if body is None else "")
        if status == 401:
            err.message = (
                f"the cluster of {self._who()} rejected the credentials of user {self.user!r} (401 Unauthorized); "
                "they may have expired — log in again."
            )
        return err

    async def request(
        self, method: str, path: str, body: Any = None, query: Mapping[str, Any] | None = None,
        content_type: str | None = None, timeout: float | None = None, retry: bool | None = None,
    ) -> dict:
        """Any API request; the answer as raw JSON. Raises ApiError for an error status, Unreachable when the server is not there.

        `retry`: whether a 429 or 5xx is asked again. Reads are by default; a write only when its caller says it is
        safe to repeat (guarded by a resourceVersion, or setting the same value again).
        """
        t = aiohttp.ClientTimeout(total=timeout, sock_connect=CONNECT_TIMEOUT) if timeout else None
        method = method.upper()
        repeatable = method == "GET" if retry is None else retry
        for attempt in range(READ_RETRIES + 1):
            resp = await self._send(method, path, query=query, body=body, content_type=content_type, timeout=t)
            if not repeatable or resp.status not in RETRYABLE_STATUS or attempt == READ_RETRIES:
                return await self._read(resp, method, path)
            # An API server that sheds load (429) or hiccups (5xx) is asked again, as client-go does, honouring
            # Retry-After, rather than ending a migration on one busy moment.
            delay = _retry_after(resp.headers.get("Retry-After"), 0.25 * 2 ** attempt)
            resp.release()
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def get(self, path: str, **query: Any) -> dict:
        return await self.request("GET", path, query=query)

    async def list_raw(self, path: str, **query: Any) -> dict:
        """One GET of a collection (one page when `limit` is given), as the server sent it."""
        return await self.request("GET", path, query=query)

    async def list_all(self, path: str, *, label_selector: str | None = None, field_selector: str | None = None, limit: int = LIST_PAGE) -> tuple[list[dict], str]:
        """Every item of a collection through `limit`/`continue` pages; (items, the list's resourceVersion).

        An expired continue token (410) restarts the list from the beginning, as client-go's pager does.
        """
        for _restart in range(3):
            items: list[dict] = []
            cont: str | None = None
            rv = ""
            try:
                while True:
                    page = await self.list_raw(path, limit=limit, labelSelector=label_selector, fieldSelector=field_selector, **({"continue": cont} if cont else {}))
                    page_items = page.get("items") if isinstance(page, dict) else None
                    meta = (page.get("metadata") if isinstance(page, dict) else None) or {}
                    if not isinstance(page, dict) or not isinstance(page_items or [], list) or not isinstance(meta, dict) or not all(
                            isinstance(i, dict) and isinstance(i.get("metadata"), dict) for i in page_items or []):
                        raise ClusterError(f"the server of {self._who()} answered GET {path} with something that is not a Kubernetes list.")
                    items.extend(page_items or [])
                    rv = str(meta.get("resourceVersion") or rv)
                    if meta.get("continue") and meta.get("continue") == cont:
                        raise ClusterError(f"the server of {self._who()} answered GET {path} with the same continue token again; the list never ends.")
                    cont = meta.get("continue") or None
                    if not cont:
                        return items, rv
            except ApiError as exc:
                if exc.status == 410 and cont:
                    continue
                raise
        raise ClusterError(f"the list of {path} kept expiring while being paged; the cluster changes faster than it can be read.")

    async def watch(
        self, path: str, resource_version: str, *, label_selector: str | None = None, timeout_seconds: int | None = 300,
        allow_bookmarks: bool = True,
    ) -> AsyncIterator[tuple[str, dict]]:
        """WATCH a collection from `resource_version`; yields (type, object) including BOOKMARK, and first
        ("OPENED", {}) once the server has accepted the watch.

        Raises WatchGone on 410 (status or ERROR event), ApiError for other errors, Unreachable when the stream breaks.
        Ends normally when the server closes the stream (timeoutSeconds).
        """
        query = {
            "watch": True, "resourceVersion": resource_version or None, "allowWatchBookmarks": allow_bookmarks,
            "labelSelector": label_selector, "timeoutSeconds": timeout_seconds,
        }
        # A dead connection shows as silence: the server sends bookmarks about every minute, so wait longer than that.
        read = (timeout_seconds or 300) + 90
        t = aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT, sock_read=read)
        resp = await self._send("GET", path, query=query, timeout=t)
        try:
            if resp.status >= 400:
                raw = await resp.read()
                if resp.status == 410:
                    raise WatchGone(raw.decode(errors="replace"))
                raise self._error(resp.status, "GET", path, raw)
            yield "OPENED", {}
            buf = b""
            try:
                async for chunk in resp.content.iter_any():
                    buf += chunk
                    if b"\n" not in chunk:
                        continue
                    *lines, buf = buf.split(b"\n")
                    for line in lines:
                        if line.strip():
                            yield self._event(line, path)
                if buf.strip():
                    yield self._event(buf, path)
            except (aiohttp.ClientPayloadError, aiohttp.ClientOSError, aiohttp.ServerDisconnectedError) as exc:
                raise Unreachable(f"the watch of {path} on {self._who()} broke ({exc}).") from None
            except asyncio.TimeoutError:
                raise Unreachable(f"the watch of {path} on {self._who()} went silent.") from None
        finally:
            resp.close()

    def _event(self, line: bytes, path: str) -> tuple[str, dict]:
        try:
            ev = decode(line)
            etype, obj = ev["type"], ev["object"]
        except (ValueError, KeyError, TypeError):
            raise ClusterError(f"the watch of {path} on {self._who()} sent a line that is not a watch event.") from None
        if etype == "ERROR":
            code = obj.get("code") if isinstance(obj, dict) else None
            if code == 410 or (isinstance(obj, dict) and obj.get("reason") in ("Expired", "Gone")):
                raise WatchGone(str(obj.get("message") or ""))
            raise ApiError(int(code or 500), "WATCH", path, obj if isinstance(obj, dict) else None)
        return etype, obj

    # ------------------------------------------------------------------ facts about the cluster
    async def discover(self) -> None:
        """Fill server_version, resource_api_versions and kube_system_uid."""
        self.version_info = await self.get("/version")
        if not isinstance(self.version_info, dict):
            raise ClusterError(f"the server of {self._who()} answered GET /version with something that is not a Kubernetes version; is this the API server's address?")
        self.server_version = str(self.version_info.get("gitVersion") or "")
        self.resource_api_versions = await self._resource_versions()
        try:
            ns = await self.get("/api/v1/namespaces/kube-system")
            meta = ns.get("metadata") if isinstance(ns, dict) else None
            self.kube_system_uid = meta.get("uid") if isinstance(meta, dict) else None
        except ApiError as exc:
            if exc.status not in (403, 404):
                raise
            self.kube_system_uid = None

    async def _resource_versions(self) -> list[str]:
        try:
            groups = await self.get("/apis")
        except ApiError as exc:
            if exc.status == 404:
                return []
            raise
        versions: list[str] = []
        if not isinstance(groups, dict):
            raise ClusterError(f"the server of {self._who()} answered GET /apis with something that is not an API group list.")
        if groups.get("kind") == "APIGroupDiscoveryList":
            for item in groups.get("items") or []:
                if (item.get("metadata") or {}).get("name") == "resource.k8s.io":
                    versions = [v.get("version") for v in item.get("versions") or [] if v.get("version")]
        else:
            for g in groups.get("groups") or []:
                if g.get("name") == "resource.k8s.io":
                    versions = [v.get("version") for v in g.get("versions") or [] if v.get("version")]
        return versions

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self.api_client.close()
        shutil.rmtree(self._tmpdir, ignore_errors=True)

    async def __aenter__(self) -> "Cluster":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def connect(kubeconfig: str | None = None, context: str | None = None, *, environ: Mapping[str, str] | None = None, home: str | None = None, **resolve_kw: Any) -> Cluster:
    """Resolve the kubeconfig as kubectl would, reach the server, and learn its version, DRA API versions and identity.

    Raises UserError (exit 2) with one sentence for a bad kubeconfig, an unknown context, rejected or
    expired credentials, a missing exec plugin or an unreachable server.
    """
    rc = resolve(kubeconfig, context, environ=environ, home=home, **resolve_kw)
    cluster = Cluster(rc)
    try:
        await cluster.discover()
    except ApiError as exc:
        await cluster.close()
        if exc.status == 403:
            raise ClusterError(f"user {rc.user!r} of context {rc.context!r} may not read the server's version or API groups (403 Forbidden): {exc.detail}.") from None
        raise
    except BaseException:
        await cluster.close()
        raise
    return cluster
