"""Decoding a request body into a built-in type as the API server does: wrong JSON types are a 400, unknown fields are
dropped (or a 400 under fieldValidation=Strict)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
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


# How the walk treats a field, worked out once per shipped field schema: a fleet's load meets the same few hundred
# field schemas millions of times, and resolving each one's $ref, name and type at every value was most of the cost of
# checking a 5,000-node scenario (sim/scenario._api_problem) and of every decoded write.
_ANY, _QUANTITY, _INTSTR, _OBJECT, _MAP, _LOOSE, _ARRAY, _STRING, _INTEGER, _NUMBER, _BOOLEAN = range(11)
_PLANS: dict[int, tuple] = {}
_NO_PLAN = (None,)


def _plan(field_schema: dict | None) -> tuple:
    key = id(field_schema)
    try:
        return _PLANS[key]
    except KeyError:
        pass
    plan = _make_plan(field_schema)
    if field_schema is not None and _schemas.is_shipped(field_schema):  # immortal: its id is never reused
        _PLANS[key] = plan
    return plan


def _make_plan(field_schema: dict | None) -> tuple:
    name = _ref_name(field_schema)
    schema = _schemas.resolve(field_schema)
    if schema is None:
        return (_ANY,)
    if name.endswith("resource.Quantity"):
        return (_QUANTITY,)
    if schema.get("x-kubernetes-int-or-string") or schema.get("format") == "int-or-string":
        return (_INTSTR,)
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return (_ANY,)
    t = schema.get("type")
    props = schema.get("properties")
    if props is not None or t == "object":
        go = _short(name) if name else _go_type(schema)
        if props is not None:
            return (_OBJECT, go, props, _short(name) if name else None)
        addl = schema.get("additionalProperties")
        return (_MAP, go, addl) if isinstance(addl, dict) else (_LOOSE, go)
    if t == "array":
        return (_ARRAY, _go_type(schema), schema.get("items"))
    if t == "string":
        return (_STRING,)
    if t == "integer":
        return (_INTEGER, _go_type(schema))
    if t == "number":
        return (_NUMBER,)
    if t == "boolean":
        return (_BOOLEAN,)
    return (_ANY,)


class _Walker:
    def __init__(self) -> None:
        self.unknown: list[str] = []

    def walk(self, value: Any, field_schema: dict | None, path: str, owner: str) -> Any:
        if value is None:
            return value
        plan = _plan(field_schema)
        how = plan[0]
        if how == _STRING:
            return value if isinstance(value, str) else self._fail(value, path, owner, "string")
        if how == _OBJECT:
            if not isinstance(value, dict):
                return self._fail(value, path, owner, plan[1])
            props = plan[2]
            me = plan[3] or owner
            for key in list(value):
                field = props.get(key) if key.__class__ is str else None
                if field is None:
                    self.unknown.append(f"{path}.{key}" if path else key)
                    del value[key]
                    continue
                v = value[key]
                if v is None:
                    continue
                if v.__class__ is str and _PLANS.get(id(field), _NO_PLAN)[0] == _STRING:
                    continue  # a string where a string belongs: most leaves, not worth a call
                value[key] = self.walk(v, field, f"{path}.{key}" if path else key, me)
            return value
        if how == _ARRAY:
            if not isinstance(value, list):
                return self._fail(value, path, owner, plan[1])
            items = plan[2]
            leaf = _PLANS.get(id(items), _NO_PLAN)[0] == _STRING
            for i, item in enumerate(value):
                if item is None or (leaf and item.__class__ is str):
                    continue
                value[i] = self.walk(item, items, f"{path}[{i}]", owner)
            return value
        if how == _MAP:
            if not isinstance(value, dict):
                return self._fail(value, path, owner, plan[1])
            addl = plan[2]
            leaf = _PLANS.get(id(addl), _NO_PLAN)[0] == _STRING
            for key, v in list(value.items()):
                if key.__class__ is not str:
                    # YAML allows `labels: {1: x}`; JSON has only string keys, so name the key that is not one.
                    self._fail_key(key, path, owner)
                if v is None or (leaf and v.__class__ is str):
                    continue
                value[key] = self.walk(v, addl, f"{path}[{key}]", owner)
            return value
        if how == _QUANTITY:
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
        if how == _INTSTR:
            ok = isinstance(value, (str, int)) and not isinstance(value, bool)
            return value if ok else self._fail(value, path, owner, "intstr.IntOrString")
        if how == _LOOSE:
            return value if isinstance(value, dict) else self._fail(value, path, owner, plan[1])
        if how == _INTEGER:
            ok = (
                isinstance(value, int)
                and not isinstance(value, bool)
                or (isinstance(value, float) and value.is_integer())
            )
            return int(value) if ok else self._fail(value, path, owner, plan[1])
        if how == _NUMBER:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            return value if ok else self._fail(value, path, owner, "float64")
        if how == _BOOLEAN:
            return value if isinstance(value, bool) else self._fail(value, path, owner, "bool")
        return value

    @staticmethod
    def _fail_key(key: Any, path: str, owner: str) -> Any:
        jt = _JSON_TYPE.get(type(key), "value")
        where = f"Go struct field {owner}.{path}" if owner else "Go value"
        text = json.dumps(key) if key is None or isinstance(key, (bool, int, float)) else repr(key)  # as YAML wrote it
        shown = text if len(text) <= 80 else text[:80] + "…"
        raise DecodeError(f"json: cannot unmarshal {jt} into {where} of type string: the key {shown} is not a string")

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


# The fast verdict. A scenario's objects are nearly all clean: every field known, every value of its type, nothing the
# decoder would convert (a number where a quantity belongs) or drop. For those the walk above changes nothing and
# returns no warning, so whether an object is clean is all a caller needs, and msgspec answers it in C from the object's
# msgpack bytes against a type built once per kind from the same plans the walk follows. Each type accepts no more than
# the walk leaves untouched (a quantity only as a string, an integer only as an integer, no unknown field, no key that
# is not a string where the walk reads keys); whatever it refuses goes through decode(), which words the refusal, drops
# the unknown fields or converts the values exactly as before.
class _Recursive(Exception):
    """A schema that contains itself (a msgspec type would have to name itself): its kind takes the walk."""


_FAST_TYPES: dict[int, Any] = {}  # id(shipped field schema) -> msgspec type
_FAST_ROOTS: dict[tuple[str, str], Any] = {}  # (kind, apiVersion) -> msgspec type, or None: take decode()


def _fast_type(field_schema: dict | None, building: set[int]) -> Any:

    key = id(field_schema)
    cached = _FAST_TYPES.get(key)
    if cached is not None:
        return cached
    if field_schema is not None and not _schemas.is_shipped(field_schema):
        raise _Recursive  # only immortal schemas are keyed by id (as _plan's); a caller's dict takes the walk
    plan = _plan(field_schema)
    how = plan[0]
    result: Any
    if how == _OBJECT:
        props = plan[2]
        if id(props) in building:
            raise _Recursive
        building.add(id(props))
        try:
            fields = [(f"f{i}", _fast_type(s, building) | None, None) for i, s in enumerate(props.values())]
        finally:
            building.discard(id(props))
        rename = {f"f{i}": name for i, name in enumerate(props)}
        result = msgspec.defstruct("Fast" + (plan[3] or "Object"), fields, rename=rename, forbid_unknown_fields=True)
    elif how == _MAP:
        result = dict[str, _fast_type(plan[2], building) | None]
    elif how == _ARRAY:
        result = list[_fast_type(plan[2], building) | None]
    elif how == _LOOSE:
        result = dict
    else:
        result = {
            _ANY: Any,
            _QUANTITY: str,  # a number is converted to its canonical string: the walk's
            _INTSTR: str | int,
            _STRING: str,
            _INTEGER: int,  # 2.0 becomes 2: the walk's
            _NUMBER: float,  # msgspec's float takes an integer, as the walk does; never true/false
            _BOOLEAN: bool,
        }[how]
    _FAST_TYPES[key] = result
    return result


def _fast_root(kind: str, api_version: str) -> Any:
    key = (kind, api_version)
    try:
        return _FAST_ROOTS[key]
    except KeyError:
        pass

    schema = _schemas.schema_for_kind(kind, api_version)
    result: Any = None
    if schema is not None and _schemas.is_shipped(schema):
        props = schema.get("properties") or {}
        try:
            fields = [(f"f{i}", _fast_type(s, set()) | None, None) for i, s in enumerate(props.values())]
            rename = {f"f{i}": name for i, name in enumerate(props)}
            result = msgspec.defstruct("Fast" + kind, fields, rename=rename, forbid_unknown_fields=True)
        except _Recursive:
            result = None
    _FAST_ROOTS[key] = result
    return result


def clean(kind: str, api_version: str, data: bytes) -> bool:
    """Whether the object whose msgpack encoding is `data` is one decode() would leave exactly as it is and return no
    unknown field for (under `strict` too). False says only "ask decode()": it words any refusal."""
    if _schemas.schema_for_kind(kind, api_version) is None:
        return True  # decode() checks nothing for a kind without a schema
    root = _fast_root(kind, api_version)
    if root is None:
        return False
    try:
        msgspec.msgpack.decode(data, type=root)
    except msgspec.ValidationError:
        return False
    return True
