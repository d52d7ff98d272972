"""Bad-input corpus: snapshot files that are not YAML, not Kubernetes, or hold objects of the wrong types, huge or
unicode
values, YAML bombs — through `dragoman check`, `dragoman cel` and `dragoman snapshot` (which then writes nothing)."""

from __future__ import annotations

import json
import pathlib

import pytest

from tests.badinput.badinput_support import assert_sentence, run_cli

NODE = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"

# Inputs that are not a fleet: exit 2 and one sentence from every reader.
UNREADABLE = {
    "tab-indented": "apiVersion: v1\nkind: Node\nmetadata:\n\tname: x\n",
    "unclosed-flow": "items: [ {kind: Node\n",
    "a-scalar": "just some words\n",
    "a-number": "42\n",
    "list-of-strings": "- a\n- b\n",
    "broken-json": '{"kind": "List", "items": [',
    "json-array-of-numbers": "[1, 2, 3]",
    "no-kind": "apiVersion: v1\nmetadata: {name: x}\n",
    "no-name": "apiVersion: v1\nkind: Node\nmetadata: {}\n",
    "metadata-a-string": "apiVersion: v1\nkind: Node\nmetadata: n1\n",
    "kind-a-number": "apiVersion: v1\nkind: 7\nmetadata: {name: x}\n",
    "only-comments": "# nothing here\n# at all\n",
    "empty": "",
    "python-tag": "!!python/object/apply:os.system ['echo pwned']\n",
    "list-items-not-objects": "apiVersion: v1\nkind: List\nitems: [1, 2]\n",
    "billion-laughs": (
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))
    ),
    "deep-nesting-json": "[" * 50_000 + "]" * 50_000,
    "deep-nesting-yaml": "a:\n" + "".join("  " * i + "- \n" for i in range(1, 3000)),
}


def _file(tmp_path: pathlib.Path, text: str | bytes, name: str = "snap.yaml") -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_an_unreadable_snapshot_is_one_sentence_everywhere(tmp_path: pathlib.Path, name: str) -> None:
    path = _file(tmp_path, UNREADABLE[name])
    for argv in (
        ["check", "--snapshot", path],
        ["cel", "true", "--snapshot", path],
        ["snapshot", str(tmp_path / "out.yaml"), "--snapshot", path],
    ):
        code, out, err = run_cli(*argv)
        if argv[0] == "cel" and code == 1:
            # `dragoman cel` reads any objects and reports that none of them is a device: a result, not a crash.
            assert "0 devices" in out and "Traceback" not in err
            continue
        assert_sentence(code, err)
    assert not (tmp_path / "out.yaml").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap.yaml"], "no temporary file left behind"


def test_a_binary_snapshot(tmp_path: pathlib.Path) -> None:
    path = _file(tmp_path, bytes(range(256)) * 8)
    assert_sentence(*run_cli("check", "--snapshot", path)[::2], words=["not"])
    assert_sentence(*run_cli("cel", "true", "--snapshot", path)[::2])


def test_a_missing_snapshot_and_a_folder(tmp_path: pathlib.Path) -> None:
    assert_sentence(*run_cli("check", "--snapshot", str(tmp_path / "nope.yaml"))[::2], words=["does not exist"])
    assert_sentence(*run_cli("check", "--snapshot", str(tmp_path))[::2], words=["directory"])
    assert_sentence(*run_cli("cel", "true", "--snapshot", str(tmp_path / "nope.yaml"))[::2], words=["does not exist"])


def test_a_snapshot_into_a_missing_folder_writes_nothing(tmp_path: pathlib.Path) -> None:
    path = _file(tmp_path, NODE)
    assert_sentence(
        *run_cli("snapshot", str(tmp_path / "no" / "such" / "out.yaml"), "--snapshot", path)[::2],
        words=["does not exist"],
    )


# Kubernetes-looking objects whose fields have the wrong types: the fleet is read, the odd object does not crash the
# model.
WRONG_TYPES = {
    "node-labels-a-list": "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: [a, b]}\n",
    "node-status-a-string": "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: broken\n",
    "node-allocatable-gpu-nonsense": (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {nvidia.com/gpu: lots}, "
        "capacity: {nvidia.com/gpu: [1]}}\n"
    ),
    "node-conditions-a-dict": (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {conditions: {Ready: true}, nodeInfo: 3}\n"
    ),
    "pod-containers-a-string": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\nspec: {nodeName: n1, containers: "
        "nope}\nstatus: {phase: Pending}\n"
    ),
    "pod-limits-a-list": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\nspec:\n  containers:\n"
        "  - {name: c, resources: {limits: [nvidia.com/gpu]}}\nstatus: {phase: 7}\n"
    ),
    "pod-gpu-limit-not-a-quantity": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\nspec:\n  containers:\n"
        "  - {name: c, resources: {limits: {nvidia.com/gpu: two}}}\nstatus: {phase: Pending}\n"
    ),
    "slice-devices-a-dict": (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: "
        "gpu.nvidia.com, nodeName: n1, pool: {name: n1, generation: 1, resourceSliceCount: 1}, devices: "
        "{a: 1}}\n"
    ),
    "slice-attributes-wrong": (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: "
        "gpu.nvidia.com, nodeName: n1, pool: {name: n1, generation: x, resourceSliceCount: 1},\n  devices: "
        "[{name: gpu-0, attributes: {productName: 3, memory: [1], x: {int: big}}, capacity: {memory: "
        "{value: huge}}}, 5]}\n"
    ),
    "slice-pool-missing": (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: 5}\n"
    ),
    "class-selectors-a-string": (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {selectors: nope, "
        "extendedResourceName: 3}\n"
    ),
    "class-cel-not-a-string": (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {selectors: [{cel: "
        "{expression: [1]}}, 4]}\n"
    ),
    "claim-status-wrong": (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: d}\n"
        "spec: {devices: {requests: nope}}\nstatus: {allocation: {devices: {results: [7]}}, reservedFor: x}\n"
    ),
    "daemonset-affinity-wrong": (
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: nvidia-device-plugin-daemonset, namespace: "
        "kube-system}\nspec: {template: {spec: {affinity: {nodeAffinity: 3}, nodeSelector: [x]}}}\n"
    ),
    "huge-values": NODE + "  labels: {big: " + "x" * 200_000 + "}\n  annotations: {huge: '" + "y" * 2_000_000 + "'}\n",
    "unicode-names": (
        'apiVersion: v1\nkind: Node\nmetadata:\n  name: "nœud-🚀-\u202eevil\u202c-節点"\n  labels: {pool: "ǥpu-池"}\n'
        "status: {allocatable: {nvidia.com/gpu: '8'}}\n"
    ),
    "control-characters": 'apiVersion: v1\nkind: Node\nmetadata:\n  name: "n\\x1b[31mred\\x07\\x00"\n',
}


@pytest.mark.parametrize("name", sorted(WRONG_TYPES))
def test_objects_of_the_wrong_types_do_not_crash_check(tmp_path: pathlib.Path, name: str) -> None:
    path = _file(tmp_path, WRONG_TYPES[name])
    code, out, err = run_cli("check", "--snapshot", path)
    assert "Traceback" not in err
    if code == 2:
        assert_sentence(code, err)
    else:
        assert code in (0, 1), err
        assert out.startswith("Fleet read from snapshot")
    code, _out, err = run_cli("cel", 'device.driver == "gpu.nvidia.com"', "--snapshot", path)
    assert code in (1, 0) or (code == 2 and assert_sentence(code, err))
    out_path = tmp_path / "out.yaml"
    code, _out, err = run_cli("snapshot", str(out_path), "--snapshot", path)
    assert code in (0, 2) and "Traceback" not in err
    assert out_path.exists() == (code == 0)


def test_unicode_survives_a_snapshot_round_trip(tmp_path: pathlib.Path) -> None:
    path = _file(tmp_path, WRONG_TYPES["unicode-names"])
    out_path = tmp_path / "out.yaml"
    assert run_cli("snapshot", str(out_path), "--snapshot", path)[0] == 0
    code, out, _err = run_cli("check", "--snapshot", str(out_path), "--output", "json")
    assert code in (0, 1)
    doc = json.loads(out)
    assert doc["summary"]["nodes"] == 1
    assert "ǥpu-池" in out_path.read_text(encoding="utf-8")


def _laughs(depth: int, indent: str = "") -> str:
    """Aliases `depth` deep, nine of the one above in each: 9**(depth + 1) strings once expanded."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'] + [
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]" for i in range(depth)
    ]
    return "".join(indent + line + "\n" for line in lines)


BOMBS = {
    # Nine deep in a field dragoman does not read: 9**9 strings if expanded.
    "in-a-field": f"apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nspec:\n  laughs:\n{_laughs(8, '    ')}",
    "in-a-list-item": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n"
    f"  spec:\n    containers: []\n    extra:\n{_laughs(8, '      ')}",
    # Each document under the bound (9**6 strings), the three over it: the bound is on the whole file.
    "a-stream-of-small-ones": "---\n".join(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\nspec:\n  laughs:\n{_laughs(5, '    ')}"
        for i in range(3)
    ),
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_a_billion_laughs_is_one_sentence_quickly_in_bounded_memory(tmp_path: pathlib.Path, name: str) -> None:
    """Aliases that would expand to millions of values are refused before anything can expand them (the TUI's YAML
    page, a JSON dump), by every reader: exit 2, one sentence, in seconds, in a few MB."""
    import time
    import tracemalloc

    path = _file(tmp_path, BOMBS[name])
    assert len(BOMBS[name]) < 2_000
    out_path = tmp_path / "out.yaml"
    for argv in (
        ["check", "--snapshot", path],
        ["check", "--snapshot", path, "--output", "json"],
        ["cel", "true", "--snapshot", path],
        ["snapshot", str(out_path), "--snapshot", path],
        ["--snapshot", path],  # the TUI: refused before its first frame
    ):
        tracemalloc.start()
        t0 = time.monotonic()
        try:
            code, _out, err = run_cli(*argv)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert_sentence(code, err, words=["not Kubernetes YAML", "aliases expand"])
        assert time.monotonic() - t0 < 10, argv
        assert peak < 64 * 1024 * 1024, f"{argv}: {peak >> 20} MiB"
    assert not out_path.exists()


def test_a_few_aliases_are_still_read(tmp_path: pathlib.Path) -> None:
    # Hand-written YAML may share a block through an anchor; only an expansion far beyond the text is refused.
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: &l {pool: a, gpu: 'true'}}}\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: n2, labels: *l}}\n"
    )
    code, out, err = run_cli("check", "--snapshot", _file(tmp_path, text), "--output", "json")
    assert code in (0, 1), err
    assert json.loads(out)["summary"]["nodes"] == 2
