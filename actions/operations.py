"""Every write a step makes, as one protocol, and the one door they go through.

An Operation reads the object as it is now, knows its target (the part of the object it sets), renders the preview
the operator confirms (a Change: before, after, the kubectl line), builds the request from that same target, says
whether it landed, and gives its inverse. One class per kind of write: Schedulable (cordon, uncordon), Evict,
NodeLabel, NodeAnnotation, WorkloadAffinity, DeviceClassWrite, HelmRelease, CreateObject, DeleteObject, ApplyObject;
GitOpsWait is the write dragoman leaves to a GitOps source and only waits for.

`send` and `write_once` are the only places a step's write reaches the cluster: read-only refuses there, the
server-side dry run, the audit intent before and the outcome after, the retry after a conflict or a lost answer,
and the reuse of an intent a crash left open all happen there. `bookkeep` is the door for the unaudited migration
annotation (a note for the Pools view, not a change of the node's behaviour).

A plan file holds each operation as its preview (a Change); `decode` turns a Change back into the operation, so a
plan applied from a file, a rollback record and a fresh plan send the same thing.
"""

from __future__ import annotations

import abc
import dataclasses
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from dragoman.actions import helm
from dragoman.actions.steps import (
    WRITE_ATTEMPTS,
    Change,
    Context,
    backoff,
    retryable,
    uncertain,
)
from dragoman.fleet.backoff import retrying
from dragoman.fleet.cluster import ApiError
from dragoman.fleet.errors import ReadOnlyError
from dragoman.fleet.k8s import registry

if TYPE_CHECKING:
    from dragoman.actions.audit import AuditLog
    from dragoman.fleet.cluster import Cluster

MERGE = "application/merge-patch+json"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
DRY_RUN = {"dryRun": "All"}
CLASSES = registry.of_kind("DeviceClass").path()


def copy(v: Any) -> Any:
    return json.loads(json.dumps(v))


def same(a: Any, b: Any) -> bool:
    """Equal as JSON (key order aside): how a target is compared with what the cluster shows."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


async def get_or_none(cluster: Cluster, path: str) -> dict | None:
    try:
        return await cluster.get(path)
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise


def node_path(name: str) -> str:
    return registry.of_kind("Node").path(name=name)


def _rv(obj: dict | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")


def with_rv(patch: dict, obj: dict | None) -> dict:
    """`patch` with the object's resourceVersion first in its metadata: a node or DaemonSet that changed since it was
    read (a heartbeat) answers 409, and the write is built again from a fresh read."""
    md = {"resourceVersion": _rv(obj), **(patch.get("metadata") or {})}
    return {"metadata": md, **{k: v for k, v in patch.items() if k != "metadata"}}


# ---------------------------------------------------------------- requests: what is sent


class Request(abc.ABC):
    """One write as it goes out; `send(cluster, dry=True)` is its server-side dry run."""

    @abc.abstractmethod
    async def send(self, cluster: Cluster, dry: bool) -> Any: ...


@dataclasses.dataclass(frozen=True)
class HttpWrite(Request):
    method: str
    path: str
    body: Any = None
    content_type: str | None = None
    retry: bool | None = None  # None: the client's default (a write is not asked twice)
    missing_ok: bool = False  # a DELETE that finds the object gone is done

    async def send(self, cluster: Cluster, dry: bool) -> Any:
        kw: dict[str, Any] = {"query": DRY_RUN if dry else None}
        if self.content_type is not None:
            kw["content_type"] = self.content_type
        if self.retry is not None:
            kw["retry"] = self.retry
        try:
            return await cluster.request(self.method, self.path, self.body, **kw)
        except ApiError as exc:
            if self.missing_ok and exc.status == 404:
                return None
            raise


@dataclasses.dataclass(frozen=True)
class HelmRun(Request):
    args: tuple[str, ...]
    values_path: str = ""  # written with values_json just before helm runs: a plan alone writes no file
    values_json: str = ""

    async def send(self, cluster: Cluster, dry: bool) -> Any:
        if self.values_path:
            helm.write_values(self.values_path, json.loads(self.values_json))
        return await helm.run(list(self.args) + (["--dry-run=server"] if dry else []))


# ---------------------------------------------------------------- the protocol


class Operation(abc.ABC):
    """One write: read, target, preview, request, landed, inverse."""

    op: ClassVar[str] = ""  # its name in a plan file (the preview's detail.op)
    sends: ClassVar[bool] = True  # False: dragoman waits for someone else to make it (GitOps)
    kind: ClassVar[str] = ""

    # Every kind has these (a field, or fixed with init=False): the object written and the verb the audit records.
    name: str
    namespace: str
    verb: str

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}" if self.namespace else f"{self.kind}/{self.name}"

    def key(self, plan_id: str, step_id: str) -> str:
        """The write's key in the audit log: the same across retries and resumes of one plan."""
        return f"{plan_id}/{step_id}/{self.ref}"

    @abc.abstractmethod
    async def read(self, cluster: Cluster) -> Any:
        """The object as the cluster shows it now (None when absent)."""

    @abc.abstractmethod
    def part(self, obj: Any) -> Any:
        """The part of `obj` (as `read` returns it) this operation sets, in the shape of `target()`."""

    @abc.abstractmethod
    def target(self) -> Any:
        """That part once the write landed: what the preview shows and the request carries."""

    @abc.abstractmethod
    def request(self, cluster: Cluster, obj: Any) -> Request:
        """The write, built from `target()` and the object as read (its resourceVersion)."""

    @abc.abstractmethod
    def preview(self) -> Change:
        """What the plan shows, the operator confirms and a plan file keeps (`decode` reads it back)."""

    def record(self) -> Change:
        """What the audit log's intent and outcome say about the write; the preview unless a kind says more."""
        return self.preview()

    def inverse(self) -> Operation | None:
        """The operation that undoes this one (recorded before the write, for rollback); None when it cannot be."""
        return None

    def done(self, obj: Any) -> bool:
        return same(self.part(obj), self.target())

    async def landed(self, cluster: Cluster) -> bool:
        """Whether the cluster shows the write made (verification, a rollback's skip, a resume's close)."""
        return self.done(await self.read(cluster))


# ---------------------------------------------------------------- schedulable: cordon and uncordon


@dataclasses.dataclass
class Schedulable(Operation):
    """`spec.unschedulable` of a node; the migration annotation (bookkeeping) rides in the same patch."""

    kind: ClassVar[str] = "Node"
    op: ClassVar[str] = "schedulable"

    name: str
    unschedulable: bool
    was: bool
    annotations: dict[str, str] = dataclasses.field(default_factory=dict)
    namespace: str = dataclasses.field(default="", init=False)
    verb: str = dataclasses.field(default="patch", init=False)

    async def read(self, cluster: Cluster) -> dict:
        return await cluster.get(node_path(self.name))  # a node gone under a cordon is an error, not a no-op

    def part(self, obj: Any) -> dict:
        return {"spec": {"unschedulable": bool(((obj or {}).get("spec") or {}).get("unschedulable"))}}

    def target(self) -> dict:
        return {"spec": {"unschedulable": self.unschedulable}}

    def request(self, cluster: Cluster, obj: Any) -> Request:
        patch = (
            {"metadata": {"annotations": dict(self.annotations)}, **self.target()}
            if self.annotations
            else self.target()
        )
        return HttpWrite("PATCH", node_path(self.name), with_rv(patch, obj), content_type=MERGE)

    def preview(self) -> Change:
        word = "cordon" if self.unschedulable else "uncordon"
        return Change(
            "Node",
            self.name,
            before={"spec": {"unschedulable": self.was}},
            after=self.target(),
            command=f"kubectl {word} {self.name}",
        )

    def inverse(self) -> Schedulable:
        return Schedulable(self.name, self.was, self.unschedulable)

    @classmethod
    def of_node(cls, node: dict, unschedulable: bool) -> Schedulable:
        return cls(node["metadata"]["name"], unschedulable, bool((node.get("spec") or {}).get("unschedulable")))

    @classmethod
    def from_change(cls, c: Change) -> Schedulable:
        return cls(
            c.name,
            bool(((c.after or {}).get("spec") or {}).get("unschedulable")),
            bool(((c.before or {}).get("spec") or {}).get("unschedulable")),
        )


# ---------------------------------------------------------------- evict (or delete) a pod


@dataclasses.dataclass
class Evict(Operation):
    """A pod through the Eviction API (PDB-aware), or deleted when the operator named it with --force-pod; the uid
    precondition makes a pod recreated under the same name another pod, never evicted by mistake."""

    kind: ClassVar[str] = "Pod"
    op: ClassVar[str] = "evict"

    name: str
    namespace: str
    uid: str | None
    node: str
    forced: bool = False
    phase: str | None = None
    owner: str = ""
    pdb: str = ""
    grace: Any = 30
    gpus: int = 0

    @property
    def verb(self) -> str:  # type: ignore[override]
        return "delete" if self.forced else "evict"

    @property
    def path(self) -> str:
        return registry.of_kind("Pod").path(self.namespace, self.name)

    def key(self, plan_id: str, step_id: str) -> str:
        return f"{plan_id}/{step_id}/Pod/{self.namespace}/{self.name}/{self.uid}"

    async def read(self, cluster: Cluster) -> dict | None:
        """The pod, or None when it is gone or another pod has its name now."""
        cur = await get_or_none(cluster, self.path)
        return cur if cur is not None and (cur.get("metadata") or {}).get("uid") == self.uid else None

    def part(self, obj: Any) -> dict:
        return {"gone": obj is None or bool((obj.get("metadata") or {}).get("deletionTimestamp"))}

    def target(self) -> dict:
        return {"gone": True}

    def request(self, cluster: Cluster, obj: Any) -> Request:
        if self.forced:
            body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": self.uid}}
            return HttpWrite("DELETE", self.path, body)
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "deleteOptions": {"preconditions": {"uid": self.uid}},
        }
        return HttpWrite("POST", f"{self.path}/eviction", body)

    def preview(self) -> Change:
        cmd = (
            f"kubectl delete pod -n {self.namespace} {self.name}"
            if self.forced
            else f"kubectl drain {self.node} --ignore-daemonsets --delete-emptydir-data --pod-selector=<{self.name}>"
        )
        detail = {
            "node": self.node,
            "uid": self.uid,
            "owner": self.owner,
            "pdb": self.pdb,
            "gracePeriodSeconds": self.grace,
            "gpus": self.gpus,
            "forced": self.forced,
        }
        return Change("Pod", self.name, self.namespace, self.verb, command=cmd, detail=detail)

    def record(self) -> Change:
        # The audit log keeps the pod as it was when the eviction went out (uid, node, phase).
        cmd = (
            f"kubectl delete pod -n {self.namespace} {self.name}"
            if self.forced
            else f"kubectl drain {self.node} --ignore-daemonsets --pod-selector=<{self.name}>"
        )
        return Change(
            "Pod",
            self.name,
            self.namespace,
            self.verb,
            detail={"uid": self.uid},
            before={"uid": self.uid, "nodeName": self.node, "phase": self.phase},
            after={"evicted": not self.forced, "deleted": self.forced},
            command=cmd,
        )

    @classmethod
    def of_pod(cls, pod: dict, *, forced: bool, owner: str = "", pdb: str = "", gpus: int = 0) -> Evict:
        md = pod["metadata"]
        spec = pod.get("spec") or {}
        return cls(
            md["name"],
            md["namespace"],
            md.get("uid"),
            spec.get("nodeName", ""),
            forced=forced,
            phase=(pod.get("status") or {}).get("phase"),
            owner=owner,
            pdb=pdb,
            grace=spec.get("terminationGracePeriodSeconds", 30),
            gpus=gpus,
        )


# ---------------------------------------------------------------- node label and annotation


class GuardedMergePatch(Operation):
    """A write that is one merge patch of one object, guarded by the resourceVersion it was read at (a conflict means
    read again and recompute): read and request for every such operation, which names only its object's path."""

    @abc.abstractmethod
    def path(self) -> str: ...

    async def read(self, cluster: Cluster) -> dict | None:
        return await get_or_none(cluster, self.path())

    def request(self, cluster: Cluster, obj: Any) -> Request:
        return HttpWrite("PATCH", self.path(), with_rv(self.target(), obj), content_type=MERGE)


@dataclasses.dataclass
class NodeLabel(GuardedMergePatch):
    """One label of a node set (or removed, `new` None) with a merge patch guarded by the resourceVersion."""

    kind: ClassVar[str] = "Node"
    op: ClassVar[str] = "label"

    name: str
    key_: str
    old: str | None
    new: str | None
    namespace: str = dataclasses.field(default="", init=False)
    verb: str = dataclasses.field(default="patch", init=False)

    def path(self) -> str:
        return node_path(self.name)

    def part(self, obj: Any) -> dict:
        return {
            "metadata": {
                "labels": {self.key_: (((obj or {}).get("metadata") or {}).get("labels") or {}).get(self.key_)}
            }
        }

    def target(self) -> dict:
        return {"metadata": {"labels": {self.key_: self.new}}}

    def preview(self) -> Change:
        k, n = self.key_, self.name
        cmd = (
            f"kubectl label node {n} {k}={self.new} --overwrite"
            if self.new is not None
            else f"kubectl label node {n} {k}-"
        )
        return Change(
            "Node",
            n,
            before={"metadata": {"labels": {k: self.old}}},
            after=self.target(),
            command=cmd,
            detail={"op": self.op, "key": k, "value": self.new},
        )

    def inverse(self) -> NodeLabel:
        return NodeLabel(self.name, self.key_, self.new, self.old)

    @classmethod
    def from_change(cls, c: Change) -> NodeLabel:
        key = c.detail["key"]
        old = (((c.before or {}).get("metadata") or {}).get("labels") or {}).get(key)
        return cls(c.name, key, old, c.detail.get("value"))


@dataclasses.dataclass
class NodeAnnotation(Operation):
    """Dragoman's own note on a node (the migration annotation the Pools view shows): not audited, and the same
    value set twice is harmless, so the client may ask again after a 429 or 5xx."""

    kind: ClassVar[str] = "Node"
    op: ClassVar[str] = "annotation"

    name: str
    key_: str
    value: str
    namespace: str = dataclasses.field(default="", init=False)
    verb: str = dataclasses.field(default="patch", init=False)

    async def read(self, cluster: Cluster) -> dict | None:
        try:
            return await cluster.get(node_path(self.name))
        except ApiError:
            return None

    def part(self, obj: Any) -> dict:
        return {
            "metadata": {
                "annotations": {
                    self.key_: (((obj or {}).get("metadata") or {}).get("annotations") or {}).get(self.key_)
                }
            }
        }

    def target(self) -> dict:
        return {"metadata": {"annotations": {self.key_: self.value}}}

    def request(self, cluster: Cluster, obj: Any) -> Request:
        return HttpWrite("PATCH", node_path(self.name), self.target(), content_type=MERGE, retry=True)

    def preview(self) -> Change:
        return Change("Node", self.name, before=self.part(None), after=self.target())


# ---------------------------------------------------------------- workload node affinity


def ds_path(namespace: str, name: str) -> str:
    return registry.of_kind("DaemonSet").path(namespace, name)


def required_of(ds: dict | None) -> dict | None:
    """The required node affinity of a DaemonSet's pod template."""
    spec = ((((ds or {}).get("spec") or {}).get("template") or {}).get("spec")) or {}
    return ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(REQUIRED)


def term_text(term: dict) -> str:
    parts = [
        f"{e.get('key')} {e.get('operator')} [{', '.join(e.get('values') or [])}]".replace(" []", "")
        for e in term.get("matchExpressions") or []
    ]
    parts += [
        f"{e.get('key')} {e.get('operator')} [{', '.join(e.get('values') or [])}] (field)"
        for e in term.get("matchFields") or []
    ]
    return " && ".join(parts) or "(any node)"


def terms_view(required: dict | None) -> dict:
    """The required node affinity as one line per term: what the plan's diff shows."""
    if not required:
        return {"nodeSelectorTerms": None}
    return {"nodeSelectorTerms": {str(i): term_text(t) for i, t in enumerate(required.get("nodeSelectorTerms") or [])}}


@dataclasses.dataclass
class WorkloadAffinity(GuardedMergePatch):
    """A DaemonSet's required node affinity replaced by `required` (a merge patch guarded by the resourceVersion)."""

    kind: ClassVar[str] = "DaemonSet"
    op: ClassVar[str] = "affinity"

    name: str
    namespace: str
    required: dict | None
    original: dict | None
    why: str
    command: str = ""
    verb: str = dataclasses.field(default="patch", init=False)

    def __post_init__(self) -> None:
        if not self.command:
            patch = json.dumps(self.target(), separators=(",", ":"))
            self.command = f"kubectl patch daemonset -n {self.namespace} {self.name} --type=merge -p '{patch}'"

    def path(self) -> str:
        return ds_path(self.namespace, self.name)

    def part(self, obj: Any) -> dict:
        return self._patch(required_of(obj))

    @staticmethod
    def _patch(required: dict | None) -> dict:
        return {"spec": {"template": {"spec": {"affinity": {"nodeAffinity": {REQUIRED: required}}}}}}

    def target(self) -> dict:
        return self._patch(self.required)

    def preview(self) -> Change:
        return Change(
            "DaemonSet",
            self.name,
            self.namespace,
            before={"requiredNodeAffinity": terms_view(self.original)},
            after={"requiredNodeAffinity": terms_view(self.required)},
            command=self.command,
            detail={"op": self.op, "required": self.required, "original": self.original, "why": self.why},
        )

    def inverse(self) -> WorkloadAffinity:
        return WorkloadAffinity(
            self.name,
            self.namespace,
            self.original,
            self.required,
            "restore the original node affinity",
            f"kubectl patch daemonset -n {self.namespace} {self.name} --type=merge (the original node affinity)",
        )

    @classmethod
    def of_daemonset(cls, ds: dict, required: dict | None, why: str) -> WorkloadAffinity:
        md = ds["metadata"]
        return cls(md["name"], md["namespace"], required, required_of(ds), why)

    @classmethod
    def from_change(cls, c: Change) -> WorkloadAffinity:
        d = c.detail
        return cls(c.name, c.namespace, d.get("required"), d.get("original"), d.get("why", ""), c.command)


# ---------------------------------------------------------------- DeviceClass create, update, delete


@dataclasses.dataclass
class DeviceClassWrite(Operation):
    """A DeviceClass created (POST), replaced (PUT, the cluster's metadata kept) or deleted, after a dry run."""

    kind: ClassVar[str] = "DeviceClass"
    op: ClassVar[str] = "class"

    name: str
    verb: str  # create | update | delete
    body: dict  # the class as it will be (for a delete: as dragoman created it)
    was: dict | None  # {"spec": ...} of the class before, as the preview shows it
    why: str
    command: str = ""
    namespace: str = dataclasses.field(default="", init=False)

    def __post_init__(self) -> None:
        if not self.command:
            how = "create" if self.verb == "create" else "replace"
            self.command = f"kubectl {how} -f deviceclass-{self.name}.yaml  # the spec shown above"

    async def read(self, cluster: Cluster) -> dict | None:
        return await get_or_none(cluster, f"{CLASSES}/{self.name}")

    def part(self, obj: Any) -> dict | None:
        return None if obj is None else {"spec": obj.get("spec")}

    def target(self) -> dict | None:
        return None if self.verb == "delete" else {"spec": self.body.get("spec")}

    def request(self, cluster: Cluster, obj: Any) -> Request:
        if self.verb == "delete":
            return HttpWrite("DELETE", f"{CLASSES}/{self.name}")
        body = copy(self.body)
        if obj is None:
            body.get("metadata", {}).pop("resourceVersion", None)
            return HttpWrite("POST", CLASSES, body)
        # The cluster's metadata (uid, resourceVersion, what others put there) with our labels and annotations.
        mine = {k: v for k, v in (body.get("metadata") or {}).items() if k in ("labels", "annotations")}
        body["metadata"] = {**(obj.get("metadata") or {}), **mine, "resourceVersion": _rv(obj)}
        return HttpWrite("PUT", f"{CLASSES}/{self.name}", body)

    def preview(self) -> Change:
        return Change(
            "DeviceClass",
            self.name,
            verb=self.verb,
            before=self.was,
            after=self.target(),
            command=self.command,
            detail={"op": self.op, "body": self.body, "why": self.why},
        )

    def inverse(self) -> DeviceClassWrite:
        if self.verb == "create":
            return DeviceClassWrite(
                self.name,
                "delete",
                self.body,
                self.target(),
                "remove the class dragoman created",
                f"kubectl delete deviceclass {self.name}",
            )
        old_spec = (self.was or {}).get("spec")
        return DeviceClassWrite(
            self.name,
            "update",
            {**self.body, "spec": old_spec},
            self.target(),
            "restore the original class",
            f"kubectl replace deviceclass {self.name} (the original spec)",
        )

    @classmethod
    def to(cls, name: str, old: dict | None, body: dict, why: str) -> DeviceClassWrite:
        """The class `name` made exactly `body` (created when `old`, the class as it is, is None)."""
        return cls(
            name, "create" if old is None else "update", body, None if old is None else {"spec": old.get("spec")}, why
        )

    @classmethod
    def from_change(cls, c: Change) -> DeviceClassWrite:
        return cls(c.name, c.verb, c.detail.get("body") or {}, c.before, c.detail.get("why", ""), c.command)


# ---------------------------------------------------------------- helm


@dataclasses.dataclass
class HelmRelease(Operation):
    """`helm upgrade [--install]` of a release to exactly `values` (the installed chart and version), through a values
    file the operator can read; the preview shows the `shown` keys of the values."""

    kind: ClassVar[str] = "HelmRelease"
    op: ClassVar[str] = "helm"

    name: str
    namespace: str
    chart: str
    version: str
    values: dict
    old_values: dict
    install: bool = False
    shown: tuple[str, ...] = ()
    command: str = ""
    verb: str = dataclasses.field(default="upgrade", init=False)

    def __post_init__(self) -> None:
        self.verb = "install" if self.install else "upgrade"
        if not self.shown:
            self.shown = tuple(sorted(set(self.old_values) | set(self.values)))

    def _args(self, cluster: Cluster) -> list[str]:
        path = helm.values_path(self.name)  # written by HelmRun when the step runs, never while planning
        return helm.upgrade_args(
            cluster, self.name, self.namespace, self.chart, self.version, path, install=self.install
        )

    def with_command(self, cluster: Cluster) -> HelmRelease:
        self.command = helm.command_text(self._args(cluster))
        return self

    async def read(self, cluster: Cluster) -> dict:
        return await helm.get_values(cluster, self.name, self.namespace)

    def part(self, obj: Any) -> Any:
        return obj

    def target(self) -> dict:
        return self.values

    def request(self, cluster: Cluster, obj: Any) -> Request:
        # Rewritten each time it runs: the file always holds the target.
        return HelmRun(tuple(self._args(cluster)), helm.values_path(self.name), json.dumps(self.values))

    def preview(self) -> Change:
        return Change(
            "HelmRelease",
            self.name,
            self.namespace,
            verb=self.verb,
            before={"values": {k: self.old_values.get(k) for k in self.shown}},
            after={"values": {k: self.values.get(k) for k in self.shown}},
            command=self.command,
            detail={
                "op": self.op,
                "chart": self.chart,
                "version": self.version,
                "values": self.values,
                "install": self.install,
                "oldValues": self.old_values,
            },
        )

    def inverse(self) -> HelmRelease | None:
        if self.install:
            return None  # an install is undone with `helm uninstall`, named in the rollback notes, not run
        return HelmRelease(
            self.name,
            self.namespace,
            self.chart,
            self.version,
            self.old_values,
            self.values,
            shown=self.shown,
            command=self.command,  # the same values file, holding the old values when the inverse runs
        )

    @classmethod
    def from_change(cls, c: Change) -> HelmRelease:
        d = c.detail
        return cls(
            c.name,
            c.namespace,
            d["chart"],
            d["version"],
            d.get("values") or {},
            d.get("oldValues") or {},
            install=bool(d.get("install")),
            shown=tuple(((c.after or {}).get("values") or {}).keys()),
            command=c.command,
        )


# ---------------------------------------------------------------- GitOps: dragoman waits


@dataclasses.dataclass
class GitOpsWait(Operation):
    """A change only the GitOps source may make: shown, never sent; the step's verification waits for it."""

    op: ClassVar[str] = "gitops"
    sends: ClassVar[bool] = False

    kind_: str
    namespace: str
    name: str
    owner: str
    text: str
    verb: str = dataclasses.field(default="wait", init=False)

    @property
    def ref(self) -> str:
        return f"{self.kind_}/{self.namespace}/{self.name}" if self.namespace else f"{self.kind_}/{self.name}"

    async def read(self, cluster: Cluster) -> None:
        return None

    def part(self, obj: Any) -> None:
        return None

    def target(self) -> None:
        return None

    def request(self, cluster: Cluster, obj: Any) -> Request:
        raise ReadOnlyError(f"{self.ref} (managed by {self.owner})")

    def preview(self) -> Change:
        return Change(
            self.kind_,
            self.name,
            self.namespace,
            verb="wait",
            command=f"# in {self.owner}: {self.text}",
            detail={"op": self.op, "owner": self.owner, "text": self.text},
        )

    @classmethod
    def from_change(cls, c: Change) -> GitOpsWait:
        return cls(c.kind, c.namespace, c.name, c.detail.get("owner", ""), c.detail.get("text", ""))


# ---------------------------------------------------------------- whole objects: create, delete, apply


@dataclasses.dataclass
class CreateObject(Operation):
    """An object created when absent (the verify step's canary pod); one there already is the write made."""

    op: ClassVar[str] = "create"

    body: dict
    collection: str
    shown: Any = None  # the preview's `after`
    command: str = ""
    key_suffix: str = ""  # the audit key's last part instead of the ref
    name: str = dataclasses.field(default="", init=False)
    namespace: str = dataclasses.field(default="", init=False)
    verb: str = dataclasses.field(default="create", init=False)

    def __post_init__(self) -> None:
        md = self.body.get("metadata") or {}
        self.name, self.namespace = md.get("name", ""), md.get("namespace", "")

    @property
    def ref(self) -> str:
        k = self.body.get("kind", "")
        return f"{k}/{self.namespace}/{self.name}" if self.namespace else f"{k}/{self.name}"

    def key(self, plan_id: str, step_id: str) -> str:
        return f"{plan_id}/{step_id}/{self.key_suffix or self.ref}"

    async def read(self, cluster: Cluster) -> dict | None:
        return await get_or_none(cluster, f"{self.collection}/{self.name}")

    def part(self, obj: Any) -> bool:
        return obj is not None

    def target(self) -> bool:
        return True

    def request(self, cluster: Cluster, obj: Any) -> Request:
        return HttpWrite("POST", self.collection, self.body)

    def preview(self) -> Change:
        return Change(
            self.body.get("kind", ""), self.name, self.namespace, verb="create", after=self.shown, command=self.command
        )

    def inverse(self) -> DeleteObject:
        return DeleteObject(self.body.get("kind", ""), self.name, self.namespace, self.collection)


@dataclasses.dataclass
class DeleteObject(Operation):
    """An object deleted at once (grace 0); one already gone is the write made."""

    op: ClassVar[str] = "delete"

    kind_: str
    name: str
    namespace: str
    collection: str
    command: str = ""
    key_suffix: str = ""
    verb: str = dataclasses.field(default="delete", init=False)

    def __post_init__(self) -> None:
        if not self.command:
            self.command = f"kubectl delete {self.kind_.lower()} -n {self.namespace} {self.name}"

    @property
    def ref(self) -> str:
        return f"{self.kind_}/{self.namespace}/{self.name}" if self.namespace else f"{self.kind_}/{self.name}"

    def key(self, plan_id: str, step_id: str) -> str:
        return f"{plan_id}/{step_id}/{self.key_suffix or self.ref}"

    async def read(self, cluster: Cluster) -> dict | None:
        return await get_or_none(cluster, f"{self.collection}/{self.name}")

    def part(self, obj: Any) -> bool:
        return obj is None

    def target(self) -> bool:
        return True

    def request(self, cluster: Cluster, obj: Any) -> Request:
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
        return HttpWrite("DELETE", f"{self.collection}/{self.name}", body, missing_ok=True)

    def preview(self) -> Change:
        return Change(self.kind_, self.name, self.namespace, verb="delete", command=self.command)


@dataclasses.dataclass
class ApplyObject(Operation):
    """A generated object (the playground's) created, or replaced with the cluster's metadata kept; an object whose
    spec is already so is left alone. `current` is the object as read before the write."""

    op: ClassVar[str] = "apply"

    body: dict
    collection: str
    current: dict | None
    name: str = dataclasses.field(default="", init=False)
    namespace: str = dataclasses.field(default="", init=False)
    verb: str = dataclasses.field(default="create", init=False)

    def __post_init__(self) -> None:
        md = self.body.get("metadata") or {}
        self.name, self.namespace = md.get("name", ""), md.get("namespace", "")
        self.verb = "create" if self.current is None else "replace"

    @property
    def ref(self) -> str:
        k = self.body.get("kind", "")
        return f"{k}/{self.namespace}/{self.name}" if self.namespace else f"{k}/{self.name}"

    async def read(self, cluster: Cluster) -> dict | None:
        return await get_or_none(cluster, f"{self.collection}/{self.name}")

    def part(self, obj: Any) -> dict | None:
        return None if obj is None else {"spec": obj.get("spec")}

    def target(self) -> dict:
        return {"spec": self.body.get("spec")}

    def done(self, obj: Any) -> bool:
        return obj is not None and obj.get("spec") == self.body.get("spec")

    def request(self, cluster: Cluster, obj: Any) -> Request:
        body = dict(self.body)
        if obj is None:
            return HttpWrite("POST", self.collection, body)
        meta = self.body.get("metadata") or {}
        body["metadata"] = {
            **(obj.get("metadata") or {}),
            **{k: v for k, v in meta.items() if k in ("labels", "annotations")},
        }
        return HttpWrite("PUT", f"{self.collection}/{self.name}", body)

    def preview(self) -> Change:
        return Change(
            self.body.get("kind", ""),
            self.name,
            self.namespace,
            verb=self.verb,
            before=None if self.current is None else {"spec": self.current.get("spec")},
            after=self.target(),
            command=f"kubectl {self.verb} -f <playground YAML>",
        )


# ---------------------------------------------------------------- from a plan file back to the operation

DECODERS: dict[str, Callable[[Change], Operation]] = {
    NodeLabel.op: NodeLabel.from_change,
    WorkloadAffinity.op: WorkloadAffinity.from_change,
    DeviceClassWrite.op: DeviceClassWrite.from_change,
    HelmRelease.op: HelmRelease.from_change,
    GitOpsWait.op: GitOpsWait.from_change,
}


def decode(change: Change) -> Operation:
    """The operation a switch step's Change previews (its detail.op names the kind)."""
    op = change.detail.get("op", "")
    try:
        return DECODERS[op](change)
    except KeyError:
        raise ValueError(f"unknown operation {op!r} of {change.ref}") from None


# ---------------------------------------------------------------- the door: every audited write goes through here


def audit_ref(ctx: Context, record: Change) -> dict:
    return {"kind": record.kind, "namespace": record.namespace, "name": record.name, "pool": ctx.pool}


async def write_once(
    ctx: Context, step_id: str, op: Operation, request: Request, *, label: str, dry_run: bool = True
) -> Any:
    """Make one write: refused in read-only; dry run (when the API allows); intent; the write; outcome.

    A write that may have landed (a lost answer, a 5xx) keeps its intent open, as after a crash: the caller reads the
    object again and either closes it (`close_dangling`) or sends the write again under this same write id."""
    record = op.record()
    if ctx.read_only:
        raise ReadOnlyError(f"{record.verb} {record.ref}")
    if ctx.audit is None:
        raise RuntimeError("a write needs an audit log")
    if dry_run:
        await request.send(ctx.cluster, True)
    key = op.key(ctx.plan_id, step_id)
    n = ctx.write_counts[label] = ctx.write_counts.get(label, 0) + 1
    obj = audit_ref(ctx, record)
    pending = ctx.dangling.pop(key, None)
    if pending is not None:
        write_id = pending["writeId"]
    else:
        write_id = ctx.audit.intent(
            key=key,
            plan_id=ctx.plan_id,
            step=step_id,
            obj=obj,
            verb=record.verb,
            before=record.before,
            after=record.after,
            command=record.command,
        )
    ctx.crash(f"{label}:{n}:intent")
    try:
        result = await request.send(ctx.cluster, False)
    except Exception as exc:
        if uncertain(exc):
            ctx.dangling[key] = {
                "writeId": write_id,
                "key": key,
                "planId": ctx.plan_id,
                "step": step_id,
                "object": obj,
                "verb": record.verb,
                "after": record.after,
            }
            raise
        ctx.audit.outcome(
            write_id, key=key, plan_id=ctx.plan_id, step=step_id, obj=obj, result="failed", message=str(exc)
        )
        raise
    ctx.crash(f"{label}:{n}:sent")
    ctx.audit.outcome(
        write_id, key=key, plan_id=ctx.plan_id, step=step_id, obj=obj, result="applied", after=record.after
    )
    return result


async def send(ctx: Context, step_id: str, op: Operation, *, label: str, dry_run: bool = True) -> None:
    """Make `op` unless the cluster already shows it, reading the object again before each try (a crash's or a lost
    answer's intent is then closed). A conflict, a 429 or a 5xx means another try after a backoff; anything else,
    or the last try, raises."""
    key = op.key(ctx.plan_id, step_id)

    async def attempt(_n: int) -> None:
        obj = await op.read(ctx.cluster)
        if op.done(obj):
            close_dangling(ctx, key, step_id, op.record())
            return
        await write_once(ctx, step_id, op, op.request(ctx.cluster, obj), label=label, dry_run=dry_run)

    await retrying(attempt, attempts=WRITE_ATTEMPTS, retryable=retryable, wait=backoff)


def close_dangling(ctx: Context, key: str, step_id: str, record: Change) -> None:
    """A crash (or a lost answer) left this write's intent without an outcome, and the cluster shows it made: say so."""
    rec = ctx.dangling.pop(key, None)
    if rec is None or ctx.audit is None:
        return
    ctx.audit.outcome(
        rec["writeId"],
        key=key,
        plan_id=rec.get("planId", ctx.plan_id),
        step=step_id,
        obj=audit_ref(ctx, record),
        result="applied",
        after=record.after,
        observed_on_resume=True,
    )


def dangling_record(rec: dict) -> Change:
    """The Change an open intent describes (enough to close it)."""
    obj = rec.get("object") or {}
    return Change(
        obj.get("kind", ""),
        obj.get("name", ""),
        obj.get("namespace", ""),
        rec.get("verb", "patch"),
        after=rec.get("after"),
    )


async def bookkeep(ctx: Context, op: NodeAnnotation) -> None:
    """Set dragoman's own note on a node (unaudited); nothing in read-only, nothing when it is already so."""
    if ctx.read_only:
        return
    obj = await op.read(ctx.cluster)
    if obj is None or op.done(obj):
        return
    request = op.request(ctx.cluster, obj)
    await retrying(
        lambda _attempt: request.send(ctx.cluster, False), attempts=WRITE_ATTEMPTS, retryable=retryable, wait=backoff
    )


async def write_unplanned(
    cluster: Cluster,
    op: ApplyObject,
    *,
    audit: AuditLog | None,
    plan_id: str,
    dry: bool,
    read_only: bool,
) -> None:
    """A write outside a migration plan (the playground's apply): refused in read-only; a dry run is only sent;
    a real write has its audit intent before and its outcome after. An ApiError is raised as the server answered."""
    if read_only:
        raise ReadOnlyError("apply objects from the playground")
    request = op.request(cluster, op.current)
    if dry or audit is None:
        await request.send(cluster, dry)
        return
    record = op.preview()
    ref = {"kind": record.kind, "namespace": record.namespace, "name": record.name}
    key, step = f"{plan_id}/apply/{record.kind}/{record.namespace}/{record.name}", "playground-apply"
    write_id = audit.intent(
        key=key,
        plan_id=plan_id,
        step=step,
        obj=ref,
        verb=record.verb,
        before=record.before,
        after=record.after,
        command=record.command,
    )
    try:
        await request.send(cluster, False)
    except ApiError as exc:
        msg = exc.message if hasattr(exc, "message") else str(exc)
        audit.outcome(write_id, key=key, plan_id=plan_id, step=step, obj=ref, result="failed", message=msg)
        raise
    audit.outcome(write_id, key=key, plan_id=plan_id, step=step, obj=ref, result="applied", after=record.after)
