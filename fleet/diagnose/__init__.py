"""The fleet diagnosis: every case of the findings catalogue (/work/shared/reference/findings.md), found from cluster
state (Events only as supporting evidence). One module per group of the catalogue: nodes (nodes and pools),
selectors (DeviceClasses and selectors), accounting, pods; context holds what the rules share. This module runs
them: RULES in order, replicas merged per workload, most severe first."""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Iterable, Mapping

from dragoman.fleet.diagnose.accounting import accounting
from dragoman.fleet.diagnose.context import Context, plural
from dragoman.fleet.diagnose.devices import health, taint_evictions
from dragoman.fleet.diagnose.nodes import (
    daemonset_targets,
    kubelets,
    migration_optional,
    no_slices,
    sharing,
    stack_nodes,
)
from dragoman.fleet.diagnose.pods import pods
from dragoman.fleet.diagnose.selectors import claims, classes, pod_shapes, selectors
from dragoman.fleet.findings import Finding, sort_findings
from dragoman.fleet.model import FleetModel

# Pod findings that repeat for every replica of a workload: shown once per workload, naming all its pods.
MERGED_PER_WORKLOAD = (
    "nodeselector-steering",
    "double-request",
    "pending-insufficient",
    "pending-unmapped",
    "pending-selector",
    "pending-cordoned",
    "running-without-gpu",
    "failed-admission",
    "pending-device-taint",
    "pending-counters",
    "pending-constraint",
    "pending-capacity",
    "pending-first-available",
    "claim-missing",
    "class-missing",
    "admin-access-forbidden",
    "filter-timeout",
)


def workloads_of(model: FleetModel, findings: Iterable[Finding]) -> dict[tuple, tuple[str, str, str]]:
    """The workload at the top of the owner chain of each pod a per-replica finding is about (those without one are
    left out): what _merge_replicas groups by, read where the findings were made."""
    out: dict[tuple, tuple[str, str, str]] = {}
    for f in findings:
        if f.id in MERGED_PER_WORKLOAD and f.objects and f.objects[0][0] == "Pod":
            pod = model.objects["Pod"].get(f.objects[0][1:])
            chain = model.owner_chain(pod) if pod is not None else []
            if chain:
                out[f.objects[0]] = chain[-1]
    return out


def _merge_replicas(findings: list[Finding], workloads: Mapping[tuple, tuple[str, str, str]]) -> list[Finding]:
    groups: dict[tuple, list[Finding]] = defaultdict(list)
    out: list[Finding] = []
    for f in findings:
        if f.id in MERGED_PER_WORKLOAD and f.objects and f.objects[0][0] == "Pod":
            top = workloads.get(f.objects[0])
            if top is not None:
                key = (f.id, top)
                if not groups[key]:
                    out.append(f)
                groups[key].append(f)
                continue
        out.append(f)
    for (_fid, owner), group in groups.items():
        first = group[0]
        pods = [g.objects[0] for g in group]
        rest = [o for g in group for o in g.objects[1:] if o[0] != "Pod" and o != owner]
        first.objects = pods + list(dict.fromkeys(rest)) + [owner]
        if len(group) > 1:
            first.summary += f" (and {plural(len(group) - 1, 'more pod')} of {owner[0]} {owner[2]})"
    return out


RULES = (
    stack_nodes,
    daemonset_targets,
    no_slices,
    kubelets,
    sharing,
    migration_optional,
    classes,
    selectors,
    claims,
    pod_shapes,
    accounting,
    taint_evictions,
    pods,
    health,
)


def diagnose(model: FleetModel) -> list[Finding]:
    """Every finding of the catalogue present in the model, most severe first."""
    return finish(*diagnose_rules(model, range(len(RULES))))


# The rules in two parts of about equal cost at the envelope (150,000 pods: the pod-reading rules, which share one pass
# over every pod, ~0.5 s; the rest with the attribute catalogue, ~0.4 s), for two processes (tui/feed.py).
POD_RULES = frozenset({migration_optional, pod_shapes, pods})
PARTS = (
    tuple(i for i, rule in enumerate(RULES) if rule in POD_RULES),
    tuple(i for i, rule in enumerate(RULES) if rule not in POD_RULES),
)
Part = tuple[dict[int, list[Finding]], dict[tuple, tuple[str, str, str]]]


def diagnose_rules(model: FleetModel, which: Iterable[int]) -> Part:
    """The findings of RULES[i] for each i of `which`, as the rule made them, and the workloads of the pods they are
    about (workloads_of): `finish` merges and sorts one or more of these parts."""
    was_enabled = gc.isenabled()
    gc.disable()  # many short-lived containers, no cycles; a collection would rescan the whole fleet
    try:
        ctx = Context(model)
        by_rule = {i: list(RULES[i](ctx)) for i in which}
        return by_rule, workloads_of(model, (f for fs in by_rule.values() for f in fs))
    finally:
        if was_enabled:
            gc.enable()


def finish(by_rule: Mapping[int, list[Finding]], workloads: Mapping[tuple, tuple[str, str, str]]) -> list[Finding]:
    """The findings of the rules, in RULES order, one per workload where a finding repeats per replica, most severe
    first: what `diagnose` returns when `by_rule` holds every rule's."""
    out: list[Finding] = []
    for i in sorted(by_rule):
        out.extend(by_rule[i])
    return sort_findings(_merge_replicas(out, workloads))
