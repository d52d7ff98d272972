"""Bad-input corpus: malformed and hostile kubeconfigs through `dragoman check`, `cel` and `migrate --plan` — one
sentence, exit 2."""

from __future__ import annotations

import base64
import pathlib
import stat

import pytest

from tests.badinput.badinput_support import assert_sentence, closed_port, kubeconfig_text, run_cli

PORT = closed_port()
SERVER = f"https://127.0.0.1:{PORT}"
EXEC_V1 = "  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    interactiveMode: Never\n"


def _script(tmp: pathlib.Path, body: str) -> str:
    path = tmp / "plugin.sh"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


# (id, kubeconfig text or a callable tmp -> text, words the sentence must carry)
CASES = [
    ("not-yaml", "clusters: [\n  - {name: a\n", ["not valid yaml"]),
    ("a-list", "- 1\n- 2\n", ["not a kubeconfig"]),
    ("a-pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n", ["not a kubeconfig"]),
    ("clusters-not-a-list", "clusters: {a: 1}\ncontexts: []\nusers: []\n", ["malformed"]),
    ("entry-without-name", "clusters:\n- cluster: {server: https://x}\n", ["no name"]),
    ("cluster-body-a-string", "clusters:\n- name: a\n  cluster: https://x\n", ["not a mapping"]),
    ("no-contexts", "clusters:\n- name: a\n  cluster: {server: https://x}\n", ["no contexts"]),
    (
        "no-current-context",
        "clusters:\n- name: a\n  cluster: {server: https://x}\ncontexts:\n- name: c\n  context: {cluster: a}\n",
        ["current-context"],
    ),
    (
        "context-names-unknown-cluster",
        "current-context: c\ncontexts:\n- name: c\n  context: {cluster: nowhere}\n",
        ["nowhere"],
    ),
    ("cluster-without-server", kubeconfig_text("''"), ["no server"]),
    (
        "context-names-unknown-user",
        (
            "current-context: c\nclusters:\n- name: k\n  cluster: {server: https://x}\ncontexts:\n- name: c\n  "
            "context: {cluster: k, user: ghost}\n"
        ),
        ["ghost"],
    ),
    (
        "old-auth-provider-gcp",
        kubeconfig_text(SERVER, user="  auth-provider:\n    name: gcp\n    config: {access-token: secret}\n"),
        ["auth-provider", "exec plugin"],
    ),
    ("old-auth-provider-oidc", kubeconfig_text(SERVER, user="  auth-provider:\n    name: oidc\n"), ["oidc"]),
    (
        "exec-unknown-api-version",
        kubeconfig_text(
            SERVER, user="  exec:\n    apiVersion: client.authentication.k8s.io/v1alpha1\n    command: aws\n"
        ),
        ["apiversion"],
    ),
    ("exec-without-command", kubeconfig_text(SERVER, user=EXEC_V1), ["no command"]),
    (
        "exec-v1-without-interactive-mode",
        kubeconfig_text(SERVER, user="  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    command: x\n"),
        ["interactivemode"],
    ),
    (
        "exec-not-installed",
        kubeconfig_text(
            SERVER, user=EXEC_V1 + "    command: dragoman-no-such-plugin\n    installHint: install it from the vendor\n"
        ),
        ["not installed", "install it from the vendor"],
    ),
    (
        "exec-interactive-always",
        kubeconfig_text(
            SERVER,
            user="  exec:\n    apiVersion: client.authentication.k8s.io/v1\n    interactiveMode: Always\n    "
            "command: /bin/true\n",
        ),
        ["interactive"],
    ),
    (
        "ca-not-base64",
        kubeconfig_text(SERVER, cluster="    certificate-authority-data: '***not base64***'\n"),
        ["base64"],
    ),
    (
        "ca-not-a-certificate",
        kubeconfig_text(
            SERVER, cluster=f"    certificate-authority-data: {base64.b64encode(b'hello, not a PEM').decode()}\n"
        ),
        ["tls"],
    ),
    (
        "ca-file-missing",
        kubeconfig_text(SERVER, cluster="    certificate-authority: /nonexistent/ca.crt\n"),
        ["cannot be read"],
    ),
    (
        "client-cert-without-key",
        kubeconfig_text(SERVER, user=f"  client-certificate-data: {base64.b64encode(b'x').decode()}\n"),
        ["without its key"],
    ),
    (
        "client-key-not-base64",
        kubeconfig_text(SERVER, user="  client-certificate-data: '%%%'\n  client-key-data: '%%%'\n"),
        ["base64"],
    ),
    (
        "client-cert-garbage",
        kubeconfig_text(
            SERVER,
            user=f"  client-certificate-data: {base64.b64encode(b'junk').decode()}\n"
            f"  client-key-data: {base64.b64encode(b'junk').decode()}\n",
        ),
        ["tls"],
    ),
    ("token-file-missing", kubeconfig_text(SERVER, user="  tokenFile: /nonexistent/token\n"), ["tokenfile"]),
    (
        "insecure-and-ca",
        kubeconfig_text(
            SERVER,
            cluster="    insecure-skip-tls-verify: true\n    certificate-authority-data: "
            f"{base64.b64encode(b'x').decode()}\n",
        ),
        ["insecure-skip-tls-verify"],
    ),
    ("unreachable-closed-port", kubeconfig_text(SERVER), ["connection refused"]),
    ("unreachable-plain-http", kubeconfig_text(f"http://127.0.0.1:{PORT}"), ["connection refused"]),
    ("server-not-a-url", kubeconfig_text("'https://[::1'"), ["server"]),
    ("empty-file", "", ["no contexts"]),
]


def _write(tmp_path: pathlib.Path, text: str) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_check_answers_a_bad_kubeconfig_with_one_sentence(tmp_path: pathlib.Path, case) -> None:
    _id, text, words = case
    code, out, err = run_cli("check", "--kubeconfig", _write(tmp_path, text))
    assert_sentence(code, err, words=words)
    assert out == ""


def test_exec_plugin_that_fails_names_its_last_line(tmp_path: pathlib.Path) -> None:
    plugin = _script(tmp_path, "echo 'token expired, run sso login' >&2\nexit 4\n")
    code, _out, err = run_cli(
        "check", "--kubeconfig", _write(tmp_path, kubeconfig_text(SERVER, user=EXEC_V1 + f"    command: {plugin}\n"))
    )
    assert_sentence(code, err, words=["exit 4", "token expired"])


@pytest.mark.parametrize(
    "printed",
    [
        "this is not json",
        '{"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1beta1", "status": {"token": "t"}}',
        '{"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1", "status": {}}',
        '{"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1", "status": "a string"}',
        (
            '{"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1", "status": {"token": '
            '"t", "expirationTimestamp": "soon"}}'
        ),
        '["a", "list"]',
    ],
    ids=["garbage", "wrong-api-version", "no-token", "status-a-string", "bad-expiry", "a-list"],
)
def test_exec_plugin_printing_nonsense_is_one_sentence(tmp_path: pathlib.Path, printed: str) -> None:
    out_file = tmp_path / "printed.json"
    out_file.write_text(printed)
    plugin = _script(tmp_path, f"cat {out_file}\n")
    code, _out, err = run_cli(
        "check", "--kubeconfig", _write(tmp_path, kubeconfig_text(SERVER, user=EXEC_V1 + f"    command: {plugin}\n"))
    )
    assert_sentence(code, err, words=["exec plugin"])


def test_exec_plugin_not_executable(tmp_path: pathlib.Path) -> None:
    plugin = tmp_path / "plugin.sh"
    plugin.write_text("#!/bin/sh\necho hi\n")
    code, _out, err = run_cli(
        "check", "--kubeconfig", _write(tmp_path, kubeconfig_text(SERVER, user=EXEC_V1 + f"    command: {plugin}\n"))
    )
    assert_sentence(code, err, words=["not executable"])


def test_kubeconfig_that_is_binary(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_bytes(bytes(range(256)) * 4)
    code, _out, err = run_cli("check", "--kubeconfig", str(path))
    assert_sentence(code, err, words=["kubeconfig"])


def test_kubeconfig_that_is_a_directory_or_missing(tmp_path: pathlib.Path) -> None:
    assert_sentence(*run_cli("check", "--kubeconfig", str(tmp_path))[::2], words=["directory"])
    assert_sentence(*run_cli("check", "--kubeconfig", str(tmp_path / "nope"))[::2], words=["does not exist"])


def test_unknown_context_names_the_known_ones(tmp_path: pathlib.Path) -> None:
    code, _out, err = run_cli("check", "--kubeconfig", _write(tmp_path, kubeconfig_text(SERVER)), "--context", "prod")
    assert_sentence(code, err, words=["'prod'", "known contexts: c"])


def test_cel_and_migrate_plan_answer_a_dead_server_with_one_sentence(tmp_path: pathlib.Path) -> None:
    kc = _write(tmp_path, kubeconfig_text(SERVER))
    assert_sentence(*run_cli("cel", "true", "--kubeconfig", kc)[::2], words=["connection refused"])
    assert_sentence(*run_cli("migrate", "--pool", "a", "--plan", "--kubeconfig", kc)[::2], words=["connection refused"])
    assert_sentence(
        *run_cli("snapshot", str(tmp_path / "out.yaml"), "--kubeconfig", kc)[::2], words=["connection refused"]
    )
    assert not (tmp_path / "out.yaml").exists(), "no partial snapshot"
    assert [p.name for p in tmp_path.iterdir()] == ["kubeconfig"], "no temporary file left behind"


def test_credentials_never_echoed_in_the_sentence(tmp_path: pathlib.Path) -> None:
    secret = "s3cr3t-token-value-0123456789"
    kc = _write(tmp_path, kubeconfig_text(SERVER, user=f"  token: {secret}\n  password: {secret}\n  username: admin\n"))
    code, out, err = run_cli("check", "--kubeconfig", kc)
    assert_sentence(code, err)
    assert secret not in err + out
