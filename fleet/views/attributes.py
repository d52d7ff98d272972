"""The Attribute distribution view: every attribute and capacity published, its values, counts and node pools.

Rows follow the attribute catalogue, recomputed after slices change (`Delta.slices`); a delta alone touches none."""

from __future__ import annotations

from collections.abc import Sequence

from dragoman.fleet.views.base import View

COLUMNS = (
    ("attribute", "ATTRIBUTE", 10, 40),
    ("type", "TYPE", 8, 9),
    ("devices", "DEVICES", 7, 7),
    ("values", "VALUES (devices)", 16, 60),
    ("pools", "NODE POOLS", 10, None),
)


def attribute_row(qualified: str, entry: dict, node_pools: Sequence[str] | None = None) -> tuple:
    """One attribute or capacity across the fleet; `node_pools` are the node pools whose devices publish it."""
    values = entry.get("values") or {}
    shown = ", ".join(f"{v} ({n})" for v, n in list(values.items())[:4])
    if len(values) > 4:
        shown += f", +{len(values) - 4} more"
    pools = list(node_pools) if node_pools is not None else list(entry.get("pools") or [])
    kind = entry.get("type", "?") if entry.get("kind") == "attribute" else "capacity"
    return (qualified, kind, str(entry.get("devices", 0)), shown, ", ".join(pools) or "—")


def node_pools_of(fleet, driver: str, entry: dict) -> list[str]:
    """The catalogue names DRA pools (one per node for NVIDIA's driver); an operator thinks in node pools."""
    m = fleet.model
    return sorted({fleet.model.pool_of_node(m.slice_pool_node((driver, p))) or p for p in entry.get("pools") or ()})


class AttributesView(View):
    name, title = "attributes", "Attribute distribution"
    columns = COLUMNS
    uses_catalogue = True
    empty = "no device publishes attributes"

    def all_rows(self, fleet):
        for driver, attrs in fleet.catalogue.items():
            for qn, entry in attrs.items():
                node_pools = node_pools_of(fleet, driver, entry)
                yield (
                    qn,
                    attribute_row(qn, entry, node_pools),
                    {"driver": driver, "attribute": qn, "kind": entry.get("kind", ""), "pools": ",".join(node_pools)},
                )

    def row(self, fleet, key):
        for k, cells, facets in self.all_rows(fleet):
            if k == key:
                return cells, facets
        return None

    def affected(self, fleet, t):
        return ()  # rows change only when the catalogue is recomputed (after slices change)

    def ref(self, fleet, key):
        for driver, attrs in fleet.catalogue.items():
            if key in attrs:
                return ("Attribute", driver, key)
        return None

    def drill(self, fleet, key):
        return ("devices", None)
