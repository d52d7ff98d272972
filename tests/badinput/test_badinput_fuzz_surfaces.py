"""Fuzzing the surfaces added since the first hardening (issue 34): scenario files (through the one bounded reader,
then the API server's checks, then the simulator's store), `controlplane diff` allowlists, and fake control-plane
binaries answering `--version` badly. Whatever hypothesis makes, the only ways out are a result or a sentence
(UserError, or the allowlist's ValueError) in bounded time — never another exception, a hang, or a process left
running.

The default suite runs a small budget; `-m slow` runs the same properties at a large one. EXAMPLES counts the
inputs fed, per fuzzer (printed with -s by test_fuzz_counts_are_reported)."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import tempfile
import time
from typing import Any

import pytest
import yaml
from dragoman.fleet.errors import UserError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.badinput import fake_controlplane
from tests.badinput.badinput_support import json_paths
from tests.badinput.test_badinput_fuzz import _values

PER_INPUT_SECONDS = 20.0  # a scenario loads into a whole simulator (a certificate, bootstrap objects)
SMALL = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
LARGE = settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
EXAMPLES: dict[str, int] = {}


def _count(name: str) -> None:
    EXAMPLES[name] = EXAMPLES.get(name, 0) + 1


# ---------------------------------------------------------------------------- scenarios

_KINDS = [
    ("v1", "Node"),
    ("v1", "Pod"),
    ("v1", "ConfigMap"),
    ("v1", "Namespace"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"),
    ("resource.k8s.io/v1", "DeviceClass"),
    ("resource.k8s.io/v1", "ResourceSlice"),
    ("resource.k8s.io/v1", "ResourceClaim"),
    ("v1", "List"),
    ("sim.dragoman.io/v1", "SimulatorConfig"),
    ("example.com/v1", "Widget"),
]
_names = st.one_of(st.sampled_from(["a", "node-1", "gpu-0", "default", "", "A_B", "x" * 300]), st.text(max_size=10))
_meta = st.fixed_dictionaries(
    {},
    optional={
        "name": st.one_of(_names, _values),
        "namespace": st.one_of(st.sampled_from(["default", "kube-system", ""]), _values),
        "labels": st.one_of(st.dictionaries(st.text(max_size=8), st.one_of(st.text(max_size=8), _values)), _values),
        "annotations": _values,
        "uid": _values,
    },
)
_counts = st.one_of(st.integers(-5, 10), st.sampled_from([10**9, 2**31, 2**63, -(2**31)]), _values)


@st.composite
def _scenario_object(draw: Any) -> dict:
    api, kind = draw(st.sampled_from(_KINDS))
    obj: dict = {"apiVersion": api, "kind": kind}
    if draw(st.booleans()):
        obj["metadata"] = draw(_meta)
    if kind == "SimulatorConfig":
        obj |= draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "speed": st.one_of(st.floats(), _values),
                    "faults": st.one_of(st.sampled_from(["latency=1ms", "error=lots", "hang=1s"]), _values),
                    "users": st.one_of(
                        st.lists(
                            st.fixed_dictionaries(
                                {}, optional={"name": _names, "groups": _values, "clusterRoles": _values}
                            ),
                            max_size=3,
                        ),
                        _values,
                    ),
                    "anonymousRead": _values,
                },
            )
        )
    elif kind == "List":
        obj["items"] = draw(st.one_of(st.lists(_values, max_size=3), _values))
    else:
        spec = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "replicas": _counts,
                    "completions": _counts,
                    "parallelism": _counts,
                    "completionMode": st.sampled_from(["Indexed", "NonIndexed", 5]),
                    "selector": _values,
                    "template": _values,
                    "containers": _values,
                    "devices": _values,
                },
            )
        )
        if spec or draw(st.booleans()):
            obj["spec"] = spec
        if kind == "Node" and draw(st.booleans()):
            obj.setdefault("metadata", {})
            if isinstance(obj["metadata"], dict):
                obj["metadata"]["labels"] = {
                    "nvidia.com/gpu.count": draw(st.one_of(st.sampled_from(["8", "1000000000", "-1", "x"]), _values)),
                    "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
                }
    return obj


_POD_TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
_VALID = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"pool": "a"}}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}, "data": {"k": "v"}},
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "a"}}, "template": _POD_TEMPLATE},
    },
    {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default"},
        "spec": {
            "completions": 3,
            "template": {**_POD_TEMPLATE, "spec": {**_POD_TEMPLATE["spec"], "restartPolicy": "Never"}},
        },
    },
    {"apiVersion": "sim.dragoman.io/v1", "kind": "SimulatorConfig", "speed": 2, "users": [{"name": "u"}]},
]


@st.composite
def _mutated(draw: Any) -> dict:
    """A well-formed object with at most one value replaced by anything: most load, so the simulator meets them."""
    obj = json.loads(json.dumps(draw(st.sampled_from(_VALID))))
    if draw(st.booleans()):
        path = draw(st.sampled_from([p for p in json_paths(obj) if len(p) > 1 and p[0] not in ("apiVersion", "kind")]))
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = draw(st.one_of(_counts, _values))
    return obj


_SCENARIO = st.lists(st.one_of(_mutated(), _scenario_object(), _values), min_size=1, max_size=5)


def _scenario_property(docs: list, as_json: bool) -> None:
    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.server import Simulator

    _count("scenario")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d) / ("s.json" if as_json else "s.yaml")
        if as_json:
            path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, default=str))
        else:
            path.write_text(yaml.safe_dump_all(docs, allow_unicode=True), encoding="utf-8", errors="surrogatepass")
        try:
            sc = scenario_mod.load(str(path))
        except UserError:
            return
    # Loaded: the simulator takes it as `sim serve` does, without an exception.
    _count("scenario-loaded")
    Simulator(sc.objects, users=sc.users, speed=sc.speed or 1.0, faults=sc.faults, anonymous_read=sc.anonymous_read)
    assert time.monotonic() - t0 < PER_INPUT_SECONDS


@SMALL
@given(_SCENARIO, st.booleans())
def test_fuzz_scenario_files(docs: list, as_json: bool) -> None:
    _scenario_property(docs, as_json)


@pytest.mark.slow
@LARGE
@given(_SCENARIO, st.booleans())
def test_fuzz_scenario_files_large(docs: list, as_json: bool) -> None:
    _scenario_property(docs, as_json)


# ---------------------------------------------------------------------------- allowlists

_ENTRY = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "area": st.one_of(st.sampled_from(["api", "kubectl", "*"]), _values),
            "case": st.one_of(st.text(max_size=10), st.lists(_values, max_size=3), _values),
            "path": st.one_of(st.sampled_from(["metadata.*", "[0]", ""]), _values),
            "reason": st.one_of(st.text(max_size=20), _values),
        },
    ),
    _values,
)
_ALLOWLIST_TEXT = st.text(alphabet=st.sampled_from(list("- area: case path reason &*[]{}'\"!!\n\t#|>")), max_size=200)


def _allowlist_property(content: Any, raw: bool) -> None:
    from dragoman.sim.controlplane.differential import load_allowlist

    _count("allowlist")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d) / "allow.yaml"
        path.write_text(content if raw else yaml.safe_dump(content, allow_unicode=True), errors="surrogatepass")
        try:
            entries = load_allowlist(path)
        except (UserError, ValueError):
            return
    assert all(e.reason for e in entries)
    assert time.monotonic() - t0 < PER_INPUT_SECONDS


@SMALL
@given(st.one_of(st.lists(_ENTRY, max_size=4), _values))
def test_fuzz_allowlist_structures(content: Any) -> None:
    _allowlist_property(content, raw=False)


@SMALL
@given(_ALLOWLIST_TEXT)
def test_fuzz_allowlist_text(text: str) -> None:
    _allowlist_property(text, raw=True)


@pytest.mark.slow
@LARGE
@given(st.one_of(st.lists(_ENTRY, max_size=4), _values))
def test_fuzz_allowlist_structures_large(content: Any) -> None:
    _allowlist_property(content, raw=False)


@pytest.mark.slow
@LARGE
@given(_ALLOWLIST_TEXT)
def test_fuzz_allowlist_text_large(text: str) -> None:
    _allowlist_property(text, raw=True)


# ---------------------------------------------------------------------------- fake control-plane binaries

_BEHAVIOURS = st.fixed_dictionaries(
    {name: st.sampled_from(fake_controlplane.VERSION_BEHAVIOURS) for name in fake_controlplane.VERSIONS}
)


def _survivors(directory: pathlib.Path) -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if str(directory).encode() in cmd:
                out.append(int(pid))
    return out


def _binaries_property(behaviours: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from dragoman.sim.controlplane import build

    _count("binaries")
    monkeypatch.setattr(build, "VERSION_TIMEOUT", 2.0)  # the real 15 s, scaled down: each hang costs this much
    with tempfile.TemporaryDirectory() as d:
        directory = fake_controlplane.make(pathlib.Path(d) / "bin", on_version=behaviours)
        t0 = time.monotonic()
        try:
            found = build.check_dir(directory)
        except UserError as exc:
            assert "\n" not in exc.message and len(exc.message) < 1000
            assert any(b != "ok" for b in behaviours.values())
        else:
            assert set(found) == set(fake_controlplane.VERSIONS)
        assert time.monotonic() - t0 < 4 * 2.0 + 10
        time.sleep(0.1)
        left = _survivors(directory)
        for pid in left:  # ended here so one failure does not leave sleepers behind
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        assert left == [], f"processes left running by `--version`: {left}"


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(behaviours=_BEHAVIOURS)
def test_fuzz_fake_control_plane_binaries(behaviours: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    _binaries_property(behaviours, monkeypatch)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(behaviours=_BEHAVIOURS)
def test_fuzz_fake_control_plane_binaries_large(behaviours: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    _binaries_property(behaviours, monkeypatch)


def test_fuzz_counts_are_reported() -> None:
    # Runs last in this file (pytest keeps file order without -p randomly): the counts for the report.
    print("fuzz examples:", EXAMPLES)
