"""The Stuck pods view (`:pending`): GPU pods that are Pending or Failed, or that a finding names, with why.

Rows follow `Delta.pods` (fleet/delta.py); a new diagnosis redoes the pods whose findings changed."""

from __future__ import annotations

from collections.abc import Sequence

from dragoman.fleet.findings import SEVERITY_ORDER, Finding
from dragoman.fleet.model import WAITING_PHASES, pod_extended_requests
from dragoman.fleet.views.base import Fleet, View
from dragoman.fleet.views.cells import SEV_GLYPH, Cell, age_text, without_subject

# k9s's pod columns where they fit beside the diagnosis: NAMESPACE next to the name, AGE before the long WHY.
COLUMNS = (
    ("pod", "POD", 12, 48),
    ("namespace", "NAMESPACE", 6, 16),
    ("finding", "FINDING", 8, 22),
    ("age", "AGE", 3, 5),
    ("why", "WHY", 16, None),
    ("phase", "PHASE", 5, 9),
    ("asks", "ASKS FOR", 6, 26),
)

POD_FINDINGS = {
    "pending-insufficient",
    "pending-unmapped",
    "pending-selector",
    "pending-cordoned",
    "failed-admission",
    "prepare-failed",
    "running-without-gpu",
    "double-request",
    "quota-blocks-claim",
    "nodeselector-steering",
    # What v1.37's DRA features do to a pod (fleet/diagnose/devices.py).
    "pending-device-taint",
    "pending-counters",
    "pending-constraint",
    "pending-capacity",
    "pending-first-available",
    "binding-pending",
    "binding-failed",
    "claim-missing",
    "class-missing",
    "admin-access-forbidden",
    "filter-timeout",
    "device-unhealthy",
}


def is_gpu_pod(pod: dict) -> bool:
    return bool(pod_extended_requests(pod)) or bool((pod.get("spec") or {}).get("resourceClaims"))


def _pod_node(pod: dict) -> str | None:
    return (pod.get("spec") or {}).get("nodeName")


def pod_asks(pod: dict) -> str:
    parts = [f"{k}: {v}" for k, v in sorted(pod_extended_requests(pod).items())]
    claims = (pod.get("spec") or {}).get("resourceClaims") or ()
    if claims:
        parts.append(f"{len(claims)} claim{'s' if len(claims) != 1 else ''}")
    return ", ".join(parts) or "—"


def scheduler_message(pod: dict) -> str:
    """The scheduler's words: the PodScheduled=False condition's message, or the kubelet's reason for a failed pod."""
    status = pod.get("status") or {}
    for c in status.get("conditions") or ():
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return str(c.get("message") or c.get("reason") or "")
    if status.get("phase") == "Failed":
        return f"{status.get('reason', '')}: {status.get('message', '')}".strip(": ")
    return ""


def stuck_row(pod: dict, findings: Sequence[Finding], now: float | None = None) -> tuple:
    meta = pod.get("metadata") or {}
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    f = sorted(findings, key=lambda f: SEVERITY_ORDER.get(f.severity, 9))
    first = f[0] if f else None
    finding = Cell(f"{SEV_GLYPH[first.severity]} {first.id}", first.severity) if first else Cell("—", "muted")
    why = first.summary if first else scheduler_message(pod) or "no finding explains it yet"
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    why = without_subject(why, "Pod", ns, name)
    return (
        name,
        ns,
        finding,
        age_text(meta.get("creationTimestamp"), now),
        why,
        Cell(phase, "warning" if phase == "Pending" else "error" if phase == "Failed" else None),
        pod_asks(pod),
    )


class StuckView(View):
    name, title = "pending", "Stuck pods"
    columns = COLUMNS
    uses_findings = True
    empty = "no stuck GPU pod"

    def sort_key(self, key, row):
        return (0 if row[2].tone == "error" else 1 if row[2].tone == "warning" else 2, key)

    def _findings(self, fleet: Fleet, key) -> list[Finding]:
        return [
            f
            for f in fleet.by_object.get(("Pod", key[0], key[1]), ())
            if f.id in POD_FINDINGS and f.id != "nodeselector-steering"
        ]

    def row(self, fleet, key):
        pod = fleet.model.objects["Pod"].get(key)
        if pod is None:
            return None
        found = self._findings(fleet, key)
        phase = (pod.get("status") or {}).get("phase")
        stuck = found or (
            is_gpu_pod(pod) and phase in WAITING_PHASES and not (pod.get("metadata") or {}).get("deletionTimestamp")
        )
        if not stuck:
            return None
        pool = fleet.model.pool_of_node(_pod_node(pod)) or (found[0].pool if found else None)
        return stuck_row(pod, found, fleet.model.now), {
            "namespace": key[0],
            "pool": pool or "",
            "id": ",".join(f.id for f in found),
            "phase": phase or "",
        }

    def all_rows(self, fleet):
        pods = fleet.model.objects["Pod"]
        keys = {k for k in fleet.model.waiting_pods() if k in pods and is_gpu_pod(pods[k])}
        keys |= {(ns, n) for (kind, ns, n) in fleet.by_object if kind == "Pod"}
        for key in sorted(keys):
            r = self.row(fleet, key)
            if r:
                yield key, r[0], r[1]

    def affected(self, fleet, t):
        return None if t.everything else t.pods

    def findings_changed(self, fleet, refs, pools):
        return {(ns, n) for kind, ns, n in refs if kind == "Pod"}

    def palette(self, fleet):
        ids = sorted({f.id for f in fleet.findings if f.id in POD_FINDINGS})
        return [(f"stuck pods: only {i}", f"filter id={i}", f"id={i}") for i in ids]

    def ref(self, fleet, key):
        return ("Pod", key[0], key[1])
