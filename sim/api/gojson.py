"""An object as kube-apiserver writes it back: decoded into Go structs, then encoded by encoding/json.

Go's encoder does two things a JSON client's object does not: it writes every non-pointer field the client left
out (a struct as `{}` — `status: {}` — or a zero metav1.Time as `null`, a field without `omitempty` as its zero —
`reportingComponent: ""`, `numberReady: 0`, a nil slice as `null`), and it drops a zero scalar whose field says
`omitempty` (`numberAvailable: 0`, `resources: []`). The facts come from k8s.io/api's types.go
(go_json_always.json: the fields always written; protobuf_fields.json: the scalars whose zero is kept), the nesting
from the same protobuf descriptors the simulator decodes protobuf bodies with (sim/api/protobuf.py).
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

from dragoman.sim.api import protobuf as pb

_LEAVES = pb._TIME | {pb._QUANTITY, pb._INT_OR_STRING, *pb._RAW}


@functools.lru_cache(maxsize=1)
def _always() -> dict[str, dict[str, Any]]:
    return json.loads((pb.HERE / "go_json_always.json").read_text())


def encode_like_go(obj: dict, converted: bool = True) -> dict:
    """`obj` (a whole object with apiVersion and kind) as Go would write it back, in place; returned for chaining.
    Kinds without a compiled message (custom resources) are left as they are.

    converted=False is the shape the field manager sees, before the round trip through the internal version: an
    empty slice a client sent is still `[]` there (conversion makes it nil, written `null`)."""
    name = pb.message_name(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if name is not None:
        _message(obj, pb._pool().FindMessageTypeByName(name), converted)
    return obj


def _message(value: dict, desc: Any, converted: bool = True) -> None:
    full = desc.full_name
    keep = pb._keep_zero().get(full, frozenset())
    fields = desc.fields_by_name
    for key in list(value):
        fd = fields.get(key)
        if fd is None:
            continue
        v = value[key]
        if fd.message_type is not None:
            if fd.message_type.full_name in _LEAVES:
                continue
            if fd.message_type.GetOptions().map_entry:
                value_fd = fd.message_type.fields_by_name["value"]
                if value_fd.message_type is not None and isinstance(v, dict):
                    for item in v.values():
                        if isinstance(item, dict) and value_fd.message_type.full_name not in _LEAVES:
                            _message(item, value_fd.message_type, converted)
                continue
            if fd.is_repeated:
                if isinstance(v, list):
                    if not v:
                        # An empty slice: omitted with omitempty, else written as the nil conversion makes it.
                        if key not in _always().get(full, {}):
                            del value[key]
                        elif converted:
                            value[key] = None
                        continue
                    for item in v:
                        if isinstance(item, dict):
                            _message(item, fd.message_type, converted)
                continue
            if isinstance(v, dict):
                _message(v, fd.message_type, converted)
            continue
        if fd.is_repeated:
            if isinstance(v, list) and not v and key not in _always().get(full, {}):
                del value[key]
            continue
        if key not in keep and _is_zero(fd, v):
            del value[key]
    for key, zero in _always().get(full, {}).items():
        if key in value:
            continue
        value[key] = copy.deepcopy(zero)
        fd = fields.get(key)
        if isinstance(value[key], dict) and fd is not None and fd.message_type is not None:
            _message(value[key], fd.message_type, converted)


def _is_zero(fd: Any, v: Any) -> bool:
    if fd.type == fd.TYPE_BOOL:
        return v is False
    if fd.type in (fd.TYPE_STRING, fd.TYPE_BYTES):
        return v == ""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0
