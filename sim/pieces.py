"""The server's view of the pure API pieces in sim/api/, with small stand-ins for any that have not landed yet."""

from __future__ import annotations

import copy
import datetime
import json
from typing import Any


try:
    from dragoman.sim.api.patch import (  # type: ignore
        PatchError,
        apply_json_merge_patch,
        apply_json_patch,
        apply_strategic_merge_patch,
        server_side_apply,
    )
    try:
        from dragoman.sim.api.patch import update_managed_fields  # type: ignore
    except ImportError:  # pragma: no cover
        def update_managed_fields(old, new, manager, operation="Update", now=None, subresource=""):  # type: ignore[no-redef]
            return new
    try:
        from dragoman.sim.api.patch import ApplyConflict  # type: ignore
    except ImportError:  # pragma: no cover
        class ApplyConflict(Exception):  # type: ignore[no-redef]
            pass
except ImportError:  # pragma: no cover - replaced when sim/api/patch.py lands

    class PatchError(Exception):  # type: ignore[no-redef]
        pass

    class ApplyConflict(Exception):  # type: ignore[no-redef]
        pass

    def apply_json_merge_patch(target: dict, patch: Any) -> Any:
        if not isinstance(patch, dict):
            return copy.deepcopy(patch)
        out = dict(target) if isinstance(target, dict) else {}
        for k, v in patch.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = apply_json_merge_patch(out.get(k, {}), v) if isinstance(v, dict) else copy.deepcopy(v)
        return out

    def apply_strategic_merge_patch(target: dict, patch: dict, kind: str) -> dict:
        return apply_json_merge_patch(target, patch)

    def apply_json_patch(target: dict, operations: list) -> dict:
        doc = copy.deepcopy(target)
        for op in operations:
            parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
            parent = doc
            for p in parts[:-1]:
                parent = parent[int(p)] if isinstance(parent, list) else parent[p]
            last = parts[-1]
            kind = op["op"]
            if kind in ("add", "replace"):
                if isinstance(parent, list):
                    if last == "-":
                        parent.append(op["value"])
                    elif kind == "add":
                        parent.insert(int(last), op["value"])
                    else:
                        parent[int(last)] = op["value"]
                else:
                    parent[last] = op["value"]
            elif kind == "remove":
                if isinstance(parent, list):
                    del parent[int(last)]
                else:
                    del parent[last]
            elif kind == "test":
                cur = parent[int(last)] if isinstance(parent, list) else parent.get(last)
                if cur != op["value"]:
                    raise PatchError("the test operation failed")
            else:
                raise PatchError(f"unsupported operation {kind!r}")
        return doc

    def update_managed_fields(old, new, manager, operation="Update", now=None, subresource=""):  # type: ignore[no-redef]
        return new

    def server_side_apply(live: dict | None, applied: dict, manager: str, force: bool, now=None, subresource="") -> dict:
        base = copy.deepcopy(live) if live else {}
        return apply_json_merge_patch(base, applied)


try:
    from dragoman.sim.api.tables import table_for  # type: ignore
except ImportError:  # pragma: no cover

    def table_for(resource: str, objects: list[dict], now: datetime.datetime, resource_version: str) -> dict:
        return {
            "kind": "Table",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": {"resourceVersion": resource_version},
            "columnDefinitions": [
                {"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0},
            ],
            "rows": [
                {
                    "cells": [o["metadata"]["name"]],
                    "object": {
                        "kind": "PartialObjectMetadata",
                        "apiVersion": "meta.k8s.io/v1",
                        "metadata": o["metadata"],
                    },
                }
                for o in objects
            ],
        }


try:
    from dragoman.sim.api.openapi import openapi_v3_document, openapi_v3_index  # type: ignore
except ImportError:  # pragma: no cover

    def openapi_v3_index(served: list[tuple[str, str]]) -> dict:
        return {"paths": {}}

    def openapi_v3_document(group: str, version: str) -> dict | None:
        return None


try:
    from dragoman.sim.api.rbac import RequestAttributes, authorize, forbidden_message  # type: ignore
except ImportError:  # pragma: no cover
    import dataclasses

    @dataclasses.dataclass
    class RequestAttributes:  # type: ignore[no-redef]
        user: str
        groups: list
        verb: str
        api_group: str
        resource: str
        subresource: str
        namespace: str
        name: str
        non_resource_path: str | None = None

    def authorize(attrs, roles, cluster_roles, role_bindings, cluster_role_bindings):  # type: ignore[no-redef]
        return ("system:masters" in attrs.groups, "")

    def forbidden_message(attrs) -> str:  # type: ignore[no-redef]
        res = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
        where = f' in the namespace "{attrs.namespace}"' if attrs.namespace else " at the cluster scope"
        group = f'API group "{attrs.api_group}"'
        return f'{res} is forbidden: User "{attrs.user}" cannot {attrs.verb} resource "{res}" in {group}{where}'


try:
    from dragoman.sim.api.protobuf import decode_request, is_protobuf  # type: ignore
except ImportError:  # pragma: no cover

    def is_protobuf(body: bytes) -> bool:
        return body[:4] == b"k8s\x00"

    def decode_request(body: bytes) -> dict:
        raise ValueError("protobuf request bodies are not supported yet")


try:
    from dragoman.sim.api.validation import default_object, validate_object  # type: ignore
except ImportError:  # pragma: no cover

    def default_object(resource: str, obj: dict) -> None:
        return None

    def validate_object(resource: str, obj: dict, old: dict | None) -> list[dict]:
        return []


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
