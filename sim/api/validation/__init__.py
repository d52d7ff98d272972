"""The API server's defaulting and validation, one module per API group (core, apps, batch, policy, coordination,
rbac, resource.k8s.io), with the field errors and name formats in fields.py and ObjectMeta checks in meta.py.

This module holds the two tables that dispatch by resource and the entry points the store calls."""

from __future__ import annotations

from collections.abc import Callable

from dragoman.sim.api.validation.apps import (
    _default_daemonset,
    _default_deployment,
    _default_replicaset,
    _default_statefulset,
    _workload_errors,
    prepare_daemonset_update,
)
from dragoman.sim.api.validation.batch import _default_cronjob, _default_job
from dragoman.sim.api.validation.coordination import _lease_errors
from dragoman.sim.api.validation.core import (
    _configmap_errors,
    _default_namespace,
    _default_node,
    _default_pod,
    _default_secret,
    _default_service,
    _event_errors,
    _namespace_errors,
    _node_errors,
    _pod_errors,
    _quota_errors,
    prepare_namespace,
    prepare_pod,
    prepare_pod_status_update,
)
from dragoman.sim.api.validation.fields import invalid
from dragoman.sim.api.validation.meta import _meta_errors, _meta_update_errors
from dragoman.sim.api.validation.policy import _pdb_errors
from dragoman.sim.api.validation.rbac import _binding_errors, _default_binding_subjects, _role_errors
from dragoman.sim.api.validation.resource import (
    _claim_errors,
    _claim_template_errors,
    _default_claim,
    _default_claim_template,
    _default_rule_taint_time,
    _default_slice_taint_times,
    _device_class_errors,
    _device_taint_rule_errors,
    _slice_errors,
    prepare_taint_rule_update,
)

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


# Defaults that are the time of the request (SetDefaults_DeviceTaint: a taint's timeAdded is now, to the second).
_TIMED_DEFAULTERS: dict[str, Callable[[dict, str], None]] = {
    "resourceslices": _default_slice_taint_times,
    "devicetaintrules": _default_rule_taint_time,
}


def default_object(resource: str, obj: dict, now: str | None = None) -> None:
    """Apply the scheme's defaults for `resource` to `obj`, in place: what decoding a request body does, so the
    writer's field manager owns them. Admission (sim/api/admission.py) and PrepareForCreate come later. `now` (the
    server's clock, RFC 3339) for the defaults that are a time; without it those are left alone."""
    if not isinstance(obj, dict):
        return
    defaulter = _DEFAULTERS.get(resource)
    if defaulter is not None:
        defaulter(obj)
    timed = _TIMED_DEFAULTERS.get(resource)
    if timed is not None and now:
        timed(obj, now)


_PREPARERS: dict[str, Callable[[dict], None]] = {
    "pods": prepare_pod,
    "namespaces": prepare_namespace,
}


def prepare_for_update(resource: str, new: dict, old: dict, now: str | None = None) -> None:
    """The registry strategy's PrepareForUpdate of the main resource (a DaemonSet's template generation; a
    DeviceTaintRule's timeAdded when its effect changes)."""
    if resource == "daemonsets" and isinstance(new, dict):
        prepare_daemonset_update(new, old)
    elif resource == "devicetaintrules" and isinstance(new, dict) and now:
        prepare_taint_rule_update(new, old, now)


# metav1.ResetObjectMetaForStatus: what a status write of a kind that opted in keeps of the stored metadata.
_RESET_FOR_STATUS = ("labels", "annotations", "finalizers", "ownerReferences")
# Each kind's status strategy (PrepareForUpdate of pods/status, deployments/status, ... in v1.37.2's pkg/registry):
# every one resets the spec, and most take the metadata from the request, so a status write may change labels,
# annotations and finalizers. These keep more of the stored metadata. (CustomResourceDefinitions call
# ResetObjectMetaForStatus on the new object twice, which keeps nothing: they take the request's, as the rest.)
_STATUS_KEEPS: dict[str, tuple[str, ...]] = {
    "pods": ("ownerReferences",),  # old kubelets corrupted them
    "deployments": ("labels",),
    "resourceclaims": _RESET_FOR_STATUS,
    "devicetaintrules": _RESET_FOR_STATUS,
}


def prepare_for_status_update(resource: str, new: dict, old: dict) -> None:
    """The status strategy's PrepareForUpdate on the status itself (pods/status: fields a client may leave out)."""
    if resource == "pods" and isinstance(new, dict):
        prepare_pod_status_update(new, old)


def status_update_metadata(resource: str, sent: dict, stored: dict) -> dict:
    """The metadata a status write (PUT or PATCH of `<resource>/status`) stores: the request's, but for the fields
    the generic BeforeUpdate and the kind's status strategy keep from the stored object. resourceVersion and
    managedFields are the store's to set."""
    md = {k: v for k, v in sent.items() if k not in ("resourceVersion", "managedFields")}
    kept = _STATUS_KEEPS.get(resource, ())
    for k in (
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "managedFields",
        *kept,
    ):
        if k in stored:
            md[k] = stored[k]
        else:
            md.pop(k, None)
    if stored.get("deletionTimestamp"):
        # No new finalizers on an object that is going away (as on the main resource).
        md["finalizers"] = [f for f in md.get("finalizers") or [] if f in (stored.get("finalizers") or [])]
    for k in ("labels", "annotations", "finalizers", "ownerReferences"):
        if k in md and not md[k]:
            md.pop(k)
    return md


def prepare_for_create(resource: str, obj: dict) -> None:
    """The registry strategy's PrepareForCreate: server-set fields of a new object (a pod's Pending status, a
    namespace's `kubernetes` finalizer), after admission and outside managedFields."""
    preparer = _PREPARERS.get(resource)
    if preparer is not None and isinstance(obj, dict):
        preparer(obj)


_VALIDATORS: dict[str, Callable[[dict, dict | None], list[dict]]] = {
    "pods": _pod_errors,
    "nodes": _node_errors,
    "namespaces": _namespace_errors,
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


def validate_object(resource: str, obj: dict, old: dict | None, api_version: str = "") -> list[dict]:
    """Causes ([{reason, message, field}]) the API server would reject `obj` with; [] when it is valid.

    `old` is the stored object on update (immutability rules apply), None on create. resourceVersion
    rules are the store's. Unknown resources only get metadata checks. `api_version` is the request's: only the
    Event strategy reads it (an Event written through events.k8s.io/v1 is checked more strictly than through v1).
    """
    if not isinstance(obj, dict):
        return [invalid("", obj, "must be an object")]
    if resource == "events":
        # The event strategy validates the whole object itself, metadata included only for the strict APIs.
        try:
            return _event_errors(obj, old, api_version or "v1")
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            return [invalid("", "<object>", f"malformed object: {exc}")]
    errs: list[dict] = []
    try:
        errs += _meta_errors(resource, obj)
        if old is not None:
            errs += _meta_update_errors(obj, old)
        check = _VALIDATORS.get(resource)
        if check is not None:
            errs += check(obj, old)
    except (AttributeError, TypeError, KeyError, ValueError, RecursionError) as exc:
        # A shape the checks did not foresee (a name that is a number, decoding skipped): reject it as invalid
        # rather than crash the server or the scenario loader.
        errs.append(invalid("", "<object>", f"malformed object: {exc}"))
    return errs


# The entry points (sim/pieces.py) and the one name format the tests read.
__all__ = ["default_object", "prepare_for_create", "prepare_for_update", "validate_object"]
