"""Protobuf request bodies as real kubectl v1.37.1 sends them (bytes captured from `auth can-i` and drain's DELETE
fallback)."""

from __future__ import annotations

import pytest
from dragoman.sim.api.protobuf import ProtobufError, decode_request, encode_request, is_protobuf

# Captured from kubectl v1.37.1 against a logging server.
CAN_I_EVICTION = bytes.fromhex(
    "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a65637441636365737352657669657712460a100a"
    "0012001a0022002a0032003800420012280a260a067465616d2d6112066372656174651a0022002a04706f647332086576696374696f6e3a001a0808"
    "0012001a0020001a002200"
)  # kubectl auth can-i create pods --subresource=eviction -n team-a
CAN_I_METRICS = bytes.fromhex(
    "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a656374416363657373526576696577122f0a100a"
    "0012001a0022002a003200380042001211120f0a082f6d65747269637312036765741a08080012001a0020001a002200"
)  # kubectl auth can-i get /metrics
CAN_I_NAMED = (
    b'k8s\x00\n2\n\x17authorization.k8s.io/v1\x12\x17SelfSubjectAccessReview\x12D\n\x10\n\x00\x12\x00\x1a\x00"\x00*\x00'
    b'2\x008\x00B\x00\x12&\n$\n\x07default\x12\x04list\x1a\x00"\x00*\x05nodes2\x00:\x06mynode\x1a\x08\x08\x00'
    b"\x12\x00\x1a\x00 "
    b'\x00\x1a\x00"\x00'
)  # kubectl auth can-i list nodes/mynode
# drain --grace-period=7 without eviction support
DRAIN_DELETE = b'k8s\x00\n\x13\n\x02v1\x12\rDeleteOptions\x12\x02\x08\x07\x1a\x00"\x00'


def test_is_protobuf():
    assert is_protobuf(CAN_I_EVICTION) and is_protobuf(DRAIN_DELETE)
    assert not is_protobuf(b'{"kind":"DeleteOptions"}') and not is_protobuf(b"")


def test_can_i_eviction():
    assert decode_request(CAN_I_EVICTION) == {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "metadata": {},
        "spec": {
            "resourceAttributes": {
                "namespace": "team-a",
                "verb": "create",
                "resource": "pods",
                "subresource": "eviction",
            }
        },
    }


def test_can_i_non_resource_and_named():
    assert decode_request(CAN_I_METRICS)["spec"] == {"nonResourceAttributes": {"path": "/metrics", "verb": "get"}}
    assert decode_request(CAN_I_NAMED)["spec"]["resourceAttributes"] == {
        "namespace": "default",
        "verb": "list",
        "resource": "nodes",
        "name": "mynode",
    }


def test_drain_delete_options():
    assert decode_request(DRAIN_DELETE) == {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 7}


def hand_built_ssar_with_selectors() -> bytes:
    # Built by hand from authorization/v1 generated.proto field numbers.
    def ld(num: int, payload: bytes) -> bytes:
        return bytes([(num << 3) | 2, len(payload)]) + payload

    requirement = ld(1, b"tier") + ld(2, b"In") + ld(3, b"a") + ld(3, b"b")
    label_selector = ld(1, b"app=x") + ld(2, requirement)
    field_selector = ld(1, b"spec.nodeName=n1")
    attrs = ld(1, b"default") + ld(2, b"list") + ld(5, b"pods") + ld(8, field_selector) + ld(9, label_selector)
    raw = ld(2, ld(1, attrs))
    type_meta = ld(1, b"authorization.k8s.io/v1") + ld(2, b"SelfSubjectAccessReview")
    return b"k8s\x00" + ld(1, type_meta) + ld(2, raw)


def test_selectors_are_decoded():
    attrs = decode_request(hand_built_ssar_with_selectors())["spec"]["resourceAttributes"]
    assert attrs["fieldSelector"] == {"rawSelector": "spec.nodeName=n1"}
    assert attrs["labelSelector"] == {
        "rawSelector": "app=x",
        "requirements": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
    }


@pytest.mark.parametrize(
    "obj",
    [
        {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "gracePeriodSeconds": 0,
            "propagationPolicy": "Foreground",
            "dryRun": ["All"],
            "preconditions": {"uid": "u1", "resourceVersion": "5"},
        },
        {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "b"}},
            "deleteOptions": {"gracePeriodSeconds": 3},
        },
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "metadata": {},
            "spec": {
                "resourceAttributes": {
                    "verb": "get",
                    "group": "resource.k8s.io",
                    "resource": "deviceclasses",
                    "name": "x",
                }
            },
        },
    ],
)
def test_round_trip(obj):
    assert decode_request(encode_request(obj)) == obj


@pytest.mark.parametrize(
    "body",
    [b"k8s\x00\x0a\xff", b"k8s\x00\x0a\x05ab", b"nope", b"k8s\x00\x0a\x0b\x0a\x02v1\x12\x05Other", b"k8s\x00\x07"],
)
def test_malformed_bodies_raise(body):
    with pytest.raises(ProtobufError):
        decode_request(body)


@pytest.mark.kubectl
async def test_real_kubectl_can_i_body_decodes(tmp_path):
    """Real kubectl posts its review as protobuf; the decoder reads what it sent, and a JSON answer satisfies it."""
    import asyncio
    import os

    from aiohttp import web

    from tests.support.kubectl import ensure_binary

    kubectl = ensure_binary("kubectl")
    seen: list[dict] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if request.path.endswith("/selfsubjectaccessreviews"):
            review = decode_request(body)
            seen.append(review)
            attrs = review["spec"]["resourceAttributes"]
            allowed = attrs.get("subresource") == "eviction" and attrs.get("namespace") == "team-a"
            return web.json_response(
                {**review, "status": {"allowed": allowed, "reason": "decided by test"}}, status=201
            )
        if request.path == "/api":
            return web.json_response({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})
        if request.path == "/apis":
            return web.json_response({"kind": "APIGroupList", "apiVersion": "v1", "groups": []})
        if request.path == "/api/v1":
            return web.json_response(
                {
                    "kind": "APIResourceList",
                    "groupVersion": "v1",
                    "resources": [
                        {
                            "name": "pods",
                            "singularName": "pod",
                            "namespaced": True,
                            "kind": "Pod",
                            "verbs": ["create", "get", "list"],
                        }
                    ],
                }
            )
        return web.json_response(
            {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404, "reason": "NotFound"}, status=404
        )

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        f"apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
    )
    env = dict(os.environ, KUBECONFIG=str(kubeconfig), HOME=str(tmp_path))
    try:
        results = []
        for ns in ("team-a", "team-b"):
            proc = await asyncio.create_subprocess_exec(
                str(kubectl),
                "auth",
                "can-i",
                "create",
                "pods",
                "--subresource=eviction",
                "-n",
                ns,
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            out, _ = await asyncio.wait_for(proc.communicate(), timeout=120)
            results.append((proc.returncode, out.decode()))
    finally:
        await runner.cleanup()
    assert results[0][0] == 0 and results[0][1].strip() == "yes"
    assert results[1][0] == 1 and results[1][1].startswith("no")
    assert seen[0]["spec"]["resourceAttributes"] == {
        "namespace": "team-a",
        "verb": "create",
        "resource": "pods",
        "subresource": "eviction",
    }
