"""The fast loader of a settled fleet (sim/controlplane/loader.py: Writer, load_settled) and the heartbeats at scale
(sim/controlplane/heartbeats.py), run against the embedded simulator as the API server (no controllers run in it, as
the workload controllers are held on the real control plane while it loads), and the writer's retries against a
server that sheds load."""

from __future__ import annotations

import asyncio
import collections

import aiohttp.web
import pytest
from dragoman.sim.controlplane import heartbeats as hb
from dragoman.sim.controlplane import loader
from dragoman.sim.scenarios.scale import generate_envelope
from dragoman.sim.server.users import ADMIN

from tests.support.sim import running_simulator


def _writer(sim, in_flight: int = 16) -> loader.Writer:
    return loader.Writer(sim.url, sim.users[ADMIN].token, sim.certificate.cert_pem, in_flight=in_flight)


def _small_envelope() -> list[dict]:
    return generate_envelope(
        nodes=12,
        gpu_nodes=4,
        pods=240,
        gpu_pods=40,
        job_pods=24,
        namespaces=2,
        cpu_pool_size=4,
        gpu_pool_size=2,
    )


async def test_a_settled_fleet_is_created_as_pictured_with_owners_and_statuses_pointing_at_the_new_uids() -> None:
    objects = _small_envelope()
    want = collections.Counter(o["kind"] for o in objects if o["kind"] not in loader.SKIP_KINDS)
    async with running_simulator() as sim:
        seen: list[str] = []
        sent: dict[tuple[str, str], dict] = {}
        queries: list[str] = []
        async with _writer(sim) as w:
            send = w.send

            async def recording(method, path, body=None, *args, **kw):
                where, _, query = path.partition("?")
                sent[(method, where)] = body
                if method != "GET":
                    queries.append(query)
                return await send(method, path, body, *args, **kw)

            w.send = recording  # type: ignore[method-assign]
            report = await loader.load_settled(w, objects, progress=lambda stage, n, s: seen.append(stage))
        assert w.stats.refused == [] and w.stats.throttled == 0
        # Every write asks kube-apiserver for its plain decoder (no strict decoding for warnings nobody reads).
        assert queries and set(queries) == {"fieldValidation=Ignore"}
        assert seen.index("nodes") < seen.index("workloads") < seen.index("pods") < seen.index("claims")
        for kind, n in want.items():
            assert report.created[kind] >= n, kind
        store = sim.store
        by_name = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in objects}
        uid_of = {
            (kind, o["metadata"].get("namespace", ""), o["metadata"]["name"]): o["metadata"]["uid"]
            for kind, res in (("ReplicaSet", "replicasets"), ("DaemonSet", "daemonsets"), ("Job", "jobs"))
            for o in store.list(res)
        }
        pods = store.list("pods")
        assert len(pods) == want["Pod"]
        new_pod_uid = {}
        for pod in pods:
            md = pod["metadata"]
            pictured = by_name[("Pod", md["namespace"], md["name"])]
            new_pod_uid[pictured["metadata"]["uid"]] = md["uid"]
            # On its node, its status as pictured, and its labels kept through the status write.
            assert pod["spec"].get("nodeName") == pictured["spec"].get("nodeName")
            assert pod["status"]["phase"] == pictured["status"]["phase"]
            labels = md.get("labels") or {}
            for key, value in (pictured["metadata"].get("labels") or {}).items():
                if key != "batch.kubernetes.io/controller-uid":
                    assert labels.get(key) == value, (md["name"], key)
            # kube-apiserver's pod status strategy takes labels and annotations from the request (unlike the
            # simulator, which keeps the stored ones): the status write carries them, owners too.
            status_write = sent[("PUT", f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}/status")]
            assert status_write["metadata"].get("labels") == md.get("labels")
            assert status_write["metadata"].get("ownerReferences") == md.get("ownerReferences")
            for ref in md.get("ownerReferences") or ():
                # Every owner reference names the owner's uid in this cluster, not the picture's.
                assert ref["uid"] == uid_of[(ref["kind"], md["namespace"], ref["name"])]
                if ref["kind"] == "Job":
                    assert labels["batch.kubernetes.io/controller-uid"] == ref["uid"]
                if ref["kind"] == "DaemonSet":
                    assert labels["pod-template-generation"] == "1"
        claims = store.list("resourceclaims")
        assert claims and len(claims) == want["ResourceClaim"]
        for claim in claims:
            owner = claim["metadata"]["ownerReferences"][0]
            assert owner["uid"] in new_pod_uid.values()
            assert [r["uid"] for r in claim["status"]["reservedFor"]] == [owner["uid"]]
            assert claim["status"]["allocation"]["devices"]["results"]
        nodes = store.list("nodes")
        assert all(n["status"].get("capacity") for n in nodes)
        # A node is created with its status (the node strategy keeps it): no status write after it. Its taints are
        # then set as pictured (none here), lifting the not-ready taint kube-apiserver's admission adds on create.
        assert report.created["Node"] == len(nodes) and "Node" not in report.statuses
        assert not [path for (method, path) in sent if path.startswith("/api/v1/nodes/") and path.endswith("/status")]
        for node in nodes:
            assert sent[("PATCH", f"/api/v1/nodes/{node['metadata']['name']}")] == {"spec": {"taints": None}}
        finished = [
            j for j in store.list("jobs") if any(c["type"] == "Complete" for c in j["status"].get("conditions") or ())
        ]
        assert finished and all(
            {"SuccessCriteriaMet", "Complete"} <= {c["type"] for c in j["status"]["conditions"]} for j in finished
        )


async def test_a_refused_object_is_recorded_and_the_rest_still_load() -> None:
    objects = _small_envelope()
    bad = next(o for o in objects if o["kind"] == "Node")
    bad["metadata"]["name"] = "Not_A_DNS_Name"
    async with running_simulator() as sim:
        async with _writer(sim) as w:
            report = await loader.load_settled(w, objects)
    assert len(w.stats.refused) >= 1 and "Node /Not_A_DNS_Name" in w.stats.refused[0]
    assert report.created["Pod"] > 0


async def test_the_writer_waits_as_priority_and_fairness_asks_and_does_not_repeat_a_refusal() -> None:
    answers = collections.deque(
        [(429, {"Retry-After": "0"}), (429, {"Retry-After": "0"}), (503, {}), (201, {}), (422, {}), (409, {})]
    )
    seen: list[str] = []

    async def handle(request: aiohttp.web.Request) -> aiohttp.web.Response:
        seen.append(request.method)
        code, headers = answers.popleft()
        body = b'{"metadata": {"uid": "u-1"}}' if code == 201 else b'{"kind": "Status", "message": "no"}'
        return aiohttp.web.Response(status=code, headers=headers, body=body, content_type="application/json")

    app = aiohttp.web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = aiohttp.web.AppRunner(app)
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with loader.Writer(f"http://127.0.0.1:{port}", "t", None, in_flight=2) as w:
            code, out = await w.send("POST", "/api/v1/nodes", {"metadata": {"name": "n"}}, answer=loader.Created)
            assert (code, out.metadata.uid) == (201, "u-1")
            assert w.stats.throttled == 2 and w.stats.retried == 1 and len(seen) == 4
            code, out = await w.send("POST", "/api/v1/nodes", {"metadata": {"name": "n"}})
            assert code == 422 and out["message"] == "no" and len(seen) == 5
            code, _ = await w.send("POST", "/api/v1/nodes", {"metadata": {"name": "n"}})
            assert code == 409 and len(seen) == 6
    finally:
        await runner.cleanup()


@pytest.fixture
def sleeping_control_plane(tmp_path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    """ControlPlane with `sleep 60` in place of each binary (its own session, as _spawn starts them) and its readiness
    waits skipped: what was spawned, in order, with its flags; the run's folder under tmp_path."""
    import subprocess
    import tempfile

    from dragoman.sim.controlplane import processes

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    spawned: list[tuple[str, list[str]]] = []

    def spawn(self, name: str, args: list[str]) -> None:
        self._args[name] = list(args)
        spawned.append((name, list(args)))
        self.procs[name] = subprocess.Popen(["sleep", "60"], start_new_session=True)

    monkeypatch.setattr(processes.ControlPlane, "_spawn", spawn)
    monkeypatch.setattr(processes.ControlPlane, "_wait_ready", lambda self, timeout: None)
    monkeypatch.setattr(processes.ControlPlane, "_wait_default_sa", lambda self, timeout: None)
    return spawned


def test_holding_everything_starts_the_scheduler_and_every_controller_only_at_release(
    sleeping_control_plane: list[tuple[str, list[str]]],
) -> None:
    """ControlPlane(hold=HOLD_ALL): while a fleet loads, no kube-scheduler, and kube-controller-manager runs only the
    controllers a load needs; release() restarts it with all of them and starts the scheduler with its flags."""
    from dragoman.sim.controlplane import processes

    spawned = sleeping_control_plane
    started = []
    cp = processes.ControlPlane({}, hold=processes.HOLD_ALL)
    try:
        cp.start()
        started.extend(cp.procs.values())
        assert [n for n, _ in spawned] == ["etcd", "kube-apiserver", "kube-controller-manager"]
        kcm = spawned[-1][1]
        held = [a for a in kcm if a.startswith("--controllers=")]
        assert held == ["--controllers=" + ",".join(processes._RUN_WHILE_ALL_HELD)]
        assert "serviceaccount-controller" in held[0] and "garbage-collector-controller" not in held[0]
        first_kcm = cp.procs["kube-controller-manager"]
        cp.release()
        started.extend(cp.procs.values())
        assert first_kcm.poll() is not None, "the held controller manager is stopped"
        assert [n for n, _ in spawned[3:]] == ["kube-controller-manager", "kube-scheduler"]
        assert not [a for a in spawned[3][1] if a.startswith("--controllers=")]
        assert any(a.startswith("--kubeconfig=") for a in spawned[4][1])
        cp.release()  # nothing held any more: nothing restarted
        assert len(spawned) == 5
    finally:
        cp.stop()
    assert all(p.poll() is not None for p in started) and not cp.dir.exists()


def test_retiring_the_scheduler_and_controller_manager_leaves_etcd_and_the_api_server_serving(
    sleeping_control_plane: list[tuple[str, list[str]]],
) -> None:
    """ControlPlane.retire(): once a loaded fleet has settled, kube-scheduler and kube-controller-manager end for good
    (their informers' copies of the envelope are ~7.7 GB), etcd and kube-apiserver keep running, and stop() still ends
    the rest and removes the run's folder."""
    from dragoman.sim.controlplane import processes

    cp = processes.ControlPlane({}, hold=processes.HOLD_ALL)
    try:
        cp.start()
        cp.release()
        procs = dict(cp.procs)
        assert set(procs) == {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}
        cp.retire()
        assert set(cp.procs) == {"etcd", "kube-apiserver"}
        assert procs["kube-scheduler"].poll() is not None and procs["kube-controller-manager"].poll() is not None
        assert procs["etcd"].poll() is None and procs["kube-apiserver"].poll() is None
        cp.retire()  # already gone: nothing to do
    finally:
        cp.stop()
    assert all(p.poll() is not None for p in procs.values()) and not cp.dir.exists()


def test_heartbeats_keep_a_kubelets_period_until_the_fleet_is_too_large_then_the_grace_follows() -> None:
    assert hb.heartbeat_period(30) == 10.0
    assert hb.heartbeat_period(5000) == pytest.approx(5000 / hb.HEARTBEAT_RATE)
    for nodes in (30, 1000, 5000):
        period = hb.heartbeat_period(nodes)
        assert hb.heartbeat_grace(period) >= max(50.0, 3 * period)


async def test_heartbeats_make_and_renew_every_nodes_lease() -> None:
    objects = [o for o in _small_envelope() if o["kind"] == "Node"]
    async with running_simulator() as sim:
        async with _writer(sim) as w:
            await loader.load_settled(w, objects)
            stop = asyncio.Event()
            task = asyncio.ensure_future(hb.heartbeats(w, 0.3, stop))
            await asyncio.sleep(0.2)
            first = {ls["metadata"]["name"]: ls["spec"]["renewTime"] for ls in sim.store.list("leases")}
            await asyncio.sleep(0.8)
            stop.set()
            sent = await asyncio.wait_for(task, 10)
        leases = {ls["metadata"]["name"]: ls for ls in sim.store.list("leases")}
        nodes = {n["metadata"]["name"]: n["metadata"]["uid"] for n in sim.store.list("nodes")}
        assert set(leases) >= set(nodes) and sent >= 2 * len(nodes)
        for name, uid in nodes.items():
            assert leases[name]["metadata"]["ownerReferences"][0]["uid"] == uid
            assert leases[name]["spec"]["renewTime"] > first.get(name, "")
