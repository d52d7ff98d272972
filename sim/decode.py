"""Decoding a request body into a built-in type as the API server does: wrong JSON types are a 400, unknown fields are
dropped (or a 400 under fieldValidation=Strict)."""

from __future__ import annotations

from typing import Any

from dragoman.sim.api import schemas as _schemas

_JSON_TYPE = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "bool",
    int: "number",
    float: "number",
    type(None): "null",
}
_REF = "#/components/schemas/"


class DecodeError(ValueError):
    """The body cannot be decoded into the kind (the message follows the server's `cannot be handled as` shape)."""


def _short(schema_name: str) -> str:
    return schema_name.rsplit(".", 1)[-1]


def _ref_name(schema: dict | None) -> str:
    if not schema:
        return ""
    ref = schema.get("$ref") or (schema.get("allOf") or [{}])[0].get("$ref", "")
    return ref[len(_REF) :] if ref.startswith(_REF) else ""


def _go_type(schema: dict) -> str:
    t = schema.get("type")
    if t == "object" and isinstance(schema.get("additionalProperties"), dict):
        return "map[string]" + _go_type(_schemas.resolve(schema["additionalProperties"]) or {})
    if t == "array":
        return "[]" + _go_type(_schemas.resolve(schema.get("items")) or {})
    return {
        "string": "string",
        "integer": "int64" if schema.get("format") != "int32" else "int32",
        "boolean": "bool",
        "number": "float64",
    }.get(t or "", "struct")


class _Walker:
    def __init__(self) -> None:
        self.unknown: list[str] = []

    def walk(self, value: Any, field_schema: dict | None, path: str, owner: str) -> Any:
        name = _ref_name(field_schema)
        schema = _schemas.resolve(field_schema)
        if schema is None or value is None:
            return value
        if name.endswith("resource.Quantity"):
            ok = isinstance(value, (str, int, float)) and not isinstance(value, bool)
            if not ok:
                return self._fail(value, path, owner, "resource.Quantity")
            # The server stores quantities as strings in canonical form: 2 → "2", 0.5 → "500m".
            if isinstance(value, float):
                if value.is_integer():
                    return str(int(value))
                milli = value * 1000
                return f"{int(round(milli))}m" if abs(milli - round(milli)) < 1e-9 else repr(value)
            return str(value) if isinstance(value, int) else value
        if schema.get("x-kubernetes-int-or-string") or schema.get("format") == "int-or-string":
            ok = isinstance(value, (str, int)) and not isinstance(value, bool)
            return value if ok else self._fail(value, path, owner, "intstr.IntOrString")
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return value
        t = schema.get("type")
        props = schema.get("properties")
        if props is not None or t == "object":
            if not isinstance(value, dict):
                return self._fail(value, path, owner, _short(name) if name else _go_type(schema))
            addl = schema.get("additionalProperties")
            if props is not None:
                me = _short(name) if name else owner
                for key in list(value):
                    sub = f"{path}.{key}" if path else key
                    if key in props:
                        value[key] = self.walk(value[key], props[key], sub, me)
                    else:
                        self.unknown.append(sub)
                        del value[key]
            elif isinstance(addl, dict):
                for key in list(value):
                    value[key] = self.walk(value[key], addl, f"{path}[{key}]", owner)
            return value
        if t == "array":
            if not isinstance(value, list):
                return self._fail(value, path, owner, _go_type(schema))
            items = schema.get("items")
            for i, item in enumerate(value):
                value[i] = self.walk(item, items, f"{path}[{i}]", owner)
            return value
        if t == "string":
            return value if isinstance(value, str) else self._fail(value, path, owner, "string")
        if t == "integer":
            ok = (
                isinstance(value, int)
                and not isinstance(value, bool)
                or (isinstance(value, float) and value.is_integer())
            )
            return int(value) if ok else self._fail(value, path, owner, _go_type(schema))
        if t == "number":
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            return value if ok else self._fail(value, path, owner, "float64")
        if t == "boolean":
            return value if isinstance(value, bool) else self._fail(value, path, owner, "bool")
        return value

    @staticmethod
    def _fail(value: Any, path: str, owner: str, go_type: str) -> Any:
        jt = _JSON_TYPE.get(type(value), "value")
        where = f"Go struct field {owner}.{path}" if owner else "Go value"
        raise DecodeError(f"json: cannot unmarshal {jt} into {where} of type {go_type}")


def decode(kind: str, api_version: str, obj: dict, strict: bool) -> list[str]:
    """Check `obj` (in place) against the kind's 1.37 schema: raise DecodeError on a wrong JSON type, drop unknown
    fields (raise under `strict`). Returns the dropped field paths (the server's `unknown field` warnings)."""
    schema = _schemas.schema_for_kind(kind, api_version)
    version = api_version.rsplit("/", 1)[-1]
    if schema is None:
        return []
    w = _Walker()
    try:
        for key in list(obj):
            props = schema.get("properties") or {}
            if key in props:
                obj[key] = w.walk(obj[key], props[key], key, kind)
            else:
                w.unknown.append(key)
                del obj[key]
    except DecodeError as exc:
        raise DecodeError(f'{kind} in version "{version}" cannot be handled as a {kind}: {exc}') from None
    if strict and w.unknown:
        detail = ", ".join(f'unknown field "{u}"' for u in w.unknown)
        raise DecodeError(
            f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding error: {detail}'
        )
    return w.unknown
