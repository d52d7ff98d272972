"""The core group (v1): defaulting and validation of Pods and pod specs, Nodes, Namespaces, ConfigMaps, Secrets,
Services, Events and ResourceQuotas."""

from __future__ import annotations

import json
import re
from typing import Any

from dragoman.fleet.k8s.extended import is_extended_resource_name
from dragoman.sim.api.validation.fields import (
    _CONFIG_KEY_RE,
    IMMUTABLE,
    _err,
    _list,
    dns1123_label_errors,
    duplicate,
    fmt_value,
    forbidden,
    invalid,
    label_value_errors,
    not_supported,
    qualified_name_errors,
    required,
    too_long,
)
from dragoman.sim.api.validation.meta import _meta_errors, _meta_update_errors

_GRACE = 30


def _default_container(c: dict) -> None:
    """SetDefaults_Container (and the ports, env and probes it holds)."""
    image = c.get("image") or ""
    if not c.get("imagePullPolicy"):
        last = image.rsplit("/", 1)[-1]
        tag = last.split("@", 1)[0].split(":", 1)[1] if ":" in last.split("@", 1)[0] else ""
        c["imagePullPolicy"] = "IfNotPresent" if ("@" in last or (tag and tag != "latest")) else "Always"
    if not c.get("terminationMessagePath"):
        c["terminationMessagePath"] = "/dev/termination-log"
    if not c.get("terminationMessagePolicy"):
        c["terminationMessagePolicy"] = "File"
    # ResourceRequirements is a struct, not a pointer: `resources: {}` is always written.
    c.setdefault("resources", {})
    for port in c.get("ports") or []:
        if not port.get("protocol"):
            port["protocol"] = "TCP"
    for env in c.get("env") or []:
        ref = (env.get("valueFrom") or {}).get("fieldRef")
        if ref is not None and not ref.get("apiVersion"):
            ref["apiVersion"] = "v1"


def default_pod_spec(spec: dict) -> None:
    """SetDefaults_PodSpec and the container and volume defaults: what every PodSpec gets when it is decoded, a
    Pod's or a template's alike (core/v1 defaults.go)."""
    # DeprecatedServiceAccount is an alias of serviceAccountName, kept in sync (the name wins when both are set).
    if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]
    else:
        spec.pop("serviceAccount", None)
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = _GRACE
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            _default_container(c)
    for volume in spec.get("volumes") or []:
        sources = [k for k in volume if k != "name"]
        if not sources:
            volume["emptyDir"] = {}
        for key in ("configMap", "secret", "projected", "downwardAPI"):
            if isinstance(volume.get(key), dict) and volume[key].get("defaultMode") is None:
                volume[key]["defaultMode"] = 420
        for source in (volume.get("projected") or {}).get("sources") or []:
            token = source.get("serviceAccountToken") if isinstance(source, dict) else None
            if isinstance(token, dict) and token.get("expirationSeconds") is None:
                token["expirationSeconds"] = 3600
        if isinstance(volume.get("hostPath"), dict):
            volume["hostPath"].setdefault("type", "")


def _qos_class(spec: dict) -> str:
    containers = (spec.get("containers") or []) + (spec.get("initContainers") or [])
    requests_any = limits_any = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        for name in ("cpu", "memory"):
            if name in req:
                requests_any = True
            if name in lim:
                limits_any = True
            if name not in lim or req.get(name, lim.get(name)) != lim.get(name):
                guaranteed = False
    if not requests_any and not limits_any:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _default_pod(obj: dict) -> None:
    """SetDefaults_Pod: the PodSpec defaults plus what only a Pod gets, not a template (requests from limits,
    enableServiceLinks). Admission (service account, priority, tolerations) is sim/api/admission.py's."""
    spec = obj.setdefault("spec", {})
    if isinstance(spec.get("terminationGracePeriodSeconds"), int) and spec["terminationGracePeriodSeconds"] < 0:
        spec["terminationGracePeriodSeconds"] = 1
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            resources = c.get("resources") or {}
            limits = resources.get("limits") or {}
            if limits:
                requests = resources.setdefault("requests", {})
                for name, value in limits.items():
                    requests.setdefault(name, value)
                c["resources"] = resources
    default_pod_spec(spec)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True


def prepare_pod(obj: dict) -> None:
    """The pod strategy's PrepareForCreate: a new pod's status is the server's (Pending, its QoS class)."""
    status = obj.setdefault("status", {})
    status.setdefault("phase", "Pending")
    status.setdefault("qosClass", _qos_class(obj.get("spec") or {}))


def _default_template(obj: dict) -> None:
    template = (obj.get("spec") or {}).get("template")
    if isinstance(template, dict):
        default_pod_spec(template.setdefault("spec", {}))


def _default_secret(obj: dict) -> None:
    """SetDefaults_Secret."""
    if not obj.get("type"):
        obj["type"] = "Opaque"


def _default_service(obj: dict) -> None:
    """SetDefaults_Service (the IP allocation the registry adds is not simulated beyond `None` for headless)."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] in ("ClusterIP", "NodePort", "LoadBalancer"):
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if "targetPort" not in port and "port" in port:
                port["targetPort"] = port["port"]


def _default_node(obj: dict) -> None:
    """NodeSpec.Unschedulable is a bool with omitempty: after an uncordon the real server stores no
    `unschedulable: false` (a client reading `spec.unschedulable` sees it absent, never false)."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and spec.get("unschedulable") is False:
        del spec["unschedulable"]


def _default_namespace(obj: dict) -> None:
    """SetDefaults_Namespace and SetDefaults_NamespaceStatus."""
    name = (obj.get("metadata") or {}).get("name")
    if name:
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name
    status = obj.setdefault("status", {})
    if not status.get("phase"):
        status["phase"] = "Active"


def prepare_namespace(obj: dict) -> None:
    """The namespace strategy's PrepareForCreate: the `kubernetes` finalizer the namespace controller removes."""
    spec = obj.setdefault("spec", {})
    finalizers = list(spec.get("finalizers") or [])
    if "kubernetes" not in finalizers:
        finalizers.append("kubernetes")
    spec["finalizers"] = finalizers


_RESTART_POLICIES = ["Always", "OnFailure", "Never"]
_DIGITS = re.compile(r"\d+")


def _resources_errors(resources: Any, path: str) -> list[dict]:
    errs: list[dict] = []
    if not isinstance(resources, dict):
        return errs
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    for name in sorted(set(limits) | set(requests)):
        for part, values in (("limits", limits), ("requests", requests)):
            if name in values:
                errs += [invalid(f"{path}.{part}[{name}]", name, p) for p in qualified_name_errors(name)]
        if is_extended_resource_name(name):
            if name in requests and name not in limits:
                errs.append(
                    forbidden(f"{path}.requests", f"{name}: Limit must be set for non overcommitable resources")
                )
            elif name in requests and str(requests[name]) != str(limits[name]):
                errs.append(
                    invalid(f"{path}.requests", str(requests[name]), f"must be equal to {name} limit of {limits[name]}")
                )
            for part, values in (("limits", limits), ("requests", requests)):
                if name in values and not _DIGITS.fullmatch(str(values[name])):
                    errs.append(invalid(f"{path}.{part}[{name}]", str(values[name]), "must be an integer"))
    return errs


def _containers_errors(containers: Any, path: str, names: set[str], require: bool) -> list[dict]:
    errs: list[dict] = []
    items = _list(containers)
    if require and not items:
        return [required(path, "")]
    for i, c in enumerate(items):
        p = f"{path}[{i}]"
        if not isinstance(c, dict):
            errs.append(invalid(p, c, "must be an object"))
            continue
        name = c.get("name")
        if not name:
            errs.append(required(f"{p}.name", ""))
        else:
            errs += [invalid(f"{p}.name", name, msg) for msg in dns1123_label_errors(name)]
            if name in names:
                errs.append(duplicate(f"{p}.name", name))
            names.add(name)
        if not c.get("image") and not path.endswith("ephemeralContainers"):
            errs.append(required(f"{p}.image", ""))
        policy = c.get("imagePullPolicy")
        if policy and policy not in ("Always", "IfNotPresent", "Never"):
            errs.append(not_supported(f"{p}.imagePullPolicy", policy, ["Always", "IfNotPresent", "Never"]))
        errs += _resources_errors(c.get("resources"), f"{p}.resources")
        for j, claim in enumerate(_list((c.get("resources") or {}).get("claims"))):
            if not (claim or {}).get("name"):
                errs.append(required(f"{p}.resources.claims[{j}].name", ""))
    return errs


def pod_spec_errors(spec: Any, path: str, allowed_restart: list[str] | None = None) -> list[dict]:
    if not isinstance(spec, dict):
        return [required(path, "")]
    names: set[str] = set()
    errs = _containers_errors(spec.get("containers"), f"{path}.containers", names, True)
    errs += _containers_errors(spec.get("initContainers"), f"{path}.initContainers", names, False)
    restart = spec.get("restartPolicy")
    allowed = allowed_restart or _RESTART_POLICIES
    if restart is not None and restart not in allowed:
        errs.append(not_supported(f"{path}.restartPolicy", restart, allowed))
    dns = spec.get("dnsPolicy")
    if dns is not None and dns not in ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"):
        errs.append(
            not_supported(f"{path}.dnsPolicy", dns, ["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"])
        )
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or grace < 0):
        errs.append(invalid(f"{path}.terminationGracePeriodSeconds", grace, "must be greater than or equal to 0"))
    volume_names: set[str] = set()
    for i, volume in enumerate(_list(spec.get("volumes"))):
        name = (volume or {}).get("name")
        if not name:
            errs.append(required(f"{path}.volumes[{i}].name", ""))
        elif name in volume_names:
            errs.append(duplicate(f"{path}.volumes[{i}].name", name))
        volume_names.add(name)
    claim_names: set[str] = set()
    for i, rc in enumerate(_list(spec.get("resourceClaims"))):
        p = f"{path}.resourceClaims[{i}]"
        rc = rc if isinstance(rc, dict) else {}
        name = rc.get("name")
        if not name:
            errs.append(required(f"{p}.name", ""))
        else:
            errs += [invalid(f"{p}.name", name, msg) for msg in dns1123_label_errors(name)]
            if name in claim_names:
                errs.append(duplicate(f"{p}.name", name))
            claim_names.add(name)
        sources = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if rc.get(k)]
        if len(sources) != 1:
            errs.append(invalid(p, rc, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
    for key in ("containers", "initContainers"):
        for i, c in enumerate(_list(spec.get(key))):
            for j, claim in enumerate(_list(((c or {}).get("resources") or {}).get("claims"))):
                cname = (claim or {}).get("name")
                if cname and cname not in claim_names:
                    errs.append(
                        _err(
                            "FieldValueNotFound",
                            f"{path}.{key}[{i}].resources.claims[{j}].name",
                            f"Not found: {fmt_value(cname)}",
                        )
                    )
    for i, tol in enumerate(_list(spec.get("tolerations"))):
        p = f"{path}.tolerations[{i}]"
        tol = tol if isinstance(tol, dict) else {}
        op = tol.get("operator", "Equal")
        if op not in ("Equal", "Exists"):
            errs.append(not_supported(f"{p}.operator", op, ["Equal", "Exists"]))
        if op == "Exists" and tol.get("value"):
            errs.append(invalid(f"{p}.operator", tol.get("value"), "value must be empty when `operator` is 'Exists'"))
        if not tol.get("key") and op != "Exists":
            errs.append(
                invalid(
                    f"{p}.operator",
                    op,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        effect = tol.get("effect")
        if effect and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            errs.append(not_supported(f"{p}.effect", effect, ["NoExecute", "NoSchedule", "PreferNoSchedule"]))
    for key, value in (spec.get("nodeSelector") or {}).items():
        errs += [invalid(f"{path}.nodeSelector", key, p) for p in qualified_name_errors(key)]
        errs += [invalid(f"{path}.nodeSelector", value, p) for p in label_value_errors(str(value))]
    return errs


POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
)


def _pod_mutable_view(spec: dict, old_spec: dict) -> dict:
    view = json.loads(json.dumps(spec))
    for key in ("containers", "initContainers"):
        for c in view.get(key) or []:
            c.pop("image", None)
    view.pop("activeDeadlineSeconds", None)
    view.pop("terminationGracePeriodSeconds", None)
    view.pop("tolerations", None)
    view.pop("ephemeralContainers", None)
    view.pop("schedulingGates", None)
    if not old_spec.get("nodeName"):
        # Binding sets nodeName once (the binding subresource, or a scheduler writing it directly).
        view.pop("nodeName", None)
    return view


def _resource_status_name(claim: str, request: str | None) -> str:
    return f"claim:{claim}/{request}" if request else f"claim:{claim}"


def _matches_extended_claim(name: str, container: dict, ext: dict | None) -> bool:
    """matchesExtendedResourceClaimStatus: `claim:<the bridge claim's object name>/<a request the container maps>`,
    for a resource the container requests."""
    if not ext:
        return False
    claim, sep, request = name[len("claim:") :].partition("/")
    if not claim or not sep or not request or claim != ext.get("resourceClaimName"):
        return False
    requests = (container.get("resources") or {}).get("requests") or {}
    for m in ext.get("requestMappings") or ():
        if m.get("containerName") == container.get("name") and m.get("requestName") == request:
            q = requests.get(m.get("resourceName"))
            if q is not None and str(q) not in ("0", "0.0"):
                return True
    return False


def _allocated_resources_status_errors(statuses: Any, containers: Any, status: dict, path: str) -> list[dict]:
    """validateContainerStatusAllocatedResourcesStatus: a claim entry names the container's own claim reference
    (`claim:<ref>` or `claim:<ref>/<request>`) or the bridge claim; any other entry a resource it requests."""
    errs: list[dict] = []
    by_name = {c.get("name"): c for c in _list(containers) if isinstance(c, dict)}
    for i, cs in enumerate(_list(statuses)):
        if not isinstance(cs, dict) or cs.get("allocatedResourcesStatus") is None:
            continue
        container = by_name.get(cs.get("name"))
        for j, res in enumerate(_list(cs.get("allocatedResourcesStatus"))):
            res = res if isinstance(res, dict) else {}
            p = f"{path}[{i}].allocatedResourcesStatus[{j}]"
            name = str(res.get("name") or "")
            if container is not None:  # a status of a missing container is ignored (kubernetes#124915)
                if name.startswith("claim:"):
                    found = any(
                        _resource_status_name(c.get("name", ""), c.get("request")) == name
                        for c in _list((container.get("resources") or {}).get("claims"))
                        if isinstance(c, dict)
                    ) or _matches_extended_claim(name, container, status.get("extendedResourceClaimStatus"))
                    why = (
                        "must match one of the container's resource claims as 'claim:<claimName>/<requestName>' "
                        "when container.resources.claims[*].request is set or 'claim:<claimName>' when it is empty"
                    )
                else:
                    found = name in ((container.get("resources") or {}).get("requests") or {})
                    why = "must match one of the container's resource requests"
                if not found:
                    errs.append(invalid(f"{p}.name", name, why))
            ids: set = set()
            for k, r in enumerate(_list(res.get("resources"))):
                r = r if isinstance(r, dict) else {}
                rp = f"{p}.resources[{k}]"
                if r.get("health") not in ("Healthy", "Unhealthy", "Unknown"):
                    errs.append(not_supported(f"{rp}.health", r.get("health", ""), ["Healthy", "Unhealthy", "Unknown"]))
                if r.get("resourceID") in ids:
                    errs.append(duplicate(f"{rp}.resourceID", r.get("resourceID")))
                ids.add(r.get("resourceID"))
    return errs


def _pod_status_errors(obj: dict) -> list[dict]:
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    errs = _allocated_resources_status_errors(
        status.get("containerStatuses"), spec.get("containers"), status, "status.containerStatuses"
    )
    errs += _allocated_resources_status_errors(
        status.get("initContainerStatuses"), spec.get("initContainers"), status, "status.initContainerStatuses"
    )
    for i, cs in enumerate(_list(status.get("ephemeralContainerStatuses"))):
        if isinstance(cs, dict) and cs.get("allocatedResourcesStatus"):
            errs.append(
                forbidden(
                    f"status.ephemeralContainerStatuses[{i}].allocatedResourcesStatus",
                    "must not be specified in container status",
                )
            )
    return errs


def _pod_errors(obj: dict, old: dict | None) -> list[dict]:
    errs = pod_spec_errors(obj.get("spec"), "spec")
    if old is not None and obj.get("status") != old.get("status"):
        errs += _pod_status_errors(obj)
    if old is not None and isinstance(obj.get("spec"), dict):
        spec, old_spec = obj["spec"], old.get("spec") or {}
        if _pod_mutable_view(spec, old_spec) != _pod_mutable_view(old_spec, old_spec):
            errs.append(forbidden("spec", POD_UPDATE_FORBIDDEN))
        old_tols = _list(old_spec.get("tolerations"))
        new_tols = _list(spec.get("tolerations"))
        if any(t not in new_tols for t in old_tols):
            errs.append(
                forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds")
            )
        if old_spec.get("schedulingGates") is not None:
            added = [g for g in _list(spec.get("schedulingGates")) if g not in _list(old_spec.get("schedulingGates"))]
            if added:
                errs.append(
                    forbidden("spec.schedulingGates", "only deletion is allowed, but found new scheduling gate")
                )
    return errs


def _node_errors(obj: dict, old: dict | None) -> list[dict]:
    spec = obj.get("spec") or {}
    errs: list[dict] = []
    for i, taint in enumerate(_list(spec.get("taints"))):
        taint = taint if isinstance(taint, dict) else {}
        p = f"spec.taints[{i}]"
        if not taint.get("key"):
            errs.append(required(f"{p}.key", ""))
        else:
            errs += [invalid(f"{p}.key", taint["key"], m) for m in qualified_name_errors(taint["key"])]
        if taint.get("effect") not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            errs.append(
                not_supported(f"{p}.effect", taint.get("effect"), ["NoExecute", "NoSchedule", "PreferNoSchedule"])
            )
    if old is not None:
        old_spec = old.get("spec") or {}
        if old_spec.get("podCIDR") and spec.get("podCIDR") != old_spec.get("podCIDR"):
            errs.append(forbidden("spec.podCIDR", 'node updates may not change podCIDR except from "" to valid'))
        if old_spec.get("providerID") and spec.get("providerID") != old_spec.get("providerID"):
            errs.append(forbidden("spec.providerID", 'node updates may not change providerID except from "" to valid'))
    return errs


def _configmap_errors(obj: dict, old: dict | None) -> list[dict]:
    errs: list[dict] = []
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    for key in list(data) + list(binary):
        if len(key) > 253 or not _CONFIG_KEY_RE.match(key) or key in (".", "..") or key.startswith(".."):
            errs.append(
                invalid(
                    f"data[{key}]" if key in data else f"binaryData[{key}]",
                    key,
                    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
                    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
                    "'[-._a-zA-Z0-9]+')",
                )
            )
        if key in data and key in binary:
            errs.append(invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
    if (
        old is not None
        and old.get("immutable")
        and (data != (old.get("data") or {}) or binary != (old.get("binaryData") or {}))
    ):
        errs.append(forbidden("data", "field is immutable when `immutable` is set"))
    total = sum(len(k) + len(v if isinstance(v, str) else "") for k, v in data.items()) + sum(
        len(k) + len(v or "") for k, v in binary.items()
    )
    if total > 1024 * 1024:
        errs.append(too_long("", 1024 * 1024) | {"message": f"Too long: must have at most {1024 * 1024} bytes"})
    return errs


def _namespace_errors(obj: dict, old: dict | None) -> list[dict]:
    errs: list[dict] = []
    phase = (obj.get("status") or {}).get("phase")
    if phase is not None and phase not in ("Active", "Terminating"):
        errs.append(not_supported("status.phase", phase, ["Active", "Terminating"]))
    return errs


# pkg/apis/core/validation/events.go's limits.
_EVENT_LIMITS = {"reportingInstance": 128, "action": 128, "reason": 128}
_NOTE_LIMIT = 1024
# The API versions whose Event writes get only the legacy checks (backwards compatibility); events.k8s.io/v1 and any
# newer one get the strict checks too.
_LEGACY_EVENT_APIS = ("v1", "events.k8s.io/v1beta1")


def _legacy_event_errors(obj: dict, api_version: str) -> list[dict]:
    """legacyValidateEvent: every Event write passes it, whatever API it came through (the fields are named as the
    core type names them, but for reportingController outside core v1)."""
    errs: list[dict] = []
    involved = obj.get("involvedObject") or {}
    involved_ns = involved.get("namespace") or ""
    ns = (obj.get("metadata") or {}).get("namespace") or ""
    controller_field = "reportingComponent" if api_version == "v1" else "reportingController"
    if not obj.get("eventTime"):
        # An old-style Event: its namespace must be the involved object's ("default" or none for a cluster object).
        if (not involved_ns and ns not in ("", "default")) or (involved_ns and ns != involved_ns):
            errs.append(invalid("involvedObject.namespace", involved_ns, "does not match event.namespace"))
        return errs
    if not involved_ns and ns not in ("default", "kube-system"):
        errs.append(invalid("involvedObject.namespace", involved_ns, "does not match event.namespace"))
    controller = obj.get("reportingComponent") or ""
    if not controller:
        errs.append(required(controller_field))
    errs += [invalid(controller_field, controller, p) for p in qualified_name_errors(controller)]
    for name in ("reportingInstance", "action", "reason"):
        value = obj.get(name) or ""
        if not value:
            errs.append(required(name))
        if len(value) > _EVENT_LIMITS[name]:
            errs.append(invalid(name, "", f"can have at most {_EVENT_LIMITS[name]} characters"))
    if len(obj.get("message") or "") > _NOTE_LIMIT:
        errs.append(invalid("message", "", f"can have at most {_NOTE_LIMIT} characters"))
    return errs


def _event_series_errors(obj: dict) -> list[dict]:
    series = obj.get("series")
    if series is None:
        return []
    errs = []
    if int(series.get("count") or 0) < 2:
        errs.append(invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(required("series.lastObservedTime"))
    return errs


_EVENT_IMMUTABLE = (
    "involvedObject",
    "reason",
    "message",
    "source",
    "firstTimestamp",
    "lastTimestamp",
    "count",
    "type",
)


def _event_errors(obj: dict, old: dict | None, api_version: str = "v1") -> list[dict]:
    """ValidateEventCreate / ValidateEventUpdate of the stored (core) shape. Writes through core v1 get only the
    legacy checks — not even ObjectMeta's — and through events.k8s.io/v1 the strict ones after them: a DNS-subdomain
    name, eventTime required, the deprecated fields unset, and on update every field but series immutable."""
    errs = _legacy_event_errors(obj, api_version)
    if api_version in _LEGACY_EVENT_APIS:
        # rest.ValidateCreate/Update's generic ObjectMeta check, which runs only when the strategy found nothing:
        # labels, annotations, finalizers, a generateName; the name need only be a path segment.
        if not errs:
            errs = _meta_errors("events", obj, path_segment_names=True)
            if old is not None:
                errs += _meta_update_errors(obj, old)
        return errs
    if old is None:
        errs += _meta_errors("events", obj)
        errs += _event_series_errors(obj)
        if not obj.get("eventTime"):
            errs.append(required("eventTime"))
        if obj.get("type") not in ("Normal", "Warning"):
            errs.append(invalid("type", "", f"has invalid value: {obj.get('type') or ''}"))
        for name in ("firstTimestamp", "lastTimestamp"):
            if obj.get(name):
                errs.append(invalid(name, "", "needs to be unset"))
        if obj.get("count"):
            errs.append(invalid("count", "", "needs to be unset"))
        source = obj.get("source") or {}
        if source.get("component") or source.get("host"):
            errs.append(invalid("source", "", "needs to be unset"))
        return errs
    errs += _meta_update_errors(obj, old)
    if obj.get("series") != old.get("series"):
        errs += _event_series_errors(obj)
    for name in _EVENT_IMMUTABLE:
        if obj.get(name) != old.get(name):
            errs.append(invalid(name, obj.get(name), IMMUTABLE))
    # eventTime may change below a microsecond (clients that truncate, or wrote nanoseconds by mistake).
    if (obj.get("eventTime") or "")[:26] != (old.get("eventTime") or "")[:26]:
        errs.append(invalid("eventTime", obj.get("eventTime"), IMMUTABLE))
    for name, field in (
        ("action", "action"),
        ("related", "related"),
        ("reportingComponent", "reportingController"),
        ("reportingInstance", "reportingInstance"),
    ):
        if obj.get(name) != old.get(name):
            errs.append(invalid(field, obj.get(name), IMMUTABLE))
    return errs


def _quota_errors(obj: dict, old: dict | None) -> list[dict]:
    errs = []
    for name in (obj.get("spec") or {}).get("hard") or {}:
        errs += [invalid(f"spec.hard[{name}]", name, p) for p in qualified_name_errors(name)]
    return errs


def prepare_pod_status_update(new: dict, old: dict) -> None:
    """pods/status' PrepareForUpdate on the status (v1.37.2): the QoS class backfilled (old kubelets dropped it),
    the DRA status fields kept when a client left them out (an empty list still clears one), and observedGeneration
    kept, on the status and per condition type, where the writer set none."""
    status = new.get("status")
    old_status = old.get("status") or {}
    if not isinstance(status, dict):
        status = new["status"] = {}
    if not status.get("qosClass") and old_status.get("qosClass"):
        status["qosClass"] = old_status["qosClass"]
    for field in ("resourceClaimStatuses", "extendedResourceClaimStatus", "nodeAllocatableResourceClaimStatuses"):
        if status.get(field) is None and old_status.get(field) is not None:
            status[field] = old_status[field]
    if not status.get("observedGeneration") and old_status.get("observedGeneration"):
        status["observedGeneration"] = old_status["observedGeneration"]
    old_generations: dict[str, list] = {}
    for c in _list(old_status.get("conditions")):
        if isinstance(c, dict):
            old_generations.setdefault(c.get("type"), []).append(c.get("observedGeneration") or 0)
    for c in _list(status.get("conditions")):
        if not isinstance(c, dict):
            continue
        gens = old_generations.get(c.get("type")) or []
        gen = gens.pop(0) if gens else 0
        if not c.get("observedGeneration") and gen:
            c["observedGeneration"] = gen
    if not status:
        new.pop("status")
