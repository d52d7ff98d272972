"""The simulator's own security (issue 19): HTTPS always with a per-run certificate, 401 without a token, per-run
tokens, and no fixed token in any shipped scenario."""

from __future__ import annotations

import base64
import os
import pathlib
import ssl
import subprocess
import sys

import aiohttp
import pytest
import yaml
from dragoman.sim import scenario as scenario_mod
from dragoman.sim.server import Simulator

from tests.support.serve import served
from tests.support.sim import running_simulator

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "s", "namespace": "default"},
    "data": {"k": "dg=="},
}


def _ssl_from(kubeconfig: dict) -> ssl.SSLContext:
    """Verify the server with the certificate authority the kubeconfig carries, as kubectl does."""
    ca = base64.b64decode(kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
    return ssl.create_default_context(cadata=ca)


def _token(kubeconfig: dict, user: str = "admin") -> str:
    return next(u["user"]["token"] for u in kubeconfig["users"] if u["name"] == user)


def test_serve_without_openssl_on_path_still_serves_tls_and_refuses_tokenless_deletes(tmp_path: pathlib.Path) -> None:
    """`sim serve` with nothing on PATH (no openssl): HTTPS verified by the kubeconfig's CA, and a DELETE
    without a token is 401 while the node stays (it used to be plain HTTP with the admin for everyone)."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(NODE))
    empty = tmp_path / "bin"
    empty.mkdir()
    with served(scenario, tmp_path, timeout=60, env={"PATH": str(empty)}) as kubeconfig:
        cfg = yaml.safe_load(kubeconfig.read_text())
        cluster = cfg["clusters"][0]["cluster"]
        assert cluster["server"].startswith("https://") and "insecure-skip-tls-verify" not in cluster
        server = cluster["server"]

        async def probe() -> None:
            ctx = _ssl_from(cfg)
            async with aiohttp.ClientSession() as s:
                async with s.delete(f"{server}/api/v1/nodes/n1", ssl=ctx) as r:
                    assert r.status == 401
                    body = await r.json()
                    assert (body["kind"], body["reason"], body["code"]) == ("Status", "Unauthorized", 401)
                async with s.get(
                    f"{server}/api/v1/nodes/n1", ssl=ctx, headers={"Authorization": f"Bearer {_token(cfg)}"}
                ) as r:
                    assert r.status == 200 and (await r.json())["metadata"]["name"] == "n1"
                with pytest.raises(aiohttp.ClientError):
                    async with s.get(
                        server.replace("https://", "http://") + "/api/v1/nodes",
                        headers={"Authorization": f"Bearer {_token(cfg)}"},
                    ) as r:
                        # Plain HTTP to a TLS port: aiohttp gets garbage or a 400, never a node list.
                        assert r.status == 400
                        raise aiohttp.ClientError("answered plain http with 400")

        import asyncio

        asyncio.run(probe())


async def test_requests_without_a_token_are_401_and_a_wrong_token_too() -> None:
    async with running_simulator(objects=[NODE]) as sim:
        ctx = _ssl_from(sim.kubeconfig())
        async with aiohttp.ClientSession() as s:
            for method, path in (
                ("GET", "/api/v1/nodes"),
                ("DELETE", "/api/v1/nodes/n1"),
                ("GET", "/apis"),
                ("GET", "/api/v1/namespaces/default/secrets"),
            ):
                for headers in ({}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Basic YTpi"}):
                    async with s.request(method, sim.url + path, ssl=ctx, headers=headers) as r:
                        assert r.status == 401, (method, path, headers)
                        assert (await r.json())["reason"] == "Unauthorized"
            # What a real cluster's system:public-info-viewer lets anyone read.
            async with s.get(sim.url + "/version", ssl=ctx) as r:
                assert r.status == 200
        assert sim.store.get("nodes", None, "n1") is not None


async def test_a_scenario_may_allow_anonymous_reads_only(tmp_path: pathlib.Path) -> None:
    f = tmp_path / "anon.yaml"
    f.write_text(
        yaml.safe_dump_all(
            [{"apiVersion": "sim.dragoman.io/v1", "kind": "SimulatorConfig", "anonymousRead": True}, NODE, SECRET]
        )
    )
    assert scenario_mod.load(str(f)).anonymous_read is True
    async with running_simulator(scenario_path=f) as sim:
        ctx = _ssl_from(sim.kubeconfig())
        async with aiohttp.ClientSession() as s:
            async with s.get(sim.url + "/api/v1/nodes", ssl=ctx) as r:
                assert r.status == 200 and [n["metadata"]["name"] for n in (await r.json())["items"]] == ["n1"]
            for method, path in (
                ("DELETE", "/api/v1/nodes/n1"),
                ("GET", "/api/v1/namespaces/default/secrets"),
                ("GET", "/metrics"),
            ):
                async with s.request(method, sim.url + path, ssl=ctx) as r:
                    assert r.status == 403, (method, path)
                    assert 'User "system:anonymous"' in (await r.json())["message"]
            async with s.patch(
                sim.url + "/api/v1/nodes/n1",
                ssl=ctx,
                data=b'{"spec":{"unschedulable":true}}',
                headers={"Content-Type": "application/merge-patch+json"},
            ) as r:
                assert r.status == 403
        assert sim.store.get("nodes", None, "n1") is not None and not sim.store.get("nodes", None, "n1").get(
            "spec", {}
        ).get("unschedulable")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        yaml.safe_dump({"apiVersion": "sim.dragoman.io/v1", "kind": "SimulatorConfig", "anonymousRead": "yes"})
    )
    with pytest.raises(Exception, match="anonymousRead must be true or false"):
        scenario_mod.load(str(bad))


def test_tokens_and_certificates_differ_between_two_runs() -> None:
    sc = scenario_mod.load("demo")
    a, b = Simulator(users=sc.users), Simulator(users=sc.users)
    assert set(a.users) == set(b.users) == {"admin", "viewer", "no-evict"}
    for name in a.users:
        assert a.users[name].token != b.users[name].token and len(a.users[name].token) >= 32
    assert a.certificate.cert_pem != b.certificate.cert_pem and a.certificate.key_pem != b.certificate.key_pem
    # The kubeconfig is where clients get them.
    cfg = a.kubeconfig()
    assert {u["name"]: u["user"]["token"] for u in cfg["users"]} == {n: u.token for n, u in a.users.items()}


def test_no_shipped_scenario_names_a_token() -> None:
    for path in sorted(scenario_mod.SCENARIO_DIR.iterdir()):
        if path.suffix not in (".yaml", ".py") or path.name.startswith("_"):
            continue
        text = path.read_text()
        assert "dragoman-demo-admin" not in text and '"token":' not in text and "\n  token:" not in text, path.name
    sc = scenario_mod.load("demo")
    assert sc.users and not any("token" in u for u in sc.users)


def test_sim_serve_refuses_ports_out_of_range() -> None:
    for port in ("-1", "70000"):
        proc = subprocess.run(
            [sys.executable, "-m", "dragoman", "sim", "serve", "--port", port],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 2 and "Traceback" not in proc.stderr and "--port" in proc.stderr, proc.stderr


def test_the_kubeconfig_with_the_tokens_is_0600_and_never_written_through_a_fifo(tmp_path: pathlib.Path) -> None:
    from dragoman.fleet.errors import UserError

    sim = Simulator()
    path = tmp_path / "kc"
    sim.write_kubeconfig(path)
    assert path.stat().st_mode & 0o777 == 0o600 and sim.users["admin"].token in path.read_text()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UserError):
        sim.write_kubeconfig(fifo)
    assert fifo.is_fifo()
