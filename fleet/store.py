"""The raw object store every view reads: the kinds dragoman watches, their objects as the server sent them, batched
change notifications and connection state."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import gc
import logging
import time
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Set
from typing import Any

from dragoman.fleet.k8s import Key, key_of, registry, slices
from dragoman.fleet.k8s.registry import api_path
from dragoman.fleet.k8s.selectors import label_selector_matcher
from dragoman.fleet.projection import PodListDecoder, Projection, project_pod

log = logging.getLogger(__name__)

MANAGED_BY_DRAGOMAN = "app.kubernetes.io/managed-by=dragoman"


@dataclasses.dataclass(frozen=True)
class KindInfo:
    """Where a kind lives in the API and how dragoman lists it."""

    kind: str
    group: str  # "" for the core group
    version: str
    plural: str
    namespaced: bool
    # Only objects matching this selector are read (dragoman's own ConfigMaps and Leases).
    label_selector: str | None = None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_path(self) -> str:
        """The cluster-wide collection: `/api/v1/pods`, `/apis/resource.k8s.io/v1/resourceslices`."""
        return api_path(self.group, self.version, self.plural)

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The collection in a namespace, or one object by name."""
        return api_path(self.group, self.version, self.plural, namespace if self.namespaced else None, name)

    def matches(self, obj: dict) -> bool:
        """Whether `obj` passes this kind's label selector (fleet/k8s/selectors.py, as the API server selects)."""
        if not self.label_selector:
            return True
        matcher = _selector(self.label_selector)
        return matcher is None or matcher((obj.get("metadata") or {}).get("labels") or {})


_selector = functools.lru_cache(maxsize=16)(label_selector_matcher)


def _k(kind: str, selector: str | None = None) -> KindInfo:
    """A kind dragoman reads, where the registry (fleet/k8s/registry.py) says it lives."""
    rt = registry.of_kind(kind)
    return KindInfo(kind, rt.group, rt.version, rt.plural, rt.namespaced, selector)


# Everything dragoman reads (issue 5). Secrets are never read; ConfigMaps and Leases only dragoman's own.
KINDS: dict[str, KindInfo] = {
    k.kind: k
    for k in (
        _k("Node"),
        _k("Namespace"),
        _k("Pod"),
        _k("Event"),
        _k("ResourceQuota"),
        _k("ConfigMap", MANAGED_BY_DRAGOMAN),
        _k("DaemonSet"),
        _k("Deployment"),
        _k("ReplicaSet"),
        _k("StatefulSet"),
        _k("Job"),
        _k("PodDisruptionBudget"),
        _k("Lease", MANAGED_BY_DRAGOMAN),
        _k("DeviceClass"),
        _k("ResourceSlice"),
        _k("ResourceClaim"),
        _k("ResourceClaimTemplate"),
        # GA in v1.37 (DRADeviceTaintRules): an admin's taint on devices, e.g. for maintenance.
        _k("DeviceTaintRule"),
    )
}


# Kinds a store may project, and how (fleet/projection.py says what is kept and why).
PROJECTORS: dict[str, Callable[[dict, dict], dict]] = {"Pod": project_pod}
# Decoders of LIST pages that project while decoding, per kind: the informer hands them to Cluster.list_all.
# Each is made for one store (its shared strings, and the Projection.source it gives what it builds).
PAGE_DECODERS: dict[str, Callable[[FleetStore], Callable[[bytes], Any]]] = {
    "Pod": lambda store: PodListDecoder(store._strings, source=store)
}
# ---------------------------------------------------------------------------- indexes (client-go's Indexers)
# An index function maps an object to the values it is filed under (client-go's IndexFunc returns []string; values here
# are any hashable: a node name, a (namespace, name) key). Every store keeps these, from the first LIST on, in the same
# pass that stores the objects: the model reads its pod, claim and event joins from them instead of holding a second map
# (fleet/model.py). A kind's indexes are named; `FleetStore.index(kind, name, value)` answers the keys filed there.
# The keys filed under one value are held as the keys of a dict (each mapped to None), not in a set, and a value filed
# with one key only holds that key itself (the store's own tuple: nothing allocated). A set's table is sparse (5 keys
# take 728 bytes, 20,000 keys 2 MiB; a dict 224 bytes and 0.6 MiB) and a fleet's values are mostly filed once (a
# pod's claim, a pool's slice): at the scale benchmark the sets held 10 MiB, these 4 MiB.
IndexFunc = Callable[[dict], Iterable[Hashable]]
_EMPTY: dict = {}
_NO_KEYS: frozenset = frozenset()


def _file_under(idx: dict, v: Hashable, key: Key) -> None:
    """File `key` under `v`: the key itself while it is the only one, then a dict of them."""
    keys = idx.get(v)
    if keys is None:
        idx[v] = key
    elif keys.__class__ is dict:
        keys[key] = None
    elif keys != key:
        idx[v] = {keys: None, key: None}


def _unfile(idx: dict, v: Hashable, key: Key) -> None:
    """Take `key` from under `v` (the value goes once no key is left; one left is held as itself again)."""
    keys = idx.get(v)
    if keys is None:
        return
    if keys.__class__ is dict:
        keys.pop(key, None)
        if len(keys) <= 1:
            if keys:
                idx[v] = next(iter(keys))
            else:
                del idx[v]
    elif keys == key:
        del idx[v]


WAITING_PHASES = ("Pending", "Failed", None)  # a pod not running and not done: the Stuck view's candidates


def pod_node(pod: dict) -> tuple[str, ...]:
    """A pod's node (spec.nodeName), once it has one."""
    node = (pod.get("spec") or _EMPTY).get("nodeName")
    return (node,) if node else ()


def pod_waiting(pod: dict) -> tuple[bool, ...]:
    """Filed under True while the pod's phase is Pending, Failed or not set yet (WAITING_PHASES)."""
    return (True,) if (pod.get("status") or _EMPTY).get("phase") in WAITING_PHASES else ()


def _owners(obj: dict, kind: str) -> tuple[Key, ...]:
    meta = obj.get("metadata") or _EMPTY
    refs = meta.get("ownerReferences")
    if not refs:
        return ()
    ns = meta.get("namespace") or ""
    if refs.__class__ is list and len(refs) == 1:
        # Nearly every owned object has one owner: no generator for it (a first LIST files 10,000 claims so).
        o = refs[0]
        return ((ns, o.get("name", "")),) if o.get("kind") == kind else ()
    return tuple((ns, o.get("name", "")) for o in refs if o.get("kind") == kind)


def pod_daemonsets(pod: dict) -> tuple[Key, ...]:
    """The (namespace, name) of the DaemonSets owning a pod."""
    return _owners(pod, "DaemonSet")


def pod_bare(pod: dict) -> tuple[bool, ...]:
    """Filed under True for a pod no controller owns (static and mirror pods: classified by their labels and images)."""
    return () if (pod.get("metadata") or _EMPTY).get("ownerReferences") else (True,)


def pod_notable(pod: dict) -> tuple[bool, ...]:
    """Filed under True unless the pod-reading rules of fleet/diagnose have nothing to read in it: a pod Succeeded, or
    Running on its node as a projection (no extended resources, no claims: fleet/projection.py keeps those whole) with
    no extendedResourceClaimStatus, nodeSelector or affinity (what steers it to a GPU model). At the envelope that
    leaves ~25,000 of 150,000 pods for the diagnosis to walk (fleet/diagnose/context.py Context.pod_groups)."""
    status = pod.get("status") or _EMPTY
    phase = status.get("phase")
    if phase == "Succeeded":
        return ()
    spec = pod.get("spec") or _EMPTY
    if (
        phase == "Running"
        and pod.__class__ is Projection
        and spec.get("nodeName")
        and not status.get("extendedResourceClaimStatus")
        and not spec.get("nodeSelector")
        and not spec.get("affinity")
        and not spec.get("resourceClaims")
    ):
        return ()
    return (True,)


def _pod_filing(pod: dict) -> tuple:
    """Everything the standard pod indexes read of a pod (pod_node, pod_waiting, pod_daemonsets, pod_bare,
    pod_notable), in one pass: two pods equal in this are filed alike (a test holds the two to each other)."""
    spec = pod.get("spec") or _EMPTY
    status = pod.get("status") or _EMPTY
    meta = pod.get("metadata") or _EMPTY
    refs = meta.get("ownerReferences") or None
    return (
        spec.get("nodeName") or None,
        status.get("phase"),
        pod.__class__ is Projection,
        bool(status.get("extendedResourceClaimStatus")),
        bool(spec.get("nodeSelector")),
        bool(spec.get("affinity")),
        bool(spec.get("resourceClaims")),
        (meta.get("namespace") or "", refs) if refs else None,
    )


def claim_owner_pods(claim: dict) -> tuple[Key, ...]:
    """The (namespace, name) of the pods owning a claim (a template's claim, the bridge's claim)."""
    return _owners(claim, "Pod")


def event_involved(event: dict) -> tuple[tuple[str, str, str], ...]:
    """(kind, namespace, name) of the object an Event is about (core/v1 involvedObject, events.k8s.io regarding)."""
    inv = event.get("involvedObject") or event.get("regarding") or _EMPTY
    return ((inv.get("kind", ""), inv.get("namespace") or "", inv.get("name", "")),)


def slice_pool(sl: dict) -> tuple[tuple[str, str], ...]:
    """(driver, pool name) of a ResourceSlice (fleet/k8s/slices.py says what a pool is)."""
    return (slices.slice_pool(sl),)


INDEXERS: dict[str, dict[str, IndexFunc]] = {
    "Pod": {
        "node": pod_node,
        "waiting": pod_waiting,
        "daemonset": pod_daemonsets,
        "bare": pod_bare,
        "notable": pod_notable,
    },
    "ResourceClaim": {"ownerPod": claim_owner_pods},
    "Event": {"involved": event_involved},
    "ResourceSlice": {"pool": slice_pool},
}

WHOLE_CACHE = 32  # whole objects fetched on demand, kept for pages reopened soon after
BULK_CHANGES = 5000  # a first LIST this large records its additions with the cyclic collector paused


def _rv(obj: dict | None) -> str | None:
    return None if obj is None else (obj.get("metadata") or {}).get("resourceVersion")


@dataclasses.dataclass
class Change:
    """One object changed: `type` is ADDED, MODIFIED or DELETED; `old` is the previous object (None when ADDED)."""

    kind: str
    type: str
    obj: dict
    old: dict | None


# Connection states, per kind and overall.
SYNCING = "syncing"  # first LIST in progress
LIVE = "live"  # listed and watching
RECONNECTING = "reconnecting"  # lost the watch or the server; retrying with backoff
FORBIDDEN = "forbidden"  # the user may not list this kind (403); the rest goes on
UNREACHABLE = "unreachable"  # the server cannot be reached (or refuses our credentials)
SNAPSHOT = "snapshot"  # read from a file; never changes
STOPPED = "stopped"


@dataclasses.dataclass(frozen=True)
class ConnectionState:
    """Where one kind (or the whole picture) stands: `status` is one of the constants above, `message` one sentence or
    ""."""

    status: str
    message: str = ""
    # True once this kind has been listed completely at least once (the picture of it is whole).
    synced: bool = False
    since: float = dataclasses.field(default_factory=time.time, compare=False)


class FleetStore:
    """Raw objects per kind, keyed by (namespace or "", name), with batched change notifications.

    Writers (informers, the snapshot loader) call `replace` and `apply`; readers call `objects`/`get`
    and `subscribe`. Changes are delivered in batches: inside a running event loop they are held for
    `coalesce` seconds (or until the current loop iteration ends when 0) and successive changes of the
    same object are folded into one, so a burst of watch events reaches subscribers as a few calls.
    Outside an event loop each write is delivered at once.
    """

    def __init__(
        self, kinds: Iterable[str] | None = None, *, coalesce: float = 0.01, read_only: bool = False, source: str = ""
    ) -> None:
        self.kinds: list[str] = list(kinds if kinds is not None else KINDS)
        self._objects: dict[str, dict[tuple[str, str], dict]] = {k: {} for k in self.kinds}
        self._subscribers: list[Callable[[list[Change]], None]] = []
        self._state_subscribers: list[Callable[[str | None, ConnectionState], None]] = []
        self._pending: dict[tuple[str, str, str], Change] = {}
        self._flush_handle: asyncio.Handle | asyncio.TimerHandle | None = None
        self._states: dict[str, ConnectionState] = {k: ConnectionState(SYNCING) for k in self.kinds}
        self.coalesce = coalesce
        # A snapshot-fed store: writers elsewhere (actions) must refuse to change the cluster.
        self.read_only = read_only
        # "cluster <server>" or "snapshot <path>": for the header and for error messages.
        self.source = source
        # Objects a server sent with fields of the wrong type, left out of the store: "Kind ns/name" -> a sentence.
        self.notes: dict[str, str] = {}
        self.malformed_count = 0
        # Where whole objects come from when a projection is not enough (a Cluster); None: keep everything whole.
        # Only a store fed by a cluster projects: a snapshot's store has no server to fetch the rest from.
        self.whole_source: Any = None
        self._strings: dict[str, str] = {}
        self._whole: dict[tuple[str, str, str], dict] = {}
        # False while every subscriber reads the store whole once it is synced (the TUI's feed, until its first
        # load): a kind's first LIST is then stored without a change per object (150,000 pods' worth at the
        # envelope, made only to be dropped).
        self.announce_first_lists = True
        # kind -> index name -> function; kind -> index name -> value -> keys (as a dict's; emptied ones are removed).
        self._indexers: dict[str, dict[str, IndexFunc]] = {k: dict(INDEXERS.get(k, _EMPTY)) for k in self.kinds}
        self._indices: dict[str, dict[str, dict[Hashable, Any]]] = {
            k: {n: {} for n in fns} for k, fns in self._indexers.items()
        }

        # Writes that wait while a reader in another thread holds the store (see `hold`).
        self._holds = 0
        self._held: list[tuple[Callable[..., None], tuple, dict]] = []

    def hold(self) -> Callable[[], None]:
        """Keep every object and index as it is until the returned function is called: writes made meanwhile wait and
        are then made in order. For a reader in another thread (a model read whole while the informers go on): a
        mapping it iterates must not change size under it."""
        self._holds += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self._holds -= 1
            while not self._holds and self._held:
                fn, args, kwargs = self._held.pop(0)
                fn(*args, **kwargs)

        return release

    # ---------------------------------------------------------------- indexes
    def add_indexers(self, kind: str, indexers: Mapping[str, IndexFunc]) -> None:
        """Keep more indexes of `kind` (client-go's AddIndexers); the objects already held are filed at once."""
        for name, fn in indexers.items():
            if name in self._indexers[kind]:
                raise ValueError(f"{kind} already has an index named {name!r}")
            self._indexers[kind][name] = fn
            idx: dict[Hashable, Any] = {}
            self._indices[kind][name] = idx
            for key, obj in self._objects[kind].items():
                for v in fn(obj):
                    _file_under(idx, v, key)

    def index(self, kind: str, name: str, value: Hashable) -> Set[Key]:
        """The keys of the objects of `kind` filed under `value` by the index `name` (client-go's IndexKeys), to read
        now: the store's own keys (a live view) when there are several, a frozenset of the one there is."""
        keys = self._indices[kind][name].get(value)
        if keys is None:
            return _NO_KEYS
        if keys.__class__ is dict:
            return keys.keys()
        return frozenset((keys,))

    def by_index(self, kind: str, name: str, value: Hashable) -> list[dict]:
        """The objects filed under `value` (client-go's ByIndex), in key order."""
        objs = self._objects[kind]
        return [objs[k] for k in sorted(self.index(kind, name, value)) if k in objs]

    def index_values(self, kind: str, name: str) -> Collection[Hashable]:
        """Every value some object of `kind` is filed under (client-go's ListIndexFuncValues): a live view."""
        return self._indices[kind][name].keys()

    def _file(self, kind: str, key: Key, old: dict | None, new: dict | None) -> None:
        """Move `key` in `kind`'s indexes from where `old` was filed to where `new` is."""
        indexers = self._indexers[kind]
        if (
            old is not None
            and new is not None
            and kind == "Pod"
            and indexers == INDEXERS["Pod"]
            and _pod_filing(old) == _pod_filing(new)
        ):
            return  # most pod events (a status update) leave it where it was: two reads instead of ten calls
        for name, fn in indexers.items():
            idx = self._indices[kind][name]
            before = fn(old) if old is not None else ()
            after = fn(new) if new is not None else ()
            if before == after:
                continue
            for v in before:
                _unfile(idx, v, key)
            for v in after:
                _file_under(idx, v, key)

    def _file_all(self, kind: str, objects: Mapping[Key, dict]) -> None:
        """File objects newly added to an empty `kind` (a first LIST): one call per index, not per object and index."""
        indexers = self._indexers[kind]
        if kind == "Pod" and indexers == INDEXERS["Pod"]:
            self._file_pods(objects)
            return
        for name, fn in indexers.items():
            idx = self._indices[kind][name]
            for key, obj in objects.items():
                for v in fn(obj):
                    _file_under(idx, v, key)

    def _file_pods(self, pods: Mapping[Key, dict]) -> None:
        """_file_all of the standard pod indexes in one loop, each pod's sections read once: a fleet's first LIST is
        mostly pods (150,000 at the envelope), where four calls per pod cost three times this. It files exactly what
        pod_node, pod_waiting, pod_daemonsets, pod_bare and pod_notable say (a test compares the two)."""
        idx = self._indices["Pod"]
        by_node, waiting, by_ds, bare = idx["node"], idx["waiting"], idx["daemonset"], idx["bare"]
        notable = idx["notable"]
        waiting_keys = waiting.setdefault(True, {})
        bare_keys = bare.setdefault(True, {})
        notable_keys = notable.setdefault(True, {})
        for key, pod in pods.items():
            spec = pod.get("spec") or _EMPTY
            status = pod.get("status") or _EMPTY
            node = spec.get("nodeName")
            if node:
                keys = by_node.get(node)
                if keys is None:
                    by_node[node] = key
                elif keys.__class__ is dict:
                    keys[key] = None
                else:
                    by_node[node] = {keys: None, key: None}
            phase = status.get("phase")
            if phase in WAITING_PHASES:
                waiting_keys[key] = None
            # pod_notable, inlined
            if phase != "Succeeded" and not (
                phase == "Running"
                and pod.__class__ is Projection
                and node
                and not status.get("extendedResourceClaimStatus")
                and not spec.get("nodeSelector")
                and not spec.get("affinity")
                and not spec.get("resourceClaims")
            ):
                notable_keys[key] = None
            meta = pod.get("metadata") or _EMPTY
            refs = meta.get("ownerReferences")
            if not refs:
                bare_keys[key] = None
                continue
            for o in refs:
                if o.get("kind") == "DaemonSet":
                    ds = (meta.get("namespace") or "", o.get("name", ""))
                    keys = by_ds.get(ds)
                    if keys is None:
                        by_ds[ds] = key
                    elif keys.__class__ is dict:
                        keys[key] = None
                    elif keys != key:
                        by_ds[ds] = {keys: None, key: None}
        for table in (waiting, bare, notable):
            if not table[True]:
                del table[True]

    def put_all(self, kind: str, objects: Mapping[Key, dict]) -> None:
        """Hold and file objects keyed by key_of in a `kind` that holds none yet, telling no subscriber (see `put`)."""
        if self._objects[kind]:
            raise ValueError(f"put_all fills an empty kind; {kind} holds {len(self._objects[kind])} objects")
        self._objects[kind].update(objects)
        self._file_all(kind, objects)

    def put(self, kind: str, obj: dict) -> dict | None:
        """Hold `obj` (kept as given, never projected) and file it, telling no subscriber: the writer of a store nobody
        watches (a model's own, loaded from a snapshot or a test's objects). Returns the object it replaced."""
        key = key_of(obj)
        objs = self._objects[kind]
        old = objs.get(key)
        objs[key] = obj
        self._file(kind, key, old, obj)
        return old

    def drop(self, kind: str, key: Key) -> dict | None:
        """Forget the object at `key`, telling no subscriber (see `put`); returns it, None when not held."""
        old = self._objects[kind].pop(key, None)
        if old is not None:
            self._file(kind, key, old, None)
        return old

    # ---------------------------------------------------------------- reading
    def objects(self, kind: str) -> dict[tuple[str, str], dict]:
        """The live mapping (namespace or "", name) -> object of one kind; it stays current as the store changes. Do not
        mutate."""
        return self._objects[kind]

    def get(self, kind: str, namespace: str | None, name: str) -> dict | None:
        return self._objects[kind].get((namespace or "", name))

    # ---------------------------------------------------------------- whole objects on demand
    def serve_whole_from(self, cluster: Any) -> None:
        """Project the kinds in PROJECTORS from now on; whole objects are fetched from `cluster` when a page needs
        them."""
        self.whole_source = cluster

    def needs_fetch(self, obj: dict | None) -> bool:
        """Whether `obj` is a projection whose whole object this store does not hold."""
        return isinstance(obj, Projection) and self._cached_whole(obj) is None

    def whole_of(self, obj: dict | None) -> dict | None:
        """The whole object behind `obj` when it has been fetched (or `obj` itself when it is whole); else `obj`."""
        if isinstance(obj, Projection):
            return self._cached_whole(obj) or obj
        return obj

    def _whole_key(self, obj: dict) -> tuple[str, str, str]:
        return (str(obj.get("kind") or ""), *key_of(obj))

    def _cached_whole(self, obj: dict) -> dict | None:
        hit = self._whole.get(self._whole_key(obj))
        # Only the same version: a projection that moved on since must not show an older whole object.
        return hit if hit is not None and _rv(hit) == _rv(obj) else None

    async def fetch_whole(self, obj: dict) -> dict:
        """The whole object behind a projection, read from the server (one GET, through the cluster's client).

        Returns `obj` unchanged when it is whole already. The object read is kept (the last WHOLE_CACHE of them) so
        the page can be drawn again; raises the cluster's ClusterError when the read fails."""
        if not isinstance(obj, Projection):
            return obj
        cached = self._cached_whole(obj)
        if cached is not None:
            return cached
        cluster = self.whole_source
        if cluster is None:
            raise LookupError("this store has no server to fetch whole objects from")
        key = self._whole_key(obj)
        info = KINDS[key[0]]
        whole = await cluster.get(info.path(key[1] or None, key[2]))
        if isinstance(whole, dict):
            whole.setdefault("kind", info.kind)
            whole.setdefault("apiVersion", info.api_version)
        while len(self._whole) >= WHOLE_CACHE:
            self._whole.pop(next(iter(self._whole)))
        self._whole[key] = whole
        return whole

    def page_decoder(self, kind: str) -> Callable[[bytes], Any] | None:
        """A decoder for LIST pages of `kind` that projects as it decodes, when this store projects that kind."""
        make = PAGE_DECODERS.get(kind) if self.whole_source is not None else None
        return make(self) if make is not None else None

    def _project(self, kind: str, obj: dict) -> dict:
        projector = PROJECTORS.get(kind) if self.whole_source is not None else None
        if projector is None:
            return obj
        out = projector(obj, self._strings)
        if isinstance(out, Projection):
            out.source = self
        return out

    def projected(self, kind: str) -> int:
        """How many objects of `kind` are held as projections."""
        return sum(1 for o in self._objects[kind].values() if isinstance(o, Projection))

    def count(self, kind: str | None = None) -> int:
        if kind is not None:
            return len(self._objects[kind])
        return sum(len(v) for v in self._objects.values())

    # ---------------------------------------------------------------- subscribing
    def subscribe(self, callback: Callable[[list[Change]], None]) -> Callable[[], None]:
        """Call `callback(batch)` after changes; returns a function that unsubscribes."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def subscribe_state(self, callback: Callable[[str | None, ConnectionState], None]) -> Callable[[], None]:
        """Call `callback(kind, state)` when a kind's connection state changes, then `callback(None, overall)`."""
        self._state_subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._state_subscribers:
                self._state_subscribers.remove(callback)

        return unsubscribe

    # ---------------------------------------------------------------- writing
    def replace(self, kind: str, objects: list[dict], *, decoded: bool = False) -> None:
        """Make `kind` hold exactly `objects` (after a LIST or relist), emitting the difference as changes.

        `decoded`: the objects came through this store's page_decoder(kind), which projected them already."""
        if self._holds:
            self._held.append((self.replace, (kind, objects), {"decoded": decoded}))
            return
        # Changed in place, so a reader holding `objects(kind)` keeps seeing the live mapping.
        current = self._objects[kind]
        fresh: dict[tuple[str, str], dict] = {}
        project = not decoded and self.whole_source is not None and kind in PROJECTORS
        for obj in objects:
            if project:
                obj = self._project(kind, obj)
            fresh[key_of(obj)] = obj
        if not current:
            # Nothing held yet (the first LIST): every object is an addition; no comparison to make. A fleet's worth
            # of Changes makes no cycles: the cyclic collector is kept from rescanning them, as the decoder does.
            current.update(fresh)
            self._file_all(kind, fresh)
            if not self.announce_first_lists:
                return
            pending = self._pending
            bulk = len(fresh) >= BULK_CHANGES and gc.isenabled()
            if bulk:
                gc.disable()
            try:
                for key, obj in fresh.items():
                    pk = (kind, *key)
                    if pk in pending:
                        self._record(Change(kind, "ADDED", obj, None))
                    else:
                        pending[pk] = Change(kind, "ADDED", obj, None)
            finally:
                if bulk:
                    gc.freeze()  # they die at the flush, by reference counting, frozen or not
                    gc.enable()
            self._schedule()
            return
        gone = [key for key in current if key not in fresh]
        old: dict | None
        for key in gone:
            old = current.pop(key)
            self._file(kind, key, old, None)
            self._record(Change(kind, "DELETED", old, old))
        for key, obj in fresh.items():
            old = current.get(key)
            if old is None:
                current[key] = obj
                self._file(kind, key, None, obj)
                self._record(Change(kind, "ADDED", obj, None))
            elif old is not obj and (_rv(old) != _rv(obj) or _rv(obj) is None and old != obj):
                current[key] = obj
                self._file(kind, key, old, obj)
                self._record(Change(kind, "MODIFIED", obj, old))
            # else unchanged: keep the object already held so readers' references stay valid.
        self._schedule()

    def apply(self, kind: str, event_type: str, obj: dict, *, decoded: bool = False) -> None:
        """Apply one watch event (ADDED, MODIFIED or DELETED) to `kind`.

        `decoded`: `obj` came through this store's page_decoder(kind), which projected it (or judged it whole) already.
        """
        if self._holds:
            self._held.append((self.apply, (kind, event_type, obj), {"decoded": decoded}))
            return
        objs = self._objects[kind]
        if event_type != "DELETED" and self.whole_source is not None and not decoded:
            obj = self._project(kind, obj)
        key = key_of(obj)
        old = objs.get(key)
        if event_type == "DELETED":
            if old is None:
                return
            del objs[key]
            self._file(kind, key, old, None)
            self._record(Change(kind, "DELETED", obj, old))
        elif event_type in ("ADDED", "MODIFIED"):
            if old is not None and _rv(old) is not None and _rv(old) == _rv(obj):
                return  # a duplicate (e.g. replayed after a reconnect)
            objs[key] = obj
            self._file(kind, key, old, obj)
            self._record(Change(kind, "ADDED" if old is None else "MODIFIED", obj, old))
        else:
            raise ValueError(f"unknown event type {event_type!r}")
        self._schedule()

    # ---------------------------------------------------------------- state
    def state(self, kind: str) -> ConnectionState:
        return self._states[kind]

    @property
    def states(self) -> dict[str, ConnectionState]:
        return dict(self._states)

    def set_state(self, kind: str, status: str, message: str = "", *, synced: bool | None = None) -> None:
        old = self._states[kind]
        new = ConnectionState(status, message, old.synced if synced is None else synced)
        if new == old:
            return
        self._states[kind] = new
        overall = self.overall
        for cb in list(self._state_subscribers):
            for args in ((kind, new), (None, overall)):
                try:
                    cb(*args)
                except Exception:  # a broken subscriber must not stop the informers
                    log.exception("state subscriber failed")

    @property
    def overall(self) -> ConnectionState:
        """One state for the whole picture, with a sentence naming the kinds that are not live."""
        states = self._states
        if not states:
            return ConnectionState(LIVE, "", True)
        by_status: dict[str, list[str]] = {}
        for kind, st in states.items():
            by_status.setdefault(st.status, []).append(kind)
        synced = all(st.synced or st.status == FORBIDDEN for st in states.values())
        forbidden = by_status.get(FORBIDDEN, [])
        note = f"not allowed to read {', '.join(forbidden)}." if forbidden else ""
        if SNAPSHOT in by_status and len(by_status) == 1:
            return ConnectionState(SNAPSHOT, self.source, True)
        if len(forbidden) == len(states):
            return ConnectionState(FORBIDDEN, note, False)
        relevant = [k for k in states if states[k].status != FORBIDDEN]
        if all(states[k].status == UNREACHABLE for k in relevant):
            first = states[relevant[0]].message
            return ConnectionState(UNREACHABLE, first, synced)
        for status in (UNREACHABLE, RECONNECTING):
            if status in by_status:
                kinds = by_status[status]
                msg = states[kinds[0]].message or f"{status}: {', '.join(kinds)}."
                return ConnectionState(RECONNECTING, " ".join(x for x in (msg, note) if x), synced)
        if SYNCING in by_status:
            return ConnectionState(SYNCING, f"listing {', '.join(by_status[SYNCING])}.", synced)
        if STOPPED in by_status:
            return ConnectionState(STOPPED, note, synced)
        return ConnectionState(LIVE, note, synced)

    # ---------------------------------------------------------------- delivery
    def _record(self, change: Change) -> None:
        key = (change.kind, *key_of(change.obj))
        prev = self._pending.get(key)
        if prev is None:
            self._pending[key] = change
            return
        # Fold two changes of one object into one, as seen from before the first to after the second.
        if prev.type == "ADDED" and change.type == "DELETED":
            del self._pending[key]
        elif prev.type == "ADDED":
            self._pending[key] = Change(change.kind, "ADDED", change.obj, None)
        elif change.type == "DELETED":
            self._pending[key] = Change(change.kind, "DELETED", change.obj, prev.old)
        elif prev.type == "DELETED":  # deleted then added again
            self._pending[key] = Change(change.kind, "MODIFIED", change.obj, prev.old)
        else:
            self._pending[key] = Change(change.kind, "MODIFIED", change.obj, prev.old)

    def _schedule(self) -> None:
        if not self._pending or self._flush_handle is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        if self.coalesce > 0:
            self._flush_handle = loop.call_later(self.coalesce, self.flush)
        else:
            self._flush_handle = loop.call_soon(self.flush)

    def flush(self) -> None:
        """Deliver pending changes now (tests and one-shot loaders call this; informers need not)."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if not self._pending:
            return
        batch = list(self._pending.values())
        self._pending = {}
        for cb in list(self._subscribers):
            try:
                cb(batch)
            except Exception:  # one broken view must not starve the others
                log.exception("store subscriber failed")
