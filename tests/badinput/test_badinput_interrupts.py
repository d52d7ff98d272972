"""Demo runs interrupted at random points (issue 34): `check --demo`, `migrate --demo --plan`, the TUI's `--demo` and
`sim serve` (embedded) get SIGINT, SIGTERM or SIGHUP after a random delay — while starting, reading, planning or
serving — and must leave no process, no temporary folder and no credential behind (the demo's folder holds a
kubeconfig with the run's admin token). Each run gets a TMPDIR of its own, so anything left in it is this run's.

The default suite interrupts each command once per signal; `-m slow` does it at many more points. The seed of the
random points is in every failure message."""

from __future__ import annotations

import os
import pathlib
import pty
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.badinput import fake_binaries

DRAGOMAN = [sys.executable, "-m", "dragoman"]
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
COMMANDS = {
    "check --demo": (["check", "--demo", "-o", "json"], False),
    "migrate --demo --plan": (["migrate", "--demo", "--pool", "t4-batch", "--plan"], False),
    "the TUI --demo": (["--demo"], True),
    "sim serve": (["sim", "serve", "--scenario", "demo"], False),
}
SEED = int(os.environ.get("DRAGOMAN_INTERRUPT_SEED") or time.time())
RNG = random.Random(SEED)
MAX_DELAY = 8.0  # seconds: the demo starts in 2-6 s on a loaded machine; past that the run is serving or done


def _drain(fd: int) -> None:
    """Read the terminal's output until it closes (a full pty would block the app and hide the hang)."""
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass


def interrupt_once(tmp: pathlib.Path, command: str, sig: signal.Signals, delay: float) -> str:
    """Run `command` with TMPDIR=tmp/t, send `sig` after `delay` s, and check what it left. Returns a description."""
    args, needs_terminal = COMMANDS[command]
    private = tmp / "t"
    private.mkdir()
    kubeconfig = tmp / "served.kubeconfig"
    if command == "sim serve":
        args = [*args, "--write-kubeconfig", str(kubeconfig)]
    env = {**os.environ, "TMPDIR": str(private), "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"}
    env.pop("KUBECONFIG", None)
    where = f"{command} / {sig.name} after {delay:.2f} s (seed {SEED})"
    master = None
    if needs_terminal:
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            DRAGOMAN + args, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        threading.Thread(target=_drain, args=(master,), daemon=True).start()
    else:
        proc = subprocess.Popen(
            DRAGOMAN + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
        )
    try:
        time.sleep(delay)
        finished_first = proc.poll() is not None
        if not finished_first:
            proc.send_signal(sig)
        try:
            code = proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError(f"{where}: still running 60 s after the signal") from None
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if not finished_first:
            # -sig: the signal came while Python was still starting, before dragoman ran (nothing made yet).
            assert code in (128 + sig, -sig, 0, 1), f"{where}: exit {code}\n{err[-2000:]}"
        assert "Traceback" not in err, f"{where}:\n{err[-3000:]}"
        # The demo's child notices within a second that its parent is gone, and cleans up after itself.
        deadline = time.monotonic() + 15
        while (fake_binaries.processes_mentioning(str(private)) or list(private.iterdir())) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.2)
        left = fake_binaries.processes_mentioning(str(private))
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert not left, f"{where}: processes left running: {left}"
        leftovers = sorted(p.name for p in private.iterdir())
        assert leftovers == [], f"{where}: left in its temporary folder: {leftovers}"
        return where
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if master is not None:
            os.close(master)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_demo_interrupted_at_a_random_point_leaves_nothing_behind(
    command: str, sig: signal.Signals, tmp_path: pathlib.Path
) -> None:
    interrupt_once(tmp_path, command, sig, RNG.uniform(0.05, MAX_DELAY))


@pytest.mark.slow
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_demo_interrupted_at_many_random_points_leaves_nothing_behind(command: str, tmp_path: pathlib.Path) -> None:
    for i in range(12):
        run = tmp_path / str(i)
        run.mkdir()
        interrupt_once(run, command, RNG.choice(SIGNALS), RNG.uniform(0.0, MAX_DELAY * 1.5))


@pytest.mark.controlplane
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_demo_on_the_real_control_plane_interrupted_leaves_nothing_behind(
    sig: signal.Signals, tmp_path: pathlib.Path
) -> None:
    """`check --demo --control-plane` at a random point of its minutes-long start: the demo's child, the four
    control-plane processes (their own sessions) and the run's folder (certificates, tokens) all go."""
    from tests.controlplane.support import binaries_dir

    COMMANDS["check --demo --control-plane"] = (["--demo", "--control-plane", str(binaries_dir()), "check"], False)
    try:
        interrupt_once(tmp_path, "check --demo --control-plane", sig, RNG.uniform(0.5, 40.0))
    finally:
        COMMANDS.pop("check --demo --control-plane")


def test_the_demo_folder_is_private_and_removed_by_stop_even_before_a_start(
    tmp_path: pathlib.Path, monkeypatch
) -> None:
    import tempfile

    from dragoman.tui.source import DemoProcess

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    demo = DemoProcess()
    assert oct(os.stat(demo.dir).st_mode & 0o777) == "0o700", "never readable by others"
    demo.stop()
    assert list(tmp_path.iterdir()) == []
