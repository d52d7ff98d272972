"""Fuzzing plan files and the CLI's own flags (issue 34). Whatever hypothesis makes, the only ways out are a sentence
(UserError, or argparse's usage message with exit 2) or a result — never another exception, never a hang.

Plan files: a real plan's shape with any field replaced, removed or retyped, plus raw JSON and bytes; an accepted
file must then load, render and serialise exactly as the runner does before it reaches the cluster. Flags: argument
lists drawn from every headless command's flags and hostile values, against a kubeconfig whose server is closed (no
command may start a simulator, a control plane or a build here).

The default suite runs a small budget; `-m slow` runs the same properties at a large one. Counts per run are kept in
EXAMPLES (printed by the large runs)."""

from __future__ import annotations

import copy
import json
import pathlib
import tempfile
import time
from typing import Any

import pytest
from dragoman.fleet.errors import UserError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.badinput.badinput_support import closed_port, json_paths, kubeconfig_text, run_cli
from tests.badinput.test_badinput_fuzz import _values

PER_INPUT_SECONDS = 5.0
SMALL = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
LARGE = settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
EXAMPLES: dict[str, int] = {}


def _count(name: str) -> None:
    EXAMPLES[name] = EXAMPLES.get(name, 0) + 1


# ---------------------------------------------------------------------------- plan files

NODE = "gke-ml-prod-l4-inference-5b1a-0"
PLAN: dict = {
    "schemaVersion": 1,
    "kind": "MigrationPlan",
    "id": "mig-l4-inference-0123456789",
    "pool": "l4-inference",
    "poolLabel": "cloud.google.com/gke-nodepool",
    "cluster": {"server": "https://127.0.0.1:6443", "kubeSystemUID": "uid-1", "context": "dragoman-sim"},
    "createdAt": "2026-12-05T10:00:00Z",
    "createdBy": {"user": "sre"},
    "options": {"stateNamespace": "kube-system", "batchSize": 0},
    "rollback": False,
    "steps": [
        {"id": "preflight", "step": "preflight", "title": "Preflight", "nodes": [NODE], "changes": []},
        {
            "id": "cordon",
            "step": "cordon",
            "title": "Cordon",
            "dangerous": False,
            "reversible": True,
            "nodes": [NODE],
            "changes": [
                {
                    "kind": "Node",
                    "namespace": "",
                    "name": NODE,
                    "verb": "patch",
                    "before": {"spec": {"unschedulable": None}},
                    "after": {"spec": {"unschedulable": True}},
                    "command": f"kubectl cordon {NODE}",
                    "detail": {},
                }
            ],
            "blastRadius": {"nodes": [NODE], "pools": ["l4-inference"]},
            "notes": [],
            "warnings": [],
            "blockers": [],
            "reads": {f"Node/{NODE}": "abc"},
        },
        {
            "id": "drain",
            "step": "drain",
            "title": "Drain",
            "dangerous": True,
            "nodes": [NODE],
            "changes": [
                {
                    "kind": "Pod",
                    "namespace": "serving",
                    "name": "llm-0",
                    "verb": "evict",
                    "detail": {"node": NODE, "owner": "ReplicaSet/llm", "gracePeriodSeconds": 30, "gpus": 1},
                }
            ],
        },
        {
            "id": "exclude-device-plugin",
            "step": "exclude-device-plugin",
            "nodes": [NODE],
            "changes": [
                {
                    "kind": "HelmRelease",
                    "namespace": "nvidia-device-plugin",
                    "name": "nvdp",
                    "verb": "upgrade",
                    "detail": {
                        "op": "helm",
                        "chart": "nvidia-device-plugin",
                        "version": "0.18.0",
                        "values": {"affinity": {}},
                        "install": False,
                        "oldValues": {},
                    },
                }
            ],
        },
    ],
}


_PLAN_PATHS = [p for p in json_paths(PLAN) if p]


@st.composite
def _mutated_plans(draw) -> Any:
    plan = copy.deepcopy(PLAN)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        path = draw(st.sampled_from(_PLAN_PATHS))
        parent: Any = plan
        try:
            for key in path[:-1]:
                parent = parent[key]
            how = draw(st.sampled_from(["replace", "delete", "retype"]))
            if how == "delete" and isinstance(parent, dict):
                parent.pop(path[-1], None)
            elif how == "retype":
                parent[path[-1]] = draw(st.sampled_from([None, "", 0, -1, 1.5, [], {}, True, "../x", "a\nb"]))
            else:
                parent[path[-1]] = draw(_values)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed or retyped what this path went through
    return plan


def _plan_property(content: bytes) -> None:
    from dragoman.actions.plan import MigrationPlan, render
    from dragoman.tui.commands.migrate import read_plan_file

    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "plan.json"
        path.write_bytes(content)
        t0 = time.monotonic()
        try:
            data = read_plan_file(str(path))
        except UserError as exc:
            assert exc.message and "Traceback" not in exc.message
            assert "has no attribute" not in exc.message and "unhashable" not in exc.message
            assert int(exc.exit_code) == 2
            return
        finally:
            assert time.monotonic() - t0 < PER_INPUT_SECONDS
    # Accepted: it loads, renders and serialises as the runner's first steps do, without another exception.
    plan = MigrationPlan.from_json(data)
    lines = render(plan)
    assert lines and all(isinstance(line, str) for line in lines)
    json.dumps(plan.to_json())
    for sp in plan.steps:
        for c in sp.changes:
            c.diff()


def _encode(plan: Any, as_json: bool) -> bytes:
    try:
        return json.dumps(plan, allow_nan=True).encode("utf-8", "surrogatepass")
    except (ValueError, TypeError):
        return b"{}"


@SMALL
@given(_mutated_plans())
def test_fuzz_plan_files_mutated(plan: Any) -> None:
    _count("plan files (mutated)")
    _plan_property(_encode(plan, True))


@SMALL
@given(st.one_of(_values.map(lambda v: _encode(v, True)), st.binary(max_size=300)))
def test_fuzz_plan_files_raw(content: bytes) -> None:
    _count("plan files (raw)")
    _plan_property(content)


def test_the_unmutated_plan_is_accepted() -> None:
    """The fuzzer's starting point is a plan the reader accepts: the mutations test refusals, not a broken seed."""
    _plan_property(json.dumps(PLAN).encode())
    from dragoman.actions.plan import plan_problem

    assert plan_problem(PLAN) == ""


@pytest.mark.slow
@LARGE
@given(_mutated_plans())
def test_fuzz_plan_files_mutated_large(plan: Any) -> None:
    _count("plan files (mutated)")
    _plan_property(_encode(plan, True))


@pytest.mark.slow
@LARGE
@given(st.one_of(_values.map(lambda v: _encode(v, True)), st.binary(max_size=300)))
def test_fuzz_plan_files_raw_large(content: bytes) -> None:
    _count("plan files (raw)")
    _plan_property(content)


# ---------------------------------------------------------------------------- the CLI's own flags

_HOSTILE = [
    "",
    "-",
    "--",
    "nan",
    "inf",
    "-1",
    "0",
    "1e309",
    "9" * 400,
    "../../etc/passwd",
    "/dev/zero",
    "/dev/full",
    "/dev/null",
    "/proc/self/mem",
    "/",
    "a\nb",
    "\u202e",
    "x" * 5000,
    "l4-inference",
    "t4-batch",
    "kube-system",
    "device.driver == 'x'",
    "{{",
    "=",
]
# Flags of the headless commands that may run here (none starts a simulator, a control plane or a build).
_COMMON = [
    "--kubeconfig",
    "--context",
    "--snapshot",
    "--pool-label",
    "--output",
    "-o",
    "--read-only",
    "--control-plane",
]
_FLAGS = {
    "check": _COMMON,
    "migrate": [
        *_COMMON,
        "--pool",
        "--plan",
        "--yes",
        "--step",
        "--rollback",
        "--apply-plan",
        "--audit-log",
        "--batch-size",
        "--canary-node",
        "--state-namespace",
        "--drain-timeout",
        "--drain-concurrency",
        "--evict-retry",
        "--wait-for-jobs",
        "--force-pod",
        "--prod-pattern",
        "--lease-seconds",
        "--canary-image",
        "--canary-namespace",
        "--switch-timeout",
    ],
    "cel": ["--class", "--snapshot", "--kubeconfig", "--context", "--output"],
    "snapshot": ["--kubeconfig", "--context", "--read-only"],
}
_VALUELESS = {"--read-only", "--plan", "--yes", "--rollback"}


@st.composite
def _argv(draw) -> list[str]:
    command = draw(st.sampled_from(sorted(_FLAGS)))
    argv = [command]
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        flag = draw(st.sampled_from(_FLAGS[command]))
        argv.append(flag)
        if flag not in _VALUELESS:
            argv.append(draw(st.one_of(st.sampled_from(_HOSTILE), st.text(max_size=20))))
    if draw(st.booleans()):
        argv.append(draw(st.sampled_from(_HOSTILE)))  # a positional
    return argv


@pytest.fixture(scope="module")
def closed_kubeconfig(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("flags") / "kubeconfig"
    path.write_text(kubeconfig_text(f"https://127.0.0.1:{closed_port()}"))
    return str(path)


def _flags_property(argv: list[str], kubeconfig: str) -> None:
    # No command may reach a real cluster or write into the working folder: the closed kubeconfig is the default,
    # and a `snapshot` always writes into a fresh folder.
    with tempfile.TemporaryDirectory() as tmp:
        if argv[0] == "snapshot":
            argv = [*argv, str(pathlib.Path(tmp) / "out.yaml")]
        if "--kubeconfig" not in argv:
            argv = [*argv, "--kubeconfig", kubeconfig]
        t0 = time.monotonic()
        try:
            code, _out, err = run_cli(*argv, stdin="")
        except SystemExit as exc:  # argparse: a usage error (2) or --help (0)
            assert exc.code in (0, 2), argv
            return
        assert time.monotonic() - t0 < 30, argv
    assert code in (0, 1, 2, 3), (argv, code, err[-500:])
    assert "Traceback" not in err, (argv, err[-2000:])
    if code >= 2:
        lines = [line for line in err.strip().splitlines() if line.strip()]
        assert lines and lines[-1].startswith("dragoman: "), (argv, err[-500:])
        for internal in ("has no attribute", "unhashable type", "cannot convert float NaN"):
            assert internal not in err, (argv, err)


@SMALL
@given(_argv())
def test_fuzz_cli_flags(closed_kubeconfig: str, argv: list[str]) -> None:
    _count("CLI flags")
    _flags_property(argv, closed_kubeconfig)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(_argv())
def test_fuzz_cli_flags_large(closed_kubeconfig: str, argv: list[str]) -> None:
    _count("CLI flags")
    _flags_property(argv, closed_kubeconfig)


def test_a_nul_in_an_argument_or_a_path_from_a_file_is_a_sentence(tmp_path: pathlib.Path) -> None:
    """Found by the large flags fuzzer: `--snapshot '\\x00'` was `ValueError: embedded null byte`. A real command line
    cannot hold NUL, but a kubeconfig's paths can, and an in-process caller's arguments can."""
    from tests.badinput.badinput_support import assert_sentence

    code, _out, err = run_cli("cel", "--snapshot", "\x00", "true")
    assert_sentence(code, err, words=["nul character"])
    kc = tmp_path / "kc"
    kc.write_text(kubeconfig_text("https://127.0.0.1:1", user='  tokenFile: "/tmp/a\\0b"\n'))
    code, _out, err = run_cli("check", "--kubeconfig", str(kc))
    assert_sentence(code, err, words=["nul character"])
