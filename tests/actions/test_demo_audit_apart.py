"""A demo's writes are audited in the demo run's own directory: one demo session put 96 records into the operator's
real ~/.local/state/dragoman/audit.jsonl (issue 30)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys


def test_migrate_demo_keeps_its_audit_log_apart_from_the_operators(tmp_path: pathlib.Path) -> None:
    state = tmp_path / "state"
    proc = subprocess.run(
        [sys.executable, "-m", "dragoman", "migrate", "--demo", "--pool", "l4-serve", "--step", "cordon", "--yes"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "XDG_STATE_HOME": str(state)},
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    said = next(line for line in proc.stdout.splitlines() if line.startswith("audit log: "))
    assert "dragoman-demo-" in said, said  # the demo run's own directory
    assert not (state / "dragoman" / "audit.jsonl").exists()
