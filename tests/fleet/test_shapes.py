"""The shape checks' fast path (fleet/shapes.fits, SHAPES compiled to one function per kind) gives the walk's answer on
every object: the same objects admitted, the same first field named; and the LIST decoder's once-per-shared-part
checks admit exactly what a check of each whole item admits."""

from __future__ import annotations

import copy
import json
import random

import pytest
from dragoman.fleet import shapes
from dragoman.fleet.cluster import Cluster
from dragoman.fleet.projection import PodListDecoder, Projection
from dragoman.sim.scenarios import DEMO_PATH, load_scenario
from dragoman.sim.scenarios.scale import generate_envelope

SMALL = dict(nodes=20, gpu_nodes=10, pods=400, gpu_pods=40, job_pods=30)
# What a hostile server can put anywhere: every JSON type, and the odd ones Python's json reads.
HOSTILE = [None, "s", 7, -1, 2**70, 1.5, float("nan"), True, False, [], ["x"], [None], [3], {}, {"a": 1}, {"a": None}]


def _samples() -> list[dict]:
    objs = json.loads(json.dumps(load_scenario(DEMO_PATH) + generate_envelope(**SMALL)))
    out, seen = [], {}
    for o in objs:
        # A few of each kind and of each pod family (GPU, DaemonSet, Job, Deployment pods differ in shape).
        owner = ((o.get("metadata") or {}).get("ownerReferences") or [{}])[0].get("kind")
        key = (o["kind"], owner, bool((o.get("spec") or {}).get("resourceClaims")))
        if seen.get(key, 0) < 2:
            seen[key] = seen.get(key, 0) + 1
            out.append(o)
    return out


def _positions(value, path=()):
    """Every place in a decoded object a value sits: (path of keys and indexes)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*path, k)
            yield from _positions(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield (*path, i)
            yield from _positions(v, (*path, i))


def _set(obj, path, value):
    for p in path[:-1]:
        obj = obj[p]
    obj[path[-1]] = value


def test_every_kind_compiles_and_the_fleets_fit() -> None:
    for o in _samples():
        assert shapes.fits(o["kind"])(o), o["metadata"]["name"]
        assert shapes.shape_problem(o) is None and shapes.shape_problem_walk(o) is None


def test_the_fast_path_answers_as_the_walk_on_every_mutation_of_every_field() -> None:
    rng = random.Random(21)
    checked = broken = 0
    for sample in _samples():
        positions = list(_positions(sample))
        for path in positions:
            # Every position with a few hostile values; the fields shapes.py names are all among the positions.
            for value in rng.sample(HOSTILE, 4):
                obj = copy.deepcopy(sample)
                _set(obj, path, value)
                walk = shapes.shape_problem_walk(obj)
                # On decoded JSON the compiled check is exactly the walk's verdict (stricter would only cost time)...
                if path != ("kind",):  # the kind itself is checked before its rules are chosen
                    assert shapes.fits(sample["kind"])(obj) == (walk is None), (sample["kind"], path, value)
                # ...and the sentence is the walk's.
                assert shapes.shape_problem(obj) == walk, (sample["kind"], path, value)
                checked += 1
                broken += walk is not None
    assert checked > 10_000 and broken > 1_000, (checked, broken)  # both answers exercised, many times


@pytest.mark.parametrize(
    "kind, path, value",
    [
        ("Pod", ("spec", "containers", 0, "resources", "requests", "cpu"), ["1"]),
        ("Pod", ("metadata", "labels", "app"), 1),
        ("Pod", ("spec", "priority"), True),
        ("Node", ("status", "capacity", "nvidia.com/gpu"), {"v": 8}),
        ("Node", ("metadata", "labels"), ["a"]),
        ("Node", ("status", "conditions", 0), "Ready"),
        ("ResourceSlice", ("spec", "devices", 0, "attributes", "productName", "string"), 3),
        ("ResourceSlice", ("spec", "pool", "generation"), 1.0),
    ],
)
def test_a_bad_field_is_named_the_same_way(kind: str, path: tuple, value) -> None:
    sample = copy.deepcopy(
        next(o for o in _samples() if o["kind"] == kind and _has(o, path if isinstance(path[-1], int) else path[:-1]))
    )
    _set(sample, path, value)
    problem = shapes.shape_problem(sample)
    assert problem is not None and problem == shapes.shape_problem_walk(sample)
    assert ".".join(str(p) for p in path if not isinstance(p, int)).split(".")[0] in problem


def _has(obj, path) -> bool:
    for p in path:
        try:
            obj = obj[p]
        except (KeyError, IndexError, TypeError):
            return False
    return True


def _admit(items: list[dict]) -> tuple[list[str], dict[str, str]]:
    cluster = Cluster.__new__(Cluster)  # only admit's own state: the notes
    cluster.malformed, cluster.malformed_count = {}, 0
    cluster._who = lambda: "test"
    good = cluster.admit("/api/v1/pods", {"kind": "PodList"}, items)
    return [p["metadata"]["name"] for p in good], cluster.malformed


def test_the_decoders_once_per_part_checks_admit_what_whole_checks_admit() -> None:
    pods = [o for o in json.loads(json.dumps(generate_envelope(**SMALL))) if o["kind"] == "Pod"]
    cpu = [p for p in pods if p["metadata"]["name"].startswith("svc-")]
    rng = random.Random(7)
    bad = []
    # Wrong types inside the parts the decoder shares between pods (labels, owner, containers, tolerations,
    # conditions), in the first pod of a template and in a later one, so a part already seen fine is seen bad.
    for i, (path, value) in enumerate(
        [
            (("metadata", "labels", "app"), 3),
            (("metadata", "ownerReferences", 0, "name"), ["x"]),
            (("spec", "containers", 0, "image"), 1),
            (("spec", "containers", 0, "resources", "requests", "cpu"), None),
            (("spec", "tolerations"), "all"),
            (("status", "conditions", 0, "type"), False),
            (("spec", "nodeSelector"), ["a"]),
            (("spec", "nodeName"), 5),
        ]
    ):
        victim = cpu[rng.randrange(len(cpu))] if i % 2 else cpu[0]
        if _has(victim, path[:-1]):
            _set(victim, path, value)
            bad.append(victim["metadata"]["name"])
    assert len(bad) >= 6
    raw = json.dumps({"kind": "PodList", "items": pods}).encode()
    decoder = PodListDecoder()
    projected = decoder(raw)["items"]
    assert decoder.projected > 200
    assert sum(1 for p in projected if getattr(p, "shapes_checked", False)) >= decoder.projected - len(bad)
    assert all(isinstance(p, Projection) for p in projected if getattr(p, "shapes_checked", False))
    fast_names, fast_notes = _admit(projected)
    plain_names, plain_notes = _admit(json.loads(raw)["items"])
    assert fast_names == plain_names and not set(bad) & set(fast_names)
    assert fast_notes == plain_notes and len(fast_notes) == len(set(bad))
