"""Fuzzing the three parsers that take the operator's or a server's text (issue 19): kubeconfigs, snapshots/Lists and
CEL source. Whatever hypothesis makes, the only way out is a sentence (UserError / CelCompileError) or a result —
never another exception (a traceback for the operator) — and each input is handled in bounded time.

The default suite runs a small budget; `-m slow` runs the same properties at a large one."""

from __future__ import annotations

import json
import pathlib
import tempfile
import time
from typing import Any

import pytest
import yaml
from dragoman.fleet.errors import UserError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.badinput.badinput_support import run_cli

PER_INPUT_SECONDS = 5.0  # far above any real input's cost; a hang or blow-up shows as minutes
CHECK_SECONDS = 20.0  # a whole `check` (the first one in a process builds the CEL environment on a loaded machine)
SMALL = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
LARGE = settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))

# Counted per run, for the report: how many inputs each fuzzer fed.
EXAMPLES: dict[str, int] = {}


def _count(name: str) -> None:
    EXAMPLES[name] = EXAMPLES.get(name, 0) + 1


# ---------------------------------------------------------------------------- values of every JSON/YAML type

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            "0",
            "false",
            "no",
            "true",
            "v1.37",
            "1.37",
            "a\nb",
            "\x00",
            "\u202e",
            "=",
            "socks5://x:1",
            "https://u:p@127.0.0.1:1",
            "2026-01-01T00:00:00Z",
            "gpu.nvidia.com",
            "pool",
            "a100",
        ]
    ),
)
_values = st.recursive(
    _scalars,
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=8), kids, max_size=4)),
    max_leaves=12,
)


def _maybe(keys: list[str], value=_values) -> st.SearchStrategy[dict]:
    """A mapping holding some of `keys`, each with a value of any type (mostly plausible names)."""
    return st.fixed_dictionaries({}, optional={k: value for k in keys})


# ---------------------------------------------------------------------------- kubeconfig

_CLUSTER = _maybe(
    [
        "server",
        "insecure-skip-tls-verify",
        "certificate-authority",
        "certificate-authority-data",
        "tls-server-name",
        "proxy-url",
    ]
)
_EXEC = _maybe(["command", "args", "env", "apiVersion", "interactiveMode", "installHint", "provideClusterInfo"])
_USER = st.one_of(
    _maybe(
        [
            "token",
            "tokenFile",
            "username",
            "password",
            "client-certificate-data",
            "client-key-data",
            "auth-provider",
            "client-certificate",
            "client-key",
        ]
    ),
    st.fixed_dictionaries({"exec": st.one_of(_EXEC, _values)}),
)
_CONTEXT = _maybe(["cluster", "user", "namespace"])


def _entries(section: str, body: st.SearchStrategy) -> st.SearchStrategy:
    named = st.fixed_dictionaries(
        {"name": st.one_of(st.sampled_from(["k", "c", "u"]), _values), section: st.one_of(body, _values)}
    )
    return st.one_of(st.lists(named, max_size=3), _values)


_KUBECONFIG = st.fixed_dictionaries(
    {
        "clusters": _entries("cluster", _CLUSTER),
        "contexts": _entries("context", _CONTEXT),
        "users": _entries("user", _USER),
    },
    optional={
        "current-context": st.one_of(st.just("c"), _values),
        "kind": st.one_of(st.just("Config"), _values),
        "apiVersion": _values,
        "preferences": _values,
    },
)


def _resolve_text(text: str) -> None:
    from dragoman.fleet.kubeconfig import CredentialSource, resolve

    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d) / "kubeconfig"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        t0 = time.monotonic()
        try:
            rc = resolve(str(path), None, environ={}, home=d)
            # What the connection does with it first, short of the network (and never running an exec plugin).
            if rc.exec is None:
                import asyncio

                asyncio.run(CredentialSource(rc).current())
        except UserError:
            pass
        assert time.monotonic() - t0 < PER_INPUT_SECONDS


def _kubeconfig_property(doc: dict) -> None:
    _count("kubeconfig")
    _resolve_text(yaml.safe_dump(doc, allow_unicode=True))


def _kubeconfig_text_property(text: str) -> None:
    _count("kubeconfig-text")
    _resolve_text(text)


@SMALL
@given(_KUBECONFIG)
def test_fuzz_kubeconfig_structures(doc: dict) -> None:
    _kubeconfig_property(doc)


@SMALL
@given(
    st.text(
        alphabet=st.sampled_from(list("apiVersion: v1\nkind: Config\nclusters:- name&*[]{}'\"!!#|>%@`0\t")),
        max_size=200,
    )
)
def test_fuzz_kubeconfig_text(text: str) -> None:
    _kubeconfig_text_property(text)


@pytest.mark.slow
@LARGE
@given(_KUBECONFIG)
def test_fuzz_kubeconfig_structures_large(doc: dict) -> None:
    _kubeconfig_property(doc)


@pytest.mark.slow
@LARGE
@given(st.text(max_size=400))
def test_fuzz_kubeconfig_text_large(text: str) -> None:
    _kubeconfig_text_property(text)


# ---------------------------------------------------------------------------- snapshots and Lists

_KINDS = [
    "Node",
    "Pod",
    "ResourceSlice",
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DaemonSet",
    "Namespace",
    "Event",
    "ResourceQuota",
    "ConfigMap",
]
_API = {
    "ResourceSlice": "resource.k8s.io/v1",
    "DeviceClass": "resource.k8s.io/v1",
    "ResourceClaim": "resource.k8s.io/v1",
    "ResourceClaimTemplate": "resource.k8s.io/v1",
    "DaemonSet": "apps/v1",
}


@st.composite
def _object(draw: Any) -> dict:
    kind = draw(st.sampled_from(_KINDS))
    meta = draw(
        st.fixed_dictionaries(
            {"name": st.one_of(st.sampled_from(["n1", "n2", "gpu-0"]), _values)},
            optional={
                "namespace": st.one_of(st.just("ns"), _values),
                "labels": st.one_of(
                    st.dictionaries(
                        st.sampled_from(["pool", "nvidia.com/gpu.present", "x"]),
                        st.one_of(st.sampled_from(["a", "b", "true"]), _values),
                        max_size=3,
                    ),
                    _values,
                ),
                "annotations": _values,
                "ownerReferences": _values,
                "creationTimestamp": _values,
            },
        )
    )
    spec = draw(
        st.one_of(
            _maybe(
                [
                    "nodeName",
                    "pool",
                    "driver",
                    "devices",
                    "selectors",
                    "containers",
                    "taints",
                    "unschedulable",
                    "resourceClaims",
                    "template",
                    "spec",
                    "hard",
                    "nodeSelector",
                ]
            ),
            _values,
        )
    )
    status = draw(
        st.one_of(
            _maybe(["nodeInfo", "allocatable", "capacity", "phase", "conditions", "allocation", "reservedFor"]), _values
        )
    )
    obj = {"apiVersion": _API.get(kind, "v1"), "kind": kind, "metadata": meta}
    if draw(st.booleans()):
        obj["spec"] = spec
    if draw(st.booleans()):
        obj["status"] = status
    return obj


_LIST = st.one_of(
    st.lists(_object(), min_size=1, max_size=5).map(lambda items: {"apiVersion": "v1", "kind": "List", "items": items}),
    _object(),
)


def _snapshot_property(doc: Any, as_json: bool, through_check: bool) -> None:
    from dragoman.fleet.snapshot import parse_objects

    _count("snapshot-check" if through_check else "snapshot")
    text = json.dumps(doc) if as_json else yaml.safe_dump(doc, allow_unicode=True)
    t0 = time.monotonic()
    if through_check:
        with tempfile.TemporaryDirectory() as d:
            path = pathlib.Path(d) / "snap.yaml"
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
            code, _out, err = run_cli("check", "--snapshot", str(path), "--output", "json")
            assert code in (0, 1, 2) and "Traceback" not in err
        assert time.monotonic() - t0 < CHECK_SECONDS
        return
    else:
        try:
            parse_objects(text, "fuzz")
        except UserError:
            pass
    assert time.monotonic() - t0 < PER_INPUT_SECONDS


@SMALL
@given(_LIST, st.booleans())
def test_fuzz_snapshot_parser(doc: Any, as_json: bool) -> None:
    _snapshot_property(doc, as_json, through_check=False)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(_LIST, st.booleans())
def test_fuzz_snapshot_through_check(doc: Any, as_json: bool) -> None:
    _snapshot_property(doc, as_json, through_check=True)


@SMALL
@given(
    st.text(
        alphabet=st.sampled_from(list("apiVersion: v1\nkind: Node\nList items- metadata name &*[]{}'\"!!\\u#0\t")),
        max_size=200,
    )
)
def test_fuzz_snapshot_text(text: str) -> None:
    from dragoman.fleet.snapshot import parse_objects

    _count("snapshot-text")
    t0 = time.monotonic()
    try:
        parse_objects(text, "fuzz")
    except UserError:
        pass
    assert time.monotonic() - t0 < PER_INPUT_SECONDS


@pytest.mark.slow
@LARGE
@given(_LIST, st.booleans())
def test_fuzz_snapshot_parser_large(doc: Any, as_json: bool) -> None:
    _snapshot_property(doc, as_json, through_check=False)


@pytest.mark.slow
@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(_LIST, st.booleans())
def test_fuzz_snapshot_through_check_large(doc: Any, as_json: bool) -> None:
    _snapshot_property(doc, as_json, through_check=True)


# ---------------------------------------------------------------------------- CEL source

_CEL_PIECES = [
    'device.attributes["gpu.nvidia.com"]',
    "device.driver",
    "device.capacity",
    ".productName",
    ".memory",
    "==",
    "!=",
    "&&",
    "||",
    "!",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "?",
    "+",
    "-",
    "*",
    "/",
    "%",
    "<",
    ">=",
    " in ",
    ".exists(x, ",
    ".all(a, ",
    ".matches(",
    ".size()",
    "quantity(",
    "semver(",
    "'",
    '"',
    '"""',
    "r'",
    "b'",
    "\\u0041",
    "\\U00110000",
    "\\ud800",
    "\\x41",
    "\\777",
    "\\q",
    "1",
    "-9223372036854775809",
    "18446744073709551616u",
    "1.5e400",
    "0x",
    "true",
    "null",
    "'a\\nb'",
    "\x00",
    "\u202e",
    "é",
    " ",
    "\n",
]


def _cel_property(text: str) -> None:
    from dragoman.fleet.cel import CelCompileError, compile_expression

    _count("cel")
    if "cel-warm" not in EXAMPLES:
        # The first compile in a process builds the CEL environment (seconds on a loaded machine): not an input's cost.
        EXAMPLES["cel-warm"] = 1
        compile_expression("true")
    t0 = time.monotonic()
    try:
        compile_expression(text)
    except CelCompileError:
        pass
    assert time.monotonic() - t0 < PER_INPUT_SECONDS


@SMALL
@given(st.lists(st.sampled_from(_CEL_PIECES), max_size=14).map("".join))
def test_fuzz_cel_source(text: str) -> None:
    _cel_property(text)


@pytest.mark.slow
@LARGE
@given(st.one_of(st.lists(st.sampled_from(_CEL_PIECES), max_size=30).map("".join), st.text(max_size=80)))
def test_fuzz_cel_source_large(text: str) -> None:
    _cel_property(text)
