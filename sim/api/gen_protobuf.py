"""Generates the Kubernetes protobuf descriptors the simulator decodes request bodies with (k8s_protobuf.pb) and the
Go facts protobuf does not carry (protobuf_fields.json), from the k8s.io/api and apimachinery v0.37.2 sources.

Run once after changing the served API (needs the Go module cache and grpcio-tools, both build-time only):

    go mod download k8s.io/api@v0.37.2 k8s.io/apimachinery@v0.37.2
    pip install grpcio-tools && python -m dragoman.sim.api.gen_protobuf

Why a descriptor set rather than hand decoding: the `protobuf` library then parses every field of every served kind
exactly as Go's generated code writes it (field numbers, packed/unpacked, maps, nesting) — the simulator only turns
the few special messages (Time, Quantity, IntOrString, RawExtension) into their JSON forms.

Why protobuf_fields.json: Go's marshaller writes every non-pointer field, zero or not, so a decoded `false` or `0`
may be a value the client set (a pointer: `replicas: 0`) or only Go's zero (`paused: false`, dropped by
`omitempty` in JSON). The struct tags in types.go say which: the list holds, per message, the scalar fields whose
zero a JSON client would see (pointers, and fields without omitempty).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import sys
import tempfile

HERE = pathlib.Path(__file__).parent
OUT_DESCRIPTORS = HERE / "k8s_protobuf.pb"
OUT_FIELDS = HERE / "protobuf_fields.json"
OUT_ALWAYS = HERE / "go_json_always.json"
MOD = pathlib.Path(os.environ.get("GOMODCACHE", pathlib.Path.home() / "go" / "pkg" / "mod")) / "k8s.io"
MODULES = {"api": "api@v0.37.2", "apimachinery": "apimachinery@v0.37.2"}
# The packages of every kind the simulator serves, plus what they import.
PROTOS = [
    "api/core/v1",
    "api/apps/v1",
    "api/batch/v1",
    "api/policy/v1",
    "api/authorization/v1",
    "api/authentication/v1",
    "api/rbac/v1",
    "api/coordination/v1",
    "api/resource/v1",
    "api/events/v1",
    "api/autoscaling/v1",
    "apimachinery/pkg/apis/meta/v1",
    "apimachinery/pkg/runtime",
    "apimachinery/pkg/runtime/schema",
    "apimachinery/pkg/util/intstr",
    "apimachinery/pkg/api/resource",
]
_STRUCT = re.compile(r"^type (\w+) struct \{$")
_FIELD = re.compile(r'^\s+(\w+)\s+(\S+)\s+`json:"([^",]*)((?:,\w+)*)"[^`]*protobuf:"(\w+),(\d+)')


def _keep_zero(go_dir: pathlib.Path, proto_package: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in sorted(go_dir.glob("*.go")):
        if path.name.startswith("zz_") or path.name.endswith("_test.go") or "generated" in path.name:
            continue
        struct = None
        for line in path.read_text().splitlines():
            m = _STRUCT.match(line)
            if m:
                struct = m.group(1)
                continue
            if line.startswith("}"):
                struct = None
                continue
            f = _FIELD.match(line) if struct else None
            if not f:
                continue
            _go, go_type, json_name, opts, wire, _num = f.groups()
            if wire not in ("varint", "bytes", "fixed64", "fixed32") or not json_name:
                continue
            pointer = go_type.startswith("*")
            scalar = go_type.lstrip("*") in _SCALARS or wire == "varint"
            if scalar and (pointer or "omitempty" not in opts):
                out.setdefault(f"{proto_package}.{struct}", []).append(json_name)
    return out


_TYPE_DECL = re.compile(r"^type (\w+) (struct \{|string$|bool$|u?int(?:8|16|32|64)?$|float64$|map\[|\[\])")
# Types of other packages whose Go zero marshals to a fixed JSON value (their own MarshalJSON).
_FOREIGN_ZERO: dict[str, object] = {
    "Time": None,
    "MicroTime": None,
    "Quantity": "0",
    "IntOrString": 0,
    "RawExtension": None,
}


def _declared(go_dir: pathlib.Path) -> dict[str, str]:
    """{type name: "struct" | "string" | "bool" | "number" | "map" | "slice"} of a Go package's named types."""
    out: dict[str, str] = {}
    for path in sorted(go_dir.glob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        for line in path.read_text().splitlines():
            m = _TYPE_DECL.match(line)
            if m:
                what = m.group(2)
                out[m.group(1)] = (
                    "struct"
                    if what.startswith("struct")
                    else "map"
                    if what.startswith("map")
                    else "slice"
                    if what == "[]"
                    else what
                    if what in ("string", "bool")
                    else "number"
                )
    return out


def _always(go_dir: pathlib.Path, proto_package: str, declared: dict[str, str]) -> dict[str, dict[str, object]]:
    """Per message, the fields Go's encoding/json writes even when the object leaves them unset, with the JSON of
    their zero: a non-pointer struct (`status: {}`, a zero metav1.Time as `null`) unless tagged omitzero, and a
    non-pointer field without omitempty (`reportingComponent: ""`, `numberReady: 0`, a nil slice as `null`)."""
    out: dict[str, dict[str, object]] = {}
    for path in sorted(go_dir.glob("*.go")):
        if path.name.startswith("zz_") or path.name.endswith("_test.go") or "generated" in path.name:
            continue
        struct = None
        for line in path.read_text().splitlines():
            m = _STRUCT.match(line)
            if m:
                struct = m.group(1)
                continue
            if line.startswith("}"):
                struct = None
                continue
            f = _FIELD.match(line) if struct else None
            if not f:
                continue
            _go, go_type, json_name, opts, _wire, _num = f.groups()
            if not json_name or go_type.startswith("*"):
                continue
            omitempty, omitzero = "omitempty" in opts, "omitzero" in opts
            base = go_type.rsplit(".", 1)[-1]
            named = declared.get(base)
            if go_type.startswith("[]") and go_type != "[]byte" or go_type.startswith("map["):
                kind = "nil"
            elif go_type in ("string", "[]byte") or named == "string":
                kind = "string"
            elif go_type == "bool" or named == "bool":
                kind = "bool"
            elif go_type in _SCALARS or named == "number":
                kind = "number"
            elif named in ("map", "slice"):
                kind = "nil"
            elif base in _FOREIGN_ZERO:
                kind = "foreign"
            else:
                kind = "struct"
            zero: object
            if kind == "struct" or kind == "foreign":
                if omitzero:
                    continue
                zero = _FOREIGN_ZERO[base] if kind == "foreign" else {}
                if kind == "foreign" and omitempty and zero is not None:
                    continue  # a Quantity or IntOrString with omitempty: its MarshalJSON is not "empty", but rare
            elif omitempty or omitzero:
                continue
            else:
                zero = {"string": "", "bool": False, "number": 0, "nil": None}[kind]
            out.setdefault(f"{proto_package}.{struct}", {})[json_name] = zero
    return out


# Go types that protobuf writes as a scalar (length-delimited for strings); named string types (RestartPolicy, ...)
# are caught by `wire == "varint"` only for numbers, so the common string kinds are listed by name.
_SCALARS = {"string", "bool", "int32", "int64", "uint32", "uint64", "float64", "[]byte"}


def main() -> None:
    from grpc_tools import protoc  # build-time only

    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "k8s.io"
        root.mkdir()
        for name, module in MODULES.items():
            (root / name).symlink_to(MOD / module)
        files = [f"k8s.io/{p}/generated.proto" for p in PROTOS]
        include = os.path.dirname(protoc.__file__) + "/_proto"
        args = [
            "protoc",
            f"-I{tmp}",
            f"-I{include}",
            f"--descriptor_set_out={OUT_DESCRIPTORS}",
            "--include_imports",
            *files,
        ]
        if protoc.main(args) != 0:
            sys.exit("protoc failed")
        fields: dict[str, list[str]] = {}
        for p in PROTOS:
            module, _, rest = p.partition("/")
            text = (root / module / rest / "generated.proto").read_text()
            package = re.search(r"^package ([\w.]+);", text, re.M).group(1)
            fields.update(_keep_zero(root / module / rest, package))
    OUT_FIELDS.write_text(json.dumps(fields, sort_keys=True, separators=(",", ":")))
    print(f"wrote {OUT_DESCRIPTORS} ({OUT_DESCRIPTORS.stat().st_size} bytes) and {OUT_FIELDS} ({len(fields)} messages)")


def write_always() -> None:
    """go_json_always.json alone: needs only the Go module cache (not grpcio-tools)."""
    always: dict[str, dict[str, object]] = {}
    # Named types by their bare name across the packages (types.UID is a string, v1.ResourceList a map, ...).
    declared: dict[str, str] = {}
    for p in [*PROTOS, "apimachinery/pkg/types"]:
        module, _, rest = p.partition("/")
        declared.update(_declared(MOD / MODULES[module] / rest))
    for p in PROTOS:
        module, _, rest = p.partition("/")
        go_dir = MOD / MODULES[module] / rest
        text = (go_dir / "generated.proto").read_text()
        package = re.search(r"^package ([\w.]+);", text, re.M).group(1)
        always.update(_always(go_dir, package, {**declared, **_declared(go_dir)}))
    OUT_ALWAYS.write_text(json.dumps(always, sort_keys=True, separators=(",", ":")))
    print(f"wrote {OUT_ALWAYS} ({len(always)} messages)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--always"]:
        write_always()
    else:
        main()
        write_always()
