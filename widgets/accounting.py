"""The accounting view's cells and sentences (pure): per pool allocatable vs slice devices vs allocations, what moving
the highlighted pool drops from sums and does to quotas, and PrometheusRules reading allocatable. The screen that
shows them is tui/screens/accounting.py."""

from __future__ import annotations

from dragoman.fleet import accounting as A
from dragoman.fleet.glyphs import labelled

POOL_COLUMNS = (
    "POOL",
    "STATE",
    "ALLOCATABLE",
    "SLICE GPUS",
    "ALLOCATED",
    "PLUGIN IN USE",
    "MISSED NOW",
    "DROP IF MOVED",
)
QUOTA_COLUMNS = ("QUOTA", "RESOURCE", "HARD", "USED", "NOW", "AFTER", "CHANGE")


def pool_cells(a: A.PoolAccount) -> tuple[str, ...]:
    """One pool's row (pure)."""
    return (
        a.pool,
        a.state_label,
        str(a.allocatable),
        str(a.slice_gpus),
        str(a.allocated),
        str(a.plugin_in_use),
        str(a.missed_now),
        str(a.drop_if_moved) if a.drop_if_moved else "-",
    )


def fleet_cells(t: dict) -> tuple[str, ...]:
    return (
        "fleet",
        "",
        str(t["allocatableGpus"]),
        str(t["sliceGpus"]),
        str(t["allocatedDevices"]),
        str(t["pluginGpusInUse"]),
        str(t["missedByAllocatableNow"]),
        str(t["allocatableDropIfMoved"]),
    )


def quota_cells(q: A.QuotaLine) -> tuple[str, ...]:
    """One quota resource's row (pure): the change says whether the number moves, blocks, or only its meaning
    changes."""
    if q.blocks_after and not q.blocks_now:
        change = f"✖ +{q.after - q.counted_now}: would block"
    elif q.changes:
        change = f"+{q.after - q.counted_now}"
    elif q.changes_meaning:
        change = f"{labelled('new-meaning', 'same number')}, new meaning"
    else:
        change = "-"
    return (
        f"{q.namespace}/{q.quota}",
        q.resource,
        q.hard_text,
        q.used_status or "?",
        str(q.counted_now),
        str(q.after),
        change,
    )


def summary_text(acc: A.Accounting) -> str:
    """The sentence on top: what sums of allocatable miss today and what the highlighted pool's move takes."""
    t = acc.totals
    parts = [
        f"node allocatable reports {t['allocatableGpus']} GPUs; ResourceSlices publish {t['sliceGpus']} whole GPUs "
        f"({t['sliceDevices']} devices, {t['allocatedDevices']} allocated to claims); sums of allocatable miss "
        f"{t['missedByAllocatableNow']} GPUs today."
    ]
    moving = next((a for a in acc.pools if a.pool == acc.pool), None)
    if moving is not None:
        if moving.drop_if_moved:
            parts.append(
                f"Moving {moving.pool} drops another {moving.drop_if_moved} GPUs from dashboards summing allocatable."
            )
        else:
            parts.append(
                f"{moving.pool} reports no allocatable GPUs any more: its move has already taken them off those sums."
            )
        changed = [q for q in acc.quotas if q.changes_meaning]
        if changed:
            parts.append(
                "Quotas that change: " + ", ".join(sorted({f"{q.namespace}/{q.quota}" for q in changed})) + "."
            )
        else:
            parts.append("No quota changes with it.")
    return " ".join(parts)


def rules_text(acc: A.Accounting) -> str:
    if acc.rules is None:
        head = f"PrometheusRules: not read — {acc.rules_note or 'the monitoring API has not been queried yet'}."
    elif not acc.rules:
        head = "PrometheusRules: none reads nvidia.com/gpu allocatable."
    else:
        head = "PrometheusRules reading nvidia.com/gpu allocatable (they miss GPUs on DRA nodes):\n" + "\n".join(
            f"  {r.describe(acc.pool)}" for r in acc.rules
        )
    return f"{head}\nCount instead — {A.DEVICE_SOURCE}; in PromQL, {A.PROMQL_SOURCE}."
