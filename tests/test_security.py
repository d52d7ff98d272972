"""Security basics: credentials never in the debug trace, audit records, snapshots, error sentences or screenshots; the
simulator serves loopback only; exec-based kubeconfig auth runs exactly the program the kubeconfig names, with no
shell."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import pathlib
import re
import stat
import sys

import pytest
import yaml
from dragoman.fleet import debugtrace

from tests.actions.migrate_support import T4, base_args, cli, demo
from tests.badinput.badinput_support import assert_sentence, kubeconfig_text, run_cli
from tests.support.sim import running_simulator

ROOT = pathlib.Path(__file__).resolve().parents[1]
PEM_KEY = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----"


def _tokens(sim) -> list[str]:
    return [u.token for u in sim.users.values() if u.token]


# ---------------------------------------------------------------------------- the --debug trace


def test_redact_hides_bearer_tokens_jwts_and_pem_blocks() -> None:
    jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJl"
    text = debugtrace.redact(f"Authorization: Bearer abc.def-123 then {jwt} and {PEM_KEY} and Basic dXNlcjpwYXNz")
    for secret in ("abc.def-123", jwt, "MIIEvQIBADANBg", "dXNlcjpwYXNz"):
        assert secret not in text
    assert text.count("<redacted>") == 4


def test_the_debug_trace_names_each_request_and_never_a_credential(tmp_path: pathlib.Path) -> None:
    async def go() -> tuple[int, str, str, list[str]]:
        async with running_simulator(scenario_path="demo") as sim:
            code, out, err = await asyncio.to_thread(
                run_cli, "--debug", "check", "--kubeconfig", str(sim.kubeconfig_path)
            )
            return code, out, err, _tokens(sim)

    code, out, err, tokens = asyncio.run(go())
    assert code in (0, 1)
    lines = [line for line in err.splitlines() if " -> " in line]
    assert any(re.search(r"GET /version -> 200 in \d+ ms \(auth: bearer\)", line) for line in lines), err[:2000]
    assert any("/api/v1/nodes?limit=500" in line and "-> 200" in line for line in lines)
    assert tokens and not any(t in err or t in out for t in tokens)
    assert not debugtrace.enabled(), "the trace ends with the command"


def test_the_debug_trace_to_a_file_with_a_client_certificate_user(tmp_path: pathlib.Path) -> None:
    trace = tmp_path / "trace.log"
    port_kc = tmp_path / "kubeconfig"
    key_b64 = base64.b64encode(PEM_KEY.encode()).decode()
    # An unreachable server: the failed request is traced too, with its reason, and the key material is not.
    port_kc.write_text(
        kubeconfig_text("https://127.0.0.1:9", user="  token: sekret-token-42\n  password: hunter2\n  username: u\n")
    )
    code, _out, err = run_cli("--debug-file", str(trace), "check", "--kubeconfig", str(port_kc))
    assert_sentence(code, err)
    text = trace.read_text()
    assert "GET /version -> " in text and "(auth: bearer)" in text
    for secret in ("sekret-token-42", "hunter2", key_b64):
        assert secret not in text + err
    assert_sentence(
        *run_cli("--debug-file", str(tmp_path / "no" / "dir" / "t.log"), "check", "--kubeconfig", str(port_kc))[::2],
        words=["debug trace"],
    )


def test_query_values_that_may_carry_secrets_are_redacted() -> None:
    buf = io.StringIO()
    debugtrace.enable(buf)
    try:
        debugtrace.record(
            "GET", "/x", {"token": "abc", "labelSelector": "a=b", "continue": "x" * 50}, 200, 0.01, auth="none"
        )
    finally:
        debugtrace.disable()
    line = buf.getvalue()
    assert "token=<redacted>" in line and "labelSelector=a=b" in line and "x" * 13 not in line


# ---------------------------------------------------------------------------- audit records, snapshots, sentences


async def test_a_migration_writes_no_credential_to_the_audit_log_or_its_output(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        code = await cli(base_args(sim, tmp_path, T4, "--yes", "--step", "cordon"))
        out = capsys.readouterr()
        assert code == 0, out.err
        audit = (tmp_path / "audit.jsonl").read_text()
        assert '"record":"intent"' in audit and '"record":"outcome"' in audit
        for token in _tokens(sim):
            assert token not in audit and token not in out.out + out.err
        assert (tmp_path / "audit.jsonl").stat().st_mode & 0o077 == 0, "the audit log is private to its user"


def test_audit_records_scrub_secret_keys_and_bearer_values(tmp_path: pathlib.Path) -> None:
    from dragoman.actions.audit import AuditLog

    log = AuditLog(tmp_path / "a.jsonl", user={"name": "u", "token": "tok-123"})
    wid = log.intent(
        key="k",
        plan_id="p",
        step="s",
        obj={"kind": "Node", "name": "n"},
        verb="patch",
        before={"password": "pw-456"},
        after={"client-key-data": "key-789"},
        command="kubectl --token=tok-123 patch node n  # Authorization: Bearer tok-123",
    )
    log.outcome(wid, key="k", plan_id="p", step="s", obj={}, result="ok", message="sent with Bearer tok-999")
    text = (tmp_path / "a.jsonl").read_text()
    for secret in ("tok-123", "pw-456", "key-789", "tok-999"):
        assert secret not in text, secret
    assert len(text.splitlines()) == 2


async def test_a_snapshot_holds_no_secret_and_no_credential(tmp_path: pathlib.Path) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "registry", "namespace": "default"},
        "data": {"token": base64.b64encode(b"very-secret-registry-token").decode()},
    }
    # A snapshot file that holds a Secret (kubectl get all -o yaml may): re-written without it.
    source = tmp_path / "in.yaml"
    source.write_text(yaml.safe_dump_all([secret, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}]))
    code, _o, err = await asyncio.to_thread(run_cli, "snapshot", str(tmp_path / "re.yaml"), "--snapshot", str(source))
    assert code == 0, err
    assert "Secret" not in (tmp_path / "re.yaml").read_text() and "n1" in (tmp_path / "re.yaml").read_text()
    async with running_simulator(scenario_path="demo") as sim:
        out = tmp_path / "snap.yaml"
        code, _o, err = await asyncio.to_thread(run_cli, "snapshot", str(out), "--kubeconfig", str(sim.kubeconfig_path))
        assert code == 0, err
        text = out.read_text()
        assert "kind: Secret" not in text and secret["data"]["token"] not in text
        for token in _tokens(sim):
            assert token not in text
        assert yaml.safe_load(text)["kind"] == "List"


async def test_a_rejected_token_is_not_repeated_in_the_sentence(tmp_path: pathlib.Path) -> None:
    async with running_simulator() as sim:
        kc = yaml.safe_load(pathlib.Path(sim.kubeconfig_path).read_text())
        kc["users"][0]["user"]["token"] = "wrong-token-abcdef"
        path = tmp_path / "kc"
        path.write_text(yaml.safe_dump(kc))
        code, out, err = await asyncio.to_thread(run_cli, "check", "--kubeconfig", str(path))
    assert_sentence(code, err, words=["401", "log in again"])
    assert "wrong-token-abcdef" not in out + err


def test_screenshots_show_no_credential() -> None:
    from dragoman.sim.server import Simulator

    shots = sorted((ROOT / "screenshots").glob("*.svg"))
    assert shots, "screenshots exist"
    tokens = [u.token for u in Simulator([]).users.values() if u.token]
    pattern = re.compile(r"Bearer\s|BEGIN [A-Z ]*PRIVATE KEY|client-key-data|eyJ[A-Za-z0-9_-]{10,}\.")
    for shot in shots:
        text = shot.read_text(errors="replace")
        assert not pattern.search(text), shot.name
        assert not any(t and t in text for t in tokens), shot.name


# ---------------------------------------------------------------------------- the simulator binds to loopback only


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com"])
def test_sim_serve_refuses_a_non_loopback_address(host: str) -> None:
    code, _out, err = run_cli("sim", "serve", "--host", host, "--no-controllers")
    assert_sentence(code, err, words=["loopback"])


async def test_the_simulator_object_refuses_a_non_loopback_address_too() -> None:
    from dragoman.fleet.errors import UserError
    from dragoman.sim.server import Simulator

    sim = Simulator([])
    with pytest.raises(UserError, match="loopback"):
        await sim.start("0.0.0.0")
    async with running_simulator() as sim:
        assert sim.url.startswith(("https://127.0.0.1:", "http://127.0.0.1:"))


# ---------------------------------------------------------------------------- exec auth runs only what the kubeconfig
# names


def test_exec_auth_passes_arguments_literally_without_a_shell(tmp_path: pathlib.Path) -> None:
    seen = tmp_path / "argv.json"
    pwned = tmp_path / "PWNED"
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        f"#!{sys.executable}\nimport json, sys\njson.dump(sys.argv[1:], open({str(seen)!r}, 'w'))\n"
        "print(json.dumps({'kind': 'ExecCredential', 'apiVersion': 'client.authentication.k8s.io/v1', "
        "'status': {'token': 't'}}))\n"
    )
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    hostile = [f"; touch {pwned}", f"$(touch {pwned})", f"`touch {pwned}`", f"| touch {pwned}", "*"]
    user = (
        "  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    interactiveMode: Never\n"
        f"    command: {plugin}\n    args: {json.dumps(hostile)}\n"
    )
    kc = tmp_path / "kubeconfig"
    kc.write_text(kubeconfig_text("https://127.0.0.1:9", user=user))
    code, _out, err = run_cli("check", "--kubeconfig", str(kc))
    assert_sentence(code, err, words=["connection refused"])  # the plugin ran and its token was used
    assert json.loads(seen.read_text()) == hostile, "arguments arrive exactly as written"
    assert not pwned.exists(), "no shell interpreted them"


def test_an_exec_command_with_shell_syntax_is_a_missing_program_not_a_shell_line(tmp_path: pathlib.Path) -> None:
    pwned = tmp_path / "PWNED"
    user = (
        "  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    interactiveMode: Never\n"
        f"    command: 'true; touch {pwned}'\n"
    )
    kc = tmp_path / "kubeconfig"
    kc.write_text(kubeconfig_text("https://127.0.0.1:9", user=user))
    code, _out, err = run_cli("check", "--kubeconfig", str(kc))
    assert_sentence(code, err, words=["exec plugin"])
    assert not pwned.exists()


def test_no_shell_anywhere_in_the_app() -> None:
    offenders = []
    for folder in ("fleet", "actions", "tui", "widgets"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            if re.search(r"shell\s*=\s*True|create_subprocess_shell|os\.system\(|os\.popen\(", text):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
