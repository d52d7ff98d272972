"""The types Kubernetes gives the fields dragoman reads, checked on every object before it reaches the model: from
files (snapshots, `cel --snapshot`) and from servers (LIST items and watch events: a proxy, a broken or hostile
server can send anything, and one Node whose labels are a list once crashed the model)."""

from __future__ import annotations

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


def shape_problem(obj: dict, kind: str = "") -> str | None:
    """The first field of `obj` whose type is not the one Kubernetes gives it, as words; None when every checked field
    fits. `kind` is used when the object carries none (items of a typed LIST)."""
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
