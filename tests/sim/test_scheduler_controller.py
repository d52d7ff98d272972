"""The running scheduler through kubernetes-asyncio: a bridged pod gets its claim and devices, failures read as the real
ones, quota bites, claims go with pods."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from dragoman.fleet import nvidia_schema as nvidia
from dragoman.sim.controllers import default_controllers
from kubernetes_asyncio import client

from tests.support.sim import api_client, running_simulator

TIMEOUT = 30.0
HW = nvidia.NodeHardware(next(iter(nvidia.CATALOG.values())), 8)
GPU_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com", "creationTimestamp": "2026-06-01T10:00:00Z"},
    "spec": {
        "selectors": [
            {
                "cel": {
                    "expression": (
                        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
                    )
                }
            }
        ],
        "extendedResourceName": "nvidia.com/gpu",
    },
}


def _node(name: str, pool: str) -> dict:
    labels = {"kubernetes.io/hostname": name, "pool": pool, **HW.gfd_labels()}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {
            "nodeInfo": {"kubeletVersion": "v1.37.1"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
            "capacity": {"cpu": "96", "memory": "1000Gi", "pods": "110"},
            "allocatable": {"cpu": "95", "memory": "990Gi", "pods": "110"},
        },
    }


def _driver(pool: str) -> dict:
    labels = {"app.kubernetes.io/name": "dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-component": "kubelet-plugin"}
    image = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.0"
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "dra-driver-nvidia-gpu-kubelet-plugin",
            "namespace": "dra-driver-nvidia-gpu",
            "labels": labels,
        },
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeSelector": {"pool": pool},
                    "containers": [{"name": "gpus", "image": image}, {"name": "compute-domains", "image": image}],
                },
            },
        },
    }


def _pod(name: str, gpus: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "nvcr.io/nvidia/cuda:12.9.0-base-ubuntu24.04",
                    "resources": {
                        "requests": {"cpu": "1", "nvidia.com/gpu": str(gpus)},
                        "limits": {"nvidia.com/gpu": str(gpus)},
                    },
                }
            ]
        },
    }


async def eventually(check, what: str, timeout: float = TIMEOUT):
    deadline = asyncio.get_running_loop().time() + timeout
    last = None
    while True:
        last = await check()
        if last:
            return last
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}; last value {last!r}")
        await asyncio.sleep(0.05)


@pytest.fixture
async def cluster():
    opened = []

    async def make(objects):
        ctx = running_simulator(objects=objects)
        sim = await ctx.__aenter__()
        for c in default_controllers(sim):
            sim.add_controller(c)
        api = await api_client(sim)
        opened.append((ctx, api))
        return sim, api

    yield make
    for ctx, api in opened:
        await api.close()
        await ctx.__aexit__(None, None, None)


async def _json(resp) -> dict:
    return json.loads(await resp.read())


async def _pod_json(core: client.CoreV1Api, name: str) -> dict:
    return await _json(await core.read_namespaced_pod(name, "default", _preload_content=False))


async def _events(core: client.CoreV1Api, name: str, reason: str) -> list[dict]:
    resp = await core.list_namespaced_event(
        "default", field_selector=f"involvedObject.name={name},reason={reason}", _preload_content=False
    )
    return (await _json(resp))["items"]


async def test_a_gpu_pod_lands_through_the_bridge_and_sees_its_devices(cluster) -> None:
    sim, api = await cluster([_node("gpu-b-1", "pool-b"), _driver("pool-b"), GPU_CLASS])
    core, dra = client.CoreV1Api(api), client.ResourceV1Api(api)

    async def slices():
        resp = await dra.list_resource_slice(field_selector="spec.nodeName=gpu-b-1", _preload_content=False)
        return (await _json(resp))["items"]

    await eventually(slices, "the driver's slices")
    await core.create_namespaced_pod("default", _pod("canary", 2), _preload_content=False)

    async def running():
        p = await _pod_json(core, "canary")
        return p if (p.get("status") or {}).get("phase") == "Running" else None

    pod = await eventually(running, "the canary running")
    assert pod["spec"]["nodeName"] == "gpu-b-1"
    ext = pod["status"]["extendedResourceClaimStatus"]
    assert ext["requestMappings"] == [
        {"containerName": "main", "resourceName": "nvidia.com/gpu", "requestName": "container-0-request-1"}
    ]
    claim = await _json(
        await dra.read_namespaced_resource_claim(ext["resourceClaimName"], "default", _preload_content=False)
    )
    assert re.fullmatch(r"canary-extended-resources-[bcdfghjklmnpqrstvwxz2456789]{5}", claim["metadata"]["name"])
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert claim["metadata"]["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]
    assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    results = claim["status"]["allocation"]["devices"]["results"]
    assert len(results) == 2 and {r["pool"] for r in results} == {"gpu-b-1"}
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "canary", "uid": pod["metadata"]["uid"]}]
    by_name = {d["name"]: d for s in await slices() for d in s["spec"]["devices"]}
    want = [by_name[r["device"]]["attributes"]["uuid"]["string"] for r in results]
    assert pod["metadata"]["annotations"]["dragoman.io/visible-devices"] == ",".join(want)
    scheduled = await _events(core, "canary", "Scheduled")
    assert scheduled[0]["message"] == "Successfully assigned default/canary to gpu-b-1"

    # The claim goes with the pod: garbage collection, then the finalizer is released.
    await core.delete_namespaced_pod("canary", "default", grace_period_seconds=0, _preload_content=False)

    async def claim_gone():
        resp = await dra.list_namespaced_resource_claim("default", _preload_content=False)
        return (await _json(resp))["items"] == []

    await eventually(claim_gone, "the bridge claim deleted with its pod")


async def test_unschedulable_pod_gets_the_real_condition_and_event(cluster) -> None:
    sim, api = await cluster([_node("gpu-b-1", "pool-b")])
    core = client.CoreV1Api(api)
    await core.create_namespaced_pod("default", _pod("stuck", 1), _preload_content=False)
    msg = (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )

    async def failed():
        ev = await _events(core, "stuck", "FailedScheduling")
        return ev if ev else None

    ev = await eventually(failed, "FailedScheduling")
    assert ev[0]["message"] == msg and ev[0]["type"] == "Warning"
    # Written through events.k8s.io/v1 as kube-scheduler does: the core view has the reporter and the event time,
    # an empty source and no count or first/last timestamps.
    assert (ev[0]["reportingComponent"], ev[0]["action"], ev[0]["source"]) == ("default-scheduler", "Scheduling", {})
    assert ev[0]["reportingInstance"].startswith("default-scheduler-") and ev[0]["eventTime"].endswith("Z")
    assert ev[0]["firstTimestamp"] is None and ev[0]["lastTimestamp"] is None and "count" not in ev[0]
    pod = await _pod_json(core, "stuck")
    cond = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", msg)

    # A DeviceClass that serves the name changes the reason: now the node lacks devices.
    await client.ResourceV1Api(api).create_device_class(GPU_CLASS, _preload_content=False)

    async def reason_changed():
        p = await _pod_json(core, "stuck")
        c = next(c for c in p["status"]["conditions"] if c["type"] == "PodScheduled")
        return c["message"] if "cannot allocate all claims" in c["message"] else None

    assert (await eventually(reason_changed, "the new reason")).startswith(
        "0/1 nodes are available: 1 cannot allocate all claims. preemption: "
    )


async def test_quota_rejects_the_claim_the_scheduler_must_create(cluster) -> None:
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "gpu-quota", "namespace": "default"},
        "spec": {"hard": {"count/resourceclaims.resource.k8s.io": "0"}},
    }
    sim, api = await cluster([_node("gpu-b-1", "pool-b"), _driver("pool-b"), GPU_CLASS, quota])
    core = client.CoreV1Api(api)
    await core.create_namespaced_pod("default", _pod("blocked", 1), _preload_content=False)

    async def condition():
        p = await _pod_json(core, "blocked")
        c = next((c for c in (p.get("status") or {}).get("conditions") or [] if c["type"] == "PodScheduled"), None)
        return c if c and "exceeded quota" in c.get("message", "") else None

    cond = await eventually(condition, "the quota rejection")
    assert cond["reason"] == "SchedulerError"
    assert re.fullmatch(
        r'running PreBind plugin "DynamicResources": create claim for extended resources default/: '
        r'resourceclaims\.resource\.k8s\.io "blocked-extended-resources-\w{5}" is forbidden: exceeded '
        r"quota: gpu-quota, "
        r"requested: count/resourceclaims\.resource\.k8s\.io=1, used: count/resourceclaims\.resource\.k8s\.io=0, "
        r"limited: count/resourceclaims\.resource\.k8s\.io=0",
        cond["message"],
    ), cond["message"]
    assert (await _pod_json(core, "blocked"))["spec"].get("nodeName") is None

    async def quota_used():
        q = await _json(await core.read_namespaced_resource_quota("gpu-quota", "default", _preload_content=False))
        return q if (q.get("status") or {}).get("used") else None

    q = await eventually(quota_used, "the quota status")
    assert q["status"]["used"] == {"count/resourceclaims.resource.k8s.io": "0"}


def test_in_process_settle_terminates_and_a_stale_bridge_claim_is_replaced() -> None:
    from dragoman.sim.controllers.base import settle
    from dragoman.sim.server import Simulator

    pod = _pod("trainer", 1)
    pod["metadata"]["uid"] = "uid-trainer"
    stale = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": "trainer-extended-resources-x7k2p",
            "namespace": "default",
            "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": "uid-trainer", "controller": True}
            ],
        },
        "spec": {
            "devices": {
                "requests": [
                    {"name": "container-0-request-1", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}
                ]
            }
        },
    }
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "q", "namespace": "team"},
        "spec": {"hard": {"count/resourceclaims.resource.k8s.io": "0"}},
    }
    blocked = _pod("blocked", 1)
    blocked["metadata"]["namespace"] = "team"
    team = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    sim = Simulator([_node("gpu-b-1", "pool-b"), _driver("pool-b"), GPU_CLASS, pod, stale, team, quota, blocked])
    writes: list = []
    sim.store.subscribe(lambda et, r, o, old: writes.append((et, r, o["metadata"]["name"])))
    settle(default_controllers(sim))
    # The stale claim was deleted by PostFilter and the retry made a fresh one, bound to the node.
    claims = {c["metadata"]["name"] for c in sim.store.list("resourceclaims.resource.k8s.io", "default")}
    assert "trainer-extended-resources-x7k2p" not in claims and len(claims) == 1
    assert sim.store.get("pods", "default", "trainer")["spec"]["nodeName"] == "gpu-b-1"
    # The quota-blocked pod fails with a new claim name each attempt, yet settling ends.
    cond = next(
        c for c in sim.store.get("pods", "team", "blocked")["status"]["conditions"] if c["type"] == "PodScheduled"
    )
    assert cond["reason"] == "SchedulerError" and "exceeded quota: q" in cond["message"]
    # Writes: the no-devices verdict; then, once the driver published, the nomination before PreBind
    # (NominatedNodeNameForExpectation) and the quota failure that clears it. Nothing more until a backoff retry.
    assert sum(1 for w in writes if w[1] == "pods" and w[2] == "blocked") <= 3
    assert "nominatedNodeName" not in sim.store.get("pods", "team", "blocked")["status"]
