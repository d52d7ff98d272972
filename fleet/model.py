"""The fleet model: pools, nodes and their GPU ownership, devices, classes and claims, derived incrementally from raw
objects.

`FleetModel` keeps the raw objects and their indexes (`load`, `apply`, and per kind the indexer that
`FleetModel.INDEXERS` names) and answers the read queries (nodes, pools, classes, claims, pods, owners). Which devices
a CEL selector matches is fleet/selectors.py (the model's `evaluate_selectors` and friends hand over to it); the rows
shown of all this are fleet/views/, and what a batch of changes touched is fleet/delta.py.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence, Set
from typing import Any, ClassVar, NamedTuple, cast

from dragoman.fleet import gpustack, nvidia_schema, podstate
from dragoman.fleet import ownership as own
from dragoman.fleet.delta import Delta, delta_of, stack_pod_unchanged
from dragoman.fleet.gpustack import Workload
from dragoman.fleet.k8s import DEVICECLASS_PREFIX, Key, key_of, match_node_selector, times
from dragoman.fleet.k8s.devicestate import DeviceState, FleetDevices, result_entries
from dragoman.fleet.k8s.extended import is_dra_extended_resource_name
from dragoman.fleet.k8s.kubelet import BRIDGE_VERSION, parse_kubelet_version
from dragoman.fleet.k8s.podclaims import pod_claim_names
from dragoman.fleet.k8s.podresources import pod_requests
from dragoman.fleet.k8s.quantity import count
from dragoman.fleet.k8s.slices import attribute_value, lookup_attribute, newest_generation, qualified_attribute_name
from dragoman.fleet.migration import MigrationState, parse_migration
from dragoman.fleet.ownership import GPU, MIG_PREFIX
from dragoman.fleet.pools import POOL_LABELS, UNLABELED, PoolAggregate, PoolView, detect_pool_label, pool_label_of
from dragoman.fleet.selectors import FleetSelectors, SelectorResult
from dragoman.fleet.store import KINDS as STORE_KINDS
from dragoman.fleet.store import WAITING_PHASES as WAITING_PHASES  # where the Stuck view's readers find it
from dragoman.fleet.store import FleetStore

DeviceId = tuple[str, str, str]  # (driver, pool, device)

# The kinds the model indexes: every kind dragoman reads (one table, fleet/store.py's, with where each lives).
KINDS = tuple(STORE_KINDS)
BRIDGE_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
IMPLICIT_PREFIX = DEVICECLASS_PREFIX
TERMINAL_PHASES = ("Succeeded", "Failed")
# GPU Feature Discovery labels read for the hardware and the sharing set-up.
GFD_PRODUCT = "nvidia.com/gpu.product"
GFD_COUNT = "nvidia.com/gpu.count"
GFD_REPLICAS = "nvidia.com/gpu.replicas"
GFD_SHARING = "nvidia.com/gpu.sharing-strategy"
GFD_MIG_STRATEGY = "nvidia.com/mig.strategy"
GPU_NODE_LABELS = ("nvidia.com/gpu.present", GFD_PRODUCT, GFD_COUNT, "feature.node.kubernetes.io/pci-10de.present")


_EMPTY: dict = {}  # read only: what a missing section reads as, without a new dict each time


def _given(new: dict | None, old: dict | None) -> dict:
    """The object an index call is about: the new one, or the old one when it was deleted (one is always given)."""
    obj = new or old
    assert obj is not None
    return obj


def pod_extended_requests(pod: dict) -> dict[str, int]:
    """The pod's extended-resource requests (device-plugin names, DeviceClass extendedResourceNames and implicit
    names) as the scheduler counts them (fleet/k8s/podresources.py: native sidecars add, init containers peak)."""
    reqs = pod_requests(pod, only=is_dra_extended_resource_name)
    return {k: v for k, v in reqs.items() if v > 0}


def pod_terminal(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in TERMINAL_PHASES


def event_count(event: dict) -> int:
    """How many times an Event happened, as kubectl prints it (printEvent): the series' count for one written
    through events.k8s.io/v1 (kube-scheduler's; no `count` there), else `count` (`deprecatedCount` in a snapshot
    of that API's view), else 1."""
    series = event.get("series")
    if isinstance(series, dict) and series.get("count"):
        return int(series["count"])
    return int(event.get("count") or event.get("deprecatedCount") or 1)


def event_last_seen(event: dict) -> str:
    """When an Event last happened (kubectl's "Last Seen"): the series' lastObservedTime, else lastTimestamp, else
    eventTime (an events.k8s.io/v1 singleton has no lastTimestamp), else when it was created. Microseconds are
    dropped, so values of both shapes sort together as strings."""
    series = event.get("series")
    seen = (
        (series.get("lastObservedTime") if isinstance(series, dict) else None)
        or event.get("lastTimestamp")
        or event.get("deprecatedLastTimestamp")
        or event.get("eventTime")
        or (event.get("metadata") or {}).get("creationTimestamp")
        or ""
    )
    return seen[:19] + "Z" if len(seen) > 19 else seen


class DeviceHealth(NamedTuple):
    """One device the kubelet reports for a container (status.*containerStatuses[].allocatedResourcesStatus)."""

    container: str
    status_name: str  # "claim:<pod claim>[/<request>]", or the device-plugin resource name
    device: str  # "<driver>/<pool>/<device>" when resource_id names a device of the pod's claims; else resource_id
    health: str  # Healthy | Unhealthy | Unknown
    message: str
    resource_id: str  # as the kubelet wrote it


def resource_device(resource_id: str, claims: Iterable[dict] = ()) -> DeviceId | None:
    """The DRA device an allocatedResourcesStatus resourceID names, found among `claims` (the pod's). A kubelet v1.37
    writes the first CDI device name the driver returned from NodePrepareResources, and "<driver>/<pool>/<device>"
    only when it returned none (pkg/kubelet/cm/dra/manager.go buildResourceHealth). NVIDIA's GPU driver returns
    `k8s.gpu.nvidia.com/claim=<claim uid>-<device>` (v25.3 to v25.8: `k8s.gpu.nvidia.com/device=<device>` first;
    fleet/nvidia_schema.cdi_device_ids); another driver's CDI names say nothing dragoman can read: None."""
    results = [
        (str(c.get("metadata", {}).get("uid") or ""), r)
        for c in claims
        if isinstance(c, dict)
        for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or ()
        if isinstance(r, dict)
    ]
    if "=" not in resource_id:
        driver, _, rest = resource_id.partition("/")
        pool, _, device = rest.rpartition("/")  # a pool name may hold slashes; driver and device names do not
        return (driver, pool, device) if driver and pool and device else None
    parsed = nvidia_schema.device_of_cdi_id(resource_id)
    if parsed is None:
        return None
    claim_uid, device = parsed
    found = {
        (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
        for uid, r in results
        if r.get("driver") == nvidia_schema.DRIVER and r.get("device") == device and claim_uid in (None, uid)
    }
    return found.pop() if len(found) == 1 else None


def device_health(pod: dict, claims: Iterable[dict] = ()) -> list[DeviceHealth]:
    """The health the kubelet reports for a pod's devices, each DRA device named "<driver>/<pool>/<device>" when its
    resourceID (a CDI device name or that fallback, `resource_device`) names a device of `claims` (the pod's)."""
    status = pod.get("status") or {}
    claims = list(claims)
    out = []
    for field in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(field) or ():
            if not isinstance(cs, dict):
                continue
            for rs in cs.get("allocatedResourcesStatus") or ():
                if not isinstance(rs, dict):
                    continue
                for r in rs.get("resources") or ():
                    if isinstance(r, dict):
                        rid = str(r.get("resourceID", ""))
                        dev = resource_device(rid, claims) if str(rs.get("name", "")).startswith("claim:") else None
                        out.append(
                            DeviceHealth(
                                str(cs.get("name", "")),
                                str(rs.get("name", "")),
                                "/".join(dev) if dev else rid,
                                str(r.get("health") or "Unknown"),
                                str(r.get("message") or ""),
                                rid,
                            )
                        )
    return out


def is_bridge_claim(claim: dict) -> bool:
    return ((claim.get("metadata") or {}).get("annotations") or {}).get(BRIDGE_ANNOTATION) is not None


def claim_requests(spec_devices: dict | None) -> list[dict]:
    return list((spec_devices or {}).get("requests") or [])


def claim_spec(obj: dict, kind: str) -> dict:
    """The ResourceClaimSpec of a claim or of a template."""
    spec = obj.get("spec") or {}
    if kind == "ResourceClaimTemplate":
        spec = spec.get("spec") or {}
    return spec


def request_alternatives(request: dict) -> list[tuple[str, dict]]:
    """(name, body) of what a request may be satisfied with: `exactly`, or each `firstAvailable` subrequest."""
    if request.get("exactly") is not None:
        return [(request.get("name", ""), request["exactly"])]
    if request.get("firstAvailable"):
        return [(f"{request.get('name', '')}/{sub.get('name', '')}", sub) for sub in request["firstAvailable"]]
    # v1beta1-shaped objects from old snapshots keep the fields on the request itself.
    if request.get("deviceClassName"):
        return [(request.get("name", ""), request)]
    return []


@dataclasses.dataclass(slots=True)
class StackPod:
    """A device-plugin or DRA-driver pod on a node."""

    key: Key
    workload: Workload
    phase: str
    ready: bool
    restarts: int
    flapping: bool
    flapping_reason: str

    @property
    def running(self) -> bool:
        return self.phase == "Running"


@dataclasses.dataclass(slots=True)
class DeviceView:
    """One device of the newest generation of its pool."""

    driver: str
    pool: str
    name: str
    node: str | None
    slice: str
    raw: dict

    @property
    def id(self) -> DeviceId:
        return (self.driver, self.pool, self.name)

    def attribute(self, name: str) -> Any:
        """The value of an attribute by its qualified or bare name (bare names are in the driver's domain), found as
        the scheduler finds it (slices.lookup_attribute)."""
        attrs = self.raw.get("attributes") or {}
        a = attrs.get(name)  # the name as given: most reads, and most devices publish bare names
        if a is None:
            a = lookup_attribute(attrs, self.driver, qualified_attribute_name(name, self.driver))
        return attribute_value(a)[1]

    @property
    def type(self) -> str | None:
        return self.attribute("type")

    @property
    def taints(self) -> list[dict]:
        """Taints the driver published on the device (a DeviceTaintRule's are in the model's device_state)."""
        return [t for t in self.raw.get("taints") or () if isinstance(t, dict)]

    @property
    def consumes_counters(self) -> list[dict]:
        return [c for c in self.raw.get("consumesCounters") or () if isinstance(c, dict)]

    @property
    def shared(self) -> bool:
        """allowMultipleAllocations: several claims may hold it, each consuming part of its capacity."""
        return bool(self.raw.get("allowMultipleAllocations"))

    @property
    def binding_conditions(self) -> list[str]:
        return [c for c in self.raw.get("bindingConditions") or () if isinstance(c, str)]


@dataclasses.dataclass(slots=True)
class NodeView:
    """Everything about one node that decides and explains which mechanism serves its GPUs."""

    name: str
    pool: str
    labels: dict
    kubelet_version: str | None
    kubelet: tuple[int, int, int] | None
    schedulable: bool
    ready: bool
    taints: list[dict]
    capacity_gpu: int
    allocatable_gpu: int
    has_allocatable_key: bool
    mig_capacity: dict[str, int]
    mig_allocatable: dict[str, int]
    product: str | None
    gpu_count_label: int
    replicas: int
    sharing_strategy: str | None
    mig_strategy: str | None
    device_plugin: list[StackPod]
    dra_driver: list[StackPod]
    slices: list[str]  # names of the newest-generation slices published for this node
    stale_slices: list[str]  # older generations still present, or an incomplete newest generation
    devices: list[DeviceView]
    devices_gpu: int  # hardware units of the NVIDIA DRA driver (a GPU with its partitions is one)
    devices_total: int  # hardware units published for the node (k8s/devicestate.FleetDevices.physical_key)
    devices_allocated: int  # units the allocator could not give now: held, shared without room, tainted, counters
    mechanism: str  # device-plugin | dra | both | none | flapping
    ownership: str  # the mechanism, or "migrating" while a dragoman step is in progress and nothing is wrong
    migration: MigrationState | None
    capacity_window: bool  # capacity still > 0 while allocatable is 0: the plugin stopped within the grace period
    is_gpu: bool

    @property
    def devices_free(self) -> int:
        return self.devices_total - self.devices_allocated

    @property
    def bridge_capable(self) -> bool:
        return self.kubelet is not None and self.kubelet[:2] >= BRIDGE_VERSION

    @property
    def sharing(self) -> str | None:
        if self.mig_strategy in ("single", "mixed") and (
            self.mig_capacity or self.mig_strategy == "single" and "MIG" in (self.product or "")
        ):
            return f"mig {self.mig_strategy}"
        if self.replicas > 1:
            strategy = (
                self.sharing_strategy if self.sharing_strategy and self.sharing_strategy != "none" else "time-slicing"
            )
            return f"{strategy} x{self.replicas}"
        if self.sharing_strategy and self.sharing_strategy not in ("none", ""):
            return self.sharing_strategy
        return None

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "pool": self.pool,
            "ownership": self.ownership,
            "mechanism": self.mechanism,
            "kubeletVersion": self.kubelet_version,
            "schedulable": self.schedulable,
            "capacityGpu": self.capacity_gpu,
            "allocatableGpu": self.allocatable_gpu,
            "devices": self.devices_total,
            "devicesAllocated": self.devices_allocated,
            "product": self.product,
            "sharing": self.sharing,
            "migration": dataclasses.asdict(self.migration) if self.migration else None,
            "capacityWindow": self.capacity_window,
        }


@dataclasses.dataclass
class ClassView:
    """A DeviceClass and the extended resources it serves (explicit name if it wins the tie-break, and its implicit
    name)."""

    name: str
    raw: dict
    created: str
    extended_resource_name: str | None
    implicit_name: str
    expressions: list[str]
    serves: list[str]
    shadowed_by: dict[str, str]  # explicit name -> the class that wins it instead


class FleetModel:
    """Derived views over the raw objects of one fleet; `load` once, then `apply` watch changes incrementally."""

    def __init__(self, pool_label: str | None = None) -> None:
        self.pool_label_given = pool_label
        self.pool_label: str | None = pool_label
        self.generation = 0
        self._reset()

    # ---- raw objects and indexes -------------------------------------------------------------------------------

    def _reset(self, store: FleetStore | None = None) -> None:
        # The objects are the store's (its live mappings and its indexes: fleet/store.py INDEXERS), never a second map
        # of them. A model loaded from plain objects (a snapshot's, a test's) keeps a store of its own, which `apply`
        # writes; a store given by `attach` is written by its informers, and `apply` only follows its changes.
        self._own_store = store is None
        if store is None:
            store = FleetStore(KINDS, coalesce=0)
        self.store = store
        self.objects: dict[str, dict[Key, dict]] = {k: (store.objects(k) if k in store.kinds else {}) for k in KINDS}
        self._label_counts: Counter = Counter()
        self._pools: dict[str, PoolAggregate] = {}
        self._node_pool: dict[str, str] = {}
        self._ds_workload: dict[Key, Workload | None] = {}
        # Which pods are the GPU stack's, classified; which node each is on is the store's pod index (no second map).
        self._stack_pods: dict[Key, Workload] = {}
        self._pool_node: dict[tuple[str, str], str] = {}
        # node -> the (driver, pool)s publishing for it: a tuple (mostly of one), not a set per node.
        self._slice_pools_by_node: dict[str, tuple[tuple[str, str], ...]] = {}
        self._device_states: FleetDevices | None = None
        # pools without spec.nodeName: (slice, device) -> the nodes it can be used from
        self._node_selection: dict[tuple[str, str], dict[tuple[str, str], list[str]]] = {}
        self._node_cache: dict[str, NodeView] = {}
        # The cluster's clock, from the newest node heartbeat: snapshots are judged at their own time, not ours.
        self.now: float | None = None
        self._clock_text: str | None = None
        self._classes_cache: dict[str, ClassView] | None = None
        # The epoch goes on across a reload: a screen that remembers epoch 1 from the first load must see the second
        # load's slices as a change, not as the same picture.
        before = getattr(self, "selectors", None)
        self.selectors = FleetSelectors(epoch=before.epoch if before is not None else 0)

    def load(self, objects_by_kind: Mapping[str, dict[Key, dict] | Iterable[dict]]) -> None:
        """Replace everything with these objects (per kind: a mapping key → raw object, or an iterable of objects)."""
        # Indexing allocates many small containers and no cycles: the cyclic collector would only rescan the fleet.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._load(objects_by_kind)
        finally:
            if was_enabled:
                gc.enable()

    def _load(self, objects_by_kind: Mapping[str, dict[Key, dict] | Iterable[dict]]) -> None:
        store = FleetStore(KINDS, coalesce=0)
        for kind in KINDS:
            objs = objects_by_kind.get(kind)
            if not objs:
                continue
            if isinstance(objs, dict):
                # A mapping is keyed by key_of already (a store's, a model's): its keys are not derived again.
                store.put_all(kind, objs)
            else:
                for obj in objs:
                    store.put(kind, obj)
        self._build(store, owned=True)

    def _build(self, store: FleetStore, *, owned: bool) -> None:
        """The model's own indexes over a store's objects, in one pass over the kinds it derives from (nodes, DaemonSets
        and their pods, bare pods, slices, claims): pods are read through the store's indexes, never one by one."""
        self._reset(store)
        self._own_store = owned
        if self.pool_label_given is None:
            self.pool_label = pool_label_of(self.objects["Node"].values())
        for obj in list(self.objects["Node"].values()):
            self._index_Node(None, obj)
        for k, obj in list(self.objects["DaemonSet"].items()):
            self._ds_workload[k] = gpustack.classify_daemonset(obj)
        for obj in list(self.objects["ResourceSlice"].values()):
            self._index_ResourceSlice(None, obj)
        # Claims are read when the device states are first asked for (device_states), and no node view is cached yet:
        # nothing of theirs to index here. Classes and taint rules only drop caches.
        # The GPU stack's pods: those DaemonSets own, and bare pods (classified by labels and images).
        pods = self.objects["Pod"]
        if "Pod" in store.kinds:
            keys: set[Key] = set(store.index("Pod", "bare", True))
            for ds in list(store.index_values("Pod", "daemonset")):
                keys.update(store.index("Pod", "daemonset", ds))
            for pk in keys:
                pod = pods.get(pk)
                if pod is not None:
                    self._index_stack_pod(pk, None, pod)
        self.generation += 1
        self.selectors.invalidate()

    def load_list(self, items: Iterable[dict]) -> None:
        """Load a flat sequence of objects (a snapshot's List items), grouped by their `kind`."""
        by_kind: dict[str, list[dict]] = defaultdict(list)
        for obj in items:
            if isinstance(obj, dict) and obj.get("kind") in self.objects:
                by_kind[obj["kind"]].append(obj)
        self.load(by_kind)

    def load_store(self, store: FleetStore) -> None:
        """Read a FleetStore's objects and indexes as they are (no copy); `apply` then follows the store's changes,
        which its writers have made already (tui/feed.py hands them over)."""
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._build(store, owned=False)
        finally:
            if was_enabled:
                gc.enable()

    def apply(self, changes: Sequence[Any]) -> Delta:
        """Absorb watch changes (objects with kind, type, obj, old); cost is proportional to what they touch.

        Returns which rows the batch touched (fleet/delta.py), read from the model once it absorbed the batch.
        """
        for ch in changes:
            if str(ch.type).upper() in ("BOOKMARK", "ERROR"):
                continue
            kind = ch.kind
            if kind not in self.objects:
                continue
            obj = ch.obj
            deleted = str(ch.type).upper() in ("DELETED", "DELETE")
            new = None if deleted else obj
            if self._own_store:
                if kind not in self.store.kinds:
                    continue
                old = self.store.drop(kind, key_of(obj)) if deleted else self.store.put(kind, obj)
            else:
                # The store holds the change already; it says what was there before.
                old = ch.old
            if deleted and old is None:
                continue
            index = self.INDEXERS.get(kind)
            if index is not None:
                index(self, old, new)
        self.generation += 1
        return delta_of(self, changes)

    def delta(self, changes: Sequence[Any], before: dict | None = None) -> Delta:
        """Which rows these (already absorbed) changes touched; `apply` returns the same for its batch."""
        return delta_of(self, changes, before)

    def _invalidate_node(self, node: str | None) -> None:
        if not node:
            return
        self._node_cache.pop(node, None)
        pool = self._node_pool.get(node)
        if pool is not None:
            self._pools[pool].mark(node)

    # Per-kind index maintenance: (old, new) with either side None for adds and deletes; INDEXERS, after the last
    # of them, says which method keeps which kind.

    def pool_of_labels(self, labels: dict) -> str:
        """The pool a node with these labels belongs to."""
        if self.pool_label is None:
            return UNLABELED
        return labels.get(self.pool_label) or UNLABELED

    def _observe_clock(self, node: dict) -> None:
        for c in (node.get("status") or {}).get("conditions") or ():
            t = c.get("lastHeartbeatTime")
            if t and (self._clock_text is None or t > self._clock_text):
                self._clock_text = t
                self.now = times.parse_time(t)

    def _index_Node(self, old: dict | None, new: dict | None) -> None:
        name = key_of(_given(new, old))[1]
        agg: PoolAggregate | None
        if new is not None:
            self._observe_clock(new)
        if old is not None and new is not None:
            old_labels = (old.get("metadata") or {}).get("labels") or {}
            new_labels = (new.get("metadata") or {}).get("labels") or {}
            if old_labels.get(self.pool_label or "") == new_labels.get(self.pool_label or "") and all(
                old_labels.get(lk) == new_labels.get(lk) for lk in POOL_LABELS
            ):
                # A status or spec update: the node stays in its pool; only its own view changes.
                self._invalidate_node(name)
                return
        if old is not None:
            labels = (old.get("metadata") or {}).get("labels") or {}
            for lk in POOL_LABELS:
                if lk in labels:
                    self._label_counts[lk] -= 1
            pool = self._node_pool.pop(name, None)
            if pool is not None:
                agg = self._pools[pool]
                agg.remove_member(name)
                if not agg.members:
                    del self._pools[pool]
        if new is not None:
            labels = (new.get("metadata") or {}).get("labels") or {}
            for lk in POOL_LABELS:
                if lk in labels:
                    self._label_counts[lk] += 1
            pool = self.pool_of_labels(labels)
            self._node_pool[name] = pool
            agg = self._pools.get(pool)
            if agg is None:
                agg = self._pools[pool] = PoolAggregate(pool)
            self._node_cache.pop(name, None)
            agg.add_member(name)
        self._node_cache.pop(name, None)
        self._node_selection_changed()
        if self.pool_label_given is None:
            detected = detect_pool_label(self._label_counts)
            if detected != self.pool_label:
                self._repool(detected)

    def _repool(self, label: str | None) -> None:
        self.pool_label = label
        self._pools = {}
        self._node_pool = {}
        self._node_cache.clear()
        for (_, name), node in self.objects["Node"].items():
            pool = self.pool_of_labels((node.get("metadata") or {}).get("labels") or {})
            self._node_pool[name] = pool
            agg = self._pools.get(pool)
            if agg is None:
                agg = self._pools[pool] = PoolAggregate(pool)
            agg.add_member(name)

    def _index_DaemonSet(self, old: dict | None, new: dict | None) -> None:
        k = key_of(_given(new, old))
        before = self._ds_workload.get(k)
        after = gpustack.classify_daemonset(new) if new is not None else None
        if new is None:
            self._ds_workload.pop(k, None)
        else:
            self._ds_workload[k] = after
        if before != after:
            pods = self.objects["Pod"]
            for pk in list(self._pods_of_daemonset(k)):
                pod = pods.get(pk)
                if pod is not None:
                    self._index_stack_pod(pk, pod, pod)

    def _index_stack_pod(self, pk: Key, old: dict | None, new: dict | None) -> None:
        prev = self._stack_pods.pop(pk, None)
        if prev is not None and old is not None:
            self._invalidate_node((old.get("spec") or {}).get("nodeName"))
        if new is not None:
            w = gpustack.classify_pod(new, self._ds_workload)
            if w is not None:
                self._stack_pods[pk] = w
                self._invalidate_node((new.get("spec") or {}).get("nodeName"))

    def _index_Pod(self, old: dict | None, new: dict | None) -> None:
        # Nodes, phases and owners are the store's indexes; the model keeps only which pods are the GPU stack's.
        pk = key_of(_given(new, old))
        owners = (new.get("metadata") or _EMPTY).get("ownerReferences") or () if new is not None else ()
        daemon = any(o.get("kind") == "DaemonSet" for o in owners)
        # _maybe_stack's question, its owner half answered above.
        if pk in self._stack_pods:
            if old is not None and new is not None and stack_pod_unchanged(old, new):
                return  # an annotation: the same DaemonSet's pod, its node's row unchanged (delta_of says so too)
            self._index_stack_pod(pk, old, new)
        elif new is not None and (
            daemon or (not owners and not _same_role_reading(old, new) and self._maybe_stack(new))
        ):
            self._index_stack_pod(pk, old, new)

    def _pods_of_daemonset(self, ds: Key) -> Iterable[Key]:
        return self.store.index("Pod", "daemonset", ds) if "Pod" in self.store.kinds else ()

    def _maybe_stack(self, pod: dict) -> bool:
        owners = (pod.get("metadata") or {}).get("ownerReferences")
        if owners:
            # Workload pods (ReplicaSet, Job, ...) are never GPU stack pods; only DaemonSet pods are looked up.
            return any(o.get("kind") == "DaemonSet" for o in owners)
        # Bare pods (static manifests): classified on labels and images; rare in a fleet.
        return gpustack.classify_pod(pod, {}) is not None

    def _index_ResourceSlice(self, old: dict | None, new: dict | None) -> None:
        name = key_of(_given(new, old))[1]
        for sl, add in ((old, False), (new, True)):
            if sl is None:
                continue
            spec = sl.get("spec") or {}
            pk = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""))
            node = spec.get("nodeName")
            if add:
                if node:
                    self._pool_node[pk] = node
                    on = self._slice_pools_by_node.get(node, ())
                    if pk not in on:
                        self._slice_pools_by_node[node] = (*on, pk)
                elif spec.get("allNodes") or spec.get("nodeSelector") or spec.get("perDeviceNodeSelection"):
                    self._node_selection[pk] = {}
            elif not self._slice_keys(pk):
                # The pool's last slice is gone (the store has filed the change already).
                self._pool_node.pop(pk, None)
                self._node_selection.pop(pk, None)
                on = self._slice_pools_by_node.get(node, ()) if node else ()
                if node and pk in on:
                    rest = tuple(p for p in on if p != pk)
                    if rest:
                        self._slice_pools_by_node[node] = rest
                    else:
                        del self._slice_pools_by_node[node]
            self._invalidate_node(node)
        self._node_selection_changed()
        ds = self._device_states
        if ds is not None:
            if new is not None:
                ds.upsert_slice(new)
            else:
                ds.remove_slice(name)
        self.selectors.invalidate()

    def _node_selection_changed(self) -> None:
        for pk in self._node_selection:
            self._node_selection[pk] = {}

    def _claim_results(self, claim: dict | None) -> list[DeviceId]:
        return [d for d, _ in result_entries(claim)] if claim is not None else []

    def _claim_holds(self, claim: dict | None) -> list[DeviceId]:
        """The devices a claim's allocation takes: admin-access results see a device without taking it."""
        return [d for d, r in result_entries(claim) if not r.get("adminAccess")] if claim is not None else []

    def _index_ResourceClaim(self, old: dict | None, new: dict | None) -> None:
        ck = key_of(_given(new, old))
        ds = self._device_states
        if ds is not None:
            # Only the pools of the devices the claim held or holds are read again (fleet/k8s/devicestate.py).
            ds.set_claim(ck, new)
        before = self._claim_holds(old)
        after = self._claim_holds(new)
        if before != after:
            for d in (*before, *after):
                self._invalidate_node(self._pool_node.get(d[:2]))

    def _index_DeviceClass(self, old: dict | None, new: dict | None) -> None:
        self._classes_cache = None
        self.selectors.invalidate()

    def _index_DeviceTaintRule(self, old: dict | None, new: dict | None) -> None:
        # A rule taints devices of any node: every node's free count may change.
        ds = self._device_states
        if ds is not None:
            ds.set_taint_rules(self.objects["DeviceTaintRule"].values())
        self._node_cache.clear()
        for agg in self._pools.values():
            for n in agg.members:
                agg.mark(n)

    # The kinds the model indexes, each with the method that keeps its indexes, called with (old, new) on every add,
    # update and delete (by `load` and `apply`). Every other kind of KINDS is only stored in `objects`. Checked
    # against KINDS below, at import.
    INDEXERS: ClassVar[dict[str, Callable[[FleetModel, dict | None, dict | None], None]]] = {
        "Node": _index_Node,
        "DaemonSet": _index_DaemonSet,
        "Pod": _index_Pod,
        "ResourceSlice": _index_ResourceSlice,
        "ResourceClaim": _index_ResourceClaim,
        "DeviceClass": _index_DeviceClass,
        "DeviceTaintRule": _index_DeviceTaintRule,
    }

    # ---- nodes ---------------------------------------------------------------------------------------------------

    def node_names(self) -> list[str]:
        return sorted(n for _, n in self.objects["Node"])

    def node(self, name: str) -> NodeView | None:
        view = self._node_cache.get(name)
        if view is None:
            raw = self.objects["Node"].get(("", name))
            if raw is None:
                return None
            view = self._build_node(name, raw)
            self._node_cache[name] = view
        return view

    def pool_of_node(self, name: str | None) -> str | None:
        """The pool a node is in, None for no such node (cheaper than `node(name).pool`: no view is built)."""
        if not name or ("", name) not in self.objects["Node"]:
            return None
        return self._node_pool.get(name, UNLABELED)

    def is_stack_pod(self, key: Key) -> bool:
        """Whether a pod is a device-plugin or DRA-driver pod (one a Nodes row shows)."""
        return key in self._stack_pods

    def nodes(self) -> list[NodeView]:
        with _no_gc():
            return [v for v in (self.node(n) for n in self.node_names()) if v is not None]

    def _stack_pod_view(self, pk: Key, w: Workload) -> StackPod | None:
        pod = self.objects["Pod"].get(pk)
        if pod is None or pod_terminal(pod) or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return None
        flapping, restarts, reason = podstate.crash_looping(pod, self.now)
        return StackPod(
            pk, w, (pod.get("status") or {}).get("phase", ""), podstate.pod_ready(pod), restarts, flapping, reason
        )

    def pool_slices(self, driver: str, pool: str) -> tuple[list[dict], list[dict], bool]:
        """(newest-generation slices, older slices, complete) of one pool."""
        store = self.objects["ResourceSlice"]
        got = newest_generation(store[k] for k in self._slice_keys((driver, pool)) if k in store)
        if got is None:
            return [], [], False
        return got.slices, got.older, got.complete

    def _slice_keys(self, device_pool: tuple[str, str]) -> Set[Key]:
        """The keys of a (driver, DRA pool)'s slices, every generation: the store's index."""
        if "ResourceSlice" not in self.store.kinds:
            return frozenset()
        return self.store.index("ResourceSlice", "pool", device_pool)

    def _device_pool_names(self) -> list[tuple[str, str]]:
        if "ResourceSlice" not in self.store.kinds:
            return []
        return sorted(cast(Collection[tuple[str, str]], self.store.index_values("ResourceSlice", "pool")))

    def _build_node(self, name: str, raw: dict) -> NodeView:
        meta = raw.get("metadata") or {}
        labels = meta.get("labels") or {}
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        cap = status.get("capacity") or {}
        alloc = status.get("allocatable") or {}
        info = status.get("nodeInfo") or {}
        kv = info.get("kubeletVersion")
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ())
        dp: list[StackPod] = []
        dra: list[StackPod] = []
        stack = self._stack_pods
        on_node = self.store.index("Pod", "node", name) if "Pod" in self.store.kinds else ()
        for pk in sorted([pk for pk in on_node if pk in stack]):
            w = stack[pk]
            sp = self._stack_pod_view(pk, w)
            if sp is None:
                continue
            (dp if w.role == "device-plugin" else dra).append(sp)
        slices: list[str] = []
        stale: list[str] = []
        devices: list[DeviceView] = []
        # Counted as hardware: a GPU and the partitions that consume its counters are one unit, free only while the
        # allocator could give every device of it now (untainted, unheld, counters left).
        states = self.device_states()
        units: dict[tuple, bool] = {}
        gpu_units = 0
        for driver, pool in sorted(self._slice_pools_by_node.get(name, ())):
            cur, older, complete = self.pool_slices(driver, pool)
            stale.extend(key_of(s)[1] for s in older)
            if not complete:
                stale.extend(key_of(s)[1] for s in cur)
            names: list[str] = []
            for s in sorted(cur, key=lambda s: key_of(s)[1]):
                sname = key_of(s)[1]
                slices.append(sname)
                for d in (s.get("spec") or {}).get("devices") or ():
                    dname = d.get("name", "")
                    names.append(dname)
                    devices.append(DeviceView(driver, pool, dname, name, sname, d))
            before = len(units)
            states.units((driver, pool), names, units)
            if driver == nvidia_schema.DRIVER:
                gpu_units += len(units) - before  # a pool's units are its own (its driver and pool name are in each)
        devices_gpu = gpu_units
        allocated = len(units) - sum(map(bool, units.values()))
        alloc_gpu = count(alloc.get(GPU))
        cap_gpu = count(cap.get(GPU))
        mig_cap = {k: count(v) for k, v in cap.items() if k.startswith(MIG_PREFIX)}
        mig_alloc = {k: count(v) for k, v in alloc.items() if k.startswith(MIG_PREFIX)}
        alloc_any = alloc_gpu + sum(mig_alloc.values())
        plugin_running = any(p.running and not p.flapping for p in dp)
        plugin_flapping = any(p.flapping for p in dp)
        mechanism = own.decide_mechanism(alloc_any, plugin_running, plugin_flapping, devices_gpu)
        migration = parse_migration(raw)
        ownership = mechanism
        if migration is not None and migration.in_progress and mechanism not in (own.BOTH, own.FLAPPING):
            ownership = own.MIGRATING
        is_gpu = bool(
            cap_gpu
            or alloc_gpu
            or mig_cap
            or devices_gpu
            or dp
            or dra
            or any(labels.get(k) for k in GPU_NODE_LABELS)
            or migration is not None
        )
        return NodeView(
            name=name,
            pool=self._node_pool.get(name, UNLABELED),
            labels=labels,
            kubelet_version=kv,
            kubelet=parse_kubelet_version(kv),
            schedulable=not spec.get("unschedulable"),
            ready=ready,
            taints=list(spec.get("taints") or ()),
            capacity_gpu=cap_gpu,
            allocatable_gpu=alloc_gpu,
            has_allocatable_key=GPU in alloc,
            mig_capacity=mig_cap,
            mig_allocatable=mig_alloc,
            product=labels.get(GFD_PRODUCT) or (devices[0].attribute("productName") if devices else None),
            gpu_count_label=count(labels.get(GFD_COUNT)),
            replicas=count(labels.get(GFD_REPLICAS)) or 1,
            sharing_strategy=labels.get(GFD_SHARING),
            mig_strategy=labels.get(GFD_MIG_STRATEGY),
            device_plugin=dp,
            dra_driver=dra,
            slices=slices,
            stale_slices=stale,
            devices=devices,
            devices_gpu=devices_gpu,
            devices_total=len(units),
            devices_allocated=allocated,
            mechanism=mechanism,
            ownership=ownership,
            migration=migration,
            capacity_window=(cap_gpu > 0 and alloc_gpu == 0)
            or any(v > 0 and mig_alloc.get(k, 0) == 0 for k, v in mig_cap.items()),
            is_gpu=is_gpu,
        )

    # ---- pools ---------------------------------------------------------------------------------------------------

    def pool_names(self) -> list[str]:
        return sorted(self._pools)

    def pool(self, name: str) -> PoolView | None:
        agg = self._pools.get(name)
        if agg is None:
            return None
        return agg.view(self.node)

    def pools(self) -> list[PoolView]:
        with _no_gc():
            return [p for p in (self.pool(n) for n in self.pool_names()) if p is not None]

    def pool_members(self, name: str) -> list[str]:
        """The names of a pool's nodes, sorted; none for no such pool."""
        agg = self._pools.get(name)
        return sorted(agg.members) if agg is not None else []

    def pool_nodes(self, name: str) -> list[NodeView]:
        agg = self._pools.get(name)
        return [v for v in (self.node(n) for n in sorted(agg.members if agg else ())) if v is not None]

    # ---- devices -------------------------------------------------------------------------------------------------

    def current_slices(self) -> list[dict]:
        """Every slice the scheduler allocates from: the newest generation of each complete pool
        (fleet/k8s/slices.py)."""
        out = []
        for driver, pool in self._device_pool_names():
            cur, _, complete = self.pool_slices(driver, pool)
            if complete:
                out.extend(cur)
        return out

    def device_pools(self, node: str | None = None) -> list[tuple[str, str]]:
        """Every (driver, DRA pool) with slices, sorted; with `node`, those whose slices publish for that node."""
        if node is not None:
            return sorted(self._slice_pools_by_node.get(node, ()))
        return self._device_pool_names()

    def slice_pool_node(self, device_pool: tuple[str, str]) -> str | None:
        """The node a (driver, DRA pool) publishes devices for; None for a network-attached pool."""
        return self._pool_node.get(device_pool)

    def devices(self) -> Iterable[DeviceView]:
        for driver, pool in self._device_pool_names():
            node = self._pool_node.get((driver, pool))
            for s in self.pool_slices(driver, pool)[0]:
                sname = key_of(s)[1]
                snode = (s.get("spec") or {}).get("nodeName") or node
                for d in (s.get("spec") or {}).get("devices") or ():
                    yield DeviceView(driver, pool, d.get("name", ""), snode or d.get("nodeName"), sname, d)

    def device_claim(self, device: DeviceId) -> Key | None:
        """A claim holding the device (the first, by name, when a snapshot shows several): the device states' reading,
        where admin-access results hold nothing."""
        holders = self.device_states().state(device).holders
        return holders[0] if holders else None

    def device_states(self) -> FleetDevices:
        """Every current device's state (holders, shares, taints, counters, binding): the allocator's Inventory and
        AllocatedState, built on first use and then kept current by the indexers, change by change."""
        ds = self._device_states
        if ds is None:
            # A Slice and a Device object per published device, a holder entry per allocated one: tens of thousands
            # of small acyclic objects, which the cyclic collector would otherwise rescan with the whole fleet.
            with _no_gc():
                ds = self._device_states = FleetDevices(
                    self.objects["ResourceSlice"].values(),
                    self.objects["ResourceClaim"].items(),
                    self.objects["DeviceTaintRule"].values(),
                )
        return ds

    def device_state(self, device: DeviceId) -> DeviceState:
        return self.device_states().state(device)

    def device_totals(self) -> tuple[int, int]:
        """(hardware units, units the allocator could give now) over every current device of the fleet, network-attached
        ones and those of nodes not (or no longer) known included: each counted once."""
        states = self.device_states()
        units: dict[tuple, bool] = {}
        for dev in states.devices():
            unit = states.physical_key(dev.id)
            units[unit] = units.get(unit, True) and states.allocatable(dev.id)
        return len(units), sum(units.values())

    def device_nodes(self, d: DeviceView) -> list[str]:
        """The nodes a device can be used from: its node, or for a pool without spec.nodeName those its slice (or the
        device, with perDeviceNodeSelection) selects — allNodes, a node selector."""
        if d.node:
            return [d.node]
        memo = self._node_selection.setdefault(d.id[:2], {})
        hit = memo.get((d.slice, d.name))
        if hit is not None:
            return hit
        sl = self.objects["ResourceSlice"].get(("", d.slice)) or {}
        spec = sl.get("spec") or {}
        where = d.raw if spec.get("perDeviceNodeSelection") else spec
        if where.get("nodeName"):
            out = [str(where["nodeName"])]
        elif where.get("allNodes"):
            out = self.node_names()
        elif isinstance(where.get("nodeSelector"), dict):
            sel = where["nodeSelector"]
            out = [n for (_, n), node in sorted(self.objects["Node"].items()) if match_node_selector(sel, node)]
        else:
            out = []
        # Per slice when the slice decides: every device of it shares the answer.
        memo[(d.slice, d.name)] = out
        return out

    # ---- classes and the extended-resource mapping -------------------------------------------------------------

    def classes(self) -> dict[str, ClassView]:
        if self._classes_cache is not None:
            return self._classes_cache
        raw = {key_of(c)[1]: c for c in self.objects["DeviceClass"].values()}
        by_name: dict[str, list[str]] = defaultdict(list)
        for name, c in raw.items():
            ern = (c.get("spec") or {}).get("extendedResourceName")
            if ern:
                by_name[ern].append(name)
        winners: dict[str, str] = {}
        for ern, names in by_name.items():
            # Newest creationTimestamp wins; ties go to the lexicographically smaller name (RFC 3339 sorts as text).
            names.sort(key=lambda n: n)
            names.sort(key=lambda n: (raw[n].get("metadata") or {}).get("creationTimestamp") or "", reverse=True)
            winners[ern] = names[0]
        out: dict[str, ClassView] = {}
        for name in sorted(raw):
            c = raw[name]
            spec = c.get("spec") or {}
            ern = spec.get("extendedResourceName")
            implicit = IMPLICIT_PREFIX + name
            serves = [implicit]
            shadowed = {}
            if ern:
                if winners.get(ern) == name:
                    serves.insert(0, ern)
                else:
                    shadowed[ern] = winners[ern]
            out[name] = ClassView(
                name=name,
                raw=c,
                created=(c.get("metadata") or {}).get("creationTimestamp") or "",
                extended_resource_name=ern,
                implicit_name=implicit,
                expressions=[
                    (s.get("cel") or {}).get("expression", "") for s in spec.get("selectors") or () if s.get("cel")
                ],
                serves=serves,
                shadowed_by=shadowed,
            )
        self._classes_cache = out
        return out

    def classes_naming(self, resource: str) -> list[str]:
        """Classes whose extendedResourceName is `resource`, the winner first."""
        classes = self.classes()
        names = [n for n, c in classes.items() if c.extended_resource_name == resource]
        names.sort()
        names.sort(key=lambda n: classes[n].created, reverse=True)
        return names

    def class_serving(self, resource: str) -> str | None:
        """The DeviceClass the scheduler uses for an extended resource (explicit winner, else the implicit name)."""
        names = self.classes_naming(resource)
        if names:
            return names[0]
        if resource.startswith(IMPLICIT_PREFIX):
            name = resource[len(IMPLICIT_PREFIX) :]
            if name in self.classes():
                return name
        return None

    def class_nodes(self, name: str) -> dict[str, int]:
        """Nodes with devices of this class, and how many are free there."""
        return self.free_by_node(self.class_matches(name).matched)

    def free_by_node(
        self, matched: Iterable[DeviceId], tolerations: list[dict] | None = None, capacity: dict | None = None
    ) -> dict[str, int]:
        """Per node, how many of these devices the allocator could give now to a request with these tolerations and
        capacity asks (zeros kept: the node has some); a network-attached device counts on every node it can be used
        from."""
        out: dict[str, int] = defaultdict(int)
        node_of = self._pool_node
        states = self.device_states()
        for d in matched:
            free = (
                (1 if states.allocatable(d) else 0)
                if not (tolerations or capacity)
                else int(not states.state(d).exclusion(tolerations, capacity))
            )
            n = node_of.get(d[:2])
            if n is not None:
                out[n] += free
                continue
            dv = self._device_view(d)
            if dv is None:
                continue
            for n in self.device_nodes(dv):
                out[n] += free
        return dict(out)

    def _device_view(self, d: DeviceId) -> DeviceView | None:
        dev = self.device_states().device(d)
        if dev is None:
            return None
        raw = dev.raw
        for s in self.pool_slices(d[0], d[1])[0]:
            for x in (s.get("spec") or {}).get("devices") or ():
                if x is raw:
                    node = (s.get("spec") or {}).get("nodeName") or raw.get("nodeName")
                    return DeviceView(d[0], d[1], d[2], node, key_of(s)[1], raw)
        return None

    def resource_nodes(self, resource: str) -> dict[str, str]:
        """Which mechanism offers an extended resource on each node that offers it, as the scheduler decides per node:
        "device-plugin" where allocatable > 0, else "dra" where the serving class has devices there."""
        out: dict[str, str] = {}
        cls = self.class_serving(resource)
        dra_nodes = self.class_nodes(cls) if cls is not None else {}
        for (_, name), node in self.objects["Node"].items():
            alloc = ((node.get("status") or {}).get("allocatable") or {}).get(resource)
            if count(alloc) > 0:
                out[name] = "device-plugin"
            elif name in dra_nodes:
                out[name] = "dra"
        return out

    # ---- claims and pods -----------------------------------------------------------------------------------------

    def node_claims(self, node: str) -> list[Key]:
        """Claims holding devices of this node."""
        out: set[Key] = set()
        states = self.device_states()
        for driver, pool in self._slice_pools_by_node.get(node, ()):
            for s in self.pool_slices(driver, pool)[0]:
                for d in (s.get("spec") or {}).get("devices") or ():
                    out.update(states.state((driver, pool, d.get("name", ""))).holders)
        return sorted(out)

    def gpu_pods(self) -> dict[str, list[Key]]:
        """Non-terminal pods by how they ask for GPUs: "limits", "claims" or "both"."""
        out: dict[str, list[Key]] = defaultdict(list)
        for pk, pod in sorted(self.objects["Pod"].items()):
            if pod_terminal(pod):
                continue
            style = self.pod_request_style(pod)
            if style is not None:
                out[style].append(pk)
        return dict(out)

    def claim(self, ns: str, name: str) -> dict | None:
        return self.objects["ResourceClaim"].get((ns, name))

    def claim_devices(self, claim: dict) -> list[DeviceId]:
        return self._claim_results(claim)

    def claim_node(self, claim: dict) -> str | None:
        for d in self._claim_results(claim):
            n = self._pool_node.get(d[:2])
            if n:
                return n
        alloc = (claim.get("status") or {}).get("allocation") or {}
        for term in (alloc.get("nodeSelector") or {}).get("nodeSelectorTerms") or ():
            for f in term.get("matchFields") or ():
                if f.get("key") == "metadata.name" and f.get("values"):
                    return f["values"][0]
        return None

    def claim_pods(self, claim: dict) -> list[Key]:
        """Pods the claim is reserved for, or owned by."""
        ns = key_of(claim)[0]
        out = []
        for r in (claim.get("status") or {}).get("reservedFor") or ():
            if r.get("resource") == "pods":
                out.append((ns, r.get("name", "")))
        for o in (claim.get("metadata") or {}).get("ownerReferences") or ():
            if o.get("kind") == "Pod" and (ns, o.get("name", "")) not in out:
                out.append((ns, o.get("name", "")))
        return out

    def pod_claims(self, pod: dict) -> list[tuple[str, str | None]]:
        """(pod claim name, ResourceClaim name or None while not yet created) for every claim of the pod,
        including the bridge's claim (named "<extended-resources>" here)."""
        status = pod.get("status") or {}
        out = pod_claim_names(pod)
        ercs = status.get("extendedResourceClaimStatus") or {}
        if ercs.get("resourceClaimName"):
            out.append(("<extended-resources>", ercs["resourceClaimName"]))
        else:
            for ck in self.claims_owned_by(key_of(pod)):
                c = self.objects["ResourceClaim"].get(ck)
                if c is not None and is_bridge_claim(c):
                    out.append(("<extended-resources>", ck[1]))
        return out

    def claims_owned_by(self, pod: Key) -> list[Key]:
        """The claims a pod owns (its templates' claims, the bridge's claim), sorted: the store's index."""
        if "ResourceClaim" not in self.store.kinds:
            return []
        return sorted(self.store.index("ResourceClaim", "ownerPod", pod))

    def waiting_pods(self) -> Set[Key]:
        """Pods whose phase is Pending, Failed or not set yet (the Stuck view's candidates): the store's index, kept as
        pods change, so no reader scans every pod of the fleet for the few that wait. Do not mutate."""
        if "Pod" not in self.store.kinds:
            return frozenset()
        return self.store.index("Pod", "waiting", True)

    def notable_pods(self) -> Set[Key]:
        """Pods the pod-reading rules of the diagnosis may say something about (fleet/store.py pod_notable): the store's
        index, kept as pods change. Do not mutate."""
        if "Pod" not in self.store.kinds:
            return frozenset()
        return self.store.index("Pod", "notable", True)

    def pods_on_node(self, node: str) -> list[dict]:
        if "Pod" not in self.store.kinds:
            return []
        return self.store.by_index("Pod", "node", node)

    def owner_chain(self, obj: dict) -> list[tuple[str, str, str]]:
        """The controllers above an object, nearest first: Pod → ReplicaSet → Deployment, Pod → Job, ..."""
        out = []
        ns = key_of(obj)[0]
        cur = obj
        for _ in range(4):
            ref = next(
                (o for o in (cur.get("metadata") or {}).get("ownerReferences") or () if o.get("controller")), None
            )
            if ref is None:
                refs = (cur.get("metadata") or {}).get("ownerReferences") or ()
                ref = refs[0] if refs else None
            if ref is None:
                break
            kind = ref.get("kind", "")
            out.append((kind, ns, ref.get("name", "")))
            nxt = self.objects.get(kind, {}).get((ns, ref.get("name", "")))
            if nxt is None:
                break
            cur = nxt
        return out

    def pod_request_style(self, pod: dict) -> str | None:
        """How the pod asks for GPUs: "limits" (nvidia.com/gpu, served by either mechanism), "claims", "both", or
        None."""
        limits = any(
            k == GPU or k.startswith(MIG_PREFIX) or k.startswith(IMPLICIT_PREFIX) for k in pod_extended_requests(pod)
        )
        claims = bool((pod.get("spec") or {}).get("resourceClaims"))
        if limits and claims:
            return "both"
        if limits:
            return "limits"
        if claims:
            return "claims"
        return None

    def events_for(self, kind: str, ns: str, name: str) -> list[dict]:
        if "Event" not in self.store.kinds:
            return []
        store = self.objects["Event"]
        evs = [store[k] for k in self.store.index("Event", "involved", (kind, ns, name)) if k in store]
        evs.sort(key=event_last_seen)
        return evs

    def daemonset_workloads(self) -> dict[Key, Workload]:
        return {k: w for k, w in self._ds_workload.items() if w is not None}

    # ---- selectors: which devices a CEL selector matches (fleet/selectors.py) ---------------------------------------

    @property
    def cel_epoch(self) -> int:
        """Changes whenever slices or classes change, so a cached selector evaluation is stale."""
        return self.selectors.epoch

    def compile(self, expressions: Sequence[str], environment=None):
        """Compiled selectors (cached), in the stored-expression environment unless told (fleet/k8s/celenv.py);
        raises CelCompileError for the first bad one."""
        return self.selectors.compile(expressions, environment)

    def evaluate_selectors(
        self, expressions: Sequence[str], devices: Iterable[DeviceView] | None = None, environment=None
    ) -> SelectorResult:
        """All expressions must be true (the scheduler's rule) on each current device; cached until slices or classes
        change. Stored selectors unless `environment` says otherwise (fleet/k8s/celenv.py)."""
        return self.selectors.evaluate(self, expressions, devices, environment)

    def class_matches(self, name: str) -> SelectorResult:
        return self.selectors.class_matches(self, name)

    def request_matches(self, body: dict) -> SelectorResult:
        """A claim request body (`exactly` or a subrequest): its class's selectors and then its own."""
        return self.selectors.request_matches(self, body)

    def evaluate_fleet(self, selectors, *, cancel=None):
        """The playground's evaluation: H1's fleet evaluator over the newest generation of each pool."""
        return self.selectors.evaluate_fleet(self, selectors, cancel=cancel)

    def attribute_catalogue(self) -> dict[str, dict[str, dict]]:
        """Per driver, every attribute and capacity published (fleet/selectors.py says the shape)."""
        return self.selectors.attribute_catalogue(self)


if not FleetModel.INDEXERS.keys() <= set(KINDS):
    raise ImportError(
        f"FleetModel indexes kinds dragoman does not read: {sorted(FleetModel.INDEXERS.keys() - set(KINDS))}"
    )


def _same_role_reading(old: dict | None, new: dict) -> bool:
    """Whether a bare pod (no owner) kept all gpustack.classify_pod reads to find its role: its labels, containers and
    init containers (its name is its key's). A pod that was no stack pod then is none now: not classified again."""
    if old is None:
        return False
    om, nm = old.get("metadata") or _EMPTY, new.get("metadata") or _EMPTY
    osp, nsp = old.get("spec") or _EMPTY, new.get("spec") or _EMPTY
    return (
        om.get("labels") == nm.get("labels")
        and osp.get("containers") == nsp.get("containers")
        and osp.get("initContainers") == nsp.get("initContainers")
    )


@contextlib.contextmanager
def _no_gc():
    """Bulk view building allocates many small objects and no cycles."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
