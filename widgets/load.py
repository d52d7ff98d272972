"""The load view's figures (pure): series, sparkline data, forecast cells and the sampler kept with the feed. The
screen that shows them is tui/screens/load.py."""

from __future__ import annotations

from dragoman.fleet import baseline, forecast, load

SAMPLE_INTERVAL = 5.0

# (series name, label, source); the source word is shown beside every figure.
SERIES = (
    ("claims", "ResourceClaims", load.MODEL),
    ("createRate", "claims created /min", load.MODEL),
    ("deleteRate", "claims deleted /min", load.MODEL),
    ("slices", "ResourceSlices", load.MODEL),
    ("pending_pods", "Pending pods", load.MODEL),
    ("pending_gpu_pods", "Pending GPU pods", load.MODEL),
    ("apiObjects", "API objects", load.APISERVER),
    ("storageBytes", "storage bytes", load.APISERVER),
)
PROMETHEUS_SERIES = (
    ("prometheus.schedulerPendingPods", "scheduler_pending_pods", load.PROMETHEUS),
    ("prometheus.unschedulableDynamicResources", "unschedulable (DRA)", load.PROMETHEUS),
    ("prometheus.claimsCreatedPerMinute", "claims created /min", load.PROMETHEUS),
    ("prometheus.draPluginP99Milliseconds", "DRA plugin p99 ms", load.PROMETHEUS),
    ("prometheus.etcdDbSizeBytes", "etcd DB bytes", load.PROMETHEUS),
)
# The figures a before/after line names first (dotted as baseline.compare flattens them): what moving a pool moves.
KEY_FIGURES = (
    "allocatableGpu",
    "devices",
    "claims",
    "bridgeClaims",
    "pendingPods",
    "prometheus.claimsCreatedPerMinute",
    "prometheus.schedulerPendingPods",
    "prometheus.unschedulableDynamicResources",
    "prometheus.draPluginP99Milliseconds",
    "prometheus.etcdDbSizeBytes",
    "prometheus.apiObjects",
)
FORECAST_COLUMNS = ("POOL", "STATE", "GPU PODS /H", "CLAIMS /H", "NEW CLAIMS AT ONCE", "SHARE OF API OBJECTS")


def figure_text(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 10_000_000:
        return f"{value / 1_048_576:.0f} Mi"
    if value == int(value):
        return str(int(value))
    return f"{value:.1f}"


def spark_data(series: list[float]) -> list[float]:
    """What a sparkline draws: nothing until there are two samples (one sample drew a full bar, as if at a peak), and a
    flat series at its floor rather than as a wall of full bars."""
    if len(series) < 2:
        return []
    if max(series) == min(series):
        return [0.0] * len(series)
    return list(series)


def latest_value(sampler: load.LoadSampler, name: str) -> float | None:
    samples = list(sampler.samples)
    if not samples:
        return None
    series = sampler.series(name)
    # Remote figures arrive after the model's counts: show the newest sample that has them.
    for s, v in zip(reversed(samples), reversed(series)):
        if name in ("apiObjects", "storageBytes") and s.api is None:
            continue
        if name.startswith("prometheus.") and s.prometheus is None:
            continue
        if name in ("createRate", "deleteRate") and s.interval <= 0:
            return None
        return v
    return None


def migration_lines(entries: list[dict], shown: int = 8) -> list[str]:
    """The before/after a migration recorded in its ConfigMap, as lines: the figures that changed from `before` to
    `after` (the key ones first), and where the control plane's figures came from. [] without a `before`."""
    before = next((e for e in reversed(entries) if e.get("label") == "before"), None)
    after = next((e for e in reversed(entries) if e.get("label") == "after"), None)
    if before is None:
        return []
    if after is None:
        return [f"migration ConfigMap: before recorded {before.get('at', '')}; no after yet (the switch has not run)"]
    changed = {k: (a, b) for k, a, b in baseline.compare(before.get("figures") or {}, after.get("figures") or {})}
    changed = {k: v for k, v in changed.items() if v[0] != v[1] and not k.startswith("apiObjects.")}
    order = [k for k in KEY_FIGURES if k in changed] + sorted(k for k in changed if k not in KEY_FIGURES)
    diff = ", ".join(f"{k} {figure_text(changed[k][0])}→{figure_text(changed[k][1])}" for k in order[:shown])
    prom = (after.get("figures") or {}).get("prometheus") or {}
    source = f"; control-plane figures from Prometheus {prom.get('url', '')}" if prom.get("source") else ""
    if prom.get("error"):
        source += f" ({prom['error']})"
    if prom.get("stale"):
        source += f" ({prom['stale']})"
    return [
        f"migration ConfigMap before {before.get('at', '')} → after {after.get('at', '')}: "
        + (diff or "no figure changed")
        + source
    ]


def forecast_cells(f: forecast.Forecast, state: str) -> tuple[str, ...]:
    rate = lambda v: f"{v:.2f}" if v < 10 else f"{v:.0f}"  # noqa: E731 - a few pods a day still show
    return (
        f.pool,
        state,
        rate(f.pods_per_hour),
        rate(f.claims_per_hour),
        str(f.standing_claims_added),
        f"{f.share_after:.2%}",
    )


def sampler_of(feed) -> load.LoadSampler:
    """One history per feed, kept while the view is closed so reopening it shows what came before."""
    sampler = getattr(feed, "load_sampler", None)
    if sampler is None:
        sampler = load.LoadSampler()
        feed.load_sampler = sampler
    return sampler
