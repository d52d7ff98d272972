"""RBAC, eviction and PodDisruptionBudgets, graceful deletion on the clock, garbage collection and faults, over
loopback."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from dragoman.sim.store import ApiError
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.exceptions import ApiException

from tests.support.sim import api_client, running_simulator

READY = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}


def _pod(
    name: str, node: str = "node-1", labels: dict | None = None, grace: int = 30, owner: dict | None = None
) -> dict:
    md: dict = {"name": name, "namespace": "default", "labels": labels or {"app": "web"}}
    if owner:
        md["ownerReferences"] = [owner]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": md,
        "spec": {
            "nodeName": node,
            "terminationGracePeriodSeconds": grace,
            "containers": [{"name": "c", "image": "nginx"}],
        },
        "status": READY,
    }


PDB = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
}
USERS = [
    {"name": "viewer", "clusterRoles": ["view"]},
    {"name": "deleter", "groups": ["deleters"]},
]
NO_EVICT_ROLE = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "pod-deleter"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "delete"]}],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "pod-deleter", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "pod-deleter"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "deleters"}],
    },
]


async def _until(pred, timeout: float = 20.0, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        await asyncio.sleep(step)
    raise AssertionError("condition not reached in time")


@pytest.fixture
async def sim():
    objs = [
        _pod("web-1"),
        _pod("web-2"),
        _pod("web-3"),
        PDB,
        *NO_EVICT_ROLE,
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
    ]
    async with running_simulator(objects=objs, users=USERS) as s:
        yield s


async def _clients(sim, user=None):
    c = await api_client(sim, user)
    return c, client.CoreV1Api(c), client.PolicyV1Api(c)


def _eviction(name: str, dry: bool = False) -> dict:
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": "default"}}
    if dry:
        body["deleteOptions"] = {"dryRun": ["All"]}
    return body


async def test_rbac_read_only_user_cannot_write(sim):
    c, v1, _ = await _clients(sim, "viewer")
    try:
        pods = await v1.list_namespaced_pod("default")
        assert len(pods.items) == 3
        with pytest.raises(ApiException) as err:
            await v1.patch_node("node-1", {"spec": {"unschedulable": True}})
        body = json.loads(err.value.body)
        assert err.value.status == 403 and body["reason"] == "Forbidden"
        assert 'User "viewer" cannot patch resource "nodes"' in body["message"]
        assert sim.store.get("nodes", None, "node-1").get("spec", {}).get("unschedulable") is None
        review = await client.AuthorizationV1Api(c).create_self_subject_access_review(
            {
                "spec": {
                    "resourceAttributes": {
                        "namespace": "default",
                        "verb": "create",
                        "resource": "pods",
                        "subresource": "eviction",
                    }
                }
            }
        )
        assert review.status.allowed is False
    finally:
        await c.close()
    assert [r.status for r in sim.request_log.find(method="PATCH", user="viewer")] == [403]


async def test_user_without_eviction_rights_can_delete_but_not_evict(sim):
    c, v1, _ = await _clients(sim, "deleter")
    try:
        with pytest.raises(ApiException) as err:
            await v1.create_namespaced_pod_eviction("web-1", "default", _eviction("web-1"))
        assert err.value.status == 403
        review = await client.AuthorizationV1Api(c).create_self_subject_access_review(
            {"spec": {"resourceAttributes": {"namespace": "default", "verb": "delete", "resource": "pods"}}}
        )
        assert review.status.allowed is True
    finally:
        await c.close()


async def test_eviction_honours_the_budget_and_updates_disruptions_allowed(sim):
    c, v1, policy = await _clients(sim)
    try:
        pdb = await _until_pdb(sim, allowed=1)
        assert pdb["status"]["currentHealthy"] == 3 and pdb["status"]["desiredHealthy"] == 2
        # Dry run: allowed, nothing changes.
        await v1.create_namespaced_pod_eviction("web-1", "default", _eviction("web-1", dry=True))
        assert sim.store.get("pods", "default", "web-1")["metadata"].get("deletionTimestamp") is None
        await v1.create_namespaced_pod_eviction("web-1", "default", _eviction("web-1"))
        pod = sim.store.get("pods", "default", "web-1")
        assert pod["metadata"]["deletionTimestamp"] and pod["metadata"]["deletionGracePeriodSeconds"] == 30
        live = await policy.read_namespaced_pod_disruption_budget("web", "default")
        assert live.status.disruptions_allowed == 0
        with pytest.raises(ApiException) as err:
            await v1.create_namespaced_pod_eviction("web-2", "default", _eviction("web-2"))
        body = json.loads(err.value.body)
        assert err.value.status == 429 and body["reason"] == "TooManyRequests"
        assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
        assert body["details"]["causes"] == [
            {
                "reason": "DisruptionBudget",
                "message": "The disruption budget web needs 2 healthy pods and has 2 currently",
            }
        ]
        assert "Retry-After" not in (err.value.headers or {})
        # The grace period passes on the simulated clock; the pod goes. A replacement makes room again.
        sim.clock.step(31)
        await _until(lambda: sim.store.get("pods", "default", "web-1") is None)
        sim.store.create("pods", _pod("web-4"))
        await _until_pdb(sim, allowed=1)
        await v1.create_namespaced_pod_eviction("web-2", "default", _eviction("web-2"))
    finally:
        await c.close()


async def _until_pdb(sim, allowed: int) -> dict:
    return await _until(
        lambda: (
            (p := sim.store.get("poddisruptionbudgets.policy", "default", "web"))
            and p.get("status", {}).get("disruptionsAllowed") == allowed
            and p
        )
    )


async def test_two_budgets_make_eviction_a_500(sim):
    c, v1, _ = await _clients(sim)
    try:
        second = json.loads(json.dumps(PDB))
        second["metadata"]["name"] = "web-too"
        sim.store.create("poddisruptionbudgets.policy", second)
        with pytest.raises(ApiException) as err:
            await v1.create_namespaced_pod_eviction("web-1", "default", _eviction("web-1"))
        assert err.value.status == 500
        assert "more than one PodDisruptionBudget" in json.loads(err.value.body)["message"]
    finally:
        await c.close()


async def test_finalizers_hold_an_object_until_removed(sim):
    c, v1, _ = await _clients(sim)
    try:
        await v1.create_namespaced_config_map(
            "default", {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
        )
        await v1.delete_namespaced_config_map("held", "default")
        cm = await v1.read_namespaced_config_map("held", "default")
        assert cm.metadata.deletion_timestamp is not None
        await v1.patch_namespaced_config_map("held", "default", [{"op": "remove", "path": "/metadata/finalizers"}])
        with pytest.raises(ApiException) as err:
            await v1.read_namespaced_config_map("held", "default")
        assert err.value.status == 404
    finally:
        await c.close()


async def test_garbage_collection_follows_owner_references(sim):
    c, v1, _ = await _clients(sim)
    apps = client.AppsV1Api(c)
    try:
        rs = await apps.create_namespaced_replica_set(
            "default",
            {
                "metadata": {"name": "rs"},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app": "gc"}},
                    "template": {
                        "metadata": {"labels": {"app": "gc"}},
                        "spec": {"containers": [{"name": "c", "image": "x"}]},
                    },
                },
            },
        )
        owner = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "rs",
            "uid": rs.metadata.uid,
            "controller": True,
        }
        await v1.create_namespaced_pod(
            "default",
            {
                "metadata": {"name": "child", "labels": {"app": "gc"}, "ownerReferences": [owner]},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        )
        await v1.create_namespaced_pod(
            "default",
            {
                "metadata": {"name": "orphan", "labels": {"app": "gc"}, "ownerReferences": [owner]},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        )
        # Orphan first for one dependent: it loses its reference and stays.
        rs2 = await apps.create_namespaced_replica_set(
            "default",
            {
                "metadata": {"name": "rs2"},
                "spec": {
                    "selector": {"matchLabels": {"app": "o"}},
                    "template": {
                        "metadata": {"labels": {"app": "o"}},
                        "spec": {"containers": [{"name": "c", "image": "x"}]},
                    },
                },
            },
        )
        owner2 = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs2", "uid": rs2.metadata.uid}
        await v1.create_namespaced_pod(
            "default",
            {
                "metadata": {"name": "kept", "ownerReferences": [owner2]},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        )
        await apps.delete_namespaced_replica_set("rs2", "default", propagation_policy="Orphan")
        kept = await v1.read_namespaced_pod("kept", "default")
        assert not kept.metadata.owner_references
        await apps.delete_namespaced_replica_set("rs", "default", propagation_policy="Background")
        names = {p.metadata.name for p in (await v1.list_namespaced_pod("default")).items}
        assert "child" not in names and "orphan" not in names and "kept" in names
    finally:
        await c.close()


async def test_faults_inject_errors_latency_conflicts_and_cut_watches(sim):
    c, v1, _ = await _clients(sim)
    try:
        sim.faults.set("error=1 code=500 verbs=list resources=pods")
        with pytest.raises(ApiException) as err:
            await v1.list_namespaced_pod("default")
        assert err.value.status == 500
        await v1.list_namespaced_config_map("default")  # other resources unaffected
        sim.faults.set("error=1 code=429 retry-after=3 verbs=get")
        with pytest.raises(ApiException) as err:
            await v1.read_node("node-1", _request_timeout=30)
        assert err.value.status == 429 and err.value.headers["Retry-After"] == "3"
        sim.faults.set("conflict=1 resources=nodes")
        with pytest.raises(ApiException) as err:
            await v1.patch_node("node-1", {"metadata": {"labels": {"a": "b"}}})
        assert err.value.status == 409
        sim.faults.set("lost-answer=1 resources=nodes")
        with pytest.raises(ApiException) as err:
            await v1.patch_node("node-1", {"metadata": {"labels": {"lost": "answer"}}})
        assert err.value.status == 500
        sim.faults.clear()
        assert (await v1.read_node("node-1")).metadata.labels["lost"] == "answer"  # made, though the client saw a 500
        lost = [r for r in sim.request_log if r.method == "PATCH" and r.lost_answer]
        assert len(lost) == 1 and lost[0].status == 500 and lost[0].made
        sim.faults.set("error=1 code=timeout hang=0.2s verbs=get resources=nodes")
        with pytest.raises(ApiException) as err:
            await v1.read_node("node-1")
        assert err.value.status == 504
        sim.faults.set("latency=300ms resources=nodes")
        t0 = time.monotonic()
        await v1.list_node()
        assert time.monotonic() - t0 >= 0.3
        sim.faults.set("watch-cut-events=2 resources=pods")
        w = watch.Watch()
        got = [e async for e in w.stream(v1.list_namespaced_pod, "default", timeout_seconds=30)]
        assert len(got) == 2  # three pods exist; the stream ended after two
        sim.faults.set("watch-cut-after=0.5s")
        w = watch.Watch()
        t0 = time.monotonic()
        got = [e async for e in w.stream(v1.list_namespaced_pod, "default", timeout_seconds=60)]
        assert len(got) == 3 and time.monotonic() - t0 < 30  # cut long before the client's own timeout
        sim.faults.clear()
        assert len((await v1.list_namespaced_pod("default")).items) == 3
    finally:
        await c.close()


def test_fault_spec_errors_are_sentences():
    from dragoman.sim.faults import Faults, FaultSpecError

    for bad, word in [
        ("error=2", "rate"),
        ("latency=fast", "duration"),
        ("explode=1", "unknown fault"),
        ("error=0.1 verbs=smash", "verb"),
        ("lost-answer=x", "rate"),
    ]:
        with pytest.raises(FaultSpecError) as err:
            Faults(bad)
        assert word in str(err.value)


async def test_clock_speed_runs_grace_periods_faster():
    objs = [_pod("slow", grace=60), {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}]
    async with running_simulator(objects=objs, speed=120) as sim:
        sim.store.delete("pods", "default", "slow")
        assert sim.store.get("pods", "default", "slow")["metadata"]["deletionTimestamp"]
        await _until(lambda: sim.store.get("pods", "default", "slow") is None, timeout=10)


async def test_namespace_deletion_removes_its_contents(sim):
    sim.store.create("namespaces", {"metadata": {"name": "tmp"}})
    assert sim.store.get("serviceaccounts", "tmp", "default") is not None
    sim.store.create("configmaps", {"metadata": {"name": "x", "namespace": "tmp"}})
    answer, gone = sim.store.delete("namespaces", None, "tmp")
    # As the real server: answered Terminating, content deleted by the namespace controller, then the namespace.
    assert not gone and answer["status"]["phase"] == "Terminating" and answer["metadata"]["deletionTimestamp"]
    with pytest.raises(ApiError) as refused:
        sim.store.create("configmaps", {"metadata": {"name": "late", "namespace": "tmp"}})
    assert refused.value.code == 403 and "being terminated" in refused.value.status["message"]
    await _until(lambda: sim.store.get("namespaces", None, "tmp") is None, timeout=10)
    assert (
        sim.store.get("configmaps", "tmp", "x") is None and sim.store.get("serviceaccounts", "tmp", "default") is None
    )
