"""Objects the playground generates from a selector: DeviceClasses, tier classes, claim templates, the pod-side snippet,
as YAML."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping

import yaml
from dragoman.fleet import k8s
from dragoman.fleet.k8s import DEVICECLASS_PREFIX
from dragoman.fleet.nvidia_schema import DRIVER

API = "resource.k8s.io/v1"
IMPLICIT_PREFIX = DEVICECLASS_PREFIX  # one home: fleet/k8s/
GPU_DRIVER = DRIVER  # one home: fleet/nvidia_schema.py


@dataclasses.dataclass
class Generated:
    """Objects to preview, save or apply, with what the operator must know before doing so."""

    objects: list[dict]
    warnings: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    snippet: dict | None = None  # the pod-side part, not an API object

    def yaml(self) -> str:
        return to_yaml(self.objects)


def to_yaml(objects: Iterable[dict]) -> str:
    """Multi-document YAML in the order given, keys in the order written (apiVersion, kind, metadata, spec)."""
    return "---\n".join(yaml.safe_dump(o, sort_keys=False, default_flow_style=False, width=1000) for o in objects)


def cel_string(value: str) -> str:
    """A CEL string literal for `value` (double-quoted, escaped as JSON is, which CEL accepts)."""
    return json.dumps(value)


def slug(text: str, limit: int = 63) -> str:
    """A DNS label from free text: "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3"."""
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return (s[:limit].rstrip("-")) or "x"


def valid_class_name(name: str) -> str | None:
    """Why `name` cannot be a DeviceClass name (a DNS subdomain of <= 253 characters), or None."""
    if not name:
        return "a DeviceClass needs a name"
    if k8s.is_dns1123_subdomain(name):
        return (
            f"{name!r} is not a valid DeviceClass name: lower-case letters, digits, '-' and '.', starting and "
            "ending alphanumeric"
        )
    return None


def implicit_name(class_name: str) -> str | None:
    """The extended resource name every class serves without configuration (None if it is not a valid resource name)."""
    return IMPLICIT_PREFIX + class_name if len(class_name) <= 63 else None


def device_class(
    name: str,
    expressions: str | Iterable[str],
    *,
    extended_resource_name: str | None = None,
    served_by: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> Generated:
    """A DeviceClass selecting with `expressions` (all must be true).

    `served_by` maps an extended resource name to the class serving it today (FleetModel.class_serving); naming one
    another class serves makes this class its server from the moment it is created (the newest class wins), which
    moves every pod asking for it on DRA-backed nodes onto this selector: that is the blast-radius warning.
    """
    exprs = [expressions] if isinstance(expressions, str) else list(expressions)
    meta: dict = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    spec: dict = {"selectors": [{"cel": {"expression": e}} for e in exprs if e.strip()]}
    gen = Generated([{"apiVersion": API, "kind": "DeviceClass", "metadata": meta, "spec": spec}])
    problem = valid_class_name(name)
    if problem:
        gen.warnings.append(problem)
    if extended_resource_name:
        spec["extendedResourceName"] = extended_resource_name
        current = (served_by or {}).get(extended_resource_name)
        if current and current != name:
            gen.warnings.append(
                f"blast radius: {extended_resource_name} is served by DeviceClass {current} today; the newest "
                f"class naming it wins, so creating {name} moves every pod that asks for "
                f"{extended_resource_name} on nodes without device-plugin allocatable onto this selector at "
                "once. Leave extendedResourceName empty, or use the implicit name."
            )
    imp = implicit_name(name)
    if imp:
        gen.notes.append(f"pods can ask for this class without a claim: resources.limits: {{{imp}: 1}}")
    return gen


def _guarded(driver: str, *clauses: str) -> str:
    dom = cel_string(driver)
    return " && ".join([f"device.driver == {dom}"] + [c.replace("$A", f"device.attributes[{dom}]") for c in clauses])


def tier_expression(by: str, value: str, driver: str = GPU_DRIVER) -> str:
    """The selector of one tier: a whole GPU of one product, or a MIG device of one profile."""
    if by == "product":
        return _guarded(driver, '$A.type == "gpu"', f"$A.productName == {cel_string(value)}")
    if by == "mig-profile":
        return _guarded(driver, '$A.type == "mig"', f"$A.profile == {cel_string(value)}")
    raise ValueError(f"unknown tier kind {by!r}: product or mig-profile")


def tier_values(
    catalogue: Mapping[str, Mapping[str, dict]], by: str, driver: str = GPU_DRIVER
) -> list[tuple[str, int]]:
    """(value, devices) the fleet publishes for a tier kind, most devices first (from
    FleetModel.attribute_catalogue)."""
    attrs = catalogue.get(driver) or {}
    if by == "product":
        # productName is shared by a GPU and its MIG devices: count whole GPUs only when the split is known.
        entry = attrs.get(f"{driver}/productName") or {}
    elif by == "mig-profile":
        entry = attrs.get(f"{driver}/profile") or {}
    else:
        raise ValueError(f"unknown tier kind {by!r}: product or mig-profile")
    return [(str(v), int(n)) for v, n in (entry.get("values") or {}).items() if v is not None]


def tier_classes(
    values: Iterable[str], by: str, *, prefix: str = "", driver: str = GPU_DRIVER, existing: Iterable[str] = ()
) -> Generated:
    """One DeviceClass per product or MIG profile, each serving its implicit
    `deviceclass.resource.kubernetes.io/<class>` name."""
    taken = set(existing)
    objs: list[dict] = []
    gen = Generated(objs)
    names: set[str] = set()
    for value in values:
        base = slug(value) if by == "product" else "mig-" + slug(value.replace(".", "-"))
        name = (prefix + base)[:63].rstrip("-.")
        if name in names:
            continue
        names.add(name)
        expr = tier_expression(by, value, driver)
        objs.append(
            {
                "apiVersion": API,
                "kind": "DeviceClass",
                "metadata": {"name": name, "labels": {"dragoman.io/tier": by}},
                "spec": {"selectors": [{"cel": {"expression": expr}}]},
            }
        )
        gen.notes.append(f"{name}: {value} — pods use resources.limits: {{{IMPLICIT_PREFIX}{name}: 1}}")
        if name in taken:
            gen.warnings.append(f"DeviceClass {name} exists already: applying replaces its selectors")
    if not objs:
        gen.warnings.append(
            f"the fleet publishes no {'productName' if by == 'product' else 'MIG profile'} on {driver} devices"
        )
    return gen


def claim_template(
    name: str,
    namespace: str,
    class_name: str,
    expressions: str | Iterable[str],
    *,
    count: int = 1,
    request: str = "gpu",
    container: str = "main",
    served: Iterable[str] = (),
) -> Generated:
    """A ResourceClaimTemplate asking for `count` devices of `class_name` that also pass `expressions`, and the pod
    side.

    `served`: the extended resource names `class_name` serves (nvidia.com/gpu, its implicit name): a pod that keeps
    such a limit next to the claim gets devices twice — hence the warning to drop the matching limits.
    """
    exprs = [expressions] if isinstance(expressions, str) else list(expressions)
    exactly: dict = {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": int(count)}
    sels = [{"cel": {"expression": e}} for e in exprs if e.strip()]
    if sels:
        exactly["selectors"] = sels
    obj = {
        "apiVersion": API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [{"name": request, "exactly": exactly}]}}},
    }
    snippet = {
        "spec": {
            "resourceClaims": [{"name": request, "resourceClaimTemplateName": name}],
            "containers": [{"name": container, "resources": {"claims": [{"name": request}]}}],
        }
    }
    gen = Generated([obj], snippet=snippet)
    names = sorted(set(served) | {IMPLICIT_PREFIX + class_name})
    gen.warnings.append(
        "drop the matching limits from the pod: with the claim in place, "
        + ", ".join(names)
        + " in resources.limits would ask for the same GPUs a second time (the pod would need both)"
    )
    if problem := valid_class_name(class_name):
        gen.warnings.append(problem)
    if k8s.is_dns1123_label(request):
        gen.warnings.append(f"request name {request!r} must be a DNS label")
    return gen


def snippet_yaml(snippet: dict) -> str:
    return "# pod side (merge into the pod template):\n" + yaml.safe_dump(snippet, sort_keys=False, width=1000)
