"""The simulator's API through kubernetes-asyncio over loopback: discovery, CRUD, each patch kind, dry-run, conflicts,
errors."""

from __future__ import annotations

import json

import aiohttp
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from tests.support.sim import api_client, running_simulator

STRATEGIC = "application/strategic-merge-patch+json"
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"pool": "a"}}, "spec": {}}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "containers": [{"name": "app", "image": "nginx:1.27"}, {"name": "side", "image": "busybox"}],
        "nodeName": "node-1",
    },
}


@pytest.fixture
async def sim():
    async with running_simulator(objects=[NODE, POD]) as s:
        yield s


@pytest.fixture
async def api(sim):
    c = await api_client(sim)
    yield c
    await c.close()


def _auth(api) -> dict:
    return {"Authorization": api.configuration.api_key["BearerToken"]}


async def _raw(api, method, path, body=None, content_type="application/json", headers=None):
    """A raw HTTP request with the client's server and token; returns (status, parsed JSON or None)."""
    if body is not None and not isinstance(body, (str, bytes)):
        body = json.dumps(body)
    hdrs = {"Content-Type": content_type, "Accept": "application/json", **_auth(api), **(headers or {})}
    async with aiohttp.ClientSession() as s:
        async with s.request(method, api.configuration.host + path, data=body, headers=hdrs, ssl=False) as r:
            text = await r.read()
            try:
                return r.status, json.loads(text) if text else None
            except ValueError:
                return r.status, text.decode()


async def test_version_and_discovery(sim, api):
    status, version = await _raw(api, "GET", "/version")
    assert status == 200 and version["gitVersion"].startswith("v1.37.")
    status, core = await _raw(api, "GET", "/api/v1")
    names = {r["name"]: r for r in core["resources"]}
    assert names["pods/eviction"]["group"] == "policy" and names["pods/eviction"]["kind"] == "Eviction"
    assert "nodes" in names and "events" in names
    async with aiohttp.ClientSession() as s:
        hdrs = {
            "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
            **_auth(api),
        }
        async with s.get(api.configuration.host + "/apis", headers=hdrs, ssl=False) as r:
            assert r.headers["Content-Type"].startswith(
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
            )
            groups = {i["metadata"]["name"]: i for i in json.loads(await r.read())["items"]}
    res = {x["resource"] for x in groups["resource.k8s.io"]["versions"][0]["resources"]}
    assert {"deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates"} <= res
    status, legacy = await _raw(api, "GET", "/apis")
    assert legacy["kind"] == "APIGroupList"
    assert any(g["name"] == "apps" for g in legacy["groups"])


async def test_unknown_kind_and_unknown_object_are_404(api):
    status, body = await _raw(api, "GET", "/apis/example.com/v1/widgets")
    assert status == 404 and body["kind"] == "Status" and body["reason"] == "NotFound"
    status, body = await _raw(api, "GET", "/api/v1/namespaces/default/pods/nope")
    assert status == 404 and body["message"] == 'pods "nope" not found'
    status, body = await _raw(api, "GET", "/api/v1/namespaces/default/gizmos")
    assert status == 404


async def test_unparsable_body_is_400_and_server_survives(api):
    status, body = await _raw(api, "POST", "/api/v1/namespaces/default/configmaps", body="{not json")
    assert status == 400 and body["reason"] == "BadRequest"
    status, body = await _raw(api, "GET", "/api/v1/pods?labelSelector=a%20in%20(b")
    assert status == 400
    status, body = await _raw(api, "GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx")
    assert status == 400 and "field label not supported" in body["message"]
    status, body = await _raw(api, "PATCH", "/api/v1/nodes/node-1", body="[]", content_type="text/plain")
    assert status == 415
    status, _ = await _raw(api, "GET", "/api/v1/nodes/node-1")
    assert status == 200


async def test_create_get_update_delete_and_metadata(sim, api):
    v1 = client.CoreV1Api(api)
    cm = await v1.create_namespaced_config_map("default", {"metadata": {"name": "c1"}, "data": {"a": "1"}})
    assert cm.metadata.uid and cm.metadata.creation_timestamp and int(cm.metadata.resource_version) > 0
    with pytest.raises(ApiException) as err:
        await v1.create_namespaced_config_map("default", {"metadata": {"name": "c1"}})
    assert err.value.status == 409 and json.loads(err.value.body)["reason"] == "AlreadyExists"
    gen = await v1.create_namespaced_config_map("default", {"metadata": {"generateName": "gen-"}})
    assert gen.metadata.name.startswith("gen-") and len(gen.metadata.name) == 9
    cm.data = {"a": "2"}
    updated = await v1.replace_namespaced_config_map("c1", "default", cm)
    assert updated.data == {"a": "2"} and int(updated.metadata.resource_version) > int(cm.metadata.resource_version)
    with pytest.raises(ApiException) as err:
        await v1.create_namespaced_config_map("nowhere", {"metadata": {"name": "x"}})
    assert err.value.status == 404 and json.loads(err.value.body)["message"] == 'namespaces "nowhere" not found'
    await v1.delete_namespaced_config_map("c1", "default")
    with pytest.raises(ApiException) as err:
        await v1.read_namespaced_config_map("c1", "default")
    assert err.value.status == 404


async def test_stale_resource_version_is_409(api):
    v1 = client.CoreV1Api(api)
    node = await v1.read_node("node-1")
    node.metadata.labels["x"] = "1"
    await v1.replace_node("node-1", node)
    node.metadata.labels["x"] = "2"
    with pytest.raises(ApiException) as err:
        await v1.replace_node("node-1", node)
    body = json.loads(err.value.body)
    assert err.value.status == 409 and body["reason"] == "Conflict"
    assert body["message"] == (
        'Operation cannot be fulfilled on nodes "node-1": the object has been modified; please apply your '
        "changes to the latest version and try again"
    )


async def test_each_patch_kind(sim, api):
    # JSON merge patch (kubectl label).
    status, node = await _raw(
        api,
        "PATCH",
        "/api/v1/nodes/node-1?fieldManager=kubectl-label",
        body={"metadata": {"labels": {"a": "b", "pool": None}}},
        content_type="application/merge-patch+json",
    )
    assert status == 200 and node["metadata"]["labels"] == {"a": "b"}
    # Strategic merge: containers merge by name instead of being replaced.
    status, pod = await _raw(
        api,
        "PATCH",
        "/api/v1/namespaces/default/pods/web",
        body={"spec": {"containers": [{"name": "side", "image": "busybox:1.37"}]}},
        content_type="application/strategic-merge-patch+json",
    )
    assert status == 200
    assert [(c["name"], c["image"]) for c in pod["spec"]["containers"]] == [
        ("app", "nginx:1.27"),
        ("side", "busybox:1.37"),
    ]
    # Strategic merge of cordon and uncordon.
    status, node = await _raw(
        api,
        "PATCH",
        "/api/v1/nodes/node-1",
        body={"spec": {"unschedulable": True}},
        content_type="application/strategic-merge-patch+json",
    )
    assert node["spec"]["unschedulable"] is True
    status, node = await _raw(
        api,
        "PATCH",
        "/api/v1/nodes/node-1",
        body={"spec": {"unschedulable": None}},
        content_type="application/strategic-merge-patch+json",
    )
    assert "unschedulable" not in node["spec"]
    # JSON patch.
    status, node = await _raw(
        api,
        "PATCH",
        "/api/v1/nodes/node-1",
        body=[{"op": "add", "path": "/metadata/labels/j", "value": "k"}],
        content_type="application/json-patch+json",
    )
    assert status == 200 and node["metadata"]["labels"]["j"] == "k"
    status, body = await _raw(
        api,
        "PATCH",
        "/api/v1/nodes/node-1",
        body=[{"op": "test", "path": "/metadata/labels/j", "value": "zzz"}],
        content_type="application/json-patch+json",
    )
    assert status in (409, 422) and body["kind"] == "Status"
    # Server-side apply creates (201), then a repeat is a no-op (resourceVersion unchanged).
    dc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
    }
    path = (
        "/apis/resource.k8s.io/v1/deviceclasses/gpu.example.com?fieldManager=kubectl&fieldValidation=Strict&force=false"
    )
    status, first = await _raw(api, "PATCH", path, body=json.dumps(dc), content_type="application/apply-patch+yaml")
    assert status == 201 and first["metadata"]["managedFields"][0]["manager"] == "kubectl"
    status, second = await _raw(api, "PATCH", path, body=json.dumps(dc), content_type="application/apply-patch+yaml")
    assert status == 200 and second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


async def test_dry_run_changes_nothing(sim, api):
    v1 = client.CoreV1Api(api)
    before = sim.store.resource_version
    cm = await v1.create_namespaced_config_map("default", {"metadata": {"name": "dry"}}, dry_run="All")
    assert cm.metadata.name == "dry"
    await v1.patch_node("node-1", {"metadata": {"labels": {"dry": "yes"}}}, dry_run="All")
    await v1.delete_namespaced_pod("web", "default", dry_run="All")
    assert sim.store.resource_version == before
    assert sim.store.get("configmaps", "default", "dry") is None
    assert "dry" not in sim.store.get("nodes", None, "node-1")["metadata"]["labels"]
    assert sim.store.get("pods", "default", "web") is not None
    assert all(not r.is_write for r in sim.request_log.records if r.dry_run)


async def test_status_subresource_separates_spec_and_status(sim, api):
    status, pod = await _raw(
        api,
        "PATCH",
        "/api/v1/namespaces/default/pods/web/status",
        body={"status": {"phase": "Running"}},
        content_type="application/merge-patch+json",
    )
    assert pod["status"]["phase"] == "Running"
    status, pod = await _raw(
        api,
        "PATCH",
        "/api/v1/namespaces/default/pods/web",
        body={"status": {"phase": "Failed"}},
        content_type="application/merge-patch+json",
    )
    assert pod["status"]["phase"] == "Running"


async def test_status_write_keeps_what_each_kinds_status_strategy_keeps(sim, api):
    """v1.37.2's status strategies reset the spec; pods/status and most others take labels, annotations and
    finalizers from the request (the simulator kept the stored ones), deployments/status keeps the labels, and
    resourceclaims/status keeps all of them (ResetObjectMetaForStatus). Measured on kube-apiserver v1.37.2."""
    _, pod = await _raw(api, "GET", "/api/v1/namespaces/default/pods/web")
    pod["metadata"]["labels"]["by-status"] = "yes"
    pod["metadata"]["annotations"] = {"note": "status"}
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "1"}]
    pod["spec"]["activeDeadlineSeconds"] = 30
    pod["status"] = {"phase": "Pending", "conditions": [{"type": "Example", "status": "True"}]}
    code, put = await _raw(api, "PUT", "/api/v1/namespaces/default/pods/web/status", body=pod)
    assert code == 200, put
    assert put["metadata"]["labels"] == {"app": "web", "by-status": "yes"}
    assert put["metadata"]["annotations"] == {"note": "status"}
    assert "ownerReferences" not in put["metadata"]  # pods/status never touches owner references
    assert put["status"]["qosClass"] == "BestEffort"  # backfilled when a writer leaves it out
    assert "activeDeadlineSeconds" not in put["spec"]
    assert [c["type"] for c in put["status"]["conditions"]] == ["Example"]
    claims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default", "labels": {"a": "1"}},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
    }
    assert (await _raw(api, "POST", claims, body=claim))[0] == 201
    claim["metadata"].update(labels={"a": "2"}, annotations={"note": "status"})
    code, put = await _raw(api, "PUT", claims + "/c/status", body={**claim, "status": {}})
    assert code == 200 and put["metadata"]["labels"] == {"a": "1"} and "annotations" not in put["metadata"]
    deployments = "/apis/apps/v1/namespaces/default/deployments"
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "default", "labels": {"a": "1"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    }
    assert (await _raw(api, "POST", deployments, body=dep))[0] == 201
    dep["metadata"].update(labels={"a": "2"}, annotations={"note": "status"})
    code, put = await _raw(api, "PUT", deployments + "/d/status", body={**dep, "status": {"observedGeneration": 1}})
    assert code == 200 and put["metadata"]["labels"] == {"a": "1"}
    assert put["metadata"]["annotations"] == {"note": "status"}


async def test_log_of_a_pod_no_node_holds_is_204_without_a_body(sim, api):
    """LogLocation checks the container name, then returns no location for a pod without a node: kube-apiserver
    answers 204 No Content (the simulator said 400 "waiting to start"). The names it offers include init containers."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "unplaced", "namespace": "default"},
        "spec": {
            "initContainers": [{"name": "init", "image": "x"}],
            "containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "x"}],
        },
    }
    assert (await _raw(api, "POST", "/api/v1/namespaces/default/pods", body=pod))[0] == 201
    base = "/api/v1/namespaces/default/pods/unplaced/log"
    assert await _raw(api, "GET", base + "?container=a") == (204, None)
    assert await _raw(api, "GET", base + "?container=init") == (204, None)
    code, body = await _raw(api, "GET", base)
    assert code == 400
    assert body["message"] == "a container name must be specified for pod unplaced, choose one of: [init a b]"
    code, body = await _raw(api, "GET", base + "?container=zz")
    assert (code, body["message"]) == (400, "container zz is not valid for pod unplaced")
    # On a node, the kubelet answers: a container not started yet is a 400.
    code, body = await _raw(api, "GET", "/api/v1/namespaces/default/pods/web/log?container=app")
    assert code == 400 and "is waiting to start" in body["message"]


async def test_binding_assigns_node(sim, api):
    v1 = client.CoreV1Api(api)
    await v1.create_namespaced_pod(
        "default", {"metadata": {"name": "pending"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    )
    # The scheduler's verdict, stamped with the generation it judged; a status write that leaves observedGeneration
    # out keeps it (pods/status' strategy), the binding (straight to storage, no strategy) does not.
    waiting = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "observedGeneration": 1}
    path = "/api/v1/namespaces/default/pods/pending/status"
    await _raw(api, "PATCH", path, body={"status": {"conditions": [waiting]}}, content_type=STRATEGIC)
    again = {k: v for k, v in waiting.items() if k != "observedGeneration"}
    _, pod = await _raw(api, "PATCH", path, body={"status": {"conditions": [again]}}, content_type=STRATEGIC)
    assert [c.get("observedGeneration") for c in pod["status"]["conditions"]] == [1]
    status, body = await _raw(
        api,
        "POST",
        "/api/v1/namespaces/default/pods/pending/binding",
        body={
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "pending"},
            "target": {"kind": "Node", "name": "node-1"},
        },
    )
    assert status == 201
    pod = await v1.read_namespaced_pod("pending", "default")
    assert pod.spec.node_name == "node-1"
    assert any(c.type == "PodScheduled" and c.status == "True" for c in pod.status.conditions)
    _, raw = await _raw(api, "GET", "/api/v1/namespaces/default/pods/pending")
    scheduled = next(c for c in raw["status"]["conditions"] if c["type"] == "PodScheduled")
    assert "observedGeneration" not in scheduled, scheduled  # kube-apiserver v1.37.2's assignPod sets none
    status, body = await _raw(
        api,
        "POST",
        "/api/v1/namespaces/default/pods/pending/binding",
        body={"target": {"kind": "Node", "name": "node-2"}},
    )
    assert status == 409


async def test_unauthenticated_request_is_401(sim):
    async with aiohttp.ClientSession() as s:
        async with s.get(sim.url + "/api/v1/pods", ssl=False) as r:
            assert r.status == 401
            assert (await r.json())["reason"] == "Unauthorized"
        async with s.get(sim.url + "/healthz", ssl=False) as r:
            assert r.status == 200 and await r.text() == "ok"


async def test_metrics_count_objects(sim, api):
    status, text = await _raw(api, "GET", "/metrics")
    assert 'apiserver_resource_objects{group="",resource="pods"} 1' in text
    assert 'apiserver_storage_objects{resource="nodes"} 1' in text
    assert "apiserver_storage_size_bytes" in text


async def test_non_loopback_host_is_refused():
    from dragoman.fleet.errors import UserError
    from dragoman.sim.server import Simulator

    with pytest.raises(UserError) as err:
        await Simulator().start(host="0.0.0.0")
    assert "loopback" in err.value.message


async def test_malformed_requests_get_4xx_never_a_crash(sim, api):
    cases = [
        ("POST", "/api/v1/namespaces/default/configmaps", "[1, 2]", "application/json"),
        ("POST", "/api/v1/namespaces/default/configmaps", '{"metadata": "nope"}', "application/json"),
        ("POST", "/api/v1/namespaces/default/configmaps", "\x00\x01\x02", "application/json"),
        ("POST", "/api/v1/namespaces/default/configmaps", "k8s\x00garbage", "application/vnd.kubernetes.protobuf"),
        ("PUT", "/api/v1/nodes/node-1", '"just a string"', "application/json"),
        ("PUT", "/api/v1/nodes/node-1", '{"metadata": {"name": "other"}}', "application/json"),
        ("PATCH", "/api/v1/nodes/node-1", '"x"', "application/merge-patch+json"),
        ("PATCH", "/api/v1/nodes/node-1", '{"op": "add"}', "application/json-patch+json"),
        ("PATCH", "/api/v1/nodes/node-1", '[{"op": "move", "path": "/nope"}]', "application/json-patch+json"),
        ("PATCH", "/api/v1/nodes/node-1", '{"metadata": {"labels": []}}', "application/strategic-merge-patch+json"),
        ("PATCH", "/api/v1/nodes/node-1?fieldManager=x", "a: [", "application/apply-patch+yaml"),
        ("PATCH", "/api/v1/nodes/node-1", "{}", "application/apply-patch+yaml"),
        ("GET", "/api/v1/pods?limit=many", None, "application/json"),
        ("GET", "/api/v1/pods?resourceVersion=abc", None, "application/json"),
        ("GET", "/api/v1/pods?continue=%%%", None, "application/json"),
        ("GET", "/api/v1/namespaces//pods", None, "application/json"),
        ("GET", "/api/v1/namespaces/default/pods/web/nonsense", None, "application/json"),
        ("DELETE", "/api/v1/namespaces/default/pods/web?propagationPolicy=Sideways", None, "application/json"),
        ("DELETE", "/api/v1/namespaces/default/pods/web", "[]", "application/json"),
        (
            "POST",
            "/api/v1/namespaces/default/pods/web/eviction",
            '{"deleteOptions": {"dryRun": ["Some"]}}',
            "application/json",
        ),
        ("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "{}", "application/json"),
    ]
    for method, path, body, ctype in cases:
        status, answer = await _raw(api, method, path, body=body, content_type=ctype)
        assert 400 <= status < 500, (method, path, body, status, answer)
        assert isinstance(answer, dict) and answer.get("kind") == "Status", (method, path, answer)
    # A WATCH (or GET) from a resourceVersion that is no number: kube-apiserver v1.37.2 passes its storage layer's
    # untyped error on as a 500 without a reason (measured), and so does the simulator — still a Status, no crash.
    status, answer = await _raw(api, "GET", "/api/v1/pods?watch=true&resourceVersion=abc")
    assert status == 500 and answer["kind"] == "Status" and "reason" not in answer
    assert answer["message"] == (
        'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'
    )
    status, _ = await _raw(api, "GET", "/api/v1/namespaces/default/pods/web")
    assert status == 200
    assert sim.store.get("nodes", None, "node-1")["metadata"]["name"] == "node-1"


async def test_unknown_fields_are_dropped_or_refused_when_strict(sim, api):
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "extra", "bogus": 1},
        "data": {"a": "b"},
        "spec": {"x": 1},
    }
    status, answer = await _raw(api, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", body=body)
    assert status == 400
    assert answer["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field '
        '"metadata.bogus", unknown field "spec"'
    )
    hdrs = {"Content-Type": "application/json", **_auth(api)}
    async with aiohttp.ClientSession() as s:
        async with s.post(
            api.configuration.host + "/api/v1/namespaces/default/configmaps",
            data=json.dumps(body),
            headers=hdrs,
            ssl=False,
        ) as r:
            answer = await r.json()
            assert (
                r.status == 201
                and r.headers["Warning"]
                == '299 - "unknown field \\"metadata.bogus\\"", 299 - "unknown field \\"spec\\""'
            )
    assert "spec" not in answer and "bogus" not in answer["metadata"] and answer["data"] == {"a": "b"}
    status, answer = await _raw(
        api,
        "PATCH",
        "/api/v1/nodes/node-1",
        body={"spec": {"unschedulable": "yes"}},
        content_type="application/merge-patch+json",
    )
    assert (
        status == 400
        and "cannot unmarshal string into Go struct field NodeSpec.spec.unschedulable of type bool" in answer["message"]
    )
    # Quantities may be numbers, as kubectl sends `cpu: 2` from YAML.
    pod = {
        "metadata": {"name": "q"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": 2}}}]},
    }
    status, answer = await _raw(api, "POST", "/api/v1/namespaces/default/pods", body=pod)
    assert status == 201 and answer["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "2"


async def test_each_patch_kind_through_kubernetes_asyncio(sim, api):
    v1 = client.CoreV1Api(api)
    apps = client.AppsV1Api(api)
    node = await v1.patch_node(
        "node-1", {"metadata": {"labels": {"m": "1"}}}, _content_type="application/merge-patch+json"
    )
    assert node.metadata.labels["m"] == "1"
    node = await v1.patch_node(
        "node-1",
        {"spec": {"taints": [{"key": "gpu", "value": "x", "effect": "NoSchedule"}]}},
        _content_type="application/strategic-merge-patch+json",
    )
    assert [t.key for t in node.spec.taints] == ["gpu"]
    node = await v1.patch_node(
        "node-1", [{"op": "remove", "path": "/spec/taints/0"}], _content_type="application/json-patch+json"
    )
    assert not node.spec.taints
    pod = await v1.patch_namespaced_pod(
        "web",
        "default",
        {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}},
        _content_type="application/strategic-merge-patch+json",
    )
    assert [(c.name, c.image) for c in pod.spec.containers] == [("app", "nginx:1.28"), ("side", "busybox")]
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "plugin", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"a": "p"}},
            "template": {
                "metadata": {"labels": {"a": "p"}},
                "spec": {"containers": [{"name": "c", "image": "plugin:1"}]},
            },
        },
    }
    created = await apps.patch_namespaced_daemon_set(
        "plugin", "default", ds, field_manager="dragoman", _content_type="application/apply-patch+yaml"
    )
    assert created.metadata.generation == 1
    ds["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "dragoman.io/dra", "operator": "DoesNotExist"}]}]
            }
        }
    }
    updated = await apps.patch_namespaced_daemon_set(
        "plugin", "default", ds, field_manager="dragoman", _content_type="application/apply-patch+yaml"
    )
    assert updated.metadata.generation == 2
    assert (
        updated.spec.template.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms[
            0
        ]
        .match_expressions[0]
        .key
        == "dragoman.io/dra"
    )
    # Another manager takes the image; applying the old image as a third manager is a field conflict (409).
    await apps.patch_namespaced_daemon_set(
        "plugin",
        "default",
        {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "plugin:2"}]}}}},
        field_manager="someone-else",
        _content_type="application/strategic-merge-patch+json",
    )
    with pytest.raises(ApiException) as err:
        await apps.patch_namespaced_daemon_set(
            "plugin", "default", ds, field_manager="third", _content_type="application/apply-patch+yaml"
        )
    assert (
        err.value.status == 409
        and json.loads(err.value.body)["details"]["causes"][0]["reason"] == "FieldManagerConflict"
    )
