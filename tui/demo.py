"""The child process behind `dragoman --demo`: the simulator with a scenario and its controllers, a kubeconfig, then
READY on stdout."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable


async def serve(kubeconfig: str, scenario: str, controllers: bool) -> None:
    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.server import Simulator

    sc = scenario_mod.load(scenario)
    sim = Simulator.from_scenario(sc)
    if controllers:
        from dragoman.sim.controllers import default_controllers
        from dragoman.sim.controllers.base import settle

        # DRAGOMAN_DEMO_SKIP=Scheduler,Kubelets leaves named controllers out (to pin a picture, or to isolate one).
        skip = {s.strip() for s in os.environ.get("DRAGOMAN_DEMO_SKIP", "").split(",") if s.strip()}
        running = [c for c in default_controllers(sim) if type(c).__name__ not in skip]
        # Their first pass before READY: the UI's first picture is the fleet `check --demo` reads (a stale bridge
        # claim already deleted), not one that loses a finding seconds later.
        settle(running)
        for c in running:
            sim.add_controller(c)
    parent = os.getppid()
    await sim.start()
    try:
        if not _write(kubeconfig, lambda: sim.write_kubeconfig(kubeconfig, make_folder=False)):
            return
        print("READY", sim.url, flush=True)
        # Die with the TUI: an orphaned simulator would keep a port and a core busy.
        while os.getppid() == parent:
            await asyncio.sleep(1.0)
    finally:
        await sim.stop()
        _orphaned(parent, kubeconfig)


def _write(kubeconfig: str, write: Callable[[], None]) -> bool:
    """Write the run's kubeconfig unless its folder is gone (False then): the parent removes it when it gives the run
    up, and a folder made again would hold this run's admin token with no one left to remove it."""
    from dragoman.fleet.errors import UserError

    if not os.path.isdir(os.path.dirname(os.path.abspath(kubeconfig))):
        return False
    try:
        write()  # makes no folder: one removed meanwhile fails the write
    except UserError:
        if os.path.isdir(os.path.dirname(os.path.abspath(kubeconfig))):
            raise
        return False
    return True


def _orphaned(parent: int, kubeconfig: str) -> None:
    """When the parent died without its cleanup (SIGKILL), the run's folder (the kubeconfig with the run's admin token)
    is removed here; otherwise the parent removes it."""
    if os.getppid() != parent:
        import shutil

        shutil.rmtree(os.path.dirname(os.path.abspath(kubeconfig)), ignore_errors=True)


async def serve_real(kubeconfig: str, scenario: str, binaries: str, prometheus: bool = False) -> None:
    """The same demo on the real control plane: its processes, the scenario loaded through the API, the node agents
    (and a Prometheus scraping them: its URL follows the API server's on the READY line)."""
    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.controlplane import RealCluster
    from dragoman.tui.commands.controlplane import write_kubeconfig

    sc = scenario_mod.load(scenario)
    cluster = RealCluster(binaries, sc.objects, sc.users, prometheus=prometheus)
    parent = os.getppid()
    try:
        await cluster.start()
        if not _write(kubeconfig, lambda: write_kubeconfig(kubeconfig, cluster.kubeconfig())):
            return
        print("READY", cluster.url, *([cluster.prometheus.url] if cluster.prometheus else []), flush=True)
        while os.getppid() == parent:
            await asyncio.sleep(1.0)
    finally:
        await cluster.stop()
        _orphaned(parent, kubeconfig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m dragoman.tui.demo")
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--scenario", default="demo")
    p.add_argument("--no-controllers", action="store_true")
    p.add_argument("--control-plane", metavar="DIR", help="run on the real control plane whose binaries are in DIR")
    p.add_argument("--with-prometheus", action="store_true", help="with --control-plane: and a Prometheus")
    args = p.parse_args(argv)
    import signal

    # The parent blocks these while it starts this process (DemoProcess._start); the mask is inherited through exec.
    # One that came meanwhile is delivered here, once the parent knows this process and can stop it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})

    def _term(*_: object) -> None:
        # SIGTERM (the TUI's stop) unwinds like Ctrl+C, so every control-plane process is ended and its files removed.
        raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _term)
    from dragoman.fleet.errors import UserError, printable

    try:
        if args.control_plane:
            asyncio.run(serve_real(args.kubeconfig, args.scenario, args.control_plane, args.with_prometheus))
        else:
            asyncio.run(serve(args.kubeconfig, args.scenario, not args.no_controllers))
    except KeyboardInterrupt:
        pass
    except UserError as exc:
        # The parent shows the last line of this log: the sentence, not a traceback.
        print(printable(exc.message, 1500), file=sys.stderr, flush=True)
        return int(exc.exit_code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
