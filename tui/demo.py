"""The child process behind `dragoman --demo`: the simulator with a scenario and its controllers, a kubeconfig, then READY on stdout."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys


async def serve(kubeconfig: str, scenario: str, controllers: bool) -> None:
    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.server import Simulator

    sc = scenario_mod.load(scenario)
    sim = Simulator(sc.objects, users=sc.users, speed=sc.speed or 1.0, faults=sc.faults, anonymous_read=sc.anonymous_read)
    if controllers:
        from dragoman.sim.controllers import default_controllers

        # DRAGOMAN_DEMO_SKIP=Scheduler,Kubelets leaves named controllers out (to pin a picture, or to isolate one).
        skip = {s.strip() for s in os.environ.get("DRAGOMAN_DEMO_SKIP", "").split(",") if s.strip()}
        for c in default_controllers(sim):
            if type(c).__name__ not in skip:
                sim.add_controller(c)
    await sim.start()
    sim.write_kubeconfig(kubeconfig)
    parent = os.getppid()
    print("READY", sim.url, flush=True)
    try:
        # Die with the TUI: an orphaned simulator would keep a port and a core busy.
        while os.getppid() == parent:
            await asyncio.sleep(1.0)
    finally:
        await sim.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m dragoman.tui.demo")
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--scenario", default="demo")
    p.add_argument("--no-controllers", action="store_true")
    args = p.parse_args(argv)
    try:
        asyncio.run(serve(args.kubeconfig, args.scenario, not args.no_controllers))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
