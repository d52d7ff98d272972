"""Pure matching rules the scheduler and controllers share: taints and tolerations, node selectors and affinity, label selectors."""

from __future__ import annotations

from collections.abc import Callable, Iterable

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")


# --- taints and tolerations (k8s.io/api/core/v1 toleration.go ToleratesTaint) ---


def tolerates(toleration: dict, taint: dict) -> bool:
    """One toleration tolerates one taint: effect empty or equal; empty key + Exists matches every key."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        # An empty key is only valid with Exists; with Equal it tolerates nothing.
        if not key:
            return False
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


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


# --- node selector requirements (component-helpers nodeaffinity, labels.Selector) ---


def _int_or_none(text) -> int | None:
    try:
        return int(str(text), 10)
    except (TypeError, ValueError):
        return None


def match_requirement(req: dict, value: str | None, present: bool) -> bool:
    """One NodeSelectorRequirement against a label (or field) value; `present` says whether the key exists."""
    op = req.get("operator")
    values = req.get("values") or []
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        have, want = _int_or_none(value), _int_or_none(values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def match_node_selector_term(term: dict, labels: dict, node_name: str) -> bool:
    """matchExpressions (labels) AND matchFields (metadata.name); a term with neither matches nothing."""
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    for req in exprs:
        key = req.get("key")
        if not match_requirement(req, labels.get(key), key in labels):
            return False
    for req in fields:
        if req.get("key") != "metadata.name":
            return False
        if req.get("operator") not in ("In", "NotIn"):
            return False
        if not match_requirement(req, node_name, True):
            return False
    return True


def match_node_selector(selector: dict | None, node: dict) -> bool:
    """A v1.NodeSelector: its terms are OR-ed; no terms matches nothing."""
    if selector is None:
        return True
    labels = (node.get("metadata") or {}).get("labels") or {}
    name = (node.get("metadata") or {}).get("name", "")
    return any(match_node_selector_term(t, labels, name) for t in selector.get("nodeSelectorTerms") or [])


def required_node_affinity(pod_spec: dict) -> dict | None:
    return ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )


def pod_matches_node(pod_spec: dict, node: dict) -> bool:
    """nodeSelector (all labels equal) AND required node affinity — the NodeAffinity filter and the DaemonSet rule."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    for k, v in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    return match_node_selector(required_node_affinity(pod_spec), node)


def compile_node_filter(pod_spec: dict) -> Callable[[dict], bool]:
    """`pod_matches_node` bound to one pod spec, for checking many nodes."""
    node_selector = dict(pod_spec.get("nodeSelector") or {})
    required = required_node_affinity(pod_spec)

    def check(node: dict) -> bool:
        labels = (node.get("metadata") or {}).get("labels") or {}
        for k, v in node_selector.items():
            if labels.get(k) != v:
                return False
        return match_node_selector(required, node)

    return check


def affinity_node_names(pod_spec: dict) -> set[str] | None:
    """NodeAffinity PreFilter: the node names the required terms pin through matchFields metadata.name In.

    None when any term is not pinned (all nodes stay candidates); an empty set when the terms conflict.
    """
    required = required_node_affinity(pod_spec)
    if not required:
        return None
    names: set[str] | None = None
    for term in required.get("nodeSelectorTerms") or []:
        term_names: set[str] | None = None
        for req in term.get("matchFields") or []:
            if req.get("key") == "metadata.name" and req.get("operator") == "In":
                s = set(req.get("values") or [])
                term_names = s if term_names is None else term_names & s
        if term_names is None:
            return None
        names = term_names if names is None else names | term_names
    return names


# --- label selectors (metav1.LabelSelector) ---


def match_label_selector(selector: dict | None, labels: dict | None) -> bool:
    """metav1.LabelSelector: matchLabels AND matchExpressions; an empty selector matches everything, None nothing."""
    if selector is None:
        return False
    labels = labels or {}
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for req in selector.get("matchExpressions") or []:
        key = req.get("key")
        op = req.get("operator")
        values = req.get("values") or []
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True
