"""Builds the demo fleet (pinned as demo.yaml): a consistent GKE GPU cluster mid-migration with one case of every
finding.

Run `python -m dragoman.sim.scenarios.demo_build` to rewrite demo.yaml after changing this file; a test keeps the
two identical. The demo is written story by story (`STORIES`, in the order of demo.yaml): each story is one function
keyed by the finding ids it plants, and a test checks that its objects carry exactly those marks. The pools are
described in `DEMO_README`; `sim.scenarios.demo_marks()` lists where each finding lives.

How the demo marks findings (annotation `dragoman.io/demo-finding`, read only by tests):
- pod findings (pending-*, failed-admission, prepare-failed, running-without-gpu, double-request,
  nodeselector-steering, stale-bridge-claim) mark the pod; stale-bridge-claim also marks the leftover claim;
- node findings (both-stacks, plugin-flapping, no-slices, kubelet-too-old, sharing-capacity-change) mark the node;
  kubelet-skew marks the straggler; pool findings (allocatable-readers, migration-optional) mark every node of the
  pool that shows it;
- dp-targets-dra-pool / driver-targets-dp-pool mark the DaemonSet whose rules reach the wrong pool;
- class and selector findings mark the DeviceClass, claim or template that carries the selector
  (claims made from a template are reported through the template and not marked; scheduler-made claims never are);
- quota findings mark the ResourceQuota, plus the plain claim (quota-claims-now-count) or the blocked pod
  (quota-blocks-claim).
Pending pods' PodScheduled conditions and FailedScheduling Events are the simulated scheduler's own words
(`_verdicts`: `schedule_one` over the finished fleet), so a live demo's scheduler finds nothing to rewrite.
Pools are "served by" what the scheduler uses (§b): allocatable `nvidia.com/gpu` > 0 → device plugin; a pool
counts as DRA when most of its nodes are DRA-served (a100-serve: 3 of 5 on DRA, plus one both-stacks node and one
flapping node).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import pathlib
from collections.abc import Callable

import yaml
from dragoman.fleet.k8s import DAEMONSET_TOLERATIONS
from dragoman.sim.scenarios import nvidia as nv

MARK = "dragoman.io/demo-finding"
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
# Cases a live simulator keeps rewriting by design, beyond TRANSIENT_FINDINGS (sim/scenarios: what it resolves by
# itself): the flapping device plugin restarts every CRASH_LOOP_SECONDS and the node's allocatable flips with it;
# the quota-blocked pod is retried with backoff, and each refusal names the new claim name the apiserver generated.
# The simulated scheduler binds a pod whose claim is allocated without waiting for binding conditions, and has no
# DRA filter timeout: the binding and timeout stories are rewritten by a live simulator.
# Cases a running simulator moves past: the scheduler releases an allocation whose binding failed and tries again (the
# pod then waits for its new device's binding conditions), and has no DRA filter timeout (it answers the timeout
# story's pod with its own verdict). They are in the pinned demo (and on a real control plane), not in a live one.
SIMULATOR_LACKS = frozenset({"binding-failed", "filter-timeout"})
# The resourceclaim controller retries the claim the API server refuses for admin access: an Event each time.
LIVE_CHURN_FINDINGS = frozenset(
    {
        "plugin-flapping",
        "quota-blocks-claim",
        "binding-pending",
        "binding-failed",
        "filter-timeout",
        "admin-access-forbidden",
    }
)
# What the simulator's kubelet reads to keep a pod's behaviour up (sim/controllers/base.py); a pod loaded in
# CrashLoopBackOff without an annotation simply stays there.
CRASH_LOOP_SECONDS = "sim.dragoman.io/crash-loop-seconds"
NOT_READY = "sim.dragoman.io/not-ready"
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

DEMO_README = """\
| pool (`cloud.google.com/gke-nodepool`) | nodes | GPUs | served by | what it shows |
|---|---|---|---|---|
| `a100-train` | 3 × a2-highgpu-8g | 8 × A100-SXM4-40GB | device plugin (GPU Operator) | Deployment, StatefulSet and Jobs on `nvidia.com/gpu`; pods steered by `nvidia.com/gpu.product`; an 8-GPU Job pending for lack of free GPUs; the `ml-training` quota |
| `l4-inference` | 3 × g2-standard-48 | 4 × L4 | device plugin (standalone chart `nvdp`) | time-slicing ×4 on one node (allocatable 16) |
| `t4-batch` | 2 × n1-standard-8 | 1 × T4 | device plugin (`nvdp`) | a small plain pool where the device plugin is fine; one node cordoned, a pod pending behind it |
| `l4-serve` | 2 × g2-standard-48 | 4 × L4 | device plugin (GPU Operator) | the clean pool to migrate: a Deployment on `nvidia.com/gpu` (4 of 8 GPUs) and no disruption budget (the switch drains the whole pool at once); `dragoman migrate --pool l4-serve --yes` switches it to DRA end to end |
| `l4-dev` | 1 × g2-standard-8 | 1 × L4 | both | the DRA driver rolled out to a device-plugin pool too early |
| `h100-dra` | 4 × a3-highgpu-8g | 8 × H100 80GB | DRA driver v0.4.0 | `nvidia.com/gpu` pods served through the bridge (claims, `extendedResourceClaimStatus`), claim templates, a driver crash-looping (no slices), a driver not ready (prepare fails), a stale bridge claim, quota rejecting the bridge claim |
| `a100-serve` | 5 × a2-ultragpu-8g | 8 × A100-SXM4-80GB | mid-migration | 3 nodes on DRA (one with kubelet v1.35, running a GPU pod without its GPU), one autoscaled node running both stacks, one with a crash-looping device plugin (a pod rejected at admission) |
| `a100-mig` | 2 × a2-ultragpu-8g | 56 × MIG 1g.10gb | DRA driver | `nvidia.com/mig-1g.10gb` pods through the bridge via a MIG DeviceClass |

Plus two `system` nodes (e2-standard-8) for the GPU Operator and the DRA driver's controller. DeviceClasses: the
chart's `gpu.nvidia.com` (serves `nvidia.com/gpu`), `mig.nvidia.com`, `mig-1g.10gb.nvidia.com` (serves
`nvidia.com/mig-1g.10gb`), an older too-broad `nvidia-gpu` also naming `nvidia.com/gpu`, and `h100-low-index`,
whose selector still reads the retired `index`. Users (tokens made per run, in the kubeconfig): `admin` (system:masters),
`viewer` (read-only), `no-evict` (everything but evictions).
"""


# ---------------------------------------------------------------- helpers


# The hostname of the (managed) control plane's kube-scheduler: its events' reportingInstance.
CONTROL_PLANE_HOST = "gke-control-plane-7f3a"


def ts(days: float = 0, hours: float = 0, minutes: float = 0) -> str:
    """A timestamp this long before the snapshot."""
    t = SNAPSHOT - dt.timedelta(days=days, hours=hours, minutes=minutes)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


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
    pod_faults: dict = dataclasses.field(default_factory=dict)  # DaemonSet name -> annotations for its pod here
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
        spec: dict = {
            "containers": [
                dict(
                    c,
                    imagePullPolicy="IfNotPresent",
                    terminationMessagePath="/dev/termination-log",
                    terminationMessagePolicy="File",
                )
                for c in containers
            ],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 2000001000 if priority_class == "system-node-critical" else 0,
            "restartPolicy": restart_policy,
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccount": service_account,
            "serviceAccountName": service_account,
            "terminationGracePeriodSeconds": 30,
        }
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
            status["conditions"] = [
                {
                    "type": "PodReadyToStartContainers",
                    "status": "True" if phase == "Running" else "False",
                    "lastProbeTime": None,
                    "lastTransitionTime": start,
                },
                {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": start},
                {
                    "type": "Ready",
                    "status": "True" if is_ready else "False",
                    "lastProbeTime": None,
                    "lastTransitionTime": start,
                },
                {
                    "type": "ContainersReady",
                    "status": "True" if is_ready else "False",
                    "lastProbeTime": None,
                    "lastTransitionTime": start,
                },
                {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": start},
            ]
            if not is_ready:
                for c in status["conditions"][2:4]:
                    c["reason"] = "ContainersNotReady"
                    c["message"] = f"containers with unready status: [{' '.join(x['name'] for x in containers)}]"
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


def container(
    name: str,
    image: str,
    *,
    cpu: str,
    memory: str,
    gpu: int | None = None,
    resource: str = "nvidia.com/gpu",
    claims: list | None = None,
    env: list | None = None,
    command: list | None = None,
    args: list | None = None,
) -> dict:
    req = {"cpu": cpu, "memory": memory}
    lim = {"memory": memory}
    if gpu is not None:
        req[resource] = str(gpu)
        lim[resource] = str(gpu)
    c: dict = {"name": name, "image": image}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if env:
        c["env"] = env
    c["resources"] = {"limits": lim, "requests": req}
    if claims:
        c["resources"]["claims"] = claims
    return c


def template_spec(
    labels: dict,
    containers: list[dict],
    *,
    node_selector: dict | None = None,
    resource_claims: list | None = None,
    restart_policy: str = "Always",
) -> dict:
    spec: dict = {
        "containers": [
            dict(
                c,
                imagePullPolicy="IfNotPresent",
                terminationMessagePath="/dev/termination-log",
                terminationMessagePolicy="File",
            )
            for c in containers
        ],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": restart_policy,
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    if resource_claims:
        spec["resourceClaims"] = resource_claims
    return {"metadata": {"labels": labels}, "spec": spec}


class Workloads:
    """Deployments → ReplicaSets → Pods, StatefulSets → Pods, Jobs → Pods, with consistent status."""

    def __init__(self, demo: Demo) -> None:
        self.d = demo

    def deployment(
        self,
        name: str,
        ns: str,
        *,
        created: str,
        replicas: int,
        containers: list[dict],
        placements: list[str | None],
        node_selector: dict | None = None,
        resource_claims: list | None = None,
        labels: dict | None = None,
        pod_kwargs: list[dict] | None = None,
        ready: int | None = None,
        annotations: dict | None = None,
    ) -> tuple[dict, dict, list[dict]]:
        app = {"app.kubernetes.io/name": name, **(labels or {})}
        tpl = template_spec(app, containers, node_selector=node_selector, resource_claims=resource_claims)
        dep = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta(
                name,
                ns,
                created=created,
                labels=app,
                annotations={"deployment.kubernetes.io/revision": "1", **(annotations or {})},
                kind="Deployment",
            ),
            "spec": {
                "progressDeadlineSeconds": 600,
                "replicas": replicas,
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                "template": tpl,
            },
        }
        n_ready = ready if ready is not None else sum(1 for p in placements if p)
        available = n_ready >= replicas - replicas // 4  # maxUnavailable 25%, rounded down
        dep["metadata"]["generation"] = 1
        dep["status"] = {
            "availableReplicas": n_ready,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True" if available else "False",
                    "lastTransitionTime": created,
                    "lastUpdateTime": created,
                    "reason": "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                    "message": "Deployment has minimum availability."
                    if available
                    else "Deployment does not have minimum availability.",
                },
                {
                    "type": "Progressing",
                    "status": "True",
                    "lastTransitionTime": created,
                    "lastUpdateTime": created,
                    "reason": "NewReplicaSetAvailable",
                    "message": f'ReplicaSet "{name}-{sfx("rs", ns, name, length=10)}" has successfully progressed.',
                },
            ],
            "observedGeneration": 1,
            "readyReplicas": n_ready,
            "replicas": replicas,
            "updatedReplicas": replicas,
        }
        if n_ready < replicas:
            dep["status"]["unavailableReplicas"] = replicas - n_ready
        if not n_ready:
            del dep["status"]["readyReplicas"], dep["status"]["availableReplicas"]
        self.d.add(dep)
        h = sfx("rs", ns, name, length=10)
        rs_labels = {**app, "pod-template-hash": h}
        rs_tpl = json.loads(json.dumps(tpl))
        rs_tpl["metadata"]["labels"] = dict(rs_labels)
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": meta(
                f"{name}-{h}",
                ns,
                created=created,
                labels=rs_labels,
                owner=owner_ref(dep),
                annotations={
                    "deployment.kubernetes.io/desired-replicas": str(replicas),
                    "deployment.kubernetes.io/max-replicas": str(replicas + max(1, replicas // 4)),
                    "deployment.kubernetes.io/revision": "1",
                },
                kind="ReplicaSet",
            ),
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app.kubernetes.io/name": name, "pod-template-hash": h}},
                "template": rs_tpl,
            },
            "status": {
                "availableReplicas": n_ready,
                "fullyLabeledReplicas": replicas,
                "observedGeneration": 1,
                "readyReplicas": n_ready,
                "replicas": replicas,
            },
        }
        rs["metadata"]["generation"] = 1
        if not n_ready:
            del rs["status"]["readyReplicas"], rs["status"]["availableReplicas"]
        self.d.add(rs)
        pods = []
        for i, node in enumerate(placements):
            pname = f"{name}-{h}-{sfx('pod', ns, name, i)}"
            kw = dict((pod_kwargs or [{}] * len(placements))[i] or {})
            kw.setdefault("created", created)
            p = self.d.pod(
                pname,
                ns,
                containers=containers,
                node=node,
                labels=rs_labels,
                owner=owner_ref(rs),
                node_selector=node_selector,
                resource_claims=resource_claims,
                generate_name=f"{name}-{h}-",
                **kw,
            )
            pods.append(p)
        return dep, rs, pods

    def statefulset(
        self,
        name: str,
        ns: str,
        *,
        created: str,
        containers: list[dict],
        placements: list[str],
        node_selector: dict | None = None,
    ) -> tuple[dict, list[dict]]:
        app = {"app.kubernetes.io/name": name}
        tpl = template_spec(app, containers, node_selector=node_selector)
        rev = f"{name}-{sfx('sts', ns, name, length=10)}"
        sts = {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": meta(name, ns, created=created, labels=app, kind="StatefulSet"),
            "spec": {
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
                "podManagementPolicy": "Parallel",
                "replicas": len(placements),
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": app},
                "serviceName": name,
                "template": tpl,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            },
            "status": {
                "availableReplicas": len(placements),
                "collisionCount": 0,
                "currentReplicas": len(placements),
                "currentRevision": rev,
                "observedGeneration": 1,
                "readyReplicas": len(placements),
                "replicas": len(placements),
                "updateRevision": rev,
                "updatedReplicas": len(placements),
            },
        }
        sts["metadata"]["generation"] = 1
        self.d.add(sts)
        pods = []
        for i, node in enumerate(placements):
            labels = {
                **app,
                "apps.kubernetes.io/pod-index": str(i),
                "controller-revision-hash": rev,
                "statefulset.kubernetes.io/pod-name": f"{name}-{i}",
            }
            p = self.d.pod(
                f"{name}-{i}",
                ns,
                created=created,
                containers=containers,
                node=node,
                labels=labels,
                owner=owner_ref(sts),
                node_selector=node_selector,
            )
            p["spec"]["hostname"] = f"{name}-{i}"
            p["spec"]["subdomain"] = name
            pods.append(p)
        return sts, pods

    def job(
        self,
        name: str,
        ns: str,
        *,
        created: str,
        containers: list[dict],
        node: str | None,
        node_selector: dict | None = None,
        resource_claims: list | None = None,
        pod_kwargs: dict | None = None,
    ) -> tuple[dict, dict]:
        job_uid = uid("Job", ns, name)
        sel = {"batch.kubernetes.io/controller-uid": job_uid}
        labels = {
            "batch.kubernetes.io/controller-uid": job_uid,
            "batch.kubernetes.io/job-name": name,
            "controller-uid": job_uid,
            "job-name": name,
        }
        tpl = template_spec(
            labels, containers, node_selector=node_selector, resource_claims=resource_claims, restart_policy="Never"
        )
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta(name, ns, created=created, labels={"app.kubernetes.io/name": name}, kind="Job"),
            "spec": {
                "backoffLimit": 6,
                "completionMode": "NonIndexed",
                "completions": 1,
                "manualSelector": False,
                "parallelism": 1,
                "podReplacementPolicy": "TerminatingOrFailed",
                "selector": {"matchLabels": sel},
                "suspend": False,
                "template": tpl,
            },
            "status": {
                "active": 1,
                "ready": 1 if node and not (pod_kwargs or {}).get("container_state") else 0,
                "startTime": created,
                "terminating": 0,
                "uncountedTerminatedPods": {},
            },
        }
        job["metadata"]["generation"] = 1
        self.d.add(job)
        kw = dict(pod_kwargs or {})
        kw.setdefault("created", created)
        pod = self.d.pod(
            f"{name}-{sfx('job', ns, name)}",
            ns,
            containers=containers,
            node=node,
            labels=labels,
            owner=owner_ref(job),
            node_selector=node_selector,
            resource_claims=resource_claims,
            restart_policy="Never",
            generate_name=f"{name}-",
            **kw,
        )
        return job, pod


def unschedulable_condition(message: str, at: str, reason: str = "Unschedulable") -> list[dict]:
    # As the scheduler writes it (sim/controllers/scheduler.py _fail): observedGeneration is the pod's generation,
    # 1 for a pod never updated.
    return [
        {
            "type": "PodScheduled",
            "status": "False",
            "observedGeneration": 1,
            "lastProbeTime": None,
            "lastTransitionTime": at,
            "reason": reason,
            "message": message,
        }
    ]


# Stands for the scheduler's message in a pod built before the fleet is complete; _verdicts() replaces it.
VERDICT = "<the simulated scheduler's verdict>"
# kube-scheduler's PreBind failure as the simulator's scheduler words it (sim/controllers/scheduler.py): the
# DynamicResources plugin wraps the apiserver's refusal of the claim it creates for a pod's extended resources.
PREBIND_CLAIM_ERROR = 'running PreBind plugin "DynamicResources": create claim for extended resources {ns}/: {message}'


def _verdicts(objects: list[dict]) -> dict[str, dict]:
    """Pod uid → the PodScheduled condition the simulated scheduler writes for each pod still waiting for its verdict.

    Each such pod gets one attempt (`schedule_one`) against the whole demo, so the pinned file says exactly what the
    live scheduler says when the demo starts, and its first retry finds nothing to rewrite. A pod the scheduler would
    place must be one whose bridge claim quota refuses (`charge`, the admission the simulator's apiserver runs); the
    claim's generated name is made deterministic here, where the apiserver would pick a random one.
    """
    from dragoman.sim.controllers import quota
    from dragoman.sim.controllers.scheduling import ClusterView, schedule_one

    by_kind: dict[str, list[dict]] = {}
    for o in objects:
        by_kind.setdefault(o["kind"], []).append(o)
    view = ClusterView(
        nodes=by_kind.get("Node", ()),
        pods=by_kind.get("Pod", ()),
        resourceslices=by_kind.get("ResourceSlice", ()),
        deviceclasses=by_kind.get("DeviceClass", ()),
        resourceclaims=by_kind.get("ResourceClaim", ()),
        resourceclaimtemplates=by_kind.get("ResourceClaimTemplate", ()),
        resourcequotas=by_kind.get("ResourceQuota", ()),
        namespaces=by_kind.get("Namespace", ()),
        devicetaintrules=by_kind.get("DeviceTaintRule", ()),
    )
    out: dict[str, dict] = {}
    for pod in by_kind.get("Pod", ()):
        conds = [c for c in pod["status"].get("conditions") or [] if c.get("message") == VERDICT]
        if not conds:
            continue
        (cond,) = conds
        md = pod["metadata"]
        dec = schedule_one(pod, view, cond["lastTransitionTime"])
        if dec.outcome == "unschedulable":
            reason, message = dec.condition["reason"], dec.message
        elif dec.outcome == "scheduled" and len(dec.claims_to_create) == 1:
            claim = json.loads(json.dumps(dec.claims_to_create[0]))
            claim["metadata"]["name"] = claim["metadata"]["generateName"] + sfx("rejected", md["name"])
            allowed, refusal = quota.charge(claim, None, view)
            if allowed:
                raise AssertionError(f"demo: quota admits the bridge claim of {md['name']}, so the pod would run")
            reason, message = "SchedulerError", PREBIND_CLAIM_ERROR.format(ns=md["namespace"], message=refusal)
        else:
            raise AssertionError(f"demo: the scheduler's verdict on {md['name']} is {dec.outcome!r}: {dec.message}")
        if reason != cond["reason"]:
            raise AssertionError(f"demo: {md['name']} expects reason {cond['reason']}, the scheduler says {reason}")
        # The events recorder's 1024-character cut would make the Event differ from the condition.
        assert len(message) <= 1024, md["name"]
        cond["message"] = message
        out[md["uid"]] = cond
    return out


# ---------------------------------------------------------------- the demo itself


Event = tuple[dict, str, str, str, str, int]  # pod, reason, message, component, at, count
REG = f"us-docker.pkg.dev/{PROJECT}"
VLLM = "vllm/vllm-openai:v0.11.2"
DRA_LABELS = {
    "app.kubernetes.io/name": "dra-driver-nvidia-gpu",
    "app.kubernetes.io/instance": "dra-driver-nvidia-gpu",
    "app.kubernetes.io/version": "0.4.0",
}


@dataclasses.dataclass
class Fleet:
    """What the stories share: the objects so far (`d`), the workload makers (`w`), the node pools and the Warning
    events that the last stories write."""

    d: Demo = dataclasses.field(default_factory=Demo)
    specs: dict[str, list[NodeSpec]] = dataclasses.field(default_factory=dict)
    events: list[Event] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self.w = Workloads(self.d)

    @property
    def by_name(self) -> dict[str, NodeSpec]:
        """Every node's spec by node name, the pools in the order they were made."""
        return {s.name: s for g in self.specs.values() for s in g}

    def names(self, pool: str) -> list[str]:
        return [s.name for s in self.specs[pool]]


@dataclasses.dataclass(frozen=True)
class Story:
    """One part of the demo: `plants` are the finding ids its objects are marked with (tests/sim/test_scenarios.py
    checks that they are exactly those)."""

    name: str
    plants: tuple[str, ...]
    build: Callable[[Fleet], None]


def _sel(pool: str) -> dict:
    return {POOL_LABEL: pool}


def _pending(at: str, reason: str = "Unschedulable") -> dict:
    # The message is the simulated scheduler's own verdict, filled in once the fleet is complete (_verdicts).
    return {"phase": "Pending", "conditions": unschedulable_condition(VERDICT, at, reason)}


def _daemonset(
    d: Demo,
    name: str,
    ns: str,
    *,
    created: str,
    labels: dict,
    selector: dict,
    pod_labels: dict,
    containers: list[dict],
    nodes: list[NodeSpec],
    node_selector: dict | None = None,
    affinity: dict | None = None,
    annotations: dict | None = None,
    owner: dict | None = None,
    tolerations: list | None = None,
    finding: str | None = None,
    states: dict | None = None,
    service_account: str = "default",
) -> dict:
    rev = sfx("ds", ns, name, length=10)
    tpl = {
        "metadata": {"labels": pod_labels},
        "spec": {
            "containers": [
                dict(
                    c,
                    imagePullPolicy="IfNotPresent",
                    terminationMessagePath="/dev/termination-log",
                    terminationMessagePolicy="File",
                )
                for c in containers
            ],
            "dnsPolicy": "ClusterFirst",
            "priorityClassName": "system-node-critical",
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccountName": service_account,
            "serviceAccount": service_account,
            "terminationGracePeriodSeconds": 30,
            "tolerations": tolerations or [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }
    if node_selector:
        tpl["spec"]["nodeSelector"] = node_selector
    if affinity:
        tpl["spec"]["affinity"] = affinity
    states = states or {}
    ready = sum(1 for n in nodes if states.get(n.name, "ready") == "ready")
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": meta(
            name,
            ns,
            created=created,
            labels=labels,
            annotations={"deprecated.daemonset.template.generation": "1", **(annotations or {})},
            owner=owner,
            finding=finding,
            kind="DaemonSet",
        ),
        "spec": {
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": selector},
            "template": tpl,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
        },
        "status": {
            "currentNumberScheduled": len(nodes),
            "desiredNumberScheduled": len(nodes),
            "numberAvailable": ready,
            "numberMisscheduled": 0,
            "numberReady": ready,
            "observedGeneration": 1,
            "updatedNumberScheduled": len(nodes),
        },
    }
    ds["metadata"]["generation"] = 1
    if ready < len(nodes):
        ds["status"]["numberUnavailable"] = len(nodes) - ready
    if not ready:
        del ds["status"]["numberAvailable"]
    d.add(ds)
    for n in nodes:
        state = states.get(n.name, "ready")
        plabels = {**pod_labels, "controller-revision-hash": rev, "pod-template-generation": "1"}
        node_aff = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n.name]}]}
                    ]
                }
            }
        }
        kw: dict = {}
        if state == "crashloop":
            kw = dict(
                container_state={
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": f"back-off 5m0s restarting failed container={containers[0]['name']} "
                        f"pod={name}-{sfx('dspod', ns, name, n.name)}_{ns}",
                    }
                },
                ready=False,
                restarts=23 if "device" in name else 41,
                last_state={
                    "terminated": {
                        "exitCode": 1,
                        "reason": "Error",
                        "startedAt": ts(minutes=7),
                        "finishedAt": ts(minutes=6, hours=0),
                    }
                },
            )
        elif state == "not-ready":
            kw = dict(
                ready=False,
                restarts=3,
                container_state={"running": {"startedAt": ts(minutes=12)}},
                last_state={
                    "terminated": {
                        "exitCode": 2,
                        "reason": "Error",
                        "startedAt": ts(hours=2),
                        "finishedAt": ts(minutes=12),
                    }
                },
            )
        pod_created = max(created, n.created)
        d.pod(
            f"{name}-{sfx('dspod', ns, name, n.name)}",
            ns,
            created=pod_created,
            containers=containers,
            node=n.name,
            labels=plabels,
            owner=owner_ref(ds),
            affinity=node_aff,
            node_selector=node_selector,
            tolerations=tpl["spec"]["tolerations"] + list(DAEMONSET_TOLERATIONS),
            generate_name=f"{name}-",
            priority_class="system-node-critical",
            service_account=service_account,
            annotations=n.pod_faults.get(name),
            **kw,
        )
    return ds


def _device_class(
    d: Demo,
    name: str,
    selectors: list[str],
    *,
    created: str,
    ern: str | None = None,
    labels: dict | None = None,
    finding: str | None = None,
    annotations: dict | None = None,
) -> dict:
    spec: dict = {"selectors": [{"cel": {"expression": e}} for e in selectors]}
    if ern:
        spec["extendedResourceName"] = ern
    obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": meta(
            name, created=created, labels=labels, finding=finding, annotations=annotations, kind="DeviceClass"
        ),
        "spec": spec,
    }
    obj["metadata"]["generation"] = 1
    return d.add(obj)


def _pdb(
    d: Demo,
    name: str,
    ns: str,
    app: str,
    *,
    created: str,
    min_available=None,
    max_unavailable=None,
    expected: int,
    healthy: int,
    desired: int,
) -> None:
    spec: dict = {"selector": {"matchLabels": {"app.kubernetes.io/name": app}}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    allowed = max(0, healthy - desired)
    obj = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": meta(name, ns, created=created, kind="PodDisruptionBudget"),
        "spec": spec,
        "status": {
            "conditions": [
                {
                    "type": "DisruptionAllowed",
                    "status": "True" if allowed else "False",
                    "reason": "SufficientPods" if allowed else "InsufficientPods",
                    "message": "",
                    "lastTransitionTime": created,
                    "observedGeneration": 1,
                }
            ],
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "disruptionsAllowed": allowed,
            "expectedPods": expected,
            "observedGeneration": 1,
        },
    }
    obj["metadata"]["generation"] = 1
    d.add(obj)


def _namespaces(f: Fleet) -> None:
    """The namespaces, as old as the teams that own them."""
    d = f.d
    for ns, age in (
        ("default", 322),
        ("kube-system", 322),
        ("kube-public", 322),
        ("kube-node-lease", 322),
        ("gpu-operator", 300),
        ("nvidia-device-plugin", 290),
        ("dra-driver-nvidia-gpu", 181),
        ("ml-training", 280),
        ("ml-inference", 280),
        ("research", 240),
        ("batch", 200),
        ("monitoring", 310),
        ("dra-lab", 20),
        ("gpu-monitoring", 20),
    ):
        labels = {"kubernetes.io/metadata.name": ns}
        if ns in ("gpu-operator", "dra-driver-nvidia-gpu", "nvidia-device-plugin"):
            labels["pod-security.kubernetes.io/enforce"] = "privileged"
        if ns == "gpu-monitoring":
            labels[ADMIN_ACCESS_LABEL] = "true"  # its probes may see devices others hold (admin access)
        d.add(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": meta(ns, created=ts(days=age), labels=labels, kind="Namespace"),
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
        )


def _nodes(f: Fleet) -> None:
    """The node pools (DEMO_README's table): hardware, what serves each node, and the node findings."""
    d, specs = f.d, f.specs

    def node_name(pool: str, i: int) -> str:
        group = nv._hex("group", pool)[:8]
        return f"gke-{CLUSTER}-{pool}-{group}-{sfx('node', pool, i, length=4)}"

    zones = ("us-central1-a", "us-central1-b", "us-central1-c")

    def pool(
        name: str, n: int, machine: str, cpu: int, mem: int, hw: nv.NodeHardware | None, age: float, **kw
    ) -> list[NodeSpec]:
        out = []
        for i in range(n):
            s = NodeSpec(
                node_name(name, i),
                name,
                machine,
                zones[i % 3] if hw is None or "a3" not in machine else "us-central1-a",
                cpu,
                mem,
                hw,
                ts(days=age - i * 0.01),
                **kw,
            )
            out.append(s)
        specs[name] = out
        return out

    def gpu_hw(key: str, count: int, **kw) -> nv.NodeHardware:
        return nv.NodeHardware(nv.CATALOG[key], count, driver_version=GPU_DRIVER, cuda_driver_version="13.0", **kw)

    system = pool("system", 2, "e2-standard-8", 8, 32, None, 322)
    a100t = pool(
        "a100-train", 3, "a2-highgpu-8g", 96, 680, gpu_hw("a100-40gb", 8), 210, dp="operator", operator_dp_label="true"
    )
    l4 = pool("l4-inference", 3, "g2-standard-48", 48, 192, gpu_hw("l4", 4), 150, dp="nvdp")
    l4[2].hw = gpu_hw("l4", 4, replicas=4, sharing_strategy="time-slicing")
    l4[2].extra_labels = {"nvidia.com/device-plugin.config": "l4-time-sliced-4"}
    l4[2].findings.append("sharing-capacity-change")
    t4 = pool("t4-batch", 2, "n1-standard-8", 8, 30, gpu_hw("t4", 1), 200, dp="nvdp")
    t4[1].unschedulable = True
    for s in t4:
        s.findings.append("migration-optional")
    # The pool that migrates cleanly as shipped: whole GPUs, spare capacity for the canary, no PDB (the default plan
    # drains the whole pool at once, and its pods can only run on the pool: any budget short of 100% would block it).
    l4serve = pool(
        "l4-serve", 2, "g2-standard-48", 48, 192, gpu_hw("l4", 4), 90, dp="operator", operator_dp_label="true"
    )
    for s in l4serve:
        s.findings.append("migration-optional")
    l4dev = pool("l4-dev", 1, "g2-standard-8", 8, 32, gpu_hw("l4", 1), 60, dp="nvdp", dra=True)
    l4dev[0].findings.append("both-stacks")
    h100 = pool("h100-dra", 4, "a3-highgpu-8g", 208, 1872, gpu_hw("h100-80gb", 8), 150, dra=True)
    h100[2].dra_state = "not-ready"
    h100[2].pod_faults["dra-driver-nvidia-gpu-kubelet-plugin"] = {NOT_READY: "true"}
    h100[3].dra_state = "crashloop"
    h100[3].findings.append("no-slices")
    serve = pool("a100-serve", 5, "a2-ultragpu-8g", 96, 1360, gpu_hw("a100-80gb", 8), 120, dra=True, dp_state="gone")
    serve[1].dp, serve[1].dp_state, serve[1].operator_dp_label = "operator", "serving", "true"
    serve[1].created = ts(days=3, hours=4)  # added by the autoscaler after the pool was migrated
    serve[1].findings.append("both-stacks")
    serve[2].kubelet = OLD_KUBELET
    serve[2].dp_state = "forgotten"  # node restarted since the plugin left: no nvidia.com/gpu key at all
    serve[2].findings += ["kubelet-too-old", "kubelet-skew"]
    serve[3].dp, serve[3].dp_state, serve[3].operator_dp_label = "operator", "crashloop", "true"
    serve[3].pod_faults["nvidia-device-plugin-daemonset"] = {CRASH_LOOP_SECONDS: "120"}
    serve[3].findings += ["plugin-flapping", "both-stacks"]
    mig = pool(
        "a100-mig",
        2,
        "a2-ultragpu-8g",
        96,
        1360,
        gpu_hw("a100-80gb", 8, mig_strategy="mixed", mig_layout=("1g.10gb",) * 7),
        100,
        dra=True,
        dp_state="forgotten",
    )
    # v1.37's DRA features, one node each: DynamicMIG (counters), a shared GPU (consumable capacity), a GPU under
    # a maintenance DeviceTaintRule.
    lab = pool("a100-lab", 3, "a2-ultragpu-1g", 12, 170, gpu_hw("a100-80gb", 1), 20, dra=True, dp_state="forgotten")
    lab[0].hw = gpu_hw("a100-80gb", 1, dynamic_mig=True)
    lab[1].hw = gpu_hw("a100-80gb", 1, shared_memory=True)
    for s in h100 + mig + lab + [serve[0], serve[2], serve[3], serve[4]]:
        s.findings.append("allocatable-readers")
    for s in h100:
        s.dp_state = "forgotten"
    for group in (system, a100t, l4, t4, l4serve, l4dev, h100, serve, mig, lab):
        for s in group:
            if s.hw is None:
                s.operator_dp_label = ""
            d.add_node(s)
    for s in system:
        labels = d.node_objs[s.name]["metadata"]["labels"]
        for k in [k for k in labels if k.startswith("nvidia.com/")]:
            del labels[k]


def _gpu_operator(f: Fleet) -> None:
    """The GPU Operator: its device-plugin DaemonSet (whose rules reach a DRA pool) and GPU feature discovery."""
    d, w, N = f.d, f.w, f.by_name
    system, serve = f.specs["system"], f.specs["a100-serve"]
    w.deployment(
        "gpu-operator",
        "gpu-operator",
        created=ts(days=300),
        replicas=1,
        containers=[container("gpu-operator", "nvcr.io/nvidia/gpu-operator:v25.10.0", cpu="200m", memory="350Mi")],
        placements=[system[0].name],
        labels={
            "app": "gpu-operator",
            "app.kubernetes.io/component": "gpu-operator",
            "app.kubernetes.io/instance": "gpu-operator",
            "app.kubernetes.io/managed-by": "Helm",
            "app.kubernetes.io/version": "v25.10.0",
            "helm.sh/chart": "gpu-operator-v25.10.0",
        },
        annotations={"meta.helm.sh/release-name": "gpu-operator", "meta.helm.sh/release-namespace": "gpu-operator"},
    )
    cluster_policy_uid = uid("ClusterPolicy", None, "cluster-policy")

    op_nodes = [s for s in N.values() if s.dp == "operator"]
    _daemonset(
        d,
        "nvidia-device-plugin-daemonset",
        "gpu-operator",
        created=ts(days=300),
        labels={
            "app": "nvidia-device-plugin-daemonset",
            "app.kubernetes.io/managed-by": "gpu-operator",
            "helm.sh/chart": "gpu-operator-v25.10.0",
        },
        annotations={"nvidia.com/last-applied-hash": str(int(nv._hex("op-ds")[:8], 16))},
        owner={
            "apiVersion": "nvidia.com/v1",
            "kind": "ClusterPolicy",
            "name": "cluster-policy",
            "uid": cluster_policy_uid,
            "controller": True,
            "blockOwnerDeletion": True,
        },
        selector={"app": "nvidia-device-plugin-daemonset"},
        pod_labels={
            "app": "nvidia-device-plugin-daemonset",
            "app.kubernetes.io/managed-by": "gpu-operator",
            "helm.sh/chart": "gpu-operator-v25.10.0",
        },
        containers=[
            container(
                "nvidia-device-plugin",
                DP_IMAGE,
                cpu="50m",
                memory="64Mi",
                command=["/bin/bash", "-c"],
                args=["/bin/entrypoint.sh"],
                env=[
                    {"name": "PASS_DEVICE_SPECS", "value": "true"},
                    {"name": "FAIL_ON_INIT_ERROR", "value": "true"},
                    {"name": "DEVICE_LIST_STRATEGY", "value": "envvar"},
                    {"name": "DEVICE_ID_STRATEGY", "value": "uuid"},
                    {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                    {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "all"},
                    {"name": "MIG_STRATEGY", "value": "single"},
                    {"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"},
                ],
            )
        ],
        nodes=op_nodes,
        node_selector={"nvidia.com/gpu.deploy.device-plugin": "true"},
        service_account="nvidia-device-plugin",
        finding="dp-targets-dra-pool",
        states={serve[3].name: "crashloop"},
    )

    gfd_labels = {
        "app": "gpu-feature-discovery",
        "app.kubernetes.io/managed-by": "gpu-operator",
        "app.kubernetes.io/part-of": "nvidia-gpu",
        "helm.sh/chart": "gpu-operator-v25.10.0",
    }
    _daemonset(
        d,
        "gpu-feature-discovery",
        "gpu-operator",
        created=ts(days=300),
        labels=gfd_labels,
        annotations={"nvidia.com/last-applied-hash": str(int(nv._hex("gfd-ds")[:8], 16))},
        owner={
            "apiVersion": "nvidia.com/v1",
            "kind": "ClusterPolicy",
            "name": "cluster-policy",
            "uid": cluster_policy_uid,
            "controller": True,
            "blockOwnerDeletion": True,
        },
        selector={"app": "gpu-feature-discovery", "app.kubernetes.io/part-of": "nvidia-gpu"},
        pod_labels={"app": "gpu-feature-discovery", "app.kubernetes.io/part-of": "nvidia-gpu"},
        containers=[
            container(
                "gpu-feature-discovery",
                DP_IMAGE,
                cpu="10m",
                memory="64Mi",
                command=["gpu-feature-discovery"],
                env=[
                    {"name": "GFD_SLEEP_INTERVAL", "value": "60s"},
                    {"name": "GFD_FAIL_ON_INIT_ERROR", "value": "true"},
                    {"name": "MIG_STRATEGY", "value": "mixed"},
                ],
            )
        ],
        nodes=[s for s in N.values() if s.hw is not None],
        node_selector={"nvidia.com/gpu.deploy.gpu-feature-discovery": "true"},
        service_account="nvidia-gpu-feature-discovery",
    )


def _nvdp(f: Fleet) -> None:
    """The standalone device-plugin chart (release nvdp), scoped to its pools in each default term."""
    d, N = f.d, f.by_name
    nvdp_pools = ["l4-inference", "t4-batch", "l4-dev"]
    pool_expr = {"key": POOL_LABEL, "operator": "In", "values": nvdp_pools}
    nvdp_aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "feature.node.kubernetes.io/pci-10de.present",
                                "operator": "In",
                                "values": ["true"],
                            },
                            pool_expr,
                        ]
                    },
                    {
                        "matchExpressions": [
                            {
                                "key": "feature.node.kubernetes.io/cpu-model.vendor_id",
                                "operator": "In",
                                "values": ["NVIDIA"],
                            },
                            pool_expr,
                        ]
                    },
                    {
                        "matchExpressions": [
                            {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]},
                            pool_expr,
                        ]
                    },
                ]
            }
        }
    }
    nvdp_labels = {
        "app.kubernetes.io/instance": "nvdp",
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/name": "nvidia-device-plugin",
        "app.kubernetes.io/version": "0.18.0",
        "helm.sh/chart": "nvidia-device-plugin-0.18.0",
    }
    d.add(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta(
                "nvdp-nvidia-device-plugin-configs",
                "nvidia-device-plugin",
                created=ts(days=290),
                labels=nvdp_labels,
                annotations={
                    "meta.helm.sh/release-name": "nvdp",
                    "meta.helm.sh/release-namespace": "nvidia-device-plugin",
                },
                kind="ConfigMap",
            ),
            "data": {
                "default": "version: v1\nflags:\n  migStrategy: none\n",
                "l4-time-sliced-4": "version: v1\nflags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n"
                "    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n",
            },
        }
    )
    _daemonset(
        d,
        "nvdp-nvidia-device-plugin",
        "nvidia-device-plugin",
        created=ts(days=290),
        labels=nvdp_labels,
        annotations={"meta.helm.sh/release-name": "nvdp", "meta.helm.sh/release-namespace": "nvidia-device-plugin"},
        selector={"app.kubernetes.io/instance": "nvdp", "app.kubernetes.io/name": "nvidia-device-plugin"},
        pod_labels={"app.kubernetes.io/instance": "nvdp", "app.kubernetes.io/name": "nvidia-device-plugin"},
        containers=[
            container(
                "nvidia-device-plugin-ctr",
                DP_IMAGE,
                cpu="50m",
                memory="64Mi",
                command=["nvidia-device-plugin"],
                env=[
                    {"name": "MPS_ROOT", "value": "/run/nvidia/mps"},
                    {"name": "CONFIG_FILE", "value": "/config/config.yaml"},
                    {"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"},
                    {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                    {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"},
                ],
            )
        ],
        nodes=[s for s in N.values() if s.dp == "nvdp"],
        affinity=nvdp_aff,
        service_account="nvdp-nvidia-device-plugin-service-account",
    )


def _dra(f: Fleet) -> None:
    """The DRA driver, applied as plain manifests rendered from the 0.4.0 chart (its rules reach a device-plugin pool)."""
    d, w, N = f.d, f.w, f.by_name
    system = f.specs["system"]
    dra_pools = ["h100-dra", "a100-serve", "a100-mig", "l4-dev", "a100-lab"]
    dra_term_base = [
        [{"key": "feature.node.kubernetes.io/pci-10de.present", "operator": "In", "values": ["true"]}],
        [{"key": "feature.node.kubernetes.io/cpu-model.vendor_id", "operator": "In", "values": ["NVIDIA"]}],
        [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}],
    ]
    dra_aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": t + [{"key": POOL_LABEL, "operator": "In", "values": dra_pools}]}
                    for t in dra_term_base
                ]
            }
        }
    }
    dra_states = {s.name: s.dra_state for s in N.values() if s.dra}
    _daemonset(
        d,
        "dra-driver-nvidia-gpu-kubelet-plugin",
        "dra-driver-nvidia-gpu",
        created=ts(days=181),
        labels=DRA_LABELS,
        selector={
            "app.kubernetes.io/name": "dra-driver-nvidia-gpu",
            "dra-driver-nvidia-gpu-component": "kubelet-plugin",
        },
        pod_labels={
            "app.kubernetes.io/name": "dra-driver-nvidia-gpu",
            "dra-driver-nvidia-gpu-component": "kubelet-plugin",
            "nvidia-dra-driver-gpu-component": "kubelet-plugin",
        },
        containers=[
            container(
                "gpus",
                DRA_IMAGE,
                cpu="100m",
                memory="256Mi",
                command=["bash", "-c"],
                args=["exec gpu-kubelet-plugin"],
                env=[
                    {"name": "NVIDIA_DRIVER_ROOT", "value": "/home/kubernetes/bin/nvidia"},
                    {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"},
                    {"name": "CDI_ROOT", "value": "/var/run/cdi"},
                    {"name": "KUBELET_REGISTRAR_DIRECTORY_PATH", "value": "/var/lib/kubelet/plugins_registry"},
                ],
            )
        ],
        nodes=[s for s in N.values() if s.dra],
        affinity=dra_aff,
        states=dra_states,
        service_account="dra-driver-nvidia-gpu-service-account",
        finding="driver-targets-dp-pool",
    )
    w.deployment(
        "dra-driver-nvidia-gpu-controller",
        "dra-driver-nvidia-gpu",
        created=ts(days=181),
        replicas=1,
        containers=[
            container("compute-domain", DRA_IMAGE, cpu="50m", memory="128Mi", command=["compute-domain-controller"])
        ],
        placements=[system[1].name],
        labels={"dra-driver-nvidia-gpu-component": "controller"},
    )


def _slices(f: Fleet) -> None:
    """ResourceSlices published by the driver where its pod is ready (or was, before it stopped being ready)."""
    d, N = f.d, f.by_name
    for s in N.values():
        if s.dra and s.dra_state != "crashloop":
            node_obj = d.node_objs[s.name]
            slices = nv.resource_slices_for_node(
                s.name,
                s.hw,
                "v0.4.0",
                generation=1,
                node_uid=node_obj["metadata"]["uid"],
                creation_timestamp=max(ts(days=181), s.created),
            )
            d.slices[s.name] = slices
            for sl in slices:
                d.add(sl)


def _classes(f: Fleet) -> None:
    """DeviceClasses: the chart's, MIG's, an early too-broad one and one whose selector reads a retired attribute."""
    d = f.d
    # An early trial's class, older than the chart's: the chart's class wins nvidia.com/gpu (newest wins).
    _device_class(
        d,
        "nvidia-gpu",
        ['device.driver == "gpu.nvidia.com"'],
        created=ts(days=230),
        ern="nvidia.com/gpu",
        labels={"team": "ml-platform"},
        finding="class-too-broad,duplicate-mapping",
    )
    _device_class(
        d,
        "gpu.nvidia.com",
        ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"],
        created=ts(days=181),
        ern="nvidia.com/gpu",
        labels=DRA_LABELS,
        finding="duplicate-mapping",
    )
    _device_class(
        d,
        "mig.nvidia.com",
        ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"],
        created=ts(days=181),
        labels=DRA_LABELS,
    )
    _device_class(
        d,
        "mig-1g.10gb.nvidia.com",
        [
            "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && "
            "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
        ],
        created=ts(days=100),
        ern="nvidia.com/mig-1g.10gb",
        labels={"team": "ml-platform"},
    )
    _device_class(
        d,
        "h100-low-index",
        ['device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].index < 4'],
        created=ts(days=240),
        labels={"team": "research"},
        finding="stale-attribute,selector-runtime-error",
        annotations={"kubernetes.io/description": "First four GPUs of a node (NUMA 0) for latency-sensitive jobs"},
    )


def _ml_training(f: Fleet) -> None:
    """ml-training: the A100 pool on the device plugin, and a plain claim in a namespace with a GPU quota."""
    d, w, events = f.d, f.w, f.events
    a1, a2, a3 = f.names("a100-train")
    h1 = f.names("h100-dra")[0]
    _, _, bert = w.deployment(
        "bert-finetune",
        "ml-training",
        created=ts(days=12),
        replicas=2,
        containers=[container("trainer", f"{REG}/training/bert-finetune:2026.11.2", cpu="12", memory="96Gi", gpu=4)],
        placements=[a1, a2],
        node_selector={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"},
        labels={"team": "nlp"},
    )
    for p in bert:
        add_finding(p, "nodeselector-steering")
    w.statefulset(
        "llama-pretrain",
        "ml-training",
        created=ts(days=9),
        containers=[container("megatron", "nvcr.io/nvidia/nemo:25.09", cpu="24", memory="320Gi", gpu=4)],
        placements=[a1, a2, a3],
        node_selector=_sel("a100-train"),
    )
    w.job(
        "tokenize-shards",
        "ml-training",
        created=ts(hours=7),
        containers=[container("tokenize", f"{REG}/training/tokenizer:1.8.0", cpu="16", memory="64Gi", gpu=3)],
        node=a3,
        node_selector=_sel("a100-train"),
    )
    _, sweep8 = w.job(
        "eval-sweep-8gpu",
        "ml-training",
        created=ts(hours=2),
        containers=[container("eval", f"{REG}/training/eval-harness:0.9.4", cpu="32", memory="128Gi", gpu=8)],
        node=None,
        node_selector=_sel("a100-train"),
        pod_kwargs=dict(_pending(ts(hours=2)), finding="pending-insufficient"),
    )
    events.append((sweep8, "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=3), 31))

    # A plain claim of the class that serves nvidia.com/gpu, in a namespace with a quota on requests.nvidia.com/gpu.
    shared = d.add(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": meta(
                "shared-h100",
                "ml-training",
                created=ts(days=6),
                finding="quota-claims-now-count",
                finalizers=["resource.kubernetes.io/delete-protection"],
                kind="ResourceClaim",
            ),
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "allocationMode": "ExactCount",
                                "count": 1,
                                "selectors": [
                                    {
                                        "cel": {
                                            "expression": (
                                                "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 "
                                                "80GB HBM3'"
                                            )
                                        }
                                    }
                                ],
                            },
                        }
                    ]
                }
            },
            "status": {},
        }
    )
    nb = d.pod(
        "notebook-alice",
        "ml-training",
        created=ts(days=6),
        node=h1,
        containers=[
            container(
                "notebook",
                "quay.io/jupyter/pytorch-notebook:cuda12-2026-11-03",
                cpu="8",
                memory="64Gi",
                claims=[{"name": "gpu"}],
            )
        ],
        resource_claims=[{"name": "gpu", "resourceClaimName": "shared-h100"}],
        labels={"app.kubernetes.io/name": "notebook", "owner": "alice"},
    )
    shared["status"] = {
        "allocation": d.allocation(h1, "gpu", ["gpu-4"], ts(days=6)),
        "reservedFor": [{"resource": "pods", "name": "notebook-alice", "uid": nb["metadata"]["uid"]}],
    }


def _bridge(f: Fleet) -> None:
    """ml-inference on the H100s through the bridge: a stale claim, a template equal to limits, a double request, a
    failed prepare."""
    d, w, events = f.d, f.w, f.events
    h1, h2, h3, _h4 = f.names("h100-dra")
    _, _, llm = w.deployment(
        "llm-serving",
        "ml-inference",
        created=ts(days=20),
        replicas=5,
        containers=[
            container(
                "vllm",
                VLLM,
                cpu="16",
                memory="200Gi",
                gpu=2,
                args=["--model", "meta-llama/Llama-3.3-70B-Instruct", "--tensor-parallel-size", "2"],
            )
        ],
        placements=[h1, h1, h2, h2, None],
        node_selector=_sel("h100-dra"),
        labels={"tier": "online"},
        pod_kwargs=[{}, {}, {}, {}, dict(_pending(ts(minutes=2)), created=ts(minutes=4), finding="stale-bridge-claim")],
    )
    for p, node, devs in zip(
        llm, (h1, h1, h2, h2), (["gpu-0", "gpu-1"], ["gpu-2", "gpu-3"], ["gpu-0", "gpu-1"], ["gpu-2", "gpu-3"])
    ):
        d.bridge_claim(p, node, devs, created=p["metadata"]["creationTimestamp"])
    # Left from an earlier cycle whose binding failed: allocated, never reserved, the pod still Pending.
    d.bridge_claim(llm[4], h1, ["gpu-6", "gpu-7"], created=ts(minutes=3), reserved=False, finding="stale-bridge-claim")
    events.append((llm[4], "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=2), 2))

    one_gpu = d.add(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": meta(
                "one-gpu",
                "ml-inference",
                created=ts(days=30),
                finding="claim-equivalent-to-limits",
                kind="ResourceClaimTemplate",
            ),
            "spec": {
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
                }
            },
        }
    )
    _, _, emb = w.deployment(
        "embedder",
        "ml-inference",
        created=ts(days=14),
        replicas=2,
        containers=[
            container("embed", f"{REG}/inference/embedder:3.2.0", cpu="4", memory="32Gi", claims=[{"name": "gpu"}])
        ],
        placements=[h2, h2],
        node_selector=_sel("h100-dra"),
        resource_claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
    )
    for p, dev in zip(emb, ("gpu-4", "gpu-5")):
        d.template_claim(p, "gpu", one_gpu, h2, [dev], created=p["metadata"]["creationTimestamp"])
    _, _, rr = w.deployment(
        "reranker",
        "ml-inference",
        created=ts(days=5),
        replicas=1,
        containers=[
            container(
                "rerank", f"{REG}/inference/reranker:1.4.1", cpu="4", memory="32Gi", gpu=1, claims=[{"name": "gpu"}]
            )
        ],
        placements=[h2],
        node_selector=_sel("h100-dra"),
        resource_claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        pod_kwargs=[{"finding": "double-request"}],
    )
    d.bridge_claim(rr[0], h2, ["gpu-6"], created=rr[0]["metadata"]["creationTimestamp"])
    d.template_claim(rr[0], "gpu", one_gpu, h2, ["gpu-7"], created=rr[0]["metadata"]["creationTimestamp"])

    # h3 is full with pods prepared before its DRA plugin stopped being ready, so a retried pod cannot land there.
    _, _, summ = w.deployment(
        "summarizer",
        "ml-inference",
        created=ts(days=11),
        replicas=3,
        containers=[
            container(
                "vllm",
                VLLM,
                cpu="12",
                memory="160Gi",
                gpu=2,
                args=["--model", "mistralai/Mistral-Small-3.2-24B-Instruct-2506", "--tensor-parallel-size", "2"],
            )
        ],
        placements=[h3, h3, h3],
        node_selector=_sel("h100-dra"),
        labels={"tier": "batch"},
    )
    for p, devs in zip(summ, (["gpu-1", "gpu-2"], ["gpu-3", "gpu-4"], ["gpu-5", "gpu-6"])):
        d.bridge_claim(p, h3, devs, created=p["metadata"]["creationTimestamp"])
    _, _, ocr = w.deployment(
        "ocr-pipeline",
        "ml-inference",
        created=ts(days=10),
        replicas=1,
        containers=[container("ocr", f"{REG}/inference/ocr:5.0.1", cpu="4", memory="24Gi", gpu=1)],
        placements=[h3],
        node_selector=_sel("h100-dra"),
        labels={"tier": "batch"},
    )
    d.bridge_claim(ocr[0], h3, ["gpu-7"], created=ocr[0]["metadata"]["creationTimestamp"])
    prep_msg = (
        "Failed to prepare dynamic resources: NodePrepareResources failed for ResourceClaim {claim}: "
        "rpc error: code = Unavailable desc = error reading from server: EOF"
    )
    _, _, scorer = w.deployment(
        "batch-scorer",
        "ml-inference",
        created=ts(minutes=25),
        replicas=1,
        containers=[container("score", f"{REG}/inference/scorer:2.0.3", cpu="8", memory="48Gi", gpu=1)],
        placements=[h3],
        node_selector=_sel("h100-dra"),
        ready=0,
        pod_kwargs=[
            {
                "phase": "Pending",
                "container_state": {"waiting": {"reason": "ContainerCreating"}},
                "finding": "prepare-failed",
            }
        ],
    )
    sc = d.bridge_claim(scorer[0], h3, ["gpu-0"], created=ts(minutes=25))
    events.append(
        (
            scorer[0],
            "FailedPrepareDynamicResources",
            prep_msg.format(claim=sc["metadata"]["name"]),
            "kubelet",
            ts(minutes=1),
            14,
        )
    )


def _a100_serve(f: Fleet) -> None:
    """a100-serve, mid-migration: a pod running without its GPU, a pod rejected at admission."""
    d, w, events = f.d, f.w, f.events
    m1, m2, m3, m4, m5 = f.names("a100-serve")
    _, _, serve_pods = w.deployment(
        "llm-serving-a100",
        "ml-inference",
        created=ts(days=18),
        replicas=4,
        containers=[
            container(
                "vllm",
                VLLM,
                cpu="16",
                memory="160Gi",
                gpu=4,
                args=["--model", "Qwen/Qwen3-32B", "--tensor-parallel-size", "4"],
            )
        ],
        placements=[m1, m1, m2, m5],
        node_selector=_sel("a100-serve"),
        labels={"tier": "online"},
        pod_kwargs=[{}, {}, {"created": ts(days=3)}, {}],
    )
    for p, node, devs in (
        (serve_pods[0], m1, [f"gpu-{i}" for i in range(4)]),
        (serve_pods[1], m1, [f"gpu-{i}" for i in range(4, 8)]),
        (serve_pods[3], m5, [f"gpu-{i}" for i in range(4)]),
    ):
        d.bridge_claim(p, node, devs, created=p["metadata"]["creationTimestamp"])
    # Started on the device plugin before the pool moved; the v1.35 kubelet never saw the bridge.
    w.deployment(
        "ranker-legacy",
        "ml-inference",
        created=ts(days=40),
        replicas=1,
        containers=[container("ranker", f"{REG}/inference/ranker:0.7.9", cpu="4", memory="24Gi", gpu=1)],
        placements=[m3],
        node_selector=_sel("a100-serve"),
        pod_kwargs=[{"finding": "running-without-gpu"}],
    )
    adm_msg = (
        "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu, "
        "which is unexpected"
    )
    smoke = d.pod(
        "smoke-test-a100",
        "ml-inference",
        created=ts(minutes=40),
        node=m4,
        phase="Failed",
        restart_policy="Never",
        reason="UnexpectedAdmissionError",
        message=adm_msg,
        containers=[
            container("smoke", "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0", cpu="1", memory="1Gi", gpu=1)
        ],
        node_selector=_sel("a100-serve"),
        finding="failed-admission",
    )
    events.append((smoke, "UnexpectedAdmissionError", adm_msg, "kubelet", ts(minutes=40), 1))


def _mig(f: Fleet) -> None:
    """MIG through the bridge, and a MIG profile no class serves."""
    d, w, events = f.d, f.w, f.events
    mig1, mig2 = f.names("a100-mig")
    _, _, whisper = w.deployment(
        "whisper-mig",
        "ml-inference",
        created=ts(days=8),
        replicas=6,
        containers=[
            container(
                "whisper",
                f"{REG}/inference/whisper-large-v3:1.1.0",
                cpu="2",
                memory="12Gi",
                gpu=1,
                resource="nvidia.com/mig-1g.10gb",
            )
        ],
        placements=[mig1] * 4 + [mig2] * 2,
        node_selector=_sel("a100-mig"),
    )
    for i, p in enumerate(whisper):
        node = mig1 if i < 4 else mig2
        k = i if i < 4 else i - 4
        d.bridge_claim(
            p,
            node,
            [f"gpu-0-mig-19-{k}-1"],
            resource="nvidia.com/mig-1g.10gb",
            device_class="mig-1g.10gb.nvidia.com",
            created=p["metadata"]["creationTimestamp"],
        )
    _, asr = w.job(
        "asr-batch-large",
        "ml-inference",
        created=ts(hours=1),
        containers=[
            container(
                "asr",
                f"{REG}/inference/whisper-large-v3:1.1.0",
                cpu="4",
                memory="40Gi",
                gpu=1,
                resource="nvidia.com/mig-3g.40gb",
            )
        ],
        node=None,
        pod_kwargs=dict(_pending(ts(hours=1)), finding="pending-unmapped"),
    )
    events.append((asr, "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=5), 13))


def _dp_pools(f: Fleet) -> None:
    """Device-plugin pools: L4 (one node time-sliced), T4 (a pod pending behind a cordon), the L4 dev node and l4-serve."""
    w, events = f.w, f.events
    l41, l42, l43 = f.names("l4-inference")
    t41, _t42 = f.names("t4-batch")
    (l4d,) = f.names("l4-dev")
    ls1, ls2 = f.names("l4-serve")
    w.deployment(
        "sd-turbo",
        "ml-inference",
        created=ts(days=21),
        replicas=6,
        containers=[container("diffusion", f"{REG}/inference/sd-turbo:2.1", cpu="6", memory="24Gi", gpu=1)],
        placements=[l41, l41, l42, l42, l43, l43],
        node_selector=_sel("l4-inference"),
    )
    w.deployment(
        "embed-serve",
        "ml-inference",
        created=ts(days=30),
        replicas=4,
        containers=[container("embedder", f"{REG}/inference/text-embed:3.4", cpu="8", memory="32Gi", gpu=1)],
        placements=[ls1, ls1, ls2, ls2],
        node_selector=_sel("l4-serve"),
    )
    w.deployment(
        "dev-sandbox",
        "ml-inference",
        created=ts(days=4),
        replicas=1,
        containers=[container("sandbox", "nvcr.io/nvidia/pytorch:25.10-py3", cpu="4", memory="16Gi", gpu=1)],
        placements=[l4d],
        node_selector=_sel("l4-dev"),
    )
    w.job(
        "transcode-daily",
        "batch",
        created=ts(hours=3),
        containers=[container("ffmpeg", f"{REG}/media/ffmpeg-nvenc:7.1", cpu="4", memory="8Gi", gpu=1)],
        node=t41,
        node_selector=_sel("t4-batch"),
    )
    _, urgent = w.job(
        "transcode-urgent",
        "batch",
        created=ts(minutes=50),
        containers=[container("ffmpeg", f"{REG}/media/ffmpeg-nvenc:7.1", cpu="4", memory="8Gi", gpu=1)],
        node=None,
        node_selector=_sel("t4-batch"),
        pod_kwargs=dict(_pending(ts(minutes=50)), finding="pending-cordoned"),
    )
    events.append((urgent, "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=4), 11))


def _research(f: Fleet) -> None:
    """research: a claim count quota, a selector that matches no device, the bridge's claim rejected."""
    d, w, events = f.d, f.w, f.events
    m5 = f.names("a100-serve")[4]
    h100_80gi = d.add(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": meta(
                "h100-80gi", "research", created=ts(days=2), finding="selector-no-match", kind="ResourceClaimTemplate"
            ),
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {
                                    "deviceClassName": "gpu.nvidia.com",
                                    "allocationMode": "ExactCount",
                                    "count": 1,
                                    "selectors": [
                                        {
                                            "cel": {
                                                "expression": (
                                                    "device.attributes['gpu.nvidia.com'].architecture == 'Hopper' && "
                                                    "device.capacity['gpu.nvidia.com'].memory"
                                                    ".compareTo(quantity('80Gi')) >= 0"
                                                )
                                            }
                                        }
                                    ],
                                },
                            }
                        ]
                    }
                }
            },
        }
    )
    _, _, jup = w.deployment(
        "jupyter-gpu",
        "research",
        created=ts(days=3),
        replicas=1,
        containers=[
            container("notebook", "quay.io/jupyter/pytorch-notebook:cuda12-2026-11-03", cpu="4", memory="32Gi", gpu=1)
        ],
        placements=[m5],
    )
    d.bridge_claim(jup[0], m5, ["gpu-4"], created=jup[0]["metadata"]["creationTimestamp"])
    _, ev = w.job(
        "llm-eval",
        "research",
        created=ts(hours=5),
        containers=[
            container("eval", f"{REG}/research/lm-eval:0.4.9", cpu="8", memory="64Gi", claims=[{"name": "model"}])
        ],
        node=None,
        node_selector=_sel("h100-dra"),
        resource_claims=[{"name": "model", "resourceClaimTemplateName": "h100-80gi"}],
        pod_kwargs=dict(_pending(ts(hours=5)), finding="pending-selector"),
    )
    d.template_claim(ev, "model", h100_80gi, None, [], created=ts(hours=5))
    events.append((ev, "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=6), 42))
    _, sweep = w.job(
        "hparam-sweep-7",
        "research",
        created=ts(minutes=30),
        containers=[container("train", f"{REG}/research/sweeper:2.3.0", cpu="8", memory="48Gi", gpu=1)],
        node=None,
        node_selector=_sel("h100-dra"),
        pod_kwargs=dict(_pending(ts(minutes=29), "SchedulerError"), finding="quota-blocks-claim"),
    )
    events.append((sweep, "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=1), 17))


def _quotas(f: Fleet) -> None:
    """Quotas, with status.used as the quota controller computes it from the pods and claims so far."""
    d = f.d

    def gpu_requests(ns: str) -> int:
        total = 0
        for o in d.objects:
            if (
                o["kind"] == "Pod"
                and o["metadata"]["namespace"] == ns
                and o["status"]["phase"] in ("Pending", "Running")
            ):
                for c in o["spec"]["containers"]:
                    total += int(c["resources"].get("requests", {}).get("nvidia.com/gpu", 0))
            if (
                o["kind"] == "ResourceClaim"
                and o["metadata"].get("namespace") == ns
                and "resource.kubernetes.io/extended-resource-claim" not in o["metadata"].get("annotations", {})
            ):
                for r in o["spec"]["devices"]["requests"]:
                    if r["exactly"]["deviceClassName"] == "gpu.nvidia.com":
                        total += r["exactly"].get("count", 1)
        return total

    def count_claims(ns: str) -> int:
        return sum(1 for o in d.objects if o["kind"] == "ResourceClaim" and o["metadata"]["namespace"] == ns)

    d.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": meta(
                "gpu-quota", "ml-training", created=ts(days=200), finding="quota-claims-now-count", kind="ResourceQuota"
            ),
            "spec": {"hard": {"requests.nvidia.com/gpu": "40"}},
            "status": {
                "hard": {"requests.nvidia.com/gpu": "40"},
                "used": {"requests.nvidia.com/gpu": str(gpu_requests("ml-training"))},
            },
        }
    )
    d.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": meta(
                "research-quota", "research", created=ts(days=60), finding="quota-blocks-claim", kind="ResourceQuota"
            ),
            "spec": {"hard": {"count/resourceclaims.resource.k8s.io": "2"}},
            "status": {
                "hard": {"count/resourceclaims.resource.k8s.io": "2"},
                "used": {"count/resourceclaims.resource.k8s.io": str(count_claims("research"))},
            },
        }
    )


def _lab_claim(
    d: Demo,
    name: str,
    ns: str,
    requests: list[dict],
    *,
    created: str,
    results: list[dict] | None = None,
    node: str | None = None,
    reserved_for: dict | None = None,
    status_devices: list[dict] | None = None,
    finding: str | None = None,
) -> dict:
    """A user's ResourceClaim of the lab, allocated as v1.37 writes it when `results` are given."""
    claim: dict = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta(name, ns, created=created, finding=finding, kind="ResourceClaim"),
        "spec": {"devices": {"requests": requests}},
    }
    if results is not None:
        claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        alloc: dict = {"devices": {"results": results}, "allocationTimestamp": created}
        if node:
            alloc["nodeSelector"] = {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
            }
        claim["status"] = {"allocation": alloc}
        if reserved_for is not None:
            claim["status"]["reservedFor"] = [
                {"resource": "pods", "name": reserved_for["metadata"]["name"], "uid": reserved_for["metadata"]["uid"]}
            ]
        if status_devices is not None:
            claim["status"]["devices"] = status_devices
    return d.add(claim)


def _exactly(cls: str, *selectors: str, **extra) -> dict:
    body: dict = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": 1, **extra}
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return body


FABRIC_DRIVER = "pcie-fabric.example.com"  # a composable PCIe fabric: its GPUs attach to a node on demand
FABRIC_CLASS = "fabric-gpu.example.com"
FABRIC_ATTACHED = "pcie-fabric.example.com/attached"
FABRIC_FAILED = "pcie-fabric.example.com/attach-failed"
A100_80 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"'
H100 = 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")'


def _v137(f: Fleet) -> None:
    """a100-lab and dra-lab: what v1.37's on-by-default DRA features do to pods. A DynamicMIG GPU whose partition is
    held (its whole GPU blocked by counters), a maintenance DeviceTaintRule (a bridged pod cannot use the GPU), a NoExecute
    rule evicting a notebook, a GPU shared by capacity (too little left for a third share, one share's device
    unhealthy), fabric-attached devices waiting for (or failing) their binding conditions, an admin-access monitoring
    probe (it holds nothing) and one refused, a firstAvailable H100-or-A100 request, a missing claim and class, and
    the scheduler's DRA filter timing out."""
    d, events = f.d, f.events
    lab0, lab1, lab2 = f.names("a100-lab")
    ns = "dra-lab"
    at = ts(hours=3)
    img = f"{REG}/lab/bench:0.3.1"

    def lab_pod(name, *, node=None, claims=(), finding=None, selector=None, gpu=None, status=None, namespace=ns):
        rc = [{"name": c, "resourceClaimName": n} for c, n in claims]
        c = container("main", img, cpu="500m", memory="2Gi", gpu=gpu, claims=[{"name": c} for c, _ in claims] or None)
        kw: dict = dict(_pending(at), finding=finding) if node is None and status is None else {"finding": finding}
        if status is not None:
            kw.update(phase="Pending", conditions=status)
        return d.pod(
            name,
            namespace,
            created=at,
            containers=[c],
            node=node,
            node_selector=selector,
            resource_claims=rc or None,
            **kw,
        )

    def verdict(p):
        events.append((p, "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=4), 9))

    _device_class(d, FABRIC_CLASS, [f'device.driver == "{FABRIC_DRIVER}"'], created=ts(days=20))

    # DynamicMIG on lab0: a notebook holds a 1g.10gb placement, so the whole GPU's memory slices are not all left.
    nb = lab_pod("notebook-mig", node=lab0, claims=[("mig", "notebook-mig")])
    _lab_claim(
        d,
        "notebook-mig",
        ns,
        [
            {
                "name": "mig",
                "exactly": _exactly("mig.nvidia.com", 'device.attributes["gpu.nvidia.com"].profile == "1g.10gb"'),
            }
        ],
        created=at,
        results=[{"request": "mig", "driver": nv.DRIVER, "pool": lab0, "device": "gpu-0-mig-19-0-1"}],
        node=lab0,
        reserved_for=nb,
    )
    nb["status"]["resourceClaimStatuses"] = []
    ft = lab_pod(
        "finetune-a100",
        claims=[("gpu", "finetune-a100")],
        finding="pending-counters",
        selector={"kubernetes.io/hostname": lab0},
    )
    _lab_claim(d, "finetune-a100", ns, [{"name": "gpu", "exactly": _exactly("gpu.nvidia.com", A100_80)}], created=at)
    verdict(ft)
    # An Xid on that placement: a NoExecute rule the eviction controller is acting on (the notebook is to go).
    d.add(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceTaintRule",
            "metadata": meta(
                "a100-lab-xid-79", created=ts(minutes=30), finding="device-taint-eviction", kind="DeviceTaintRule"
            ),
            "spec": {
                "deviceSelector": {"driver": nv.DRIVER, "pool": lab0, "device": "gpu-0-mig-19-0-1"},
                "taint": {
                    "key": "gpu.nvidia.com/xid",
                    "value": "79",
                    "effect": "NoExecute",
                    "timeAdded": ts(minutes=30),
                },
            },
            "status": {
                "conditions": [
                    {
                        "type": "EvictionInProgress",
                        "status": "True",
                        "reason": "PodsPendingEviction",
                        "message": "1 pod needs to be evicted in 1 namespace",
                        "lastTransitionTime": ts(minutes=29),
                        "observedGeneration": 1,
                    }
                ]
            },
        }
    )["metadata"]["generation"] = 1

    # A shared GPU on lab1: two embedding servers hold 30Gi each of its 80Gi; a third asks 30Gi.
    for i, name in enumerate(("embed-a", "embed-b")):
        p = lab_pod(name, node=lab1, claims=[("gpu", name)], finding="device-unhealthy" if i == 1 else None)
        _lab_claim(
            d,
            name,
            ns,
            [
                {
                    "name": "gpu",
                    "exactly": _exactly(
                        "gpu.nvidia.com", "device.allowMultipleAllocations", capacity={"requests": {"memory": "30Gi"}}
                    ),
                }
            ],
            created=at,
            results=[
                {
                    "request": "gpu",
                    "driver": nv.DRIVER,
                    "pool": lab1,
                    "device": "gpu-0",
                    "shareID": nv.uid_for("share", name),
                    "consumedCapacity": {"memory": "30Gi"},
                }
            ],
            node=lab1,
            reserved_for=p,
        )
        health = "Unhealthy" if i == 1 else "Healthy"
        rid = {"resourceID": f"{nv.DRIVER}/{lab1}/gpu-0", "health": health}
        if i == 1:
            rid["message"] = "XID 48: double bit ECC error"
        for cs in p["status"].get("containerStatuses") or ():
            cs["allocatedResourcesStatus"] = [{"name": f"claim:{name}/gpu", "resources": [rid]}]
    ec = lab_pod(
        "embed-c", claims=[("gpu", "embed-c")], finding="pending-capacity", selector={"kubernetes.io/hostname": lab1}
    )
    _lab_claim(
        d,
        "embed-c",
        ns,
        [
            {
                "name": "gpu",
                "exactly": _exactly(
                    "gpu.nvidia.com", "device.allowMultipleAllocations", capacity={"requests": {"memory": "30Gi"}}
                ),
            }
        ],
        created=at,
    )
    verdict(ec)

    # Maintenance on lab2: a NoSchedule rule over its pool. A bridged nvidia.com/gpu pod carries no toleration.
    d.add(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceTaintRule",
            "metadata": meta("a100-lab-firmware", created=ts(hours=5), kind="DeviceTaintRule"),
            "spec": {
                "deviceSelector": {"driver": nv.DRIVER, "pool": lab2},
                "taint": {
                    "key": "example.com/firmware-upgrade",
                    "value": "96.00.89",
                    "effect": "NoSchedule",
                    "timeAdded": ts(hours=5),
                },
            },
        }
    )["metadata"]["generation"] = 1
    bench = lab_pod("bench-a100", gpu=1, finding="pending-device-taint", selector={"kubernetes.io/hostname": lab2})
    verdict(bench)
    # The monitoring probe sees that GPU with admin access: it holds nothing, so the node does not look full.
    probe = lab_pod("dcgm-probe", node=lab2, claims=[("gpu", "dcgm-probe")], namespace="gpu-monitoring")
    _lab_claim(
        d,
        "dcgm-probe",
        "gpu-monitoring",
        [
            {
                "name": "gpu",
                "exactly": _exactly(
                    "gpu.nvidia.com",
                    adminAccess=True,
                    tolerations=[{"key": "example.com/firmware-upgrade", "operator": "Exists"}],
                ),
            }
        ],
        created=at,
        results=[{"request": "gpu", "driver": nv.DRIVER, "pool": lab2, "device": "gpu-0", "adminAccess": True}],
        node=lab2,
        reserved_for=probe,
    )
    # The same probe from dra-lab, whose admin-access label was taken off after the template was made: the API
    # server refuses the claim the template would give the pod.
    d.add(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": meta("dcgm-admin", ns, created=at, kind="ResourceClaimTemplate"),
            "spec": {
                "spec": {
                    "devices": {"requests": [{"name": "gpu", "exactly": _exactly("gpu.nvidia.com", adminAccess=True)}]}
                }
            },
        }
    )
    c = container("main", img, cpu="1", memory="1Gi", claims=[{"name": "gpu"}])
    d.pod(
        "dcgm-lab",
        ns,
        created=at,
        containers=[c],
        node=None,
        resource_claims=[{"name": "gpu", "resourceClaimTemplateName": "dcgm-admin"}],
        phase="Pending",
        finding="admin-access-forbidden",
    )

    # Fabric-attached GPUs (a network pool of the a100-lab nodes): the fabric manager must attach one before the pod
    # binds. One attach is under way, one failed.
    d.add(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": meta("a100-lab-fabric-" + sfx("fabric"), created=ts(days=20), kind="ResourceSlice"),
            "spec": {
                "driver": FABRIC_DRIVER,
                "pool": {"name": "a100-lab-fabric", "generation": 1, "resourceSliceCount": 1},
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": ["a100-lab"]}]}
                    ]
                },
                "devices": [
                    {
                        "name": f"fgpu-{i}",
                        "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA H100 80GB HBM3"}},
                        "capacity": {"memory": {"value": "80Gi"}},
                        "bindsToNode": True,
                        "bindingConditions": [FABRIC_ATTACHED],
                        "bindingFailureConditions": [FABRIC_FAILED],
                    }
                    for i in range(2)
                ],
            },
        }
    )
    for i, (name, fid, cond) in enumerate(
        (("allreduce", "binding-pending", None), ("allgather", "binding-failed", "link training failed on port 3"))
    ):
        p = lab_pod(name, claims=[("fabric", name)], finding=fid, status=[])
        p["status"]["nominatedNodeName"] = lab1
        conds = [
            {
                "type": FABRIC_ATTACHED,
                "status": "False",
                "reason": "Attaching",
                "message": "attaching to " + lab1,
                "lastTransitionTime": ts(minutes=6),
            }
        ]
        if cond:
            conds = [
                {
                    "type": FABRIC_FAILED,
                    "status": "True",
                    "reason": "AttachFailed",
                    "message": cond,
                    "lastTransitionTime": ts(minutes=6),
                }
            ]
        _lab_claim(
            d,
            name,
            ns,
            [{"name": "fabric", "exactly": _exactly(FABRIC_CLASS)}],
            created=at,
            results=[
                {
                    "request": "fabric",
                    "driver": FABRIC_DRIVER,
                    "pool": "a100-lab-fabric",
                    "device": f"fgpu-{i}",
                    "bindingConditions": [FABRIC_ATTACHED],
                    "bindingFailureConditions": [FABRIC_FAILED],
                }
            ],
            node=lab1,
            reserved_for=p,
            status_devices=[
                {"driver": FABRIC_DRIVER, "pool": "a100-lab-fabric", "device": f"fgpu-{i}", "conditions": conds}
            ],
            finding=fid,  # the finding names the claim too; a live scheduler rewrites it (LIVE_CHURN_FINDINGS)
        )

    # Two H100s, else two A100s, in the lab: each node has one GPU, so neither alternative fits.
    tr = lab_pod(
        "train-any", claims=[("gpus", "train-any")], finding="pending-first-available", selector=_sel("a100-lab")
    )
    _lab_claim(
        d,
        "train-any",
        ns,
        [
            {
                "name": "gpus",
                "firstAvailable": [
                    {"name": "h100", **_exactly("gpu.nvidia.com", H100, count=2)},
                    {"name": "a100", **_exactly("gpu.nvidia.com", A100_80, count=2)},
                ],
            }
        ],
        created=at,
    )
    verdict(tr)
    # A claim deleted under its pod, and a claim of a class nobody installed.
    # kube-scheduler's PreEnqueue keeps a pod whose claim is missing out of its queue: no condition, no event.
    lab_pod("eval-orphan", claims=[("gpu", "eval-shared-gpu")], finding="claim-missing", status=[])
    verdict(lab_pod("tpu-probe", claims=[("tpu", "tpu-probe")], finding="class-missing"))
    _lab_claim(d, "tpu-probe", ns, [{"name": "tpu", "exactly": _exactly("tpu.example.com")}], created=at)
    # Two A100s on one PCIe root, from a pool whose GPUs each have their own: the counts say it fits, the search for a
    # pair found none before the scheduler's DRA filter gave up (its timeout).
    lab_pod(
        "sweep-pcie",
        claims=[("gpus", "sweep-pcie")],
        finding="filter-timeout",
        status=unschedulable_condition(
            "0/27 nodes are available: 4 timed out trying to allocate devices, 23 node(s) didn't match Pod's node "
            "affinity/selector. preemption: 0/27 nodes are available: 27 Preemption is not helpful for scheduling.",
            ts(minutes=2),
        ),
        selector=_sel("a100-serve"),
    )
    sweep = _lab_claim(
        d, "sweep-pcie", ns, [{"name": "gpus", "exactly": _exactly("gpu.nvidia.com", A100_80, count=2)}], created=at
    )
    sweep["spec"]["devices"]["constraints"] = [
        {"requests": ["gpus"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}
    ]


def _dashboard(f: Fleet) -> None:
    """The GPU dashboard's rules (kube-prometheus): they sum node allocatable nvidia.com/gpu, which DRA pools report
    as 0."""
    d = f.d
    # as 0
    d.add(
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusRule",
            "metadata": meta(
                "gpu-capacity",
                "monitoring",
                created=ts(days=300),
                kind="PrometheusRule",
                labels={"release": "kube-prometheus-stack", "app.kubernetes.io/part-of": "kube-prometheus"},
            ),
            "spec": {
                "groups": [
                    {
                        "name": "gpu-capacity.rules",
                        "rules": [
                            {
                                "record": "cluster:nvidia_gpu_allocatable:sum",
                                "expr": 'sum(kube_node_status_allocatable{resource="nvidia_com_gpu"})',
                            },
                            {
                                "record": "nodepool:nvidia_gpu_allocatable:sum",
                                "expr": "sum by (label_cloud_google_com_gke_nodepool) "
                                '(kube_node_status_allocatable{resource="nvidia_com_gpu"} '
                                "* on (node) group_left(label_cloud_google_com_gke_nodepool) kube_node_labels)",
                            },
                            {
                                "alert": "GPUCapacityDropped",
                                "expr": (
                                    "cluster:nvidia_gpu_allocatable:sum < 0.8 * "
                                    "max_over_time(cluster:nvidia_gpu_allocatable:sum[1d])"
                                ),
                                "for": "15m",
                                "labels": {"severity": "warning"},
                                "annotations": {"summary": "Allocatable GPUs dropped by more than 20% in a day"},
                            },
                        ],
                    }
                ]
            },
        }
    )


def _pdbs(f: Fleet) -> None:
    """PodDisruptionBudgets on the serving and training workloads."""
    d = f.d
    _pdb(
        d,
        "llm-serving",
        "ml-inference",
        "llm-serving",
        created=ts(days=20),
        min_available=3,
        expected=5,
        healthy=4,
        desired=3,
    )
    _pdb(
        d,
        "llm-serving-a100",
        "ml-inference",
        "llm-serving-a100",
        created=ts(days=18),
        min_available="50%",
        expected=4,
        healthy=4,
        desired=2,
    )
    _pdb(
        d,
        "llama-pretrain",
        "ml-training",
        "llama-pretrain",
        created=ts(days=9),
        max_unavailable=0,
        expected=3,
        healthy=3,
        desired=3,
    )


def _scheduler_words(f: Fleet) -> None:
    """What the scheduler says about each pod it cannot place, worded by the simulated scheduler itself."""
    d, events = f.d, f.events
    verdicts = _verdicts(d.objects)
    for pod, _reason, message, *_ in events:
        if message == VERDICT and pod["metadata"]["uid"] not in verdicts:
            raise AssertionError(f"demo: no scheduler verdict for pod {pod['metadata']['name']}")
    events[:] = [
        (p, r, verdicts[p["metadata"]["uid"]]["message"] if m == VERDICT else m, *rest) for p, r, m, *rest in events
    ]


def _events(f: Fleet) -> None:
    """The Warning events: the stories' own, and BackOff for every crash-looping plugin."""
    d, events = f.d, f.events
    for o in d.objects:
        if o["kind"] == "Pod" and any(
            "waiting" in cs["state"] and cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
            for cs in o["status"].get("containerStatuses", [])
        ):
            c = o["spec"]["containers"][0]["name"]
            events.append(
                (
                    o,
                    "BackOff",
                    f"Back-off restarting failed container {c} in pod "
                    f"{o['metadata']['name']}_{o['metadata']['namespace']}({o['metadata']['uid']})",
                    "kubelet",
                    ts(minutes=2),
                    96,
                )
            )
    for pod, reason, message, component, at, count in events:
        pm = pod["metadata"]
        first = ts(hours=1) if at > ts(hours=1) else at
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": meta(
                f"{pm['name']}.{nv._hex('event', pm['name'], reason)[:16]}",
                pm["namespace"],
                created=first,
                kind="Event",
            ),
            "involvedObject": {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pm["name"],
                "namespace": pm["namespace"],
                "uid": pm["uid"],
            },
            "reason": reason,
            "message": message,
            "type": "Warning",
        }
        if component == "default-scheduler":
            # kube-scheduler writes through events.k8s.io/v1 (client-go tools/events): no source, count or
            # first/last timestamps; its repeats are a series.
            event.update(
                source={},
                firstTimestamp=None,
                lastTimestamp=None,
                eventTime=first.replace("Z", ".000000Z"),
                action="Scheduling",
                reportingComponent=component,
                reportingInstance=f"{component}-{CONTROL_PLANE_HOST}",
            )
            if count > 1:
                event["series"] = {"count": count, "lastObservedTime": at.replace("Z", ".000000Z")}
        else:
            # The core recorder (tools/record) of the kubelet and kube-controller-manager.
            source = {"component": component}
            if component == "kubelet":
                source["host"] = pod["spec"]["nodeName"]
            event.update(
                source=source,
                count=count,
                firstTimestamp=first,
                lastTimestamp=at,
                reportingComponent=component,
                reportingInstance=source.get("host", ""),
            )
        d.add(event)


def _rbac(f: Fleet) -> None:
    """RBAC for the simulator's users (the users themselves are in the SimulatorConfig document: USERS)."""
    d = f.d
    core = [
        "nodes",
        "nodes/status",
        "pods",
        "pods/status",
        "pods/log",
        "namespaces",
        "events",
        "configmaps",
        "resourcequotas",
        "services",
        "endpoints",
        "serviceaccounts",
        "persistentvolumeclaims",
        "secrets",
    ]
    for name, rules in (
        ("dragoman-demo-view", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]),
        (
            "dragoman-demo-no-evict",
            [
                {"apiGroups": [""], "resources": core, "verbs": ["*"]},
                {
                    "apiGroups": [
                        "apps",
                        "batch",
                        "policy",
                        "resource.k8s.io",
                        "coordination.k8s.io",
                        "events.k8s.io",
                        "rbac.authorization.k8s.io",
                        "nvidia.com",
                    ],
                    "resources": ["*"],
                    "verbs": ["*"],
                },
            ],
        ),
    ):
        d.add(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": meta(
                    name,
                    created=created_at(322),
                    labels={"app.kubernetes.io/part-of": "dragoman-sim"},
                    kind="ClusterRole",
                ),
                "rules": rules,
            }
        )
    for name, role, user in (
        ("dragoman-demo-viewer", "dragoman-demo-view", "viewer"),
        ("dragoman-demo-no-evict", "dragoman-demo-no-evict", "no-evict"),
    ):
        d.add(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": meta(
                    name,
                    created=created_at(322),
                    labels={"app.kubernetes.io/part-of": "dragoman-sim"},
                    kind="ClusterRoleBinding",
                ),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
            }
        )


# The demo, story by story, in the order its objects are written (the order is part of demo.yaml).
STORIES: tuple[Story, ...] = (
    Story("namespaces", (), _namespaces),
    Story(
        "nodes",
        (
            "allocatable-readers",
            "both-stacks",
            "kubelet-skew",
            "kubelet-too-old",
            "migration-optional",
            "no-slices",
            "plugin-flapping",
            "sharing-capacity-change",
        ),
        _nodes,
    ),
    Story("gpu-operator", ("dp-targets-dra-pool",), _gpu_operator),
    Story("nvdp", (), _nvdp),
    Story("dra", ("driver-targets-dp-pool",), _dra),
    Story("slices", (), _slices),
    Story("classes", ("class-too-broad", "duplicate-mapping", "selector-runtime-error", "stale-attribute"), _classes),
    Story("ml-training", ("nodeselector-steering", "pending-insufficient", "quota-claims-now-count"), _ml_training),
    Story("bridge", ("claim-equivalent-to-limits", "double-request", "prepare-failed", "stale-bridge-claim"), _bridge),
    Story("a100-serve", ("failed-admission", "running-without-gpu"), _a100_serve),
    Story("mig", ("pending-unmapped",), _mig),
    Story("dp-pools", ("pending-cordoned",), _dp_pools),
    Story("research", ("pending-selector", "quota-blocks-claim", "selector-no-match"), _research),
    Story("quotas", ("quota-blocks-claim", "quota-claims-now-count"), _quotas),
    Story(
        "v1.37",
        (
            "pending-counters",
            "device-taint-eviction",
            "device-unhealthy",
            "pending-capacity",
            "pending-device-taint",
            "admin-access-forbidden",
            "binding-pending",
            "binding-failed",
            "pending-first-available",
            "claim-missing",
            "class-missing",
            "filter-timeout",
        ),
        _v137,
    ),
    Story("dashboard", (), _dashboard),
    Story("pdbs", (), _pdbs),
    Story("verdicts", (), _scheduler_words),
    Story("events", (), _events),
    Story("rbac", (), _rbac),
)


def build() -> list[dict]:
    """Every story in turn: the demo's objects."""
    f = Fleet()
    for story in STORIES:
        story.build(f)
    return f.d.objects


# The simulator's users, written as the SimulatorConfig document that heads demo.yaml (sim/scenario.py reads it).
# No tokens: the simulator makes them per run and only the kubeconfig it writes carries them (issue 19).
USERS = [
    {"name": "admin", "groups": ["system:masters"]},
    {"name": "viewer", "groups": ["dragoman:viewers"]},
    {"name": "no-evict", "groups": ["dragoman:operators"]},
]


def simulator_config() -> dict:
    return {"apiVersion": "sim.dragoman.io/v1", "kind": "SimulatorConfig", "users": [dict(u) for u in USERS]}


def created_at(days: float) -> str:
    return ts(days=days)


def write(path: pathlib.Path | None = None) -> pathlib.Path:
    path = path or pathlib.Path(__file__).with_name("demo.yaml")
    docs = build()
    header = (
        "# The dragoman demo fleet, generated by sim/scenarios/demo_build.py — edit that file, then run\n"
        "# python -m dragoman.sim.scenarios.demo_build\n"
    )
    lst = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": docs}
    path.write_text(
        header
        + yaml.safe_dump(simulator_config(), sort_keys=False, width=120)
        + "---\n"
        + yaml.safe_dump(lst, sort_keys=False, width=120, allow_unicode=True)
    )
    return path


if __name__ == "__main__":
    print(write())
