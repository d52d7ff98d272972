"""Property tests: quantity and semver parsing and ordering behave as apimachinery and blang/semver do."""

from __future__ import annotations

from fractions import Fraction

from dragoman.fleet.cel import cel_device, compile_expression
from dragoman.fleet.cel.engine import build_selector, check_expression
from dragoman.fleet.cel.reference import environment
from dragoman.fleet.cel.values import Quantity, Semver, is_quantity, is_semver
from dragoman.fleet.k8s.quantity import QUANTITY_RE
from hypothesis import given, settings
from hypothesis import strategies as st

# cel-python raises the recursion limit when its environment is created; do it before hypothesis watches.
environment()

BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}
SUFFIXES = {**BINARY, **DECIMAL}

suffix = st.sampled_from(sorted(SUFFIXES))
whole = st.integers(min_value=0, max_value=10**12)
quantity_text = st.builds(lambda sign, n, s: (sign, n, s), st.sampled_from(["", "+", "-"]), whole, suffix)


@given(quantity_text)
def test_quantity_value_is_number_times_suffix(parts) -> None:
    sign, n, s = parts
    q = Quantity.parse(f"{sign}{n}{s}")
    expected = n * Fraction(SUFFIXES[s])
    assert q.value == (-expected if sign == "-" else expected)


@given(whole, st.integers(min_value=0, max_value=999), st.sampled_from(["Ki", "Mi", "Gi", "k", "M", "G", ""]))
def test_quantity_decimal_fractions(n, frac, s) -> None:
    q = Quantity.parse(f"{n}.{frac:03d}{s}")
    exact = (n + Fraction(frac, 1000)) * Fraction(SUFFIXES[s])
    # apimachinery keeps nano precision, rounding up.
    assert q.value >= exact and q.value - exact < Fraction(1, 10**9)


@given(st.integers(min_value=0, max_value=2**40), st.sampled_from(sorted(BINARY)))
def test_quantity_equality_across_units(n, s) -> None:
    assert Quantity.parse(f"{n}{s}") == Quantity.parse(str(n * BINARY[s]))


@given(st.lists(quantity_text, min_size=2, max_size=8))
def test_quantity_ordering_is_the_ordering_of_values(items) -> None:
    qs = [Quantity.parse(f"{sign}{n}{s}") for sign, n, s in items]
    for a in qs:
        for b in qs:
            assert a.compare(b) == (a.value > b.value) - (a.value < b.value)
            assert a.compare(b) == -b.compare(a)
    assert [q.value for q in sorted(qs)] == sorted(q.value for q in qs)


@given(st.text(alphabet="0123456789.+-eEinumkKMGTPx ", max_size=10))
def test_is_quantity_only_accepts_the_apimachinery_pattern(text) -> None:
    if is_quantity(text):
        assert QUANTITY_RE.match(text)
        Quantity.parse(text)


ident = st.one_of(
    st.integers(min_value=0, max_value=99).map(str), st.from_regex(r"[a-z][a-z0-9-]{0,5}", fullmatch=True)
)
version = st.tuples(
    st.integers(0, 600),
    st.integers(0, 200),
    st.integers(0, 200),
    st.lists(ident, max_size=3),
    st.lists(st.from_regex(r"[a-z0-9]{1,4}", fullmatch=True), max_size=2),
)


def _text(v) -> str:
    major, minor, patch, pre, build = v
    s = f"{major}.{minor}.{patch}"
    if pre:
        s += "-" + ".".join(pre)
    if build:
        s += "+" + ".".join(build)
    return s


def _precedence(v):
    # SemVer 2.0.0 section 11, written independently of the implementation under test.
    major, minor, patch, pre, _ = v
    if not pre:
        return (major, minor, patch, 1, ())
    ids = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre)
    return (major, minor, patch, 0, ids)


@given(version)
def test_semver_round_trips(v) -> None:
    s = _text(v)
    parsed = Semver.parse(s)
    assert str(parsed) == s
    assert (parsed.major, parsed.minor, parsed.patch) == v[:3]
    assert is_semver(s)


@given(version, version)
def test_semver_ordering_is_semver_precedence(a, b) -> None:
    pa, pb = Semver.parse(_text(a)), Semver.parse(_text(b))
    ka, kb = _precedence(a), _precedence(b)
    assert pa.compare(pb) == (ka > kb) - (ka < kb)
    assert (pa == pb) == (ka == kb)  # build metadata never matters


def test_semver_spec_precedence_example() -> None:
    chain = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
    ]
    parsed = [Semver.parse(x) for x in chain]
    assert all(parsed[i].compare(parsed[i + 1]) == -1 for i in range(len(parsed) - 1))


@given(st.integers(0, 999), st.integers(0, 999))
def test_semver_normalize_pads_and_strips(major, minor) -> None:
    assert Semver.parse(f"v{major}.{minor}", normalize=True) == Semver.parse(f"{major}.{minor}.0")
    assert Semver.parse(f"0{major}.0{minor}.00", normalize=True) == Semver.parse(f"{major}.{minor}.0")
    if major > 0:
        assert not is_semver(f"0{major}.{minor}.0")


@settings(max_examples=30, deadline=None)
@given(quantity_text, quantity_text, version, version)
def test_cel_comparisons_agree_with_python_on_both_engines(qa, qb, va, vb) -> None:
    a, b = f"{qa[0]}{qa[1]}{qa[2]}", f"{qb[0]}{qb[1]}{qb[2]}"
    expr = (
        f'quantity("{a}").compareTo(quantity("{b}")) == {Quantity.parse(a).compare(Quantity.parse(b))} && '
        f'semver("{_text(va)}").compareTo(semver("{_text(vb)}")) == '
        f"{Semver.parse(_text(va)).compare(Semver.parse(_text(vb)))}"
    )
    dev = cel_device("x", {"name": "d"})
    checked, source = check_expression(expr)
    for engine in ("fast", "reference"):
        assert build_selector(expr, checked, source, engine).evaluate(dev).value is True
    assert compile_expression(expr).evaluate(dev).value is True


value = st.one_of(st.booleans(), st.integers(0, 2), st.sampled_from(["0", "1", "H100", "A100"]))
attr = value.map(lambda v: {"bool": v} if isinstance(v, bool) else {"int": v} if isinstance(v, int) else {"string": v})
raw_device = st.fixed_dictionaries(
    {"name": st.just("d")},
    optional={
        "attributes": st.dictionaries(st.sampled_from(["a", "b", "other.example.com/a"]), attr, max_size=3),
        "capacity": st.dictionaries(
            st.sampled_from(["mem", "b"]),
            st.sampled_from(["1Gi", "1024Mi", "2Gi"]).map(lambda q: {"value": q}),
            max_size=2,
        ),
        "allowMultipleAllocations": st.booleans(),
    },
)
DEDUP_EXPRESSIONS = [
    'device.attributes["dra.example.com"].a == true',
    'device.attributes["dra.example.com"].a == 1',
    (
        'device.attributes["dra.example.com"].?a.orValue("none") == "H100" || '
        'device.capacity["dra.example.com"].?mem.orValue(quantity("0")) == quantity("1Gi")'
    ),
    '"a" in device.attributes["dra.example.com"] && !has(device.attributes["dra.example.com"].b)',
    '"other.example.com" in device.attributes && device.allowMultipleAllocations',
    'cel.bind(x, device.attributes["dra.example.com"], x.a == x.?b.orValue(x.a))',
]


@settings(max_examples=40, deadline=None)
@given(st.lists(raw_device, min_size=1, max_size=12))
def test_deduplicated_fleet_results_equal_per_device_results(devices) -> None:
    from dragoman.fleet.cel.fleeteval import evaluate_fleet

    slices = [
        {
            "kind": "ResourceSlice",
            "spec": {"driver": "dra.example.com", "pool": {"name": f"p{i}", "generation": 1}, "devices": [d]},
        }
        for i, d in enumerate(devices)
    ]
    for expr in DEDUP_EXPRESSIONS:
        sel = compile_expression(expr)
        assert sel.attributes_read is not None, expr
        fleet = evaluate_fleet(sel, slices)
        for r, raw in zip(fleet.results, devices):
            direct = sel.evaluate(cel_device("dra.example.com", raw))
            want = "match" if direct.value is True else "error" if direct.error else "no-match"
            assert r.result == want, (expr, raw)
