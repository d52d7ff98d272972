"""`dragoman snapshot FILE`: everything dragoman reads from the cluster, written as one Kubernetes List YAML."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "snapshot",
        help="write everything dragoman reads as one Kubernetes List YAML",
        description="Write everything dragoman reads from the cluster (nodes, pods, workloads, DRA objects, "
        "dragoman's own ConfigMaps and Leases; never Secrets) to FILE as one Kubernetes List. "
        "Read it back anywhere with --snapshot FILE.",
    )
    p.add_argument("file", metavar="FILE", help="where to write the snapshot (- for standard output)")
    # Also accepted after the subcommand; SUPPRESS keeps a value given before it.
    p.add_argument("--kubeconfig", metavar="PATH", default=argparse.SUPPRESS, help="kubeconfig to read")
    p.add_argument("--context", metavar="NAME", default=argparse.SUPPRESS, help="kubeconfig context to use")
    p.add_argument("--snapshot", metavar="IN", default=argparse.SUPPRESS, help="re-write an existing snapshot instead of reading a cluster")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    from dragoman.fleet import snapshot as snap
    from dragoman.fleet.errors import UserError
    from dragoman.fleet.informer import read_fleet

    if getattr(args, "demo", False):
        raise UserError("`dragoman snapshot` reads a cluster or a snapshot, not --demo; point it at `dragoman sim serve` with --kubeconfig.")
    source = await read_fleet(getattr(args, "kubeconfig", None), getattr(args, "context", None), getattr(args, "snapshot", None))
    store = source.store
    if source.snapshot:
        header = [f"dragoman snapshot re-written from {source.snapshot}"]
    else:
        header = snap.provenance(source.server, source.context, source.server_version, source.forbidden)
        for kind in source.forbidden:
            print(f"dragoman: note: {store.state(kind).message}", file=sys.stderr)
    n = snap.write_snapshot(store, args.file, header=header)
    counts = ", ".join(f"{store.count(k)} {k}" for k in ("Node", "Pod", "ResourceSlice", "ResourceClaim") if store.count(k))
    where = "standard output" if args.file == "-" else args.file
    print(f"dragoman: wrote {n} object{'' if n == 1 else 's'}{f' ({counts})' if counts else ''} to {where}.", file=sys.stderr)
    return 0
