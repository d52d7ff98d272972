"""resource.k8s.io (DRA): defaulting of ResourceClaims and templates, and validation of DeviceClasses, claims,
templates, ResourceSlices and DeviceTaintRules, CEL selectors included (pkg/apis/resource/validation)."""

from __future__ import annotations

import functools
import json
import logging
import re
from typing import Any

from dragoman.fleet.k8s.extended import extended_resource_name_errors
from dragoman.sim.api.validation.fields import (
    _C_IDENTIFIER_RE,
    IMMUTABLE,
    _list,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    duplicate,
    forbidden,
    internal,
    invalid,
    label_value_errors,
    not_supported,
    qualified_name_errors,
    required,
    too_long,
    too_many,
)

log = logging.getLogger(__name__)


def _default_device_requests(devices: dict) -> None:
    def one(req: dict) -> None:
        # SetDefaults_ExactDeviceRequest: count is an int64 with omitempty, so 0 is "not set" and becomes 1.
        if not req.get("allocationMode"):
            req["allocationMode"] = "ExactCount"
        if req["allocationMode"] == "ExactCount" and not req.get("count"):
            req["count"] = 1
        for tol in req.get("tolerations") or []:
            if not tol.get("operator"):
                tol["operator"] = "Equal"

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


def _default_taint_time(taint: Any, now: str) -> None:
    # SetDefaults_DeviceTaint: a taint without timeAdded was added now (truncated to the second).
    if isinstance(taint, dict) and not taint.get("timeAdded"):
        taint["timeAdded"] = now


def _default_slice_taint_times(obj: dict, now: str) -> None:
    for device in _list((obj.get("spec") or {}).get("devices")):
        if isinstance(device, dict):
            for taint in _list(device.get("taints")):
                _default_taint_time(taint, now)


def _default_rule_taint_time(obj: dict, now: str) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        _default_taint_time(spec.get("taint"), now)


def prepare_taint_rule_update(new: dict, old: dict, now: str) -> None:
    """deviceTaintRuleStrategy.PrepareForUpdate: a changed effect with timeAdded left as it was is added now, so the
    toleration of the claims it affects counts from the new effect."""
    taint = (new.get("spec") or {}).get("taint")
    was = (old.get("spec") or {}).get("taint") or {}
    if (
        isinstance(taint, dict)
        and taint.get("effect") != was.get("effect")
        and taint.get("timeAdded") == was.get("timeAdded")
    ):
        taint["timeAdded"] = now


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


MAX_COUNTER_SETS = 8  # resource.ResourceSliceMaxCounterSets
MAX_COUNTERS_PER_SET = 32  # ResourceSliceMaxCountersPerCounterSet, ResourceSliceMaxCountersPerDeviceCounterConsumption
MAX_COUNTER_CONSUMPTIONS = 2  # ResourceSliceMaxDeviceCounterConsumptionsPerDevice


def _short_name_errors(value: str, path: str) -> list[dict]:
    """+k8s:format=k8s-short-name (validate.ShortName: content.IsDNS1123Label, its length in bytes): counter set and
    counter names. kube-apiserver v1.37.2 refuses `memorySlice0`."""
    errs = [m.replace("63 characters", "63 bytes") for m in dns1123_label_errors(value)]
    return [invalid(path, value, m) for m in errs]


def _counters_errors(counters: Any, path: str) -> list[dict]:
    """A counter map (a set's, or what a device consumes of one): required, at most 32, each key a short name (the
    error names the map, not the key: validate.EachMapKey), each value a quantity."""
    if not isinstance(counters, dict) or not counters:
        return [required(path, "")]
    if len(counters) > MAX_COUNTERS_PER_SET:
        return [too_many(path, len(counters), MAX_COUNTERS_PER_SET)]
    errs: list[dict] = []
    for key in counters:
        errs += _short_name_errors(str(key), path)
    return errs


def _counter_set_errors(counter_set: Any, path: str) -> list[dict]:
    """validateCounterSet: a name that is a DNS label, and its counters."""
    if not isinstance(counter_set, dict):
        return [invalid(path, counter_set, "must be an object")]
    name = counter_set.get("name")
    errs = [required(f"{path}.name", "")] if not name else _short_name_errors(str(name), f"{path}.name")
    return errs + _counters_errors(counter_set.get("counters"), f"{path}.counters")


def _counter_consumption_errors(consumption: Any, path: str) -> list[dict]:
    """validateDeviceCounterConsumption: the counter set named as a DNS label, and the counters it takes."""
    if not isinstance(consumption, dict):
        return [invalid(path, consumption, "must be an object")]
    cset = consumption.get("counterSet")
    errs = [required(f"{path}.counterSet", "")] if not cset else _short_name_errors(str(cset), f"{path}.counterSet")
    return errs + _counters_errors(consumption.get("counters"), f"{path}.counters")


@functools.lru_cache(maxsize=4096)
def _compile_result(expression: str) -> tuple[str, str, str] | None:
    """None when the expression compiles; else (kind, detail, reason) with the real API server's detail text."""
    # Imported here: the CEL engine is heavy and only class and claim writes need it. Not optional: a missing
    # dependency (seen: a venv without the ANTLR runtime) must fail the write loudly, not let every selector through.
    from dragoman.fleet.cel import CelCompileError, compile_expression
    from dragoman.fleet.k8s import celenv

    try:
        compile_expression(expression, environment=celenv.WRITTEN)
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
        if kind == "program":
            return ("internal", err.message, "")
        # cel-go's Issues.String(): every error with its location, line and caret, as the API server writes it.
        return ("invalid", f"compilation failed: {err.display(expression)}", "")
    except Exception:  # an engine crash must not take the API server down ...
        # ...but it is a difference from kube-apiserver (which would have answered): say so in the server's log.
        log.exception("CEL engine crashed on a selector; accepted without a check: %r", expression[:200])
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
    if kind == "internal":
        return [internal(field, detail)]
    return [invalid(field, expression, detail)]


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
                            "must be the name of a request in the claim or the name of a request and a "
                            "subrequest separated by '/'",
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


def _extended_resource_name_errors(value: Any, path: str) -> list[dict]:
    """The declarative validator's ExtendedResourceName (apimachinery api/validate/strfmt.go), whose messages the
    1.37 server returns: a domain-prefixed name, not kubernetes.io's, no `requests.` prefix, a label key after one."""
    if not isinstance(value, str):
        return [invalid(path, value, "must be a string")]
    return [invalid(path, value, m) for m in extended_resource_name_errors(value)]


def _device_class_errors(obj: dict, old: dict | None) -> list[dict]:
    from dragoman.fleet.k8s import celenv  # with the CEL engine: only class writes need it

    spec = obj.get("spec") or {}
    old_spec = (old or {}).get("spec") or {}
    errs = _selectors_errors(
        spec.get("selectors"),
        "spec.selectors",
        skip_compile=celenv.selectors_are_stored(
            spec.get("selectors"), old_spec.get("selectors"), updating=old is not None
        ),
    )
    errs += _opaque_config_errors(spec.get("config"), "spec.config", None)
    ern = spec.get("extendedResourceName")
    if ern is not None:
        errs += _extended_resource_name_errors(ern, "spec.extendedResourceName")
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
                        "must be the name of a request in the claim or the name of a request and a subrequest "
                        "separated by '/'",
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


def _claim_status_errors(obj: dict, old: dict) -> list[dict]:
    """validateResourceClaimStatusUpdate's invariants: consumers are complete references, a claim is reserved only
    once allocated, and a claim being deallocated or deleted gains no new consumers."""
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    old_status = old.get("status") if isinstance(old.get("status"), dict) else {}
    reserved = _list(status.get("reservedFor"))
    errs: list[dict] = []
    seen: set = set()
    for i, ref in enumerate(reserved):
        ref = ref if isinstance(ref, dict) else {}
        p = f"status.reservedFor[{i}]"
        for key in ("resource", "name", "uid"):
            if not ref.get(key):
                errs.append(required(f"{p}.{key}", ""))
        if ref.get("uid") in seen:
            errs.append(duplicate(p, ref))
        seen.add(ref.get("uid"))
    if reserved:
        if not status.get("allocation"):
            errs.append(forbidden("status.reservedFor", "may not be specified when `allocated` is not set"))
        elif (obj.get("metadata") or {}).get("deletionTimestamp"):
            before = [json.dumps(r, sort_keys=True) for r in _list(old_status.get("reservedFor"))]
            if any(json.dumps(r, sort_keys=True) not in before for r in reserved):
                errs.append(
                    forbidden(
                        "status.reservedFor",
                        "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
                    )
                )
    return errs


def _claim_errors(obj: dict, old: dict | None) -> list[dict]:
    spec = obj.get("spec")
    if old is not None:
        if spec != old.get("spec"):
            # The declarative immutability check prints no value (`Invalid value: null`).
            return [invalid("spec", None, IMMUTABLE)]
        return _claim_status_errors(obj, old)
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
_ATTRIBUTE_TYPE_SET = frozenset(_ATTRIBUTE_TYPES)


_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


@functools.lru_cache(maxsize=4096)
def _attribute_name_problems(name: str) -> tuple[dict, ...]:
    """A qualified attribute or capacity name's problems, without their field (fleets repeat the same few names on
    every device: each is checked once)."""
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
                "a valid C identifier must start with alphabetic character or '_', followed by a string of "
                "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
                "validation is '[A-Za-z_][A-Za-z0-9_]*')",
            )
        )
    return errs


def _attribute_value_problem(kind: str, v: Any) -> bool:
    """Whether an attribute's one value breaks a rule _device_errors words (a string or version over 64, a version
    that is not semver)."""
    if kind == "string":
        return isinstance(v, str) and len(v) > 64
    if kind == "version":
        return not isinstance(v, str) or len(v) > 64 or not _is_semver(v)
    return False


@functools.lru_cache(maxsize=1024)
def _is_semver(v: str) -> bool:
    """A version attribute's format (a fleet's devices repeat a few driver and CUDA versions: each is matched once)."""
    return _SEMVER_RE.match(v) is not None


@functools.lru_cache(maxsize=1024)
def _names_without_problems(names: tuple) -> bool:
    """Whether none of these attribute names has a problem (a fleet's devices carry the same few names, in the same
    order: one answer per list of names)."""
    return not any(_attribute_name_problems(n) for n in names)


def _plain_attributes(attributes: Any) -> bool:
    """Whether _device_errors' reading of `attributes` would find nothing: every name well formed and every value a
    mapping holding one value of a known type within its limits. Anything else takes that reading, which words it."""
    if attributes.__class__ is not dict or not _names_without_problems(tuple(attributes)):
        return False
    for value in attributes.values():
        if value.__class__ is not dict or len(value) != 1:
            return False
        ((kind, v),) = value.items()
        if kind == "string":  # _attribute_value_problem's first case, written out: most attributes are strings
            if isinstance(v, str) and len(v) > 64:
                return False
        elif kind not in _ATTRIBUTE_TYPE_SET or _attribute_value_problem(kind, v):
            return False
    return True


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
    for key, value in () if _plain_attributes(attributes) else attributes.items():
        # A device's path is written out only for an attribute with a problem: most have none, and 40,000 devices'
        # json.dumps of every name was a tenth of a 5,000-node scenario's check.
        named = _attribute_name_problems(key)
        present = [t for t in _ATTRIBUTE_TYPES if isinstance(value, dict) and t in value]
        v = value[present[0]] if len(present) == 1 else None
        kind = present[0] if len(present) == 1 else None
        if not named and kind is not None and not _attribute_value_problem(kind, v):
            continue
        p = f"{path}.attributes[{json.dumps(key)}]"
        errs += [dict(e, field=p) for e in named]
        if kind is None:
            errs.append(invalid(p, value, "exactly one value must be specified"))
            continue
        if kind == "string" and isinstance(v, str) and len(v) > 64:
            errs.append(too_long(f"{p}.string", 64))
        if kind == "version" and (not isinstance(v, str) or not _SEMVER_RE.match(v)):
            errs.append(invalid(f"{p}.version", v, "must be a string compatible with semver.org spec 2.0.0"))
        if kind == "version" and isinstance(v, str) and len(v) > 64:
            errs.append(too_long(f"{p}.version", 64))
    for key in capacity:
        named = _attribute_name_problems(key)
        if named:
            errs += [dict(e, field=f"{path}.capacity[{json.dumps(key)}]") for e in named]
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITY:
        errs.append(
            too_many(path, len(attributes) + len(capacity), MAX_ATTRIBUTES_AND_CAPACITY)
            | {
                "message": (
                    f"Too many: {len(attributes) + len(capacity)}: must have at most {MAX_ATTRIBUTES_AND_CAPACITY} "
                    "attributes and capacities combined"
                )
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
    consumes = _list(device.get("consumesCounters"))
    if len(consumes) > MAX_COUNTER_CONSUMPTIONS:
        errs.append(too_many(f"{path}.consumesCounters", len(consumes), MAX_COUNTER_CONSUMPTIONS))
    else:
        seen: set[str] = set()
        for i, c in enumerate(consumes):
            errs += _counter_consumption_errors(c, f"{path}.consumesCounters[{i}]")
            cset = c.get("counterSet") if isinstance(c, dict) else None
            if cset and cset in seen:
                errs.append(duplicate(f"{path}.consumesCounters[{i}]", cset))
            seen.add(cset)
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
                "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, "
                "but multiple fields are set",
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
    if len(counters) > MAX_COUNTER_SETS:
        errs.append(too_many("spec.sharedCounters", len(counters), MAX_COUNTER_SETS))
    else:
        names: set[str] = set()
        for i, cs in enumerate(counters):
            errs += _counter_set_errors(cs, f"spec.sharedCounters[{i}]")
            cname = cs.get("name") if isinstance(cs, dict) else None
            if cname and cname in names:
                errs.append(duplicate(f"spec.sharedCounters[{i}]", cname))
            names.add(cname)
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
