"""Read-only scheduling predicates over raw objects: node selectors, required node affinity, taints and tolerations."""

from __future__ import annotations

# Taints every DaemonSet pod tolerates (the DaemonSet controller adds these tolerations).
DAEMONSET_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]

_BLOCKING = ("NoSchedule", "NoExecute")


def _expression_matches(expr: dict, labels: dict) -> bool:
    key = expr.get("key", "")
    op = expr.get("operator", "")
    values = expr.get("values") or []
    present = key in labels
    value = labels.get(key)
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        try:
            lhs, rhs = int(value), int(values[0])  # type: ignore[arg-type]  # None: TypeError, below
        except (TypeError, ValueError, IndexError):
            return False
        return lhs > rhs if op == "Gt" else lhs < rhs
    return False


def term_matches(term: dict, node: dict) -> bool:
    """One NodeSelectorTerm: all its expressions and fields must match (an empty term matches nothing)."""
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    labels = node.get("metadata", {}).get("labels") or {}
    if not all(_expression_matches(e, labels) for e in exprs):
        return False
    name = {"metadata.name": node.get("metadata", {}).get("name", "")}
    return all(_expression_matches(f, name) for f in fields)


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
    labels = node.get("metadata", {}).get("labels") or {}
    for k, v in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    terms = required_affinity_terms(pod_spec)
    if terms is None:
        return True
    return any(term_matches(t, node) for t in terms)


def tolerates(tolerations: list[dict], taint: dict) -> bool:
    for t in tolerations:
        effect = t.get("effect") or ""
        if effect and effect != taint.get("effect"):
            continue
        key = t.get("key") or ""
        op = t.get("operator") or "Equal"
        if not key:
            if op == "Exists":
                return True
            continue
        if key != taint.get("key"):
            continue
        if op == "Exists" or (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def untolerated_taints(pod_spec: dict, node: dict, *, daemonset: bool = False) -> list[dict]:
    """The node's NoSchedule/NoExecute taints the pod does not tolerate."""
    tolerations = list(pod_spec.get("tolerations") or [])
    if daemonset:
        tolerations += DAEMONSET_TOLERATIONS
    out = []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") in _BLOCKING and not tolerates(tolerations, taint):
            out.append(taint)
    return out


def taint_text(taint: dict) -> str:
    value = taint.get("value")
    return f"{taint.get('key')}{'=' + value if value else ''}:{taint.get('effect')}"


def match_label_selector(selector: dict | None, labels: dict | None) -> bool:
    """A metav1.LabelSelector (matchLabels + matchExpressions) against labels; an empty selector matches all, None nothing."""
    if selector is None:
        return False
    labels = labels or {}
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True
