"""The README's shared flags are the commands' flags: every reading command accepts --read-only where an operator
types it (issue 30: `check --read-only` was refused by argparse though the README said every command shares it)."""

from __future__ import annotations

import pathlib

import pytest
from dragoman.tui.cli import main

NODE = """apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {cloud.google.com/gke-nodepool: p1}}
  status: {allocatable: {cpu: "8"}}
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--read-only"],
        ["explain", "--read-only", "node", "n1"],
        ["cel", "--read-only", "true"],
        ["snapshot", "--read-only", "OUT"],
        ["--read-only", "check"],
    ],
)
def test_reading_commands_accept_read_only(tmp_path: pathlib.Path, argv: list[str], capsys) -> None:
    snap = tmp_path / "fleet.yaml"
    snap.write_text(NODE)
    argv = [str(tmp_path / "out.yaml") if a == "OUT" else a for a in argv]
    try:
        rc = main([*argv, "--snapshot", str(snap)])
    except SystemExit as exc:  # argparse refusing a flag exits 2 with "unrecognized arguments"
        rc = exc.code
    err = capsys.readouterr().err
    assert "unrecognized arguments" not in err, err
    assert rc in (0, 1), err
