"""The fleet diagnosis: every case of the findings catalogue (/work/shared/reference/findings.md), found from cluster
state (Events only as supporting evidence). One module per group of the catalogue: nodes (nodes and pools),
selectors (DeviceClasses and selectors), accounting, pods; context holds what the rules share. This module runs
them: RULES in order, replicas merged per workload, most severe first."""

from __future__ import annotations

import gc
from collections import defaultdict

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


def _merge_replicas(model: FleetModel, findings: list[Finding]) -> list[Finding]:
    groups: dict[tuple, list[Finding]] = defaultdict(list)
    out: list[Finding] = []
    for f in findings:
        if f.id in MERGED_PER_WORKLOAD and f.objects and f.objects[0][0] == "Pod":
            pod = model.objects["Pod"].get(f.objects[0][1:])
            chain = model.owner_chain(pod) if pod is not None else []
            if chain:
                key = (f.id, chain[-1])
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
    was_enabled = gc.isenabled()
    gc.disable()  # many short-lived containers, no cycles; a collection would rescan the whole fleet
    try:
        ctx = Context(model)
        out: list[Finding] = []
        for rule in RULES:
            out.extend(rule(ctx))
        out = _merge_replicas(model, out)
    finally:
        if was_enabled:
            gc.enable()
    return sort_findings(out)
