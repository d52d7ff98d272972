"""The one bounded reader (fleet/safefile.read_documents): what every YAML or JSON input goes through — pipes and
FIFOs end within a time bound, devices and oversized inputs are refused, aliases and nesting are bounded, and every
refusal is one sentence."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.fleet.safefile import read_documents

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(9)
)


def _refused(path: str, *words: str, **kw: object) -> str:
    with pytest.raises(UserError) as info:
        read_documents(path, "the scenario", max_bytes=1 << 20, **kw)  # type: ignore[arg-type]
    assert info.value.exit_code == ExitCode.INPUT
    message = info.value.message
    assert "\n" not in message and message.endswith("."), message
    for w in words:
        assert w in message, message
    return message


def test_a_fifo_nobody_writes_ends_with_a_sentence(tmp_path: pathlib.Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    _refused(str(fifo), "pipe that sent nothing", "within 0.5 seconds", wait=0.5)
    assert time.monotonic() - started < 5


def test_a_fifo_with_a_writer_is_read(tmp_path: pathlib.Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def write() -> None:
        time.sleep(0.3)  # after the reader opened it: the reader must wait, not take the silence as an empty file
        with open(fifo, "w") as f:
            f.write("kind: Node\n")

    t = threading.Thread(target=write)
    t.start()
    try:
        assert read_documents(str(fifo), "the scenario", max_bytes=1 << 20, wait=10) == [{"kind": "Node"}]
    finally:
        t.join()


def test_an_endless_pipe_is_bounded_in_size(tmp_path: pathlib.Path) -> None:
    # `--scenario <(yes)`: the anonymous pipe of a process substitution, read until the size bound, then refused.
    proc = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        path = f"/dev/fd/{proc.stdout.fileno()}"
        _refused(path, "larger than 1 MiB")
    finally:
        proc.kill()
        proc.wait()


def test_a_trickling_pipe_is_bounded_in_time() -> None:
    code = "import sys, time\nwhile True:\n    sys.stdout.write('a: 1\\n'); sys.stdout.flush(); time.sleep(0.05)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        _refused(f"/dev/fd/{proc.stdout.fileno()}", "did not finish within 1 seconds", wait=1)
    finally:
        proc.kill()
        proc.wait()


def test_devices_folders_and_missing_files() -> None:
    _refused("/dev/zero", "is a device")
    _refused("/", "is a directory")
    _refused("/nonexistent/scenario.yaml", "does not exist")


@pytest.mark.parametrize(
    "text,words",
    [
        (BOMB, ["aliases expand"]),
        ("a:\n" + "".join(" " * i + "- \n" for i in range(1, 1200)), ["nested too deeply"]),
        ("[" * 50_000 + "]" * 50_000, ["nested too deeply"]),
        ("kind: [unclosed\n", ["not valid YAML at line"]),
        ('{"a": "\\ud800"}', ["surrogate"]),
    ],
    ids=["alias-bomb", "deep-yaml", "deep-json", "invalid", "surrogate"],
)
def test_texts_refused_with_a_sentence(tmp_path: pathlib.Path, text: str, words: list[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    _refused(str(path), *words)


def test_not_utf8_and_too_deep_for_a_small_input(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(b"kind: \xff\xfe\n")
    _refused(str(path), "not a text file")
    path.write_text("a:\n" + "".join("  " * i + "- \n" for i in range(1, 60)))
    _refused(str(path), "nested more than 50 levels", max_depth=50)
    assert read_documents(str(path), "the scenario", max_bytes=1 << 20, max_depth=100)


def _random_value(rng, depth: int):
    """A JSON value whose strings hold what could fool a bracket count: brackets, quotes, backslashes, escapes."""
    r = rng.random()
    if depth > 10 or r < 0.3:
        return rng.choice([1, None, True, 2.5, "a[b]{", 'q"\\"[', "\\", "\n\t[", "ü[", '""', '"', "\\\\", "{}", "[]"])
    if r < 0.65:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = ["k", "[", "}{", '"', "\\", '""', '\\"']
    return {rng.choice(keys) + str(i): _random_value(rng, depth + 1) for i in range(rng.randint(0, 3))}


def test_a_json_texts_depth_is_read_from_its_brackets_as_the_walk_reads_its_values() -> None:
    import json
    import random

    from dragoman.fleet.safefile import json_depth, nesting_depth

    rng = random.Random(29)
    seen = set()
    for _ in range(3000):
        value = _random_value(rng, 0)
        if not isinstance(value, (dict, list)):
            continue
        for text in (json.dumps(value), json.dumps(value, indent=2), json.dumps(value, ensure_ascii=False)):
            assert json_depth(text) == json_depth(text.encode()) == nesting_depth(value), text
        seen.add(nesting_depth(value))
    assert len(seen) >= 8  # shallow and deep values both came up
    assert json_depth("[" * 500 + "]" * 500, limit=100) == 101  # stops counting past the limit


@pytest.mark.parametrize("levels, refused", [(100, False), (101, True)])
@pytest.mark.parametrize("shape", ["[", '{"a": '])
def test_a_json_file_nested_past_the_bound_is_refused_as_a_yaml_one_is(tmp_path, levels, refused, shape) -> None:
    path = tmp_path / "deep.json"
    close = "]" if shape == "[" else "}"
    path.write_text(shape * levels + ("1" if shape != "[" else "") + close * levels)
    if refused:
        _refused(str(path), "nested more than 100 levels", max_depth=100)
    else:
        assert read_documents(str(path), "the scenario", max_bytes=1 << 20, max_depth=100)
