"""ResourceSlices arriving in pieces while table screens are open (issue 18: a crash seen a few seconds into the
l4-serve migration, when its scope-driver step makes the DRA driver publish slices for the pool's nodes).

Each change goes through the model and then through exactly what `TableScreen.apply_touched` does with the delta
(`affected`, `regroup`, `row`), on every view and scope an operator can have on the screen stack; the rows so kept up
to date must equal the rows the view computes afresh, and no step may raise."""

from __future__ import annotations

import copy

import pytest
from dragoman.fleet import nvidia_schema as nv
from dragoman.fleet.diagnose import diagnose
from dragoman.fleet.model import FleetModel
from dragoman.fleet.store import Change
from dragoman.sim.scenarios import DEMO_PATH, load_scenario
from dragoman.tui.screens.table import TableScreen
from dragoman.tui.views import VIEWS, Fleet

POOL = "l4-serve"


class RowsTable:
    """The part of VTable that `TableScreen._apply_touched` writes: rows by key."""

    def __init__(self) -> None:
        self.rows: dict = {}

    def set_row(self, key, cells, facets=None) -> None:
        self.rows[key] = (tuple(cells), facets)

    def remove_row(self, key) -> None:
        self.rows.pop(key, None)

    def all_keys(self) -> list:
        return list(self.rows)


class OpenView:
    """A table screen on the stack, as TableScreen keeps it: filled once, then only from deltas."""

    def __init__(self, view, fleet: Fleet) -> None:
        self.view, self.fleet, self.table = view, fleet, RowsTable()
        for key, cells, facets in view.all_rows(fleet):
            self.table.set_row(key, cells, facets)

    def _set(self, key) -> None:
        TableScreen._set(self, key)  # type: ignore[arg-type]

    def apply(self, t) -> None:
        keys = self.view.affected(self.fleet, t)
        if keys is None:
            self.__init__(self.view, self.fleet)  # TableScreen.populate
            return
        TableScreen._apply_touched(self, t, keys)  # type: ignore[arg-type]

    def fresh(self) -> dict:
        return {key: (tuple(cells), facets) for key, cells, facets in self.view.all_rows(self.fleet)}


def _slice(template: dict, name: str, generation: int, count: int, devices: list, node: str | None) -> dict:
    s = copy.deepcopy(template)
    s["metadata"].update(name=name, uid=f"uid-{name}-{generation}", resourceVersion=f"{generation}{len(devices)}")
    s["spec"]["pool"].update(generation=generation, resourceSliceCount=count)
    s["spec"]["devices"] = copy.deepcopy(devices)
    if node is None:
        s["spec"].pop("nodeName", None)
        s["spec"]["allNodes"] = True
    else:
        s["spec"]["nodeName"] = node
    return s


@pytest.fixture()
def world():
    m = FleetModel()
    m.load_list(load_scenario(DEMO_PATH))
    fleet = Fleet(m)
    fleet.set_findings(diagnose(m))
    fleet.catalogue = m.attribute_catalogue()
    nodes = m.pool_members(POOL)
    raw = m.objects["Node"][("", nodes[0])]
    hw = nv.node_hardware_from_labels(raw["metadata"]["labels"])
    assert hw is not None
    published = nv.resource_slices_for_node(nodes[0], hw, "25.8.0", generation=1)
    views = [cls(None) for cls in VIEWS.values()]
    views += [VIEWS[n](scope) for n in ("nodes", "devices") for scope in (("pool", POOL), ("node", nodes[0]))]
    return m, fleet, nodes, published, [OpenView(v, fleet) for v in views]


def test_slices_arriving_in_pieces_keep_every_open_view_equal_to_a_fresh_one(world) -> None:
    m, fleet, nodes, published, open_views = world
    template = published[0]
    devices = template["spec"]["devices"]
    assert len(devices) >= 2
    a_name, b_name = f"{nodes[0]}-gpu.nvidia.com-a", f"{nodes[0]}-gpu.nvidia.com-b"
    a = _slice(template, a_name, 1, 2, devices[:1], nodes[0])
    b = _slice(template, b_name, 1, 2, devices[1:], nodes[0])
    a2 = _slice(template, a_name, 2, 2, [], nodes[0])  # the pool's next generation: fewer devices
    net = _slice(template, "net-slice", 1, 1, devices, None)
    net_on_node = _slice(template, "net-slice", 2, 1, devices, nodes[-1])
    renamed = copy.deepcopy(net_on_node)
    renamed["spec"]["pool"]["name"] = "renamed-pool"
    renamed["metadata"]["resourceVersion"] = "99"
    steps = [
        ("one of two slices of a pool", [Change("ResourceSlice", "ADDED", a, None)]),
        ("the second slice", [Change("ResourceSlice", "ADDED", b, None)]),
        ("a slice modified with fewer devices", [Change("ResourceSlice", "MODIFIED", a2, a)]),
        ("a slice deleted while its pool is shown", [Change("ResourceSlice", "DELETED", b, b)]),
        ("the last slice deleted", [Change("ResourceSlice", "DELETED", a2, a2)]),
        ("the driver's real slices", [Change("ResourceSlice", "ADDED", s, None) for s in published]),
        ("a network-attached pool", [Change("ResourceSlice", "ADDED", net, None)]),
        ("the pool moves to a node", [Change("ResourceSlice", "MODIFIED", net_on_node, net)]),
        ("the slice moves to another pool", [Change("ResourceSlice", "MODIFIED", renamed, net_on_node)]),
        ("that slice deleted", [Change("ResourceSlice", "DELETED", renamed, renamed)]),
    ]
    seen_l4 = False
    for what, changes in steps:
        t = m.apply(changes)
        fleet.set_findings(diagnose(m))
        fleet.catalogue = m.attribute_catalogue()
        for ov in open_views:
            ov.apply(t)
            if ov.view.uses_findings:
                ov.__init__(ov.view, fleet)  # apply_findings may repopulate; compared below as the screen would be
            if ov.view.uses_catalogue:
                ov.__init__(ov.view, fleet)  # apply_catalogue repopulates
            assert ov.table.rows == ov.fresh(), f"{what}: {ov.view.name} {ov.view.scope} differs from a fresh view"
            if ov.view.name == "devices" and ov.view.scope is None:
                seen_l4 = seen_l4 or any(k[1] == nodes[0] for k in ov.table.rows)
    assert seen_l4  # the open Devices view did show the new pool's devices at some point


def test_a_node_scoped_devices_view_takes_in_no_other_nodes_device(world) -> None:
    """A claim allocated on another node names its device in `Delta.devices`: the drilled-down view must not add it."""
    m, fleet, nodes, _published, _open = world
    scoped = VIEWS["devices"](("node", nodes[0]))
    everywhere = list(VIEWS["devices"](None).all_rows(fleet))
    elsewhere = [k for k, cells, _ in everywhere if cells[2] != nodes[0]]
    assert elsewhere
    assert all(scoped.row(fleet, k) is None for k in elsewhere)
    own = [k for k, _, _ in scoped.all_rows(fleet)]
    assert all(scoped.row(fleet, k) is not None for k in own)


async def test_playground_counts_follow_new_slices_when_an_older_conversion_finishes_late(
    tmp_path, monkeypatch
) -> None:
    """Slices change twice while the playground converts: the conversion of the middle picture (its evaluation
    cancelled) finishing last must not become the index later keystrokes evaluate on."""
    import threading

    from dragoman.fleet.cel import fleeteval
    from dragoman.tui.screens.playground import PlaygroundScreen

    from tests.tui.conftest import snapshot_app, snapshot_copy, wait_for

    gate, converting = threading.Event(), threading.Event()
    converted = threading.Event()
    real = fleeteval.DeviceIndex

    class Middle(list):
        """The middle picture's slices: their conversion waits for the gate."""

    class SlowIndex(real):  # type: ignore[misc, valid-type]
        def __init__(self, slices, **kw) -> None:
            if isinstance(slices, Middle):
                converting.set()
                gate.wait(30)
            super().__init__(slices, **kw)
            self.middle = isinstance(slices, Middle)

        def published(self):
            out = super().published()
            if self.middle:
                converted.set()  # the evaluation stores its index right after this
            return out

    monkeypatch.setattr(fleeteval, "DeviceIndex", SlowIndex)
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.feed.loaded, 60, "the snapshot")
        await pilot.press("colon", *"cel", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PlaygroundScreen) and app.screen.outcome is not None)
        screen = app.screen
        assert isinstance(screen, PlaygroundScreen)
        model = app.feed.model
        every = model.current_slices()
        fewer = [s for s in every if s is not next(x for x in every if (x.get("spec") or {}).get("devices"))]
        devices_of = lambda slices: sum(len((s.get("spec") or {}).get("devices") or ()) for s in slices)  # noqa: E731
        assert devices_of(fewer) < devices_of(every)

        # The middle picture: its conversion blocks.
        monkeypatch.setattr(model, "current_slices", lambda: Middle(every))
        model.selectors.invalidate()
        screen.schedule(0)
        await wait_for(pilot, converting.is_set, 30, "the middle conversion to start")
        # The newest picture, one slice fewer: converted and counted at once.
        monkeypatch.setattr(model, "current_slices", lambda: list(fewer))
        model.selectors.invalidate()
        screen.schedule(0)
        await wait_for(
            pilot,
            lambda: (
                screen.outcome is not None
                and screen.outcome.summary is not None
                and screen.outcome.summary["devices"] == devices_of(fewer)
            ),
            30,
            "the counts of the newest slices",
        )
        gate.set()  # the middle conversion ends last
        await wait_for(pilot, converted.is_set, 30, "the middle conversion to end")
        await pilot.pause(0.5)
        # A keystroke later (same slices): still the newest picture's devices.
        screen.gen += 1
        screen.schedule(0)
        await wait_for(pilot, lambda: screen.shown_gen == screen.gen, 30, "the next evaluation")
        assert screen.outcome is not None and screen.outcome.summary is not None
        assert screen.outcome.summary["devices"] == devices_of(fewer)
