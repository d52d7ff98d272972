"""`meta.k8s.io/v1` Tables with the columns and cells of the real server's printers (pkg/printers/internalversion)."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from dragoman.fleet.k8s.times import format_time, parse_datetime

NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources "
    "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
AGE_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this "
    "value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null "
    "for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
CONTAINERS_DOC = "Names of each container in the template."
IMAGES_DOC = "Images referenced by each container in the template."


def _col(name: str, description: str, type_: str = "string", priority: int = 0, format_: str = "") -> dict:
    return {"name": name, "type": type_, "format": format_, "description": description, "priority": priority}


NAME = _col("Name", NAME_DOC, format_="name")
AGE = _col("Age", AGE_DOC)
WIDE_CONTAINERS = [_col("Containers", CONTAINERS_DOC, priority=1), _col("Images", IMAGES_DOC, priority=1)]

# Column descriptions of the printers below, from k8s.io/api's SwaggerDoc (as the server sends them).
_DOCS = {
    "secret.type": (
        "Used to facilitate programmatic handling of secret data. More info: "
        "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types"
    ),
    "secret.data": (
        "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The "
        "serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly "
        "non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4"
    ),
    "svc.type": (
        "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, "
        'ClusterIP, NodePort, and LoadBalancer. "ClusterIP" allocates a cluster-internal IP address for '
        "load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by "
        'manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is "None", no '
        "virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual "
        'IP. "NodePort" builds on ClusterIP and allocates a port on every node which routes to the same '
        'endpoints as the clusterIP. "LoadBalancer" builds on NodePort and creates an external load-balancer '
        "(if supported in the current cloud) which routes to the same endpoints as the clusterIP. "
        '"ExternalName" aliases this service to the specified externalName. Several other fields do not apply '
        "to ExternalName services. More info: "
        "https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types"
    ),
    "svc.clusterIP": (
        "clusterIP is the IP address of the service and is usually assigned randomly. If an address is "
        "specified manually, is in-range (as per system configuration), and is not in use, it will be "
        "allocated to the service; otherwise creation of the service will fail. This field may not be changed "
        "through updates unless the type field is also being changed to ExternalName (which requires this "
        "field to be blank) or the type field is being changed from ExternalName (in which case this field may "
        'optionally be specified, as describe above).  Valid values are "None", empty string (""), or a valid '
        'IP address. Setting this to "None" makes a "headless service" (no virtual IP), which is useful when '
        "direct endpoint connections are preferred and proxying is not required.  Only applies to types "
        "ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type "
        "ExternalName, creation will fail. This field will be wiped when updating a Service to type "
        "ExternalName. More info: "
        "https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies"
    ),
    "svc.externalIPs": (
        "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for "
        "this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that "
        "traffic arrives at a node with this IP.  A common example is external load-balancers that are not "
        "part of the Kubernetes system."
    ),
    "svc.ports": (
        "The list of ports that are exposed by this service. More info: "
        "https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies"
    ),
    "svc.selector": (
        "Route service traffic to pods with label keys and values matching this selector. If empty or not "
        "present, the service is assumed to have an external process managing its endpoints, which Kubernetes "
        "will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is "
        "ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/"
    ),
    "cj.schedule": "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
    "cj.timeZone": (
        "The time zone name for the given schedule, see "
        "https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to "
        "the time zone of the kube-controller-manager process. The set of valid time zone names and the time "
        "zone offset is loaded from the system-wide time zone database by the API server during CronJob "
        "validation and the controller manager during execution. If no system-wide time zone database can be "
        "found a bundled version of the database is used instead. If the time zone name becomes invalid during "
        "the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating "
        "new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be "
        "found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones"
    ),
    "cj.suspend": (
        "This flag tells the controller to suspend subsequent executions, it does not apply to already started "
        "executions.  Defaults to false."
    ),
    "cj.active": "A list of pointers to currently running jobs.",
    "cj.lastScheduleTime": "Information when was the last time the job was successfully scheduled.",
    "job.selector": (
        "A label query over pods that should match the pod count. Normally, the system sets this field for "
        "you. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
    ),
}


# ---------------------------------------------------------------- helpers as kubectl's printers have them


def human_duration(seconds_total: float) -> str:
    """apimachinery's duration.HumanDuration: "45s", "5m3s", "3h4m", "2d", "3y10d"."""
    seconds = int(seconds_total)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def since(value: str | None, now: datetime.datetime) -> str:
    when = parse_datetime(value)
    if when is None:
        return "<unknown>"
    if now.tzinfo is None:
        now = now.replace(tzinfo=datetime.UTC)
    return human_duration((now - when).total_seconds())


def format_labels(labels: dict | None) -> str:
    if not labels:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def format_label_selector(selector: dict | None) -> str:
    """metav1.FormatLabelSelector: `app=x,tier in (a,b),!gone`, or `<none>`."""
    if not selector:
        return "<none>"
    parts: list[tuple[str, str]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        parts.append((key, f"{key}={value}"))
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), sorted(expr.get("values") or [])
        if op == "In":
            parts.append((key, f"{key} in ({','.join(values)})"))
        elif op == "NotIn":
            parts.append((key, f"{key} notin ({','.join(values)})"))
        elif op == "Exists":
            parts.append((key, key))
        elif op == "DoesNotExist":
            parts.append((key, f"!{key}"))
    text = ",".join(p for _, p in sorted(parts, key=lambda kv: kv[0]))
    return text or "<none>"


def _containers(template_spec: dict | None) -> tuple[str, str]:
    containers = (template_spec or {}).get("containers") or []
    return ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)


def _template_spec(obj: dict) -> dict:
    return ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _age(obj: dict, now: datetime.datetime) -> str:
    return since(_meta(obj).get("creationTimestamp"), now)


# ---------------------------------------------------------------- per-resource printers


def _pod(obj: dict, now: datetime.datetime) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    meta = _meta(obj)
    restarts = 0
    sidecar_restarts = 0
    total = len(spec.get("containers") or [])
    ready = 0
    last_restart: datetime.datetime | None = None
    last_sidecar_restart: datetime.datetime | None = None
    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    sidecars = {n for n, c in init_specs.items() if c.get("restartPolicy") == "Always"}
    total += len(sidecars)

    def terminated_at(cs: dict) -> datetime.datetime | None:
        return parse_datetime(((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt"))

    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for i, cs in enumerate(init_statuses):
        restarts += int(cs.get("restartCount") or 0)
        t = terminated_at(cs)
        if t and (last_restart is None or t > last_restart):
            last_restart = t
        if cs.get("name") in sidecars:
            sidecar_restarts += int(cs.get("restartCount") or 0)
            if t and (last_sidecar_restart is None or t > last_sidecar_restart):
                last_sidecar_restart = t
        state = cs.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated is not None and int(terminated.get("exitCode") or 0) == 0:
            continue
        if cs.get("name") in sidecars and cs.get("started"):
            if cs.get("ready"):
                ready += 1
            continue
        if terminated is not None:
            if not terminated.get("reason"):
                if terminated.get("signal"):
                    reason = f"Init:Signal:{terminated['signal']}"
                else:
                    reason = f"Init:ExitCode:{terminated.get('exitCode', 0)}"
            else:
                reason = "Init:" + terminated["reason"]
            initializing = True
        elif waiting is not None and waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + waiting["reason"]
            initializing = True
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
            initializing = True
        break

    initialized = any(
        c.get("type") == "Initialized" and c.get("status") == "True" for c in status.get("conditions") or []
    )
    if not initializing or initialized:
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += int(cs.get("restartCount") or 0)
            t = terminated_at(cs)
            if t and (last_restart is None or t > last_restart):
                last_restart = t
            state = cs.get("state") or {}
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated is not None and terminated.get("reason"):
                reason = terminated["reason"]
            elif terminated is not None:
                reason = (
                    f"Signal:{terminated['signal']}"
                    if terminated.get("signal")
                    else f"ExitCode:{terminated.get('exitCode', 0)}"
                )
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            pod_ready = any(
                c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
            )
            reason = "Running" if pod_ready else "NotReady"

    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_text = str(restarts)
    if restarts and last_restart is not None:
        restarts_text = f"{restarts} ({since(last_restart.isoformat(), now)} ago)"

    ips = status.get("podIPs") or []
    pod_ip = (ips[0].get("ip") if ips else "") or status.get("podIP") or "<none>"
    gates = spec.get("readinessGates") or []
    gates_text = "<none>"
    if gates:
        conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        true_count = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
        gates_text = f"{true_count}/{len(gates)}"
    return [
        meta.get("name", ""),
        f"{ready}/{total}",
        reason,
        restarts_text,
        _age(obj, now),
        pod_ip,
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_text,
    ]


def _node(obj: dict, now: datetime.datetime) -> list:
    spec, status, meta = obj.get("spec") or {}, obj.get("status") or {}, _meta(obj)
    states: list[str] = []
    conditions = {c.get("type"): c for c in status.get("conditions") or []}
    ready = conditions.get("Ready")
    if ready is None:
        states.append("Unknown")
    elif ready.get("status") == "True":
        states.append("Ready")
    else:
        states.append("NotReady")
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    roles = set()
    for key, value in (meta.get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    info = status.get("nodeInfo") or {}

    def address(kind: str) -> str:
        for a in status.get("addresses") or []:
            if a.get("type") == kind:
                return a.get("address", "")
        return "<none>"

    return [
        meta.get("name", ""),
        ",".join(states),
        ",".join(sorted(roles)) or "<none>",
        _age(obj, now),
        info.get("kubeletVersion", ""),
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        # v1.37's printer appends the architecture to the kernel version.
        (info.get("kernelVersion") or "<unknown>") + (f" ({info['architecture']})" if info.get("architecture") else ""),
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _daemonset(obj: dict, now: datetime.datetime) -> list:
    st = obj.get("status") or {}
    names, images = _containers(_template_spec(obj))
    return [
        _meta(obj).get("name", ""),
        int(st.get("desiredNumberScheduled") or 0),
        int(st.get("currentNumberScheduled") or 0),
        int(st.get("numberReady") or 0),
        int(st.get("updatedNumberScheduled") or 0),
        int(st.get("numberAvailable") or 0),
        format_labels(_template_spec(obj).get("nodeSelector")),
        _age(obj, now),
        names,
        images,
        format_label_selector((obj.get("spec") or {}).get("selector")),
    ]


def _deployment(obj: dict, now: datetime.datetime) -> list:
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(_template_spec(obj))
    desired = spec.get("replicas", 1)
    return [
        _meta(obj).get("name", ""),
        f"{int(st.get('readyReplicas') or 0)}/{int(desired or 0)}",
        int(st.get("updatedReplicas") or 0),
        int(st.get("availableReplicas") or 0),
        _age(obj, now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


def _replicaset(obj: dict, now: datetime.datetime) -> list:
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(_template_spec(obj))
    return [
        _meta(obj).get("name", ""),
        int(spec.get("replicas", 1) or 0),
        int(st.get("replicas") or 0),
        int(st.get("readyReplicas") or 0),
        _age(obj, now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


def _statefulset(obj: dict, now: datetime.datetime) -> list:
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(_template_spec(obj))
    return [
        _meta(obj).get("name", ""),
        f"{int(st.get('readyReplicas') or 0)}/{int(spec.get('replicas', 1) or 0)}",
        _age(obj, now),
        names,
        images,
    ]


def _job(obj: dict, now: datetime.datetime) -> list:
    spec, st, meta = obj.get("spec") or {}, obj.get("status") or {}, _meta(obj)
    succeeded = int(st.get("succeeded") or 0)
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    else:
        parallelism = int(spec.get("parallelism") or 0)
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    start, end = parse_datetime(st.get("startTime")), parse_datetime(st.get("completionTime"))
    if start is None:
        duration = ""
    elif end is None:
        duration = since(st.get("startTime"), now)
    else:
        duration = human_duration((end - start).total_seconds())
    conditions = {c.get("type"): c.get("status") for c in st.get("conditions") or []}
    if conditions.get("Complete") == "True":
        state = "Complete"
    elif conditions.get("Failed") == "True":
        state = "Failed"
    elif meta.get("deletionTimestamp"):
        state = "Terminating"
    elif conditions.get("Suspended") == "True":
        state = "Suspended"
    elif conditions.get("FailureTarget") == "True":
        state = "FailureTarget"
    else:
        state = "Running"
    names, images = _containers(_template_spec(obj))
    return [
        meta.get("name", ""),
        state,
        completions,
        duration,
        _age(obj, now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


def _namespace(obj: dict, now: datetime.datetime) -> list:
    return [_meta(obj).get("name", ""), (obj.get("status") or {}).get("phase", ""), _age(obj, now)]


def _event(obj: dict, now: datetime.datetime) -> list:
    first = since(obj.get("firstTimestamp"), now) if obj.get("firstTimestamp") else since(obj.get("eventTime"), now)
    last = since(obj.get("lastTimestamp"), now) if obj.get("lastTimestamp") else first
    count = obj.get("count") or 0
    series = obj.get("series")
    if series:
        last = since(series.get("lastObservedTime"), now)
        count = series.get("count") or 0
    elif not count:
        count = 1
    involved = obj.get("involvedObject") or {}
    kind = (involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = obj.get("source") or {}
    if source.get("component"):
        src = source["component"] + (f", {source['host']}" if source.get("host") else "")
    else:
        src = obj.get("reportingComponent") or ""
        if obj.get("reportingInstance"):
            src += f", {obj['reportingInstance']}"
    return [
        last,
        obj.get("type", ""),
        obj.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        src,
        (obj.get("message") or "").strip(),
        first,
        int(count),
        _meta(obj).get("name", ""),
    ]


def _configmap(obj: dict, now: datetime.datetime) -> list:
    return [_meta(obj).get("name", ""), len(obj.get("data") or {}) + len(obj.get("binaryData") or {}), _age(obj, now)]


def _secret(obj: dict, now: datetime.datetime) -> list:
    return [_meta(obj).get("name", ""), obj.get("type", ""), len(obj.get("data") or {}), _age(obj, now)]


def _service(obj: dict, now: datetime.datetime) -> list:
    spec = obj.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    external = ",".join(spec.get("externalIPs") or []) or "<none>"
    if kind == "LoadBalancer":
        ingress = [
            i.get("ip") or i.get("hostname")
            for i in ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        ]
        external = ",".join(x for x in ingress + list(spec.get("externalIPs") or []) if x) or "<pending>"
    elif kind == "ExternalName":
        external = spec.get("externalName") or "<none>"
    ports = (
        ",".join(
            f"{p.get('port')}:{p['nodePort']}/{p.get('protocol', 'TCP')}"
            if p.get("nodePort")
            else f"{p.get('port')}/{p.get('protocol', 'TCP')}"
            for p in spec.get("ports") or []
        )
        or "<none>"
    )
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items())) or "<none>"
    return [
        _meta(obj).get("name", ""),
        kind,
        spec.get("clusterIP") or "<none>",
        external,
        ports,
        _age(obj, now),
        selector,
    ]


def _cronjob(obj: dict, now: datetime.datetime) -> list:
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    names, images = _containers((job_spec.get("template") or {}).get("spec"))
    last = since(st.get("lastScheduleTime"), now) if st.get("lastScheduleTime") else "<none>"
    return [
        _meta(obj).get("name", ""),
        spec.get("schedule", ""),
        spec.get("timeZone") or "<none>",
        "<unset>" if spec.get("suspend") is None else str(bool(spec["suspend"])),  # printBoolPtr
        len(st.get("active") or []),
        last,
        _age(obj, now),
        names,
        images,
        format_label_selector(job_spec.get("selector")),
    ]


def _resourcequota(obj: dict, now: datetime.datetime) -> list:
    hard = (obj.get("spec") or {}).get("hard") or {}
    used = (obj.get("status") or {}).get("used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for name in sorted(hard):
        pieces = name.split(".")
        target = limits if len(pieces) > 1 and pieces[0] == "limits" else requests
        target.append(f"{name}: {used.get(name, '0')}/{hard[name]}")
    return [_meta(obj).get("name", ""), _age(obj, now), ", ".join(requests), ", ".join(limits)]


def _pdb(obj: dict, now: datetime.datetime) -> list:
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    min_available = str(spec["minAvailable"]) if spec.get("minAvailable") is not None else "N/A"
    max_unavailable = str(spec["maxUnavailable"]) if spec.get("maxUnavailable") is not None else "N/A"
    return [
        _meta(obj).get("name", ""),
        min_available,
        max_unavailable,
        int(st.get("disruptionsAllowed") or 0),
        _age(obj, now),
    ]


def _lease(obj: dict, now: datetime.datetime) -> list:
    return [_meta(obj).get("name", ""), (obj.get("spec") or {}).get("holderIdentity") or "", _age(obj, now)]


def _serviceaccount(obj: dict, now: datetime.datetime) -> list:
    return [_meta(obj).get("name", ""), len(obj.get("secrets") or []), _age(obj, now)]


def _binding(obj: dict, now: datetime.datetime) -> list:
    ref = obj.get("roleRef") or {}
    users, groups, sas = [], [], []
    for s in obj.get("subjects") or []:
        if s.get("kind") == "User":
            users.append(s.get("name", ""))
        elif s.get("kind") == "Group":
            groups.append(s.get("name", ""))
        elif s.get("kind") == "ServiceAccount":
            sas.append(f"{s.get('namespace', '')}/{s.get('name', '')}")
    return [
        _meta(obj).get("name", ""),
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        _age(obj, now),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(sas),
    ]


def claim_state(obj: dict) -> str:
    """The STATE column of `kubectl get resourceclaims`: pending | allocated | allocated,reserved, prefixed
    `deleted`."""
    states: list[str] = []
    deleted = bool(_meta(obj).get("deletionTimestamp"))
    if deleted:
        states.append("deleted")
    status = obj.get("status") or {}
    if not status.get("allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


def _resourceclaim(obj: dict, now: datetime.datetime) -> list:
    return [_meta(obj).get("name", ""), claim_state(obj), _age(obj, now)]


def _resourceslice(obj: dict, now: datetime.datetime) -> list:
    spec = obj.get("spec") or {}
    return [
        _meta(obj).get("name", ""),
        spec.get("nodeName") or "",
        spec.get("driver", ""),
        (spec.get("pool") or {}).get("name", ""),
        _age(obj, now),
    ]


def _devicetaintrule(obj: dict, now: datetime.datetime) -> list:
    """printDeviceTaint: the taint, not the selector (it may be long)."""
    taint = (obj.get("spec") or {}).get("taint") or {}
    added = taint.get("timeAdded")
    return [
        _meta(obj).get("name", ""),
        taint.get("key", ""),
        taint.get("value", ""),
        taint.get("effect", ""),
        since(added, now) if added else "",
        _age(obj, now),
    ]


def _name_age(obj: dict, now: datetime.datetime) -> list:
    return [_meta(obj).get("name", ""), _age(obj, now)]


def _created_at(obj: dict, now: datetime.datetime) -> list:
    created = parse_datetime(_meta(obj).get("creationTimestamp"))
    text = format_time(created) if created else None
    return [_meta(obj).get("name", ""), text]


# k8s.io/api resource/v1 DeviceTaint's field docs (types_swagger_doc_generated.go), as the server's columns carry them.
_TAINT_DOC = {
    "effect": (
        "The effect of the taint on claims that do not tolerate the taint and through such claims on the pods using "
        "them.\n\nValid effects are None, NoSchedule and NoExecute. PreferNoSchedule as used for nodes is not valid "
        "here. More effects may get added in the future. Consumers must treat unknown effects like None."
    ),
    "timeAdded": (
        "TimeAdded represents the time at which the taint was added or (only in a DeviceTaintRule) the effect was "
        "modified. Added automatically during create or update if not set.\n\nIn addition, in a DeviceTaintRule a "
        "value provided during an update gets replaced with the current time if the provided value is the same as the "
        "old one and the new effect is different. Changing the key and/or value while keeping the effect unchanged is "
        "possible and does not update the time stamp because the eviction which uses it is either already started "
        "(NoExecute) or not started yet (NoEffect, NoSchedule)."
    ),
}


COLUMNS: dict[str, list[dict]] = {
    "pods": [
        NAME,
        _col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
        _col("Status", "The aggregate status of the containers in this pod."),
        _col(
            "Restarts",
            "The number of times the containers in this pod have been restarted and when the last "
            "container in this pod has restarted.",
        ),
        AGE,
        _col(
            "IP",
            "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
            priority=1,
        ),
        _col("Node", "NodeName indicates in which node this pod is scheduled.", priority=1),
        _col(
            "Nominated Node", "nominatedNodeName is set only when this pod preempts other pods on the node.", priority=1
        ),
        _col("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness.", priority=1),
    ],
    "nodes": [
        NAME,
        _col("Status", "The status of the node"),
        _col("Roles", "The roles of the node"),
        AGE,
        _col("Version", "Kubelet Version reported by the node."),
        _col("Internal-IP", "List of addresses reachable to the node.", priority=1),
        _col("External-IP", "List of addresses reachable to the node.", priority=1),
        _col(
            "OS-Image",
            "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
            priority=1,
        ),
        _col(
            "Kernel-Version",
            "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
            priority=1,
        ),
        _col(
            "Container-Runtime",
            "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
            priority=1,
        ),
    ],
    "daemonsets": [
        NAME,
        _col("Desired", "The total number of nodes that should be running the daemon pod.", "integer"),
        _col(
            "Current",
            "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.",
            "integer",
        ),
        _col(
            "Ready",
            "numberReady is the number of nodes that should be running the daemon pod and have one or more "
            "of the daemon pod running with a Ready Condition.",
            "integer",
        ),
        _col("Up-to-date", "The total number of nodes that are running updated daemon pod", "integer"),
        _col(
            "Available",
            "The number of nodes that should be running the daemon pod and have one or more of the daemon "
            "pod running and available (ready for at least spec.minReadySeconds)",
            "integer",
        ),
        _col("Node Selector", "NodeSelector is a selector which must be true for the pod to fit on a node."),
        AGE,
        *WIDE_CONTAINERS,
        _col("Selector", "A label query over pods that are managed by the daemon set.", priority=1),
    ],
    "deployments": [
        NAME,
        _col("Ready", "Number of the pod with ready state"),
        _col(
            "Up-to-date",
            "Total number of non-terminating pods targeted by this deployment that have the desired template spec.",
        ),
        _col(
            "Available",
            "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted "
            "by this deployment.",
        ),
        AGE,
        *WIDE_CONTAINERS,
        _col("Selector", "Label selector for pods.", priority=1),
    ],
    "replicasets": [
        NAME,
        _col("Desired", "Replicas is the number of desired pods.", "integer"),
        _col("Current", "Replicas is the most recently observed number of non-terminating pods.", "integer"),
        _col(
            "Ready", "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.", "integer"
        ),
        AGE,
        *WIDE_CONTAINERS,
        _col("Selector", "Selector is a label query over pods that should match the replica count.", priority=1),
    ],
    "statefulsets": [NAME, _col("Ready", "Number of the pod with ready state"), AGE, *WIDE_CONTAINERS],
    "jobs": [
        NAME,
        _col("Status", "Status of the job."),
        _col("Completions", "The number of pods which reached phase Succeeded."),
        _col("Duration", "Time required to complete the job."),
        AGE,
        *WIDE_CONTAINERS,
        _col("Selector", "A label query over pods that should match the pod count.", priority=1),
    ],
    "namespaces": [NAME, _col("Status", "The status of the namespace"), AGE],
    "events": [
        _col("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
        _col("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
        _col(
            "Reason",
            "This should be a short, machine understandable string that gives the reason for the "
            "transition into the object's current status.",
        ),
        _col("Object", "The object that this event is about."),
        _col(
            "Subobject",
            "If referring to a piece of an object instead of an entire object, this string should contain "
            "a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].",
            priority=1,
        ),
        _col(
            "Source", "The component reporting this event. Should be a short machine understandable string.", priority=1
        ),
        _col("Message", "A human-readable description of the status of this operation."),
        _col(
            "First Seen",
            "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
            priority=1,
        ),
        _col("Count", "The number of times this event has occurred.", priority=1),
        _col("Name", NAME_DOC, priority=1, format_="name"),
    ],
    "configmaps": [NAME, _col("Data", "Data contains the configuration data."), AGE],
    "secrets": [NAME, _col("Type", _DOCS["secret.type"]), _col("Data", _DOCS["secret.data"]), AGE],
    "services": [
        NAME,
        _col("Type", _DOCS["svc.type"]),
        _col("Cluster-IP", _DOCS["svc.clusterIP"]),
        _col("External-IP", _DOCS["svc.externalIPs"]),
        _col("Port(s)", _DOCS["svc.ports"]),
        AGE,
        _col("Selector", _DOCS["svc.selector"], priority=1),
    ],
    "cronjobs": [
        NAME,
        _col("Schedule", _DOCS["cj.schedule"]),
        _col("Timezone", _DOCS["cj.timeZone"]),
        _col("Suspend", _DOCS["cj.suspend"], "boolean"),
        _col("Active", _DOCS["cj.active"], "integer"),
        _col("Last Schedule", _DOCS["cj.lastScheduleTime"]),
        AGE,
        *WIDE_CONTAINERS,
        _col("Selector", _DOCS["job.selector"], priority=1),
    ],
    "resourcequotas": [
        NAME,
        AGE,
        _col("Request", "Request represents a minimum amount of cpu/memory that a container may consume."),
        _col(
            "Limit",
            "Limits control the maximum amount of cpu/memory that a container may use independent of "
            "contention on the node.",
        ),
    ],
    "poddisruptionbudgets": [
        NAME,
        _col("Min Available", "The minimum number of pods that must be available."),
        _col("Max Unavailable", "The maximum number of pods that may be unavailable."),
        _col("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time.", "integer"),
        AGE,
    ],
    "leases": [NAME, _col("Holder", "holderIdentity contains the identity of the holder of a current lease."), AGE],
    "serviceaccounts": [
        NAME,
        _col(
            "Secrets",
            "Secrets is a list of the secrets in the same namespace that pods running using this "
            "ServiceAccount are allowed to use.",
        ),
        AGE,
    ],
    "rolebindings": [
        NAME,
        _col("Role", "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace."),
        AGE,
        _col("Users", "Users in the roleBinding", priority=1),
        _col("Groups", "Groups in the roleBinding", priority=1),
        _col("ServiceAccounts", "ServiceAccounts in the roleBinding", priority=1),
    ],
    "clusterrolebindings": [
        NAME,
        _col("Role", "RoleRef can only reference a ClusterRole in the global namespace."),
        AGE,
        _col("Users", "Users in the clusterRoleBinding", priority=1),
        _col("Groups", "Groups in the clusterRoleBinding", priority=1),
        _col("ServiceAccounts", "ServiceAccounts in the clusterRoleBinding", priority=1),
    ],
    "resourceslices": [
        NAME,
        _col("Node", "NodeName identifies the node which provides the resources in this pool."),
        _col("Driver", "Driver identifies the DRA driver providing the capacity information."),
        _col("Pool", "Name is used to identify the pool."),
        AGE,
    ],
    "resourceclaims": [
        NAME,
        _col("State", "A summary of the current state (allocated, pending, reserved, etc.)."),
        AGE,
    ],
    "deviceclasses": [NAME, AGE],
    "resourceclaimtemplates": [NAME, AGE],
    "devicetaintrules": [
        NAME,
        _col("Key", "The taint key to be applied to a device. Must be a label name."),
        _col("Value", "The taint value corresponding to the taint key. Must be a label value."),
        _col("Effect", _TAINT_DOC["effect"]),
        _col("TimeAdded", _TAINT_DOC["timeAdded"]),
        AGE,
    ],
}

# Resources without a printer get the API server's default table (rest.defaultTableConvertor).
DEFAULT_COLUMNS = [NAME, _col("Created At", AGE_DOC, "date")]

PRINTERS: dict[str, Callable[[dict, datetime.datetime], list]] = {
    "pods": _pod,
    "nodes": _node,
    "daemonsets": _daemonset,
    "deployments": _deployment,
    "replicasets": _replicaset,
    "statefulsets": _statefulset,
    "jobs": _job,
    "namespaces": _namespace,
    "events": _event,
    "configmaps": _configmap,
    "resourcequotas": _resourcequota,
    "poddisruptionbudgets": _pdb,
    "leases": _lease,
    "serviceaccounts": _serviceaccount,
    "rolebindings": _binding,
    "clusterrolebindings": _binding,
    "resourceslices": _resourceslice,
    "resourceclaims": _resourceclaim,
    "deviceclasses": _name_age,
    "resourceclaimtemplates": _name_age,
    "devicetaintrules": _devicetaintrule,
    "secrets": _secret,
    "services": _service,
    "cronjobs": _cronjob,
}


def columns_for(resource: str) -> list[dict]:
    return COLUMNS.get(resource, DEFAULT_COLUMNS)


def row_for(resource: str, obj: dict, now: datetime.datetime) -> dict:
    """One Table row: every cell (wide ones too, as the server sends them) and the object's metadata."""
    printer = PRINTERS.get(resource, _created_at)
    row: dict[str, Any] = {
        "cells": printer(obj, now),
        "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": _meta(obj)},
    }
    if resource == "pods":
        phase = (obj.get("status") or {}).get("phase")
        if phase == "Succeeded":
            row["conditions"] = [
                {
                    "type": "Completed",
                    "status": "True",
                    "reason": "Succeeded",
                    "message": "The pod has completed successfully.",
                }
            ]
        elif phase == "Failed":
            row["conditions"] = [
                {"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}
            ]
    return row


def table_for(
    resource: str,
    objects: list[dict],
    now: datetime.datetime,
    resource_version: str,
    continue_token: str | None = None,
    remaining: int | None = None,
    include_columns: bool = True,
) -> dict:
    """`kind: Table` for `resource` (plural name) over `objects`, as `Accept: ...;as=Table;v=v1;g=meta.k8s.io` gets it.

    `include_columns=False` gives `columnDefinitions: null`, as the server sends for watch events after the first.
    """
    metadata: dict[str, Any] = {"resourceVersion": resource_version}
    if continue_token:
        metadata["continue"] = continue_token
    if remaining is not None:
        metadata["remainingItemCount"] = remaining
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": columns_for(resource) if include_columns else None,
        "rows": [row_for(resource, obj, now) for obj in objects],
    }
