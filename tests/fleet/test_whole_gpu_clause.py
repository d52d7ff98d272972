"""One answer to "does this class keep to whole GPUs?" (fleet/nvidia_schema.selects_whole_gpus): the diagnosis's
class-too-broad and the switch's capacity gate each had a regex of their own, and they disagreed on the rows marked
below, so a class could be too broad for one and fine for the other."""

from __future__ import annotations

import pytest
from dragoman.actions.capacity import class_problems
from dragoman.fleet.diagnose import diagnose
from dragoman.fleet.model import FleetModel
from dragoman.fleet.nvidia_schema import selects_whole_gpus

A = "device.attributes['gpu.nvidia.com']"
CASES = [
    (f"{A}.type == 'gpu'", True),
    ('device.attributes["gpu.nvidia.com"].type=="gpu"', True),
    (f"{A}['type'] == 'gpu'", True),
    (f"'gpu' == {A}.type", True),
    (f"device.driver == 'gpu.nvidia.com' && {A}.type == 'gpu'", True),
    # The diagnosis's regex took these three for a type clause (the capacity gate's did not):
    (f"'gpu' == {A}.productName", False),  # another attribute compared with "gpu"
    (f"{A}.mytype == 'gpu'", False),  # another attribute whose name ends in "type"
    (f"'gpu' == {A}.productName && {A}.type == 'mig'", False),
    (f"{A}.type == 'mig'", False),
    (f"{A}.type != 'gpu'", False),
    ("device.driver == 'gpu.nvidia.com'", False),
]


@pytest.mark.parametrize(("expression", "whole"), CASES)
def test_a_type_gpu_clause_is_found_where_it_is_and_only_there(expression: str, whole: bool) -> None:
    assert selects_whole_gpus([expression]) is whole


@pytest.mark.parametrize(("expression", "whole"), CASES)
def test_the_diagnosis_and_the_capacity_gate_give_the_same_answer(expression: str, whole: bool) -> None:
    cls = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpus", "uid": "u1", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"extendedResourceName": "nvidia.com/gpu", "selectors": [{"cel": {"expression": expression}}]},
    }
    model = FleetModel()
    model.load_list([cls])
    diagnosed = any(f.id == "class-too-broad" for f in diagnose(model))
    gated = any(fid == "class-too-broad" for fid, _ in class_problems([expression], "v25.12.0"))
    assert diagnosed is gated is (not whole)
