"""OpenAPI v3 documents satisfy kubectl-wire.md's rules; real kubectl explains and applies with them (throwaway
server)."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from dragoman.fleet.k8s import registry
from dragoman.sim.api import openapi
from dragoman.sim.api.patch import ApplyConflict, apply_strategic_merge_patch, server_side_apply
from dragoman.sim.api.validation import default_object

SERVED = openapi.served_group_versions()


def test_index_lists_each_served_group_version_with_a_stable_hash():
    index = openapi.openapi_v3_index(SERVED)
    assert set(index["paths"]) == {openapi.gv_path(g, v) for g, v in SERVED}
    url = index["paths"]["apis/resource.k8s.io/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/resource.k8s.io/v1?hash=")
    assert openapi.openapi_v3_index(SERVED) == index
    assert openapi.parse_gv_path(url) == ("resource.k8s.io", "v1")
    assert openapi.parse_gv_path("/openapi/v3/api/v1") == ("", "v1")
    assert openapi.openapi_v3_document("example.com", "v1") is None


def _refs(node, out):
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            out.add(node["$ref"])
        for v in node.values():
            _refs(v, out)
    elif isinstance(node, list):
        for v in node:
            _refs(v, out)


@pytest.mark.parametrize("group, version", SERVED)
def test_documents_follow_kubectl_rules(group, version):
    doc = openapi.openapi_v3_document(group, version)
    schemas = doc["components"]["schemas"]
    refs: set[str] = set()
    _refs(doc, refs)
    missing = {r for r in refs if r.split("/")[-1] not in schemas}
    assert not missing
    for kind, plural, namespaced, _, verbs in openapi.RESOURCES[(group, version)]:
        gvk = {"group": group, "version": version, "kind": kind}
        owning = [s for s in schemas.values() if gvk in s.get("x-kubernetes-group-version-kind", [])]
        assert owning, kind
        base = (f"/api/{version}" if not group else f"/apis/{group}/{version}") + (
            "/namespaces/{namespace}" if namespaced else ""
        )
        if "patch" in verbs:
            patch = doc["paths"][f"{base}/{plural}/{{name}}"]["patch"]
            assert patch["x-kubernetes-group-version-kind"] == gvk
            assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
            assert {
                "application/strategic-merge-patch+json",
                "application/apply-patch+yaml",
                "application/merge-patch+json",
                "application/json-patch+json",
            } <= set(patch["requestBody"]["content"])
        else:
            assert doc["paths"][f"{base}/{plural}"]["post"]["x-kubernetes-group-version-kind"] == gvk


def test_deviceclass_schema_keeps_descriptions_and_patch_metadata():
    doc = openapi.openapi_v3_document("resource.k8s.io", "v1")
    spec = doc["components"]["schemas"]["io.k8s.api.resource.v1.DeviceClassSpec"]
    assert (
        "extendedResourceName" in spec["properties"]
        and spec["properties"]["selectors"]["x-kubernetes-list-type"] == "atomic"
    )
    assert "extended resource name" in spec["properties"]["extendedResourceName"]["description"]
    pod_spec = openapi.openapi_v3_document("", "v1")["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]
    assert pod_spec["properties"]["containers"]["x-kubernetes-patch-merge-key"] == "name"


def test_shipped_data_is_small():
    from dragoman.sim.api import schemas

    assert schemas.DATA.stat().st_size < 400_000


# ---------------------------------------------------------------- real kubectl against a throwaway server


COLLECTIONS = {
    "/apis/resource.k8s.io/v1/deviceclasses": ("DeviceClass", "deviceclasses"),
    "/apis/apps/v1/namespaces/default/deployments": ("Deployment", "deployments"),
}


class Throwaway:
    """Just enough API server for explain/apply: legacy discovery, /openapi/v3, one DeviceClass collection."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict] = {}
        self.patches: list = []
        self.log: list[tuple[str, str, str]] = []
        self.rv = 1

    async def handle(self, request):
        from aiohttp import web

        body = await request.read()
        path = request.path
        self.log.append((request.method, request.path_qs, request.headers.get("Content-Type", "")))
        if path == "/api":
            return web.json_response({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})
        if path == "/apis":
            return web.json_response(
                {
                    "kind": "APIGroupList",
                    "apiVersion": "v1",
                    "groups": [
                        {
                            "name": "resource.k8s.io",
                            "versions": [{"groupVersion": "resource.k8s.io/v1", "version": "v1"}],
                            "preferredVersion": {"groupVersion": "resource.k8s.io/v1", "version": "v1"},
                        },
                        {
                            "name": "apps",
                            "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
                            "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"},
                        },
                    ],
                }
            )
        if path == "/api/v1":
            return web.json_response({"kind": "APIResourceList", "groupVersion": "v1", "resources": []})
        if path == "/apis/resource.k8s.io/v1":
            return web.json_response(
                {
                    "kind": "APIResourceList",
                    "groupVersion": "resource.k8s.io/v1",
                    "resources": [
                        {
                            "name": "deviceclasses",
                            "singularName": "deviceclass",
                            "namespaced": False,
                            "kind": "DeviceClass",
                            "verbs": list(registry.STANDARD_VERBS),
                        }
                    ],
                }
            )
        if path == "/apis/apps/v1":
            return web.json_response(
                {
                    "kind": "APIResourceList",
                    "groupVersion": "apps/v1",
                    "resources": [
                        {
                            "name": "deployments",
                            "singularName": "deployment",
                            "namespaced": True,
                            "kind": "Deployment",
                            "verbs": list(registry.STANDARD_VERBS),
                        }
                    ],
                }
            )
        if path == "/openapi/v3":
            return web.json_response(openapi.openapi_v3_index([("", "v1"), ("resource.k8s.io", "v1"), ("apps", "v1")]))
        if path.startswith("/openapi/v3/"):
            gv = openapi.parse_gv_path(path)
            data = openapi.openapi_v3_document_bytes(*gv) if gv else None
            if data is None:
                return web.Response(status=404)
            return web.Response(body=data, content_type="application/json")
        for prefix, (kind, plural) in COLLECTIONS.items():
            if not path.startswith(prefix):
                continue
            name = path[len(prefix) + 1 :]
            live = self.objects.get((plural, name))
            if request.method == "GET" and name:
                if live is not None:
                    return web.json_response(live)
                return web.json_response(
                    {
                        "kind": "Status",
                        "apiVersion": "v1",
                        "status": "Failure",
                        "code": 404,
                        "reason": "NotFound",
                        "message": f'{plural} "{name}" not found',
                    },
                    status=404,
                )
            if request.method == "POST":
                obj = json.loads(body)
                default_object(plural, obj)
                return self._store(plural, obj, 201)
            if request.method == "PATCH":
                ctype = request.headers.get("Content-Type", "")
                patch = json.loads(body)
                if ctype.startswith("application/apply-patch"):
                    try:
                        obj = server_side_apply(
                            live, patch, request.query["fieldManager"], request.query.get("force") == "true"
                        )
                    except ApplyConflict as conflict:
                        return web.json_response(conflict.status(), status=409)
                    return self._store(plural, obj, 200 if live else 201)
                self.patches.append(patch)
                obj = apply_strategic_merge_patch(live, patch, kind)
                default_object(plural, obj)
                return self._store(plural, obj, 200)
        return web.json_response(
            {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404, "reason": "NotFound"}, status=404
        )

    def _store(self, plural, obj, code):
        from aiohttp import web

        self.rv += 1
        meta = obj.setdefault("metadata", {})
        meta["resourceVersion"] = str(self.rv)
        meta.setdefault("uid", "uid-" + meta["name"])
        meta.setdefault("creationTimestamp", "2026-11-30T12:00:00Z")
        self.objects[(plural, meta["name"])] = obj
        return web.json_response(obj, status=code)


@pytest.fixture
async def kubectl_env(tmp_path):
    from aiohttp import web

    from tests.support.kubectl import ensure_binary

    server = Throwaway()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", server.handle)
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
    kubectl = str(ensure_binary("kubectl"))

    async def run(*args, stdin: str | None = None) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            kubectl,
            *args,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), timeout=120)
        return proc.returncode, out.decode()

    yield server, run, tmp_path
    await runner.cleanup()


@pytest.mark.kubectl
async def test_kubectl_explain_deviceclass_spec(kubectl_env):
    server, run, _ = kubectl_env
    code, out = await run("explain", "deviceclass.spec")
    assert code == 0, out
    assert (
        "GROUP:      resource.k8s.io" in out
        and "KIND:       DeviceClass" in out
        and "FIELD: spec <DeviceClassSpec>" in out
    )
    assert "extendedResourceName\t<string>" in out and "selectors\t<[]DeviceSelector>" in out
    code, out = await run("explain", "deviceclass.spec.selectors.cel")
    assert code == 0 and "expression\t<string> -required-" in out
    assert not any("/openapi/v2" in p for _, p, _ in server.log)


DEVICE_CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
"""


@pytest.mark.kubectl
async def test_kubectl_apply_client_side_then_server_side(kubectl_env):
    server, run, tmp_path = kubectl_env
    manifest = tmp_path / "dc.yaml"
    manifest.write_text(DEVICE_CLASS)
    code, out = await run("apply", "-f", str(manifest))
    assert code == 0 and "deviceclass.resource.k8s.io/gpu.example.com created" in out, out
    rv = server.objects[("deviceclasses", "gpu.example.com")]["metadata"]["resourceVersion"]
    code, out = await run("apply", "-f", str(manifest))
    assert code == 0 and "unchanged" in out, out
    assert server.objects[("deviceclasses", "gpu.example.com")]["metadata"]["resourceVersion"] == rv
    manifest.write_text(DEVICE_CLASS.replace("example.com/gpu", "example.com/gpu2"))
    code, out = await run("apply", "-f", str(manifest))
    assert code == 0 and "configured" in out, out
    patches = [(p, c) for m, p, c in server.log if m == "PATCH"]
    assert (
        patches
        and patches[-1][1] == "application/strategic-merge-patch+json"
        and "fieldValidation=Strict" in patches[-1][0]
    )
    assert server.objects[("deviceclasses", "gpu.example.com")]["spec"]["extendedResourceName"] == "example.com/gpu2"
    assert not any("/openapi/v2" in p for _, p, _ in server.log)

    # Server-side apply: the client-side manager owns extendedResourceName, so a change conflicts until forced.
    manifest.write_text(DEVICE_CLASS.replace("example.com/gpu", "example.com/gpu3"))
    server.objects[("deviceclasses", "gpu.example.com")]["metadata"]["managedFields"] = [
        {
            "manager": "kubectl-client-side-apply",
            "operation": "Update",
            "apiVersion": "resource.k8s.io/v1",
            "time": "2026-11-30T12:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:extendedResourceName": {}, "f:selectors": {}}},
        }
    ]
    code, out = await run("apply", "--server-side", "-f", str(manifest))
    assert code != 0 and 'conflict with "kubectl-client-side-apply"' in out and ".spec.extendedResourceName" in out, out
    code, out = await run("apply", "--server-side", "--force-conflicts", "-f", str(manifest))
    assert code == 0 and "serverside-applied" in out, out
    managers = {e["manager"] for e in server.objects[("deviceclasses", "gpu.example.com")]["metadata"]["managedFields"]}
    assert "kubectl" in managers


def test_unknown_fields_for_strict_field_validation():
    from dragoman.sim.api.schemas import strict_decoding_message, unknown_fields

    dc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "x", "labels": {"a": "b"}},
        "spec": {
            "selectors": [{"cel": {"expression": "true", "typo": 1}}],
            "extendedResourceName": "a.com/b",
            "bogus": True,
            "config": [{"opaque": {"driver": "d", "parameters": {"anything": {"goes": 1}}}}],
        },
    }
    assert unknown_fields("DeviceClass", dc) == ["spec.selectors[0].cel.typo", "spec.bogus"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "annotations": {"k": "v"}},
        "spec": {
            "containers": [
                {"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "1"}}, "imagePullPolice": "x"}
            ]
        },
    }
    assert unknown_fields("Pod", pod) == ["spec.containers[0].imagePullPolice"]
    assert unknown_fields("NoSuchKind", {"a": 1}) == []
    assert strict_decoding_message("DeviceClass", "v1", ["spec.bogus"]) == (
        'DeviceClass in version "v1" cannot be handled as a DeviceClass: strict decoding error: unknown '
        'field "spec.bogus"'
    )


DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  selector:
    matchLabels: {app: web}
  strategy:
    type: RollingUpdate
  template:
    metadata:
      labels: {app: web}
    spec:
      tolerations:
      - {key: a, operator: Exists}
      containers:
      - name: app
        image: app:1
        env:
        - {name: A, value: "1"}
      - name: side
        image: side:1
"""


@pytest.mark.kubectl
async def test_kubectl_client_side_apply_of_a_deployment_uses_strategic_merge(kubectl_env):
    """kubectl's 3-way strategic patch (built from our v3 patch metadata) applied by our strategic merge gives what was
    applied."""
    server, run, tmp_path = kubectl_env
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text(DEPLOYMENT)
    code, out = await run("apply", "-f", str(manifest))
    assert code == 0 and "created" in out, out
    changed = (
        DEPLOYMENT.replace("image: app:1", "image: app:2")
        .replace('- {name: A, value: "1"}', '- {name: B, value: "2"}')
        .replace("- {key: a, operator: Exists}", "- {key: b, operator: Exists}")
        .replace("    type: RollingUpdate", "    type: Recreate")
    )
    changed = changed.replace("      - name: side\n        image: side:1\n", "")
    manifest.write_text(changed)
    code, out = await run("apply", "-f", str(manifest))
    assert code == 0 and "configured" in out, out
    patch = server.patches[-1]
    assert "$setElementOrder/containers" in patch["spec"]["template"]["spec"]
    spec = server.objects[("deployments", "web")]["spec"]
    containers = spec["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["app"]
    assert containers[0]["image"] == "app:2" and containers[0]["env"] == [{"name": "B", "value": "2"}]
    assert spec["template"]["spec"]["tolerations"] == [{"key": "b", "operator": "Exists"}]
    assert spec["strategy"] == {"type": "Recreate"}
    code, out = await run("apply", "-f", str(manifest))
    assert code == 0 and "unchanged" in out, out


def test_shipped_schemas_are_what_the_generator_writes():
    from dragoman.sim.api import gen_openapi, schemas

    assert json.loads(schemas.DATA.read_text()) == gen_openapi.build()
