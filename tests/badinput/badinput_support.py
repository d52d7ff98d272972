"""Helpers of the bad-input corpus: run the CLI in-process and insist on one sentence, an exit code and no traceback."""

from __future__ import annotations

import contextlib
import io
import os
import socket
from collections.abc import Iterable
from typing import Any

from dragoman.tui.cli import main


def run_cli(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """`dragoman ARGS` in this process; (exit code, stdout, stderr). Any exception escaping main() fails the test: that
    would be a traceback for the operator."""
    out, err = io.StringIO(), io.StringIO()
    env_kubeconfig = os.environ.pop("KUBECONFIG", None)
    old_stdin = None
    try:
        if stdin is not None:
            import sys

            old_stdin, sys.stdin = sys.stdin, io.StringIO(stdin)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        if old_stdin is not None:
            import sys

            sys.stdin = old_stdin
        if env_kubeconfig is not None:
            os.environ["KUBECONFIG"] = env_kubeconfig
    return code, out.getvalue(), err.getvalue()


def assert_sentence(code: int, err: str, *, codes: Iterable[int] = (2,), words: Iterable[str] = ()) -> str:
    """One stderr sentence starting `dragoman:`, an expected exit code, no traceback; returns the sentence."""
    assert code in tuple(codes), f"exit {code}, stderr: {err!r}"
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    # Notes and warnings may precede it; the last line is the sentence.
    assert lines, "no message on stderr"
    sentence = lines[-1]
    assert sentence.startswith("dragoman: "), sentence
    assert sentence.rstrip().endswith((".", ")", "!")) or len(sentence) > 20, sentence
    assert len(sentence) < 2000, "a message, not a dump"
    for w in words:
        assert w.lower() in sentence.lower(), f"{w!r} not in {sentence!r}"
    return sentence


def closed_port() -> int:
    """A loopback port nobody listens on (bound then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def kubeconfig_text(server: str, *, cluster: str = "", user: str = "  token: abc\n", extra: str = "") -> str:
    """A one-context kubeconfig with the given cluster and user bodies (YAML fragments indented by 4 and 2; the user's
    lines are moved under `user:`)."""
    user = "".join("  " + line for line in user.splitlines(keepends=True))
    return (
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters:\n- name: k\n  cluster:\n    server: {server}\n{cluster}"
        "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"
        f"users:\n- name: u\n  user:\n{user}{extra}"
    )


def json_paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into a JSON value (dict keys and list indexes), the value itself first: where a fuzzer may put
    something else."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += json_paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += json_paths(v, (*prefix, i))
    return out
