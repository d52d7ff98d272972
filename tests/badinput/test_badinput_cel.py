"""Bad-input corpus: CEL from a fuzzer (random text and random expression trees) into compile_expression, evaluation and
`dragoman cel` — always a CelCompileError or a result, never another exception; and a ResourceSlice of 128 devices with
32 attributes each through the model, the diagnosis, `dragoman check` and `dragoman cel`."""

from __future__ import annotations

import json
import os
import pathlib
import time

import pytest
import yaml
from dragoman.fleet.cel import CelCompileError, EvalOutcome, cel_device, compile_expression
from dragoman.fleet.cel.engine import DEEPER_THAN_DRAGOMAN, NOT_UTF8
from dragoman.fleet.cel.reference import environment
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.badinput.badinput_support import assert_sentence, run_cli

environment()  # cel-python raises the recursion limit once; do it before hypothesis watches.

DOMAIN = "gpu.nvidia.com"
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


def big_slice(devices: int = 128, attributes: int = 32, node: str = "node-big") -> dict:
    def attrs(i: int) -> dict:
        out: dict = {
            "productName": {"string": "NVIDIA H100 80GB HBM3"},
            "type": {"string": "gpu"},
            "driverVersion": {"version": "580.65.6"},
            "index": {"int": i},
        }
        for a in range(attributes - len(out)):
            kind = ("int", "string", "bool", "version")[a % 4]
            value = {"int": a * i, "string": f"value-{a}-{i}-ünï", "bool": bool((a + i) % 2), "version": f"1.{a}.{i}"}[
                kind
            ]
            out[f"attr{a:02d}"] = {kind: value}
        return out

    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-slice"},
        "spec": {
            "driver": DOMAIN,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {"name": f"gpu-{i}", "attributes": attrs(i), "capacity": {"memory": {"value": "80Gi"}}}
                for i in range(devices)
            ],
        },
    }


def node(name: str = "node-big") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"pool": "big", "nvidia.com/gpu.present": "true"}},
        "status": {
            "allocatable": {"cpu": "64"},
            "capacity": {"cpu": "64"},
            "nodeInfo": {"kubeletVersion": "v1.37.1"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


DEVICES = [cel_device(DOMAIN, d) for d in big_slice(8, 32)["spec"]["devices"]]

# Random expression trees over the DRA environment: well-typed and ill-typed alike.
_leaf = st.sampled_from(
    [
        "device.driver",
        f'device.attributes["{DOMAIN}"].productName',
        f'device.attributes["{DOMAIN}"].index',
        f'device.attributes["{DOMAIN}"].attr01',
        f'device.attributes["{DOMAIN}"].missing',
        'device.capacity["gpu.nvidia.com"].memory',
        f'device.attributes["{DOMAIN}"].driverVersion',
        '"gpu"',
        "1",
        "0",
        "-1",
        "2.5",
        "true",
        "false",
        "null",
        "[]",
        "{}",
        '"ü"',
        'quantity("1Gi")',
        'semver("1.2.3")',
        "device",
        "device.attributes",
        "9223372036854775807",
        "b'x'",
        "1u",
    ]
)
_unary = [
    "!{}",
    "-{}",
    "({})",
    "size({})",
    "has({}.x)",
    '{}.startsWith("N")',
    '{}.isGreaterThan(semver("1.0.0"))',
    '{}.compareTo(quantity("1"))',
    "int({})",
    "string({})",
    "{}.orValue(1)",
    "[{}].all(x, x)",
    '{}.matches("[")',
    "{}.exists(k, k == 1)",
    "{}[0]",
    '{}["k"]',
]
_binary = [
    "{} && {}",
    "{} || {}",
    "{} == {}",
    "{} != {}",
    "{} < {}",
    "{} + {}",
    "{} * {}",
    "{} / {}",
    "{} % {}",
    "{} in {}",
    "{} ? {} : {}",
]


def _combine(children):
    return st.one_of(
        st.tuples(st.sampled_from(_unary), children).map(lambda t: t[0].format(t[1])),
        st.tuples(st.sampled_from(_binary), children, children, children).map(
            lambda t: t[0].format(t[1], t[2], t[3]) if t[0].count("{}") == 3 else t[0].format(t[1], t[2])
        ),
    )


expressions = st.recursive(_leaf, _combine, max_leaves=12)


def _compile_or_error(text: str):
    try:
        return compile_expression(text)
    except CelCompileError as exc:
        assert exc.message and isinstance(exc.message, str)
        return None


@FUZZ
@given(st.text(max_size=200))
def test_random_text_compiles_or_is_a_compile_error(text: str) -> None:
    sel = _compile_or_error(text)
    if sel is not None:
        for d in DEVICES:
            assert isinstance(sel.evaluate(d), EvalOutcome)


@FUZZ
@given(expressions)
def test_random_expression_trees_compile_or_fail_cleanly_and_evaluate_to_an_outcome(text: str) -> None:
    sel = _compile_or_error(text)
    if sel is not None:
        for d in DEVICES:
            out = sel.evaluate(d)
            assert isinstance(out, EvalOutcome)
            assert (out.value is None) != (out.error is None) or out.value is False


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)
@given(st.one_of(expressions, st.text(min_size=1, max_size=80)))
def test_dragoman_cel_answers_any_expression_with_a_result_or_a_compile_error(
    tmp_path: pathlib.Path, text: str
) -> None:
    path = tmp_path / "slice.yaml"
    if not path.exists():
        path.write_text(yaml.safe_dump(big_slice(8, 32)))
    # `--` ends the options, so an expression starting with "-" is the expression, as with any POSIX command.
    code, out, err = run_cli("cel", "--snapshot", str(path), "--output", "json", "--", text)
    assert "Traceback" not in err
    assert code in (0, 1), err
    doc = json.loads(out)
    assert (doc["compileError"] is None) == (doc["summary"] is not None)


def test_huge_and_hostile_expressions_are_refused_as_compile_errors() -> None:
    for text in (
        "(" * 5000 + "true" + ")" * 5000,
        "true && " * 3000 + "true",
        "x" * 100_000,
        "\x00",
        "a" + "[0]" * 2000,
        '"' + "\\u" * 100 + '"',
    ):
        try:
            compile_expression(text)
        except CelCompileError as exc:
            assert exc.message
        except RecursionError as exc:  # pragma: no cover - the failure this test exists for
            raise AssertionError(f"RecursionError for {text[:20]!r}") from exc


def test_a_slice_of_128_devices_with_32_attributes_through_model_diagnosis_and_cel(tmp_path: pathlib.Path) -> None:
    from dragoman.fleet.diagnose import diagnose
    from dragoman.fleet.model import FleetModel

    sl = big_slice()
    model = FleetModel()
    model.load({"Node": {("", "node-big"): node()}, "ResourceSlice": {("", sl["metadata"]["name"]): sl}})
    diagnose(model)
    assert len(sl["spec"]["devices"]) == 128 and all(len(d["attributes"]) == 32 for d in sl["spec"]["devices"])

    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump_all([node(), sl], allow_unicode=True))
    code, out, err = run_cli(
        "cel", f'device.attributes["{DOMAIN}"].attr04 % 8 == 0', "--snapshot", str(path), "--output", "json"
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["summary"]["devices"] == 128
    assert doc["summary"]["matched"] == 64  # attr04 is the int 4 * index: a multiple of 8 on every even index

    code, out, err = run_cli("check", "--snapshot", str(path), "--output", "json")
    assert code in (0, 1) and "Traceback" not in err
    assert json.loads(out)["summary"]["devices"] == 128


def test_a_runtime_error_on_every_device_is_a_result_not_a_crash(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(big_slice()))
    code, out, err = run_cli("cel", f'device.attributes["{DOMAIN}"].nope == 1', "--snapshot", str(path))
    assert code == 1 and "Traceback" not in err
    assert "128 failed" in out


def test_cel_with_an_unknown_class_is_one_sentence(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(big_slice(2, 4)))
    assert_sentence(
        *run_cli("cel", "true", "--class", "nope", "--snapshot", str(path))[::2], words=["DeviceClass nope"]
    )


# ---------------------------------------------------------------------------- `dragoman cel -o json`, hostile text

HOSTILE_CEL = {
    "unterminated-double-quote": '"abc',
    "unterminated-single-quote": "'abc",
    "unterminated-triple-quote": '"""abc',
    "unterminated-bytes-escape": "b'\\x",
    "5000-nested-parens": "(" * 5000 + "true" + ")" * 5000,  # under the 10,240-byte limit: the nesting refuses it
    "10000-open-parens": "(" * 10000,
    "10000-nested-parens": "(" * 10000 + "true" + ")" * 10000,
    "1-MB-expression": "x" * (1 << 20),
    "1-MB-of-and": " && ".join(["true"] * (1 << 17)),
    "nul": "\x00",
    "nul-after-an-expression": "true\x00",
    # Bytes that are not UTF-8 on a command line reach Python as lone surrogates (os.fsdecode).
    "not-utf-8": 'device.driver == "' + os.fsdecode(b"\xff\xfe") + '"',
}


@pytest.mark.parametrize("text", list(HOSTILE_CEL.values()), ids=list(HOSTILE_CEL))
def test_hostile_cel_is_a_compile_error_in_valid_json(tmp_path: pathlib.Path, text: str) -> None:
    """The command documents exit 1 for a compile error; the JSON carries it in compileError.errors[]."""
    path = tmp_path / "slice.yaml"
    path.write_text(yaml.safe_dump(big_slice(8, 8)))
    t0 = time.process_time()
    code, out, err = run_cli("cel", "--snapshot", str(path), "-o", "json", "--", text)
    cpu = time.process_time() - t0
    assert "Traceback" not in err and err == ""
    assert code == 1
    doc = json.loads(out)
    assert doc["summary"] is None and doc["results"] == []
    errors = doc["compileError"]["errors"]
    assert errors and all(e["message"] for e in errors)
    assert cpu < 5, f"{cpu:.2f} s of CPU"


def test_bytes_that_are_not_utf_8_on_the_command_line_are_named_where_they_are(tmp_path: pathlib.Path) -> None:
    """As an operator's shell passes them (a terminal in Latin-1): a compile error at the byte, in JSON and in text;
    it once was a UnicodeEncodeError traceback."""
    import subprocess
    import sys

    path = tmp_path / "slice.yaml"
    path.write_text(yaml.safe_dump(big_slice(2, 4)))
    expr = b'device.driver == "\xff\xfe"'
    runs = [
        subprocess.run(
            [sys.executable.encode(), b"-m", b"dragoman", b"cel", b"--snapshot", bytes(path), *fmt, b"--", expr],
            capture_output=True,
            timeout=60,
        )
        for fmt in ([b"-o", b"json"], [])
    ]
    as_json, as_text = runs
    assert as_json.returncode == 1 and b"Traceback" not in as_json.stderr, as_json.stderr[-2000:]
    error = json.loads(as_json.stdout)["compileError"]
    assert (error["message"], error["line"], error["column"]) == (NOT_UTF8, 1, 19)
    assert as_text.returncode == 1 and b"Traceback" not in as_text.stderr, as_text.stderr[-2000:]
    assert NOT_UTF8.encode() in as_text.stdout and b"locale" in as_text.stdout
    assert b"The API server rejects" not in as_text.stdout, "no API server ever judges bytes that are not text"


def test_nesting_past_the_reference_engines_depth_is_dragomans_limit_in_a_sentence() -> None:
    """cel-go takes 249 nested parentheses; cel-python (the reference engine) runs out of Python stack near 230. Each
    device then reports that the limit is dragoman's — never a RecursionError, nor a CEL error the scheduler would
    raise."""
    sel = compile_expression("(" * 249 + "true" + ")" * 249, engine="reference")
    outcomes = [sel.evaluate(d) for d in DEVICES]
    assert all(o.value is True or o.error == DEEPER_THAN_DRAGOMAN for o in outcomes), outcomes
    assert any(o.error == DEEPER_THAN_DRAGOMAN for o in outcomes), "the depth this test is about was reached"
    # The default (fast) engine evaluates it, as the scheduler does.
    assert all(
        o.value is True for o in (compile_expression("(" * 249 + "true" + ")" * 249).evaluate(d) for d in DEVICES)
    )


def test_a_hostile_selector_in_a_device_class_from_a_file_is_a_compile_error_of_that_selector(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "objects.yaml"
    device_class = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "hostile"},
        "spec": {"selectors": [{"cel": {"expression": "(" * 10000 + "\x00"}}]},
    }
    path.write_text(yaml.safe_dump_all([big_slice(2, 4), device_class]))
    code, out, err = run_cli("cel", "true", "--class", "hostile", "--snapshot", str(path), "-o", "json")
    assert code == 1 and "Traceback" not in err
    error = json.loads(out)["compileError"]
    assert error["selector"] == "class:0" and error["errors"]
