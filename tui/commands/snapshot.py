"""`dragoman snapshot FILE`: everything dragoman reads from the cluster, written as one Kubernetes List YAML."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    from dragoman.tui.headless import add_source_flags

    p = sub.add_parser(
        "snapshot",
        help="write everything dragoman reads as one Kubernetes List YAML",
        description="Write everything dragoman reads from the cluster (nodes, pods, workloads, DRA objects, "
        "dragoman's own ConfigMaps and Leases; never Secrets) to FILE as one Kubernetes List. "
        "Read it back anywhere with --snapshot FILE.",
    )
    p.add_argument("file", metavar="FILE", help="where to write the snapshot (- for standard output)")
    add_source_flags(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from dragoman.fleet import snapshot as snap
    from dragoman.tui.headless import read_from_args

    origin = read_from_args(args)
    source, store = origin.source, origin.source.store
    if origin.kind == "snapshot":
        header = [f"dragoman snapshot re-written from {origin.label.removeprefix('snapshot ')}"]
    else:
        header = snap.provenance(
            source.server if origin.kind == "cluster" else "the demo simulator",
            source.context,
            source.server_version,
            source.forbidden,
        )
    for note in origin.notes():
        print(f"dragoman: note: {note}", file=sys.stderr)
    n = snap.write_snapshot(store, args.file, header=header)
    counts = ", ".join(
        f"{store.count(k)} {k}" for k in ("Node", "Pod", "ResourceSlice", "ResourceClaim") if store.count(k)
    )
    where = "standard output" if args.file == "-" else args.file
    print(
        f"dragoman: wrote {n} object{'' if n == 1 else 's'}{f' ({counts})' if counts else ''} to {where}.",
        file=sys.stderr,
    )
    return 0
