"""Evaluating selectors over every device of a fleet's ResourceSlices: converted once, deduplicated, cancellable."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from dragoman.fleet.cel.api import TRUE, CelDevice, CompiledSelector, EvalOutcome
from dragoman.fleet.cel.device import _split, cel_device, converts_plainly
from dragoman.fleet.k8s.slices import newest_slices

Cancel = threading.Event | Callable[[], bool] | None
_PROBE = 511  # devices looked at before deciding whether grouping pays
_MISSING = ("<missing>",)
_NO_ATTRIBUTES: dict = {}


@dataclasses.dataclass(frozen=True)
class DeviceResult:
    """One device's verdict; `reason` explains a no-match or an error (empty for a match)."""

    driver: str
    pool: str
    device: str
    node: str | None
    result: str  # "match" | "no-match" | "error"
    reason: str

    def to_json(self) -> dict:
        return {
            "driver": self.driver,
            "pool": self.pool,
            "device": self.device,
            "node": self.node,
            "result": self.result,
            "reason": self.reason,
        }


class DeviceRef(NamedTuple):
    """Where a device lives: driver, pool, device name, node (None for network-attached devices), product. (A named
    tuple: an index makes one per device of the fleet, and a frozen dataclass costs several times more to make.)"""

    driver: str
    pool: str
    device: str
    node: str | None
    product: str
    slice_name: str


def _int(v: object) -> int:
    try:
        return int(v)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0


def devices_of_slices(slices: Iterable[dict], *, current: bool = False) -> Iterator[tuple[dict, dict]]:
    """Yield (slice, raw device) for every device in the newest generation of each complete (driver, pool); `current`:
    the slices are only those already."""
    for s in [s for s in slices if isinstance(s, dict)] if current else newest_slices(slices):
        for dev in (s.get("spec") or {}).get("devices") or []:
            if isinstance(dev, dict):
                yield s, dev


# From this many devices on, a new index is moved to the permanent GC generation (see DeviceIndex.__init__).
FREEZE_DEVICES = 5_000


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many long-lived objects (restored afterwards)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class DeviceIndex:
    """The devices of a set of slices, grouped by what selectors read; evaluations reuse the conversion and the
    grouping.

    A device is converted for CEL when it is evaluated (one representative of each group) or when `devices` is read:
    a device that converts plainly (fleet/cel/device.converts_plainly: its CEL values are its raw values) is grouped
    by its raw fields, so the model's fleet is not converted whole to answer a class's selectors."""

    def __init__(self, slices: Iterable[dict], *, reuse: DeviceIndex | None = None, current: bool = False) -> None:
        """`reuse`: an index of an earlier state of the same fleet, whose conversions are taken for the device entries
        that are still the same objects (a watch event replaces one slice, not the fleet). `current`: the slices are
        already those the scheduler allocates from (fleet/k8s/slices.newest_slices; the model's current_slices), so
        they are not sorted by pool and generation again (a fifth of the index's cost at 5,000 slices)."""
        self.raws: list[dict] = []
        self._drivers: list[str] = []  # each device's driver
        self._ids: list[tuple[str, str, str]] = []  # each device's (driver, pool, device name)
        # Where each slice's devices start in `raws`, with what the slice says of them: (first device, driver, pool,
        # node, slice name). Which pool, node and product each device is (refs, pools, products) is worked out from
        # these when first read (_describe): a class's selectors need none of it.
        self._runs: list[tuple[int, str, str, str | None, str]] = []
        self._converted: list[CelDevice | None] = []
        # Whether each device converts plainly: worked out when a grouping first needs it (None until then), so a
        # selector that reads a unique field (a uuid) does not check every device only to evaluate each anyway.
        self._plain: list[bool | None] = []
        self._refs: list[DeviceRef] = []
        self._pools: list[tuple[str, str, str | None]] = []  # (driver, pool, node)
        self._products: list[str] = []
        self._pool_of: list[int] = []
        self._product_of: list[int] = []
        self._pool_ids: dict[tuple, int] = {}
        self._product_ids: dict[str, int] = {}
        # Tens of thousands of small acyclic objects: the cyclic GC would rescan them repeatedly (half the time).
        with gc_paused():
            self._convert(devices_of_slices(slices, current=current), reuse)
            if len(self.raws) >= FREEZE_DEVICES:
                # Left to the collector, these ~30 objects a device sit in the young generations until a collection
                # far later (while the operator types) rescans them all: a 200+ ms stall at 40,000 devices
                # (benchmarks/bench_playground.py). They hold no reference cycles, so the permanent generation loses
                # nothing: reference counting still frees them with the index. As with big LIST pages
                # (fleet/cluster.decode), whatever else is alive now is frozen too.
                gc.freeze()
        self._groupings: dict[frozenset | tuple | None, tuple[list[int], list[int]]] = {}
        self._columns: dict[tuple | None, _Column] = {}
        self._tallies: dict[int, tuple[list[int], Tally]] = {}
        self._names: set[tuple[str, str | None]] | None = None
        self._lock = threading.Lock()

    @classmethod
    def of_devices(cls, driver: str, devices: Iterable[dict], pool: str = "", node: str | None = None) -> DeviceIndex:
        """An index of raw device entries that are in no slice (yet): devices predicted for a node, say."""
        spec = {"driver": driver, "pool": {"name": pool}, "nodeName": node}
        index = cls(())
        with gc_paused():
            index._convert((({"spec": spec}, d) for d in devices if isinstance(d, dict)), None)
        return index

    def _convert(self, pairs: Iterable[tuple[dict, dict]], reuse: DeviceIndex | None) -> None:
        # A device entry still the same object keeps what it converted to (its CEL values and activations).
        # (raw, its conversion or None, converts plainly) of every device of the earlier index, by the raw's id.
        prior = (
            {id(raw): t for t in zip(reuse.raws, reuse._converted, reuse._plain) if (raw := t[0]) is not None}
            if reuse is not None
            else {}
        )
        last = None
        driver = pool = ""
        raws, converted, plains, drivers, runs = self.raws, self._converted, self._plain, self._drivers, self._runs
        ids = self._ids
        for s, raw in pairs:
            if s is not last:  # a slice's devices come together: read its fields once
                last = s
                spec = s.get("spec") or {}
                driver = str(spec.get("driver", ""))
                pool = str((spec.get("pool") or {}).get("name", ""))
                slice_name = str((s.get("metadata") or {}).get("name", ""))
                runs.append((len(raws), driver, pool, spec.get("nodeName") or None, slice_name))
            name = raw.get("name", "")
            ids.append((driver, pool, name if name.__class__ is str else str(name)))
            if prior:
                hit = prior.get(id(raw))
                if hit is not None and hit[0] is raw and (hit[1] is None or hit[1].driver == driver):
                    converted.append(hit[1])
                    plains.append(hit[2])
                else:
                    converted.append(None)
                    plains.append(None)
            else:
                converted.append(None)
                plains.append(None)
            raws.append(raw)
            drivers.append(driver)

    def _describe(self) -> None:
        """refs, pools and products (and each device's pool and product) for the devices not described yet (under the
        index's lock: the playground's worker and the UI thread may both read them first)."""
        if len(self._refs) >= len(self.raws):
            return
        with self._lock:
            self._describe_locked()

    def _describe_locked(self) -> None:
        start = len(self._refs)
        n = len(self.raws)
        if start >= n:
            return
        pool_ids, product_ids, pools, products = self._pool_ids, self._product_ids, self._pools, self._products
        raws, ids, refs, pool_of, product_of = self.raws, self._ids, self._refs, self._pool_of, self._product_of
        no_product = "(no productName)"
        new_ref = tuple.__new__
        runs = self._runs
        with gc_paused():
            for r, (first, driver, pool, slice_node, slice_name) in enumerate(runs):
                end = runs[r + 1][0] if r + 1 < len(runs) else n
                if end <= start:
                    continue
                product_key = f"{driver}/productName"  # formed once per slice
                slice_pid = -1
                for i in range(max(first, start), end):
                    raw = raws[i]
                    node = slice_node or raw.get("nodeName") or None
                    # The product: its productName attribute's string.
                    attrs = raw.get("attributes") or _NO_ATTRIBUTES
                    a = attrs.get(product_key) or attrs.get("productName")
                    product = a.get("string") if isinstance(a, dict) else None
                    if not isinstance(product, str):
                        product = no_product
                    # tuple.__new__ directly: a named tuple's own __new__ is a Python function, a frame per device.
                    refs.append(new_ref(DeviceRef, (driver, pool, ids[i][2], node, product, slice_name)))
                    if node is slice_node and slice_pid >= 0:
                        pid = slice_pid  # the slice's node: its pool id found once per slice
                    else:
                        pk = (driver, pool, node)
                        found = pool_ids.get(pk)
                        if found is None:
                            found = pool_ids[pk] = len(pools)
                            pools.append(pk)
                        pid = found
                        if node is slice_node:
                            slice_pid = pid
                    pool_of.append(pid)
                    qid = product_ids.get(product)
                    if qid is None:
                        qid = product_ids[product] = len(products)
                        products.append(product)
                    product_of.append(qid)
            if n - start >= FREEZE_DEVICES:
                gc.freeze()  # as the index's own objects are (see __init__)

    @property
    def refs(self) -> list[DeviceRef]:
        """Each device's DeviceRef (driver, pool, name, node, product, slice)."""
        self._describe()
        return self._refs

    @property
    def pools(self) -> list[tuple[str, str, str | None]]:
        """Every (driver, pool, node) the devices are in, numbered as pool_of numbers them."""
        self._describe()
        return self._pools

    @property
    def products(self) -> list[str]:
        """Every product the devices are, numbered as product_of numbers them."""
        self._describe()
        return self._products

    @property
    def pool_of(self) -> list[int]:
        self._describe()
        return self._pool_of

    @property
    def product_of(self) -> list[int]:
        self._describe()
        return self._product_of

    def _plain_range(self, start: int, stop: int) -> list[bool]:
        """Whether each of devices start..stop converts plainly (fleet/cel/device.converts_plainly), worked out for
        those not asked yet; one that does not is converted now, since it is grouped by its CEL values."""
        plains = self._plain
        out = plains[start:stop]
        if None in out:
            raws, converted, drivers = self.raws, self._converted, self._drivers
            for i in range(start, stop):
                if plains[i] is None:
                    plain = plains[i] = converts_plainly(raws[i])
                    if not plain and converted[i] is None:
                        converted[i] = cel_device(drivers[i], raws[i])
            out = plains[start:stop]
        return out  # type: ignore[return-value]

    def device(self, i: int) -> CelDevice:
        """Device `i` as the CEL environment sees it (converted on first use)."""
        dev = self._converted[i]
        if dev is None:
            dev = self._converted[i] = cel_device(self._drivers[i], self.raws[i])
        return dev

    @property
    def devices(self) -> list[CelDevice]:
        """Every device converted (all of them are converted the first time this is read)."""
        if any(d is None for d in self._converted):
            with gc_paused():
                for i in range(len(self._converted)):
                    self.device(i)
        return self._converted  # type: ignore[return-value]

    def __len__(self) -> int:
        return len(self.raws)

    @property
    def ids(self) -> list[tuple[str, str, str]]:
        """Each device's (driver, pool, device), as the model names devices."""
        return self._ids

    def grouping(self, reads: frozenset | None) -> tuple[list[int], list[int]]:
        """(representative device of each group, group of each device) for devices equal in what `reads` covers."""
        with self._lock:
            hit = self._groupings.get(reads)
        if hit is not None:
            return hit
        result: tuple[list[int], list[int]] | None
        if reads is None:
            result = self._identity()
        else:
            # One column of value ids per read, cached across expressions: typing `.productNa` → `.productName` reads
            # a new name each keystroke, and a name no device publishes (every device equal) splits nothing.
            ordered = sorted(reads, key=lambda x: (x[0], x[1] or ""))
            # A read no grouping can pay for (a uuid) is found from its first devices, before any column is made
            # whole: then every device is evaluated, and no other read needs looking at.
            if any(self._unique(r) for r in ordered):
                result = self._identity()
            else:
                cols = [self._column(None)] + [self._column(r) for r in ordered]
                cols = [c for c in cols if len(c.reps) > 1]
                effective = tuple(c.read for c in cols)
                with self._lock:
                    result = self._groupings.get(effective)
                if result is None:
                    result = self._combine(cols)
                    with self._lock:
                        self._groupings[effective] = result
        with self._lock:
            self._groupings[reads] = result
        return result

    def tally(self, group_of: list[int]) -> Tally:
        """Devices per group, and per (group, pool) and (group, product), for a grouping this index made (cached with
        it)."""
        with self._lock:
            hit = self._tallies.get(id(group_of))
        if hit is not None and hit[0] is group_of:
            return hit[1]
        with gc_paused():  # tens of thousands of short-lived pairs: a collection would rescan the whole fleet
            counts = Counter(group_of)
            sizes = [0] * (max(counts) + 1 if counts else 0)
            for g, n in counts.items():
                sizes[g] = n
            result = Tally(
                sizes,
                list(Counter(zip(group_of, self.pool_of)).items()),
                list(Counter(zip(group_of, self.product_of)).items()),
            )
        with self._lock:
            # Keyed by identity, holding the list so the id stays its own.
            self._tallies[id(group_of)] = (group_of, result)
        return result

    def _identity(self) -> tuple[list[int], list[int]]:
        reps = list(range(len(self.raws)))
        return reps, list(reps)

    def _combine(self, cols: list[_Column]) -> tuple[list[int], list[int]]:
        n = len(self.raws)
        if not cols:
            return ([0], [0] * n) if n else ([], [])
        if len(cols) == 1:
            return cols[0].reps, cols[0].ids
        keys: dict[tuple, int] = {}
        reps: list[int] = []
        group_of: list[int] = []
        with gc_paused():
            for i, key in enumerate(zip(*(c.ids for c in cols))):
                g = keys.get(key)
                if g is None:
                    g = keys[key] = len(reps)
                    reps.append(i)
                group_of.append(g)
                if i == _PROBE and len(reps) > _PROBE * 0.9:
                    # Nearly every device differs (a uuid or bus id is read): keys cost more than they save.
                    return self._identity()
        return reps, group_of

    def published(self) -> set[tuple[str, str | None]]:
        """Every (domain, name) some device publishes as an attribute or capacity, and (domain, None) for its
        domains."""
        if self._names is None:
            # From every device's raw names: a device that does not convert plainly publishes a subset of them in CEL
            # (what failed to convert is dropped), so this may name a read no device has, which then reads "missing"
            # through the ordinary column; it never leaves out one a device has.
            names: dict[str, set[str]] = {}
            raw_names: dict[str, set[str]] = {}  # per driver, the raw names (split once each)
            with gc_paused():
                for driver, raw in zip(self._drivers, self.raws):
                    seen = raw_names.get(driver)
                    if seen is None:
                        seen = raw_names[driver] = set()
                    for table in (raw.get("attributes"), raw.get("capacity")):
                        if isinstance(table, dict):
                            seen.update(table)
                for driver, raw_set in raw_names.items():
                    for name in raw_set:
                        domain, ident = _split(name, driver)
                        names.setdefault(domain, set()).add(ident)
            self._names = {(d, n) for d, ns in names.items() for n in ns} | {(d, None) for d in names}
        return self._names

    def _unique(self, read: tuple[str, str | None]) -> bool:
        """Whether nearly every device differs in `read`, judged on the first devices (as _column judges it)."""
        with self._lock:
            hit = self._columns.get(read)
        if hit is not None:
            return hit.unique
        if read not in self.published():
            return False
        with gc_paused():
            head = self._parts(0, _PROBE + 1, read)
        if len(head) > _PROBE and len(set(head)) > _PROBE * 0.9:
            with self._lock:
                self._columns[read] = _Column(read, [], [], True)
            return True
        return False

    def _column(self, read: tuple[str, str | None] | None) -> _Column:
        """Value ids (numbered in order of first appearance) of every device for one read; None: what every key
        holds."""
        with self._lock:
            hit = self._columns.get(read)
        if hit is not None:
            return hit
        n = len(self.raws)
        if read is not None and read not in self.published():
            # No device publishes it: every device reads "missing" alike (a name half typed).
            result = _Column(read, [], [0] if n else [], False)
        else:
            with gc_paused():
                # The first devices decide whether grouping on this read can pay (a uuid or bus id cannot).
                head = self._parts(0, _PROBE + 1, read)
                if len(head) > _PROBE and len(set(head)) > _PROBE * 0.9:
                    result = _Column(read, [], [], True)
                else:
                    ids: dict = {}
                    setdefault = ids.setdefault
                    col = [setdefault(k, len(ids)) for k in head + self._parts(_PROBE + 1, n, read)]
                    # Ids follow first appearance, so the first device of each id is found walking back from the end.
                    first = dict(zip(reversed(col), range(len(col) - 1, -1, -1)))
                    result = _Column(read, col, [first[v] for v in range(len(ids))], False)
        with self._lock:
            self._columns[read] = result
        return result

    def _parts(self, start: int, stop: int, read: tuple[str, str | None] | None) -> list:
        """What one read (a domain's name; the whole domain when the name is None; None: driver and the like) sees of
        devices start..stop: the raw fields of a device that converts plainly (its CEL values are those fields),
        tagged apart from the CEL values of one that does not."""
        stop = min(stop, len(self.raws))
        plain = self._plain_range(start, stop)  # first: a device that is not plain is converted
        drivers, raws, conv = self._drivers[start:stop], self.raws[start:stop], self._converted[start:stop]
        out: list = []
        m = _MISSING
        if read is None:
            if all(plain):  # the common case: no device to tell apart by its CEL values
                for driver, raw in zip(drivers, raws):
                    out.append((driver, True, None) if raw.get("allowMultipleAllocations") else (driver, False, None))
                return out
            for i, (driver, raw) in enumerate(zip(drivers, raws), start):
                if plain[i - start]:
                    out.append((driver, bool(raw.get("allowMultipleAllocations") or False), None))
                else:
                    d = conv[i - start]
                    assert d is not None
                    out.append(("cel", d.driver, d.allow_multiple_allocations, d.cache.get("conversion_error")))
            return out
        domain, ident = read
        qualified = f"{domain}/{ident}"
        if ident is not None and all(plain):
            fast = _plain_parts(drivers, raws, domain, ident, qualified)
            if fast is not None:
                return fast
        for i, (driver, raw) in enumerate(zip(drivers, raws), start):
            if not plain[i - start]:
                d = conv[i - start]
                assert d is not None
                out.append(("cel", _cel_part(d, domain, ident)))
                continue
            attrs = raw.get("attributes") or _NO_ATTRIBUTES
            caps = raw.get("capacity") or _NO_ATTRIBUTES
            if ident is None:
                out.append((_has_domain(attrs, domain, driver), _has_domain(caps, domain, driver)))
                continue
            bare = ident if domain == driver else None
            # Every attribute of a plain device is one {type: value}; a capacity is {"value": quantity}.
            a = attrs.get(qualified) or (attrs.get(bare) if bare is not None else None)
            c = caps.get(qualified) or (caps.get(bare) if bare is not None else None)
            both = bare is not None and qualified in attrs and bare in attrs  # the later one wins: keep both apart
            out.append(
                (
                    next(iter(a.items())) if a is not None else m,
                    (c.get("value") if isinstance(c, dict) else c) if c is not None else m,
                    (next(iter(attrs[bare].items())), list(attrs).index(bare) < list(attrs).index(qualified))
                    if both
                    else None,
                )
            )
        return out


def _plain_parts(drivers: list[str], raws: list[dict], domain: str, ident: str, qualified: str) -> list | None:
    """DeviceIndex._parts of plain devices for one name, as comprehensions (a new name read while typing walks all
    40,000 devices): when the name's domain is no device's driver (only the qualified name can be published) or every
    device's (the bare name counts too); None for a mix, which the general loop reads."""
    m, e = _MISSING, _NO_ATTRIBUTES
    kinds = set(drivers)
    if domain not in kinds:
        return [
            (
                next(iter(a.items())) if (a := (raw.get("attributes") or e).get(qualified)) else m,
                (c.get("value") if isinstance(c, dict) else c)
                if (c := (raw.get("capacity") or e).get(qualified))
                else m,
                None,
            )
            for raw in raws
        ]
    if len(kinds) != 1:
        return None
    # The loop's `x.get(qualified) or x.get(bare)`, and both spellings of one attribute kept apart (the later wins).
    return [
        (
            next(iter(a.items())) if (a := (at := raw.get("attributes") or e).get(qualified) or at.get(ident)) else m,
            (c.get("value") if isinstance(c, dict) else c)
            if (c := (ca := raw.get("capacity") or e).get(qualified) or ca.get(ident)) is not None
            else m,
            (next(iter(at[ident].items())), list(at).index(ident) < list(at).index(qualified))
            if ident in at and qualified in at
            else None,
        )
        for raw in raws
    ]


@dataclasses.dataclass(frozen=True)
class Tally:
    """How many devices each group holds, overall and per pool and product (((group, id), devices) pairs)."""

    sizes: list[int]
    pools: list[tuple[tuple[int, int], int]]
    products: list[tuple[tuple[int, int], int]]


@dataclasses.dataclass(frozen=True)
class _Column:
    read: tuple[str, str | None] | None
    ids: list[int]  # per device
    reps: list[int]  # first device of each value
    unique: bool  # nearly every device differs: not computed


def _has_domain(table: dict, domain: str, driver: str) -> bool:
    return any(_split(name, driver)[0] == domain for name in table)


def _cel_part(d: CelDevice, domain: str, ident: str | None) -> tuple:
    # True == 1 and False == 0 in Python: booleans are tagged so a bool and an int attribute never share a group.
    # A list-valued attribute is no dict key: it groups by its items' types and values.
    if ident is None:
        return (domain in d.attributes, domain in d.capacity)
    a = d.attributes.get(domain)
    c = d.capacity.get(domain)
    v: Any = a.get(ident, _MISSING) if a is not None else _MISSING
    tv = type(v)
    return (
        ("bool", v) if tv is bool else (_list_key(v) if tv is list else v),
        c.get(ident, _MISSING) if c is not None else _MISSING,
    )


def _list_key(values: list) -> tuple:
    return ("list",) + tuple((type(x).__name__, x) for x in values)


class FleetEvaluation:
    """Per-device outcomes of one evaluation, stored per group of identical devices; results are built on demand."""

    def __init__(
        self,
        index: DeviceIndex,
        labels: list[str],
        outcomes: list[EvalOutcome | None],
        failed_at: list[int],
        group_of: list[int],
        cancelled: bool,
        reps: list[int] | None = None,
    ) -> None:
        self.index = index
        self.reps = reps if reps is not None else _first_of_each(group_of, len(outcomes))  # first device of each group
        self.labels = labels
        self.outcomes = outcomes
        self.failed_at = failed_at
        self.group_of = group_of
        self.cancelled = cancelled
        self._results: list[DeviceResult] | None = None
        self._summary: dict | None = None

    @property
    def evaluations(self) -> int:
        return sum(1 for o in self.outcomes if o is not None)

    def verdict(self, group: int) -> tuple[str, str]:
        out = self.outcomes[group]
        if out is None:
            return "pending", "not evaluated (cancelled)"
        if out.value is True:
            return "match", ""
        label = self.labels[self.failed_at[group]] if self.labels else ""
        if out.error is not None:
            return "error", f"{label}CEL runtime error: {out.error}"
        return "no-match", f"{label}evaluated to false"

    @property
    def results(self) -> list[DeviceResult]:
        if self._results is None:
            verdicts = [self.verdict(g) for g in range(len(self.outcomes))]
            out = []
            for ref, g in zip(self.index.refs, self.group_of):
                res, reason = verdicts[g]
                if res == "pending":
                    continue
                out.append(DeviceResult(ref.driver, ref.pool, ref.device, ref.node, res, reason))
            self._results = out
        return self._results

    @property
    def summary(self) -> dict:
        if self._summary is None:
            self._summary = self._summarise()
        return self._summary

    def _summarise(self) -> dict:
        # Codes: 0 match, 1 no-match, 2 error, 3 not evaluated.
        code = {"match": 0, "no-match": 1, "error": 2, "pending": 3}
        group_code = [code[self.verdict(g)[0]] for g in range(len(self.outcomes))]
        index = self.index
        pools = [[0, 0, 0, 0] for _ in index.pools]
        products = [[0, 0, 0, 0] for _ in index.products]
        totals = [0, 0, 0, 0]
        # Per group, not per device: a keystroke's summary costs the groups' count, not the fleet's.
        t = index.tally(self.group_of)
        for g, n in enumerate(t.sizes):
            totals[group_code[g]] += n
        for (g, pid), n in t.pools:
            pools[pid][group_code[g]] += n
        for (g, qid), n in t.products:
            products[qid][group_code[g]] += n
        return {
            "devices": totals[0] + totals[1] + totals[2],
            "matched": totals[0],
            "notMatched": totals[1],
            "errors": totals[2],
            "distinctEvaluations": self.evaluations,
            "cancelled": self.cancelled,
            "pools": sorted(
                (
                    {"driver": d, "pool": p, "node": n, "devices": c[0] + c[1] + c[2], "matched": c[0], "errors": c[2]}
                    for (d, p, n), c in zip(index.pools, pools)
                    if c[0] + c[1] + c[2]
                ),
                key=lambda x: (x["driver"], x["pool"]),
            ),
            "products": sorted(
                (
                    {"product": prod, "devices": c[0] + c[1] + c[2], "matched": c[0], "errors": c[2]}
                    for prod, c in zip(index.products, products)
                    if c[0] + c[1] + c[2]
                ),
                key=lambda x: x["product"],
            ),
        }


def _cancelled(cancel: Cancel) -> bool:
    if cancel is None:
        return False
    if isinstance(cancel, threading.Event):
        return cancel.is_set()
    return bool(cancel())


def evaluate_fleet(
    selectors: CompiledSelector | Sequence[CompiledSelector],
    slices: Iterable[dict] | DeviceIndex,
    *,
    labels: Sequence[str] | None = None,
    cancel: Cancel = None,
    chunk: int = 1000,
) -> FleetEvaluation:
    """Every selector must be true (the scheduler's rule). Identical devices are evaluated once.

    `slices` may be a DeviceIndex to reuse conversions across evaluations (the playground does).
    `labels[i]` prefixes reasons for selector i (e.g. "class gpu.nvidia.com selector #0: ").
    `cancel` (an Event or a callable) is checked every `chunk` evaluations; a cancelled run is partial.
    """
    sels = [selectors] if isinstance(selectors, CompiledSelector) else list(selectors)
    index = slices if isinstance(slices, DeviceIndex) else DeviceIndex(slices)
    reads: frozenset | None = frozenset()
    for s in sels:
        if s.attributes_read is None or reads is None:
            reads = None
        else:
            reads = reads | s.attributes_read
    reps, group_of = index.grouping(reads)
    outcomes: list[EvalOutcome | None] = [None] * len(reps)
    failed_at = [0] * len(reps)
    cancelled = False
    device = index.device
    # The first evaluation of a device builds its activation: many long-lived objects, as in conversion.
    with gc_paused():
        for g, rep in enumerate(reps):
            if g % chunk == 0 and _cancelled(cancel):
                cancelled = True
                break
            dev = device(rep)
            out = TRUE
            for i, s in enumerate(sels):
                out = s.evaluate(dev)
                if out.value is not True:
                    failed_at[g] = i
                    break
            outcomes[g] = out
    return FleetEvaluation(index, list(labels or []), outcomes, failed_at, group_of, cancelled, reps)


def _first_of_each(group_of: list[int], groups: int) -> list[int]:
    reps = [-1] * groups
    for i, g in enumerate(group_of):
        if reps[g] < 0:
            reps[g] = i
    return reps
