"""fleet/k8s/, the one home of the node-affinity, toleration and label-selector rules, against v1.37.2's answers
(k8s.io/component-helpers@v0.37.2 nodeaffinity over apimachinery labels.Requirement; core/v1 toleration.go)."""

from __future__ import annotations

import pytest
from dragoman.fleet import k8s

NODE = {"metadata": {"name": "gpu-01", "labels": {"gpu-count": "8", "zone": "a", "pool": "h100"}}}


def _pod(*exprs: dict, fields: tuple[dict, ...] = ()) -> dict:
    term: dict = {"matchExpressions": list(exprs)}
    if fields:
        term["matchFields"] = list(fields)
    return {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    }


def _both(spec: dict, node: dict = NODE) -> bool:
    """The client's and the simulator's answers, which must agree."""
    client, sim = k8s.pod_matches_node(spec, node), k8s.compile_node_filter(spec)(node)
    assert client == sim == k8s.pod_matches_node(spec, node)
    return client


@pytest.mark.parametrize(
    ("values", "want"),
    [(["a"], True), (["b", "a"], True), (["b"], False), ([], False)],  # In with no values is refused: no match
)
def test_in(values: list[str], want: bool) -> None:
    assert _both(_pod({"key": "zone", "operator": "In", "values": values})) is want


def test_in_on_a_missing_label_matches_nothing() -> None:
    assert _both(_pod({"key": "rack", "operator": "In", "values": ["1"]})) is False


@pytest.mark.parametrize(
    ("key", "values", "want"), [("zone", ["b"], True), ("zone", ["a"], False), ("rack", ["1"], True)]
)
def test_not_in(key: str, values: list[str], want: bool) -> None:
    assert _both(_pod({"key": key, "operator": "NotIn", "values": values})) is want


def test_not_in_with_no_values_is_refused() -> None:
    # labels.NewRequirement: "values set can't be empty" — the term fails although NotIn {} would hold.
    assert _both(_pod({"key": "rack", "operator": "NotIn", "values": []})) is False


@pytest.mark.parametrize(("key", "want"), [("zone", True), ("rack", False)])
def test_exists(key: str, want: bool) -> None:
    assert _both(_pod({"key": key, "operator": "Exists"})) is want


@pytest.mark.parametrize(("key", "want"), [("zone", False), ("rack", True)])
def test_does_not_exist(key: str, want: bool) -> None:
    assert _both(_pod({"key": key, "operator": "DoesNotExist"})) is want


def test_exists_with_values_is_refused() -> None:
    assert _both(_pod({"key": "zone", "operator": "Exists", "values": ["a"]})) is False


@pytest.mark.parametrize(
    ("op", "values", "want"),
    [
        ("Gt", ["7"], True),
        ("Gt", ["8"], False),
        ("Lt", ["9"], True),
        ("Lt", ["8"], False),
        ("Gt", ["-1"], True),
        ("Gt", ["+7"], True),  # strconv.ParseInt takes a sign
        # Several values: labels.NewRequirement refuses the requirement, so the term matches nothing — even when
        # the first value alone would match (the client used to compare with values[0] and say yes).
        ("Gt", ["7", "100"], False),
        ("Lt", ["9", "1"], False),
        ("Gt", [], False),
        # Not an int64 in ParseInt's sense: Python's int() would take these.
        ("Gt", [" 7"], False),
        ("Gt", ["7_0"], False),
        ("Gt", ["٧"], False),  # an Arabic-Indic seven
        ("Gt", ["9223372036854775808"], False),  # one past int64
        ("Gt", ["7.0"], False),
    ],
)
def test_gt_lt(op: str, values: list[str], want: bool) -> None:
    assert _both(_pod({"key": "gpu-count", "operator": op, "values": values})) is want


@pytest.mark.parametrize(("label", "want"), [("8", True), ("eight", False), ("08", True), (" 8", False)])
def test_gt_reads_the_label_as_int64(label: str, want: bool) -> None:
    node = {"metadata": {"name": "n", "labels": {"gpu-count": label}}}
    assert _both(_pod({"key": "gpu-count", "operator": "Gt", "values": ["7"]}), node) is want


def test_gt_on_a_missing_label_matches_nothing() -> None:
    assert _both(_pod({"key": "rack", "operator": "Gt", "values": ["0"]})) is False


def test_unknown_operator_fails_the_term_and_other_terms_still_count() -> None:
    bad = {"matchExpressions": [{"key": "zone", "operator": "Foo", "values": ["a"]}]}
    good = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    spec = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [bad]}}}
    }
    assert _both(spec) is False
    spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"].append(good)
    assert _both(spec) is True


@pytest.mark.parametrize(
    ("op", "values", "want"),
    [("In", ["gpu-01"], True), ("In", ["gpu-02"], False), ("NotIn", ["gpu-02"], True), ("In", ["gpu-01", "x"], False)],
)
def test_match_fields_on_the_node_name(op: str, values: list[str], want: bool) -> None:
    spec = _pod(fields=({"key": "metadata.name", "operator": op, "values": values},))
    spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0].pop(
        "matchExpressions"
    )
    assert _both(spec) is want


def test_an_empty_term_matches_nothing_and_node_selector_is_anded() -> None:
    spec = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}}}
    }
    assert _both(spec) is False
    assert _both({"nodeSelector": {"zone": "a"}}) is True
    assert (
        _both({"nodeSelector": {"zone": "a"}, **_pod({"key": "pool", "operator": "In", "values": ["a100"]})}) is False
    )


@pytest.mark.parametrize(
    ("toleration", "want"),
    [
        ({"key": "gpu", "operator": "Equal", "value": "busy", "effect": "NoSchedule"}, True),
        ({"key": "gpu", "value": "busy"}, True),  # "" operator is Equal, "" effect is any
        ({"key": "gpu", "operator": "Equal", "value": "idle"}, False),
        ({"key": "gpu", "operator": "Exists"}, True),
        ({"operator": "Exists"}, True),  # empty key + Exists: every taint
        ({"value": "busy"}, True),  # empty key + Equal: the values decide (a device request may hold one)
        ({"value": "idle"}, False),
        ({"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "other", "operator": "Exists"}, False),
        ({"key": "gpu", "operator": "Gt", "value": "1"}, False),  # the comparison operators' gate is off
    ],
)
def test_tolerates(toleration: dict, want: bool) -> None:
    taint = {"key": "gpu", "value": "busy", "effect": "NoSchedule"}
    assert k8s.tolerates(toleration, taint) is want
    assert k8s.tolerations_tolerate([toleration], taint) is want


@pytest.mark.parametrize(
    ("taint", "daemon_tolerates"),
    [
        ({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}, True),  # a cordon
        ({"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}, True),
        ({"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}, True),
        ({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}, False),  # an admin's taint
    ],
)
def test_a_daemon_pod_tolerates_what_the_daemonset_controller_adds(taint: dict, daemon_tolerates: bool) -> None:
    """The client's drain/cordon reasoning and the simulated DaemonSet controller see the same daemon pod."""
    from dragoman.sim.controllers import daemonsets

    node = {"metadata": {"name": "n"}, "spec": {"taints": [taint]}}
    assert k8s.untolerated_taints({}, node) == [taint]
    assert (k8s.untolerated_taints({}, node, daemonset=True) == []) is daemon_tolerates
    sim_tolerations = daemonsets.daemon_tolerations({})
    assert k8s.first_untolerated_taint([taint], sim_tolerations) is (None if daemon_tolerates else taint)


@pytest.mark.parametrize(
    ("obj", "key"),
    [
        ({"metadata": {"namespace": "ml", "name": "p"}}, ("ml", "p")),
        ({"metadata": {"name": "n1"}}, ("", "n1")),  # cluster-scoped
        ({"metadata": {"namespace": None, "name": "n1"}}, ("", "n1")),
        ({}, ("", "")),
    ],
)
def test_key_of(obj: dict, key: tuple) -> None:
    """How the client's stores and the simulator index every object."""
    assert k8s.key_of(obj) == key


def test_label_selector() -> None:
    labels = {"app": "x", "tier": "gpu"}
    assert k8s.match_label_selector({}, labels) is True
    assert k8s.match_label_selector(None, labels) is False
    assert k8s.match_label_selector({"matchLabels": {"app": "x"}}, labels) is True
    sel = {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["cpu"]}]}
    assert k8s.match_label_selector(sel, labels) is True


@pytest.mark.parametrize(
    ("version", "bridged"),
    [
        ("v1.36.0", True),
        ("v1.37.2", True),
        ("v1.35.4-eks-1a2b", False),
        ("v1.29", False),
        ("v2.0.1", True),
        ("", None),
        ("kubelet", None),
        (None, None),
    ],
)
def test_a_kubelets_bridge_is_read_from_its_version_alike_by_the_diagnosis_the_preflight_and_the_simulator(
    version, bridged
) -> None:
    from dragoman.actions.bridge_preflight import _kubelet_ok
    from dragoman.fleet.k8s.kubelet import has_bridge
    from dragoman.sim.controllers.admission import has_bridge as sim_admits

    assert has_bridge(version) is bridged
    node = {"status": {"nodeInfo": {"kubeletVersion": version}}}
    assert sim_admits(node) is (bridged is not False)  # the simulated kubelet takes an unreadable version as bridged
    assert _kubelet_ok(version) is (bridged is True)  # a write's gate does not


def _outcome(check, *args) -> object:
    try:
        return check(*args)
    except Exception as exc:  # noqa: BLE001 - a malformed spec must fail alike on both paths
        return type(exc)


def test_the_compiled_node_filter_answers_as_pod_matches_node_on_a_table_of_specs_and_nodes() -> None:
    """compile_node_filter reads the required terms once (well-formedness, matchFields values) and then matches each
    node: on every spec of a generated table, well-formed or not, and every node, named or not, it answers (or fails)
    as pod_matches_node reads term by term."""
    import itertools
    import random

    rng = random.Random(29)
    exprs = [
        {"key": "zone", "operator": "In", "values": ["a", "b"]},
        {"key": "zone", "operator": "NotIn", "values": ["a"]},
        {"key": "rack", "operator": "NotIn", "values": ["1"]},
        {"key": "pool", "operator": "Exists"},
        {"key": "rack", "operator": "DoesNotExist"},
        {"key": "gpu-count", "operator": "Gt", "values": ["4"]},
        {"key": "gpu-count", "operator": "Lt", "values": ["4"]},
        {"key": "gpu-count", "operator": "Gt", "values": ["x"]},
        {"key": "zone", "operator": "In", "values": []},
        {"key": "zone", "operator": "Exists", "values": ["a"]},
        {"key": "zone", "operator": "Near", "values": ["a"]},
    ]
    fields = [
        {"key": "metadata.name", "operator": "In", "values": ["gpu-01"]},
        {"key": "metadata.name", "operator": "NotIn", "values": ["gpu-01"]},
        {"key": "metadata.uid", "operator": "In", "values": [""]},
        {"key": "metadata.name", "operator": "In", "values": ["a", "b"]},
        {"key": "metadata.name", "operator": "Exists"},
        {"key": "metadata.name", "operator": "In", "values": {"gpu-01": 1}},
    ]
    malformed: list = [
        {"nodeSelectorTerms": ["not a term"]},
        {"nodeSelectorTerms": [{"matchExpressions": {"key": "zone"}}]},
        {"nodeSelectorTerms": [{"matchExpressions": ["zone"]}]},
        {"nodeSelectorTerms": "zone"},
        {},
        ["not a selector"],
    ]
    nodes = [
        NODE,
        {"metadata": {"name": "gpu-02", "labels": {"zone": "b", "gpu-count": "2", "rack": "1"}}},
        {"metadata": {"labels": {"zone": "a", "pool": "h100"}}},
        {"metadata": {"name": "gpu-01"}},
        {},
    ]
    specs: list[dict] = [{}]
    for _ in range(400):
        terms = []
        for _ in range(rng.randint(0, 3)):
            term: dict = {}
            if rng.random() < 0.8:
                term["matchExpressions"] = rng.sample(exprs, rng.randint(0, 3))
            if rng.random() < 0.4:
                term["matchFields"] = rng.sample(fields, rng.randint(0, 2))
            terms.append(term)
        required: object = {"nodeSelectorTerms": terms}
        if rng.random() < 0.05:
            required = rng.choice(malformed)
        spec: dict = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}}
        if rng.random() < 0.3:
            spec["nodeSelector"] = rng.choice([{"zone": "a"}, {"pool": "h100", "zone": "a"}, {"zone": "c"}])
        specs.append(spec)
    specs += [{"nodeSelector": {"zone": "a"}}, {"affinity": {"nodeAffinity": {}}}]
    answers = set()
    for spec, node in itertools.product(specs, nodes):
        want = _outcome(k8s.pod_matches_node, spec, node)
        assert _outcome(lambda s, n: k8s.compile_node_filter(s)(n), spec, node) == want, (spec, node)
        answers.add(want if isinstance(want, bool) else "raised")
    assert answers == {True, False, "raised"}
