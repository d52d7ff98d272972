"""A generated GPU fleet for benchmarks: thousands of nodes in device-plugin and DRA pools, their drivers, and GPU
pods."""

from __future__ import annotations

import dataclasses
import gc
import random

from dragoman.fleet import nvidia_schema as nv
from dragoman.sim.scenarios.podstatus import started_pod_conditions, stored_spec

POOL_LABEL = "cloud.google.com/gke-nodepool"
KUBELET = "v1.37.1-gke.1048000"
CREATED = "2026-09-01T00:00:00Z"
STARTED = "2026-11-29T12:00:00Z"
DP_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.18.0"
DRA_IMAGE = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.0"


_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class _Ids:
    """Uids, uuids and name suffixes drawn from a seeded generator: deterministic, and far cheaper than hashing."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(f"dragoman-scale-ids-{seed}")

    def uid(self) -> str:
        h = self.rng.getrandbits(128)
        s = f"{h:032x}"
        return f"{s[:8]}-{s[8:12]}-4{s[13:16]}-{'89ab'[h & 3]}{s[17:20]}-{s[20:32]}"

    def gpu_uuid(self) -> str:
        s = f"{self.rng.getrandbits(128):032x}"
        return f"GPU-{s[:8]}-{s[8:12]}-{s[12:16]}-{s[16:20]}-{s[20:32]}"

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choices(_ALPHABET, k=n))

    def pod_name(self, prefix: str, taken: set[str]) -> str:
        """`prefix` + a suffix no pod in `taken` has (then taken too). A controller's pods draw from 27^5 suffixes: a
        5,000-pod DaemonSet shares a name about once, and the envelope's thousand ReplicaSets of 20-140 pods about
        once in all; the real API server refuses the second pod of a pair (409), so a taken name is drawn again, as a
        controller's generateName is retried."""
        name = prefix + self.suffix()
        while name in taken:
            name = prefix + self.suffix()
        taken.add(name)
        return name


def _ready_conditions() -> list[dict]:
    return [
        {
            "type": "Ready",
            "status": "True",
            "lastHeartbeatTime": STARTED,
            "lastTransitionTime": CREATED,
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
        }
    ]


def _pod(
    name: str,
    ns: str,
    uid: str,
    *,
    spec: dict,
    node: str | None,
    labels: dict,
    owner: dict | None = None,
    node_selector: dict | None = None,
    affinity: dict | None = None,
    ip: str | None = None,
    host_ip: str | None = None,
) -> dict:
    meta = {
        "name": name,
        "namespace": ns,
        "uid": uid,
        "creationTimestamp": CREATED if owner else STARTED,
        "labels": labels,
    }
    if owner:
        meta["ownerReferences"] = [owner]
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    if node:
        spec["nodeName"] = node
        status = {
            "phase": "Running",
            "hostIP": host_ip,
            "podIP": ip,
            "startTime": STARTED,
            "qosClass": "Burstable",
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": STARTED},
                {"type": "Ready", "status": "True", "lastTransitionTime": STARTED},
            ],
            "containerStatuses": [
                {
                    "name": c["name"],
                    "image": c["image"],
                    "imageID": "",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": STARTED}},
                }
                for c in spec["containers"]
            ],
        }
    else:
        status = {"phase": "Pending", "qosClass": "Burstable"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _gpu_container(n: int) -> dict:
    return {
        "name": "worker",
        "image": "nvcr.io/nvidia/pytorch:25.10-py3",
        "imagePullPolicy": "IfNotPresent",
        "resources": {
            "limits": {"nvidia.com/gpu": str(n)},
            "requests": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": str(n)},
        },
    }


def generate_scale(
    nodes: int = 5000,
    gpus_per_node: int = 8,
    pods: int = 20000,
    seed: int = 0,
    *,
    pending: int = 0,
    pool_size: int = 100,
    gpu: str = "h100-80gb",
    namespaces: int = 10,
    driver_version: str = "v0.4.0",
    dra_fraction: float = 0.5,
    instance_type: str = "a3-highgpu-8g",
) -> list[dict]:
    """A fleet of `nodes` GPU nodes, half on the device plugin and half on DRA, with `pods` GPU pods.

    `pending` of those pods are left unscheduled: half ask `nvidia.com/gpu` on device-plugin pools, half are for the
    bridge on DRA pools. The rest run, bound and (on DRA pools) with their scheduler-made claims. `dra_fraction`
    sets the share of nodes on DRA (1.0: every node publishes its GPUs, 40,000 devices in 5,000 slices by default).
    Deterministic from `seed`.
    """
    if pending > pods:
        raise ValueError("pending cannot exceed pods")
    # Hundreds of thousands of fresh dicts and no garbage: the cyclic collector would only rescan them, again and again.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _generate(
            nodes,
            gpus_per_node,
            pods,
            seed,
            pending,
            pool_size,
            gpu,
            namespaces,
            driver_version,
            dra_fraction,
            instance_type,
        )
    finally:
        if was_enabled:
            gc.enable()


@dataclasses.dataclass
class _Layout:
    """What the parts of a generated fleet share while it is written: the objects so far, the id source, the pools and
    where each node sits."""

    ids: _Ids
    out: list[dict] = dataclasses.field(default_factory=list)
    dp_pools: list[str] = dataclasses.field(default_factory=list)
    dra_pools: list[str] = dataclasses.field(default_factory=list)
    dp_nodes: list[str] = dataclasses.field(default_factory=list)
    dra_nodes: list[str] = dataclasses.field(default_factory=list)
    node_ip: dict[str, str] = dataclasses.field(default_factory=dict)
    node_uid: dict[str, str] = dataclasses.field(default_factory=dict)
    node_pool: dict[str, str] = dataclasses.field(default_factory=dict)
    node_index: dict[str, int] = dataclasses.field(default_factory=dict)
    specs: dict[int, tuple[list[dict], dict]] = dataclasses.field(default_factory=dict)

    def uid(self) -> str:
        return self.ids.uid()

    def pod_spec(self, containers: list[dict]) -> dict:
        """A pod's spec as the API server stores it (podstatus.stored_spec), defaulted once per `containers` list (a
        caller passes the same list for every pod of one shape) and copied per pod: the pods of one shape share its
        nested parts, as a template's pods do (_cpu_pod). Defaulting each of 20,000 pods made generation a third
        slower."""
        hit = self.specs.get(id(containers))
        if hit is None:  # the entry keeps `containers` alive, so its id is not reused while the layout lives
            hit = self.specs[id(containers)] = (containers, stored_spec({"containers": [dict(c) for c in containers]}))
        return dict(hit[1])


def _generate(
    nodes: int,
    gpus_per_node: int,
    pods: int,
    seed: int,
    pending: int,
    pool_size: int,
    gpu: str,
    namespaces: int,
    driver_version: str,
    dra_fraction: float,
    instance_type: str = "a3-highgpu-8g",
) -> list[dict]:
    """The GPU fleet, part by part (the order of the parts is the order of the seeded draws: keep it)."""
    hw = nv.NodeHardware(nv.CATALOG[gpu], gpus_per_node)
    fleet = _Layout(_Ids(seed))
    n_dra = round(nodes * dra_fraction)
    fleet.dp_pools = [f"dp-{i:03d}" for i in range(max(1, -(-(nodes - n_dra) // pool_size)))]
    fleet.dra_pools = [f"dra-{i:03d}" for i in range(max(1, -(-n_dra // pool_size)))]
    ns_names = [f"team-{i:03d}" for i in range(namespaces)]
    for ns in ["kube-system", "nvidia-device-plugin", "dra-driver-nvidia-gpu", *ns_names]:
        fleet.out.append(_namespace(ns, fleet.uid()))
    _gpu_nodes(fleet, nodes, nodes - n_dra, pool_size, hw, gpus_per_node, instance_type)
    _gpu_daemonset(
        fleet,
        "nvdp-nvidia-device-plugin",
        "nvidia-device-plugin",
        DP_IMAGE,
        fleet.dp_pools,
        fleet.dp_nodes,
        "nvidia-device-plugin",
    )
    _gpu_daemonset(
        fleet,
        "dra-driver-nvidia-gpu-kubelet-plugin",
        "dra-driver-nvidia-gpu",
        DRA_IMAGE,
        fleet.dra_pools,
        fleet.dra_nodes,
        "dra-driver-nvidia-gpu",
    )
    fleet.out.append(_gpu_class(fleet.uid()))
    _gpu_slices(fleet, hw, driver_version)
    _gpu_pods(fleet, random.Random(seed), pods, pending, gpus_per_node, ns_names, nodes)
    return fleet.out


def _namespace(name: str, uid: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "uid": uid,
            "creationTimestamp": CREATED,
            "labels": {"kubernetes.io/metadata.name": name},
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def _node(name: str, uid: str, labels: dict, capacity: dict, allocatable: dict, ip: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": uid, "creationTimestamp": CREATED, "labels": labels},
        "spec": {"providerID": f"gce://acme-scale/us-central1-a/{name}"},
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": _ready_conditions(),
            "addresses": [{"type": "InternalIP", "address": ip}],
            "nodeInfo": {
                "kubeletVersion": KUBELET,
                "kubeProxyVersion": KUBELET,
                "architecture": "amd64",
                "operatingSystem": "linux",
                "osImage": "Container-Optimized OS from Google",
                "containerRuntimeVersion": "containerd://2.0.6",
                "kernelVersion": "6.6.97+",
                "bootID": "",
                "machineID": "",
                "systemUUID": "",
            },
        },
    }


def _gpu_nodes(
    fleet: _Layout, nodes: int, half: int, pool_size: int, hw: nv.NodeHardware, gpus_per_node: int, instance_type: str
) -> None:
    """The GPU nodes: the first `half` on the device plugin's pools (allocatable nvidia.com/gpu), the rest on DRA's."""
    gfd = hw.gfd_labels()
    for i in range(nodes):
        on_dra = i >= half
        pools = fleet.dra_pools if on_dra else fleet.dp_pools
        j = i - half if on_dra else i
        pool = pools[min(len(pools) - 1, j // pool_size)]
        name = f"gke-scale-{pool}-{j % pool_size:04d}-{fleet.ids.suffix(4)}"
        (fleet.dra_nodes if on_dra else fleet.dp_nodes).append(name)
        fleet.node_ip[name] = f"10.{128 + (i >> 8)}.{i & 255}.10"
        fleet.node_pool[name] = pool
        fleet.node_index[name] = i
        fleet.node_uid[name] = fleet.uid()
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            POOL_LABEL: pool,
            "node.kubernetes.io/instance-type": instance_type,
            "nvidia.com/gpu.deploy.device-plugin": "false" if on_dra else "true",
            **gfd,
        }
        capacity = {"cpu": "208", "memory": "1913832036Ki", "pods": "110"}
        allocatable = {"cpu": "207", "memory": "1812345678Ki", "pods": "110"}
        if not on_dra:
            capacity["nvidia.com/gpu"] = allocatable["nvidia.com/gpu"] = str(gpus_per_node)
        fleet.out.append(_node(name, fleet.node_uid[name], labels, capacity, allocatable, fleet.node_ip[name]))


def _daemonset_status(scheduled: int) -> dict:
    return {
        "currentNumberScheduled": scheduled,
        "desiredNumberScheduled": scheduled,
        "numberAvailable": scheduled,
        "numberMisscheduled": 0,
        "numberReady": scheduled,
        "observedGeneration": 1,
        "updatedNumberScheduled": scheduled,
    }


def _daemonset_owner(name: str, uid: str) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _required_terms(term: dict) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def _gpu_daemonset(fleet: _Layout, name: str, ns: str, image: str, pools: list[str], on: list[str], app: str) -> None:
    """A GPU driver's DaemonSet aimed at `pools` by node affinity, and its pod on each node of `on`."""
    ds_uid = fleet.uid()
    container = {
        "name": app,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
    }
    labels = {"app.kubernetes.io/name": app}
    fleet.out.append(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "name": name,
                "namespace": ns,
                "uid": ds_uid,
                "creationTimestamp": CREATED,
                "labels": labels,
                "generation": 1,
            },
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": stored_spec(
                        {
                            "containers": [container],
                            "affinity": _required_terms(
                                {"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": pools}]}
                            ),
                            "priorityClassName": "system-node-critical",
                            "tolerations": [{"operator": "Exists"}],
                        },
                        pod=False,
                    ),
                },
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            },
            "status": _daemonset_status(len(on)),
        }
    )
    owner = _daemonset_owner(name, ds_uid)
    containers = [container]
    for node in on:
        fleet.out.append(
            _pod(
                f"{name}-{fleet.ids.suffix()}",
                ns,
                fleet.uid(),
                spec=fleet.pod_spec(containers),
                node=node,
                labels=dict(labels),
                owner=owner,
                affinity=_required_terms(
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ),
                ip=fleet.node_ip[node],
                host_ip=fleet.node_ip[node],
            )
        )


def _gpu_class(uid: str) -> dict:
    """The DRA driver's DeviceClass, serving nvidia.com/gpu through the bridge."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.nvidia.com", "uid": uid, "creationTimestamp": CREATED, "generation": 1},
        "spec": {
            "selectors": [
                {
                    "cel": {
                        "expression": "device.driver == 'gpu.nvidia.com' && "
                        "device.attributes['gpu.nvidia.com'].type == 'gpu'"
                    }
                }
            ],
            "extendedResourceName": "nvidia.com/gpu",
        },
    }


def _gpu_slices(fleet: _Layout, hw: nv.NodeHardware, driver_version: str) -> None:
    """One ResourceSlice per DRA node: one node's device list, re-used with per-node uuids (the attributes are
    identical across a uniform pool)."""
    proto = nv.devices_for_node("proto", hw, driver_version)
    for node in fleet.dra_nodes:
        devices = []
        for d in proto:
            attrs = dict(d["attributes"])
            attrs["uuid"] = {"string": fleet.ids.gpu_uuid()}
            devices.append({"name": d["name"], "attributes": attrs, "capacity": d["capacity"]})
        fleet.out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {
                    "name": f"{node}-gpu.nvidia.com-{fleet.ids.suffix()}",
                    "generateName": f"{node}-gpu.nvidia.com-",
                    "uid": fleet.uid(),
                    "creationTimestamp": CREATED,
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Node",
                            "name": node,
                            "uid": fleet.node_uid[node],
                            "controller": True,
                        }
                    ],
                },
                "spec": {
                    "driver": nv.DRIVER,
                    "nodeName": node,
                    "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                    "devices": devices,
                },
            }
        )


def _gpu_pods(
    fleet: _Layout,
    rng: random.Random,
    pods: int,
    pending: int,
    gpus_per_node: int,
    ns_names: list[str],
    nodes: int,
) -> None:
    """GPU pods, alternating between the two halves: the running ones packed first-fit into their half of the fleet
    (on DRA with the claim the scheduler made for them), the last `pending` left unbound."""
    running = pods - pending
    free = {n: gpus_per_node for n in fleet.dp_nodes + fleet.dra_nodes}
    cursor = {"dp": 0, "dra": 0}
    nodes_of = {"dp": fleet.dp_nodes, "dra": fleet.dra_nodes}
    next_ip: dict[str, int] = {}
    shapes = {n: [_gpu_container(n)] for n in (1, 2)}
    for k in range(pods):
        side = "dp" if k % 2 == 0 else "dra"
        ns = ns_names[k % len(ns_names)]
        count = 1 if rng.random() < 0.75 else 2
        name = f"gpu-job-{k:06d}-{fleet.ids.suffix()}"
        labels = {"app.kubernetes.io/name": f"gpu-job-{k % 97:02d}", "scale.dragoman.io/side": side}
        pool_list = fleet.dp_pools if side == "dp" else fleet.dra_pools
        selector = {POOL_LABEL: pool_list[k // 2 % len(pool_list)]}
        node = ip = None
        if k < running:
            candidates = nodes_of[side]
            while cursor[side] < len(candidates) and free[candidates[cursor[side]]] < count:
                cursor[side] += 1
            if cursor[side] >= len(candidates):
                raise ValueError(f"{running} running pods do not fit on the {side} half of {nodes} nodes")
            node = candidates[cursor[side]]
            used = gpus_per_node - free[node]
            free[node] -= count
            selector = {POOL_LABEL: fleet.node_pool[node]}
            ipn = next_ip.get(node, 2)
            next_ip[node] = ipn + 1
            ni = fleet.node_index[node]
            ip = f"10.{64 + (ni >> 8)}.{ni & 255}.{ipn}"
        pod = _pod(
            name,
            ns,
            fleet.uid(),
            spec=fleet.pod_spec(shapes[count]),
            node=node,
            labels=labels,
            node_selector=selector,
            ip=ip,
            host_ip=fleet.node_ip[node] if node else None,
        )
        fleet.out.append(pod)
        if node and side == "dra":
            fleet.out.append(_bridge_claim(fleet, pod, node, used, count))


def _bridge_claim(fleet: _Layout, pod: dict, node: str, used: int, count: int) -> dict:
    """The claim kube-scheduler makes for a bridged pod (`count` GPUs from gpu-`used` on), recorded in the pod's
    status."""
    name, ns = pod["metadata"]["name"], pod["metadata"]["namespace"]
    gen = f"{name}-extended-resources-"
    cname = gen + fleet.ids.suffix()
    pod["status"]["extendedResourceClaimStatus"] = {
        "resourceClaimName": cname,
        "requestMappings": [
            {
                "containerName": "worker",
                "resourceName": "nvidia.com/gpu",
                "requestName": "container-0-request-2",
            }
        ],
    }
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": cname,
            "generateName": gen,
            "namespace": ns,
            "uid": fleet.uid(),
            "creationTimestamp": STARTED,
            "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": name,
                    "uid": pod["metadata"]["uid"],
                    "controller": True,
                }
            ],
            "finalizers": ["resource.kubernetes.io/delete-protection"],
        },
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "container-0-request-2",
                        "exactly": {
                            "deviceClassName": "gpu.nvidia.com",
                            "allocationMode": "ExactCount",
                            "count": count,
                        },
                    }
                ]
            }
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "container-0-request-2",
                            "driver": nv.DRIVER,
                            "pool": node,
                            "device": f"gpu-{used + i}",
                        }
                        for i in range(count)
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
                "allocationTimestamp": STARTED,
            },
            "reservedFor": [{"resource": "pods", "name": name, "uid": pod["metadata"]["uid"]}],
        },
    }


# ---------------------------------------------------------------------------------------------------- the envelope
#
# Kubernetes' supported envelope (5,000 nodes, 150,000 pods) as a mixed cluster: GPU pools on the device plugin and on
# DRA beside CPU pools, whose Deployment and Job pods are most of the pods dragoman lists and watches.

ENVELOPE_GPU = "a100-40gb"
ENVELOPE_GPU_INSTANCE = "a2-megagpu-16g"  # 16 A100s a node: 2,500 GPU nodes hold 40,000 GPUs
CPU_INSTANCE = "n2-standard-32"
# DaemonSets every node runs besides the GPU stack (kube-proxy, logging, metrics): one pod per node each.
NODE_DAEMONS = (
    ("kube-proxy", "kube-system", "registry.k8s.io/kube-proxy:v1.37.1"),
    ("fluent-bit", "logging", "cr.fluentbit.io/fluent/fluent-bit:4.0.3"),
    ("node-exporter", "monitoring", "quay.io/prometheus/node-exporter:v1.9.1"),
)
CPU_IMAGES = (
    "ghcr.io/acme/api:2026.11.3",
    "ghcr.io/acme/web:2026.11.1",
    "ghcr.io/acme/worker:2026.10.7",
    "docker.io/library/redis:8.0",
    "docker.io/library/nginx:1.29",
    "ghcr.io/acme/batch:2026.11.2",
)
DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]


def _template_parts(app: str, image: str, sa_volume: str) -> dict:
    """The parts of a pod stamped from one template (a Deployment's or a Job's): containers, volumes, managedFields.

    Shared by every pod of that template, as the simulator takes ownership of scenario objects and replaces (never
    edits in place) what it changes: 150,000 pods cost their JSON in the simulator, not their JSON three times over."""
    container = {
        "name": app,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["/app/server"],
        "args": ["--port=8080", "--log-format=json"],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "env": [
            {"name": "APP", "value": app},
            {"name": "GOMAXPROCS", "value": "2"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
        ],
        "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "250m", "memory": "512Mi"}},
        "readinessProbe": {
            "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "volumeMounts": [
            {"name": sa_volume, "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
        ],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}},
    }
    volumes = [
        {
            "name": sa_volume,
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {
                        "downwardAPI": {
                            "items": [
                                {
                                    "path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                }
                            ]
                        }
                    },
                ],
            },
        }
    ]
    managed = [
        {
            "manager": "kube-controller-manager",
            "operation": "Update",
            "apiVersion": "v1",
            "time": STARTED,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {
                    "f:generateName": {},
                    "f:labels": {".": {}, "f:app.kubernetes.io/name": {}, "f:pod-template-hash": {}},
                    "f:ownerReferences": {".": {}},
                },
                "f:spec": {
                    "f:containers": {
                        f'k:{{"name":"{app}"}}': {".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}
                    },
                    "f:dnsPolicy": {},
                    "f:restartPolicy": {},
                    "f:schedulerName": {},
                },
            },
        },
        {
            "manager": "kubelet",
            "operation": "Update",
            "apiVersion": "v1",
            "time": STARTED,
            "fieldsType": "FieldsV1",
            "subresource": "status",
            "fieldsV1": {
                "f:status": {
                    "f:conditions": {},
                    "f:containerStatuses": {},
                    "f:hostIP": {},
                    "f:phase": {},
                    "f:podIP": {},
                    "f:podIPs": {},
                    "f:startTime": {},
                }
            },
        },
    ]
    # The spec every pod of the template shares, defaulted once (a pod adds its node, its restart policy if a Job's
    # and the default tolerations).
    spec = stored_spec({"containers": [container], "volumes": volumes, "serviceAccountName": "default"})
    return {"containers": [container], "volumes": volumes, "managed": managed, "spec": spec}


def _cpu_pod(
    name: str,
    ns: str,
    uid: str,
    parts: dict,
    labels: dict,
    owner: dict,
    node: str,
    ip: str,
    host_ip: str,
    phase: str = "Running",
) -> dict:
    c = parts["containers"][0]
    done = phase == "Succeeded"
    state = (
        {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": STARTED, "finishedAt": STARTED}}
        if done
        else {"running": {"startedAt": STARTED}}
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": name[:-5],
            "namespace": ns,
            "uid": uid,
            "creationTimestamp": STARTED,
            "labels": labels,
            "ownerReferences": [owner],
            "managedFields": parts["managed"],
        },
        "spec": parts["spec"]
        | {
            "restartPolicy": "Never" if owner["kind"] == "Job" else "Always",
            "nodeName": node,
            "tolerations": DEFAULT_TOLERATIONS,
        },
        "status": {
            "phase": phase,
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": STARTED,
            "qosClass": "Burstable",
            "conditions": started_pod_conditions(STARTED, sandbox_ready=not done, ready=not done),
            "containerStatuses": [
                {
                    "name": c["name"],
                    "image": c["image"],
                    "imageID": c["image"] + "@sha256:" + "0" * 64,
                    "containerID": "containerd://" + uid.replace("-", "") * 2,
                    "ready": not done,
                    "restartCount": 0,
                    "started": not done,
                    "state": state,
                }
            ],
        },
    }


def generate_envelope(
    nodes: int = 5000,
    gpu_nodes: int = 2500,
    gpus_per_node: int = 16,
    pods: int = 150_000,
    gpu_pods: int = 20_000,
    seed: int = 0,
    *,
    dra_fraction: float = 0.5,
    namespaces: int = 50,
    cpu_pool_size: int = 250,
    job_pods: int = 12_500,
    gpu_pool_size: int = 100,
) -> list[dict]:
    """Kubernetes' envelope as a mixed fleet: `gpu_nodes` GPU nodes (16 A100s each: 40,000 GPUs by default, half the
    nodes on the device plugin and half on DRA) beside `nodes - gpu_nodes` CPU nodes, and `pods` pods in all.

    Of the pods, the minority dragoman reads closely: `gpu_pods` GPU pods (the DRA half holding scheduler-made claims),
    the device plugin's and the DRA driver's DaemonSet pods. The rest: three node DaemonSets on every node, `job_pods`
    pods of Jobs (a third of them finished), and Deployments' pods on the CPU pools. Deterministic from `seed`.
    """
    cpu_nodes = nodes - gpu_nodes
    if cpu_nodes < 1:
        raise ValueError("the envelope needs CPU nodes beside its GPU nodes")
    daemon_pods = len(NODE_DAEMONS) * nodes
    deploy_pods = pods - gpu_pods - gpu_nodes - daemon_pods - job_pods
    if deploy_pods < 0:
        raise ValueError(f"{pods} pods are fewer than the GPU, DaemonSet and Job pods the envelope places")
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        pending = min(gpu_pods, max(10, gpu_pods // 200))
        out = _generate(
            gpu_nodes,
            gpus_per_node,
            gpu_pods,
            seed,
            pending,
            gpu_pool_size,
            ENVELOPE_GPU,
            10,
            "v0.4.0",
            dra_fraction,
            ENVELOPE_GPU_INSTANCE,
        )
        _add_cpu_side(out, cpu_nodes, deploy_pods, job_pods, seed, namespaces, cpu_pool_size)
        return out
    finally:
        if was_enabled:
            gc.enable()


def _add_cpu_side(
    out: list[dict], cpu_nodes: int, deploy_pods: int, job_pods: int, seed: int, namespaces: int, cpu_pool_size: int
) -> None:
    rng = random.Random(f"dragoman-envelope-{seed}")
    ids = _Ids(seed + 1_000_003)
    all_nodes = [o["metadata"]["name"] for o in out if o["kind"] == "Node"]
    node_ip = {o["metadata"]["name"]: o["status"]["addresses"][0]["address"] for o in out if o["kind"] == "Node"}
    ns_names = [f"svc-{i:03d}" for i in range(namespaces)]
    for ns in ["logging", "monitoring", "batch", *ns_names]:
        out.append(_namespace(ns, ids.uid()))
    pools = [f"cpu-{i:03d}" for i in range(max(1, -(-cpu_nodes // cpu_pool_size)))]
    cpu_names = []
    for i in range(cpu_nodes):
        pool = pools[i // cpu_pool_size]
        name = f"gke-env-{pool}-{i % cpu_pool_size:04d}-{ids.suffix(4)}"
        cpu_names.append(name)
        node_ip[name] = f"10.{200 + (i >> 8)}.{i & 255}.10"
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            POOL_LABEL: pool,
            "node.kubernetes.io/instance-type": CPU_INSTANCE,
        }
        capacity = {"cpu": "32", "memory": "131896904Ki", "pods": "110"}
        allocatable = {"cpu": "31850m", "memory": "123456789Ki", "pods": "110"}
        out.append(_node(name, ids.uid(), labels, capacity, allocatable, node_ip[name]))
    pod_ips: dict[str, int] = {}

    def ip_on(node: str) -> str:
        n = pod_ips.get(node, 2)
        pod_ips[node] = n + 1
        _, b, c, _ = node_ip[node].split(".")
        return f"10.{int(b) - 100}.{c}.{n}"  # the node's /24 of pod addresses

    # Node DaemonSets: a pod on every node, GPU nodes included (they tolerate every taint).
    for app, ns, image in NODE_DAEMONS:
        labels = {"app.kubernetes.io/name": app}
        ds_uid = ids.uid()
        parts = _template_parts(app, image, f"kube-api-access-{ids.suffix()}")
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": {
                    "name": app,
                    "namespace": ns,
                    "uid": ds_uid,
                    "creationTimestamp": CREATED,
                    "labels": labels,
                    "generation": 1,
                },
                "spec": {
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": stored_spec(
                            {"containers": parts["containers"], "tolerations": [{"operator": "Exists"}]}, pod=False
                        ),
                    },
                    "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
                },
                "status": _daemonset_status(len(all_nodes) + cpu_nodes),
            }
        )
        owner = _daemonset_owner(app, ds_uid)
        taken: set[str] = set()
        for node in all_nodes + cpu_names:
            name = ids.pod_name(f"{app}-", taken)
            out.append(_cpu_pod(name, ns, ids.uid(), parts, labels, owner, node, node_ip[node], node_ip[node]))

    # Deployments (one ReplicaSet each) on the CPU pools, spread round-robin; then Jobs, a third of them finished.
    cursor = [0]

    def next_node() -> str:
        node = cpu_names[cursor[0] % len(cpu_names)]
        cursor[0] += 1
        return node

    placed = 0
    d = 0
    while placed < deploy_pods:
        replicas = min(deploy_pods - placed, rng.randint(20, 140))
        ns = ns_names[d % len(ns_names)]
        app = f"svc-{d:04d}"
        image = CPU_IMAGES[d % len(CPU_IMAGES)]
        hash_ = ids.suffix(10)
        labels = {"app.kubernetes.io/name": app}
        dep_uid, rs_uid = ids.uid(), ids.uid()
        parts = _template_parts(app, image, f"kube-api-access-{ids.suffix()}")
        template = {"metadata": {"labels": labels}, "spec": stored_spec({"containers": parts["containers"]}, pod=False)}
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": app,
                    "namespace": ns,
                    "uid": dep_uid,
                    "creationTimestamp": CREATED,
                    "generation": 1,
                    "labels": labels,
                },
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": labels},
                    "template": template,
                    "strategy": {
                        "type": "RollingUpdate",
                        "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                    },
                },
                "status": {
                    "observedGeneration": 1,
                    "replicas": replicas,
                    "updatedReplicas": replicas,
                    "readyReplicas": replicas,
                    "availableReplicas": replicas,
                },
            }
        )
        rs_labels = {**labels, "pod-template-hash": hash_}
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": f"{app}-{hash_}",
                    "namespace": ns,
                    "uid": rs_uid,
                    "creationTimestamp": CREATED,
                    "generation": 1,
                    "labels": rs_labels,
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "name": app,
                            "uid": dep_uid,
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": rs_labels},
                    "template": {
                        "metadata": {"labels": rs_labels},
                        "spec": stored_spec({"containers": parts["containers"]}, pod=False),
                    },
                },
                "status": {
                    "observedGeneration": 1,
                    "replicas": replicas,
                    "fullyLabeledReplicas": replicas,
                    "readyReplicas": replicas,
                    "availableReplicas": replicas,
                },
            }
        )
        owner = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": f"{app}-{hash_}",
            "uid": rs_uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
        rs_taken: set[str] = set()
        for _ in range(replicas):
            node = next_node()
            out.append(
                _cpu_pod(
                    ids.pod_name(f"{app}-{hash_}-", rs_taken),
                    ns,
                    ids.uid(),
                    parts,
                    rs_labels,
                    owner,
                    node,
                    ip_on(node),
                    node_ip[node],
                )
            )
        placed += replicas
        d += 1
    placed, j = 0, 0
    while placed < job_pods:
        completions = min(job_pods - placed, rng.randint(5, 20))
        name = f"batch-{j:05d}"
        job_uid = ids.uid()
        labels = {"batch.kubernetes.io/job-name": name, "batch.kubernetes.io/controller-uid": job_uid}
        parts = _template_parts("batch", CPU_IMAGES[-1], f"kube-api-access-{ids.suffix()}")
        finished = j % 3 == 0
        out.append(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": name,
                    "namespace": "batch",
                    "uid": job_uid,
                    "creationTimestamp": STARTED,
                    "generation": 1,
                    "labels": labels,
                },
                "spec": {
                    "parallelism": completions,
                    "completions": completions,
                    "backoffLimit": 6,
                    "completionMode": "NonIndexed",
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": stored_spec({"containers": parts["containers"], "restartPolicy": "Never"}, pod=False),
                    },
                },
                "status": {
                    "startTime": STARTED,
                    "active": 0 if finished else completions,
                    "succeeded": completions if finished else 0,
                    **(
                        {
                            "completionTime": STARTED,
                            "conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": STARTED}],
                        }
                        if finished
                        else {}
                    ),
                },
            }
        )
        owner = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": name,
            "uid": job_uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
        for _ in range(completions):
            node = next_node()
            out.append(
                _cpu_pod(
                    f"{name}-{ids.suffix()}",
                    "batch",
                    ids.uid(),
                    parts,
                    dict(labels),
                    owner,
                    node,
                    ip_on(node),
                    node_ip[node],
                    phase="Succeeded" if finished else "Running",
                )
            )
        placed += completions
        j += 1


class EnvelopeChurn:
    """The envelope's everyday watch load, written straight into a simulator's store: Jobs' pods completing (MODIFIED,
    then DELETED as the Job is cleaned up) and Deployments rolling (a pod DELETED, its replacement ADDED).

    `step()` makes one watch event. Commits skip request decoding and validation, as bench_tui's churn does: the point
    is the stream of events the client absorbs, at rates the full write path cannot make on a 2-core machine."""

    def __init__(self, store, seed: int = 0) -> None:
        self.store = store
        self.rt = store._rt("pods")
        self.rng = random.Random(f"dragoman-envelope-churn-{seed}")
        self.ids = _Ids(seed + 7)
        self.running_jobs: list[tuple[str, str]] = []
        self.done_jobs: list[tuple[str, str]] = []
        self.deploy: list[tuple[str, str]] = []
        self._replacing: dict | None = None
        # Only this churn changes these pods: each list holds keys that exist, so every step commits one change.
        for e in store.entries(self.rt):
            md = e.obj["metadata"]
            owner = (md.get("ownerReferences") or [{}])[0].get("kind")
            key = (md["namespace"], md["name"])
            phase = (e.obj.get("status") or {}).get("phase")
            if owner == "Job":
                (self.done_jobs if phase == "Succeeded" else self.running_jobs).append(key)
            elif owner == "ReplicaSet":
                self.deploy.append(key)
        self.events = 0

    def step(self) -> None:
        """Commit exactly one change (so a count of steps is a count of watch events)."""
        r = self.rng.random()
        if self._replacing is not None:  # the second half of a rolled pod: its replacement
            cur = self._replacing
            self._replacing = None
            name = cur["metadata"]["name"][:-5] + self.ids.suffix()
            md = {**cur["metadata"], "name": name, "uid": self.ids.uid()}
            self.store._commit("ADDED", self.rt, {**cur, "metadata": md}, None)
            self.deploy.append((md["namespace"], name))
        elif r < 0.25 and self.running_jobs:  # a Job's pod completes
            key = self._take(self.running_jobs)
            entry = self.store.entry(self.rt, *key)
            cur = entry.obj
            status = {**cur["status"], "phase": "Succeeded"}
            self.store._commit("MODIFIED", self.rt, {**cur, "metadata": dict(cur["metadata"]), "status": status}, entry)
            self.done_jobs.append(key)
        elif r < 0.5 and self.done_jobs:  # a finished Job's pod is cleaned up
            entry = self.store.entry(self.rt, *self._take(self.done_jobs))
            self.store._commit("DELETED", self.rt, {**entry.obj, "metadata": dict(entry.obj["metadata"])}, entry)
        elif self.deploy:  # a Deployment rolls one pod: the old one goes now, its replacement comes next step
            entry = self.store.entry(self.rt, *self._take(self.deploy))
            self._replacing = entry.obj
            self.store._commit("DELETED", self.rt, {**entry.obj, "metadata": dict(entry.obj["metadata"])}, entry)
        else:
            raise RuntimeError("the envelope has no pods left to churn")
        self.events += 1

    def _take(self, keys: list[tuple[str, str]]) -> tuple[str, str]:
        i = self.rng.randrange(len(keys))
        keys[i], keys[-1] = keys[-1], keys[i]
        return keys.pop()


def load(**params) -> list[dict]:
    """The scale scenario for `sim serve --scenario scale` (sim/scenario.py calls `load()`); params as generate_scale,
    or `shape="envelope"` and generate_envelope's."""
    if params.pop("shape", "scale") == "envelope":
        return generate_envelope(**params)
    return generate_scale(**params)
