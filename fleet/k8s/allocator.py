"""The structured DRA allocator as kube-scheduler v1.37.2 runs it with its default feature gates, and why it says no.

A port of k8s.io/dynamic-resource-allocation v0.37.2 `structured/internal/incubating`: the variant
`structured.NewAllocator` picks for the gates a default-configured v1.37.2 cluster turns on (AdminAccess,
PrioritizedList, PartitionableDevices, DeviceTaints, DeviceBindingAndStatus, ConsumableCapacity; the `stable` variant
lacks ConsumableCapacity and DeviceBindingAndStatus, `experimental` is only picked for alpha gates). Judged by
upstream's own table (tests/k8s/test_allocator_upstream.py) and by the real kube-scheduler (the differential).

Three parts, all over raw API dicts:

- `Inventory`: the ResourceSlices (and DeviceTaintRules) indexed once per snapshot: by node, shared, by pool.
  Incremental (`upsert_slice`, `remove_slice`, `set_taint_rules`) so the simulator keeps one.
- `AllocatedState.from_claims`: what allocated claims hold, as the scheduler counts it (admin-access results hold
  nothing; shared results hold capacity).
- `Allocator(inventory, state, classes).allocate(node, claims)`: upstream's Allocate for one node, returning an
  `Outcome` (the `status.allocation` of every claim, or None), raising `AllocationError` where the scheduler aborts
  the whole attempt (a CEL error, a missing class, a bad request). `explain(node, claims)` answers *why not*: for
  each request, the devices the selectors kept and what excluded each other device on the node (held by claim X,
  shares left, tainted key/effect/source, counter set exhausted by claims, capacity, binding conditions, node
  selection, constraints).

CEL goes through fleet/cel (the stored-expressions environment, as the scheduler compiles selectors).
"""

from __future__ import annotations

import dataclasses
import math
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from dragoman.fleet.k8s.nodeaffinity import match_node_selector
from dragoman.fleet.k8s.quantity import parse_quantity
from dragoman.fleet.k8s.slices import ATTRIBUTE_TYPES, attribute_value, lookup_attribute
from dragoman.fleet.k8s.times import parse_time
from dragoman.fleet.k8s.tolerations import tolerates

FINALIZER = "resource.kubernetes.io/delete-protection"
ALLOCATION_RESULTS_MAX_SIZE = 32  # resourceapi.AllocationResultsMaxSize
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"  # on a namespace, "true": claims there may ask adminAccess
DEVICE_TAINT_EFFECTS_BLOCKING = ("NoSchedule", "NoExecute")
_SCALAR_TYPES = frozenset(ATTRIBUTE_TYPES[:4])  # string, int, bool, version

DeviceID = tuple[str, str, str]  # (driver, pool, device)
PoolID = tuple[str, str]  # (driver, pool)


@dataclasses.dataclass(frozen=True)
class Features:
    """internal.Features: which DRA features the allocator honours. The defaults are v1.37.2's default gates
    (FractionalCapacityRange is on only with --min-compatibility-version >= 1.37, not by default)."""

    AdminAccess: bool = True
    CompatibilityGroups: bool = False
    ConsumableCapacity: bool = True
    DerivedAttributes: bool = False
    DeviceBindingAndStatus: bool = True
    DeviceTaints: bool = True
    FractionalCapacityRange: bool = False
    ListTypeAttributes: bool = False
    OptionalNodeOperations: bool = False
    PartitionableDevices: bool = True
    PrioritizedList: bool = True

    @classmethod
    def from_mapping(cls, flags: Mapping[str, bool]) -> Features:
        return cls(**{f.name: bool(flags.get(f.name, False)) for f in dataclasses.fields(cls)})


DEFAULT_FEATURES = Features()
# What this port implements: upstream's incubating.SupportedFeatures.
SUPPORTED_FEATURES = frozenset(
    {
        "AdminAccess",
        "PrioritizedList",
        "PartitionableDevices",
        "DeviceTaints",
        "DeviceBindingAndStatus",
        "ConsumableCapacity",
        "FractionalCapacityRange",
    }
)


class AllocationError(Exception):
    """The scheduler aborts the pod's whole scheduling attempt with this message (not Unschedulable): a CEL error,
    a missing DeviceClass, a request it cannot handle."""


class AllocationTimeout(Exception):
    """The search passed its deadline (allocateOne's `ctx.Err()`: "filter operation aborted: context deadline
    exceeded"). kube-scheduler's DynamicResources Filter gives each node's Allocate `filterTimeout` (10 s by default,
    DRASchedulerFilterTimeout on in v1.37) and answers a timeout with an Error status: "node N: timed out trying to
    allocate devices", which aborts the pod's attempt; it is retried with backoff."""


# --- quantities ---


class Q:
    """A quantity: its exact value and the text to write back (the input's when it is one)."""

    __slots__ = ("value", "text")

    def __init__(self, value: Fraction, text: str | None = None) -> None:
        self.value = value
        self.text = text

    @classmethod
    def parse(cls, raw: Any) -> Q:
        if isinstance(raw, Q):
            return raw
        text = str(raw)
        return cls(parse_quantity(text), text)

    def __str__(self) -> str:
        if self.text is None:
            from dragoman.fleet.cel.values import Quantity

            self.text = Quantity(self.value).text
        return self.text

    def __repr__(self) -> str:
        return f"Q({self})"

    def integer(self) -> int:
        """Quantity.Value(): rounded up to an integer."""
        return math.ceil(self.value) if self.value >= 0 else -math.ceil(-self.value)

    def milli(self) -> int:
        v = self.value * 1000
        return math.ceil(v) if v >= 0 else -math.ceil(-v)


def _q(raw: Any) -> Q | None:
    if raw is None:
        return None
    try:
        return Q.parse(raw)
    except Exception:  # noqa: BLE001 - a quantity the API server would have refused: treat as absent
        return None


# --- devices, slices, pools ---

Capacity = Mapping[str, tuple[Q, "CapacityPolicy | None"]]
_CAPACITIES: dict[tuple[tuple[str, str], ...], Capacity] = {}
_NO_CAPACITY: Capacity = {}


def _capacity(raw: Any) -> Capacity:
    """A device's capacity table (name → (quantity, requestPolicy)), converted once. The devices of a fleet mostly
    publish one of a few tables (every GPU of a model: the same memory), so a table without request policies is
    shared by every device publishing the same names and texts; nobody writes to it."""
    if not raw or not isinstance(raw, dict):
        return _NO_CAPACITY
    parts: list[tuple[str, str]] | None = []
    for n, c in raw.items():
        v = c.get("value") if c.__class__ is dict and "requestPolicy" not in c else None
        if v.__class__ is not str:
            parts = None
            break
        parts.append((n, v))  # type: ignore[union-attr]
    key = tuple(parts) if parts is not None else None
    if key is not None:
        hit = _CAPACITIES.get(key)
        if hit is not None:
            return hit
    caps: dict[str, tuple[Q, CapacityPolicy | None]] = {}
    for cname, cap in raw.items():
        if isinstance(cap, dict):
            q = _q(cap.get("value"))
            if q is not None:
                caps[cname] = (q, CapacityPolicy.parse(cap.get("requestPolicy")))
    if key is not None and len(_CAPACITIES) < 10_000:
        _CAPACITIES[key] = caps
        _SHARED_CAPACITIES.add(id(caps))  # kept alive by _CAPACITIES: the id stays its own
    return caps


# The ids of the shared tables (_CAPACITIES' values): made only from capacities without a requestPolicy.
_SHARED_CAPACITIES: set[int] = {id(_NO_CAPACITY)}
# The fields of a device that publishes only its name, attributes and capacity (most devices of a fleet): the rest of
# what Device reads then takes its default without a look-up each.
_PLAIN_DEVICE_FIELDS = frozenset(("name", "attributes", "capacity"))


@dataclasses.dataclass
class CapacityPolicy:
    default: Q | None = None
    valid_values: list[Q] | None = None
    range_min: Q | None = None
    range_max: Q | None = None
    range_step: Q | None = None
    has_range: bool = False

    @classmethod
    def parse(cls, raw: dict | None) -> CapacityPolicy | None:
        if not isinstance(raw, dict):
            return None
        vr = raw.get("validRange")
        vv = raw.get("validValues")
        return cls(
            default=_q(raw.get("default")),
            valid_values=[q for q in (_q(v) for v in vv) if q is not None] if vv else None,
            range_min=_q(vr.get("min")) if isinstance(vr, dict) else None,
            range_max=_q(vr.get("max")) if isinstance(vr, dict) else None,
            range_step=_q(vr.get("step")) if isinstance(vr, dict) else None,
            has_range=isinstance(vr, dict),
        )


class Device:
    """One device of a slice, with what the allocator reads from it converted once."""

    __slots__ = (
        "id",
        "name",
        "raw",
        "slice",
        "capacity",
        "consumes",
        "own_taints",
        "taints",
        "binding_conditions",
        "binding_failure_conditions",
        "binds_to_node",
        "allow_multiple",
        "allow_multiple_set",
        "node_name",
        "node_selector",
        "all_nodes",
        "_cel",
        "_plain",
        "has_policy",
    )
    consumes: Sequence[tuple[str, dict[str, Q]]]
    own_taints: Sequence[dict]
    taints: Sequence[tuple[dict, str]]  # (taint, source): source is "slice" or "DeviceTaintRule <name>"
    binding_conditions: Any
    binding_failure_conditions: Any
    node_name: str | None
    node_selector: dict | None

    def __init__(self, raw: dict, slc: Slice) -> None:
        self.raw = raw
        self.slice = slc
        self.name = str(raw.get("name", ""))
        self.id: DeviceID = (slc.driver, slc.pool, self.name)
        self.capacity = caps = _capacity(raw.get("capacity"))
        self.has_policy = id(caps) not in _SHARED_CAPACITIES and any(p is not None for _, p in caps.values())
        self._cel: Any = None
        self._plain: bool | None = None
        if _PLAIN_DEVICE_FIELDS.issuperset(raw):
            # Converted once per device of every slice the model holds (20,000 at the scale benchmark's first view).
            self.consumes = self.own_taints = self.taints = ()
            self.binding_conditions = self.binding_failure_conditions = self.node_name = self.node_selector = None
            self.binds_to_node = self.allow_multiple_set = self.allow_multiple = self.all_nodes = False
            return
        # Most devices consume no counters and carry no taints: they share one empty tuple (a fleet has 100,000s).
        consumes: Sequence[tuple[str, dict[str, Q]]] = ()
        if raw.get("consumesCounters"):
            consumes = []
            for c in raw["consumesCounters"]:
                if isinstance(c, dict):
                    counters = {}
                    for n, v in (c.get("counters") or {}).items():
                        q = _q(v.get("value") if isinstance(v, dict) else None)
                        if q is not None:
                            counters[n] = q
                    consumes.append((str(c.get("counterSet", "")), counters))
        self.consumes = consumes
        self.own_taints = [t for t in raw["taints"] if isinstance(t, dict)] if raw.get("taints") else ()
        self.taints = [(t, "slice") for t in self.own_taints] if self.own_taints else ()
        self.binding_conditions = raw.get("bindingConditions")
        self.binding_failure_conditions = raw.get("bindingFailureConditions")
        self.binds_to_node = bool(raw.get("bindsToNode"))
        self.allow_multiple_set = raw.get("allowMultipleAllocations") is not None
        self.allow_multiple = bool(raw.get("allowMultipleAllocations"))
        self.node_name = raw.get("nodeName") or None
        self.node_selector = raw.get("nodeSelector")
        self.all_nodes = bool(raw.get("allNodes"))

    def cel(self) -> Any:
        if self._cel is None:
            from dragoman.fleet.cel import cel_device

            self._cel = cel_device(self.slice.driver, self.raw)
        return self._cel

    def attribute(self, full_name: str) -> tuple[str, Any] | None:
        """lookupAttribute: the fully qualified name, or the bare id when the domain is the driver."""
        attr = lookup_attribute(self.raw.get("attributes") or {}, self.slice.driver, full_name)
        if attr is None:
            return None
        kind, value = attribute_value(attr)
        # The constraints compare scalar values only (constraint.go's switch); a list-typed attribute is "unknown".
        return (kind, value) if kind in _SCALAR_TYPES else ("unknown", None)

    @property
    def key(self) -> str:
        return "/".join(self.id)

    @property
    def uuid(self) -> str | None:
        """The driver's `uuid` attribute (NVIDIA's GPU-… / MIG-…), what a container sees of its device."""
        attr = self.attribute(f"{self.slice.driver}/uuid")
        return str(attr[1]) if attr is not None and attr[0] == "string" else None


_NO_COUNTERS: dict = {}


class Slice:
    """One ResourceSlice, converted once; its devices when first read (`devices`): most slices of a fleet the model
    holds are never searched, and their devices cost ten times the slice (200 bytes and 6 µs each)."""

    __slots__ = (
        "raw",
        "name",
        "driver",
        "pool",
        "generation",
        "slice_count",
        "node_name",
        "node_selector",
        "all_nodes",
        "per_device",
        "per_device_set",
        "shared_counters",
        "has_shared_counters",
        "_compat",
        "_devices",
        "_plain",
        "counter_set_names",
    )

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        pool = spec.get("pool") or {}
        self.name = str(meta.get("name", ""))
        self.driver = str(spec.get("driver", ""))
        self.pool = str(pool.get("name", ""))
        self.generation = _int(pool.get("generation"))
        self.slice_count = _int(pool.get("resourceSliceCount"))
        self.node_name = spec.get("nodeName") or None
        self.node_selector = spec.get("nodeSelector")
        self.all_nodes = bool(spec.get("allNodes"))
        self.per_device_set = spec.get("perDeviceNodeSelection") is not None
        self.per_device = bool(spec.get("perDeviceNodeSelection"))
        counters: dict[str, dict[str, Q]] = _NO_COUNTERS  # most slices share none: one empty table, never written
        names: list[str] = []
        for cs in spec.get("sharedCounters") or []:
            if isinstance(cs, dict):
                n = str(cs.get("name", ""))
                names.append(n)
                vals = {}
                for cn, cv in (cs.get("counters") or {}).items():
                    q = _q(cv.get("value") if isinstance(cv, dict) else None)
                    if q is not None:
                        vals[cn] = q
                if counters is _NO_COUNTERS:
                    counters = {}
                counters.setdefault(n, vals)
        self.shared_counters = counters
        self.has_shared_counters = bool(names)
        self._devices: list[Device] | None = None
        self._plain: bool | None = None  # read with _compat, from the devices, when first asked
        self._compat = False
        self.counter_set_names: Sequence[str] = names if names else ()

    def _read_devices(self) -> None:
        plain = True
        compat = False
        for d in (self.raw.get("spec") or {}).get("devices") or ():
            if isinstance(d, dict) and not _PLAIN_DEVICE_FIELDS.issuperset(d):
                plain = False
                for c in d.get("consumesCounters") or ():
                    if isinstance(c, dict) and c.get("compatibilityGroups"):
                        compat = True
        self._plain, self._compat = plain, compat

    @property
    def plain(self) -> bool:
        """Every device publishes only its name, attributes and capacity (_PLAIN_DEVICE_FIELDS): none takes counters,
        carries a taint of its own, is shared, binds, or says where it can be used."""
        if self._plain is None:
            self._read_devices()
        return self._plain  # type: ignore[return-value]

    @property
    def uses_compat_groups(self) -> bool:
        """A device consumes counters with compatibilityGroups (the CompatibilityGroups gate's field)."""
        if self._plain is None:
            self._read_devices()
        return self._compat

    @property
    def devices(self) -> list[Device]:
        """The slice's devices, converted on first read."""
        devs = self._devices
        if devs is None:
            devs = self._devices = [
                Device(d, self) for d in (self.raw.get("spec") or {}).get("devices") or () if isinstance(d, dict)
            ]
        return devs

    @property
    def pool_id(self) -> PoolID:
        return (self.driver, self.pool)


def _int(v: Any) -> int:
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0


@dataclasses.dataclass
class Pool:
    """One pool as GatherPools builds it for one node."""

    id: PoolID
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    targeting: list[Slice] = dataclasses.field(default_factory=list)  # device slices relevant to the node
    not_targeting: list[Slice] = dataclasses.field(default_factory=list)
    counter_sets: dict[str, dict[str, Q]] = dataclasses.field(default_factory=dict)
    binding: bool = False

    @property
    def name(self) -> str:
        return f"{self.id[0]}/{self.id[1]}"


def node_matches(node: dict | None, node_name: str | None, all_nodes: bool, node_selector: dict | None) -> bool:
    """NodeMatches: by name, all nodes, or a node selector; nothing set matches nothing."""
    if node_name:
        return node is not None and (node.get("metadata") or {}).get("name") == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        return node is not None and match_node_selector(node_selector, node)
    return False


# --- DeviceTaintRules ---


def rule_selects(rule: dict, device: Device) -> bool:
    """A DeviceTaintRule's deviceSelector: every field that is set must equal the device's; a rule without a selector
    selects nothing (the scheduler's slice tracker skips it)."""
    return rule_selects_names(rule, device.slice.driver, device.slice.pool, device.name)


def rule_selects_names(rule: dict, driver: str, pool: str, device: str) -> bool:
    """ruleMatchesDevice: rule_selects for a device known by its names (an allocation result's)."""
    sel = (rule.get("spec") or {}).get("deviceSelector")
    if not isinstance(sel, dict):
        return False
    for field, value in (("driver", driver), ("pool", pool), ("device", device)):
        want = sel.get(field)
        if want is not None and want != value:
            return False
    return True


class Inventory:
    """The ResourceSlices (and DeviceTaintRules) indexed once: by node name, shared (no nodeName), by pool."""

    def __init__(self, slices: Iterable[dict] = (), taint_rules: Iterable[dict] = ()) -> None:
        self.slices: dict[str, Slice] = {}
        self._on_node: dict[str, dict[str, Slice]] | None = None  # made when first read (`on_node`)
        self.shared: dict[str, Slice] = {}
        self.by_pool: dict[PoolID, dict[str, Slice]] = {}
        self.taint_rules: list[dict] = [r for r in taint_rules if isinstance(r, dict)]
        self.epoch = 0
        self._pools_cache: dict[str, tuple[int, list[Pool]]] = {}
        raws = [s for s in slices if isinstance(s, dict)]
        names = [str((s.get("metadata") or {}).get("name", "")) for s in raws]
        unique = len(set(names)) == len(names)
        for i, s in enumerate(raws):
            # Slice names are unique in a cluster; a hand-made list (upstream's tests) may repeat one.
            self.upsert_slice(s, key=None if unique else f"{names[i]}#{i}")

    def upsert_slice(self, raw: dict, key: str | None = None) -> None:
        """Add or replace a slice (by its name, or by `key` when names are not unique)."""
        slc = Slice(raw)
        k = key if key is not None else slc.name
        self.remove_slice(k)
        self.slices[k] = slc
        if slc.node_name:
            if self._on_node is not None:
                self._on_node.setdefault(slc.node_name, {})[k] = slc
        else:
            self.shared[k] = slc
        self.by_pool.setdefault(slc.pool_id, {})[k] = slc
        if self.taint_rules:
            self._apply_rules(slc)
        self.epoch += 1

    def remove_slice(self, name: str) -> None:
        old = self.slices.pop(name, None)
        if old is None:
            return
        if old.node_name:
            m = self._on_node.get(old.node_name) if self._on_node is not None else None
            if m is not None:
                m.pop(name, None)
                if not m:
                    del self._on_node[old.node_name]  # type: ignore[union-attr]
        else:
            self.shared.pop(name, None)
        p = self.by_pool.get(old.pool_id)
        if p is not None:
            p.pop(name, None)
            if not p:
                del self.by_pool[old.pool_id]
        self.epoch += 1

    @property
    def on_node(self) -> dict[str, dict[str, Slice]]:
        """node name → the slices published for it (by key), made when first read: a model's inventory (fleet/k8s/
        devicestate.py) reads its slices by pool, and only the diagnosis' allocator by node."""
        on = self._on_node
        if on is None:
            on = self._on_node = {}
            for k, slc in self.slices.items():
                if slc.node_name:
                    on.setdefault(slc.node_name, {})[k] = slc
        return on

    def set_taint_rules(self, rules: Iterable[dict]) -> None:
        """The DeviceTaintRules in force: their taints join the devices' own, as the scheduler's slice tracker
        patches them in, each remembered with its rule's name for the *why not*."""
        self.taint_rules = [r for r in rules if isinstance(r, dict)]
        for slc in self.slices.values():
            self._apply_rules(slc)
        self.epoch += 1

    def _apply_rules(self, slc: Slice) -> None:
        if slc._devices is None and not self.taint_rules:
            return  # converted later, they will carry their own taints only: what no rule adds to
        for dev in slc.devices:
            taints = [(t, "slice") for t in dev.own_taints]
            for rule in self.taint_rules:
                taint = (rule.get("spec") or {}).get("taint")
                if isinstance(taint, dict) and rule_selects(rule, dev):
                    name = (rule.get("metadata") or {}).get("name", "")
                    taints.append((taint, f"DeviceTaintRule {name}"))
            dev.taints = taints

    def slices_for_node(self, node_name: str) -> list[Slice]:
        local = self.on_node.get(node_name)
        out = list(local.values()) if local else []
        if self.shared:
            out.extend(self.shared.values())
        return out

    def devices(self) -> Iterable[Device]:
        for slc in self.slices.values():
            yield from slc.devices

    def device(self, did: DeviceID) -> Device | None:
        """The device `did` = (driver, pool, name) in its pool's newest generation, or None."""
        members = self.by_pool.get((did[0], did[1]))
        if not members:
            return None
        newest = max(s.generation for s in members.values())
        for slc in members.values():
            if slc.generation == newest:
                for dev in slc.devices:
                    if dev.name == did[2]:
                        return dev
        return None

    def gather_pools(self, node: dict, features: Features) -> list[Pool]:
        """GatherPools for `node` (cached per node name until a slice changes)."""
        name = str((node.get("metadata") or {}).get("name", ""))
        if not self.shared:
            hit = self._pools_cache.get(name)
            if hit is not None and hit[0] == self.epoch and features == DEFAULT_FEATURES:
                return hit[1]
        pools = pools_for_node(self.slices_for_node(name), node, features, self)
        if not self.shared and features == DEFAULT_FEATURES:
            if len(self._pools_cache) > 100_000:
                self._pools_cache.clear()
            self._pools_cache[name] = (self.epoch, pools)
        return pools


def pools_for_node(slices_for_node: list[Slice], node: dict, features: Features, inv: Inventory) -> list[Pool]:
    """Upstream's GatherPools for one node (incubating): the pools whose slices reach the node, each of its newest
    generation among them, incomplete when the whole pool's generation lacks slices, obsolete (dropped) when a newer
    generation exists elsewhere; pools with binding conditions last. fleet/k8s/slices.py is the same rule fleet-wide
    (no node)."""
    grouped: dict[PoolID, list[Slice]] = {}
    for slc in slices_for_node:
        if not features.PartitionableDevices and (slc.per_device_set or slc.has_shared_counters):
            continue
        if not features.CompatibilityGroups and slc.uses_compat_groups:
            continue
        if slc.node_name or slc.all_nodes or slc.node_selector is not None:
            relevant = node_matches(node, slc.node_name, slc.all_nodes, slc.node_selector)
        elif slc.per_device:
            relevant = any(node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in slc.devices)
        else:
            continue
        if not relevant:
            continue
        cur = grouped.get(slc.pool_id)
        if cur is None or slc.generation > cur[0].generation:
            grouped[slc.pool_id] = [slc]
        elif slc.generation == cur[0].generation:
            cur.append(slc)
    result: list[Pool] = []
    with_binding: list[Pool] = []
    for pid, members in grouped.items():
        first = members[0]
        if len(members) == first.slice_count:
            pool = _build_pool(pid, members, features, None)
        else:
            everything = inv.by_pool.get(pid, {}).values()
            if any(s.generation > first.generation for s in everything):
                continue  # obsolete: a newer generation is being published
            same = [s for s in everything if s.generation == first.generation]
            if not features.CompatibilityGroups:
                same = [s for s in same if not s.uses_compat_groups]
            if len(same) != first.slice_count:
                result.append(Pool(pid, incomplete=True))
                continue
            pool = _build_pool(pid, members, features, same)
        if pool.binding:
            with_binding.append(pool)
        else:
            result.append(pool)
    result.sort(key=lambda p: p.id)
    with_binding.sort(key=lambda p: p.id)
    return result + with_binding


def _build_pool(pid: PoolID, members: list[Slice], features: Features, all_for_pool: list[Slice] | None) -> Pool:
    members = sorted(members, key=lambda s: s.name)
    device_slices: list[Slice] = []
    counter_slices: list[Slice] = []
    not_targeting: list[Slice] = []
    for s in members:
        if features.PartitionableDevices and s.has_shared_counters:
            counter_slices.append(s)
        else:
            device_slices.append(s)
    if all_for_pool is not None and len(members) < len(all_for_pool):
        names = {s.name for s in members}
        for s in all_for_pool:
            if s.name in names:
                continue
            if features.PartitionableDevices and s.has_shared_counters:
                counter_slices.append(s)
            else:
                not_targeting.append(s)
    binding = any(d.binding_conditions is not None for s in device_slices for d in s.devices)
    seen: set[str] = set()
    for s in device_slices:
        for d in s.devices:
            if d.name in seen:
                return Pool(pid, invalid=True, invalid_reason=f"duplicate device name {d.name}", binding=binding)
            seen.add(d.name)
    if not features.PartitionableDevices:
        return Pool(pid, targeting=device_slices, binding=binding)
    counter_sets: dict[str, dict[str, Q]] = {}
    for s in counter_slices:
        for n in s.counter_set_names:
            if n in counter_sets:
                return Pool(pid, invalid=True, invalid_reason=f"duplicate counter set name {n}", binding=binding)
            counter_sets[n] = s.shared_counters.get(n, {})
    for group in (device_slices, not_targeting):
        for s in group:
            for d in s.devices:
                for set_name, counters in d.consumes:
                    cs = counter_sets.get(set_name)
                    if cs is None:
                        return Pool(
                            pid, invalid=True, invalid_reason=f"counter set {set_name} not found", binding=binding
                        )
                    for cn in counters:
                        if cn not in cs:
                            return Pool(
                                pid,
                                invalid=True,
                                invalid_reason=f"counter {cn} not found in counter set {set_name}",
                                binding=binding,
                            )
    return Pool(pid, targeting=device_slices, not_targeting=not_targeting, counter_sets=counter_sets, binding=binding)


# --- allocated state ---


@dataclasses.dataclass
class AllocatedState:
    """schedulerapi.AllocatedState, plus who holds what (for the *why not*)."""

    devices: set[DeviceID] = dataclasses.field(default_factory=set)
    shared: set[tuple[str, str, str, str]] = dataclasses.field(default_factory=set)  # (driver, pool, device, shareID)
    capacity: dict[DeviceID, dict[str, Fraction]] = dataclasses.field(default_factory=dict)
    # "ns/name" of holding claims: a tuple (mostly of one), smaller than a list for each of a fleet's held devices.
    holders: dict[DeviceID, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    # "ns/name" of admin-access claims that see a device: they never hold it (the views say who looks at it).
    admin: dict[DeviceID, list[str]] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_claims(cls, claims: Iterable[dict], features: Features = DEFAULT_FEATURES) -> AllocatedState:
        st = cls()
        for claim in claims:
            st.add_claim(claim, features)
        return st

    def add_claim(
        self, claim: dict, features: Features = DEFAULT_FEATURES, sign: int = 1, holder: str | None = None
    ) -> None:
        """foreachAllocatedDevice: admin-access results hold nothing; with ConsumableCapacity a result with a
        shareID holds its share (and its consumedCapacity), any other holds the whole device. `holder` is the
        claim's "ns/name" when the caller has it already (one string per claim, however many devices it holds)."""
        alloc = (claim.get("status") or {}).get("allocation") or {}
        results = (alloc.get("devices") or {}).get("results") or []
        if not results:
            return
        if holder is None:
            meta = claim.get("metadata") or {}
            holder = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        consumable = features.ConsumableCapacity
        holders = self.holders
        for r in results:
            if not isinstance(r, dict):
                continue
            did: DeviceID = (str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", "")))
            if r.get("adminAccess"):
                seen = self.admin.setdefault(did, [])
                if sign > 0:
                    seen.append(holder)
                elif holder in seen:
                    seen.remove(holder)
                if not seen:
                    del self.admin[did]
                continue
            if consumable and r.get("shareID") is not None:
                sid = (*did, str(r.get("shareID")))
                if sign > 0:
                    self.shared.add(sid)
                else:
                    self.shared.discard(sid)
                consumed = r.get("consumedCapacity")
                if consumed is not None:
                    agg = self.capacity.setdefault(did, {})
                    for n, v in consumed.items():
                        q = _q(v)
                        if q is not None:
                            agg[n] = agg.get(n, Fraction(0)) + sign * q.value
                    if sign < 0 and all(v == 0 for v in agg.values()):
                        self.capacity.pop(did, None)
            elif sign > 0:
                self.devices.add(did)
            else:
                # Two claims may hold one device (a snapshot, a race): it stays held while another holder remains.
                hs = self.holders.get(did) or ()
                if hs.count(holder) >= len(hs):
                    self.devices.discard(did)
            if sign > 0:
                had = holders.get(did)
                holders[did] = (holder,) if had is None else (*had, holder)
            else:
                left = holders.get(did)
                if left and holder in left:
                    i = left.index(holder)
                    rest = left[:i] + left[i + 1 :]
                    if rest:
                        holders[did] = rest
                    else:
                        del holders[did]

    def remove_claim(self, claim: dict, features: Features = DEFAULT_FEATURES, holder: str | None = None) -> None:
        self.add_claim(claim, features, sign=-1, holder=holder)

    def is_allocated(self, did: DeviceID) -> bool:
        """IsDeviceAllocated: whole, by a share, or with consumed capacity."""
        if did in self.devices or did in self.capacity:
            return True
        return any(s[:3] == did for s in self.shared)

    def has_share(self, did: DeviceID) -> bool:
        return did in self.capacity or any(s[:3] == did for s in self.shared)


def pool_devices(pool: Pool) -> Iterable[Device]:
    """Every device of a gathered pool, those of its slices that target other nodes included (they draw on the same
    counter sets)."""
    for group in (pool.targeting, pool.not_targeting):
        for s in group:
            yield from s.devices


def counters_left(
    counter_sets: Mapping[str, Mapping[str, Q]], devices: Iterable[Device], state: AllocatedState
) -> dict[str, dict[str, Fraction]]:
    """What each counter of a pool's counter sets has left once its allocated devices took theirs (negative when
    overdrawn): where the allocator's search starts, and what the fleet's device states show."""
    avail = {n: {c: q.value for c, q in cs.items()} for n, cs in counter_sets.items()}
    for d in devices:
        if not d.consumes or not state.is_allocated(d.id):
            continue
        for set_name, counters in d.consumes:
            a = avail.get(set_name)
            if a is None:
                continue
            for cn, q in counters.items():
                if cn in a:
                    a[cn] = a[cn] - q.value
    return avail


def counter_users(devices: Iterable[Device], set_name: str, state: AllocatedState) -> list[str]:
    """The claims ("ns/name") holding devices that consume this counter set: who exhausted it."""
    out: list[str] = []
    for d in devices:
        if any(cs == set_name for cs, _ in d.consumes) and state.is_allocated(d.id):
            for h in state.holders.get(d.id, ()):
                if h not in out:
                    out.append(h)
    return out


def admin_access_allowed(namespace: dict | None) -> bool:
    """The API server admits adminAccess only in a namespace labelled resource.kubernetes.io/admin-access=true."""
    labels = ((namespace or {}).get("metadata") or {}).get("labels") or {}
    return labels.get(ADMIN_ACCESS_LABEL) == "true"


# --- requests ---


class Request:
    """requestAccessor: a request with `exactly`, or one subrequest of `firstAvailable`."""

    __slots__ = (
        "name",
        "parent",
        "class_name",
        "mode",
        "count",
        "admin",
        "has_admin",
        "selectors",
        "tolerations",
        "capacity_requests",
        "has_capacity",
        "derived",
        "body",
    )

    def __init__(self, name: str, body: dict, parent: str | None, subrequest: bool) -> None:
        self.name = name
        self.parent = parent
        self.body = body
        self.class_name = str(body.get("deviceClassName") or "")
        self.mode = str(body.get("allocationMode") or "ExactCount")
        count = body.get("count")
        self.count = _int(count) if count is not None else (1 if self.mode == "ExactCount" else 0)
        self.has_admin = (not subrequest) and body.get("adminAccess") is not None
        self.admin = (not subrequest) and bool(body.get("adminAccess"))
        self.selectors = [s for s in body.get("selectors") or []]
        self.tolerations = [t for t in body.get("tolerations") or [] if isinstance(t, dict)]
        cap = body.get("capacity")
        self.has_capacity = cap is not None
        reqs = (cap or {}).get("requests") if isinstance(cap, dict) else None
        self.capacity_requests: dict[str, Q] | None = None
        if reqs is not None:
            self.capacity_requests = {n: q for n, q in ((n, _q(v)) for n, v in reqs.items()) if q is not None}
        self.derived = body.get("derivedAttributes") or []

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


@dataclasses.dataclass
class _RequestData:
    request: Request
    parent: Request | None
    cls: dict | None
    num_devices: int = 0
    selected_sub: int = 0
    all_devices: list[tuple[Device, Pool]] | None = None


def _kobj(claim: dict) -> str:
    meta = claim.get("metadata") or {}
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{ns}/{name}" if ns else str(name)


# --- capacity (consumable_capacity.go) ---


class _CapacityError(Exception):
    pass


def _consumed_for(requested: Q | None, value: Q, policy: CapacityPolicy | None, fractional: bool) -> Q:
    """calculateConsumedCapacity."""
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return value
    if policy is None:
        return requested
    if policy.has_range and policy.range_min is not None:
        return _round_up_range(requested, policy, fractional)
    if policy.valid_values is not None:
        for v in policy.valid_values:
            if requested.value <= v.value:
                return v
        return requested
    return requested


def _use_milli(policy: CapacityPolicy, fractional: bool) -> bool:
    if not fractional:
        return False
    for i, q in enumerate((policy.range_min, policy.range_max, policy.range_step)):
        if q is None:
            continue
        if (q.value * 1000).denominator != 1:
            return False
        if i == 2 and q.milli() < 1:
            return False
    return True


_NOT_REPRESENTABLE = "capacity request cannot be represented in the device's range arithmetic"
_MAX_INT64 = 2**63 - 1


def _round_up_range(requested: Q, policy: CapacityPolicy, fractional: bool) -> Q:
    lo = policy.range_min
    assert lo is not None
    if requested.value < lo.value:
        return lo
    step = policy.range_step
    if step is None:
        return requested
    if _use_milli(policy, fractional):
        if (requested.value * 1000).denominator != 1 or abs(requested.value * 1000) > _MAX_INT64:
            raise _CapacityError(f"{_NOT_REPRESENTABLE}: request {requested} is not a representable milli value")
        req_m, step_m, min_m = requested.milli(), step.milli(), lo.milli()
        added = req_m - min_m
        n = added // step_m + (1 if added % step_m else 0)
        if n > (_MAX_INT64 - min_m) // step_m:
            raise _CapacityError(
                f"{_NOT_REPRESENTABLE}: rounding request {requested} up to the next step passes the milli-value range"
            )
        return Q(Fraction(min_m + step_m * n, 1000))
    if requested.value > _MAX_INT64:
        raise _CapacityError(f"{_NOT_REPRESENTABLE}: request {requested} exceeds MaxInt64")
    req_i, step_i, min_i = requested.integer(), step.integer(), lo.integer()
    if step_i == 0:
        return requested
    added = req_i - min_i
    n = int(added / step_i) if added < 0 else added // step_i
    if added % step_i:
        n += 1
    if min_i >= 0 and n > (_MAX_INT64 - min_i) // step_i:
        raise _CapacityError(f"{_NOT_REPRESENTABLE}: rounding request {requested} up to the next step passes MaxInt64")
    return Q(Fraction(min_i + step_i * n))


def _violates_policy(consumed: Q, policy: CapacityPolicy | None, fractional: bool) -> bool:
    if policy is None:
        return False
    if policy.default is not None and consumed.value == policy.default.value:
        return False
    if policy.has_range:
        if policy.range_max is not None and consumed.value > policy.range_max.value:
            return True
        if policy.range_step is not None:
            lo = policy.range_min.value if policy.range_min is not None else Fraction(0)
            if _use_milli(policy, fractional):
                if (consumed.value * 1000).denominator != 1:
                    return True
                req, step, mn = consumed.milli(), policy.range_step.milli(), math.ceil(lo * 1000)
            else:
                req, step, mn = consumed.integer(), policy.range_step.integer(), math.ceil(lo)
            if step == 0:
                return True
            if math.fmod(req - mn, step) != 0:
                return True
        return False
    if policy.valid_values:
        return not any(consumed.value == v.value for v in policy.valid_values)
    return False


def _cmp_request_over_capacity(
    current: Mapping[str, Fraction],
    requests: dict[str, Q] | None,
    capacity: Capacity,
    allocating: Mapping[str, Fraction] | None,
    fractional: bool,
) -> tuple[bool, str | None]:
    """CmpRequestOverCapacity: (fits, why not). Raises _CapacityError where upstream returns an error."""
    if requests:
        for n in requests:
            if n not in capacity:
                return False, f"the device has no capacity {n}"
    consumed: dict[str, Q] = {}
    for n, (value, policy) in capacity.items():
        try:
            c = _consumed_for(requests.get(n) if requests else None, value, policy, fractional)
        except _CapacityError as exc:
            raise _CapacityError(f'capacity "{n}": {exc}') from None
        if c.value < 0:
            raise _CapacityError(f'capacity "{n}": capacity value is negative')
        consumed[n] = c
    for n, (value, policy) in capacity.items():
        c = consumed[n]
        if _violates_policy(c, policy, fractional):
            return False, f"{n} {c} is outside the device's requestPolicy"
        total = current.get(n, Fraction(0)) + c.value
        if allocating:
            total += allocating.get(n, Fraction(0))
        if total > value.value:
            left = value.value - current.get(n, Fraction(0)) - (allocating.get(n, Fraction(0)) if allocating else 0)
            return False, f"{n}: {Q(max(left, Fraction(0)))} of {value} left, {c} wanted"
    return True, None


def consumed_capacity(requests: dict[str, Q] | None, capacity: Capacity, fractional: bool) -> dict[str, Q]:
    """GetConsumedCapacityFromRequest."""
    out = {}
    for n, (value, policy) in capacity.items():
        try:
            out[n] = _consumed_for(requests.get(n) if requests else None, value, policy, fractional)
        except _CapacityError as exc:
            raise _CapacityError(f'capacity "{n}": {exc}') from None
    return out


def default_consumption(total: Fraction, policy: CapacityPolicy | None, asked: Fraction | None) -> Fraction:
    """What one request consumes of a capacity worth `total` under `policy` when it asks `asked` (None: names no
    amount, so the policy's default, else the whole capacity), as calculateConsumedCapacity rounds it; a request the
    policy cannot represent consumes everything."""
    try:
        return _consumed_for(Q(asked) if asked is not None else None, Q(total), policy, False).value
    except _CapacityError:
        return total


# --- taints ---


def device_tolerates(toleration: dict, taint: dict) -> bool:
    """resourceclaim.ToleratesTaint: the same rule as a pod's toleration (fleet/k8s/tolerations.py, its one home)."""
    return tolerates(toleration, taint)


def untolerated_taint(device: Device, tolerations: list[dict]) -> tuple[dict, str] | None:
    """The first NoSchedule/NoExecute taint (own or from a DeviceTaintRule) no toleration tolerates."""
    for taint, source in device.taints:
        if taint.get("effect") in DEVICE_TAINT_EFFECTS_BLOCKING and not any(
            device_tolerates(t, taint) for t in tolerations
        ):
            return taint, source
    return None


# --- constraints ---


class _Constraint:
    def __init__(self, requests: list[str], attribute: str) -> None:
        self.requests = set(requests)
        self.attribute = attribute

    def applies(self, base: str, sub: str | None) -> bool:
        if not self.requests:
            return True
        if sub is None:
            return base in self.requests
        return base in self.requests or f"{base}/{sub}" in self.requests


class _MatchAttribute(_Constraint):
    def __init__(self, requests: list[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.value: tuple[str, Any] | None = None
        self.num = 0

    def add(self, base: str, sub: str | None, dev: Device) -> bool:
        if not self.applies(base, sub):
            return True
        attr = dev.attribute(self.attribute)
        if attr is None:
            return False
        if self.num == 0:
            self.value = attr
            self.num = 1
            return True
        if attr[0] == "unknown" or self.value is None or attr != self.value:
            return False
        self.num += 1
        return True

    def remove(self, base: str, sub: str | None, dev: Device) -> None:
        if self.applies(base, sub):
            self.num -= 1


class _DistinctAttribute(_Constraint):
    def __init__(self, requests: list[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.values: list[tuple[str, Any]] = []

    def add(self, base: str, sub: str | None, dev: Device) -> bool:
        if not self.applies(base, sub):
            return True
        attr = dev.attribute(self.attribute)
        # constraint.go compares the new value with each one taken: a value of a type it does not compare (a list)
        # fails against any, and so passes only as the first.
        if attr is None or (attr[0] == "unknown" and self.values):
            return False
        if attr in self.values:
            return False
        self.values.append(attr)
        return True

    def remove(self, base: str, sub: str | None, dev: Device) -> None:
        if self.applies(base, sub):
            self.values.pop()


# --- the outcome ---


@dataclasses.dataclass
class Outcome:
    """What Allocate answers for one node: an allocation per claim (`status.allocation` dicts), or None (the node
    cannot serve the claims); `node_error` is set when upstream returns ErrFailedAllocationOnNode (invalid pools)."""

    allocations: list[dict] | None
    node_error: str | None = None

    @property
    def ok(self) -> bool:
        return self.allocations is not None


class _Stop(Exception):
    pass


class _MaxSizeExceeded(Exception):
    pass


class SelectorCache:
    """Per-device verdicts, kept across Allocate calls (the scheduler's CEL cache). Compiled selectors are not kept
    here: they come from the one cache of fleet/cel/engine.compile_expression, which the playground, `dragoman cel`
    and fleeteval.evaluate_fleet read too, so an expression is compiled once per process, not once per allocator,
    diagnosis or pod."""

    def __init__(self, compile_fn: Callable | None = None) -> None:
        self._compile_fn = compile_fn
        # (device id, expression) -> (the device's raw dict it was judged on, (matched, error, is_compile_error))
        self.verdicts: dict[tuple[DeviceID, str], tuple[dict, tuple[bool, str | None, bool]]] = {}
        # (expression, what it reads of a device) -> verdict, shared by devices equal in that
        self.shared: dict[tuple, tuple[bool, str | None, bool]] = {}

    def compile(self, expr: str) -> Any:
        """The selector compiled as the scheduler compiles one already stored, or its CelCompileError."""
        from dragoman.fleet.cel import CelCompileError, compile_expression

        try:
            return (self._compile_fn or compile_expression)(expr, environment="stored")
        except CelCompileError as exc:
            return exc

    def evaluate(self, expr: str, dev: Device) -> tuple[bool, str | None, bool]:
        """(matched, error, is_compile_error) of one selector on one device."""
        key = (dev.id, expr)
        hit = self.verdicts.get(key)
        if hit is not None and hit[0] is dev.raw:
            return hit[1]
        sel = self.compile(expr)
        shared_key = None
        if isinstance(sel, Exception):
            out: tuple[bool, str | None, bool] = (False, str(sel), True)
        elif (shared_key := _shared_key(expr, sel, dev)) is not None and shared_key in self.shared:
            # A device equal in everything the expression reads (and plainly convertible) has the same verdict: a
            # fleet's devices differ mostly in uuid and bus id, which selectors rarely read.
            out = self.shared[shared_key]
        else:
            cdev = dev.cel()
            conv = cdev.cache.get("conversion_error")
            if conv:
                out = (False, conv, False)
            else:
                res = sel.evaluate(cdev)
                out = (False, res.error, False) if res.error is not None else (res.value is True, None, False)
        if len(self.verdicts) > 2_000_000:
            self.verdicts.clear()
            self.shared.clear()
        self.verdicts[key] = (dev.raw, out)
        if shared_key is not None:
            self.shared[shared_key] = out
        return out


def _plain(dev: Device) -> bool:
    """Every attribute one scalar of its field's type (a version that parses) and every capacity a quantity: the
    device converts for CEL without error, so its verdicts depend only on what an expression reads. The rule's one
    home is fleet/cel/device.converts_plainly (fleeteval groups by it too); this keeps its answer per device."""
    cached = dev._plain
    if cached is None:
        from dragoman.fleet.cel.device import converts_plainly

        cached = dev._plain = converts_plainly(dev.raw)
    return cached


def _shared_key(expr: str, sel: Any, dev: Device) -> tuple | None:
    reads = getattr(sel, "attributes_read", None)
    if reads is None or not _plain(dev):
        return None
    driver = dev.slice.driver
    attrs = dev.raw.get("attributes") or {}
    caps = dev.raw.get("capacity") or {}
    parts: list[Any] = [expr, driver, dev.allow_multiple]
    for domain, ident in sorted(reads, key=lambda r: (r[0], r[1] or "")):
        if ident is None:
            return None  # a whole domain read: no sharing
        full = f"{domain}/{ident}"
        a = attrs.get(full)
        if a is None and domain == driver:
            a = attrs.get(ident)
        c = caps.get(full)
        if c is None and domain == driver:
            c = caps.get(ident)
        parts.append(next(iter(a.items())) if isinstance(a, dict) and a else None)
        parts.append(str(c.get("value")) if isinstance(c, dict) else None)
    # Whether a domain exists at all is visible to `"d" in device.attributes`.
    parts.append(frozenset(n.split("/", 1)[0] for n in attrs if "/" in n))
    return tuple(parts)


class Allocator:
    """NewAllocator: one snapshot (inventory, allocated state, classes), usable for many nodes and claims."""

    def __init__(
        self,
        inventory: Inventory,
        state: AllocatedState | None = None,
        classes: Mapping[str, dict] | Callable[[str], dict | None] | None = None,
        features: Features = DEFAULT_FEATURES,
        cache: SelectorCache | None = None,
        share_id: Callable[[], str] | None = None,
    ) -> None:
        self.inventory = inventory
        self.state = state or AllocatedState()
        if classes is None:
            self._class: Callable[[str], dict | None] = lambda _n: None
        elif callable(classes):
            self._class = classes
        else:
            cmap = classes
            self._class = cmap.get
        self.features = features
        self.cache = cache or SelectorCache()
        self._available_counters: dict[PoolID, dict[str, dict[str, Fraction]]] = {}
        self._share_id = share_id or (lambda: str(uuid.uuid4()))
        self.allocate_one_calls = 0

    def device_class(self, name: str) -> dict | None:
        return self._class(name)

    def allocate(self, node: dict, claims: list[dict], deadline: float | None = None) -> Outcome:
        """Allocate every claim on `node`, or none. `deadline` (time.monotonic()): past it the search stops with
        AllocationTimeout, as upstream's allocator stops when its context is done."""
        return _Run(self, node, claims, deadline).run()

    def explain(self, node: dict, claims: list[dict]) -> NodeExplanation:
        """Why (not): `allocate` and, per request, which devices on the node its selectors kept and what excluded
        every other one."""
        return explain(self, node, claims)

    def request_devices(
        self,
        node: dict,
        class_name: str,
        *,
        count: int = 1,
        tolerations: Iterable[dict] = (),
        selectors: Iterable[dict] = (),
        namespace: str = "",
    ) -> RequestExplanation:
        """One ExactCount request of `class_name` on `node`, judged device by device without the search: the devices
        it could take now (`candidates`) and why not the others. A bridged `nvidia.com/gpu` pod's request has no
        tolerations and no selectors of its own (the scheduler's <extended-resources> claim)."""
        body: dict[str, Any] = {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}
        if tolerations:
            body["tolerations"] = list(tolerations)
        if selectors:
            body["selectors"] = list(selectors)
        claim = {
            "metadata": {"namespace": namespace, "name": "<extended-resources>"},
            "spec": {"devices": {"requests": [{"name": "request", "exactly": body}]}},
        }
        run = _Run(self, node, [claim])
        run.pools = self.inventory.gather_pools(node, self.features)
        return _explain_request(run, 0, claim, Request("request", body, None, False), self.features)

    def available_counters(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        """The pool's counters less what allocated devices consume (cached per pool for this allocator)."""
        hit = self._available_counters.get(pool.id)
        if hit is not None:
            return hit
        avail = counters_left(pool.counter_sets, pool_devices(pool), self.state)
        self._available_counters[pool.id] = avail
        return avail


class _Run:
    """The `allocator` of one Allocate call."""

    def __init__(self, owner: Allocator, node: dict, claims: list[dict], deadline: float | None = None) -> None:
        self.a = owner
        self.deadline = deadline
        self.f = owner.features
        self.node = node
        self.node_name = str((node.get("metadata") or {}).get("name", ""))
        self.claims = claims
        self.pools: list[Pool] = []
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[Any]] = []
        self.consumed_counters: dict[PoolID, dict[str, dict[str, Fraction]]] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.results: list[list[dict]] = [[] for _ in claims]
        self.match_cache: dict[tuple, bool] = {}

    # -- setup --
    def prepare(self) -> None:
        self.pools = self.a.inventory.gather_pools(self.node, self.f)
        for ci, claim in enumerate(self.claims):
            devices = ((claim.get("spec") or {}).get("devices")) or {}
            min_per_claim = 0
            for ri, req in enumerate(devices.get("requests") or []):
                name = str(req.get("name", ""))
                subs = req.get("firstAvailable") or []
                if not self.f.PrioritizedList and subs:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, request {name}: has subrequests, but the DRAPrioritizedList "
                        "feature is disabled"
                    )
                if not self.f.ConsumableCapacity:
                    ex = req.get("exactly")
                    if ex is not None and ex.get("capacity") is not None:
                        raise AllocationError(
                            f"claim {_kobj(claim)}, request {name}: has capacity requests, but the "
                            "DRAConsumableCapacity feature is disabled"
                        )
                    for sub in subs:
                        if sub.get("capacity") is not None:
                            raise AllocationError(
                                f"claim {_kobj(claim)}, subrequest {sub.get('name', '')}: has capacity requests, "
                                "but the DRAConsumableCapacity feature is disabled"
                            )
                if subs:
                    parent = Request(name, {}, None, False)
                    min_req = None
                    for si, sub in enumerate(subs):
                        r = Request(str(sub.get("name", "")), sub, name, True)
                        rd = self._validate(ci, r, parent)
                        self.request_data[(ci, ri, si)] = rd
                        min_req = rd.num_devices if min_req is None else min(min_req, rd.num_devices)
                    min_per_request = min_req or 0
                else:
                    r = Request(name, req.get("exactly") or {}, None, False)
                    if req.get("exactly") is None:
                        raise AllocationError(
                            f"claim {_kobj(claim)}, request {name}: missing device class name (unsupported request "
                            "type?)"
                        )
                    rd = self._validate(ci, r, None)
                    self.request_data[(ci, ri, 0)] = rd
                    min_per_request = rd.num_devices
                if min_per_request > ALLOCATION_RESULTS_MAX_SIZE - min_per_claim:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, request {name}: adding {min_per_request} devices exceeds the claim "
                        f"limit of {ALLOCATION_RESULTS_MAX_SIZE}, with {min_per_claim} already accounted for"
                    )
                min_per_claim += min_per_request
            cons: list[Any] = []
            for i, c in enumerate(devices.get("constraints") or []):
                reqs = [str(x) for x in c.get("requests") or []]
                if c.get("matchAttribute") is not None:
                    cons.append(_MatchAttribute(reqs, str(c["matchAttribute"])))
                elif c.get("distinctAttribute") is not None:
                    cons.append(_DistinctAttribute(reqs, str(c["distinctAttribute"])))
                else:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            self.constraints.append(cons)

    def _validate(self, ci: int, r: Request, parent: Request | None) -> _RequestData:
        claim = self.claims[ci]
        rd = _RequestData(r, parent, None)
        if r.derived:
            raise AllocationError(
                f"claim {_kobj(claim)}, request {r.name}: cannot handle request with derived attributes, the feature "
                "is disabled"
            )
        for i, sel in enumerate(r.selectors):
            if not isinstance(sel, dict) or sel.get("cel") is None:
                raise AllocationError(
                    f"claim {_kobj(claim)}, request {r.name}, selector #{i}: CEL expression empty (unsupported "
                    "selector type?)"
                )
        if not self.f.AdminAccess and r.has_admin:
            raise AllocationError(
                f"claim {_kobj(claim)}, request {r.name}: admin access is requested, but the feature is disabled"
            )
        if not r.class_name:
            raise AllocationError(
                f"claim {_kobj(claim)}, request {r.name}: missing device class name (unsupported request type?)"
            )
        cls = self.a.device_class(r.class_name)
        if cls is None:
            raise AllocationError(
                f"claim {_kobj(claim)}, request {r.name}: could not retrieve device class {r.class_name}: "
                f'deviceclass.resource.k8s.io "{r.class_name}" not found'
            )
        rd.cls = cls
        if r.mode == "ExactCount":
            rd.num_devices = r.count
        elif r.mode == "All":
            rd.all_devices = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, request {r.name}: asks for all devices, but resource pool "
                        f"{pool.name} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, request {r.name}: asks for all devices, but resource pool "
                        f"{pool.name} is currently invalid"
                    )
                for slc in pool.targeting:
                    for dev in slc.devices:
                        if not self.selectable(ci, rd, dev, (ci, -1, id(r))):
                            continue
                        if self.f.ConsumableCapacity:
                            try:
                                ok, _ = _cmp_request_over_capacity(
                                    {}, r.capacity_requests, dev.capacity, None, self.f.FractionalCapacityRange
                                )
                            except _CapacityError as exc:
                                raise AllocationError(
                                    f"claim {_kobj(claim)}, request {r.name}: checking capacity for device "
                                    f"{dev.name}: {exc}"
                                ) from None
                            if not ok:
                                continue
                        rd.all_devices.append((dev, pool))
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {_kobj(claim)}, request {r.name}: unsupported count mode {r.mode}")
        return rd

    # -- selection --
    def selectable(self, ci: int, rd: _RequestData, dev: Device, key: tuple) -> bool:
        if not self.f.DeviceBindingAndStatus and dev.binding_conditions:
            return False
        mk = (dev.id, key)
        hit = self.match_cache.get(mk)
        if hit is not None:
            return hit
        ok = self._selectors_match(ci, dev, rd.cls, ((rd.cls or {}).get("spec") or {}).get("selectors") or [])
        if ok:
            ok = self._selectors_match(ci, dev, None, rd.request.selectors)
        if ok and dev.slice.per_device:
            ok = node_matches(self.node, dev.node_name, dev.all_nodes, dev.node_selector)
        self.match_cache[mk] = ok
        return ok

    def _selectors_match(self, ci: int, dev: Device, cls: dict | None, selectors: list) -> bool:
        for i, sel in enumerate(selectors):
            expr = str(((sel or {}).get("cel") or {}).get("expression", ""))
            matched, err, is_compile = self.a.cache.evaluate(expr, dev)
            if err is not None:
                owner = (
                    f"class {(cls.get('metadata') or {}).get('name', '')}"
                    if cls is not None
                    else f"claim {_kobj(self.claims[ci])}"
                )
                if is_compile:
                    raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {err}")
                from dragoman.fleet.cel import scheduler_error_message

                raise AllocationError(scheduler_error_message(owner, i, *dev.id, err))
            if not matched:
                return False
        return True

    def in_use(self, did: DeviceID) -> bool:
        return did in self.a.state.devices or bool(self.allocating.get(did))

    def capacity_in_use(self, did: DeviceID) -> bool:
        return self.a.state.has_share(did) or did in self.allocating_capacity

    def fits_capacity(self, r: Request, dev: Device) -> bool:
        if not r.capacity_requests and not dev.has_policy and not dev.allow_multiple:
            return True  # each capacity consumed whole, of a device nobody shares: always fits
        current = self.a.state.capacity.get(dev.id, {})
        ok, _ = _cmp_request_over_capacity(
            current,
            r.capacity_requests,
            dev.capacity,
            self.allocating_capacity.get(dev.id),
            self.f.FractionalCapacityRange,
        )
        return ok

    # -- counters --
    def check_counters(self, dev: Device, pool: Pool) -> bool:
        avail = self.a.available_counters(pool)
        consumed = self.consumed_counters.setdefault(pool.id, {})
        for set_name, counters in dev.consumes:
            cs = consumed.setdefault(set_name, {})
            for cn, q in counters.items():
                cs[cn] = cs.get(cn, Fraction(0)) + q.value
        for set_name, counters_avail in avail.items():
            cs = consumed.get(set_name, {})
            for cn, av in counters_avail.items():
                if av < cs.get(cn, Fraction(0)):
                    self.release_counters(dev, pool)
                    return False
        return True

    def release_counters(self, dev: Device, pool: Pool) -> None:
        consumed = self.consumed_counters.get(pool.id, {})
        for set_name, counters in dev.consumes:
            cs = consumed.get(set_name)
            if cs is None:
                continue
            for cn, q in counters.items():
                cs[cn] = cs.get(cn, Fraction(0)) - q.value

    # -- the search --
    def run(self) -> Outcome:
        self.prepare()
        try:
            done = self.allocate_one(0, 0, 0, 0, False, (0, 0, 0))
        except _Stop:
            return Outcome(None)
        except _MaxSizeExceeded:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                return Outcome(None, "invalid resource pools were encountered")
            return Outcome(None)
        return Outcome(self.build_results())

    def allocate_one(self, ci: int, ri: int, si: int, di: int, sub_mode: bool, start: tuple[int, int, int]) -> bool:
        self.a.allocate_one_calls += 1
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationTimeout("filter operation aborted: context deadline exceeded")
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []
        if ri >= len(requests):
            try:
                return self.allocate_one(ci + 1, 0, 0, 0, False, (0, 0, 0))
            except _MaxSizeExceeded:
                return False
        rd = self.request_data[(ci, ri, si)]
        if not sub_mode and rd.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                try:
                    ok = self.allocate_one(ci, ri, sub, 0, True, (0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.request_data[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        r = rd.request
        do_all = r.mode == "All"
        if do_all and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self.allocate_one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        remaining = rd.num_devices - di
        if remaining > ALLOCATION_RESULTS_MAX_SIZE - len(self.results[ci]):
            raise _MaxSizeExceeded
        if do_all:
            assert rd.all_devices is not None
            dev, pool = rd.all_devices[di]
            ok, undo = self.allocate_device(ci, ri, si, dev, pool, True)
            if not ok:
                return False
            try:
                done = self.allocate_one(ci, ri, si, di + 1, sub_mode, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        key = (ci, ri, si)
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            s_start = start[1] if pi == start[0] else 0
            for sli in range(s_start, len(pool.targeting)):
                slc = pool.targeting[sli]
                d_start = start[2] if (pi == start[0] and sli == start[1]) else 0
                devs = slc.devices
                for dvi in range(d_start, len(devs)):
                    dev = devs[dvi]
                    if r.admin:
                        if ci in self.allocating.get(dev.id, ()):
                            continue
                    elif self.in_use(dev.id):
                        continue
                    if not self.selectable(ci, rd, dev, key):
                        continue
                    if self.f.ConsumableCapacity:
                        try:
                            fits = self.fits_capacity(r, dev)
                        except _CapacityError as exc:
                            raise AllocationError(
                                f"claim {_kobj(claim)}, request {r.name}: checking capacity for device "
                                f"{'/'.join(dev.id)}: {exc}"
                            ) from None
                        if not fits:
                            continue
                    ok, undo = self.allocate_device(ci, ri, si, dev, pool, False)
                    if not ok:
                        continue
                    try:
                        done = self.allocate_one(ci, ri, si, di + 1, sub_mode, (pi, sli, dvi + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def allocate_device(
        self, ci: int, ri: int, si: int, dev: Device, pool: Pool, must: bool
    ) -> tuple[bool, Callable[[], None]]:
        rd = self.request_data[(ci, ri, si)]
        r = rd.request
        nothing = _noop
        allow_multi = self.f.ConsumableCapacity and dev.allow_multiple
        if not allow_multi and r.admin and ci in self.allocating.get(dev.id, ()):
            return False, nothing
        if not r.admin and self.in_use(dev.id):
            return False, nothing
        if not self.f.PartitionableDevices and dev.consumes:
            return False, nothing
        skip_counters = allow_multi and self.capacity_in_use(dev.id)
        reserved = False
        if not skip_counters and dev.consumes:
            if not self.check_counters(dev, pool):
                return False, nothing
            reserved = True
        base = rd.parent.name if rd.parent is not None else r.name
        sub = r.name if rd.parent is not None else None
        cons = self.constraints[ci]
        added = 0
        marked = False
        cap_inserted: dict[str, Fraction] | None = None
        cap_existed = False
        result_added = False

        def rollback() -> None:
            nonlocal result_added, marked, cap_inserted, added, reserved
            if result_added:
                self.results[ci].pop()
                result_added = False
            if cap_inserted is not None:
                agg = self.allocating_capacity.get(dev.id)
                if agg is not None:
                    for n, v in cap_inserted.items():
                        agg[n] = agg.get(n, Fraction(0)) - v
                        if agg[n] == 0:
                            del agg[n]
                    if not agg and not cap_existed:
                        del self.allocating_capacity[dev.id]
                    elif not agg and cap_existed:
                        self.allocating_capacity[dev.id] = {}
                cap_inserted = None
            if marked:
                s = self.allocating.get(dev.id)
                if s is not None:
                    s.discard(ci)
                marked = False
            for i in range(added - 1, -1, -1):
                cons[i].remove(base, sub, dev)
            added = 0
            if reserved:
                self.release_counters(dev, pool)
                reserved = False

        if self.f.DeviceTaints and untolerated_taint(dev, r.tolerations) is not None:
            rollback()
            return False, nothing
        for c in cons:
            if not c.add(base, sub, dev):
                rollback()
                if must:
                    raise AllocationError(
                        f"claim {_kobj(self.claims[ci])}, request {r.name}: cannot add device {'/'.join(dev.id)} "
                        "because a claim constraint would not be satisfied"
                    )
                return False, nothing
            added += 1
        if not allow_multi:
            self.allocating.setdefault(dev.id, set()).add(ci)
            marked = True
        consumed: dict[str, Q] | None = None
        share_id: str | None = None
        if self.f.ConsumableCapacity:
            try:
                fits = self.fits_capacity(r, dev)
            except _CapacityError as exc:
                rollback()
                raise AllocationError(
                    f"claim {_kobj(self.claims[ci])}, request {r.name}: rechecking capacity for device "
                    f"{'/'.join(dev.id)}: {exc}"
                ) from None
            if not fits:
                rollback()
                return False, nothing
            if allow_multi:
                try:
                    consumed = consumed_capacity(r.capacity_requests, dev.capacity, self.f.FractionalCapacityRange)
                except _CapacityError as exc:
                    rollback()
                    raise AllocationError(
                        f"claim {_kobj(self.claims[ci])}, request {r.name}: computing consumed capacity for device "
                        f"{'/'.join(dev.id)}: {exc}"
                    ) from None
                share_id = self.a._share_id()
                cap_existed = dev.id in self.allocating_capacity
                agg = self.allocating_capacity.setdefault(dev.id, {})
                cap_inserted = {}
                for n, q in consumed.items():
                    agg[n] = agg.get(n, Fraction(0)) + q.value
                    cap_inserted[n] = q.value
        result: dict[str, Any] = {
            "request": r.full_name,
            "driver": dev.slice.driver,
            "pool": dev.slice.pool,
            "device": dev.name,
        }
        if r.admin:
            result["adminAccess"] = True
        if r.tolerations:
            result["tolerations"] = r.tolerations
        if share_id is not None:
            result["shareID"] = share_id
        if consumed:
            result["consumedCapacity"] = {n: str(q) for n, q in consumed.items()}
        if self.f.DeviceBindingAndStatus:
            if dev.binding_conditions:
                result["bindingConditions"] = list(dev.binding_conditions)
            if dev.binding_failure_conditions:
                result["bindingFailureConditions"] = list(dev.binding_failure_conditions)
        self.results[ci].append({"result": result, "device": dev})
        result_added = True
        return True, rollback

    # -- results --
    def build_results(self) -> list[dict]:
        out = []
        for ci, claim in enumerate(self.claims):
            spec = (claim.get("spec") or {}).get("devices") or {}
            requests = spec.get("requests") or []
            results = [e["result"] for e in self.results[ci]]
            config: list[dict] = []
            class_ranges: dict[str, tuple[int, int]] = {}
            for ri in range(len(requests)):
                rd = self.request_data[(ci, ri, 0)]
                if rd.parent is not None:
                    rd = self.request_data[(ci, ri, rd.selected_sub)]
                cls = rd.cls
                if cls is None:
                    continue
                cname = str((cls.get("metadata") or {}).get("name", ""))
                rng = class_ranges.get(cname)
                if rng is not None:
                    for i in range(rng[0], rng[1]):
                        config[i]["requests"].append(rd.request.full_name)
                    continue
                start = len(config)
                for cfg in (cls.get("spec") or {}).get("config") or []:
                    entry = {"source": "FromClass", "requests": [rd.request.full_name]}
                    entry.update({k: v for k, v in cfg.items() if k != "requests"})
                    config.append(entry)
                class_ranges[cname] = (start, len(config))
            for cfg in spec.get("config") or []:
                creqs = list(cfg.get("requests") or [])
                body = {k: v for k, v in cfg.items() if k != "requests"}
                if not creqs:
                    config.append({"source": "FromClaim", **body})
                    continue
                for ri, req in enumerate(requests):
                    if req.get("name") in creqs:
                        config.append({"source": "FromClaim", "requests": creqs, **body})
                        break
                    rd = self.request_data[(ci, ri, 0)]
                    if rd.parent is None:
                        continue
                    sub = (req.get("firstAvailable") or [])[rd.selected_sub]
                    if f"{req.get('name')}/{sub.get('name')}" in creqs:
                        config.append({"source": "FromClaim", "requests": creqs, **body})
                        break
            for entry in config:
                creqs = list(entry.get("requests") or [])
                if not creqs:
                    continue
                applies_all = True
                for ri, req in enumerate(requests):
                    if req.get("name") in creqs:
                        continue
                    rd = self.request_data[(ci, ri, 0)]
                    if rd.parent is not None:
                        sub = (req.get("firstAvailable") or [])[rd.selected_sub]
                        if f"{req.get('name')}/{sub.get('name')}" in creqs:
                            continue
                    applies_all = False
                    break
                if applies_all:
                    entry.pop("requests", None)
            allocation: dict[str, Any] = {"devices": {"results": results}}
            if config:
                allocation["devices"]["config"] = config
            ns = self.node_selector([e["device"] for e in self.results[ci]])
            if ns is not None:
                allocation["nodeSelector"] = ns
            out.append(allocation)
        return out

    def node_selector(self, devices: list[Device]) -> dict | None:
        """createNodeSelector."""
        fields: list[dict] = []
        exprs: list[dict] = []
        for dev in devices:
            slc = dev.slice
            if slc.per_device:
                node_name, selector = dev.node_name, dev.node_selector
            else:
                node_name, selector = slc.node_name, slc.node_selector
            if node_name is not None or dev.binds_to_node:
                return {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [self.node_name]}]}
                    ]
                }
            if isinstance(selector, dict):
                terms = selector.get("nodeSelectorTerms") or []
                if len(terms) == 1:
                    _add_requirements(terms[0].get("matchFields") or [], fields)
                    _add_requirements(terms[0].get("matchExpressions") or [], exprs)
                elif len(terms) > 1:
                    raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        if fields or exprs:
            term: dict[str, Any] = {}
            if exprs:
                term["matchExpressions"] = exprs
            if fields:
                term["matchFields"] = fields
            return {"nodeSelectorTerms": [term]}
        return None


def _noop() -> None:
    return None


def _add_requirements(src: list[dict], dst: list[dict]) -> None:
    for req in src:
        values = set(req.get("values") or [])
        if any(
            r.get("key") == req.get("key")
            and r.get("operator") == req.get("operator")
            and set(r.get("values") or []) == values
            for r in dst
        ):
            continue
        dst.append(req)


# --- binding conditions (DynamicResources PreBind) ---

BINDING_TIMEOUT_SECONDS = 600.0  # config.DynamicResourcesBindingTimeoutDefault
BINDING_POLL_SECONDS = 5.0  # PreBind polls the claim every 5 s
FILTER_TIMEOUT_SECONDS = 10.0  # config.DynamicResourcesFilterTimeoutDefault: each node's Allocate in Filter


def has_binding_conditions(claim: dict) -> bool:
    alloc = (claim.get("status") or {}).get("allocation") or {}
    return any(r.get("bindingConditions") for r in (alloc.get("devices") or {}).get("results") or [])


def binding_readiness(claim: dict, now: float | None = None) -> tuple[str, str]:
    """isClaimReadyForBinding and isClaimTimeout: ("ready" | "waiting" | "failed" | "timeout", the scheduler's error
    text for the last two). A result's device is ready when each of its bindingConditions is True in the claim's
    status.devices and none of its bindingFailureConditions is; `now` (epoch seconds) against allocationTimestamp +
    600 s decides the timeout (None: never)."""
    st = claim.get("status") or {}
    alloc = st.get("allocation")
    name = str((claim.get("metadata") or {}).get("name", ""))
    if not alloc:
        return "waiting", ""
    devices = st.get("devices") or []
    for r in (alloc.get("devices") or {}).get("results") or []:
        if not r.get("bindingConditions"):
            continue
        status = next(
            (
                d
                for d in devices
                if d.get("device") == r.get("device")
                and d.get("driver") == r.get("driver")
                and d.get("pool") == r.get("pool")
            ),
            None,
        )
        conds = {c.get("type"): c for c in (status or {}).get("conditions") or [] if isinstance(c, dict)}
        if status is not None:
            for f in r.get("bindingFailureConditions") or []:
                c = conds.get(f)
                if c is not None and c.get("status") == "True":
                    reason, message = c.get("reason", ""), c.get("message", "")
                    return "failed", f'device binding failed: claim={name}, reason={reason}, message="{message}"'
        if status is None or any((conds.get(b) or {}).get("status") != "True" for b in r["bindingConditions"]):
            started = parse_time(alloc.get("allocationTimestamp"))
            if now is not None and started is not None and started + BINDING_TIMEOUT_SECONDS < now:
                return "timeout", f"device binding timeout: claim={name}"
            return "waiting", ""
    return "ready", ""


# --- the extended-resource bridge (KEP-5004) ---


def _int_request(container: dict, resource: str) -> tuple[int, list[str]] | None:
    res = container.get("resources") or {}
    reqs = dict(res.get("limits") or {})
    reqs.update(res.get("requests") or {})
    if resource not in reqs:
        return None
    try:
        value = int(str(reqs[resource]))
    except ValueError:
        return None
    if value == 0:
        return None
    return value, sorted(reqs)


def bridge_requests(
    pod: dict, ext: dict[str, int], class_for: Callable[[str], dict | None]
) -> tuple[list[dict], list[dict]]:
    """createRequestsAndMappings: one request per (container, resource) named `container-<i>-request-<j>`.

    `i` indexes initContainers + containers; `j` is the resource's index in the sorted keys of that container's
    requests.
    Non-sidecar init containers reuse later long-lived requests, else share one max-sized request.
    """
    spec = pod.get("spec") or {}
    inits = spec.get("initContainers") or []
    containers = list(inits) + list(spec.get("containers") or [])
    long_lived = [i for i, c in enumerate(containers) if not (i < len(inits) and c.get("restartPolicy") != "Always")]
    short_lived = [i for i, c in enumerate(containers) if i < len(inits) and c.get("restartPolicy") != "Always"]
    device_requests: list[dict] = []
    mappings: list[dict] = []
    for resource in sorted(ext):
        cls = class_for(resource)
        if cls is None:
            continue
        class_name = (cls.get("metadata") or {}).get("name")

        # Called only within this iteration; the loop's values are bound so no later iteration can change them.
        def one(
            i: int, reusable: list, resource: str = resource, class_name: str | None = class_name
        ) -> tuple[dict | None, list[dict]]:
            c = containers[i]
            got = _int_request(c, resource)
            if got is None:
                return None, []
            want, keys = got
            maps = []
            total = 0
            for r in reusable:
                if r is None:
                    continue
                total += r["exactly"]["count"]
                maps.append({"containerName": c.get("name"), "resourceName": resource, "requestName": r["name"]})
                if total >= want:
                    return None, maps
            name = f"container-{i}-request-{keys.index(resource)}"
            req = {
                "name": name,
                "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": want - total},
            }
            maps.append({"containerName": c.get("name"), "resourceName": resource, "requestName": name})
            return req, maps

        long_reqs: list = [None] * len(containers)
        long_maps: list[dict] = []
        for i in long_lived:
            req, maps = one(i, [])
            long_reqs[i] = req
            long_maps.extend(maps)
        short_max = None
        short_names: set[str] = set()
        short_maps: list[dict] = []
        for i in short_lived:
            req, maps = one(i, long_reqs[i:])
            if req is not None:
                short_names.add(req["name"])
                if short_max is None or short_max["exactly"]["count"] < req["exactly"]["count"]:
                    short_max = req
            short_maps.extend(maps)
        if short_max is not None and len(short_names) > 1:
            short_names.discard(short_max["name"])
            for m in short_maps:
                if m["requestName"] in short_names:
                    m["requestName"] = short_max["name"]
        if short_max is not None:
            device_requests.append(short_max)
        device_requests.extend(r for r in long_reqs if r is not None)
        mappings.extend(long_maps)
        mappings.extend(short_maps)
    device_requests.sort(key=lambda r: r["name"])
    return device_requests, mappings


def extended_resources_claim(
    pod: dict, ext: dict[str, int], class_for: Callable[[str], dict | None]
) -> tuple[dict, list[dict]] | None:
    """The claim kube-scheduler allocates in memory for a pod's extended resources that DeviceClasses serve on a node
    (`ext`: resource -> amount; `class_for`: the class serving a name), and the pod's request mappings; None when no
    class serves any of them. Allocate or explain it like any claim."""
    requests, mappings = bridge_requests(pod, ext, class_for)
    if not requests:
        return None
    meta = pod.get("metadata") or {}
    claim = {
        "metadata": {"namespace": meta.get("namespace", ""), "name": "<extended-resources>"},
        "spec": {"devices": {"requests": requests}},
    }
    return claim, mappings


# --- why not ---

EXCLUSION_KINDS = (
    "binding-disabled",  # the device has binding conditions and DRADeviceBindingConditions is off
    "class-selector",  # the DeviceClass's selectors are false for it
    "selector",  # the request's own selectors are false for it
    "node-selection",  # per-device node selection: not reachable from this node
    "in-use",  # held by an allocated claim (detail: holders)
    "shares",  # a shareable device without capacity left for this request (detail: left)
    "capacity",  # the request's capacity does not fit, or the device lacks it
    "request-policy",  # the request's amount falls outside the device's requestPolicy
    "counters",  # a counter set of its pool is exhausted (detail: counter set, holders)
    "taint",  # a NoSchedule/NoExecute taint not tolerated (detail: key, value, effect, source)
    "partitionable-disabled",  # it consumes counters and DRAPartitionableDevices is off
)


@dataclasses.dataclass(frozen=True)
class Exclusion:
    """Why one device cannot serve one request, in dragoman's words, with the evidence."""

    kind: str
    message: str
    holders: tuple[str, ...] = ()
    taint: Mapping[str, Any] | None = None
    source: str | None = None  # "slice" or "DeviceTaintRule <name>"
    counter_set: str | None = None


@dataclasses.dataclass
class Candidate:
    """A device the request could take on its own (selectors true, free, fits, tolerated)."""

    device: DeviceID
    binding_conditions: tuple[str, ...] = ()  # the claim will wait in PreBind for these
    shared: bool = False  # allowMultipleAllocations: another share may already hold part of it


@dataclasses.dataclass
class RequestExplanation:
    claim: str  # "ns/name"
    request: str  # "req" or "req/sub"
    device_class: str
    mode: str  # "ExactCount" | "All"
    count: int  # devices wanted (ExactCount), or the devices "All" means
    candidates: list[Candidate] = dataclasses.field(default_factory=list)
    excluded: list[tuple[DeviceID, Exclusion]] = dataclasses.field(default_factory=list)
    error: str | None = None  # the request cannot even be evaluated (class missing, CEL error)

    @property
    def satisfiable_alone(self) -> bool:
        return self.error is None and len(self.candidates) >= max(self.count, 1)

    def by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for _, ex in self.excluded:
            out[ex.kind] = out.get(ex.kind, 0) + 1
        return out


@dataclasses.dataclass
class NodeExplanation:
    node: str
    outcome: Outcome | None
    error: str | None  # the scheduler would abort the attempt (AllocationError)
    requests: list[RequestExplanation] = dataclasses.field(default_factory=list)
    # > 0: the search was stopped after this many seconds, no answer either way (the scheduler's may time out too).
    searched_out: float = 0.0
    unusable_pools: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (pool, "incomplete"/reason)

    @property
    def allocations(self) -> list[dict] | None:
        return self.outcome.allocations if self.outcome is not None else None

    def why_not(self) -> str:
        """One sentence: why the claims cannot be allocated on this node ("" when they can)."""
        if self.error:
            return self.error
        if self.outcome is not None and self.outcome.ok:
            return ""
        if self.searched_out:
            return (
                f"the search for a combination of devices did not end within {self.searched_out:g} s (kube-scheduler's "
                f"DRA filter gives up after {FILTER_TIMEOUT_SECONDS:g} s)"
            )
        parts = []
        for rq in self.requests:
            if rq.error:
                parts.append(f"{rq.claim} {rq.request}: {rq.error}")
                continue
            if rq.satisfiable_alone:
                continue
            kinds = rq.by_kind()
            detail = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
            wanted = "all" if rq.mode == "All" else str(rq.count)
            parts.append(
                f"{rq.claim} {rq.request}: {len(rq.candidates)} of {wanted} device(s) usable"
                + (f" ({detail})" if detail else "")
            )
        if not parts:
            if self.unusable_pools:
                return "; ".join(f"pool {p} {why}" for p, why in self.unusable_pools)
            return "each request has usable devices, but no combination satisfies the claims' constraints together"
        return "; ".join(parts)


def _holders_text(holders: Iterable[str]) -> str:
    hs = sorted(set(holders))
    if not hs:
        return "an allocated claim"
    if len(hs) <= 3:
        return "claim " + ", ".join(hs)
    return f"claims {', '.join(hs[:3])} and {len(hs) - 3} more"


# How long explain's search may run. The search is upstream's, exponential in the worst case (a count over many devices
# with a matchAttribute no group of them meets): kube-scheduler gives it 10 s per node and gives up; a diagnosis that
# reads many pods gives it far less and says it could not decide, rather than hang.
EXPLAIN_SECONDS = 1.0


def explain(a: Allocator, node: dict, claims: list[dict], seconds: float = EXPLAIN_SECONDS) -> NodeExplanation:
    """For each request (every firstAvailable subrequest), each device of the pools on `node`: kept, or why not.

    Judged device by device against what allocated claims hold (not against the other requests of these claims):
    the search's answer is `outcome`, or `searched_out` when it ran past `seconds`."""
    node_name = str((node.get("metadata") or {}).get("name", ""))
    searched_out = 0.0
    try:
        outcome: Outcome | None = a.allocate(node, claims, time.monotonic() + seconds)
        error = None
    except AllocationError as exc:
        outcome, error = None, str(exc)
    except AllocationTimeout:
        outcome, error, searched_out = None, None, seconds
    run = _Run(a, node, claims)
    run.pools = a.inventory.gather_pools(node, a.features)
    ex = NodeExplanation(node_name, outcome, error, searched_out=searched_out)
    for pool in run.pools:
        if pool.incomplete:
            ex.unusable_pools.append((pool.name, "is being updated (not all of its slices are published)"))
        elif pool.invalid:
            ex.unusable_pools.append((pool.name, f"is invalid: {pool.invalid_reason}"))
    f = a.features
    for ci, claim in enumerate(claims):
        for req in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
            name = str(req.get("name", ""))
            subs = req.get("firstAvailable") or []
            items = [Request(str(s.get("name", "")), s, name, True) for s in subs] if subs else []
            if not subs:
                items = [Request(name, req.get("exactly") or {}, None, False)]
            for r in items:
                ex.requests.append(_explain_request(run, ci, claim, r, f))
    return ex


def _explain_request(run: _Run, ci: int, claim: dict, r: Request, f: Features) -> RequestExplanation:
    a = run.a
    rq = RequestExplanation(_kobj(claim), r.full_name, r.class_name, r.mode, r.count)
    cls = a.device_class(r.class_name) if r.class_name else None
    if cls is None:
        rq.error = f"DeviceClass {r.class_name or '(none)'} does not exist"
        return rq
    rd = _RequestData(r, None, cls)
    key = (ci, "explain", r.full_name)
    n_all = 0
    for pool in run.pools:
        if pool.incomplete or pool.invalid:
            continue
        avail = a.available_counters(pool) if f.PartitionableDevices and pool.counter_sets else {}
        for slc in pool.targeting:
            for dev in slc.devices:
                try:
                    why = _exclusion(run, ci, rd, dev, pool, avail, key, f)
                except AllocationError as exc:
                    rq.error = str(exc)
                    return rq
                if why is None:
                    rq.candidates.append(
                        Candidate(
                            dev.id,
                            tuple(dev.binding_conditions or ()) if f.DeviceBindingAndStatus else (),
                            f.ConsumableCapacity and dev.allow_multiple,
                        )
                    )
                    n_all += 1
                elif why.kind not in ("class-selector", "selector", "node-selection", "binding-disabled"):
                    n_all += 1
                    rq.excluded.append((dev.id, why))
                else:
                    rq.excluded.append((dev.id, why))
    if r.mode == "All":
        rq.count = n_all
    return rq


def _exclusion(
    run: _Run,
    ci: int,
    rd: _RequestData,
    dev: Device,
    pool: Pool,
    avail: dict[str, dict[str, Fraction]],
    key: tuple,
    f: Features,
) -> Exclusion | None:
    a = run.a
    r = rd.request
    if not f.DeviceBindingAndStatus and dev.binding_conditions:
        return Exclusion("binding-disabled", "has binding conditions, which this scheduler does not support")
    cls = rd.cls or {}
    if not run._selectors_match(ci, dev, cls, (cls.get("spec") or {}).get("selectors") or []):
        return Exclusion("class-selector", f"DeviceClass {r.class_name}'s selectors do not match it")
    if not run._selectors_match(ci, dev, None, r.selectors):
        return Exclusion("selector", "the request's selectors do not match it")
    if dev.slice.per_device and not node_matches(run.node, dev.node_name, dev.all_nodes, dev.node_selector):
        return Exclusion("node-selection", "its node selection does not include this node")
    allow_multi = f.ConsumableCapacity and dev.allow_multiple
    if not r.admin and dev.id in a.state.devices:
        hs = tuple(a.state.holders.get(dev.id, ()))
        return Exclusion("in-use", f"held by {_holders_text(hs)}", holders=hs)
    if not f.PartitionableDevices and dev.consumes:
        return Exclusion("partitionable-disabled", "consumes shared counters, which this scheduler does not support")
    if dev.consumes and not (allow_multi and a.state.has_share(dev.id)):
        for set_name, counters in dev.consumes:
            left = avail.get(set_name, {})
            for cn, q in counters.items():
                if left.get(cn, Fraction(0)) < q.value:
                    hs = tuple(sorted(set(counter_users(pool_devices(pool), set_name, a.state))))
                    have = Q(max(left.get(cn, Fraction(0)), Fraction(0)))
                    return Exclusion(
                        "counters",
                        f"counter set {set_name} of pool {pool.name} has {have} {cn} left, it needs {q}"
                        + (f" (used by {_holders_text(hs)})" if hs else ""),
                        holders=hs,
                        counter_set=set_name,
                    )
        # a negative balance elsewhere in the pool blocks every device of it (upstream checks all sets)
        for set_name, counters_left in avail.items():
            for cn, v in counters_left.items():
                if v < 0:
                    return Exclusion(
                        "counters",
                        f"counter set {set_name} of pool {pool.name} is overdrawn ({cn})",
                        counter_set=set_name,
                    )
    if f.DeviceTaints:
        hit = untolerated_taint(dev, r.tolerations)
        if hit is not None:
            taint, source = hit
            return Exclusion(
                "taint",
                f"tainted {taint.get('key', '')}"
                + (f"={taint.get('value')}" if taint.get("value") else "")
                + f":{taint.get('effect', '')} (from {source}), not tolerated by the request",
                taint=taint,
                source=source,
            )
    if f.ConsumableCapacity and (r.capacity_requests or dev.has_policy or dev.allow_multiple):
        current = a.state.capacity.get(dev.id, {})
        try:
            ok, why = _cmp_request_over_capacity(
                current, r.capacity_requests, dev.capacity, None, f.FractionalCapacityRange
            )
        except _CapacityError as exc:
            return Exclusion("capacity", str(exc))
        if not ok:
            assert why is not None
            if "requestPolicy" in why:
                return Exclusion("request-policy", why)
            if allow_multi and current:
                hs = tuple(a.state.holders.get(dev.id, ()))
                return Exclusion("shares", f"shared by {_holders_text(hs)}; {why}", holders=hs)
            return Exclusion("capacity", why)
    return None


__all__ = [
    "ADMIN_ACCESS_LABEL",
    "ALLOCATION_RESULTS_MAX_SIZE",
    "DEFAULT_FEATURES",
    "EXCLUSION_KINDS",
    "FINALIZER",
    "SUPPORTED_FEATURES",
    "AllocatedState",
    "AllocationError",
    "AllocationTimeout",
    "Allocator",
    "Candidate",
    "Device",
    "Exclusion",
    "Features",
    "Inventory",
    "NodeExplanation",
    "Outcome",
    "Pool",
    "RequestExplanation",
    "SelectorCache",
    "Slice",
    "BINDING_POLL_SECONDS",
    "BINDING_TIMEOUT_SECONDS",
    "FILTER_TIMEOUT_SECONDS",
    "admin_access_allowed",
    "binding_readiness",
    "has_binding_conditions",
    "bridge_requests",
    "extended_resources_claim",
    "counter_users",
    "counters_left",
    "default_consumption",
    "device_tolerates",
    "pool_devices",
    "explain",
    "node_matches",
    "rule_selects",
    "rule_selects_names",
    "untolerated_taint",
]
