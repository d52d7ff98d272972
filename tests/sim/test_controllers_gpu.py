"""Cause and effect in the simulated GPU fleet through kubernetes-asyncio: device plugin exclusion, the 5-minute grace,
the GPU Operator, DRA slices, crash loops, DRA prepare."""

from __future__ import annotations

import asyncio
import copy
import json

import pytest
from dragoman.fleet import nvidia_schema as nvidia
from dragoman.sim.controllers import default_controllers
from kubernetes_asyncio import client

from tests.support.sim import api_client, running_simulator

H100 = (
    nvidia.NodeHardware(model=nvidia.CATALOG["h100-sxm"], gpu_count=8)
    if "h100-sxm" in nvidia.CATALOG
    else nvidia.NodeHardware(model=next(iter(nvidia.CATALOG.values())), gpu_count=8)
)
TIMEOUT = 30.0


def gpu_node(
    name: str, pool: str, hw: nvidia.NodeHardware = H100, extra_labels: dict | None = None, version: str = "v1.37.1"
) -> dict:
    labels = {"kubernetes.io/hostname": name, "pool": pool, **hw.gfd_labels(), **(extra_labels or {})}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {
            "nodeInfo": {"kubeletVersion": version},
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


def device_plugin_ds(
    name: str = "nvdp-nvidia-device-plugin", namespace: str = "nvidia-device-plugin", terms: int = 2
) -> dict:
    # The standalone chart's shape: several OR-ed nodeSelectorTerms, each must get the exclusion.
    term_list = [
        {
            "matchExpressions": [
                {"key": "feature.node.kubernetes.io/pci-10de.present", "operator": "In", "values": ["true"]}
            ]
        },
        {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]},
    ][:terms]
    labels = {"app.kubernetes.io/name": "nvidia-device-plugin", "app.kubernetes.io/instance": "nvdp"}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": term_list}
                        }
                    },
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [
                        {"name": "nvidia-device-plugin-ctr", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.4"}
                    ],
                },
            },
        },
    }


def operator_ds() -> dict:
    labels = {"app": "nvidia-device-plugin-daemonset"}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "nvidia-device-plugin-daemonset",
            "namespace": "gpu-operator",
            "labels": {**labels, "app.kubernetes.io/managed-by": "gpu-operator"},
        },
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeSelector": {"nvidia.com/gpu.deploy.device-plugin": "true"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [
                        {"name": "nvidia-device-plugin", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.4"}
                    ],
                },
            },
        },
    }


def dra_driver_ds(
    node_selector: dict, image: str = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.0"
) -> dict:
    labels = {"app.kubernetes.io/name": "dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-component": "kubelet-plugin"}
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
                    "nodeSelector": node_selector,
                    "containers": [{"name": "gpus", "image": image}, {"name": "compute-domains", "image": image}],
                },
            },
        },
    }


async def eventually(check, timeout: float = TIMEOUT, what: str = "condition"):
    """Poll an async predicate until it returns something truthy (generous: the machine is shared)."""
    deadline = asyncio.get_running_loop().time() + timeout
    last = None
    while True:
        last = await check()
        if last:
            return last
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}; last value {last!r}")
        await asyncio.sleep(0.05)


class Cluster:
    """Raw-JSON access to the simulator through kubernetes-asyncio."""

    def __init__(self, api: client.ApiClient) -> None:
        self.api = api
        self.core = client.CoreV1Api(api)
        self.apps = client.AppsV1Api(api)
        self.dra = client.ResourceV1Api(api)

    @staticmethod
    async def _json(resp) -> dict:
        body = await resp.read()
        # With _preload_content=False the client does not raise on errors: a test must not read a Status as success.
        assert resp.status < 300, body
        return json.loads(body)

    async def node(self, name: str) -> dict:
        return await self._json(await self.core.read_node(name, _preload_content=False))

    async def gpus(self, name: str) -> tuple[str | None, str | None]:
        st = (await self.node(name)).get("status", {})
        return st.get("allocatable", {}).get("nvidia.com/gpu"), st.get("capacity", {}).get("nvidia.com/gpu")

    async def pods(
        self, namespace: str | None = None, field_selector: str = "", label_selector: str = ""
    ) -> list[dict]:
        if namespace:
            resp = await self.core.list_namespaced_pod(
                namespace, field_selector=field_selector, label_selector=label_selector, _preload_content=False
            )
        else:
            resp = await self.core.list_pod_for_all_namespaces(
                field_selector=field_selector, label_selector=label_selector, _preload_content=False
            )
        return (await self._json(resp))["items"]

    async def ds(self, namespace: str, name: str) -> dict:
        return await self._json(await self.apps.read_namespaced_daemon_set(name, namespace, _preload_content=False))

    async def replace_ds(self, obj: dict) -> dict:
        md = obj["metadata"]
        return await self._json(
            await self.apps.replace_namespaced_daemon_set(md["name"], md["namespace"], obj, _preload_content=False)
        )

    async def slices(self, node: str) -> list[dict]:
        resp = await self.dra.list_resource_slice(
            field_selector=f"spec.nodeName={node},spec.driver=gpu.nvidia.com", _preload_content=False
        )
        return (await self._json(resp))["items"]

    async def label_node(self, name: str, labels: dict) -> None:
        await self._json(
            await self.core.patch_node(
                name,
                {"metadata": {"labels": labels}},
                _content_type="application/merge-patch+json",
                _preload_content=False,
            )
        )


@pytest.fixture
def fleet():
    return [gpu_node("gpu-a-1", "pool-a"), gpu_node("gpu-b-1", "pool-b"), gpu_node("gpu-b-2", "pool-b")]


async def start(objects):
    ctx = running_simulator(objects=objects)
    sim = await ctx.__aenter__()
    for c in default_controllers(sim, scheduler=False):
        sim.add_controller(c)
    api = await api_client(sim)
    return ctx, sim, api


@pytest.fixture
async def cluster_factory():
    opened = []

    async def make(objects):
        ctx, sim, api = await start(objects)
        opened.append((ctx, api))
        return sim, Cluster(api)

    yield make
    for ctx, api in opened:
        await api.close()
        await ctx.__aexit__(None, None, None)


async def test_excluding_the_device_plugin_by_affinity_drops_allocatable_at_once_and_capacity_after_the_grace(
    cluster_factory, fleet
):
    sim, k = await cluster_factory(fleet + [device_plugin_ds()])
    for n in ("gpu-a-1", "gpu-b-1", "gpu-b-2"):
        await eventually(lambda n=n: _eq(k.gpus(n), ("8", "8")), what=f"{n} advertising 8 GPUs")
    ds = await k.ds("nvidia-device-plugin", "nvdp-nvidia-device-plugin")
    assert ds["status"]["desiredNumberScheduled"] == 3

    for term in ds["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]:
        term["matchExpressions"].append({"key": "pool", "operator": "NotIn", "values": ["pool-b"]})
    await k.replace_ds(ds)

    async def gone():
        return not await k.pods("nvidia-device-plugin", field_selector="spec.nodeName=gpu-b-1")

    await eventually(gone, what="the plugin pod leaving gpu-b-1")
    # Allocatable is 0 at once; capacity keeps 8 until the endpoint grace has passed.
    await eventually(lambda: _eq(k.gpus("gpu-b-1"), ("0", "8")), what="allocatable 0, capacity 8")
    assert await k.gpus("gpu-b-2") == ("0", "8")
    sim.clock.step(200)
    await asyncio.sleep(0.3)
    assert await k.gpus("gpu-b-1") == ("0", "8")
    sim.clock.step(101)
    await eventually(lambda: _eq(k.gpus("gpu-b-1"), ("0", "0")), what="capacity 0 after the grace")
    await eventually(lambda: _eq(k.gpus("gpu-a-1"), ("8", "8")), what="pool-a untouched")
    status = (await k.ds("nvidia-device-plugin", "nvdp-nvidia-device-plugin"))["status"]
    assert status["desiredNumberScheduled"] == 1 and status["observedGeneration"] == 2


async def test_gpu_operator_fills_deploy_labels_and_keeps_a_users_false(cluster_factory):
    nodes = [gpu_node("gpu-a-1", "pool-a"), gpu_node("gpu-a-2", "pool-a"), gpu_node("cpu-1", "cpu")]
    for key in list(nodes[2]["metadata"]["labels"]):
        if key.startswith("nvidia.com/"):
            del nodes[2]["metadata"]["labels"][key]
    sim, k = await cluster_factory(nodes + [operator_ds()])
    node = await eventually(
        lambda: _labelled(k, "gpu-a-2", "nvidia.com/gpu.deploy.device-plugin"), what="deploy labels"
    )
    assert node["metadata"]["labels"]["nvidia.com/gpu.deploy.container-toolkit"] == "true"
    assert "nvidia.com/gpu.deploy.device-plugin" not in (await k.node("cpu-1"))["metadata"]["labels"]
    await eventually(lambda: _eq(k.gpus("gpu-a-2"), ("8", "8")), what="the operator's plugin serving gpu-a-2")

    await k.label_node("gpu-a-2", {"nvidia.com/gpu.deploy.device-plugin": "false"})
    await eventually(
        lambda: _empty(k.pods("gpu-operator", field_selector="spec.nodeName=gpu-a-2")), what="the plugin pod leaving"
    )
    await eventually(lambda: _eq(k.gpus("gpu-a-2"), ("0", "8")), what="allocatable 0 at once")
    sim.clock.step(301)
    await eventually(lambda: _eq(k.gpus("gpu-a-2"), ("0", "0")), what="capacity 0 after the grace")
    assert (await k.node("gpu-a-2"))["metadata"]["labels"]["nvidia.com/gpu.deploy.device-plugin"] == "false"
    assert await k.gpus("gpu-a-1") == ("8", "8")


async def test_gpu_operator_reverts_a_direct_daemonset_edit(cluster_factory):
    sim, k = await cluster_factory(
        [gpu_node("gpu-a-1", "pool-a", extra_labels={"nvidia.com/gpu.deploy.device-plugin": "true"}), operator_ds()]
    )
    ds = await eventually(
        lambda: _ds_ready(k, "gpu-operator", "nvidia-device-plugin-daemonset", 1), what="operator plugin running"
    )
    edited = copy.deepcopy(ds)
    edited["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["pool-a"]}]}
                ]
            }
        }
    }
    await k.replace_ds(edited)

    async def reverted():
        cur = await k.ds("gpu-operator", "nvidia-device-plugin-daemonset")
        return cur if "affinity" not in cur["spec"]["template"]["spec"] and cur["metadata"]["generation"] >= 3 else None

    await eventually(reverted, what="the operator reverting the edit")
    # The plugin still (again) serves the node: excluding it this way does not stick under the operator.
    await eventually(lambda: _eq(k.gpus("gpu-a-1"), ("8", "8")), what="the plugin serving again")


async def test_scoping_the_dra_driver_to_a_node_publishes_its_slices_and_stopping_it_withdraws_them(
    cluster_factory, fleet
):
    sim, k = await cluster_factory(
        fleet + [dra_driver_ds({"pool": "none"}, image="nvcr.io/nvidia/k8s-dra-driver-gpu:v25.3.2")]
    )
    await asyncio.sleep(0.3)
    assert await k.slices("gpu-b-1") == []

    ds = await k.ds("dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-kubelet-plugin")
    ds["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "gpu-b-1"}
    await k.replace_ds(ds)
    slices = await eventually(lambda: k.slices("gpu-b-1"), what="slices for gpu-b-1")
    devices = [d for s in slices for d in s["spec"]["devices"]]
    assert len(devices) == 8
    assert slices[0]["spec"]["pool"]["name"] == "gpu-b-1" and slices[0]["spec"]["nodeName"] == "gpu-b-1"
    # v25.3 publishes the retired index/minor/pcieBusID attributes.
    assert {"index", "minor", "pcieBusID", "uuid"} <= set(devices[0]["attributes"])
    assert await k.slices("gpu-b-2") == []
    assert await k.slices("gpu-a-1") == []

    # Nothing changes → nothing is written again.
    rv = sim.store.resource_version
    await asyncio.sleep(0.3)
    assert [s["metadata"]["resourceVersion"] for s in await k.slices("gpu-b-1")] == [
        s["metadata"]["resourceVersion"] for s in slices
    ]

    # A newer image publishes the newer schema (pcieBusID moved to the standard domain).
    ds = await k.ds("dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-kubelet-plugin")
    for c in ds["spec"]["template"]["spec"]["containers"]:
        c["image"] = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.0"
    await k.replace_ds(ds)

    async def new_schema():
        sl = await k.slices("gpu-b-1")
        attrs = sl[0]["spec"]["devices"][0]["attributes"] if sl and sl[0]["spec"]["devices"] else {}
        return sl if "resource.kubernetes.io/pciBusID" in attrs and "index" not in attrs else None

    await eventually(new_schema, what="the v0.4 schema")
    assert sim.store.resource_version > rv

    ds = await k.ds("dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-kubelet-plugin")
    ds["spec"]["template"]["spec"]["nodeSelector"] = {"pool": "none"}
    await k.replace_ds(ds)
    await eventually(lambda: _empty(k.pods("dra-driver-nvidia-gpu")), what="the driver pod gone")
    # The kubelet wipes a stopped driver's slices 30 s after it unregistered (cm/dra defaultWipingDelay), not at once.
    await asyncio.sleep(0.3)
    assert await k.slices("gpu-b-1"), "the slices stay through the wiping delay"
    sim.clock.step(31)
    await eventually(lambda: _empty(k.slices("gpu-b-1")), what="slices withdrawn")


async def test_a_crash_looping_plugin_flips_allocatable(cluster_factory):
    sim, k = await cluster_factory([gpu_node("gpu-a-1", "pool-a"), device_plugin_ds()])
    await eventually(lambda: _eq(k.gpus("gpu-a-1"), ("8", "8")), what="8 GPUs")
    pod = (await k.pods("nvidia-device-plugin"))[0]
    await Cluster._json(
        await k.core.patch_namespaced_pod(
            pod["metadata"]["name"],
            "nvidia-device-plugin",
            {"metadata": {"annotations": {"sim.dragoman.io/crash-loop-seconds": "10"}}},
            _content_type="application/merge-patch+json",
            _preload_content=False,
        )
    )
    # crash-loop-seconds 10: each start runs 10 s and exits 1; the kubelet's back-off decides the restart (none the
    # first time, then 10 s, 20 s, ...), as dragoman-cri plays it under a real kubelet.

    async def plugin():
        return (await k.pods("nvidia-device-plugin"))[0]["status"]["containerStatuses"][0]

    sim.clock.step(10)
    await eventually(lambda: _restarted(plugin, 1), what="the first exit, restarted at once")
    assert await k.gpus("gpu-a-1") == ("8", "8"), "no back-off before the first restart: allocatable never moved"
    sim.clock.step(10)
    await eventually(lambda: _eq(k.gpus("gpu-a-1"), ("0", "8")), what="allocatable 0 through the first back-off")
    # As a real kubelet v1.37.2 shows it through the back-off: the exited attempt, not waiting CrashLoopBackOff.
    assert (await plugin())["state"]["terminated"]["reason"] == "Error"
    sim.clock.step(10)
    await eventually(lambda: _eq(k.gpus("gpu-a-1"), ("8", "8")), what="allocatable back after the restart")
    assert (await plugin())["restartCount"] == 2
    sim.clock.step(10)
    await eventually(lambda: _eq(k.gpus("gpu-a-1"), ("0", "8")), what="allocatable 0 on the next crash")
    sim.clock.step(10)
    await asyncio.sleep(0.2)
    assert (await plugin())["restartCount"] == 2, "the second back-off is 20 s"
    sim.clock.step(10)
    await eventually(lambda: _restarted(plugin, 3), what="restarted after 20 s")


async def _restarted(status, n: int) -> bool:
    cs = await status()
    return cs["restartCount"] == n and "running" in (cs.get("state") or {})


async def test_a_nodes_pod_fault_makes_whichever_driver_pod_lands_there_crash_loop_and_publish_nothing(
    cluster_factory,
):
    """The node's sim.dragoman.io/pod-faults names the driver's DaemonSet: the pod the DaemonSet makes there exits as
    it starts, is restarted at once the first time, then after the kubelet's back-off (10 s, then 20 s), never seen
    running, so the driver publishes
    no slices; a fresh pod (the old one deleted) inherits the fault; the fault lifted, it runs and publishes."""
    faults = {"dra-driver-nvidia-gpu-kubelet-plugin": {"sim.dragoman.io/crash-at-start": "true"}}
    node = gpu_node("gpu-c-1", "pool-c")
    node["metadata"]["annotations"] = {"sim.dragoman.io/pod-faults": json.dumps(faults)}
    sim, k = await cluster_factory([node, dra_driver_ds({"pool": "pool-c"})])

    async def exited(restarts: int, not_uid: str = ""):
        for p in await k.pods("dra-driver-nvidia-gpu"):
            cs = (p["status"].get("containerStatuses") or [{}])[0]
            if p["metadata"]["uid"] != not_uid and "terminated" in (cs.get("state") or {}):
                if cs.get("restartCount") == restarts:
                    return p
        return None

    # No back-off before the first restart (kubelet v1.37.2's back-off entry is made then): it exits at its start,
    # starts again at once and exits again.
    pod = await eventually(lambda: exited(1), what="the driver's container exited at its start, twice")
    cs = pod["status"]["containerStatuses"][0]
    assert pod["status"]["phase"] == "Running" and cs["state"]["terminated"]["exitCode"] == 1 and not cs["ready"]
    sim.clock.step(10)
    await eventually(lambda: exited(2), what="restarted after 10 s, and exited again")
    sim.clock.step(10)
    await asyncio.sleep(0.3)
    assert (await exited(2)) is not None, "the second back-off is 20 s"
    sim.clock.step(10)
    await eventually(lambda: exited(3), what="restarted after 20 s")
    assert await k.slices("gpu-c-1") == []
    reasons = {e.reason for e in (await k.core.list_namespaced_event("dra-driver-nvidia-gpu")).items}
    assert "BackOff" in reasons

    # A fresh pod (the DaemonSet's own) on the node crash-loops too.
    await k.core.delete_namespaced_pod(pod["metadata"]["name"], "dra-driver-nvidia-gpu", grace_period_seconds=0)

    await eventually(lambda: exited(1, pod["metadata"]["uid"]), what="the DaemonSet's new pod, crashed at its start")
    await asyncio.sleep(0.3)
    assert await k.slices("gpu-c-1") == []

    # The fault lifted: at the end of the back-off the container starts and stays up; the driver publishes.
    await k.core.patch_node(
        "gpu-c-1",
        {"metadata": {"annotations": {"sim.dragoman.io/pod-faults": None}}},
        _content_type="application/merge-patch+json",
    )
    sim.clock.step(10)
    slices = await eventually(lambda: k.slices("gpu-c-1"), what="slices once the driver runs")
    assert len([d for s in slices for d in s["spec"]["devices"]]) == 8


async def test_a_nodes_not_ready_and_flapping_faults_are_played_by_a_fresh_daemonset_pod(cluster_factory):
    """The demo's not-ready driver (h100-dra) and flapping device plugin (a100-serve) are faults of their nodes: the
    pods their DaemonSets make there, fresh ones included, play them — the driver runs but is never ready, the
    plugin crashes every N seconds (allocatable 0 while it is down) — so a real control plane's DaemonSet controller,
    which makes its own pods, shows them as the loaded demo does."""
    faults = {
        "dra-driver-nvidia-gpu-kubelet-plugin": {"sim.dragoman.io/not-ready": "true"},
        "nvdp-nvidia-device-plugin": {"sim.dragoman.io/crash-loop-seconds": "10"},
    }
    node = gpu_node("gpu-d-1", "pool-d")
    node["metadata"]["annotations"] = {"sim.dragoman.io/pod-faults": json.dumps(faults)}
    sim, k = await cluster_factory([node, dra_driver_ds({"pool": "pool-d"}), device_plugin_ds()])

    async def driver(not_uid: str = ""):
        for p in await k.pods("dra-driver-nvidia-gpu"):
            cs = (p["status"].get("containerStatuses") or [{}])[0]
            if p["metadata"]["uid"] != not_uid and "running" in (cs.get("state") or {}):
                return p
        return None

    first = await eventually(driver, what="the driver's container running")
    assert first["status"]["containerStatuses"][0]["ready"] is False
    await k.core.delete_namespaced_pod(first["metadata"]["name"], "dra-driver-nvidia-gpu", grace_period_seconds=0)
    fresh = await eventually(lambda: driver(first["metadata"]["uid"]), what="the DaemonSet's new driver pod")
    assert fresh["status"]["containerStatuses"][0]["ready"] is False
    assert not (fresh["metadata"].get("annotations") or {}).get("sim.dragoman.io/not-ready")

    # The device plugin's pod (the DaemonSet's, no annotation of its own) exits 10 s after each start: restarted at
    # once the first time, then after the kubelet's 10 s back-off (allocatable 0 meanwhile, capacity kept).
    async def plugin():
        return (await k.pods("nvidia-device-plugin"))[0]["status"]["containerStatuses"][0]

    await eventually(lambda: _eq(k.gpus("gpu-d-1"), ("8", "8")), what="the plugin serving")
    sim.clock.step(10)
    await eventually(lambda: _restarted(plugin, 1), what="its first exit, restarted at once")
    sim.clock.step(10)
    await eventually(lambda: _eq(k.gpus("gpu-d-1"), ("0", "8")), what="allocatable 0 while the plugin is down")
    sim.clock.step(10)
    await eventually(lambda: _eq(k.gpus("gpu-d-1"), ("8", "8")), what="allocatable back after its restart")
    assert (await plugin())["restartCount"] == 2


async def test_failed_prepare_while_the_driver_is_not_ready_then_the_pod_sees_its_devices(cluster_factory):
    node = gpu_node("gpu-b-1", "pool-b")
    driver = dra_driver_ds({"pool": "pool-b"})
    driver["spec"]["template"]["metadata"]["annotations"] = {"sim.dragoman.io/not-ready": "true"}
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "two-gpus", "namespace": "default"},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}]}
        },
    }
    sim, k = await cluster_factory([node, driver, claim])
    slices = await eventually(lambda: k.slices("gpu-b-1"), what="slices (the plugin runs, though not ready)")
    devices = sorted(slices[0]["spec"]["devices"], key=lambda d: d["name"])[:2]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "canary", "namespace": "default"},
        "spec": {
            "nodeName": "gpu-b-1",
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "two-gpus"}],
            "containers": [{"name": "main", "image": "ubuntu", "resources": {"claims": [{"name": "gpu"}]}}],
        },
    }
    created = await Cluster._json(await k.core.create_namespaced_pod("default", pod, _preload_content=False))
    cur = sim.store.get("resourceclaims.resource.k8s.io", "default", "two-gpus")
    cur["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-b-1", "device": d["name"]}
                    for d in devices
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-b-1"]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": "canary", "uid": created["metadata"]["uid"]}],
    }
    await Cluster._json(
        await k.api.call_api(
            "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/two-gpus/status",
            "PUT",
            body=cur,
            header_params={"Content-Type": "application/json", "Accept": "application/json"},
            auth_settings=["BearerToken"],
            _preload_content=False,
        )
    )

    async def failed_prepare():
        resp = await k.core.list_namespaced_event(
            "default",
            field_selector="involvedObject.name=canary,reason=FailedPrepareDynamicResources",
            _preload_content=False,
        )
        return (await Cluster._json(resp))["items"]

    events = await eventually(failed_prepare, what="FailedPrepareDynamicResources")
    assert "gpu.nvidia.com" in events[0]["message"] and events[0]["type"] == "Warning"
    waiting = (await k.pods("default"))[0]
    assert waiting["status"]["phase"] == "Pending"
    assert waiting["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating"

    # The driver becomes ready: the pod starts and sees exactly its claim's devices.
    for p in await k.pods("dra-driver-nvidia-gpu"):
        await Cluster._json(
            await k.core.patch_namespaced_pod(
                p["metadata"]["name"],
                "dra-driver-nvidia-gpu",
                {"metadata": {"annotations": {"sim.dragoman.io/not-ready": None}}},
                _content_type="application/merge-patch+json",
                _preload_content=False,
            )
        )

    async def running():
        p = (await k.pods("default"))[0]
        return p if p["status"].get("phase") == "Running" else None

    p = await eventually(running, what="the canary running")
    want = [d["attributes"]["uuid"]["string"] for d in devices]
    assert p["metadata"]["annotations"]["dragoman.io/visible-devices"] == ",".join(want)
    resources = p["status"]["containerStatuses"][0]["allocatedResourcesStatus"][0]
    # Named after the container's reference (`gpu`, no request), as the real API server requires: it refuses a pod
    # status naming the ResourceClaim object ("claim:two-gpus/gpu") — found by running the kubelet agent against it.
    assert resources["name"] == "claim:gpu"
    # Each device named as a kubelet v1.37 names it: by the first CDI device the driver (v0.4.0) prepared for it,
    # the claim's own spec entry (pkg/kubelet/cm/dra buildResourceHealth; cmd/gpu-kubelet-plugin GetClaimDeviceName).
    uid = sim.store.get("resourceclaims.resource.k8s.io", "default", "two-gpus")["metadata"]["uid"]
    assert [r["resourceID"] for r in resources["resources"]] == [
        f"k8s.gpu.nvidia.com/claim={uid}-{d['name']}" for d in devices
    ]


async def _eq(coro, want):
    got = await coro
    return got == want


async def _empty(coro):
    return not await coro


async def _labelled(k: Cluster, node: str, label: str):
    n = await k.node(node)
    return n if label in (n["metadata"].get("labels") or {}) else None


async def _ds_ready(k: Cluster, ns: str, name: str, n: int):
    ds = await k.ds(ns, name)
    return ds if (ds.get("status") or {}).get("numberReady") == n else None


async def _bridge_a_pod(sim, k: Cluster, node: str, devices: list[dict]) -> dict:
    """Do what the scheduler does for a pod whose nvidia.com/gpu is served by DRA: claim, status field, then bind."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "canary", "namespace": "default"},
        "spec": {
            "schedulerName": "dragoman-test-manual",
            "containers": [
                {
                    "name": "main",
                    "image": "nvcr.io/nvidia/cuda:12.9.0-base-ubuntu24.04",
                    "resources": {"limits": {"nvidia.com/gpu": "2"}},
                }
            ],
        },
    }
    created = await Cluster._json(await k.core.create_namespaced_pod("default", pod, _preload_content=False))
    uid = created["metadata"]["uid"]
    claim_name = "canary-extended-resources-x7k2p"
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": claim_name,
            "namespace": "default",
            "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "canary", "uid": uid, "controller": True}],
        },
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "container-0-request-0",
                        "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2},
                    }
                ]
            }
        },
    }
    sim.store.create("resourceclaims.resource.k8s.io", claim)
    cur = sim.store.get("resourceclaims.resource.k8s.io", "default", claim_name)
    cur["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "container-0-request-0", "driver": "gpu.nvidia.com", "pool": node, "device": d["name"]}
                    for d in devices
                ]
            }
        },
        "reservedFor": [{"resource": "pods", "name": "canary", "uid": uid}],
    }
    sim.store.update("resourceclaims.resource.k8s.io", cur, subresource="status")
    created = (await k.pods("default", field_selector="metadata.name=canary"))[0]
    created.setdefault("status", {})["extendedResourceClaimStatus"] = {
        "resourceClaimName": claim_name,
        "requestMappings": [
            {"containerName": "main", "resourceName": "nvidia.com/gpu", "requestName": "container-0-request-0"}
        ],
    }
    resp = await k.core.replace_namespaced_pod_status("canary", "default", created, _preload_content=False)
    assert resp.status == 200, await resp.read()
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "canary", "namespace": "default"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    await Cluster._json(
        await k.core.create_namespaced_pod_binding("canary", "default", binding, _preload_content=False)
    )

    async def started():
        p = (await k.pods("default", field_selector="metadata.name=canary"))[0]
        return p if p["status"].get("phase") in ("Running", "Failed") else None

    return await eventually(started, what="the kubelet deciding the canary")


async def test_a_bridged_pod_sees_its_claims_devices(cluster_factory):
    sim, k = await cluster_factory([gpu_node("gpu-b-1", "pool-b"), dra_driver_ds({"pool": "pool-b"})])
    slices = await eventually(lambda: k.slices("gpu-b-1"), what="slices")
    devices = sorted(slices[0]["spec"]["devices"], key=lambda d: d["name"])[2:4]
    pod = await _bridge_a_pod(sim, k, "gpu-b-1", devices)
    assert pod["status"]["phase"] == "Running"
    want = [d["attributes"]["uuid"]["string"] for d in devices]
    assert pod["metadata"]["annotations"]["dragoman.io/visible-devices"] == ",".join(want)
    # A real kubelet v1.37.2 reports allocatedResourcesStatus only for containers naming a claim in resources.claims:
    # a bridged container gets none.
    assert "allocatedResourcesStatus" not in pod["status"]["containerStatuses"][0]


async def test_a_kubelet_without_the_bridge_runs_the_pod_without_its_gpus(cluster_factory):
    sim, k = await cluster_factory(
        [gpu_node("gpu-b-1", "pool-b", version="v1.35.3"), dra_driver_ds({"pool": "pool-b"})]
    )
    slices = await eventually(lambda: k.slices("gpu-b-1"), what="slices")
    pod = await _bridge_a_pod(sim, k, "gpu-b-1", sorted(slices[0]["spec"]["devices"], key=lambda d: d["name"])[:2])
    # v1.35 ignores extendedResourceClaimStatus and drops nvidia.com/gpu, absent from its allocatable: it runs,
    # GPU-less.
    assert pod["status"]["phase"] == "Running"
    assert "dragoman.io/visible-devices" not in (pod["metadata"].get("annotations") or {})
    assert "allocatedResourcesStatus" not in pod["status"]["containerStatuses"][0]


async def test_gpu_operator_recreates_its_deleted_device_plugin_daemonset(cluster_factory):
    sim, k = await cluster_factory(
        [gpu_node("gpu-a-1", "pool-a", extra_labels={"nvidia.com/gpu.deploy.device-plugin": "true"}), operator_ds()]
    )
    old = await eventually(
        lambda: _ds_ready(k, "gpu-operator", "nvidia-device-plugin-daemonset", 1), what="operator plugin running"
    )
    await Cluster._json(
        await k.apps.delete_namespaced_daemon_set(
            "nvidia-device-plugin-daemonset", "gpu-operator", _preload_content=False
        )
    )

    async def recreated():
        try:
            ds = await k.ds("gpu-operator", "nvidia-device-plugin-daemonset")
        except AssertionError:
            return None
        return (
            ds
            if ds["metadata"]["uid"] != old["metadata"]["uid"] and (ds.get("status") or {}).get("numberReady") == 1
            else None
        )

    ds = await eventually(recreated, what="the DaemonSet recreated and serving")
    assert ds["spec"]["template"]["spec"]["nodeSelector"] == {"nvidia.com/gpu.deploy.device-plugin": "true"}


async def test_the_device_manager_hands_out_distinct_gpus_and_reports_them(cluster_factory):
    """As a real kubelet v1.37.2 does (tests/controlplane/test_real_gpu_node.py): each container asking for
    nvidia.com/gpu through the device plugin is given GPUs no other pod holds, named in its
    allocatedResourcesStatus; a crash of the plugin afterwards takes nothing from it."""
    sim, k = await cluster_factory([gpu_node("gpu-a-1", "pool-a"), device_plugin_ds()])
    await eventually(lambda: _eq(k.gpus("gpu-a-1"), ("8", "8")), what="8 GPUs")
    for name, n in (("two", 2), ("one", 1)):
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "nodeName": "gpu-a-1",
                "containers": [{"name": "main", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": str(n)}}}],
            },
        }
        await Cluster._json(await k.core.create_namespaced_pod("default", pod, _preload_content=False))

    async def held():
        pods = {p["metadata"]["name"]: p for p in await k.pods("default")}
        if not all((p.get("status") or {}).get("phase") == "Running" for p in pods.values()) or len(pods) < 2:
            return None
        return {
            name: [
                (e["name"], [r["resourceID"] for r in e["resources"]])
                for e in p["status"]["containerStatuses"][0].get("allocatedResourcesStatus") or ()
            ]
            for name, p in pods.items()
        }

    got = await eventually(held, what="both pods running")
    (two_name, two), (one_name, one) = got["two"][0], got["one"][0]
    assert two_name == one_name == "nvidia.com/gpu" and len(two) == 2 and len(one) == 1
    # Distinct GPUs, the first free ones in the plugin's order (whichever pod the kubelet admitted first).
    assert sorted(two + one) == sorted(nvidia.gpu_uuid("gpu-a-1", i) for i in range(3))


def test_the_restart_back_off_is_the_kubelets() -> None:
    """kubelet v1.37.2's crash-loop back-off (kuberuntime doBackOff, flowcontrol.Backoff with no jitter): no wait
    before the first restart, then 10 s doubling to 300 s; a node's maxContainerRestartPeriod caps start and top."""
    from dragoman.sim.controllers.kubelet import restart_delay

    assert [restart_delay(r) for r in range(8)] == [0, 10, 20, 40, 80, 160, 300, 300]
    assert [restart_delay(r, 5) for r in range(4)] == [0, 5, 5, 5]
    assert [restart_delay(r, 30) for r in range(5)] == [0, 10, 20, 30, 30]


async def test_a_nodes_max_restart_period_shortens_the_agents_back_off(cluster_factory):
    """sim.dragoman.io/max-container-restart-seconds on the node (what `--real-kubelets` gives a real kubelet as
    crashLoopBackOff.maxContainerRestartPeriod): the agent's crash loop waits 3 s between restarts, not 10, 20, 40."""
    faults = {"dra-driver-nvidia-gpu-kubelet-plugin": {"sim.dragoman.io/crash-at-start": "true"}}
    node = gpu_node("gpu-e-1", "pool-e")
    node["metadata"]["annotations"] = {
        "sim.dragoman.io/pod-faults": json.dumps(faults),
        "sim.dragoman.io/max-container-restart-seconds": "3",
    }
    sim, k = await cluster_factory([node, dra_driver_ds({"pool": "pool-e"})])

    async def restarts() -> int:
        pods = await k.pods("dra-driver-nvidia-gpu")
        return (pods[0]["status"].get("containerStatuses") or [{}])[0].get("restartCount", 0) if pods else -1

    await eventually(lambda: _is(restarts(), 1), what="exited at its start and restarted at once")
    for n in (2, 3, 4):
        sim.clock.step(3)
        await eventually(lambda n=n: _is(restarts(), n), what=f"restart {n} after 3 s")


async def _is(coro, want) -> bool:
    return (await coro) == want
