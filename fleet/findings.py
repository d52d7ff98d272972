"""The findings catalogue as data (ids, severities, titles, fix templates) and the Finding record the diagnosis
emits."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITY_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


class CatalogueEntry(NamedTuple):
    id: str
    severity: str  # the usual severity; kubelet-too-old lowers it to warning case by case
    group: str
    title: str
    fix: str  # a template: str.format(**params) adapts it to the case


# The ids are stable strings, exactly as in reference/findings.md; the fixes are templates over the case's names.
CATALOGUE: dict[str, CatalogueEntry] = {
    e.id: e
    for e in (
        # Nodes and pools
        CatalogueEntry(
            "both-stacks",
            ERROR,
            "nodes",
            "Device plugin and DRA driver both serve the GPUs of a node",
            "Take {node} off one mechanism: exclude the device plugin from it, or scope the DRA driver away from it.",
        ),
        CatalogueEntry(
            "plugin-flapping",
            WARNING,
            "nodes",
            "A crash-looping device plugin flips the node between the two mechanisms",
            "Finish excluding the device plugin from {node}, so that only the DRA driver serves it.",
        ),
        CatalogueEntry(
            "dp-targets-dra-pool",
            WARNING,
            "nodes",
            "The device-plugin DaemonSet still selects nodes of a DRA pool",
            "Extend the exclusion of {daemonset} to every node of pool {pool}, in the node template too.",
        ),
        CatalogueEntry(
            "driver-targets-dp-pool",
            WARNING,
            "nodes",
            "The DRA driver's kubelet plugin selects nodes of a device-plugin pool",
            "Scope {daemonset}'s node affinity to migrated pools so that it leaves pool {pool}.",
        ),
        CatalogueEntry(
            "no-slices",
            ERROR,
            "nodes",
            "A node that should be on DRA publishes no devices",
            "Check the DRA driver pod's logs and readiness on {node}.",
        ),
        CatalogueEntry(
            "kubelet-too-old",
            ERROR,
            "nodes",
            "A kubelet without the extended-resource bridge in a DRA pool",
            "Upgrade the nodes of pool {pool} to kubelet v1.36 or newer before migrating.",
        ),
        CatalogueEntry(
            "kubelet-skew",
            WARNING,
            "nodes",
            "Kubelet versions differ inside one pool",
            "Upgrade the stragglers of pool {pool} to {version}.",
        ),
        CatalogueEntry(
            "sharing-capacity-change",
            WARNING,
            "nodes",
            "GPU sharing changes what nvidia.com/gpu counts after migration",
            "Plan DeviceClasses and capacity for the new count of pool {pool} before migrating it.",
        ),
        CatalogueEntry(
            "migration-optional",
            INFO,
            "nodes",
            "A small pool of identical whole GPUs gains little from DRA",
            "The device plugin remains a reasonable choice for pool {pool}.",
        ),
        # DeviceClasses and selectors
        CatalogueEntry(
            "duplicate-mapping",
            WARNING,
            "classes",
            "Several DeviceClasses serve the same extended resource",
            "Keep one class for {resource} (today {winner} wins), then update {winner} (any change, e.g. an "
            "annotation): kube-scheduler v1.37 stops serving {resource} when any class naming it is deleted or stops "
            "naming it, and gives it to no other class until one is updated or the scheduler restarts.",
        ),
        CatalogueEntry(
            "class-too-broad",
            WARNING,
            "classes",
            "A class serving nvidia.com/gpu selects more than whole GPUs",
            'Add device.attributes["gpu.nvidia.com"].type == "gpu" to the selectors of {deviceclass}.',
        ),
        CatalogueEntry(
            "selector-no-match",
            ERROR,
            "classes",
            "A selector selects no device in the fleet",
            "Fix the selector of {subject}; the CEL playground shows what it reads.",
        ),
        CatalogueEntry(
            "selector-runtime-error",
            ERROR,
            "classes",
            "A selector fails at runtime, so the scheduler aborts every pod that uses it",
            'Guard the attribute in {subject} ("x" in device.attributes[...], has(), or optional chaining).',
        ),
        CatalogueEntry(
            "stale-attribute",
            ERROR,
            "classes",
            "A selector reads an attribute the installed driver no longer publishes",
            "Read uuid or resource.kubernetes.io/pciBusID instead of {attribute} in {subject}.",
        ),
        CatalogueEntry(
            "claim-equivalent-to-limits",
            INFO,
            "classes",
            "A claim asks for nothing that limits: nvidia.com/gpu could not",
            "Use limits: nvidia.com/gpu: {count} instead of {subject}, without a manifest rewrite.",
        ),
        CatalogueEntry(
            "double-request",
            ERROR,
            "classes",
            "A container asks for GPUs both through limits and through a claim",
            "Drop either the nvidia.com/gpu limit or the claim of {deviceclass} from {pod}.",
        ),
        CatalogueEntry(
            "nodeselector-steering",
            INFO,
            "classes",
            "Pods choose a GPU model through a nodeSelector",
            "A tier DeviceClass selecting productName {product} expresses the same declaratively.",
        ),
        # Accounting
        CatalogueEntry(
            "allocatable-readers",
            INFO,
            "accounting",
            "DRA pools report no allocatable nvidia.com/gpu",
            "Count pool {pool}'s GPUs from ResourceSlices and its allocations from ResourceClaims, not "
            "from node allocatable.",
        ),
        CatalogueEntry(
            "quota-claims-now-count",
            WARNING,
            "accounting",
            "Plain claims now consume the requests.nvidia.com/gpu quota",
            "Raise quota {quota} in {namespace} or move the namespace to one request style.",
        ),
        CatalogueEntry(
            "quota-blocks-claim",
            ERROR,
            "accounting",
            "Quota rejects the claim the scheduler must create for a pod",
            "Raise {resource} in quota {quota} of namespace {namespace}.",
        ),
        # Pods
        CatalogueEntry(
            "pending-insufficient",
            ERROR,
            "pods",
            "Not enough free GPUs for a pending pod",
            "Free {resource} capacity{where}, or lower the request of {pod}.",
        ),
        CatalogueEntry(
            "pending-unmapped",
            ERROR,
            "pods",
            "Nothing serves the extended resource a pending pod asks for",
            "{remedy}{forgotten}",
        ),
        CatalogueEntry(
            "pending-selector",
            ERROR,
            "pods",
            "A selector keeps a pod's claims from being satisfied",
            "Fix the selector of {subject}{write}.",
        ),
        CatalogueEntry(
            "pending-cordoned",
            WARNING,
            "pods",
            "The only nodes that could take a pod are cordoned or tainted",
            "Uncordon {nodes}, or give {pod} the tolerations it needs.",
        ),
        CatalogueEntry(
            "failed-admission",
            ERROR,
            "pods",
            "The kubelet rejected a scheduled pod",
            "See the findings of node {node}, then recreate {pod}.",
        ),
        CatalogueEntry(
            "prepare-failed",
            ERROR,
            "pods",
            "The DRA driver could not prepare a pod's devices",
            "Check the DRA driver on {node}.",
        ),
        CatalogueEntry(
            "running-without-gpu",
            ERROR,
            "pods",
            "A pod runs on a DRA node without the GPU it asked for",
            "Upgrade the kubelet of {node} to v1.36 or newer and restart {pod}.",
        ),
        # Pods and devices: what v1.37's on-by-default DRA features (device taints and DeviceTaintRules,
        # partitionable devices, consumable capacity, binding conditions, admin access, prioritized lists, device
        # health, the scheduler's filter timeout) do to a pod; the causes come from the allocator's why-not.
        CatalogueEntry(
            "pending-device-taint",
            ERROR,
            "pods",
            "The devices a pending pod could use are tainted",
            "End the maintenance behind {taint} ({source}) or give the claim of {pod} a toleration for it; pods "
            "asking for nvidia.com/gpu through the bridge carry none, so they cannot use tainted devices.",
        ),
        CatalogueEntry(
            "device-taint-eviction",
            WARNING,
            "devices",
            "A NoExecute device taint is evicting the pods that use the devices",
            "If {subject} is intended, let the evictions finish; otherwise delete it or set its effect to None or "
            "NoSchedule.",
        ),
        CatalogueEntry(
            "pending-counters",
            ERROR,
            "pods",
            "A pending pod's devices share counters already used by other claims",
            "Free the partitions or whole GPUs of counter set {counter_set} held by {holders}, or let {pod} ask for "
            "a partition that still fits.",
        ),
        CatalogueEntry(
            "pending-constraint",
            ERROR,
            "pods",
            "Each request of a pending pod has devices, but no combination on one node satisfies its claim's "
            "constraints",
            "Relax {constraint} in {subject} (ask for fewer devices, or drop the constraint), or free devices on one "
            "node that satisfy it together.",
        ),
        CatalogueEntry(
            "pending-capacity",
            ERROR,
            "pods",
            "A shared device has too little capacity left for a pending pod",
            "Lower what {pod} asks of the shared device, or free capacity held by {holders}.",
        ),
        CatalogueEntry(
            "binding-pending",
            WARNING,
            "pods",
            "A pod waits for its devices' binding conditions",
            "Check the driver of {device}: it has not set {conditions} on claim {claim} (the scheduler gives up after "
            "10 minutes and tries again).",
        ),
        CatalogueEntry(
            "binding-failed",
            ERROR,
            "pods",
            "A device's binding failed",
            "Check the driver of {device} ({conditions}); the scheduler releases claim {claim} and tries another "
            "device.",
        ),
        CatalogueEntry(
            "pending-first-available",
            ERROR,
            "pods",
            "No alternative of a prioritized-list request can be satisfied",
            "Free devices of one alternative of {subject}, or add an alternative that the fleet has.",
        ),
        CatalogueEntry(
            "claim-missing",
            ERROR,
            "pods",
            "A pod refers to a ResourceClaim or template that does not exist",
            "Create {subject} in namespace {namespace}, or fix the name in {pod}.",
        ),
        CatalogueEntry(
            "class-missing",
            ERROR,
            "pods",
            "A claim asks for a DeviceClass that does not exist",
            "Create DeviceClass {deviceclass}, or name an existing class in {subject}.",
        ),
        CatalogueEntry(
            "admin-access-forbidden",
            ERROR,
            "pods",
            "A claim asks for admin access in a namespace that does not allow it",
            "Label namespace {namespace} resource.kubernetes.io/admin-access=true (only for trusted monitoring), or "
            "drop adminAccess from {subject}.",
        ),
        CatalogueEntry(
            "filter-timeout",
            WARNING,
            "pods",
            "The scheduler timed out allocating a pod's devices",
            "Simplify the claims of {pod} (fewer requests, constraints or All-mode requests over large pools); the "
            "scheduler's DRA filter gives up after its timeout and retries.",
        ),
        CatalogueEntry(
            "device-unhealthy",
            ERROR,
            "pods",
            "The kubelet reports a pod's device unhealthy",
            "Check device {device} on {node} (driver health checks, XID errors) and move {pod} to a healthy device.",
        ),
        CatalogueEntry(
            "stale-bridge-claim",
            WARNING,
            "pods",
            "A claim left by an earlier scheduling attempt blocks a pod",
            "The scheduler retries and deletes {claim}; if it persists, look at the scheduler.",
        ),
    )
}

ObjectRef = tuple[str, str, str]  # (kind, namespace, name); namespace is "" for cluster-scoped objects


@dataclasses.dataclass
class Finding:
    """One detected case: what, where (objects, pool), why (summary, evidence) and what to do (fix)."""

    id: str
    severity: str
    objects: list[ObjectRef]
    summary: str
    evidence: list[str]
    fix: str
    pool: str | None = None

    @property
    def title(self) -> str:
        return CATALOGUE[self.id].title

    @property
    def key(self) -> tuple[str, ObjectRef]:
        """(id, primary object): what identifies the case across refreshes."""
        return (self.id, self.objects[0] if self.objects else ("", "", ""))

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "severity": self.severity,
            "title": self.title,
            "pool": self.pool,
            "objects": [{"kind": k, "namespace": ns or None, "name": n} for k, ns, n in self.objects],
            "summary": self.summary,
            "evidence": list(self.evidence),
            "fix": self.fix,
        }


def make_finding(
    id: str,
    objects: list[ObjectRef],
    summary: str,
    evidence: list[str],
    pool: str | None = None,
    severity: str | None = None,
    **params: object,
) -> Finding:
    """A Finding from the catalogue: severity and fix come from the entry, the fix adapted with `params`."""
    entry = CATALOGUE[id]
    try:
        fix = entry.fix.format(pool=pool, **params)
    except (KeyError, IndexError):
        fix = entry.fix
    return Finding(id, severity or entry.severity, list(objects), summary, list(evidence), fix, pool)


def sort_findings(findings: list[Finding]) -> list[Finding]:
    ids = list(CATALOGUE)
    return sorted(findings, key=lambda f: (SEVERITY_ORDER[f.severity], ids.index(f.id), f.pool or "", f.objects))
