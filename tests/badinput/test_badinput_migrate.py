"""Bad-input corpus, `dragoman migrate`: an unknown pool, plan files that are garbage or for another pool, a snapshot as
the
source, nonsense options — one sentence and an exit code each, and no write in the simulator's request log."""

from __future__ import annotations

import asyncio
import json
import pathlib

import pytest

from tests.actions.migrate_support import T4, base_args, demo
from tests.badinput.badinput_support import assert_sentence, run_cli

PLAN_FILES = {
    "not-json": ("{ this is not json", (2,), ["plan file"]),
    "a-list": ("[1, 2, 3]", (2, 3), []),
    "another-pool": (
        json.dumps(
            {
                "schemaVersion": 1,
                "kind": "MigrationPlan",
                "id": "p1",
                "pool": "some-other-pool",
                "cluster": {"server": "https://127.0.0.1:1", "kubeSystemUID": "u"},
                "steps": [],
            }
        ),
        (3,),
        ["some-other-pool"],
    ),
    "not-a-plan": (json.dumps({"pool": "some-other-pool", "steps": []}), (2,), ["not a plan"]),
    "empty": ("", (2,), ["plan file"]),
    "wrong-types": (json.dumps({"pool": T4, "steps": "all", "planId": 7, "fingerprint": []}), (2, 3), []),
}


async def test_migrate_answers_bad_input_with_one_sentence_and_writes_nothing(tmp_path: pathlib.Path) -> None:
    async with demo() as sim:

        async def run(*argv: str) -> tuple[int, str, str]:
            return await asyncio.to_thread(run_cli, *argv)

        code, _out, err = await run(*base_args(sim, tmp_path, "no-such-pool", "--plan"))
        assert_sentence(code, err, codes=(2, 3), words=["no-such-pool"])
        for name, (text, codes, words) in PLAN_FILES.items():
            plan = tmp_path / f"{name}.json"
            plan.write_text(text)
            code, _out, err = await run(*base_args(sim, tmp_path, T4, "--apply-plan", str(plan), "--yes"))
            assert_sentence(code, err, codes=codes, words=words)
        code, _out, err = await run(
            *base_args(sim, tmp_path, T4, "--apply-plan", str(tmp_path / "missing.json"), "--yes")
        )
        assert_sentence(code, err, words=["plan file"])
        code, _out, err = await run(*base_args(sim, tmp_path, T4, "--step", "no-such-step", "--plan"))
        assert_sentence(code, err, codes=(2, 3), words=["no-such-step"])
        assert sim.request_log.writes() == []
        assert not (tmp_path / "audit.jsonl").exists() or '"intent"' not in (tmp_path / "audit.jsonl").read_text()


def test_migrate_refuses_a_snapshot() -> None:
    code, _out, err = run_cli("--snapshot", "x.yaml", "migrate", "--pool", "a", "--plan")
    assert_sentence(code, err, codes=(3,), words=["snapshot"])


def test_migrate_does_not_take_snapshot_after_the_subcommand_and_says_so_as_argparse_does(capsys) -> None:
    from dragoman.tui.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["migrate", "--pool", "a", "--plan", "--snapshot", "x.yaml"])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert "unrecognized arguments: --snapshot" in err and "Traceback" not in err
