"""The demo's a100-lab pool: one story for each of v1.37's on-by-default DRA features (counters, device taints,
consumable capacity, binding conditions, admin access, prioritized lists, fabric-attached devices)."""

from __future__ import annotations

import json

from dragoman.fleet import nvidia_schema as nv
from dragoman.sim.controllers.base import BINDING_OUTCOMES, unhealthy_devices
from dragoman.sim.scenarios.demofleet.fleet import REG, Fleet, Story, make_device_class, pending_status, pool_selector
from dragoman.sim.scenarios.demofleet.objects import POOL_LABEL, Demo, meta, sfx, ts
from dragoman.sim.scenarios.demofleet.verdicts import VERDICT, unschedulable_condition
from dragoman.sim.scenarios.demofleet.workloads import container


def _lab_claim(
    d: Demo,
    name: str,
    ns: str,
    requests: list[dict],
    *,
    created: str,
    allocated: str | None = None,
    results: list[dict] | None = None,
    node: str | None = None,
    reserved_for: dict | None = None,
    status_devices: list[dict] | None = None,
    finding: str | None = None,
) -> dict:
    """A user's ResourceClaim of the lab, allocated as v1.37 writes it when `results` are given (at `allocated`, else
    when it was created)."""
    claim: dict = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta(name, ns, created=created, finding=finding, kind="ResourceClaim"),
        "spec": {"devices": {"requests": requests}},
    }
    if results is not None:
        claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        alloc: dict = {"devices": {"results": results}, "allocationTimestamp": allocated or created}
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


# How long the lab's notebook tolerates an Xid on its device (the NoExecute rule a100-lab-xid-79), counted from the
# rule's timeAdded: longer than the demo has been running since, so the eviction is pending, not done.
XID_TOLERATION = {"key": "gpu.nvidia.com/xid", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 7200}
FABRIC_DRIVER = "pcie-fabric.example.com"  # a composable PCIe fabric: its GPUs attach to a node on demand
FABRIC_CLASS = "fabric-gpu.example.com"
FABRIC_ATTACHED = "pcie-fabric.example.com/attached"
FABRIC_FAILED = "pcie-fabric.example.com/attach-failed"
FABRIC_FAILURE = "link training failed on port 3"
FABRIC_ANSWERS = {
    "fgpu-1": {
        "delaySeconds": 3,
        "conditions": [{"type": FABRIC_FAILED, "status": "True", "reason": "AttachFailed", "message": FABRIC_FAILURE}],
    }
}
A100_80 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"'
H100 = 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")'


def _v137(f: Fleet) -> None:
    """a100-lab and dra-lab: what v1.37's on-by-default DRA features do to pods. A DynamicMIG GPU whose partition is
    held (its whole GPU blocked by counters), a maintenance DeviceTaintRule (a bridged pod cannot use the GPU), a
    NoExecute rule evicting a notebook, a GPU shared by capacity (too little left for a third share, one share's device
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
        kw: dict = (
            dict(pending_status(at), finding=finding) if node is None and status is None else {"finding": finding}
        )
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

    make_device_class(d, FABRIC_CLASS, [f'device.driver == "{FABRIC_DRIVER}"'], created=ts(days=20))

    # DynamicMIG on lab0: a notebook holds a 1g.10gb placement, so the whole GPU's memory slices are not all left.
    # It tolerates an Xid NoExecute taint for two hours (time to checkpoint), so an eviction waits instead of coming
    # at once: the scheduler copies the toleration into the allocation, which the eviction controller reads.
    nb = lab_pod("notebook-mig", node=lab0, claims=[("mig", "notebook-mig")])
    _lab_claim(
        d,
        "notebook-mig",
        ns,
        [
            {
                "name": "mig",
                "exactly": _exactly(
                    "mig.nvidia.com",
                    'device.attributes["gpu.nvidia.com"].profile == "1g.10gb"',
                    tolerations=[dict(XID_TOLERATION)],
                ),
            }
        ],
        created=at,
        results=[
            {
                "request": "mig",
                "driver": nv.DRIVER,
                "pool": lab0,
                "device": "gpu-0-mig-19-0-1",
                "tolerations": [dict(XID_TOLERATION)],
            }
        ],
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
    # An Xid on that placement: a NoExecute rule the eviction controller is acting on (the notebook is to go when its
    # toleration runs out; its condition as kube-controller-manager v1.37.2 writes it).
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
                        "message": "1 pod needs to be evicted in 1 namespace.",
                        "lastTransitionTime": ts(minutes=29),
                        "observedGeneration": 1,
                    }
                ]
            },
        }
    )["metadata"]["generation"] = 1

    # A shared GPU on lab1: two embedding servers hold 30Gi each of its 80Gi; a third asks 30Gi. Its health checks
    # found a double-bit ECC error (its node's DEVICE_HEALTH annotation, infra.py): the kubelet reports it Unhealthy
    # to both servers (the node agents, and a real kubelet from dragoman-dra-plugin's health stream).
    ecc = unhealthy_devices(f.d.node_objs[lab1])["gpu-0"]
    for name in ("embed-a", "embed-b"):
        p = lab_pod(name, node=lab1, claims=[("gpu", name)], finding="device-unhealthy")
        claim = _lab_claim(
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
        # Named by the CDI device the driver (v0.4.0) prepared for the claim: k8s.gpu.nvidia.com/claim=<uid>-gpu-0.
        rid = {
            "resourceID": nv.cdi_device_ids("v0.4.0", claim["metadata"]["uid"], "gpu-0")[0],
            "health": "Unhealthy",
            "message": ecc,
        }
        for cs in p["status"].get("containerStatuses") or ():
            # The kubelet names it after the container's claim entry (the pod's claim "gpu", no request): claim:gpu.
            cs["allocatedResourcesStatus"] = [{"name": "claim:gpu", "resources": [rid]}]
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
            # As kube-controller-manager's device taint eviction controller writes it for a rule that evicts nothing.
            "status": {
                "conditions": [
                    {
                        "type": "EvictionInProgress",
                        "status": "False",
                        "reason": "OtherEffect",
                        "message": "Eviction only happens for the NoExecute effect.",
                        "lastTransitionTime": ts(hours=5),
                        "observedGeneration": 1,
                    }
                ]
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
            # The fabric's manager (sim/controllers/fabric.py, with the node agents on either control plane) fails
            # every attach of fgpu-1; fgpu-0's stays under way.
            "metadata": meta(
                "a100-lab-fabric-" + sfx("fabric"),
                created=ts(days=20),
                kind="ResourceSlice",
                annotations={BINDING_OUTCOMES: json.dumps(FABRIC_ANSWERS, sort_keys=True)},
            ),
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
        (("allreduce", "binding-pending", None), ("allgather", "binding-failed", FABRIC_FAILURE))
    ):
        failed = []
        if cond:
            # The attach failed before on this device: PreBind's error (SchedulerError, a FailedScheduling Event),
            # the claim deallocated by the next attempt and the same device allocated again. A live scheduler
            # deallocates it once more and tries again; the Events stay, and with them the story.
            failed = unschedulable_condition(
                f'running PreBind plugin "DynamicResources": device binding failed: claim={name}, '
                f'reason=AttachFailed, message="{cond}"',
                ts(minutes=8),
                reason="SchedulerError",
            )
        p = lab_pod(name, claims=[("fabric", name)], finding=fid, status=failed)
        p["status"]["nominatedNodeName"] = lab1
        if failed:
            events.append((p, "FailedScheduling", failed[0]["message"], "default-scheduler", ts(minutes=8), 2))
        conds = [
            {
                "type": FABRIC_ATTACHED,
                "status": "False",
                "reason": "Attaching",
                "message": "attaching to " + lab1,
                "lastTransitionTime": ts(minutes=1),
            }
        ]
        if cond:
            conds = [
                {
                    "type": FABRIC_FAILED,
                    "status": "True",
                    "reason": "AttachFailed",
                    "message": cond,
                    "lastTransitionTime": ts(minutes=1),
                }
            ]
        _lab_claim(
            d,
            name,
            ns,
            [{"name": "fabric", "exactly": _exactly(FABRIC_CLASS)}],
            created=at,
            # Allocated two minutes before the snapshot: the scheduler's binding timeout (10 minutes from the
            # allocation) comes eight minutes into a live demo, which shows the attach waiting, as check does.
            allocated=ts(minutes=2),
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
        "train-any",
        claims=[("gpus", "train-any")],
        finding="pending-first-available",
        selector=pool_selector("a100-lab"),
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
    # Two A100s on one PCIe root, from a pool whose GPUs each have their own: the counts say it fits, the allocator's
    # search finds no pair (the scheduler only says "cannot allocate all claims").
    verdict(
        lab_pod(
            "sweep-pcie",
            claims=[("gpus", "sweep-pcie")],
            finding="pending-constraint",
            selector=pool_selector("a100-serve"),
        )
    )
    sweep = _lab_claim(
        d, "sweep-pcie", ns, [{"name": "gpus", "exactly": _exactly("gpu.nvidia.com", A100_80, count=2)}], created=at
    )
    sweep["spec"]["devices"]["constraints"] = [
        {"requests": ["gpus"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}
    ]
    # The scheduler's DRA filter giving up (its 10 s timeout) on a wider search of the same kind: pinned as the
    # scheduler writes it (what it said wins over dragoman's reading of the constraint). v1.37.2's Filter answers a
    # timeout with an Error status, which ends the attempt (reason SchedulerError, retried with backoff), not a node
    # count: the message names the node whose search ran out of time. A live scheduler's next search may end in
    # time (its own verdict then replaces the condition); the FailedScheduling Events stay, and with them the story.
    timed_out = unschedulable_condition(
        f'running "DynamicResources" filter plugin: node {f.names("a100-serve")[0]}: timed out trying to '
        "allocate devices",
        ts(minutes=2),
        reason="SchedulerError",
    )
    nvl = lab_pod(
        "sweep-nvlink",
        claims=[("gpus", "sweep-nvlink")],
        finding="filter-timeout",
        status=timed_out,
        selector=pool_selector("a100-serve"),
    )
    events.append((nvl, "FailedScheduling", timed_out[0]["message"], "default-scheduler", ts(minutes=2), 5))
    wide = _lab_claim(
        d, "sweep-nvlink", ns, [{"name": "gpus", "exactly": _exactly("gpu.nvidia.com", A100_80, count=4)}], created=at
    )
    wide["spec"]["devices"]["constraints"] = [
        {"requests": ["gpus"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}
    ]


# This group's stories, in the order their objects are written.
STORIES: tuple[Story, ...] = (
    Story(
        "v1.37",
        (
            "pending-counters",
            "pending-constraint",
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
)
