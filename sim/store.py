"""The simulator's object store: every write (HTTP or in-process controller) goes through it, with one global
resourceVersion.

Objects are kept as raw dicts, exactly as served. Stored dicts are never mutated after commit: a write makes a
new dict, so a LIST snapshot is a shallow copy and each object is serialized to JSON at most once.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import json
import logging
import os
import random
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from dragoman.fleet.k8s import registry
from dragoman.fleet.k8s.registry import ResourceType
from dragoman.fleet.k8s.selectors import field_value, parse_field_selector, parse_label_selector
from dragoman.fleet.k8s.times import format_time
from dragoman.sim import pieces, resources
from dragoman.sim.api import admission
from dragoman.sim.api import events as event_view
from dragoman.sim.api import status as st
from dragoman.sim.api.admission import service_accounts_named
from dragoman.sim.api.gojson import encode_like_go
from dragoman.sim.clock import Clock

log = logging.getLogger("dragoman.sim.store")

Subscriber = Callable[[str, str, dict, "dict | None"], None]
Admission = Callable[[str, ResourceType, dict, "dict | None"], None]

_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"

FOREGROUND = "foregroundDeletion"

# kube-controller-manager's namespace controller reaches a deleted namespace after its queue and a discovery sweep
# of every resource type: a namespace stays Terminating at least this long (clock seconds) even when empty, as a
# client reading it right after the DELETE sees on a real cluster.
NAMESPACE_CLEANUP_DELAY = 1.0

# The root-ca-cert-publisher's ConfigMap in every namespace (pkg/controller/certificates/rootcacertpublisher).
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
ROOT_CA_ANNOTATION = "kubernetes.io/description"
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the "
    "internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes "
    "clusters."
)


class ApiError(Exception):
    """A request the API refuses; `status` is the Status object to send, `headers` extra response headers."""

    def __init__(self, status: dict, headers: dict[str, str] | None = None) -> None:
        super().__init__(status.get("message", ""))
        self.status = status
        self.headers = headers or {}

    @property
    def code(self) -> int:
        return int(self.status.get("code", 500))


def new_uid() -> str:
    """A random (version 4) UUID string, without the cost of uuid.UUID objects at fleet scale."""
    h = os.urandom(16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:32]}"


def _with_metadata(obj: dict) -> dict:
    """A copy sharing everything but metadata: enough for a commit that changes only metadata, since committed
    dicts are never mutated."""
    out = dict(obj)
    out["metadata"] = dict(obj["metadata"])
    return out


def clone(obj: Any) -> Any:
    """A deep copy that also proves the value is plain JSON."""
    return json.loads(json.dumps(obj))


class Entry:
    """One committed object and, once needed, its JSON bytes: as an item of a list (no kind or apiVersion, as
    kube-apiserver encodes the items of a built-in type's list) and whole (a GET, a watch event)."""

    __slots__ = ("obj", "_raw", "_item", "view")

    def __init__(self, obj: dict) -> None:
        self.obj = obj
        self._raw: bytes | None = None
        self._item: bytes | None = None
        # The object in the other API's shape, once a reader of that API asked (Store._shown): one per stored kind,
        # since only the core Events have a second view (events.k8s.io/v1).
        self.view: Entry | None = None

    @property
    def item_raw(self) -> bytes:
        if self._item is None:
            self._item = msgspec.json.encode({k: v for k, v in self.obj.items() if k not in ("apiVersion", "kind")})
        return self._item

    @property
    def raw(self) -> bytes:
        if self._raw is None:
            # msgspec: the same compact bytes as json.dumps for ASCII objects, 5x faster (52 -> 9 µs an envelope pod,
            # which a burst of churn pays per event); non-ASCII text is sent as UTF-8, as kube-apiserver sends it.
            self._raw = msgspec.json.encode(self.obj)
        return self._raw


class Watcher:
    """A watch stream's queue: the store offers every change of its resource, the watcher keeps what matches."""

    def __init__(
        self,
        rt: ResourceType,
        namespace: str | None,
        pred: Callable[[dict], bool] | None,
        max_queue: int = 200_000,
        filter_key: Any = None,
    ) -> None:
        self.rt = rt
        self.namespace = namespace
        self.pred = pred
        self.queue: collections.deque[tuple[str, Entry]] = collections.deque()
        self.wakeup = asyncio.Event()
        self.max_queue = max_queue
        self.overflowed = False
        self.closed = False
        # Watchers with equal filter keys see the same events: the store classifies a change once per key.
        self.filter_key = filter_key if filter_key is not None else id(self)
        # For a watch of another API's view of the stored kind: the stored entry in that view's shape (the store
        # sets it); the predicate and the stream then see the view.
        self.shown: Callable[[Entry], Entry] | None = None

    def matches(self, obj: dict | None) -> bool:
        if obj is None:
            return False
        if self.namespace and obj["metadata"].get("namespace") != self.namespace:
            return False
        return self.pred is None or self.pred(obj)

    def classify(self, etype: str, entry: Entry, old: Entry | None) -> str:
        """The event type this watcher should see for a change ("" for none): selections turn MODIFIED into
        ADDED when an object enters them and DELETED when it leaves."""
        if self.shown is not None:
            entry = self.shown(entry)
            old = self.shown(old) if old is not None else None
        new_ok = self.matches(entry.obj)
        if etype == "MODIFIED":
            old_ok = self.matches(old.obj) if old is not None else False
            if new_ok and not old_ok:
                return "ADDED"
            if old_ok and not new_ok:
                return "DELETED"
        return etype if new_ok else ""

    def push(self, etype: str, entry: Entry) -> None:
        if self.closed:
            return
        self.queue.append((etype, entry if self.shown is None else self.shown(entry)))
        if len(self.queue) > self.max_queue:
            # A reader this far behind is cut off, as the real server drops slow watchers; clients re-list.
            self.overflowed = True
            self.closed = True
        if not self.wakeup.is_set():
            self.wakeup.set()

    def offer(self, etype: str, entry: Entry, old: Entry | None) -> None:
        if self.closed:
            return
        kind = self.classify(etype, entry, old)
        if kind:
            self.push(kind, entry)

    def close(self) -> None:
        self.closed = True
        self.wakeup.set()


class Snapshot:
    """A paginated LIST's frozen result: the matching entries as of one resourceVersion."""

    __slots__ = ("rv", "entries", "created")

    def __init__(self, rv: int, entries: list[Entry], created: float) -> None:
        self.rv = rv
        self.entries = entries
        self.created = created


def _node_name(pod: dict) -> str:
    """A pod's spec.nodeName as the field selector reads it ("" when unset)."""
    return field_value(pod, "spec.nodeName")


class Store:
    """All objects of the simulated cluster, their history and their watchers."""

    def __init__(self, clock: Clock | None = None, history_size: int = 20_000, validate: bool = True) -> None:
        self.clock = clock or Clock()
        # Kinds stored as themselves; a view (ResourceType.storage) reads and writes its storage's objects.
        self._data: dict[str, dict[tuple[str, str], Entry]] = {r.key: {} for r in registry.RESOURCES if not r.storage}
        self._rv = 0
        self.history: collections.deque[tuple[int, str, str, Entry, Entry | None]] = collections.deque(
            maxlen=history_size
        )
        self._floor = 0  # watches from a resourceVersion below this get 410 Gone
        self._watchers: dict[str, set[Watcher]] = collections.defaultdict(set)
        self._subscribers: list[Subscriber] = []
        self._admission: list[Admission] = []
        self._owners: dict[str, set[tuple[str, str, str]]] = collections.defaultdict(set)
        # Pods by spec.nodeName ("" for none), as a real API server's watch cache indexes them: a drain or a
        # migration plan lists each node's pods with a field selector, which at 150,000 pods must not be a scan.
        self._pods_by_node: dict[str, set[tuple[str, str]]] = collections.defaultdict(set)
        self._reap: list[tuple[float, str, str, str, str]] = []
        self._snapshots: collections.OrderedDict[str, Snapshot] = collections.OrderedDict()
        self._event_written: dict[tuple[str, str], float] = {}
        # Warnings of the current HTTP write (unknown fields under fieldValidation=Warn); the server sends and clears
        # them.
        self.warnings: list[str] = []
        self.validate = validate
        # Pods with a deletionTimestamp disappear when their grace period has passed on the clock. A kubelet
        # controller that terminates pods itself switches this off.
        self.auto_reap_pods = True
        self._foreground: set[tuple[str, str, str]] = set()  # objects in foreground deletion (finish_foreground)
        # Namespaces being deleted (finish_namespaces), with the clock second their deletion began.
        self._terminating: dict[str, float] = {}
        self.random = random.Random(0)
        # The cluster's CA certificate (PEM), published in every namespace as kube-root-ca.crt; "" publishes none.
        self.root_ca = ""
        # The field manager of in-process writes that name none: the controller writing now (Controller.process
        # sets it to the real component's name), as kube-apiserver records it from a client's User-Agent.
        self.actor: str | None = None

    # ---------------------------------------------------------------- reading

    @property
    def resource_version(self) -> int:
        return self._rv

    def _rt(self, resource: str | ResourceType) -> ResourceType:
        if isinstance(resource, ResourceType):
            return resource
        try:
            return resources.lookup(resource)
        except KeyError:
            raise ApiError(
                st.resource_type_not_found(f"the server doesn't have a resource type {resource!r}")
            ) from None

    @staticmethod
    def _stored(rt: ResourceType) -> ResourceType:
        """The kind whose objects `rt` serves: itself, or for a view (events.k8s.io/v1 Events) its storage."""
        return resources.BY_KEY[rt.storage] if rt.storage else rt

    @staticmethod
    def _shown(rt: ResourceType, e: Entry | None) -> Entry | None:
        """A stored entry as `rt` serves it: itself, or converted to the view's shape (made once per entry)."""
        if e is None or not rt.storage:
            return e
        if e.view is None:
            e.view = Entry(event_view.to_view(e.obj))
        return e.view

    def stored_shape(self, rt: ResourceType, obj: dict) -> dict:
        """An object `rt` served, back in its storage's shape (what the table printer of the stored kind reads)."""
        return event_view.to_core(obj) if rt.storage else obj

    def entry(self, resource: str | ResourceType, namespace: str | None, name: str) -> Entry | None:
        rt = self._rt(resource)
        stored = self._stored(rt)
        return self._shown(rt, self._data[stored.key].get((namespace or "" if rt.namespaced else "", name)))

    def get(self, resource: str, namespace: str | None, name: str) -> dict | None:
        """A copy of one object (yours to change and write back), or None."""
        e = self.entry(resource, namespace, name)
        return clone(e.obj) if e else None

    def get_ref(self, resource: str, namespace: str | None, name: str) -> dict | None:
        """The stored object itself, without a copy: read it, never change it."""
        e = self.entry(resource, namespace, name)
        return e.obj if e else None

    def entries(self, resource: str | ResourceType, namespace: str | None = None) -> Iterable[Entry]:
        rt = self._rt(resource)
        data = self._data[self._stored(rt).key]
        if namespace and rt.namespaced:
            return [self._shown(rt, e) for (ns, _), e in data.items() if ns == namespace]  # type: ignore[misc]
        return [self._shown(rt, e) for e in data.values()]  # type: ignore[misc]

    def list(
        self,
        resource: str,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> list[dict]:
        """The stored objects that match, sorted by namespace and name. They are shared: never change them
        (copy first, e.g. `store.get()` or `clone()`, before writing back)."""
        rt = self._rt(resource)
        lp = parse_label_selector(label_selector)
        fp = parse_field_selector(field_selector, rt.field_labels())
        out = []
        candidates = self._candidates(rt, fp)
        data = self._data[self._stored(rt).key]
        for key in sorted(data if candidates is None else candidates):
            e = self._shown(rt, data[key])
            assert e is not None
            if namespace and rt.namespaced and key[0] != namespace:
                continue
            if lp and not lp(e.obj):
                continue
            if fp and not fp(e.obj):
                continue
            out.append(e.obj)
        return out

    def count(self, resource: str) -> int:
        return len(self._data[self._rt(resource).key])

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in self._data.items() if k not in resources.VIRTUAL}

    def size_bytes(self) -> dict[str, int]:
        return {k: sum(len(e.raw) for e in v.values()) for k, v in self._data.items() if k not in resources.VIRTUAL}

    def snapshot(self, rt: ResourceType, namespace: str | None, pred: Callable[[dict], bool] | None) -> Snapshot:
        data = self._data[self._stored(rt).key]
        candidates = self._candidates(rt, pred)
        pool = data if candidates is None else candidates
        keys = sorted(pool) if not (namespace and rt.namespaced) else sorted(k for k in pool if k[0] == namespace)
        entries = [data[k] for k in keys]
        if rt.storage:
            entries = [self._shown(rt, e) for e in entries]  # type: ignore[misc]
        if pred is not None:
            entries = [e for e in entries if pred(e.obj)]
        return Snapshot(self._rv, entries, self.clock.seconds())

    def keep_snapshot(self, snap: Snapshot) -> str:
        token_id = uuid.uuid4().hex
        self._snapshots[token_id] = snap
        while len(self._snapshots) > 128:
            self._snapshots.popitem(last=False)
        return token_id

    def find_snapshot(self, token_id: str) -> Snapshot | None:
        return self._snapshots.get(token_id)

    # ---------------------------------------------------------------- hooks

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback(event_type, resource_key, obj, old)` after every committed change; returns an unsubscribe.

        `obj` is the committed object (for DELETED, the last state); `old` the previous one or None. Both are the
        stored dicts: read them, never change them. Callbacks run synchronously inside the write, so keep them
        short (queue work for a task).
        """
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def add_admission(self, hook: Admission) -> None:
        """`hook(operation, rt, obj, old)` runs before a create/update commits (operation CREATE|UPDATE) and may
        raise ApiError to refuse it (quota, for example). It must not write to the store."""
        self._admission.append(hook)

    def shape_watcher(self, w: Watcher) -> Watcher:
        """A watcher of a view sees the view's shape: set before it is offered history or registered."""
        if w.rt.storage and w.shown is None:
            rt = w.rt
            w.shown = lambda e: self._shown(rt, e)  # type: ignore[assignment,return-value]
        return w

    def add_watcher(self, w: Watcher) -> None:
        self.shape_watcher(w)
        self._watchers[self._stored(w.rt).key].add(w)

    def remove_watcher(self, w: Watcher) -> None:
        self._watchers[self._stored(w.rt).key].discard(w)

    def watcher_count(self) -> int:
        return sum(len(v) for v in self._watchers.values())

    def history_since(self, rt: ResourceType, rv: int) -> list[tuple[str, Entry, Entry | None]]:
        """Committed changes of `rt` after `rv`, oldest first; raise 410 when `rv` is older than the kept history.
        The entries are the stored ones (a view's watcher converts what it keeps)."""
        if rv < self._floor:
            raise ApiError(st.too_old_resource_version(rv, self._floor + 1))
        out = []
        stored_key = self._stored(rt).key
        for erv, key, etype, entry, old in reversed(self.history):
            if erv <= rv:
                break
            if key == stored_key:
                out.append((etype, entry, old))
        out.reverse()
        return out

    # ---------------------------------------------------------------- committing

    def _commit(self, etype: str, rt: ResourceType, obj: dict, old: Entry | None, record: bool = True) -> Entry:
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)
        entry = Entry(obj)
        md = obj["metadata"]
        key = (md.get("namespace", "") if rt.namespaced else "", md["name"])
        if etype == "DELETED":
            self._data[rt.key].pop(key, None)
            if rt.key == "events":
                self._event_written.pop(key, None)
        else:
            self._data[rt.key][key] = entry
            if rt.key == "events":
                self._event_written[key] = self.clock.seconds()
        self._index_owners(rt, old.obj if old else None, obj if etype != "DELETED" else None)
        if rt.key == "pods":
            self._index_node(key, old.obj if old else None, obj if etype != "DELETED" else None)
        if record:
            if len(self.history) == self.history.maxlen:
                self._floor = self.history[0][0]
            self.history.append((self._rv, rt.key, etype, entry, old))
        else:
            self._floor = self._rv
        watchers = self._watchers.get(rt.key)
        if watchers:
            seen: dict[Any, str] = {}
            for w in list(watchers):
                if w.closed:
                    continue
                kind = seen.get(w.filter_key)
                if kind is None:
                    kind = seen[w.filter_key] = w.classify(etype, entry, old)
                if kind:
                    w.push(kind, entry)
        for cb in list(self._subscribers):
            try:
                cb(etype, rt.key, obj, old.obj if old else None)
            except Exception:  # a subscriber's bug must not undo or fail a committed write
                log.exception("store subscriber failed on %s %s", etype, rt.key)
        return entry

    def _index_node(self, key: tuple[str, str], old: dict | None, new: dict | None) -> None:
        before = _node_name(old) if old is not None else None
        after = _node_name(new) if new is not None else None
        if before == after:
            return
        if before is not None:
            keys = self._pods_by_node.get(before)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._pods_by_node[before]
        if after is not None:
            self._pods_by_node[after].add(key)

    def _candidates(self, rt: ResourceType, pred: Callable[[dict], bool] | None) -> Iterable[tuple[str, str]] | None:
        """The keys a predicate can match, from the nodeName index, when it requires `spec.nodeName=X` of pods; None
        when it does not (every key is a candidate). The predicate is still applied to each candidate."""
        if rt.key != "pods" or pred is None:
            return None
        node = (getattr(pred, "equals", None) or {}).get("spec.nodeName")
        if node is None:
            return None
        return self._pods_by_node.get(node, ())

    def _index_owners(self, rt: ResourceType, old: dict | None, new: dict | None) -> None:
        for obj, add in ((old, False), (new, True)):
            if not obj:
                continue
            md = obj["metadata"]
            ref = (rt.key, md.get("namespace", ""), md["name"])
            for o in md.get("ownerReferences") or ():
                uid = o.get("uid")
                if not uid:
                    continue
                if add:
                    self._owners[uid].add(ref)
                else:
                    s = self._owners.get(uid)
                    if s:
                        s.discard(ref)
                        if not s:
                            del self._owners[uid]

    def _validate(self, rt: ResourceType, obj: dict, old: dict | None, api_version: str = "") -> None:
        """The strategy's validation of the stored shape; `api_version` is the request's (an Event is checked more
        strictly when it came through events.k8s.io/v1), the kind's own by default."""
        if not self.validate:
            return
        causes = pieces.validate_object(rt.plural, obj, old, api_version or rt.api_version)
        if old is None and rt.key in ("resourceclaims.resource.k8s.io", "resourceclaimtemplates.resource.k8s.io"):
            causes = causes + self._admin_access_causes(rt, obj)
        if causes:
            raise ApiError(st.invalid(rt.group, rt.kind, obj["metadata"].get("name", ""), causes))

    def _admin_access_causes(self, rt: ResourceType, obj: dict) -> list[dict]:
        """resourceutils.AuthorizedForAdmin (the claim and template strategies' PrepareForCreate): a request with
        adminAccess is forbidden unless the namespace carries resource.kubernetes.io/admin-access=true."""
        from dragoman.sim.api.validation.fields import forbidden

        spec = obj.get("spec") or {}
        if rt.key == "resourceclaimtemplates.resource.k8s.io":
            spec = spec.get("spec") or {}
        for i, req in enumerate(((spec.get("devices") or {}).get("requests")) or ()):
            if not isinstance(req, dict) or not (req.get("exactly") or {}).get("adminAccess"):
                continue
            e = self._data["namespaces"].get(("", obj["metadata"].get("namespace", "")))
            labels = ((e.obj if e is not None else {}).get("metadata") or {}).get("labels") or {}
            if labels.get("resource.kubernetes.io/admin-access") == "true":
                return []
            prefix = "spec.spec" if rt.key.startswith("resourceclaimtemplates") else "spec"
            return [
                forbidden(
                    f"{prefix}.devices.requests[{i}].adminAccess",
                    "admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the "
                    "containing namespace",
                )
            ]
        return []

    def _admit(self, op: str, rt: ResourceType, obj: dict, old: dict | None) -> None:
        for hook in self._admission:
            hook(op, rt, obj, old)

    def _mutate(self, op: str, rt: ResourceType, obj: dict, old: dict | None) -> None:
        """kube-apiserver's mutating admission (sim/api/admission.py), after the field manager has recorded the
        request and before validation."""
        if rt.key == "nodes" and op == "CREATE":
            admission.taint_new_node(obj)
            return
        if rt.key != "pods":
            return

        def service_account(ns: str, name: str) -> dict | None:
            e = self._data["serviceaccounts"].get((ns, name))
            return e.obj if e is not None else None

        def suffix() -> str:
            return self._new_name("")

        try:
            admission.admit_pod(op, obj, old, service_account=service_account, suffix=suffix)
        except admission.Refused as exc:
            raise ApiError(exc.status) from None

    def _namespace_check(self, rt: ResourceType, ns: str, creating: bool, name: str = "") -> None:
        if not rt.namespaced:
            return
        nse = self._data["namespaces"].get(("", ns))
        if nse is None:
            raise ApiError(st.not_found("", "namespaces", ns))
        if creating and nse.obj["metadata"].get("deletionTimestamp"):
            # NamespaceLifecycle admission: a Forbidden naming the object, with the NamespaceTerminating cause.
            body = st.forbidden(
                rt.group,
                rt.plural,
                name,
                f"unable to create new content in namespace {ns} because it is being terminated",
            )
            body.setdefault("details", {})["causes"] = [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {ns} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise ApiError(body)

    def _new_name(self, prefix: str) -> str:
        return prefix + "".join(self.random.choice(_NAME_CHARS) for _ in range(5))

    def prepare_new(
        self, rt: ResourceType, body: dict, namespace: str | None = None, *, copy: bool = True, now: str | None = None
    ) -> dict:
        """Fill the server-owned metadata of an object about to be created (no commit, no validation).
        copy=False takes ownership of `body` (scenario loading: no second copy of a large fleet)."""
        if copy:
            obj = clone(body)
        else:
            obj = dict(body)
            if isinstance(obj.get("metadata"), dict):
                obj["metadata"] = dict(obj["metadata"])
        if not isinstance(obj, dict):
            raise ApiError(st.bad_request("the body of the request is not a JSON object"))
        obj["apiVersion"] = rt.api_version
        obj["kind"] = rt.kind
        md = obj.get("metadata")
        if not isinstance(md, dict):
            md = obj["metadata"] = {}
        if not md.get("name"):
            if md.get("generateName"):
                for _ in range(20):
                    md["name"] = self._new_name(md["generateName"])
                    if (md.get("namespace", namespace or ""), md["name"]) not in self._data[self._stored(rt).key]:
                        break
            else:
                raise ApiError(
                    st.invalid(
                        rt.group,
                        rt.kind,
                        "",
                        [
                            st.cause(
                                "FieldValueRequired",
                                "metadata.name",
                                "Required value: name or generateName is required",
                            )
                        ],
                    )
                )
        if rt.namespaced:
            ns = namespace or md.get("namespace") or "default"
            if md.get("namespace") and namespace and md["namespace"] != namespace:
                raise ApiError(
                    st.bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request"
                    )
                )
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        md["uid"] = new_uid()
        md["creationTimestamp"] = now or self.clock.timestamp()
        for k in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            md.pop(k, None)
        if rt.has_generation:
            md["generation"] = 1
        else:
            md.pop("generation", None)
        pieces.default_object(rt.plural, obj, md["creationTimestamp"])
        return obj

    def create(
        self,
        resource: str | ResourceType,
        obj: dict,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        decode_mode: str | None = None,
    ) -> dict:
        """Create `obj`; returns the committed object (a copy). Raises ApiError (409 AlreadyExists, 422, 404 ...)."""
        rt = self._rt(resource)
        if rt.key in resources.VIRTUAL:
            raise ApiError(st.method_not_allowed(rt.group, rt.plural))
        if field_manager is None:
            field_manager = self.actor
        if decode_mode:
            obj = self._decode(rt, obj, decode_mode)
        new = self.prepare_new(rt, obj, namespace)
        md = new["metadata"]
        key = (md.get("namespace", ""), md["name"])
        self._namespace_check(rt, key[0], True, md["name"])
        if key in self._data[self._stored(rt).key]:
            raise ApiError(st.already_exists(rt.group, rt.plural, md["name"]))
        # As decoded into Go structs and written back (gojson.py): the field manager sees that shape, and so does
        # every reader after admission and PrepareForCreate have added theirs.
        encode_like_go(new, converted=False)
        if field_manager:
            # Owned: what differs from an empty object of the kind (a field every object of it has, such as a
            # Namespace's `spec: {}` or an Event's `eventTime: null`, is nobody's). A view's writer owns the view's
            # fields, under the view's apiVersion, as kube-apiserver records them.
            empty = encode_like_go({"apiVersion": rt.api_version, "kind": rt.kind, "metadata": {}})
            self._manage(empty, new, field_manager, "")
        request_rt = rt
        if rt.storage:
            new, rt = event_view.to_core(new), self._stored(rt)
        self._mutate("CREATE", rt, new, None)
        pieces.prepare_for_create(rt.plural, new)
        encode_like_go(new)
        self._validate(rt, new, None, request_rt.api_version)
        self._admit("CREATE", rt, new, None)
        if dry_run:
            return self._answer(request_rt, new)
        self._commit("ADDED", rt, new, None)
        if rt.key == "namespaces":
            self._namespace_created(md["name"])
        return clone(self._answer(request_rt, new))

    @staticmethod
    def _answer(rt: ResourceType, obj: dict) -> dict:
        """A write's result in the shape of the API it came through."""
        return event_view.to_view(obj) if rt.storage else obj

    def _namespace_created(self, name: str) -> None:
        """What kube-controller-manager adds to every new namespace: the `default` ServiceAccount (serviceaccounts
        controller) and the `kube-root-ca.crt` ConfigMap (root-ca-cert-publisher), written as its field manager."""
        for rt, obj in self._namespace_content(name):
            self._manage(None, obj, "kube-controller-manager", "")
            self._commit("ADDED", rt, obj, None)

    def _namespace_content(self, ns: str) -> list[tuple[ResourceType, dict]]:
        out = []
        sa_rt, cm_rt = resources.BY_KEY["serviceaccounts"], resources.BY_KEY["configmaps"]
        if (ns, "default") not in self._data["serviceaccounts"]:
            out.append((sa_rt, self.prepare_new(sa_rt, {"metadata": {"name": "default"}}, ns)))
        if self.root_ca and (ns, ROOT_CA_CONFIGMAP) not in self._data["configmaps"]:
            cm = {
                "metadata": {"name": ROOT_CA_CONFIGMAP, "annotations": {ROOT_CA_ANNOTATION: ROOT_CA_DESCRIPTION}},
                "data": {"ca.crt": self.root_ca},
            }
            out.append((cm_rt, self.prepare_new(cm_rt, cm, ns)))
        return out

    def load(self, objects: Iterable[dict]) -> int:
        """Add scenario objects without history (they exist 'since before the server started'); namespaces
        they need are created. The store takes ownership of the dicts (no copy). Unknown kinds raise KeyError
        with the kind. Returns the number loaded."""
        n = 0
        pending = []
        for obj in objects:
            rt = resources.for_object(obj)
            if rt.storage:
                # An events.k8s.io/v1 Event in a scenario file: kept as the core Event it is stored as.
                rt, obj = self._stored(rt), event_view.to_core(obj)
            pending.append((rt, obj))
        # The ServiceAccounts the scenario's pods and templates name but leave out, as the real loader creates them:
        # without them admission would refuse every pod a controller makes for those templates.
        named = service_accounts_named([o for _, o in pending])
        have = {
            ((o.get("metadata") or {}).get("namespace") or "default", (o.get("metadata") or {}).get("name"))
            for r, o in pending
            if r.key == "serviceaccounts"
        }
        added = 0
        for ns, name in sorted(named - have):
            if (ns, name) not in self._data["serviceaccounts"]:
                sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": ns}}
                pending.append((resources.BY_KEY["serviceaccounts"], sa))
                added += 1
        # Namespaces first, so that namespaced objects find theirs.
        pending.sort(key=lambda p: p[0].key != "namespaces")
        ns_rt = resources.BY_KEY["namespaces"]
        sa_rt = resources.BY_KEY["serviceaccounts"]
        now = self.clock.timestamp()
        for rt, body in pending:
            md = body.get("metadata") or {}
            keep_ts = md.get("creationTimestamp")
            keep_uid = md.get("uid")
            new = self.prepare_new(rt, body, copy=False, now=now)
            if rt.key == "pods":
                admission.loaded_pod(new)
            pieces.prepare_for_create(rt.plural, new)
            if keep_ts:
                new["metadata"]["creationTimestamp"] = keep_ts
            if keep_uid:
                new["metadata"]["uid"] = keep_uid
            if body.get("metadata", {}).get("generation") and rt.has_generation:
                new["metadata"]["generation"] = body["metadata"]["generation"]
            for k in ("deletionTimestamp", "finalizers", "ownerReferences", "managedFields"):
                if md.get(k):
                    new["metadata"][k] = md[k]
            nmd = new["metadata"]
            key = (nmd.get("namespace", ""), nmd["name"])
            if rt.namespaced and ("", key[0]) not in self._data["namespaces"]:
                nso = self.prepare_new(ns_rt, {"metadata": {"name": key[0]}})
                self._commit("ADDED", ns_rt, nso, None, record=False)
                self._load_default_sa(sa_rt, key[0])
            old = self._data[rt.key].get(key)
            self._commit("MODIFIED" if old else "ADDED", rt, new, old, record=False)
            if rt.key == "namespaces":
                self._load_default_sa(sa_rt, nmd["name"])
            n += 1
        return n - added  # the objects given; the ServiceAccounts added for them are not theirs

    def _load_default_sa(self, sa_rt: ResourceType, ns: str) -> None:
        for rt, obj in self._namespace_content(ns):
            self._commit("ADDED", rt, obj, None, record=False)

    @staticmethod
    def _comparable(obj: dict) -> dict:
        out = dict(obj)
        md = dict(out.get("metadata") or {})
        md.pop("resourceVersion", None)
        if md.get("managedFields"):
            md["managedFields"] = [{k: v for k, v in m.items() if k != "time"} for m in md["managedFields"]]
        out["metadata"] = md
        return out

    def update(
        self,
        resource: str | ResourceType,
        obj: dict,
        subresource: str | None = None,
        *,
        namespace: str | None = None,
        name: str | None = None,
        dry_run: bool = False,
        check_rv: bool = True,
        field_manager: str | None = None,
        decode_mode: str | None = None,
        strategy: bool = True,
    ) -> dict:
        """Replace an object (PUT). A stale metadata.resourceVersion is a 409 Conflict; on the main resource the
        status is kept, on `status` only the status changes. A write that changes nothing commits nothing.
        field_manager None is the acting controller's (self.actor); "" records no manager (the binding subresource).
        strategy False: a status written as the binding writes it, straight to storage (its GuaranteedUpdate), with
        none of the status strategy's PrepareForUpdate."""
        rt = self._rt(resource)
        if field_manager is None:
            field_manager = self.actor
        if decode_mode and isinstance(obj, dict):
            obj = self._decode(rt, obj, decode_mode)
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
            raise ApiError(st.bad_request("the body of the request is not a Kubernetes object"))
        md_in = obj["metadata"]
        name = name or md_in.get("name")
        ns = (namespace or md_in.get("namespace") or "default") if rt.namespaced else ""
        if not name:
            raise ApiError(st.bad_request("name is required"))
        if md_in.get("name") and md_in["name"] != name:
            raise ApiError(
                st.bad_request(f"the name of the object ({md_in['name']}) does not match the name on the URL ({name})")
            )
        if rt.namespaced and namespace and md_in.get("namespace") and md_in["namespace"] != namespace:
            raise ApiError(
                st.bad_request("the namespace of the provided object does not match the namespace sent on the request")
            )
        cur = self._data[self._stored(rt).key].get((ns, name))
        if cur is None:
            raise ApiError(st.not_found(rt.group, rt.plural, name))
        want_rv = md_in.get("resourceVersion")
        if check_rv and want_rv and want_rv != cur.obj["metadata"]["resourceVersion"]:
            raise ApiError(st.conflict(rt.group, rt.plural, name))
        # Through a view, the object is replaced and its fields managed in the view's shape, then stored as core.
        old = self._shown(rt, cur).obj  # type: ignore[union-attr]
        if subresource == "status":
            new = clone(old)
            if "status" in obj:
                new["status"] = clone(obj["status"])
            else:
                new.pop("status", None)
            new["metadata"] = pieces.status_update_metadata(rt.plural, clone(md_in), old["metadata"])
            if strategy:
                pieces.prepare_for_status_update(rt.plural, new, old)
        else:
            new = clone(obj)
            new["apiVersion"], new["kind"] = rt.api_version, rt.kind
            if "status" in rt.subresources:
                if "status" in old:
                    new["status"] = clone(old["status"])
                else:
                    new.pop("status", None)
            md = new["metadata"]
            md["name"] = name
            if rt.namespaced:
                md["namespace"] = ns
            else:
                md.pop("namespace", None)
            for k in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
                if k in old["metadata"]:
                    md[k] = old["metadata"][k]
                else:
                    md.pop(k, None)
            if old["metadata"].get("deletionTimestamp"):
                # No new finalizers on an object that is going away (the real server refuses them too).
                md["finalizers"] = [
                    f for f in md.get("finalizers") or [] if f in (old["metadata"].get("finalizers") or [])
                ]
                if not md["finalizers"]:
                    md.pop("finalizers")
            stamp = self.clock.timestamp()
            pieces.default_object(rt.plural, new, stamp)
            pieces.prepare_for_update(rt.plural, new, old, stamp)
            encode_like_go(new, converted=False)
            if rt.has_generation:
                # Compared in the same shape (a loaded object may not be in Go's yet).
                shaped = encode_like_go(clone(old))
                spec_old = {k: v for k, v in shaped.items() if k not in ("metadata", "status", "apiVersion", "kind")}
                spec_new = {k: v for k, v in new.items() if k not in ("metadata", "status", "apiVersion", "kind")}
                if rt.key == "pods":
                    # The binding (the only writer of a pod's nodeName) bypasses the pod strategy: no new generation.
                    spec_old["spec"] = {k: v for k, v in (spec_old.get("spec") or {}).items() if k != "nodeName"}
                    spec_new["spec"] = {k: v for k, v in (spec_new.get("spec") or {}).items() if k != "nodeName"}
                if spec_old != spec_new:
                    md["generation"] = int(old["metadata"].get("generation", 1)) + 1
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        if subresource:
            encode_like_go(new, converted=False)
        if field_manager:
            self._manage(old, new, field_manager, subresource or "")
        encode_like_go(new)
        request_rt = rt
        if rt.storage:
            rt, old = self._stored(rt), cur.obj
            new = encode_like_go(event_view.to_core(new))
        if not subresource:
            self._mutate("UPDATE", rt, new, old)
        self._validate(rt, new, old, request_rt.api_version)
        self._admit("UPDATE", rt, new, old)
        if self._comparable(new) == self._comparable(old):
            return clone(self._answer(request_rt, old))
        if dry_run:
            return self._answer(request_rt, new)
        self._commit("MODIFIED", rt, new, cur)
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            if not (rt.key == "pods" and self._pod_waits(new)):
                self._remove(rt, new)
        return clone(self._answer(request_rt, new))

    def patch(
        self,
        resource: str | ResourceType,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: str = "merge",
        subresource: str | None = None,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool = False,
        decode_mode: str | None = None,
    ) -> tuple[dict, bool]:
        """Apply a patch: patch_type merge | strategic | json | apply. Returns (object, created) — `created` only
        for a server-side apply that made the object."""
        rt = self._rt(resource)
        ns = (namespace or "default") if rt.namespaced else ""
        # A patch through a view applies to the view's shape (a merge patch of an events.k8s.io Event names `note`).
        cur = self._shown(rt, self._data[self._stored(rt).key].get((ns, name)))
        try:
            if patch_type == "apply":
                if not isinstance(patch, dict):
                    raise ApiError(st.bad_request("the apply configuration must be an object"))
                pmd = patch.get("metadata") or {}
                if pmd.get("name") and pmd["name"] != name:
                    raise ApiError(
                        st.bad_request(
                            f"the name of the object ({pmd['name']}) does not match the name on the URL ({name})"
                        )
                    )
                manager = field_manager or ""
                if not manager:
                    # ValidatePatchOptions: an apply patch must name its field manager.
                    raise ApiError(
                        st.invalid(
                            "meta.k8s.io",
                            "PatchOptions",
                            "",
                            [
                                st.cause(
                                    "FieldValueRequired", "fieldManager", "Required value: is required for apply patch"
                                )
                            ],
                        )
                    )
                live = cur.obj if cur else None
                result = pieces.server_side_apply(
                    clone(live) if live else None,
                    clone(patch),
                    manager,
                    force,
                    now=self.clock.timestamp(),
                    subresource=subresource or "",
                )
                if cur is None:
                    result.setdefault("metadata", {})["name"] = name
                    if rt.namespaced:
                        result["metadata"]["namespace"] = ns
                    return self.create(rt, result, namespace=ns or None, dry_run=dry_run, decode_mode=decode_mode), True
                result["metadata"]["resourceVersion"] = cur.obj["metadata"]["resourceVersion"]
                return self.update(
                    rt, result, subresource, namespace=ns, name=name, dry_run=dry_run, decode_mode=decode_mode
                ), False
            if cur is None:
                raise ApiError(st.not_found(rt.group, rt.plural, name))
            base = clone(cur.obj)
            if patch_type == "merge":
                if not isinstance(patch, dict):
                    raise ApiError(st.bad_request("a merge patch must be a JSON object"))
                result = pieces.apply_json_merge_patch(base, patch)
            elif patch_type == "strategic":
                if not isinstance(patch, dict):
                    raise ApiError(st.bad_request("a strategic merge patch must be a JSON object"))
                result = pieces.apply_strategic_merge_patch(base, patch, rt.kind)
            elif patch_type == "json":
                if not isinstance(patch, list):
                    raise ApiError(st.bad_request("a JSON patch must be a list of operations"))
                try:
                    result = pieces.apply_json_patch(base, patch)
                except pieces.PatchError as exc:
                    if getattr(exc, "code", 422) != 422:
                        raise
                    # A patch that does not apply: apimachinery's generic 422, which says no more than that.
                    body = st.status(422, "Invalid", "the server rejected our request due to an error in our request")
                    body["details"] = {}
                    raise ApiError(body) from None
            else:
                raise ApiError(st.unsupported_media_type(patch_type))
        except pieces.ApplyConflict as exc:
            status = getattr(exc, "status", None)
            raise ApiError(status() if callable(status) else st.conflict(rt.group, rt.plural, name, str(exc))) from None
        except pieces.PatchError as exc:
            status = getattr(exc, "status", None)
            if isinstance(status, dict):
                raise ApiError(status) from None
            code = getattr(exc, "code", 422)
            if code == 400:
                raise ApiError(st.bad_request(str(exc))) from None
            raise ApiError(st.status(422, "Invalid", str(exc))) from None
        if not isinstance(result, dict) or not isinstance(result.get("metadata"), dict):
            raise ApiError(st.status(422, "Invalid", "the patch removed the object's metadata"))
        rv = result["metadata"].get("resourceVersion")
        if rv and rv != cur.obj["metadata"]["resourceVersion"]:
            raise ApiError(st.conflict(rt.group, rt.plural, name))
        if result["metadata"].get("name") != name:
            raise ApiError(
                st.status(
                    422,
                    "Invalid",
                    f'{rt.kind} "{name}" is invalid: metadata.name: Invalid value: '
                    f'"{result["metadata"].get("name")}": field is immutable',
                )
            )
        return self.update(
            rt,
            result,
            subresource,
            namespace=ns,
            name=name,
            dry_run=dry_run,
            field_manager=field_manager,
            decode_mode=decode_mode,
        ), False

    def _decode(self, rt: ResourceType, obj: Any, mode: str) -> Any:
        """Decode a client's body as the server would: wrong types are 400, unknown fields dropped (400 when Strict)."""
        if not isinstance(obj, dict):
            raise ApiError(
                st.bad_request(f"the body of the request could not be decoded into a {rt.kind}: it is not an object")
            )
        from dragoman.sim.decode import DecodeError, decode

        obj = clone(obj)
        try:
            unknown = decode(rt.kind, rt.api_version, obj, strict=mode == "Strict")
        except DecodeError as exc:
            raise ApiError(st.bad_request(str(exc))) from None
        if mode == "Warn":
            self.warnings.extend(f'unknown field "{u}"' for u in unknown)
        return obj

    def _manage(self, old: dict | None, new: dict, manager: str, subresource: str) -> None:
        try:
            pieces.update_managed_fields(old, new, manager, now=self.clock.timestamp(), subresource=subresource)
        except Exception:  # noqa: BLE001 - bookkeeping must never fail a write
            pass

    # ---------------------------------------------------------------- deleting

    @staticmethod
    def _pod_waits(pod: dict) -> bool:
        """A pod bound to a node and not finished waits out its grace period (its kubelet must stop it)."""
        return bool(pod.get("spec", {}).get("nodeName")) and pod.get("status", {}).get("phase") not in (
            "Succeeded",
            "Failed",
        )

    def delete(
        self,
        resource: str | ResourceType,
        namespace: str | None,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        preconditions: dict | None = None,
        dry_run: bool = False,
    ) -> tuple[dict, bool]:
        """Delete; returns (last object, gone). gone=False when it only got a deletionTimestamp (finalizers or
        a pod's grace period), in which case it leaves later."""
        rt = self._rt(resource)
        ns = (namespace or "default") if rt.namespaced else ""
        if rt.storage:
            # Through a view: the stored object goes, answered in the view's shape (a missing one named as the view).
            if self.entry(rt, ns, name) is None:
                raise ApiError(st.not_found(rt.group, rt.plural, name))
            obj, gone = self.delete(
                self._stored(rt),
                ns,
                name,
                grace_period_seconds=grace_period_seconds,
                propagation_policy=propagation_policy,
                preconditions=preconditions,
                dry_run=dry_run,
            )
            return self._answer(rt, obj), gone
        cur = self._data[rt.key].get((ns, name))
        if cur is None:
            raise ApiError(st.not_found(rt.group, rt.plural, name))
        old = cur.obj
        omd = old["metadata"]
        if preconditions:
            if preconditions.get("uid") and preconditions["uid"] != omd.get("uid"):
                # The registry's precondition check names the kind, not the resource (genericregistry store.go).
                raise ApiError(
                    st.conflict(
                        rt.group,
                        rt.kind,
                        name,
                        f"the UID in the precondition ({preconditions['uid']}) does not match the UID in record "
                        f"({omd.get('uid')}). The object might have been deleted and then recreated",
                    )
                )
            if preconditions.get("resourceVersion") and preconditions["resourceVersion"] != omd.get("resourceVersion"):
                raise ApiError(
                    st.conflict(
                        rt.group,
                        rt.plural,
                        name,
                        "Precondition failed: ResourceVersion in precondition: "
                        f"{preconditions['resourceVersion']}, ResourceVersion in object meta: "
                        f"{omd.get('resourceVersion')}",
                    )
                )
        policy = propagation_policy or "Background"
        if policy not in ("Background", "Foreground", "Orphan"):
            raise ApiError(
                st.bad_request(
                    f'propagationPolicy: Unsupported value: {policy!r}: supported values: "Foreground", '
                    '"Background", "Orphan"'
                )
            )
        grace = 0
        if rt.key == "pods" and self._pod_waits(old):
            grace = (
                grace_period_seconds
                if grace_period_seconds is not None
                else int(old["spec"].get("terminationGracePeriodSeconds", 30))
            )
            if grace < 0:
                grace = 0
        finalizers = list(omd.get("finalizers") or [])
        if dry_run:
            if rt.key == "namespaces":  # what the answer would be: Terminating, not gone
                view = clone(old)
                view["metadata"].setdefault("deletionTimestamp", format_time(self.clock.now()))
                view.setdefault("status", {})["phase"] = "Terminating"
                return view, False
            return self._graceful_view(rt, old, grace), not (finalizers or grace)
        if rt.key == "namespaces":
            return self._delete_namespace(rt, cur)
        if policy == "Foreground" and FOREGROUND not in finalizers and not omd.get("deletionTimestamp"):
            # Foreground cascading deletion: the object stays, marked, until the garbage collector has deleted its
            # dependents (finish_foreground), and is answered as it is now.
            new = _with_metadata(old)
            md = new["metadata"]
            md["finalizers"] = [*finalizers, FOREGROUND]
            if md.get("generation"):  # rest.BeforeDelete: marking an object deleted is a new generation
                md["generation"] = int(md["generation"]) + 1
            md["deletionTimestamp"] = format_time(self.clock.now() + _td(grace))
            md["deletionGracePeriodSeconds"] = grace
            self._commit("MODIFIED", rt, new, cur)
            self._foreground.add((rt.key, ns, name))
            return clone(new), False
        if finalizers or grace > 0:
            new = _with_metadata(old)
            md = new["metadata"]
            now = self.clock.seconds()
            if not md.get("deletionTimestamp") or grace < int(md.get("deletionGracePeriodSeconds", 1 << 30)):
                if md.get("generation") and not md.get("deletionTimestamp"):
                    md["generation"] = int(md["generation"]) + 1
                md["deletionTimestamp"] = format_time(self.clock.now() + _td(grace))
                md["deletionGracePeriodSeconds"] = grace
                self._commit("MODIFIED", rt, new, cur)
                if grace > 0 and not finalizers:
                    heapq.heappush(self._reap, (now + grace, rt.key, ns, name, omd["uid"]))
                return clone(new), False
            return clone(old), False
        if rt.key == "pods" and (not omd.get("deletionTimestamp") or int(omd.get("deletionGracePeriodSeconds") or 0)):
            # The pod registry deletes gracefully even with a zero grace period (podStrategy.CheckGracefulDelete):
            # kube-apiserver first writes deletionTimestamp (now) and deletionGracePeriodSeconds 0 — a MODIFIED that a
            # watcher sees — then removes the pod, whose DELETED event carries them (store.go
            # updateForGracefulDeletionAndFinalizers, then the delete).
            marked = _with_metadata(old)
            md = marked["metadata"]
            if md.get("generation") and not md.get("deletionTimestamp"):
                md["generation"] = int(md["generation"]) + 1
            md["deletionTimestamp"] = format_time(self.clock.now())
            md["deletionGracePeriodSeconds"] = 0
            self._commit("MODIFIED", rt, marked, cur)
            old = marked
        self._remove(rt, old, policy)
        return self._graceful_view(rt, old, grace), True

    def _graceful_view(self, rt: ResourceType, obj: dict, grace: int) -> dict:
        """The last state of an object deleted at once, as the answer shows it: a pod goes through graceful deletion
        with a zero grace period (deletionTimestamp now, deletionGracePeriodSeconds 0, its generation bumped)."""
        out = clone(obj)
        md = out["metadata"]
        if rt.key == "pods" and not md.get("deletionTimestamp"):
            if md.get("generation"):
                md["generation"] = int(md["generation"]) + 1
            md["deletionTimestamp"] = format_time(self.clock.now() + _td(grace))
            md["deletionGracePeriodSeconds"] = grace
        return out

    def _remove(self, rt: ResourceType, obj: dict, policy: str = "Background") -> None:
        md = obj["metadata"]
        cur = self._data[rt.key].get((md.get("namespace", ""), md["name"]))
        if cur is None:
            return
        gone = _with_metadata(cur.obj)
        self._commit("DELETED", rt, gone, cur)
        self._collect(md.get("uid", ""), policy)

    def _collect(self, owner_uid: str, policy: str) -> None:
        """Garbage collection: dependents of a deleted owner go (or lose the reference, for Orphan)."""
        deps = list(self._owners.get(owner_uid, ()))
        for key, ns, name in deps:
            rt = resources.BY_KEY[key]
            e = self._data[key].get((ns, name))
            if e is None:
                continue
            refs = e.obj["metadata"].get("ownerReferences") or []
            remaining = [r for r in refs if r.get("uid") != owner_uid]
            alive = [r for r in remaining if self._uid_exists(r)]
            if policy == "Orphan" or alive:
                new = clone(e.obj)
                if remaining:
                    new["metadata"]["ownerReferences"] = remaining
                else:
                    new["metadata"].pop("ownerReferences", None)
                self._commit("MODIFIED", rt, new, e)
            else:
                try:
                    self.delete(rt, ns or None, name, propagation_policy="Background")
                except ApiError:
                    pass

    def _uid_exists(self, ref: dict) -> bool:
        uid = ref.get("uid")
        try:
            rt = resources.BY_KIND[(ref.get("apiVersion", ""), ref.get("kind", ""))]
        except KeyError:
            return False
        for e in self._data[rt.key].values():
            if e.obj["metadata"].get("uid") == uid:
                return True
        return False

    def _delete_namespace(self, rt: ResourceType, cur: Entry) -> tuple[dict, bool]:
        """As the real server: the namespace turns Terminating (deletionTimestamp, status.phase) and is answered as
        it is now; the namespace controller's work (its content deleted, then the `kubernetes` finalizer removed
        and the namespace with it) happens in finish_namespaces(), called by the reaper."""
        if cur.obj["metadata"].get("deletionTimestamp"):
            return clone(cur.obj), False
        new = _with_metadata(cur.obj)
        new["metadata"]["deletionTimestamp"] = format_time(self.clock.now())
        new["status"] = {**(new.get("status") or {}), "phase": "Terminating"}
        self._commit("MODIFIED", rt, new, cur)
        self._terminating[new["metadata"]["name"]] = self.clock.seconds()
        return clone(new), False

    def finish_namespaces(self) -> int:
        """The namespace controller: delete a terminating namespace's content (with the usual grace and
        finalizers); once none is left, drop spec.finalizers `kubernetes` and remove the namespace when no other
        finalizer holds it. Returns how many namespaces went."""
        gone = 0
        ns_rt = resources.BY_KEY["namespaces"]
        now = self.clock.seconds()
        for name, since in sorted(self._terminating.items()):
            cur = self._data["namespaces"].get(("", name))
            if cur is None:
                self._terminating.pop(name, None)
                continue
            if now - since < NAMESPACE_CLEANUP_DELAY:
                continue
            left = 0
            for r in registry.RESOURCES:
                if not r.namespaced or r.key in resources.VIRTUAL or r.storage:
                    continue
                for (ns, n), e in list(self._data[r.key].items()):
                    if ns != name:
                        continue
                    left += 1
                    if not e.obj["metadata"].get("deletionTimestamp"):
                        try:
                            self.delete(r, ns, n)
                        except ApiError:
                            pass
            if any(
                ns == name
                for r in registry.RESOURCES
                if r.namespaced and not r.storage
                for (ns, _n) in self._data[r.key]
            ):
                continue
            obj = cur.obj
            if (obj.get("spec") or {}).get("finalizers"):
                new = _with_metadata(obj)
                new["spec"]["finalizers"] = [f for f in new["spec"]["finalizers"] if f != "kubernetes"]
                if not new["spec"]["finalizers"]:
                    del new["spec"]["finalizers"]
                self._commit("MODIFIED", ns_rt, new, cur)
                cur = self._data["namespaces"][("", name)]
                if (new.get("spec") or {}).get("finalizers"):
                    continue
            if cur.obj["metadata"].get("finalizers"):
                continue
            self._commit("DELETED", ns_rt, _with_metadata(cur.obj), cur)
            self._terminating.pop(name, None)
            gone += 1
        return gone

    def finish_foreground(self) -> None:
        """The garbage collector's side of foreground deletion: delete the dependents of an object marked
        `foregroundDeletion` (in the foreground too), then drop the finalizer, which lets the object go."""
        for key, ns, name in sorted(self._foreground):
            e = self._data[key].get((ns, name))
            if e is None or FOREGROUND not in (e.obj["metadata"].get("finalizers") or ()):
                self._foreground.discard((key, ns, name))
                continue
            deps = list(self._owners.get(e.obj["metadata"].get("uid", ""), ()))
            for dkey, dns, dname in deps:
                d = self._data[dkey].get((dns, dname))
                if d is not None and not d.obj["metadata"].get("deletionTimestamp"):
                    try:
                        self.delete(dkey, dns or None, dname, propagation_policy="Foreground")
                    except ApiError:
                        pass
            if any(self._data[k].get((n, m)) is not None for k, n, m in deps):
                continue
            new = _with_metadata(e.obj)
            new["metadata"]["finalizers"] = [f for f in new["metadata"]["finalizers"] if f != FOREGROUND]
            if not new["metadata"]["finalizers"]:
                del new["metadata"]["finalizers"]
            self._foreground.discard((key, ns, name))
            self._commit("MODIFIED", resources.BY_KEY[key], new, e)
            if not new["metadata"].get("finalizers"):
                self._remove(resources.BY_KEY[key], new)

    def reap(self) -> int:
        """Remove pods whose grace period has passed on the clock; returns how many went."""
        if self._foreground:
            self.finish_foreground()
        if self._terminating:
            self.finish_namespaces()
        if not self.auto_reap_pods:
            return 0
        now = self.clock.seconds()
        n = 0
        while self._reap and self._reap[0][0] <= now:
            _, key, ns, name, uid = heapq.heappop(self._reap)
            e = self._data[key].get((ns, name))
            if e is None or e.obj["metadata"].get("uid") != uid:
                continue
            md = e.obj["metadata"]
            if not md.get("deletionTimestamp") or md.get("finalizers"):
                continue
            self._remove(resources.BY_KEY[key], e.obj)
            n += 1
        return n

    def expire_events(self, ttl_seconds: float) -> int:
        """Delete Events written more than the TTL ago (the API server's --event-ttl, one hour by default).

        As with etcd leases, the TTL counts from the last write, not from the times inside the Event, so a
        loaded snapshot keeps its events for an hour of simulated time."""
        now = self.clock.seconds()
        rt = resources.BY_KEY["events"]
        n = 0
        for key, written in list(self._event_written.items()):
            if now - written <= ttl_seconds:
                continue
            self._event_written.pop(key, None)
            e = self._data["events"].get(key)
            if e is not None:
                self._remove(rt, e.obj)
                n += 1
        return n


def _td(seconds: float):
    import datetime

    return datetime.timedelta(seconds=seconds)
