"""Which ResourceSlices count: the newest generation of each pool, and whether that generation is complete
(k8s.io/dynamic-resource-allocation@v0.37.2 structured/internal/stable GatherPools, addSlice, checkSlicesInPool).

A pool is (driver, spec.pool.name). A slice of an older generation is out of date and ignored; a newer one replaces
every older one. The newest generation is complete when it has exactly spec.pool.resourceSliceCount slices (the
count its first slice states): a pool with a missing slice is incomplete, and the scheduler allocates nothing from
it (allocationMode All fails on it). The model, the CEL fleet evaluation, the capacity gate and the simulated
scheduler all gather pools here. Also what a published device attribute is: its type and value, by the one field it
sets (the model, the attribute catalogue and the Devices view and describe page read them here).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

PoolId = tuple[str, str]  # (driver, pool name)


def _int(v: object) -> int:
    if type(v) is int:  # the stored shape; bool (an int subclass) falls through to 0 below
        return v
    if isinstance(v, bool):
        return 0
    try:
        return int(str(v))
    except (TypeError, ValueError):
        return 0


# A DeviceAttribute sets exactly one of these fields (the list types are the newer ones); its type is that field's name.
ATTRIBUTE_TYPES = ("string", "int", "bool", "version", "strings", "ints", "bools", "versions")


def attribute_value(attr: object) -> tuple[str, object]:
    """(type, value) of a published device attribute, by the one field it sets; ("unknown", None) when it sets none
    or is not an object."""
    if isinstance(attr, dict):
        for t in ATTRIBUTE_TYPES:
            v = attr.get(t)
            if v is not None:
                return t, v
    return "unknown", None


def qualified_attribute_name(name: str, driver: str) -> str:
    """An attribute's or capacity's fully qualified name: a bare id belongs to the driver's domain."""
    return name if "/" in name else f"{driver}/{name}"


def lookup_attribute(attributes: dict, driver: str, full_name: str) -> object:
    """A device's attribute by its fully qualified name, or by its bare id when the domain is the driver's; None when
    it has none (structured/internal lookupAttribute, which the constraints use)."""
    attr = attributes.get(full_name)
    if attr is None:
        i = full_name.find("/")
        if i >= 0 and full_name[:i] == driver:
            attr = attributes.get(full_name[i + 1 :])
    return attr


def slice_pool(slc: dict) -> PoolId:
    spec = slc.get("spec") or {}
    return (str(spec.get("driver") or ""), str((spec.get("pool") or {}).get("name") or ""))


def slice_generation(slc: dict) -> int:
    return _int(((slc.get("spec") or {}).get("pool") or {}).get("generation"))


def slice_count(slc: dict) -> int:
    """spec.pool.resourceSliceCount (validation requires it > 0)."""
    return _int(((slc.get("spec") or {}).get("pool") or {}).get("resourceSliceCount"))


@dataclasses.dataclass
class PoolSlices:
    """One pool's slices: the newest generation's (in input order), the older ones, and whether it is complete."""

    pool: PoolId
    generation: int
    slices: list[dict]
    older: list[dict]

    @property
    def complete(self) -> bool:
        return bool(self.slices) and len(self.slices) == slice_count(self.slices[0])


def newest_generation(slices: Iterable[dict]) -> PoolSlices | None:
    """The slices of ONE pool, split by generation (None when there are none)."""
    gens = [(slice_generation(s), s) for s in slices if isinstance(s, dict)]
    if not gens:
        return None
    if len(gens) == 1:  # most pools: one slice, its generation the newest (a node's view asks of each of its pools)
        g, s = gens[0]
        return PoolSlices(slice_pool(s), g, [s], [])
    newest = max(g for g, _ in gens)
    cur = [s for g, s in gens if g == newest]
    older = [s for g, s in gens if g != newest]
    return PoolSlices(slice_pool(cur[0]), newest, cur, older)


def gather_pools(slices: Iterable[dict]) -> dict[PoolId, PoolSlices]:
    """Every pool of `slices`, in the order its first slice appears."""
    by_pool: dict[PoolId, list[dict]] = {}
    for s in slices:
        if isinstance(s, dict):
            by_pool.setdefault(slice_pool(s), []).append(s)
    out = {}
    for pid, members in by_pool.items():
        pool = newest_generation(members)
        if pool is not None:
            out[pid] = pool
    return out


def newest_slices(slices: Iterable[dict], *, complete_only: bool = True) -> list[dict]:
    """The slices the scheduler allocates from: each pool's newest generation, in input order, and only of complete
    pools unless `complete_only` is False (what a driver publishes, complete or not)."""
    slices = [s for s in slices if isinstance(s, dict)]
    keep = {id(s) for pool in gather_pools(slices).values() if pool.complete or not complete_only for s in pool.slices}
    return [s for s in slices if id(s) in keep]
