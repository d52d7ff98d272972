"""The matching rules the scheduler and controllers share. The rules themselves live in fleet/k8s/ (one home with
the client, so the two cannot disagree); this module adds the scheduler's PreFilter shortcut."""

from __future__ import annotations

from dragoman.fleet.k8s import (  # noqa: F401 - the controllers import these names from here
    DO_NOT_SCHEDULE,
    UNSCHEDULABLE_TAINT,
    compile_node_filter,
    first_untolerated_taint,
    match_label_selector,
    match_node_selector,
    match_node_selector_term,
    match_requirement,
    pod_matches_node,
    required_node_affinity,
    tolerates,
    tolerations_tolerate,
)


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
