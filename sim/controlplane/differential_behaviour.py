"""Behaviour cases of the differential harness: the same actions on both control planes, then what resulted.

Each case works on a node it adds to the fleet (a copy of a demo H100 DRA node: the DaemonSets, the DRA driver, the
scheduler and the kubelet agent treat it as any node of that pool) and in its own namespace, so the result does not
depend on the demo's history, which the embedded side loads as a picture and the real side rebuilds. What a case
returns is compared after normalizing: objects reduced to what an operator or dragoman reads, events to their
reason, type and message.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable
from typing import Any

from dragoman.fleet.k8s.times import parse_time
from dragoman.sim.controllers.base import BINDING_CONDITIONS, CRASH_LOOP_SECONDS
from dragoman.sim.controllers.kubelet import STOP_SECONDS
from dragoman.sim.controllers.nodelifecycle import KUBELET_STOPPED, RUNTIME_DOWN
from dragoman.sim.controlplane import differential_dra
from dragoman.sim.controlplane.differential import Behaviour, Side

NS = "dragoman-diff-b"
NODE = "dragoman-diff-h100"
TEMPLATE_NODE = "gke-ml-prod-h100-dra-731a68f1-628r"
SETTLE = 60.0  # seconds a case waits at most for the controllers (the real ones are slower than the embedded)
POD_FIELDS = ("phase", "reason", "message", "nominatedNodeName", "extendedResourceClaimStatus", "resourceClaimStatuses")


def _ns_path(kind: str, name: str = "") -> str:
    base = {
        "pods": f"/api/v1/namespaces/{NS}/pods",
        "events": f"/api/v1/namespaces/{NS}/events",
        "claims": f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims",
        "quotas": f"/api/v1/namespaces/{NS}/resourcequotas",
        "deployments": f"/apis/apps/v1/namespaces/{NS}/deployments",
        "replicasets": f"/apis/apps/v1/namespaces/{NS}/replicasets",
        "pdbs": f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets",
    }[kind]
    return f"{base}/{name}" if name else base


def pod_view(p: dict | None) -> Any:
    if p is None:
        return None
    st = p.get("status") or {}
    out = {k: st[k] for k in POD_FIELDS if k in st}
    out["conditions"] = {
        c["type"]: {k: c.get(k) for k in ("status", "reason", "message", "observedGeneration")}
        for c in st.get("conditions") or ()
    }
    out["nodeName"] = (p.get("spec") or {}).get("nodeName")
    out["containers"] = {
        c["name"]: {
            "ready": c.get("ready"),
            "state": sorted((c.get("state") or {}).keys()),
            "allocatedResourcesStatus": _any_free_device(c.get("allocatedResourcesStatus")),
        }
        for c in st.get("containerStatuses") or ()
    }
    return out


_DEVICE_INDEX = re.compile(r"(?<=[/=-])gpu-\d+$")


def _any_free_device(statuses: list | None) -> list | None:
    """Which of a pool's equal free devices a pod got is timing, not behaviour: it depends on whether an earlier
    case's pod (deleted with its claim) has let its device go yet, which the real side does a little later. The
    claim/request names and the resourceID's form (k8s.gpu.nvidia.com/claim=<claim uid>-gpu-<n>, the CDI device the
    driver prepared) are compared; the device's index is not."""
    if not statuses:
        return statuses
    out = copy.deepcopy(statuses)
    for status in out:
        for res in status.get("resources") or ():
            if isinstance(res.get("resourceID"), str):
                res["resourceID"] = _DEVICE_INDEX.sub("gpu-<n>", res["resourceID"])
    return out


def claim_view(c: dict) -> Any:
    md = c["metadata"]
    st = c.get("status") or {}
    alloc = st.get("allocation") or {}
    results = (alloc.get("devices") or {}).get("results") or []
    return {
        "name": md["name"],
        "generateName": md.get("generateName"),
        "labels": md.get("labels"),
        "annotations": md.get("annotations"),
        "finalizers": md.get("finalizers"),
        "owners": [
            (r.get("kind"), r.get("name"), r.get("controller"), r.get("blockOwnerDeletion"))
            for r in md.get("ownerReferences") or ()
        ],
        "spec": c.get("spec"),
        "allocated": {
            "devices": len(results),
            "requests": sorted({r.get("request") for r in results}),
            "drivers": sorted({r.get("driver") for r in results}),
            "pools": sorted({r.get("pool") for r in results}),
            "nodeSelector": alloc.get("nodeSelector"),
            "allocationTimestamp": "allocationTimestamp" in alloc,
            "config": alloc.get("devices", {}).get("config"),
        }
        if alloc
        else None,
        "reservedFor": [(r.get("resource"), r.get("name")) for r in st.get("reservedFor") or ()],
        "devices": st.get("devices"),
    }


def event_shape(e: dict) -> tuple:
    """How an Event was written, as a kubectl user reads it: the core recorder (tools/record: source, count,
    first/last timestamps, no action) or events.k8s.io/v1 (tools/events, kube-scheduler's: eventTime, action,
    reportingController and -Instance, no source). Which time fields are set is compared, not their values; nor
    `series`, whose presence depends on how many attempts fell in its window."""
    src = e.get("source") or {}
    return (
        e.get("reportingComponent") or "",
        e.get("reportingInstance") or "",
        e.get("action") or "",
        src.get("component") or "",
        src.get("host") or "",
        tuple(k for k in ("eventTime", "firstTimestamp", "lastTimestamp", "count") if e.get(k) is not None),
    )


def events_view(side: Side, name: str | None = None) -> list:
    body = side.get(_ns_path("events")) or {}
    out = set()
    for e in body.get("items") or ():
        inv = e.get("involvedObject") or {}
        if name is not None and inv.get("name") != name:
            continue
        # Normalized here: events repeated for objects of generated names are one event to compare.
        out.add(
            (inv.get("kind"), e.get("type"), e.get("reason"), side.norm.message(e.get("message") or ""), event_shape(e))
        )
    return sorted(out, key=lambda t: tuple(str(x) for x in t))


def _ensure_namespace(side: Side) -> None:
    ans = side.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    assert ans.code in (201, 409), (ans.code, ans.body)


def _wait_pod(side: Side, name: str, want: Any, timeout: float = SETTLE) -> dict | None:
    def check():
        p = side.get(_ns_path("pods", name))
        return p if p is not None and want(p) else None

    return side.wait(check, timeout) or side.get(_ns_path("pods", name))


def _gpu_pod(name: str, gpus: int = 1, **spec: Any) -> dict:
    s = {
        "nodeSelector": {"kubernetes.io/hostname": NODE},
        "containers": [
            {
                "name": "cuda",
                "image": "nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04",
                "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
            }
        ],
    }
    s.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": s}


# ------------------------------------------------------------------ cases


def _join(
    side: Side, name: str, template: dict, kubelet_version: str | None = None, annotations: dict | None = None
) -> None:
    """Add node `name` as a copy of `template` (labels, then status through /status as a kubelet posts it)."""
    labels = dict(template["metadata"].get("labels") or {})
    labels["kubernetes.io/hostname"] = name
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {}}
    if annotations:
        node["metadata"]["annotations"] = dict(annotations)
    ans = side.call("POST", "/api/v1/nodes", node)
    assert ans.code == 201, (ans.code, ans.body)
    status = copy.deepcopy(template.get("status") or {})
    status.pop("conditions", None)
    status.pop("images", None)
    status["addresses"] = [{"type": "Hostname", "address": name}]
    if kubelet_version:
        status.setdefault("nodeInfo", {})["kubeletVersion"] = kubelet_version
    if side.join_node is not None:
        # A real kubelet registers onto the Node made for it (as a pool's provisioner makes it) and posts its own
        # status; the scenario's status says its size and kubelet version.
        side.join_node({**node, "status": status})
        return
    ans = side.call(
        "PATCH", f"/api/v1/nodes/{name}/status", {"status": status}, content_type="application/merge-patch+json"
    )
    assert ans.code == 200, (ans.code, ans.body)


def node_view(side: Side, name: str) -> Any:
    n = side.get(f"/api/v1/nodes/{name}") or {}
    st = n.get("status") or {}
    return {
        "taints": (n.get("spec") or {}).get("taints"),
        "unschedulable": (n.get("spec") or {}).get("unschedulable"),
        "allocatable": st.get("allocatable"),
        "capacity": st.get("capacity"),
        "conditions": {
            c["type"]: [c.get("status"), c.get("reason"), c.get("message")] for c in st.get("conditions") or ()
        },
    }


def _node_ready(n: dict | None) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (n or {}).get("status", {}).get("conditions") or ()
    )


def node_joins(side: Side) -> Any:
    """A node of the h100-dra pool joins: the DaemonSets place their pods on it, the DRA driver publishes its
    devices, the kubelet reports it Ready; allocatable and capacity as the device manager leaves them."""
    src = side.get(f"/api/v1/nodes/{TEMPLATE_NODE}")
    assert src is not None, "the demo's H100 DRA node is there"
    _join(side, NODE, src)

    def ready():
        n = side.get(f"/api/v1/nodes/{NODE}")
        slices = _slices(side)
        pods = _pods_on_node(side)
        running = all(p[2] == "Running" for p in pods)
        return (n, slices, pods) if _node_ready(n) and slices and pods and running else None

    got = side.wait(ready, SETTLE * 2)
    return {
        "ready": bool(got),
        **node_view(side, NODE),
        "slices": _slices(side),
        "daemon pods": _pods_on_node(side),
    }


def _slices(side: Side, node: str = NODE) -> list:
    body = side.get(f"/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3D{node}") or {}
    out = []
    for s in body.get("items") or ():
        spec = s["spec"]
        out.append(
            {
                "driver": spec.get("driver"),
                "pool": spec.get("pool"),
                "devices": sorted(d["name"] for d in spec.get("devices") or ()),
                "attributes": sorted({k for d in spec.get("devices") or () for k in (d.get("attributes") or {})}),
                "owner": [(r.get("kind"), r.get("name")) for r in s["metadata"].get("ownerReferences") or ()],
            }
        )
    return sorted(out, key=lambda x: str(x["driver"]))


def _pods_on_node(side: Side, node: str = NODE) -> list:
    body = side.get(f"/api/v1/pods?fieldSelector=spec.nodeName%3D{node}") or {}
    out = []
    for p in body.get("items") or ():
        owner = next((r.get("name") for r in p["metadata"].get("ownerReferences") or () if r.get("controller")), None)
        if p["metadata"].get("namespace") == NS:
            continue
        out.append((p["metadata"]["namespace"], owner, (p.get("status") or {}).get("phase")))
    return sorted(out, key=lambda t: tuple(str(x) for x in t))


def bridged_pod(side: Side) -> Any:
    """A pod that keeps `limits: nvidia.com/gpu: 2`, placed on the DRA node through the extended-resource bridge:
    the claim the scheduler makes (name, annotations, finalizers, owner, allocation, reservedFor), the pod's
    extendedResourceClaimStatus, the class that serves the name when two classes name it, the events."""
    _ensure_namespace(side)
    since = _list_rv(side)
    ans = side.call("POST", _ns_path("pods"), _gpu_pod("bridged", 2))
    assert ans.code == 201, (ans.code, ans.body)
    p = _wait_pod(side, "bridged", lambda p: (p.get("status") or {}).get("phase") == "Running")
    order = write_order(side, since, "bridged")
    claims = (side.get(_ns_path("claims")) or {}).get("items") or []
    classes = {}
    for c in claims:
        for r in (c.get("spec") or {}).get("devices", {}).get("requests") or ():
            classes[r["name"]] = (r.get("exactly") or {}).get("deviceClassName")
    return {
        "pod": pod_view(p),
        "claims": [claim_view(c) for c in claims],
        "classes": classes,
        "events": events_view(side, "bridged"),
        "order of writes": order,
    }


TAINT_RULE = "dragoman-diff-xid"


def _rule_condition(side: Side) -> tuple | None:
    rule = side.get(f"/apis/resource.k8s.io/v1/devicetaintrules/{TAINT_RULE}") or {}
    for c in (rule.get("status") or {}).get("conditions") or ():
        if c.get("type") == "EvictionInProgress":
            return (c.get("status"), c.get("reason"), c.get("message"), c.get("observedGeneration"))
    return None


def device_taint_evicts(side: Side) -> Any:
    """A NoExecute DeviceTaintRule over the GPU a running bridged pod holds (its claim carries no toleration):
    kube-controller-manager's device taint eviction controller says the eviction is pending in the rule's
    EvictionInProgress condition before the pod goes, gives the pod DisruptionTarget (DeletionByDeviceTaintManager)
    and an Event, deletes it, and a status period (10 s) later says Completed with its count."""
    _ensure_namespace(side)
    ans = side.call("POST", _ns_path("pods"), _gpu_pod("tainted", 1))
    assert ans.code == 201, (ans.code, ans.body)
    p = _wait_pod(side, "tainted", lambda p: (p.get("status") or {}).get("phase") == "Running")
    claim_name = ((p or {}).get("status") or {}).get("extendedResourceClaimStatus", {}).get("resourceClaimName")
    claim = side.get(_ns_path("claims", claim_name)) if claim_name else None
    results = ((((claim or {}).get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")
    assert results, ("the tainted pod's claim was not allocated", p)
    r = results[0]
    rule = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": TAINT_RULE},
        "spec": {
            "deviceSelector": {"driver": r["driver"], "pool": r["pool"], "device": r["device"]},
            "taint": {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoExecute"},
        },
    }
    since = _list_rv(side)
    ans = side.call("POST", "/apis/resource.k8s.io/v1/devicetaintrules", rule)
    assert ans.code == 201, (ans.code, ans.body)
    first = side.wait(lambda: _rule_condition(side), SETTLE, interval=0.2)
    side.wait(lambda: side.get(_ns_path("pods", "tainted")) is None, SETTLE)
    # As a watcher saw the pod go: the DisruptionTarget the controller writes before its DELETE.
    targets = [state[3] for state in pod_history(side, since, "tainted") if state[3]]
    last = side.wait(lambda: (c := _rule_condition(side)) and c[1] == "Completed" and c, SETTLE)
    side.call("DELETE", f"/apis/resource.k8s.io/v1/devicetaintrules/{TAINT_RULE}")
    # Not vacuous on either side: the rule got its condition, the pod its DisruptionTarget, the rule its Completed.
    assert first and targets and last, (first, targets, last)
    return {
        "first condition": first,
        "pod's disruption target": targets,
        "events": [e for e in events_view(side, "tainted") if e[2] == "DeviceTaintManagerEviction"],
        "last condition": last,
    }


def _list_rv(side: Side) -> str:
    """The namespace's current resourceVersion: a WATCH from it replays every later write in order."""
    return str(((side.get(_ns_path("pods") + "?limit=1") or {}).get("metadata") or {}).get("resourceVersion") or "0")


# What a watcher of pods and claims sees happen, each named once at its first write (later writes of the same
# milestone, and writes between them, are the writers' bookkeeping).
def _milestones(kind: str, obj: dict, etype: str) -> list[str]:
    st = obj.get("status") or {}
    if kind == "ResourceClaim":
        out = [f"claim {etype.lower()}"]
        if (obj["metadata"].get("annotations") or {}).get("resource.kubernetes.io/extended-resource-claim"):
            out.append("claim made by the scheduler")
        if obj["metadata"].get("finalizers"):
            out.append("claim has a finalizer")
        if st.get("allocation"):
            out.append("claim allocated")
        if st.get("reservedFor"):
            out.append("claim reserved for the pod")
        if st.get("devices"):
            out.append("claim device status")
        return out
    out = [f"pod {etype.lower()}"]
    if (obj.get("spec") or {}).get("nodeName"):
        out.append("pod bound")
    if st.get("extendedResourceClaimStatus"):
        out.append("pod extendedResourceClaimStatus")
    if st.get("nominatedNodeName"):
        out.append("pod nominated")
    for c in st.get("conditions") or ():
        if c.get("status") == "True":
            out.append(f"pod {c.get('type')}")
    if st.get("phase") and st.get("phase") != "Pending":
        out.append(f"pod {st.get('phase')}")
    return out


def write_order(side: Side, since: str, pod: str, claims: tuple[str, ...] = (), quiet: float = 2.0) -> list[str]:
    """The first write of each milestone of pod `pod` and its claims (those it owns, as the scheduler's bridge claim,
    and `claims` by name) after `since`, in resourceVersion order (one etcd revision, or the simulator's one counter,
    orders both kinds).

    Only the case's own objects: an earlier case's pod still ending in the namespace (the drain's Deployment, deleted
    as that case leaves, stops its containers in 3 s under the agent) writes `nodeName`-carrying updates after
    `since` too, and counted here they made "pod bound" come before the binding condition was set."""
    events: list[tuple[int, str, dict, str]] = []
    for kind, path in (("Pod", _ns_path("pods")), ("ResourceClaim", _ns_path("claims"))):
        ans = side.target.watch(
            f"{path}?watch=1&resourceVersion={since}&allowWatchBookmarks=false&timeoutSeconds=5",
            max_events=200,
            timeout=quiet,
        )
        for ev in (ans.body or {}).get("events") or ():
            obj = ev.get("object") or {}
            md = obj.get("metadata") or {}
            rv = md.get("resourceVersion") or "0"
            if kind == "Pod":
                mine = md.get("name") == pod
            else:
                owned = any(r.get("kind") == "Pod" and r.get("name") == pod for r in md.get("ownerReferences") or ())
                mine = owned or md.get("name") in claims
            if mine and ev.get("type") in ("ADDED", "MODIFIED", "DELETED") and str(rv).isdigit():
                events.append((int(rv), kind, obj, ev["type"]))
    seen: list[str] = []
    for _, kind, obj, etype in sorted(events, key=lambda e: e[0]):
        for m in _milestones(kind, obj, etype):
            if m not in seen:
                seen.append(m)
    return seen


def class_added_while_waiting(side: Side) -> Any:
    """A pod whose claim names a DeviceClass that does not exist yet waits (FailedScheduling), then is placed once
    the class is created."""
    _ensure_namespace(side)
    cls = "dragoman-diff-late.example.com"
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "late", "namespace": NS},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": cls, "count": 1}}]}},
    }
    assert side.call("POST", _ns_path("claims"), claim).code == 201
    pod = _gpu_pod("waits", 0, resourceClaims=[{"name": "gpu", "resourceClaimName": "late"}])
    pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    assert side.call("POST", _ns_path("pods"), pod).code == 201
    waiting = _wait_pod(
        side,
        "waits",
        lambda p: any(c.get("reason") == "Unschedulable" for c in (p.get("status") or {}).get("conditions") or ()),
    )

    def failed_event():
        ev = [e for e in events_view(side, "waits") if e[2] == "FailedScheduling"]
        return ev or None

    before = side.wait(failed_event, 30) or []
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": cls},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}]},
    }
    assert side.call("POST", "/apis/resource.k8s.io/v1/deviceclasses", body).code == 201
    placed = _wait_pod(side, "waits", lambda p: (p.get("status") or {}).get("phase") == "Running", SETTLE * 1.5)
    c = side.get(_ns_path("claims", "late"))
    side.call("DELETE", _ns_path("pods", "waits") + "?gracePeriodSeconds=0")
    side.call("DELETE", f"/apis/resource.k8s.io/v1/deviceclasses/{cls}")
    return {
        "waiting": pod_view(waiting),
        "failed scheduling": before,
        "placed": pod_view(placed),
        "claim": claim_view(c) if c else None,
        "events": events_view(side, "waits"),
    }


def quota_refuses(side: Side) -> Any:
    """A ResourceQuota that allows no GPU: a pod asking for one is refused, so is a claim on the class, and a
    Deployment's ReplicaSet reports what it could not create."""
    _ensure_namespace(side)
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "no-gpus", "namespace": NS},
        "spec": {"hard": {"requests.nvidia.com/gpu": "0", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "0"}},
    }
    assert side.call("POST", _ns_path("quotas"), quota).code == 201

    def quota_counted():
        q = side.get(_ns_path("quotas", "no-gpus"))
        return q if (q or {}).get("status", {}).get("hard") else None

    side.wait(quota_counted, 30)

    # kube-apiserver's quota admission reads quotas through its own informer, which can see the quota (or its
    # status) a moment after a GET does: a run at load 2 let the pod through at once. A dry-run create goes through
    # the same admission without writing, so the case waits until admission itself judges the pod by the quota's
    # counted status (before that it admits, or refuses with "status unknown for quota").
    def admission_counts():
        ans = side.call("POST", _ns_path("pods") + "?dryRun=All", _gpu_pod("over-quota", 1))
        return ans.code == 403 and "status unknown" not in str((ans.body or {}).get("message"))

    side.wait(admission_counts, 30)
    pod_ans = side.call("POST", _ns_path("pods"), _gpu_pod("over-quota", 1))
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "over-quota", "namespace": NS},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
    }
    claim_ans = side.call("POST", _ns_path("claims"), claim)
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "over-quota", "namespace": NS},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "over-quota"}},
            "template": {"metadata": {"labels": {"app": "over-quota"}}, "spec": _gpu_pod("x", 1)["spec"]},
        },
    }
    assert side.call("POST", _ns_path("deployments"), dep).code == 201

    def rs_failed():
        items = (side.get(_ns_path("replicasets") + "?labelSelector=app%3Dover-quota") or {}).get("items") or []
        conds = [c for rs in items for c in (rs.get("status") or {}).get("conditions") or ()]
        evs = [e for e in events_view(side) if e[0] == "ReplicaSet" and e[2] == "FailedCreate"]
        return (items, conds, evs) if conds and evs else None

    got = side.wait(rs_failed, SETTLE)
    items = (side.get(_ns_path("replicasets") + "?labelSelector=app%3Dover-quota") or {}).get("items") or []
    side.call("DELETE", _ns_path("deployments", "over-quota"))
    side.call("DELETE", _ns_path("quotas", "no-gpus"))
    return {
        "pod": [pod_ans.code, (pod_ans.body or {}).get("reason"), (pod_ans.body or {}).get("message")],
        "claim": [claim_ans.code, (claim_ans.body or {}).get("reason"), (claim_ans.body or {}).get("message")],
        "replicaset reported": bool(got),
        "replicaset conditions": [
            {c.get("type"): [c.get("status"), c.get("reason"), side.norm.message(c.get("message") or "")]}
            for rs in items
            for c in (rs.get("status") or {}).get("conditions") or ()
        ],
        "replicaset events": sorted({e[2:] for e in events_view(side) if e[0] == "ReplicaSet"}),
    }


def drain_with_pdb(side: Side) -> Any:
    """A Deployment of two pods on the node under a PDB that allows no disruption: the node cordoned, one pod
    evicted (429, the budget's words), the PDB's status; then the budget relaxed and the eviction allowed."""
    _ensure_namespace(side)
    spec = {
        "nodeSelector": {"kubernetes.io/hostname": NODE},
        "containers": [{"name": "app", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
    }
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "guarded", "namespace": NS},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "guarded"}},
            # The containers take 3 s to stop (the kubelet agent's stop time): the evicted pod is seen terminating.
            "template": {
                "metadata": {"labels": {"app": "guarded"}, "annotations": {STOP_SECONDS: "3"}},
                "spec": spec,
            },
        },
    }
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "guarded", "namespace": NS},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "guarded"}}},
    }
    assert side.call("POST", _ns_path("deployments"), dep).code == 201
    assert side.call("POST", _ns_path("pdbs"), pdb).code == 201

    def running():
        items = (side.get(_ns_path("pods") + "?labelSelector=app%3Dguarded") or {}).get("items") or []
        up = [p for p in items if (p.get("status") or {}).get("phase") == "Running"]
        b = side.get(_ns_path("pdbs", "guarded")) or {}
        healthy = (b.get("status") or {}).get("currentHealthy")
        return sorted(p["metadata"]["name"] for p in up) if len(up) == 2 and healthy == 2 else None

    names = side.wait(running, SETTLE * 1.5) or []
    side.call(
        "PATCH", f"/api/v1/nodes/{NODE}", {"spec": {"unschedulable": True}}, content_type="application/merge-patch+json"
    )
    target = names[0] if names else "none"
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": target, "namespace": NS}}
    refused = side.call("POST", _ns_path("pods", target) + "/eviction", eviction)
    budget = side.get(_ns_path("pdbs", "guarded")) or {}
    side.call(
        "PATCH", _ns_path("pdbs", "guarded"), {"spec": {"minAvailable": 1}}, content_type="application/merge-patch+json"
    )

    def allowed():
        b = side.get(_ns_path("pdbs", "guarded")) or {}
        return b if (b.get("status") or {}).get("disruptionsAllowed") == 1 else None

    side.wait(allowed, 30)
    since = _list_rv(side)
    evicted = side.call("POST", _ns_path("pods", target) + "/eviction", eviction)
    gone = _wait_pod(side, target, lambda p: bool(p["metadata"].get("deletionTimestamp")), 10)
    ended = side.wait(lambda: side.call("GET", _ns_path("pods", target)).code == 404, 30)
    seen = pod_watch(side, since, target)
    history = pod_history(side, since, target, seen)
    # The evicted pod as its kubelet last wrote it before it went (the deletion bumped its generation; the kubelet's
    # writes since say so): from the watch, not from a poll, which may fall before or after the kubelet's first write
    # once the pod is deleted — and whether that write is seen at all is timing too (a real kubelet's status manager
    # coalesces it with the terminal one when the runtime stops the containers at once, as dragoman-cri does).
    # (Not the API server's own last update, when the kubelet's final delete shortens the grace period to 0.)
    gone = next(
        (
            o
            for o in reversed(seen)
            if o["metadata"].get("deletionTimestamp")
            and o.get("_type") == "MODIFIED"
            and o["metadata"].get("deletionGracePeriodSeconds") != 0
        ),
        gone,
    )
    side.call(
        "PATCH", f"/api/v1/nodes/{NODE}", {"spec": {"unschedulable": None}}, content_type="application/merge-patch+json"
    )
    side.call("DELETE", _ns_path("deployments", "guarded"))
    st = budget.get("status") or {}
    return {
        "running": len(names),
        "refused": [
            refused.code,
            (refused.body or {}).get("reason"),
            (refused.body or {}).get("message"),
            (refused.body or {}).get("details"),
        ],
        "budget": {k: st.get(k) for k in ("currentHealthy", "desiredHealthy", "disruptionsAllowed", "expectedPods")},
        "budget conditions": {
            c["type"]: [c.get("status"), c.get("reason"), c.get("message")] for c in st.get("conditions") or ()
        },
        "evicted": [evicted.code, (evicted.body or {}).get("kind"), (evicted.body or {}).get("status")],
        "evicted pod": None
        if gone is None
        else {
            "deleting": bool(gone["metadata"].get("deletionTimestamp")),
            "grace": gone["metadata"].get("deletionGracePeriodSeconds"),
            **pod_view(gone),
        },
        "evicted pod gone": bool(ended),
        "evicted pod's writes": history,
    }


def node_cordoned(side: Side) -> Any:
    """The node cordoned for longer than its kubelet's 10 s status sync, then uncordoned: a kubelet records
    NodeNotSchedulable, then NodeSchedulable (kubelet.go recordNodeSchedulableEvent, at its status sync). The drain's
    cordon is too short to be sure a real kubelet's sync falls inside it, so this case is the judge of those events.

    When a sync did fall inside the drain's cordon, the kubelet recorded NodeNotSchedulable and records NodeSchedulable
    only at its next sync: a cordon before that one finds it still thinking the node unschedulable, and it records
    nothing (CI saw exactly that once). So the case first waits until the kubelet's last word is not
    NodeNotSchedulable."""
    side.wait(lambda: not _kubelet_last_said_unschedulable(side), 30)
    marks = node_event_marks(side)

    def cordon(on: bool) -> None:
        side.call(
            "PATCH",
            f"/api/v1/nodes/{NODE}",
            {"spec": {"unschedulable": True if on else None}},
            content_type="application/merge-patch+json",
        )

    def recorded(reason: str) -> Callable[[], bool]:
        return lambda: any(e[1] == reason for e in _node_events(side, since=marks))

    cordon(True)
    off = side.wait(recorded("NodeNotSchedulable"), 30)
    cordon(False)
    on = side.wait(recorded("NodeSchedulable"), 30)
    node = side.get(f"/api/v1/nodes/{NODE}") or {}
    return {
        "NodeNotSchedulable recorded while cordoned": bool(off),
        "NodeSchedulable recorded once uncordoned": bool(on),
        "unschedulable after": (node.get("spec") or {}).get("unschedulable"),
        "node events": _node_events(side, since=marks),
    }


def _kubelet_last_said_unschedulable(side: Side) -> bool:
    """Whether the node's latest NodeNotSchedulable event is newer than its latest NodeSchedulable one: its kubelet
    (kubelet.go lastNodeUnschedulable) still holds the node unschedulable."""
    last: dict[str, str] = {}
    for e in _node_event_items(side, NODE):
        reason = e.get("reason")
        if reason in ("NodeNotSchedulable", "NodeSchedulable"):
            stamp = str(e.get("lastTimestamp") or e.get("eventTime") or "")
            last[reason] = max(last.get(reason, ""), stamp)
    return last.get("NodeNotSchedulable", "") > last.get("NodeSchedulable", "")


def node_unsettled(side: Side, node: str = NODE) -> list[str]:
    """What still shows an earlier case's mark on the cases' node: not Ready, cordoned, a kubelet that last said
    NodeNotSchedulable, a pod of the cases' namespace still terminating. Empty once the node is as a case expects to
    find it (or before the first case joins it)."""
    n = side.get(f"/api/v1/nodes/{node}")
    if n is None:
        return []
    out = []
    if not _node_ready(n):
        out.append("not Ready")
    if (n.get("spec") or {}).get("unschedulable"):
        out.append("cordoned")
    if _kubelet_last_said_unschedulable(side):
        out.append("its kubelet last said NodeNotSchedulable")
    ending = [
        (p.get("metadata") or {}).get("name")
        for p in (side.get(_ns_path("pods")) or {}).get("items") or ()
        if (p.get("metadata") or {}).get("deletionTimestamp")
    ]
    if ending:
        out.append("pods still terminating: " + ", ".join(sorted(str(x) for x in ending)))
    return out


def pod_watch(side: Side, since: str, name: str) -> list[dict]:
    """Pod `name` as a watcher saw it after `since`, each event's object in order."""
    ans = side.target.watch(
        f"{_ns_path('pods')}?watch=1&resourceVersion={since}&allowWatchBookmarks=false&timeoutSeconds=5"
        f"&fieldSelector=metadata.name%3D{name}",
        max_events=100,
        timeout=2.0,
    )
    return [
        {**(ev.get("object") or {}), "_type": ev.get("type")}
        for ev in (ans.body or {}).get("events") or ()
        if isinstance(ev.get("object"), dict) and ev["object"].get("metadata")
    ]


def pod_history(side: Side, since: str, name: str, seen: list[dict] | None = None) -> list:
    """Each distinct state a watcher saw pod `name` in after `since`: event type, phase, terminating, its
    DisruptionTarget condition, its containers' states."""
    out: list = []
    for obj in pod_watch(side, since, name) if seen is None else seen:
        st = obj.get("status") or {}
        dt = next((c for c in st.get("conditions") or () if c.get("type") == "DisruptionTarget"), None)
        state = [
            obj.get("_type"),
            st.get("phase"),
            bool((obj.get("metadata") or {}).get("deletionTimestamp")),
            [dt.get("status"), dt.get("reason"), dt.get("message")] if dt else None,
            {
                c.get("name"): {k: (v or {}).get("exitCode") for k, v in (c.get("state") or {}).items()}
                for c in st.get("containerStatuses") or ()
            },
        ]
        if not out or out[-1] != state:
            out.append(state)
    return _without_stopping_writes(out)


def _without_stopping_writes(states: list) -> list:
    """The states without a deleted pod's "stopping" status: phase still Running, containers all terminated, written
    between its containers' stop and its terminal phase. A real kubelet's status manager writes that only when its
    sync falls between the two (status updates go through its cache, and the terminal one usually replaces it first:
    seen once in three runs of the NotReady case, at load 11); the agent writes the terminal phase at once."""

    def stopping(st: list) -> bool:
        containers = st[4] if isinstance(st[4], dict) else {}
        return (
            st[1] not in ("Failed", "Succeeded")
            and bool(st[2])
            and bool(containers)
            and all(set(c) == {"terminated"} for c in containers.values())
        )

    out: list = []
    for i, st in enumerate(states):
        if stopping(st) and any(later[1] in ("Failed", "Succeeded") for later in states[i + 1 :]):
            continue
        if not out or out[-1] != st:
            out.append(st)
    return out


def daemon_pod_deleted(side: Side) -> Any:
    """The DRA driver's pod on the node deleted: the DaemonSet makes a new one; the node's slices survive or are
    republished; the DaemonSet's status settles back."""

    def driver_pod():
        body = side.get(f"/api/v1/namespaces/dra-driver-nvidia-gpu/pods?fieldSelector=spec.nodeName%3D{NODE}") or {}
        items = [p for p in body.get("items") or () if not p["metadata"].get("deletionTimestamp")]
        return items[0] if items and (items[0].get("status") or {}).get("phase") == "Running" else None

    first = side.wait(driver_pod, SETTLE)
    assert first is not None, "the driver runs on the joined node"
    ans = side.call("DELETE", f"/api/v1/namespaces/dra-driver-nvidia-gpu/pods/{first['metadata']['name']}")

    def replaced():
        p = driver_pod()
        return p if p is not None and p["metadata"]["uid"] != first["metadata"]["uid"] else None

    second = side.wait(replaced, SETTLE)

    def ds_ready():
        ds = side.get("/apis/apps/v1/namespaces/dra-driver-nvidia-gpu/daemonsets/dra-driver-nvidia-gpu-kubelet-plugin")
        st = (ds or {}).get("status") or {}
        return st if st.get("numberReady") == st.get("desiredNumberScheduled") else None

    st = side.wait(ds_ready, SETTLE) or {}
    return {
        "delete": [ans.code, (ans.body or {}).get("kind")],
        "replaced": second is not None,
        "new pod": pod_view(second),
        "daemonset ready": st.get("numberReady") == st.get("desiredNumberScheduled"),
        "slices": _slices(side),
    }


DIFF_RESOURCE = "example.com/dragoman-diff-gpu"
DIFF_CLASSES = ("dragoman-diff-old", "dragoman-diff-new", "dragoman-diff-renamed")


def _naming_class(name: str) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {
            "extendedResourceName": DIFF_RESOURCE,
            "selectors": [{"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}],
        },
    }


def _settled_pod(side: Side, name: str, timeout: float = SETTLE) -> dict | None:
    """The pod once Running, Failed, or refused by the scheduler (PodScheduled=False)."""

    def done(p: dict) -> bool:
        st = p.get("status") or {}
        if st.get("phase") in ("Running", "Failed", "Succeeded"):
            return True
        return any(c.get("type") == "PodScheduled" and c.get("status") == "False" for c in st.get("conditions") or ())

    return _wait_pod(side, name, done, timeout)


def _claim_classes(side: Side, pod: str) -> list:
    """The classes of the claims the scheduler made for `pod` (its bridge claim's requests)."""
    out = []
    for c in (side.get(_ns_path("claims")) or {}).get("items") or ():
        owners = [r.get("name") for r in c["metadata"].get("ownerReferences") or ()]
        if pod in owners:
            out.extend((r.get("exactly") or {}).get("deviceClassName") for r in c["spec"]["devices"]["requests"])
    return sorted(out)


def class_deleted_and_renamed(side: Side) -> Any:
    """Two classes name one extended resource; the newer serves it. Then the newer is deleted while a pod waits —
    which class serves the name now — and the class comes back under a new name (a rename: delete, create)."""
    _ensure_namespace(side)
    old, new, renamed = DIFF_CLASSES
    assert side.call("POST", "/apis/resource.k8s.io/v1/deviceclasses", _naming_class(old)).code == 201
    time.sleep(1.1)  # creationTimestamp has whole seconds: the newer class must be newer, not tied on the name
    assert side.call("POST", "/apis/resource.k8s.io/v1/deviceclasses", _naming_class(new)).code == 201
    time.sleep(1.0)  # the scheduler's class cache follows the watch

    def pod(name: str) -> dict:
        body = _gpu_pod(name, 0)
        body["spec"]["containers"][0]["resources"] = {"limits": {DIFF_RESOURCE: "1"}}
        return body

    assert side.call("POST", _ns_path("pods"), pod("named-first")).code == 201
    first = _settled_pod(side, "named-first")
    served_first = _claim_classes(side, "named-first")
    assert side.call("DELETE", f"/apis/resource.k8s.io/v1/deviceclasses/{new}").code == 200
    time.sleep(1.0)
    assert side.call("POST", _ns_path("pods"), pod("after-delete")).code == 201
    after_delete = _settled_pod(side, "after-delete", 30)
    served_after_delete = _claim_classes(side, "after-delete")
    time.sleep(1.1)
    assert side.call("POST", "/apis/resource.k8s.io/v1/deviceclasses", _naming_class(renamed)).code == 201
    after_rename = _wait_pod(side, "after-delete", lambda p: (p.get("status") or {}).get("phase") == "Running", SETTLE)
    out = {
        "first pod": pod_view(first),
        "first served by": served_first,
        "after the delete": pod_view(after_delete),
        "after the delete served by": served_after_delete,
        "after the rename": pod_view(after_rename),
        "after the rename served by": _claim_classes(side, "after-delete"),
        "events": events_view(side, "after-delete"),
    }
    for name in ("named-first", "after-delete"):
        side.call("DELETE", _ns_path("pods", name) + "?gracePeriodSeconds=0")
    for name in DIFF_CLASSES:
        side.call("DELETE", f"/apis/resource.k8s.io/v1/deviceclasses/{name}")
    return out


L4_NODE = "dragoman-diff-l4"
L4_POOL = "l4-serve"


def _pool_nodes(side: Side, pool: str) -> list[dict]:
    body = side.get(f"/api/v1/nodes?labelSelector=cloud.google.com%2Fgke-nodepool%3D{pool}") or {}
    return sorted(body.get("items") or (), key=lambda n: n["metadata"]["name"])


def _device_plugin_pods(side: Side, node: str) -> list:
    return [p for p in _pods_on_node(side, node) if "device-plugin" in str(p[1])]


def device_plugin_stopped(side: Side) -> Any:
    """A device-plugin node (a copy of an l4-serve node) loses its device plugin (the operator's deploy label set to
    false): allocatable goes to 0 while capacity stays (the device manager's grace); a pod keeping
    `limits: nvidia.com/gpu` pinned there then goes the bridge's way (allocatable 0 and a class serves the name)."""
    _ensure_namespace(side)
    template = next(n for n in _pool_nodes(side, L4_POOL) if n["metadata"]["name"] != L4_NODE)
    _join(side, L4_NODE, template)

    def gpus(want: str):
        def check():
            n = side.get(f"/api/v1/nodes/{L4_NODE}")
            alloc = ((n or {}).get("status") or {}).get("allocatable") or {}
            return n if _node_ready(n) and alloc.get("nvidia.com/gpu") == want else None

        return check

    def served():
        # Ready, the node lifecycle controller's taints off (the real API server taints a new node not-ready), the
        # plugin's pod running and its GPUs allocatable: what both sides reach, whatever order they get there in.
        plugin = [p for p in _device_plugin_pods(side, L4_NODE) if p[2] == "Running"]
        return gpus("4")() if plugin and not _condition_taints(side, L4_NODE) else None

    up = side.wait(served, SETTLE * 2)
    before = {"served": bool(up), **node_view(side, L4_NODE), "plugin pods": _device_plugin_pods(side, L4_NODE)}
    side.call(
        "PATCH",
        f"/api/v1/nodes/{L4_NODE}",
        {"metadata": {"labels": {"nvidia.com/gpu.deploy.device-plugin": "false"}}},
        content_type="application/merge-patch+json",
    )
    side.wait(lambda: not _device_plugin_pods(side, L4_NODE) and gpus("0")(), SETTLE)
    after = {**node_view(side, L4_NODE), "plugin pods": _device_plugin_pods(side, L4_NODE)}
    body = _gpu_pod("plugin-gone", 1)
    body["spec"]["nodeSelector"] = {"kubernetes.io/hostname": L4_NODE}
    assert side.call("POST", _ns_path("pods"), body).code == 201
    placed = _settled_pod(side, "plugin-gone", 30)
    out = {
        "before": before,
        "after": after,
        "pod": pod_view(placed),
        "claims": _claim_classes(side, "plugin-gone"),
        "events": events_view(side, "plugin-gone"),
    }
    side.call("DELETE", _ns_path("pods", "plugin-gone") + "?gracePeriodSeconds=0")
    side.call("DELETE", f"/api/v1/nodes/{L4_NODE}")
    return out


OLD_KUBELET = "v1.35.9-gke.1016000"


def old_kubelet_bridged(side: Side) -> Any:
    """The node's kubelet is older than the bridge (< v1.36): the scheduler still places a pod keeping
    `limits: nvidia.com/gpu` there through a claim, and the kubelet cannot admit it."""
    _ensure_namespace(side)
    n = side.get(f"/api/v1/nodes/{NODE}") or {}
    version = ((n.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion")
    patch = {"status": {"nodeInfo": {"kubeletVersion": OLD_KUBELET}}}
    ans = side.call("PATCH", f"/api/v1/nodes/{NODE}/status", patch, content_type="application/merge-patch+json")
    assert ans.code == 200, (ans.code, ans.body)
    try:
        assert side.call("POST", _ns_path("pods"), _gpu_pod("old-kubelet", 1)).code == 201
        p = _settled_pod(side, "old-kubelet")
        claims = [
            claim_view(c)
            for c in (side.get(_ns_path("claims")) or {}).get("items") or ()
            if "old-kubelet" in [r.get("name") for r in c["metadata"].get("ownerReferences") or ()]
        ]
        out = {"pod": pod_view(p), "claims": claims, "events": events_view(side, "old-kubelet")}
    finally:
        side.call("DELETE", _ns_path("pods", "old-kubelet") + "?gracePeriodSeconds=0")
        patch = {"status": {"nodeInfo": {"kubeletVersion": version}}}
        side.call("PATCH", f"/api/v1/nodes/{NODE}/status", patch, content_type="application/merge-patch+json")
    return out


def _plain_pod(name: str, **spec: Any) -> dict:
    body = _gpu_pod(name, 0, **spec)
    body["spec"]["containers"][0]["resources"] = {}
    return body


def _condition_taints(side: Side, node: str = NODE) -> list:
    n = side.get(f"/api/v1/nodes/{node}") or {}
    return sorted(
        (t.get("key"), t.get("effect"), "timeAdded" in t)
        for t in (n.get("spec") or {}).get("taints") or ()
        if t.get("key") in ("node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready")
    )


def _daemon_readiness(side: Side, node: str = NODE) -> list:
    out = [
        {
            "owner": side.norm.string(
                next((r.get("name") for r in p["metadata"].get("ownerReferences") or ()), "") or ""
            ),
            "ready": next(
                (c.get("status") for c in (p.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"),
                None,
            ),
        }
        for p in (side.get(f"/api/v1/pods?fieldSelector=spec.nodeName%3D{node}") or {}).get("items") or ()
        if p["metadata"].get("namespace") != NS
    ]
    return sorted(out, key=lambda d: (d["owner"], str(d["ready"])))


def _node_event_items(side: Side, node: str) -> list[dict]:
    return (side.get(f"/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D{node}") or {}).get(
        "items"
    ) or []


def node_event_marks(side: Side, node: str = NODE) -> dict[str, int]:
    """The node's events so far, each name with its count: what `_node_events(since=)` leaves out. The cases share
    one node; an event an earlier case left (the drain's cordon makes a real kubelet record NodeNotSchedulable and
    NodeSchedulable if its 10 s status sync falls inside the cordon, or not) is not this case's."""
    return {e["metadata"]["name"]: int(e.get("count") or 1) for e in _node_event_items(side, node)}


def _node_events(side: Side, node: str = NODE, since: dict[str, int] | None = None) -> list:
    """The node's events, as (type, reason, message, shape); with `since` (node_event_marks at the case's start),
    only the ones recorded after it: new, or recorded again (a higher count) since."""
    since = since or {}
    return sorted(
        {
            (e.get("type"), e.get("reason"), side.norm.message(e.get("message") or ""), event_shape(e))
            for e in _node_event_items(side, node)
            if int(e.get("count") or 1) > since.get(e["metadata"]["name"], 0)
        },
        key=lambda t: tuple(str(x) for x in t),
    )


def _eviction_delay(side: Side, key: str, pod: dict | None, node: str = NODE) -> float | None:
    """Seconds from the node's NoExecute taint `key` being added (its timeAdded) to the taint eviction controller
    marking the pod (its DisruptionTarget's lastTransitionTime): both stamped by the same side's clock."""
    n = side.get(f"/api/v1/nodes/{node}") or {}
    added = next(
        (
            t.get("timeAdded")
            for t in (n.get("spec") or {}).get("taints") or ()
            if t.get("key") == key and t.get("effect") == "NoExecute"
        ),
        None,
    )
    marked = next(
        (
            c.get("lastTransitionTime")
            for c in ((pod or {}).get("status") or {}).get("conditions") or ()
            if c.get("type") == "DisruptionTarget"
        ),
        None,
    )
    a, b = parse_time(added), parse_time(marked)
    return None if a is None or b is None else b - a


def _terminating_view(p: dict | None) -> Any:
    if p is None:
        return None
    return {
        "deleting": bool(p["metadata"].get("deletionTimestamp")),
        "grace": p["metadata"].get("deletionGracePeriodSeconds"),
        **pod_view(p),
    }


def _node_fault(side: Side, node: str, what: str, on: bool) -> None:
    """Stop (`on`) or start again node `node`'s kubelet (`what` "kubelet") or its container runtime ("runtime"): a
    real-kubelet side stops the process itself (Side.node_fault); the Python agents play it from the node's
    annotation (KUBELET_STOPPED, RUNTIME_DOWN)."""
    if side.node_fault is not None:
        side.node_fault(node, what, on)
        return
    key = {"kubelet": KUBELET_STOPPED, "runtime": RUNTIME_DOWN}[what]
    patch = {"metadata": {"annotations": {key: "true" if on else None}}}
    ans = side.call("PATCH", f"/api/v1/nodes/{node}", patch, content_type="application/merge-patch+json")
    assert ans.code == 200, (ans.code, ans.body)


def node_not_ready(side: Side) -> Any:
    """The node's kubelet stops (its Lease is no longer renewed): the node lifecycle controller turns its conditions
    Unknown after the grace period, taints it unreachable, marks its pods not ready; a pod that tolerates the
    NoExecute taint for 5 s is then deleted by the taint eviction controller, and a pod deleted meanwhile stays
    terminating past its grace (no kubelet confirms it). Then the kubelet comes back: the node is Ready and
    untainted again, the pods that kept running are ready, the terminating ones end."""
    _ensure_namespace(side)
    marks = node_event_marks(side)
    tolerating = _plain_pod(
        "tolerates-5s",
        tolerations=[
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 5,
            }
        ],
    )
    for body in (tolerating, _plain_pod("keeps-running"), _plain_pod("deleted-while-down")):
        assert side.call("POST", _ns_path("pods"), body).code == 201
    running = {
        name: _wait_pod(side, name, lambda p: (p.get("status") or {}).get("phase") == "Running")
        for name in ("tolerates-5s", "keeps-running", "deleted-while-down")
    }
    since = _list_rv(side)
    _node_fault(side, NODE, "kubelet", True)

    def unreachable():
        n = side.get(f"/api/v1/nodes/{NODE}") or {}
        keys = {(t.get("key"), t.get("effect")) for t in (n.get("spec") or {}).get("taints") or ()}
        return n if ("node.kubernetes.io/unreachable", "NoExecute") in keys else None

    t0 = time.monotonic()
    gone_dark = side.wait(unreachable, 120, interval=1.0)
    took = time.monotonic() - t0
    evicted = _wait_pod(side, "tolerates-5s", lambda p: bool(p["metadata"].get("deletionTimestamp")), 30)
    delay = _eviction_delay(side, "node.kubernetes.io/unreachable", evicted)
    view = node_view(side, NODE)
    view["taints"] = sorted(
        ((t.get("key"), t.get("effect"), "timeAdded" in t) for t in view.get("taints") or ()),
        key=lambda t: tuple(str(x) for x in t),
    )
    down = {
        "keeps running": pod_view(side.get(_ns_path("pods", "keeps-running"))),
        "daemon pods": _daemon_readiness(side),
    }
    # Deleted while no kubelet runs on its node: past its 2 s grace it is still there, terminating.
    side.call("DELETE", _ns_path("pods", "deleted-while-down") + "?gracePeriodSeconds=2")
    deleted = _wait_pod(side, "deleted-while-down", lambda p: bool(p["metadata"].get("deletionTimestamp")), 10)
    time.sleep(2 + 5)
    after_grace = side.get(_ns_path("pods", "deleted-while-down"))
    node_events_down = _node_events(side, since=marks)

    _node_fault(side, NODE, "kubelet", False)

    def recovered():
        n = side.get(f"/api/v1/nodes/{NODE}")
        if not _node_ready(n) or _condition_taints(side):
            return None
        pods = {p: side.get(_ns_path("pods", p)) for p in ("tolerates-5s", "keeps-running", "deleted-while-down")}
        ready = (pod_view(pods["keeps-running"]) or {}).get("conditions", {}).get("Ready", {}).get("status")
        ended = pods["tolerates-5s"] is None and pods["deleted-while-down"] is None
        daemons_ready = all(d["ready"] == "True" for d in _daemon_readiness(side))
        return n if ready == "True" and ended and daemons_ready else None

    t1 = time.monotonic()
    back = side.wait(recovered, SETTLE, interval=1.0)
    recovery = time.monotonic() - t1
    back_view = node_view(side, NODE)
    back_view["conditions"] = {k: v[:2] for k, v in back_view["conditions"].items()}
    kept = pod_view(side.get(_ns_path("pods", "keeps-running")))
    node_events = _node_events(side, since=marks)
    resumed_not_ready = _kubelet_not_ready_on_resume(node_events, node_events_down)
    for name in ("tolerates-5s", "keeps-running", "deleted-while-down"):
        side.call("DELETE", _ns_path("pods", name) + "?gracePeriodSeconds=0")
    return {
        "running first": sorted((name, (p or {}).get("status", {}).get("phase")) for name, p in running.items()),
        "unreachable": bool(gone_dark),
        # The grace period (50 s, monitored every 5 s) from the last renewal (up to 10 s before the stop).
        "within the grace window": 30 <= took <= 75,
        "node": view,
        "while down": down,
        "evicted": None if evicted is None else _terminating_view(evicted),
        # tolerationSeconds 5 from the taint's timeAdded; whole-second stamps and the controllers' passes add a little.
        "evicted 5 s after the taint": delay is not None and 4 <= delay <= 12,
        "evicted pod's writes": pod_history(side, since, "tolerates-5s"),
        "deleted while down": _terminating_view(deleted),
        "deleted, past its grace": _terminating_view(after_grace),
        "node events while down": node_events_down,
        "pod events": events_view(side, "tolerates-5s"),
        "recovered": bool(back),
        "recovered within 30 s": recovery <= 30,
        "node back": back_view,
        "daemon pods back": _daemon_readiness(side),
        "keeps running, back": kept,
        "deleted pod's writes": pod_history(side, since, "deleted-while-down"),
        "node events": [e for e in node_events if e not in resumed_not_ready],
        "the kubelet said NotReady as it resumed": bool(resumed_not_ready),
    }


def _kubelet_not_ready_on_resume(after: list, while_down: list) -> list:
    """The kubelet's own NodeNotReady events (source kubelet) that came after the resume: a kubelet that was stopped
    may post Ready=False "container runtime is down" once as it resumes. Its runtime check (runtimeErrors) says
    down when the last good runtime Status call is older than 30 s (maxWaitForContainerRuntime), and after the stop it
    is; updateRuntimeUp (every 5 s) and syncNodeStatus (every 10 s) both fire as it resumes, in no set order, and
    when the status sync goes first the Ready condition turns Unknown -> False (the NodeNotReady event), then True at
    the next sync. Apart, so the rest of the node's events compare as they are."""
    return [e for e in after if e not in while_down and e[1] == "NodeNotReady" and e[3][3] == "kubelet"]


def node_runtime_down(side: Side) -> Any:
    """The node's container runtime goes down while its kubelet keeps running (Lease renewed): the kubelet posts
    Ready=False; the node lifecycle controller taints the node not-ready (no NodeNotReady event of its own, the pods'
    Ready left alone), a pod tolerating the NoExecute taint for 5 s is evicted and stays terminating while the runtime
    cannot stop it. Then the runtime is back: Ready, the taints off, the evicted pod ends."""
    _ensure_namespace(side)
    marks = node_event_marks(side)
    tolerating = _plain_pod(
        "tolerates-not-ready",
        tolerations=[
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}
        ],
    )
    for body in (tolerating, _plain_pod("runtime-stays")):
        assert side.call("POST", _ns_path("pods"), body).code == 201
    for name in ("tolerates-not-ready", "runtime-stays"):
        _wait_pod(side, name, lambda p: (p.get("status") or {}).get("phase") == "Running")
    since = _list_rv(side)
    _node_fault(side, NODE, "runtime", True)

    def tainted():
        t = _condition_taints(side)
        return t if ("node.kubernetes.io/not-ready", "NoExecute", True) in t else None

    # The kubelet says its runtime is down 30 s after its last good Status call (maxWaitForContainerRuntime), on its
    # next status update (the agent: 30 s after it saw the runtime go); then the lifecycle controller's next pass.
    t0 = time.monotonic()
    down = side.wait(tainted, 90, interval=1.0)
    took = time.monotonic() - t0
    evicted = _wait_pod(side, "tolerates-not-ready", lambda p: bool(p["metadata"].get("deletionTimestamp")), 30)
    delay = _eviction_delay(side, "node.kubernetes.io/not-ready", evicted)
    # A moment later it is still there: the runtime cannot stop its containers (its 30 s grace is not waited out
    # here; the NotReady case shows a pod kept past its grace).
    time.sleep(3)
    view = node_view(side, NODE)
    view["taints"] = _condition_taints(side)
    while_down = {
        "node": view,
        "stays": pod_view(side.get(_ns_path("pods", "runtime-stays"))),
        "evicted": _terminating_view(evicted),
        "evicted 5 s after the taint": delay is not None and 4 <= delay <= 12,
        "evicted, a moment later": _terminating_view(side.get(_ns_path("pods", "tolerates-not-ready"))),
        "node events": _node_events(side, since=marks),
    }
    _node_fault(side, NODE, "runtime", False)

    def recovered():
        n = side.get(f"/api/v1/nodes/{NODE}")
        gone = side.get(_ns_path("pods", "tolerates-not-ready")) is None
        return n if _node_ready(n) and not _condition_taints(side) and gone else None

    back = side.wait(recovered, SETTLE, interval=1.0)
    back_view = node_view(side, NODE)
    back_view["conditions"] = {k: v[:2] for k, v in back_view["conditions"].items()}
    out = {
        "tainted not-ready": down,
        # 30 s, then up to a status period (10 s) and a lifecycle controller's pass (5 s); 35 s seen on a real kubelet.
        "tainted once the runtime was down 30 s": 25 <= took <= 60,
        "while down": while_down,
        "recovered": bool(back),
        "node back": back_view,
        "stays, back": pod_view(side.get(_ns_path("pods", "runtime-stays"))),
        "evicted pod's writes": pod_history(side, since, "tolerates-not-ready"),
        "node events": _node_events(side, since=marks),
        "pod events": events_view(side, "tolerates-not-ready"),
    }
    for name in ("tolerates-not-ready", "runtime-stays"):
        side.call("DELETE", _ns_path("pods", name) + "?gracePeriodSeconds=0")
    return out


GONE_NODE = "dragoman-diff-gone"


def node_deleted(side: Side) -> Any:
    """A node deleted with pods on it (an autoscaler's scale-down, a machine removed): no kubelet ends them, so the
    pod garbage collector does once the node has been missing for its quarantine — Failed with DisruptionTarget
    DeletionByPodGC, then force-deleted; the node's slices and Lease go by their owner reference."""
    _ensure_namespace(side)
    src = side.get(f"/api/v1/nodes/{TEMPLATE_NODE}")
    assert src is not None, "the demo's H100 DRA node is there"
    _join(side, GONE_NODE, src)
    body = _plain_pod("on-a-gone-node")
    body["spec"]["nodeSelector"] = {"kubernetes.io/hostname": GONE_NODE}
    assert side.call("POST", _ns_path("pods"), body).code == 201

    def settled():
        n = side.get(f"/api/v1/nodes/{GONE_NODE}")
        p = side.get(_ns_path("pods", "on-a-gone-node"))
        daemons = _pods_on_node(side, GONE_NODE)
        running = (p or {}).get("status", {}).get("phase") == "Running" and all(d[2] == "Running" for d in daemons)
        return n if _node_ready(n) and running and daemons and _slices(side, GONE_NODE) else None

    up = side.wait(settled, SETTLE * 2)
    before = {"daemon pods": _pods_on_node(side, GONE_NODE), "slices": len(_slices(side, GONE_NODE))}
    since = _list_rv(side)
    if side.node_fault is not None:
        # The machine goes with its Node (a scale-down): its kubelet stops first. (A kubelet left running would go on
        # renewing its Lease and syncing the Node's pods, which this case says nobody does.)
        side.node_fault(GONE_NODE, "kubelet", True)
    ans = side.call("DELETE", f"/api/v1/nodes/{GONE_NODE}")
    t0 = time.monotonic()

    def all_gone():
        pod = side.call("GET", _ns_path("pods", "on-a-gone-node")).code == 404
        left = (side.get(f"/api/v1/pods?fieldSelector=spec.nodeName%3D{GONE_NODE}") or {}).get("items")
        return pod and not left and not _slices(side, GONE_NODE)

    gone = side.wait(all_gone, 150, interval=1.0)
    took = time.monotonic() - t0
    lease = side.call("GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{GONE_NODE}").code
    return {
        "up": bool(up),
        "before": before,
        "node deleted": ans.code,
        "pods gone": bool(gone),
        # Quarantine 40 s after the collector first misses the node (it looks every 20 s): 40-80 s on v1.37.2.
        "gone after the pod collector's quarantine": 35 <= took <= 95,
        "pod's writes": pod_history(side, since, "on-a-gone-node"),
        "lease": lease,
    }


def _pool_picture(side: Side, pool: str) -> Any:
    """What a migration changes on a pool, as an operator reads it: each node's schedulability, GPUs offered by the
    device plugin and the DRA driver, the pods on it (owner, phase, through which mechanism)."""
    out = []
    pool_pods: list = []
    for n in _pool_nodes(side, pool):
        name = n["metadata"]["name"]
        if name == L4_NODE:
            continue
        st = n.get("status") or {}
        labels = n["metadata"].get("labels") or {}
        pods = []
        body = side.get(f"/api/v1/pods?fieldSelector=spec.nodeName%3D{name}") or {}
        for p in body.get("items") or ():
            owner = next((r for r in p["metadata"].get("ownerReferences") or () if r.get("controller")), {})
            pst = p.get("status") or {}
            pods.append(
                (
                    p["metadata"]["namespace"],
                    owner.get("kind"),
                    side.norm.string(owner.get("name") or p["metadata"]["name"]),
                    pst.get("phase"),
                    "bridge"
                    if pst.get("extendedResourceClaimStatus")
                    else "claims"
                    if p["spec"].get("resourceClaims")
                    else "",
                )
            )
        out.append(
            {
                "unschedulable": (n.get("spec") or {}).get("unschedulable"),
                "allocatable": (st.get("allocatable") or {}).get("nvidia.com/gpu"),
                "capacity": (st.get("capacity") or {}).get("nvidia.com/gpu"),
                "deploy labels": {k: v for k, v in labels.items() if k.startswith("nvidia.com/gpu.deploy.")},
                "annotations": sorted(k for k in n["metadata"].get("annotations") or () if "dragoman" in k),
                "slices": [(s["driver"], len(s["devices"])) for s in _slices(side, name)],
                "daemon pods": sorted((p for p in pods if p[1] == "DaemonSet"), key=lambda t: tuple(str(x) for x in t)),
            }
        )
        pool_pods.extend(p for p in pods if p[1] != "DaemonSet")
    classes = (side.get("/apis/resource.k8s.io/v1/deviceclasses") or {}).get("items") or ()
    return {
        "nodes": out,
        # Which of the pool's equal nodes each workload pod lands on is the scheduler's scoring tie-break (both
        # pick at random among equal scores); what the pool runs, and how, is the behaviour.
        "pods": sorted(pool_pods, key=lambda t: tuple(str(x) for x in t)),
        "classes": sorted((c["metadata"]["name"], (c.get("spec") or {}).get("extendedResourceName")) for c in classes),
    }


def _dragoman(side: Side, *args: str) -> Any:
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="dragoman-diff-migrate-") as tmp:
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "dragoman",
                *args,
                "--kubeconfig",
                str(side.kubeconfig_path),
                "--audit-log",
                f"{tmp}/audit.jsonl",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    steps = [ln.strip() for ln in p.stdout.splitlines() if "steps done" in ln or ln.strip().startswith(("✓", "✗"))]
    return {"exit": p.returncode, "steps": [side.norm.message(ln) for ln in steps], "stderr": p.stderr[-400:]}


def migrate_and_roll_back(side: Side) -> Any:
    """`dragoman migrate --pool l4-serve --yes`, then `--rollback --yes`: the pool as each leaves it."""
    before = _pool_picture(side, L4_POOL)
    run = _dragoman(side, "migrate", "--pool", L4_POOL, "--yes")
    migrated = _pool_picture(side, L4_POOL)
    back = _dragoman(side, "migrate", "--pool", L4_POOL, "--rollback", "--yes")

    def plugin_back():
        nodes = [n for n in _pool_nodes(side, L4_POOL) if n["metadata"]["name"] != L4_NODE]
        return all(
            ((n.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu", "0") != "0"
            and not (n.get("spec") or {}).get("unschedulable")
            for n in nodes
        )

    side.wait(plugin_back, 180, interval=2.0)
    return {
        "before": before,
        "migrate": run,
        "migrated": migrated,
        "rollback": back,
        "rolled back": _pool_picture(side, L4_POOL),
    }


def container_crash_loops(side: Side) -> Any:
    """A container that exits with code 1 four seconds after each start: the kubelet restarts it with back-off,
    and a watcher sees each of its states in turn (running; the exit; CrashLoopBackOff while it waits; running
    again, one restart more) until its second exit. The agent plays it from an annotation, dragoman-cri from the
    container's env."""
    _ensure_namespace(side)
    body = _plain_pod("crash-loops")
    body["metadata"]["annotations"] = {CRASH_LOOP_SECONDS: "4"}
    body["spec"]["containers"][0]["env"] = [
        {"name": "DRAGOMAN_EXIT_AFTER", "value": "4s"},
        {"name": "DRAGOMAN_EXIT_CODE", "value": "1"},
    ]
    since = _list_rv(side)
    assert side.call("POST", _ns_path("pods"), body).code == 201

    def second_exit(p: dict) -> bool:
        cs = ((p.get("status") or {}).get("containerStatuses") or [{}])[0]
        return cs.get("restartCount", 0) >= 1 and "running" not in (cs.get("state") or {})

    p = _wait_pod(side, "crash-loops", second_exit, SETTLE)
    ans = side.target.watch(
        f"{_ns_path('pods')}?watch=1&resourceVersion={since}&allowWatchBookmarks=false&timeoutSeconds=5"
        "&fieldSelector=metadata.name%3Dcrash-loops",
        max_events=100,
        timeout=2.0,
    )
    seen: list = []
    for ev in (ans.body or {}).get("events") or ():
        st = (ev.get("object") or {}).get("status") or {}
        for cs in st.get("containerStatuses") or ():
            state = {k: (v or {}).get("reason") or k for k, v in (cs.get("state") or {}).items()}
            if state == {"waiting": "ContainerCreating"}:
                # The pod's start (a real kubelet's first status write, before the sandbox is up) is the bridged
                # case's "order of writes"; here the loop's states from the first run on.
                continue
            last = (cs.get("lastState") or {}).get("terminated") or {}
            row = [
                state,
                cs.get("ready"),
                min(int(cs.get("restartCount") or 0), 1),
                [last.get("reason"), last.get("exitCode")] if last else None,
            ]
            if row not in seen[-1:]:
                seen.append(row)
    side.call("DELETE", _ns_path("pods", "crash-loops") + "?gracePeriodSeconds=0")
    return {
        "second exit seen": second_exit(p or {}),
        "container states in turn": seen,
        "pod": pod_view(p),
        "events": events_view(side, "crash-loops"),
    }


BIND_NODE = "dragoman-diff-bind"
BIND_CONDITION = "gpu.nvidia.com/attached"
BIND_DELAY = 6


def device_binding_conditions(side: Side) -> Any:
    """A node whose DRA driver's devices ask for a binding condition (the scenario's BINDING_CONDITIONS annotation):
    the scheduler allocates and reserves a device for a pod's claim and nominates the node, then waits in PreBind,
    the pod unbound, until the driver sets the condition True in the claim's status (BIND_DELAY seconds after the
    allocation); then it binds and the kubelet runs the pod."""
    import json as _json

    _ensure_namespace(side)
    src = side.get(f"/api/v1/nodes/{TEMPLATE_NODE}")
    assert src is not None, "the demo's H100 DRA node is there"
    ask = {
        "conditions": [BIND_CONDITION],
        "failureConditions": [BIND_CONDITION + "-failed"],
        "bindsToNode": True,
        "delaySeconds": BIND_DELAY,
    }
    _join(side, BIND_NODE, src, annotations={BINDING_CONDITIONS: _json.dumps(ask)})

    def published():
        devs = [d for s in _raw_slices(side, BIND_NODE) for d in s["spec"].get("devices") or ()]
        return devs if devs and all(d.get("bindingConditions") == [BIND_CONDITION] for d in devs) else None

    devices = side.wait(published, SETTLE) or []
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "attached", "namespace": NS},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
    }
    assert side.call("POST", _ns_path("claims"), claim).code == 201
    pod = _gpu_pod("waits-for-attach", 0, resourceClaims=[{"name": "gpu", "resourceClaimName": "attached"}])
    pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": BIND_NODE}
    pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    since = _list_rv(side)
    assert side.call("POST", _ns_path("pods"), pod).code == 201

    def reserved():
        c = side.get(_ns_path("claims", "attached")) or {}
        return c if (c.get("status") or {}).get("reservedFor") else None

    held = side.wait(reserved, SETTLE)
    waiting = side.get(_ns_path("pods", "waits-for-attach"))
    ran = _wait_pod(side, "waits-for-attach", lambda p: (p.get("status") or {}).get("phase") == "Running", SETTLE)
    after = side.get(_ns_path("claims", "attached")) or {}
    results = ((after.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []
    out = {
        "devices ask": sorted({c for d in devices for c in d.get("bindingConditions") or ()}),
        "reserved, waiting": {
            "nodeName": ((waiting or {}).get("spec") or {}).get("nodeName"),
            "nominatedNodeName": ((waiting or {}).get("status") or {}).get("nominatedNodeName"),
            "claim reserved": bool(held),
        },
        "allocated": [(r.get("device") is not None, r.get("bindingConditions")) for r in results],
        "conditions": [
            [(c.get("type"), c.get("status"), c.get("reason")) for c in d.get("conditions") or ()]
            for d in (after.get("status") or {}).get("devices") or ()
        ],
        "pod": pod_view(ran),
        "order of writes": write_order(side, since, "waits-for-attach", ("attached",)),
    }
    side.call("DELETE", _ns_path("pods", "waits-for-attach") + "?gracePeriodSeconds=0")
    return out


def _raw_slices(side: Side, node: str) -> list:
    body = side.get(f"/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3D{node}") or {}
    return body.get("items") or []


def behaviour_cases() -> list[Behaviour]:
    return [
        Behaviour("a node joins the h100-dra pool", node_joins, group="behaviour/node"),
        Behaviour("a pod keeping limits: nvidia.com/gpu is bridged", bridged_pod, group="behaviour/bridge"),
        Behaviour("a NoExecute device taint evicts a pod", device_taint_evicts, group="behaviour/device-taints"),
        *differential_dra.cases(),
        Behaviour("a DeviceClass added while a pod waits", class_added_while_waiting, group="behaviour/classes"),
        Behaviour("quota refuses a pod, a claim and a ReplicaSet", quota_refuses, group="behaviour/quota"),
        Behaviour("a drain under a PDB", drain_with_pdb, group="behaviour/drain"),
        Behaviour("a DaemonSet's pod deleted", daemon_pod_deleted, group="behaviour/daemonset"),
        Behaviour(
            "a class deleted and renamed while a pod waits", class_deleted_and_renamed, group="behaviour/classes"
        ),
        Behaviour("a device plugin stopped", device_plugin_stopped, group="behaviour/device-plugin"),
        Behaviour("an old kubelet receives a bridged pod", old_kubelet_bridged, group="behaviour/bridge"),
        Behaviour("a node goes NotReady", node_not_ready, group="behaviour/node"),
        # A node of its own (GONE_NODE), so beside the NotReady case: both mostly wait on the controllers' clocks (the
        # lifecycle controller's 50 s grace, the pod collector's 40 s quarantine).
        Behaviour(
            "a node deleted with pods on it", node_deleted, group="behaviour/node", alongside="a node goes NotReady"
        ),
        Behaviour("a node's container runtime goes down", node_runtime_down, group="behaviour/node"),
        Behaviour("migrate l4-serve and roll back", migrate_and_roll_back, group="behaviour/migrate"),
    ]


def cleanup(side: Side, timeout: float = 60.0) -> None:
    """Remove what the behaviour cases added (the joined node, their namespace), so a cluster can be used again by
    other flows: the node's daemon pods, slices and Lease go with it (garbage collection)."""
    differential_dra.cleanup(side)
    side.call("DELETE", f"/apis/resource.k8s.io/v1/devicetaintrules/{TAINT_RULE}")
    side.call("DELETE", "/apis/resource.k8s.io/v1/deviceclasses/dragoman-diff-late.example.com")
    for name in DIFF_CLASSES:
        side.call("DELETE", f"/apis/resource.k8s.io/v1/deviceclasses/{name}")
    side.call("DELETE", f"/api/v1/nodes/{L4_NODE}")
    side.call("DELETE", f"/api/v1/nodes/{GONE_NODE}")
    side.call("DELETE", f"/api/v1/namespaces/{NS}")
    side.call("DELETE", f"/api/v1/nodes/{NODE}")

    def gone():
        ns = side.call("GET", f"/api/v1/namespaces/{NS}").code == 404
        slices = not _slices(side)
        pods = not (side.get(f"/api/v1/pods?fieldSelector=spec.nodeName%3D{NODE}") or {}).get("items")
        return ns and slices and pods

    side.wait(gone, timeout, interval=1.0)
