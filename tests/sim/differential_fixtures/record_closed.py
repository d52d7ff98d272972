"""Records what the real v1.37.2 control plane answers the differential corpus's requests CLOSED names, normalized
as the harness normalizes them, into closed.json (read by tests/sim/test_differential_closed.py).

    .venv/bin/dragoman sim serve --demo --control-plane --write-kubeconfig /tmp/real.kubeconfig   # fresh, then:
    .venv/bin/python tests/sim/differential_fixtures/record_closed.py /tmp/real.kubeconfig

The whole API corpus runs (its cases build on each other); only the named answers are kept.
"""

from __future__ import annotations

import json
import pathlib
import sys

from dragoman.sim.controlplane import differential as d
from dragoman.sim.controlplane.differential_corpus import api_requests

# The corpus requests whose answers the embedded simulator once gave differently from kube-apiserver v1.37.2 and now
# gives alike (issue 16's closed api/* allowlist entries).
CLOSED = [
    # discovery: storageVersionHash, devicetaintrules, v1.37.2's resource order
    "discovery: resource.k8s.io/v1",
    "discovery: policy/v1",
    # apimachinery's words: continue tokens, the label selector parser, 406, field labels
    "nodes: bad continue",
    "nodes: bad label selector",
    "nodes: not acceptable",
    "slices: unknown field selector",
    # resourceVersion a storage layer refuses
    "rv: not a number",
    "rv: future NotOlderThan",
    "rv: future get",
    # kind and name mismatches
    "namespaces: create",
    "namespaces: wrong kind in body",
    "namespaces: name mismatch",
    # ServiceAccount admission (serviceAccount, the kube-api-access volume and mounts), managedFields of the request
    "pods: create",
    "pods: create dry run",
    "pods: create unknown field (warn)",
    # json-patch, apply and patch-type errors; preconditions
    "pods: json patch test fails",
    "pods: apply without fieldManager",
    "pods: apply",
    "pods: unsupported patch type",
    "pods: delete with a wrong uid precondition",
    # the allocatedResourcesStatus name rule
    "pods: allocatedResourcesStatus by the object's name",
    "pods: allocatedResourcesStatus by the pod's claim",
    "pods: allocatedResourcesStatus with a request",
    "classes: bad extended resource name",
    # claims: count 0 defaulted, no generation, status {}, immutability wording, reservedFor without allocation
    "claims: create",
    "claims: create invalid count",
    "claims: create without requests",
    "claims: spec is immutable",
    "claims: reservedFor without allocation",
    # Go's zero values: status {}, DaemonSet and PDB counters, Event null times; the template generation annotation
    "daemonsets: create",
    "pdb: create",
    "pdb: both minAvailable and maxUnavailable",
    "events: create",
    "quota: create",
    # list items without kind/apiVersion; a DELETE's Status
    "configmaps: delete collection",
    "kubernetes-py: delete configmap",
    # what client libraries send
    "kubernetes-py: create configmap",
    "kubernetes-py: replace configmap",
    "kubernetes-py: evict",
    "lightkube: apply",
    "lightkube: json patch",
    "kr8s: merge patch",
    "client-node: apply forced",
    "helm: apply the chart",
    "helm: release history as JSON",
    # a namespace goes Terminating; content refused with the NamespaceTerminating cause
    "namespaces: delete",
    "namespaces: create in a terminating namespace",
    # events.k8s.io/v1: the core Events converted (reads, writes, field labels, watch), its stricter create
    "events: events.k8s.io view",
    "events: events.k8s.io create",
    "events: core view of an events.k8s.io write",
    "events: events.k8s.io create without eventTime or reporter",
    "events: events.k8s.io list",
    "events: events.k8s.io list by regarding and reporter",
    "events: events.k8s.io refuses a core field label",
    "events: events.k8s.io watch by type",
    "events: events.k8s.io patch of an immutable note",
    "events: events.k8s.io patch of the series",
    # what client-go tools/events sends for a repeat, and a core watch of an events.k8s.io write
    "events: events.k8s.io strategic patch of the series",
    "events: core watch of an events.k8s.io write",
    # the name formats' words (a namespace's dots; label keys and values in bytes)
    "namespaces: a name with dots",
    "configmaps: an empty label key",
]


def main(kubeconfig: str) -> None:
    side = d.Side("real", d.Target.from_kubeconfig("real", kubeconfig))
    d.wait_settled(side.target)
    seen = {}
    for req in api_requests():
        if "{web_pod}" in req.path:
            continue
        obs, err = d._run_case(side, req)
        if err:
            raise SystemExit(f"{req.name}: {err}")
        seen[req.name] = obs
    out = {name: side.norm.value(seen[name]) for name in CLOSED}
    path = pathlib.Path(__file__).with_name("closed.json")
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {path} ({len(out)} answers)")
    from dragoman.sim.controlplane.differential_behaviour import cleanup

    cleanup(side)


if __name__ == "__main__":
    main(sys.argv[1])
