"""The fleet read once for a headless command from its flags: a snapshot file, the demo simulator, or the kubeconfig's
cluster (no Textual)."""

from __future__ import annotations

import argparse
import asyncio
import copy
import dataclasses
import os
import tempfile
from collections.abc import Iterable
from typing import TYPE_CHECKING

from dragoman.fleet.errors import ExitCode, UserError

if TYPE_CHECKING:
    from dragoman.fleet.informer import FleetSource

# The cluster client (kubernetes-asyncio, aiohttp) costs ~1 s to import: only commands that read a fleet pay it, not
# --help.


def add_source_flags(parser: argparse.ArgumentParser, *, demo: bool = True) -> None:
    """--kubeconfig/--context/--snapshot (and --demo) also accepted after the subcommand.

    SUPPRESS keeps a value given before the subcommand (`dragoman --snapshot f check`).
    """
    parser.add_argument(
        "--kubeconfig",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="kubeconfig to read (default: $KUBECONFIG, then ~/.kube/config)",
    )
    parser.add_argument("--context", metavar="NAME", default=argparse.SUPPRESS, help="kubeconfig context to use")
    parser.add_argument(
        "--snapshot",
        metavar="FILE",
        default=argparse.SUPPRESS,
        help="read the fleet from a snapshot file instead of a cluster ('-' reads stdin)",
    )
    if demo:
        parser.add_argument(
            "--demo",
            action="store_true",
            default=argparse.SUPPRESS,
            help="start the embedded simulator with the demo fleet and read it",
        )
    # Every command shares --read-only (README): a reading command accepts it where an operator puts it by habit.
    parser.add_argument(
        "--read-only",
        action="store_true",
        default=argparse.SUPPRESS,
        help="make every write impossible (this command only reads the cluster)",
    )


@dataclasses.dataclass
class Origin:
    """Where the picture came from, as a report states it."""

    kind: str  # "cluster", "snapshot" or "demo"
    source: FleetSource
    # The PrometheusRules read with the fleet where its source holds them (the in-process demo's scenario), so that
    # `check --demo` does not parse the scenario a second time for them; None: read them from the source.
    rules: list[dict] | None = None

    @property
    def label(self) -> str:
        s = self.source
        if self.kind == "snapshot":
            return f"snapshot {s.snapshot if s.snapshot != '-' else '(stdin)'}"
        version = f" ({s.server_version})" if s.server_version else ""
        if self.kind == "demo":
            return f"the demo simulator{version}"
        where = f"context {s.context} at {s.server}" if s.context else s.server
        return where + version

    def notes(self) -> list[str]:
        """Sentences about parts of the picture that are missing: kinds the credentials may not list, kinds the server
        does not serve."""
        from dragoman.fleet.store import FORBIDDEN, KINDS, LIVE

        store = self.source.store
        notes, unserved = [], []
        for kind in store.kinds:
            state = store.state(kind)
            if state.status == FORBIDDEN:
                notes.append(state.message)
            elif state.status == LIVE and state.message:
                unserved.append(KINDS[kind].plural)
        if unserved:
            # Before Kubernetes 1.34 a cluster serves no resource.k8s.io/v1: one note, not four.
            notes.append(f"the server does not serve {_join(unserved)}: the picture has none of them.")
        # Objects of the wrong shape were left out (fleet/shapes.py): the first few by name, then how many in all.
        malformed = list(getattr(store, "notes", {}).values())
        notes.extend(malformed[:5])
        total = max(getattr(store, "malformed_count", 0), len(malformed))
        if total > 5:
            notes.append(f"{total - 5} more objects of the wrong shape were skipped.")
        return notes

    def to_json(self) -> dict:
        s = self.source
        return {
            "type": self.kind,
            "snapshot": s.snapshot if self.kind == "snapshot" else None,
            "context": s.context or None,
            "server": s.server or None,
            "serverVersion": s.server_version or None,
            "resourceApiVersions": list(s.resource_api_versions),
            "forbiddenKinds": s.forbidden,
        }


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def read_from_args(args: argparse.Namespace, kinds: Iterable[str] | None = None, *, project: bool = False) -> Origin:
    """Read the fleet once from the command's flags. Raises UserError (exit 2) with one sentence when it cannot be
    read. `project`: a cluster's CPU pods kept as projections (read_fleet), for commands that only diagnose."""
    from dragoman.fleet.informer import read_fleet

    snapshot = getattr(args, "snapshot", None)
    demo = getattr(args, "demo", False)
    kind_list = list(kinds) if kinds is not None else None
    if snapshot and demo:
        raise UserError("--snapshot and --demo are two different sources; give one of them.", ExitCode.INPUT)
    if snapshot:
        return Origin("snapshot", asyncio.run(read_fleet(snapshot=snapshot, kinds=kind_list)))
    if demo:
        from dragoman.tui.source import control_plane_dir

        binaries = control_plane_dir(args)
        if binaries is not None:
            # `--demo --control-plane DIR`: the demo fleet on the real control plane, as the TUI and migrate run it.
            return Origin("demo", _read_demo_real(binaries, kind_list))
        source, rules = asyncio.run(_read_demo(kind_list))
        return Origin("demo", source, rules)
    source = asyncio.run(
        read_fleet(getattr(args, "kubeconfig", None), getattr(args, "context", None), kinds=kind_list, project=project)
    )
    if source.store.kinds and len(source.forbidden) == len(source.store.kinds):
        raise UserError(
            f"the credentials of context {source.context!r} may not list anything dragoman reads on {source.server} "
            "(403 Forbidden on every kind).",
            ExitCode.INPUT,
        )
    return Origin("cluster", source)


def _read_demo_real(binaries: str, kinds: list[str] | None) -> FleetSource:
    """The demo fleet served by the real control plane in a child process (DemoProcess), read once, then stopped."""
    from dragoman.fleet.informer import read_fleet
    from dragoman.sim.controlplane.build import check_dir
    from dragoman.tui.source import DemoProcess

    check_dir(binaries)  # a sentence before anything starts
    demo = DemoProcess(control_plane=binaries)
    try:
        kubeconfig = demo.start()
        return asyncio.run(read_fleet(kubeconfig, None, kinds=kinds))
    finally:
        demo.stop()


async def _read_demo(kinds: list[str] | None) -> tuple[FleetSource, list[dict]]:
    """Start the demo simulator in this process, read it once through the API as any cluster, and stop it; with the
    scenario's PrometheusRules (copies: the simulator's store owns its objects).

    In-process, with the controllers' first pass run to the end before the read and no controller running during
    it (running ones would share this loop and delay the read by minutes): the fleet the TUI's live demo settles to
    at once, so a finding the scheduler resolves on its first pass (a stale bridge claim) is in neither.
    """
    from dragoman.fleet.accounting import rules_in
    from dragoman.fleet.informer import read_fleet
    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.controllers import default_controllers
    from dragoman.sim.controllers.base import settle
    from dragoman.sim.server import Simulator

    sc = scenario_mod.load("demo")
    rules = copy.deepcopy(rules_in(sc.objects))
    sim = Simulator.from_scenario(sc)
    settle(default_controllers(sim))
    await sim.start()
    try:
        with tempfile.TemporaryDirectory(prefix="dragoman-demo-") as tmp:
            kubeconfig = os.path.join(tmp, "kubeconfig")
            sim.write_kubeconfig(kubeconfig)
            return await read_fleet(kubeconfig, None, kinds=kinds), rules
    finally:
        await sim.stop()
