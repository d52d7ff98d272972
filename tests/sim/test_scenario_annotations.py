"""The four scenario-contract annotations (pod faults, device health, binding conditions, binding outcomes) are read
by one rule: an annotation that is absent, empty, not JSON or JSON but not an object says nothing, and no reader
raises on it; an object is then checked for each reader's own shape."""

from __future__ import annotations

import pytest
from dragoman.sim.controllers.base import (
    BINDING_CONDITIONS,
    BINDING_OUTCOMES,
    DEVICE_HEALTH,
    POD_FAULTS,
    binding_outcomes,
    binding_request,
    node_pod_faults,
    unhealthy_devices,
)

READERS = [
    (POD_FAULTS, node_pod_faults, {}),
    (DEVICE_HEALTH, unhealthy_devices, {}),
    (BINDING_CONDITIONS, binding_request, None),
    (BINDING_OUTCOMES, binding_outcomes, {}),
]
SAYS_NOTHING = [None, "", "not json", "{", "[]", '"text"', "3", "null", "true"]


def _obj(annotation: str, raw: str | None) -> dict:
    return {"metadata": {"name": "n1", "annotations": {} if raw is None else {annotation: raw}}}


@pytest.mark.parametrize("raw", SAYS_NOTHING)
@pytest.mark.parametrize(("annotation", "read", "nothing"), READERS, ids=[r[0] for r in READERS])
def test_an_annotation_that_is_not_a_json_object_says_nothing(annotation, read, nothing, raw) -> None:
    assert read(_obj(annotation, raw)) == nothing


def test_each_reader_reads_its_object() -> None:
    assert node_pod_faults(_obj(POD_FAULTS, '{"gpu-operator": {"crash": "true", "n": 3}, "bad": 1}')) == {
        "gpu-operator": {"crash": "true", "n": "3"}
    }
    assert unhealthy_devices(_obj(DEVICE_HEALTH, '{"gpu-0": "XID 79", "": "no name"}')) == {"gpu-0": "XID 79"}
    assert binding_request(_obj(BINDING_CONDITIONS, '{"conditions": ["attached"], "delaySeconds": 7200}')) == {
        "conditions": ["attached"],
        "failureConditions": ["attached-failed"],
        "bindsToNode": True,
        "delaySeconds": 0.0,  # over an hour: not a delay a scenario may ask
    }
    assert binding_outcomes(
        _obj(BINDING_OUTCOMES, '{"gpu-0": {"delaySeconds": 2, "conditions": [{"type": "attached", "status": "No"}]}}')
    ) == {
        "gpu-0": {
            "delaySeconds": 2.0,
            "conditions": [{"type": "attached", "status": "True", "reason": "Answered", "message": ""}],
        }
    }
    assert node_pod_faults(None) == {} and unhealthy_devices(None) == {}
