"""Defaulting and validation as the API server applies them to what dragoman and kubectl write (raw dicts, real messages)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any

from dragoman.fleet.placement import match_label_selector

# ---------------------------------------------------------------- field errors (k8s.io/apimachinery/pkg/util/validation/field)

REQUIRED, INVALID, FORBIDDEN = "FieldValueRequired", "FieldValueInvalid", "FieldValueForbidden"
TOO_LONG, TOO_MANY, NOT_SUPPORTED, DUPLICATE = (
    "FieldValueTooLong",
    "FieldValueTooMany",
    "FieldValueNotSupported",
    "FieldValueDuplicate",
)
_OMIT = object()


def fmt_value(value: Any) -> str:
    """How field.Error prints a bad value: strings quoted (Go %q), numbers and bools bare, objects as JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _err(reason: str, field: str, message: str) -> dict:
    return {"reason": reason, "message": message, "field": field}


def required(field: str, detail: str = "") -> dict:
    return _err(REQUIRED, field, "Required value" + (f": {detail}" if detail else ""))


def invalid(field: str, value: Any, detail: str = "") -> dict:
    body = "Invalid value" if value is _OMIT else f"Invalid value: {fmt_value(value)}"
    return _err(INVALID, field, body + (f": {detail}" if detail else ""))


def forbidden(field: str, detail: str = "") -> dict:
    return _err(FORBIDDEN, field, "Forbidden" + (f": {detail}" if detail else ""))


def too_long(field: str, limit: int) -> dict:
    return _err(TOO_LONG, field, f"Too long: may not be more than {limit} bytes")


def too_many(field: str, actual: int, limit: int) -> dict:
    return _err(TOO_MANY, field, f"Too many: {actual}: must have at most {limit} items")


def not_supported(field: str, value: Any, supported: list[str]) -> dict:
    return _err(
        NOT_SUPPORTED,
        field,
        f"Unsupported value: {fmt_value(value)}: supported values: " + ", ".join(json.dumps(s) for s in supported),
    )


def duplicate(field: str, value: Any) -> dict:
    return _err(DUPLICATE, field, f"Duplicate value: {fmt_value(value)}")


IMMUTABLE = "field is immutable"

# ---------------------------------------------------------------- name and key formats (k8s.io/apimachinery/pkg/util/validation)

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + r"(\." + _DNS1123_LABEL + ")*"
_LABEL_RE = re.compile(f"^{_DNS1123_LABEL}$")
_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN}$")
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_RE = re.compile(f"^{_QUALIFIED_NAME}$")
_LABEL_VALUE_RE = re.compile(f"^({_QUALIFIED_NAME})?$")
_C_IDENTIFIER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CONFIG_KEY_RE = re.compile(r"^[-._a-zA-Z0-9]+$")

LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an "
    "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '" + _DNS1123_LABEL + "')"
)
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'example.com', regex used for validation is '" + _DNS1123_SUBDOMAIN + "')"
)
QUALIFIED_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
    "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '" + _QUALIFIED_NAME + "')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '("
    + _QUALIFIED_NAME
    + ")?')"
)


def dns1123_label_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_RE.match(value):
        errs.append(LABEL_MSG)
    return errs


def dns1123_subdomain_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _SUBDOMAIN_RE.match(value):
        errs.append(SUBDOMAIN_MSG)
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """validation.IsQualifiedName: `[prefix/]name`, prefix a DNS subdomain, name <= 63."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + e for e in dns1123_subdomain_errors(prefix)]
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '"
            + _QUALIFIED_NAME
            + "') with an "
            "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if name and not _QUALIFIED_RE.match(name):
        errs.append(QUALIFIED_MSG)
    return errs


def label_value_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RE.match(value):
        errs.append(LABEL_VALUE_MSG)
    return errs


def path_segment_errors(value: str) -> list[str]:
    """path.IsValidPathSegmentName, the RBAC object name rule."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    for bad in ("/", "%"):
        if bad in value:
            return [f"may not contain '{bad}'"]
    return []


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: domain-prefixed, not kubernetes.io, not `requests.`, valid as `requests.<name>`."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


# ---------------------------------------------------------------- defaulting

_GRACE = 30


def _default_container(c: dict) -> None:
    image = c.get("image") or ""
    if "imagePullPolicy" not in c:
        last = image.rsplit("/", 1)[-1]
        tag = last.split("@", 1)[0].split(":", 1)[1] if ":" in last.split("@", 1)[0] else ""
        c["imagePullPolicy"] = "IfNotPresent" if ("@" in last or (tag and tag != "latest")) else "Always"
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    resources = c.setdefault("resources", {})
    limits = resources.get("limits") or {}
    if limits:
        requests = resources.setdefault("requests", {})
        for name, value in limits.items():
            requests.setdefault(name, value)
    for port in c.get("ports") or []:
        port.setdefault("protocol", "TCP")
    for env in c.get("env") or []:
        ref = (env.get("valueFrom") or {}).get("fieldRef")
        if ref is not None:
            ref.setdefault("apiVersion", "v1")


def default_pod_spec(spec: dict) -> None:
    """SetDefaults_PodSpec and the container defaults (core/v1 defaults.go)."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", _GRACE)
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            _default_container(c)
    for volume in spec.get("volumes") or []:
        sources = [k for k in volume if k != "name"]
        if not sources:
            volume["emptyDir"] = {}
        for key in ("configMap", "secret"):
            if isinstance(volume.get(key), dict):
                volume[key].setdefault("defaultMode", 420)
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


_NOT_READY = {
    "key": "node.kubernetes.io/not-ready",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}
_UNREACHABLE = {
    "key": "node.kubernetes.io/unreachable",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}


def _default_pod(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    default_pod_spec(spec)
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    # DefaultTolerationSeconds admission: tolerate not-ready/unreachable for 300 s unless the pod says otherwise.
    tolerations = spec.get("tolerations") or []
    for default in (_NOT_READY, _UNREACHABLE):
        if not any(t.get("key") == default["key"] and t.get("effect") in (None, "", "NoExecute") for t in tolerations):
            tolerations.append(dict(default))
    spec["tolerations"] = tolerations
    status = obj.setdefault("status", {})
    status.setdefault("phase", "Pending")
    status.setdefault("qosClass", _qos_class(spec))


def _default_template(obj: dict) -> None:
    template = (obj.get("spec") or {}).get("template")
    if isinstance(template, dict):
        default_pod_spec(template.setdefault("spec", {}))


def _default_deployment(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _default_template(obj)


def _default_daemonset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _default_template(obj)


def _default_replicaset(obj: dict) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _default_template(obj)


def _default_statefulset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
    _default_template(obj)


def _default_job(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    _default_template(obj)


def _default_cronjob(obj: dict) -> None:
    """SetDefaults_CronJob; the job template is not Job-defaulted, only its pod template (as the generated
    defaulters walk every PodSpec)."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job = spec.get("jobTemplate")
    if isinstance(job, dict) and isinstance(job.get("spec"), dict):
        _default_template(job)


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
    name = (obj.get("metadata") or {}).get("name")
    if name:
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    obj.setdefault("status", {}).setdefault("phase", "Active")


def _default_device_requests(devices: dict) -> None:
    def one(req: dict) -> None:
        req.setdefault("allocationMode", "ExactCount")
        if req["allocationMode"] == "ExactCount":
            req.setdefault("count", 1)
        for tol in req.get("tolerations") or []:
            tol.setdefault("operator", "Equal")

    for request in devices.get("requests") or []:
        if isinstance(request.get("exactly"), dict):
            one(request["exactly"])
        for sub in request.get("firstAvailable") or []:
            if isinstance(sub, dict):
                one(sub)


def _default_claim(obj: dict) -> None:
    devices = (obj.get("spec") or {}).get("devices")
    if isinstance(devices, dict):
        _default_device_requests(devices)


def _default_claim_template(obj: dict) -> None:
    devices = ((obj.get("spec") or {}).get("spec") or {}).get("devices")
    if isinstance(devices, dict):
        _default_device_requests(devices)


def _default_binding_subjects(obj: dict) -> None:
    for subject in obj.get("subjects") or []:
        if "apiGroup" not in subject:
            subject["apiGroup"] = "" if subject.get("kind") == "ServiceAccount" else "rbac.authorization.k8s.io"
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = "rbac.authorization.k8s.io"


_DEFAULTERS: dict[str, Callable[[dict], None]] = {
    "pods": _default_pod,
    "deployments": _default_deployment,
    "daemonsets": _default_daemonset,
    "replicasets": _default_replicaset,
    "statefulsets": _default_statefulset,
    "jobs": _default_job,
    "cronjobs": _default_cronjob,
    "namespaces": _default_namespace,
    "nodes": _default_node,
    "secrets": _default_secret,
    "services": _default_service,
    "resourceclaims": _default_claim,
    "resourceclaimtemplates": _default_claim_template,
    "rolebindings": _default_binding_subjects,
    "clusterrolebindings": _default_binding_subjects,
}


def default_object(resource: str, obj: dict) -> None:
    """Apply the API server's defaults (and defaulting admission) for `resource` to `obj`, in place."""
    if not isinstance(obj, dict):
        return
    defaulter = _DEFAULTERS.get(resource)
    if defaulter is not None:
        defaulter(obj)


# ---------------------------------------------------------------- validation

CLUSTER_SCOPED = {
    "namespaces",
    "nodes",
    "clusterroles",
    "clusterrolebindings",
    "deviceclasses",
    "resourceslices",
    "devicetaintrules",
    "selfsubjectaccessreviews",
    "customresourcedefinitions",
}
_LABEL_NAMED = {"namespaces"}
_PATH_SEGMENT_NAMED = {"roles", "clusterroles", "rolebindings", "clusterrolebindings"}


def _meta_errors(resource: str, obj: dict) -> list[dict]:
    errs: list[dict] = []
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return [required("metadata", "")]
    name = meta.get("name") or ""
    if not name and not meta.get("generateName"):
        errs.append(required("metadata.name", "name or generateName is required"))
    elif name:
        if resource in _LABEL_NAMED:
            problems = dns1123_label_errors(name)
        elif resource in _PATH_SEGMENT_NAMED:
            problems = path_segment_errors(name)
        elif resource == "events":
            problems = []
        else:
            problems = dns1123_subdomain_errors(name)
        errs += [invalid("metadata.name", name, p) for p in problems]
    if resource in CLUSTER_SCOPED and meta.get("namespace"):
        errs.append(forbidden("metadata.namespace", "not allowed on this type"))
    labels = meta.get("labels") or {}
    if not isinstance(labels, dict):
        errs.append(invalid("metadata.labels", labels, "must be a map of strings"))
        labels = {}
    for key, value in labels.items():
        errs += [invalid("metadata.labels", key, p) for p in qualified_name_errors(key)]
        if not isinstance(value, str):
            errs.append(invalid("metadata.labels", value, "must be a string"))
        else:
            errs += [invalid("metadata.labels", value, p) for p in label_value_errors(value)]
    annotations = meta.get("annotations") or {}
    total = 0
    for key, value in annotations.items() if isinstance(annotations, dict) else []:
        errs += [invalid("metadata.annotations", key, p) for p in qualified_name_errors(key.lower())]
        total += len(key) + len(value if isinstance(value, str) else "")
    if total > 256 * 1024:
        errs.append(too_long("metadata.annotations", 256 * 1024))
    for i, finalizer in enumerate(meta.get("finalizers") or []):
        if not isinstance(finalizer, str) or qualified_name_errors(finalizer):
            errs.append(
                invalid(
                    f"metadata.finalizers[{i}]",
                    finalizer,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return errs


def _meta_update_errors(obj: dict, old: dict) -> list[dict]:
    errs = []
    meta, old_meta = obj.get("metadata") or {}, old.get("metadata") or {}
    for key in ("name", "namespace", "uid"):
        if old_meta.get(key) and meta.get(key) and meta.get(key) != old_meta.get(key):
            errs.append(invalid(f"metadata.{key}", meta.get(key), IMMUTABLE))
    if old_meta.get("deletionTimestamp"):
        added = set(meta.get("finalizers") or []) - set(old_meta.get("finalizers") or [])
        if added:
            errs.append(
                forbidden(
                    "metadata.finalizers",
                    f"no new finalizers can be added if the object is being deleted, found new finalizers []string{{{', '.join(json.dumps(a) for a in sorted(added))}}}",
                )
            )
    return errs


# --- CEL selectors (pkg/apis/resource/validation) -------------------------------------------------------

CEL_MAX_LENGTH = 10 * 1024
MAX_SELECTORS = 32
MAX_CONFIG = 32
MAX_REQUESTS = 32
MAX_SUBREQUESTS = 8
MAX_CONSTRAINTS = 32
MAX_DEVICES = 128
MAX_DEVICES_WITH_EXTRAS = 64
MAX_ATTRIBUTES_AND_CAPACITY = 32
MAX_DRIVER_NAME = 63
MAX_POOL_NAME = 253


@functools.lru_cache(maxsize=4096)
def _compile_result(expression: str) -> tuple[str, str, str] | None:
    """None when the expression compiles; else (kind, detail, reason) with the real API server's detail text."""
    try:
        from dragoman.fleet.cel import CelCompileError, compile_expression
    except ImportError:  # the CEL engine is optional for the server; without it, selectors are not checked
        return None
    try:
        compile_expression(expression)
    except CelCompileError as err:
        kind = getattr(err, "kind", "syntax")
        if kind == "too-long":
            return ("too-long", "", "")
        if kind == "cost":
            return ("cost", "too complex, exceeds cost limit", "")
        if kind == "unsupported":
            # The house engine lacks something cel-go has; the real server would accept it.
            return None
        if kind == "non-bool":
            return ("invalid", err.message, "")
        line, column = getattr(err, "line", None), getattr(err, "column", None)
        if line is not None:
            caret = err.caret(expression) if hasattr(err, "caret") else ""
            detail = f"compilation failed: ERROR: <input>:{line}:{column}: {err.message}" + (
                f"\n{caret}" if caret else ""
            )
        else:
            detail = f"compilation failed: ERROR: <input>:1:1: {err.message}"
        return ("invalid", detail, "")
    except Exception:  # noqa: BLE001 - an engine crash must not take the API server down
        return None
    return None


def _cel_selector_errors(selector: Any, path: str) -> list[dict]:
    if not isinstance(selector, dict) or not isinstance(selector.get("cel"), dict):
        return [required(f"{path}.cel", "")]
    expression = selector["cel"].get("expression")
    field = f"{path}.cel.expression"
    if not isinstance(expression, str) or expression == "":
        return [required(field, "")]
    if len(expression) > CEL_MAX_LENGTH:
        return [too_long(field, CEL_MAX_LENGTH)]
    result = _compile_result(expression)
    if result is None:
        return []
    kind, detail, _ = result
    if kind == "too-long":
        return [too_long(field, CEL_MAX_LENGTH)]
    if kind == "cost":
        return [forbidden(field, detail)]
    return [invalid(field, expression, detail)]


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _selectors_errors(selectors: Any, path: str, skip_compile: bool = False) -> list[dict]:
    items = _list(selectors)
    errs: list[dict] = []
    if len(items) > MAX_SELECTORS:
        errs.append(too_many(path, len(items), MAX_SELECTORS))
    if skip_compile:
        return errs
    for i, selector in enumerate(items):
        errs += _cel_selector_errors(selector, f"{path}[{i}]")
    return errs


def _driver_name_errors(driver: Any, path: str) -> list[dict]:
    if not driver:
        return [required(path, "")]
    errs = []
    if len(driver) > MAX_DRIVER_NAME:
        errs.append(too_long(path, MAX_DRIVER_NAME))
    errs += [invalid(path, driver, p) for p in dns1123_subdomain_errors(driver.lower()) if "253" not in p]
    return errs


def _opaque_config_errors(configs: Any, path: str, request_names: set[str] | None) -> list[dict]:
    items = _list(configs)
    errs: list[dict] = []
    if len(items) > MAX_CONFIG:
        errs.append(too_many(path, len(items), MAX_CONFIG))
    for i, config in enumerate(items):
        p = f"{path}[{i}]"
        if request_names is not None:
            for j, name in enumerate(_list((config or {}).get("requests"))):
                if name not in request_names:
                    errs.append(
                        invalid(
                            f"{p}.requests[{j}]",
                            name,
                            "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
                        )
                    )
        opaque = (config or {}).get("opaque")
        if not isinstance(opaque, dict):
            errs.append(required(f"{p}.opaque", ""))
            continue
        errs += _driver_name_errors(opaque.get("driver"), f"{p}.opaque.driver")
        params = opaque.get("parameters")
        if params is None:
            errs.append(required(f"{p}.opaque.parameters", ""))
        elif not isinstance(params, dict):
            errs.append(invalid(f"{p}.opaque.parameters", "<value omitted>", "parameters must be a valid JSON object"))
    return errs


def _device_class_errors(obj: dict, old: dict | None) -> list[dict]:
    spec = obj.get("spec") or {}
    old_spec = (old or {}).get("spec") or {}
    errs = _selectors_errors(
        spec.get("selectors"),
        "spec.selectors",
        skip_compile=old is not None and spec.get("selectors") == old_spec.get("selectors"),
    )
    errs += _opaque_config_errors(spec.get("config"), "spec.config", None)
    ern = spec.get("extendedResourceName")
    if ern is not None and not (isinstance(ern, str) and is_extended_resource_name(ern)):
        errs.append(invalid("spec.extendedResourceName", ern, "must be a valid extended resource name"))
    return errs


def _request_name_errors(name: Any, path: str) -> list[dict]:
    if not name:
        return [required(path, "")]
    return [invalid(path, name, p) for p in dns1123_label_errors(name)]


def _allocation_errors(req: dict, path: str) -> list[dict]:
    mode = req.get("allocationMode", "ExactCount")
    count = req.get("count", 0 if mode == "All" else 1)
    if mode == "All":
        if count:
            return [invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'")]
        return []
    if mode == "ExactCount":
        if not isinstance(count, int) or count <= 0:
            return [invalid(f"{path}.count", count, "must be greater than zero")]
        return []
    return [not_supported(f"{path}.allocationMode", mode, ["All", "ExactCount"])]


def _toleration_errors(tolerations: Any, path: str) -> list[dict]:
    errs = []
    for i, tol in enumerate(_list(tolerations)):
        p = f"{path}[{i}]"
        op = (tol or {}).get("operator", "Equal")
        if op not in ("Exists", "Equal"):
            errs.append(not_supported(f"{p}.operator", op, ["Equal", "Exists"]))
        if op == "Exists" and (tol or {}).get("value"):
            errs.append(
                invalid(f"{p}.operator", (tol or {}).get("value"), "value must be empty when `operator` is 'Exists'")
            )
        effect = (tol or {}).get("effect")
        if effect and effect not in ("NoSchedule", "NoExecute", "None"):
            errs.append(not_supported(f"{p}.effect", effect, ["NoExecute", "NoSchedule", "None"]))
    return errs


def _exact_request_errors(req: Any, path: str, skip_compile: bool) -> list[dict]:
    if not isinstance(req, dict):
        return [invalid(path, req, "must be an object")]
    errs: list[dict] = []
    dcn = req.get("deviceClassName")
    if not dcn:
        errs.append(required(f"{path}.deviceClassName", ""))
    else:
        errs += [invalid(f"{path}.deviceClassName", dcn, p) for p in dns1123_subdomain_errors(dcn)]
    errs += _selectors_errors(req.get("selectors"), f"{path}.selectors", skip_compile)
    errs += _allocation_errors(req, path)
    errs += _toleration_errors(req.get("tolerations"), f"{path}.tolerations")
    return errs


def _device_claim_errors(devices: Any, path: str, skip_compile: bool = False) -> list[dict]:
    if devices is None:
        return []
    if not isinstance(devices, dict):
        return [invalid(path, devices, "must be an object")]
    errs: list[dict] = []
    requests = _list(devices.get("requests"))
    if len(requests) > MAX_REQUESTS:
        errs.append(too_many(f"{path}.requests", len(requests), MAX_REQUESTS))
    names: set[str] = set()
    for i, request in enumerate(requests):
        p = f"{path}.requests[{i}]"
        request = request if isinstance(request, dict) else {}
        name = request.get("name")
        errs += _request_name_errors(name, f"{p}.name")
        if name in names:
            errs.append(duplicate(p, name))
        exactly, first = request.get("exactly"), _list(request.get("firstAvailable"))
        if exactly is None and not first:
            errs.append(required(p, "exactly one of `exactly` or `firstAvailable` is required"))
        elif exactly is not None and first:
            errs.append(
                invalid(
                    p, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"
                )
            )
        elif exactly is not None:
            errs += _exact_request_errors(exactly, f"{p}.exactly", skip_compile)
        else:
            if len(first) > MAX_SUBREQUESTS:
                errs.append(too_many(f"{p}.firstAvailable", len(first), MAX_SUBREQUESTS))
            sub_names: set[str] = set()
            for j, sub in enumerate(first):
                sp = f"{p}.firstAvailable[{j}]"
                sub = sub if isinstance(sub, dict) else {}
                errs += _request_name_errors(sub.get("name"), f"{sp}.name")
                if sub.get("name") in sub_names:
                    errs.append(duplicate(sp, sub.get("name")))
                sub_names.add(sub.get("name"))
                names.add(f"{name}/{sub.get('name')}")
                errs += _exact_request_errors(sub, sp, skip_compile)
        names.add(name)
    constraints = _list(devices.get("constraints"))
    if len(constraints) > MAX_CONSTRAINTS:
        errs.append(too_many(f"{path}.constraints", len(constraints), MAX_CONSTRAINTS))
    for i, constraint in enumerate(constraints):
        p = f"{path}.constraints[{i}]"
        constraint = constraint if isinstance(constraint, dict) else {}
        for j, ref in enumerate(_list(constraint.get("requests"))):
            if ref not in names:
                errs.append(
                    invalid(
                        f"{p}.requests[{j}]",
                        ref,
                        "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
                    )
                )
        attr = constraint.get("matchAttribute") or constraint.get("distinctAttribute")
        key = "matchAttribute" if constraint.get("matchAttribute") else "distinctAttribute"
        if not attr:
            errs.append(required(f"{p}.matchAttribute", ""))
        elif "/" not in attr:
            errs.append(invalid(f"{p}.{key}", attr, "must include a domain"))
    errs += _opaque_config_errors(devices.get("config"), f"{path}.config", names)
    return errs


def _claim_errors(obj: dict, old: dict | None) -> list[dict]:
    spec = obj.get("spec")
    if old is not None:
        if spec != old.get("spec"):
            return [invalid("spec", spec, IMMUTABLE)]
        return []
    if not isinstance(spec, dict):
        return [required("spec", "")]
    return _device_claim_errors(spec.get("devices"), "spec.devices")


def _claim_template_errors(obj: dict, old: dict | None) -> list[dict]:
    spec = obj.get("spec")
    if old is not None:
        if spec != old.get("spec"):
            return [invalid("spec", spec, IMMUTABLE)]
        return []
    if not isinstance(spec, dict):
        return [required("spec", "")]
    errs: list[dict] = []
    template_meta = spec.get("metadata") or {}
    for key, value in (template_meta.get("labels") or {}).items():
        errs += [invalid("spec.metadata.labels", key, p) for p in qualified_name_errors(key)]
        errs += [invalid("spec.metadata.labels", value, p) for p in label_value_errors(str(value))]
    errs += _device_claim_errors((spec.get("spec") or {}).get("devices"), "spec.spec.devices")
    return errs


_ATTRIBUTE_TYPES = ("bool", "int", "string", "version", "bools", "ints", "strings", "versions")
_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


def _qualified_attribute_errors(name: str, path: str) -> list[dict]:
    # Fleets repeat the same few attribute names on every device: check each name once.
    problems = _attribute_name_problems(name)
    return [dict(p, field=path) for p in problems]


@functools.lru_cache(maxsize=4096)
def _attribute_name_problems(name: str) -> tuple[dict, ...]:
    return tuple(_qualified_attribute_errors_uncached(name, ""))


def _qualified_attribute_errors_uncached(name: str, path: str) -> list[dict]:
    errs = []
    if "/" in name:
        domain, ident = name.split("/", 1)
        if len(domain) > 63:
            errs.append(too_long(path, 63))
        errs += [invalid(path, domain, p) for p in dns1123_subdomain_errors(domain) if "253" not in p]
    else:
        ident = name
    if not ident:
        errs.append(required(path, "the identifier part is required"))
    elif len(ident) > 32:
        errs.append(too_long(path, 32))
    elif not _C_IDENTIFIER_RE.match(ident):
        errs.append(
            invalid(
                path,
                ident,
                "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')",
            )
        )
    return errs


def _device_errors(device: Any, path: str) -> list[dict]:
    if not isinstance(device, dict):
        return [invalid(path, device, "must be an object")]
    errs: list[dict] = []
    name = device.get("name")
    if not name:
        errs.append(required(f"{path}.name", ""))
    else:
        errs += [invalid(f"{path}.name", name, p) for p in dns1123_label_errors(name)]
    attributes = device.get("attributes") or {}
    capacity = device.get("capacity") or {}
    for key, value in attributes.items():
        p = f"{path}.attributes[{json.dumps(key)}]"
        errs += _qualified_attribute_errors(key, p)
        present = [t for t in _ATTRIBUTE_TYPES if isinstance(value, dict) and t in value]
        if len(present) != 1:
            detail = "exactly one value must be specified" if present else "exactly one value must be specified"
            errs.append(invalid(p, value, detail))
            continue
        kind = present[0]
        v = value[kind]
        if kind == "string" and isinstance(v, str) and len(v) > 64:
            errs.append(too_long(f"{p}.string", 64))
        if kind == "version" and (not isinstance(v, str) or not _SEMVER_RE.match(v)):
            errs.append(invalid(f"{p}.version", v, "must be a string compatible with semver.org spec 2.0.0"))
        if kind == "version" and isinstance(v, str) and len(v) > 64:
            errs.append(too_long(f"{p}.version", 64))
    for key in capacity:
        errs += _qualified_attribute_errors(key, f"{path}.capacity[{json.dumps(key)}]")
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITY:
        errs.append(
            too_many(path, len(attributes) + len(capacity), MAX_ATTRIBUTES_AND_CAPACITY)
            | {
                "message": f"Too many: {len(attributes) + len(capacity)}: must have at most {MAX_ATTRIBUTES_AND_CAPACITY} attributes and capacities combined"
            }
        )
    taints = _list(device.get("taints"))
    if len(taints) > 16:
        errs.append(too_many(f"{path}.taints", len(taints), 16))
    for i, taint in enumerate(taints):
        effect = (taint or {}).get("effect")
        if effect not in ("NoSchedule", "NoExecute", "None"):
            errs.append(not_supported(f"{path}.taints[{i}].effect", effect, ["NoExecute", "NoSchedule", "None"]))
        if not (taint or {}).get("key"):
            errs.append(required(f"{path}.taints[{i}].key", ""))
    return errs


def _slice_errors(obj: dict, old: dict | None) -> list[dict]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [required("spec", "")]
    errs = _driver_name_errors(spec.get("driver"), "spec.driver")
    pool = spec.get("pool")
    if not isinstance(pool, dict):
        errs.append(required("spec.pool", ""))
        pool = {}
    else:
        pname = pool.get("name")
        if not pname:
            errs.append(required("spec.pool.name", ""))
        else:
            if len(pname) > MAX_POOL_NAME:
                errs.append(too_long("spec.pool.name", MAX_POOL_NAME))
            for part in pname.split("/"):
                errs += [invalid("spec.pool.name", part, p) for p in dns1123_subdomain_errors(part)]
        if not isinstance(pool.get("generation", 0), int) or pool.get("generation", 0) < 0:
            errs.append(invalid("spec.pool.generation", pool.get("generation"), "must be greater than or equal to 0"))
        count = pool.get("resourceSliceCount")
        if not isinstance(count, int) or count <= 0:
            errs.append(
                invalid("spec.pool.resourceSliceCount", count if count is not None else 0, "must be greater than zero")
            )
    selection = [
        k
        for k in ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")
        if spec.get(k) not in (None, "", False)
    ]
    if not selection:
        errs.append(
            required(
                "spec", "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
            )
        )
    elif len(selection) > 1:
        errs.append(
            invalid(
                "spec",
                "{" + ", ".join(f"`{s}`" for s in selection) + "}",
                "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set",
            )
        )
    if spec.get("nodeName"):
        errs += [invalid("spec.nodeName", spec["nodeName"], p) for p in dns1123_subdomain_errors(spec["nodeName"])]
    devices = _list(spec.get("devices"))
    counters = _list(spec.get("sharedCounters"))
    if devices and counters:
        errs.append(invalid("spec", None, "only one of `devices` or `sharedCounters` may be set"))
    extras = any(isinstance(d, dict) and (d.get("taints") or d.get("consumesCounters")) for d in devices)
    limit = MAX_DEVICES_WITH_EXTRAS if extras else MAX_DEVICES
    if len(devices) > limit:
        errs.append(too_many("spec.devices", len(devices), limit))
    seen: set[str] = set()
    for i, device in enumerate(devices):
        errs += _device_errors(device, f"spec.devices[{i}]")
        name = device.get("name") if isinstance(device, dict) else None
        if name in seen:
            errs.append(duplicate(f"spec.devices[{i}].name", name))
        seen.add(name)
    if len(counters) > 8:
        errs.append(too_many("spec.sharedCounters", len(counters), 8))
    if old is not None:
        old_spec = old.get("spec") or {}
        for key, path in (("driver", "spec.driver"), ("nodeName", "spec.nodeName")):
            if spec.get(key) != old_spec.get(key):
                errs.append(invalid(path, spec.get(key), IMMUTABLE))
        if (pool or {}).get("name") != (old_spec.get("pool") or {}).get("name"):
            errs.append(invalid("spec.pool.name", (pool or {}).get("name"), IMMUTABLE))
    return errs


def _device_taint_rule_errors(obj: dict, old: dict | None) -> list[dict]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [required("spec", "")]
    errs: list[dict] = []
    taint = spec.get("taint")
    if not isinstance(taint, dict):
        errs.append(required("spec.taint", ""))
    else:
        if not taint.get("key"):
            errs.append(required("spec.taint.key", ""))
        if taint.get("effect") not in ("NoSchedule", "NoExecute", "None"):
            errs.append(not_supported("spec.taint.effect", taint.get("effect"), ["NoExecute", "NoSchedule", "None"]))
    return errs


# --- core kinds -------------------------------------------------------------------------------------------

_RESTART_POLICIES = ["Always", "OnFailure", "Never"]


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
                if name in values and not re.fullmatch(r"\d+", str(values[name])):
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


def _pod_errors(obj: dict, old: dict | None) -> list[dict]:
    errs = pod_spec_errors(obj.get("spec"), "spec")
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


def _workload_errors(kind: str, restart: list[str]) -> Callable[[dict, dict | None], list[dict]]:
    def check(obj: dict, old: dict | None) -> list[dict]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec", "")]
        errs: list[dict] = []
        selector = spec.get("selector")
        template = spec.get("template")
        if kind != "Job" or selector is not None:
            if not isinstance(selector, dict) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
                errs.append(required("spec.selector", ""))
        if not isinstance(template, dict):
            errs.append(required("spec.template", ""))
            return errs
        labels = (template.get("metadata") or {}).get("labels") or {}
        if (
            isinstance(selector, dict)
            and (selector.get("matchLabels") or selector.get("matchExpressions"))
            and not match_label_selector(selector, labels)
        ):
            errs.append(invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
        errs += pod_spec_errors(template.get("spec"), "spec.template.spec", restart)
        for key in (
            "replicas",
            "revisionHistoryLimit",
            "minReadySeconds",
            "parallelism",
            "completions",
            "backoffLimit",
        ):
            value = spec.get(key)
            if value is not None and (not isinstance(value, int) or value < 0):
                errs.append(invalid(f"spec.{key}", value, "must be greater than or equal to 0"))
        if old is not None and kind != "Job":
            if spec.get("selector") != (old.get("spec") or {}).get("selector"):
                errs.append(invalid("spec.selector", spec.get("selector"), IMMUTABLE))
        if old is not None and kind == "Job":
            old_spec = old.get("spec") or {}
            if spec.get("completions") != old_spec.get("completions") and old_spec.get("completionMode") != "Indexed":
                errs.append(invalid("spec.completions", spec.get("completions"), IMMUTABLE))
            if spec.get("selector") != old_spec.get("selector"):
                errs.append(invalid("spec.selector", spec.get("selector"), IMMUTABLE))
        return errs

    return check


def _pdb_errors(obj: dict, old: dict | None) -> list[dict]:
    spec = obj.get("spec") or {}
    errs: list[dict] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set"))
    for key in ("minAvailable", "maxUnavailable"):
        value = spec.get(key)
        if isinstance(value, int) and value < 0:
            errs.append(invalid(f"spec.{key}", value, "must be greater than or equal to 0"))
        elif isinstance(value, str):
            m = re.fullmatch(r"(\d+)%", value)
            if not m:
                errs.append(
                    invalid(
                        f"spec.{key}",
                        value,
                        "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                    )
                )
            elif int(m.group(1)) > 100:
                errs.append(invalid(f"spec.{key}", value, "must not be greater than 100%"))
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
                    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
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


def _lease_errors(obj: dict, old: dict | None) -> list[dict]:
    spec = obj.get("spec") or {}
    errs = []
    for key in ("leaseDurationSeconds", "leaseTransitions"):
        value = spec.get(key)
        if value is not None and (not isinstance(value, int) or value < (1 if key == "leaseDurationSeconds" else 0)):
            errs.append(
                invalid(
                    f"spec.{key}",
                    value,
                    "must be greater than 0" if key == "leaseDurationSeconds" else "must be greater than or equal to 0",
                )
            )
    return errs


def _event_errors(obj: dict, old: dict | None) -> list[dict]:
    involved = obj.get("involvedObject") or {}
    ns = (obj.get("metadata") or {}).get("namespace", "")
    errs = []
    if involved.get("namespace") and ns and involved["namespace"] != ns:
        errs.append(invalid("involvedObject.namespace", involved["namespace"], "does not match event.namespace"))
    event_type = obj.get("type")
    if event_type and event_type not in ("Normal", "Warning"):
        errs.append(not_supported("type", event_type, ["Normal", "Warning"]))
    return errs


def _quota_errors(obj: dict, old: dict | None) -> list[dict]:
    errs = []
    for name in (obj.get("spec") or {}).get("hard") or {}:
        errs += [invalid(f"spec.hard[{name}]", name, p) for p in qualified_name_errors(name)]
    return errs


def _rule_errors(rules: Any, path: str, namespaced: bool) -> list[dict]:
    errs: list[dict] = []
    for i, rule in enumerate(_list(rules)):
        p = f"{path}[{i}]"
        rule = rule if isinstance(rule, dict) else {}
        if not rule.get("verbs"):
            errs.append(required(f"{p}.verbs", "verbs must contain at least one value"))
        if rule.get("nonResourceURLs"):
            if namespaced:
                errs.append(
                    invalid(
                        f"{p}.nonResourceURLs",
                        rule["nonResourceURLs"],
                        "namespaced rules cannot apply to non-resource URLs",
                    )
                )
            if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                errs.append(
                    invalid(
                        f"{p}.nonResourceURLs",
                        rule["nonResourceURLs"],
                        "rules cannot apply to both regular resources and non-resource URLs",
                    )
                )
            continue
        if not rule.get("apiGroups"):
            errs.append(required(f"{p}.apiGroups", "resource rules must supply at least one api group"))
        if not rule.get("resources"):
            errs.append(required(f"{p}.resources", "resource rules must supply at least one resource"))
    return errs


def _role_errors(namespaced: bool) -> Callable[[dict, dict | None], list[dict]]:
    def check(obj: dict, old: dict | None) -> list[dict]:
        return _rule_errors(obj.get("rules"), "rules", namespaced)

    return check


def _binding_errors(cluster: bool) -> Callable[[dict, dict | None], list[dict]]:
    def check(obj: dict, old: dict | None) -> list[dict]:
        errs: list[dict] = []
        ref = obj.get("roleRef")
        if not isinstance(ref, dict):
            return [required("roleRef", "")]
        kinds = ["ClusterRole"] if cluster else ["Role", "ClusterRole"]
        if ref.get("kind") not in kinds:
            errs.append(not_supported("roleRef.kind", ref.get("kind"), kinds))
        if ref.get("apiGroup") not in (None, "", "rbac.authorization.k8s.io"):
            errs.append(not_supported("roleRef.apiGroup", ref.get("apiGroup"), ["rbac.authorization.k8s.io"]))
        if not ref.get("name"):
            errs.append(required("roleRef.name", ""))
        for i, subject in enumerate(_list(obj.get("subjects"))):
            p = f"subjects[{i}]"
            subject = subject if isinstance(subject, dict) else {}
            kind = subject.get("kind")
            if kind not in ("ServiceAccount", "User", "Group"):
                errs.append(not_supported(f"{p}.kind", kind, ["ServiceAccount", "User", "Group"]))
            if not subject.get("name"):
                errs.append(required(f"{p}.name", ""))
            if kind == "ServiceAccount":
                if subject.get("apiGroup"):
                    errs.append(not_supported(f"{p}.apiGroup", subject.get("apiGroup"), [""]))
                if cluster and not subject.get("namespace"):
                    errs.append(required(f"{p}.namespace", ""))
            elif kind in ("User", "Group") and subject.get("apiGroup") not in (None, "rbac.authorization.k8s.io"):
                errs.append(not_supported(f"{p}.apiGroup", subject.get("apiGroup"), ["rbac.authorization.k8s.io"]))
        if old is not None and (old.get("roleRef") or {}) != ref:
            old_ref = dict(old.get("roleRef") or {})
            new_ref = dict(ref)
            old_ref.setdefault("apiGroup", "rbac.authorization.k8s.io")
            new_ref.setdefault("apiGroup", "rbac.authorization.k8s.io")
            if old_ref != new_ref:
                errs.append(invalid("roleRef", ref, "cannot change roleRef"))
        return errs

    return check


_VALIDATORS: dict[str, Callable[[dict, dict | None], list[dict]]] = {
    "pods": _pod_errors,
    "nodes": _node_errors,
    "namespaces": _namespace_errors,
    "events": _event_errors,
    "configmaps": _configmap_errors,
    "resourcequotas": _quota_errors,
    "deployments": _workload_errors("Deployment", ["Always"]),
    "daemonsets": _workload_errors("DaemonSet", ["Always"]),
    "replicasets": _workload_errors("ReplicaSet", ["Always"]),
    "statefulsets": _workload_errors("StatefulSet", ["Always"]),
    "jobs": _workload_errors("Job", ["OnFailure", "Never"]),
    "poddisruptionbudgets": _pdb_errors,
    "leases": _lease_errors,
    "roles": _role_errors(True),
    "clusterroles": _role_errors(False),
    "rolebindings": _binding_errors(False),
    "clusterrolebindings": _binding_errors(True),
    "deviceclasses": _device_class_errors,
    "resourceclaims": _claim_errors,
    "resourceclaimtemplates": _claim_template_errors,
    "resourceslices": _slice_errors,
    "devicetaintrules": _device_taint_rule_errors,
}


def validate_object(resource: str, obj: dict, old: dict | None) -> list[dict]:
    """Causes ([{reason, message, field}]) the API server would reject `obj` with; [] when it is valid.

    `old` is the stored object on update (immutability rules apply), None on create. resourceVersion
    rules are the store's. Unknown resources only get metadata checks.
    """
    if not isinstance(obj, dict):
        return [invalid("", obj, "must be an object")]
    errs = _meta_errors(resource, obj)
    if old is not None:
        errs += _meta_update_errors(obj, old)
    check = _VALIDATORS.get(resource)
    if check is not None:
        try:
            errs += check(obj, old)
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            # A shape the checks did not foresee: reject it as invalid rather than crash the server.
            errs.append(invalid("", "<object>", f"malformed object: {exc}"))
    return errs
