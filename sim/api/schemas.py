"""The shipped 1.37 OpenAPI schemas (openapi_schemas.json): lookup by kind, $ref resolution, per-field patch and list metadata."""

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
            # A served kind wins over a meta kind of the same name (e.g. DeleteOptions in many groups).
            if kind not in index or name in served:
                index[kind] = name
    return index


def schema_name_for_kind(kind: str) -> str | None:
    """`Pod` → `io.k8s.api.core.v1.Pod` (None for a kind the shipped schemas do not have)."""
    return _kind_index().get(kind)


def schema_for_kind(kind: str) -> dict | None:
    name = schema_name_for_kind(kind)
    return schemas()[name] if name else None


def resolve(schema: dict | None) -> dict | None:
    """Follow `$ref` (bare or inside a one-element allOf) to the named schema; siblings such as patch tags stay on the field."""
    seen = 0
    while schema is not None and seen < 16:
        seen += 1
        ref = schema.get("$ref")
        if ref is None and len(schema.get("allOf", ())) == 1:
            ref = schema["allOf"][0].get("$ref")
        if ref is None:
            return schema
        schema = schemas().get(ref[len(REF_PREFIX):]) if ref.startswith(REF_PREFIX) else None
    return schema


def field(schema: dict | None, name: str) -> dict | None:
    """The (unresolved) schema of field `name` of an object schema, or of a map's values."""
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
