"""A ResourceSlice's devices validated as kube-apiserver v1.37.2 validates them: each attribute and capacity name
qualified, an attribute exactly one value, a string or version at most 64 bytes, a version semver. The path of a
device's attribute is written only for one with a problem (a fleet's scenario check validates 40,000 devices); the
table holds the answers from before that, field by field."""

from __future__ import annotations

import pytest
from dragoman.sim import pieces

A = "spec.devices[0].attributes"
C = "spec.devices[0].capacity"
SEMVER = "must be a string compatible with semver.org spec 2.0.0"


def _slice(device: dict) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": "n",
            "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "g", **device}],
        },
    }


@pytest.mark.parametrize(
    ("device", "want"),
    [
        (
            {
                "attributes": {"type": {"string": "gpu"}, "v": {"version": "1.2.3"}},
                "capacity": {"memory": {"value": "1"}},
            },
            [],
        ),
        (
            {"attributes": {"bad name!": {"string": "x"}, "a/b": {"int": 1}}},
            [(f'{A}["bad name!"]', "FieldValueInvalid", 'Invalid value: "bad name!": a valid C identifier')],
        ),
        (
            {"attributes": {"s": {"string": "x" * 70}, "v": {"version": "1.2"}, "w": {"version": "1." * 35}}},
            [
                (f'{A}["s"].string', "FieldValueTooLong", "Too long: may not be more than 64 bytes"),
                (f'{A}["v"].version', "FieldValueInvalid", f'Invalid value: "1.2": {SEMVER}'),
                (f'{A}["w"].version', "FieldValueInvalid", 'Invalid value: "1.1.'),
                (f'{A}["w"].version', "FieldValueTooLong", "Too long: may not be more than 64 bytes"),
            ],
        ),
        (
            {"attributes": {"two": {"string": "a", "int": 1}, "notdict": 5, 'q"uote': {"string": "q"}}},
            [
                (f'{A}["two"]', "FieldValueInvalid", 'Invalid value: {"int":1,"string":"a"}: exactly one value'),
                (f'{A}["notdict"]', "FieldValueInvalid", "Invalid value: 5: exactly one value must be specified"),
                (f'{A}["q\\"uote"]', "FieldValueInvalid", 'Invalid value: "q\\"uote": a valid C identifier'),
            ],
        ),
        (
            {"capacity": {"bad name!": {"value": "1"}, "ok": {"value": "2"}}},
            [(f'{C}["bad name!"]', "FieldValueInvalid", 'Invalid value: "bad name!": a valid C identifier')],
        ),
    ],
)
def test_a_devices_attributes_and_capacity_are_validated_field_by_field(device: dict, want: list) -> None:
    errs = pieces.validate_object("resourceslices", _slice(device), None, "resource.k8s.io/v1")
    got = [(e.get("field"), e.get("reason"), e.get("message")) for e in errs]
    assert [g[:2] for g in got] == [w[:2] for w in want]
    assert all(g[2].startswith(w[2]) for g, w in zip(got, want, strict=True)), got
