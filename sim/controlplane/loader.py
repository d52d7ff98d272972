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

import asyncio
import dataclasses
import ssl
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import msgspec
from dragoman.fleet import backoff
from dragoman.sim import resources
from dragoman.sim.api.admission import service_accounts_named
from dragoman.sim.scenario import taint_added_now

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


def _copy(data: Any) -> Any:
    """A deep copy of JSON data, through msgspec: a tenth of copy.deepcopy's time, which was half the loader's CPU."""
    return msgspec.json.decode(msgspec.json.encode(data))


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
    out = _copy(obj)
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
    # The taint was added when the rule was made: here, now.
    return taint_added_now(out)


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


def _pods_decided(request: Request, namespace: str, want: int, timeout: float, stuck: set[str]) -> None:
    """Until `namespace` has `want` pods and the scheduler has decided each: bound, found unschedulable, or given a
    node it waits to bind to (nominatedNodeName: a device's binding conditions, allreduce). A pod the scheduler will
    not try is decided too, as nothing will change for it: one naming a claim that does not exist (eval-orphan), a
    template that does not exist, or a claim the resourceclaim controller was refused (dcgm-lab: its admin-access
    template, in a namespace without the label; the controller's FailedResourceClaimCreation event says so). A pod
    undecided at the timeout for another reason is not waited for again (it joins `stuck`). Before, each of these cost
    every later workload of its namespace the whole timeout: eight times 20 s of the demo's dra-lab, 160 of a real
    start's 170 s."""
    deadline = time.monotonic() + timeout
    undecided: list[dict] = []
    while time.monotonic() < deadline:
        code, body = request("GET", f"/api/v1/namespaces/{namespace}/pods")
        have = _names(request, f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims")
        templates = _names(request, f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaimtemplates")
        refused = _refused_claims(request, namespace)
        if code == 200:
            pods = body.get("items") or []
            undecided = [
                p for p in pods if p["metadata"]["name"] not in stuck and not _decided(p, have, templates, refused)
            ]
            if len(pods) >= want and not undecided:
                return
        time.sleep(0.25)
    stuck.update(p["metadata"]["name"] for p in undecided)


def _names(request: Request, path: str) -> set[str] | None:
    code, body = request("GET", path)
    return {o["metadata"]["name"] for o in body.get("items") or ()} if code == 200 and isinstance(body, dict) else None


def _refused_claims(request: Request, namespace: str) -> set[str]:
    """The pods whose claim the resourceclaim controller could not make (its FailedResourceClaimCreation event)."""
    code, body = request(
        "GET", f"/api/v1/namespaces/{namespace}/events?fieldSelector=reason%3DFailedResourceClaimCreation"
    )
    if code != 200 or not isinstance(body, dict):
        return set()
    return {(e.get("involvedObject") or {}).get("name", "") for e in body.get("items") or ()}


def _decided(
    pod: dict, claims: set[str] | None, templates: set[str] | None, refused: frozenset | set = frozenset()
) -> bool:
    status = pod.get("status") or {}
    if pod["metadata"]["name"] in refused:
        return True
    if pod["spec"].get("nodeName") or status.get("nominatedNodeName"):
        return True
    if any(c.get("type") == "PodScheduled" and c.get("status") == "False" for c in status.get("conditions") or ()):
        return True
    # A claim named directly that is not there, or a template that is not there to make one: the scheduler will not
    # try the pod until they are (nothing to wait for).
    for ref in pod["spec"].get("resourceClaims") or ():
        if claims is not None and ref.get("resourceClaimName") and ref["resourceClaimName"] not in claims:
            return True
        if (
            templates is not None
            and ref.get("resourceClaimTemplateName")
            and ref["resourceClaimTemplateName"] not in templates
        ):
            return True
    return False


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
    stuck: dict[str, set[str]] = {}  # namespace -> pods a wait has already given up on
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
        if code == 422 and ADMIN_ACCESS_REFUSED in str(created):
            code, created = _create_admin_access(request, body)
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
            _pods_decided(request, ns, placed[ns], pod_timeout, stuck.setdefault(ns, set()))
        if obj["metadata"].get("uid") and isinstance(created, dict):
            uids[obj["metadata"]["uid"]] = created["metadata"]["uid"]
        if kind == "Node" and obj.get("status") and body["metadata"]["name"] not in kubelet_nodes:
            # A merge patch, not a PUT: the node lifecycle controller may already have tainted the new Node.
            code, out = request(
                "PATCH",
                _path(body, body["metadata"]["name"], "status"),
                {"status": _copy(obj["status"])},
                content_type="application/merge-patch+json",
            )
            if code != 200:
                report.refused.append(
                    f"Node {body['metadata']['name']} status: {code} "
                    f"{out.get('message') if isinstance(out, dict) else out}"
                )
    return report


# What kube-apiserver says of a claim (or template) asking for admin access in a namespace without the label
# (pkg/registry/resource/utils.go AuthorizedForAdmin, at create only: the spec is immutable).
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
ADMIN_ACCESS_REFUSED = f"admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label"


def _create_admin_access(request: Request, body: dict) -> tuple[int, Any]:
    """A scenario's admin-access claim or template in a namespace without the label was made while the namespace had
    it (the API server checks only at create): made so again, the label set for the create and taken off after. The
    story that follows is the real one: the resourceclaim controller's claims from that template are refused."""
    ns = body["metadata"].get("namespace", "")
    path = f"/api/v1/namespaces/{ns}"
    merge = "application/merge-patch+json"
    code, out = request("PATCH", path, {"metadata": {"labels": {ADMIN_ACCESS_LABEL: "true"}}}, content_type=merge)
    if code != 200:
        return code, out
    try:
        return request("POST", _path(body), body)
    finally:
        request("PATCH", path, {"metadata": {"labels": {ADMIN_ACCESS_LABEL: None}}}, content_type=merge)


# ------------------------------------------------------------------------------------------------ a settled fleet, fast
#
# `load` above replays how a cluster came to be (pods unbound, one workload at a time, so the real scheduler decides
# them in the scenario's order): right for a demo of 30 nodes, hours for the envelope. A generated fleet at scale (the
# scale scenario, the envelope: every pod already placed, its status known) is loaded as its picture instead, at the
# speed of the API server: every object of a stage created with many requests in flight, statuses written per kind
# after their objects, and what a controller would have made (a Deployment's ReplicaSets, every workload's pods, the
# scheduler's bridge claims) made as that controller had made it, while kube-scheduler and the controllers are held
# (ControlPlane(hold=HOLD_ALL)) so none of them acts on half a picture, and none spends the machine's CPU on events the
# restart at release() lists again (measured at 0.05 of the envelope: 7.1 → 5.1 ms of CPU per object, every process).
# Released afterwards they find their children there, owned and counted, and write only their own status.

# Requests in flight. More than keeps the two cores busy: with more writes arriving together each costs less CPU,
# etcd's share falling most (likely more writes per commit batch). A tenth of the
# envelope (17,010 objects) on kube-apiserver v1.37.2, 2026-12-06, runs alternating at load 6-7: 48 in flight
# 7.59 / 7.54 / 6.63 ms of CPU per object across every process (etcd 1.10 / 1.11 / 0.99), 128 and 256 in flight
# 7.36 / 6.00 / 6.01 (etcd 0.93 / 0.80 / 0.69). The admin the loader writes as is exempt from priority and fairness.
IN_FLIGHT = 256
# Asked of every write of a settled load: kube-apiserver then decodes the body with its plain decoder, not the strict
# one that looks for unknown and duplicate fields to warn of (the default, Warn, whose warnings a loader never reads;
# the bodies are made from a generated picture).
FIELD_VALIDATION = "fieldValidation=Ignore"
# Kinds whose status a settled fleet carries and no held controller (or kubelet) writes during the load, written
# after the create (their create strategies drop a status sent with it).
_STATUS_KINDS = frozenset({"Pod", "ResourceClaim", "Job"})
# Kinds whose create keeps the status sent with it: a Node (a kubelet registers its node with capacity, conditions and
# nodeInfo). No second write.
_CREATED_WITH_STATUS = frozenset({"Node"})
# What the DaemonSet controller stamps on each pod it makes: the DaemonSet's generation (1 for one just created).
# Without it the controller takes the pod for an old revision and rolls it.
_DS_GENERATION_LABEL = "pod-template-generation"


class Throttled(Exception):
    """A write the server asked to be sent again (429 from priority and fairness, or a 5xx / broken connection)."""

    def __init__(self, code: int, hint: str | None) -> None:
        super().__init__(f"HTTP {code}")
        self.code = code
        self.hint = hint


@dataclasses.dataclass
class WriteStats:
    requests: int = 0
    throttled: int = 0  # 429s: the API server's priority and fairness said "not now"
    retried: int = 0  # other retries (5xx, connection broken)
    refused: list[str] = dataclasses.field(default_factory=list)


class Writer:
    """Writes to one API server with up to `in_flight` requests at once over kept-alive connections. A 429 (priority
    and fairness) is sent again after the server's Retry-After, a 5xx or a broken connection after a growing jittered
    wait (fleet/backoff: one rule for every retry); a write refused for good is recorded, not raised."""

    def __init__(self, url: str, token: str, ca_pem: bytes | None, *, in_flight: int = IN_FLIGHT, attempts: int = 10):
        self.url = url.rstrip("/")
        self.in_flight = max(1, in_flight)
        self.attempts = attempts
        self._token = token
        self._ca = ca_pem
        self.stats = WriteStats()
        self.session: Any = None

    async def __aenter__(self) -> Writer:
        ctx = ssl.create_default_context(cadata=self._ca.decode()) if self._ca else ssl.create_default_context()
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=self.in_flight, ssl=ctx),
            headers={"Authorization": f"Bearer {self._token}", "Accept": "application/json"},
            timeout=aiohttp.ClientTimeout(total=300),
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.session.close()

    async def send(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        *,
        answer: Any = Any,
    ) -> tuple[int, Any]:
        """(code, answer) of the request's last try; 429, 5xx and broken connections are tried again. `answer`: the
        msgspec type to decode a success into (Any: plain JSON), or None when it is not needed — the server then
        answers in protobuf, which costs it less than JSON, and it is not decoded."""
        data = msgspec.json.encode(body) if body is not None else None
        headers = {"Content-Type": content_type} if data is not None else {}
        if answer is None:
            headers["Accept"] = "application/vnd.kubernetes.protobuf, application/json"

        async def attempt(n: int) -> tuple[int, Any]:
            self.stats.requests += 1
            try:
                async with self.session.request(method, self.url + path, data=data, headers=headers) as resp:
                    raw = await resp.read()
                    if resp.status == 429 or resp.status in (500, 502, 503, 504):
                        raise Throttled(resp.status, resp.headers.get("Retry-After"))
                    code = resp.status
                    json_answer = resp.content_type == "application/json"
            except (TimeoutError, aiohttp.ClientError) as exc:
                raise Throttled(0, None) from exc
            if code < 300 and answer is None:
                return code, None
            if not json_answer:
                return code, raw[:300].decode(errors="replace")
            try:
                return code, msgspec.json.decode(raw, type=answer if code < 300 else Any) if raw else None
            except (msgspec.DecodeError, msgspec.ValidationError):
                return code, raw.decode(errors="replace")[:300]

        def wait(exc: BaseException, n: int) -> float:
            if isinstance(exc, Throttled) and exc.code == 429:
                self.stats.throttled += 1
            else:
                self.stats.retried += 1
            return backoff.server_delay(getattr(exc, "hint", None), backoff.delay(n, 0.1, 3.0, jitter=True))

        try:
            return await backoff.retrying(
                attempt, attempts=self.attempts, retryable=lambda e: isinstance(e, Throttled), wait=wait
            )
        except Throttled as exc:
            return exc.code, None

    async def each(self, items: list, fn: Callable[[Any], Any]) -> None:
        """`await fn(item)` for every item, `in_flight` at a time."""
        it = iter(items)

        async def worker() -> None:
            for item in it:
                await fn(item)

        await asyncio.gather(*(worker() for _ in range(min(self.in_flight, len(items)) or 1)))

    def refuse(self, what: str, code: int, answer: Any) -> None:
        msg = answer.get("message") if isinstance(answer, dict) else str(answer)[:200]
        self.stats.refused.append(f"{what}: {code} {msg}")


class _Meta(msgspec.Struct):
    uid: str = ""


class Created(msgspec.Struct):
    """What a loader reads of a create's answer: the new uid (decoding the whole object would cost more than the
    request)."""

    metadata: _Meta = msgspec.field(default_factory=_Meta)


@dataclasses.dataclass
class SettledReport:
    created: dict[str, int] = dataclasses.field(default_factory=dict)
    statuses: dict[str, int] = dataclasses.field(default_factory=dict)
    stages: list[tuple[str, int, float]] = dataclasses.field(default_factory=list)  # (stage, writes, seconds)
    stats: WriteStats = dataclasses.field(default_factory=WriteStats)
    seconds: float = 0.0

    @property
    def objects(self) -> int:
        return sum(self.created.values())


# Stages of a settled load, in order: what a stage's objects refer to (owners, namespaces, nodes) is made earlier.
SETTLED_STAGES = (
    ("namespaces", ("Namespace",)),
    ("cluster objects", ("CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "DeviceClass")),
    ("namespaced objects", ("Role", "RoleBinding", "ServiceAccount", "ConfigMap", "ResourceQuota")),
    ("classes and templates", ("ResourceClaimTemplate", "PodDisruptionBudget")),
    ("nodes", ("Node",)),
    ("resource slices", ("ResourceSlice",)),
    ("workloads", ("DaemonSet", "Deployment", "StatefulSet", "Job", "CronJob")),
    ("replica sets", ("ReplicaSet",)),
    ("pods", ("Pod",)),
    ("claims", ("ResourceClaim",)),
)


def _settled_metadata(md: dict, kind: str | None, uids: dict[str, str]) -> dict:
    """A settled object's metadata as it is created (and sent again with its status, since the pod, node and Job
    status strategies take labels and annotations from the request): server fields dropped, owner references (and
    a Job's pod labels) re-pointed to the new cluster's uids, a DaemonSet pod stamped with its generation."""
    md = _copy(md)
    for f in _SERVER_FIELDS:
        md.pop(f, None)
    md.pop("generateName", None)
    refs = [{**r, "uid": uids[r.get("uid", "")]} for r in md.get("ownerReferences") or () if r.get("uid", "") in uids]
    if refs:
        md["ownerReferences"] = refs
    else:
        md.pop("ownerReferences", None)
    if kind == "Pod":
        labels = md.get("labels") or {}
        for key in ("controller-uid", "batch.kubernetes.io/controller-uid"):
            if labels.get(key) in uids:
                labels[key] = uids[labels[key]]
        if any(r.get("kind") == "DaemonSet" for r in refs):
            md.setdefault("labels", {})[_DS_GENERATION_LABEL] = "1"
    return md


def settled_body(obj: dict, uids: dict[str, str]) -> dict:
    """The create body of one object of a settled picture: a pod left on its node, metadata as _settled_metadata."""
    kind = obj.get("kind")
    body = _clean({k: v for k, v in obj.items() if k not in ("metadata", "status")} | {"metadata": {"name": ""}})
    body["metadata"] = _settled_metadata(obj["metadata"], kind, uids)
    if kind == "Pod" and (obj.get("spec") or {}).get("nodeName"):
        body["spec"]["nodeName"] = obj["spec"]["nodeName"]
    template = ((body.get("spec") or {}).get("template") or {}).get("spec")
    if isinstance(template, dict):
        # A picture's template may carry the mount of the service-account volume its pods were given at admission;
        # the API server refuses a template that mounts a volume it does not declare.
        declared = {v.get("name") for v in template.get("volumes") or ()}
        for c in template.get("containers") or ():
            if c.get("volumeMounts"):
                c["volumeMounts"] = [m for m in c["volumeMounts"] if m.get("name") in declared]
    return body


def _settled_status(obj: dict, uids: dict[str, str]) -> dict:
    status = _copy(obj.get("status") or {})
    if obj.get("kind") == "ResourceClaim":
        for ref in status.get("reservedFor") or ():
            ref["uid"] = uids.get(ref.get("uid", ""), ref.get("uid", ""))
    if obj.get("kind") == "Job":
        conds = status.get("conditions") or []
        # The API server refuses Complete without SuccessCriteriaMet (and Failed without FailureTarget) since 1.31:
        # the Job controller sets the first, then the second; a picture of a finished Job carries both.
        types = {c.get("type") for c in conds if c.get("status") == "True"}
        for final, first in (("Complete", "SuccessCriteriaMet"), ("Failed", "FailureTarget")):
            if final in types and first not in types:
                done = next(c for c in conds if c.get("type") == final)
                conds.insert(0, {**done, "type": first})
        if conds:
            status["conditions"] = conds
    return status


async def load_settled(
    writer: Writer,
    objects: list[dict],
    *,
    progress: Callable[[str, int, float], None] | None = None,
) -> SettledReport:
    """Create a settled fleet (pods on their nodes, statuses as pictured) through `writer`; the scheduler and the
    controllers should be held meanwhile (ControlPlane(hold=HOLD_ALL)). Creates of one stage go out together, then
    that stage's statuses."""
    report = SettledReport(stats=writer.stats)
    uids: dict[str, str] = {}
    by_kind: dict[str, list[dict]] = {}
    for obj in objects:
        kind = obj.get("kind", "")
        if kind in SKIP_KINDS:
            continue
        by_kind.setdefault(kind, []).append(obj)
    staged = {k for _, kinds in SETTLED_STAGES for k in kinds}
    rest = sorted(k for k in by_kind if k not in staged)
    stages = [*SETTLED_STAGES[:4], ("other kinds", tuple(rest)), *SETTLED_STAGES[4:]]
    t_all = time.perf_counter()

    # Each object's metadata as created, sent again with its status (computed once).
    metadata: dict[int, dict] = {}

    async def create(obj: dict) -> None:
        kind = obj["kind"]
        body = settled_body(obj, uids)
        if kind in _STATUS_KINDS and obj.get("status"):
            metadata[id(obj)] = body["metadata"]
        if kind in _CREATED_WITH_STATUS and obj.get("status"):
            body["status"] = _settled_status(obj, uids)
        name = f"{kind} {body['metadata'].get('namespace', '')}/{body['metadata']['name']}"
        code, out = await writer.send("POST", f"{_path(body)}?{FIELD_VALIDATION}", body, answer=Created)
        if code == 409 and kind in ("Namespace", "ServiceAccount"):
            code, out = await writer.send("GET", _path(body, body["metadata"]["name"]), answer=Created)
        if code not in (200, 201) or not isinstance(out, Created):
            writer.refuse(name, code, out)
            return
        report.created[kind] = report.created.get(kind, 0) + 1
        if obj["metadata"].get("uid"):
            uids[obj["metadata"]["uid"]] = out.metadata.uid

    async def status(obj: dict) -> None:
        kind = obj["kind"]
        md = obj["metadata"]
        if md.get("uid") not in uids:
            return  # not created: its refusal is recorded already
        # A PUT of metadata and status, unconditional (no resourceVersion: these kinds allow it): the status strategy
        # keeps the stored spec. Cheaper for the server than a merge patch, which re-encodes the stored object
        # to apply the patch to it.
        meta = metadata.pop(id(obj), None) or _settled_metadata(md, kind, uids)
        body = {"apiVersion": obj["apiVersion"], "kind": kind, "metadata": meta, "status": _settled_status(obj, uids)}
        code, out = await writer.send(
            "PUT", f"{_path(obj, md['name'], 'status')}?{FIELD_VALIDATION}", body, answer=None
        )
        if code != 200:
            writer.refuse(f"{kind} {md.get('namespace', '')}/{md['name']} status", code, out)
            return
        report.statuses[kind] = report.statuses.get(kind, 0) + 1

    async def taints(obj: dict) -> None:
        # Admission (TaintNodesByCondition) puts the not-ready taint on every node created; the node lifecycle
        # controller lifts it once it sees the node Ready. That controller is held while the fleet loads
        # (HOLD_ALL), so the taints are set as pictured here, as it would have left them.
        name = obj["metadata"]["name"]
        if obj["metadata"].get("uid") not in uids:
            return
        patch = {"spec": {"taints": (obj.get("spec") or {}).get("taints") or None}}
        code, out = await writer.send(
            "PATCH", f"{_path(obj, name)}?{FIELD_VALIDATION}", patch, "application/merge-patch+json", answer=None
        )
        if code != 200:
            writer.refuse(f"Node {name} taints", code, out)

    for stage, kinds in stages:
        todo = [o for k in kinds for o in by_kind.get(k, ())]
        if not todo:
            continue
        t = time.perf_counter()
        sent = writer.stats.requests
        await writer.each(todo, create)
        if stage == "namespaces":
            # The ServiceAccount admission plugin refuses a pod whose account does not exist; the controller that
            # makes each namespace's `default` may be slower than this load, so they are made here (a 409 is fine).
            accounts = {(o["metadata"]["name"], "default") for o in todo} | service_accounts_named(objects)
            await writer.each(
                sorted(accounts),
                lambda a: create(
                    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"namespace": a[0], "name": a[1]}}
                ),
            )
        with_status = [o for o in todo if o["kind"] in _STATUS_KINDS and o.get("status")]
        await writer.each(with_status, status)
        await writer.each([o for o in todo if o["kind"] == "Node"], taints)
        took = time.perf_counter() - t
        report.stages.append((stage, writer.stats.requests - sent, took))
        if progress is not None:
            progress(stage, writer.stats.requests - sent, took)
    report.seconds = time.perf_counter() - t_all
    return report
