"""A pool's migration as cause and effect through kubernetes-asyncio, every controller running: exclude the device
plugin, scope the DRA driver, and `nvidia.com/gpu: 2` lands through the bridge."""

from __future__ import annotations

from dragoman.sim.controllers import default_controllers
from kubernetes_asyncio import client

from tests.sim.test_controllers_gpu import Cluster, device_plugin_ds, dra_driver_ds, eventually, gpu_node
from tests.support.sim import api_client, running_simulator

GPU_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com"},
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


def gpu_pod(name: str, pool: str, n: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "nodeSelector": {"pool": pool},
            "containers": [
                {
                    "name": "main",
                    "image": "nvcr.io/nvidia/cuda:12.9.0-base-ubuntu24.04",
                    "resources": {"limits": {"nvidia.com/gpu": str(n)}},
                }
            ],
        },
    }


async def test_exclude_the_plugin_scope_the_driver_and_a_gpu_pod_lands_through_the_bridge():
    objects = [
        gpu_node("gpu-a-1", "pool-a"),
        gpu_node("gpu-b-1", "pool-b"),
        device_plugin_ds(),
        dra_driver_ds({"pool": "none"}),
        GPU_CLASS,
    ]
    async with running_simulator(objects=objects) as sim:
        for c in default_controllers(sim):
            sim.add_controller(c)
        api = await api_client(sim)
        try:
            k = Cluster(api)
            for n in ("gpu-a-1", "gpu-b-1"):
                await eventually(lambda n=n: _is(k.gpus(n), ("8", "8")), what=f"the device plugin serving {n}")

            # 1. Exclude the device plugin from pool-b: its pod leaves, allocatable drops at once.
            ds = await k.ds("nvidia-device-plugin", "nvdp-nvidia-device-plugin")
            for term in ds["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ]["nodeSelectorTerms"]:
                term["matchExpressions"].append({"key": "pool", "operator": "NotIn", "values": ["pool-b"]})
            await k.replace_ds(ds)
            await eventually(lambda: _is(k.gpus("gpu-b-1"), ("0", "8")), what="allocatable 0 on gpu-b-1")

            # 2. Scope the DRA driver to pool-b: slices appear.
            drv = await k.ds("dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-kubelet-plugin")
            drv["spec"]["template"]["spec"]["nodeSelector"] = {"pool": "pool-b"}
            await k.replace_ds(drv)
            slices = await eventually(lambda: k.slices("gpu-b-1"), what="gpu-b-1's slices")
            uuids = {d["name"]: d["attributes"]["uuid"]["string"] for s in slices for d in s["spec"]["devices"]}

            # 3. An unchanged `nvidia.com/gpu: 2` pod lands on pool-b through the bridge and sees its two GPUs.
            await Cluster._json(
                await k.core.create_namespaced_pod("default", gpu_pod("canary", "pool-b", 2), _preload_content=False)
            )

            async def running(name: str):
                pods = await k.pods("default", field_selector=f"metadata.name={name}")
                return pods[0] if pods and pods[0]["status"].get("phase") == "Running" else None

            pod = await eventually(lambda: running("canary"), what="the canary running")
            assert pod["spec"]["nodeName"] == "gpu-b-1"
            ext = pod["status"]["extendedResourceClaimStatus"]
            dra = client.ResourceV1Api(api)
            claim = await Cluster._json(
                await dra.read_namespaced_resource_claim(ext["resourceClaimName"], "default", _preload_content=False)
            )
            results = claim["status"]["allocation"]["devices"]["results"]
            assert len(results) == 2 and {r["pool"] for r in results} == {"gpu-b-1"}
            assert pod["metadata"]["annotations"]["dragoman.io/visible-devices"] == ",".join(
                uuids[r["device"]] for r in results
            )

            # The pool still on the device plugin serves the same pod spec the old way: no claim, no status field.
            await Cluster._json(
                await k.core.create_namespaced_pod("default", gpu_pod("legacy", "pool-a", 2), _preload_content=False)
            )
            legacy = await eventually(lambda: running("legacy"), what="the legacy pod running")
            assert legacy["spec"]["nodeName"] == "gpu-a-1"
            assert "extendedResourceClaimStatus" not in legacy["status"]
            assert "dragoman.io/visible-devices" not in (legacy["metadata"].get("annotations") or {})
        finally:
            await api.close()


async def _is(coro, want) -> bool:
    return (await coro) == want
