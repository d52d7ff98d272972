"""Before/after figures per pool: a manual "mark now" baseline kept in a local JSON file, and the figures a migration
records in its ConfigMap `dragoman-pool-<pool>`."""

from __future__ import annotations

import json
import os
import pathlib
import tempfile
from typing import Any

from dragoman.fleet.k8s.times import now_text
from dragoman.fleet.model import FleetModel

STATE_DIR_ENV = "DRAGOMAN_STATE_DIR"
FILE_NAME = "baselines.json"
CONFIGMAP_PREFIX = "dragoman-pool-"
# Keys of the ConfigMap's data a migration may record figures under (issue 9 writes them; read if present).
FIGURE_KEYS = ("figures.json",)


def state_dir() -> pathlib.Path:
    """~/.local/state/dragoman (XDG_STATE_HOME honoured; DRAGOMAN_STATE_DIR overrides for tests)."""
    if os.environ.get(STATE_DIR_ENV):
        return pathlib.Path(os.environ[STATE_DIR_ENV])
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return pathlib.Path(base) / "dragoman"


def default_path() -> pathlib.Path:
    return state_dir() / FILE_NAME


def _now_text() -> str:
    return now_text()


def load(path: str | os.PathLike | None = None) -> dict:
    """The whole file: {cluster: {pool: [mark, ...]}}; an unreadable or missing file is an empty one."""
    p = pathlib.Path(path) if path else default_path()
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def mark(
    cluster: str,
    pool: str,
    figures: dict[str, Any],
    path: str | os.PathLike | None = None,
    label: str = "baseline",
    at: str | None = None,
) -> dict:
    """Record `figures` for `pool` of `cluster` now; returns the mark. Written atomically (temp file, rename)."""
    p = pathlib.Path(path) if path else default_path()
    data = load(p)
    entry = {"at": at or _now_text(), "label": label, "figures": dict(figures)}
    data.setdefault(cluster or "(unknown cluster)", {}).setdefault(pool, []).append(entry)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".baselines-", dir=str(p.parent))
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True)
    os.replace(tmp, p)
    return entry


def marks(cluster: str, pool: str, path: str | os.PathLike | None = None) -> list[dict]:
    """The local marks of one pool, oldest first."""
    return list(((load(path).get(cluster or "(unknown cluster)") or {}).get(pool)) or [])


def recorded(model: FleetModel, pool: str) -> list[dict]:
    """Figures a migration recorded in the pool's ConfigMap (`figures.json`, or `figures` or `switch.before`/`after`
    inside `state.json`): a list of {"at", "label" ("before"/"after"/...), "figures"}; empty when there are none."""
    out: list[dict] = []
    for (_, name), cm in sorted(model.objects["ConfigMap"].items()):
        if name != CONFIGMAP_PREFIX + pool:
            continue
        data = cm.get("data") or {}
        docs = []
        for key in FIGURE_KEYS:
            if data.get(key):
                docs.append(data[key])
        if data.get("state.json"):
            try:
                st = json.loads(data["state.json"])
            except ValueError:
                st = {}
            if isinstance(st, dict) and st.get("figures"):
                docs.append(st["figures"])
            # What `dragoman migrate` records (actions/capacity.py `figures`): switch.before and switch.after.
            switch = st.get("switch") if isinstance(st, dict) else None
            if isinstance(switch, dict):
                for label in ("before", "after"):
                    figs = switch.get(label)
                    if isinstance(figs, dict):
                        out.append({"at": figs.get("time", ""), "label": label, "figures": figs})
        for doc in docs:
            try:
                value = json.loads(doc) if isinstance(doc, str) else doc
            except ValueError:
                continue
            if isinstance(value, dict):
                for label, figs in value.items():
                    if isinstance(figs, dict):
                        out.append({"at": figs.get("at", ""), "label": label, "figures": figs.get("figures", figs)})
            elif isinstance(value, list):
                out.extend(v for v in value if isinstance(v, dict))
    return out


def figures_of(model: FleetModel, pool: str, sample: Any = None, api_objects: int | None = None) -> dict[str, Any]:
    """The figures a baseline records for a pool: its accounting, the fleet's load counts, and the forecast."""
    from dragoman.fleet.accounting import pool_account
    from dragoman.fleet.forecast import forecast
    from dragoman.fleet.load import model_counts

    acc = pool_account(model, pool)
    out: dict[str, Any] = {"pool": acc.to_json() if acc else None, "load": model_counts(model)}
    if sample is not None and getattr(sample, "api", None) is not None:
        out["apiserver"] = sample.api.to_json()
    out["forecast"] = forecast(model, pool, api_objects=api_objects).to_json()
    return out


def compare(before: dict, after: dict) -> list[tuple[str, Any, Any]]:
    """(figure, before, after) for the numbers that two marks share, flattened with dotted names."""

    def flat(d: Any, prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        if isinstance(d, dict):
            for k, v in d.items():
                out.update(flat(v, f"{prefix}{k}."))
        elif isinstance(d, (int, float)) and not isinstance(d, bool):
            out[prefix[:-1]] = d
        return out

    a, b = flat(before), flat(after)
    return [(k, a[k], b[k]) for k in sorted(set(a) & set(b))]
