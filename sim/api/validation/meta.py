"""ObjectMeta checks every kind gets: names, namespace scope, labels, annotations, finalizers, immutable identity."""

from __future__ import annotations

import json

from dragoman.fleet.k8s import registry
from dragoman.sim.api.validation.fields import (
    IMMUTABLE,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    forbidden,
    invalid,
    label_value_errors,
    mask_trailing_dash,
    path_segment_errors,
    qualified_name_errors,
    required,
    too_long,
)

CLUSTER_SCOPED = registry.cluster_scoped()


_LABEL_NAMED = {"namespaces"}


_PATH_SEGMENT_NAMED = {"roles", "clusterroles", "rolebindings", "clusterrolebindings"}


def _name_problems(resource: str, value: str, prefix: bool, path_segment: bool) -> list[str]:
    """The kind's name rule (apimachinery NameIsDNSLabel / NameIsDNSSubdomain / path segment); a generateName
    `prefix` may end in '-' (maskTrailingDash)."""
    if path_segment or resource in _PATH_SEGMENT_NAMED:
        return path_segment_errors(value, prefix)
    if prefix:
        value = mask_trailing_dash(value)
    return dns1123_label_errors(value) if resource in _LABEL_NAMED else dns1123_subdomain_errors(value)


def _meta_errors(resource: str, obj: dict, path_segment_names: bool = False) -> list[dict]:
    """ValidateObjectMeta. `path_segment_names`: the generic check kube-apiserver runs after a strategy that names
    no rule of its own (a core v1 Event): a name need only be a valid path segment."""
    errs: list[dict] = []
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return [required("metadata", "")]
    name = meta.get("name") or ""
    generate = meta.get("generateName") or ""
    if generate:
        errs += [
            invalid("metadata.generateName", generate, p)
            for p in _name_problems(resource, generate, True, path_segment_names)
        ]
    if not name and not generate:
        errs.append(required("metadata.name", "name or generateName is required"))
    elif name:
        errs += [invalid("metadata.name", name, p) for p in _name_problems(resource, name, False, path_segment_names)]
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
                    "no new finalizers can be added if the object is being deleted, found new finalizers "
                    f"[]string{{{', '.join(json.dumps(a) for a in sorted(added))}}}",
                )
            )
    return errs
