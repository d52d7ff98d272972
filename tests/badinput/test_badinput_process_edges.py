"""The process's own edges (issue 34): standard output full, closed or left by its reader, standard input closed, an
output encoding that cannot show the text, and `--control-plane` that would have been ignored — each one sentence and
the right exit code, never a traceback, never a false all-clear."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from tests.badinput.badinput_support import assert_sentence, run_cli

DRAGOMAN = [sys.executable, "-m", "dragoman"]


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> pathlib.Path:
    """The demo fleet as a snapshot: its `check` has error findings (exit 1)."""
    from dragoman.tui.cli import main

    path = tmp_path_factory.mktemp("edges") / "demo.yaml"
    assert main(["snapshot", str(path), "--demo"]) == 0
    return path


def _run(args: list[str], *, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        DRAGOMAN + args,
        capture_output=True,
        encoding="utf-8",
        errors="replace",  # latin-1 output read back
        timeout=120,
        env={**os.environ, **(env or {})},
        **kw,
    )


def test_check_to_a_full_device_is_a_sentence_and_exit_2(snapshot: pathlib.Path) -> None:
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            DRAGOMAN + ["check", "--snapshot", str(snapshot)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert_sentence(proc.returncode, proc.stderr, words=["cannot write the output", "no space left"])


def test_check_with_standard_output_closed_is_a_sentence_and_exit_2(snapshot: pathlib.Path) -> None:
    proc = subprocess.run(
        DRAGOMAN + ["check", "--snapshot", str(snapshot)],
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.close(1),
    )
    assert_sentence(proc.returncode, proc.stderr, words=["standard output is closed"])


@pytest.mark.parametrize("output", ["json", "text"])
def test_check_piped_to_head_keeps_the_exit_code_of_its_error_findings(snapshot: pathlib.Path, output: str) -> None:
    full = _run(["check", "--snapshot", str(snapshot), "-o", output])
    assert full.returncode == 1, "the demo has error findings"
    proc = subprocess.Popen(
        DRAGOMAN + ["check", "--snapshot", str(snapshot), "-o", output], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    proc.stdout.readline()  # `| head -1`: one line, then the reader leaves
    proc.stdout.close()
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.wait(120) == 1, "a reader that left is not an all-clear"
    assert "Traceback" not in err and "BrokenPipe" not in err and err.strip() == ""


@pytest.mark.parametrize(
    "env",
    [{"PYTHONIOENCODING": "ascii"}, {"PYTHONIOENCODING": "latin-1"}, {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0"}],
    ids=["ascii", "latin-1", "LANG=C"],
)
def test_check_in_any_output_encoding_says_everything_without_a_traceback(snapshot: pathlib.Path, env: dict) -> None:
    proc = _run(["check", "--snapshot", str(snapshot)], env=env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "findings" in proc.stdout.lower() and len(proc.stdout) > 1000
    bad = _run(["check", "--snapshot", str(snapshot) + "-missing\u2717"], env=env)
    assert_sentence(bad.returncode, bad.stderr, words=["does not exist"])


def test_snapshot_on_a_closed_standard_input_is_a_sentence() -> None:
    proc = subprocess.run(
        DRAGOMAN + ["check", "--snapshot", "-"],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.close(0),
    )
    assert_sentence(proc.returncode, proc.stderr, words=["standard input"])


@pytest.mark.parametrize("stdin", ["closed", "devnull"])
def test_the_tui_without_a_terminal_is_a_sentence_not_a_screen_for_nobody(snapshot: pathlib.Path, stdin: str) -> None:
    kw = {"preexec_fn": lambda: os.close(0)} if stdin == "closed" else {"stdin": subprocess.DEVNULL}
    proc = subprocess.run(DRAGOMAN + ["--snapshot", str(snapshot)], capture_output=True, text=True, timeout=60, **kw)
    assert_sentence(proc.returncode, proc.stderr, words=["needs a terminal"])


def test_migrate_prompt_with_standard_input_closed_refuses_and_the_demo_leaves_nothing(tmp_path: pathlib.Path) -> None:
    proc = subprocess.run(
        DRAGOMAN + ["migrate", "--demo", "--pool", "t4-batch", "--step", "cordon"],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        preexec_fn=lambda: os.close(0),
    )
    assert_sentence(proc.returncode, proc.stderr, codes=(3,), words=["no terminal to confirm"])
    assert [p.name for p in tmp_path.iterdir()] == [], "the demo's folder (its admin kubeconfig) is removed"


# ---------------------------------------------------------------------------- --control-plane never ignored


@pytest.mark.parametrize(
    "args, words",
    [
        (["--control-plane", "", "check", "--demo"], ["empty folder name"]),
        (["--demo", "--control-plane", "", "check"], ["empty folder name"]),
        (["--control-plane", "/nonexistent", "check"], ["needs --demo"]),
        (["--demo", "--control-plane", "/nonexistent-cp-dir", "check"], ["/nonexistent-cp-dir", "not a directory"]),
        (["--demo", "--control-plane", "/nonexistent-cp-dir", "migrate", "--pool", "x", "--plan"], ["not a directory"]),
        (["sim", "serve", "--control-plane", ""], ["empty folder name"]),
    ],
    ids=["empty-before-check", "empty-demo-check", "without-demo", "demo-check-dir", "demo-migrate-dir", "sim-serve"],
)
def test_control_plane_is_honoured_or_refused_never_silently_the_embedded_simulator(
    args: list[str], words: list[str]
) -> None:
    code, out, err = run_cli(*args)
    assert_sentence(code, err, words=words)
    assert "findings" not in out.lower(), "nothing was read from the embedded simulator instead"


def test_demo_check_on_a_control_plane_that_cannot_start_says_so(tmp_path: pathlib.Path) -> None:
    """Binaries that pass the version check but die at once: the real control plane was tried (and said why), not
    the embedded simulator."""
    from tests.badinput import fake_binaries

    folder = tmp_path / "bin"
    folder.mkdir()
    for name, answer in fake_binaries.VERSIONS.items():
        fake_binaries.script(folder / name, f"if '--version' in sys.argv: print({answer!r})\nsys.exit(7)")
    tmp = tmp_path / "t"
    tmp.mkdir()
    proc = _run(["--demo", "--control-plane", str(folder), "check"], env={"TMPDIR": str(tmp)})
    sentence = assert_sentence(proc.returncode, proc.stderr, words=["did not start", "exited with code 7"])
    assert "findings" not in proc.stdout.lower() and "last words" not in sentence
    assert list(tmp.iterdir()) == [], "the demo's folder and the control plane's run folder are removed"
