"""Bad-input corpus, the client side of issue 19: kubeconfig fields of the wrong type, credentials that would split a
header, URL passwords, client-certificate keys on disk, files that are not files, numeric flags out of range and exec
plugins that hang or shout. Each case would have been a traceback, a hang, a leak or a destroyed file."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import pathlib
import signal
import socket
import stat
import subprocess
import sys
import time

import pytest
from dragoman.fleet import kubeconfig as kc_mod
from dragoman.fleet.errors import UserError
from dragoman.fleet.kubeconfig import resolve

from tests.badinput.badinput_support import assert_sentence, closed_port, kubeconfig_text, run_cli
from tests.badinput.hostile_server import kubeconfig, serve

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _kc(tmp: pathlib.Path, text: str, name: str = "kubeconfig") -> str:
    path = tmp / name
    path.write_text(text)
    return str(path)


def _sentence_of(path: str, **kw) -> str:
    with pytest.raises(UserError) as info:
        resolve(path, environ={}, **kw)
    return info.value.message


# ---------------------------------------------------------------------------- 1. insecure-skip-tls-verify as a string


@pytest.mark.parametrize("value", ["'false'", "'no'", "'0'", "'true'", "1", "[true]"])
def test_a_quoted_insecure_skip_tls_verify_is_refused_never_truth_tested(tmp_path: pathlib.Path, value: str) -> None:
    path = _kc(tmp_path, kubeconfig_text("https://127.0.0.1:6443", cluster=f"    insecure-skip-tls-verify: {value}\n"))
    sentence = _sentence_of(path)
    assert "insecure-skip-tls-verify" in sentence and path in sentence and "boolean" in sentence
    code, _out, err = run_cli("check", "--kubeconfig", path)
    assert_sentence(code, err, words=["insecure-skip-tls-verify", "boolean"])


def test_a_real_boolean_still_works() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = _kc(
            pathlib.Path(d), kubeconfig_text("https://127.0.0.1:6443", cluster="    insecure-skip-tls-verify: false\n")
        )
        assert resolve(path, environ={}).insecure is False


# ---------------------------------------------------------------------------- kubeconfig fields of the wrong type

WRONG_TYPES = {
    "exec-env-a-number": (
        "",
        (
            "  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    command: x\n    interactiveMode: "
            "Never\n    env: 5\n"
        ),
        ["env"],
    ),
    "exec-args-a-number": (
        "",
        (
            "  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    command: x\n    interactiveMode: "
            "Never\n    args: 5\n"
        ),
        ["args"],
    ),
    "exec-args-of-mappings": (
        "",
        (
            "  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    command: x\n    interactiveMode: "
            "Never\n    args: [{a: 1}]\n"
        ),
        ["args"],
    ),
    "exec-env-name-with-equals": (
        "",
        (
            "  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    command: x\n    interactiveMode: "
            "Never\n    env: [{name: 'A=B', value: v}]\n"
        ),
        ["env name"],
    ),
    "exec-env-name-with-nul": (
        "",
        (
            "  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    command: x\n    interactiveMode: "
            'Never\n    env: [{name: "A\\0", value: v}]\n'
        ),
        ["env name"],
    ),
    "exec-a-string": ("", "  exec: run-me\n", ["exec"]),
    "exec-command-a-list": (
        "",
        "  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    command: [a, b]\n",
        ["command"],
    ),
    "tls-server-name-a-list": ("    tls-server-name: [a]\n", "  token: abc\n", ["tls-server-name"]),
    "server-a-number": (None, "  token: abc\n", ["server"]),
    "token-a-list": ("", "  token: [a, b]\n", ["token"]),
    "token-with-a-newline": ("", '  token: "abc\\r\\nX-Evil: 1"\n', ["token", "line break"]),
    "password-with-a-newline": ("", '  username: u\n  password: "p\\nq"\n', ["password", "line break"]),
    "username-a-mapping": ("", "  username: {a: b}\n  password: p\n", ["username"]),
    "ca-data-a-number": ("    certificate-authority-data: 5\n", "  token: abc\n", ["certificate-authority-data"]),
    "proxy-socks5": ("    proxy-url: socks5://127.0.0.1:1080\n", "  token: abc\n", ["socks5", "not supported"]),
    "auth-provider-a-list": ("", "  auth-provider: [x]\n", ["auth-provider"]),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_a_kubeconfig_field_of_the_wrong_type_is_a_sentence_naming_it(tmp_path: pathlib.Path, case: str) -> None:
    cluster, user, words = WRONG_TYPES[case]
    text = kubeconfig_text("https://127.0.0.1:6443", cluster=cluster or "", user=user)
    if cluster is None:
        text = text.replace("server: https://127.0.0.1:6443", "server: 6443")
    path = _kc(tmp_path, text)
    code, _out, err = run_cli("check", "--kubeconfig", path)
    assert_sentence(code, err, words=words)


def test_context_cluster_a_list_names_the_field_and_the_file(tmp_path: pathlib.Path) -> None:
    path = _kc(tmp_path, kubeconfig_text("https://127.0.0.1:6443").replace("    cluster: k\n", "    cluster: [k]\n"))
    sentence = _sentence_of(path)
    assert "`cluster` is a list" in sentence and path in sentence


def test_a_token_file_of_invalid_utf8_or_a_directory_or_a_fifo(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "token"
    bad.write_bytes(b"\xff\xfe\xfa")
    with serve("ok") as (url, _):
        path = kubeconfig(tmp_path, url, user=f"  tokenFile: {bad}\n")
        assert_sentence(*run_cli("check", "--kubeconfig", path)[::2], words=["not text"])
        bad.write_text("abc\r\ndef\n")
        assert_sentence(*run_cli("check", "--kubeconfig", path)[::2], words=["line break"])
    folder = tmp_path / "tokdir"
    folder.mkdir()
    fifo = tmp_path / "tokfifo"
    os.mkfifo(fifo)
    for target, words in ((folder, ["is a directory"]), (fifo, ["not a regular file"])):
        path = _kc(tmp_path, kubeconfig_text("https://127.0.0.1:6443", user=f"  tokenFile: {target}\n"))
        assert_sentence(*run_cli("check", "--kubeconfig", path)[::2], words=words)


def test_a_kubeconfig_alias_bomb_or_an_endless_file_ends_in_a_sentence(tmp_path: pathlib.Path) -> None:
    bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8)
    )
    path = _kc(
        tmp_path,
        kubeconfig_text("https://127.0.0.1:6443")
        + "preferences:\n"
        + "".join("  " + l + "\n" for l in bomb.splitlines()),
    )
    t0 = time.monotonic()
    assert_sentence(*run_cli("check", "--kubeconfig", path)[::2], words=["aliases expand"])
    assert time.monotonic() - t0 < 10
    assert_sentence(*run_cli("check", "--kubeconfig", "/dev/zero")[::2], words=["device"])


def test_five_thousand_missing_kubeconfig_paths_make_a_short_sentence(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = os.pathsep.join(str(tmp_path / f"missing-{i}") for i in range(5000))
    with pytest.raises(UserError) as info:
        resolve(None, environ={"KUBECONFIG": paths, "HOME": str(tmp_path)})
    assert len(info.value.message) < 600 and "4997 more" in info.value.message


def test_a_refused_proxy_is_blamed_on_the_proxy(tmp_path: pathlib.Path) -> None:
    path = _kc(
        tmp_path,
        kubeconfig_text("http://127.0.0.1:6443", cluster=f"    proxy-url: http://u:secret@127.0.0.1:{closed_port()}\n"),
    )
    sentence = assert_sentence(*run_cli("check", "--kubeconfig", path)[::2], words=["proxy"])
    assert "secret" not in sentence


# ---------------------------------------------------------------------------- 4. a password in the server URL


def test_a_password_in_the_server_url_is_never_shown_and_is_sent_as_basic_auth(tmp_path: pathlib.Path) -> None:
    trace = tmp_path / "trace.log"
    with serve("ok") as (url, hostile):
        server = url.replace("http://", "http://admin:hunter2@")
        path = _kc(tmp_path, kubeconfig_text(server, user=""))
        code, out, err = run_cli("--debug-file", str(trace), "check", "--kubeconfig", path, "--output", "json")
        assert code in (0, 1), err
        assert json.loads(out)["source"]["server"] == url
        code, text_out, err2 = run_cli("check", "--kubeconfig", path)
        snap = tmp_path / "snap.yaml"
        assert run_cli("snapshot", str(snap), "--kubeconfig", path)[0] == 0
    basic = "Basic " + base64.b64encode(b"admin:hunter2").decode()
    assert basic in hostile.auth, "the URL's userinfo is sent, as Go's client sends it"
    assert "auth: basic" in trace.read_text()
    for where in (out, err, text_out, err2, trace.read_text(), snap.read_text()):
        assert "hunter2" not in where
    dead = _kc(tmp_path, kubeconfig_text(f"http://admin:hunter2@127.0.0.1:{closed_port()}", user=""), "dead")
    sentence = assert_sentence(*run_cli("check", "--kubeconfig", dead)[::2], words=["connection refused"])
    assert "hunter2" not in sentence


def test_a_token_beside_a_url_password_wins_without_a_traceback(tmp_path: pathlib.Path) -> None:
    with serve("ok") as (url, hostile):
        path = _kc(tmp_path, kubeconfig_text(url.replace("http://", "http://admin:hunter2@"), user="  token: tok-1\n"))
        code, _out, err = run_cli("check", "--kubeconfig", path)
    assert code in (0, 1) and "Traceback" not in err, err
    assert set(hostile.auth) == {"Bearer tok-1"}


# ---------------------------------------------------------------------------- 5. client-certificate keys never on disk


def _cert_pair() -> tuple[bytes, bytes]:
    from dragoman.sim.certs import make_serving_certificate

    c = make_serving_certificate("client")
    return c.cert_pem, c.key_pem


def test_sigterm_while_connecting_with_a_client_certificate_leaves_no_key_on_disk(tmp_path: pathlib.Path) -> None:
    cert, key = _cert_pair()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts and never answers: dragoman waits in the middle of connecting
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    user = (
        f"  client-certificate-data: {base64.b64encode(cert).decode()}\n"
        f"  client-key-data: {base64.b64encode(key).decode()}\n"
    )
    path = _kc(tmp_path, kubeconfig_text(f"http://127.0.0.1:{silent.getsockname()[1]}", user=user))
    env = {**{k: v for k, v in os.environ.items() if k != "KUBECONFIG"}, "TMPDIR": str(tmpdir)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dragoman", "check", "--kubeconfig", path],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        conn = None
        silent.settimeout(0.5)
        while conn is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                conn, _ = silent.accept()
            except TimeoutError:
                pass
        assert conn is not None, "dragoman reached the server"
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)
    finally:
        if proc.poll() is None:
            proc.kill()
        silent.close()
    leftovers = [p for p in tmpdir.rglob("*")]
    assert leftovers == [], leftovers
    marker = key.splitlines()[1]
    for p in pathlib.Path("/tmp").glob("dragoman-tls-*/*"):
        assert marker not in p.read_bytes(), f"the private key is on disk at {p}"


def test_tls_material_is_held_in_memory_files() -> None:
    from dragoman.fleet.cluster import tls_files

    with tls_files({"client.key": b"KEY", "ca.crt": None}) as paths:
        assert set(paths) == {"client.key"}
        assert paths["client.key"].startswith("/proc/self/fd/")
        assert pathlib.Path(paths["client.key"]).read_bytes() == b"KEY"
        assert "memfd:" in os.readlink(paths["client.key"])


# ---------------------------------------------------------------------------- 6. the audit log's mode


def test_an_existing_audit_log_gets_mode_0600(tmp_path: pathlib.Path) -> None:
    from dragoman.actions.audit import AuditLog

    path = tmp_path / "audit.jsonl"
    path.write_text("")
    path.chmod(0o644)
    AuditLog(path).note(plan_id="p", step="s", message="m")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["message"] == "m"


@pytest.mark.parametrize("target", ["folder", "/proc/version", "/dev/zero", "link"])
def test_an_audit_log_that_is_not_a_regular_file_is_refused(tmp_path: pathlib.Path, target: str) -> None:
    from dragoman.actions.audit import AuditLog

    if target == "folder":
        target = str(tmp_path)
    elif target == "link":
        (tmp_path / "real").write_text("")
        os.symlink(tmp_path / "real", tmp_path / "link")
        target = str(tmp_path / "link")
    log = AuditLog(target)
    with pytest.raises(UserError) as info:
        log.note(plan_id="p", step="s", message="m")
    assert "audit log" in info.value.message
    t0 = time.monotonic()
    with pytest.raises(UserError):
        list(log.records())
    assert time.monotonic() - t0 < 2, "not read to the end of /dev/zero"
    code, _out, err = run_cli("migrate", "--pool", "a", "--plan", "--kubeconfig", "/nonexistent", "--audit-log", target)
    assert_sentence(code, err, words=["audit log"])


# ---------------------------------------------------------------------------- files that are not files


@pytest.mark.parametrize("target", ["folder", "fifo", "symlink", "/dev/null", "/dev/full", "/proc/self/comm"])
def test_a_snapshot_is_never_written_over_something_that_is_not_a_regular_file(
    tmp_path: pathlib.Path, target: str
) -> None:
    src = tmp_path / "in.yaml"
    src.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    victim = tmp_path / "victim"
    victim.write_text("precious")
    path = {"folder": str(tmp_path / "dir"), "fifo": str(tmp_path / "fifo"), "symlink": str(tmp_path / "link")}.get(
        target, target
    )
    if target == "folder":
        os.mkdir(path)
    elif target == "fifo":
        os.mkfifo(path)
    elif target == "symlink":
        os.symlink(victim, path)
    before = os.lstat(path)
    code, _out, err = run_cli("snapshot", path, "--snapshot", str(src))
    assert_sentence(code, err, words=["refusing"])
    after = os.lstat(path)
    assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
    assert victim.read_text() == "precious"


def test_a_snapshot_file_is_created_0600_and_replaced_atomically(tmp_path: pathlib.Path) -> None:
    src = tmp_path / "in.yaml"
    src.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    out = tmp_path / "out.yaml"
    out.write_text("old")
    out.chmod(0o644)
    assert run_cli("snapshot", str(out), "--snapshot", str(src))[0] == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and "n1" in out.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.yaml", "out.yaml"]


@pytest.mark.parametrize("target", ["/dev/full", "folder", "fifo"])
def test_a_debug_file_that_is_not_a_regular_file_is_refused(tmp_path: pathlib.Path, target: str) -> None:
    path = {"folder": str(tmp_path), "fifo": str(tmp_path / "fifo")}.get(target, target)
    if target == "fifo":
        os.mkfifo(path)
    code, _out, err = run_cli("--debug-file", path, "check", "--snapshot", "/nonexistent")
    assert_sentence(code, err, words=["debug trace", "refusing"])


@pytest.mark.parametrize("target", ["folder", "fifo", "/dev/null"])
def test_write_kubeconfig_refuses_what_is_not_a_regular_file(tmp_path: pathlib.Path, target: str) -> None:
    path = {"folder": str(tmp_path), "fifo": str(tmp_path / "fifo")}.get(target, target)
    if target == "fifo":
        os.mkfifo(path)
    code, _out, err = run_cli("sim", "serve", "--scenario", "demo", "--write-kubeconfig", path)
    assert_sentence(code, err, words=["refusing", "kubeconfig"])
    assert os.path.exists("/dev/null") and stat.S_ISCHR(os.stat("/dev/null").st_mode)


# ---------------------------------------------------------------------------- numeric flags


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--drain-timeout", "-5"], ["--drain-timeout"]),
        (["--drain-timeout", "nan"], ["--drain-timeout", "finite"]),
        (["--drain-timeout", "1e308"], ["--drain-timeout"]),
        (["--batch-size", "-1"], ["--batch-size"]),
        (["--drain-concurrency", "0"], ["--drain-concurrency"]),
        (["--evict-retry", "-1"], ["--evict-retry"]),
        (["--wait-for-jobs", "inf"], ["--wait-for-jobs"]),
        (["--switch-timeout", "-1"], ["--switch-timeout"]),
        (["--lease-seconds", "0"], ["--lease-seconds"]),
        (["--state-namespace", "Not_A_Namespace"], ["--state-namespace"]),
        (["--state-namespace", ""], ["--state-namespace"]),
    ],
)
def test_migrate_refuses_absurd_flags_before_touching_anything(
    tmp_path: pathlib.Path, flags: list[str], words: list[str]
) -> None:
    code, _out, err = run_cli("migrate", "--pool", "a", "--kubeconfig", str(tmp_path / "never-read"), *flags)
    assert_sentence(code, err, words=words)


@pytest.mark.parametrize("port", ["-1", "70000"])
def test_sim_serve_refuses_a_port_out_of_range(port: str) -> None:
    assert_sentence(*run_cli("sim", "serve", "--port", port)[::2], words=["--port"])


def test_a_missing_state_namespace_exits_2(tmp_path: pathlib.Path) -> None:
    from tests.support.sim import running_simulator

    async def go() -> tuple[int, str, str]:
        async with running_simulator(scenario_path="demo") as sim:
            return await asyncio.to_thread(
                run_cli,
                "migrate",
                "--pool",
                "a100-pool",
                "--plan",
                "--kubeconfig",
                str(sim.kubeconfig_path),
                "--state-namespace",
                "no-such-ns",
                "--audit-log",
                str(tmp_path / "a.jsonl"),
            )

    code, _out, err = asyncio.run(go())
    assert_sentence(code, err, words=["--state-namespace", "does not exist"])


# ---------------------------------------------------------------------------- exec plugins


def _exec_kubeconfig(tmp: pathlib.Path, url: str, script: str) -> str:
    plugin = tmp / "plugin.py"
    plugin.write_text(script)
    user = (
        f"  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    command: {sys.executable}\n"
        f"    args: [{str(plugin)!r}]\n    interactiveMode: Never\n"
    )
    return kubeconfig(tmp, url, user=user)


def test_a_hung_exec_plugin_is_killed_with_its_children(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kc_mod, "EXEC_TIMEOUT_SECONDS", 1.5)
    pids = tmp_path / "pids"
    script = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "time.sleep(600)\n"
    )
    with serve("ok") as (url, _):
        t0 = time.monotonic()
        code, _out, err = run_cli("check", "--kubeconfig", _exec_kubeconfig(tmp_path, url, script))
    assert_sentence(code, err, words=["did not answer within", "stopped"])
    assert time.monotonic() - t0 < 15
    time.sleep(0.3)
    for pid in map(int, pids.read_text().split()):
        try:
            os.kill(pid, 0)
            alive = pathlib.Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
        except ProcessLookupError:
            alive = False
        assert not alive, f"process {pid} still runs"


def test_an_exec_plugin_s_flood_of_stderr_is_quoted_short(tmp_path: pathlib.Path) -> None:
    script = (
        "import sys\nsys.stderr.write(('x' * 1000 + '\\n') * 100000)\nsys.stderr.write('\\x1b[31mreal "
        "reason\\x00\\n')\nsys.exit(3)\n"
    )
    with serve("ok") as (url, _):
        code, _out, err = run_cli("check", "--kubeconfig", _exec_kubeconfig(tmp_path, url, script))
    sentence = assert_sentence(code, err, words=["exit 3", "real reason"])
    assert len(sentence) < 700 and "\x1b" not in sentence and "\x00" not in sentence


def test_an_expired_exec_credential_does_not_run_the_plugin_for_every_request(tmp_path: pathlib.Path) -> None:
    runs = tmp_path / "runs"
    script = (
        "import json\n"
        f"open({str(runs)!r}, 'a').write('x')\n"
        "print(json.dumps({'kind': 'ExecCredential', 'apiVersion': 'client.authentication.k8s.io/v1',"
        " 'status': {'token': 't', 'expirationTimestamp': '2020-01-01T00:00:00Z'}}))\n"
    )
    with serve("ok") as (url, hostile):
        code, _out, err = run_cli(
            "snapshot", str(tmp_path / "s.yaml"), "--kubeconfig", _exec_kubeconfig(tmp_path, url, script)
        )
    assert code == 0, err
    assert len(hostile.auth) > 15
    assert len(runs.read_text()) <= 2, f"the plugin ran {len(runs.read_text())} times for {len(hostile.auth)} requests"


def test_an_exec_credential_with_a_token_of_the_wrong_type(tmp_path: pathlib.Path) -> None:
    script = (
        "import json\nprint(json.dumps({'kind': 'ExecCredential', 'apiVersion': 'client.authentication.k8s.io/v1',"
        " 'status': {'token': ['a', 'b']}}))\n"
    )
    with serve("ok") as (url, hostile):
        code, _out, err = run_cli("check", "--kubeconfig", _exec_kubeconfig(tmp_path, url, script))
    assert_sentence(code, err, words=["status.token", "not a string"])
    assert not any("[" in a for a in hostile.auth)


# ---------------------------------------------------------------------------- printed text is escaped


def test_control_characters_from_a_file_are_escaped_in_the_sentence(tmp_path: pathlib.Path) -> None:
    path = _kc(
        tmp_path,
        kubeconfig_text("https://127.0.0.1:6443").replace(
            "current-context: c", 'current-context: "evil\\n\\u001b[2Jname\\u0000"'
        ),
    )
    code, _out, err = run_cli("check", "--kubeconfig", path)
    sentence = assert_sentence(code, err)
    assert len(err.strip().splitlines()) == 1
    assert "\x1b" not in err and "\x00" not in err and "\\n" in sentence
