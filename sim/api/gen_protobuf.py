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


if __name__ == "__main__":
    main()
