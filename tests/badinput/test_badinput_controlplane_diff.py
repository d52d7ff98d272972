"""Bad-input corpus: `dragoman controlplane diff --case PATTERN` with patterns that select nothing — unknown, empty,
shell and glob characters, control characters, a huge one — and a flood of `--case` flags: one sentence and exit 2,
before any control plane starts (the binaries named do not exist, so reaching them would be a different sentence)."""

from __future__ import annotations

import pathlib
import time

import pytest

from tests.badinput.badinput_support import assert_sentence, run_cli

NO_BINARIES = "/nonexistent/dragoman-controlplane"


def _diff(*case_args: str) -> tuple[int, str, str, float]:
    t0 = time.process_time()
    code, out, err = run_cli("controlplane", "diff", "--control-plane", NO_BINARIES, *case_args)
    return code, out, err, time.process_time() - t0


@pytest.mark.parametrize(
    "pattern",
    [
        "no such case",
        "",
        "$(touch {tmp}/pwned); rm -rf ~ `id` | & > x",
        "[*",
        "[!",
        "*a" * 5000,
        "a\nb\x1b[2J\x00\u202e",
    ],
    ids=["unknown", "empty", "shell", "bracket", "unclosed-negation", "5000-stars", "control-characters"],
)
def test_a_pattern_that_selects_nothing_is_one_sentence(tmp_path: pathlib.Path, pattern: str) -> None:
    pattern = pattern.replace("{tmp}", str(tmp_path))
    code, out, err, cpu = _diff("--case", pattern)
    sentence = assert_sentence(code, err, words=["--case", "matches none of the"])
    assert out == ""
    assert len(sentence) < 300, "the pattern is quoted cut short"
    assert "\x1b" not in err and "\x00" not in err and "\u202e" not in err
    assert not (tmp_path / "pwned").exists(), "a pattern is matched against names, never given to a shell"
    assert cpu < 2, f"{cpu:.2f} s of CPU"


def test_a_huge_pattern_is_quoted_cut_short() -> None:
    # 128 KiB: the most Linux passes in one argument (MAX_ARG_STRLEN).
    code, _out, err, cpu = _diff("--case", "x" * (128 * 1024))
    sentence = assert_sentence(code, err, words=["--case 'xxx", "…' matches none"])
    assert len(sentence) < 300
    assert cpu < 5, f"{cpu:.2f} s of CPU"


def test_one_unknown_pattern_among_many_known_ones_is_named() -> None:
    from dragoman.sim.controlplane.differential_corpus import cases

    names = [c.name for c in cases()]
    args = [a for n in names[:500] for a in ("--case", n)]
    code, _out, err, _cpu = _diff(*args, "--case", "*no such case*")
    assert_sentence(code, err, words=["'*no such case*' matches none"])


def test_a_pattern_of_another_area_is_refused_naming_the_area() -> None:
    code, _out, err, _cpu = _diff("--area", "api", "--case", "a node goes NotReady")
    assert_sentence(code, err, words=["matches none", "of --area api"])


def test_a_flood_of_case_flags_is_refused_before_it_is_parsed() -> None:
    """argparse's time grows with the square of the flags (20,000 took 12 s of CPU): a flood is one sentence at once."""
    args = [a for i in range(20_000) for a in ("--case", f"nope-{i}")]
    code, _out, err, cpu = _diff(*args)
    assert_sentence(code, err, words=["40004 arguments", "give fewer"])
    assert cpu < 0.5, f"{cpu:.2f} s of CPU"


def test_the_most_arguments_dragoman_reads_still_parse_quickly() -> None:
    from dragoman.tui.cli import MAX_ARGS

    fixed = ["controlplane", "diff", "--control-plane", NO_BINARIES]
    args = [a for i in range((MAX_ARGS - len(fixed)) // 2) for a in ("--case", f"nope-{i}")]
    code, _out, err, cpu = _diff(*args)
    assert_sentence(code, err, words=["'nope-0' matches none"])  # parsed, then refused for what it says
    assert cpu < 3, f"{cpu:.2f} s of CPU"


def test_kubeconfigs_of_control_planes_that_have_stopped_are_one_sentence(tmp_path: pathlib.Path) -> None:
    """Both reuse flags name a control plane that is gone (its port refuses): a sentence that says so, not a
    traceback from the first request."""
    import base64
    import socket

    import yaml
    from dragoman.sim.certs import make_serving_certificate

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    ca = base64.b64encode(make_serving_certificate().cert_pem).decode()
    kc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "gone",
        "clusters": [
            {"name": "gone", "cluster": {"server": f"https://127.0.0.1:{port}", "certificate-authority-data": ca}}
        ],
        "users": [{"name": "gone", "user": {"token": "t"}}],
        "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "gone"}}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kc))
    code, out, err = run_cli("controlplane", "diff", "--kubeconfig", str(path), "--embedded-kubeconfig", str(path))
    assert_sentence(code, err, words=["cannot reach a control plane", "still running"])
    assert out == ""
