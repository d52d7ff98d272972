"""`migrate --apply-plan F --yes` (issue 34): a file that is not a plan for this cluster and pool is refused with one
sentence — exit 2 for what is not a plan, 3 for a plan of somewhere else — and nothing is built in its place: no
request reaches the cluster before the file is judged, and no write at all."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

from tests.actions.migrate_support import L4, T4, base_args, cli, demo, real_writes
from tests.badinput.badinput_support import assert_sentence


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _with(plan: dict, edit) -> dict:
    copy = json.loads(json.dumps(plan))
    edit(copy)
    return copy


# Each: what the file holds -> (exit codes, words the sentence has). Built from a real plan where a plan is needed.
NOT_PLANS = {
    "null": (lambda p: "null", ["holds null"]),
    "a-string": (lambda p: json.dumps("apply everything"), ["holds a string"]),
    "a-number": (lambda p: "42", ["holds a number"]),
    "steps-a-string": (lambda p: json.dumps(_with(p, lambda d: d.update(steps="all"))), ["steps are a string"]),
    "steps-a-number": (lambda p: json.dumps(_with(p, lambda d: d.update(steps=8))), ["steps are a number"]),
    "steps-missing": (lambda p: json.dumps(_with(p, lambda d: d.pop("steps"))), ["steps are missing"]),
    "change-without-name": (
        lambda p: json.dumps(_with(p, lambda d: d["steps"][1]["changes"][0].pop("name"))),
        ["has no name"],
    ),
    "change-name-a-list": (
        lambda p: json.dumps(_with(p, lambda d: d["steps"][1]["changes"][0].update(name=["a"]))),
        ["not a kubernetes name"],
    ),
    "node-a-path": (
        lambda p: json.dumps(_with(p, lambda d: d["steps"][1]["nodes"].append("../../namespaces/kube-system"))),
        ["not a kubernetes name"],
    ),
    "unknown-step": (lambda p: json.dumps(_with(p, lambda d: d["steps"][1].update(step="rm-rf"))), ["not a step"]),
    "nested-deeply": (lambda p: _deep(100_000), ["nested too deeply"]),
    "deep-inside-a-change": (
        lambda p: json.dumps(p)[:-1] + ', "x": ' + _deep(50_000) + "}",
        ["nested too deeply"],
    ),
    "no-cluster": (lambda p: json.dumps(_with(p, lambda d: d.pop("cluster"))), ["names no cluster"]),
    "not-utf8": (lambda p: b"\xff\xfe{}", ["not utf-8"]),
    "an-operation-missing-its-fields": (
        lambda p: json.dumps(_with(p, lambda d: d["steps"][1]["changes"][0].update(detail={"op": "label"}))),
        ["not a label change dragoman made"],
    ),
    # Found by the large plan fuzzer: an operation named by a list was `unhashable type: 'list'`.
    "op-a-list": (
        lambda p: json.dumps(_with(p, lambda d: d["steps"][1]["changes"][0].update(detail={"op": []}))),
        ["names its operation with a list"],
    ),
    "nan": (lambda p: json.dumps(p)[:-1] + ', "x": NaN}', ["nan, infinity"]),
    "gpus-nan-text": (
        lambda p: json.dumps(_with(p, lambda d: d["steps"][2]["changes"][0]["detail"].update(gpus="NaN"))),
        ["gpus that are not a whole number"],
    ),
    "empty": (lambda p: "", ["holds no documents"]),
    "two-documents": (lambda p: "kind: MigrationPlan\n---\nkind: MigrationPlan\n", ["holds 2 documents"]),
    "yaml-binary": (lambda p: "!!binary aGVsbG8=\n", ["yaml-only value"]),
    "alias-bomb": (
        lambda p: (
            "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
            + "".join(
                f"{c}: &{c} [*{b},*{b},*{b},*{b},*{b},*{b},*{b},*{b},*{b},*{b}]\n"
                for b, c in zip("abcdefgh", "bcdefghi")
            )
        ),
        ["expand"],
    ),
}


@pytest.fixture
async def planned(tmp_path: pathlib.Path, capsys):
    """The demo simulator and a real plan of pool L4 (cordon and drain) as `migrate --plan -o json` writes it."""
    async with demo() as sim:
        rc = await cli(base_args(sim, tmp_path, L4, "--step", "cordon", "--step", "drain", "--plan", "-o", "json"))
        plan = json.loads(capsys.readouterr().out)
        assert rc == 0 and plan["steps"][1]["changes"], plan
        sim.request_log.clear()
        yield sim, plan


async def test_apply_plan_refuses_what_is_not_a_plan_and_builds_nothing_in_its_place(
    planned, tmp_path: pathlib.Path, capsys
) -> None:
    sim, plan = planned
    for name, (make, words) in NOT_PLANS.items():
        content = make(plan)
        path = tmp_path / f"{name}.json"
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        rc = await cli(base_args(sim, tmp_path, L4, "--yes", "--apply-plan", str(path)))
        err = capsys.readouterr().err
        sentence = assert_sentence(rc, err, words=["plan file", *words])
        for internal in ("has no attribute", "unhashable", "KeyError", "object is not"):
            assert internal not in sentence, sentence
        # Judged before the cluster is reached: not a read, let alone a write.
        assert len(sim.request_log) == 0, f"{name}: {[r.path for r in sim.request_log][:5]}"
    assert not (tmp_path / "audit.jsonl").exists(), "not one intent was recorded"


async def test_apply_plan_refuses_a_plan_of_another_cluster_pool_or_node(
    planned, tmp_path: pathlib.Path, capsys
) -> None:
    sim, plan = planned
    cases = {
        "another-cluster": (
            _with(plan, lambda d: d["cluster"].update(kubeSystemUID="another")),
            ["another", "cluster"],
        ),
        "another-pool": (_with(plan, lambda d: d.update(pool=T4)), [T4]),
        # The right pool's name, but a node of another pool smuggled into the cordon step.
        "a-node-of-another-pool": (
            _with(plan, lambda d: d["steps"][1]["nodes"].append("gke-ml-prod-t4-batch-c3418deb-tq7g")),
            ["not in pool", "t4-batch-c3418deb-tq7g"],
        ),
    }
    for name, (content, words) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(content))
        rc = await cli(base_args(sim, tmp_path, L4, "--yes", "--apply-plan", str(path)))
        assert_sentence(rc, capsys.readouterr().err, codes=(3,), words=words)
        assert real_writes(sim) == [], name


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "folder", "missing"])
def test_apply_plan_of_a_device_fifo_or_folder_is_a_sentence_not_a_hang(target: str, tmp_path: pathlib.Path) -> None:
    path = {"fifo": str(tmp_path / "plan.fifo"), "folder": str(tmp_path), "missing": str(tmp_path / "nope.json")}.get(
        target, target
    )
    if target == "fifo":
        os.mkfifo(path)
    # A child process: a read that blocked on the FIFO would hang the test runner itself.
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "dragoman", "migrate", "--pool", "p", "--yes", "--apply-plan", path, "--demo"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert time.monotonic() - t0 < 30
    assert_sentence(proc.returncode, proc.stderr, words=["plan file"])
    assert "demo simulator" not in proc.stderr, "judged before a demo started"


def test_a_fifo_plan_is_refused_even_with_a_writer_waiting(tmp_path: pathlib.Path) -> None:
    """A writer on the other end changes nothing: a plan is a file `--plan -o json` wrote, not a stream."""
    fifo = tmp_path / "plan.fifo"
    os.mkfifo(fifo)

    def writer() -> None:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return
        os.close(fd)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    from dragoman.fleet.errors import UserError
    from dragoman.tui.commands.migrate import read_plan_file

    with pytest.raises(UserError) as exc:
        read_plan_file(str(fifo))
    assert "not a regular file" in exc.value.message
