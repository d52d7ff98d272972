"""What each published device is doing now, as v1.37 sees it: which claims hold it (and how much of a shared device's
capacity they consumed), which taints it carries and where from (its slice or a DeviceTaintRule), which counter sets
its pool shares and whether they are exhausted, and whether an allocation waits for its binding conditions.

The model (fleet/model.py) builds one `FleetDevices` per generation from its raw objects and answers `device_state`
and the fleet's counts from it; the views and the diagnosis read those. Whether a given pod's request can be
allocated on a given node, and why not, is the allocator's question (fleet/k8s); this module only says what the
fleet holds.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

Key = tuple[str, str]
DeviceId = tuple[str, str, str]

# Effects the allocator honours (v1.37 DRADeviceTaints): anything else, "None" included, is informational.
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
EVICTION_CONDITION = "EvictionInProgress"  # resourceapi.DeviceTaintConditionEvictionInProgress

FREE = "free"
HELD = "held"
SHARED = "shared"
TAINTED = "tainted"
COUNTERS = "counters"
BINDING = "binding"
BINDING_FAILED = "binding-failed"


def quantity(value: Any) -> Fraction | None:
    """A resource.Quantity (string or number) as an exact number; None when it is not one."""
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return Fraction(value)
    from dragoman.fleet.cel.device import parse_quantity

    try:
        return parse_quantity(str(value)).value
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
    need: Fraction  # what a request naming no amount consumes (requestPolicy's default, else everything)

    @property
    def left(self) -> Fraction:
        return max(self.total - self.used, Fraction(0))

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
        return tuple(t for t in self.taints if t.blocking)

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
            need = asked.get(sh.name)
            if sh.left <= 0 or sh.left < (need if need is not None else sh.need):
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


def rule_selects(rule: dict, driver: str, pool: str, device: str) -> bool:
    """Whether a DeviceTaintRule's deviceSelector selects this device: every field set must equal; an empty selector
    selects every device, no selector none."""
    sel = (rule.get("spec") or {}).get("deviceSelector")
    if not isinstance(sel, dict):
        return False
    for field, value in (("driver", driver), ("pool", pool), ("device", device)):
        want = sel.get(field)
        if want is not None and want != value:
            return False
    return True


def rule_taint(rule: dict) -> Taint | None:
    taint = (rule.get("spec") or {}).get("taint")
    if not isinstance(taint, dict) or not taint.get("key"):
        return None
    name = (rule.get("metadata") or {}).get("name", "")
    return Taint(
        str(taint.get("key", "")),
        str(taint.get("value") or ""),
        str(taint.get("effect") or ""),
        f"DeviceTaintRule {name}",
        str(taint.get("timeAdded") or ""),
    )


def rule_eviction(rule: dict) -> dict | None:
    """The rule's EvictionInProgress condition when it is True, else None."""
    for c in (rule.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == EVICTION_CONDITION and c.get("status") == "True":
            return c
    return None


def slice_taints(raw_device: dict) -> list[Taint]:
    out = []
    for t in raw_device.get("taints") or ():
        if isinstance(t, dict) and t.get("key"):
            out.append(
                Taint(
                    str(t["key"]),
                    str(t.get("value") or ""),
                    str(t.get("effect") or ""),
                    "slice",
                    str(t.get("timeAdded") or ""),
                )
            )
    return out


def result_entries(claim: dict) -> list[tuple[DeviceId, dict]]:
    """(device, result) of each allocation result of a claim."""
    alloc = (claim.get("status") or {}).get("allocation") or {}
    out = []
    for r in (alloc.get("devices") or {}).get("results") or ():
        if isinstance(r, dict):
            out.append(((str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", ""))), r))
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


def _policy_minimum(cap: dict, total: Fraction) -> Fraction:
    """What a request that names no amount consumes of a shared capacity: the policy's default (or smallest valid
    amount), else the whole capacity."""
    policy = cap.get("requestPolicy") if isinstance(cap, dict) else None
    if not isinstance(policy, dict):
        return total
    d = quantity(policy.get("default"))
    if d is not None:
        return d
    valid = [q for q in (quantity(v) for v in policy.get("validValues") or ()) if q is not None]
    if valid:
        return min(valid)
    rng = policy.get("validRange")
    if isinstance(rng, dict):
        lo = quantity(rng.get("min"))
        if lo is not None:
            return lo
    return total


class FleetDevices:
    """Every device's state in one fleet, built once from the current slices, claims and DeviceTaintRules."""

    def __init__(
        self,
        pools: Mapping[tuple[str, str], list[dict]],
        claims: Iterable[tuple[Key, dict]],
        rules: Iterable[dict],
    ) -> None:
        self.holders: dict[DeviceId, list[Key]] = defaultdict(list)
        self.admin: dict[DeviceId, list[Key]] = defaultdict(list)
        self.consumed: dict[DeviceId, dict[str, Fraction]] = defaultdict(lambda: defaultdict(Fraction))
        self.binding: dict[DeviceId, tuple[str, Key, str]] = {}
        for ck, claim in claims:
            for dev, r in result_entries(claim):
                if r.get("adminAccess"):
                    self.admin[dev].append(ck)
                    continue
                self.holders[dev].append(ck)
                for name, amount in (r.get("consumedCapacity") or {}).items():
                    q = quantity(amount)
                    if q is not None:
                        self.consumed[dev][name] += q
                b = binding_state(claim, dev, r)
                if b is not None and dev not in self.binding:
                    self.binding[dev] = (b[0], ck, b[1])
        self.rules = [r for r in rules if rule_taint(r) is not None]
        self.states: dict[DeviceId, DeviceState] = {}
        self.raw: dict[DeviceId, dict] = {}
        self.counter_sets: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}
        for (driver, pool), slices in pools.items():
            self._pool(driver, pool, slices)

    def _pool(self, driver: str, pool: str, slices: list[dict]) -> None:
        sets: dict[str, dict[str, Fraction]] = {}
        devices: list[dict] = []
        for s in slices:
            spec = s.get("spec") or {}
            for cs in spec.get("sharedCounters") or ():
                if not isinstance(cs, dict):
                    continue
                counters = {}
                for cname, c in (cs.get("counters") or {}).items():
                    q = quantity(c)
                    if q is not None:
                        counters[str(cname)] = q
                sets[str(cs.get("name", ""))] = counters
            devices.extend(d for d in spec.get("devices") or () if isinstance(d, dict))
        if sets:
            self.counter_sets[(driver, pool)] = sets
        # What the pool's allocated devices consume of each counter set, and by which claims.
        used: dict[str, dict[str, Fraction]] = defaultdict(lambda: defaultdict(Fraction))
        users: dict[str, list[Key]] = defaultdict(list)
        if sets:
            for d in devices:
                did = (driver, pool, str(d.get("name", "")))
                held = self.holders.get(did)
                if not held:
                    continue
                for cc in d.get("consumesCounters") or ():
                    cset = str((cc or {}).get("counterSet", ""))
                    for cname, c in ((cc or {}).get("counters") or {}).items():
                        q = quantity(c)
                        if q is not None:
                            used[cset][str(cname)] += q
                    for ck in held:
                        if ck not in users[cset]:
                            users[cset].append(ck)
        rules = self.rules
        for d in devices:
            name = str(d.get("name", ""))
            did = (driver, pool, name)
            self.raw[did] = d
            taints = slice_taints(d)
            for r in rules:
                if rule_selects(r, driver, pool, name):
                    t = rule_taint(r)
                    if t is not None:
                        taints.append(t)
            blocks = []
            held = self.holders.get(did, [])
            if sets and not held:
                for cc in d.get("consumesCounters") or ():
                    cset = str((cc or {}).get("counterSet", ""))
                    have = sets.get(cset)
                    for cname, c in ((cc or {}).get("counters") or {}).items():
                        q = quantity(c)
                        if q is None or have is None:
                            continue
                        left = have.get(str(cname), Fraction(0)) - used[cset][str(cname)]
                        if left < q:
                            blocks.append(CounterBlock(cset, str(cname), q, max(left, Fraction(0)), tuple(users[cset])))
                            break
            shared = bool(d.get("allowMultipleAllocations"))
            shares = []
            if shared:
                for cname, cap in (d.get("capacity") or {}).items():
                    total = quantity(cap)
                    if total is None:
                        continue
                    used_here = self.consumed.get(did, {}).get(cname, Fraction(0))
                    if held and not self.consumed.get(did):
                        used_here = total  # results without consumedCapacity took the whole device
                    shares.append(Share(str(cname), total, min(used_here, total), _policy_minimum(cap, total)))
            binding = self.binding.get(did)
            if not (held or taints or blocks or shared or binding or self.admin.get(did)):
                self.states[did] = _FREE_STATE
                continue
            self.states[did] = DeviceState(
                tuple(held),
                tuple(self.admin.get(did, ())),
                shared,
                tuple(shares),
                tuple(taints),
                tuple(blocks),
                binding,
            )

    def state(self, device: DeviceId) -> DeviceState:
        return self.states.get(device, _FREE_STATE)

    def physical_key(self, device: DeviceId) -> tuple:
        """What identifies the hardware behind a device: the counter sets it consumes (a GPU and its partitions
        consume the same set), else the device itself."""
        raw = self.raw.get(device) or {}
        sets = sorted(str((cc or {}).get("counterSet", "")) for cc in raw.get("consumesCounters") or ())
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


def availability(states: FleetDevices, devices: Iterable[DeviceId]) -> tuple[int, int, dict[str, int]]:
    """(devices, how many of them the allocator could give a new request now, the others counted by what keeps them:
    NOT_NOW_WORDS' words), for a request without tolerations or capacity asks."""
    total = now = 0
    why: dict[str, int] = defaultdict(int)
    for d in devices:
        total += 1
        st = states.state(d)
        if st.allocatable:
            now += 1
        else:
            why[NOT_NOW_WORDS.get(st.state, st.state)] += 1
    return total, now, dict(sorted(why.items(), key=lambda kv: (-kv[1], kv[0])))


def availability_text(total: int, now: int, why: Mapping[str, int]) -> str:
    """`could be allocated now: 12 of the 20 matching devices (5 held, 3 tainted)`."""
    rest = ", ".join(f"{n} {w}" for w, n in why.items())
    return f"could be allocated now: {now} of the {total} matching devices" + (f" ({rest})" if rest else "")
