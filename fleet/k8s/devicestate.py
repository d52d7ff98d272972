"""What each published device is doing now, read through the allocator's own view of the fleet: which claims hold it
(and how much of a shared device's capacity they consumed), which taints it carries and where from (its slice or a
DeviceTaintRule), which counter sets its pool shares and whether they are exhausted, and whether an allocation waits
for its binding conditions.

One reading: the devices, their taints (DeviceTaintRules included) and their counter sets come from the allocator's
`Inventory`; who holds what, the admin-access claims that only see a device and the capacity shares consume come
from its `AllocatedState`; what a pool's counter sets have left is `allocator.counters_left`, the function the
allocator's search starts from; what a request naming no amount consumes is the allocator's `consumed_capacity`.
`FleetDevices` keeps one of each and is maintained incrementally (a slice, a claim, the rules), recomputing the
states of the pools a change touches — never the fleet. The model (fleet/model.py) keeps one and answers
`device_state` and the fleet's counts from it; the Devices view, the DRA FREE column, the diagnosis and the
playground's "allocatable now" read it. Whether a given pod's request can be allocated on a given node, and why not,
is the allocator's `explain`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from fractions import Fraction
from typing import Any

from dragoman.fleet.k8s.allocator import (
    DEVICE_TAINT_EFFECTS_BLOCKING,
    AllocatedState,
    CapacityPolicy,
    Device,
    Inventory,
    Q,
    Slice,
    counter_users,
    counters_left,
    default_consumption,
)

Key = tuple[str, str]
DeviceId = tuple[str, str, str]
PoolId = tuple[str, str]

BLOCKING_EFFECTS = DEVICE_TAINT_EFFECTS_BLOCKING
EVICTION_CONDITION = "EvictionInProgress"  # resourceapi.DeviceTaintConditionEvictionInProgress

FREE = "free"
HELD = "held"
SHARED = "shared"
TAINTED = "tainted"
COUNTERS = "counters"
BINDING = "binding"
BINDING_FAILED = "binding-failed"


def quantity(value: Any) -> Fraction | None:
    """A resource.Quantity (string or number, or `{value: ...}`) as an exact number; None when it is not one."""
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return Fraction(value)
    try:
        return Q.parse(value).value
    except Exception:  # noqa: BLE001 - a malformed quantity reads as none, never as a crash
        return None


def fmt_quantity(value: Fraction) -> str:
    """A quantity in the units a person reads: bytes as Gi/Mi when whole, else the number."""
    for unit, mult in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20)):
        if value >= mult and value % mult == 0:
            return f"{value // mult}{unit}"
    return str(int(value)) if value.denominator == 1 else str(float(value))


@dataclasses.dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str
    source: str  # "slice" or "DeviceTaintRule <name>"
    time_added: str = ""

    @property
    def blocking(self) -> bool:
        return self.effect in BLOCKING_EFFECTS

    def text(self) -> str:
        kv = f"{self.key}={self.value}" if self.value else self.key
        return f"{kv}:{self.effect} (from {self.source})"

    def as_taint(self) -> dict:
        """The taint as the API spells it (what tolerations are matched against)."""
        return {"key": self.key, "value": self.value, "effect": self.effect}


@dataclasses.dataclass(frozen=True, slots=True)
class CounterBlock:
    """A counter set of the device's pool has less left than the device consumes, because of these claims."""

    counter_set: str
    counter: str
    needs: Fraction
    left: Fraction
    claims: tuple[Key, ...]

    def text(self) -> str:
        by = ", ".join(f"{ns}/{n}" for ns, n in self.claims[:3]) or "?"
        more = f" and {len(self.claims) - 3} more" if len(self.claims) > 3 else ""
        return (
            f"counter set {self.counter_set}: {self.counter} needs {fmt_quantity(self.needs)}, "
            f"{fmt_quantity(self.left)} left (used by {by}{more})"
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Share:
    """A capacity of a shared device (allowMultipleAllocations): total, consumed by its claims, and left."""

    name: str
    total: Fraction
    used: Fraction
    need: Fraction  # what a request naming no amount consumes (the allocator's rule: requestPolicy's default, else all)
    policy: CapacityPolicy | None = None

    @property
    def left(self) -> Fraction:
        return max(self.total - self.used, Fraction(0))

    def consumes(self, asked: Fraction | None) -> Fraction:
        """What a request asking `asked` (None: naming no amount) consumes of this capacity, as the allocator rounds."""
        if asked is None:
            return self.need
        return default_consumption(self.total, self.policy, asked)

    def text(self) -> str:
        return (
            f"{self.name} {fmt_quantity(self.used)} used, {fmt_quantity(self.left)} left of {fmt_quantity(self.total)}"
        )


@dataclasses.dataclass(frozen=True, slots=True)
class DeviceState:
    """One device now: its holders, shares, taints, counter blocks and binding state."""

    holders: tuple[Key, ...] = ()  # claims whose allocation takes the device (admin-access results do not)
    admin: tuple[Key, ...] = ()  # admin-access claims that see it (they never take it)
    shared: bool = False  # allowMultipleAllocations
    shares: tuple[Share, ...] = ()
    taints: tuple[Taint, ...] = ()
    counters: tuple[CounterBlock, ...] = ()
    binding: tuple[str, Key, str] | None = None  # (BINDING | BINDING_FAILED, claim, condition words)

    @property
    def blocking_taints(self) -> tuple[Taint, ...]:
        return tuple(t for t in self.taints if t.blocking) if self.taints else ()

    @property
    def capacity_left(self) -> bool:
        """A shared device still has room for a default request on every capacity it shares."""
        return all(s.left > 0 and s.left >= s.need for s in self.shares) if self.shares else not self.holders

    @property
    def allocatable(self) -> bool:
        """Whether the allocator could give this device now to a request without tolerations or capacity asks."""
        if self.blocking_taints or self.counters:
            return False
        if self.shared:
            return self.capacity_left
        return not self.holders

    def untolerated(self, tolerations: Iterable[dict] | None) -> Taint | None:
        """The first NoSchedule/NoExecute taint these (device) tolerations do not tolerate."""
        from dragoman.fleet.k8s.tolerations import tolerations_tolerate

        tols = list(tolerations or ())
        for t in self.blocking_taints:
            if not tolerations_tolerate(tols, t.as_taint()):
                return t
        return None

    def room_for(self, capacity_requests: Mapping[str, Any] | None) -> bool:
        """Whether a shared device has room for a request asking these capacities (the policy's default for those
        it does not name)."""
        asked = {k: quantity(v) for k, v in (capacity_requests or {}).items()}
        for sh in self.shares:
            need = sh.consumes(asked.get(sh.name))
            if sh.left <= 0 or sh.left < need:
                return False
        return True

    def exclusion(self, tolerations: Iterable[dict] | None = None, capacity_requests: Mapping | None = None) -> str:
        """What keeps a request with these tolerations and capacity asks from this device now: "" (nothing),
        "held", "binding", "counters", "capacity" or "taint" (the one a person must act on first: a device held by
        a claim is held whatever its taints)."""
        if self.binding is not None:
            return "binding"
        if self.shared:
            if self.holders and not self.room_for(capacity_requests):
                return "capacity"
        elif self.holders:
            return "held"
        if self.counters:
            return "counters"
        if self.untolerated(tolerations) is not None:
            return "taint"
        if self.shared and not self.holders and not self.room_for(capacity_requests):
            return "capacity"
        return ""

    @property
    def state(self) -> str:
        """The one word a table shows: what keeps it from a new claim first, else whether it is held, else free."""
        if self.binding is not None:
            return self.binding[0]
        if self.blocking_taints:
            return TAINTED
        if self.shared and self.holders:
            return SHARED
        if self.holders:
            return HELD
        if self.counters:
            return COUNTERS
        return FREE

    def words(self) -> str:
        """The state in a few words: free / held by ns/claim / shared by N (left) / tainted key:effect (source) /
        counters exhausted by ns/claim / binding pending for ns/claim."""
        s = self.state
        if s in (BINDING, BINDING_FAILED):
            _, (ns, name), cond = self.binding  # type: ignore[misc]
            what = "binding pending" if s == BINDING else "binding failed"
            return f"{what}: {ns}/{name}" + (f" ({cond})" if cond else "")
        if s == TAINTED:
            t = self.blocking_taints[0]
            kv = f"{t.key}={t.value}" if t.value else t.key
            return f"tainted {kv}:{t.effect} ({t.source})"
        if s == SHARED:
            left = ", ".join(f"{sh.name} {fmt_quantity(sh.left)} left" for sh in self.shares)
            return f"shared by {len(self.holders)}" + (f": {left}" if left else "")
        if s == HELD:
            ns, name = self.holders[0]
            return f"held by {ns}/{name}" + (f" +{len(self.holders) - 1}" if len(self.holders) > 1 else "")
        if s == COUNTERS:
            by = self.counters[0].claims
            return f"counters used by {by[0][0]}/{by[0][1]}" if by else "counters exhausted"
        return FREE


_FREE_STATE = DeviceState()
_NO_SPEC: dict = {}  # read only: a missing section


def rule_eviction(rule: dict) -> dict | None:
    """The rule's EvictionInProgress condition when it is True, else None."""
    for c in (rule.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == EVICTION_CONDITION and c.get("status") == "True":
            return c
    return None


def _results(claim: dict) -> Any:
    """A claim's status.allocation.devices.results as written (None or [] when it has none)."""
    alloc = (claim.get("status") or _NO_SPEC).get("allocation") or _NO_SPEC
    return (alloc.get("devices") or _NO_SPEC).get("results")


def result_entries(claim: dict) -> list[tuple[DeviceId, dict]]:
    """(device, result) of each allocation result of a claim."""
    out = []
    for r in _results(claim) or ():
        if isinstance(r, dict):
            did = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
            if not (did[0].__class__ is str and did[1].__class__ is str and did[2].__class__ is str):
                did = (str(did[0]), str(did[1]), str(did[2]))
            out.append((did, r))
    return out


def binding_state(claim: dict, device: DeviceId, result: dict) -> tuple[str, str] | None:
    """(BINDING or BINDING_FAILED, the conditions in words) for a result with binding conditions not yet all True,
    None once bound (or when it has none). A failure condition that is True wins."""
    wanted = [c for c in result.get("bindingConditions") or () if isinstance(c, str)]
    failures = [c for c in result.get("bindingFailureConditions") or () if isinstance(c, str)]
    if not wanted and not failures:
        return None
    conds: dict[str, dict] = {}
    for entry in (claim.get("status") or {}).get("devices") or ():
        if not isinstance(entry, dict):
            continue
        if (entry.get("driver"), entry.get("pool"), entry.get("device")) != device:
            continue
        for c in entry.get("conditions") or ():
            if isinstance(c, dict) and c.get("type"):
                conds[str(c["type"])] = c
    failed = [f for f in failures if (conds.get(f) or {}).get("status") == "True"]
    if failed:
        c = conds[failed[0]]
        why = f"{failed[0]}=True" + (f": {c.get('message')}" if c.get("message") else "")
        return BINDING_FAILED, why
    waiting = [w for w in wanted if (conds.get(w) or {}).get("status") != "True"]
    if waiting:
        return BINDING, "waiting for " + ", ".join(f"{w}=True" for w in waiting)
    return None


def _key(holder: str) -> Key:
    ns, _, name = holder.partition("/")
    return (ns, name)


class _PoolStates:
    """One pool's newest generation as the fleet sees it (every slice, not one node's): its devices, its counter
    sets and what they have left, and each device's state once asked.

    `plain`: every device of it is plain (allocator.Slice.plain) and no DeviceTaintRule is in force, so each device's
    state is its holders' alone: read without converting the pool's devices (`devices`, on first read)."""

    __slots__ = ("newest", "plain", "_devices", "_names", "counter_sets", "left", "states")

    def __init__(self, members: Iterable[Slice], rules: bool) -> None:
        newest: list[Slice] = []
        gen: int | None = None
        for s in members:
            if gen is None or s.generation > gen:
                gen, newest = s.generation, [s]
            elif s.generation == gen:
                newest.append(s)
        newest.sort(key=lambda s: s.name)
        self.newest = newest
        self.plain = not rules and all(s.plain for s in newest)
        self._devices: dict[str, Device] | None = None
        self._names: set[str] | None = None
        sets: dict[str, dict[str, Q]] = _NO_SPEC  # none: one empty table, never written
        for s in newest:
            for n, counters in s.shared_counters.items():
                if sets is _NO_SPEC:
                    sets = {}
                sets.setdefault(n, counters)
        self.counter_sets = sets
        self.left: dict[str, dict[str, Fraction]] | None = None
        self.states: dict[str, DeviceState] = {}

    @property
    def devices(self) -> dict[str, Device]:
        """name → device (the first slice's, by slice name, when two publish one name)."""
        devs = self._devices
        if devs is None:
            devs = self._devices = {}
            for s in self.newest:
                for d in s.devices:
                    devs.setdefault(d.name, d)
        return devs

    def has(self, name: str) -> bool:
        """Whether the newest generation publishes a device of this name (its devices unconverted when not yet)."""
        if self._devices is not None:
            return name in self._devices
        return name in self.names()

    def names(self) -> Collection[str]:
        """The names of the newest generation's devices, as Device.name reads them (its devices unconverted)."""
        if self._devices is not None:
            return self._devices.keys()
        names = self._names
        if names is None:
            # Once per pool: `has` asks it of every device a class matches (20,000 at the scale benchmark).
            names = self._names = {
                str(d.get("name", ""))
                for s in self.newest
                for d in (s.raw.get("spec") or _NO_SPEC).get("devices") or ()
                if isinstance(d, dict)
            }
        return names


class _Plain:
    """What `FleetDevices._state` reads of a device of a plain pool, without converting it: no taints (no rule is in
    force), not shared, no counters consumed, no capacity."""

    __slots__ = ("id",)
    taints: tuple = ()
    allow_multiple = False
    consumes: tuple = ()
    capacity: Mapping = {}

    def __init__(self, did: DeviceId) -> None:
        self.id = did


class FleetDevices:
    """Every device's state in one fleet: the allocator's Inventory and AllocatedState, kept current change by change,
    and each pool's states computed when first asked after a change that touched it."""

    def __init__(
        self, slices: Iterable[dict] = (), claims: Iterable[tuple[Key, dict]] = (), rules: Iterable[dict] = ()
    ) -> None:
        self.inventory = Inventory((), rules)
        for s in slices:
            name = str((s.get("metadata") or {}).get("name", "")) if isinstance(s, dict) else ""
            if name:
                self.inventory.upsert_slice(s, name)
        self.allocated = AllocatedState()
        self._binding: dict[DeviceId, dict[Key, tuple[str, str]]] = {}
        # The claims with an allocation as last given, by the allocator's holder text ("ns/name", the one string the
        # AllocatedState files for every device the claim holds), each with its key: a device's state names its
        # holders by these keys instead of a new (ns, name) per device. A change is undone from what was given here,
        # not from the store's `old`: the states may have been built from a store ahead of the changes still queued.
        self._claims: dict[str, tuple[Key, dict]] = {}
        self._pools: dict[PoolId, _PoolStates] = {}
        # Bumped by every change (a slice, a claim, the taint rules): a reader that keeps something worked out from
        # the states (the playground's words per device) knows when it no longer holds.
        self.changes = 0
        # The state of a device held by these claims (allocator holder texts) and nothing else: shared by every such
        # device, forgotten whenever a claim changes (a holder's key is read from the claims given).
        self._held_only: dict[tuple[str, ...], DeviceState] = {}
        given = self._claims
        add = self.allocated.add_claim
        for ck, claim in claims:
            # set_claim of a claim not given before, its results read once (by add_claim) but where one waits for
            # binding conditions.
            results = _results(claim) if claim is not None else None
            if not results or not (
                results.__class__ is list and results[0].__class__ is dict or any(isinstance(r, dict) for r in results)
            ):
                continue  # holds nothing: what set_claim would conclude, without the holder text
            holder = f"{ck[0]}/{ck[1]}"
            if holder in given:
                self.set_claim(ck, claim)  # given twice (a hand-made list): the second replaces the first
                continue
            given[holder] = (ck, claim)
            add(claim, holder=holder)
            for r in results:
                if (
                    isinstance(r, dict)
                    and (r.get("bindingConditions") or r.get("bindingFailureConditions"))
                    and not r.get("adminAccess")
                ):
                    did = (str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", "")))
                    waits = binding_state(claim, did, r)
                    if waits is not None:
                        self._binding.setdefault(did, {})[ck] = waits

    # -- maintenance: each touches the pools it changes, nothing else --

    def upsert_slice(self, raw: dict) -> None:
        self.changes += 1
        name = str((raw.get("metadata") or {}).get("name", ""))
        old = self.inventory.slices.get(name)
        if old is not None:
            self._pools.pop(old.pool_id, None)
        self.inventory.upsert_slice(raw, name)
        self._pools.pop(self.inventory.slices[name].pool_id, None)

    def remove_slice(self, name: str) -> None:
        self.changes += 1
        old = self.inventory.slices.get(name)
        if old is not None:
            self._pools.pop(old.pool_id, None)
            self.inventory.remove_slice(name)

    def set_claim(self, ck: Key, claim: dict | None) -> None:
        """A claim added, changed (its allocation, its device conditions) or deleted (None)."""
        self.changes += 1
        holder = f"{ck[0]}/{ck[1]}"
        if self._held_only:
            self._held_only.clear()
        given = self._claims.pop(holder, None)
        if given is not None:
            old = given[1]
            self.allocated.remove_claim(old, holder=holder)
            for did, _ in result_entries(old):
                self._pools.pop(did[:2], None)
                b = self._binding.get(did)
                if b is not None:
                    b.pop(ck, None)
                    if not b:
                        del self._binding[did]
        if claim is None:
            return
        entries = result_entries(claim)
        if not entries:
            return
        self._claims[holder] = (ck, claim)
        self.allocated.add_claim(claim, holder=holder)
        for did, r in entries:
            self._pools.pop(did[:2], None)
            if r.get("adminAccess") or not (r.get("bindingConditions") or r.get("bindingFailureConditions")):
                continue  # binding_state's first question, asked here of the many results without conditions
            waits = binding_state(claim, did, r)
            if waits is not None:
                self._binding.setdefault(did, {})[ck] = waits

    def set_taint_rules(self, rules: Iterable[dict]) -> None:
        self.changes += 1
        self.inventory.set_taint_rules(rules)
        self._pools.clear()

    # -- reads --

    def _pool(self, pid: PoolId) -> _PoolStates | None:
        ps = self._pools.get(pid)
        if ps is None:
            members = self.inventory.by_pool.get(pid)
            if not members:
                return None
            ps = self._pools[pid] = _PoolStates(members.values(), bool(self.inventory.taint_rules))
        return ps

    def device(self, did: DeviceId) -> Device | None:
        """The device in its pool's newest generation (the allocator's Device: `.raw` is the slice's dict)."""
        ps = self._pool(did[:2])
        return ps.devices.get(did[2]) if ps is not None else None

    def devices(self) -> Iterable[Device]:
        """Every device of every pool's newest generation."""
        for pid in list(self.inventory.by_pool):
            ps = self._pool(pid)
            if ps is not None:
                yield from ps.devices.values()

    def tainted(self) -> Iterable[Device]:
        """The devices of `devices()` that carry a taint (their slice's or a DeviceTaintRule's), in the same order: a
        plain pool's have none, and are not converted to say so."""
        for pid in list(self.inventory.by_pool):
            ps = self._pool(pid)
            if ps is not None and not ps.plain:
                for dev in ps.devices.values():
                    if dev.taints:
                        yield dev

    def counter_sets(self, pid: PoolId) -> dict[str, dict[str, Fraction]]:
        """The counter sets a pool publishes (name → counter → value), {} when it shares none."""
        ps = self._pool(pid)
        if ps is None or not ps.counter_sets:
            return {}
        return {n: {c: q.value for c, q in cs.items()} for n, cs in ps.counter_sets.items()}

    def state(self, did: DeviceId) -> DeviceState:
        ps = self._pool(did[:2])
        if ps is None:
            return _FREE_STATE
        st = ps.states.get(did[2])
        if st is None:
            if ps.plain:
                st = self._state(ps, _Plain(did)) if ps.has(did[2]) else _FREE_STATE  # type: ignore[arg-type]
            else:
                dev = ps.devices.get(did[2])
                st = _FREE_STATE if dev is None else self._state(ps, dev)
            ps.states[did[2]] = st
        return st

    def _key(self, holder: str) -> Key:
        """The key of the claim the allocator names `holder`: the one its change was filed with."""
        given = self._claims.get(holder)
        return given[0] if given is not None else _key(holder)

    def _state(self, ps: _PoolStates, dev: Device) -> DeviceState:
        did = dev.id
        st = self.allocated
        held_by = st.holders.get(did)
        if (
            not dev.taints
            and not dev.allow_multiple
            and not (ps.counter_sets and dev.consumes)
            and did not in self._binding
            and did not in st.admin
        ):
            if not held_by:
                return _FREE_STATE  # most of a fleet's devices: what the rest of this reading would conclude, sooner
            # Held, and nothing else: what the rest of this reading would conclude, the same state for every device
            # the same claims hold (a claim holds several; a pending pod's diagnosis reads thousands of such devices).
            held_only = self._held_only.get(held_by)
            if held_only is None:
                held = (self._key(held_by[0]),) if len(held_by) == 1 else tuple(sorted({self._key(h) for h in held_by}))
                held_only = self._held_only[held_by] = DeviceState(held)
            return held_only
        _key = self._key
        held = tuple(sorted({_key(h) for h in held_by})) if held_by else ()
        admin_by = st.admin.get(did)
        taints = tuple(
            Taint(
                str(t["key"]),
                str(t.get("value") or ""),
                str(t.get("effect") or ""),
                source,
                str(t.get("timeAdded") or ""),
            )
            for t, source in dev.taints
            if t.get("key")
        )
        blocks: list[CounterBlock] = []
        if ps.counter_sets and dev.consumes and not held:
            if ps.left is None:
                ps.left = counters_left(ps.counter_sets, ps.devices.values(), st)
            for set_name, counters in dev.consumes:
                have = ps.left.get(set_name)
                if have is None:
                    continue
                for cname, q in counters.items():
                    left = have.get(cname, Fraction(0))
                    if left < q.value:
                        users = tuple(sorted({_key(h) for h in counter_users(ps.devices.values(), set_name, st)}))
                        blocks.append(CounterBlock(set_name, cname, q.value, max(left, Fraction(0)), users))
                        break
        shares: list[Share] = []
        if dev.allow_multiple:
            consumed = st.capacity.get(did)
            for cname, (q, policy) in dev.capacity.items():
                total = q.value
                used = (consumed or {}).get(cname, Fraction(0))
                if held and not consumed:
                    used = total  # results without consumedCapacity took the whole device
                need = default_consumption(total, policy, None)
                shares.append(Share(str(cname), total, min(used, total), need, policy))
        bind = self._binding.get(did)
        binding = None
        if bind:
            ck = min(bind)
            binding = (bind[ck][0], ck, bind[ck][1])
        if not (held or taints or blocks or dev.allow_multiple or binding or admin_by):
            return _FREE_STATE
        return DeviceState(
            held,
            tuple(sorted({_key(h) for h in admin_by})) if admin_by else (),
            dev.allow_multiple,
            tuple(shares),
            taints,
            tuple(blocks),
            binding,
        )

    def allocatable(self, did: DeviceId) -> bool:
        """`state(did).allocatable` without building the state when the device carries nothing but its holders (no
        taint, not shared, no counters in play): then it is allocatable exactly while no claim holds it."""
        ps = self._pool(did[:2])
        if ps is None:
            return True
        return self._allocatable(ps, did)

    def _allocatable(self, ps: _PoolStates, did: DeviceId) -> bool:
        st = ps.states.get(did[2])
        if st is not None:
            return st is _FREE_STATE or st.allocatable
        if ps.plain:
            # No taint, not shared, no counters: allocatable exactly while no claim holds it (or it is not there).
            return not self.allocated.holders.get(did) or not ps.has(did[2])
        dev = ps.devices.get(did[2])
        if dev is None:
            return True
        if not dev.taints and not dev.allow_multiple and not (ps.counter_sets and dev.consumes):
            # DeviceState.allocatable for such a device: no blocking taint, no counter block, not shared.
            return not self.allocated.holders.get(did)
        return self.state(did).allocatable

    def _pool_to_read(self, pid: PoolId) -> _PoolStates | None:
        """The pool's states for a reading of many of its devices: a plain pool's is made and not kept (its devices'
        states are their holders', read as cheaply again), another's is kept as _pool keeps it."""
        ps = self._pools.get(pid)
        if ps is None:
            members = self.inventory.by_pool.get(pid)
            if members:
                ps = _PoolStates(members.values(), bool(self.inventory.taint_rules))
                if not ps.plain:
                    self._pools[pid] = ps
        return ps

    def not_now_words(self, devices: Iterable[DeviceId]) -> list[str]:
        """not_now_word of each of `devices`, in their order. A plain pool's unheld device is free (no taint, share,
        counter or binding can keep it) and is read so without a DeviceState made and kept for it: the playground
        asks this of every device of the fleet, and 40,000 kept states were ~100,000 objects that the cyclic
        collector then scanned in the middle of typing."""
        holders = self.allocated.holders
        words: list[str] = []
        pid: PoolId | None = None
        plain = False
        for did in devices:
            if did[:2] != pid:
                pid = did[:2]
                ps = self._pool_to_read(pid)
                plain = ps is not None and ps.plain
            words.append("" if plain and not holders.get(did) else not_now_word(self.state(did)))
        return words

    def units(self, pid: PoolId, names: Iterable[str], into: dict[tuple, bool]) -> None:
        """Count devices of one pool as hardware into `into` (physical_key → whether every device of the unit is
        allocatable), as `physical_key` and `allocatable` device by device would: the pool looked up once (a node's
        view reads each of its devices so)."""
        ps = self._pool_to_read(pid)
        driver, pool = pid
        if ps is not None and ps.plain:
            # Each device is its own unit (none consumes counters), allocatable as `_allocatable` says of a plain one.
            holders = self.allocated.holders
            states = ps.states
            present: Collection[str] | None = None
            for n in names:
                did = (driver, pool, n)
                st = states.get(n)
                if st is not None:
                    ok = st is _FREE_STATE or st.allocatable
                elif not holders.get(did):
                    ok = True
                else:
                    if present is None:
                        present = ps.names()  # read once for the pool's held devices
                    ok = n not in present
                into[did] = into.get(did, True) and ok
            return
        for n in names:
            did = (driver, pool, n)
            unit: tuple = did
            ok = True
            if ps is not None:
                dev = ps.devices.get(n)
                if dev is not None and dev.consumes:
                    unit = (driver, pool, "counters", *sorted(name for name, _ in dev.consumes))
                ok = self._allocatable(ps, did)
            into[unit] = into.get(unit, True) and ok

    def physical_key(self, device: DeviceId) -> tuple:
        """What identifies the hardware behind a device: the counter sets it consumes (a GPU and its partitions
        consume the same set), else the device itself."""
        dev = self.device(device)
        if dev is None or not dev.consumes:
            return device
        sets = sorted(name for name, _ in dev.consumes)
        if sets:
            return (device[0], device[1], "counters", *sets)
        return device


# How a device that matches but cannot be given now is counted: by what keeps it (DeviceState.state).
NOT_NOW_WORDS = {
    HELD: "held",
    SHARED: "shared, no room left",
    TAINTED: "tainted",
    COUNTERS: "blocked by counters",
    BINDING: "waiting for binding",
    BINDING_FAILED: "binding failed",
}


def not_now_word(state: DeviceState) -> str:
    """What keeps a device from a new request without tolerations or capacity asks (NOT_NOW_WORDS), "" when nothing
    does."""
    return "" if state.allocatable else NOT_NOW_WORDS.get(state.state, state.state)


def not_now_words(states: FleetDevices, devices: Iterable[DeviceId]) -> list[str]:
    """not_now_word of each of `devices`, in their order (FleetDevices.not_now_words)."""
    return states.not_now_words(devices)


def tally_not_now(words: Iterable[str]) -> tuple[int, int, dict[str, int]]:
    """(devices, how many nothing keeps, the others counted by word, most first) of not_now_word's answers."""
    counts = Counter(words)
    total = sum(counts.values())
    now = counts.pop("", 0)
    return total, now, dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def availability(states: FleetDevices, devices: Iterable[DeviceId]) -> tuple[int, int, dict[str, int]]:
    """(devices, how many of them the allocator could give a new request now, the others counted by what keeps them:
    NOT_NOW_WORDS' words), for a request without tolerations or capacity asks."""
    return tally_not_now(not_now_words(states, devices))


def availability_text(total: int, now: int, why: Mapping[str, int]) -> str:
    """`could be allocated now: 12 of the 20 matching devices (5 held, 3 tainted)`."""
    rest = ", ".join(f"{n} {w}" for w, n in why.items())
    return f"could be allocated now: {now} of the {total} matching devices" + (f" ({rest})" if rest else "")
