"""Which of a fleet's devices a DRA CEL selector matches: the selectors of a DeviceClass, of a claim's request, or
typed ones, evaluated over the model's current devices: the newest generation of each complete pool, the devices the
scheduler allocates from (fleet/k8s/slices.py).

`FleetSelectors` is one model's evaluation state: results and the devices' CEL input (one DeviceIndex), kept until
the model's ResourceSlices or DeviceClasses change (its indexers call `invalidate`, which moves `epoch`). FleetModel
keeps the public methods (`evaluate_selectors`, `class_matches`, `request_matches`, `attribute_catalogue`, ...) and
hands them here; the CEL language itself is fleet/cel/.
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from dragoman.fleet.delta import DeviceId
from dragoman.fleet.k8s.slices import attribute_value, qualified_attribute_name

if TYPE_CHECKING:
    from dragoman.fleet.cel.api import Environment
    from dragoman.fleet.cel.fleeteval import DeviceIndex
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
    these are.

    Every evaluation goes through the one entry point, fleet/cel/fleeteval.evaluate_fleet, over the model's one
    DeviceIndex (its current devices converted once and grouped by what selectors read); selectors compile through
    fleet/cel/engine.compile_expression's cache, in the environment fleet/k8s/celenv.py says applies."""

    def __init__(self, epoch: int = 0) -> None:
        # Changes whenever slices or classes change, so a cached selector evaluation is stale.
        self.epoch = epoch
        self._cache: dict[Any, tuple[int, Any]] = {}
        self._index: tuple[int, DeviceIndex] | None = None

    def invalidate(self) -> None:
        """The model's slices or classes changed: every cached evaluation is stale."""
        self.epoch += 1

    def index(self, model: FleetModel, slices: list[dict] | None = None, epoch: int | None = None) -> DeviceIndex:
        """The model's current devices (fleet/k8s/slices: the newest generation of each complete pool), converted for
        CEL once per change of slices or classes; the devices of an unchanged slice keep their conversion.

        A thread other than the model's passes the `slices` (model.current_slices()) and `epoch` it read on the model's
        thread: the index is then kept only if the model has not moved on meanwhile."""
        from dragoman.fleet.cel.fleeteval import DeviceIndex

        epoch = self.epoch if epoch is None else epoch
        hit = self._index
        if hit is not None and hit[0] == epoch:
            return hit[1]
        index = DeviceIndex(
            model.current_slices() if slices is None else slices,
            reuse=hit[1] if hit is not None else None,
            current=True,  # the model's current slices (a thread passes those it read): no newest_slices again
        )
        if epoch == self.epoch:
            self._index = (epoch, index)
        return index

    def compile(self, expressions: Sequence[str], environment: Environment | None = None):
        """Compiled selectors; raises CelCompileError for the first bad one. The model reads selectors the cluster
        stores (its DeviceClasses and claims), so they compile as the scheduler compiles them (fleet/k8s/celenv.py);
        a selector being written is checked with `environment=celenv.WRITTEN`."""
        from dragoman.fleet.cel import compile_expression
        from dragoman.fleet.k8s import celenv

        environment = environment or celenv.STORED
        return [compile_expression(e, environment=environment) for e in expressions]

    def evaluate(
        self,
        model: FleetModel,
        expressions: Sequence[str],
        devices: Iterable[DeviceView] | None = None,
        environment: Environment | None = None,
    ) -> SelectorResult:
        """All expressions must be true (the scheduler's rule) on each current device (or on those of `devices` that
        are current); cached until slices or classes change."""
        from dragoman.fleet.cel.fleeteval import evaluate_fleet

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
        index = self.index(model)
        ev = evaluate_fleet(selectors, index)
        # One verdict per group of devices equal in what the selectors read, then per device by its group.
        outcomes = ev.outcomes
        errs = [o.error if o is not None else None for o in outcomes]
        code = [0 if o is None else 1 if o.error is not None else 2 if o.value is True else 0 for o in outcomes]
        ids = index.ids
        picked: Sequence[int] = range(len(ids))
        if devices is not None:
            wanted = {d.id for d in devices}
            picked = [i for i, did in enumerate(ids) if did in wanted]
        group_of = ev.group_of
        # (A code no group has is not looked for device by device: most evaluations raise no error.)
        matched: list[DeviceId] = [ids[i] for i in picked if code[group_of[i]] == 2] if 2 in code else []
        errors: dict[DeviceId, str] = (
            {ids[i]: str(errs[group_of[i]]) for i in picked if code[group_of[i]] == 1} if 1 in code else {}
        )
        n = len(picked)
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
        """Compiled selectors over the model's current devices: fleet/cel/fleeteval's evaluation, per device."""
        from dragoman.fleet.cel.fleeteval import evaluate_fleet

        return evaluate_fleet(selectors, self.index(model), cancel=cancel)

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
                    qn = names[name] = qualified_attribute_name(name, driver)
                typ, value = attribute_value(attr)
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
                    qn = names[name] = qualified_attribute_name(name, driver)
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
