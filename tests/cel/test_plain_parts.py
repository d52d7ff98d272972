"""fleeteval's comprehensions for a column of plain devices (`_plain_parts`) against the per-device loop they stand in
for, on a table of devices: both spellings of one attribute (either first), a qualified name only, a bare one only,
capacities as {"value": q} and as a bare quantity (a number 0 among them), a name missing; one driver and two, a
name of the driver's domain and of another."""

from __future__ import annotations

import itertools

import pytest
from dragoman.fleet.cel import fleeteval
from dragoman.fleet.cel.fleeteval import DeviceIndex

DRIVER = "gpu.nvidia.com"

ATTRIBUTE_TABLES = [
    {},
    {"model": {"string": "H100"}},
    {f"{DRIVER}/model": {"string": "H100"}},
    {"model": {"string": "H100"}, f"{DRIVER}/model": {"string": "A100"}},
    {f"{DRIVER}/model": {"string": "A100"}, "model": {"string": "H100"}},
    {"resource.kubernetes.io/model": {"int": 3}, "memory": {"bool": True}},
    {"model": {"version": "1.2.3"}},
]
CAPACITY_TABLES = [
    {},
    {"memory": {"value": "80Gi"}},
    {"memory": "40Gi"},
    {f"{DRIVER}/memory": {"value": "10Gi"}},
    {"memory": {"value": "0"}, f"{DRIVER}/memory": {"value": "1"}},
    {"resource.kubernetes.io/model": {"value": "2"}},
    {"resource.kubernetes.io/memory": 0, "memory": 0},
]
READS = [
    (DRIVER, "model"),
    (DRIVER, "memory"),
    (DRIVER, "absent"),
    ("resource.kubernetes.io", "model"),
    ("resource.kubernetes.io", "memory"),
]


def _slices(driver_of) -> list[dict]:
    devices = [
        {"name": f"d{i}", "attributes": a, "capacity": c}
        for i, (a, c) in enumerate(itertools.product(ATTRIBUTE_TABLES, CAPACITY_TABLES))
    ]
    return [
        {
            "metadata": {"name": f"s{k}"},
            "spec": {
                "driver": driver_of(k),
                "pool": {"name": f"p{k}", "generation": 1, "resourceSliceCount": 1},
                "nodeName": f"n{k}",
                "devices": devices,
            },
        }
        for k in range(2)
    ]


@pytest.mark.parametrize("read", READS)
@pytest.mark.parametrize("drivers", ["one driver", "two drivers"])
def test_plain_parts_read_as_the_loop_reads(read, drivers, monkeypatch):
    index = DeviceIndex(_slices(lambda k: DRIVER if drivers == "one driver" or k == 0 else "other.example.com"))
    n = len(index)
    assert n == 2 * len(ATTRIBUTE_TABLES) * len(CAPACITY_TABLES)
    assert all(index._plain_range(0, n)), "every device of the table is plain"
    fast = index._parts(0, n, read)
    monkeypatch.setattr(fleeteval, "_plain_parts", lambda *a: None)
    assert fast == index._parts(0, n, read)
