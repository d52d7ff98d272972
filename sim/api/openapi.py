"""`/openapi/v3` documents for the simulator's group-versions, built from the shipped 1.37 schemas (enough for kubectl
explain and apply)."""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from dragoman.fleet.k8s import registry
from dragoman.sim.api import schemas as _schemas
from dragoman.sim.api import version as _version

# kube-apiserver's OpenAPI info.version: its effective version's major.minor (apiserver server/config.go), not the
# release.
INFO_VERSION = f"{_version.MAJOR}.{_version.MINOR}"

# (kind, plural, namespaced, subresources, verbs) per served group-version: the registry's (fleet/k8s/registry.py),
# less the subresources these documents do not describe yet (served all the same) and the CRD-served kinds, whose
# documents the CRD's own schema would give.
_UNDOCUMENTED_SUBRESOURCES = {
    "Namespace": {"finalize"},
    "Pod": {"log"},
    "Deployment": {"scale"},
    "ReplicaSet": {"scale"},
    "StatefulSet": {"scale"},
}


def _documented() -> dict[tuple[str, str], list[tuple[str, str, bool, tuple[str, ...], list[str]]]]:
    out: dict[tuple[str, str], list[tuple[str, str, bool, tuple[str, ...], list[str]]]] = {}
    for r in registry.RESOURCES:
        if r.custom:
            continue
        hidden = _UNDOCUMENTED_SUBRESOURCES.get(r.kind, set())
        subresources = tuple(s for s in r.subresources if s not in hidden)
        out.setdefault((r.group, r.version), []).append((r.kind, r.plural, r.namespaced, subresources, list(r.verbs)))
    return out


RESOURCES = _documented()

_PATCH_TYPES = [
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+cbor",
]
_REF = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."


def _q(name: str, description: str, type_: str = "string", unique: bool = True) -> dict:
    schema: dict[str, Any] = {"type": type_}
    if unique:
        schema["uniqueItems"] = True
    return {"name": name, "in": "query", "description": description, "schema": schema}


P_PRETTY = _q(
    "pretty",
    "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a "
    "browser or command-line HTTP tool (curl and wget).",
)
P_DRY_RUN = _q(
    "dryRun",
    "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun "
    "directive will result in an error response and no further processing of the request. Valid values "
    "are: - All: all dry run stages will be processed",
)
P_FIELD_MANAGER = _q(
    "fieldManager",
    "fieldManager is a name associated with the actor or entity that is making these changes. The value "
    "must be less than or 128 characters long, and only contain printable characters, as defined by "
    "https://golang.org/pkg/unicode/#IsPrint.",
)
P_FIELD_VALIDATION = _q(
    "fieldValidation",
    "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) "
    "containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown "
    "fields that are silently dropped from the object, and will ignore all but the last duplicate field "
    "that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a "
    "warning via the standard warning response header for each unknown field that is dropped from the "
    "object, and for each duplicate field that is encountered. The request will still succeed if there are "
    "no other errors, and will only persist the last of any duplicate fields. This is the default in "
    "v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be "
    "dropped from the object, or if any duplicate fields are present. The error returned from the server "
    "will contain all unknown and duplicate fields encountered.",
)
P_FORCE = _q(
    "force",
    'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by '
    "other people. Force flag must be unset for non-apply patch requests.",
    "boolean",
)
P_GRACE = _q(
    "gracePeriodSeconds",
    "The duration in seconds before the object should be deleted. Value must be non-negative integer. The "
    "value zero indicates delete immediately. If this value is nil, the default grace period for the "
    "specified type will be used. Defaults to a per object value if not specified. zero means delete "
    "immediately.",
    "integer",
)
P_PROPAGATION = _q(
    "propagationPolicy",
    "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be "
    "set, but not both. The default policy is decided by the existing finalizer set in the "
    "metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - "
    "orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the "
    "background; 'Foreground' - a cascading policy that deletes all dependents in the foreground.",
)
P_ORPHAN = _q(
    "orphanDependents",
    "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the "
    'dependent objects be orphaned. If true/false, the "orphan" finalizer will be added to/removed from '
    "the object's finalizers list. Either this field or PropagationPolicy may be set, but not both.",
    "boolean",
)
LIST_PARAMS = [
    _q(
        "allowWatchBookmarks",
        'allowWatchBookmarks requests watch events with type "BOOKMARK". Servers that do not implement '
        "bookmarks may ignore this flag and bookmarks are sent at the server's discretion.",
        "boolean",
    ),
    _q("continue", "The continue option should be set when retrieving more results from the server."),
    _q("fieldSelector", "A selector to restrict the list of returned objects by their fields. Defaults to everything."),
    _q("labelSelector", "A selector to restrict the list of returned objects by their labels. Defaults to everything."),
    _q("limit", "limit is a maximum number of responses to return for a list call.", "integer"),
    _q("resourceVersion", "resourceVersion sets a constraint on what resource versions a request may be served from."),
    _q("resourceVersionMatch", "resourceVersionMatch determines how resourceVersion is applied to list calls."),
    _q("sendInitialEvents", "`sendInitialEvents=true` may be set together with `watch=true`.", "boolean"),
    _q("timeoutSeconds", "Timeout for the list/watch call.", "integer"),
    _q(
        "watch",
        "Watch for changes to the described resources and return them as a stream of add, update, and "
        "remove notifications. Specify resourceVersion.",
        "boolean",
    ),
]


def _path_param(name: str, description: str) -> dict:
    return {
        "name": name,
        "in": "path",
        "description": description,
        "required": True,
        "schema": {"type": "string", "uniqueItems": True},
    }


def _content(ref: str) -> dict:
    schema = {"$ref": _REF + ref}
    return {
        t: {"schema": schema} for t in ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
    }


def _responses(ok: dict[str, str]) -> dict:
    out = {
        code: {"description": {"200": "OK", "201": "Created", "202": "Accepted"}[code], "content": _content(ref)}
        for code, ref in ok.items()
    }
    out["401"] = {"description": "Unauthorized"}
    return out


def _tag(group: str, version: str) -> str:
    return f"{(group.split('.')[0] if group else 'core')}_{version}"


def _op_prefix(group: str, version: str) -> str:
    if not group:
        return f"Core{version.capitalize()}"
    name = group[: -len(".k8s.io")] if group.endswith(".k8s.io") else group
    return "".join(part.capitalize() for part in name.split(".")) + version.capitalize()


def _gvk(group: str, version: str, kind: str) -> dict:
    return {"group": group, "version": version, "kind": kind}


def _schema_for(group: str, version: str, kind: str) -> str | None:
    for name, schema in _schemas.schemas().items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            if gvk == _gvk(group, version, kind):
                return name
    return None


def _build_paths(group: str, version: str) -> dict:
    base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    prefix = _op_prefix(group, version)
    tag = [_tag(group, version)]
    paths: dict[str, Any] = {}
    for kind, plural, namespaced, subresources, verbs in RESOURCES[(group, version)]:
        schema = _schema_for(group, version, kind)
        if schema is None:
            continue
        list_schema = schema + "List" if schema + "List" in _schemas.schemas() else None
        gvk = _gvk(group, version, kind)
        ns_word = "Namespaced" if namespaced else ""
        collection = f"{base}/namespaces/{{namespace}}/{plural}" if namespaced else f"{base}/{plural}"
        common = [P_PRETTY] + (
            [_path_param("namespace", "object name and auth scope, such as for teams and projects")]
            if namespaced
            else []
        )

        ops: dict[str, Any] = {"parameters": list(common)}
        if "list" in verbs and list_schema:
            ops["get"] = {
                "tags": tag,
                "description": f"list or watch objects of kind {kind}",
                "operationId": f"list{prefix}{ns_word}{kind}",
                "parameters": LIST_PARAMS,
                "responses": _responses({"200": list_schema}),
                "x-kubernetes-action": "list",
                "x-kubernetes-group-version-kind": gvk,
            }
        if "create" in verbs:
            ops["post"] = {
                "tags": tag,
                "description": f"create a {kind}",
                "operationId": f"create{prefix}{ns_word}{kind}",
                "parameters": [P_DRY_RUN, P_FIELD_MANAGER, P_FIELD_VALIDATION],
                "requestBody": {"content": {"*/*": {"schema": {"$ref": _REF + schema}}}, "required": True},
                "responses": _responses({"200": schema, "201": schema, "202": schema}),
                "x-kubernetes-action": "post",
                "x-kubernetes-group-version-kind": gvk,
            }
        if "deletecollection" in verbs:
            ops["delete"] = {
                "tags": tag,
                "description": f"delete collection of {kind}",
                "operationId": f"delete{prefix}Collection{ns_word}{kind}",
                "parameters": [P_DRY_RUN, P_GRACE, P_PROPAGATION] + LIST_PARAMS,
                "requestBody": {"content": {"*/*": {"schema": {"$ref": _REF + _META + "DeleteOptions"}}}},
                "responses": _responses({"200": _META + "Status"}),
                "x-kubernetes-action": "deletecollection",
                "x-kubernetes-group-version-kind": gvk,
            }
        paths[collection] = ops

        if "get" in verbs or "update" in verbs:
            item = f"{collection}/{{name}}"
            item_ops: dict[str, Any] = {"parameters": [_path_param("name", f"name of the {kind}")] + common}
            item_ops.update(_object_ops(kind, schema, gvk, prefix, ns_word, "", tag, verbs))
            paths[item] = item_ops
            for sub in subresources:
                sub_path = f"{item}/{sub}"
                sub_ops: dict[str, Any] = {"parameters": [_path_param("name", f"name of the {kind}")] + common}
                if sub == "status":
                    sub_ops.update(
                        _object_ops(kind, schema, gvk, prefix, ns_word, "Status", tag, ["get", "update", "patch"])
                    )
                elif sub == "eviction":
                    sub_ops["post"] = _create_sub_op(
                        "Eviction",
                        "io.k8s.api.policy.v1.Eviction",
                        _gvk("policy", "v1", "Eviction"),
                        prefix,
                        ns_word,
                        kind,
                        tag,
                    )
                elif sub == "token":
                    sub_ops["post"] = _create_sub_op(
                        "TokenRequest",
                        "io.k8s.api.authentication.v1.TokenRequest",
                        _gvk("authentication.k8s.io", "v1", "TokenRequest"),
                        prefix,
                        ns_word,
                        kind,
                        tag,
                    )
                elif sub == "binding":
                    sub_ops["post"] = _create_sub_op(
                        "Binding", "io.k8s.api.core.v1.Binding", _gvk("", "v1", "Binding"), prefix, ns_word, kind, tag
                    )
                paths[sub_path] = sub_ops
        if namespaced and "list" in verbs and list_schema:
            paths[f"{base}/{plural}"] = {
                "parameters": [P_PRETTY] + LIST_PARAMS,
                "get": {
                    "tags": tag,
                    "description": f"list or watch objects of kind {kind}",
                    "operationId": f"list{prefix}{kind}ForAllNamespaces",
                    "responses": _responses({"200": list_schema}),
                    "x-kubernetes-action": "list",
                    "x-kubernetes-group-version-kind": gvk,
                },
            }
    return paths


def _create_sub_op(sub_kind: str, schema: str, gvk: dict, prefix: str, ns_word: str, kind: str, tag: list[str]) -> dict:
    return {
        "tags": tag,
        "description": f"create {sub_kind.lower()} of a {kind}",
        "operationId": f"create{prefix}{ns_word}{kind}{sub_kind}",
        "parameters": [P_DRY_RUN, P_FIELD_MANAGER, P_FIELD_VALIDATION],
        "requestBody": {"content": {"*/*": {"schema": {"$ref": _REF + schema}}}, "required": True},
        "responses": _responses({"200": schema, "201": schema, "202": schema}),
        "x-kubernetes-action": "post",
        "x-kubernetes-group-version-kind": gvk,
    }


def _object_ops(
    kind: str, schema: str, gvk: dict, prefix: str, ns_word: str, suffix: str, tag: list[str], verbs: list[str]
) -> dict:
    what = f"status of the specified {kind}" if suffix else f"the specified {kind}"
    ops: dict[str, Any] = {}
    if "get" in verbs:
        ops["get"] = {
            "tags": tag,
            "description": f"read {what}",
            "operationId": f"read{prefix}{ns_word}{kind}{suffix}",
            "responses": _responses({"200": schema}),
            "x-kubernetes-action": "get",
            "x-kubernetes-group-version-kind": gvk,
        }
    if "update" in verbs:
        ops["put"] = {
            "tags": tag,
            "description": f"replace {what}",
            "operationId": f"replace{prefix}{ns_word}{kind}{suffix}",
            "parameters": [P_DRY_RUN, P_FIELD_MANAGER, P_FIELD_VALIDATION],
            "requestBody": {"content": {"*/*": {"schema": {"$ref": _REF + schema}}}, "required": True},
            "responses": _responses({"200": schema, "201": schema}),
            "x-kubernetes-action": "put",
            "x-kubernetes-group-version-kind": gvk,
        }
    if "patch" in verbs:
        ops["patch"] = {
            "tags": tag,
            "description": f"partially update {what}",
            "operationId": f"patch{prefix}{ns_word}{kind}{suffix}",
            "parameters": [P_DRY_RUN, P_FIELD_MANAGER, P_FIELD_VALIDATION, P_FORCE],
            "requestBody": {
                "content": {t: {"schema": {"$ref": _REF + _META + "Patch"}} for t in _PATCH_TYPES},
                "required": True,
            },
            "responses": _responses({"200": schema, "201": schema}),
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk,
        }
    if "delete" in verbs and not suffix:
        ops["delete"] = {
            "tags": tag,
            "description": f"delete a {kind}",
            "operationId": f"delete{prefix}{ns_word}{kind}",
            "parameters": [P_DRY_RUN, P_GRACE, P_ORPHAN, P_PROPAGATION],
            "requestBody": {"content": {"*/*": {"schema": {"$ref": _REF + _META + "DeleteOptions"}}}},
            "responses": _responses({"200": schema, "202": schema}),
            "x-kubernetes-action": "delete",
            "x-kubernetes-group-version-kind": gvk,
        }
    return ops


def _collect_refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF):
            found.add(ref[len(_REF) :])
        for value in node.values():
            _collect_refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _collect_refs(value, found)


@functools.lru_cache(maxsize=32)
def _document_json(group: str, version: str) -> str | None:
    if (group, version) not in RESOURCES:
        return None
    paths = _build_paths(group, version)
    all_schemas = _schemas.schemas()
    wanted: set[str] = set()
    _collect_refs(paths, wanted)
    for name in _schemas.load()["served"].get(f"{group}/{version}" if group else version, []):
        wanted.add(name)
    done: set[str] = set()
    todo = list(wanted)
    while todo:
        name = todo.pop()
        if name in done or name not in all_schemas:
            continue
        done.add(name)
        refs: set[str] = set()
        _collect_refs(all_schemas[name], refs)
        todo.extend(refs - done)
    document = {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": INFO_VERSION},
        "paths": paths,
        "components": {
            "schemas": {name: all_schemas[name] for name in sorted(done)},
            "securitySchemes": {
                "BearerToken": {
                    "type": "apiKey",
                    "description": "Bearer Token authentication",
                    "name": "authorization",
                    "in": "header",
                }
            },
        },
        "security": [{"BearerToken": []}],
    }
    return json.dumps(document, separators=(",", ":"), sort_keys=True)


def gv_path(group: str, version: str) -> str:
    """`api/v1` or `apis/<group>/<version>`: the key of a group-version in the /openapi/v3 index."""
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def openapi_v3_document_bytes(group: str, version: str) -> bytes | None:
    """The serialized document (cached); serve it as `application/json`."""
    text = _document_json(group, version)
    return text.encode() if text is not None else None


def document_hash(group: str, version: str) -> str | None:
    text = _document_json(group, version)
    return hashlib.sha512(text.encode()).hexdigest().upper() if text is not None else None


def openapi_v3_document(group: str, version: str) -> dict | None:
    """The OpenAPI v3 document for one group-version (a fresh copy), or None if the simulator has no schemas for it."""
    text = _document_json(group, version)
    return json.loads(text) if text is not None else None


def openapi_v3_index(served: list[tuple[str, str]]) -> dict:
    """`GET /openapi/v3`: {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=..."}, ...}} for the
    served group-versions."""
    paths: dict[str, Any] = {}
    for group, version in served:
        digest = document_hash(group, version)
        if digest is None:
            continue
        key = gv_path(group, version)
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}


def parse_gv_path(path: str) -> tuple[str, str] | None:
    """`/openapi/v3/apis/resource.k8s.io/v1` → ("resource.k8s.io", "v1"); `/openapi/v3/api/v1` → ("", "v1")."""
    rest = path.split("?", 1)[0].strip("/")
    if rest.startswith("openapi/v3/"):
        rest = rest[len("openapi/v3/") :]
    parts = rest.split("/")
    if len(parts) == 2 and parts[0] == "api":
        return "", parts[1]
    if len(parts) == 3 and parts[0] == "apis":
        return parts[1], parts[2]
    return None


def served_group_versions() -> list[tuple[str, str]]:
    """Every group-version this module can document."""
    return list(RESOURCES)
