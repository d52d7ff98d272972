"""Kubernetes protobuf request bodies (`k8s\\0` + runtime.Unknown) as real clients send them: `kubectl create
deployment|job|cronjob|pdb|quota|...`, `auth can-i`, drain's DeleteOptions, typed clients generally.

Parsing is the `protobuf` library's, with descriptors compiled from Kubernetes' own generated.proto files
(k8s_protobuf.pb, made by gen_protobuf.py): every served kind of the compiled packages decodes, not a hand-kept few.
This module only maps a message to the JSON shape the API server would have stored:

- Time/MicroTime → RFC 3339, Quantity → its string, IntOrString → int or string, RawExtension/FieldsV1 → JSON;
- a zero scalar is dropped unless JSON would show it (a pointer such as `replicas: 0`, or a field without
  `omitempty`): Go writes every non-pointer field, so a `false` on the wire is often nobody's value
  (protobuf_fields.json lists, from types.go, the fields whose zero is kept);
- a zero Time (Go's `creationTimestamp: null`) is dropped.
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
import pathlib
from typing import Any

from dragoman.fleet.k8s.times import format_time, parse_rfc3339
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
HERE = pathlib.Path(__file__).parent
META = "k8s.io.apimachinery.pkg.apis.meta.v1"
_TIME = {f"{META}.Time", f"{META}.MicroTime"}
_QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
_RAW = {"k8s.io.apimachinery.pkg.runtime.RawExtension": "raw", f"{META}.FieldsV1": "Raw"}
_UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"
# Group → the Go package its generated.proto lives in, where the group's first label is not the package name.
_PACKAGE = {"": "core", "rbac.authorization.k8s.io": "rbac"}


class ProtobufError(Exception):
    """A body that is not a well-formed Kubernetes protobuf envelope, or a kind this server cannot decode (400/415)."""


def is_protobuf(body: bytes) -> bool:
    """True for a body that starts with the Kubernetes protobuf magic `k8s\\0`."""
    return isinstance(body, (bytes, bytearray)) and bytes(body[:4]) == MAGIC


@functools.lru_cache(maxsize=1)
def _pool() -> descriptor_pool.DescriptorPool:
    files = descriptor_pb2.FileDescriptorSet.FromString((HERE / "k8s_protobuf.pb").read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.Add(f)
    return pool


@functools.lru_cache(maxsize=1)
def _keep_zero() -> dict[str, frozenset[str]]:
    return {k: frozenset(v) for k, v in json.loads((HERE / "protobuf_fields.json").read_text()).items()}


@functools.lru_cache(maxsize=256)
def _message_class(full_name: str) -> type[Message] | None:
    try:
        return message_factory.GetMessageClass(_pool().FindMessageTypeByName(full_name))
    except KeyError:
        return None


def message_name(api_version: str, kind: str) -> str | None:
    """The protobuf message of a kind (`apps/v1`, `Deployment` → k8s.io.api.apps.v1.Deployment); None when unknown."""
    group, _, version = api_version.rpartition("/")
    package = _PACKAGE.get(group, group.split(".")[0])
    for name in (f"k8s.io.api.{package}.{version}.{kind}", f"{META}.{kind}"):
        if _message_class(name) is not None:
            return name
    return None


# ---------------------------------------------------------------- message → JSON shape


def _rfc3339(seconds: int, nanos: int, micro: bool) -> str:
    t = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    if micro:
        return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
    return format_time(t)


def _special(msg: Message) -> tuple[bool, Any]:
    name = msg.DESCRIPTOR.full_name
    if name in _TIME:
        if not msg.seconds and not msg.nanos:
            return True, None
        return True, _rfc3339(msg.seconds, msg.nanos, name.endswith("MicroTime"))
    if name == _QUANTITY:
        return True, msg.string
    if name == _INT_OR_STRING:
        return True, msg.strVal if msg.type == 1 else msg.intVal
    if name in _RAW:
        raw = getattr(msg, _RAW[name])
        if not raw:
            return True, None
        try:
            return True, json.loads(raw)
        except ValueError:
            raise ProtobufError(f"{name.rsplit('.', 1)[-1]} does not hold JSON") from None
    return False, None


def to_dict(msg: Message) -> dict:
    """A decoded message as the JSON object the API server would store (see the module docstring)."""
    keep = _keep_zero().get(msg.DESCRIPTOR.full_name, frozenset())
    out: dict[str, Any] = {}
    for fd, value in msg.ListFields():
        name = fd.name
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            value_fd = fd.message_type.fields_by_name["value"]
            if value_fd.message_type is not None:
                out[name] = {k: _value(v) for k, v in value.items()}
            elif value_fd.type == value_fd.TYPE_BYTES:  # a Secret's data: base64 in JSON
                out[name] = {k: base64.b64encode(v).decode() for k, v in value.items()}
            else:
                out[name] = dict(value)
            continue
        if fd.is_repeated:
            if fd.message_type is not None:
                out[name] = [_value(v) for v in value]
            else:
                out[name] = [base64.b64encode(v).decode() for v in value] if fd.type == fd.TYPE_BYTES else list(value)
            continue
        if fd.message_type is not None:
            converted = _value(value)
            if converted is not None:
                out[name] = converted
            continue
        if fd.type == fd.TYPE_BYTES:
            value = base64.b64encode(value).decode()
        if value in (0, False, "") and name not in keep:
            continue
        out[name] = value
    return out


def _value(msg: Message) -> Any:
    special, value = _special(msg)
    return value if special else to_dict(msg)


# ---------------------------------------------------------------- the envelope


def unwrap(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw) of a `k8s\\0` + runtime.Unknown envelope."""
    if not is_protobuf(body):
        raise ProtobufError("not a Kubernetes protobuf body (missing k8s\\0 prefix)")
    unknown = _message_class(_UNKNOWN)()  # type: ignore[misc]
    try:
        unknown.ParseFromString(bytes(body[4:]))
    except DecodeError as exc:
        raise ProtobufError(f"the runtime.Unknown envelope is malformed: {exc}") from None
    if unknown.contentEncoding:
        raise ProtobufError(f"unsupported content encoding {unknown.contentEncoding!r}")
    if not unknown.typeMeta.kind:
        raise ProtobufError("the envelope names no kind")
    return unknown.typeMeta.apiVersion, unknown.typeMeta.kind, unknown.raw


def decode_request(body: bytes) -> dict:
    """A protobuf request body → the JSON-shaped object (`apiVersion`, `kind`, fields); ProtobufError when the
    envelope or the message is malformed or the kind is not one of the compiled packages'."""
    api_version, kind, raw = unwrap(body)
    name = message_name(api_version, kind)
    if name is None:
        raise ProtobufError(f"protobuf decoding of kind {kind!r} in {api_version!r} is not supported; send JSON")
    msg = _message_class(name)()  # type: ignore[misc]
    try:
        msg.ParseFromString(raw)
    except DecodeError as exc:
        raise ProtobufError(f"the {kind} message is malformed: {exc}") from None
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    obj.update(to_dict(msg))
    if kind.endswith("Review"):
        # A review's status is the server's answer; Go writes its empty struct in the request.
        obj.pop("status", None)
    return obj


# ---------------------------------------------------------------- encoding (tests and clients of the simulator)


def _fill(msg: Message, obj: dict) -> None:
    for key, value in obj.items():
        fd = msg.DESCRIPTOR.fields_by_name.get(key)
        if fd is None or value is None:
            continue
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            target = getattr(msg, key)
            for k, v in value.items():
                value_fd = fd.message_type.fields_by_name["value"]
                if value_fd.message_type is not None:
                    _set_message(target[k], v)
                else:
                    target[k] = base64.b64decode(v) if value_fd.type == value_fd.TYPE_BYTES else v
        elif fd.is_repeated:
            target = getattr(msg, key)
            for v in value:
                if fd.message_type is not None:
                    _set_message(target.add(), v)
                else:
                    target.append(v)
        elif fd.message_type is not None:
            _set_message(getattr(msg, key), value)
        else:
            setattr(msg, key, base64.b64decode(value) if fd.type == fd.TYPE_BYTES else value)


def _set_message(msg: Message, value: Any) -> None:
    name = msg.DESCRIPTOR.full_name
    if name in _TIME:
        t = parse_rfc3339(str(value))
        msg.seconds, msg.nanos = int(t.timestamp()), t.microsecond * 1000
    elif name == _QUANTITY:
        msg.string = str(value)
    elif name == _INT_OR_STRING:
        if isinstance(value, str):
            msg.type, msg.strVal = 1, value
        else:
            msg.type, msg.intVal = 0, int(value)
    elif name in _RAW:
        setattr(msg, _RAW[name], json.dumps(value).encode())
    else:
        msg.SetInParent()
        _fill(msg, value)


def encode_request(obj: dict) -> bytes:
    """`k8s\\0` + runtime.Unknown for a JSON-shaped object of a compiled kind (the inverse of decode_request)."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    name = message_name(api_version, kind)
    if name is None:
        raise ProtobufError(f"cannot encode kind {kind!r}")
    msg = _message_class(name)()  # type: ignore[misc]
    _fill(msg, {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")})
    unknown = _message_class(_UNKNOWN)()  # type: ignore[misc]
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = api_version, kind
    unknown.raw = msg.SerializeToString()
    return MAGIC + unknown.SerializeToString()
