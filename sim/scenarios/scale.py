"""A generated GPU fleet for benchmarks: thousands of nodes in device-plugin and DRA pools, their drivers, and GPU pods."""

from __future__ import annotations

import gc
import random

from dragoman.sim.scenarios import nvidia as nv

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


def _ready_conditions() -> list[dict]:
    return [{"type": "Ready", "status": "True", "lastHeartbeatTime": STARTED, "lastTransitionTime": CREATED,
             "reason": "KubeletReady", "message": "kubelet is posting ready status"}]


def _pod(name: str, ns: str, uid: str, *, containers: list[dict], node: str | None, labels: dict,
         owner: dict | None = None, node_selector: dict | None = None, affinity: dict | None = None,
         ip: str | None = None, host_ip: str | None = None) -> dict:
    meta = {"name": name, "namespace": ns, "uid": uid, "creationTimestamp": CREATED if owner else STARTED,
            "labels": labels}
    if owner:
        meta["ownerReferences"] = [owner]
    spec: dict = {"containers": containers, "restartPolicy": "Always", "schedulerName": "default-scheduler",
                  "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst"}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    if node:
        spec["nodeName"] = node
        status = {
            "phase": "Running", "hostIP": host_ip, "podIP": ip, "startTime": STARTED, "qosClass": "Burstable",
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": STARTED},
                           {"type": "Ready", "status": "True", "lastTransitionTime": STARTED}],
            "containerStatuses": [{"name": c["name"], "image": c["image"], "imageID": "", "ready": True,
                                   "restartCount": 0, "started": True,
                                   "state": {"running": {"startedAt": STARTED}}} for c in containers],
        }
    else:
        status = {"phase": "Pending", "qosClass": "Burstable"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _gpu_container(n: int) -> dict:
    return {"name": "worker", "image": "nvcr.io/nvidia/pytorch:25.10-py3", "imagePullPolicy": "IfNotPresent",
            "resources": {"limits": {"nvidia.com/gpu": str(n)},
                          "requests": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": str(n)}}}


def generate_scale(nodes: int = 5000, gpus_per_node: int = 8, pods: int = 20000, seed: int = 0, *,
                   pending: int = 0, pool_size: int = 100, gpu: str = "h100-80gb", namespaces: int = 10,
                   driver_version: str = "v0.4.0", dra_fraction: float = 0.5) -> list[dict]:
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
        return _generate(nodes, gpus_per_node, pods, seed, pending, pool_size, gpu, namespaces, driver_version,
                         dra_fraction)
    finally:
        if was_enabled:
            gc.enable()


def _generate(nodes: int, gpus_per_node: int, pods: int, seed: int, pending: int, pool_size: int, gpu: str,
              namespaces: int, driver_version: str, dra_fraction: float) -> list[dict]:  # noqa: C901
    rng = random.Random(seed)
    model = nv.CATALOG[gpu]
    hw = nv.NodeHardware(model, gpus_per_node)
    ids = _Ids(seed)
    uid = lambda *_: ids.uid()  # noqa: E731
    out: list[dict] = []

    n_dra = round(nodes * dra_fraction)
    dp_pools = [f"dp-{i:03d}" for i in range(max(1, -(-(nodes - n_dra) // pool_size)))]
    dra_pools = [f"dra-{i:03d}" for i in range(max(1, -(-n_dra // pool_size)))]
    ns_names = [f"team-{i:03d}" for i in range(namespaces)]
    for ns in ["kube-system", "nvidia-device-plugin", "dra-driver-nvidia-gpu", *ns_names]:
        out.append({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": ns, "uid": uid("ns", ns), "creationTimestamp": CREATED,
                                 "labels": {"kubernetes.io/metadata.name": ns}},
                    "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})

    gfd = hw.gfd_labels()
    dp_nodes: list[str] = []
    dra_nodes: list[str] = []
    node_ip: dict[str, str] = {}
    node_uid: dict[str, str] = {}
    node_pool: dict[str, str] = {}
    node_index: dict[str, int] = {}
    half = nodes - round(nodes * dra_fraction)
    for i in range(nodes):
        on_dra = i >= half
        pools = dra_pools if on_dra else dp_pools
        j = i - half if on_dra else i
        pool = pools[min(len(pools) - 1, j // pool_size)]
        name = f"gke-scale-{pool}-{j % pool_size:04d}-{ids.suffix(4)}"
        (dra_nodes if on_dra else dp_nodes).append(name)
        node_ip[name] = f"10.{128 + (i >> 8)}.{i & 255}.10"
        node_pool[name] = pool
        node_index[name] = i
        node_uid[name] = uid("node", name)
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                  POOL_LABEL: pool, "node.kubernetes.io/instance-type": "a3-highgpu-8g",
                  "nvidia.com/gpu.deploy.device-plugin": "false" if on_dra else "true", **gfd}
        capacity = {"cpu": "208", "memory": "1913832036Ki", "pods": "110"}
        allocatable = {"cpu": "207", "memory": "1812345678Ki", "pods": "110"}
        if not on_dra:
            capacity["nvidia.com/gpu"] = allocatable["nvidia.com/gpu"] = str(gpus_per_node)
        out.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": node_uid[name], "creationTimestamp": CREATED, "labels": labels},
            "spec": {"providerID": f"gce://acme-scale/us-central1-a/{name}"},
            "status": {"capacity": capacity, "allocatable": allocatable, "conditions": _ready_conditions(),
                       "addresses": [{"type": "InternalIP", "address": node_ip[name]}],
                       "nodeInfo": {"kubeletVersion": KUBELET, "kubeProxyVersion": KUBELET, "architecture": "amd64",
                                    "operatingSystem": "linux", "osImage": "Container-Optimized OS from Google",
                                    "containerRuntimeVersion": "containerd://2.0.6", "kernelVersion": "6.6.97+",
                                    "bootID": "", "machineID": "", "systemUUID": ""}},
        })

    def daemonset(name: str, ns: str, image: str, pools: list[str], on: list[str], app: str) -> None:
        aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": pools}]}]}}}
        ds_uid = uid("ds", name)
        container = {"name": app, "image": image, "imagePullPolicy": "IfNotPresent",
                     "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}}
        labels = {"app.kubernetes.io/name": app}
        out.append({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": ns, "uid": ds_uid, "creationTimestamp": CREATED,
                         "labels": labels, "generation": 1},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                "containers": [container], "affinity": aff, "priorityClassName": "system-node-critical",
                "tolerations": [{"operator": "Exists"}]}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}},
            "status": {"currentNumberScheduled": len(on), "desiredNumberScheduled": len(on),
                       "numberAvailable": len(on), "numberMisscheduled": 0, "numberReady": len(on),
                       "observedGeneration": 1, "updatedNumberScheduled": len(on)},
        })
        owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": name, "uid": ds_uid, "controller": True,
                 "blockOwnerDeletion": True}
        for k, node in enumerate(on):
            pod_aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
            p = _pod(f"{name}-{ids.suffix()}", ns, uid("dspod", name, k),
                     containers=[container], node=node, labels=dict(labels), owner=owner, affinity=pod_aff,
                     ip=node_ip[node], host_ip=node_ip[node])
            out.append(p)

    daemonset("nvdp-nvidia-device-plugin", "nvidia-device-plugin", DP_IMAGE, dp_pools, dp_nodes, "nvidia-device-plugin")
    daemonset("dra-driver-nvidia-gpu-kubelet-plugin", "dra-driver-nvidia-gpu", DRA_IMAGE, dra_pools, dra_nodes,
              "dra-driver-nvidia-gpu")
    out.append({
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "gpu.nvidia.com", "uid": uid("class"), "creationTimestamp": CREATED, "generation": 1},
        "spec": {"selectors": [{"cel": {"expression":
                                        "device.driver == 'gpu.nvidia.com' && "
                                        "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
                 "extendedResourceName": "nvidia.com/gpu"},
    })

    # One node's device list, re-used with per-node uuids: the attributes are identical across a uniform pool.
    proto = nv.devices_for_node("proto", hw, driver_version)
    for node in dra_nodes:
        devices = []
        for d in proto:
            attrs = dict(d["attributes"])
            attrs["uuid"] = {"string": ids.gpu_uuid()}
            devices.append({"name": d["name"], "attributes": attrs, "capacity": d["capacity"]})
        out.append({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-gpu.nvidia.com-{ids.suffix()}",
                         "generateName": f"{node}-gpu.nvidia.com-", "uid": uid("slice", node),
                         "creationTimestamp": CREATED,
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node,
                                              "uid": node_uid[node], "controller": True}]},
            "spec": {"driver": nv.DRIVER, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices},
        })

    # GPU pods: the running ones packed first-fit into their half of the fleet, the pending ones left unbound.
    running = pods - pending
    free = {n: gpus_per_node for n in dp_nodes + dra_nodes}
    cursor = {"dp": 0, "dra": 0}
    pools_of = {"dp": dp_nodes, "dra": dra_nodes}
    next_ip: dict[str, int] = {}
    for k in range(pods):
        side = "dp" if k % 2 == 0 else "dra"
        ns = ns_names[k % len(ns_names)]
        count = 1 if rng.random() < 0.75 else 2
        name = f"gpu-job-{k:06d}-{ids.suffix()}"
        labels = {"app.kubernetes.io/name": f"gpu-job-{k % 97:02d}", "scale.dragoman.io/side": side}
        pool_list = dp_pools if side == "dp" else dra_pools
        selector = {POOL_LABEL: pool_list[k // 2 % len(pool_list)]}
        node = None
        if k < running:
            candidates = pools_of[side]
            while cursor[side] < len(candidates) and free[candidates[cursor[side]]] < count:
                cursor[side] += 1
            if cursor[side] >= len(candidates):
                raise ValueError(f"{running} running pods do not fit on the {side} half of {nodes} nodes")
            node = candidates[cursor[side]]
            used = gpus_per_node - free[node]
            free[node] -= count
            selector = {POOL_LABEL: node_pool[node]}
            ipn = next_ip.get(node, 2)
            next_ip[node] = ipn + 1
            ni = node_index[node]
            ip = f"10.{64 + (ni >> 8)}.{ni & 255}.{ipn}"
        pod = _pod(name, ns, uid("pod", k), containers=[_gpu_container(count)], node=node, labels=labels,
                   node_selector=selector, ip=ip if node else None, host_ip=node_ip[node] if node else None)
        out.append(pod)
        if node and side == "dra":
            gen = f"{name}-extended-resources-"
            cname = gen + ids.suffix()
            pod["status"]["extendedResourceClaimStatus"] = {"resourceClaimName": cname, "requestMappings": [
                {"containerName": "worker", "resourceName": "nvidia.com/gpu", "requestName": "container-0-request-2"}]}
            out.append({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": cname, "generateName": gen, "namespace": ns, "uid": uid("claim", k),
                             "creationTimestamp": STARTED,
                             "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                             "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name,
                                                  "uid": pod["metadata"]["uid"], "controller": True}],
                             "finalizers": ["resource.kubernetes.io/delete-protection"]},
                "spec": {"devices": {"requests": [{"name": "container-0-request-2", "exactly": {
                    "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": count}}]}},
                "status": {
                    "allocation": {
                        "devices": {"results": [{"request": "container-0-request-2", "driver": nv.DRIVER,
                                                 "pool": node, "device": f"gpu-{used + i}"} for i in range(count)]},
                        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
                        "allocationTimestamp": STARTED},
                    "reservedFor": [{"resource": "pods", "name": name, "uid": pod["metadata"]["uid"]}],
                },
            })
    return out


def load(**params) -> list[dict]:
    """The scale scenario for `sim serve --scenario scale` (sim/scenario.py calls `load()`); params as generate_scale."""
    return generate_scale(**params)
