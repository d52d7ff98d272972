"""Snapshots: read a Kubernetes List, single objects or YAML streams into a read-only FleetStore, and write the store as
one List."""

from __future__ import annotations

import datetime
import os
import re
import sys
from collections.abc import Iterable
from typing import IO, Any, cast

import yaml
from dragoman.fleet.errors import ExitCode, UserError, printable
from dragoman.fleet.k8s.times import now_text
from dragoman.fleet.safefile import parse_documents, read_documents
from dragoman.fleet.shapes import normalize_labels, normalize_resource_version, shape_problem
from dragoman.fleet.store import KINDS, SNAPSHOT, FleetStore

MAX_SNAPSHOT_BYTES = 2 * 1024 * 1024 * 1024  # a 10,000-node fleet's snapshot is a few hundred MB; /dev/zero is endless
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

# Kinds dragoman never keeps, even when a snapshot holds them.
NEVER = {"Secret"}
# Scenario files (the demo) carry a settings document the simulator reads; a snapshot reader skips it.
SIM_SETTINGS_GROUP = "sim.dragoman.io/"


def _err(message: str) -> UserError:
    return UserError(message, ExitCode.INPUT)


def yaml_stream(text: str) -> list:
    """The YAML or JSON documents of a snapshot's text, read as Kubernetes reads YAML, with every bound of the one
    bounded reader (fleet/safefile.parse_documents); a refusal is a sentence (UserError)."""
    return parse_documents(text, "the snapshot", expect="Kubernetes YAML")


def parse_objects(text: str, name: str = "the snapshot") -> list[dict]:
    """The Kubernetes objects of a text: a List (kind List or FooList), single objects, or several YAML documents."""
    return objects_of(parse_documents(text, f"the snapshot {name}", expect="Kubernetes YAML"), name)


def document_items(docs: list) -> list[tuple[str, object]]:
    """(where, item) for every object of decoded documents, in order: a document, the items of a List (a typed list's
    items given the kind and apiVersion the API omits on them), the entries of a bare YAML list. `where` names it for
    a sentence ("item 3 of document 2"). Snapshots and scenarios read their documents through this one walk."""
    out: list[tuple[str, object]] = []
    for n, doc in enumerate(docs, 1):
        if doc is None:
            continue
        where = f"document {n}" if len(docs) > 1 else "the document"
        if isinstance(doc, list):
            out += [(f"item {i} of {where}", item) for i, item in enumerate(doc, 1)]
        elif (
            isinstance(doc, dict)
            and isinstance(doc.get("kind"), str)
            and doc["kind"].endswith("List")
            and isinstance(doc.get("items"), list)
        ):
            item_kind = doc["kind"][:-4] if doc["kind"] != "List" else None
            for i, item in enumerate(doc["items"], 1):
                if isinstance(item, dict) and item_kind and "kind" not in item:
                    item = {"kind": item_kind, "apiVersion": doc.get("apiVersion", "v1"), **item}
                out.append((f"item {i} of {where}", item))
        else:
            out.append((where, doc))
    return out


def not_an_object(item: object, where: str) -> str | None:
    """Why `item` is not a Kubernetes object (not a mapping, or no kind and apiVersion strings); None when it is."""
    if not isinstance(item, dict):
        return f"{where} is a {type(item).__name__}, not an object"
    kind, api_version = item.get("kind"), item.get("apiVersion")
    if not isinstance(kind, str) or not kind or not isinstance(api_version, str) or not api_version:
        return f"{where} has no kind and apiVersion"
    return None


def objects_of(docs: list, name: str = "the snapshot") -> list[dict]:
    """The Kubernetes objects of decoded documents (see parse_objects)."""
    objects: list[dict] = []
    for where, obj in document_items(docs):
        problem = not_an_object(obj, where)
        if problem:
            raise _err(f"the snapshot {name} is not Kubernetes YAML: {problem}.")
        assert isinstance(obj, dict)
        kind, api_version = obj["kind"], obj["apiVersion"]
        if api_version.startswith(SIM_SETTINGS_GROUP):
            continue  # a scenario's simulator settings (users, speed): not part of the fleet
        meta = obj.get("metadata")
        if not isinstance(meta, dict) or not meta.get("name"):
            raise _err(f"the snapshot {name} is not Kubernetes YAML: {where} ({kind}) has no metadata.name.")
        normalize_labels(obj)
        normalize_resource_version(obj)
        problem = shape_problem(obj)
        if problem:
            raise _err(
                f"the snapshot {name} is not Kubernetes YAML: {where} ({kind} {str(meta['name'])[:80]!r}) "
                f"is malformed: {problem}."
            )
        objects.append(obj)
    if not objects:
        raise _err(f"the snapshot {name} holds no Kubernetes objects.")
    return objects


def load_snapshot(path_or_dash: str) -> list[dict]:
    """Every object of a snapshot file ("-" reads standard input). Raises UserError (exit 2) with one sentence when it
    is not Kubernetes YAML."""
    name = "standard input" if path_or_dash == "-" else path_or_dash
    docs = read_documents(path_or_dash, "the snapshot", max_bytes=MAX_SNAPSHOT_BYTES, expect="Kubernetes YAML")
    return objects_of(docs, name)


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def fill_store(store: FleetStore, objects: Iterable[dict]) -> dict[str, int]:
    """Put the objects dragoman reads into the store (by kind and API group); returns counts of what was skipped, by
    kind."""
    by_kind: dict[str, list[dict]] = {k: [] for k in store.kinds}
    skipped: dict[str, int] = {}
    for obj in objects:
        kind: Any = obj.get("kind")
        info = KINDS.get(kind) if kind not in NEVER else None
        if (
            info is None
            or kind not in by_kind
            or _group(obj.get("apiVersion", "")) != info.group
            or not info.matches(obj)
        ):
            skipped[kind] = skipped.get(kind, 0) + 1
            continue
        by_kind[kind].append(obj)
    for kind, objs in by_kind.items():
        store.replace(kind, objs)
    store.flush()
    return skipped


def store_from_snapshot(path_or_dash: str, *, kinds: Iterable[str] | None = None) -> FleetStore:
    """A read-only FleetStore holding a snapshot: every kind in state `snapshot`, never changing."""
    objects = load_snapshot(path_or_dash)
    store = FleetStore(kinds, read_only=True, source=f"snapshot {path_or_dash if path_or_dash != '-' else '(stdin)'}")
    fill_store(store, objects)
    for kind in store.kinds:
        store.set_state(kind, SNAPSHOT, store.source, synced=True)
    return store


# ---------------------------------------------------------------------------- writing


def _clean(obj: dict) -> dict:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        # Noise for a reader, and half the bytes of a big snapshot; kubectl hides it too.
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return obj


def snapshot_items(store: FleetStore) -> list[dict]:
    """Everything the store holds, in KINDS order then by namespace and name; never a Secret, ConfigMaps only dragoman's
    own."""
    items: list[dict] = []
    for kind in store.kinds:
        info = KINDS[kind]
        if kind in NEVER:
            continue
        objs = store.objects(kind)
        for key in sorted(objs):
            obj = objs[key]
            if not info.matches(obj):
                continue
            if "kind" not in obj:
                obj = {"apiVersion": info.api_version, "kind": info.kind, **obj}
            items.append(_clean(obj))
    return items


def dump_snapshot(store: FleetStore, out: IO[str], *, header: Iterable[str] = ()) -> int:
    """Write the store as one `kind: List` YAML document; returns the number of items."""
    items = snapshot_items(store)
    for line in header:
        # One comment line each, whatever a server's gitVersion or a context name holds: a newline there once
        # started a line of YAML of its own, and injected objects into the snapshot.
        out.write(f"# {printable(line)}\n")
    yaml.dump(
        {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items},
        out,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=4096,
    )
    return len(items)


def write_snapshot(store: FleetStore, path: str, *, header: Iterable[str] = ()) -> int:
    """Write the snapshot to `path` atomically ("-" writes standard output); returns the number of items."""
    if path == "-":
        return dump_snapshot(store, sys.stdout, header=header)
    from dragoman.fleet.safefile import write_atomic

    # Never over a device, a FIFO, a folder or through a link; a temporary 0600 file renamed into place.
    # write_atomic returns what the writer returned: dump_snapshot's count.
    return cast(int, write_atomic(path, lambda f: dump_snapshot(store, f, header=header), "the snapshot"))


def provenance(server: str, context: str, version: str, forbidden: Iterable[str] = ()) -> list[str]:
    """Header comment lines naming where and when a snapshot was taken."""
    now = now_text()
    lines = [f"dragoman snapshot of {server} (context {context}, {version or 'unknown version'}) at {now}"]
    forbidden = list(forbidden)
    if forbidden:
        lines.append(f"not readable with these credentials, so missing: {', '.join(forbidden)}")
    return lines


def _head(path: str) -> str | None:
    """The first 4 KiB of a snapshot file, where its provenance comment is; None when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(4096)
    except OSError:
        return None


def snapshot_provenance(path: str) -> dict:
    """Server, context and version from the provenance comment `provenance` writes, when present."""
    head = _head(path) or ""
    # The server may be words ("the demo simulator"), not only a URL.
    m = re.search(r"dragoman snapshot of (.+?) \(context ([^,]+), ([^)]+)\)", head)
    return {"server": m.group(1), "context": m.group(2), "version": m.group(3)} if m else {}


def snapshot_date(path: str) -> str:
    """The date a snapshot was taken: from its provenance comment, else the file's modification time."""
    head = _head(path)
    if head is None:
        return ""
    m = re.search(r" at (\d{4}-\d\d-\d\d)T?", head)
    if m:
        return m.group(1)
    try:
        return datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.UTC).strftime("%Y-%m-%d")
    except OSError:
        return ""
