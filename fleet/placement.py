"""Read-only scheduling predicates over raw objects, as the diagnosis and the actions ask them (node selectors,
required node affinity, taints and tolerations); the rules themselves are fleet/k8s/'s."""

from __future__ import annotations

from dragoman.fleet import k8s


def required_affinity_terms(pod_spec: dict) -> list[dict] | None:
    na = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if not na:
        return None
    return na.get("nodeSelectorTerms") or []


def selects_node(pod_spec: dict, node: dict, *, labels_override: dict | None = None) -> bool:
    """nodeSelector and required node affinity (terms OR-ed) as the scheduler's NodeAffinity filter reads them."""
    if labels_override is not None:
        node = {"metadata": {**node.get("metadata", {}), "labels": labels_override}}
    return k8s.pod_matches_node(pod_spec, node)


def untolerated_taints(pod_spec: dict, node: dict, *, daemonset: bool = False) -> list[dict]:
    """The node's NoSchedule/NoExecute taints the pod does not tolerate."""
    tolerations = list(pod_spec.get("tolerations") or [])
    if daemonset:
        tolerations += k8s.DAEMONSET_TOLERATIONS
    out = []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") in k8s.DO_NOT_SCHEDULE and not k8s.tolerations_tolerate(tolerations, taint):
            out.append(taint)
    return out


def taint_text(taint: dict) -> str:
    value = taint.get("value")
    return f"{taint.get('key')}{'=' + value if value else ''}:{taint.get('effect')}"
