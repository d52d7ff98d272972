"""Which ResourceSlices count (fleet/k8s/slices.py): the newest generation of each pool, complete only with
spec.pool.resourceSliceCount slices, as the DRA allocator's GatherPools reads them; then the client's model, the CEL
fleet evaluation and the simulated scheduler asked about the same pools (only the model checked the count once)."""

from __future__ import annotations

import copy

import pytest
from dragoman.fleet.cel import compile_expression, evaluate_fleet
from dragoman.fleet.k8s.slices import gather_pools, newest_slices
from dragoman.sim.controllers.scheduling import ClusterView, schedule_one
from fleet_fixtures import GPU_CLASS_EXPR, gpu_slice, model_of, node


def _slice(pool: str, gen: int, count: int, part: int, driver: str = "gpu.nvidia.com", devices: int = 2) -> dict:
    s = gpu_slice(pool, devices, generation=gen, name=f"{pool}-g{gen}-{part}")
    s["spec"]["driver"] = driver
    s["spec"]["pool"]["resourceSliceCount"] = count
    for d in s["spec"]["devices"]:
        d["name"] = f"{d['name']}-p{part}"
    return s


# (slices as (pool, generation, resourceSliceCount, part), {pool: (newest generation, complete)})
TABLE = [
    ("one whole slice", [("a", 1, 1, 0)], {"a": (1, True)}),
    ("two of two", [("a", 1, 2, 0), ("a", 1, 2, 1)], {"a": (1, True)}),
    ("one of two: a slice is missing", [("a", 1, 2, 0)], {"a": (1, False)}),
    ("three where two are stated", [("a", 1, 2, 0), ("a", 1, 2, 1), ("a", 1, 2, 2)], {"a": (1, False)}),
    ("a newer generation replaces the older", [("a", 1, 1, 0), ("a", 2, 1, 1)], {"a": (2, True)}),
    ("a newer generation still being written", [("a", 1, 1, 0), ("a", 2, 2, 1)], {"a": (2, False)}),
    ("pools are separate", [("a", 1, 1, 0), ("b", 3, 2, 0)], {"a": (1, True), "b": (3, False)}),
]


@pytest.mark.parametrize(("parts", "want"), [t[1:] for t in TABLE], ids=[t[0] for t in TABLE])
def test_gather_pools_as_the_allocator(parts, want) -> None:
    pools = gather_pools(_slice(*p) for p in parts)
    assert {pid[1]: (p.generation, p.complete) for pid, p in pools.items()} == want


def test_the_same_pool_name_of_two_drivers_is_two_pools() -> None:
    pools = gather_pools([_slice("a", 1, 1, 0), _slice("a", 5, 2, 0, driver="other.example.com")])
    assert {pid: p.complete for pid, p in pools.items()} == {
        ("gpu.nvidia.com", "a"): True,
        ("other.example.com", "a"): False,
    }


def test_newest_slices_are_the_complete_pools_unless_asked() -> None:
    slices = [_slice("a", 1, 1, 0), _slice("a", 2, 1, 1), _slice("b", 1, 2, 0)]
    assert [s["metadata"]["name"] for s in newest_slices(slices)] == ["a-g2-1"]
    assert [s["metadata"]["name"] for s in newest_slices(slices, complete_only=False)] == ["a-g2-1", "b-g1-0"]


def _missing_one() -> list[dict]:
    """Node n1's pool states two slices and publishes one: incomplete."""
    return [_slice("n1", 1, 2, 0, devices=4)]


def test_the_model_and_the_cel_evaluation_use_no_device_of_an_incomplete_pool() -> None:
    m = model_of(node("n1"), *_missing_one())
    assert m.current_slices() == []
    assert m.node("n1").stale_slices == ["n1-g1-0"]
    result = evaluate_fleet([compile_expression(GPU_CLASS_EXPR)], _missing_one())
    assert not [r for r in result.results if r.result == "match"]
    whole = copy.deepcopy(_missing_one())
    whole[0]["spec"]["pool"]["resourceSliceCount"] = 1
    assert (
        len([r for r in evaluate_fleet([compile_expression(GPU_CLASS_EXPR)], whole).results if r.result == "match"])
        == 4
    )


def test_the_simulated_scheduler_allocates_nothing_from_an_incomplete_pool() -> None:
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "sim"))
    from scheduler_fixtures import claim, device_class, exactly, gpu_pod
    from scheduler_fixtures import node as sim_node

    def run(slices: list[dict]):
        c = claim("one", [exactly("gpu")])
        pod = gpu_pod("worker", 0, claims=[{"name": "one", "resourceClaimName": "one"}])
        view = ClusterView(
            nodes=[sim_node("n1")],
            deviceclasses=[device_class(selectors=[GPU_CLASS_EXPR])],
            resourceslices=slices,
            resourceclaims=[c],
            pods=[pod],
        )
        return schedule_one(pod, view, "2026-12-05T10:00:00Z")

    assert run(_missing_one()).outcome != "scheduled"
    whole = copy.deepcopy(_missing_one())
    whole[0]["spec"]["pool"]["resourceSliceCount"] = 1
    assert run(whole).outcome == "scheduled"


@pytest.mark.parametrize(
    ("attr", "typed"),
    [
        ({"string": "NVIDIA H100"}, ("string", "NVIDIA H100")),
        ({"int": 0}, ("int", 0)),  # a zero is a value, not an absent field
        ({"bool": False}, ("bool", False)),
        ({"version": "1.2.3"}, ("version", "1.2.3")),
        ({"strings": ["a", "b"]}, ("strings", ["a", "b"])),
        ({}, ("unknown", None)),
        ({"string": None}, ("unknown", None)),
        ("NVIDIA H100", ("unknown", None)),  # not an object: no type
    ],
)
def test_a_device_attribute_is_read_by_its_one_set_field(attr, typed) -> None:
    """The model's DeviceView.attribute, the attribute catalogue and the Devices view each read attributes with a loop
    of their own (the model's knew only the four scalar types); now all through fleet/k8s/slices.attribute_value."""
    from dragoman.fleet.k8s.slices import attribute_value
    from dragoman.fleet.model import DeviceView

    assert attribute_value(attr) == typed
    device = DeviceView("gpu.nvidia.com", "p", "gpu-0", "n", "s", {"name": "gpu-0", "attributes": {"x": attr}})
    assert device.attribute("x") == typed[1]


LOOKUPS = [
    # (stored names, asked, found): lookupAttribute tries the fully qualified name, then the bare id when the domain
    # is the driver's; an attribute of another domain is never found by its bare id.
    ({"gpu.nvidia.com/uuid": 1}, "gpu.nvidia.com/uuid", 1),
    ({"uuid": 2}, "gpu.nvidia.com/uuid", 2),
    ({"uuid": 2, "gpu.nvidia.com/uuid": 1}, "gpu.nvidia.com/uuid", 1),
    ({"uuid": 2}, "other.example.com/uuid", None),
    ({"other.example.com/uuid": 3}, "other.example.com/uuid", 3),
    ({"uuid": 2}, "uuid", 2),  # not a valid fully qualified name; the map is read as given
]


@pytest.mark.parametrize(("stored", "asked", "found"), LOOKUPS)
def test_an_attribute_is_looked_up_as_the_allocator_does(stored: dict, asked: str, found) -> None:
    from dragoman.fleet.k8s.slices import lookup_attribute, qualified_attribute_name

    attrs = {k: {"int": v} for k, v in stored.items()}
    got = lookup_attribute(attrs, "gpu.nvidia.com", asked)
    assert (got or {}).get("int") == found
    assert qualified_attribute_name("uuid", "gpu.nvidia.com") == "gpu.nvidia.com/uuid"
    assert qualified_attribute_name("other.example.com/uuid", "gpu.nvidia.com") == "other.example.com/uuid"
