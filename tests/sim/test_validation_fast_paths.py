"""The validation's fast paths give the answers of the readings they skip (sim/api/validation): the name rules
answered from memory (fields._remembered) and a device's plain attributes (resource._plain_attributes). Each is
compared with the rule or reading it stands in front of, on a table of well-formed and broken values."""

from __future__ import annotations

from typing import Any

import pytest
from dragoman.fleet import k8s
from dragoman.sim.api.validation import fields, resource

RULES = [
    (fields.dns1123_label_errors, k8s.is_dns1123_label),
    (fields.dns1123_subdomain_errors, k8s.is_dns1123_subdomain),
    (fields.qualified_name_errors, k8s.is_qualified_name),
    (fields.label_value_errors, k8s.is_label_value),
]
STRINGS = [
    "gpu-0",
    "Gpu",
    "a.b",
    "-x",
    "",
    "x" * 64,
    "x" * 300,
    "nvidia.com/gpu",
    "a/b/c",
    "/x",
    "é",
    "kubernetes.io/x",
]


class Text(str):
    """A str subclass: not kept in memory (the rule answers it itself)."""


def _answer(rule: Any, value: Any) -> Any:
    try:
        return rule(value)
    except (TypeError, AttributeError, ValueError) as exc:  # the same error, word for word
        return (type(exc), str(exc))


@pytest.mark.parametrize(("remembered", "rule"), RULES)
def test_a_remembered_rule_answers_as_the_rule_every_time(remembered: Any, rule: Any) -> None:
    for value in [*STRINGS, *STRINGS, Text("Bad_"), 5, None, ["a"]]:
        assert _answer(remembered, value) == _answer(rule, value), value


@pytest.mark.parametrize(("remembered", "rule"), RULES)
def test_a_remembered_answer_is_a_new_list_each_time(remembered: Any, rule: Any) -> None:
    first = remembered("Bad_Name!")
    assert first == rule("Bad_Name!") and first
    first.append("changed by a caller")
    assert remembered("Bad_Name!") == rule("Bad_Name!")


def test_a_full_memory_is_emptied_and_still_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fields, "_REMEMBERED", 3)
    remembered = fields._remembered(k8s.is_dns1123_label)
    for value in [*STRINGS, *STRINGS]:
        assert remembered(value) == k8s.is_dns1123_label(value)


ATTRIBUTES = [
    {},
    {"type": {"string": "gpu"}, "uuid": {"string": "GPU-1"}, "driverVersion": {"version": "580.65.6"}},
    {"cc": {"version": "9.0.0"}, "n": {"int": 3}, "b": {"bool": True}, "s": {"strings": ["a"]}},
    {"resource.kubernetes.io/pciBusID": {"string": "0000:00:00.0"}},
    {"long": {"string": "x" * 65}},
    {"long": {"string": Text("x" * 65)}},
    {"long": {"version": "1.0.0-" + "x" * 64}},
    {"v": {"version": "9.0"}},
    {"v": {"version": 9}},
    {"none": {}},
    {"two": {"string": "a", "int": 1}},
    {"other": {"number": 1}},
    {"notmap": "gpu"},
    {"Bad Name": {"string": "x"}},
    {"a/b/c": {"string": "x"}},
    {"x" * 33: {"string": "x"}},
    {"ok": {"string": "x"}, "bad!": {"string": "x" * 70}},
    {"s": {"string": 5}},
]


@pytest.mark.parametrize("attributes", ATTRIBUTES)
def test_plain_attributes_take_the_fast_path_with_the_readings_answer(
    attributes: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    device = {"name": "gpu-0", "attributes": attributes, "capacity": {"memory": {"value": "80Gi"}}}
    fast = resource._device_errors(device, "spec.devices[0]")
    monkeypatch.setattr(resource, "_plain_attributes", lambda attributes: False)
    assert fast == resource._device_errors(device, "spec.devices[0]")
    assert resource._plain_attributes(attributes) is False  # the patch
    monkeypatch.undo()
    assert resource._plain_attributes(attributes) == (not fast)


def test_a_non_mapping_of_attributes_is_the_readings_to_refuse() -> None:
    assert resource._plain_attributes(["a"]) is False
    with pytest.raises(AttributeError):
        resource._device_errors({"name": "g", "attributes": ["a"]}, "spec.devices[0]")
