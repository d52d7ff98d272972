"""The Devices view: driver → node pool → node → device, with its type, product, memory and holder.

Rows follow `Delta.devices` (a claim allocated or released them) and `Delta.device_pools`: a changed ResourceSlice
redoes exactly the devices of its (driver, DRA pool), which may add or drop rows (`regroup`)."""

from __future__ import annotations

from collections.abc import Iterable

from dragoman.fleet.k8s.devicestate import BINDING, BINDING_FAILED, COUNTERS, FREE, HELD, SHARED, TAINTED, DeviceState
from dragoman.fleet.k8s.slices import attribute_value
from dragoman.fleet.model import DeviceView, key_of
from dragoman.fleet.views.base import Fleet, View
from dragoman.fleet.views.cells import Cell

COLUMNS = (
    ("driver", "DRIVER", 6, 16),
    ("pool", "POOL", 6, 22),
    ("node", "NODE", 12, 48),
    ("device", "DEVICE", 5, 16),
    # What the device is doing now comes right after its name: at 120 columns it is on the first screen (it was last,
    # past the sideways scroll, so a tainted or counter-blocked device read as any other).
    ("claim", "STATE", 5, 64),
    ("type", "TYPE", 3, 8),
    ("product", "PRODUCT", 6, 26),
    ("memory", "MEMORY", 4, None),
)


# How each device state reads in the last column: never colour alone, the words say it.
STATE_STYLE = {
    FREE: "ok",
    HELD: "accent",
    SHARED: "accent",
    TAINTED: "warning",
    COUNTERS: "muted",
    BINDING: "warning",
    BINDING_FAILED: "error",
}


def device_row(
    d: DeviceView, node_pool: str | None, claim: tuple[str, str] | None, state: DeviceState | None = None
) -> tuple:
    """A DeviceView as a row: its node pool (not the ResourceSlice pool), its type, product, memory and what it is
    doing now: free, held by a claim, shared (capacity left), tainted (key, effect, source), blocked by counters
    (by which claim) or waiting for its binding conditions."""
    mem = (d.raw.get("capacity") or {}).get("memory") or {}
    mem = mem.get("value") if isinstance(mem, dict) else mem
    return (
        d.driver,
        node_pool or "—",
        d.node or "(network)",
        d.name,
        _state_cell(claim, state),
        str(d.type or "—"),
        str(d.attribute("productName") or "—"),
        str(mem or "—"),
    )


def _state_cell(claim: tuple[str, str] | None, state: DeviceState | None) -> Cell:
    if state is None or state.state in (FREE, HELD) and len(state.holders) <= 1 and not state.taints:
        return Cell(f"{claim[0]}/{claim[1]}", "accent") if claim else Cell("free", "ok")
    words = state.words()
    if state.state == HELD:
        words = words.removeprefix("held by ")
    if state.taints and state.state in (FREE, HELD):
        # An informational taint (effect None), or one on a held device: said after what holds it.
        t = state.taints[0]
        words += f" · {t.key}:{t.effect}"
    return Cell(words, STATE_STYLE.get(state.state, "accent"))


def device_facets(d: DeviceView, node_pool: str | None) -> dict:
    out = {"driver": d.driver, "pool": node_pool or "", "node": d.node or "", "device": d.name}
    for name, attr in (d.raw.get("attributes") or {}).items():
        # Most attributes are strings, attribute_value's first type: read directly (20,000 devices x ~10 attributes).
        v = attr.get("string") if attr.__class__ is dict else None
        text = v if v.__class__ is str else _text(attribute_value(attr)[1])
        out[name] = text
        if "/" in name:
            out.setdefault(name.split("/", 1)[1], text)
    for name, cap in (d.raw.get("capacity") or {}).items():
        out.setdefault(name, str(cap.get("value") if isinstance(cap, dict) else cap))
    return out


def _text(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


class DevicesView(View):
    name, title = "devices", "Devices"
    columns = COLUMNS
    name_column = "device"
    # Scrolled sideways, the device's name stays (DRIVER is the same on most rows; DEVICE is what tells them apart).
    pinned = "device"
    # At 80 columns the row is wider than the screen: NODE (cut in the middle, its generated tail kept) and DRIVER (the
    # same on most rows) give way so that DEVICE is whole (MIG devices differ at the end) and STATE reads on the first
    # screen; POOL keeps its width, it says which pool the cut node is in.
    give_way = ("node", "driver")
    reach = ("claim", 22)
    empty = "no ResourceSlice publishes devices here"

    def _device_pools(self, fleet: Fleet) -> list[tuple[str, str]]:
        if self.scope and self.scope[0] == "node":
            return fleet.model.device_pools(self.scope[1])
        return fleet.model.device_pools()

    def _pool_slices(self, fleet: Fleet, dp: tuple[str, str]):
        """(slice, its node, that node's pool) of one DRA pool's newest generation, within the view's scope."""
        m = fleet.model
        node_default = m.slice_pool_node(dp)
        for s in m.pool_slices(*dp)[0]:
            spec = s.get("spec") or {}
            node = spec.get("nodeName") or node_default
            npool = fleet.model.pool_of_node(node)
            # The scope is checked here, not only in `all_rows`: `row` and `regroup` come through here for any device
            # or slice pool a delta names, and a drilled-down view must not take in another node's or pool's devices.
            if self.scope and self.scope[0] == "pool" and npool != self.scope[1]:
                continue
            if self.scope and self.scope[0] == "node" and node != self.scope[1]:
                continue
            yield s, node, npool

    def _pool_rows(self, fleet: Fleet, dp: tuple[str, str]):
        m = fleet.model
        for s, node, npool in self._pool_slices(fleet, dp):
            for d in (s.get("spec") or {}).get("devices") or ():
                dv = DeviceView(dp[0], dp[1], d.get("name", ""), node, key_of(s)[1], d)
                yield (
                    dv.id,
                    device_row(dv, npool, m.device_claim(dv.id), m.device_state(dv.id)),
                    device_facets(dv, npool),
                )

    def sort_key(self, key, row):
        # driver → node pool → node → device, as the tree reads.
        return (row[0], row[1], row[2], key[2])

    def order(self, fleet):
        # sort_key of device_row's first three cells, without the row.
        for dp in self._device_pools(fleet):
            for s, node, npool in self._pool_slices(fleet, dp):
                first = (dp[0], npool or "—", node or "(network)")
                for d in (s.get("spec") or {}).get("devices") or ():
                    name = d.get("name", "")
                    yield (dp[0], dp[1], name), (*first, name)

    def rows_near(self, fleet, key):
        return self._pool_rows(fleet, key[:2])

    def all_rows(self, fleet):
        for dp in self._device_pools(fleet):
            yield from self._pool_rows(fleet, dp)

    def rows_of_pools(self, fleet: Fleet, pools: Iterable[tuple[str, str]]):
        for dp in pools:
            yield from self._pool_rows(fleet, dp)

    def row(self, fleet, key):
        for k, cells, facets in self._pool_rows(fleet, key[:2]):
            if k == key:
                return cells, facets
        return None

    def affected(self, fleet, t):
        return None if t.everything else t.devices

    def regroup(self, fleet, t):
        if not t.device_pools:
            return None
        pools = set(t.device_pools)
        return self.rows_of_pools(fleet, pools), lambda key: key[:2] in pools

    def ref(self, fleet, key):
        return ("Device", key[0] + "/" + key[1], key[2])
