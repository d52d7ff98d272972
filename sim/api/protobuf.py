"""Decoding of the Kubernetes protobuf request bodies kubectl sends (`k8s\\0` + runtime.Unknown): SelfSubjectAccessReview, DeleteOptions."""

from __future__ import annotations

from typing import Any

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


class ProtobufError(Exception):
    """A body that is not a well-formed Kubernetes protobuf envelope, or a kind this server cannot decode (400/415)."""


def is_protobuf(body: bytes) -> bool:
    """True for a body that starts with the Kubernetes protobuf magic `k8s\\0`."""
    return isinstance(body, (bytes, bytearray)) and bytes(body[:4]) == MAGIC


# ---------------------------------------------------------------- wire format

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("varint too long")


def fields(data: bytes) -> list[tuple[int, int, Any]]:
    """[(field number, wire type, value)]: value is an int for varint/fixed, bytes for length-delimited."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("field number 0")
        if wire == _VARINT:
            value, pos = _varint(data, pos)
        elif wire == _LEN:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ProtobufError("truncated length-delimited field")
            value = bytes(data[pos : pos + length])
            pos += length
        elif wire == _I64:
            if pos + 8 > len(data):
                raise ProtobufError("truncated fixed64")
            value = int.from_bytes(data[pos : pos + 8], "little")
            pos += 8
        elif wire == _I32:
            if pos + 4 > len(data):
                raise ProtobufError("truncated fixed32")
            value = int.from_bytes(data[pos : pos + 4], "little")
            pos += 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


# Message descriptors: field number → (json name, type, sub-descriptor, repeated).
# Types: "string", "int64", "int32", "bool", "message", "map" (map<string,string>), "time".
# Field numbers from k8s.io/api and k8s.io/apimachinery generated.proto.
_TIME = "time"

_OWNER_REF = {
    1: ("kind", "string", None, False), 3: ("name", "string", None, False), 4: ("uid", "string", None, False),
    5: ("apiVersion", "string", None, False), 6: ("controller", "bool", None, False), 7: ("blockOwnerDeletion", "bool", None, False),
}
OBJECT_META = {
    1: ("name", "string", None, False), 2: ("generateName", "string", None, False), 3: ("namespace", "string", None, False),
    4: ("selfLink", "string", None, False), 5: ("uid", "string", None, False), 6: ("resourceVersion", "string", None, False),
    7: ("generation", "int64", None, False), 8: ("creationTimestamp", _TIME, None, False), 9: ("deletionTimestamp", _TIME, None, False),
    10: ("deletionGracePeriodSeconds", "int64", None, False), 11: ("labels", "map", None, False), 12: ("annotations", "map", None, False),
    13: ("ownerReferences", "message", _OWNER_REF, True), 14: ("finalizers", "string", None, True),
}
_REQUIREMENT = {1: ("key", "string", None, False), 2: ("operator", "string", None, False), 3: ("values", "string", None, True)}
_SELECTOR_ATTRS = {1: ("rawSelector", "string", None, False), 2: ("requirements", "message", _REQUIREMENT, True)}
RESOURCE_ATTRIBUTES = {
    1: ("namespace", "string", None, False), 2: ("verb", "string", None, False), 3: ("group", "string", None, False),
    4: ("version", "string", None, False), 5: ("resource", "string", None, False), 6: ("subresource", "string", None, False),
    7: ("name", "string", None, False), 8: ("fieldSelector", "message", _SELECTOR_ATTRS, False),
    9: ("labelSelector", "message", _SELECTOR_ATTRS, False),
}
NON_RESOURCE_ATTRIBUTES = {1: ("path", "string", None, False), 2: ("verb", "string", None, False)}
SSAR_SPEC = {1: ("resourceAttributes", "message", RESOURCE_ATTRIBUTES, False), 2: ("nonResourceAttributes", "message", NON_RESOURCE_ATTRIBUTES, False)}
SAR_STATUS = {1: ("allowed", "bool", None, False), 2: ("reason", "string", None, False), 3: ("evaluationError", "string", None, False), 4: ("denied", "bool", None, False)}
SELF_SUBJECT_ACCESS_REVIEW = {1: ("metadata", "message", OBJECT_META, False), 2: ("spec", "message", SSAR_SPEC, False), 3: ("status", "message", SAR_STATUS, False)}
_PRECONDITIONS = {1: ("uid", "string", None, False), 2: ("resourceVersion", "string", None, False)}
DELETE_OPTIONS = {
    1: ("gracePeriodSeconds", "int64", None, False), 2: ("preconditions", "message", _PRECONDITIONS, False),
    3: ("orphanDependents", "bool", None, False), 4: ("propagationPolicy", "string", None, False), 5: ("dryRun", "string", None, True),
    6: ("ignoreStoreReadErrorWithClusterBreakingPotential", "bool", None, False),
}
_EVICTION = {1: ("metadata", "message", OBJECT_META, False), 2: ("deleteOptions", "message", DELETE_OPTIONS, False)}

KINDS: dict[str, dict] = {
    "SelfSubjectAccessReview": SELF_SUBJECT_ACCESS_REVIEW,
    "DeleteOptions": DELETE_OPTIONS,
    "Eviction": _EVICTION,
}


def _rfc3339(seconds: int, nanos: int = 0) -> str:
    import datetime

    t = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def decode_message(data: bytes, descriptor: dict) -> dict:
    """A protobuf message → JSON-shaped dict per `descriptor`; unknown fields are skipped, as Go's unmarshaller does."""
    out: dict[str, Any] = {}
    for number, wire, value in fields(data):
        spec = descriptor.get(number)
        if spec is None:
            continue
        name, kind, sub, repeated = spec
        if kind == "string":
            if wire != _LEN:
                raise ProtobufError(f"field {name}: wrong wire type")
            try:
                decoded: Any = value.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ProtobufError(f"field {name}: invalid UTF-8") from exc
        elif kind in ("int64", "int32"):
            if wire != _VARINT:
                raise ProtobufError(f"field {name}: wrong wire type")
            decoded = _signed64(value)
        elif kind == "bool":
            if wire != _VARINT:
                raise ProtobufError(f"field {name}: wrong wire type")
            decoded = bool(value)
        elif kind == "message":
            if wire != _LEN:
                raise ProtobufError(f"field {name}: wrong wire type")
            decoded = decode_message(value, sub)
        elif kind == _TIME:
            if wire != _LEN:
                raise ProtobufError(f"field {name}: wrong wire type")
            parts = decode_message(value, {1: ("seconds", "int64", None, False), 2: ("nanos", "int32", None, False)})
            if not parts:
                continue
            decoded = _rfc3339(parts.get("seconds", 0), parts.get("nanos", 0))
        elif kind == "map":
            entry = decode_message(value, {1: ("key", "string", None, False), 2: ("value", "string", None, False)})
            out.setdefault(name, {})[entry.get("key", "")] = entry.get("value", "")
            continue
        else:  # pragma: no cover - descriptors are static
            raise ProtobufError(f"field {name}: unsupported type {kind}")
        if repeated:
            out.setdefault(name, []).append(decoded)
        elif (kind == "string" and decoded == "") or (name == "generation" and decoded == 0):
            # Go writes non-pointer fields even when empty; JSON's omitempty would leave them out.
            continue
        else:
            out[name] = decoded
    return out


def unwrap(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw) of a `k8s\\0` + runtime.Unknown envelope."""
    if not is_protobuf(body):
        raise ProtobufError("not a Kubernetes protobuf body (missing k8s\\0 prefix)")
    api_version = kind = ""
    raw = b""
    for number, wire, value in fields(bytes(body[4:])):
        if number == 1 and wire == _LEN:
            meta = decode_message(value, {1: ("apiVersion", "string", None, False), 2: ("kind", "string", None, False)})
            api_version, kind = meta.get("apiVersion", ""), meta.get("kind", "")
        elif number == 2 and wire == _LEN:
            raw = value
        elif number == 3 and wire == _LEN and value:
            raise ProtobufError(f"unsupported content encoding {value.decode('utf-8', 'replace')!r}")
    return api_version, kind, raw


def decode_request(body: bytes) -> dict:
    """A protobuf request body → the JSON-shaped object (`apiVersion`, `kind`, fields).

    Decodes SelfSubjectAccessReview (spec.resourceAttributes incl. field/label selectors, nonResourceAttributes),
    DeleteOptions and Eviction; any other kind raises ProtobufError (answer 415).
    """
    api_version, kind, raw = unwrap(body)
    descriptor = KINDS.get(kind)
    if descriptor is None:
        raise ProtobufError(f"protobuf decoding of kind {kind!r} is not supported; send JSON")
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    obj.update(decode_message(raw, descriptor))
    if kind == "SelfSubjectAccessReview":
        # Go's empty ObjectMeta/status structs are always written; drop them as JSON's omitempty would.
        if not obj.get("metadata"):
            obj["metadata"] = {}
        obj.setdefault("spec", {})
        obj.pop("status", None)
    return obj


# ---------------------------------------------------------------- encoding (for tests and clients of the simulator)


def _key(number: int, wire: int) -> bytes:
    return _encode_varint((number << 3) | wire)


def _encode_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_message(obj: dict, descriptor: dict) -> bytes:
    """The inverse of decode_message for the scalar, repeated, message and map fields of a descriptor."""
    out = bytearray()
    for number in sorted(descriptor):
        name, kind, sub, repeated = descriptor[number]
        if name not in obj:
            continue
        values = obj[name] if repeated else [obj[name]]
        if kind == "map":
            for k, v in obj[name].items():
                entry = encode_message({"key": k, "value": v}, {1: ("key", "string", None, False), 2: ("value", "string", None, False)})
                out += _key(number, _LEN) + _encode_varint(len(entry)) + entry
            continue
        for value in values:
            if kind == "string":
                data = str(value).encode()
                out += _key(number, _LEN) + _encode_varint(len(data)) + data
            elif kind in ("int64", "int32", "bool"):
                out += _key(number, _VARINT) + _encode_varint(int(value))
            elif kind == "message":
                data = encode_message(value, sub)
                out += _key(number, _LEN) + _encode_varint(len(data)) + data
    return bytes(out)


def encode_request(obj: dict) -> bytes:
    """`k8s\\0` + runtime.Unknown for a SelfSubjectAccessReview, DeleteOptions or Eviction dict."""
    kind = obj.get("kind", "")
    descriptor = KINDS.get(kind)
    if descriptor is None:
        raise ProtobufError(f"cannot encode kind {kind!r}")
    type_meta = encode_message({"apiVersion": obj.get("apiVersion", ""), "kind": kind}, {1: ("apiVersion", "string", None, False), 2: ("kind", "string", None, False)})
    raw = encode_message(obj, descriptor)
    unknown = _key(1, _LEN) + _encode_varint(len(type_meta)) + type_meta + _key(2, _LEN) + _encode_varint(len(raw)) + raw
    return MAGIC + unknown
