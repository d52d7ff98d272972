"""Node selectors and required node affinity (k8s.io/component-helpers@v0.37.2 scheduling/corev1/nodeaffinity over
apimachinery labels.Requirement)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dragoman.fleet.k8s.labels import match_requirement, requirement_error


def field_requirement_error(req: dict) -> str | None:
    """Why a matchFields entry is refused (only In and NotIn, with exactly one value), or None."""
    if req.get("operator") not in ("In", "NotIn"):
        return f"operator {req.get('operator')!r} is not supported for fields"
    if len(req.get("values") or []) != 1:
        return "must have one element"
    return None


def match_node_selector_term(term: dict, labels: dict, node_name: str) -> bool:
    """matchExpressions (labels) AND matchFields (metadata.name). A term with neither matches nothing; a term with a
    requirement NewRequirement refuses matches nothing either (the scheduler keeps the error, other terms still
    count). The fields are not checked for a node without a name, as upstream."""
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    if any(requirement_error(r) for r in exprs) or any(field_requirement_error(r) for r in fields):
        return False
    for req in exprs:
        key = req.get("key")
        if not match_requirement(req, labels.get(key), key in labels):
            return False
    if node_name:
        node_fields = {"metadata.name": node_name}
        for req in fields:
            key = req.get("key")
            # fields.Set: a missing field reads as "" (OneTermEqualSelector / OneTermNotEqualSelector).
            have = node_fields.get(key, "")
            want = (req.get("values") or [""])[0]
            if (have == want) != (req.get("operator") == "In"):
                return False
    return True


def node_identity(node: dict) -> tuple[dict, str]:
    md = node.get("metadata") or {}
    return md.get("labels") or {}, md.get("name", "")


def match_node_selector(selector: dict | None, node: dict) -> bool:
    """A v1.NodeSelector: its terms are OR-ed; no terms matches nothing; None (no required affinity) matches all."""
    if selector is None:
        return True
    labels, name = node_identity(node)
    return any(match_node_selector_term(t, labels, name) for t in selector.get("nodeSelectorTerms") or [])


def required_node_affinity(pod_spec: dict) -> dict | None:
    return ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )


def node_selector_matches(pod_spec: dict, labels: dict) -> bool:
    """spec.nodeSelector: every label equal (labels.SelectorFromSet)."""
    return all(labels.get(k) == v for k, v in (pod_spec.get("nodeSelector") or {}).items())


def pod_matches_node(pod_spec: dict, node: dict, *, labels: dict | None = None) -> bool:
    """nodeSelector AND required node affinity (RequiredNodeAffinity.Match) — the NodeAffinity filter and the
    DaemonSet rule. `labels`, when given, stand for the node's (the labels it will have)."""
    if labels is not None:
        node = {"metadata": {**(node.get("metadata") or {}), "labels": labels}}
    labels, _ = node_identity(node)
    return node_selector_matches(pod_spec, labels) and match_node_selector(required_node_affinity(pod_spec), node)


def _compile_terms(selector: dict) -> list[tuple[list[tuple[Any, dict]], list[tuple[Any, Any, bool]]]] | None:
    """A NodeSelector's terms that can match, each as (its label requirements by key, its field requirements as (key,
    wanted value, In)), as match_node_selector_term reads them: a term with no requirement or one NewRequirement
    refuses is left out (it matches nothing). None when the selector is not the well-formed shape this reads (the
    term-by-term path then answers, as it would)."""
    terms = selector.get("nodeSelectorTerms") or []
    if not isinstance(terms, list):
        return None
    out = []
    for term in terms:
        if not isinstance(term, dict):
            return None
        exprs = term.get("matchExpressions") or []
        fields = term.get("matchFields") or []
        if not isinstance(exprs, list) or not isinstance(fields, list):
            return None
        if not all(isinstance(r, dict) for r in exprs) or not all(
            isinstance(r, dict) and isinstance(r.get("key"), str) and isinstance(r.get("values") or [], list)
            for r in fields
        ):
            return None
        if not exprs and not fields:
            continue
        if any(requirement_error(r) for r in exprs) or any(field_requirement_error(r) for r in fields):
            continue
        out.append(
            (
                [(r.get("key"), r) for r in exprs],
                [(r.get("key"), (r.get("values") or [""])[0], r.get("operator") == "In") for r in fields],
            )
        )
    return out


def compile_node_filter(pod_spec: dict) -> Callable[[dict], bool]:
    """`pod_matches_node` bound to one pod spec, for checking many nodes: the required terms are checked for
    well-formedness once, not once per node (the same answers: tests/fleet/test_k8s_rules.py holds them together)."""
    node_selector = dict(pod_spec.get("nodeSelector") or {})
    required = required_node_affinity(pod_spec)
    terms = _compile_terms(required) if isinstance(required, dict) else None

    if required is None:

        def check(node: dict) -> bool:
            labels, _ = node_identity(node)
            for k, v in node_selector.items():
                if labels.get(k) != v:
                    return False
            return True

    elif terms is None:

        def check(node: dict) -> bool:
            labels, _ = node_identity(node)
            for k, v in node_selector.items():
                if labels.get(k) != v:
                    return False
            return match_node_selector(required, node)

    else:

        def check(node: dict) -> bool:
            labels, name = node_identity(node)
            for k, v in node_selector.items():
                if labels.get(k) != v:
                    return False
            for exprs, fields in terms:
                for key, req in exprs:
                    if not match_requirement(req, labels.get(key), key in labels):
                        break
                else:
                    if name:
                        for key, want, is_in in fields:
                            # fields.Set of metadata.name: any other field reads as "".
                            if ((name if key == "metadata.name" else "") == want) != is_in:
                                break
                        else:
                            return True
                    else:
                        return True
            return False

    return check


def affinity_node_names(pod_spec: dict) -> set[str] | None:
    """The scheduler's NodeAffinity PreFilter shortcut: the node names the required terms pin through matchFields
    metadata.name In.

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
