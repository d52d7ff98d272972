"""The simulator's store interface, served by a real API server: how the node agents run against real Kubernetes.

The node agents (sim/controllers: kubelet, DRA kubelet plugin, GPU Operator) are written against the embedded
store's small interface — `entries`, `subscribe`, `get`, `get_ref`, `create`, `update`, `patch`, `delete`. This
class gives them the same interface over HTTP: reads come from a mirror kept current by LIST + WATCH (as an
informer's cache is), writes go to the API server and their answers update the mirror at once, so an agent sees its
own write exactly as it does on the embedded store. Watches run in threads and hand their events to the agents'
event loop; writes are synchronous in that loop (the agents have nothing else to do while one is in flight).
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any

import urllib3
from dragoman.fleet import backoff
from dragoman.fleet.k8s.registry import ResourceType
from dragoman.sim import resources
from dragoman.sim.store import ApiError

log = logging.getLogger("dragoman.sim.controlplane")

Subscriber = Callable[[str, str, dict, "dict | None"], None]
# Largest watch line accepted: a ResourceSlice of 128 devices is ~100 KiB; anything past this is not an object.
_MAX_LINE = 32 * 1024 * 1024


class _Entry:
    __slots__ = ("obj",)

    def __init__(self, obj: dict) -> None:
        self.obj = obj


def _rv(obj: dict | None) -> int:
    try:
        return int((obj or {}).get("metadata", {}).get("resourceVersion") or 0)
    except (TypeError, ValueError):
        return 0


def _status(code: int, body: Any, method: str, path: str) -> dict:
    if isinstance(body, dict) and body.get("kind") == "Status":
        return body
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": "Unknown",
        "message": f"{method} {path}: {str(body)[:300]}",
    }


class RemoteStore:
    def __init__(
        self,
        url: str,
        token: str,
        ca_pem: bytes | None,
        mirrored: Iterable[str],
        clock: Any,
        *,
        hidden_nodes: frozenset[str] = frozenset(),
    ) -> None:
        self.url = url.rstrip("/")
        # Nodes a real kubelet runs: the agents never see them, nor the pods bound to them, nor their ResourceSlices.
        self.hidden_nodes = hidden_nodes
        self.clock = clock
        self._headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json",
            "User-Agent": "dragoman-node-agents",
        }
        ctx = ssl.create_default_context(cadata=ca_pem.decode()) if ca_pem else ssl.create_default_context()
        self._http = urllib3.PoolManager(
            ssl_context=ctx, maxsize=32, retries=False, timeout=urllib3.Timeout(connect=10, read=60)
        )
        self._ctx = ctx
        self.mirrored = tuple(mirrored)
        self._data: dict[str, dict[tuple[str, str], dict]] = {r: {} for r in self.mirrored}
        self._subscribers: list[Subscriber] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._list_rv: dict[str, str] = {}
        self.writes = 0

    # ------------------------------------------------------------------ HTTP

    def _rt(self, resource: str) -> ResourceType:
        return resources.lookup(resource)

    def _path(self, resource: str, namespace: str | None, name: str | None = None, sub: str | None = None) -> str:
        rt = self._rt(resource)
        p = rt.collection_path((namespace or "default") if rt.namespaced else None)
        if name:
            p += "/" + urllib.parse.quote(name)
        if sub:
            p += "/" + sub
        return p

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        query: dict | None = None,
    ) -> dict:
        headers = dict(self._headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        try:
            resp = self._http.request(method, url, body=data, headers=headers)
        except urllib3.exceptions.HTTPError as exc:
            raise ApiError(
                {"kind": "Status", "code": 503, "reason": "ServiceUnavailable", "message": f"{method} {path}: {exc}"}
            ) from None
        try:
            decoded = json.loads(resp.data) if resp.data else {}
        except ValueError:
            decoded = resp.data.decode(errors="replace")
        if resp.status >= 400:
            raise ApiError(_status(resp.status, decoded, method, path))
        if not isinstance(decoded, dict):
            # A server that answers 200 with HTML or a truncated body (dying, or not an API server): a 500 the
            # callers handle, not an AttributeError on the first .get().
            raise ApiError(
                {
                    "kind": "Status",
                    "code": 500,
                    "reason": "InternalError",
                    "message": f"{method} {path}: the answer is not a JSON object ({len(resp.data)} bytes)",
                }
            )
        return decoded

    # ------------------------------------------------------------------ mirror

    def start_lists(self) -> None:
        """LIST every mirrored kind (the agents start on a full cache, as an informer's HasSynced promises)."""
        for resource in self.mirrored:
            self._relist(resource, notify=False)

    def start_watches(self, loop: asyncio.AbstractEventLoop) -> None:
        """WATCH each mirrored kind from its LIST's resourceVersion, in a thread; events reach `loop`."""
        self._loop = loop
        for resource in self.mirrored:
            t = threading.Thread(target=self._watch_loop, args=(resource,), name=f"watch:{resource}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self) -> None:
        self._stopping.set()

    def _relist(self, resource: str, notify: bool) -> None:
        items: list[dict] = []
        query: dict[str, Any] = {"limit": 500}
        while True:
            out = self._call("GET", self._rt(resource).collection_path(), query=query)
            rt = self._rt(resource)
            for item in out.get("items") or ():
                if not isinstance(item, dict) or not isinstance(item.get("metadata"), dict):
                    continue  # not an object: nothing a kubelet or a plugin could act on
                item.setdefault("apiVersion", rt.api_version)
                item.setdefault("kind", rt.kind)
                items.append(item)
            cont = (out.get("metadata") or {}).get("continue")
            if not cont:
                break
            query = {"limit": 500, "continue": cont}
        self._list_rv[resource] = (out.get("metadata") or {}).get("resourceVersion") or ""
        fresh = {
            (i["metadata"].get("namespace", ""), i["metadata"]["name"]): i
            for i in items
            if not self._hidden(resource, i)
        }
        if not notify:
            self._data[resource] = fresh
            return

        # A relist after a broken watch: tell subscribers what changed meanwhile, as an informer's resync does.
        def deliver() -> None:
            old = self._data[resource]
            for key, obj in fresh.items():
                prev = old.get(key)
                if prev is None or _rv(obj) > _rv(prev):
                    self._apply("ADDED" if prev is None else "MODIFIED", resource, obj)
            for key in [k for k in old if k not in fresh]:
                self._apply("DELETED", resource, old[key])

        self._post(deliver)

    def _post(self, fn: Callable[[], None]) -> None:
        if self._loop is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(fn)
            except RuntimeError:  # the loop closed between the check and the call
                pass

    def _watch_loop(self, resource: str) -> None:
        rt = self._rt(resource)
        failures = 0  # in a row; the wait doubles from 0.2 s to 5 s
        while not self._stopping.is_set():
            rv = self._list_rv.get(resource, "")
            query = {"watch": "1", "allowWatchBookmarks": "true", "timeoutSeconds": "240", "resourceVersion": rv}
            url = self.url + rt.collection_path() + "?" + urllib.parse.urlencode(query)
            try:
                resp = self._http.request(
                    "GET",
                    url,
                    headers=self._headers,
                    preload_content=False,
                    timeout=urllib3.Timeout(connect=10, read=300),
                )
                if resp.status == 410:
                    resp.release_conn()
                    self._relist(resource, notify=True)
                    continue
                if resp.status >= 400:
                    body = resp.read()[:300]
                    resp.release_conn()
                    raise RuntimeError(f"watch {resource}: HTTP {resp.status} {body!r}")
                buf = b""
                for chunk in resp.stream(65536):
                    if self._stopping.is_set():
                        break
                    buf += chunk
                    if len(buf) > _MAX_LINE:
                        raise RuntimeError(f"watch {resource}: a line over {_MAX_LINE} bytes")
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        if line.strip():
                            self._on_line(resource, rt, line)
                resp.release_conn()
                failures = 0
            except _Gone:
                try:
                    self._relist(resource, notify=True)
                except Exception as exc:  # noqa: BLE001 - retried after the backoff
                    log.debug("relist %s failed: %s", resource, exc)
                    time.sleep(backoff.delay(failures, 0.2, 5.0))
            except Exception as exc:  # noqa: BLE001 - a broken watch is reopened, below
                if self._stopping.is_set():
                    return
                wait = backoff.delay(failures, 0.2, 5.0)
                log.debug("watch %s broke: %s; retrying in %.1fs", resource, exc, wait)
                time.sleep(wait)
                failures += 1

    def _on_line(self, resource: str, rt: ResourceType, line: bytes) -> None:
        ev = json.loads(line)
        etype, obj = ev.get("type"), ev.get("object") or {}
        if etype == "ERROR":
            if obj.get("code") == 410:
                raise _Gone()
            raise RuntimeError(f"watch {resource}: {obj.get('message')}")
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if rv:
            self._list_rv[resource] = rv
        if etype == "BOOKMARK":
            return
        obj.setdefault("apiVersion", rt.api_version)
        obj.setdefault("kind", rt.kind)
        self._post(lambda: self._apply(etype, resource, obj))

    def _hidden(self, resource: str, obj: dict) -> bool:
        if not self.hidden_nodes:
            return False
        if resource == "nodes":
            return obj["metadata"].get("name") in self.hidden_nodes
        if resource in ("pods", "resourceslices.resource.k8s.io"):
            return (obj.get("spec") or {}).get("nodeName") in self.hidden_nodes
        return False

    def _apply(self, etype: str, resource: str, obj: dict) -> None:
        """Put one object into the mirror (never going back to an older resourceVersion) and tell subscribers."""
        table = self._data.get(resource)
        if table is None or self._hidden(resource, obj):
            return
        md = obj["metadata"]
        key = (md.get("namespace", ""), md["name"])
        old = table.get(key)
        if etype == "DELETED":
            if old is None or _rv(obj) < _rv(old):
                return
            del table[key]
        else:
            if old is not None and _rv(obj) <= _rv(old):
                return
            table[key] = obj
        for cb in list(self._subscribers):
            try:
                cb(etype, resource, obj if etype != "DELETED" else (old or obj), old)
            except Exception:
                log.exception("subscriber failed on %s %s", etype, resource)

    # ------------------------------------------------------------------ the store interface

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def entries(self, resource: str, namespace: str | None = None) -> list[_Entry]:
        key = self._rt(resource).key
        if key not in self._data:
            return []
        return [_Entry(o) for (ns, _), o in self._data[key].items() if not namespace or ns == namespace]

    def get_ref(self, resource: str, namespace: str | None, name: str) -> dict | None:
        rt = self._rt(resource)
        if rt.key in self._data:
            return self._data[rt.key].get(((namespace or "default") if rt.namespaced else "", name))
        try:
            return self._call("GET", self._path(resource, namespace, name))
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    def get(self, resource: str, namespace: str | None, name: str) -> dict | None:
        obj = self.get_ref(resource, namespace, name)
        return copy.deepcopy(obj) if obj is not None else None

    def _after_write(self, resource: str, obj: dict, etype: str = "MODIFIED") -> dict:
        self.writes += 1
        rt = self._rt(resource)
        if rt.key in self._data and isinstance(obj, dict) and obj.get("metadata"):
            obj.setdefault("apiVersion", rt.api_version)
            obj.setdefault("kind", rt.kind)
            self._apply(etype, rt.key, obj)
            return copy.deepcopy(obj)
        return obj

    def create(self, resource: str, obj: dict, *, namespace: str | None = None, **_: Any) -> dict:
        ns = namespace or obj.get("metadata", {}).get("namespace")
        out = self._call("POST", self._path(resource, ns), obj)
        return self._after_write(resource, out, "ADDED")

    def update(self, resource: str, obj: dict, subresource: str | None = None, **_: Any) -> dict:
        md = obj["metadata"]
        out = self._call("PUT", self._path(resource, md.get("namespace"), md["name"], subresource), obj)
        return self._after_write(resource, out)

    def patch(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: str = "merge",
        subresource: str | None = None,
        **_: Any,
    ) -> tuple[dict, bool]:
        ct = {
            "merge": "application/merge-patch+json",
            "strategic": "application/strategic-merge-patch+json",
            "json": "application/json-patch+json",
            "apply": "application/apply-patch+yaml",
        }[patch_type]
        query = {"fieldManager": "dragoman-node-agents", "force": "true"} if patch_type == "apply" else None
        out = self._call(
            "PATCH", self._path(resource, namespace, name, subresource), patch, content_type=ct, query=query
        )
        return self._after_write(resource, out), False

    def delete(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        preconditions: dict | None = None,
        propagation_policy: str | None = None,
        **_: Any,
    ) -> tuple[dict, bool]:
        opts: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace_period_seconds is not None:
            opts["gracePeriodSeconds"] = grace_period_seconds
        if preconditions:
            opts["preconditions"] = preconditions
        if propagation_policy:
            opts["propagationPolicy"] = propagation_policy
        out = self._call("DELETE", self._path(resource, namespace, name), opts)
        self.writes += 1
        gone = not (
            isinstance(out, dict)
            and (out.get("metadata") or {}).get("deletionTimestamp")
            and out.get("kind") != "Status"
        )
        return out, gone


class _Gone(Exception):
    """The watch's resourceVersion is compacted (410): relist."""
