"""Control-plane load over time: counts sampled from the model (claims and their create/delete rates, slices, Pending
pods), the API server's /metrics parsed, and an optional Prometheus queried."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import math
import re
import time
from collections.abc import Iterable
from typing import Any

from dragoman.fleet.k8s.times import parse_time
from dragoman.fleet.model import FleetModel, is_bridge_claim, pod_extended_requests

SERIES_LENGTH = 120  # samples kept per series (at one every 5 s: ten minutes)
MODEL = "model"  # figures counted from the objects dragoman holds
APISERVER = "apiserver /metrics"
PROMETHEUS = "prometheus"

# Queries sent to a Prometheus given with --prometheus: the figures an operator is told to compare before and after
# moving a pool. Names and labels are v1.37.2's (the scheduler's pkg/scheduler/metrics, the ResourceClaim metric of
# k8s.io/dynamic-resource-allocation/resourceclaim/metrics that kube-scheduler and kube-controller-manager both export,
# kube-apiserver's storage metrics, etcd's mvcc metrics); tests/controlplane/test_real_prometheus.py fails when one of
# them names a metric or label the real binaries do not export. apiserver_storage_objects is not used: deprecated in
# 1.34, it is hidden from 1.37 on (apiserver_resource_objects replaces it).
PROMETHEUS_QUERIES = {
    # Pods waiting in the scheduler's queues (active, backoff, unschedulable, gated).
    "schedulerPendingPods": "sum(scheduler_pending_pods)",
    "unschedulableDynamicResources": 'sum(scheduler_unschedulable_pods{plugin="DynamicResources"})',
    "unschedulableNodeResourcesFit": 'sum(scheduler_unschedulable_pods{plugin="NodeResourcesFit"})',
    # The DynamicResources plugin's time per call, in ms (the scheduler samples 10% of its cycles for this histogram).
    "draPluginP99Milliseconds": (
        "1000 * histogram_quantile(0.99, sum by (le) "
        '(rate(scheduler_plugin_execution_duration_seconds_bucket{plugin="DynamicResources"}[5m])))'
    ),
    # Claims made for pods, per minute: by the scheduler (the extended-resource bridge) and the controller manager
    # (claims from templates).
    "claimsCreatedPerMinute": (
        '60 * sum(rate(dynamic_resource_allocation_resourceclaim_creates_total{status="success"}[5m]))'
    ),
    "claimCreateFailuresPerMinute": (
        '60 * sum(rate(dynamic_resource_allocation_resourceclaim_creates_total{status="failure"}[5m]))'
    ),
    # etcd's database file (physically allocated; the largest member's, every member holds a copy).
    "etcdDbSizeBytes": "max(etcd_mvcc_db_total_size_in_bytes)",
    "apiObjects": "sum(apiserver_resource_objects)",
    "apiObjectsPods": 'sum(apiserver_resource_objects{group="",resource="pods"})',
    "apiObjectsResourceClaims": 'sum(apiserver_resource_objects{group="resource.k8s.io",resource="resourceclaims"})',
    "apiObjectsResourceSlices": 'sum(apiserver_resource_objects{group="resource.k8s.io",resource="resourceslices"})',
}
# The API server's object counts per resource ("resourceclaims.resource.k8s.io", "pods"), one vector query.
PROMETHEUS_OBJECTS_QUERY = "sum by (group, resource) (apiserver_resource_objects)"

# What PromQL words are not metric names: functions, aggregations and keywords dragoman's queries use.
_PROMQL_WORDS = frozenset(
    {
        "sum", "min", "max", "avg", "count", "by", "without", "on", "ignoring", "group_left", "group_right", "and",
        "or", "unless", "bool", "offset", "rate", "irate", "increase", "delta", "histogram_quantile", "topk",
        "bottomk", "abs", "clamp_min", "clamp_max", "avg_over_time", "max_over_time", "sum_over_time", "time",
        "vector", "scalar", "label_replace",
    }
)  # fmt: skip
_PROMQL_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_PROMQL_RANGE = re.compile(r"\[[^\]]*\]")
_PROMQL_MATCHERS = re.compile(r"\{([^}]*)\}")
_PROMQL_GROUPING = re.compile(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)")
_PROMQL_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def promql_names(query: str) -> tuple[set[str], set[str]]:
    """(metric names, label names) a PromQL expression of the shape dragoman sends refers to: selectors' names and
    matchers' label names, and `by (...)` labels. Enough to check dragoman's own queries against what the components
    export; not a PromQL parser."""
    labels: set[str] = set()
    for m in _PROMQL_MATCHERS.finditer(_PROMQL_STRING.sub('""', query)):
        labels.update(k for k in re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", m.group(1)))
    stripped = _PROMQL_MATCHERS.sub(" ", _PROMQL_RANGE.sub(" ", _PROMQL_STRING.sub(" ", query)))
    for m in _PROMQL_GROUPING.finditer(stripped):
        labels.update(x.strip() for x in m.group(1).split(",") if x.strip())
    stripped = _PROMQL_GROUPING.sub(" ", stripped)
    metrics = {w for w in _PROMQL_IDENT.findall(stripped) if w not in _PROMQL_WORDS and not w[0].isdigit()}
    return metrics, labels


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\S+)?\s*$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


@dataclasses.dataclass(frozen=True)
class MetricSample:
    name: str
    labels: tuple[tuple[str, str], ...]
    value: float

    def label(self, key: str) -> str | None:
        return dict(self.labels).get(key)


def parse_prometheus_text(text: str) -> list[MetricSample]:
    """Samples of the Prometheus text exposition format (comments skipped, unparsable lines ignored)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if not m:
            continue
        try:
            value = float(m.group(4))
        except ValueError:
            continue
        labels = tuple((k, v.replace('\\"', '"').replace("\\\\", "\\")) for k, v in _LABEL.findall(m.group(3) or ""))
        out.append(MetricSample(m.group(1), labels, value))
    return out


@dataclasses.dataclass
class ApiServerFigures:
    """What the API server's /metrics says about stored objects and storage size."""

    objects: dict[str, int]  # "resourceclaims.resource.k8s.io" / "pods" -> stored objects
    total_objects: int
    storage_bytes: int | None
    metric: str  # which metric the counts came from

    def to_json(self) -> dict:
        return {
            "objects": dict(self.objects),
            "totalObjects": self.total_objects,
            "storageSizeBytes": self.storage_bytes,
            "metric": self.metric,
            "source": APISERVER,
        }


def apiserver_figures(samples: Iterable[MetricSample]) -> ApiServerFigures | None:
    """Object counts per resource (apiserver_resource_objects, else the deprecated apiserver_storage_objects) and
    apiserver_storage_size_bytes summed over storage clusters; None when neither count metric is present."""
    samples = list(samples)
    objects: dict[str, int] = {}
    metric = ""
    for s in samples:
        if s.name == "apiserver_resource_objects":
            group, res = s.label("group") or "", s.label("resource") or ""
            objects[f"{res}.{group}" if group else res] = int(s.value)
            metric = s.name
    if not objects:
        for s in samples:
            if s.name == "apiserver_storage_objects" and s.value >= 0:
                objects[s.label("resource") or ""] = int(s.value)
                metric = s.name
    if not objects:
        return None
    sizes = [s.value for s in samples if s.name == "apiserver_storage_size_bytes"]
    return ApiServerFigures(objects, sum(objects.values()), int(sum(sizes)) if sizes else None, metric)


METRICS_LIMIT = 64 << 20  # bytes of /metrics text read at most (a real API server's is a few MiB)


async def read_apiserver_metrics(cluster: Any) -> tuple[ApiServerFigures | None, str]:
    """GET /metrics through the cluster connection: (figures, "") or (None, why not) when it cannot be read."""
    from dragoman.fleet.cluster import ClusterError, read_body

    try:
        resp = await cluster._send("GET", "/metrics")
        try:
            # kube-apiserver gzips /metrics (the client asks for gzip): read_body inflates it, bounded.
            raw = await read_body(resp, METRICS_LIMIT, "/metrics", cluster._who())
        finally:
            resp.release()
    except ClusterError as exc:
        return None, exc.message
    if resp.status == 403:
        return None, "not allowed to read the API server's /metrics (403 Forbidden)"
    if resp.status >= 400:
        return None, f"the API server answered /metrics with {resp.status}"
    figures = apiserver_figures(parse_prometheus_text(raw.decode("utf-8", "replace")))
    if figures is None:
        return None, "the API server's /metrics has no apiserver_resource_objects"
    return figures, ""


def prometheus_url_problem(url: str) -> str:
    """Why `url` cannot be a Prometheus to query ("" when it can): an http(s) URL with a host, nothing else."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port out of range or not a number raises here
    except ValueError as exc:
        return f"--prometheus {url[:100]!r} is not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return (
            f"--prometheus {url[:100]!r} is not an http:// or https:// URL of a Prometheus (e.g. http://127.0.0.1:9090)"
        )
    if parts.query or parts.fragment:
        return f"--prometheus {url[:100]!r}: give the Prometheus base URL, without ?query or #fragment"
    return ""


async def _prometheus_vector(session: Any, url: str, query: str) -> tuple[list[dict], str]:
    """One instant query: (the result vector, "") or ([], the error Prometheus gave)."""
    async with session.get(url.rstrip("/") + "/api/v1/query", params={"query": query}) as resp:
        body = await resp.json(content_type=None)
    if not isinstance(body, dict) or body.get("status") != "success":
        return [], str(body.get("error", resp.status) if isinstance(body, dict) else resp.status)
    return list((body.get("data") or {}).get("result") or []), ""


def _value(r: dict) -> float | None:
    try:
        v = float(r["value"][1])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


async def query_prometheus(
    url: str, queries: dict[str, str] | None = None, timeout: float = 10.0
) -> tuple[dict[str, float | None], str]:
    """Instant queries against a Prometheus HTTP API (`/api/v1/query`); (values by key, "" or why nothing came back)."""
    import aiohttp

    queries = queries or PROMETHEUS_QUERIES
    out: dict[str, float | None] = {}
    errors = []
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
            for key, q in queries.items():
                result, error = await _prometheus_vector(session, url, q)
                if error:
                    errors.append(f"{key}: {error}")
                    out[key] = None
                    continue
                vals = [v for v in (_value(r) for r in result) if v is not None]
                out[key] = sum(vals) if vals else None
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        return out, f"cannot query Prometheus at {url}: {exc or type(exc).__name__}"
    return out, "; ".join(errors)


def _duration(text: Any) -> float:
    """Seconds of a Prometheus duration such as `5s`, `1m` or `1m30s` (0 when it is not one)."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    parts = re.findall(r"(\d+)(ms|s|m|h|d)", str(text or ""))
    return sum(int(n) * units[u] for n, u in parts)


async def _last_scrapes(session: Any, url: str) -> tuple[list[tuple[float, float]], str]:
    """Each healthy active target's (last scrape, scrape interval) from `/api/v1/targets`; ([], why) when unknown."""
    async with session.get(url.rstrip("/") + "/api/v1/targets", params={"state": "active"}) as resp:
        if resp.status != 200:
            return [], f"{resp.status}"
        body = await resp.json(content_type=None)
    data = body.get("data") if isinstance(body, dict) else None
    targets = data.get("activeTargets") if isinstance(data, dict) else None
    out = []
    for t in targets if isinstance(targets, list) else ():
        if isinstance(t, dict) and t.get("health") == "up":
            stamp = t.get("lastScrape")
            last = parse_time(stamp) if isinstance(stamp, str) else None  # RFC 3339, nanoseconds read to the µs
            if last is not None:
                out.append((last, _duration(t.get("scrapeInterval"))))
    return out, ""


async def wait_for_scrapes(
    url: str, since: float, limit: float = 60.0, timeout: float = 10.0
) -> tuple[float | None, str]:
    """Wait until Prometheus has scraped every healthy target after `since` (unix time), at most three scrape
    intervals (and `limit` seconds): figures recorded right after a change otherwise show the minutes before it, and a
    rate() of a counter that just moved reads 0. Returns (the oldest last scrape seen, "" or why it is older)."""
    import aiohttp

    deadline = time.monotonic() + limit
    oldest: float | None = None
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
            while True:
                scrapes, why = await _last_scrapes(session, url)
                if not scrapes:
                    # A Prometheus-compatible API without /targets (a Thanos querier, Mimir): nothing to wait for.
                    return None, ""
                oldest = min(last for last, _ in scrapes)
                if oldest >= since:
                    return oldest, ""
                interval = max(every for _, every in scrapes) or 15.0
                deadline = min(deadline, time.monotonic() + 3 * interval)
                if time.monotonic() >= deadline:
                    break
                await asyncio.sleep(min(1.0, interval / 5))
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return oldest, ""  # the queries that follow say why Prometheus cannot be read
    return oldest, "Prometheus had not scraped every target since the change: its figures may predate it"


async def prometheus_figures(url: str, timeout: float = 10.0, since: float | None = None) -> dict:
    """What a before/after record keeps from Prometheus: every query's value, the API server's object counts per
    resource, where they came from and when; `error` says why a figure is missing. With `since` (unix time), the
    figures are taken once Prometheus has scraped every target after it (`scrapedAt`; `stale` says when it had not)."""
    import aiohttp

    scraped, stale = (await wait_for_scrapes(url, since, timeout=timeout)) if since is not None else (None, "")
    got, error = await query_prometheus(url, timeout=timeout)
    values = {k: got.get(k) for k in PROMETHEUS_QUERIES}  # every key, None where nothing came back
    objects: dict[str, int] = {}
    if not error or any(v is not None for v in values.values()):
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
                result, why = await _prometheus_vector(session, url, PROMETHEUS_OBJECTS_QUERY)
            for r in result:
                metric, v = r.get("metric") or {}, _value(r)
                if v is not None and v >= 0:
                    group, res = metric.get("group") or "", metric.get("resource") or ""
                    objects[f"{res}.{group}" if group else res] = int(v)
            error = "; ".join(x for x in (error, why) if x)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            error = error or f"cannot query Prometheus at {url}: {exc or type(exc).__name__}"
    out: dict[str, Any] = {"source": PROMETHEUS, "url": url, **values, "objects": objects}
    if scraped is not None:
        out["scrapedAt"] = scraped
    if stale:
        out["stale"] = stale
    if error:
        out["error"] = error
    return out


# ---- counts from the model ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class LoadSample:
    """One moment's counts, each from the model unless the API server or Prometheus gave it."""

    at: float  # unix time of the sample
    claims: int
    bridge_claims: int
    slices: int
    pending_pods: int
    pending_gpu_pods: int
    claims_created: int  # since the previous sample
    claims_deleted: int
    interval: float  # seconds since the previous sample (0 for the first)
    api: ApiServerFigures | None = None
    prometheus: dict[str, float | None] | None = None

    @property
    def create_rate(self) -> float | None:
        """Claims created per minute over the last interval (model-derived)."""
        return self.claims_created * 60.0 / self.interval if self.interval > 0 else None

    @property
    def delete_rate(self) -> float | None:
        return self.claims_deleted * 60.0 / self.interval if self.interval > 0 else None

    def to_json(self) -> dict:
        return {
            "at": self.at,
            "source": MODEL,
            "claims": self.claims,
            "bridgeClaims": self.bridge_claims,
            "slices": self.slices,
            "pendingPods": self.pending_pods,
            "pendingGpuPods": self.pending_gpu_pods,
            "claimsCreatedPerMinute": self.create_rate,
            "claimsDeletedPerMinute": self.delete_rate,
            "apiserver": self.api.to_json() if self.api else None,
            "prometheus": dict(self.prometheus) if self.prometheus is not None else None,
        }


def _is_gpu_pod(pod: dict) -> bool:
    return bool(pod_extended_requests(pod)) or bool((pod.get("spec") or {}).get("resourceClaims"))


def model_counts(model: FleetModel) -> dict[str, int]:
    """Counts from the objects the model holds: claims (and scheduler-made ones), slices, Pending pods (all, GPU)."""
    claims = model.objects["ResourceClaim"]
    pending = [
        p
        for p in model.objects["Pod"].values()
        if (p.get("status") or {}).get("phase", "Pending") == "Pending"
        and not (p.get("metadata") or {}).get("deletionTimestamp")
    ]
    return {
        "claims": len(claims),
        "bridgeClaims": sum(1 for c in claims.values() if is_bridge_claim(c)),
        "slices": len(model.objects["ResourceSlice"]),
        "pendingPods": len(pending),
        "pendingGpuPods": sum(1 for p in pending if _is_gpu_pod(p)),
    }


class LoadSampler:
    """A bounded history of LoadSamples; claims created and deleted are found by comparing claim uids between
    samples."""

    def __init__(self, length: int = SERIES_LENGTH) -> None:
        self.samples: collections.deque[LoadSample] = collections.deque(maxlen=length)
        self._claim_ids: set[str] | None = None

    def sample(
        self,
        model: FleetModel,
        now: float | None = None,
        api: ApiServerFigures | None = None,
        prometheus: dict[str, float | None] | None = None,
    ) -> LoadSample:
        now = time.time() if now is None else now
        ids = {
            (c.get("metadata") or {}).get("uid") or f"{k[0]}/{k[1]}" for k, c in model.objects["ResourceClaim"].items()
        }
        created = len(ids - self._claim_ids) if self._claim_ids is not None else 0
        deleted = len(self._claim_ids - ids) if self._claim_ids is not None else 0
        self._claim_ids = ids
        prev = self.samples[-1] if self.samples else None
        c = model_counts(model)
        s = LoadSample(
            now,
            c["claims"],
            c["bridgeClaims"],
            c["slices"],
            c["pendingPods"],
            c["pendingGpuPods"],
            created,
            deleted,
            now - prev.at if prev else 0.0,
            api,
            prometheus,
        )
        self.samples.append(s)
        return s

    def series(self, name: str) -> list[float]:
        """Values of one figure over time, oldest first. A rate before two samples counts as 0; a remote figure not
        (yet) read for a sample repeats the one before it, so a slow /metrics does not draw a dip."""
        out: list[float] = []
        remote = name in ("apiObjects", "storageBytes") or name.startswith("prometheus.")
        for s in self.samples:
            v: float | None
            if name == "apiObjects":
                v = s.api.total_objects if s.api else None
            elif name == "storageBytes":
                v = s.api.storage_bytes if s.api else None
            elif name == "createRate":
                v = s.create_rate
            elif name == "deleteRate":
                v = s.delete_rate
            elif name.startswith("prometheus."):
                v = (s.prometheus or {}).get(name.split(".", 1)[1])
            else:
                v = getattr(s, name)
            if v is None and remote and out:
                out.append(out[-1])
            else:
                out.append(float(v or 0))
        return out

    @property
    def latest(self) -> LoadSample | None:
        return self.samples[-1] if self.samples else None
