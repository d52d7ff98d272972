"""What the demo's stories share (`Fleet`), what a story is (`Story`), and the object makers more than one story group
uses (pool selectors, pending status, DaemonSets, DeviceClasses)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from dragoman.fleet.k8s import DAEMONSET_TOLERATIONS
from dragoman.sim.scenarios.demofleet.objects import POOL_LABEL, PROJECT, Demo, NodeSpec, meta, owner_ref, sfx, ts
from dragoman.sim.scenarios.demofleet.verdicts import VERDICT, unschedulable_condition
from dragoman.sim.scenarios.demofleet.workloads import Workloads
from dragoman.sim.scenarios.podstatus import stored_spec

Event = tuple[dict, str, str, str, str, int]  # pod, reason, message, component, at, count
REG = f"us-docker.pkg.dev/{PROJECT}"
VLLM = "vllm/vllm-openai:v0.11.2"
DRA_LABELS = {
    "app.kubernetes.io/name": "dra-driver-nvidia-gpu",
    "app.kubernetes.io/instance": "dra-driver-nvidia-gpu",
    "app.kubernetes.io/version": "0.4.0",
}


@dataclasses.dataclass
class Fleet:
    """What the stories share: the objects so far (`d`), the workload makers (`w`), the node pools and the Warning
    events that the last stories write."""

    d: Demo = dataclasses.field(default_factory=Demo)
    specs: dict[str, list[NodeSpec]] = dataclasses.field(default_factory=dict)
    events: list[Event] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self.w = Workloads(self.d)

    @property
    def by_name(self) -> dict[str, NodeSpec]:
        """Every node's spec by node name, the pools in the order they were made."""
        return {s.name: s for g in self.specs.values() for s in g}

    def names(self, pool: str) -> list[str]:
        return [s.name for s in self.specs[pool]]


@dataclasses.dataclass(frozen=True)
class Story:
    """One part of the demo: `plants` are the finding ids its objects are marked with (tests/sim/test_scenarios.py
    checks that they are exactly those)."""

    name: str
    plants: tuple[str, ...]
    build: Callable[[Fleet], None]


def pool_selector(pool: str) -> dict:
    return {POOL_LABEL: pool}


def pending_status(at: str, reason: str = "Unschedulable") -> dict:
    # The message is the simulated scheduler's own verdict, filled in once the fleet is complete (scheduler_verdicts).
    return {"phase": "Pending", "conditions": unschedulable_condition(VERDICT, at, reason)}


def make_daemonset(
    d: Demo,
    name: str,
    ns: str,
    *,
    created: str,
    labels: dict,
    selector: dict,
    pod_labels: dict,
    containers: list[dict],
    nodes: list[NodeSpec],
    node_selector: dict | None = None,
    affinity: dict | None = None,
    annotations: dict | None = None,
    owner: dict | None = None,
    tolerations: list | None = None,
    finding: str | None = None,
    states: dict | None = None,
    service_account: str = "default",
) -> dict:
    rev = sfx("ds", ns, name, length=10)
    tpl = {
        "metadata": {"labels": pod_labels},
        "spec": stored_spec(
            {
                "containers": [dict(c) for c in containers],
                "priorityClassName": "system-node-critical",
                "serviceAccountName": service_account,
            },
            pod=False,
        )
        | {"tolerations": tolerations or [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]},
    }
    if node_selector:
        tpl["spec"]["nodeSelector"] = node_selector
    if affinity:
        tpl["spec"]["affinity"] = affinity
    states = states or {}
    ready = sum(1 for n in nodes if states.get(n.name, "ready") == "ready")
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": meta(
            name,
            ns,
            created=created,
            labels=labels,
            annotations={"deprecated.daemonset.template.generation": "1", **(annotations or {})},
            owner=owner,
            finding=finding,
            kind="DaemonSet",
        ),
        "spec": {
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": selector},
            "template": tpl,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
        },
        "status": {
            "currentNumberScheduled": len(nodes),
            "desiredNumberScheduled": len(nodes),
            "numberAvailable": ready,
            "numberMisscheduled": 0,
            "numberReady": ready,
            "observedGeneration": 1,
            "updatedNumberScheduled": len(nodes),
        },
    }
    ds["metadata"]["generation"] = 1
    if ready < len(nodes):
        ds["status"]["numberUnavailable"] = len(nodes) - ready
    if not ready:
        del ds["status"]["numberAvailable"]
    d.add(ds)
    for n in nodes:
        state = states.get(n.name, "ready")
        plabels = {**pod_labels, "controller-revision-hash": rev, "pod-template-generation": "1"}
        node_aff = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n.name]}]}
                    ]
                }
            }
        }
        kw: dict = {}
        if state == "crashloop":
            kw = dict(
                container_state={
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": f"back-off 5m0s restarting failed container={containers[0]['name']} "
                        f"pod={name}-{sfx('dspod', ns, name, n.name)}_{ns}",
                    }
                },
                ready=False,
                restarts=23 if "device" in name else 41,
                last_state={
                    "terminated": {
                        "exitCode": 1,
                        "reason": "Error",
                        "startedAt": ts(minutes=7),
                        "finishedAt": ts(minutes=6, hours=0),
                    }
                },
            )
        elif state == "not-ready":
            kw = dict(
                ready=False,
                restarts=3,
                container_state={"running": {"startedAt": ts(minutes=12)}},
                last_state={
                    "terminated": {
                        "exitCode": 2,
                        "reason": "Error",
                        "startedAt": ts(hours=2),
                        "finishedAt": ts(minutes=12),
                    }
                },
            )
        pod_created = max(created, n.created)
        d.pod(
            f"{name}-{sfx('dspod', ns, name, n.name)}",
            ns,
            created=pod_created,
            containers=containers,
            node=n.name,
            labels=plabels,
            owner=owner_ref(ds),
            affinity=node_aff,
            node_selector=node_selector,
            tolerations=tpl["spec"]["tolerations"] + list(DAEMONSET_TOLERATIONS),
            generate_name=f"{name}-",
            priority_class="system-node-critical",
            service_account=service_account,
            **kw,
        )
    return ds


def make_device_class(
    d: Demo,
    name: str,
    selectors: list[str],
    *,
    created: str,
    ern: str | None = None,
    labels: dict | None = None,
    finding: str | None = None,
    annotations: dict | None = None,
) -> dict:
    spec: dict = {"selectors": [{"cel": {"expression": e}} for e in selectors]}
    if ern:
        spec["extendedResourceName"] = ern
    obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": meta(
            name, created=created, labels=labels, finding=finding, annotations=annotations, kind="DeviceClass"
        ),
        "spec": spec,
    }
    obj["metadata"]["generation"] = 1
    return d.add(obj)
