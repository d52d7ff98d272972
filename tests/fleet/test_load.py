"""Control-plane load: the simulator's /metrics parsed, counts and claim rates sampled from the model, a Prometheus
queried, the forecast of a pool with a known pod rate, and baselines kept locally or read from the pool's ConfigMap."""

from __future__ import annotations

import datetime as dt
import json

from aiohttp import web
from dragoman.fleet import baseline, forecast, load
from dragoman.fleet.cluster import connect

from tests.fleet import fleet_fixtures as F
from tests.support.sim import running_simulator

NOW = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.UTC)


def ts(hours: float) -> str:
    return (NOW - dt.timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_parse_prometheus_text_reads_labels_values_and_skips_comments() -> None:
    text = (
        "# HELP x y\n# TYPE apiserver_resource_objects gauge\n"
        'apiserver_resource_objects{group="resource.k8s.io",resource="resourceclaims"} 12\n'
        'apiserver_resource_objects{group="",resource="pods"} 30\n'
        'apiserver_storage_size_bytes{storage_cluster_id="a"} 1.5e+06\n'
        'weird{a="q\\"uote"} 1 1700000000\nnot a sample\n'
    )
    samples = load.parse_prometheus_text(text)
    assert samples[0].label("resource") == "resourceclaims" and samples[0].value == 12
    assert samples[3].label("a") == 'q"uote'
    fig = load.apiserver_figures(samples)
    assert fig.objects == {"resourceclaims.resource.k8s.io": 12, "pods": 30} and fig.total_objects == 42
    assert fig.storage_bytes == 1_500_000 and fig.metric == "apiserver_resource_objects"
    # Only the deprecated metric: still read.
    old = load.apiserver_figures(load.parse_prometheus_text('apiserver_storage_objects{resource="pods"} 7\n'))
    assert old.objects == {"pods": 7} and old.storage_bytes is None
    assert load.apiserver_figures([]) is None


async def test_metrics_from_the_simulator_match_its_store() -> None:
    objs = [
        F.node("n0", "h100", gpus=0),
        F.chart_gpu_class(),
        F.claim("c1", "ml"),
        F.claim("c2", "ml"),
        F.pod("p", "ml", gpus=1),
    ]
    async with running_simulator(objects=objs) as sim:
        cluster = await connect(str(sim.kubeconfig_path), None)
        try:
            figures, why = await load.read_apiserver_metrics(cluster)
        finally:
            await cluster.close()
        assert why == "" and figures is not None
        counts = sim.store.counts()
        assert figures.objects["resourceclaims.resource.k8s.io"] == counts["resourceclaims.resource.k8s.io"] == 2
        assert figures.objects["pods"] == counts["pods"] == 1
        assert figures.total_objects == sum(counts.values())
        assert figures.storage_bytes == sum(sim.store.size_bytes().values()) > 0


def test_sampler_counts_claims_and_their_create_and_delete_rates() -> None:
    objs = [
        F.node("n0", "h100", gpus=0),
        F.chart_gpu_class(),
        F.claim("a"),
        F.claim("b"),
        F.claim("bridge", bridge_for="p"),
        F.pod("p", gpus=1),
        F.pod("q"),
        F.pod("r", gpus=1, node_name="n0"),
    ]
    m = F.model_of(*objs)
    sampler = load.LoadSampler()
    s0 = sampler.sample(m, now=1000.0)
    assert (s0.claims, s0.bridge_claims, s0.pending_pods, s0.pending_gpu_pods, s0.create_rate) == (3, 1, 2, 1, None)
    # Two claims created and one deleted over 30 s: 4 and 2 per minute.
    m.apply([F.change(F.claim("c"), "ADDED"), F.change(F.claim("d"), "ADDED"), F.change(F.claim("a"), "DELETED")])
    s1 = sampler.sample(m, now=1030.0)
    assert (s1.claims, s1.claims_created, s1.claims_deleted) == (4, 2, 1)
    assert s1.create_rate == 4.0 and s1.delete_rate == 2.0
    assert sampler.series("claims") == [3.0, 4.0] and sampler.series("createRate") == [0.0, 4.0]
    assert s1.to_json()["source"] == "model"
    # A remote figure not read for a sample repeats the previous one instead of drawing a dip to 0.
    s1.api = load.ApiServerFigures({"pods": 5}, 5, 100, "apiserver_resource_objects")
    sampler.sample(m, now=1060.0)
    assert sampler.series("apiObjects") == [0.0, 5.0, 5.0]


def test_forecast_of_a_pool_with_a_known_pod_rate() -> None:
    nodes = [F.node(f"n{i}", "l4", gpus=4, alloc=4) for i in range(2)] + [F.node("other", "t4", gpus=1, alloc=1)]
    pods = []
    # 12 GPU pods on the pool in the last 6 hours (2 per hour), 5 older ones, 3 on another pool, 2 without GPUs.
    for i in range(12):
        p = F.pod(f"job-{i}", "batch", gpus=1, node_name=f"n{i % 2}", phase="Succeeded" if i < 8 else "Running")
        p["metadata"]["creationTimestamp"] = ts(i * 0.5 + 0.1)
        pods.append(p)
    for i in range(5):
        p = F.pod(f"old-{i}", "batch", gpus=1, node_name="n0", phase="Succeeded")
        p["metadata"]["creationTimestamp"] = ts(10 + i)
        pods.append(p)
    for i in range(3):
        p = F.pod(f"elsewhere-{i}", "batch", gpus=1, node_name="other")
        p["metadata"]["creationTimestamp"] = ts(1)
        pods.append(p)
    for i in range(2):
        p = F.pod(f"cpu-{i}", "batch", node_name="n0")
        p["metadata"]["creationTimestamp"] = ts(1)
        pods.append(p)
    m = F.model_of(*nodes, *pods)
    f = forecast.forecast(m, "l4", window_hours=6, now=NOW.timestamp(), api_objects=1000)
    assert f.gpu_pods_created == 12 and f.pods_per_hour == 2.0 and f.claims_per_hour == 2.0
    assert f.standing_claims_added == 4  # the running ones get a claim at once
    assert abs(f.share_after - 4 / 1004) < 1e-9 and f.api_objects_source == "apiserver /metrics"
    assert forecast.forecast(m, "l4", window_hours=6, now=NOW.timestamp()).api_objects_source == "model"


def test_baseline_marks_round_trip_and_figures_recorded_in_the_pool_configmap(tmp_path) -> None:
    path = tmp_path / "state" / "baselines.json"
    m = F.model_of(F.node("n0", "l4", gpus=4, alloc=4), F.pod("p", "ml", gpus=2, node_name="n0"))
    figs = baseline.figures_of(m, "l4")
    assert figs["pool"]["allocatableGpus"] == 4 and figs["pool"]["pluginGpusInUse"] == 2
    baseline.mark("https://c:6443", "l4", figs, path=path, at="2026-11-30T10:00:00Z")
    baseline.mark(
        "https://c:6443", "l4", {**figs, "pool": {**figs["pool"], "allocatableGpus": 0}}, path=path, label="after"
    )
    got = baseline.marks("https://c:6443", "l4", path=path)
    assert [g["label"] for g in got] == ["baseline", "after"] and got[0]["at"] == "2026-11-30T10:00:00Z"
    diff = {k: (a, b) for k, a, b in baseline.compare(got[0]["figures"], got[1]["figures"])}
    assert diff["pool.allocatableGpus"] == (4, 0)
    assert baseline.marks("https://other", "l4", path=path) == []
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "dragoman-pool-l4", "namespace": "kube-system"},
        "data": {
            "figures.json": json.dumps(
                {
                    "before": {"at": "t0", "figures": {"allocatableGpus": 4}},
                    "after": {"at": "t1", "figures": {"allocatableGpus": 0}},
                }
            )
        },
    }
    m2 = F.model_of(F.node("n0", "l4", gpus=4, alloc=4), cm)
    rec = baseline.recorded(m2, "l4")
    assert [(r["label"], r["figures"]["allocatableGpus"]) for r in rec] == [("before", 4), ("after", 0)]


async def test_prometheus_queries_are_summed_and_errors_are_sentences() -> None:
    seen = []

    async def query(request: web.Request) -> web.Response:
        q = request.query["query"]
        seen.append(q)
        if "pending" in q:
            return web.json_response(
                {
                    "status": "success",
                    "data": {
                        "resultType": "vector",
                        "result": [
                            {"metric": {"queue": "active"}, "value": [0, "3"]},
                            {"metric": {"queue": "unschedulable"}, "value": [0, "4"]},
                        ],
                    },
                }
            )
        return web.json_response({"status": "error", "error": "bad query"}, status=400)

    app = web.Application()
    app.router.add_get("/api/v1/query", query)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        values, why = await load.query_prometheus(
            f"http://127.0.0.1:{port}", {"pending": "sum(scheduler_pending_pods)", "x": "bad"}
        )
    finally:
        await runner.cleanup()
    assert values == {"pending": 7.0, "x": None} and "bad query" in why and seen[0] == "sum(scheduler_pending_pods)"
    values, why = await load.query_prometheus(f"http://127.0.0.1:{port}", {"pending": "q"}, timeout=2)
    assert "cannot query Prometheus" in why


def test_promql_names_lists_each_querys_metrics_and_labels() -> None:
    metrics, labels = load.promql_names(
        'histogram_quantile(0.99, sum by (le) (rate(x_bucket{plugin="Dyn{a}",status!="y"}[5m]))) + max(etcd_db)'
    )
    assert metrics == {"x_bucket", "etcd_db"} and labels == {"le", "plugin", "status"}
    # Every query dragoman sends names at least one metric: the control-plane test checks each against /metrics.
    for q in [*load.PROMETHEUS_QUERIES.values(), load.PROMETHEUS_OBJECTS_QUERY]:
        assert load.promql_names(q)[0], q
    assert "scheduler_resourceclaim_creates_total" not in str(load.PROMETHEUS_QUERIES)


def test_prometheus_url_problems_are_sentences() -> None:
    assert load.prometheus_url_problem("http://127.0.0.1:9090") == ""
    assert load.prometheus_url_problem("https://prom.example/sub/path") == ""
    assert "not an http" in load.prometheus_url_problem("127.0.0.1:9090")
    assert "not a URL" in load.prometheus_url_problem("http://h:70000")
    assert "without ?query" in load.prometheus_url_problem("http://h:9090/?x=1")


async def test_prometheus_figures_keep_every_query_and_the_objects_per_resource() -> None:
    async def query(request: web.Request) -> web.Response:
        q = request.query["query"]
        if q == load.PROMETHEUS_OBJECTS_QUERY:
            result = [
                {"metric": {"group": "resource.k8s.io", "resource": "resourceclaims"}, "value": [0, "12"]},
                {"metric": {"group": "", "resource": "pods"}, "value": [0, "40"]},
            ]
        elif "resourceclaim_creates_total" in q and "success" in q:
            result = [{"metric": {}, "value": [0, "30"]}]
        elif "etcd_mvcc_db_total_size_in_bytes" in q:
            result = [{"metric": {}, "value": [0, "2097152"]}]
        else:
            result = []
        return web.json_response({"status": "success", "data": {"resultType": "vector", "result": result}})

    app = web.Application()
    app.router.add_get("/api/v1/query", query)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        # No /api/v1/targets here (as on a Prometheus-compatible query API): `since` has nothing to wait for.
        figs = await load.prometheus_figures(f"http://127.0.0.1:{port}", since=1e12)
    finally:
        await runner.cleanup()
    assert figs["source"] == "prometheus" and figs["url"] == f"http://127.0.0.1:{port}" and "error" not in figs
    assert "stale" not in figs and "scrapedAt" not in figs
    assert figs["claimsCreatedPerMinute"] == 30.0 and figs["claimCreateFailuresPerMinute"] is None
    assert figs["etcdDbSizeBytes"] == 2097152 and figs["schedulerPendingPods"] is None
    assert figs["objects"] == {"resourceclaims.resource.k8s.io": 12, "pods": 40}
    assert set(load.PROMETHEUS_QUERIES) <= set(figs)
    down = await load.prometheus_figures(f"http://127.0.0.1:{port}", timeout=2)
    assert "cannot query Prometheus" in down["error"] and down["claimsCreatedPerMinute"] is None


def test_the_migrations_switch_figures_are_read_and_shown_before_to_after() -> None:
    from dragoman.widgets.load import migration_lines

    before = {"time": "t0", "allocatableGpu": 8, "claims": 0, "prometheus": {"source": "prometheus", "url": "u"}}
    after = {
        "time": "t1",
        "allocatableGpu": 0,
        "claims": 6,
        "prometheus": {"source": "prometheus", "url": "http://p:9090", "claimsCreatedPerMinute": 12.0},
    }
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "dragoman-pool-l4", "namespace": "kube-system"},
        "data": {"state.json": json.dumps({"planId": "p", "switch": {"before": before, "after": after}})},
    }
    rec = baseline.recorded(F.model_of(F.node("n0", "l4", gpus=4, alloc=4), cm), "l4")
    got = [(r["label"], r["at"], r["figures"]["allocatableGpu"]) for r in rec]
    assert got == [("before", "t0", 8), ("after", "t1", 0)]
    (line,) = migration_lines(rec)
    assert line.startswith("migration ConfigMap before t0 → after t1: allocatableGpu 8→0, claims 0→6")
    assert line.endswith("control-plane figures from Prometheus http://p:9090")
    assert "no after yet" in migration_lines(rec[:1])[0] and migration_lines([]) == []
    # Figures Prometheus had not scraped since the switch say so where they are shown.
    after["prometheus"]["stale"] = "Prometheus had not scraped every target since the change"
    cm["data"]["state.json"] = json.dumps({"planId": "p", "switch": {"before": before, "after": after}})
    (line,) = migration_lines(baseline.recorded(F.model_of(F.node("n0", "l4", gpus=4, alloc=4), cm), "l4"))
    assert line.endswith("http://p:9090 (Prometheus had not scraped every target since the change)")


async def test_figures_since_a_change_wait_for_prometheus_to_scrape_after_it() -> None:
    # A figure taken right after the switch must include the switch: Prometheus's targets are polled until every
    # healthy one was scraped after the change (a rate() of a counter that just moved reads 0 before that).
    import datetime as dt
    import time

    since = time.time()
    calls = {"targets": 0}

    def stamp(t: float) -> str:
        return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "789Z"  # nanoseconds

    async def targets(request: web.Request) -> web.Response:
        calls["targets"] += 1
        fresh = calls["targets"] >= 3  # the third look finds every target scraped after the change
        last = since + 0.5 if fresh else since - 30
        active = [
            {"health": "up", "lastScrape": stamp(last), "scrapeInterval": "1s"},
            {"health": "up", "lastScrape": stamp(since + 0.7), "scrapeInterval": "1s"},
            {"health": "down", "lastScrape": stamp(since - 600), "scrapeInterval": "1s"},  # a dead target: not waited
        ]
        return web.json_response({"status": "success", "data": {"activeTargets": active}})

    async def query(request: web.Request) -> web.Response:
        value = "6" if calls["targets"] >= 3 else "0"
        result = [{"metric": {}, "value": [0, value]}]
        return web.json_response({"status": "success", "data": {"resultType": "vector", "result": result}})

    runner, url = await _fake_prometheus(query, targets)
    try:
        figs = await load.prometheus_figures(url, since=since)
        assert calls["targets"] == 3 and figs["claimsCreatedPerMinute"] == 6.0 and "stale" not in figs
        # The oldest healthy target's scrape, read to its nanosecond digits.
        assert abs(figs["scrapedAt"] - (since + 0.5)) < 1e-5
        # A Prometheus that never scrapes again: the wait ends after three scrape intervals and says so.
        calls["targets"] = -(10**6)
        started = time.monotonic()
        late = await load.prometheus_figures(url, since=time.time() + 3600)
        assert 2.5 < time.monotonic() - started < 10 and "may predate" in late["stale"]
    finally:
        await runner.cleanup()
    assert load._duration("1m30s") == 90 and load._duration("garbage") == 0


async def test_a_targets_answer_of_the_wrong_shape_is_no_wait() -> None:
    # Whatever /api/v1/targets answers (a list for data, a number for the targets, a timestamp that is not one), the
    # figures are taken at once, without an exception.
    answers = iter(
        [
            {"status": "success", "data": []},
            {"status": "success", "data": {"activeTargets": 7}},
            {"status": "success", "data": {"activeTargets": [{"health": "up", "lastScrape": 5}, "x"]}},
            ["not", "an", "object"],
        ]
    )

    async def targets(request: web.Request) -> web.Response:
        return web.json_response(next(answers))

    async def query(request: web.Request) -> web.Response:
        return web.json_response({"status": "success", "data": {"resultType": "vector", "result": []}})

    runner, url = await _fake_prometheus(query, targets)
    try:
        for _ in range(4):
            scraped, stale = await load.wait_for_scrapes(url, since=1e12, limit=5)
            assert (scraped, stale) == (None, "")
    finally:
        await runner.cleanup()


async def _fake_prometheus(query, targets) -> tuple[web.AppRunner, str]:
    """A Prometheus HTTP API of two handlers (/api/v1/query, /api/v1/targets) on a free port: its runner and URL."""
    app = web.Application()
    app.router.add_get("/api/v1/query", query)
    app.router.add_get("/api/v1/targets", targets)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
