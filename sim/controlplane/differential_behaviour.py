"""Behaviour cases of the differential harness: the same actions on both control planes, then what resulted.

Each case works on a node it adds to the fleet (a copy of a demo H100 DRA node: the DaemonSets, the DRA driver, the
scheduler and the kubelet agent treat it as any node of that pool) and in its own namespace, so the result does not
depend on the demo's history, which the embedded side loads as a picture and the real side rebuilds. What a case
returns is compared after normalizing: objects reduced to what an operator or dragoman reads, events to their
reason, type and message.
"""

from __future__ import annotations

import copy
from typing import Any

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
    out["conditions"] = {c["type"]: [c.get("status"), c.get("reason")] for c in st.get("conditions") or ()}
    out["nodeName"] = (p.get("spec") or {}).get("nodeName")
    out["containers"] = {
        c["name"]: {
            "ready": c.get("ready"),
            "state": sorted((c.get("state") or {}).keys()),
            "allocatedResourcesStatus": c.get("allocatedResourcesStatus"),
        }
        for c in st.get("containerStatuses") or ()
    }
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


def events_view(side: Side, name: str | None = None) -> list:
    body = side.get(_ns_path("events")) or {}
    out = set()
    for e in body.get("items") or ():
        inv = e.get("involvedObject") or {}
        if name is not None and inv.get("name") != name:
            continue
        # Normalized here: events repeated for objects of generated names are one event to compare.
        out.add((inv.get("kind"), e.get("type"), e.get("reason"), side.norm.message(e.get("message") or "")))
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


def node_joins(side: Side) -> Any:
    """A node of the h100-dra pool joins: the DaemonSets place their pods on it, the DRA driver publishes its
    devices, the kubelet reports it Ready; allocatable and capacity as the device manager leaves them."""
    src = side.get(f"/api/v1/nodes/{TEMPLATE_NODE}")
    assert src is not None, "the demo's H100 DRA node is there"
    labels = dict(src["metadata"].get("labels") or {})
    labels["kubernetes.io/hostname"] = NODE
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE, "labels": labels}, "spec": {}}
    ans = side.call("POST", "/api/v1/nodes", node)
    assert ans.code == 201, (ans.code, ans.body)
    status = copy.deepcopy(src.get("status") or {})
    status.pop("conditions", None)
    status.pop("images", None)
    status["addresses"] = [{"type": "Hostname", "address": NODE}]
    ans = side.call(
        "PATCH", f"/api/v1/nodes/{NODE}/status", {"status": status}, content_type="application/merge-patch+json"
    )
    assert ans.code == 200, (ans.code, ans.body)

    def ready():
        n = side.get(f"/api/v1/nodes/{NODE}")
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in (n or {}).get("status", {}).get("conditions") or ()
        )
        slices = _slices(side)
        pods = _pods_on_node(side)
        running = all(p[2] == "Running" for p in pods)
        return (n, slices, pods) if ready and slices and pods and running else None

    got = side.wait(ready, SETTLE * 2)
    n = side.get(f"/api/v1/nodes/{NODE}") or {}
    return {
        "ready": bool(got),
        "taints": (n.get("spec") or {}).get("taints"),
        "unschedulable": (n.get("spec") or {}).get("unschedulable"),
        "allocatable": (n.get("status") or {}).get("allocatable"),
        "capacity": (n.get("status") or {}).get("capacity"),
        "conditions": {
            c["type"]: [c.get("status"), c.get("reason")] for c in (n.get("status") or {}).get("conditions") or ()
        },
        "slices": _slices(side),
        "daemon pods": _pods_on_node(side),
    }


def _slices(side: Side) -> list:
    body = side.get(f"/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3D{NODE}") or {}
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


def _pods_on_node(side: Side) -> list:
    body = side.get(f"/api/v1/pods?fieldSelector=spec.nodeName%3D{NODE}") or {}
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
    ans = side.call("POST", _ns_path("pods"), _gpu_pod("bridged", 2))
    assert ans.code == 201, (ans.code, ans.body)
    p = _wait_pod(side, "bridged", lambda p: (p.get("status") or {}).get("phase") == "Running")
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
    }


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
            "template": {"metadata": {"labels": {"app": "guarded"}}, "spec": spec},
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
    evicted = side.call("POST", _ns_path("pods", target) + "/eviction", eviction)
    gone = _wait_pod(side, target, lambda p: bool(p["metadata"].get("deletionTimestamp")), 10)
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
            "phase": gone.get("status", {}).get("phase"),
        },
    }


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


def behaviour_cases() -> list[Behaviour]:
    return [
        Behaviour("a node joins the h100-dra pool", node_joins, group="behaviour/node"),
        Behaviour("a pod keeping limits: nvidia.com/gpu is bridged", bridged_pod, group="behaviour/bridge"),
        Behaviour("a DeviceClass added while a pod waits", class_added_while_waiting, group="behaviour/classes"),
        Behaviour("quota refuses a pod, a claim and a ReplicaSet", quota_refuses, group="behaviour/quota"),
        Behaviour("a drain under a PDB", drain_with_pdb, group="behaviour/drain"),
        Behaviour("a DaemonSet's pod deleted", daemon_pod_deleted, group="behaviour/daemonset"),
    ]


def cleanup(side: Side, timeout: float = 60.0) -> None:
    """Remove what the behaviour cases added (the joined node, their namespace), so a cluster can be used again by
    other flows: the node's daemon pods, slices and Lease go with it (garbage collection)."""
    side.call("DELETE", "/apis/resource.k8s.io/v1/deviceclasses/dragoman-diff-late.example.com")
    side.call("DELETE", f"/api/v1/namespaces/{NS}")
    side.call("DELETE", f"/api/v1/nodes/{NODE}")

    def gone():
        ns = side.call("GET", f"/api/v1/namespaces/{NS}").code == 404
        slices = not _slices(side)
        pods = not (side.get(f"/api/v1/pods?fieldSelector=spec.nodeName%3D{NODE}") or {}).get("items")
        return ns and slices and pods

    side.wait(gone, timeout, interval=1.0)
