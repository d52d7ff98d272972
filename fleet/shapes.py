"""The types Kubernetes gives the fields dragoman reads, checked on objects from files (an API server already enforces them)."""

from __future__ import annotations

from typing import Any

_SCALAR = (str, int, float, bool)
OBJ, LIST, STR, INT, SCALAR = dict, list, str, int, _SCALAR
_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", _SCALAR: "a string or number"}

# (kind or "*", dotted path with [] for "every element" and {} for "every value", the type Kubernetes gives it).
SHAPES: list[tuple[str, str, Any]] = [
    ("*", "metadata", OBJ), ("*", "metadata.name", STR), ("*", "metadata.namespace", STR),
    ("*", "metadata.labels", OBJ), ("*", "metadata.labels.{}", SCALAR),
    ("*", "metadata.annotations", OBJ), ("*", "metadata.annotations.{}", SCALAR),
    ("*", "metadata.ownerReferences", LIST), ("*", "metadata.ownerReferences.[]", OBJ),
    ("*", "spec", OBJ), ("*", "status", OBJ),
    ("Node", "spec.taints", LIST), ("Node", "spec.taints.[]", OBJ),
    ("Node", "status.conditions", LIST), ("Node", "status.conditions.[]", OBJ),
    ("Node", "status.allocatable", OBJ), ("Node", "status.allocatable.{}", SCALAR),
    ("Node", "status.capacity", OBJ), ("Node", "status.capacity.{}", SCALAR), ("Node", "status.nodeInfo", OBJ),
    ("Pod", "spec.containers", LIST), ("Pod", "spec.containers.[]", OBJ), ("Pod", "spec.initContainers", LIST),
    ("Pod", "spec.initContainers.[]", OBJ), ("Pod", "spec.containers.[].resources", OBJ),
    ("Pod", "spec.containers.[].resources.limits", OBJ), ("Pod", "spec.containers.[].resources.limits.{}", SCALAR),
    ("Pod", "spec.containers.[].resources.requests", OBJ), ("Pod", "spec.containers.[].resources.requests.{}", SCALAR),
    ("Pod", "spec.containers.[].resources.claims", LIST), ("Pod", "spec.initContainers.[].resources", OBJ),
    ("Pod", "spec.resourceClaims", LIST), ("Pod", "spec.resourceClaims.[]", OBJ), ("Pod", "spec.nodeSelector", OBJ),
    ("Pod", "spec.tolerations", LIST), ("Pod", "spec.tolerations.[]", OBJ), ("Pod", "spec.affinity", OBJ),
    ("Pod", "status.phase", STR), ("Pod", "status.conditions", LIST), ("Pod", "status.conditions.[]", OBJ),
    ("Pod", "status.containerStatuses", LIST), ("Pod", "status.containerStatuses.[]", OBJ),
    ("Pod", "status.resourceClaimStatuses", LIST), ("Pod", "status.extendedResourceClaimStatus", OBJ),
    ("ResourceSlice", "spec.driver", STR), ("ResourceSlice", "spec.nodeName", STR), ("ResourceSlice", "spec.pool", OBJ),
    ("ResourceSlice", "spec.pool.name", STR), ("ResourceSlice", "spec.pool.generation", INT),
    ("ResourceSlice", "spec.pool.resourceSliceCount", INT), ("ResourceSlice", "spec.devices", LIST),
    ("ResourceSlice", "spec.devices.[]", OBJ), ("ResourceSlice", "spec.devices.[].name", STR),
    ("ResourceSlice", "spec.devices.[].attributes", OBJ), ("ResourceSlice", "spec.devices.[].attributes.{}", OBJ),
    ("ResourceSlice", "spec.devices.[].attributes.{}.int", INT), ("ResourceSlice", "spec.devices.[].attributes.{}.string", STR),
    ("ResourceSlice", "spec.devices.[].attributes.{}.version", STR), ("ResourceSlice", "spec.devices.[].attributes.{}.bool", bool),
    ("ResourceSlice", "spec.devices.[].capacity", OBJ), ("ResourceSlice", "spec.devices.[].capacity.{}", OBJ),
    ("ResourceSlice", "spec.devices.[].capacity.{}.value", SCALAR),
    ("DeviceClass", "spec.selectors", LIST), ("DeviceClass", "spec.selectors.[]", OBJ), ("DeviceClass", "spec.selectors.[].cel", OBJ),
    ("DeviceClass", "spec.selectors.[].cel.expression", STR), ("DeviceClass", "spec.extendedResourceName", STR),
    ("ResourceClaim", "spec.devices", OBJ), ("ResourceClaim", "spec.devices.requests", LIST),
    ("ResourceClaim", "spec.devices.requests.[]", OBJ), ("ResourceClaim", "status.allocation", OBJ),
    ("ResourceClaim", "status.allocation.devices", OBJ), ("ResourceClaim", "status.allocation.devices.results", LIST),
    ("ResourceClaim", "status.allocation.devices.results.[]", OBJ), ("ResourceClaim", "status.reservedFor", LIST),
    ("ResourceClaim", "status.reservedFor.[]", OBJ),
    ("ResourceClaimTemplate", "spec.spec", OBJ), ("ResourceClaimTemplate", "spec.spec.devices", OBJ),
    ("ResourceClaimTemplate", "spec.spec.devices.requests", LIST), ("ResourceClaimTemplate", "spec.spec.devices.requests.[]", OBJ),
    ("DaemonSet", "spec.template", OBJ), ("DaemonSet", "spec.template.spec", OBJ), ("DaemonSet", "spec.template.spec.nodeSelector", OBJ),
    ("DaemonSet", "spec.template.spec.affinity", OBJ), ("DaemonSet", "spec.template.spec.affinity.nodeAffinity", OBJ),
    ("DaemonSet", "spec.template.spec.containers", LIST), ("DaemonSet", "spec.template.spec.containers.[]", OBJ),
    ("DaemonSet", "spec.template.spec.tolerations", LIST), ("DaemonSet", "status", OBJ),
    ("ResourceQuota", "spec.hard", OBJ), ("ResourceQuota", "spec.hard.{}", SCALAR), ("ResourceQuota", "status.used", OBJ),
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
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer", float: "a number"}.get(type(value), type(value).__name__)


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


def shape_problem(obj: dict) -> str | None:
    """The first field of `obj` whose type is not the one Kubernetes gives it, as words; None when every checked field fits."""
    return _check(obj, _trie(str(obj.get("kind"))), "")
