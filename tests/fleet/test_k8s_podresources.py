"""What a pod requests (fleet/k8s/podresources.py) as component-helpers v0.37.2 resource.PodRequests computes it, and
the quantities and resource names it counts with: table tests, then the client's diagnosis and the simulated
scheduler asked about the same pods (they once disagreed on a GPU sidecar)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from dragoman.fleet.k8s.extended import (
    extended_resource_name_errors,
    is_dra_extended_resource_name,
    is_extended_resource_name,
    is_native_resource,
)
from dragoman.fleet.k8s.podresources import pod_requests
from dragoman.fleet.k8s.quantity import QuantityError, amount, count, parse_quantity
from dragoman.fleet.model import pod_extended_requests
from dragoman.sim.controllers.scheduling import ClusterView, schedule_one

GPU = "nvidia.com/gpu"


def _c(name: str, gpus: int = 0, cpu: str = "", sidecar: bool = False, side: str = "limits") -> dict:
    res: dict = {}
    if gpus:
        res.setdefault(side, {})[GPU] = str(gpus)
    if cpu:
        res.setdefault("requests", {})["cpu"] = cpu
    c = {"name": name, "image": "busybox", "resources": res}
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


def _pod(containers: list[dict], inits: list[dict] = (), **spec) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml", "uid": "u-p"},
        "spec": {"containers": containers, "initContainers": list(inits), **spec},
    }


# (containers, init containers, extra spec, expected requests) — the sidecar KEP's formula:
# max(sum(containers) + sum(sidecars), max over init i of (init_i + sidecars started before i)), then pod-level, then
# overhead.
TABLE = [
    ("one container", [_c("a", 2)], [], {}, {GPU: 2}),
    ("containers add", [_c("a", 2), _c("b", 3)], [], {}, {GPU: 5}),
    ("requests side counts too", [_c("a", 2, side="requests")], [], {}, {GPU: 2}),
    ("a big init container wins", [_c("a", 1)], [_c("i", 4)], {}, {GPU: 4}),
    ("a small init container does not", [_c("a", 4)], [_c("i", 1)], {}, {GPU: 4}),
    ("a sidecar adds to the containers", [_c("a", 8)], [_c("s", 1, sidecar=True)], {}, {GPU: 9}),
    (
        "an init container runs beside the sidecars started before it",
        [_c("a", 1)],
        [_c("s", 2, sidecar=True), _c("i", 3)],
        {},
        {GPU: 5},
    ),
    (
        "but not beside those started after it",
        [_c("a", 1)],
        [_c("i", 3), _c("s", 2, sidecar=True)],
        {},
        {GPU: 3},
    ),
    ("overhead is added", [_c("a", cpu="500m")], [], {"overhead": {"cpu": "100m"}}, {"cpu": 600}),
    (
        "pod-level cpu replaces the containers' sum",
        [_c("a", 1, cpu="1"), _c("b", cpu="1")],
        [],
        {"resources": {"requests": {"cpu": "3"}}},
        {"cpu": 3000, GPU: 1},
    ),
    (
        "pod-level requests default to pod-level limits",
        [_c("a", cpu="1")],
        [],
        {"resources": {"limits": {"cpu": "2"}}},
        {"cpu": 2000},
    ),
    (
        "pod-level resources cannot replace an extended resource",
        [_c("a", 1)],
        [],
        {"resources": {"requests": {GPU: "4"}}},
        {GPU: 1},
    ),
]


@pytest.mark.parametrize(("containers", "inits", "spec", "want"), [t[1:] for t in TABLE], ids=[t[0] for t in TABLE])
def test_pod_requests_as_component_helpers(containers, inits, spec, want) -> None:
    assert pod_requests(_pod(containers, inits, **spec)) == want


@pytest.mark.parametrize(("containers", "inits", "spec", "want"), [t[1:] for t in TABLE], ids=[t[0] for t in TABLE])
def test_the_diagnosis_counts_what_the_scheduler_counts(containers, inits, spec, want) -> None:
    pod = _pod(containers, inits, **spec)
    assert pod_extended_requests(pod) == {k: v for k, v in want.items() if k == GPU}


def _node(gpus: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "gpu-1", "labels": {}},
        "status": {"allocatable": {GPU: str(gpus), "cpu": "64", "memory": "512Gi", "pods": "110"}},
    }


def test_a_gpu_sidecar_is_counted_alike_by_the_diagnosis_and_the_simulated_scheduler() -> None:
    """8 GPUs in the container and 1 in a native sidecar need 9: an 8-GPU node cannot take the pod, and the
    diagnosis must say 9 (it said 8, the largest init container, while the scheduler said Insufficient)."""
    pod = _pod([_c("main", 8)], [_c("proxy", 1, sidecar=True)])
    assert pod_extended_requests(pod) == {GPU: 9}
    decision = schedule_one(pod, ClusterView(nodes=[_node(8)]), "2026-12-05T10:00:00Z")
    assert decision.outcome != "scheduled" and "Insufficient nvidia.com/gpu" in decision.message
    assert schedule_one(pod, ClusterView(nodes=[_node(9)]), "2026-12-05T10:00:00Z").outcome == "scheduled"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1),
        ("500m", Fraction(1, 2)),
        ("64Gi", 64 * 2**30),
        ("1e3", 1000),
        ("1E3", 1000),
        ("1k", 1000),
        ("1.5", Fraction(3, 2)),
        ("+2", 2),
        ("-2", -2),
        (".5", Fraction(1, 2)),
        ("1n", Fraction(1, 10**9)),
        ("0.1n", Fraction(1, 10**9)),  # rounded up to nano, as apimachinery keeps it
    ],
)
def test_quantities_parse_as_apimachinery(text: str, value) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "regular expression"),
        ("1 ", "regular expression"),
        ("1K", "suffix"),
        ("1.2.3", "regular expression"),
        ("abc", "regular expression"),
        ("1_0", "regular expression"),
        ("1e1001", "too large"),
    ],
)
def test_quantities_apimachinery_refuses(text: str, words: str) -> None:
    with pytest.raises(QuantityError) as err:
        parse_quantity(text)
    assert words in str(err.value)


@pytest.mark.parametrize(
    ("name", "value", "want"),
    [
        ("cpu", "500m", 500),
        ("cpu", "1.0001", 1001),
        ("memory", "1Ki", 1024),
        (GPU, "1.5", 2),
        (GPU, 8, 8),
        (GPU, " 8 ", 8),
        (GPU, "bogus", 0),
        (GPU, True, 0),
    ],
)
def test_amounts_round_up_and_a_bad_value_counts_nothing(name: str, value, want: int) -> None:
    assert amount(name, value) == want


def test_counts() -> None:
    assert (count(None), count("8"), count("1k"), count("2Ki"), count("x")) == (0, 8, 1000, 2048, 0)


@pytest.mark.parametrize(
    ("name", "native", "extended", "dra"),
    [
        ("cpu", True, False, False),
        ("hugepages-2Mi", True, False, False),
        ("nvidia.com/gpu", False, True, True),
        ("nvidia.com/mig-1g.10gb", False, True, True),
        ("example.com/foo", False, True, True),
        ("kubernetes.io/foo", True, False, False),
        ("xkubernetes.io/foo", True, False, False),  # any *kubernetes.io/ domain is native (strings.Contains)
        ("deviceclass.resource.kubernetes.io/gpu.nvidia.com", True, False, True),
        ("requests.example.com/foo", False, False, False),
        ("example.com/-bad", False, False, False),  # not a qualified name as requests.<name>
    ],
)
def test_resource_names_as_v1helper(name: str, native: bool, extended: bool, dra: bool) -> None:
    assert (is_native_resource(name), is_extended_resource_name(name), is_dra_extended_resource_name(name)) == (
        native,
        extended,
        dra,
    )


@pytest.mark.parametrize(
    ("name", "first"),
    [
        ("example.com/gpu", None),
        ("gpu", "a name must be a domain-prefixed path, such as 'example.com/my-prop'"),
        ("deviceclass.resource.kubernetes.io/x", 'must not have "kubernetes.io/" domain'),
        ("requests.example.com/x", 'must not have "requests." prefix'),
    ],
)
def test_extended_resource_name_errors_in_the_api_servers_words(name: str, first: str | None) -> None:
    errs = extended_resource_name_errors(name)
    assert (errs[0] if errs else None) == first
