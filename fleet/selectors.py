"""Which of a fleet's devices a DRA CEL selector matches: the selectors of a DeviceClass, of a claim's request, or
typed ones, evaluated over the model's current devices (fleet/model.py's `FleetModel.devices`).

`FleetSelectors` is one model's evaluation state: compiled selectors, results and each device's CEL input, kept until
the model's ResourceSlices or DeviceClasses change (its indexers call `invalidate`, which moves `epoch`). FleetModel
keeps the public methods (`evaluate_selectors`, `class_matches`, `request_matches`, `attribute_catalogue`, ...) and
hands them here; the CEL language itself is fleet/cel/.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from dragoman.fleet.delta import DeviceId

if TYPE_CHECKING:
    from dragoman.fleet.cel.api import Environment
    from dragoman.fleet.model import DeviceView, FleetModel


@dataclasses.dataclass
class SelectorResult:
    """Selectors evaluated over the fleet's current devices: what matched, what failed at runtime, or a compile
    error."""

    matched: list[DeviceId]
    errors: dict[DeviceId, str]
    evaluated: int
    compile_error: str | None = None

    @property
    def ok(self) -> bool:
        return self.compile_error is None and not self.errors


class FleetSelectors:
    """One model's selector evaluation and its caches; every method reads the model it is given, whose selectors
    these are."""

    def __init__(self, epoch: int = 0) -> None:
        # Changes whenever slices or classes change, so a cached selector evaluation is stale.
        self.epoch = epoch
        self._cache: dict[Any, tuple[int, Any]] = {}
        self._devices: dict[DeviceId, tuple[dict, Any]] = {}

    def invalidate(self) -> None:
        """The model's slices or classes changed: every cached evaluation is stale."""
        self.epoch += 1

    def _device(self, dev: DeviceView):
        from dragoman.fleet.cel import cel_device

        cached = self._devices.get(dev.id)
        if cached is not None and cached[0] is dev.raw:
            return cached[1]
        cd = cel_device(dev.driver, dev.raw)
        self._devices[dev.id] = (dev.raw, cd)
        return cd

    def compile(self, expressions: Sequence[str], environment: Environment | None = None):
        """Compiled selectors (cached); raises CelCompileError for the first bad one. The model reads selectors the
        cluster stores (its DeviceClasses and claims), so they compile as the scheduler compiles them
        (fleet/k8s/celenv.py); a selector being written is checked with `environment=celenv.WRITTEN`."""
        from dragoman.fleet.cel import compile_expression
        from dragoman.fleet.k8s import celenv

        environment = environment or celenv.STORED
        out = []
        for e in expressions:
            ck = ("compile", environment, e)
            hit = self._cache.get(ck)
            if hit is None:
                try:
                    hit = (0, compile_expression(e, environment=environment))
                except Exception as exc:  # noqa: BLE001 - CelCompileError, or an engine without support yet
                    hit = (0, exc)
                self._cache[ck] = hit
            if isinstance(hit[1], Exception):
                raise hit[1]
            out.append(hit[1])
        return out

    def evaluate(
        self,
        model: FleetModel,
        expressions: Sequence[str],
        devices: Iterable[DeviceView] | None = None,
        environment: Environment | None = None,
    ) -> SelectorResult:
        """All expressions must be true (the scheduler's rule) on each current device; cached until slices or classes
        change."""
        from dragoman.fleet.cel import evaluate_all

        cache_key = ("eval", environment, tuple(expressions)) if devices is None else None
        if cache_key is not None:
            hit = self._cache.get(cache_key)
            if hit is not None and hit[0] == self.epoch:
                return hit[1]
        try:
            selectors = self.compile(expressions, environment)
        except Exception as exc:  # noqa: BLE001 - any failure to compile is the result's compile_error
            result = SelectorResult([], {}, 0, compile_error=str(getattr(exc, "message", exc)))
            if cache_key is not None:
                self._cache[cache_key] = (self.epoch, result)
            return result
        read_set = _attributes_read(selectors)
        reads = tuple(sorted(read_set, key=repr)) if read_set is not None else None
        memo: dict[Any, Any] = {}
        matched: list[DeviceId] = []
        errors: dict[DeviceId, str] = {}
        n = 0
        for dev in model.devices() if devices is None else devices:
            n += 1
            dk = _dedupe_key(dev, reads) if reads is not None else None
            outcome = memo.get(dk) if dk is not None else None
            if outcome is None:
                cd = self._device(dev)
                conv = cd.cache.get("conversion_error")
                if conv:
                    outcome = (None, conv)
                else:
                    out = evaluate_all(selectors, cd) if selectors else None
                    outcome = (True, None) if out is None else (out.value, out.error)
                if dk is not None:
                    memo[dk] = outcome
            if outcome[1]:
                errors[dev.id] = outcome[1]
            elif outcome[0] is True:
                matched.append(dev.id)
        result = SelectorResult(matched, errors, n)
        if cache_key is not None:
            self._cache[cache_key] = (self.epoch, result)
        return result

    def class_matches(self, model: FleetModel, name: str) -> SelectorResult:
        cls = model.classes().get(name)
        if cls is None:
            return SelectorResult([], {}, 0, compile_error=f"DeviceClass {name} does not exist")
        return self.evaluate(model, cls.expressions)

    def request_matches(self, model: FleetModel, body: dict) -> SelectorResult:
        """A claim request body (`exactly` or a subrequest): its class's selectors and then its own."""
        cls = model.classes().get(body.get("deviceClassName", ""))
        if cls is None:
            return SelectorResult([], {}, 0, compile_error=f"DeviceClass {body.get('deviceClassName')} does not exist")
        own_exprs = [(s.get("cel") or {}).get("expression", "") for s in body.get("selectors") or () if s.get("cel")]
        return self.evaluate(model, list(cls.expressions) + own_exprs)

    def evaluate_fleet(self, model: FleetModel, selectors, *, cancel=None):
        """The playground's evaluation: H1's fleet evaluator over the newest generation of each pool."""
        from dragoman.fleet.cel import evaluate_fleet

        return evaluate_fleet(selectors, model.current_slices(), cancel=cancel)

    def attribute_catalogue(self, model: FleetModel) -> dict[str, dict[str, dict]]:
        """Per driver, every attribute and capacity published: type, value counts and the pools that publish it.

        {driver: {name: {"kind": "attribute"|"capacity", "type": "string"|"int"|"bool"|"version"|"quantity",
                         "values": {value: devices}, "pools": [pool, ...], "devices": n}}}
        """
        hit = self._cache.get(("catalogue",))
        if hit is not None and hit[0] == self.epoch:
            return hit[1]
        # 20,000 devices at the envelope, ~12 entries each: counted into plain dicts (a Counter's += calls Python for
        # each new value, and most uuids are new), names qualified once per driver, and the pools that publish a name
        # gathered per pool (devices come pool by pool) rather than per entry of each device.
        out: dict[str, dict[str, dict]] = defaultdict(dict)
        qualified: dict[str, dict[str, str]] = defaultdict(dict)
        published: dict[tuple[str, str], set[str]] = {}  # (driver, pool) -> names of attributes and capacities
        for dev in model.devices():
            driver = dev.driver
            cat = out[driver]
            names = qualified[driver]
            names_here = published.get((driver, dev.pool))
            if names_here is None:
                names_here = published[(driver, dev.pool)] = set()
            attrs = dev.raw.get("attributes") or {}
            names_here.update(attrs)
            for name, attr in attrs.items():
                qn = names.get(name)
                if qn is None:
                    qn = names[name] = name if "/" in name else f"{driver}/{name}"
                typ, value = "unknown", None
                if isinstance(attr, dict):
                    for t in ("string", "int", "bool", "version", "strings", "ints", "bools", "versions"):
                        if attr.get(t) is not None:
                            typ, value = t, attr[t]
                            break
                entry = cat.get(qn)
                if entry is None:
                    entry = cat[qn] = {"kind": "attribute", "type": typ, "values": {}, "devices": 0}
                elif entry["type"] != typ:
                    entry["type"] = "mixed"
                values = entry["values"]
                if isinstance(value, list):
                    value = json.dumps(value)
                values[value] = values.get(value, 0) + 1
            caps = dev.raw.get("capacity") or {}
            names_here.update(caps)
            for name, cap in caps.items():
                qn = names.get(name)
                if qn is None:
                    qn = names[name] = name if "/" in name else f"{driver}/{name}"
                value = str(cap.get("value") if isinstance(cap, dict) else cap)
                entry = cat.get(qn)
                if entry is None:
                    entry = cat[qn] = {"kind": "capacity", "type": "quantity", "values": {}, "devices": 0}
                values = entry["values"]
                values[value] = values.get(value, 0) + 1
        pools: dict[tuple[str, str], set[str]] = defaultdict(set)
        for (driver, pool), names_here in published.items():
            for name in names_here:
                pools[(driver, qualified[driver][name])].add(pool)
        result: dict[str, dict] = {}
        for driver, attrs in sorted(out.items()):
            result[driver] = {}
            for qn, entry in sorted(attrs.items()):
                # Most devices first; equal counts in the order first seen (Counter.most_common's order). Each device
                # counted one value of each name it publishes.
                values = entry["values"]
                entry["devices"] = sum(values.values())
                entry["values"] = dict(sorted(values.items(), key=itemgetter(1), reverse=True))
                entry["pools"] = sorted(pools[(driver, qn)])
                result[driver][qn] = entry
        self._cache[("catalogue",)] = (self.epoch, result)
        return result


def _attributes_read(selectors) -> frozenset | None:
    reads: set = set()
    for s in selectors:
        r = getattr(s, "attributes_read", None)
        if r is None:
            return None
        reads |= set(r)
    return frozenset(reads)


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1:
            # A published attribute or capacity is one typed value ({"string": "gpu"}): no sort, no recursion.
            ((k, v),) = value.items()
            if not isinstance(v, (dict, list)):
                return ((k, v),)
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


@functools.lru_cache(maxsize=256)
def _read_plan(driver: str, reads: tuple) -> tuple:
    """Per item the selectors read, for a device of `driver`: the names it may be published under, in the order they
    are looked up (None for an item naming a whole domain); worked out once per driver and set of reads, not once per
    device."""
    plan: list = []
    for item in reads:
        if isinstance(item, tuple) and len(item) == 2 and item[1]:
            domain, ident = item
            plan.append((ident, f"{domain}/{ident}") if domain == driver else (f"{domain}/{ident}",))
        else:
            plan.append(None)
    return tuple(plan)


def _dedupe_key(dev: DeviceView, reads: tuple) -> tuple:
    """Devices that agree on everything the selectors read give the same outcome: evaluate one of them."""
    attrs = dev.raw.get("attributes") or {}
    caps = dev.raw.get("capacity") or {}
    parts: list = [dev.driver, dev.raw.get("allowMultipleAllocations")]
    for item, names in zip(reads, _read_plan(dev.driver, reads), strict=True):
        if names is not None:
            a = c = None
            for n in names:
                if n in attrs:
                    a = attrs[n]
                    break
            for n in names:
                if n in caps:
                    c = caps[n]
                    break
            parts.append((_frozen(a), _frozen(c)))
        else:
            domain = item[0] if isinstance(item, tuple) else item
            names = tuple(
                sorted(
                    n for n in list(attrs) + list(caps) if (n.split("/", 1)[0] if "/" in n else dev.driver) == domain
                )
            )
            parts.append((domain, names))
    return tuple(parts)
