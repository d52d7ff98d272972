"""Cluster.list_all asks for the next page before decoding the current one (the server prepares it meanwhile), uses
that early request only when the decoded page names the same continue token, and each request is sent without a
trip through a worker thread (no per-request proxy/.netrc lookups)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from aiohttp import web
from dragoman.fleet.cluster import _continue_ahead, connect, decode

from tests.badinput.badinput_support import kubeconfig_text
from tests.support.loopback import serving

PAGES = {"": "t1", "t1": "t2", "t2": ""}  # continue token asked -> token of the page sent back ("" ends the list)


class Pager:
    """An API server (served from its own thread: tests.support.loopback) with /api/v1/pods in three pages; it notes
    when each page was asked for."""

    def __init__(self, decoy: bool = False) -> None:
        # decoy: the list's metadata is written twice; the bytes before the items name a token the page does not
        # (JSON readers keep the last), so an early request made on that guess must be dropped.
        self.decoy = decoy
        self.asked: list[tuple[str, float]] = []
        self.auth: list[str] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.auth.append(request.headers.get("Authorization", ""))
        path = request.path
        if path == "/version":
            return web.json_response({"major": "1", "minor": "37", "gitVersion": "v1.37.2"})
        if path == "/apis":
            return web.json_response({"kind": "APIGroupList", "groups": []})
        if path == "/api/v1/namespaces/kube-system":
            return web.json_response({"kind": "Namespace", "metadata": {"name": "kube-system", "uid": "u"}})
        cont = request.query.get("continue", "")
        self.asked.append((cont, time.monotonic()))
        if cont not in PAGES:
            return web.json_response({"kind": "Status", "code": 410, "reason": "Expired"}, status=410)
        nxt = PAGES[cont]
        items = [
            {"metadata": {"name": f"p-{cont or 't0'}-{i}", "namespace": "ns", "resourceVersion": "9"}} for i in range(3)
        ]
        meta = json.dumps({"resourceVersion": "9", **({"continue": nxt} if nxt else {})})
        head = '{"kind":"PodList","apiVersion":"v1","metadata":'
        if self.decoy and nxt:
            body = f'{head}{{"continue":"decoy-{nxt}"}},"items":{json.dumps(items)},"metadata":{meta}}}'
        else:
            body = f'{head}{meta},"items":{json.dumps(items)}}}'
        return web.Response(body=body.encode(), content_type="application/json")


def _slow_decoder(spans: list[tuple[float, float]]):
    def slow(raw: bytes) -> object:
        start = time.monotonic()
        time.sleep(0.3)  # a big page's decoding, holding the client's loop (the server's thread runs meanwhile)
        page = decode(raw)
        spans.append((start, time.monotonic()))
        return page

    return slow


async def test_the_next_page_is_asked_for_while_this_one_is_decoded(tmp_path) -> None:
    pager = Pager()
    with serving(pager.handle) as url:
        (tmp_path / "kc").write_text(kubeconfig_text(url))
        cluster = await connect(str(tmp_path / "kc"), None)
        try:
            spans: list[tuple[float, float]] = []
            items, rv = await cluster.list_all("/api/v1/pods", limit=3, decoder=_slow_decoder(spans))
        finally:
            await cluster.close()
    assert rv == "9" and len(items) == 9 and len({i["metadata"]["name"] for i in items}) == 9
    assert [c for c, _ in pager.asked] == ["", "t1", "t2"]  # each page once
    # Pages 2 and 3 reached the server before the page before them was decoded (0.3 s each).
    for (_, asked), (_start, end) in zip(pager.asked[1:], spans[:2], strict=True):
        assert asked < end - 0.2


async def test_a_guess_the_decoded_page_does_not_confirm_is_dropped(tmp_path) -> None:
    pager = Pager(decoy=True)
    with serving(pager.handle) as url:
        (tmp_path / "kc").write_text(kubeconfig_text(url))
        cluster = await connect(str(tmp_path / "kc"), None)
        try:
            items, _rv = await cluster.list_all("/api/v1/pods", limit=3)
        finally:
            await cluster.close()
    assert sorted(i["metadata"]["name"] for i in items) == sorted(
        f"p-{c}-{i}" for c in ("t0", "t1", "t2") for i in range(3)
    )
    asked = [c for c, _ in pager.asked]
    # The decoys were asked for early (and answered 410, unread), the real tokens after each page was decoded.
    assert [c for c in asked if not c.startswith("decoy-")] == ["", "t1", "t2"]
    assert {c for c in asked if c.startswith("decoy-")} <= {"decoy-t1", "decoy-t2"}


@pytest.mark.parametrize(
    ("raw", "token"),
    [
        (b'{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5","continue":"abc"},"items":[]}', "abc"),
        (b'{"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[{}]}', None),
        (b'{"items":[],"metadata":{"continue":"late"}}', None),  # the items first: no guess
        (b'{"metadata":{"continue":5},"items":[]}', None),
        (b'{"metadata":"x","items":[]}', None),
        (b'{"metadata":{"continue":"\\"items\\""},"items":[]}', '"items"'),
        (b"[1, 2]", None),
        ({}, None),
    ],
)
def test_the_continue_token_is_read_from_the_bytes_before_the_items(raw: object, token: str | None) -> None:
    assert _continue_ahead(raw) == token


async def test_each_request_is_sent_without_a_worker_thread_and_netrc_is_never_read(tmp_path, monkeypatch) -> None:
    """kubectl reads no ~/.netrc; aiohttp's trust_env did, per request, in a worker thread."""
    monkeypatch.setenv("NETRC", str(tmp_path / "netrc"))
    (tmp_path / "netrc").write_text("machine 127.0.0.1 login someone password from-netrc\n")
    (tmp_path / "netrc").chmod(0o600)
    monkeypatch.delenv("HTTP_PROXY", raising=False)
    monkeypatch.delenv("http_proxy", raising=False)
    pager = Pager()
    with serving(pager.handle) as url:
        (tmp_path / "kc").write_text(kubeconfig_text(url))
        cluster = await connect(str(tmp_path / "kc"), None)
        try:
            loop = asyncio.get_running_loop()
            hops: list[object] = []
            real = loop.run_in_executor

            def counting(executor, func, *args):  # type: ignore[no-untyped-def]
                hops.append(func)
                return real(executor, func, *args)

            monkeypatch.setattr(loop, "run_in_executor", counting)
            items, _rv = await cluster.list_all("/api/v1/pods", limit=3)
        finally:
            await cluster.close()
    assert len(items) == 9
    assert hops == []
    assert pager.auth and all(a == "Bearer abc" for a in pager.auth)  # the kubeconfig's token, never netrc's


async def test_the_proxy_the_environment_names_is_still_used(tmp_path, monkeypatch) -> None:
    """HTTP(S)_PROXY and NO_PROXY are read once for the server (as kubectl does), no longer per request."""
    pager = Pager()
    with serving(pager.handle) as proxy:
        for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("http_proxy", proxy)
        # A name that resolves nowhere: only a request handed to the proxy can reach an answer.
        (tmp_path / "kc").write_text(kubeconfig_text("http://api.cluster.invalid:6443"))
        cluster = await connect(str(tmp_path / "kc"), None)
        try:
            items, _rv = await cluster.list_all("/api/v1/pods", limit=3)
        finally:
            await cluster.close()
    assert len(items) == 9 and cluster.server_version == "v1.37.2"
