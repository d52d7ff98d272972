"""The diagnosis is linear in devices: at 100,000 devices and a DeviceClass serving nvidia.com/gpu without a
`type == "gpu"` clause (which rebuilt a set of every matched device per device: 20,000 devices took 35 s), the work
is bounded by counting what the rules walk — every device the model yields and every matched id read back — per
device, not by a clock."""

from __future__ import annotations

from collections import defaultdict

import pytest
from dragoman.fleet import nvidia_schema as nvs
from dragoman.fleet.diagnose import diagnose
from dragoman.fleet.model import FleetModel, key_of

DEVICES = 100_000
GPUS_PER_NODE = 8
# Passes the rules may make over the devices (4 today: the rules that read devices walk them once, and each class
# evaluation reads its matches back): a quadratic rule makes DEVICES passes, not dozens.
PASSES = 12


class _Budget:
    def __init__(self, most: int) -> None:
        self.most = most
        self.spent = 0

    def spend(self, n: int = 1) -> None:
        self.spent += n
        if self.spent > self.most:
            raise AssertionError(f"the diagnosis walked more than {self.most:,} devices or matched ids: not linear")


class _CountedIds(list):
    """A SelectorResult's matched ids whose every read counts against the budget (set(), `in`, iteration)."""

    budget: _Budget

    def __iter__(self):
        for x in list.__iter__(self):
            self.budget.spend()
            yield x

    def __contains__(self, item: object) -> bool:
        self.budget.spend(len(self))
        return list.__contains__(self, item)


def _fleet(devices: int) -> dict[str, dict]:
    hw = nvs.NodeHardware(model=nvs.CATALOG["h100-80gb"], gpu_count=GPUS_PER_NODE)
    objs: list[dict] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "all-nvidia", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {
                "selectors": [{"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}],
                "extendedResourceName": "nvidia.com/gpu",
            },
        }
    ]
    for i in range(devices // GPUS_PER_NODE):
        name = f"node-{i:05d}"
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"pool": f"p{i // 100}", **hw.gfd_labels()}},
                "status": {"capacity": {}, "allocatable": {}},
            }
        )
        objs.extend(nvs.resource_slices_for_node(name, hw, "v0.4.0"))
    by_kind: dict[str, dict] = defaultdict(dict)
    for o in objs:
        by_kind[o["kind"]][key_of(o)] = o
    return by_kind


def test_the_diagnosis_walks_each_device_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    m = FleetModel()
    m.load(_fleet(DEVICES))
    budget = _Budget(PASSES * DEVICES)
    devices = m.devices

    def counted_devices():
        for d in devices():
            budget.spend()
            yield d

    class_matches = m.class_matches

    def counted_matches(name: str):
        res = class_matches(name)
        ids = _CountedIds(res.matched)
        ids.budget = budget
        res.matched = ids
        return res

    monkeypatch.setattr(m, "devices", counted_devices)
    monkeypatch.setattr(m, "class_matches", counted_matches)
    findings = diagnose(m)
    broad = [f for f in findings if f.id == "class-too-broad"]
    assert broad and "all-nvidia" in broad[0].summary
    assert budget.spent >= DEVICES, "the rules did read the devices"
    assert budget.spent <= PASSES * DEVICES
