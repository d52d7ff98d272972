"""The process groups dragoman starts (etcd, kube-apiserver, kube-scheduler, kube-controller-manager, Prometheus,
each node's container runtime and kubelet): how they are ended, and who ends them when dragoman cannot.

Each runs in a process group of its own, so a Ctrl+C meant for dragoman reaches them only through a stop() that
ends them in order. The price is that a dragoman killed outright (SIGKILL, the OOM killer, a CI job's timeout)
leaves them running: an etcd and a kube-apiserver holding ports, memory and a run folder until someone finds them.
The reaper closes that gap: a small process of its own that reads a pipe from dragoman, each line a group to end or
to forget (or a run folder to remove or keep), and ends every group still named, then removes every folder still
named, when the pipe closes, which happens when dragoman dies however it dies.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable

log = logging.getLogger("dragoman.sim.controlplane")

TERM_GRACE = 10.0  # seconds a group has after SIGTERM before SIGKILL (etcd and kube-apiserver shut down in ~1 s)


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def end_groups(procs: Iterable[subprocess.Popen | None], *, grace: float = TERM_GRACE, cont: bool = False) -> None:
    """End processes and everything in their process groups: SIGTERM to every group at once (in the order given),
    then wait for each, sharing one `grace` deadline; what is left of a group then gets SIGKILL (a child that ignored
    SIGTERM, a process that did not end in time). `cont`: SIGCONT after SIGTERM, for a group a fault stopped (it acts
    on SIGTERM only once it runs again). grace=0: SIGKILL at once. Each ended process is forgotten by the reaper."""
    procs = [p for p in procs if p is not None]
    if grace > 0:
        for proc in procs:
            if proc.poll() is None:
                _signal_group(proc.pid, signal.SIGTERM)
                if cont:
                    _signal_group(proc.pid, signal.SIGCONT)
    deadline = time.monotonic() + grace
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()) if grace > 0 else 0)
        except subprocess.TimeoutExpired:
            pass
        # What is left of its group, whether or not its leader ended (a plugin that ignored SIGTERM).
        _signal_group(proc.pid, signal.SIGKILL)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        forget(proc)


# The reaper's program: no import of dragoman (it starts in ~20 ms with -I -S), no signal but SIGKILL ends it early
# (a Ctrl+C at dragoman's terminal reaches dragoman, which stops its groups itself and then closes the pipe).
_REAPER = r"""
import os, signal, sys, time
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
    signal.signal(s, signal.SIG_IGN)
groups, folders = set(), set()
for line in sys.stdin.buffer:
    word = line.rstrip(b"\n")
    if word[:1] in (b"+", b"-") and word[1:].isdigit():
        (groups.add if word[:1] == b"+" else groups.discard)(int(word[1:]))
    elif word[:1] in (b"d", b"u") and word[1:2] == b"/":
        (folders.add if word[:1] == b"d" else folders.discard)(word[1:])
def alive(g):
    try:
        os.killpg(g, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False
left = [g for g in groups if alive(g)]
for g in left:
    try:
        os.killpg(g, signal.SIGTERM)
        os.killpg(g, signal.SIGCONT)
    except (ProcessLookupError, PermissionError):
        pass
end = time.monotonic() + float(sys.argv[1])
while left and time.monotonic() < end:
    time.sleep(0.1)
    left = [g for g in left if alive(g)]
for g in left:
    try:
        os.killpg(g, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
end = time.monotonic() + 5
while left and time.monotonic() < end:
    time.sleep(0.1)
    left = [g for g in left if alive(g)]
if folders:
    import shutil
    for f in folders:
        shutil.rmtree(f, ignore_errors=True)
"""


class Reaper:
    """One reaper process for this dragoman process, started on first use. Writes to it are best effort: a reaper
    that could not start or has gone leaves dragoman working as before (its stop() still ends every group).

    It also remembers what it named: a reaper started again (the one before was killed, or its pipe broke) is told
    every group and folder still named, so a group registered before the restart is not left behind."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._pid = 0  # the dragoman process the reaper serves: a forked child must start its own
        self._groups: set[int] = set()
        self._folders: set[str] = set()
        self._owner = os.getpid()  # whose names these are

    def _pipe(self) -> subprocess.Popen | None:
        if self._proc is not None and self._pid == os.getpid() and self._proc.poll() is None:
            return self._proc
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _REAPER, str(TERM_GRACE)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # Its own session: a Ctrl+C or a closed terminal that ends dragoman does not end the reaper first.
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            log.warning("no reaper for the control plane's processes (%s): a killed dragoman would leave them", exc)
            self._proc = None
            return None
        self._pid = os.getpid()
        known = [f"+{g}" for g in sorted(self._groups)] + ["d" + f for f in sorted(self._folders)]
        if known and not self._write(self._proc, known):
            return None
        return self._proc

    def _write(self, proc: subprocess.Popen, lines: list[str]) -> bool:
        if proc.stdin is None:
            return False
        try:
            proc.stdin.write(b"".join(os.fsencode(line) + b"\n" for line in lines))
            proc.stdin.flush()
            return True
        except OSError:
            self._proc = None
            return False

    def _say(self, line: str) -> None:
        with self._lock:
            if self._owner != os.getpid():
                # A forked child inherits its parent's names: those groups are the parent's to end, not the child's.
                self._groups.clear()
                self._folders.clear()
                self._owner = os.getpid()
            word, rest = line[0], line[1:]
            if word in "+-":
                (self._groups.add if word == "+" else self._groups.discard)(int(rest))
            else:
                (self._folders.add if word == "d" else self._folders.discard)(rest)
            if word in "-u" and self._proc is None:
                return  # nothing was ever told to a reaper: no need to start one to forget
            proc = self._pipe()
            if proc is not None:
                self._write(proc, [line])

    def watch(self, proc: subprocess.Popen) -> None:
        """End `proc`'s group (it leads one: start_new_session) if dragoman dies before forgetting it."""
        self._say(f"+{proc.pid}")

    def forget(self, proc: subprocess.Popen) -> None:
        self._say(f"-{proc.pid}")

    def own_folder(self, path: os.PathLike | str) -> None:
        """Remove `path` (a run folder dragoman made: mkdtemp) after ending the groups, if dragoman dies first."""
        text = os.path.abspath(os.fspath(path))
        if "\n" not in text:
            self._say("d" + text)

    def disown_folder(self, path: os.PathLike | str) -> None:
        self._say("u" + os.path.abspath(os.fspath(path)))

    @property
    def pid(self) -> int | None:
        """The reaper's pid, once started (tests look for it)."""
        return self._proc.pid if self._proc is not None else None


REAPER = Reaper()


def spawn(args: list[str], **kwargs) -> subprocess.Popen:
    """subprocess.Popen in a process group of its own, which the reaper ends if dragoman dies without ending it."""
    proc = subprocess.Popen(args, start_new_session=True, **kwargs)
    REAPER.watch(proc)
    return proc


def forget(proc: subprocess.Popen) -> None:
    REAPER.forget(proc)
