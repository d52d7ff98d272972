"""The shipped 1.37 OpenAPI schemas (openapi_schemas.json): lookup by kind, $ref resolution, per-field patch and list
metadata."""

from __future__ import annotations

import functools
import json
import pathlib

DATA = pathlib.Path(__file__).with_name("openapi_schemas.json")
REF_PREFIX = "#/components/schemas/"


@functools.lru_cache(maxsize=1)
def load() -> dict:
    """{"served": {"group/version": [schema names]}, "schemas": {name: schema}} (read once)."""
    return json.loads(DATA.read_text())


def schemas() -> dict:
    return load()["schemas"]


@functools.lru_cache(maxsize=1)
def _kind_index() -> dict[str, str]:
    index: dict[str, str] = {}
    served = {name for names in load()["served"].values() for name in names}
    for name, schema in schemas().items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            kind = gvk["kind"]
            # A served kind wins over a meta kind of the same name (e.g. DeleteOptions in many groups); of two
            # served kinds of one name (core and events.k8s.io Event) the first, the core one.
            if kind not in index or (name in served and index[kind] not in served):
                index[kind] = name
    return index


@functools.lru_cache(maxsize=1)
def _served_index() -> dict[tuple[str, str], str]:
    """(apiVersion, kind) → schema name, for the served kinds."""
    return {(gv, name.rsplit(".", 1)[-1]): name for gv, names in load()["served"].items() for name in names}


def schema_name_for_kind(kind: str, api_version: str = "") -> str | None:
    """`Pod` → `io.k8s.api.core.v1.Pod` (None for a kind the shipped schemas do not have); with `api_version`, the
    kind of that group-version (`events.k8s.io/v1`, `Event` → `io.k8s.api.events.v1.Event`)."""
    if api_version:
        name = _served_index().get((api_version, kind))
        if name:
            return name
    return _kind_index().get(kind)


def schema_for_kind(kind: str, api_version: str = "") -> dict | None:
    name = schema_name_for_kind(kind, api_version)
    return schemas()[name] if name else None


# Schemas are loaded once and never change, so lookups are memoised by object identity.
_RESOLVED: dict[int, dict | None] = {}
_FIELDS: dict[tuple[int, str], dict | None] = {}


def resolve(schema: dict | None) -> dict | None:
    """Follow `$ref` (bare or inside a one-element allOf) to the named schema; siblings such as patch tags stay on the
    field."""
    if schema is None:
        return None
    key = id(schema)
    try:
        return _RESOLVED[key]
    except KeyError:
        pass
    result = _resolve(schema)
    if is_shipped(schema):
        _RESOLVED[key] = result
    return result


def is_shipped(schema: dict) -> bool:
    """Whether `schema` is one of the shipped (immortal) schema objects: only those are memoised by id, since a
    caller's temporary dict could reuse an id."""
    if _SHIPPED_IDS is None:
        _index_shipped()
    return _SHIPPED_IDS is not None and id(schema) in _SHIPPED_IDS


_SHIPPED_IDS: set[int] | None = None


def _index_shipped() -> None:
    global _SHIPPED_IDS
    ids: set[int] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            ids.add(id(node))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schemas())
    _SHIPPED_IDS = ids


def _resolve(schema: dict | None) -> dict | None:
    if _SHIPPED_IDS is None:
        _index_shipped()
    seen = 0
    while schema is not None and seen < 16:
        seen += 1
        ref = schema.get("$ref")
        if ref is None and len(schema.get("allOf", ())) == 1:
            ref = schema["allOf"][0].get("$ref")
        if ref is None:
            return schema
        schema = schemas().get(ref[len(REF_PREFIX) :]) if ref.startswith(REF_PREFIX) else None
    return schema


def field(schema: dict | None, name: str) -> dict | None:
    """The (unresolved) schema of field `name` of an object schema, or of a map's values."""
    if schema is None:
        return None
    key = (id(schema), name)
    try:
        return _FIELDS[key]
    except KeyError:
        pass
    result = _field(schema, name)
    if is_shipped(schema):
        _FIELDS[key] = result
    return result


def _field(schema: dict | None, name: str) -> dict | None:
    schema = resolve(schema)
    if not schema:
        return None
    props = schema.get("properties")
    if props and name in props:
        return props[name]
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        return extra
    return None


def items(schema: dict | None) -> dict | None:
    """The element schema of an array field."""
    schema = resolve(schema)
    if not schema:
        return None
    return schema.get("items")


def patch_meta(schema: dict | None) -> tuple[list[str], str | None]:
    """(patch strategies, merge key) of a field schema, from x-kubernetes-patch-strategy / -merge-key."""
    if not schema:
        return [], None
    raw = schema.get("x-kubernetes-patch-strategy") or ""
    return [s for s in raw.split(",") if s], schema.get("x-kubernetes-patch-merge-key")


def list_type(schema: dict | None) -> tuple[str, list[str]]:
    """("atomic"|"set"|"map", map keys) of an array field, as server-side apply treats it."""
    if not schema:
        return "atomic", []
    kind = schema.get("x-kubernetes-list-type")
    keys = list(schema.get("x-kubernetes-list-map-keys") or [])
    strategies, merge_key = patch_meta(schema)
    if kind == "map":
        return "map", keys or ([merge_key] if merge_key else [])
    if kind in ("set", "atomic"):
        return kind, []
    if "merge" in strategies:
        return ("map", [merge_key]) if merge_key else ("set", [])
    return "atomic", []


def unknown_fields(kind: str, obj: dict) -> list[str]:
    """Paths of fields `obj` sets that the kind's 1.37 schema does not declare (`spec.foo`, `spec.containers[0].bar`).

    What `fieldValidation=Strict` rejects; empty for kinds without a shipped schema.
    """
    schema = schema_for_kind(kind)
    if schema is None or not isinstance(obj, dict):
        return []
    out: list[str] = []
    _unknown(obj, schema, "", out)
    return out


def _unknown(value, schema: dict | None, path: str, out: list[str]) -> None:
    resolved = resolve(schema)
    if resolved is None:
        return
    if isinstance(value, dict):
        props = resolved.get("properties")
        extra = resolved.get("additionalProperties")
        if props is None and not isinstance(extra, dict):
            return  # free-form (RawExtension, FieldsV1, ...)
        for key, child in value.items():
            child_path = f"{path}.{key}" if path else key
            if props is not None and key in props:
                _unknown(child, props[key], child_path, out)
            elif isinstance(extra, dict):
                _unknown(child, extra, child_path, out)
            else:
                out.append(child_path)
    elif isinstance(value, list):
        element = resolved.get("items")
        if isinstance(element, dict):
            for i, child in enumerate(value):
                _unknown(child, element, f"{path}[{i}]", out)


def strict_decoding_message(kind: str, version: str, paths: list[str]) -> str:
    """The 400 message a Strict write with unknown fields gets (`... cannot be handled as a DeviceClass: strict decoding
    error: ...`)."""
    fields = ", ".join(f'unknown field "{p}"' for p in paths)
    return f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding error: {fields}'
