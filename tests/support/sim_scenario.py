"""A small, realistic file scenario for simulator tests: two GPU nodes, workloads, a budget, DRA objects, users."""

from __future__ import annotations

import pathlib

import yaml

T0 = "2026-11-01T10:00:00Z"


def _node(name: str, ip: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "creationTimestamp": T0,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                "pool": "h100",
            },
        },
        "spec": {"podCIDR": "10.244.0.0/24"},
        "status": {
            "capacity": {"cpu": "96", "memory": "1056763244Ki", "pods": "110", "nvidia.com/gpu": "8"},
            "allocatable": {"cpu": "95", "memory": "1056660844Ki", "pods": "110", "nvidia.com/gpu": "8"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": T0,
                    "lastTransitionTime": T0,
                }
            ],
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "nodeInfo": {
                "machineID": "m",
                "systemUUID": "s",
                "bootID": "b",
                "kernelVersion": "6.8.0-1015-nvidia",
                "osImage": "Ubuntu 24.04.1 LTS",
                "containerRuntimeVersion": "containerd://2.1.4",
                "kubeletVersion": "v1.37.1",
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }


def _ready_status(ip: str) -> dict:
    return {
        "phase": "Running",
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "hostIP": "10.0.0.11",
        "startTime": T0,
        "qosClass": "BestEffort",
        "conditions": [
            {"type": t, "status": "True", "lastTransitionTime": T0}
            for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
        ],
        "containerStatuses": [
            {
                "name": "app",
                "ready": True,
                "restartCount": 0,
                "image": "nginx:1.27",
                "imageID": "",
                "containerID": "containerd://abc",
                "started": True,
                "state": {"running": {"startedAt": T0}},
            }
        ],
    }


def _pod(name: str, ns: str, node: str, labels: dict, owner: dict | None, ip: str) -> dict:
    md = {"name": name, "namespace": ns, "uid": f"uid-{name}", "creationTimestamp": T0, "labels": labels}
    if owner:
        md["ownerReferences"] = [owner]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": md,
        "spec": {
            "nodeName": node,
            "terminationGracePeriodSeconds": 30,
            "containers": [{"name": "app", "image": "nginx:1.27"}],
        },
        "status": _ready_status(ip),
    }


def objects() -> list[dict]:
    rs_owner = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "web-5d8f7",
        "uid": "uid-rs-web",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    ds_owner = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "name": "gpu-plugin",
        "uid": "uid-ds",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
    }
    objs: list[dict] = [
        {
            "apiVersion": "sim.dragoman.io/v1",
            "kind": "SimulatorConfig",
            "speed": 20,
            "users": [{"name": "viewer", "clusterRoles": ["view"]}],
        },
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-operator", "creationTimestamp": T0}},
        _node("node-1", "10.0.0.11"),
        _node("node-2", "10.0.0.12"),
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "web",
                "namespace": "default",
                "uid": "uid-deploy-web",
                "creationTimestamp": T0,
                "labels": {"app": "web"},
            },
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template},
            "status": {
                "replicas": 2,
                "readyReplicas": 2,
                "availableReplicas": 2,
                "updatedReplicas": 2,
                "observedGeneration": 1,
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": "web-5d8f7",
                "namespace": "default",
                "uid": "uid-rs-web",
                "creationTimestamp": T0,
                "labels": {"app": "web"},
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "web",
                        "uid": "uid-deploy-web",
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template},
            "status": {
                "replicas": 2,
                "readyReplicas": 2,
                "availableReplicas": 2,
                "fullyLabeledReplicas": 2,
                "observedGeneration": 1,
            },
        },
        _pod("web-5d8f7-aaaaa", "default", "node-1", {"app": "web"}, rs_owner, "10.244.1.10"),
        _pod("web-5d8f7-bbbbb", "default", "node-1", {"app": "web"}, rs_owner, "10.244.1.11"),
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default", "creationTimestamp": T0},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "gpu-plugin", "namespace": "gpu-operator", "uid": "uid-ds", "creationTimestamp": T0},
            "spec": {
                "selector": {"matchLabels": {"app": "gpu-plugin"}},
                "template": {
                    "metadata": {"labels": {"app": "gpu-plugin"}},
                    "spec": {"containers": [{"name": "app", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}]},
                },
            },
            "status": {
                "currentNumberScheduled": 2,
                "desiredNumberScheduled": 2,
                "numberMisscheduled": 0,
                "numberReady": 2,
                "numberAvailable": 2,
                "updatedNumberScheduled": 2,
                "observedGeneration": 1,
            },
        },
        _pod("gpu-plugin-n1", "gpu-operator", "node-1", {"app": "gpu-plugin"}, ds_owner, "10.244.1.2"),
        _pod("gpu-plugin-n2", "gpu-operator", "node-2", {"app": "gpu-plugin"}, ds_owner, "10.244.2.2"),
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "default", "creationTimestamp": T0},
            "spec": {
                "replicas": 0,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "db", "image": "postgres:17"}]},
                },
            },
            "status": {"replicas": 0, "availableReplicas": 0},
        },
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "train", "namespace": "default", "creationTimestamp": T0},
            "spec": {
                "completions": 1,
                "parallelism": 1,
                "backoffLimit": 6,
                "suspend": True,
                "template": {
                    "metadata": {"labels": {"job": "train"}},
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "t", "image": "pytorch:2"}]},
                },
            },
            "status": {},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "default", "creationTimestamp": T0},
            "data": {"mode": "fast"},
        },
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "gpus", "namespace": "default", "creationTimestamp": T0},
            "spec": {"hard": {"requests.nvidia.com/gpu": "16"}},
            "status": {"hard": {"requests.nvidia.com/gpu": "16"}, "used": {"requests.nvidia.com/gpu": "0"}},
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "trainer", "namespace": "default", "creationTimestamp": T0},
        },
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "node-1", "namespace": "kube-node-lease", "creationTimestamp": T0},
            "spec": {
                "holderIdentity": "node-1",
                "leaseDurationSeconds": 40,
                "renewTime": "2026-11-01T10:00:00.000000Z",
            },
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "reader", "namespace": "default", "creationTimestamp": T0},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "reader", "namespace": "default", "creationTimestamp": T0},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "someone"}],
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.nvidia.com", "creationTimestamp": T0},
            "spec": {
                "selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}],
                "extendedResourceName": "nvidia.com/gpu",
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "node-2-gpu.nvidia.com-abcde", "creationTimestamp": T0},
            "spec": {
                "driver": "gpu.nvidia.com",
                "nodeName": "node-2",
                "pool": {"name": "node-2", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": f"gpu-{i}",
                        "attributes": {
                            "productName": {"string": "NVIDIA H100 80GB HBM3"},
                            "uuid": {"string": f"GPU-{i:04d}"},
                        },
                        "capacity": {"memory": {"value": "80Gi"}},
                    }
                    for i in range(2)
                ],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "one-gpu", "namespace": "default", "creationTimestamp": T0},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "allocationMode": "ExactCount",
                                "count": 1,
                            },
                        }
                    ]
                }
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default", "creationTimestamp": T0},
            "spec": {
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "web-5d8f7-aaaaa.17f", "namespace": "default", "creationTimestamp": T0},
            "involvedObject": {
                "kind": "Pod",
                "namespace": "default",
                "name": "web-5d8f7-aaaaa",
                "uid": "uid-web-5d8f7-aaaaa",
                "apiVersion": "v1",
            },
            "reason": "Scheduled",
            "message": "Successfully assigned default/web-5d8f7-aaaaa to node-1",
            "type": "Normal",
            # As kube-scheduler writes it (through events.k8s.io/v1): no source, count or first/last timestamps.
            "source": {},
            "firstTimestamp": None,
            "lastTimestamp": None,
            "eventTime": "2026-11-01T10:00:00.000000Z",
            "action": "Binding",
            "reportingComponent": "default-scheduler",
            "reportingInstance": "default-scheduler-cp-1",
        },
    ]
    return objs


def write(path: pathlib.Path) -> pathlib.Path:
    path.write_text(yaml.safe_dump_all(objects(), sort_keys=False))
    return path
