"""The demo's object makers and the constants every story shares: names, ages, uids, metadata, finding marks
(`Demo` collects the objects, `NodeSpec` describes one node)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

from dragoman.fleet import nvidia_schema as nv
from dragoman.fleet.k8s.times import format_time
from dragoman.sim.controllers.base import CRASH_AT_START as CRASH_AT_START
from dragoman.sim.controllers.base import CRASH_LOOP_SECONDS as CRASH_LOOP_SECONDS
from dragoman.sim.controllers.base import NOT_READY as NOT_READY
from dragoman.sim.controllers.base import POD_FAULTS
from dragoman.sim.scenarios.podstatus import started_pod_conditions, stored_spec

MARK = "dragoman.io/demo-finding"
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
# What the simulator's kubelet reads to keep a pod's behaviour up (sim/controllers/base.py, imported above); a pod
# loaded in CrashLoopBackOff without an annotation simply stays there.
CLUSTER = "ml-prod"
PROJECT = "acme-ml-prod"
REGION = "us-central1"
POOL_LABEL = "cloud.google.com/gke-nodepool"
KUBELET = "v1.37.1-gke.1048000"
OLD_KUBELET = "v1.35.9-gke.1016000"
SNAPSHOT = dt.datetime(2026, 11, 30, 8, 0, 0, tzinfo=dt.UTC)
DRA_IMAGE = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.0"
DP_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.18.0"
GPU_DRIVER = "580.105.08"


# The hostname of the (managed) control plane's kube-scheduler: its events' reportingInstance.
CONTROL_PLANE_HOST = "gke-control-plane-7f3a"


def ts(days: float = 0, hours: float = 0, minutes: float = 0) -> str:
    """A timestamp this long before the snapshot."""
    t = SNAPSHOT - dt.timedelta(days=days, hours=hours, minutes=minutes)
    return format_time(t)


uid = nv.uid_for
sfx = nv.name_suffix


def meta(
    name: str,
    ns: str | None = None,
    *,
    created: str,
    labels: dict | None = None,
    annotations: dict | None = None,
    owner: dict | None = None,
    finding: str | None = None,
    generate_name: str | None = None,
    finalizers: list | None = None,
    kind: str = "",
) -> dict:
    m: dict = {"name": name}
    if generate_name:
        m["generateName"] = generate_name
    if ns:
        m["namespace"] = ns
    m["uid"] = uid(kind, ns, name)
    m["creationTimestamp"] = created
    if labels:
        m["labels"] = dict(labels)
    ann = dict(annotations or {})
    if finding:
        ann[MARK] = finding
    if ann:
        m["annotations"] = ann
    if owner:
        m["ownerReferences"] = [owner]
    if finalizers:
        m["finalizers"] = list(finalizers)
    return m


def owner_ref(obj: dict, *, block: bool = True) -> dict:
    ref = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": True,
    }
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


def add_finding(obj: dict, finding: str) -> None:
    ann = obj["metadata"].setdefault("annotations", {})
    ids = [i for i in ann.get(MARK, "").split(",") if i]
    if finding not in ids:
        ids.append(finding)
    ann[MARK] = ",".join(ids)


# ---------------------------------------------------------------- the fleet model


@dataclasses.dataclass
class NodeSpec:
    name: str
    pool: str
    machine: str
    zone: str
    cpu: int
    memory_gi: int
    hw: nv.NodeHardware | None
    created: str
    kubelet: str = KUBELET
    dp: str = ""  # "" none | "operator" | "nvdp"
    dp_state: str = (
        "serving"  # serving | crashloop | gone (capacity/allocatable "0" after the grace) | forgotten (key absent)
    )
    dra: bool = False
    dra_state: str = "ready"  # ready | not-ready | crashloop
    operator_dp_label: str = "false"
    unschedulable: bool = False
    findings: list[str] = dataclasses.field(default_factory=list)
    # DaemonSet name -> fault annotations for whichever of its pods lands here (the node's POD_FAULTS annotation, which
    # the node agents apply to a fresh pod too: the real control plane's DaemonSet controller makes its own).
    node_faults: dict = dataclasses.field(default_factory=dict)
    extra_labels: dict = dataclasses.field(default_factory=dict)
    index: int = 0


class Demo:
    def __init__(self) -> None:
        self.objects: list[dict] = []
        self.nodes: dict[str, NodeSpec] = {}
        self.node_objs: dict[str, dict] = {}
        self.pod_ip_next: dict[str, int] = {}
        self.used_devices: dict[str, set[str]] = {}
        self.slices: dict[str, list[dict]] = {}

    def add(self, obj: dict) -> dict:
        self.objects.append(obj)
        return obj

    # ------------------------------------------------------------ nodes

    def pod_ip(self, node: str) -> str:
        spec = self.nodes[node]
        n = self.pod_ip_next.get(node, 2)
        self.pod_ip_next[node] = n + 1
        return f"10.{64 + spec.index // 256}.{spec.index % 256}.{n}"

    def node_ip(self, node: str) -> str:
        i = self.nodes[node].index
        return f"10.128.{i // 200}.{10 + i % 200}"

    def add_node(self, spec: NodeSpec) -> dict:
        spec.index = len(self.nodes)
        self.nodes[spec.name] = spec
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/instance-type": spec.machine,
            "beta.kubernetes.io/os": "linux",
            "cloud.google.com/gke-boot-disk": "pd-balanced",
            "cloud.google.com/gke-container-runtime": "containerd",
            "cloud.google.com/gke-cpu-scaling-level": str(spec.cpu),
            "cloud.google.com/gke-logging-variant": "DEFAULT",
            "cloud.google.com/gke-max-pods-per-node": "110",
            "cloud.google.com/gke-nodepool": spec.pool,
            "cloud.google.com/gke-os-distribution": "cos",
            "cloud.google.com/machine-family": spec.machine.split("-")[0],
            "cloud.google.com/private-node": "true",
            "failure-domain.beta.kubernetes.io/region": REGION,
            "failure-domain.beta.kubernetes.io/zone": spec.zone,
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": spec.name,
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": spec.machine,
            "topology.gke.io/zone": spec.zone,
            "topology.kubernetes.io/region": REGION,
            "topology.kubernetes.io/zone": spec.zone,
        }
        capacity = {
            "cpu": str(spec.cpu),
            "ephemeral-storage": "507944172Ki",
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": f"{spec.memory_gi * 1024 * 1024 + 3348}Ki",
            "pods": "110",
        }
        allocatable = {
            "cpu": f"{spec.cpu * 1000 - (spec.cpu * 10 + 60)}m",
            "ephemeral-storage": "465741921243",
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": f"{int(spec.memory_gi * 1024 * 1024 * 0.93)}Ki",
            "pods": "110",
        }
        hw = spec.hw
        if hw is not None:
            labels["cloud.google.com/gke-accelerator"] = hw.model.gke_accelerator
            labels["cloud.google.com/gke-accelerator-count"] = str(hw.gpu_count)
            labels["cloud.google.com/gke-gpu-driver-version"] = "latest"
            labels["feature.node.kubernetes.io/pci-10de.present"] = "true"
            labels.update(hw.gfd_labels())
            labels["nvidia.com/gfd.timestamp"] = str(int(SNAPSHOT.timestamp()) - 3600 - spec.index * 17)
            # Every operand label the GPU Operator fills on a GPU node (gpuStateLabels; mig-manager on MIG-capable
            # GPUs).
            for comp in (
                "container-toolkit",
                "dcgm",
                "dcgm-exporter",
                "gpu-feature-discovery",
                "node-status-exporter",
                "operator-validator",
            ):
                labels[f"nvidia.com/gpu.deploy.{comp}"] = "true"
            if labels.get("nvidia.com/mig.capable") == "true":
                labels["nvidia.com/gpu.deploy.mig-manager"] = "true"
            labels["nvidia.com/gpu.deploy.driver"] = "pre-installed"
            labels["nvidia.com/gpu.deploy.device-plugin"] = spec.operator_dp_label
            resources = hw.device_plugin_resources()
            for key, n in resources.items():
                if spec.dp_state == "serving":
                    capacity[key] = allocatable[key] = str(n)
                elif spec.dp_state == "crashloop":
                    capacity[key], allocatable[key] = str(n), "0"
                elif spec.dp_state == "gone":
                    capacity[key] = allocatable[key] = "0"
        labels.update(spec.extra_labels)
        annotations = {
            "container.googleapis.com/instance_id": str(int(nv._hex("instance", spec.name)[:15], 16) % 10**19),
            "node.alpha.kubernetes.io/ttl": "0",
            "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        }
        if spec.node_faults:
            annotations[POD_FAULTS] = json.dumps(spec.node_faults, sort_keys=True, separators=(",", ":"))
        node_spec: dict = {
            "podCIDR": f"10.{64 + spec.index // 256}.{spec.index % 256}.0/24",
            "podCIDRs": [f"10.{64 + spec.index // 256}.{spec.index % 256}.0/24"],
            "providerID": f"gce://{PROJECT}/{spec.zone}/{spec.name}",
        }
        if spec.unschedulable:
            node_spec["unschedulable"] = True
            node_spec["taints"] = [
                {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": ts(hours=5)}
            ]
        hb = ts(minutes=1)
        conditions = [
            {
                "type": t,
                "status": "False",
                "lastHeartbeatTime": hb,
                "lastTransitionTime": spec.created,
                "reason": r,
                "message": msg,
            }
            for t, r, msg in (
                ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            )
        ]
        conditions.append(
            {
                "type": "Ready",
                "status": "True",
                "lastHeartbeatTime": hb,
                "lastTransitionTime": spec.created,
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
            }
        )
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": meta(
                spec.name,
                created=spec.created,
                labels=labels,
                annotations=annotations,
                finding=",".join(spec.findings) or None,
                kind="Node",
            ),
            "spec": node_spec,
            "status": {
                "addresses": [
                    {"type": "InternalIP", "address": self.node_ip(spec.name)},
                    {"type": "Hostname", "address": spec.name},
                ],
                "allocatable": allocatable,
                "capacity": capacity,
                "conditions": conditions,
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {
                    "architecture": "amd64",
                    "bootID": uid("boot", spec.name),
                    "containerRuntimeVersion": "containerd://2.0.6"
                    if spec.kubelet == KUBELET
                    else "containerd://1.7.27",
                    "kernelVersion": "6.6.97+" if spec.kubelet == KUBELET else "6.6.72+",
                    "kubeProxyVersion": spec.kubelet,
                    "kubeletVersion": spec.kubelet,
                    "machineID": nv._hex("machine", spec.name)[:32],
                    "operatingSystem": "linux",
                    "osImage": "Container-Optimized OS from Google",
                    "systemUUID": uid("system", spec.name),
                },
            },
        }
        self.node_objs[spec.name] = node
        return self.add(node)

    # ------------------------------------------------------------ pods

    def pod(
        self,
        name: str,
        ns: str,
        *,
        created: str,
        containers: list[dict],
        node: str | None,
        labels: dict | None = None,
        owner: dict | None = None,
        node_selector: dict | None = None,
        affinity: dict | None = None,
        tolerations: list | None = None,
        phase: str = "Running",
        finding: str | None = None,
        generate_name: str | None = None,
        resource_claims: list | None = None,
        restart_policy: str = "Always",
        container_state: dict | None = None,
        ready: bool | None = None,
        restarts: int = 0,
        last_state: dict | None = None,
        status_extra: dict | None = None,
        service_account: str = "default",
        priority_class: str | None = None,
        started: str | None = None,
        reason: str | None = None,
        message: str | None = None,
        conditions: list | None = None,
        host_network: bool = False,
        annotations: dict | None = None,
    ) -> dict:
        spec = stored_spec(
            {
                "containers": [dict(c) for c in containers],
                "priority": 2000001000 if priority_class == "system-node-critical" else 0,
                "restartPolicy": restart_policy,
                "serviceAccountName": service_account,
            }
        )
        if priority_class:
            spec["priorityClassName"] = priority_class
        if host_network:
            spec["hostNetwork"] = True
        if node:
            spec["nodeName"] = node
        if node_selector:
            spec["nodeSelector"] = node_selector
        if affinity:
            spec["affinity"] = affinity
        spec["tolerations"] = tolerations or [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ]
        if resource_claims:
            spec["resourceClaims"] = resource_claims
        start = started or created
        status: dict = {"phase": phase}
        limits_eq = all(
            c.get("resources", {}).get("limits") and c["resources"].get("limits") == c["resources"].get("requests")
            for c in containers
        )
        status["qosClass"] = "Guaranteed" if limits_eq else "Burstable"
        if phase == "Running" or (phase == "Pending" and node):
            running = phase == "Running" and container_state is None
            is_ready = ready if ready is not None else running
            status["conditions"] = started_pod_conditions(
                start,
                sandbox_ready=phase == "Running",
                ready=is_ready,
                not_ready={
                    "reason": "ContainersNotReady",
                    "message": f"containers with unready status: [{' '.join(x['name'] for x in containers)}]",
                },
            )
            status["hostIP"] = self.node_ip(node)
            status["hostIPs"] = [{"ip": self.node_ip(node)}]
            if phase == "Running":
                ip = self.node_ip(node) if host_network else self.pod_ip(node)
                status["podIP"] = ip
                status["podIPs"] = [{"ip": ip}]
            status["startTime"] = start
            cstat = []
            for c in containers:
                cid = nv._hex("container", ns, name, c["name"])
                st: dict = {
                    "name": c["name"],
                    "image": c["image"],
                    "imageID": "",
                    "ready": is_ready,
                    "restartCount": restarts,
                    "started": phase == "Running" and (container_state is None or "running" in container_state),
                    "state": container_state or {"running": {"startedAt": start}},
                }
                if phase == "Running" or "running" in (container_state or {}):
                    st["containerID"] = f"containerd://{cid}"
                    st["imageID"] = c["image"].split(":")[0] + "@sha256:" + nv._hex("image", c["image"])
                if last_state:
                    st["lastState"] = last_state
                cstat.append(st)
            status["containerStatuses"] = cstat
        elif phase == "Failed":
            pass  # a pod the kubelet rejected at admission never started: phase, reason and message only
        else:
            status["conditions"] = conditions or []
        if reason:
            status["reason"] = reason
        if message:
            status["message"] = message
        if status_extra:
            status.update(status_extra)
        return self.add(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta(
                    name,
                    ns,
                    created=created,
                    labels=labels,
                    owner=owner,
                    finding=finding,
                    generate_name=generate_name,
                    annotations=annotations,
                    kind="Pod",
                ),
                "spec": spec,
                "status": status,
            }
        )

    # ------------------------------------------------------------ DRA bits

    def take_devices(self, node: str, names: list[str]) -> list[str]:
        used = self.used_devices.setdefault(node, set())
        for n in names:
            assert n not in used, (node, n)
            used.add(n)
        return names

    def allocation(self, node: str, request: str, devices: list[str], at: str) -> dict:
        self.take_devices(node, devices)
        return {
            "devices": {
                "results": [{"request": request, "driver": nv.DRIVER, "pool": node, "device": d} for d in devices]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
            },
            "allocationTimestamp": at,
        }

    def bridge_claim(
        self,
        pod: dict,
        node: str | None,
        devices: list[str],
        *,
        resource: str = "nvidia.com/gpu",
        device_class: str = "gpu.nvidia.com",
        created: str,
        reserved: bool = True,
        finding: str | None = None,
    ) -> dict:
        """The scheduler-made claim of KEP-5004 for a pod's extended resources, and the pod's status field."""
        pname = pod["metadata"]["name"]
        ns = pod["metadata"]["namespace"]
        requests = []
        mappings = []
        for i, c in enumerate(pod["spec"]["containers"]):
            keys = sorted(c.get("resources", {}).get("requests", {}))
            if resource in keys:
                j = keys.index(resource)
                rname = f"container-{i}-request-{j}"
                count = int(c["resources"]["requests"][resource])
                requests.append(
                    {
                        "name": rname,
                        "exactly": {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count},
                    }
                )
                mappings.append({"containerName": c["name"], "resourceName": resource, "requestName": rname})
        assert len(requests) == 1, pname
        gen = f"{pname[:40]}-extended-resources-"
        name = gen + sfx("bridge", ns, pname)
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": meta(
                name,
                ns,
                created=created,
                generate_name=gen,
                annotations={"resource.kubernetes.io/extended-resource-claim": "true"},
                owner=owner_ref(pod, block=False),
                finalizers=["resource.kubernetes.io/delete-protection"],
                finding=finding,
                kind="ResourceClaim",
            ),
            "spec": {"devices": {"requests": requests}},
            "status": {},
        }
        if node:
            claim["status"]["allocation"] = self.allocation(node, requests[0]["name"], devices, created)
        if reserved:
            claim["status"]["reservedFor"] = [{"resource": "pods", "name": pname, "uid": pod["metadata"]["uid"]}]
            pod["status"]["extendedResourceClaimStatus"] = {"resourceClaimName": name, "requestMappings": mappings}
        if not claim["status"]:
            del claim["status"]
        return self.add(claim)

    def template_claim(
        self, pod: dict, claim_name: str, template: dict, node: str | None, devices: list[str], *, created: str
    ) -> dict:
        pname = pod["metadata"]["name"]
        ns = pod["metadata"]["namespace"]
        gen = f"{pname}-{claim_name}-"
        name = gen + sfx("tmpl", ns, pname, claim_name)
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": meta(
                name,
                ns,
                created=created,
                generate_name=gen,
                annotations={"resource.kubernetes.io/pod-claim-name": claim_name},
                owner=owner_ref(pod),
                kind="ResourceClaim",
            ),
            "spec": json.loads(json.dumps(template["spec"]["spec"])),
        }
        if node:
            req = template["spec"]["spec"]["devices"]["requests"][0]["name"]
            claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
            claim["status"] = {
                "allocation": self.allocation(node, req, devices, created),
                "reservedFor": [{"resource": "pods", "name": pname, "uid": pod["metadata"]["uid"]}],
            }
        pod["status"].setdefault("resourceClaimStatuses", []).append({"name": claim_name, "resourceClaimName": name})
        return self.add(claim)


# ---------------------------------------------------------------- containers and workloads
