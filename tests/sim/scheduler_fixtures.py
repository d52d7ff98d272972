"""Raw objects for the scheduler tests: GPU nodes, NVIDIA-shaped ResourceSlices, DeviceClasses, pods."""

from __future__ import annotations

GPU_CLASS_SELECTOR = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"


def node(
    name: str = "gpu-1",
    gpu: int | None = None,
    *,
    kubelet: str = "v1.37.1",
    labels: dict | None = None,
    taints: list | None = None,
    unschedulable: bool = False,
    capacity_gpu: int | None = None,
    cpu: str = "32",
    memory: str = "256Gi",
) -> dict:
    alloc = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "500Gi"}
    cap = dict(alloc)
    if gpu is not None:
        alloc["nvidia.com/gpu"] = str(gpu)
        cap["nvidia.com/gpu"] = str(gpu if capacity_gpu is None else capacity_gpu)
    spec: dict = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"kubernetes.io/hostname": name, "pool": "h100", **(labels or {})},
        },
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": cap, "nodeInfo": {"kubeletVersion": kubelet}},
    }


def gpu_device(
    node_name: str, i: int, *, product: str = "NVIDIA H100 80GB HBM3", dtype: str = "gpu", extra: dict | None = None
) -> dict:
    attrs = {
        "type": {"string": dtype},
        "uuid": {"string": f"GPU-{node_name}-{i:04d}"},
        "productName": {"string": product},
        "architecture": {"string": "Hopper"},
        "driverVersion": {"version": "580.95.5"},
        "resource.kubernetes.io/pciBusID": {"string": f"0000:{i:02x}:00.0"},
    }
    attrs.update(extra or {})
    return {"name": f"gpu-{i}", "attributes": attrs, "capacity": {"memory": {"value": "81559Mi"}}}


def gpu_slice(
    node_name: str, count: int = 8, *, devices: list | None = None, generation: int = 1, name: str | None = None
) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name or f"{node_name}-gpu.nvidia.com-abcde"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1},
            "devices": devices if devices is not None else [gpu_device(node_name, i) for i in range(count)],
        },
    }


def device_class(
    name: str = "gpu.nvidia.com",
    *,
    extended: str | None = "nvidia.com/gpu",
    created: str = "2026-06-01T10:00:00Z",
    selectors: list[str] | None = None,
) -> dict:
    spec: dict = {}
    if selectors:
        spec["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if extended:
        spec["extendedResourceName"] = extended
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": spec,
    }


def gpu_pod(
    name: str = "trainer",
    gpus: int = 2,
    *,
    namespace: str = "default",
    uid: str | None = None,
    cpu: str = "1",
    memory: str = "4Gi",
    node_selector: dict | None = None,
    tolerations: list | None = None,
    claims: list | None = None,
    extra_resources: dict | None = None,
) -> dict:
    res_requests = {"cpu": cpu, "memory": memory}
    res_limits: dict = {}
    if gpus:
        res_requests["nvidia.com/gpu"] = str(gpus)
        res_limits["nvidia.com/gpu"] = str(gpus)
    res_requests.update(extra_resources or {})
    container = {
        "name": "main",
        "image": "nvcr.io/nvidia/pytorch:25.01-py3",
        "resources": {"requests": res_requests, "limits": res_limits},
    }
    spec: dict = {"containers": [container], "schedulerName": "default-scheduler"}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    if claims:
        spec["resourceClaims"] = claims
        container["resources"]["claims"] = [{"name": c["name"]} for c in claims]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}"},
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def claim(
    name: str,
    requests: list[dict],
    *,
    namespace: str = "default",
    constraints: list | None = None,
    status: dict | None = None,
) -> dict:
    devices: dict = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    out = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-claim-{name}"},
        "spec": {"devices": devices},
    }
    if status:
        out["status"] = status
    return out


def exactly(
    name: str,
    cls: str = "gpu.nvidia.com",
    count: int | None = None,
    *,
    mode: str | None = None,
    selectors: list[str] | None = None,
    admin: bool = False,
) -> dict:
    body: dict = {"deviceClassName": cls}
    if mode:
        body["allocationMode"] = mode
    if count is not None:
        body["count"] = count
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if admin:
        body["adminAccess"] = True
    return {"name": name, "exactly": body}
