"""A hostile API server on loopback for the bad-input corpus (issue 19): each mode answers with one malformed shape a
broken proxy, a misconfigured address or a malicious server can send. Good answers elsewhere, so each mode tests
exactly one thing. `serve(mode)` yields the http:// address; `kubeconfig(tmp, url)` a kubeconfig pointing at it."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import pathlib
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from aiohttp import web

from tests.badinput.badinput_support import kubeconfig_text
from tests.support.loopback import serving

VERSION = {"major": "1", "minor": "37", "gitVersion": "v1.37.1"}
NODE_OK = {"metadata": {"name": "good-node", "resourceVersion": "5", "labels": {"pool": "a"}}, "spec": {}, "status": {}}


def _json(obj: Any, status: int = 200, headers: dict | None = None) -> web.Response:
    return web.Response(body=json.dumps(obj).encode(), status=status, content_type="application/json", headers=headers)


def _list(items: list, kind: str = "List", **meta: Any) -> dict:
    return {"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": "10", **meta}, "items": items}


async def _endless(
    request: web.Request, piece: bytes = b'{"a": "' + b"x" * 65536, *, newline: bool = False
) -> web.StreamResponse:
    resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    await resp.prepare(request)
    with contextlib.suppress(ConnectionError, RuntimeError):
        while True:
            await resp.write(piece)
            await asyncio.sleep(0)
    return resp


async def _drip(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    await resp.prepare(request)
    with contextlib.suppress(ConnectionError, RuntimeError):
        while True:
            await resp.write(b" ")
            await asyncio.sleep(0.2)
    return resp


_BOMBS: dict[int, bytes] = {}


def gzip_bomb(size: int = 64 << 20) -> bytes:
    """`size` bytes of "0" gzipped into about a thousandth of that (64 MB, the default, is 16 times the bound on
    /version; 512 MB twice the bound on a LIST page). One MiB is deflated once and its block repeated (a full flush
    makes each copy stand alone), so a large bomb costs no more to make than a small one."""
    if size not in _BOMBS:
        chunk = b"0" * (1 << 20)
        deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        block = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
        crc = 0
        for _ in range(size >> 20):
            crc = zlib.crc32(chunk, crc)
        header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
        trailer = struct.pack("<II", crc, size & 0xFFFFFFFF)
        _BOMBS[size] = header + block * (size >> 20) + deflate.flush() + trailer
    return _BOMBS[size]


LIST_BOMB = 512 << 20  # twice the real bound on one LIST page (fleet/cluster.py MAX_BODY)


async def _hostile_list(request: web.Request, mode: str) -> web.StreamResponse:
    """A LIST answered in a hostile encoding: gzip that is corrupt, cut short, a bomb or not gzip at all, or an
    encoding that was not asked for (dragoman asks for gzip only)."""
    plain = json.dumps(_list([NODE_OK] if request.path == "/api/v1/nodes" else [])).encode()
    packed = gzip.compress(plain)
    gz = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    if mode == "list-gzip-corrupt":
        middle = len(packed) // 2  # inside the deflate data: the header reads, then the data does not
        return web.Response(body=packed[:middle] + b"\xff" * 16 + packed[middle + 16 :], headers=gz)
    if mode == "list-gzip-truncated":  # a complete HTTP answer whose gzip stream stops halfway
        return web.Response(body=packed[: len(packed) // 2], headers=gz)
    if mode == "list-gzip-no-trailer":  # every byte of the JSON, but not the gzip trailer that checks them
        return web.Response(body=packed[:-8], headers=gz)
    if mode == "list-cut-mid-stream":  # the connection closes before the Content-Length promised is sent
        resp = web.StreamResponse(headers={**gz, "Content-Length": str(len(packed))})
        with contextlib.suppress(ConnectionError):  # a page asked for ahead finds the connection closing
            await resp.prepare(request)
            await resp.write(packed[: len(packed) // 2])
        if request.transport is not None:
            request.transport.close()
        return resp
    if mode == "list-gzip-bomb":
        return web.Response(body=gzip_bomb(LIST_BOMB), headers=gz)
    if mode == "list-gzip-plain":  # says gzip, sends the JSON as it is
        return web.Response(body=plain, headers=gz)
    if mode in ("list-br", "list-zstd"):
        encoding = mode.removeprefix("list-")
        return web.Response(body=b"\x28\xb5\x2f\xfd" + plain, headers={**gz, "Content-Encoding": encoding})
    raise AssertionError(f"no such LIST mode: {mode}")


class Hostile:
    """State shared by one server's handlers (counts of requests, for "401 then 200" and to prove a redirect
    unfollowed)."""

    def __init__(self, mode: str, redirect_to: str = "http://127.0.0.1:9") -> None:
        self.mode = mode
        self.redirect_to = redirect_to
        self.hits: dict[str, int] = {}
        self.auth: list[str] = []  # the Authorization header of each request ("" when none)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path, mode = request.path, self.mode
        self.hits[path] = self.hits.get(path, 0) + 1
        self.auth.append(request.headers.get("Authorization", ""))
        watch = request.query.get("watch") in ("true", "1")
        # ---- /version
        if path == "/version":
            if mode == "endless-version":
                return await _endless(request)
            if mode == "gzip-bomb":
                return web.Response(
                    body=gzip_bomb(), headers={"Content-Type": "application/json", "Content-Encoding": "gzip"}
                )
            if mode == "slow-drip":
                return await _drip(request)
            if mode == "html-200":
                return web.Response(text="<html><body>Sign in</body></html>", content_type="text/html")
            if mode == "truncated-json":
                return web.Response(text='{"gitVersion": "v1.3', content_type="application/json")
            if mode == "protobuf":
                return web.Response(
                    body=b"k8s\x00\n\x0f\x12\x0bv1.37", content_type="application/vnd.kubernetes.protobuf"
                )
            if mode in ("redirect", "redirect-to-http"):
                target = self.redirect_to
                return web.Response(status=302, headers={"Location": f"{target}/version"})
            if mode == "brotli":
                return web.Response(
                    body=b"\x1b\x00", headers={"Content-Type": "application/json", "Content-Encoding": "br"}
                )
            if mode == "version-injection":
                return _json({**VERSION, "gitVersion": "v1.37.1\nitems:\n- kind: Secret\n  metadata: {name: injected}"})
            if mode == "401-then-200" and self.hits[path] == 1:
                return _json({"kind": "Status", "code": 401, "reason": "Unauthorized"}, 401)
            if mode == "retry-after-nan":
                return _json({"kind": "Status", "code": 503}, 503, headers={"Retry-After": "nan"})
            return _json(VERSION)
        if path == "/apis":
            if mode == "discovery-groups-a-string":
                return _json({"kind": "APIGroupList", "groups": "nope"})
            if mode == "discovery-metadata-a-string":
                return _json(
                    {"kind": "APIGroupDiscoveryList", "items": [{"metadata": "resource.k8s.io", "versions": 5}]}
                )
            return _json({"kind": "APIGroupList", "groups": []})
        if path == "/api/v1/namespaces/kube-system":
            return _json({"kind": "Namespace", "metadata": {"name": "kube-system", "uid": "u-1"}})
        if path == "/api/v1/nodes/good-node":  # migrate --plan reads each node of the pool again
            if mode == "node-get-a-list":  # a proxy that answers the object's GET with its collection
                return _json(_list([NODE_OK], kind="NodeList"))
            return _json({"kind": "Node", "apiVersion": "v1", **NODE_OK})
        if path.startswith("/api/v1/namespaces/"):
            return _json({"kind": "Namespace", "metadata": {"name": path.rsplit("/", 1)[-1], "uid": "u-2"}})
        # ---- collections
        if watch:
            return await self.watch(request)
        if mode == "continue-cycle":
            nxt = {"": "A", "A": "B", "B": "A"}[request.query.get("continue", "")]
            return _json(
                {
                    "kind": "List",
                    "apiVersion": "v1",
                    "metadata": {"resourceVersion": "10", "continue": nxt},
                    "items": [],
                }
            )
        if mode == "endless-list":
            return await _endless(request)
        if mode.startswith("list-"):
            return await _hostile_list(request, mode)
        if path == "/api/v1/nodes":
            bad = {
                "node-labels-a-list": {"metadata": {"name": "bad-node", "labels": ["pool", "a"]}},
                "node-pool-label-an-integer": {"metadata": {"name": "bad-node", "labels": {"pool": 7}}},
                "node-kubelet-version-a-number": {
                    "metadata": {"name": "bad-node"},
                    "status": {"nodeInfo": {"kubeletVersion": 1.37}},
                },
                "node-name-with-escapes": {
                    "metadata": {"name": "evil\x1b[2J\x00\nnode", "labels": {"pool": "p\x1b[31m"}},
                    "status": {"allocatable": {"nvidia.com/gpu": "8"}},
                },
            }.get(mode)
            return _json(_list([NODE_OK] + ([bad] if bad else [])))
        if path == "/api/v1/pods" and mode == "pod-nodename-a-list":
            return _json(_list([{"metadata": {"name": "bad-pod", "namespace": "ns"}, "spec": {"nodeName": ["x"]}}]))
        if path.endswith("/resourceslices") and mode == "slice-pool-a-list":
            return _json(
                _list([{"metadata": {"name": "bad-slice"}, "spec": {"driver": "gpu.nvidia.com", "pool": [1]}}])
            )
        return _json(_list([]))

    async def watch(self, request: web.Request) -> web.StreamResponse:
        mode = self.mode
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        await resp.prepare(request)
        with contextlib.suppress(ConnectionError, RuntimeError):
            if request.path == "/api/v1/nodes":
                if mode == "watch-endless-line":
                    while True:
                        await resp.write(b'{"type":"ADDED","object":{"metadata":{"name":"' + b"n" * 65536)
                        await asyncio.sleep(0)
                if mode == "watch-error-code-not-a-number":
                    await resp.write(b'{"type":"ERROR","object":{"kind":"Status","code":"teapot","message":"x"}}\n')
                if mode == "watch-object-not-an-object":
                    await resp.write(b'{"type":"MODIFIED","object":"surprise"}\n')
                if mode == "watch-malformed-node":
                    # One node of the wrong shape, then a good one: the first is skipped, the watch goes on.
                    for meta in (
                        {"name": "late-bad", "labels": [1], "resourceVersion": "11"},
                        {"name": "late-good", "resourceVersion": "12"},
                    ):
                        node = {"kind": "Node", "apiVersion": "v1", "metadata": meta}
                        await resp.write(json.dumps({"type": "ADDED", "object": node}).encode() + b"\n")
            while True:  # then quiet, as a watch with nothing happening is
                await asyncio.sleep(1)
        return resp


@contextlib.contextmanager
def serve(mode: str, *, redirect_to: str = "http://127.0.0.1:9") -> Iterator[tuple[str, Hostile]]:
    """The hostile server in its own thread and loop on a free loopback port: (http:// address, its state)."""
    hostile = Hostile(mode, redirect_to)
    if mode in ("gzip-bomb", "list-gzip-bomb"):
        gzip_bomb(LIST_BOMB if mode == "list-gzip-bomb" else 64 << 20)  # made before serving: no request waits on it
    with serving(hostile.handle) as url:
        yield url, hostile


def kubeconfig(tmp: pathlib.Path, url: str, *, user: str = "  token: abc\n", name: str = "kubeconfig") -> str:
    path = tmp / name
    path.write_text(kubeconfig_text(url, user=user))
    return str(path)


def exec_user(tmp: pathlib.Path, token: str = "from-plugin") -> str:
    """A kubeconfig user whose exec plugin prints a token (refreshable: a 401 makes dragoman ask it again)."""
    plugin = tmp / "plugin.py"
    plugin.write_text(
        "import json\nprint(json.dumps({'kind': 'ExecCredential', 'apiVersion': 'client.authentication.k8s.io/v1',"
        f" 'status': {{'token': {token!r}}}}}))\n"
    )
    import sys

    return (
        f"  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    command: {sys.executable}\n"
        f"    args: [{str(plugin)!r}]\n    interactiveMode: Never\n"
    )


Mode = Callable[..., Any]
