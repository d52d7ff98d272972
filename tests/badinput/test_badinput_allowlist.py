"""`dragoman controlplane diff`'s own inputs: the allowlist file (read through the one bounded reader: an alias bomb,
invalid YAML, a shape that is not a list of entries are one sentence, exit 2) and the servers' answers (an endless,
trickling, broken or alias-bomb answer becomes a bounded difference in the table, never memory, a hang or a
traceback)."""

from __future__ import annotations

import http.server
import pathlib
import socketserver
import threading
import time
from collections.abc import Iterator

import pytest
from dragoman.sim.controlplane import differential

from tests.badinput.badinput_support import assert_sentence, run_cli

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(9)
)


@pytest.mark.parametrize(
    "text,words",
    [
        (BOMB, ["aliases expand"]),
        ("- area: [unclosed\n", ["not valid YAML at line"]),
        ("area: api\n", ["not a list of entries"]),
        ("- 5\n", ["entry 1 is not a mapping"]),
        ("- {area: api}\n", ["entry 1 lacks case, path, reason"]),
        ("[]\n---\n[]\n", ["2 YAML documents"]),
        ("- " * 30 + "x\n", ["nested more than 10 levels"]),
        (b"- area: \xff\n", ["not a text file"]),
    ],
    ids=["alias-bomb", "invalid", "a-mapping", "entry-a-number", "entry-incomplete", "two-docs", "deep", "binary"],
)
def test_a_hostile_allowlist_is_one_sentence(tmp_path: pathlib.Path, text: str | bytes, words: list[str]) -> None:
    path = tmp_path / "allow.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    code, out, err = run_cli("controlplane", "diff", "--control-plane", "/nonexistent", "--allowlist", str(path))
    assert_sentence(code, err, words=words)
    assert out == ""


def test_the_repository_allowlist_still_loads() -> None:
    assert differential.load_allowlist()


class _Handler(http.server.BaseHTTPRequestHandler):
    mode = ""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        mode = type(self).mode
        self.send_response(200)
        self.send_header("Content-Type", "application/yaml" if mode == "yaml-bomb" else "application/json")
        if mode == "yaml-bomb":
            body = BOMB.encode()
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.end_headers()
        try:
            while True:  # endless: a megabyte at a time, or a byte every 0.2 s
                self.wfile.write(b"x" * (1 << 20) if mode == "endless" else b" ")
                self.wfile.flush()
                if mode == "trickle":
                    time.sleep(0.2)
        except OSError:
            pass


@pytest.fixture
def hostile() -> Iterator[tuple[str, bytes]]:
    from dragoman.sim.certs import make_serving_certificate

    cert = make_serving_certificate("127.0.0.1")
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.socket = cert.server_context().wrap_socket(server.socket, server_side=True)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", cert.cert_pem
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("mode", ["endless", "trickle", "yaml-bomb"])
def test_a_hostile_answer_is_a_bounded_difference(
    hostile: tuple[str, bytes], mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, ca = hostile
    _Handler.mode = mode
    monkeypatch.setattr(differential, "MAX_ANSWER_BYTES", 8 << 20)
    target = differential.Target("hostile", url, "token", ca)
    started = time.monotonic()
    answer = target.send("GET", "/api", timeout=2.0)
    assert time.monotonic() - started < 30
    assert answer.code == 200
    said = {
        "endless": "larger than 8 MiB: cut",
        "trickle": "did not end within 2 s",
        "yaml-bomb": "<invalid YAML",
    }[mode]
    assert said in str(answer.body)
    assert len(str(answer.body)) < 9 << 20
