"""Taints and tolerations (k8s.io/api@v0.37.2 core/v1 toleration.go) and the tolerations the DaemonSet controller
adds to every daemon pod."""

from __future__ import annotations

from collections.abc import Iterable

# What the DaemonSet controller adds to every daemon pod (pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations).
DAEMONSET_TOLERATIONS: tuple[dict, ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
# The effects that keep a pod off a node (the scheduler's TaintToleration filter).
DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")


# --- taints and tolerations (core/v1 toleration.go ToleratesTaint) ---


def tolerates(toleration: dict, taint: dict) -> bool:
    """One toleration tolerates one taint: effect empty or equal, key empty or equal, then by operator ("" is
    Equal: the values must be equal; Exists: any value; anything else tolerates nothing — the Gt/Lt toleration
    operators are behind a feature gate the simulated v1.37.2 leaves off). An empty key with Equal compares the
    values, as upstream does: a pod cannot store one (validation refuses it), a device request can
    (resourceclaim.ToleratesTaint is the same rule), so pods and devices share this function."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return op == "Exists"


def tolerations_tolerate(tolerations: Iterable[dict] | None, taint: dict) -> bool:
    return any(tolerates(t, taint) for t in tolerations or ())


def first_untolerated_taint(
    taints: Iterable[dict] | None, tolerations: Iterable[dict] | None, effects: tuple[str, ...] = DO_NOT_SCHEDULE
) -> dict | None:
    """The first taint with one of `effects` that no toleration tolerates (v1helper.FindMatchingUntoleratedTaint)."""
    tols = list(tolerations or ())
    for taint in taints or ():
        if taint.get("effect") not in effects:
            continue
        if not tolerations_tolerate(tols, taint):
            return taint
    return None


def untolerated_taints(pod_spec: dict, node: dict, *, daemonset: bool = False) -> list[dict]:
    """The node's NoSchedule/NoExecute taints the pod does not tolerate (a daemon pod with the tolerations the
    DaemonSet controller adds)."""
    tolerations = list(pod_spec.get("tolerations") or ())
    if daemonset:
        tolerations += DAEMONSET_TOLERATIONS
    return [
        taint
        for taint in (node.get("spec") or {}).get("taints") or ()
        if taint.get("effect") in DO_NOT_SCHEDULE and not tolerations_tolerate(tolerations, taint)
    ]


def taint_text(taint: dict) -> str:
    """`key=value:Effect`, as kubectl prints a taint."""
    value = taint.get("value")
    return f"{taint.get('key')}{'=' + value if value else ''}:{taint.get('effect')}"
