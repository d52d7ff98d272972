"""The pure API pieces of sim/api/ the server and store call, in one place (plus the protobuf kinds kubectl create sends)."""

from __future__ import annotations

import json
from typing import Any

from dragoman.sim.api.openapi import openapi_v3_document, openapi_v3_index  # noqa: F401
from dragoman.sim.api.patch import (  # noqa: F401
    ApplyConflict,
    PatchError,
    apply_json_merge_patch,
    apply_json_patch,
    apply_strategic_merge_patch,
    server_side_apply,
    update_managed_fields,
)
from dragoman.sim.api.protobuf import decode_request, is_protobuf  # noqa: F401
from dragoman.sim.api.rbac import RequestAttributes, authorize, forbidden_message  # noqa: F401
from dragoman.sim.api.tables import table_for  # noqa: F401
from dragoman.sim.api.validation import default_object, validate_object  # noqa: F401


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _register_protobuf_kinds() -> None:
    """Teach the protobuf decoder the kinds `kubectl create <kind>` generators send as protobuf."""
    try:
        from dragoman.sim.api import protobuf as pb  # type: ignore
    except ImportError:  # pragma: no cover
        return
    kinds = getattr(pb, "KINDS", None)
    meta = getattr(pb, "OBJECT_META", None)
    if kinds is None or meta is None:
        return
    s = lambda name, repeated=False: (name, "string", None, repeated)  # noqa: E731
    rule = {1: s("verbs", True), 2: s("apiGroups", True), 3: s("resources", True), 4: s("resourceNames", True), 5: s("nonResourceURLs", True)}
    subject = {1: s("kind"), 2: s("apiGroup"), 3: s("name"), 4: s("namespace")}
    role_ref = {1: s("apiGroup"), 2: s("kind"), 3: s("name")}
    extra = {
        "ConfigMap": {1: ("metadata", "message", meta, False), 2: ("data", "map", None, False), 4: ("immutable", "bool", None, False)},
        "Namespace": {1: ("metadata", "message", meta, False), 2: ("spec", "message", {1: s("finalizers", True)}, False)},
        "ServiceAccount": {1: ("metadata", "message", meta, False), 4: ("automountServiceAccountToken", "bool", None, False)},
        "Role": {1: ("metadata", "message", meta, False), 2: ("rules", "message", rule, True)},
        "ClusterRole": {1: ("metadata", "message", meta, False), 2: ("rules", "message", rule, True)},
        "RoleBinding": {1: ("metadata", "message", meta, False), 2: ("subjects", "message", subject, True), 3: ("roleRef", "message", role_ref, False)},
        "ClusterRoleBinding": {1: ("metadata", "message", meta, False), 2: ("subjects", "message", subject, True), 3: ("roleRef", "message", role_ref, False)},
    }
    for kind, desc in extra.items():
        kinds.setdefault(kind, desc)


_register_protobuf_kinds()
