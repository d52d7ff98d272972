"""A connection to one cluster through kubernetes-asyncio with raw JSON: requests, paginated LISTs, WATCH streams,
credentials refreshed, identity and versions."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gc
import json
import math
import os
import shutil
import socket
import ssl
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

import aiohttp
import msgspec
from aiohttp.helpers import get_env_proxy_for_url
from dragoman.fleet import backoff, debugtrace, deflate
from dragoman.fleet.errors import ExitCode, UserError, printable
from dragoman.fleet.kubeconfig import CredentialSource, ResolvedConfig, resolve
from kubernetes_asyncio.client import ApiClient, Configuration
from yarl import URL

from dragoman import __version__

LIST_PAGE = 500
READ_RETRIES = 3
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


CONNECT_TIMEOUT = 10.0
REQUEST_TIMEOUT = 60.0

# Bounds on what a server may send (issue 19): an endless /version once took 3.4 GB, a 500 KB gzip bomb 1 GB.
MAX_SMALL_BODY = 4 * 1024 * 1024  # /version, discovery, one object
MAX_BODY = 256 * 1024 * 1024  # one LIST page (500 objects; etcd keeps each under 1.5 MiB, most are a few KB)
MAX_WATCH_LINE = 16 * 1024 * 1024  # one watch event: one object and its envelope
MAX_PAGES = 100_000  # pages of one LIST (50 million objects at 500 a page)
MAX_NOTES = 200  # malformed objects remembered for notes (the count goes on)


# Bodies at least this large are decoded with the cyclic GC paused; from FREEZE_ABOVE on, their objects are frozen.
PAUSE_GC_ABOVE = 64 * 1024
FREEZE_ABOVE = 512 * 1024


class _WatchEvent(msgspec.Struct):
    """A watch line's envelope, its object left as bytes: decoded next by the caller's decoder (a projecting store's,
    fleet/projection.py) or the generic one. msgspec reads the envelope and an object ~3x faster than json.loads."""

    type: Any = None
    object: msgspec.Raw = msgspec.Raw()


_event_decoder = msgspec.json.Decoder(_WatchEvent)
_object_decoder = msgspec.json.Decoder()
# What a watch's object decoder is handed: the object's bytes (msgspec.Raw supports the buffer protocol).
ObjectDecoder = Callable[[Any], Any]


def decode_object(raw: Any) -> Any:
    """One object's JSON bytes as json.loads gives them (msgspec first; what only json accepts, such as NaN, by
    json)."""
    try:
        return _object_decoder.decode(raw)
    except msgspec.DecodeError:
        return json.loads(raw if isinstance(raw, (bytes, str)) else memoryview(raw).tobytes())


def decode(raw: bytes) -> Any:
    """JSON bytes to Python objects (as json.loads gives them, by msgspec: a 500-pod page 50 -> 36 µs a pod); a large
    body (a LIST page) is decoded with the cyclic GC paused, then frozen.

    A LIST page of 500 pods makes ~100k containers. Left to the collector, a fleet's millions of dicts are
    rescanned by every full collection: 3-4x the decode time during a sync, and a pause of most of a second each
    time later on (benchmarks/bench_sync.py). API objects hold no reference cycles, so nothing is lost by moving
    them to the permanent generation: reference counting still frees them when the store drops them. Whatever
    else is alive at that moment is frozen too, which is why only big pages (fleet-sized clusters) do it.
    """
    if len(raw) < PAUSE_GC_ABOVE or not gc.isenabled():
        return decode_object(raw)
    gc.disable()
    try:
        return decode_object(raw)
    finally:
        if len(raw) >= FREEZE_ABOVE:
            gc.freeze()
        gc.enable()


AHEAD_STEPS = 1  # event-loop turns given to a page asked for ahead, to be sent before the current one is decoded


class _ListMeta(msgspec.Struct):
    continue_: Any = msgspec.field(default=None, name="continue")


class _ListHead(msgspec.Struct):
    metadata: _ListMeta | None = None


_list_head_decoder = msgspec.json.Decoder(_ListHead)


def _continue_ahead(raw: Any) -> str | None:
    """A LIST page's continue token read from its first bytes, before the items; None when not found there.

    Only a guess, to ask for the next page early (Cluster.list_all checks it against the decoded page): the API server
    writes a list's kind, apiVersion and metadata before its items, so the bytes up to `"items"` are a JSON object
    once closed."""
    if not isinstance(raw, bytes):
        return None
    end = raw.find(b'"items"', 0, 4096)
    if end < 0:
        return None
    head = raw[:end].rstrip()
    try:
        meta = _list_head_decoder.decode(head[:-1] + b"}" if head.endswith(b",") else head + b"}").metadata
    except msgspec.DecodeError:
        return None
    token = meta.continue_ if meta is not None else None
    return token if isinstance(token, str) and token else None


def _as_bytes(raw: bytes) -> bytes:
    return raw


def _drop(ahead: asyncio.Future | None) -> None:
    """A page asked for ahead and not used: cancelled, its outcome (an error, too) left unread without a warning."""
    if ahead is None:
        return
    if ahead.done():
        if not ahead.cancelled():
            ahead.exception()
    else:
        ahead.cancel()
        ahead.add_done_callback(lambda f: f.cancelled() or f.exception())


class _AskAgain(Exception):
    """A busy (429) or failing (5xx) answer to a request that is safe to repeat: backoff.retrying asks again after
    `delay` seconds."""

    def __init__(self, delay: float) -> None:
        super().__init__(f"asked again in {delay:.2f} s")
        self.delay = delay


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


class Malformed(ClusterError):
    """The server sent something that is not what the Kubernetes API sends (a broken watch event, an endless line):
    an informer lists again from scratch, with backoff."""


class WatchGone(Exception):
    """The watch's resourceVersion is too old (410 Gone, as a status or as an ERROR event): relist."""


def _kind_by_plural() -> dict[str, str]:
    from dragoman.fleet.store import KINDS

    return {info.plural: info.kind for info in KINDS.values()}


_KIND_BY_PATH = _kind_by_plural()


def _object_name(path: str) -> str | None:
    """For an API path that names one object: its name ("" for a subresource of one, whose name is not checked);
    None for anything else (a collection, discovery, /version)."""
    parts = path.split("?", 1)[0].strip("/").split("/")
    rest = parts[2:] if parts[0] == "api" else parts[3:] if parts[0] == "apis" else []
    if len(rest) < 2 or rest[-1] in _KIND_BY_PATH:
        return None
    # ".../R/NAME" (R a resource dragoman knows, or "namespaces"): the object NAME; else a subresource (NAME/status).
    return rest[-1] if rest[-2] in _KIND_BY_PATH or rest[-2] == "namespaces" else ""


def _broke(exc: BaseException) -> str:
    """Why a connection broke, in words (aiohttp's payload errors print as their repr)."""
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "the answer ended before all of it was sent"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection"
    return printable(str(exc), 200) or type(exc).__name__


def _what_came(answer: Any) -> str:
    if isinstance(answer, dict):
        kind = answer.get("kind")
        return f"a {printable(kind, 60)}" if isinstance(kind, str) and kind else "an object without metadata"
    return f"a JSON {type(answer).__name__}"


class _Guarded:
    """kubernetes-asyncio's session with some of its defaults turned off for every request: redirects are never
    followed (a 302 to http:// or another host would carry the credentials along), bodies are not decompressed
    by aiohttp (which has no bound; `read_body` inflates gzip under one), and the environment is read once.

    kubernetes-asyncio makes its session with trust_env, with which aiohttp looks up the proxy environment and
    ~/.netrc on every request, each in a worker thread: two thread hops per request (1-5 ms each while the loop is
    busy decoding; a LIST page asked for ahead waited on them), and ~/.netrc credentials sent to the API server as
    Basic auth (or, beside a bearer token, a request refused) — which kubectl never does. The proxy the environment
    names for the server (HTTPS_PROXY, NO_PROXY, as aiohttp reads them) is looked up here once instead, and given
    to each request that names no proxy of its own (a kubeconfig's proxy-url comes first, as before)."""

    def __init__(self, session: aiohttp.ClientSession, server: str) -> None:
        self.session = session
        self.env_proxy: tuple[Any, Any] | None
        try:
            self.env_proxy = get_env_proxy_for_url(URL(server))
        except (LookupError, ValueError):
            self.env_proxy = None
        # aiohttp has no public setter; without the attribute the per-request lookups merely come back.
        session._trust_env = False

    def request(self, **kw: Any) -> Any:
        if self.env_proxy is not None and not kw.get("proxy"):
            kw["proxy"], kw["proxy_auth"] = self.env_proxy
        return self.session.request(allow_redirects=False, auto_decompress=False, **kw)

    async def close(self) -> None:
        await self.session.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


@contextlib.contextmanager
def tls_files(material: Mapping[str, bytes | None]) -> Iterator[dict[str, str]]:
    """Paths from which OpenSSL can read TLS material (`ssl.SSLContext.load_cert_chain` takes only paths), valid
    inside the block.

    On Linux each is an anonymous memory file (memfd) opened as /proc/self/fd/N: the private key never touches a
    disk, and nothing is left behind whatever ends the process (SIGTERM, SIGKILL, a crash). Elsewhere the files go to
    a fresh 0700 folder, each 0600, removed as soon as the block ends, which is right after the TLS context has read
    them — not at exit, so a killed process leaves a key behind only if it dies inside those microseconds.
    """
    fds: list[int] = []
    paths: dict[str, str] = {}
    folder: str | None = None
    memfd = hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")
    try:
        for name, data in material.items():
            if not data:
                continue
            if memfd:
                fd = os.memfd_create(f"dragoman-{name}", getattr(os, "MFD_CLOEXEC", 0))
                fds.append(fd)
                paths[name] = f"/proc/self/fd/{fd}"
            else:
                folder = folder or tempfile.mkdtemp(prefix="dragoman-tls-")  # mkdtemp: mode 0700
                paths[name] = os.path.join(folder, name)
                fd = os.open(paths[name], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                fds.append(fd)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if not memfd:
                os.close(fds.pop())
        yield paths
    finally:
        for fd in fds:
            os.close(fd)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _decompressor(encoding: str, what: str, who: str) -> Any:
    enc = encoding.strip().lower()
    if enc in ("", "identity"):
        return None
    if enc in ("gzip", "x-gzip", "deflate"):
        return deflate.decompressor()
    raise Malformed(
        f"the server of {who} answered {what} in the encoding {printable(enc, 40)!r}, which was not asked for."
    )


def _inflate(inflate: Any, chunk: bytes, room: int, what: str, who: str) -> bytes:
    """Decompress `chunk`, producing at most `room` bytes (a gzip bomb stops at the bound instead of expanding)."""
    try:
        return inflate.decompress(chunk, max(room, 1))
    except deflate.ERRORS:
        raise Malformed(f"the server of {who} answered {what} with a corrupt gzip body.") from None


def _inflate_pieces(inflate: Any, chunk: bytes, what: str, who: str) -> Iterator[bytes]:
    """A compressed chunk decompressed one MiB at a time, so a bomb is never expanded at once."""
    data = _inflate(inflate, chunk, 1 << 20, what, who)
    yield data
    while inflate.unconsumed_tail:
        yield _inflate(inflate, inflate.unconsumed_tail, 1 << 20, what, who)


# Bytes held by the bodies being read at this moment, together: a bomb per kind, the informers listing 17 kinds at once,
# must not cost the bound once per kind (every LIST page a real server sends is far under it, even all at once).
_held = [0]


async def read_body(resp: aiohttp.ClientResponse, limit: int, what: str, who: str) -> bytes:
    """The body of `resp`, decompressed, refusing more than `limit` bytes (after decompression) with a sentence.

    A gzip body is inflated one MiB at a time, and the bodies read at once share the bound (a bomb in every LIST of a
    sync costs the bound once, not once per kind). A gzip stream must end as gzip ends, with the trailer whose CRC-32
    and length check the bytes: one cut short is refused, as client-go's reader refuses it (unexpected EOF)."""
    inflate = _decompressor(resp.headers.get("Content-Encoding", ""), what, who)
    # The pieces, joined once at the end (a bytearray grown piece by piece, then copied out, copied every byte twice).
    pieces: list[bytes] = []
    size = 0

    def keep(piece: bytes) -> None:
        nonlocal size
        pieces.append(piece)
        size += len(piece)
        _held[0] += len(piece)
        if size > limit or _held[0] > limit:
            together = "" if size > limit else " (with the answers read beside it)"
            raise Malformed(
                f"the server of {who} answered {what} with more than {limit >> 20} MiB{together}; that is not what "
                "it should send."
            )

    try:
        async for chunk in resp.content.iter_chunked(256 * 1024):
            if inflate is None:
                keep(chunk)
                continue
            for piece in _inflate_pieces(inflate, chunk, what, who):
                keep(piece)
        if inflate is not None:
            keep(inflate.flush())
            if not inflate.eof:
                raise Malformed(f"the server of {who} answered {what} with a gzip body cut short (no end of stream).")
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)
    finally:
        _held[0] -= size
        pieces.clear()  # a refused answer's bytes are not held while its sentence travels up


def _query(query: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
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
        self._cert_in_use: tuple[bytes | None, bytes | None] = (None, None)
        # Objects the server sent with fields of the wrong type: skipped, and named in a note (kind/ns/name -> words).
        self.malformed: dict[str, str] = {}
        self.malformed_count = 0
        self.api_client = self._new_api_client(rc.client_cert_data, rc.client_key_data)
        self._closed = False

    # ------------------------------------------------------------------ client construction
    def _new_api_client(self, cert: bytes | None, key: bytes | None) -> ApiClient:
        rc = self.config
        cfg = Configuration(host=rc.server)
        cfg.verify_ssl = not rc.insecure
        cfg.tls_server_name = rc.tls_server_name
        cfg.proxy = rc.proxy_url
        material = {
            "ca.crt": rc.ca_data,
            "client.crt": cert if cert and key else None,
            "client.key": key if cert and key else None,
        }
        try:
            with tls_files(material) as paths:
                cfg.ssl_ca_cert = paths.get("ca.crt")
                cfg.cert_file = paths.get("client.crt")
                cfg.key_file = paths.get("client.key")
                # The TLS context reads the files here and keeps the keys in memory; the files go when this block ends.
                client = ApiClient(cfg)
        except ssl.SSLError as exc:
            raise Unreachable(
                f"the TLS material of {self._who()} cannot be used ({exc.reason or exc}); check "
                "certificate-authority and the client certificate."
            ) from None
        except (FileNotFoundError, ValueError) as exc:
            raise Unreachable(
                f"the TLS material of {self._who()} cannot be used ({getattr(exc, 'filename', None) or exc})."
            ) from None
        # The wrapper has the session's interface, not its class.
        client.rest_client.pool_manager = _Guarded(  # type: ignore[assignment]
            client.rest_client.pool_manager, rc.server
        )
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
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        timeout: aiohttp.ClientTimeout | float | None = None,
    ) -> aiohttp.ClientResponse:
        """One request with the current credential; a 401 makes the credential be fetched anew and the request repeated
        once."""
        if self._closed:
            raise ClusterError("the connection to the cluster was closed.")
        if self.config.exec is not None:
            await self._ensure_client_cert()
        # gzip only: dragoman decompresses it itself, under a bound (aiohttp's own decoder has none). A cluster whose
        # kubeconfig says `disable-compression: true` is asked for none, as kubectl does: the server's gzip of a large
        # LIST is CPU it spends (kube-apiserver compresses every answer over 128 KiB that may be gzipped).
        encoding = "identity" if self.config.disable_compression else "gzip"
        headers = {"Accept": "application/json", "Accept-Encoding": encoding}
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
                raise Unreachable(
                    f"the server of {self._who()} presented a certificate that is not trusted "
                    f"({exc.certificate_error}); check certificate-authority in the kubeconfig."
                ) from None
            except aiohttp.ClientProxyConnectionError as exc:
                from dragoman.fleet.debugtrace import redact_url

                raise Unreachable(
                    f"cannot reach the proxy {redact_url(self.config.proxy_url or '')} of {self._who()}: {_why(exc)}; "
                    "check proxy-url in the kubeconfig."
                ) from None
            except aiohttp.ClientConnectorError as exc:
                raise Unreachable(f"cannot reach the cluster of {self._who()}: {_why(exc)}.") from None
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, aiohttp.ClientPayloadError) as exc:
                if method == "GET" and not retried_connection:
                    # A kept-alive connection the server had already closed: a read is safe to send again at once.
                    retried_connection = True
                    continue
                raise Unreachable(f"the connection to the cluster of {self._who()} broke ({_broke(exc)}).") from None
            except TimeoutError:
                raise Unreachable(f"the cluster of {self._who()} did not answer in time.") from None
            except aiohttp.InvalidURL:
                raise Unreachable(f"the server address of {self._who()} is not a valid URL.") from None
            except aiohttp.ClientResponseError as exc:
                # Bytes that are not an HTTP answer (an SSH banner, a TLS port spoken to in plain HTTP, binary noise).
                first = (str(exc.message).splitlines() or [""])[0][:200]
                raise Unreachable(
                    f"the server of {self._who()} did not answer in HTTP ({first}); is this the API server's address?"
                ) from None
            except ValueError as exc:
                # aiohttp refuses a header it would have to send broken (a credential with a line break).
                raise ClusterError(f"the request to {self._who()} could not be sent ({exc}).") from None
            if 300 <= resp.status < 400:
                # Never followed: a redirect could send the credentials to another host or over plain HTTP.
                from dragoman.fleet.debugtrace import redact_url

                location = printable(redact_url(resp.headers.get("Location", "")), 200) or "(no Location)"
                resp.release()
                raise ClusterError(
                    f"the server of {self._who()} redirected {method} {path} ({resp.status}) to {location}; "
                    "dragoman does not follow redirects — put the API server's own address in the kubeconfig."
                )
            if resp.status == 401 and not refreshed and self.credentials.refreshable:
                refreshed = True
                resp.release()
                self.credentials.invalidate(cred)
                continue
            return resp
        raise Unreachable(f"the connection to the cluster of {self._who()} keeps breaking.")

    async def _call(
        self, method: str, path: str, query: Mapping[str, Any] | None, headers: dict, body: Any, timeout: Any
    ) -> aiohttp.ClientResponse:
        call = self.api_client.call_api(
            path,
            method,
            query_params=_query(query),
            header_params=headers,
            body=body,
            _preload_content=False,
            _request_timeout=timeout,
        )
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

    async def _read(
        self, resp: aiohttp.ClientResponse, method: str, path: str, limit: int = MAX_BODY, decoder: Any = None
    ) -> Any:
        try:
            raw = await read_body(resp, limit if resp.status < 400 else MAX_SMALL_BODY, f"{method} {path}", self._who())
        except (aiohttp.ClientPayloadError, aiohttp.ClientOSError, aiohttp.ServerDisconnectedError) as exc:
            raise Unreachable(
                f"the connection to the cluster of {self._who()} broke while reading {path} ({_broke(exc)})."
            ) from None
        except TimeoutError:
            raise Unreachable(f"the cluster of {self._who()} stopped answering while sending {path}.") from None
        finally:
            resp.release()
        if resp.status >= 400:
            raise self._error(resp.status, method, path, raw)
        if not raw:
            return {}
        try:
            return (decoder or decode)(raw)
        except (ValueError, RecursionError):
            raise ClusterError(
                f"the server of {self._who()} answered {method} {path} with something that is not JSON."
            ) from None

    def _error(self, status: int, method: str, path: str, raw: bytes) -> ApiError:
        body = None
        try:
            parsed = json.loads(raw) if raw else None
            if isinstance(parsed, dict):
                body = parsed
        except ValueError:
            pass
        err = ApiError(
            status, method, path, body, printable(raw[:2000].decode(errors="replace"), 200) if body is None else ""
        )
        if status == 401:
            err.message = (
                f"the cluster of {self._who()} rejected the credentials of user {self.user!r} (401 Unauthorized); "
                "they may have expired — log in again."
            )
        return err

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Mapping[str, Any] | None = None,
        content_type: str | None = None,
        timeout: float | None = None,
        retry: bool | None = None,
        decoder: Any = None,
    ) -> dict:
        """Any API request; the answer as raw JSON. Raises ApiError for an error status, Unreachable when the server is
        not there.

        `retry`: whether a 429 or 5xx is asked again. Reads are by default; a write only when its caller says it is
        safe to repeat (guarded by a resourceVersion, or setting the same value again).
        """
        t = aiohttp.ClientTimeout(total=timeout, sock_connect=CONNECT_TIMEOUT) if timeout else None
        method = method.upper()
        repeatable = method == "GET" if retry is None else retry
        limit = (
            MAX_BODY
            if method == "GET"
            and not path.startswith(("/version", "/api/v1/namespaces/kube-system"))
            and path not in ("/apis", "/api")
            else MAX_SMALL_BODY
        )

        async def attempt(n: int) -> dict:
            resp = await self._send(method, path, query=query, body=body, content_type=content_type, timeout=t)
            if repeatable and resp.status in RETRYABLE_STATUS and n < READ_RETRIES:
                # An API server that sheds load (429) or hiccups (5xx) is asked again, as client-go does, honouring
                # Retry-After, rather than ending a migration on one busy moment.
                delay = backoff.server_delay(resp.headers.get("Retry-After"), backoff.delay(n, 0.25, math.inf))
                resp.release()
                raise _AskAgain(delay)
            return await self._read(resp, method, path, limit, decoder)

        return await backoff.retrying(
            attempt,
            attempts=READ_RETRIES + 1,
            retryable=lambda exc: isinstance(exc, _AskAgain),
            wait=lambda exc, _n: exc.delay if isinstance(exc, _AskAgain) else 0.0,
        )

    async def get(self, path: str, **query: Any) -> dict:
        """GET of one path; when the path names one object (".../nodes/NAME", a subresource of one), the answer must be
        an object of that name, not a list (a misrouted proxy's): every write reads what it changes through here."""
        answer = await self.request("GET", path, query=query)
        named = _object_name(path)
        if named is not None:
            meta = answer.get("metadata") if isinstance(answer, dict) else None
            if (
                not isinstance(meta, dict)
                or isinstance(answer.get("items"), list)
                or (named and meta.get("name") != named)
            ):
                raise ClusterError(
                    f"the server of {self._who()} answered GET {path} with something that is not the object it names "
                    f"({_what_came(answer)}); is a proxy in between routing requests elsewhere?"
                )
        return answer

    async def pod_log(
        self,
        namespace: str,
        name: str,
        container: str | None = None,
        *,
        tail_lines: int | None = None,
        previous: bool = False,
        limit_bytes: int | None = None,
    ) -> str:
        """The pods/log subresource as text, as `kubectl logs` reads it (the API server relays the kubelet's answer;
        plain text, never JSON). "" when the container has written nothing; ApiError as the server answered (400 for
        a container that has not started, a pod with several containers and none named)."""
        query: dict[str, Any] = {}
        if container:
            query["container"] = container
        if tail_lines is not None:
            query["tailLines"] = tail_lines
        if previous:
            query["previous"] = "true"
        if limit_bytes is not None:
            query["limitBytes"] = limit_bytes
        ans = await self.request(
            "GET",
            f"/api/v1/namespaces/{namespace}/pods/{name}/log",
            query=query or None,
            decoder=lambda raw: raw.decode("utf-8", "replace"),
        )
        return ans if isinstance(ans, str) else ""  # an empty body reads as {}

    async def list_raw(self, path: str, *, decoder: Any = None, **query: Any) -> dict:
        """One GET of a collection (one page when `limit` is given), as the server sent it.

        `decoder` turns the page's bytes into objects instead of `decode` (fleet/projection.py's projecting decoder)."""
        return await self.request("GET", path, query=query, decoder=decoder)

    async def list_all(
        self,
        path: str,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = LIST_PAGE,
        decoder: Any = None,
    ) -> tuple[list[dict], str]:
        """Every item of a collection through `limit`/`continue` pages; (items, the list's resourceVersion).

        An expired continue token (410) restarts the list from the beginning, as client-go's pager does.

        The next page is asked for as soon as a page's bytes are in, before they are decoded, so that the server
        prepares it while this one is decoded: its continue token is read from the bytes ahead of the items (where
        the API server writes the list's metadata), and that request is used only if the decoded page names the same
        token (otherwise it is dropped and the page asked for again).
        """
        query = {"limit": limit, "labelSelector": label_selector, "fieldSelector": field_selector}
        for _restart in range(3):
            items: list[dict] = []
            cont: str | None = None
            seen: set[str] = set()
            rv = ""
            ahead: asyncio.Future | None = None
            ahead_cont: str | None = None
            try:
                for _page in range(MAX_PAGES):
                    if ahead is not None and ahead_cont == cont:
                        raw = await ahead
                    else:
                        _drop(ahead)
                        raw = await self._page_bytes(path, query, cont)
                    ahead = None
                    guess = _continue_ahead(raw)
                    if guess is not None and guess != cont and guess not in seen:
                        ahead, ahead_cont = asyncio.ensure_future(self._page_bytes(path, query, guess)), guess
                        # Let the request go out before decoding holds the loop.
                        for _ in range(AHEAD_STEPS):
                            await asyncio.sleep(0)
                    page = self._decode_page(raw, path, decoder)
                    page_items = page.get("items") if isinstance(page, dict) else None
                    meta = (page.get("metadata") if isinstance(page, dict) else None) or {}
                    if (
                        not isinstance(page, dict)
                        or not isinstance(page_items or [], list)
                        or not isinstance(meta, dict)
                        or not all(
                            isinstance(i, dict) and isinstance(i.get("metadata"), dict) for i in page_items or []
                        )
                    ):
                        raise ClusterError(
                            f"the server of {self._who()} answered GET {path} with something that is not a "
                            "Kubernetes list."
                        )
                    items.extend(self.admit(path, page, page_items or []))
                    rv = str(meta.get("resourceVersion") or rv)
                    nxt = meta.get("continue") or None
                    if nxt is not None and not isinstance(nxt, str):
                        raise ClusterError(
                            f"the server of {self._who()} answered GET {path} with a continue token that "
                            "is not a string."
                        )
                    if nxt and (nxt == cont or nxt in seen):
                        raise ClusterError(
                            f"the server of {self._who()} answered GET {path} with a continue token it had "
                            "given before; the list never ends."
                        )
                    if not nxt:
                        return items, rv
                    seen.add(nxt)
                    cont = nxt
                raise ClusterError(
                    f"the server of {self._who()} answered GET {path} with more than {MAX_PAGES} pages; "
                    "the list never ends."
                )
            except ApiError as exc:
                if exc.status == 410 and cont:
                    continue
                raise
            finally:
                _drop(ahead)
        raise ClusterError(
            f"the list of {path} kept expiring while being paged; the cluster changes faster than it can be read."
        )

    async def _page_bytes(self, path: str, query: Mapping[str, Any], cont: str | None) -> Any:
        """One page of a LIST as its bytes (or {} for an empty body), read as `request` reads it."""
        return await self.request("GET", path, query={**query, "continue": cont}, decoder=_as_bytes)

    def _decode_page(self, raw: Any, path: str, decoder: Any) -> Any:
        if not isinstance(raw, bytes):
            return raw
        try:
            return (decoder or decode)(raw)
        except (ValueError, RecursionError):
            raise ClusterError(
                f"the server of {self._who()} answered GET {path} with something that is not JSON."
            ) from None

    def admit(self, path: str, page: dict, items: list[dict]) -> list[dict]:
        """The items whose fields have the types Kubernetes gives them; the others are left out and remembered as
        notes (kind, name, field), so the model never sees an object that would make it crash."""
        from dragoman.fleet.shapes import shape_problem

        list_kind = page.get("kind")
        default_kind = (
            list_kind[:-4] if isinstance(list_kind, str) and list_kind.endswith("List") and list_kind != "List" else ""
        )
        default_kind = default_kind or _KIND_BY_PATH.get(path.rstrip("/").rsplit("/", 1)[-1], "")
        good = []
        for item in items:
            problem = shape_problem(item, default_kind)
            if problem is None:
                good.append(item)
            else:
                self._note_malformed(item, default_kind, problem)
        return good

    def _note_malformed(self, obj: dict, kind: str, problem: str) -> None:
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
        named = obj.get("kind")
        kind = named if isinstance(named, str) else kind
        ns, name = meta.get("namespace"), meta.get("name")
        who = f"{ns}/{name}" if isinstance(ns, str) and ns else str(name)
        key = f"{kind} {who}"
        self.malformed_count += 1
        if key in self.malformed or len(self.malformed) < MAX_NOTES:
            self.malformed[key] = printable(f"skipped {kind} {who!r} from the server: {problem}.", 300)

    async def watch(
        self,
        path: str,
        resource_version: str,
        *,
        label_selector: str | None = None,
        timeout_seconds: int | None = 300,
        allow_bookmarks: bool = True,
        decoder: ObjectDecoder | None = None,
    ) -> AsyncIterator[tuple[str, dict]]:
        """WATCH a collection from `resource_version`; yields (type, object) including BOOKMARK, and first
        ("OPENED", {}) once the server has accepted the watch.

        `decoder` turns an ADDED, MODIFIED or DELETED event's object bytes into the object (a projecting store's item
        decoder, the same one its LIST pages went through), instead of `decode_object`.

        Raises WatchGone on 410 (status or ERROR event), ApiError for other errors, Unreachable when the stream breaks.
        Ends normally when the server closes the stream (timeoutSeconds).
        """
        query = {
            "watch": True,
            "resourceVersion": resource_version or None,
            "allowWatchBookmarks": allow_bookmarks,
            "labelSelector": label_selector,
            "timeoutSeconds": timeout_seconds,
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
            buf = bytearray()
            inflate = _decompressor(resp.headers.get("Content-Encoding", ""), f"the watch of {path}", self._who())
            try:
                async for raw in resp.content.iter_any():
                    for chunk in (
                        [raw] if inflate is None else _inflate_pieces(inflate, raw, f"the watch of {path}", self._who())
                    ):
                        buf += chunk
                        if b"\n" not in chunk:
                            if len(buf) > MAX_WATCH_LINE:
                                raise Malformed(
                                    f"the watch of {path} on {self._who()} sent a line longer than "
                                    f"{MAX_WATCH_LINE >> 20} MiB; "
                                    "that is not a watch event."
                                )
                            continue
                        *lines, rest = bytes(buf).split(b"\n")
                        buf = bytearray(rest)
                        for line in lines:
                            if line.strip():
                                yield self._event(line, path, decoder)
                if buf.strip():
                    yield self._event(bytes(buf), path, decoder)
            except (aiohttp.ClientPayloadError, aiohttp.ClientOSError, aiohttp.ServerDisconnectedError) as exc:
                raise Unreachable(f"the watch of {path} on {self._who()} broke ({_broke(exc)}).") from None
            except TimeoutError:
                raise Unreachable(f"the watch of {path} on {self._who()} went silent.") from None
        finally:
            resp.close()

    def _event(self, line: bytes, path: str, decoder: ObjectDecoder | None = None) -> tuple[str, dict]:
        if len(line) > MAX_WATCH_LINE:
            raise Malformed(
                f"the watch of {path} on {self._who()} sent a line longer than {MAX_WATCH_LINE >> 20} MiB; "
                "that is not a watch event."
            )
        try:
            try:
                ev = _event_decoder.decode(line)
            except msgspec.DecodeError:
                # Not an object, or JSON only json reads (NaN): the plain path, whose errors say what it is.
                plain = decode(line)
                etype, obj = plain["type"], plain["object"]
            else:
                etype, raw = ev.type, ev.object
                if not raw:
                    raise KeyError("object")
                if decoder is not None and etype in ("ADDED", "MODIFIED", "DELETED"):
                    obj = decoder(raw)
                else:
                    obj = decode_object(raw)
        except (ValueError, KeyError, TypeError, RecursionError):
            raise Malformed(f"the watch of {path} on {self._who()} sent a line that is not a watch event.") from None
        if not isinstance(etype, str) or etype not in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"):
            raise Malformed(
                f"the watch of {path} on {self._who()} sent an event of unknown type {printable(str(etype), 40)!r}."
            )
        if not isinstance(obj, dict):
            raise Malformed(f"the watch of {path} on {self._who()} sent a {etype} event whose object is not an object.")
        if etype == "ERROR":
            code = obj.get("code")
            if code == 410 or obj.get("reason") in ("Expired", "Gone"):
                raise WatchGone(printable(str(obj.get("message") or ""), 300))
            if not isinstance(code, int) or isinstance(code, bool) or not 100 <= code <= 599:
                raise Malformed(
                    f"the watch of {path} on {self._who()} sent an ERROR event whose code "
                    f"{printable(str(code), 40)!r} is not an HTTP status."
                )
            raise ApiError(code, "WATCH", path, obj)
        if etype != "BOOKMARK":
            if not isinstance(obj.get("metadata"), dict):
                raise Malformed(
                    f"the watch of {path} on {self._who()} sent a {etype} event whose object has no metadata."
                )
            from dragoman.fleet.shapes import shape_problem

            kind = _KIND_BY_PATH.get(path.rstrip("/").rsplit("/", 1)[-1], "")
            problem = shape_problem(obj, kind)
            if problem is not None:
                # Skipped like a malformed LIST item; the watch goes on (relisting would fetch the same object).
                self._note_malformed(obj, kind, problem)
                return "SKIPPED", obj
        return etype, obj

    # ------------------------------------------------------------------ facts about the cluster
    async def discover(self) -> None:
        """Fill server_version, resource_api_versions and kube_system_uid."""
        self.version_info = await self.get("/version")
        if not isinstance(self.version_info, dict):
            raise ClusterError(
                f"the server of {self._who()} answered GET /version with something that is not a "
                "Kubernetes version; is this the API server's address?"
            )
        git = self.version_info.get("gitVersion")
        # Shown in headers and written into snapshot comments: one line of printable text, or nothing.
        self.server_version = printable(git, 80) if isinstance(git, str) else ""
        self.resource_api_versions = await self._resource_versions()
        try:
            ns = await self.get("/api/v1/namespaces/kube-system")
            meta = ns.get("metadata") if isinstance(ns, dict) else None
            uid = meta.get("uid") if isinstance(meta, dict) else None
            self.kube_system_uid = uid if isinstance(uid, str) else None
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
            raise ClusterError(
                f"the server of {self._who()} answered GET /apis with something that is not an API group list."
            )
        # Each level is checked for its type: a server answering `groups: "nope"` gets a sentence, not a traceback.
        entries = groups.get("items") if groups.get("kind") == "APIGroupDiscoveryList" else groups.get("groups")
        if entries is not None and not isinstance(entries, list):
            raise ClusterError(
                f"the server of {self._who()} answered GET /apis with something that is not an API group list."
            )
        for g in entries or []:
            if not isinstance(g, dict):
                continue
            meta = g.get("metadata") if groups.get("kind") == "APIGroupDiscoveryList" else g
            name = meta.get("name") if isinstance(meta, dict) else None
            if name == "resource.k8s.io" and isinstance(g.get("versions"), list):
                versions = [
                    v["version"]
                    for v in g["versions"]
                    if isinstance(v, dict) and isinstance(v.get("version"), str) and v["version"]
                ]
        return versions

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self.api_client.close()

    async def __aenter__(self) -> Cluster:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def connect(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    home: str | None = None,
    **resolve_kw: Any,
) -> Cluster:
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
            raise ClusterError(
                f"user {rc.user!r} of context {rc.context!r} may not read the server's version or API "
                f"groups (403 Forbidden): {exc.detail}."
            ) from None
        raise
    except BaseException:
        await cluster.close()
        raise
    return cluster
