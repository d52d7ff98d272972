"""`dragoman cel` end to end: text and JSON output, exit codes, the caret under a compile error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

GPU_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com"},
    "spec": {
        "selectors": [
            {
                "cel": {
                    "expression": (
                        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
                    )
                }
            }
        ]
    },
}


def _device(name: str, product: str, version: str, kind: str = "gpu", **extra) -> dict:
    attrs = {
        "type": {"string": kind},
        "productName": {"string": product},
        "driverVersion": {"version": version},
        "uuid": {"string": f"GPU-{name}"},
    }
    attrs.update(extra)
    return {"name": name, "attributes": attrs, "capacity": {"memory": {"value": "81559Mi"}}}


def _slice(node: str, devices: list[dict], generation: int = 1) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu.nvidia.com"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": node,
            "pool": {"name": node, "generation": generation, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


@pytest.fixture()
def fleet(tmp_path: Path) -> Path:
    docs = [
        GPU_CLASS,
        _slice(
            "node-a",
            [
                _device("gpu-0", "NVIDIA H100 80GB HBM3", "550.54.15"),
                _device("gpu-1", "NVIDIA H100 80GB HBM3", "550.54.15"),
            ],
        ),
        _slice("node-b", [_device("gpu-0", "NVIDIA A100-SXM4-40GB", "535.104.5", index={"int": 0})]),
        # An older generation of node-b's pool: the allocator ignores it, so must we.
        _slice("node-b", [_device("gpu-9", "NVIDIA A100-SXM4-40GB", "535.104.5")], generation=0)
        | {"metadata": {"name": "node-b-old"}},
        _slice("node-c", [_device("mig-0", "NVIDIA H100 80GB HBM3", "550.54.15", kind="mig")]),
    ]
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def dragoman(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dragoman", "cel", *args], capture_output=True, text=True, input=stdin, timeout=120
    )


def test_text_output_summarises_per_pool_and_product_and_lists_matches(fleet: Path) -> None:
    proc = dragoman('device.attributes["gpu.nvidia.com"].productName.contains("H100")', "--snapshot", str(fleet))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "4 devices in 3 ResourceSlices: 3 match, 1 do not, 0 failed" in out
    assert "gpu.nvidia.com/node-a" in out and "NVIDIA A100-SXM4-40GB" in out
    assert "gpu.nvidia.com/node-a/gpu-1 on node-a" in out
    assert "gpu.nvidia.com/node-b/gpu-0 on node-b: evaluated to false" in out
    assert "gpu-9" not in out  # older pool generation


def test_class_selectors_combine_with_the_expression(fleet: Path) -> None:
    proc = dragoman(
        'device.attributes["gpu.nvidia.com"].productName.contains("H100")',
        "--class",
        "gpu.nvidia.com",
        "--snapshot",
        str(fleet),
        "--output",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    by_device = {(r["pool"], r["device"]): r for r in doc["results"]}
    assert by_device[("node-a", "gpu-0")]["result"] == "match"
    # The MIG device fails the class's type == 'gpu' before the expression is looked at.
    assert by_device[("node-c", "mig-0")]["result"] == "no-match"
    assert by_device[("node-c", "mig-0")]["reason"].startswith("class gpu.nvidia.com selector #0")
    assert by_device[("node-b", "gpu-0")]["reason"].startswith("expression")


def test_json_shape(fleet: Path) -> None:
    proc = dragoman('device.driver == "gpu.nvidia.com"', "--snapshot", str(fleet), "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) >= {"schemaVersion", "expression", "compileError", "summary", "results"}
    assert doc["schemaVersion"] == 1 and doc["compileError"] is None
    assert doc["summary"]["devices"] == 4 and doc["summary"]["matched"] == 4
    assert {p["pool"] for p in doc["summary"]["pools"]} == {"node-a", "node-b", "node-c"}
    r = doc["results"][0]
    assert set(r) == {"driver", "pool", "device", "node", "result", "reason"}
    assert r["result"] == "match" and r["driver"] == "gpu.nvidia.com"


def test_runtime_errors_exit_1_and_say_scheduling_is_blocked(fleet: Path) -> None:
    proc = dragoman('device.attributes["gpu.nvidia.com"].index == 0', "--snapshot", str(fleet))
    assert proc.returncode == 1
    assert "CEL runtime error: no such key: index" in proc.stdout
    assert "aborts scheduling of every pod" in proc.stdout
    doc = json.loads(
        dragoman('device.attributes["gpu.nvidia.com"].index == 0', "--snapshot", str(fleet), "-o", "json").stdout
    )
    assert doc["summary"]["errors"] == 3 and doc["summary"]["matched"] == 1


def test_no_match_exits_1(fleet: Path) -> None:
    proc = dragoman('device.attributes["gpu.nvidia.com"].productName == "NVIDIA B200"', "--snapshot", str(fleet))
    assert proc.returncode == 1
    assert "no device matches" in proc.stdout


def test_compile_error_exits_1_with_a_caret_under_the_column(fleet: Path) -> None:
    expr = 'device.driver == "gpu.nvidia.com" && device.name == "gpu-0"'
    proc = dragoman(expr, "--snapshot", str(fleet))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert "undefined field 'name'" in lines[0] and "column 44" in lines[0]
    assert lines[1] == f" | {expr}"
    caret = lines[2].index("^") - len(" | ")
    assert expr[caret] == "." and expr[caret + 1 : caret + 5] == "name"
    doc = json.loads(dragoman(expr, "--snapshot", str(fleet), "-o", "json").stdout)
    assert doc["compileError"]["line"] == 1 and doc["compileError"]["column"] == 44
    assert doc["results"] == [] and doc["summary"] is None


def test_multiline_syntax_error_position(fleet: Path) -> None:
    expr = 'device.driver == "gpu.nvidia.com" &&\n  device.attributes["gpu.nvidia.com"].type == "gpu" )'
    doc = json.loads(dragoman(expr, "--snapshot", str(fleet), "-o", "json").stdout)
    assert doc["compileError"]["line"] == 2
    assert doc["compileError"]["column"] == expr.splitlines()[1].index(")") + 1


@pytest.mark.parametrize(
    "content,phrase",
    [
        (None, "does not exist"),
        ("kind: [unclosed", "not valid YAML"),
        ("- just\n- strings\n", "expected Kubernetes objects"),
    ],
)
def test_unreadable_input_exits_2_with_one_sentence(tmp_path: Path, content: str | None, phrase: str) -> None:
    path = tmp_path / "input.yaml"
    if content is not None:
        path.write_text(content)
    proc = dragoman("true", "--snapshot", str(path))
    assert proc.returncode == 2
    assert phrase in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_stdin_and_kubernetes_list(tmp_path: Path) -> None:
    lst = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [_slice("node-z", [_device("gpu-0", "NVIDIA L4", "550.54.15")])],
    }
    proc = dragoman(
        'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))',
        "--snapshot",
        "-",
        "-o",
        "json",
        stdin=json.dumps(lst),
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["summary"]["matched"] == 1


def test_missing_class_and_live_cluster_are_input_errors(fleet: Path) -> None:
    proc = dragoman("true", "--class", "nope", "--snapshot", str(fleet))
    assert proc.returncode == 2 and "DeviceClass nope" in proc.stderr
    # The live cluster is read like any cluster (tests/test_cel_live.py); a missing kubeconfig is bad input.
    missing = fleet.parent / "no-such-kubeconfig"
    proc = dragoman("true", "--kubeconfig", str(missing))
    assert (
        proc.returncode == 2
        and f"the kubeconfig {missing} does not exist" in proc.stderr
        and "Traceback" not in proc.stderr
    )


def test_every_syntax_error_is_listed_as_the_api_server_words_them(fleet: Path) -> None:
    """cel-go recovers past the first syntax error; the API server's answer lists all of them, and so does the CLI
    (text and JSON), in the same words and with a caret each."""
    expr = 'device.driver == "x" &&& 1 ++'
    proc = dragoman(expr, "--snapshot", str(fleet))
    assert proc.returncode == 1
    out = proc.stdout
    assert "All 3 errors, as the API server words them:" in out
    blocks = [line for line in out.splitlines() if line.startswith("ERROR: <input>:1:")]
    assert [b.split(":")[3] for b in blocks] == ["24", "29", "30"]
    assert "token recognition error at: '& '" in blocks[0] and "mismatched input '<EOF>'" in blocks[2]
    doc = json.loads(dragoman(expr, "--snapshot", str(fleet), "-o", "json").stdout)
    err = doc["compileError"]
    assert [(e["line"], e["column"]) for e in err["errors"]] == [(1, 24), (1, 29), (1, 30)]
    assert err["errors"][0]["message"] == err["message"] and (err["line"], err["column"]) == (1, 24)
    assert err["apiServerText"].count("ERROR: <input>:") == 3 and err["apiServerText"].endswith(".^")
    # One error: the list holds it alone.
    doc = json.loads(dragoman('device.driver == "x" &&', "--snapshot", str(fleet), "-o", "json").stdout)
    assert (
        len(doc["compileError"]["errors"]) == 1
        and "All " not in dragoman('device.driver == "x" &&', "--snapshot", str(fleet)).stdout
    )


DEMO = Path(__file__).resolve().parents[2] / "sim" / "scenarios" / "demo.yaml"
H100_80GI = (
    "device.attributes['gpu.nvidia.com'].productName.contains('H100') && "
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
)


def test_near_misses_come_first_not_buried_under_mig_lines() -> None:
    # Issue 30: 50 MIG "evaluated to false" lines, and the 24 H100s that only the memory clause leaves out hidden in
    # "… and 127 more".
    proc = dragoman(H100_80GI, "--snapshot", str(DEMO))
    assert proc.returncode == 1, proc.stderr  # nothing matched
    lines = proc.stdout.splitlines()
    near = lines.index("near misses (one clause alone leaves them out):")
    assert near < lines.index("by pool:")  # before the tables, right under the counts
    want = (
        "  24 NVIDIA H100 80GB HBM3 left out only by `memory >= 80Gi`: they have 81559Mi "
        "(write quantity('80G') to keep them)"
    )
    assert want in lines[near : near + 4]
    heading = next(i for i, line in enumerate(lines) if line.startswith("non-matches, near misses first ("))
    listed = lines[heading + 1 :]
    first = listed[:50]  # --limit's default: all 50 shown are near misses (64 of them), the MIG slices after
    assert all("only `" in line and "` is false" in line for line in first), first[-1]
    assert any(line.endswith("only `memory >= 80Gi` is false: it has 81559Mi") for line in first)
    assert "evaluated to false" not in proc.stdout  # the others name their first false clause


def test_near_misses_in_json() -> None:
    doc = json.loads(dragoman(H100_80GI, "--snapshot", str(DEMO), "--output", "json").stdout)
    h100 = next(n for n in doc["nearMisses"] if n["product"] == "NVIDIA H100 80GB HBM3")
    assert h100 == {
        "clause": "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0",
        "product": "NVIDIA H100 80GB HBM3",
        "devices": 24,
        "values": ["81559Mi"],
        "suggestion": "quantity('80G')",
    }


def test_control_characters_reach_the_terminal_escaped(tmp_path: Path) -> None:
    """An expression, a DeviceClass's selector or what a driver publishes can hold ESC and newlines: the text output
    shows them escaped (no escape sequence reaches the terminal, no line is forged) with the caret still under the
    character it points at; the JSON keeps the text as it is (the API server's words)."""
    evil = "\x1b[2J\x1b]0;pwned\x07"
    cls = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "evil"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{evil}" &&& true'}}]},
    }
    gpu = _device("gpu-0", f"NVIDIA H100{evil}\nforged line", "550.54.15")
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump_all([GPU_CLASS, cls, _slice("node-a", [gpu])]))

    # The class's selector does not compile: its message, snippet and caret.
    proc = dragoman("true", "--class", "evil", "--snapshot", str(path))
    assert proc.returncode == 1, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("compile error in DeviceClass evil selector #0")
    snippet, caret = lines[1][3:], lines[2][3:]
    assert "\\x1b[2J\\x1b]0;pwned\\x07" in snippet
    assert snippet[caret.index("^")] == "&" and snippet[caret.index("^") - 2 : caret.index("^") + 1] == "&&&"

    # What a device publishes, quoted in a reason or a table: escaped too.
    for expr in ('device.attributes["gpu.nvidia.com"].productName == "NVIDIA B200"', "true"):
        proc = dragoman(expr, "--snapshot", str(path), "--limit", "0")
        assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout, proc.stdout
        assert not any(line.startswith("forged line") for line in proc.stdout.splitlines()), proc.stdout
    assert "NVIDIA H100\\x1b[2J" in proc.stdout, proc.stdout

    # JSON: the text as it is, escaped by JSON itself.
    doc = json.loads(dragoman("true", "--class", "evil", "--snapshot", str(path), "-o", "json").stdout)
    assert evil in doc["compileError"]["apiServerText"]
