"""The demo's cluster-wide last stories: the GPU dashboard's rules, disruption budgets, the scheduler's verdicts,
Warning events and RBAC."""

from __future__ import annotations

from dragoman.fleet import nvidia_schema as nv
from dragoman.sim.scenarios.demofleet.fleet import Fleet, Story
from dragoman.sim.scenarios.demofleet.objects import CONTROL_PLANE_HOST, Demo, meta, ts
from dragoman.sim.scenarios.demofleet.verdicts import VERDICT, scheduler_verdicts


def created_at(days: float) -> str:
    return ts(days=days)


def _pdb(
    d: Demo,
    name: str,
    ns: str,
    app: str,
    *,
    created: str,
    min_available=None,
    max_unavailable=None,
    expected: int,
    healthy: int,
    desired: int,
) -> None:
    spec: dict = {"selector": {"matchLabels": {"app.kubernetes.io/name": app}}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    allowed = max(0, healthy - desired)
    obj = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": meta(name, ns, created=created, kind="PodDisruptionBudget"),
        "spec": spec,
        "status": {
            "conditions": [
                {
                    "type": "DisruptionAllowed",
                    "status": "True" if allowed else "False",
                    "reason": "SufficientPods" if allowed else "InsufficientPods",
                    "message": "",
                    "lastTransitionTime": created,
                    "observedGeneration": 1,
                }
            ],
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "disruptionsAllowed": allowed,
            "expectedPods": expected,
            "observedGeneration": 1,
        },
    }
    obj["metadata"]["generation"] = 1
    d.add(obj)


def _dashboard(f: Fleet) -> None:
    """The GPU dashboard's rules (kube-prometheus): they sum node allocatable nvidia.com/gpu, which DRA pools report
    as 0."""
    d = f.d
    # as 0
    d.add(
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusRule",
            "metadata": meta(
                "gpu-capacity",
                "monitoring",
                created=ts(days=300),
                kind="PrometheusRule",
                labels={"release": "kube-prometheus-stack", "app.kubernetes.io/part-of": "kube-prometheus"},
            ),
            "spec": {
                "groups": [
                    {
                        "name": "gpu-capacity.rules",
                        "rules": [
                            {
                                "record": "cluster:nvidia_gpu_allocatable:sum",
                                "expr": 'sum(kube_node_status_allocatable{resource="nvidia_com_gpu"})',
                            },
                            {
                                "record": "nodepool:nvidia_gpu_allocatable:sum",
                                "expr": "sum by (label_cloud_google_com_gke_nodepool) "
                                '(kube_node_status_allocatable{resource="nvidia_com_gpu"} '
                                "* on (node) group_left(label_cloud_google_com_gke_nodepool) kube_node_labels)",
                            },
                            {
                                "alert": "GPUCapacityDropped",
                                "expr": (
                                    "cluster:nvidia_gpu_allocatable:sum < 0.8 * "
                                    "max_over_time(cluster:nvidia_gpu_allocatable:sum[1d])"
                                ),
                                "for": "15m",
                                "labels": {"severity": "warning"},
                                "annotations": {"summary": "Allocatable GPUs dropped by more than 20% in a day"},
                            },
                        ],
                    }
                ]
            },
        }
    )


def _pdbs(f: Fleet) -> None:
    """PodDisruptionBudgets on the serving and training workloads."""
    d = f.d
    _pdb(
        d,
        "llm-serving",
        "ml-inference",
        "llm-serving",
        created=ts(days=20),
        min_available=3,
        expected=5,
        healthy=4,
        desired=3,
    )
    _pdb(
        d,
        "llm-serving-a100",
        "ml-inference",
        "llm-serving-a100",
        created=ts(days=18),
        min_available="50%",
        expected=4,
        healthy=4,
        desired=2,
    )
    _pdb(
        d,
        "llama-pretrain",
        "ml-training",
        "llama-pretrain",
        created=ts(days=9),
        max_unavailable=0,
        expected=3,
        healthy=3,
        desired=3,
    )


def _scheduler_words(f: Fleet) -> None:
    """What the scheduler says about each pod it cannot place, worded by the simulated scheduler itself."""
    d, events = f.d, f.events
    verdicts = scheduler_verdicts(d.objects)
    for pod, _reason, message, *_ in events:
        if message == VERDICT and pod["metadata"]["uid"] not in verdicts:
            raise AssertionError(f"demo: no scheduler verdict for pod {pod['metadata']['name']}")
    events[:] = [
        (p, r, verdicts[p["metadata"]["uid"]]["message"] if m == VERDICT else m, *rest) for p, r, m, *rest in events
    ]


def _events(f: Fleet) -> None:
    """The Warning events: the stories' own, and BackOff for every crash-looping plugin."""
    d, events = f.d, f.events
    for o in d.objects:
        if o["kind"] == "Pod" and any(
            "waiting" in cs["state"] and cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
            for cs in o["status"].get("containerStatuses", [])
        ):
            c = o["spec"]["containers"][0]["name"]
            events.append(
                (
                    o,
                    "BackOff",
                    f"Back-off restarting failed container {c} in pod "
                    f"{o['metadata']['name']}_{o['metadata']['namespace']}({o['metadata']['uid']})",
                    "kubelet",
                    ts(minutes=2),
                    96,
                )
            )
    for pod, reason, message, component, at, count in events:
        pm = pod["metadata"]
        first = ts(hours=1) if at > ts(hours=1) else at
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": meta(
                f"{pm['name']}.{nv._hex('event', pm['name'], reason)[:16]}",
                pm["namespace"],
                created=first,
                kind="Event",
            ),
            "involvedObject": {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pm["name"],
                "namespace": pm["namespace"],
                "uid": pm["uid"],
            },
            "reason": reason,
            "message": message,
            "type": "Warning",
        }
        if component == "default-scheduler":
            # kube-scheduler writes through events.k8s.io/v1 (client-go tools/events): no source, count or
            # first/last timestamps; its repeats are a series.
            event.update(
                source={},
                firstTimestamp=None,
                lastTimestamp=None,
                eventTime=first.replace("Z", ".000000Z"),
                action="Scheduling",
                reportingComponent=component,
                reportingInstance=f"{component}-{CONTROL_PLANE_HOST}",
            )
            if count > 1:
                event["series"] = {"count": count, "lastObservedTime": at.replace("Z", ".000000Z")}
        else:
            # The core recorder (tools/record) of the kubelet and kube-controller-manager.
            source = {"component": component}
            if component == "kubelet":
                source["host"] = pod["spec"]["nodeName"]
            event.update(
                source=source,
                count=count,
                firstTimestamp=first,
                lastTimestamp=at,
                reportingComponent=component,
                reportingInstance=source.get("host", ""),
            )
        d.add(event)


def _rbac(f: Fleet) -> None:
    """RBAC for the simulator's users (the users themselves are in the SimulatorConfig document: USERS)."""
    d = f.d
    core = [
        "nodes",
        "nodes/status",
        "pods",
        "pods/status",
        "pods/log",
        "namespaces",
        "events",
        "configmaps",
        "resourcequotas",
        "services",
        "endpoints",
        "serviceaccounts",
        "persistentvolumeclaims",
        "secrets",
    ]
    for name, rules in (
        ("dragoman-demo-view", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]),
        (
            "dragoman-demo-no-evict",
            [
                {"apiGroups": [""], "resources": core, "verbs": ["*"]},
                {
                    "apiGroups": [
                        "apps",
                        "batch",
                        "policy",
                        "resource.k8s.io",
                        "coordination.k8s.io",
                        "events.k8s.io",
                        "rbac.authorization.k8s.io",
                        "nvidia.com",
                    ],
                    "resources": ["*"],
                    "verbs": ["*"],
                },
            ],
        ),
    ):
        d.add(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": meta(
                    name,
                    created=created_at(322),
                    labels={"app.kubernetes.io/part-of": "dragoman-sim"},
                    kind="ClusterRole",
                ),
                "rules": rules,
            }
        )
    for name, role, user in (
        ("dragoman-demo-viewer", "dragoman-demo-view", "viewer"),
        ("dragoman-demo-no-evict", "dragoman-demo-no-evict", "no-evict"),
    ):
        d.add(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": meta(
                    name,
                    created=created_at(322),
                    labels={"app.kubernetes.io/part-of": "dragoman-sim"},
                    kind="ClusterRoleBinding",
                ),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
            }
        )


# This group's stories, in the order their objects are written.
STORIES: tuple[Story, ...] = (
    Story("dashboard", (), _dashboard),
    Story("pdbs", (), _pdbs),
    Story("verdicts", (), _scheduler_words),
    Story("events", (), _events),
    Story("rbac", (), _rbac),
)
