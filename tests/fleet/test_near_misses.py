"""Near misses (issue 30): the devices one clause alone leaves out, per product, with what they publish for what it
reads and what to write instead — the playground's, `dragoman cel`'s and the stuck-pod page's one home."""

from __future__ import annotations

import pathlib

import pytest
from dragoman.fleet import cel_playground as P
from dragoman.fleet.cel.fleeteval import DeviceIndex
from dragoman.fleet.cel.values import Quantity
from dragoman.fleet.cel_explain import short_clause, suggestions
from dragoman.tui.commands.cel import load_objects

DEMO = pathlib.Path(__file__).resolve().parents[2] / "sim" / "scenarios" / "demo.yaml"
H100 = "device.attributes['gpu.nvidia.com'].productName.contains('H100')"
MEMORY = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"


@pytest.fixture(scope="module")
def index() -> DeviceIndex:
    return DeviceIndex([o for o in load_objects(str(DEMO)) if o.get("kind") == "ResourceSlice"])


def _explained(index: DeviceIndex, expression: str, base=()) -> P.Outcome:
    out, ev = P.evaluate(index, list(base), "class x", expression)
    assert ev is not None
    return P.explain(out, ev, list(base), "class x")


def test_the_h100s_only_the_memory_clause_leaves_out_are_said_per_product_with_their_value(index) -> None:
    out = _explained(index, f"{H100} && {MEMORY}")
    sentences = [nm.sentence() for nm in out.near]
    assert "24 NVIDIA H100 80GB HBM3 left out only by `memory >= 80Gi`: they have 81559Mi" in sentences
    # The 43 whole A100 80GB GPUs (a100-serve's 40, a100-lab's 3) fail only the product clause; the MIG devices fail
    # both: no near miss.
    assert "43 NVIDIA A100-SXM4-80GB left out only by `productName.contains('H100')`" in sentences
    assert sum(nm.devices for nm in out.near) == 67
    # The table: near misses first (after errors), each with its clause and its own value.
    kinds = [r[0] for r in out.rows]
    # a100-lab's fabric-attached devices publish no gpu.nvidia.com attributes: the selector errors on them.
    errors = kinds.count("error")
    assert errors == 2 and kinds[:errors] == ["error"] * errors
    assert kinds[errors : errors + kinds.count("near-miss")] == ["near-miss"] * kinds.count("near-miss")
    assert kinds.count("near-miss") == 67
    h100 = next(r for r in out.rows if r[0] == "near-miss" and r[5] == "NVIDIA H100 80GB HBM3")
    assert h100[6] == "only `memory >= 80Gi` is false: it has 81559Mi"


def test_a_single_clause_selector_has_no_near_misses(index) -> None:
    # Every device a one-clause selector leaves out would be "near": that is noise, not a fact.
    assert _explained(index, H100).near == []


def test_near_misses_come_after_the_base_selectors(index) -> None:
    # A base (class) selector that already refused a device makes it no near miss of the edited expression.
    out = _explained(index, f"{H100} && {MEMORY}", base=["device.attributes['gpu.nvidia.com'].type == 'mig'"])
    assert out.near == []


def test_what_to_write() -> None:
    have = [Quantity.parse("81559Mi")]
    assert suggestions(MEMORY, have) == ["quantity('80G')", "quantity('79Gi')"]
    # Already kept: nothing to suggest; a clause that is no quantity comparison: nothing either.
    assert suggestions(MEMORY.replace("80Gi", "70Gi"), have) == []
    assert suggestions(H100, have) == []
    # Downward: the literal rounded up to what they have.
    at_most = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) <= 0"
    assert suggestions(at_most, have) == ["quantity('80Gi')"]
    assert short_clause(at_most) == "memory <= 40Gi"
