"""Label selector strings (fleet/k8s/selectors.py), the one parser and matcher the simulator's LIST and WATCH use,
against apimachinery v0.37.2's labels.Parse and Requirement.Matches: a table of (selector, labels, selected?), then
the same table through the embedded simulator's store. tests/controlplane/test_kernel_rules.py asks the real
kube-apiserver the same questions."""

from __future__ import annotations

import pytest
from dragoman.fleet.k8s.selectors import SelectorError, label_selector_matcher, parse_label_requirements
from dragoman.sim.store import Store

# (selector, labels, selected?) — labels.Requirement.Matches; Gt/Lt read the label with strconv.ParseInt(v, 10, 64).
TABLE = [
    ("x=a", {"x": "a"}, True),
    ("x=a", {"x": "b"}, False),
    ("x==a", {"x": "a"}, True),
    ("x!=a", {"x": "a"}, False),
    ("x!=a", {}, True),  # NotEquals holds when the label is missing
    ("x in (a,b)", {"x": "b"}, True),
    ("x in (a,b)", {}, False),
    ("x notin (a,b)", {"x": "c"}, True),
    ("x notin (a,b)", {}, True),
    ("x", {"x": ""}, True),
    ("!x", {"x": ""}, False),
    ("!x", {"y": "1"}, True),
    ("x=", {"x": ""}, True),  # an empty value is a value
    ("x>5", {"x": "10"}, True),
    ("x>5", {"x": "5"}, False),
    ("x<5", {"x": "3"}, True),
    ("x<5", {"x": "007"}, False),  # leading zeros are decimal, not octal
    ("x>5", {}, False),
    # Python's int() reads "1_0" as 10 and " 7" as 7; ParseInt refuses both, so Gt/Lt select nothing.
    ("x>5", {"x": "1_0"}, False),
    ("x<5", {"x": "1_0"}, False),
    ("x>5", {"x": "9223372036854775808"}, False),  # out of int64 range
    ("x>5,y=a", {"x": "6", "y": "a"}, True),
    ("x>5,y=a", {"x": "6", "y": "b"}, False),
]


@pytest.mark.parametrize(("selector", "labels", "want"), TABLE)
def test_the_kernel_matches_as_apimachinery(selector: str, labels: dict, want: bool) -> None:
    matches = label_selector_matcher(selector)
    assert matches is not None
    assert matches(labels) is want


def _cm(name: str, labels: dict) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
    }


def test_the_simulators_list_selects_as_the_kernel() -> None:
    store = Store()
    store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    for i, (_, labels, _) in enumerate(TABLE):
        store.create("configmaps", _cm(f"cm-{i}", labels))
    for selector in sorted({s for s, _, _ in TABLE}):
        listed = {o["metadata"]["name"] for o in store.list("configmaps", "default", selector)}
        want = {f"cm-{i}" for i, (_, labels, _) in enumerate(TABLE) if label_selector_matcher(selector)(labels)}
        assert listed == want, selector
    # The disagreement this kernel ended: x=1_0 is not greater than 5 (the simulator's int() once said it was).
    underscored = f"cm-{TABLE.index(('x>5', {'x': '1_0'}, False))}"
    tens = f"cm-{TABLE.index(('x>5', {'x': '10'}, True))}"
    selected = {o["metadata"]["name"] for o in store.list("configmaps", "default", "x>5")}
    assert tens in selected and underscored not in selected


@pytest.mark.parametrize(
    ("selector", "words"),
    [
        ("x>1_0", "for 'Gt', 'Lt' operators, the value must be an integer"),
        ("x> 7 ", None),  # spaces around the value are the lexer's, not the number's: accepted
        ("x>a", "for 'Gt', 'Lt' operators, the value must be an integer"),
        ("x in ()", None),  # `in ()` is one empty value, accepted
        ("x=a=b", "found '=', expected: ',' or 'end of string'"),
        ("-x=a", "name part must consist of alphanumeric characters"),
    ],
)
def test_the_parser_refuses_what_the_api_server_refuses(selector: str, words: str | None) -> None:
    if words is None:
        assert parse_label_requirements(selector)
        return
    with pytest.raises(SelectorError) as err:
        parse_label_requirements(selector)
    assert words in str(err.value)


def test_an_empty_selector_selects_everything() -> None:
    assert parse_label_requirements("") == [] and label_selector_matcher("  ") is None
