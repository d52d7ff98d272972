"""Scenario files as hostile input: read through the one bounded reader, checked as the API server would check their
objects (decoding, then sim/api/validation), their counts within the simulator's bounds, and only real scenarios
accepted by name. Every refusal is one sentence and exit 2, before anything starts."""

from __future__ import annotations

import os
import pathlib
import threading
import time

import pytest
from dragoman.fleet import safefile
from dragoman.fleet.errors import UserError
from dragoman.sim import scenario as scenario_mod

from tests.badinput.badinput_support import assert_sentence, run_cli

DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d, namespace: default}}\n"
    "spec: {{replicas: {replicas}, selector: {{matchLabels: {{a: b}}}}, template: {{metadata: {{labels: {{a: b}}}}, "
    "spec: {{containers: [{{name: c, image: i}}]}}}}}}\n"
)
CONFIG = "apiVersion: sim.dragoman.io/v1\nkind: SimulatorConfig\n"
# A ConfigMap whose data is a billion laughs: 10 strings, 10 of those, ... ten levels deep.
BOMB_CONFIGMAP = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata:\n  a: &a [x,x,x,x,x,x,x,x,x,x]\n"
    + "".join(f"  {chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(9))
)

HOSTILE: dict[str, tuple[str | bytes, list[str]]] = {
    "kind-5": ("kind: 5\napiVersion: v1\nmetadata: {name: a}\n", ["no kind and apiVersion"]),
    "kind-null": ("kind: null\n", ["no kind and apiVersion"]),
    "a-number": ("5\n", ["is a int, not an object"]),
    "items-a-string": ("apiVersion: v1\nkind: List\nitems: nope\n", ["not a list"]),
    "speed-a-list": (CONFIG + "speed: [1]\n", ["speed is [1]"]),
    "speed-negative": (CONFIG + "speed: -3\n", ["speed is -3"]),
    "speed-nan": (CONFIG + "speed: .nan\n", ["speed"]),
    "users-a-number": (CONFIG + "users: 5\n", ["users must be a list"]),
    "user-without-name": (CONFIG + "users: [{groups: [a]}]\n", ["user 1 must be a mapping with a name"]),
    "user-groups-a-string": (CONFIG + "users: [{name: u, groups: ops}]\n", ["groups must be a list of strings"]),
    "faults-a-list": (CONFIG + "faults: [1]\n", ["faults must be a string"]),
    "faults-nonsense": (CONFIG + "faults: 'error=lots'\n", ["faults"]),
    "anonymous-a-string": (CONFIG + "anonymousRead: 'yes'\n", ["anonymousRead must be true or false"]),
    "start-not-a-time": (CONFIG + "startTime: yesterday\n", ["startTime is yesterday", "RFC 3339"]),
    "start-a-number": (CONFIG + "startTime: 1764489600\n", ["startTime is 1764489600", "RFC 3339"]),
    "labels-a-list": ("apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: [a, b]}\n", ["metadata.labels"]),
    # YAML allows keys JSON has not: the sentence names the object, the map and the key (it once read "malformed
    # object: 'int' object has no attribute 'split'").
    "label-key-a-number": (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {1: x}}\n",
        ["Node 'n1'", "metadata.labels", "the key 1 is not a string"],
    ),
    "annotation-key-a-bool": (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1, annotations: {true: x}}\n",
        ["Node 'n1'", "metadata.annotations", "the key true is not a string"],
    ),
    "selector-key-a-number": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
        "spec: {nodeSelector: {7: x}, containers: [{name: c, image: i}]}\n",
        ["Pod 'p'", "spec.nodeSelector", "the key 7 is not a string"],
    ),
    "name-a-number": ("apiVersion: v1\nkind: Node\nmetadata: {name: 5}\n", ["ObjectMeta.metadata.name", "string"]),
    "name-100k": ("apiVersion: v1\nkind: Node\nmetadata: {name: " + "a" * 100_000 + "}\n", ["metadata.name", "…"]),
    "replicas-negative": (DEPLOYMENT.format(replicas=-1), ["spec.replicas", "greater than or equal to 0"]),
    "gpu-limit-negative": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
        "spec: {containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: -1}}}]}\n",
        ["limits[nvidia.com/gpu]"],
    ),
    "replicas-1e9": (DEPLOYMENT.format(replicas=1_000_000_000), ["1,000,000,000 pods", "at most 200,000"]),
    "indexed-completions-1e9": (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: default}\nspec: {completionMode: Indexed, "
        "completions: 1000000000, parallelism: 1, template: {spec: {restartPolicy: Never, "
        "containers: [{name: c, image: i}]}}}\n",
        ["1,000,000,000 pods"],
    ),
    "gpus-1e9": (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {nvidia.com/gpu.count: '1000000000', "
        "nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}}\n",
        ["nvidia.com/gpu.count is 1000000000", "at most 64 GPUs"],
    ),
    "alias-bomb-configmap": (BOMB_CONFIGMAP, ["aliases expand"]),
    "deep-nesting": ("a:\n" + "".join(" " * i + "- \n" for i in range(1, 200)), ["nested more than 100 levels"]),
    "not-utf8": (b"apiVersion: v1\nkind: Node\nmetadata: {name: \xff\xfe}\n", ["not a text file"]),
    "invalid-yaml": ("kind: [unclosed\n", ["not valid YAML at line"]),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_scenario_is_one_sentence_before_anything_starts(tmp_path: pathlib.Path, name: str) -> None:
    text, words = HOSTILE[name]
    path = tmp_path / "scenario.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    code, out, err = run_cli("sim", "serve", "--scenario", str(path))
    sentence = assert_sentence(code, err, words=words)
    assert len(sentence) < 700, "a 100k-character name is cut, not repeated"
    assert "serving" not in out, "nothing started"


def test_too_many_nodes_is_one_sentence(tmp_path: pathlib.Path) -> None:
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}} for i in range(4)]
    with pytest.raises(scenario_mod.ScenarioError, match="4 nodes; the simulator models at most 3"):
        old, scenario_mod.MAX_NODES = scenario_mod.MAX_NODES, 3
        try:
            scenario_mod.from_documents(nodes)
        finally:
            scenario_mod.MAX_NODES = old


@pytest.mark.parametrize("name", ["nvidia", "demo_build", "__init__", "os", "../demo"])
def test_module_names_are_not_scenarios(name: str) -> None:
    code, out, err = run_cli("sim", "serve", "--scenario", name)
    assert_sentence(code, err, words=["no scenario named" if "/" not in name else "does not exist"])


def test_scenario_from_dev_zero_is_refused_at_once() -> None:
    started = time.monotonic()
    assert_sentence(*run_cli("sim", "serve", "--scenario", "/dev/zero")[::2], words=["is a device"])
    assert time.monotonic() - started < 30


def test_a_fifo_scenario_nobody_writes_ends_with_a_sentence(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "scenario.yaml"
    os.mkfifo(fifo)
    monkeypatch.setattr(safefile, "READ_WAIT_SECONDS", 0.5)
    done: list[BaseException | None] = []

    def load() -> None:
        try:
            scenario_mod.load(str(fifo))
            done.append(None)
        except BaseException as exc:  # noqa: BLE001 - reported below
            done.append(exc)

    t = threading.Thread(target=load, daemon=True)
    t.start()
    t.join(20)
    assert done, "the FIFO read hung"
    assert isinstance(done[0], UserError) and "sent nothing within 0.5 seconds" in done[0].message


def test_the_shipped_scenarios_are_valid_as_the_api_server_validates() -> None:
    # load() trusts the shipped files (no validation on every demo start); this is where they are checked.
    for name in scenario_mod.available():
        path = scenario_mod.SCENARIO_DIR / f"{name}.yaml"
        if path.exists():
            assert scenario_mod.load_file(path, validate=True).objects


def test_a_valid_scenario_still_loads(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(CONFIG + "speed: 2\nusers: [{name: u, groups: [g]}]\n---\n" + DEPLOYMENT.format(replicas=3))
    sc = scenario_mod.load(str(path))
    assert sc.speed == 2.0 and sc.users == [{"name": "u", "groups": ["g"]}]
    assert [o["kind"] for o in sc.objects] == ["Deployment"]
