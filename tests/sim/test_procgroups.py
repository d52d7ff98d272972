"""The control plane's processes end with dragoman however dragoman ends (sim/controlplane/procgroups.py): stop()
ends their groups in order, and the reaper ends what a killed dragoman left."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

from dragoman.sim.controlplane import procgroups


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    # A zombie leader still answers signal 0: it counts as gone once it has exited.
    try:
        with open(f"/proc/{pgid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return any(_pgid_of(p) == pgid for p in _pids())


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _pgid_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _wait_gone(pgid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pgid):
            return True
        time.sleep(0.1)
    return False


# A "dragoman" that starts two component groups through procgroups.spawn, each with a child of its own (a component
# that forked), forgets the second, prints both group ids and then waits to be killed.
PARENT = textwrap.dedent(
    """
    import os, subprocess, sys, tempfile, time
    from dragoman.sim.controlplane import procgroups
    watched = procgroups.spawn(["sh", "-c", "sleep 300 & exec sleep 300"], stdin=subprocess.DEVNULL)
    forgotten = procgroups.spawn(["sh", "-c", "sleep 300 & exec sleep 300"], stdin=subprocess.DEVNULL)
    procgroups.forget(forgotten)
    run, kept = tempfile.mkdtemp(prefix="dragoman-cp-"), tempfile.mkdtemp(prefix="dragoman-cp-")
    open(os.path.join(run, "etcd.log"), "w").write("x")
    procgroups.REAPER.own_folder(run)
    procgroups.REAPER.own_folder(kept)
    procgroups.REAPER.disown_folder(kept)
    print(watched.pid, forgotten.pid, procgroups.REAPER.pid, run, kept, flush=True)
    time.sleep(300)
    """
)


def _kill_groups(*pgids: int) -> None:
    """A test's own cleanup: whatever the reaper was meant to end and did not, so a failure leaves nothing running."""
    for g in pgids:
        try:
            os.killpg(g, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_killed_dragoman_leaves_no_component_it_was_watching_nor_its_run_folder() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    said = parent.stdout.readline().split()
    watched, forgotten, reaper = (int(x) for x in said[:3])
    run, kept = said[3:]
    try:
        assert _alive(watched) and _alive(forgotten)
        parent.kill()  # SIGKILL: no finally, no atexit, no stop()
        parent.wait()
        # The reaper saw its pipe close: SIGTERM to the group, the leader and its forked child alike.
        assert _wait_gone(watched, 15), "the watched group outlived the killed dragoman"
        assert _wait_gone(reaper, 5), "the reaper did not exit once its work was done"
        # A group dragoman said it had ended itself is not the reaper's to end; nor a folder it said it had removed.
        assert _alive(forgotten)
        assert not os.path.exists(run), "the killed dragoman's run folder was left"
        assert os.path.isdir(kept)
    finally:
        shutil.rmtree(kept, ignore_errors=True)
        _kill_groups(watched, forgotten)


# A "dragoman" whose reaper is killed after the first group is named: the reaper started for the second group must
# be told of the first too (and of the run folder), or a killed dragoman leaves the first running.
RESTARTED = textwrap.dedent(
    """
    import os, signal, subprocess, tempfile, time
    from dragoman.sim.controlplane import procgroups
    first = procgroups.spawn(["sleep", "300"], stdin=subprocess.DEVNULL)
    run = tempfile.mkdtemp(prefix="dragoman-cp-")
    procgroups.REAPER.own_folder(run)
    old = procgroups.REAPER.pid
    os.kill(old, signal.SIGKILL)
    while procgroups.REAPER._proc.poll() is None:
        time.sleep(0.05)
    second = procgroups.spawn(["sleep", "300"], stdin=subprocess.DEVNULL)
    print(first.pid, second.pid, old, procgroups.REAPER.pid, run, flush=True)
    time.sleep(300)
    """
)


def test_a_reaper_started_again_is_told_every_group_and_folder_named_before() -> None:
    parent = subprocess.Popen([sys.executable, "-c", RESTARTED], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    said = parent.stdout.readline().split()
    first, second, old, new = (int(x) for x in said[:4])
    run = said[4]
    try:
        assert old != new, "the killed reaper was not replaced"
        assert _alive(first) and _alive(second)
        parent.kill()
        parent.wait()
        assert _wait_gone(second, 15)
        assert _wait_gone(first, 15), "the group named before the reaper's restart outlived the killed dragoman"
        assert _wait_gone(new, 5)
        assert not os.path.exists(run)
    finally:
        shutil.rmtree(run, ignore_errors=True)
        _kill_groups(first, second)


def test_end_groups_kills_what_ignores_sigterm_after_the_grace_and_wakes_a_stopped_group() -> None:
    stubborn = procgroups.spawn(
        ["sh", "-c", "trap '' TERM; sleep 300 & wait"], stdin=subprocess.DEVNULL
    )  # ignores SIGTERM, as does its child (inherited)
    stopped = procgroups.spawn(["sleep", "300"], stdin=subprocess.DEVNULL)
    time.sleep(0.3)
    os.killpg(stopped.pid, signal.SIGSTOP)
    t0 = time.monotonic()
    procgroups.end_groups([stopped, stubborn], grace=1.0, cont=True)
    took = time.monotonic() - t0
    assert stopped.returncode == -signal.SIGTERM  # woken by SIGCONT, it acted on SIGTERM
    assert stubborn.returncode == -signal.SIGKILL
    assert 0.9 <= took < 8
    assert _wait_gone(stubborn.pid, 5), "the stubborn group's child was left"


def test_grace_zero_kills_at_once() -> None:
    proc = procgroups.spawn(["sleep", "300"], stdin=subprocess.DEVNULL)
    procgroups.end_groups([proc], grace=0)
    assert proc.returncode == -signal.SIGKILL
