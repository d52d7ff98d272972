"""A large scenario's API check in a forked child (sim/scenario.BACKGROUND_OBJECTS), beside the store's load: the same
verdict, the same sentence and the same objects as the check run inline, and nothing served or written before it is
settled. The threshold is lowered here so that small scenarios take the child's path."""

from __future__ import annotations

import copy
import json
import os
import pathlib

import pytest
from dragoman.fleet import forked as forked_mod
from dragoman.fleet.errors import UserError
from dragoman.sim import scenario as scenario_mod

from tests.badinput.badinput_support import assert_sentence, run_cli
from tests.badinput.test_badinput_scenario import HOSTILE

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"a": "b"}}}


def _pod(name: str, **spec: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
    }


# Each is refused by the check, the first by an object the API server refuses before one whose count the parent
# checks itself: the parent must give the child's sentence, which is the inline check's.
REFUSED: dict[str, list[dict]] = {
    "bad-name": [NODE, {**NODE, "metadata": {"name": "Not_A_Name"}}],
    "decode-error": [NODE, _pod("p", nodeName=5)],
    "bad-before-a-count": [
        _pod("Bad_Pod"),
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "default"},
            "spec": {"replicas": 1_000_000_000, "selector": {"matchLabels": {"a": "b"}}},
        },
    ],
    "a-count-alone": [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": "default"},
            "spec": {"completions": 1_000_000_000},
        }
    ],
}


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every scenario takes the child's path (threshold 0; pytest's own threads do nothing a child could meet), and
    the children started are counted."""
    started: list[int] = []
    real = scenario_mod._BackgroundCheck

    class Counted(real):  # type: ignore[misc, valid-type]
        def __init__(self, objects: list) -> None:
            super().__init__(objects)
            started.append(self._child.pid)

    monkeypatch.setattr(scenario_mod, "BACKGROUND_OBJECTS", 0)
    monkeypatch.setattr(scenario_mod, "worth_forking", lambda: True)
    monkeypatch.setattr(scenario_mod, "_BackgroundCheck", Counted)
    return started


def _sentence(docs: list[dict], background: bool) -> str:
    try:
        sc = scenario_mod.from_documents(copy.deepcopy(docs), "s.json", validate=True, background=background)
        sc.settle()
    except scenario_mod.ScenarioError as exc:
        return str(exc)
    except UserError as exc:
        return exc.message.removeprefix("the scenario s.json is not one the simulator can load: ").removesuffix(".")
    return ""


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_child_refuses_what_the_inline_check_refuses_in_the_same_words(forks: list[int], name: str) -> None:
    inline = _sentence(REFUSED[name], background=False)
    assert inline, "the case is refused"
    assert _sentence(REFUSED[name], background=True) == inline
    assert len(forks) == 1, "the check ran in a child"


def test_a_good_scenario_settles_and_loads_as_written(forks: list[int]) -> None:
    docs = [NODE, _pod("p1"), _pod("p2", nodeName="n1")]
    written = json.dumps(docs, sort_keys=True)
    sc = scenario_mod.from_documents(docs, "s.json", validate=True, background=True)
    assert sc.pending is not None and len(forks) == 1
    sc.settle()
    sc.settle()  # a second call gives the same answer without a child to ask
    assert json.dumps(sc.objects, sort_keys=True) == written, "the objects load as the file wrote them"


def test_a_refusal_is_given_again_on_a_second_settle(forks: list[int]) -> None:
    sc = scenario_mod.from_documents(copy.deepcopy(REFUSED["bad-name"]), "s.json", validate=True, background=True)
    for _ in range(2):
        with pytest.raises(UserError, match="would be refused by the API server"):
            sc.settle()


def test_a_child_that_dies_without_a_verdict_is_replaced_by_the_check_here(
    forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = os.getpid()
    real = scenario_mod._api_problem

    def dies_in_the_child(*args: object) -> str | None:
        if os.getpid() != parent:
            os._exit(9)  # as the out-of-memory killer would end it
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(scenario_mod, "_api_problem", dies_in_the_child)
    inline = _sentence(REFUSED["bad-name"], background=False)
    assert "Not_A_Name" in inline
    assert _sentence(REFUSED["bad-name"], background=True) == inline
    assert len(forks) == 1


def test_small_scenarios_and_one_thread_too_many_stay_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = [NODE, _pod("p1")]
    sc = scenario_mod.from_documents(copy.deepcopy(docs), validate=True, background=True)
    assert sc.pending is None, f"{len(docs)} objects are below BACKGROUND_OBJECTS"
    monkeypatch.setattr(scenario_mod, "BACKGROUND_OBJECTS", 0)
    monkeypatch.setattr(forked_mod.threading, "active_count", lambda: 2)
    assert scenario_mod.from_documents(copy.deepcopy(docs), validate=True, background=True).pending is None


# The hostile files whose objects the check refuses (the others are refused while reading, or by their settings,
# before any child starts).
CHECKED = [
    "annotation-key-a-bool",
    "gpu-limit-negative",
    "gpus-1e9",
    "indexed-completions-1e9",
    "label-key-a-number",
    "labels-a-list",
    "name-100k",
    "name-a-number",
    "replicas-1e9",
    "replicas-negative",
    "selector-key-a-number",
]


@pytest.mark.parametrize("name", CHECKED)
def test_sim_serve_refuses_a_hostile_scenario_checked_in_a_child_before_anything_starts(
    forks: list[int], tmp_path: pathlib.Path, name: str
) -> None:
    text, words = HOSTILE[name]
    path = tmp_path / "scenario.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    kubeconfig = tmp_path / "kubeconfig"
    code, out, err = run_cli("sim", "serve", "--scenario", str(path), "--write-kubeconfig", str(kubeconfig))
    assert_sentence(code, err, words=words)
    assert forks, "the check ran in a child"
    assert "serving" not in out and not kubeconfig.exists(), "nothing started, nothing written"
