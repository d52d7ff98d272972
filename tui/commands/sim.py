"""`dragoman sim serve`: the embedded cluster on loopback."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sim", help="the embedded simulated cluster")
    simsub = p.add_subparsers(dest="sim_command", metavar="SUBCOMMAND", required=True)
    serve = simsub.add_parser(
        "serve",
        help="serve the Kubernetes API on loopback",
        description=(
            "Serve a simulated Kubernetes v1.37 API on loopback until interrupted: HTTPS with a certificate made for "
            "this run, and a bearer token per user made for this run (only the written kubeconfig carries them)."
        ),
    )
    serve.add_argument(
        "--scenario",
        metavar="NAME|FILE",
        help="a built-in scenario or a file of objects (default: demo when present, else an empty cluster)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="loopback address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=0, help="port, 0-65535 (default 0: a free one)")
    serve.add_argument("--write-kubeconfig", metavar="PATH", help="write a kubeconfig with one context per user")
    serve.add_argument(
        "--faults", metavar="SPEC", help="inject faults, e.g. 'error=0.1 code=500 verbs=list; latency=50ms'"
    )
    serve.add_argument("--speed", type=float, help="simulated seconds per real second (default 1)")
    serve.add_argument(
        "--no-controllers",
        action="store_true",
        help="serve the objects as they are: no scheduler, kubelets or workload controllers reconcile them",
    )
    from dragoman.tui.commands.controlplane import add_serve_flag

    add_serve_flag(serve)
    serve.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    import asyncio

    from dragoman.fleet.errors import ExitCode, UserError
    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.faults import FaultSpecError, parse
    from dragoman.sim.server import Simulator, _is_loopback
    from dragoman.tui.cli import number_flag

    number_flag("--port", args.port, minimum=0, maximum=65535, integer=True)
    if args.write_kubeconfig:
        from dragoman.tui.commands.controlplane import check_kubeconfig_target

        check_kubeconfig_target(args.write_kubeconfig)  # refused before anything starts
    if not _is_loopback(args.host):
        raise UserError(
            f"the simulator serves only on loopback; {args.host} is not a loopback address (use 127.0.0.1 or ::1).",
            ExitCode.INPUT,
        )
    if args.speed is not None and args.speed <= 0:
        raise UserError("--speed must be a positive number of simulated seconds per real second.", ExitCode.INPUT)
    number_flag("--speed", args.speed, minimum=1e-6, maximum=1e6)  # nan and inf are not speeds either
    if args.faults:
        try:
            parse(args.faults)
        except FaultSpecError as exc:
            raise UserError(f"--faults: {exc}", ExitCode.INPUT) from None
    if getattr(args, "demo", False) and args.scenario not in (None, "demo"):
        raise UserError(
            f"--demo serves the demo fleet; --scenario {args.scenario} names another (give one of them).",
            ExitCode.INPUT,
        )
    if getattr(args, "audit_log_path", None) and getattr(args, "control_plane", None) is None:
        raise UserError("--audit-log-path is kube-apiserver's audit log: it needs --control-plane.", ExitCode.INPUT)
    if getattr(args, "with_prometheus", False) and not getattr(args, "control_plane", None):
        raise UserError(
            "--with-prometheus scrapes the real control plane's components: it needs --control-plane.", ExitCode.INPUT
        )
    if getattr(args, "real_kubelets", None) is not None and not getattr(args, "control_plane", None):
        raise UserError(
            "--real-kubelets runs real kubelets against the real control plane: it needs --control-plane.",
            ExitCode.INPUT,
        )
    name = args.scenario or ("demo" if "demo" in scenario_mod.available() else None)
    # A large scenario file's API check runs beside the store's load (scenario.BACKGROUND_OBJECTS); settled before
    # anything listens, is printed or is written, so a refused scenario starts nothing, as before.
    sc = scenario_mod.load(name, background=True) if name else scenario_mod.Scenario(objects=[])
    if getattr(args, "control_plane", None) is not None:
        from dragoman.tui.commands.controlplane import serve_real

        sc.settle()
        return serve_real(args, sc, name)
    try:
        sim = Simulator.from_scenario(sc, speed=args.speed, faults=args.faults)
    except KeyError as exc:
        sc.settle()  # the check's sentence, when it has one, says more than the loader's
        raise UserError(f"the scenario has an object the simulator cannot load: {exc}.", ExitCode.INPUT) from None
    except Exception as exc:  # noqa: BLE001 - a bad scenario is the operator's input, not a crash
        sc.settle()
        raise UserError(f"the scenario could not be loaded: {exc}.", ExitCode.INPUT) from None
    sc.settle()

    if not args.no_controllers:
        from dragoman.sim.controllers import default_controllers

        for controller in default_controllers(sim):
            sim.add_controller(controller)

    async def serve() -> None:
        await sim.start(args.host, args.port)
        try:
            print(
                f"dragoman sim: serving Kubernetes v1.37 at {sim.url}"
                + (f" (scenario {name})" if name else " (empty cluster)"),
                flush=True,
            )
            counts = sim.store.counts()
            print("  " + ", ".join(f"{n} {k.split('.')[0]}" for k, n in sorted(counts.items()) if n), flush=True)
            for kind, n in sorted(sc.skipped.items()):
                print(f"  skipped {n} {kind} (a kind the simulator does not serve)", flush=True)
            if args.write_kubeconfig:
                from dragoman.tui.commands.controlplane import write_kubeconfig

                # Never over a device, FIFO, folder, link or a kubeconfig dragoman did not write; 0600 (it carries
                # this run's tokens), renamed into place.
                write_kubeconfig(args.write_kubeconfig, sim.kubeconfig())
                contexts = ", ".join(c["name"] for c in sim.kubeconfig()["contexts"])
                print(f"  kubeconfig: {args.write_kubeconfig} (contexts: {contexts})", flush=True)
                print(f"  try: KUBECONFIG={args.write_kubeconfig} kubectl get nodes", flush=True)
            else:
                print("  (no kubeconfig written; pass --write-kubeconfig PATH)", flush=True)
            if sim.faults.active:
                print(f"  faults: {sim.faults.spec}", flush=True)
            if args.no_controllers:
                print("  controllers: off (objects are served as they are)", flush=True)
            elif sim.controllers:
                print("  controllers: " + ", ".join(type(c).__name__ for c in sim.controllers), flush=True)
            print("  press Ctrl+C to stop.", flush=True)
            await asyncio.Event().wait()
        finally:
            await sim.stop()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        print("dragoman sim: stopped.", flush=True)
    return int(ExitCode.OK)
