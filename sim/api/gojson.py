"""An object as kube-apiserver writes it back: decoded into Go structs, then encoded by encoding/json.

Go's encoder does two things a JSON client's object does not: it writes every non-pointer field the client left
out (a struct as `{}` — `status: {}` — or a zero metav1.Time as `null`, a field without `omitempty` as its zero —
`reportingComponent: ""`, `numberReady: 0`, a nil slice as `null`), and it drops a zero scalar whose field says
`omitempty` (`numberAvailable: 0`, `resources: []`). The facts come from k8s.io/api's types.go
(go_json_always.json: the fields always written; protobuf_fields.json: the scalars whose zero is kept), the nesting
from the same protobuf descriptors the simulator decodes protobuf bodies with (sim/api/protobuf.py).

Every write of the store passes here, so each message's fields are turned once into a plan of plain tuples.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

from dragoman.sim.api import protobuf as pb

_LEAVES = pb._TIME | {pb._QUANTITY, pb._INT_OR_STRING, *pb._RAW}
# A field's plan: (what, sub-message name or None, zero type for scalars, keeps its zero)
_MESSAGE, _REPEATED_MESSAGE, _MAP_OF_MESSAGES, _SCALAR, _REPEATED_SCALAR, _OPAQUE = range(6)


@functools.lru_cache(maxsize=1)
def _always() -> dict[str, dict[str, Any]]:
    return json.loads((pb.HERE / "go_json_always.json").read_text())


@functools.cache
def _plan(full_name: str) -> tuple[dict[str, tuple], dict[str, Any]]:
    """({json field: (what, sub-message, zero type, keeps zero)}, {field: zero always written})."""
    desc = pb._pool().FindMessageTypeByName(full_name)
    keep = pb._keep_zero().get(full_name, frozenset())
    fields: dict[str, tuple] = {}
    for fd in desc.fields:
        mt = fd.message_type
        if mt is not None:
            if mt.full_name in _LEAVES:
                what, sub = (_REPEATED_SCALAR if fd.is_repeated else _OPAQUE), None
            elif mt.GetOptions().map_entry:
                value_type = mt.fields_by_name["value"].message_type
                if value_type is not None and value_type.full_name not in _LEAVES:
                    what, sub = _MAP_OF_MESSAGES, value_type.full_name
                else:
                    what, sub = _OPAQUE, None
            else:
                what, sub = (_REPEATED_MESSAGE if fd.is_repeated else _MESSAGE), mt.full_name
            fields[fd.name] = (what, sub, None, fd.name in keep)
            continue
        if fd.is_repeated:
            fields[fd.name] = (_REPEATED_SCALAR, None, None, True)
            continue
        if fd.type == fd.TYPE_BOOL:
            zero_type = "bool"
        elif fd.type in (fd.TYPE_STRING, fd.TYPE_BYTES):
            zero_type = "str"
        else:
            zero_type = "num"
        fields[fd.name] = (_SCALAR, None, zero_type, fd.name in keep)
    return fields, _always().get(full_name, {})


def encode_like_go(obj: dict, converted: bool = True) -> dict:
    """`obj` (a whole object with apiVersion and kind) as Go would write it back, in place; returned for chaining.
    Kinds without a compiled message (custom resources) are left as they are.

    converted=False is the shape the field manager sees, before the round trip through the internal version: an
    empty slice a client sent is still `[]` there (conversion makes it nil, written `null`)."""
    name = _message_name(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if name is not None:
        _message(obj, name, converted)
    return obj


@functools.lru_cache(maxsize=256)
def _message_name(api_version: str, kind: str) -> str | None:
    return pb.message_name(api_version, kind)


def _message(value: dict, full_name: str, converted: bool) -> None:
    fields, always = _plan(full_name)
    for key in list(value):
        plan = fields.get(key)
        if plan is None:
            continue
        what, sub, zero_type, keep = plan
        v = value[key]
        if what == _MESSAGE:
            if isinstance(v, dict):
                _message(v, sub, converted)
        elif what in (_REPEATED_MESSAGE, _REPEATED_SCALAR):
            if isinstance(v, list):
                if not v:
                    # An empty slice: omitted with omitempty, else written as the nil conversion makes it.
                    if key not in always:
                        del value[key]
                    elif converted:
                        value[key] = None
                elif what == _REPEATED_MESSAGE:
                    for item in v:
                        if isinstance(item, dict):
                            _message(item, sub, converted)
        elif what == _MAP_OF_MESSAGES:
            if isinstance(v, dict):
                for item in v.values():
                    if isinstance(item, dict):
                        _message(item, sub, converted)
        elif what == _SCALAR and not keep:
            if (
                (v is False)
                if zero_type == "bool"
                else (v == "")
                if zero_type == "str"
                else (isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0)
            ):
                del value[key]
    for key, zero in always.items():
        if key in value:
            continue
        if isinstance(zero, dict):
            value[key] = {}
            plan = fields.get(key)
            if plan is not None and plan[0] == _MESSAGE:
                _message(value[key], plan[1], converted)
        else:
            value[key] = copy.copy(zero)
