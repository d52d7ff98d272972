"""`dragoman controlplane build` and the real-control-plane side of `dragoman sim serve --control-plane DIR`."""

from __future__ import annotations

import argparse
import os

CACHE = "cache"  # `--control-plane` with no DIR: the binaries `dragoman controlplane build` made


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("controlplane", help="the real Kubernetes v1.37 control plane, built from source")
    cpsub = p.add_subparsers(dest="cp_command", metavar="SUBCOMMAND", required=True)
    b = cpsub.add_parser(
        "build",
        help="build etcd, kube-apiserver, kube-scheduler, kube-controller-manager and the kubelets (v1.37.2, v1.35.4)",
        description=(
            "Build the real control plane from the repository's controlplane/ Go module (Go 1.26+, the Go module "
            "proxy) into a cache outside the checkout (~/.cache/dragoman/controlplane/v1.37.2 by default), and the "
            "node half of a rehearsal beside it: the kubelet v1.37.2, dragoman's own node programs "
            "(controlplane/cmd/*: the image-less container runtime, the device plugin, the DRA kubelet plugin) and a "
            "kubelet v1.35.4 without the extended-resource bridge (from controlplane/kubelet-v1.35, into "
            "…/controlplane/v1.35.4). Incremental: nothing is rebuilt when it is there at the right version (or, for "
            "dragoman's own programs, built from the same sources)."
        ),
    )
    b.add_argument("--dir", metavar="DIR", help="where to put the binaries (default: the cache)")
    b.add_argument("--force", action="store_true", help="rebuild even when the binaries are there")
    b.add_argument(
        "--control-plane-only",
        action="store_true",
        help="only the four control-plane binaries (no kubelets, no node programs)",
    )
    b.set_defaults(handler=run_build)
    w = cpsub.add_parser("where", help="print the directory of the built control plane (exit 1 when not built)")
    w.set_defaults(handler=run_where)
    d = cpsub.add_parser(
        "diff",
        help="the same requests and actions on the embedded simulator and the real control plane, compared",
        description=(
            "Start the embedded simulator and the real Kubernetes v1.37.2 control plane on the demo scenario (or "
            "reuse running ones), drive the same corpus against both — API requests, kubectl commands, behaviour "
            "cases — and print every difference that the allowlist (sim/controlplane/differential_allowlist.yaml) "
            "does not explain. Exit 1 when there is one. The corpus writes: give fresh clusters."
        ),
    )
    d.add_argument("--control-plane", metavar="DIR", default=CACHE, help="the real binaries (default: the build cache)")
    d.add_argument("--kubeconfig", metavar="FILE", help="reuse a running real control plane instead of starting one")
    d.add_argument(
        "--embedded-kubeconfig",
        metavar="FILE",
        help="reuse a running `dragoman sim serve --demo` instead of starting one",
    )
    d.add_argument("--area", choices=("api", "behaviour"), help="only the API requests or only the behaviour cases")
    d.add_argument(
        "--case",
        metavar="PATTERN",
        action="append",
        help=(
            "only the cases whose name matches PATTERN (shell wildcards, e.g. '*NotReady*'; repeat for more). The "
            "behaviour cases after the first work on the node it adds: select 'a node joins*' with them"
        ),
    )
    d.add_argument("--output", choices=("table", "json"), default="table")
    d.add_argument("--allowlist", metavar="FILE", help="another allowlist (default: the repository's)")
    d.set_defaults(handler=run_diff)


def add_serve_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--control-plane",
        nargs="?",
        const=CACHE,
        metavar="DIR",
        help=(
            "serve the scenario on the real Kubernetes v1.37 control plane instead of the embedded one: etcd, "
            "kube-apiserver, kube-scheduler and kube-controller-manager from DIR (default: the ones `dragoman "
            "controlplane build` made), with dragoman's node agents as the nodes"
        ),
    )

    parser.add_argument(
        "--real-kubelets",
        nargs="?",
        const="all",
        metavar="NODES",
        help=(
            "with --control-plane: run a real kubelet (v1.37.2; v1.35.4 where the scenario's node runs a kubelet "
            "older than 1.36) for the scenario's nodes — all of them, or NODES: node names (a,b) or labels "
            "(KEY=VALUE,...) — each with dragoman's image-less container runtime, its device plugin or DRA kubelet "
            "plugin, in a mount namespace of its own (root); the node agents run the other nodes. Built by "
            "`dragoman controlplane build`"
        ),
    )
    parser.add_argument(
        "--audit-log-path",
        metavar="PATH",
        help="with --control-plane: where kube-apiserver writes its audit log (every request's metadata; default: in "
        "the run's temporary folder)",
    )
    parser.add_argument(
        "--demo", action="store_true", help="serve the demo fleet (the default scenario; --scenario demo)"
    )
    parser.add_argument(
        "--with-prometheus",
        action="store_true",
        help="with --control-plane: run Prometheus (2.x on PATH; Debian: apt-get install -y prometheus) on loopback, "
        "scraping kube-apiserver, kube-scheduler, kube-controller-manager and etcd with the run's credentials; "
        "stopped and removed with the rest. Point dragoman at the URL it prints with --prometheus URL",
    )


def resolve(value: str, flag: str = "--control-plane") -> str:
    from dragoman.fleet.errors import ExitCode, UserError
    from dragoman.sim.controlplane.build import cache_dir

    if not value.strip():
        # An empty DIR (`--control-plane ""`, an unset variable) is not "the embedded simulator": say so.
        raise UserError(
            f"{flag} was given an empty folder name; give the folder of the control-plane binaries, or "
            f"{flag} alone for the ones `dragoman controlplane build` made.",
            ExitCode.INPUT,
        )
    return str(cache_dir()) if value == CACHE else os.path.expanduser(value)


def run_build(args: argparse.Namespace) -> int:
    import pathlib

    from dragoman.fleet.errors import ExitCode
    from dragoman.sim.controlplane.build import build

    found = build(pathlib.Path(args.dir) if args.dir else None, force=args.force, nodes=not args.control_plane_only)
    for name, path in found.items():
        print(f"{name}: {path}")
    return int(ExitCode.OK)


def run_where(args: argparse.Namespace) -> int:
    from dragoman.fleet.errors import ExitCode
    from dragoman.sim.controlplane.build import built, cache_dir

    if built() is None:
        print(f"not built (run `dragoman controlplane build`; it goes to {cache_dir()})")
        return int(ExitCode.PROBLEM)
    print(cache_dir())
    return int(ExitCode.OK)


def run_diff(args: argparse.Namespace) -> int:
    import json
    import pathlib
    import sys

    from dragoman.fleet.errors import ExitCode, UserError
    from dragoman.sim.controlplane import differential

    for flag, path in (
        ("--kubeconfig", args.kubeconfig),
        ("--embedded-kubeconfig", args.embedded_kubeconfig),
        ("--allowlist", args.allowlist),
    ):
        if path and not pathlib.Path(path).is_file():
            raise UserError(f"{flag} {path}: no such file.", ExitCode.INPUT)
    try:
        allow = differential.load_allowlist(pathlib.Path(args.allowlist) if args.allowlist else None)
    except (ValueError, OSError, AttributeError, TypeError) as exc:
        raise UserError(f"the allowlist cannot be read: {exc}.", ExitCode.INPUT) from None
    if args.case:
        from dragoman.sim.controlplane.differential_corpus import cases

        names = [c.name for c in cases() if args.area is None or c.group.split("/", 1)[0] == args.area]
        for pattern in args.case:
            if not any(differential.case_matches(n, [pattern]) for n in names):
                shown = pattern if len(pattern) <= 100 else pattern[:99] + "…"  # the names are shorter than that
                raise UserError(
                    f"--case {shown!r} matches none of the {len(names)} cases"
                    + (f" of --area {args.area}" if args.area else "")
                    + " (shell wildcards: '*NotReady*'; the names are in the table's case column).",
                    ExitCode.INPUT,
                )
    binaries = None
    if not args.kubeconfig:
        from dragoman.sim.controlplane.build import check_dir

        binaries = resolve(args.control_plane)
        check_dir(binaries)  # refused with a sentence before anything starts
    for flag, path in (("--kubeconfig", args.kubeconfig), ("--embedded-kubeconfig", args.embedded_kubeconfig)):
        if path:
            try:
                differential.Target.from_kubeconfig(flag, path)
            except Exception:  # noqa: BLE001 - any unreadable kubeconfig is the operator's input
                raise UserError(
                    f"{flag} {path}: not a kubeconfig with a server, a CA and a token.", ExitCode.INPUT
                ) from None
    if binaries is not None or not args.embedded_kubeconfig:
        # It starts a control plane (or the embedded simulator) in this process: SIGTERM and SIGHUP (the terminal
        # closed) unwind like Ctrl+C, so the started processes are stopped on the way out instead of left running.
        import signal

        def _interrupt(*_: object) -> None:
            raise KeyboardInterrupt

        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _interrupt)
    try:
        result = differential.run(
            binaries=binaries,
            real_kubeconfig=args.kubeconfig,
            embedded_kubeconfig=args.embedded_kubeconfig,
            areas={args.area} if args.area else None,
            names=args.case,
            log=lambda s: print(f"dragoman controlplane diff: {s}", file=sys.stderr, flush=True),
        )
    except ConnectionError as exc:
        # A kubeconfig of a control plane that has stopped since (the reuse flags): its server refuses.
        given = " or ".join(
            f for f, v in (("--kubeconfig", args.kubeconfig), ("--embedded-kubeconfig", args.embedded_kubeconfig)) if v
        )
        raise UserError(
            f"cannot reach a control plane ({exc.strerror or exc}): is the one {given or 'started'} names still "
            "running? Start it again, or leave the flag out to start one.",
            ExitCode.INPUT,
        ) from None
    left, used = differential.split(result.differences, allow)
    if args.output == "json":
        out = {
            "cases": result.counts,
            "seconds": round(result.seconds, 1),
            "differences": [d.as_dict() for d in left],
            "allowed": [
                {"area": a.area, "case": a.case, "path": a.path, "reason": a.reason, "matched": n}
                for a, n in used.items()
            ],
            "errors": result.errors,
            "notes": result.notes,
        }
        print(json.dumps(out, indent=2, default=str))
    else:
        print(differential.table(result, left, used))
    return int(ExitCode.PROBLEM if left or result.errors else ExitCode.OK)


def serve_real(args: argparse.Namespace, sc, name: str | None) -> int:
    """`sim serve --control-plane DIR`: the real control plane, the scenario loaded through the API, the agents."""
    import asyncio

    from dragoman.fleet.errors import ExitCode, UserError
    from dragoman.sim.controlplane import RealCluster
    from dragoman.sim.controlplane.prometheus import JOBS as PROMETHEUS_JOBS
    from dragoman.sim.controlplane.prometheus import SCRAPE_INTERVAL as PROMETHEUS_INTERVAL

    for flag, value in (
        ("--faults", args.faults),
        ("--speed", args.speed),
        ("--no-controllers", args.no_controllers),
        ("--port", args.port),
    ):
        if value:
            raise UserError(
                f"{flag} is a setting of the embedded simulator; the real control plane does not take it "
                f"(drop {flag} or --control-plane).",
                ExitCode.INPUT,
            )
    from dragoman.fleet.safefile import check_target

    # Refused before four processes start, not after: the same rules as every file dragoman writes.
    if args.write_kubeconfig:
        check_kubeconfig_target(args.write_kubeconfig)
    if args.audit_log_path:
        check_target(args.audit_log_path, "--audit-log-path")
    from dragoman.sim.controlplane.build import check_dir

    # Checked here, before the event loop: each binary's --version runs bounded in its own process group, and a
    # Ctrl+C or SIGTERM meanwhile ends it at once (inside the loop, the signal would wait for the check).
    binaries = check_dir(resolve(args.control_plane))
    nodes_found = None
    if args.real_kubelets is not None:
        import pathlib

        from dragoman.sim.controlplane.build import cache_dir, node_binaries
        from dragoman.sim.controlplane.kubelets import check_host, check_room, select_nodes

        check_host()
        # A selector that matches nothing, or more kubelets than this machine holds: a sentence now.
        check_room(len(select_nodes(sc.objects, args.real_kubelets)))
        folder = pathlib.Path(resolve(args.control_plane))
        nodes_found = node_binaries(None if folder == cache_dir() else folder)

    async def serve() -> None:
        import signal

        # Ctrl+C, SIGTERM and SIGHUP (the terminal closed) all end the run the same way: every process stopped and
        # the run's folder removed. The processes run in their own sessions (so a Ctrl+C meant for dragoman reaches
        # them only through stop()), so nothing else would end them: a signal's default action here would leave
        # kube-apiserver and etcd running. A signal sets an event, never raises in the middle of a start or a stop.
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, stop.set)
        cluster = RealCluster(
            binaries,
            sc.objects,
            sc.users,
            audit_log=args.audit_log_path,
            prometheus=args.with_prometheus,
            real_kubelets=args.real_kubelets,
            node_binaries=nodes_found,
        )
        starting = asyncio.ensure_future(cluster.start())
        stopping = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if starting.done():
                starting.result()  # a start that failed says why
                _banner(cluster)
                await stopping
            else:
                # Stopped while starting: the processes go first, which ends the start (it waits on them).
                await loop.run_in_executor(None, cluster.cp.stop)
                await asyncio.gather(starting, return_exceptions=True)
        finally:
            stopping.cancel()
            await cluster.stop()
        _say("dragoman sim: stopped (every control-plane process ended, its files removed).")

    def _banner(cluster: RealCluster) -> None:
        print(
            f"dragoman sim: serving the real Kubernetes v1.37.2 control plane at {cluster.url}"
            + (f" (scenario {name})" if name else " (empty cluster)"),
            flush=True,
        )
        rep = cluster.report
        if rep is not None:
            print("  loaded: " + ", ".join(f"{n} {k}" for k, n in sorted(rep.created.items())), flush=True)
            if rep.left_to_controllers:
                print(
                    "  left to the real controllers and scheduler: "
                    + ", ".join(f"{n} {k}" for k, n in sorted(rep.left_to_controllers.items())),
                    flush=True,
                )
            for line in rep.refused[:20]:
                print(f"  refused by the API server: {line}", flush=True)
        print("  " + ", ".join(f"{k} {v:.1f} s" for k, v in cluster.timings.items()), flush=True)
        if args.write_kubeconfig:
            write_kubeconfig(args.write_kubeconfig, cluster.kubeconfig())
            contexts = ", ".join(c["name"] for c in cluster.kubeconfig()["contexts"])
            print(f"  kubeconfig: {args.write_kubeconfig} (contexts: {contexts})", flush=True)
            print(f"  try: KUBECONFIG={args.write_kubeconfig} kubectl get nodes", flush=True)
        else:
            print("  (no kubeconfig written; pass --write-kubeconfig PATH)", flush=True)
        if cluster.prometheus is not None:
            print(
                f"  prometheus: {cluster.prometheus.url} (scraping {', '.join(PROMETHEUS_JOBS)} every "
                f"{PROMETHEUS_INTERVAL:g} s; try: dragoman --kubeconfig KC --prometheus {cluster.prometheus.url})",
                flush=True,
            )
        print(f"  audit log: {cluster.cp.audit_log}", flush=True)
        print(f"  run folder: {cluster.cp.dir} (certificates, tokens, etcd's data; removed at stop)", flush=True)
        agents = cluster.agents.names if cluster.agents is not None else []  # started with the cluster
        print("  node agents: " + ", ".join(agents), flush=True)
        if cluster.kubelets is not None:
            print(
                f"  real kubelets: {len(cluster.kubelets.procs)} nodes ("
                + ", ".join(f"{p.name} {p.version} {p.ip}" for p in list(cluster.kubelets.procs.values())[:8])
                + (", …" if len(cluster.kubelets.procs) > 8 else "")
                + f"); their folders: {cluster.kubelets.root} (each node's containers.json is what its runtime "
                "recorded)",
                flush=True,
            )
        print("  press Ctrl+C to stop.", flush=True)

    asyncio.run(serve())
    return int(ExitCode.OK)


def _say(line: str) -> None:
    """A last line after a stop: the terminal may be gone (SIGHUP), and a failed print must not turn into an error."""
    try:
        print(line, flush=True)
    except OSError:
        pass


OUR_CLUSTERS = ("dragoman-sim", "dragoman-cp")  # the cluster names of the kubeconfigs `sim serve` writes


def check_kubeconfig_target(path: str) -> None:
    """`--write-kubeconfig PATH` may make a new file, or replace a kubeconfig `sim serve` wrote before (every cluster
    in it is dragoman's: a re-run); anything else there — a user's ~/.kube/config — is refused with a sentence, never
    replaced and never merged into."""
    from dragoman.fleet.errors import ExitCode, UserError
    from dragoman.fleet.kubeconfig import load_merged
    from dragoman.fleet.safefile import check_target

    check_target(path, "the kubeconfig")
    if not os.path.lexists(path):
        return
    try:
        clusters = list(load_merged([path], True).clusters)
    except UserError:
        clusters = []
    if clusters and all(name in OUR_CLUSTERS for name in clusters):
        return
    raise UserError(
        f"refusing to write the kubeconfig to {path}: a file is already there that dragoman did not write, and it "
        "is never replaced; give a new path (e.g. --write-kubeconfig ./dragoman.kubeconfig, then "
        "KUBECONFIG=./dragoman.kubeconfig kubectl ...).",
        ExitCode.INPUT,
    )


def write_kubeconfig(path: str, config: dict) -> None:
    """The same safe write as the embedded simulator's kubeconfig (fleet/safefile.py: regular files only, atomic,
    0600)."""
    import yaml
    from dragoman.fleet.safefile import write_atomic

    check_kubeconfig_target(path)  # again at the write: the start took minutes, something may be there now
    write_atomic(path, lambda f: f.write(yaml.safe_dump(config, sort_keys=False)), "--write-kubeconfig")
