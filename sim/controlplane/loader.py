"""Load a scenario into a real API server as a user's `kubectl apply` would.

A scenario (or a snapshot) is a picture of a settled cluster; the real control plane must arrive at that picture by
its own controllers, so what they make is not created by hand:
- objects a controller owns (a Deployment's ReplicaSets, every controller's Pods, claims made from templates or by
  the scheduler's extended-resource bridge) are left to that controller;
- every other object is created without its server-set fields (uid, resourceVersion, timestamps, status), owners
  first, with each ownerReference re-pointed to the owner's new uid — a reference to a uid the new cluster does not
  have would let garbage collection delete the object; a reference to an owner the scenario lacks is dropped;
- pods are created unbound: the real scheduler places them (and makes their bridge claims);
- status that no controller writes (a Node's capacity, conditions and nodeInfo) goes through the status
  subresource, as a kubelet's would; the node agents take over from there.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable
from typing import Any

from dragoman.sim import resources
from dragoman.sim.api.admission import service_accounts_named

Request = Callable[..., tuple[int, Any]]

# Controllers that make their own children from their spec: objects they own are theirs to create.
CONTROLLER_KINDS = frozenset(
    {"ReplicaSet", "DaemonSet", "StatefulSet", "Job", "Deployment", "CronJob", "Pod", "ReplicationController"}
)
# Kinds the API server or a controller writes on its own; a scenario's copies are history, not intent.
SKIP_KINDS = frozenset({"Event", "Lease", "EndpointSlice", "Endpoints", "ControllerRevision"})
# Creation order: what others refer to comes first (namespaces, RBAC, classes, service accounts), then nodes,
# then workloads, then claims and pods.
ORDER = (
    "Namespace",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "ServiceAccount",
    "ConfigMap",
    "ResourceQuota",
    "DeviceClass",
    "ResourceClaimTemplate",
    "PodDisruptionBudget",
    "PrometheusRule",
    "Node",
    "DaemonSet",
    "Deployment",
    "StatefulSet",
    "Job",
    "ReplicaSet",
    "ResourceClaim",
    "Pod",
)
_SERVER_FIELDS = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
# What the Job controller adds to a Job it admits; sent back, they make the API server refuse the Job.
_JOB_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name")

# The CRDs of the custom kinds the simulator serves (stored as sent: no schema beyond "an object").
CRDS = {
    ("monitoring.coreos.com", "PrometheusRule"): {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "prometheusrules.monitoring.coreos.com"},
        "spec": {
            "group": "monitoring.coreos.com",
            "names": {
                "kind": "PrometheusRule",
                "listKind": "PrometheusRuleList",
                "plural": "prometheusrules",
                "singular": "prometheusrule",
                "shortNames": ["promrule"],
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    },
}


@dataclasses.dataclass
class LoadReport:
    created: dict[str, int] = dataclasses.field(default_factory=dict)
    left_to_controllers: dict[str, int] = dataclasses.field(default_factory=dict)
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)
    dropped_owner_refs: list[str] = dataclasses.field(default_factory=list)
    refused: list[str] = dataclasses.field(default_factory=list)

    def merge(self, other: LoadReport) -> None:
        for mine, theirs in (
            (self.created, other.created),
            (self.left_to_controllers, other.left_to_controllers),
            (self.skipped, other.skipped),
        ):
            for k, n in theirs.items():
                mine[k] = mine.get(k, 0) + n
        self.dropped_owner_refs += other.dropped_owner_refs
        self.refused += other.refused

    def count(self, table: dict[str, int], kind: str) -> None:
        table[kind] = table.get(kind, 0) + 1


def _controller_owned(obj: dict) -> bool:
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") in CONTROLLER_KINDS:
            return True
    return False


def _bridge_or_template_claim(obj: dict) -> bool:
    md = obj["metadata"]
    ann = md.get("annotations") or {}
    if any(k.startswith("resource.kubernetes.io/") for k in ann) and md.get("ownerReferences"):
        return True
    return any(ref.get("kind") == "Pod" for ref in md.get("ownerReferences") or ())


def _clean(obj: dict) -> dict:
    out = copy.deepcopy(obj)
    md = out.setdefault("metadata", {})
    for f in _SERVER_FIELDS:
        md.pop(f, None)
    out.pop("status", None)
    kind = out.get("kind")
    if kind == "Pod":
        out.get("spec", {}).pop("nodeName", None)
    if kind == "Job":
        spec = out.get("spec", {})
        if not spec.get("manualSelector"):
            spec.pop("selector", None)
            labels = spec.get("template", {}).get("metadata", {}).get("labels") or {}
            for k in _JOB_LABELS:
                labels.pop(k, None)
    if kind == "Namespace":
        out.pop("spec", None)
    return out


# What runs the workloads, and the workloads. The infrastructure (nodes, their DaemonSets, classes, RBAC) goes in
# first and settles — device plugins registered, DRA drivers publishing — before any workload is created, as in the
# cluster the scenario pictures: a GPU pod bound to a node whose device plugin has not started is refused by the
# kubelet (UnexpectedAdmissionError), which is real, but not the demo's story.
WORKLOAD_KINDS = frozenset({"Deployment", "StatefulSet", "Job", "CronJob", "ReplicaSet", "Pod", "ResourceClaim"})
PHASES = ("infrastructure", "workloads")


def plan(objects: list[dict], phase: str | None = None) -> tuple[list[dict], LoadReport]:
    """Which objects to create, in order, and what is left to controllers or skipped (pure: no I/O). `phase`
    (one of PHASES) keeps only that phase's objects; None keeps all."""
    report = LoadReport()
    todo: list[dict] = []
    for obj in objects:
        kind = obj.get("kind", "")
        if phase is not None and (kind in WORKLOAD_KINDS) != (phase == "workloads"):
            continue
        if kind in SKIP_KINDS:
            report.count(report.skipped, kind)
            continue
        if _controller_owned(obj) or (kind == "ResourceClaim" and _bridge_or_template_claim(obj)):
            report.count(report.left_to_controllers, kind)
            continue
        todo.append(obj)
    rank = {k: i for i, k in enumerate(ORDER)}
    if phase == "workloads":
        # In the order the scenario's cluster made their pods: GPUs go to whoever asked first, so the same pods win
        # (transcode-daily before transcode-urgent) and the same ones are left Pending.
        first = first_pod_times(objects)
        # Standalone claims first: a pod that names one is then decided on its devices, not on a missing claim.
        todo.sort(
            key=lambda o: (
                "" if o.get("kind") == "ResourceClaim" else first.get(o["metadata"].get("uid", ""), "~"),
                rank.get(o.get("kind", ""), len(ORDER)),
            )
        )
    else:
        todo.sort(key=lambda o: rank.get(o.get("kind", ""), len(ORDER)))
    return _owners_first(todo), report


def _owners_first(objs: list[dict]) -> list[dict]:
    """The same order, except that an object never comes before an owner of it that is also to be created (so its
    reference can be re-pointed to the owner's new uid); a cycle keeps the given order."""
    uid_of = {o["metadata"].get("uid"): o for o in objs if o["metadata"].get("uid")}
    out: list[dict] = []
    done: set[int] = set()
    visiting: set[int] = set()

    def emit(o: dict) -> None:
        if id(o) in done or id(o) in visiting:
            return
        visiting.add(id(o))
        for ref in o["metadata"].get("ownerReferences") or ():
            owner = uid_of.get(ref.get("uid"))
            if owner is not None:
                emit(owner)
        visiting.discard(id(o))
        done.add(id(o))
        out.append(o)

    for o in objs:
        emit(o)
    return out


def _top_uid(obj: dict, by_uid: dict[str, dict]) -> str:
    seen = set()
    while True:
        ref = next((r for r in obj["metadata"].get("ownerReferences") or () if r.get("controller")), None)
        if ref is None or ref.get("uid") in seen or ref.get("uid") not in by_uid:
            return obj["metadata"].get("uid", "")
        seen.add(ref["uid"])
        obj = by_uid[ref["uid"]]


def first_pod_times(objects: list[dict]) -> dict[str, str]:
    """uid of each top-level workload → the creationTimestamp of its first pod in the scenario."""
    by_uid = {o["metadata"]["uid"]: o for o in objects if o.get("metadata", {}).get("uid")}
    out: dict[str, str] = {}
    for o in objects:
        if o.get("kind") == "Pod":
            top = _top_uid(o, by_uid)
            stamp = o["metadata"].get("creationTimestamp") or "~"
            if top and stamp < out.get(top, "~"):
                out[top] = stamp
    return out


def expected_pods(objects: list[dict]) -> dict[str, int]:
    """uid of each top-level workload → how many pods the scenario's cluster had of it."""
    by_uid = {o["metadata"]["uid"]: o for o in objects if o.get("metadata", {}).get("uid")}
    out: dict[str, int] = {}
    for o in objects:
        # A Failed pod of a ReplicaSet was replaced by its controller; the rebuilt cluster will not have it.
        if o.get("kind") == "Pod" and (o.get("status") or {}).get("phase") != "Failed":
            top = _top_uid(o, by_uid)
            out[top] = out.get(top, 0) + 1
    return out


def _pods_decided(request: Request, namespace: str, want: int, timeout: float) -> None:
    """Until `namespace` has `want` pods and the scheduler has decided each (bound, or found unschedulable)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code, body = request("GET", f"/api/v1/namespaces/{namespace}/pods")
        if code == 200:
            pods = body.get("items") or []
            undecided = [
                p
                for p in pods
                if not p["spec"].get("nodeName")
                and not any(
                    c.get("type") == "PodScheduled" and c.get("status") == "False"
                    for c in (p.get("status") or {}).get("conditions") or ()
                )
            ]
            if len(pods) >= want and not undecided:
                return
        time.sleep(0.25)


def _path(obj: dict, name: str | None = None, sub: str | None = None) -> str:
    rt = resources.for_object(obj)
    ns = obj["metadata"].get("namespace") or ("default" if rt.namespaced else None)
    p = rt.collection_path(ns)
    if name:
        p += f"/{name}"
    if sub:
        p += f"/{sub}"
    return p


def load(
    request: Request,
    objects: list[dict],
    *,
    phase: str | None = None,
    uids: dict[str, str] | None = None,
    wait_crd: float = 30.0,
    pod_timeout: float = 20.0,
    kubelet_nodes: frozenset[str] = frozenset(),
) -> LoadReport:
    """Create one phase's objects (all when None). `uids` maps the scenario's uids to the new cluster's, carried from
    one phase to the next so a workload's ownerReferences find owners made in the first. The status of a Node in
    `kubelet_nodes` is left to its real kubelet (capacity, conditions, nodeInfo are what it reports)."""
    todo, report = plan(objects, phase)
    uids = {} if uids is None else uids  # the scenario's uid -> the new cluster's
    present = {(o.get("kind"), o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in todo}
    for (group, kind), crd in CRDS.items():
        if any(o.get("kind") == kind and o.get("apiVersion", "").startswith(group + "/") for o in todo):
            code, body = request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
            if code not in (201, 409):
                report.refused.append(f"CustomResourceDefinition {crd['metadata']['name']}: {code} {body}")
            deadline = time.monotonic() + wait_crd
            while time.monotonic() < deadline:
                code, body = request(
                    "GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
                )
                conds = (
                    {c.get("type"): c.get("status") for c in (body.get("status") or {}).get("conditions") or ()}
                    if isinstance(body, dict)
                    else {}
                )
                if conds.get("Established") == "True":
                    break
                time.sleep(0.2)
            report.count(report.created, "CustomResourceDefinition")
    pending_sa = service_accounts_named(objects) - {(ns, n) for (k, ns, n) in present if k == "ServiceAccount"}
    sa_done = False
    expected = expected_pods(objects)
    placed: dict[str, int] = {}
    for obj in todo:
        kind = obj.get("kind", "")
        if not sa_done and kind != "Namespace":
            # Namespaces are made (they sort first): the service accounts pods will name can be made now.
            for ns, name in sorted(pending_sa):
                request(
                    "POST",
                    f"/api/v1/namespaces/{ns}/serviceaccounts",
                    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": ns}},
                )
            sa_done = True
        body = _clean(obj)
        refs = []
        for ref in body["metadata"].get("ownerReferences") or ():
            new = uids.get(ref.get("uid", ""))
            if new:
                refs.append({**ref, "uid": new})
            else:
                report.dropped_owner_refs.append(
                    f"{kind} {body['metadata'].get('namespace', '')}/{body['metadata']['name']} → "
                    f"{ref.get('kind')} {ref.get('name')}"
                )
        if refs:
            body["metadata"]["ownerReferences"] = refs
        else:
            body["metadata"].pop("ownerReferences", None)
        code, created = request("POST", _path(body), body)
        if code == 409:
            code, created = request("GET", _path(body, body["metadata"]["name"]))
        if code not in (200, 201):
            msg = created.get("message") if isinstance(created, dict) else str(created)[:200]
            report.refused.append(
                f"{kind} {body['metadata'].get('namespace', '')}/{body['metadata']['name']}: {code} {msg}"
            )
            continue
        report.count(report.created, kind)
        if phase == "workloads" and kind != "ResourceClaim":
            # One workload at a time: its pods scheduled (or refused) before the next one's compete for GPUs.
            ns = body["metadata"].get("namespace") or "default"
            placed[ns] = placed.get(ns, 0) + expected.get(obj["metadata"].get("uid", ""), 1 if kind == "Pod" else 0)
            _pods_decided(request, ns, placed[ns], pod_timeout)
        if obj["metadata"].get("uid") and isinstance(created, dict):
            uids[obj["metadata"]["uid"]] = created["metadata"]["uid"]
        if kind == "Node" and obj.get("status") and body["metadata"]["name"] not in kubelet_nodes:
            # A merge patch, not a PUT: the node lifecycle controller may already have tainted the new Node.
            code, out = request(
                "PATCH",
                _path(body, body["metadata"]["name"], "status"),
                {"status": copy.deepcopy(obj["status"])},
                content_type="application/merge-patch+json",
            )
            if code != 200:
                report.refused.append(
                    f"Node {body['metadata']['name']} status: {code} "
                    f"{out.get('message') if isinstance(out, dict) else out}"
                )
    return report
