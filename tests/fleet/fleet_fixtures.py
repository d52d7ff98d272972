"""Small hand-written fleets for the model and diagnosis tests: builders of raw objects as the API server sends them."""

from __future__ import annotations

import json

from dragoman.fleet.model import FleetModel
from dragoman.fleet.store import Change

POOL = "cloud.google.com/gke-nodepool"
T0 = "2026-11-01T10:00:00Z"


def node(
    name: str,
    pool: str | None = "gpu-a",
    *,
    gpus: int = 8,
    alloc: int | None = None,
    cap: int | None = None,
    product: str = "NVIDIA-H100-80GB-HBM3",
    kubelet: str = "v1.37.1",
    labels: dict | None = None,
    taints: list | None = None,
    unschedulable: bool = False,
    annotations: dict | None = None,
    migration: dict | None = None,
) -> dict:
    lab = {
        "kubernetes.io/hostname": name,
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": str(gpus),
    }
    if pool is not None:
        lab[POOL] = pool
    lab.update(labels or {})
    ann = dict(annotations or {})
    if migration is not None:
        ann["dragoman.io/migration"] = json.dumps(migration)
    cap_ = {"cpu": "96", "memory": "1Ti", "pods": "110"}
    alloc_ = {"cpu": "95", "memory": "1000Gi", "pods": "110"}
    if cap is not None:
        cap_["nvidia.com/gpu"] = str(cap)
    if alloc is not None:
        alloc_["nvidia.com/gpu"] = str(alloc)
        if cap is None:
            cap_["nvidia.com/gpu"] = str(alloc)
    spec: dict = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": lab, "annotations": ann, "creationTimestamp": T0},
        "spec": spec,
        "status": {
            "capacity": cap_,
            "allocatable": alloc_,
            "nodeInfo": {"kubeletVersion": kubelet},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def cpu_node(name: str, pool: str = "system") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {POOL: pool}},
        "spec": {},
        "status": {
            "capacity": {"cpu": "8"},
            "allocatable": {"cpu": "8"},
            "nodeInfo": {"kubeletVersion": "v1.37.1"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def operator_dp_daemonset() -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "nvidia-device-plugin-daemonset",
            "namespace": "gpu-operator",
            "labels": {"app": "nvidia-device-plugin-daemonset"},
            "ownerReferences": [
                {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "name": "cluster-policy", "uid": "cp"}
            ],
        },
        "spec": {
            "selector": {"matchLabels": {"app": "nvidia-device-plugin-daemonset"}},
            "template": {
                "metadata": {"labels": {"app": "nvidia-device-plugin-daemonset"}},
                "spec": {
                    "nodeSelector": {"nvidia.com/gpu.deploy.device-plugin": "true"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [
                        {"name": "nvidia-device-plugin", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"}
                    ],
                },
            },
        },
    }


def chart_dp_daemonset(affinity_terms: list | None = None) -> dict:
    terms = (
        affinity_terms
        if affinity_terms is not None
        else [{"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}]
    )
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "nvdp-nvidia-device-plugin",
            "namespace": "nvidia-device-plugin",
            "labels": {
                "app.kubernetes.io/name": "nvidia-device-plugin",
                "app.kubernetes.io/instance": "nvdp",
                "app.kubernetes.io/managed-by": "Helm",
                "helm.sh/chart": "nvidia-device-plugin-0.17.1",
                "argocd.argoproj.io/instance": "gpu-stack",
            },
            "annotations": {"meta.helm.sh/release-name": "nvdp"},
        },
        "spec": {
            "template": {
                "metadata": {
                    "labels": {"app.kubernetes.io/name": "nvidia-device-plugin", "app.kubernetes.io/instance": "nvdp"}
                },
                "spec": {
                    "affinity": {
                        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
                    },
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [
                        {"name": "nvidia-device-plugin-ctr", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"}
                    ],
                },
            }
        },
    }


def dra_daemonset(affinity_terms: list | None = None, version: str = "v0.4.0", pools: list[str] | None = None) -> dict:
    terms = (
        affinity_terms
        if affinity_terms is not None
        else [{"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}]
    )
    if pools is not None:
        terms = [
            {**t, "matchExpressions": t["matchExpressions"] + [{"key": POOL, "operator": "In", "values": pools}]}
            for t in terms
        ]
    labels = {"app.kubernetes.io/name": "dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-component": "kubelet-plugin"}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "dra-driver-nvidia-gpu-kubelet-plugin",
            "namespace": "dra-driver-nvidia-gpu",
            "labels": {
                **labels,
                "app.kubernetes.io/managed-by": "Helm",
                "helm.sh/chart": "dra-driver-nvidia-gpu-0.4.0",
            },
            "annotations": {"meta.helm.sh/release-name": "dra-driver-nvidia-gpu"},
        },
        "spec": {
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "affinity": {
                        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
                    },
                    "containers": [
                        {"name": "gpus", "image": f"registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:{version}"}
                    ],
                },
            }
        },
    }


def ds_pod(
    ds: dict, node_name: str, *, phase: str = "Running", ready: bool = True, restarts: int = 0, crashloop: bool = False
) -> dict:
    meta = ds["metadata"]
    cs = {"name": "c", "ready": ready, "restartCount": restarts, "state": {"running": {}}}
    if crashloop:
        cs["state"] = {"waiting": {"reason": "CrashLoopBackOff"}}
        cs["lastState"] = {"terminated": {"reason": "Error", "exitCode": 1}}
        cs["ready"] = False
        ready = False
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{meta['name']}-{node_name}",
            "namespace": meta["namespace"],
            "labels": dict(ds["spec"]["template"]["metadata"]["labels"]),
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": meta["name"], "uid": "ds", "controller": True}
            ],
        },
        "spec": {"nodeName": node_name, "containers": ds["spec"]["template"]["spec"]["containers"]},
        "status": {
            "phase": phase,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": [cs],
        },
    }


def gpu_slice(
    node_name: str,
    n: int = 8,
    *,
    generation: int = 1,
    product: str = "NVIDIA H100 80GB HBM3",
    stale_schema: bool = False,
    mig: int = 0,
    name: str | None = None,
) -> dict:
    devices = []
    for i in range(n):
        attrs = {
            "type": {"string": "gpu"},
            "uuid": {"string": f"GPU-{node_name}-{i}"},
            "productName": {"string": product},
            "driverVersion": {"version": "580.82.7"},
            "cudaComputeCapability": {"version": "9.0.0"},
            "resource.kubernetes.io/pciBusID": {"string": f"0000:{i:02x}:00.0"},
        }
        if stale_schema:
            attrs.pop("resource.kubernetes.io/pciBusID")
            attrs["index"] = {"int": i}
            attrs["minor"] = {"int": i}
        devices.append({"name": f"gpu-{i}", "attributes": attrs, "capacity": {"memory": {"value": "81559Mi"}}})
    for i in range(mig):
        devices.append(
            {
                "name": f"gpu-0-mig-1g10gb-{i}",
                "attributes": {
                    "type": {"string": "mig"},
                    "uuid": {"string": f"MIG-{node_name}-{i}"},
                    "profile": {"string": "1g.10gb"},
                    "productName": {"string": product},
                },
                "capacity": {"memory": {"value": "9984Mi"}},
            }
        )
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name or f"{node_name}-gpu.nvidia.com-g{generation}"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def device_class(name: str, exprs: list[str], ern: str | None = None, created: str = T0) -> dict:
    spec: dict = {"selectors": [{"cel": {"expression": e}} for e in exprs]}
    if ern:
        spec["extendedResourceName"] = ern
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": spec,
    }


GPU_CLASS_EXPR = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"


def chart_gpu_class(created: str = T0) -> dict:
    return device_class("gpu.nvidia.com", [GPU_CLASS_EXPR], "nvidia.com/gpu", created)


def pod(
    name: str,
    ns: str = "ml",
    *,
    gpus: int = 0,
    node_name: str | None = None,
    phase: str | None = None,
    claims: list[dict] | None = None,
    container_claims: list[str] | None = None,
    node_selector: dict | None = None,
    tolerations: list | None = None,
    ercs: dict | None = None,
    reason: str | None = None,
    owner: tuple | None = None,
    annotations: dict | None = None,
) -> dict:
    res: dict = {}
    if gpus:
        res = {"limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"nvidia.com/gpu": str(gpus)}}
    if container_claims:
        res["claims"] = [{"name": c} for c in container_claims]
    spec: dict = {"containers": [{"name": "main", "image": "train:1", "resources": res}]}
    if node_name:
        spec["nodeName"] = node_name
    if claims:
        spec["resourceClaims"] = claims
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    status: dict = {"phase": phase or ("Running" if node_name else "Pending")}
    if not node_name:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    if ercs:
        status["extendedResourceClaimStatus"] = ercs
    if reason:
        status["reason"] = reason
        status["message"] = f"Pod was rejected: {reason}"
    meta: dict = {"name": name, "namespace": ns, "uid": f"uid-{name}", "annotations": dict(annotations or {})}
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": "o", "controller": True}
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def claim(
    name: str,
    ns: str = "ml",
    *,
    cls: str = "gpu.nvidia.com",
    count: int = 1,
    selectors: list[str] | None = None,
    allocated: list[tuple[str, str]] | None = None,
    reserved_for: str | None = None,
    bridge_for: str | None = None,
) -> dict:
    exactly: dict = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    meta: dict = {"name": name, "namespace": ns}
    if bridge_for:
        meta["annotations"] = {"resource.kubernetes.io/extended-resource-claim": "true"}
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": bridge_for, "uid": f"uid-{bridge_for}", "controller": True}
        ]
    obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}},
        "status": {},
    }
    if allocated:
        obj["status"]["allocation"] = {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.nvidia.com", "pool": pool, "device": dev}
                    for pool, dev in allocated
                ]
            }
        }
    if reserved_for:
        obj["status"]["reservedFor"] = [{"resource": "pods", "name": reserved_for, "uid": f"uid-{reserved_for}"}]
    return obj


def template(
    name: str, ns: str = "ml", *, cls: str = "gpu.nvidia.com", count: int = 1, selectors: list[str] | None = None
) -> dict:
    c = claim(name, ns, cls=cls, count=count, selectors=selectors)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"spec": c["spec"]},
    }


def quota(name: str, ns: str, hard: dict, used: dict | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"hard": hard},
        "status": {"hard": hard, "used": used or {}},
    }


def event(name: str, obj: dict, reason: str, message: str) -> dict:
    meta = obj["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": meta.get("namespace", "default")},
        "involvedObject": {"kind": obj["kind"], "namespace": meta.get("namespace", ""), "name": meta["name"]},
        "reason": reason,
        "message": message,
        "type": "Warning",
        "count": 3,
    }


def model_of(*objs: dict, pool_label: str | None = None) -> FleetModel:
    m = FleetModel(pool_label)
    m.load_list([o for o in objs])
    return m


def change(obj: dict, type_: str = "MODIFIED", old: dict | None = None) -> Change:
    return Change(obj["kind"], type_, obj, old)


def dp_fleet(n: int = 6, pool: str = "l4-pool", product: str = "NVIDIA-L4") -> list[dict]:
    """A healthy device-plugin pool under the GPU Operator."""
    ds = operator_dp_daemonset()
    out = [ds, cpu_node("sys-1")]
    for i in range(n):
        nd = node(f"{pool}-{i}", pool, gpus=4, alloc=4, product=product)
        out += [nd, ds_pod(ds, nd["metadata"]["name"])]
    return out


def dra_fleet(n: int = 3, pool: str = "h100-pool") -> list[dict]:
    """A healthy DRA pool: the chart's driver and class, the plugin excluded from the pool."""
    ds = dra_daemonset(pools=[pool])
    out = [ds, chart_gpu_class()]
    for i in range(n):
        name = f"{pool}-{i}"
        nd = node(name, pool, gpus=8, labels={"nvidia.com/gpu.deploy.device-plugin": "false"})
        out += [nd, ds_pod(ds, name), gpu_slice(name)]
    return out


# ---- v1.37's DRA features: counters, taints and rules, shared capacity, binding conditions, network devices ----------


def mig_counter_slice(
    node_name: str, gpus: int = 1, migs: int = 2, *, generation: int = 1, pool: str | None = None
) -> list[dict]:
    """A dynamic-MIG pool as NVIDIA's driver publishes it, two slices: per GPU a counter set of memory slices; the
    whole GPU consuming all of them and each 1g.10gb placement one."""
    sets, devices = [], []
    for g in range(gpus):
        cs = f"gpu-{g}-counters"
        sets.append({"name": cs, "counters": {f"memory-slice-{i}": {"value": "1"} for i in range(migs)}})
        devices.append(
            {
                "name": f"gpu-{g}",
                "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA A100-SXM4-80GB"}},
                "capacity": {"memory": {"value": "80Gi"}},
                "consumesCounters": [
                    {"counterSet": cs, "counters": {f"memory-slice-{i}": {"value": "1"} for i in range(migs)}}
                ],
            }
        )
        for i in range(migs):
            devices.append(
                {
                    "name": f"gpu-{g}-mig-1g10gb-{i}",
                    "attributes": {"type": {"string": "mig"}, "profile": {"string": "1g.10gb"}},
                    "capacity": {"memory": {"value": "10Gi"}},
                    "consumesCounters": [{"counterSet": cs, "counters": {f"memory-slice-{i}": {"value": "1"}}}],
                }
            )
    pool_name = pool or node_name

    def piece(suffix: str, body: dict) -> dict:
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-gpu.nvidia.com-mig-{suffix}"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "nodeName": node_name,
                "pool": {"name": pool_name, "generation": generation, "resourceSliceCount": 2},
                **body,
            },
        }

    # v1.37: a slice holds devices or counter sets, never both; the pool is complete with both slices.
    return [piece("devices", {"devices": devices}), piece("counters", {"sharedCounters": sets})]


def taint_rule(
    name: str,
    *,
    driver: str | None = "gpu.nvidia.com",
    pool: str | None = None,
    device: str | None = None,
    key: str = "example.com/maintenance",
    value: str = "",
    effect: str = "NoSchedule",
    evicting: bool | None = None,
) -> dict:
    sel = {k: v for k, v in (("driver", driver), ("pool", pool), ("device", device)) if v is not None}
    taint = {"key": key, "effect": effect, "timeAdded": "2026-11-30T07:00:00Z"}
    if value:
        taint["value"] = value
    obj: dict = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name, "creationTimestamp": "2026-11-30T07:00:00Z"},
        "spec": {"deviceSelector": sel, "taint": taint},
    }
    if evicting is not None:
        obj["status"] = {
            "conditions": [
                {
                    "type": "EvictionInProgress",
                    "status": "True" if evicting else "False",
                    "reason": "PodsPendingEviction" if evicting else "Completed",
                    "message": "1 pod needs to be evicted in 1 namespace" if evicting else "no pods need eviction",
                    "lastTransitionTime": "2026-11-30T07:01:00Z",
                }
            ]
        }
    return obj


def shared_slice(node_name: str, memory: str = "80Gi", *, policy: dict | None = None) -> dict:
    """One GPU several claims may share (allowMultipleAllocations), its memory consumed per claim."""
    cap: dict = {"value": memory}
    if policy:
        cap["requestPolicy"] = policy
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-shared"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": node_name,
            "pool": {"name": f"{node_name}-shared", "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": "gpu-shared-0",
                    "allowMultipleAllocations": True,
                    "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA H100 80GB HBM3"}},
                    "capacity": {"memory": cap},
                }
            ],
        },
    }


def fabric_slice(name: str = "fabric", *, all_nodes: bool = True, selector: dict | None = None) -> dict:
    """A network-attached pool (no spec.nodeName) whose device needs the fabric's go-ahead before a pod binds."""
    spec: dict = {
        "driver": "fabric.example.com",
        "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
        "devices": [
            {
                "name": "xpu-0",
                "attributes": {"type": {"string": "xpu"}},
                "bindingConditions": ["fabric.example.com/attached"],
                "bindingFailureConditions": ["fabric.example.com/attach-failed"],
                "bindsToNode": True,
            }
        ],
    }
    if selector is not None:
        spec["nodeSelector"] = selector
    else:
        spec["allNodes"] = all_nodes
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def allocated_claim(
    name: str,
    results: list[dict],
    ns: str = "ml",
    *,
    request: dict | None = None,
    reserved_for: str | None = None,
    status_devices: list[dict] | None = None,
) -> dict:
    """A claim with these allocation results as written (adminAccess, consumedCapacity, shareID,
    bindingConditions...)."""
    obj = claim(name, ns, reserved_for=reserved_for)
    if request is not None:
        obj["spec"]["devices"]["requests"] = [request]
    obj["status"]["allocation"] = {"devices": {"results": results}}
    if status_devices is not None:
        obj["status"]["devices"] = status_devices
    return obj
