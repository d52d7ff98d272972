"""kubeconfig resolution as kubectl does it, exec plugins run and refreshed, and every bad input as one sentence."""

from __future__ import annotations

import base64
import datetime
import json
import os
import pathlib
import stat
import sys

import pytest
import yaml
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.fleet.kubeconfig import CredentialSource, resolve


def kubeconfig(clusters: dict, users: dict, contexts: dict, current: str | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": c} for n, c in clusters.items()],
        "users": [{"name": n, "user": u} for n, u in users.items()],
        "contexts": [{"name": n, "context": c} for n, c in contexts.items()],
        **({"current-context": current} if current is not None else {}),
    }


def write(path: pathlib.Path, data: object) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return str(path)


def one_cluster(server: str = "https://a.example:6443", **user: object) -> dict:
    return kubeconfig(
        {"a": {"server": server}}, {"u": user or {"token": "t-a"}}, {"ctx-a": {"cluster": "a", "user": "u"}}, "ctx-a"
    )


def error_of(fn, *args, **kw) -> str:
    with pytest.raises(UserError) as info:
        fn(*args, **kw)
    assert info.value.exit_code == ExitCode.INPUT
    msg = info.value.message
    assert "\n" not in msg and "Traceback" not in msg
    return msg


# --------------------------------------------------------------------------- which files, which context


def test_explicit_flag_beats_kubeconfig_env_and_home(tmp_path: pathlib.Path) -> None:
    flag = write(tmp_path / "flag", one_cluster("https://flag:6443"))
    env = write(tmp_path / "env", one_cluster("https://env:6443"))
    write(tmp_path / "home" / ".kube" / "config", one_cluster("https://home:6443"))
    environ = {"KUBECONFIG": env, "HOME": str(tmp_path / "home")}
    assert resolve(flag, environ=environ).server == "https://flag:6443"
    assert resolve(None, environ=environ).server == "https://env:6443"
    assert resolve(None, environ={"HOME": str(tmp_path / "home")}).server == "https://home:6443"


def test_kubeconfig_env_merges_with_kubectls_rules(tmp_path: pathlib.Path) -> None:
    # First file to define a name wins (whole entry); first current-context set wins; missing files are skipped.
    first = write(
        tmp_path / "one",
        kubeconfig(
            {"shared": {"server": "https://first:6443"}},
            {"shared-user": {"token": "first-token"}},
            {"shared-ctx": {"cluster": "shared", "user": "shared-user", "namespace": "ns1"}},
        ),
    )  # no current-context here
    second = write(
        tmp_path / "two",
        kubeconfig(
            {"shared": {"server": "https://second:6443"}, "only2": {"server": "https://only2:6443"}},
            {"shared-user": {"token": "second-token"}, "u2": {"token": "tok2"}},
            {"shared-ctx": {"cluster": "only2", "user": "u2"}, "ctx2": {"cluster": "only2", "user": "shared-user"}},
            "ctx2",
        ),
    )
    third = write(tmp_path / "three", kubeconfig({}, {}, {}, "shared-ctx"))
    environ = {"KUBECONFIG": os.pathsep.join([first, str(tmp_path / "missing"), second, first, third])}
    rc = resolve(environ=environ)
    assert (rc.context, rc.server, rc.token) == ("ctx2", "https://only2:6443", "first-token")
    rc = resolve(context="shared-ctx", environ=environ)
    assert (rc.server, rc.user, rc.token, rc.namespace) == ("https://first:6443", "shared-user", "first-token", "ns1")
    assert rc.sources == [first, second, third]


def test_relative_paths_resolve_against_the_file_that_named_them(tmp_path: pathlib.Path) -> None:
    ca = b"-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "ca.crt").write_bytes(ca)
    (tmp_path / "certs" / "client.crt").write_bytes(b"CERT")
    (tmp_path / "certs" / "client.key").write_bytes(b"KEY")
    (tmp_path / "certs" / "token").write_text("file-token\n")
    cfg = kubeconfig(
        {"a": {"server": "https://a:6443", "certificate-authority": "certs/ca.crt", "tls-server-name": "api.internal"}},
        {"u": {"client-certificate": "certs/client.crt", "client-key": "certs/client.key", "tokenFile": "certs/token"}},
        {"c": {"cluster": "a", "user": "u"}},
        "c",
    )
    path = write(tmp_path / "kc", cfg)
    rc = resolve(path, environ={}, home=str(tmp_path))
    assert rc.ca_data == ca and rc.client_cert_data == b"CERT" and rc.client_key_data == b"KEY"
    assert rc.token_file == str(tmp_path / "certs" / "token") and rc.tls_server_name == "api.internal"


def test_inline_data_and_insecure(tmp_path: pathlib.Path) -> None:
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    cfg = kubeconfig(
        {
            "a": {"server": "https://a:6443", "certificate-authority-data": b64(b"PEMCA")},
            "b": {"server": "https://b:6443", "insecure-skip-tls-verify": True},
        },
        {"u": {"client-certificate-data": b64(b"C"), "client-key-data": b64(b"K")}},
        {"ca": {"cluster": "a", "user": "u"}, "insecure": {"cluster": "b", "user": "u"}},
        "ca",
    )
    path = write(tmp_path / "kc", cfg)
    rc = resolve(path, environ={})
    assert rc.ca_data == b"PEMCA" and not rc.insecure and rc.client_cert_data == b"C"
    assert resolve(path, "insecure", environ={}).insecure


def test_in_cluster_when_there_is_no_kubeconfig(tmp_path: pathlib.Path) -> None:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("sa-token")
    (sa / "ca.crt").write_bytes(b"SACA")
    (sa / "namespace").write_text("gpu-ops")
    environ = {
        "KUBERNETES_SERVICE_HOST": "10.0.0.1",
        "KUBERNETES_SERVICE_PORT": "443",
        "HOME": str(tmp_path / "nohome"),
    }
    rc = resolve(environ=environ, incluster_dir=str(sa))
    assert rc.in_cluster and rc.server == "https://10.0.0.1:443" and rc.ca_data == b"SACA" and rc.namespace == "gpu-ops"
    assert rc.token_file == str(sa / "token")
    v6 = resolve(environ={**environ, "KUBERNETES_SERVICE_HOST": "fd00::1"}, incluster_dir=str(sa))
    assert v6.server == "https://[fd00::1]:443"


async def test_static_and_file_tokens(tmp_path: pathlib.Path) -> None:
    (tmp_path / "tok").write_text("one\n")
    path = write(
        tmp_path / "kc",
        kubeconfig(
            {"a": {"server": "https://a"}},
            {"s": {"token": "static"}, "f": {"tokenFile": "tok"}},
            {"s": {"cluster": "a", "user": "s"}, "f": {"cluster": "a", "user": "f"}},
            "s",
        ),
    )
    assert (await CredentialSource(resolve(path, environ={})).current()).token == "static"
    now = [1000.0]
    src = CredentialSource(resolve(path, "f", environ={}), clock=lambda: now[0])
    assert (await src.current()).token == "one"
    (tmp_path / "tok").write_text("two\n")  # a projected token rotated in place
    assert (await src.current()).token == "one"
    now[0] += 61
    assert (await src.current()).token == "two"


# --------------------------------------------------------------------------- exec plugins


def exec_plugin(
    tmp_path: pathlib.Path,
    *,
    expires_in: float | None = 900,
    api_version: str = "client.authentication.k8s.io/v1",
    exit_code: int = 0,
    output: str | None = None,
) -> pathlib.Path:
    """A tiny exec credential plugin: prints the token in `current-token` (and counts its runs in `runs`)."""
    script = tmp_path / "bin" / "cred-plugin"
    script.parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "current-token").write_text("token-1")
    body = f"""#!{sys.executable}
import datetime, json, os, pathlib, sys
here = pathlib.Path({str(tmp_path)!r})
runs = here / "runs"
runs.write_text(str(int(runs.read_text() or 0) + 1 if runs.exists() else 1))
(here / "exec-info").write_text(os.environ.get("KUBERNETES_EXEC_INFO", ""))
(here / "exec-env").write_text(os.environ.get("PLUGIN_REGION", ""))
if {exit_code}:
    print("token expired: run `login` again", file=sys.stderr)
    sys.exit({exit_code})
output = {output!r}
if output is not None:
    print(output)
    sys.exit(0)
status = {{"token": (here / "current-token").read_text()}}
if {expires_in!r} is not None:
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds={expires_in!r})
    status["expirationTimestamp"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
print(json.dumps({{"apiVersion": {api_version!r}, "kind": "ExecCredential", "status": status}}))
"""
    script.write_text(body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def exec_kubeconfig(tmp_path: pathlib.Path, command: str, **extra: object) -> str:
    exec_cfg = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": command,
        "args": ["--region", "x"],
        "env": [{"name": "PLUGIN_REGION", "value": "eu-west-1"}],
        "interactiveMode": "Never",
        **extra,
    }
    return write(
        tmp_path / "kc",
        kubeconfig(
            {"a": {"server": "https://a:6443", "insecure-skip-tls-verify": True}},
            {"u": {"exec": exec_cfg}},
            {"c": {"cluster": "a", "user": "u"}},
            "c",
        ),
    )


async def test_exec_plugin_runs_with_env_and_cluster_info(tmp_path: pathlib.Path) -> None:
    plugin = exec_plugin(tmp_path)
    # A command with a separator resolves against the kubeconfig's folder, as kubectl does.
    path = exec_kubeconfig(tmp_path, "./bin/cred-plugin", provideClusterInfo=True)
    src = CredentialSource(resolve(path, environ={}))
    cred = await src.current()
    assert cred.token == "token-1" and cred.expires is not None
    info = json.loads((tmp_path / "exec-info").read_text())
    assert info["kind"] == "ExecCredential" and info["spec"]["interactive"] is False
    assert (
        info["spec"]["cluster"]["server"] == "https://a:6443"
        and info["spec"]["cluster"]["insecure-skip-tls-verify"] is True
    )
    assert (tmp_path / "exec-env").read_text() == "eu-west-1"
    assert plugin.exists() and src.exec_runs == 1


async def test_exec_credential_refreshed_before_expiry_and_after_a_401(tmp_path: pathlib.Path) -> None:
    exec_plugin(tmp_path, expires_in=900)
    path = exec_kubeconfig(tmp_path, str(tmp_path / "bin" / "cred-plugin"))
    now = [datetime.datetime.now(datetime.UTC).timestamp()]
    src = CredentialSource(resolve(path, environ={}), clock=lambda: now[0])
    first = await src.current()
    assert first.token == "token-1"
    assert (await src.current()) is first and src.exec_runs == 1  # cached while valid
    (tmp_path / "current-token").write_text("token-2")
    now[0] += 900 - 30  # inside the refresh margin, before expiry
    second = await src.current()
    assert second.token == "token-2" and src.exec_runs == 2
    now[0] = datetime.datetime.now(datetime.UTC).timestamp()  # the fresh token is valid for 15 minutes
    # A 401 with the credential in use: fetch anew even though it looks valid.
    (tmp_path / "current-token").write_text("token-3")
    src.invalidate(second)
    assert (await src.current()).token == "token-3" and src.exec_runs == 3
    # A stale 401 (for a credential already replaced) does not make the plugin run again.
    src.invalidate(first)
    await src.current()
    assert src.exec_runs == 3


async def test_exec_plugin_without_expiry_is_kept(tmp_path: pathlib.Path) -> None:
    exec_plugin(tmp_path, expires_in=None, api_version="client.authentication.k8s.io/v1beta1")
    path = write(
        tmp_path / "kc",
        kubeconfig(
            {"a": {"server": "https://a"}},
            {
                "u": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": str(tmp_path / "bin" / "cred-plugin"),
                    }
                }
            },
            {"c": {"cluster": "a", "user": "u"}},
            "c",
        ),
    )
    src = CredentialSource(resolve(path, environ={}), clock=lambda: 4e9)
    await src.current()
    await src.current()
    assert src.exec_runs == 1


async def test_exec_plugin_failures_are_sentences(tmp_path: pathlib.Path) -> None:
    missing = exec_kubeconfig(tmp_path, "no-such-auth-plugin-xyz", installHint="Install it with `brew install xyz`.")
    with pytest.raises(UserError) as info:
        await CredentialSource(resolve(missing, environ={})).current()
    assert "`no-such-auth-plugin-xyz`" in info.value.message and "not installed" in info.value.message
    assert "brew install xyz" in info.value.message and info.value.exit_code == ExitCode.INPUT

    exec_plugin(tmp_path, exit_code=3)
    failing = exec_kubeconfig(tmp_path, str(tmp_path / "bin" / "cred-plugin"))
    with pytest.raises(UserError) as info:
        await CredentialSource(resolve(failing, environ={})).current()
    assert (
        "failed (exit 3)" in info.value.message
        and "token expired" in info.value.message
        and "log in again" in info.value.message
    )

    exec_plugin(tmp_path, output="not json")
    with pytest.raises(UserError, match="printed no usable ExecCredential"):
        await CredentialSource(resolve(failing, environ={})).current()

    exec_plugin(tmp_path, api_version="client.authentication.k8s.io/v1beta1")
    with pytest.raises(UserError, match=r"instead of client\.authentication\.k8s\.io/v1"):
        await CredentialSource(resolve(failing, environ={})).current()


# --------------------------------------------------------------------------- bad input


def test_bad_kubeconfigs_are_one_sentence_each(tmp_path: pathlib.Path) -> None:
    missing = str(tmp_path / "nope")
    assert f"the kubeconfig {missing} does not exist" in error_of(resolve, missing, environ={})
    assert "is not valid YAML at line 3, column 4" in error_of(
        resolve, write(tmp_path / "bad", "clusters:\n  - name: a\n   bad: [\n"), environ={}
    )
    assert "is not a kubeconfig" in error_of(resolve, write(tmp_path / "list", "- a\n- b\n"), environ={})
    assert "it holds a Node, not a Config" in error_of(
        resolve, write(tmp_path / "node", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}), environ={}
    )
    assert "defines no contexts" in error_of(
        resolve,
        write(
            tmp_path / "empty",
            {"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "a", "cluster": {"server": "https://a"}}]},
        ),
        environ={},
    )
    assert "must be a list of named entries" in error_of(
        resolve, write(tmp_path / "m", {"clusters": {"a": 1}}), environ={}
    )
    assert "has no name" in error_of(resolve, write(tmp_path / "n", {"clusters": [{"cluster": {}}]}), environ={})
    good = write(tmp_path / "good", one_cluster())
    msg = error_of(resolve, good, "prod", environ={})
    assert "context 'prod' is not in the kubeconfig" in msg and "known contexts: ctx-a" in msg
    nocur = write(
        tmp_path / "nocur", kubeconfig({"a": {"server": "https://a"}}, {"u": {}}, {"x": {"cluster": "a", "user": "u"}})
    )
    assert "sets no current-context; pass --context NAME (contexts: x)" in error_of(resolve, nocur, environ={})
    nocluster = write(tmp_path / "nocl", kubeconfig({}, {"u": {}}, {"x": {"cluster": "gone", "user": "u"}}, "x"))
    assert "names cluster 'gone'" in error_of(resolve, nocluster, environ={})
    nouser = write(
        tmp_path / "nous", kubeconfig({"a": {"server": "https://a"}}, {}, {"x": {"cluster": "a", "user": "ghost"}}, "x")
    )
    assert "names user 'ghost'" in error_of(resolve, nouser, environ={})
    noserver = write(tmp_path / "nosrv", kubeconfig({"a": {}}, {"u": {}}, {"x": {"cluster": "a", "user": "u"}}, "x"))
    assert "has no server address" in error_of(resolve, noserver, environ={})
    badb64 = write(
        tmp_path / "b64",
        kubeconfig(
            {"a": {"server": "https://a", "certificate-authority-data": "!!!"}},
            {"u": {}},
            {"x": {"cluster": "a", "user": "u"}},
            "x",
        ),
    )
    assert "certificate-authority-data of cluster 'a' is not valid base64" in error_of(resolve, badb64, environ={})
    cafile = write(
        tmp_path / "caf",
        kubeconfig(
            {"a": {"server": "https://a", "certificate-authority": "missing.crt"}},
            {"u": {}},
            {"x": {"cluster": "a", "user": "u"}},
            "x",
        ),
    )
    assert "certificate-authority file" in error_of(resolve, cafile, environ={})
    both = write(
        tmp_path / "both",
        kubeconfig(
            {"a": {"server": "https://a", "insecure-skip-tls-verify": True, "certificate-authority-data": "QQ=="}},
            {"u": {}},
            {"x": {"cluster": "a", "user": "u"}},
            "x",
        ),
    )
    assert "both insecure-skip-tls-verify and a certificate authority" in error_of(resolve, both, environ={})
    provider = write(tmp_path / "ap", one_cluster(**{"auth-provider": {"name": "gcp"}}))
    assert "`gcp` auth-provider" in error_of(resolve, provider, environ={})
    oldexec = write(
        tmp_path / "oe", one_cluster(exec={"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "x"})
    )
    assert "asks for apiVersion client.authentication.k8s.io/v1alpha1" in error_of(resolve, oldexec, environ={})
    nomode = write(tmp_path / "nm", one_cluster(exec={"apiVersion": "client.authentication.k8s.io/v1", "command": "x"}))
    assert "must set interactiveMode" in error_of(resolve, nomode, environ={})
    halfcert = write(tmp_path / "hc", one_cluster(**{"client-certificate-data": "QQ=="}))
    assert "client certificate without its key" in error_of(resolve, halfcert, environ={})


def test_no_kubeconfig_anywhere(tmp_path: pathlib.Path) -> None:
    msg = error_of(resolve, environ={"HOME": str(tmp_path)})
    assert "no kubeconfig found" in msg and "--kubeconfig" in msg
    msg = error_of(resolve, environ={"KUBECONFIG": str(tmp_path / "a") + os.pathsep + str(tmp_path / "b")})
    assert "KUBECONFIG" in msg


def test_cli_bad_kubeconfig_exits_2_with_one_line(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dragoman.tui.cli import main

    bad = write(tmp_path / "bad", "clusters: [\n")
    for argv in (
        ["snapshot", str(tmp_path / "out.yaml"), "--kubeconfig", bad],
        ["--kubeconfig", str(tmp_path / "missing"), "snapshot", str(tmp_path / "out.yaml")],
        [
            "snapshot",
            str(tmp_path / "out.yaml"),
            "--kubeconfig",
            write(tmp_path / "ok", one_cluster()),
            "--context",
            "nope",
        ],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
        assert err.startswith("dragoman: ")
    assert not (tmp_path / "out.yaml").exists()
