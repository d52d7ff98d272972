"""Decoding a body into a built-in type as kube-apiserver does (sim/decode.py): each wrong JSON type is the server's
`cannot unmarshal` sentence naming the Go field, unknown fields are dropped (or refused under Strict), quantities are
stored canonical. The walk works from per-schema plans made once (a fleet's load meets the same fields millions of
times); this table holds what the walk answered before the plans, so the plans change nothing but the time."""

from __future__ import annotations

import copy

import msgspec
import pytest
from dragoman.sim.decode import DecodeError, clean, decode


def _pod(**at: object) -> dict:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 2}}}]},
    }
    for path, value in at.items():
        *parents, last = path.split("/")
        cur: object = pod
        for k in parents:
            cur = cur[int(k)] if isinstance(cur, list) else cur[k]  # type: ignore[index]
        if isinstance(cur, list):
            cur[int(last)] = value
        else:
            cur[last] = value  # type: ignore[index]
    return pod


def _slice(attributes: dict) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "d",
            "devices": [{"name": "g", "attributes": attributes, "capacity": {"memory": {"value": 80}}}],
        },
    }


FIELD = "json: cannot unmarshal {} into Go struct field {} of type {}"

REFUSED = [
    (_pod(**{"metadata/name": 5}), FIELD.format("number", "ObjectMeta.metadata.name", "string")),
    (_pod(**{"metadata/labels": {"app": 5}}), FIELD.format("number", "ObjectMeta.metadata.labels[app]", "string")),
    (_pod(**{"metadata/labels": ["a"]}), FIELD.format("array", "ObjectMeta.metadata.labels", "map[string]string")),
    (_pod(**{"spec/containers": {}}), FIELD.format("object", "PodSpec.spec.containers", "[]struct")),
    (
        _pod(**{"spec/containers/0/resources/limits": {"cpu": 0.5, "x": True}}),
        FIELD.format("bool", "ResourceRequirements.spec.containers[0].resources.limits[x]", "resource.Quantity"),
    ),
    (
        _pod(**{"spec/terminationGracePeriodSeconds": 3.5}),
        FIELD.format("number", "PodSpec.spec.terminationGracePeriodSeconds", "int64"),
    ),
    (_pod(**{"spec/hostNetwork": "yes"}), FIELD.format("string", "PodSpec.spec.hostNetwork", "bool")),
    (
        _pod(**{"spec/containers/0/ports": [{"containerPort": "80"}]}),
        FIELD.format("string", "ContainerPort.spec.containers[0].ports[0].containerPort", "int32"),
    ),
    (
        _pod(**{"spec/containers/0/livenessProbe": {"httpGet": {"port": True}}}),
        FIELD.format("bool", "HTTPGetAction.spec.containers[0].livenessProbe.httpGet.port", "intstr.IntOrString"),
    ),
    (_pod(**{"spec/overhead": {"cpu": [1]}}), FIELD.format("array", "PodSpec.spec.overhead[cpu]", "resource.Quantity")),
    (
        _slice({"b": {"string": 2}}),
        FIELD.format("number", "DeviceAttribute.spec.devices[0].attributes[b].string", "string"),
    ),
    (
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": 1}},
        FIELD.format("number", "ConfigMap.data[k]", "string"),
    ),
]


@pytest.mark.parametrize(("obj", "message"), REFUSED)
@pytest.mark.parametrize("strict", [False, True])
def test_a_wrong_json_type_is_the_servers_sentence_naming_the_go_field(obj: dict, message: str, strict: bool) -> None:
    kind, version = obj["kind"], obj["apiVersion"].rsplit("/", 1)[-1]
    with pytest.raises(DecodeError) as err:
        decode(obj["kind"], obj["apiVersion"], copy.deepcopy(obj), strict)
    assert str(err.value) == f'{kind} in version "{version}" cannot be handled as a {kind}: {message}'


def test_unknown_fields_are_dropped_and_named_and_strict_refuses_them() -> None:
    extra = {"spec/bogus": 1, "metadata/extra": {"a": 1}, "zzz": 1, "spec/containers/0/env": [{"name": "A", 7: "x"}]}
    pod = _pod(**copy.deepcopy(extra))
    unknown = decode("Pod", "v1", pod, strict=False)
    assert unknown == ["metadata.extra", "spec.containers[0].env[0].7", "spec.bogus", "zzz"]
    assert "bogus" not in pod["spec"] and "zzz" not in pod and pod["spec"]["containers"][0]["env"] == [{"name": "A"}]
    with pytest.raises(DecodeError) as err:
        decode("Pod", "v1", _pod(**copy.deepcopy(extra)), strict=True)
    assert str(err.value).endswith(
        'strict decoding error: unknown field "metadata.extra", unknown field "spec.containers[0].env[0].7", '
        'unknown field "spec.bogus", unknown field "zzz"'
    )
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "x"},
        "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {"type": "object", "x-anything": [1]}}}]},
    }
    assert decode(crd["kind"], crd["apiVersion"], crd, strict=False) == [
        "spec.versions[0].schema.openAPIV3Schema.x-anything"
    ]


def test_values_are_stored_as_the_server_stores_them() -> None:
    pod = _pod(
        **{
            "spec/containers/0/resources/limits": {"cpu": 0.5, "memory": 1.0, "nvidia.com/gpu": 2, "x": "3Gi"},
            "spec/terminationGracePeriodSeconds": 3.0,
            "spec/priority": 1e3,
            "spec/containers/0/livenessProbe": {"httpGet": {"port": "http"}},
            "metadata/annotations": None,
        }
    )
    assert decode("Pod", "v1", pod, strict=True) == []
    limits = pod["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"cpu": "500m", "memory": "1", "nvidia.com/gpu": "2", "x": "3Gi"}
    assert pod["spec"]["terminationGracePeriodSeconds"] == 3 and isinstance(
        pod["spec"]["terminationGracePeriodSeconds"], int
    )
    assert pod["spec"]["priority"] == 1000 and pod["metadata"]["annotations"] is None
    sl = _slice({"a": {"int": 1.0}})
    decode(sl["kind"], sl["apiVersion"], sl, strict=True)
    device = sl["spec"]["devices"][0]
    assert device["attributes"]["a"]["int"] == 1 and device["capacity"]["memory"]["value"] == "80"


# The fast verdict (decode.clean): msgspec's answer from an object's msgpack bytes must never call an object clean that
# the walk would refuse, change or warn about; the scenario check skips the walk on it (sim/scenario._api_problem).
def _walk_leaves_unchanged(obj: dict) -> bool:
    copied = msgspec.msgpack.decode(msgspec.msgpack.encode(obj))
    try:
        unknown = decode(obj["kind"], obj["apiVersion"], copied, strict=False)
    except DecodeError:
        return False
    # bytes, not ==: 2.0 == 2, but the walk storing 2 for 2.0 is a change
    return not unknown and msgspec.msgpack.encode(copied) == msgspec.msgpack.encode(obj)


CHANGED = [
    _pod(**{"spec/containers/0/resources/limits": {"cpu": 0.5}}),  # a number quantity is stored as a string
    _pod(**{"spec/containers/0/resources/limits": {"cpu": 2}}),
    _pod(**{"spec/terminationGracePeriodSeconds": 3.0}),  # an integral float is stored as an integer
    _pod(**{"spec/bogus": 1}),  # an unknown field is dropped
    _pod(**{"zzz": 1}),
    _pod(**{"spec/containers/0/env": [{"name": "A", 7: "x"}]}),  # a key that is not a string is unknown
    _pod(**{"metadata/labels": {1: "x"}}),  # a map key that is not a string is refused
    _slice({"a": {"int": 1.0}}),
]
LIMITS = "spec/containers/0/resources/limits"
CLEAN = [
    _pod(**{LIMITS: {"nvidia.com/gpu": "2"}}),
    _pod(**{"spec/containers/0/resources": None, "metadata/annotations": None}),  # null is left as it is, anywhere
    _pod(**{LIMITS: {"cpu": "1", "x": None}, "spec/containers/0/livenessProbe": {"httpGet": {"port": "http"}}}),
    _pod(**{LIMITS: {}, "spec/containers/0/livenessProbe": {"httpGet": {"port": 8080}}, "spec/priority": 5}),
    _pod(**{LIMITS: None, "spec/overhead": {}, "spec/tolerations": [None, {"key": "k", "tolerationSeconds": 5}]}),
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "d",
            "devices": [
                {
                    "name": "g",
                    "attributes": {
                        "a": {"int": 1},
                        "b": {"string": "x"},
                        "c": {"version": "1.0.0"},
                        "d": {"bool": False},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                }
            ],
        },
    },
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}, "binaryData": {}},
]


@pytest.mark.parametrize("obj", [o for o, _ in REFUSED] + CHANGED + CLEAN)
def test_the_fast_verdict_calls_clean_exactly_what_the_walk_leaves_unchanged(obj: dict) -> None:
    data = msgspec.msgpack.encode(obj)
    assert clean(obj["kind"], obj["apiVersion"], data) == _walk_leaves_unchanged(obj)


def test_the_fast_verdict_says_clean_only_for_the_expected_cases() -> None:
    assert not any(clean(o["kind"], o["apiVersion"], msgspec.msgpack.encode(o)) for o, _ in REFUSED)
    assert not any(clean(o["kind"], o["apiVersion"], msgspec.msgpack.encode(o)) for o in CHANGED)
    assert all(clean(o["kind"], o["apiVersion"], msgspec.msgpack.encode(o)) for o in CLEAN)


def test_a_kind_whose_schema_contains_itself_takes_the_walk() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "x"},
        "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {"type": "object"}}}]},
    }
    assert not clean(crd["kind"], crd["apiVersion"], msgspec.msgpack.encode(crd))
    assert _walk_leaves_unchanged(crd)


def test_the_fast_verdict_agrees_with_the_walk_on_every_shipped_scenario_object() -> None:
    from dragoman.sim.scenario import load

    objects = load("demo").objects + load_file_objects()
    assert len(objects) > 100
    for obj in objects:
        try:
            data = msgspec.msgpack.encode(obj)
        except (OverflowError, TypeError):
            continue
        assert clean(obj["kind"], obj["apiVersion"], data) == _walk_leaves_unchanged(obj), obj.get("metadata")


def load_file_objects() -> list[dict]:
    from dragoman.sim.scenario import SCENARIO_DIR, load_file

    return [o for f in sorted(SCENARIO_DIR.glob("*.yaml")) for o in load_file(f, validate=False).objects]
