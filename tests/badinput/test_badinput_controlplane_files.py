"""The real control plane's files and programs under hostile input (issue 34): user names against the token file's CSV
grammar, `controlplane build --dir` never destroying what is not dragoman's, and binaries that hang, fork, print
without end or die without a word — each a sentence, bounded in time, with no process left behind."""

from __future__ import annotations

import csv
import io
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest
from dragoman.fleet.errors import UserError
from dragoman.sim.controlplane import build as cpbuild
from dragoman.sim.controlplane.processes import ControlPlane

from tests.badinput import fake_binaries
from tests.badinput.badinput_support import assert_sentence, run_cli

# ---------------------------------------------------------------------------- the token file's grammar

HOSTILE_NAMES = [
    # A line of its own: a known token for system:masters (the finding).
    'mallory\nknown-token,root,root,"system:masters"',
    "a,b",
    'a"b',
    "carriage\rreturn",
    " leading-space",
    "trailing-space ",
    "",
    "nul\x00",
    "x" * 300,
    5,
    None,
    ["list"],
]


@pytest.fixture
def private_tmp(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """tempfile's folder for this test alone: what a refused start leaves behind is visible."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=lambda n: repr(n)[:20])
def test_a_user_name_the_token_file_cannot_hold_is_refused_before_anything_is_made(
    name: object, private_tmp: pathlib.Path
) -> None:
    with pytest.raises(UserError) as exc:
        ControlPlane({}, [{"name": name, "groups": ["viewers"]}])
    assert "token file" in exc.value.message and exc.value.exit_code == 2
    assert "\n" not in exc.value.message.split("name", 1)[1][:120] or "\\n" in exc.value.message
    assert list(private_tmp.iterdir()) == [], "nothing is made for a refused user"


@pytest.mark.parametrize(
    "users",
    [
        5,
        "alice",
        [5],
        [{"groups": ["a"]}],
        [{"name": "a", "groups": "system:masters"}],
        [{"name": "a", "groups": ["x\ny"]}],
    ],
    ids=repr,
)
def test_users_that_are_not_a_list_of_names_and_groups_are_a_sentence(users: object, private_tmp: pathlib.Path) -> None:
    with pytest.raises(UserError) as exc:
        ControlPlane({}, users)  # type: ignore[arg-type]
    assert "user" in exc.value.message and "has no attribute" not in exc.value.message


def test_the_token_file_has_one_csv_row_per_user_and_nothing_else(private_tmp: pathlib.Path) -> None:
    cp = ControlPlane({}, [{"name": "alice", "groups": ["viewers", "gpu-team"]}, {"name": "system:serviceaccount:x:y"}])
    try:
        rows = list(csv.reader(io.StringIO(cp.token_file())))
        assert [r[1] for r in rows] == ["admin", "alice", "system:serviceaccount:x:y", "dragoman-prometheus"]
        assert rows[1][3] == "viewers,gpu-team" and all(len(r) in (3, 4) for r in rows)
        assert len({r[0] for r in rows}) == 4, "a token per user, made for this run"
        assert oct(os.stat(cp.dir).st_mode & 0o777) == "0o700"
    finally:
        cp.stop()
    assert not cp.dir.exists()


# ---------------------------------------------------------------------------- binaries that misbehave


def _four(folder: pathlib.Path, make) -> dict[str, pathlib.Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return {name: make(folder / name, name) for name in cpbuild.BINARIES}


def test_a_binary_that_dies_without_a_word_is_said_so_not_empty_last_words(private_tmp: pathlib.Path) -> None:
    silent = _four(private_tmp / "bin", lambda p, _n: fake_binaries.script(p, "sys.exit(3)"))
    cp = ControlPlane(silent)
    with pytest.raises(UserError) as exc:
        cp.start(timeout=30)
    msg = exc.value.message
    assert "exited with code 3" in msg and "wrote nothing" in msg and "last words" not in msg
    assert not cp.dir.exists(), "the run's folder (tokens, keys) is removed"


def test_a_hung_daemonising_binary_is_ended_with_its_whole_group_and_said_to_have_timed_out(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cpbuild, "VERSION_TIMEOUT", 1.5)
    pids = tmp_path / "pids"
    body = (
        "child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pids)!r}, 'a').write(str(child.pid) + '\\n')\n"
        "time.sleep(300)"
    )
    folder = tmp_path / "bin"
    _four(folder, lambda p, _n: fake_binaries.script(p, body))
    t0 = time.monotonic()
    with pytest.raises(UserError) as exc:
        cpbuild.check_dir(folder)
    assert time.monotonic() - t0 < 15
    assert "did not finish within 1.5 s" in exc.value.message and "etcd" in exc.value.message
    forked = [int(x) for x in pids.read_text().split()]
    deadline = time.monotonic() + 5
    while any(fake_binaries.alive(p) for p in forked) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(fake_binaries.alive(p) for p in forked), "the daemon it forked was ended with it"


def test_a_binary_printing_without_end_on_version_is_bounded(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "bin"
    _four(folder, lambda p, _n: fake_binaries.script(p, "while True:\n    sys.stdout.write('x' * 65536)"))
    t0 = time.monotonic()
    with pytest.raises(UserError) as exc:
        cpbuild.check_dir(folder)
    assert "printed more than 64 KiB" in exc.value.message and time.monotonic() - t0 < 15


def test_binaries_that_answer_as_the_real_ones_pass(tmp_path: pathlib.Path) -> None:
    found = cpbuild.check_dir(_four(tmp_path / "bin", fake_binaries.answering)["etcd"].parent)
    assert sorted(found) == sorted(cpbuild.BINARIES)


# ---------------------------------------------------------------------------- controlplane build --dir


@pytest.fixture
def go_on_path(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    go = fake_binaries.fake_go(tmp_path / "gobin")
    monkeypatch.setenv("PATH", f"{go.parent}:{os.environ['PATH']}")
    return go


def test_build_keeps_an_existing_build_folder_and_marks_what_it_made(
    tmp_path: pathlib.Path, go_on_path: pathlib.Path
) -> None:
    d = tmp_path / "cp"
    (d / ".build").mkdir(parents=True)
    (d / ".build" / "thesis.tex").write_text("years of work")
    code, out, err = run_cli("controlplane", "build", "--dir", str(d))
    assert code == 0, err
    assert (d / ".build" / "thesis.tex").read_text() == "years of work", "a .build it did not make is not deleted"
    assert not [p for p in d.iterdir() if p.name.startswith(".dragoman-build-")], "its own scratch folder is removed"
    assert (d / cpbuild.MANIFEST).is_file() and all((d / n).is_file() for n in cpbuild.BINARIES)
    # What it built is its own: a forced rebuild may replace it.
    code, _out, err = run_cli("controlplane", "build", "--dir", str(d), "--force")
    assert code == 0, err


def test_build_is_incremental_and_builds_the_node_half_beside_the_control_plane(
    tmp_path: pathlib.Path, go_on_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control plane, the kubelet, dragoman's own commands and the older kubelet (in its own folder, from its own
    module); a second build compiles nothing; a missing kubelet is the only thing a third one builds."""
    d = tmp_path / "cp"
    log = tmp_path / "go.log"
    monkeypatch.setenv("FAKE_GO_LOG", str(log))
    code, out, err = run_cli("controlplane", "build", "--dir", str(d))
    assert code == 0, err
    built = log.read_text().splitlines()
    own = cpbuild.own_commands()
    assert "dragoman-cri" in own
    assert sorted(built) == sorted(
        [f"controlplane {cpbuild.PACKAGES[n][0]}" for n in cpbuild.BINARIES]
        + ["controlplane k8s.io/kubernetes/cmd/kubelet", "kubelet-v1.35 k8s.io/kubernetes/cmd/kubelet"]
        + [f"controlplane ./cmd/{n}" for n in own]
    )
    assert cpbuild.version_of(d / "v1.35.4" / "kubelet", "kubelet")[0] == "v1.35.4"
    assert cpbuild.version_of(d / "kubelet", "kubelet")[0] == "v1.37.2"
    assert "kubelet-v1.35.4" in out and "dragoman-cri" in out
    log.unlink()
    code, _out, err = run_cli("controlplane", "build", "--dir", str(d))
    assert code == 0, err
    assert not log.exists(), "nothing is rebuilt when everything is there"
    (d / "kubelet").unlink()
    code, _out, err = run_cli("controlplane", "build", "--dir", str(d))
    assert code == 0, err
    assert log.read_text().splitlines() == ["controlplane k8s.io/kubernetes/cmd/kubelet"]
    log.unlink()
    code, _out, err = run_cli("controlplane", "build", "--dir", str(tmp_path / "cp-only"), "--control-plane-only")
    assert code == 0, err
    assert len(log.read_text().splitlines()) == len(cpbuild.BINARIES)


def test_build_refuses_to_replace_binaries_it_did_not_make(tmp_path: pathlib.Path, go_on_path: pathlib.Path) -> None:
    d = tmp_path / "cp"
    d.mkdir()
    (d / "etcd").write_text("#!/bin/sh\necho 'my own etcd'\n")
    code, _out, err = run_cli("controlplane", "build", "--dir", str(d))
    assert_sentence(code, err, words=["dragoman did not build it"])
    assert (d / "etcd").read_text() == "#!/bin/sh\necho 'my own etcd'\n"
    # A binary it built, then changed by someone else, is not its own any more either.
    d2 = tmp_path / "cp2"
    assert run_cli("controlplane", "build", "--dir", str(d2))[0] == 0
    (d2 / "kube-scheduler").write_text("#!/bin/sh\necho patched\n")
    code, _out, err = run_cli("controlplane", "build", "--dir", str(d2), "--force")
    assert_sentence(code, err, words=["kube-scheduler"])
    assert (d2 / "kube-scheduler").read_text() == "#!/bin/sh\necho patched\n"


@pytest.mark.parametrize("case", ["file", "symlink-loop", "unwritable", "cache-home-is-a-file"])
def test_build_into_a_place_it_cannot_use_is_a_sentence(
    case: str, tmp_path: pathlib.Path, go_on_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = tmp_path / "cp"
    args = ["controlplane", "build", "--dir", str(d)]
    if case == "file":
        d.write_text("not a folder")
        words = ["not a folder"]
    elif case == "symlink-loop":
        os.symlink(d, d)
        words = ["loops"]
    elif case == "unwritable":
        d.mkdir()
        real_access = os.access
        # Root may write anywhere; the check itself is what is tested.
        monkeypatch.setattr(os, "access", lambda p, m: False if str(p) == str(d) else real_access(p, m))
        words = ["may not write"]
    else:
        (tmp_path / "cache").write_text("a file")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        args = ["controlplane", "build"]
        words = ["is a file, not a folder"]
    code, _out, err = run_cli(*args)
    assert_sentence(code, err, words=words)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_an_interrupted_build_leaves_no_compiler_running_and_no_scratch_folder(
    sig: signal.Signals, tmp_path: pathlib.Path, go_on_path: pathlib.Path
) -> None:
    d = tmp_path / "cp"
    pids = tmp_path / "go-pids"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dragoman", "controlplane", "build", "--dir", str(d)],
        env={**os.environ, "FAKE_GO_HANG": str(pids)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while (not pids.exists() or len(pids.read_text().split()) < 2) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pids.exists(), proc.stderr.read().decode() if proc.poll() is not None else "go never started"
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig, err
    assert b"Traceback" not in err
    go_pids = [int(x) for x in pids.read_text().split()]
    time.sleep(0.2)
    assert not any(fake_binaries.alive(p) for p in go_pids), "go build and what it started are ended"
    assert not [p for p in d.iterdir() if p.name.startswith(".dragoman-build-")]


# ---------------------------------------------------------------------------- sim serve --real-kubelets


def test_more_real_kubelets_than_the_inotify_limit_holds_is_a_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    from dragoman.fleet.errors import UserError
    from dragoman.sim.controlplane import kubelets

    monkeypatch.setattr(kubelets, "inotify_room", lambda: (128, 9))
    kubelets.check_room(19)  # 9 + 6 x 19 = 123: fits
    with pytest.raises(UserError) as exc:
        kubelets.check_room(20)
    assert exc.value.exit_code == 2
    assert "fs.inotify.max_user_instances" in str(exc.value) and "--real-kubelets NODES" in str(exc.value)


@pytest.mark.parametrize(
    ("selector", "words"),
    [
        ("nope", "no node 'nope'"),
        ("pool=none", "matches none"),
        ("a,pool=x", "not both"),
        (" , ", "empty selector"),
    ],
)
def test_a_real_kubelets_selector_that_chooses_nothing_is_a_sentence(selector: str, words: str) -> None:
    from dragoman.fleet.errors import UserError
    from dragoman.sim.controlplane.kubelets import select_nodes

    nodes = [{"kind": "Node", "metadata": {"name": "a", "labels": {"pool": "p"}}}]
    assert select_nodes(nodes, "pool=p") == nodes and select_nodes(nodes, "a") == nodes
    with pytest.raises(UserError) as exc:
        select_nodes(nodes, selector)
    assert exc.value.exit_code == 2 and words in str(exc.value)


def test_real_kubelets_without_the_control_plane_is_a_sentence() -> None:
    code, _out, err = run_cli("sim", "serve", "--demo", "--real-kubelets")
    assert_sentence(code, err, words=["--real-kubelets", "needs --control-plane"])


@pytest.mark.parametrize("value", ["0", "301", "2.5", "-1", "5s", "", " ", "x" * 1000, "١٢"])
def test_a_restart_period_the_kubelet_would_refuse_is_a_sentence_before_anything_starts(value: str) -> None:
    """A node's sim.dragoman.io/max-container-restart-seconds becomes its real kubelet's maxContainerRestartPeriod,
    which the kubelet validates (1 s to 300 s): anything else is said before a kubelet is started (RealCluster checks
    every chosen node as it is made), the value quoted short; the node agents ignore it (their default back-off)."""
    from dragoman.fleet.errors import UserError
    from dragoman.sim.controllers.base import MAX_RESTART_SECONDS, max_restart_seconds
    from dragoman.sim.controlplane.kubelets import restart_period

    node = {"kind": "Node", "metadata": {"name": "a", "annotations": {MAX_RESTART_SECONDS: value}}}
    assert max_restart_seconds(node) is None
    with pytest.raises(UserError) as exc:
        restart_period(node)
    assert exc.value.exit_code == 2 and "from 1 to 300" in str(exc.value) and "node a" in str(exc.value)
    assert len(str(exc.value)) < 300
    good = {"kind": "Node", "metadata": {"name": "a", "annotations": {MAX_RESTART_SECONDS: "5"}}}
    assert restart_period(good) == "5s" and max_restart_seconds(good) == 5
    assert restart_period({"kind": "Node", "metadata": {"name": "a"}}) is None
