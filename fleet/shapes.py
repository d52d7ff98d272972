"""The types Kubernetes gives the fields dragoman reads, checked on every object before it reaches the model: from
files (snapshots, `cel --snapshot`) and from servers (LIST items and watch events: a proxy, a broken or hostile
server can send anything, and one Node whose labels are a list once crashed the model)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_SCALAR = (str, int, float, bool)
OBJ, LIST, STR, INT, SCALAR = dict, list, str, int, _SCALAR
_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", _SCALAR: "a string or number"}

# (kind or "*", dotted path with [] for "every element" and {} for "every value", the type Kubernetes gives it).
SHAPES: list[tuple[str, str, Any]] = [
    ("*", "metadata", OBJ),
    ("*", "metadata.name", STR),
    ("*", "metadata.namespace", STR),
    ("*", "metadata.uid", STR),
    ("*", "metadata.resourceVersion", STR),
    ("*", "metadata.creationTimestamp", STR),
    ("*", "metadata.deletionTimestamp", STR),
    ("*", "metadata.generateName", STR),
    # Strings in Kubernetes; a snapshot's `gpus: 8` is made a string by normalize_labels before this check.
    ("*", "metadata.labels", OBJ),
    ("*", "metadata.labels.{}", STR),
    ("*", "metadata.annotations", OBJ),
    ("*", "metadata.annotations.{}", STR),
    ("*", "metadata.ownerReferences.[].kind", STR),
    ("*", "metadata.ownerReferences.[].name", STR),
    ("*", "metadata.ownerReferences.[].uid", STR),
    ("Node", "spec.unschedulable", bool),
    ("Node", "spec.taints.[].key", STR),
    ("Node", "spec.taints.[].effect", STR),
    ("Node", "spec.taints.[].value", STR),
    ("Node", "status.conditions.[].type", STR),
    ("Node", "status.conditions.[].status", STR),
    ("Node", "status.nodeInfo.kubeletVersion", STR),
    ("Node", "status.nodeInfo.containerRuntimeVersion", STR),
    ("Node", "status.nodeInfo.osImage", STR),
    ("Node", "status.nodeInfo.kernelVersion", STR),
    ("Pod", "spec.nodeName", STR),
    ("Pod", "spec.schedulerName", STR),
    ("Pod", "spec.priority", INT),
    ("Pod", "spec.containers.[].name", STR),
    ("Pod", "spec.containers.[].image", STR),
    ("Pod", "spec.resourceClaims.[].name", STR),
    ("Pod", "status.reason", STR),
    ("Pod", "status.message", STR),
    ("Pod", "status.conditions.[].type", STR),
    ("Pod", "status.conditions.[].reason", STR),
    ("Pod", "status.conditions.[].message", STR),
    ("ResourceClaim", "spec.devices.requests.[].name", STR),
    ("Event", "reason", STR),
    ("Event", "message", STR),
    ("Event", "type", STR),
    ("Event", "involvedObject", OBJ),
    ("Event", "involvedObject.name", STR),
    ("Event", "involvedObject.kind", STR),
    ("Event", "count", INT),
    # An Event written through events.k8s.io/v1 (kube-scheduler's) counts and times its repeats in `series`.
    ("Event", "series", OBJ),
    ("Event", "series.count", INT),
    ("Event", "series.lastObservedTime", STR),
    ("Event", "eventTime", STR),
    ("Event", "lastTimestamp", STR),
    ("Event", "deprecatedCount", INT),  # a snapshot holding the events.k8s.io/v1 view
    ("Event", "deprecatedLastTimestamp", STR),
    ("*", "metadata.ownerReferences", LIST),
    ("*", "metadata.ownerReferences.[]", OBJ),
    ("*", "spec", OBJ),
    ("*", "status", OBJ),
    ("Node", "spec.taints", LIST),
    ("Node", "spec.taints.[]", OBJ),
    ("Node", "status.conditions", LIST),
    ("Node", "status.conditions.[]", OBJ),
    ("Node", "status.allocatable", OBJ),
    ("Node", "status.allocatable.{}", SCALAR),
    ("Node", "status.capacity", OBJ),
    ("Node", "status.capacity.{}", SCALAR),
    ("Node", "status.nodeInfo", OBJ),
    ("Pod", "spec.containers", LIST),
    ("Pod", "spec.containers.[]", OBJ),
    ("Pod", "spec.initContainers", LIST),
    ("Pod", "spec.initContainers.[]", OBJ),
    ("Pod", "spec.containers.[].resources", OBJ),
    ("Pod", "spec.containers.[].resources.limits", OBJ),
    ("Pod", "spec.containers.[].resources.limits.{}", SCALAR),
    ("Pod", "spec.containers.[].resources.requests", OBJ),
    ("Pod", "spec.containers.[].resources.requests.{}", SCALAR),
    ("Pod", "spec.containers.[].resources.claims", LIST),
    ("Pod", "spec.initContainers.[].resources", OBJ),
    ("Pod", "spec.resourceClaims", LIST),
    ("Pod", "spec.resourceClaims.[]", OBJ),
    ("Pod", "spec.nodeSelector", OBJ),
    ("Pod", "spec.tolerations", LIST),
    ("Pod", "spec.tolerations.[]", OBJ),
    ("Pod", "spec.affinity", OBJ),
    ("Pod", "status.phase", STR),
    ("Pod", "status.conditions", LIST),
    ("Pod", "status.conditions.[]", OBJ),
    ("Pod", "status.containerStatuses", LIST),
    ("Pod", "status.containerStatuses.[]", OBJ),
    ("Pod", "status.resourceClaimStatuses", LIST),
    ("Pod", "status.extendedResourceClaimStatus", OBJ),
    ("ResourceSlice", "spec.driver", STR),
    ("ResourceSlice", "spec.nodeName", STR),
    ("ResourceSlice", "spec.pool", OBJ),
    ("ResourceSlice", "spec.pool.name", STR),
    ("ResourceSlice", "spec.pool.generation", INT),
    ("ResourceSlice", "spec.pool.resourceSliceCount", INT),
    ("ResourceSlice", "spec.devices", LIST),
    ("ResourceSlice", "spec.devices.[]", OBJ),
    ("ResourceSlice", "spec.devices.[].name", STR),
    ("ResourceSlice", "spec.devices.[].attributes", OBJ),
    ("ResourceSlice", "spec.devices.[].attributes.{}", OBJ),
    ("ResourceSlice", "spec.devices.[].attributes.{}.int", INT),
    ("ResourceSlice", "spec.devices.[].attributes.{}.string", STR),
    ("ResourceSlice", "spec.devices.[].attributes.{}.version", STR),
    ("ResourceSlice", "spec.devices.[].attributes.{}.bool", bool),
    ("ResourceSlice", "spec.devices.[].capacity", OBJ),
    ("ResourceSlice", "spec.devices.[].capacity.{}", OBJ),
    ("ResourceSlice", "spec.devices.[].capacity.{}.value", SCALAR),
    # v1.37's DRA fields the model reads (fleet/k8s/devicestate.py): taints, counters, shared capacity, binding.
    ("ResourceSlice", "spec.allNodes", bool),
    ("ResourceSlice", "spec.nodeSelector", OBJ),
    ("ResourceSlice", "spec.perDeviceNodeSelection", bool),
    ("ResourceSlice", "spec.sharedCounters", LIST),
    ("ResourceSlice", "spec.sharedCounters.[]", OBJ),
    ("ResourceSlice", "spec.sharedCounters.[].name", STR),
    ("ResourceSlice", "spec.sharedCounters.[].counters", OBJ),
    ("ResourceSlice", "spec.devices.[].taints", LIST),
    ("ResourceSlice", "spec.devices.[].taints.[]", OBJ),
    ("ResourceSlice", "spec.devices.[].taints.[].key", STR),
    ("ResourceSlice", "spec.devices.[].taints.[].effect", STR),
    ("ResourceSlice", "spec.devices.[].consumesCounters", LIST),
    ("ResourceSlice", "spec.devices.[].consumesCounters.[]", OBJ),
    ("ResourceSlice", "spec.devices.[].consumesCounters.[].counterSet", STR),
    ("ResourceSlice", "spec.devices.[].consumesCounters.[].counters", OBJ),
    ("ResourceSlice", "spec.devices.[].allowMultipleAllocations", bool),
    ("ResourceSlice", "spec.devices.[].bindingConditions", LIST),
    ("ResourceSlice", "spec.devices.[].bindingConditions.[]", STR),
    ("ResourceSlice", "spec.devices.[].bindingFailureConditions", LIST),
    ("ResourceSlice", "spec.devices.[].bindingFailureConditions.[]", STR),
    ("ResourceSlice", "spec.devices.[].nodeName", STR),
    ("ResourceSlice", "spec.devices.[].nodeSelector", OBJ),
    ("ResourceSlice", "spec.devices.[].allNodes", bool),
    ("DeviceTaintRule", "spec.deviceSelector", OBJ),
    ("DeviceTaintRule", "spec.deviceSelector.driver", STR),
    ("DeviceTaintRule", "spec.deviceSelector.pool", STR),
    ("DeviceTaintRule", "spec.deviceSelector.device", STR),
    ("DeviceTaintRule", "spec.taint", OBJ),
    ("DeviceTaintRule", "spec.taint.key", STR),
    ("DeviceTaintRule", "spec.taint.value", STR),
    ("DeviceTaintRule", "spec.taint.effect", STR),
    ("DeviceTaintRule", "status.conditions", LIST),
    ("DeviceTaintRule", "status.conditions.[]", OBJ),
    ("DeviceTaintRule", "status.conditions.[].type", STR),
    ("DeviceTaintRule", "status.conditions.[].status", STR),
    ("ResourceClaim", "status.allocation.devices.results.[].adminAccess", bool),
    ("ResourceClaim", "status.allocation.devices.results.[].consumedCapacity", OBJ),
    ("ResourceClaim", "status.allocation.devices.results.[].bindingConditions", LIST),
    ("ResourceClaim", "status.allocation.devices.results.[].bindingFailureConditions", LIST),
    ("ResourceClaim", "status.devices", LIST),
    ("ResourceClaim", "status.devices.[]", OBJ),
    ("ResourceClaim", "status.devices.[].conditions", LIST),
    ("ResourceClaim", "status.devices.[].conditions.[]", OBJ),
    ("Pod", "status.containerStatuses.[].allocatedResourcesStatus", LIST),
    ("Pod", "status.containerStatuses.[].allocatedResourcesStatus.[]", OBJ),
    ("Pod", "status.containerStatuses.[].allocatedResourcesStatus.[].resources", LIST),
    ("DeviceClass", "spec.selectors", LIST),
    ("DeviceClass", "spec.selectors.[]", OBJ),
    ("DeviceClass", "spec.selectors.[].cel", OBJ),
    ("DeviceClass", "spec.selectors.[].cel.expression", STR),
    ("DeviceClass", "spec.extendedResourceName", STR),
    ("ResourceClaim", "spec.devices", OBJ),
    ("ResourceClaim", "spec.devices.requests", LIST),
    ("ResourceClaim", "spec.devices.requests.[]", OBJ),
    ("ResourceClaim", "status.allocation", OBJ),
    ("ResourceClaim", "status.allocation.devices", OBJ),
    ("ResourceClaim", "status.allocation.devices.results", LIST),
    ("ResourceClaim", "status.allocation.devices.results.[]", OBJ),
    ("ResourceClaim", "status.reservedFor", LIST),
    ("ResourceClaim", "status.reservedFor.[]", OBJ),
    ("ResourceClaimTemplate", "spec.spec", OBJ),
    ("ResourceClaimTemplate", "spec.spec.devices", OBJ),
    ("ResourceClaimTemplate", "spec.spec.devices.requests", LIST),
    ("ResourceClaimTemplate", "spec.spec.devices.requests.[]", OBJ),
    ("DaemonSet", "spec.template", OBJ),
    ("DaemonSet", "spec.template.spec", OBJ),
    ("DaemonSet", "spec.template.spec.nodeSelector", OBJ),
    ("DaemonSet", "spec.template.spec.affinity", OBJ),
    ("DaemonSet", "spec.template.spec.affinity.nodeAffinity", OBJ),
    ("DaemonSet", "spec.template.spec.containers", LIST),
    ("DaemonSet", "spec.template.spec.containers.[]", OBJ),
    ("DaemonSet", "spec.template.spec.tolerations", LIST),
    ("DaemonSet", "status", OBJ),
    ("ResourceQuota", "spec.hard", OBJ),
    ("ResourceQuota", "spec.hard.{}", SCALAR),
    ("ResourceQuota", "status.used", OBJ),
    ("ResourceQuota", "status.used.{}", SCALAR),
]

# One trie per kind (the "*" rules merged in): each object is walked once, sharing prefixes.
_TRIES: dict[str, dict] = {}


def _trie(kind: str) -> dict:
    trie = _TRIES.get(kind)
    if trie is None:
        trie = {}
        for k, path, typ in SHAPES:
            if k not in ("*", kind):
                continue
            node = trie
            for part in path.split("."):
                node = node.setdefault(part, {})
            node[""] = typ
        _TRIES[kind] = trie
    return trie


def _type_name(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
    }.get(type(value), type(value).__name__)


def _check(value: Any, node: dict, where: str) -> str | None:
    expected = node.get("")
    if expected is not None and (not isinstance(value, expected) or (expected is INT and isinstance(value, bool))):
        return f"its {where} is {_type_name(value)}, where Kubernetes has {_NAMES.get(expected, 'a boolean')}"
    for seg, child in node.items():
        if seg == "":
            continue
        if seg == "[]":
            if isinstance(value, list):
                for i, v in enumerate(value):
                    if (p := _check(v, child, f"{where}[{i}]")) is not None:
                        return p
        elif seg == "{}":
            if isinstance(value, dict):
                for k, v in value.items():
                    if (p := _check(v, child, f"{where}.{k}")) is not None:
                        return p
        elif isinstance(value, dict):
            v = value.get(seg)
            if v is not None and (p := _check(v, child, f"{where}.{seg}" if where else seg)) is not None:
                return p
    return None


# ---------------------------------------------------------------------------------------------- the fast path
#
# The walk above interprets the trie: a call, a dict iteration and an f-string per field and per label, which a
# profile put at 40% of a LIST's CPU at the envelope. The same trie compiled into one straight-line function per kind
# (isinstance checks and loops, nothing built) answers only "fits or not", about five times faster; when it says
# "not", the walk finds the field and words the sentence. Both read the same SHAPES, so they cannot drift apart, and
# tests/fleet/test_shapes.py holds them to the same answers on mutated objects.
_TEST = {
    STR: "isinstance({v}, str)",
    INT: "(isinstance({v}, int) and not isinstance({v}, bool))",
    bool: "isinstance({v}, bool)",
    SCALAR: "isinstance({v}, _SCALAR)",
    OBJ: "isinstance({v}, dict)",
    LIST: "isinstance({v}, list)",
}
# A leaf read from a dict: absent or None passes, as in the walk. One isinstance with NoneType in the tuple.
_LEAF_TEST = {
    STR: "isinstance({v}, _STR_OR_NONE)",
    bool: "isinstance({v}, _BOOL_OR_NONE)",
    SCALAR: "isinstance({v}, _SCALAR_OR_NONE)",
    OBJ: "isinstance({v}, _DICT_OR_NONE)",
    LIST: "isinstance({v}, _LIST_OR_NONE)",
}
# Every element or value of one exact type, counted in C (a subclass of it fails here and is judged by the walk).
_ALL_OF = {STR: "_only({v}, str)", OBJ: "_only({v}, dict)"}
_FITS: dict[tuple[str, str], Callable[[Any], bool]] = {}


def _only(values: Any, typ: type) -> bool:
    return {typ}.issuperset(map(type, values))


def _emit(node: dict, var: str, indent: str, lines: list[str], names: list[int]) -> None:
    """Lines that `return False` when `var` (known not None) breaks a rule of `node`: what _check does, without the
    words. Stricter is allowed (the walk then judges), looser never."""
    expected = node.get("")
    if expected is not None:
        lines.append(f"{indent}if not {_TEST[expected].format(v=var)}: return False")
    children = [(seg, child) for seg, child in node.items() if seg != ""]
    if not children:
        return
    named = [(seg, child) for seg, child in children if seg not in ("[]", "{}")]
    for seg, child in children:
        if seg not in ("[]", "{}"):
            continue
        pad = indent
        if expected is not (LIST if seg == "[]" else OBJ):
            lines.append(f"{pad}if isinstance({var}, {'list' if seg == '[]' else 'dict'}):")
            pad += " "
        values = var if seg == "[]" else f"{var}.values()"
        grand = [g for g in child if g != ""]
        if not grand and child.get("") in _ALL_OF:
            lines.append(f"{pad}if not {_ALL_OF[child['']].format(v=values)}: return False")
            continue
        names[0] += 1
        inner = f"v{names[0]}"
        lines.append(f"{pad}for {inner} in {values}:")
        _emit(child, inner, pad + " ", lines, names)
    if not named:
        return
    pad = indent
    if expected is not OBJ:
        lines.append(f"{pad}if isinstance({var}, dict):")
        pad += " "
    for seg, child in named:
        grand = [g for g in child if g != ""]
        typ = child.get("")
        if not grand and typ in _LEAF_TEST:
            lines.append(f"{pad}if not {_LEAF_TEST[typ].format(v=f'{var}.get({seg!r})')}: return False")
            continue
        names[0] += 1
        inner = f"v{names[0]}"
        lines.append(f"{pad}{inner} = {var}.get({seg!r})")
        lines.append(f"{pad}if {inner} is not None:")
        body: list[str] = []
        _emit(child, inner, pad + " ", body, names)
        lines.extend(body or [f"{pad} pass"])


def fits(kind: str, path: str = "") -> Callable[[Any], bool]:
    """A function that says whether a value (not None) keeps every rule of `kind` at or under `path` (dotted, as in
    SHAPES; "" for the whole object). True means the walk would find no problem there; False means it may."""
    fn = _FITS.get((kind, path))
    if fn is None:
        node = _trie(kind)
        for part in path.split(".") if path else ():
            node = node.get(part, {})
        lines = ["def fits(v0):"]
        _emit(node, "v0", " ", lines, [0])
        lines.append(" return True")
        none = type(None)
        scope: dict[str, Any] = {
            "_SCALAR": _SCALAR,
            "_only": _only,
            "_STR_OR_NONE": (str, none),
            "_BOOL_OR_NONE": (bool, none),
            "_SCALAR_OR_NONE": (*_SCALAR, none),
            "_DICT_OR_NONE": (dict, none),
            "_LIST_OR_NONE": (list, none),
        }
        where = f"<shapes of {kind or 'any kind'} {path}>"
        exec(compile("\n".join(lines), where, "exec"), scope)  # code made from SHAPES, never from input
        fn = _FITS[(kind, path)] = scope["fits"]
    return fn


def shape_problem(obj: dict, kind: str = "") -> str | None:
    """The first field of `obj` whose type is not the one Kubernetes gives it, as words; None when every checked field
    fits. `kind` is used when the object carries none (items of a typed LIST).

    An object whose decoder already held every checked field to these rules says so with a true `shapes_checked`
    (fleet/projection.py's LIST decoder, which checks each distinct shared part once); it is not checked again."""
    if getattr(obj, "shapes_checked", False):
        return None
    k = obj.get("kind")
    if k is not None and not isinstance(k, str):
        return f"its kind is {_type_name(k)}, where Kubernetes has a string"
    kind = k or kind
    if fits(kind)(obj):
        return None
    return _check(obj, _trie(kind), "")


def shape_problem_walk(obj: dict, kind: str = "") -> str | None:
    """shape_problem by the walk alone (the reference the fast path is tested and measured against)."""
    k = obj.get("kind")
    if k is not None and not isinstance(k, str):
        return f"its kind is {_type_name(k)}, where Kubernetes has a string"
    return _check(obj, _trie(k or kind), "")


def normalize_labels(obj: dict) -> None:
    """Label and annotation values written as YAML numbers or booleans (`gpus: 8`, `enabled: true`) become the strings
    they spell, as they would be once applied to a cluster; a snapshot's mixed `pool: 1` and `pool: a` then sort."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    for key in ("labels", "annotations"):
        values = meta.get(key)
        if isinstance(values, dict):
            for k, v in values.items():
                if isinstance(v, bool):
                    values[k] = "true" if v else "false"
                elif isinstance(v, (int, float)):
                    values[k] = str(v)


# resource.k8s.io versions a saved snapshot may hold (`kubectl get -o yaml` against a v1.31-v1.36 cluster, or a
# v1.37 one asked for an older version): v1alpha3 and v1beta1 wrap a device's fields in `basic:` and keep a request's
# fields on the request; v1beta2 has v1's shape. Read as v1, the one shape the model knows.
RESOURCE_GROUP = "resource.k8s.io/"
_WRAPPED_VERSIONS = ("v1alpha3", "v1beta1")
_REQUEST_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)


def _v1_requests(spec: Any) -> None:
    devices = spec.get("devices") if isinstance(spec, dict) else None
    if not isinstance(devices, dict):
        return
    for req in devices.get("requests") or ():
        if not isinstance(req, dict) or "exactly" in req or req.get("firstAvailable"):
            continue
        exactly = {k: req.pop(k) for k in _REQUEST_FIELDS if k in req}
        if exactly:
            req["exactly"] = exactly


def normalize_resource_version(obj: dict) -> None:
    """A resource.k8s.io object of an older served version rewritten in place in v1's shape (apiVersion included):
    a device's `basic:` fields lifted onto the device, a request's fields moved under `exactly`. Anything else
    (v1, v1beta2, other groups, odd shapes) is left as it is for the shape checks to judge."""
    api = obj.get("apiVersion")
    if not isinstance(api, str) or not api.startswith(RESOURCE_GROUP):
        return
    version = api[len(RESOURCE_GROUP) :]
    if version == "v1beta2":
        obj["apiVersion"] = RESOURCE_GROUP + "v1"
        return
    if version not in _WRAPPED_VERSIONS:
        return
    kind = obj.get("kind")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if kind == "ResourceSlice":
        for i, d in enumerate(spec.get("devices") or ()):
            if isinstance(d, dict) and isinstance(d.get("basic"), dict):
                basic = d.pop("basic")
                spec["devices"][i] = {"name": d.get("name"), **basic, **{k: v for k, v in d.items() if k != "name"}}
    elif kind == "ResourceClaim":
        _v1_requests(spec)
    elif kind == "ResourceClaimTemplate":
        _v1_requests(spec.get("spec"))
    obj["apiVersion"] = RESOURCE_GROUP + "v1"
