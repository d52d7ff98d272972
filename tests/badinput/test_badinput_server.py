"""Bad-input corpus: servers that are not Kubernetes (HTML, garbage, truncated JSON, a slow trickle, a closed socket,
objects of the wrong shape) — `dragoman check` answers each with one sentence and exit 2."""

from __future__ import annotations

import asyncio
import contextlib
import json
import pathlib
import threading
from collections.abc import Iterator

import pytest
from aiohttp import web

from tests.badinput.badinput_support import assert_sentence, kubeconfig_text, run_cli
from tests.support.loopback import serving

VERSION = {"major": "1", "minor": "37", "gitVersion": "v1.37.1"}


def _json(obj: object, status: int = 200) -> web.Response:
    return web.Response(body=json.dumps(obj).encode(), status=status, content_type="application/json")


async def _trickle(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json", "Content-Length": "400"})
    await resp.prepare(request)
    for ch in b'{"major": "1", "minor": "37", ':
        await resp.write(bytes([ch]))
        await asyncio.sleep(0.02)
    # ...and the connection ends before the promised 400 bytes.
    request.transport.close()
    return resp


def _kubeish(lists: object) -> web.RequestHandler:
    """A server with a good /version and discovery whose collections answer `lists`."""

    async def handler(request: web.Request) -> web.StreamResponse:
        if request.path == "/version":
            return _json(VERSION)
        if request.path == "/apis":
            return _json({"kind": "APIGroupList", "groups": []})
        if request.path == "/api/v1/namespaces/kube-system":
            return _json({"kind": "Namespace", "metadata": {"name": "kube-system", "uid": "u"}})
        if isinstance(lists, web.Response):
            return lists
        return _json(lists)

    return handler


def _everything(response: web.Response | None = None, text: str = "", status: int = 200, ctype: str = "text/plain"):
    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(text=text, status=status, content_type=ctype)

    return handler


MODES = {
    "html-200": (
        _everything(text="<html><body><h1>Welcome to nginx!</h1></body></html>", ctype="text/html"),
        ["not json"],
    ),
    "text-200": (_everything(text="hello, I am a printer"), ["not json"]),
    "truncated-json": (_everything(text='{"gitVersion": "v1.3', ctype="application/json"), ["not json"]),
    "html-500": (_everything(text="<html>Internal Server Error</html>", status=500, ctype="text/html"), ["500"]),
    "text-404": (_everything(text="404 page not found", status=404), ["404"]),
    "html-502-proxy": (
        _everything(text="<html><title>502 Bad Gateway</title></html>", status=502, ctype="text/html"),
        ["502"],
    ),
    "401": (
        _everything(text='{"kind":"Status","code":401,"reason":"Unauthorized"}', status=401, ctype="application/json"),
        ["401", "log in again"],
    ),
    "403-version": (
        _everything(
            text='{"kind":"Status","code":403,"reason":"Forbidden","message":"no"}',
            status=403,
            ctype="application/json",
        ),
        ["403"],
    ),
    "version-a-list": (_everything(text="[1, 2, 3]", ctype="application/json"), []),
    "version-a-string": (_everything(text='"v1.37"', ctype="application/json"), []),
    "trickle-then-cut": (_trickle, ["broke"]),
    "lists-html": (_kubeish(web.Response(text="<html>login</html>", content_type="text/html")), ["not json"]),
    "lists-an-array": (_kubeish([1, 2]), []),
    "lists-items-a-string": (_kubeish({"kind": "List", "items": "nope", "metadata": {}}), []),
    "lists-items-of-numbers": (_kubeish({"kind": "List", "items": [1, 2, 3], "metadata": {}}), []),
    "lists-items-without-metadata": (_kubeish({"kind": "List", "items": [{"kind": "Node"}], "metadata": {}}), []),
    "lists-metadata-a-list": (_kubeish({"kind": "List", "items": [], "metadata": ["x"]}), []),
    "lists-continue-forever": (
        _kubeish({"kind": "List", "items": [], "metadata": {"continue": "again", "resourceVersion": "1"}}),
        [],
    ),
}


@contextlib.contextmanager
def raw_tcp(answer: bytes) -> Iterator[str]:
    """A TCP server that writes `answer` (maybe nothing) and closes: not HTTP at all."""
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    stop = threading.Event()

    def loop() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                with contextlib.suppress(OSError):
                    conn.recv(4096)
                    conn.sendall(answer)

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    finally:
        stop.set()
        t.join(5)
        srv.close()


def _kc(tmp_path: pathlib.Path, server: str) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig_text(server))
    return str(path)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_server_that_is_not_kubernetes_gets_one_sentence(tmp_path: pathlib.Path, mode: str) -> None:
    handler, words = MODES[mode]
    with serving(handler) as url:
        code, out, err = run_cli("check", "--kubeconfig", _kc(tmp_path, url))
    assert_sentence(code, err, words=words)
    assert out == ""


@pytest.mark.parametrize(
    "answer",
    [b"", b"SSH-2.0-OpenSSH_9.6\r\n", b"\x00\xff" * 64, b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n{"],
    ids=["closes-at-once", "ssh-banner", "binary", "http-cut-short"],
)
def test_a_socket_that_is_not_http_gets_one_sentence(tmp_path: pathlib.Path, answer: bytes) -> None:
    with raw_tcp(answer) as url:
        code, _out, err = run_cli("check", "--kubeconfig", _kc(tmp_path, url))
    assert_sentence(code, err, words=["server"])


def test_a_tls_server_whose_certificate_is_not_trusted(tmp_path: pathlib.Path) -> None:
    from tests.support.sim import running_simulator

    async def go() -> tuple[int, str, str]:
        async with running_simulator() as sim:
            return await asyncio.to_thread(run_cli, "check", "--kubeconfig", _kc(tmp_path, sim.url))

    code, _out, err = asyncio.run(go())
    assert_sentence(code, err, words=["not trusted"])


def test_a_snapshot_of_a_garbage_server_writes_nothing(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "snap.yaml"
    with serving(_kubeish({"kind": "List", "items": "nope", "metadata": {}})) as url:
        code, _out, err = run_cli("snapshot", str(target), "--kubeconfig", _kc(tmp_path, url))
    assert_sentence(code, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kubeconfig"], "no snapshot and no temporary file"
