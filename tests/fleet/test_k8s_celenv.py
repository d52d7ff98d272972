"""Which CEL environment applies where (fleet/k8s/celenv.py): a selector being written is checked as the API server
checks it (new expressions), a stored one is compiled as the scheduler compiles it (stored expressions). The client's
model once checked stored DeviceClasses as new, so a class over the new limits read "does not compile" while the
scheduler ran it."""

from __future__ import annotations

import pytest
from dragoman.fleet.k8s import celenv
from dragoman.sim.store import ApiError, Store
from fleet_fixtures import GPU_CLASS_EXPR, device_class, gpu_slice, model_of, node

# Over the new-expression length limit (10 KiB), so the API server refuses to create it, and still true on a GPU: a
# class stored before the limit (or written by another version) that the scheduler keeps compiling.
LONG = '"' + "a" * 11_000 + '" != "" && ' + GPU_CLASS_EXPR
# includes() is declared for stored selectors only (DRAListTypeAttributes is off in 1.37).
INCLUDES = "[1, 2].includes(1) && " + GPU_CLASS_EXPR


@pytest.mark.parametrize("expr", [LONG, INCLUDES])
def test_the_model_reads_a_stored_class_as_the_scheduler_does(expr: str) -> None:
    m = model_of(node("n1"), gpu_slice("n1", 4), device_class("old", [expr]))
    res = m.class_matches("old")
    assert res.compile_error is None and len(res.matched) == 4


@pytest.mark.parametrize("expr", [LONG, INCLUDES])
def test_a_selector_being_written_is_checked_as_new(expr: str) -> None:
    m = model_of(node("n1"), gpu_slice("n1", 4))
    res = m.evaluate_selectors([expr], environment=celenv.WRITTEN)
    assert res.compile_error and not res.matched


@pytest.mark.parametrize(
    ("selectors", "old", "updating", "want"),
    [
        (["a"], None, False, celenv.WRITTEN),  # a create
        (["a"], ["a"], True, None),  # an update keeping the selectors: not checked again
        (["b"], ["a"], True, celenv.WRITTEN),  # an update changing them
    ],
)
def test_validation_environment(selectors, old, updating, want) -> None:
    assert celenv.validation_environment(selectors, old, updating=updating) == want


def test_the_simulators_api_refuses_a_new_long_selector_and_keeps_a_stored_one() -> None:
    store = Store()
    cls = device_class("old", [LONG])
    with pytest.raises(ApiError) as err:
        store.create("deviceclasses.resource.k8s.io", cls)
    assert "Too long" in str(err.value) or "too long" in str(err.value)
    store.validate = False  # as if stored earlier (another version, other limits)
    store.create("deviceclasses.resource.k8s.io", cls)
    store.validate = True
    stored = store.get("deviceclasses.resource.k8s.io", None, "old")
    stored["metadata"]["labels"] = {"team": "ml"}
    store.update("deviceclasses.resource.k8s.io", stored)  # selectors unchanged: not checked again
    stored = store.get("deviceclasses.resource.k8s.io", None, "old")
    stored["spec"]["selectors"].append({"cel": {"expression": LONG}})
    with pytest.raises(ApiError):
        store.update("deviceclasses.resource.k8s.io", stored)
