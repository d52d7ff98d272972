"""Control-plane load over time: counts sampled from the model (claims and their create/delete rates, slices, Pending
pods), the API server's /metrics parsed, and an optional Prometheus queried."""

from __future__ import annotations

import collections
import dataclasses
import math
import re
import time
from collections.abc import Iterable
from typing import Any

from dragoman.fleet.model import FleetModel, is_bridge_claim, pod_extended_requests

SERIES_LENGTH = 120  # samples kept per series (at one every 5 s: ten minutes)
MODEL = "model"  # figures counted from the objects dragoman holds
APISERVER = "apiserver /metrics"
PROMETHEUS = "prometheus"

# Queries sent to a Prometheus given with --prometheus (kube-scheduler metrics; names per dra-facts.md §b Metrics).
PROMETHEUS_QUERIES = {
    "schedulerPendingPods": "sum(scheduler_pending_pods)",
    "unschedulableDynamicResources": 'sum(scheduler_unschedulable_pods{plugin="DynamicResources"})',
    "unschedulableNodeResourcesFit": 'sum(scheduler_unschedulable_pods{plugin="NodeResourcesFit"})',
    "draPluginP99Seconds": (
        "histogram_quantile(0.99, sum by (le) "
        '(rate(scheduler_plugin_execution_duration_seconds_bucket{plugin="DynamicResources"}[5m])))'
    ),
    "resourceClaimCreatesPerSecond": "sum(rate(scheduler_resourceclaim_creates_total[5m]))",
}

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


async def read_apiserver_metrics(cluster: Any) -> tuple[ApiServerFigures | None, str]:
    """GET /metrics through the cluster connection: (figures, "") or (None, why not) when it cannot be read."""
    from dragoman.fleet.cluster import ClusterError

    try:
        resp = await cluster._send("GET", "/metrics")
        try:
            raw = await resp.read()
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
                async with session.get(url.rstrip("/") + "/api/v1/query", params={"query": q}) as resp:
                    body = await resp.json(content_type=None)
                if body.get("status") != "success":
                    errors.append(f"{key}: {body.get('error', resp.status)}")
                    out[key] = None
                    continue
                result = (body.get("data") or {}).get("result") or []
                vals = [float(r["value"][1]) for r in result if r.get("value")]
                vals = [v for v in vals if not math.isnan(v)]
                out[key] = sum(vals) if vals else None
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        return out, f"cannot query Prometheus at {url}: {exc or type(exc).__name__}"
    return out, "; ".join(errors)


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
