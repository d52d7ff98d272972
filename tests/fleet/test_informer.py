"""Informers against the simulator over loopback: pagination, live changes, watch resume, 410 relist, 403 on one kind,
credential refresh on 401, unreachable servers and reconnection."""

from __future__ import annotations

import asyncio
import pathlib
import stat
import sys
import time

import pytest
import yaml
from dragoman.fleet.cluster import ApiError, Unreachable, connect
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.fleet.informer import Informer, fetch_once, sync
from dragoman.fleet.store import FORBIDDEN, KINDS, LIVE, FleetStore
from dragoman.sim.server import User

from tests.support.sim import running_simulator

FAST = {"backoff_initial": 0.05, "backoff_max": 0.3, "forbidden_retry": 0.5}


def node(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


async def until(predicate, timeout: float = 15.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def test_connect_learns_version_dra_versions_and_identity() -> None:
    async with running_simulator() as sim:
        cluster = await connect(str(sim.kubeconfig_path), None)
        try:
            assert cluster.context_name == "dragoman-sim" and cluster.server == sim.url and cluster.user == "admin"
            assert (
                cluster.server_version.startswith("v1.")
                and cluster.version_info["gitVersion"] == cluster.server_version
            )
            assert "v1" in cluster.resource_api_versions
            ns = await cluster.get("/api/v1/namespaces/kube-system")
            assert (
                cluster.identity == {"server": sim.url, "kubeSystemUID": ns["metadata"]["uid"]}
                and ns["metadata"]["uid"]
            )
        finally:
            await cluster.close()


async def test_paginated_list_and_a_change_reaches_the_store_within_a_second() -> None:
    nodes = [node(f"gpu-{i:04d}", pool="a") for i in range(1234)]
    async with running_simulator(objects=nodes) as sim:
        cluster = await connect(str(sim.kubeconfig_path), None)
        store = FleetStore()
        syncer = await sync(cluster, store, **FAST)
        try:
            await syncer.wait_synced(60)
            assert store.count("Node") == 1234 and store.overall.status == LIVE
            assert abs(syncer.last_activity - time.time()) < 120
            assert store.get("Node", "", "gpu-0007")["kind"] == "Node"  # LIST items get their kind
            assert store.state("ResourceSlice").synced and store.count("ResourceSlice") == 0
            lists = [r for r in sim.request_log.find("GET", "/api/v1/nodes") if "watch" not in r.query]
            assert len(lists) == 3 and all("limit=500" in r.query for r in lists)
            assert sum("continue=" in r.query for r in lists) == 2

            batches: list = []
            store.subscribe(batches.append)
            await until(
                lambda: store.overall.status == LIVE and syncer.informers["Node"].watches >= 1, what="node watch"
            )
            t0 = time.monotonic()
            await cluster.request("POST", "/api/v1/nodes", body=node("gpu-new", pool="b"))
            await until(lambda: store.get("Node", "", "gpu-new") is not None, timeout=10, what="the new node")
            assert time.monotonic() - t0 < 1.0
            await until(
                lambda: any(c.obj["metadata"]["name"] == "gpu-new" for b in batches for c in b),
                timeout=5,
                what="notification",
            )
            await cluster.request(
                "PATCH",
                "/api/v1/nodes/gpu-0001",
                body={"metadata": {"labels": {"pool": "c"}}},
                content_type="application/merge-patch+json",
            )
            await cluster.request("DELETE", "/api/v1/nodes/gpu-0002")
            await until(
                lambda: (
                    store.get("Node", "", "gpu-0002") is None
                    and store.get("Node", "", "gpu-0001")["metadata"]["labels"]["pool"] == "c"
                ),
                what="patch and delete",
            )
            changes = {(c.type, c.obj["metadata"]["name"]) for b in batches for c in b}
            assert {("ADDED", "gpu-new"), ("MODIFIED", "gpu-0001"), ("DELETED", "gpu-0002")} <= changes
        finally:
            await syncer.stop()
            await cluster.close()


async def test_only_dragomans_own_configmaps_and_leases() -> None:
    mine = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "dragoman-pool-a",
            "namespace": "kube-system",
            "labels": {"app.kubernetes.io/managed-by": "dragoman"},
        },
        "data": {"plan": "x"},
    }
    theirs = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": "default"},
        "data": {"secretish": "y"},
    }
    async with running_simulator(objects=[mine, theirs]) as sim:
        cluster = await connect(str(sim.kubeconfig_path), None)
        store = FleetStore(["ConfigMap"])
        syncer = await sync(cluster, store, **FAST)
        try:
            await syncer.wait_synced(30)
            assert list(store.objects("ConfigMap")) == [("kube-system", "dragoman-pool-a")]
            assert all(
                "labelSelector=app.kubernetes.io" in r.query for r in sim.request_log.find("GET", "/api/v1/configmaps")
            )
            # A ConfigMap that stops being ours leaves the store.
            await cluster.request(
                "PATCH",
                "/api/v1/namespaces/kube-system/configmaps/dragoman-pool-a",
                body={"metadata": {"labels": {"app.kubernetes.io/managed-by": None}}},
                content_type="application/merge-patch+json",
            )
            await until(lambda: store.count("ConfigMap") == 0, what="configmap gone")
        finally:
            await syncer.stop()
            await cluster.close()


async def test_watch_resumes_from_its_resource_version_without_relisting() -> None:
    async with running_simulator(objects=[node("a")]) as sim:
        sim.faults.set("watch-cut-events=2 resources=nodes")
        cluster = await connect(str(sim.kubeconfig_path), None)
        store = FleetStore(["Node"])
        syncer = await sync(cluster, store, **FAST)
        inf = syncer.informers["Node"]
        try:
            await syncer.wait_synced(30)
            for i in range(7):
                await cluster.request("POST", "/api/v1/nodes", body=node(f"n{i}"))
            await until(lambda: store.count("Node") == 8, what="all nodes")
            assert inf.lists == 1 and inf.watches >= 3  # the stream was cut every 2 events and resumed
            watch_rvs = [r.query for r in sim.request_log.find("GET", "/api/v1/nodes") if "watch=true" in r.query]
            assert len({q for q in watch_rvs}) >= 3  # each resume asked from a newer resourceVersion
            assert all("allowWatchBookmarks=true" in q and "resourceVersion=" in q for q in watch_rvs)
            assert store.overall.status == LIVE
        finally:
            await syncer.stop()
            await cluster.close()


async def test_relist_on_410_when_history_has_moved_on() -> None:
    async with running_simulator(objects=[node("a"), node("b")], history_size=5) as sim:
        cluster = await connect(str(sim.kubeconfig_path), None)
        store = FleetStore(["Node"])
        inf = Informer(cluster, store, KINDS["Node"], **FAST)
        task = inf.start()
        try:
            await until(lambda: store.state("Node").synced and inf.watches >= 1, what="first sync")
            old_rv = inf.resource_version
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            # While we are away, more changes than the server keeps.
            for i in range(10):
                await cluster.request("POST", "/api/v1/nodes", body=node(f"late-{i}"))
            await cluster.request("DELETE", "/api/v1/nodes/a")
            inf.resource_version = old_rv
            inf.start()
            await until(lambda: store.count("Node") == 11 and store.get("Node", "", "a") is None, what="relist")
            assert inf.lists == 2
            assert inf.resource_version != old_rv and store.state("Node").status == LIVE
        finally:
            if inf.task:
                inf.task.cancel()
                await asyncio.gather(inf.task, return_exceptions=True)
            await cluster.close()


async def test_forbidden_kind_degrades_only_that_kind(tmp_path: pathlib.Path) -> None:
    allowed = [(k.group, k.plural) for k in KINDS.values() if k.kind != "ResourceClaim"]
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "fleet-reader"},
        "rules": [{"apiGroups": [g], "resources": [p], "verbs": ["get", "list", "watch"]} for g, p in allowed],
    }
    async with running_simulator(
        objects=[role, node("a")], users=[{"name": "reader", "clusterRoles": ["fleet-reader"]}]
    ) as sim:
        kc = tmp_path / "kc"
        sim.write_kubeconfig(kc, "reader")
        cluster = await connect(str(kc), None)
        store = FleetStore()
        syncer = await sync(cluster, store, **{**FAST, "forbidden_retry": 600})
        try:
            await syncer.wait_synced(30)
            st = store.state("ResourceClaim")
            assert st.status == FORBIDDEN and "'reader' may not list resourceclaims" in st.message
            assert store.count("Node") == 1 and store.state("Node").status == LIVE
            assert store.overall.status == LIVE and "ResourceClaim" in store.overall.message
            # The rest stays live: a change still arrives.
            await cluster_admin_post(sim, node("b"))
            await until(lambda: store.count("Node") == 2, what="live node after 403")
            # One-shot reads degrade the same way.
            once = FleetStore()
            await fetch_once(cluster, once)
            assert once.state("ResourceClaim").status == FORBIDDEN and once.count("Node") == 2
            # Rights granted while dragoman runs: a relist (ctrl+r) picks the kind up without waiting for the retry.
            role["rules"].append(
                {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["get", "list", "watch"]}
            )
            admin = await connect(str(sim.kubeconfig_path), None)
            try:
                await admin.request(
                    "PUT",
                    "/apis/rbac.authorization.k8s.io/v1/clusterroles/fleet-reader",
                    body={
                        **role,
                        "metadata": (await admin.get("/apis/rbac.authorization.k8s.io/v1/clusterroles/fleet-reader"))[
                            "metadata"
                        ],
                    },
                )
            finally:
                await admin.close()
            syncer.relist("ResourceClaim")
            await until(lambda: store.state("ResourceClaim").status == LIVE, what="claims readable after relist")
            assert store.overall.message == ""
        finally:
            await syncer.stop()
            await cluster.close()


async def cluster_admin_post(sim, obj: dict) -> None:
    admin = await connect(str(sim.kubeconfig_path), None)
    try:
        await admin.request("POST", KINDS[obj["kind"]].path(obj["metadata"].get("namespace")), body=obj)
    finally:
        await admin.close()


def token_plugin(tmp_path: pathlib.Path) -> pathlib.Path:
    script = tmp_path / "token-plugin"
    script.write_text(f"""#!{sys.executable}
import json, pathlib
here = pathlib.Path({str(tmp_path)!r})
n = here / "runs"
n.write_text(str(int(n.read_text()) + 1 if n.exists() else 1))
print(json.dumps({{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {{"token": (here / "token").read_text().strip(),
                             "expirationTimestamp": "2999-01-01T00:00:00Z"}}}}))
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


async def test_exec_credentials_refreshed_on_401(tmp_path: pathlib.Path) -> None:
    # The simulator has no expiring tokens: we rotate the user's token on the server, as an identity provider would.
    async with running_simulator(
        objects=[node("a")], users=[{"name": "ops", "token": "token-one", "groups": ["system:masters"]}]
    ) as sim:
        (tmp_path / "token").write_text("token-one")
        cfg = sim.kubeconfig("ops")
        for u in cfg["users"]:
            if u["name"] == "ops":
                u["user"] = {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": str(token_plugin(tmp_path)),
                        "interactiveMode": "Never",
                    }
                }
        kc = tmp_path / "kc"
        kc.write_text(yaml.safe_dump(cfg))
        cluster = await connect(str(kc), None)
        store = FleetStore(["Node"])
        syncer = await sync(cluster, store, **FAST)
        try:
            await syncer.wait_synced(30)
            assert cluster.credentials.exec_runs == 1
            sim.add_user(User("ops", "token-two", ("system:masters",)))  # the old token now gets 401
            (tmp_path / "token").write_text("token-two")
            got = await cluster.get("/api/v1/nodes/a")
            assert got["metadata"]["name"] == "a"
            assert cluster.credentials.exec_runs == 2
            statuses = [r.status for r in sim.request_log.find("GET", "/api/v1/nodes/a")]
            assert statuses == [401, 200]
            # Informers keep going on the new credential after a relist.
            syncer.relist("Node")
            await until(lambda: syncer.informers["Node"].lists == 2, what="relist")
            await cluster.request("POST", "/api/v1/nodes", body=node("after-rotation"))
            await until(lambda: store.get("Node", "", "after-rotation") is not None, what="node after rotation")
            assert store.overall.status == LIVE
        finally:
            await syncer.stop()
            await cluster.close()


async def test_rejected_credentials_are_one_sentence(tmp_path: pathlib.Path) -> None:
    async with running_simulator() as sim:
        cfg = sim.kubeconfig()
        cfg["users"][0]["user"] = {"token": "not-a-valid-token"}
        kc = tmp_path / "kc"
        kc.write_text(yaml.safe_dump(cfg))
        with pytest.raises(UserError) as info:
            await connect(str(kc), None)
        assert isinstance(info.value, ApiError) and info.value.status == 401
        assert "rejected the credentials of user 'admin'" in info.value.message and "log in again" in info.value.message
        assert info.value.exit_code == ExitCode.INPUT


async def test_unreachable_server_is_one_sentence(tmp_path: pathlib.Path) -> None:
    async with running_simulator() as sim:
        cfg = sim.kubeconfig()
    # The simulator has stopped: nothing listens on that port any more.
    kc = tmp_path / "kc"
    kc.write_text(yaml.safe_dump(cfg))
    with pytest.raises(Unreachable) as info:
        await connect(str(kc), None)
    msg = info.value.message
    assert msg.startswith("cannot reach the cluster of context 'dragoman-sim'") and sim.url in msg
    assert info.value.exit_code == ExitCode.INPUT and "\n" not in msg


async def test_reconnects_after_the_server_goes_away_and_comes_back() -> None:
    async with running_simulator(objects=[node("a")]) as sim:
        port = sim.port
        cluster = await connect(str(sim.kubeconfig_path), None)
        store = FleetStore(["Node", "Pod"])
        syncer = await sync(cluster, store, **FAST)
        try:
            await syncer.wait_synced(30)
            # Let both watches reach the server first: a watch still arriving while the simulator stops keeps its
            # stop() waiting for aiohttp's 60 s shutdown timeout (reported to the simulator's owner).
            await until(lambda: len(sim._watch_streams) >= 2, what="watches registered")
            await sim.stop()
            await until(lambda: store.overall.status in ("reconnecting", "unreachable"), what="lost connection")
            assert store.state("Node").synced  # the last picture is kept while away
            assert "cannot reach" in store.overall.message or "broke" in store.overall.message
            await sim.start(port=port)
            await cluster_admin_post(sim, node("after"))
            await until(
                lambda: store.get("Node", "", "after") is not None and store.overall.status == LIVE,
                timeout=20,
                what="reconnect",
            )
        finally:
            await syncer.stop()
            await cluster.close()


async def test_wait_synced_fails_fast_when_the_cluster_vanishes() -> None:
    async with running_simulator() as sim:
        cluster = await connect(str(sim.kubeconfig_path), None)
    # connect() succeeded, then the server went away before the informers listed anything.
    store = FleetStore(["Node", "Pod"])
    syncer = await sync(cluster, store, **FAST)
    try:
        with pytest.raises(UserError, match="cannot reach the cluster"):
            await syncer.wait_synced(30)
    finally:
        await syncer.stop()
        await cluster.close()


async def test_tls_verified_with_certificate_authority_and_refused_without(tmp_path: pathlib.Path) -> None:
    async with running_simulator(objects=[node("a")]) as sim:
        cert_path = tmp_path / "sim-ca.crt"  # the simulator's per-run certificate (sim/certs.py)
        cert_path.write_bytes(sim.certificate.cert_pem)
        cfg = sim.kubeconfig()
        cfg["clusters"][0]["cluster"] = {"server": sim.url, "certificate-authority": str(cert_path)}
        (tmp_path / "ca").write_text(yaml.safe_dump(cfg))
        cluster = await connect(str(tmp_path / "ca"), None)
        try:
            assert (await cluster.get("/api/v1/nodes/a"))["metadata"]["name"] == "a"
        finally:
            await cluster.close()
        cfg["clusters"][0]["cluster"] = {"server": sim.url}  # neither a CA nor insecure-skip-tls-verify
        (tmp_path / "plain").write_text(yaml.safe_dump(cfg))
        with pytest.raises(Unreachable) as info:
            await connect(str(tmp_path / "plain"), None)
        assert "certificate that is not trusted" in info.value.message and "certificate-authority" in info.value.message


async def test_server_errors_are_retried_with_backoff_until_they_stop() -> None:
    async with running_simulator(objects=[node("a")]) as sim:
        sim.faults.set("error=1 code=500 verbs=list resources=nodes")
        cluster = await connect(str(sim.kubeconfig_path), None)
        store = FleetStore(["Node", "Namespace"])
        syncer = await sync(cluster, store, **FAST)
        try:
            await until(
                lambda: store.state("Node").status == "reconnecting" and store.state("Namespace").status == LIVE,
                what="reconnecting",
            )
            assert "500" in store.state("Node").message
            with pytest.raises(UserError, match="did not finish listing Node"):
                await syncer.wait_synced(1.0)  # server errors do not end the wait early; the timeout does
            failed = len(sim.request_log.find("GET", "/api/v1/nodes", status=500))
            assert failed >= 2  # retried, with backoff
            with pytest.raises(ApiError, match="500"):
                await fetch_once(cluster, FleetStore(["Node"]))  # one-shot reads retry a few times, then say why
            sim.faults.set("")
            await syncer.wait_synced(30)
            assert store.count("Node") == 1 and store.overall.status == LIVE
        finally:
            await syncer.stop()
            await cluster.close()


async def test_read_fleet_once_from_a_cluster_or_a_snapshot(tmp_path: pathlib.Path) -> None:
    from dragoman.fleet.informer import read_fleet

    async with running_simulator(objects=[node("a"), node("b")]) as sim:
        src = await read_fleet(str(sim.kubeconfig_path), "dragoman-sim")
        assert src.store.count("Node") == 2 and src.context == "dragoman-sim" and src.server == sim.url
        assert src.server_version.startswith("v1.") and src.identity["kubeSystemUID"] and src.forbidden == []
        assert src.store.overall.status == LIVE and not src.store.read_only
    snap = tmp_path / "s.yaml"
    snap.write_text(yaml.safe_dump_all([node("x")]))
    src = await read_fleet(snapshot=str(snap))
    assert src.snapshot == str(snap) and src.store.read_only and list(src.store.objects("Node")) == [("", "x")]


async def test_client_certificates_are_presented_and_bad_ones_are_a_sentence(tmp_path: pathlib.Path) -> None:
    import base64
    import shutil
    import subprocess

    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make a client certificate")
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(tmp_path / "c.key"),
            "-out",
            str(tmp_path / "c.crt"),
            "-days",
            "1",
            "-subj",
            "/CN=ops",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    async with running_simulator(objects=[node("a")]) as sim:
        cfg = sim.kubeconfig()
        user = cfg["users"][0]["user"]
        user["client-certificate"] = str(tmp_path / "c.crt")
        user["client-key"] = str(tmp_path / "c.key")
        (tmp_path / "kc").write_text(yaml.safe_dump(cfg))
        cluster = await connect(str(tmp_path / "kc"), None)
        try:
            assert (await cluster.get("/api/v1/nodes/a"))["metadata"]["name"] == "a"
        finally:
            await cluster.close()
        del user["client-certificate"], user["client-key"]
        user["client-certificate-data"] = base64.b64encode(b"not a certificate").decode()
        user["client-key-data"] = base64.b64encode(b"not a key").decode()
        (tmp_path / "bad").write_text(yaml.safe_dump(cfg))
        with pytest.raises(UserError) as info:
            await connect(str(tmp_path / "bad"), None)
        assert "TLS material of context 'dragoman-sim'" in info.value.message and info.value.exit_code == ExitCode.INPUT


async def test_exec_credentials_refreshed_before_expiry_without_a_401(tmp_path: pathlib.Path) -> None:
    from dragoman.fleet.cluster import Cluster
    from dragoman.fleet.kubeconfig import CredentialSource, resolve

    async with running_simulator(
        objects=[node("a")], users=[{"name": "ops", "token": "token-one", "groups": ["system:masters"]}]
    ) as sim:
        (tmp_path / "token").write_text("token-one")
        cfg = sim.kubeconfig("ops")
        for u in cfg["users"]:
            if u["name"] == "ops":
                u["user"] = {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": str(token_plugin(tmp_path)),
                        "interactiveMode": "Never",
                    }
                }
        kc = tmp_path / "kc"
        kc.write_text(yaml.safe_dump(cfg))
        rc = resolve(str(kc), environ={})
        now = [time.time()]
        cluster = Cluster(rc, CredentialSource(rc, clock=lambda: now[0]))
        try:
            await cluster.get("/api/v1/nodes/a")
            # The plugin's credential says it expires in 2999; jump to a minute before that, and rotate the token.
            now[0] = 32472144000.0 - 30
            sim.add_user(User("ops", "token-two", ("system:masters",)))
            (tmp_path / "token").write_text("token-two")
            await cluster.get("/api/v1/nodes/a")
            assert cluster.credentials.exec_runs == 2
            assert [r.status for r in sim.request_log.find("GET", "/api/v1/nodes/a")] == [200, 200]  # no 401 on the way
        finally:
            await cluster.close()


async def test_a_watch_the_server_ends_at_once_is_retried_with_backoff_not_in_a_spin() -> None:
    async with running_simulator(objects=[node("a")]) as sim:
        sim.faults.set("watch-cut-after=1ms resources=nodes")
        cluster = await connect(str(sim.kubeconfig_path), None)
        store = FleetStore(["Node"])
        syncer = await sync(cluster, store, **FAST)
        inf = syncer.informers["Node"]
        try:
            await syncer.wait_synced(30)
            await until(lambda: inf.watches >= 3, what="a few empty watches")
            await asyncio.sleep(1.5)
            assert inf.watches < 40  # a spin would open hundreds in that time
            assert inf.lists == 1 and store.state("Node").status == LIVE  # nothing lost, nothing relisted
            sim.faults.set("")
            await cluster.request("POST", "/api/v1/nodes", body=node("b"))
            await until(lambda: store.count("Node") == 2, what="events again")
        finally:
            await syncer.stop()
            await cluster.close()
