"""The files a path runs through: which of dragoman's source files had a function called while a path ran.

`FileTrace` is a `sys.setprofile` hook (on every thread) that notes each dragoman source file whose function is called,
in the order first met. What it leaves out is named in `INFRASTRUCTURE` and said why; nothing else is dropped.
"""

from __future__ import annotations

import contextlib
import pathlib
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
PRODUCT = ("fleet", "actions", "widgets", "tui")

# Left out, with why. Everything else of the product that runs while the path runs counts.
INFRASTRUCTURE = {
    "sim/": "the embedded API server: the other side of the wire, which a real cluster plays in production (a product "
    "function it calls, such as a kernel rule in fleet/k8s/ it validates with, is left out too)",
    "fleet/cel/gen/": "the parser generated from CEL's grammar: nobody reads it to follow a path",
}
# Calls from here are left out too: Textual's compositor asking widgets for their lines, which it does on its own
# schedule (when, and how often, depends on the machine's load), so the count would follow the load.
DRAWING = ("textual/_compositor.py",)


class FileTrace:
    """`with FileTrace() as t: ...` then `t.files`: the product files called, in the order first met."""

    def __init__(self) -> None:
        self._seen: dict[str, str | None] = {}  # co_filename -> relative product path, or None when not ours
        self._outside: dict[str, bool] = {}  # co_filename -> left out (INFRASTRUCTURE)
        self.files: list[str] = []
        self.why: dict[str, str] = {}  # file -> its first function called, and from where
        self.stopped = False
        self._quiet = 0

    def _name(self, filename: str) -> str | None:
        try:
            rel = pathlib.Path(filename).resolve().relative_to(ROOT).as_posix()
        except ValueError:
            return None
        if not rel.startswith(tuple(p + "/" for p in PRODUCT)) or rel.startswith(tuple(INFRASTRUCTURE)):
            return None
        return rel

    def _left_out(self, filename: str) -> bool:
        if filename.endswith(DRAWING):
            return True
        try:
            rel = pathlib.Path(filename).resolve().relative_to(ROOT).as_posix()
        except ValueError:
            return False
        return rel.startswith(tuple(INFRASTRUCTURE))

    def _hook(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or self.stopped or self._quiet:
            return
        filename = frame.f_code.co_filename
        if filename in self._seen:
            return
        rel = self._name(filename)
        if rel is None:
            self._seen[filename] = None
            return
        # A product function the simulator calls is theirs, not the path's: the simulator imports the kernel
        # (fleet/k8s/) for the rules it applies. Nor is what Textual's compositor calls to draw. Noted once it is called
        # from the path itself.
        caller = frame.f_back
        while caller is not None:
            name = caller.f_code.co_filename
            if name not in self._outside:
                self._outside[name] = self._left_out(name)
            if self._outside[name]:
                return
            caller = caller.f_back
        self._seen[filename] = rel
        self.files.append(rel)
        back = frame.f_back
        self.why[rel] = f"{frame.f_code.co_name} from {self._name(back.f_code.co_filename) if back else None}:" + (
            back.f_code.co_name if back else ""
        )

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """Calls made in here are not the path's: the driver looking at the screen to see whether the path is done."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    def __enter__(self) -> FileTrace:
        threading.setprofile(self._hook)
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped = True
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the three newcomer paths (issue 29)


async def _until(pilot: Any, trace: FileTrace, predicate: Any, timeout: float = 60.0) -> None:
    """Poll the screen (quietly: looking is not the path) until `predicate()` holds."""
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        with trace.quiet():
            if predicate():
                return
        if loop.time() > end:
            raise AssertionError("timed out waiting for the path's end")
        await pilot.pause(0.02)


async def slice_to_devices_row() -> FileTrace:
    """(a) A new ResourceSlice from the watch to its row in the Devices view: the demo app on the simulator, Devices
    open; traced from the slice's creation on the server until the row's cells are set in the table."""
    import copy

    from dragoman.widgets.vtable import VTable

    from tests.tui.conftest import demo_app, wait_for

    trace = FileTrace()
    async with demo_app() as (sim, app, pilot):
        await pilot.press("colon", *"devices", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "view", None) is not None and app.screen.populated)
        assert app.screen.view.name == "devices"
        # The Pools view under Devices is told of the same change: its rows are not this path's.
        app.feed.unlisten(app.screen_stack[1])
        new = copy.deepcopy(next(e.obj for e in sim.store.entries("resourceslices")))
        md = new["metadata"]
        md.clear()
        md["name"] = "newcomer-slice"
        new["spec"]["pool"].update(name="newcomer-pool", generation=1, resourceSliceCount=1)
        new["spec"]["devices"] = [dict(new["spec"]["devices"][0], name="gpu-newcomer")]
        key = (new["spec"]["driver"], "newcomer-pool", "gpu-newcomer")
        set_row = VTable.set_row

        def spy(self: VTable, k: Any, *a: Any, **kw: Any) -> bool:
            out = set_row(self, k, *a, **kw)
            if k == key:
                trace.stopped = True
            return out

        await pilot.pause(0.2)
        VTable.set_row = spy  # type: ignore[method-assign]
        try:
            with trace:
                sim.store.create("resourceslices", new)
                await _until(pilot, trace, lambda: trace.stopped)
        finally:
            VTable.set_row = set_row  # type: ignore[method-assign]
    return trace


async def wizard_apply_to_cordon_patch(tmp: pathlib.Path) -> FileTrace:
    """(b) The wizard's `a` to the audited PATCH that cordons a node: the wizard of l4-inference (preflight and
    cordon) on the demo simulator; traced from the key through the confirmation until the PATCH's outcome is in the
    audit log."""
    from dragoman.actions.audit import AuditLog
    from dragoman.actions.steps import Options
    from dragoman.fleet.cluster import connect
    from dragoman.tui.screens.confirm import ConfirmWriteScreen
    from dragoman.tui.screens.migrate import MigrateScreen
    from textual.app import App

    from tests.support.sim import running_simulator

    class WizardApp(App):
        def on_mount(self) -> None:
            self.push_screen(screen)

    trace = FileTrace()
    outcome = AuditLog.outcome

    def spy(self: AuditLog, *a: Any, **kw: Any) -> None:
        outcome(self, *a, **kw)
        if kw.get("step") == "cordon" and kw.get("result") == "applied":
            trace.stopped = True

    async with running_simulator(scenario_path="demo", speed=120.0) as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            screen = MigrateScreen(
                "l4-inference",
                cluster=cluster,
                options=Options(evict_retry=0.3, lease_seconds=30),
                audit_path=str(tmp / "audit.jsonl"),
                read_only=False,
                steps=["cordon"],
            )
            app = WizardApp()
            async with app.run_test(size=(110, 40)) as pilot:
                await _until(pilot, trace, lambda: screen.plan is not None)
                await pilot.pause(0.2)
                AuditLog.outcome = spy  # type: ignore[method-assign]
                try:
                    with trace:
                        await pilot.press("a")
                        await _until(pilot, trace, lambda: isinstance(app.screen, ConfirmWriteScreen))
                        await pilot.click("#confirm")
                        await _until(pilot, trace, lambda: trace.stopped)
                finally:
                    AuditLog.outcome = outcome  # type: ignore[method-assign]
                # The run goes on (the cordon's verification, the state's bookkeeping): the screen stays until it is
                # done, or its worker would find the screen gone.
                await _until(pilot, trace, lambda: screen.result is not None and not screen.busy, 120)
        finally:
            await cluster.close()
    return trace


STUCK_POD = ("Pod", "ml-inference", "asr-batch-large-wr6l9")  # the demo's pod asking for a MIG profile nobody maps


def stuck_pod_to_finding() -> tuple[FileTrace, list[dict]]:
    """(c) A stuck pod to its finding's text: the demo's pending MIG pod and one A100 node in a model; traced
    from the diagnosis to the finding's text (`Finding.to_json`, what `check` and `explain` print)."""
    from dragoman.fleet import diagnose as diagnose_mod
    from dragoman.fleet.diagnose import diagnose
    from dragoman.fleet.model import FleetModel
    from dragoman.sim.scenarios import DEMO_PATH, load_scenario

    objects = load_scenario(DEMO_PATH)
    pod = next(o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == STUCK_POD[2])
    node = next(o for o in objects if o["kind"] == "Node" and "a100" in o["metadata"]["name"])
    model = FleetModel()
    model.load_list([node, pod])
    # The diagnosis runs every rule family (nodes, classes, selectors, claims, accounting, taints, health) beside the
    # pods' rule: their files are siblings of this path, not on it. Only the pods' rule runs here.
    rules = diagnose_mod.RULES
    diagnose_mod.RULES = (diagnose_mod.pods,)
    try:
        with FileTrace() as trace:
            texts = [f.to_json() for f in diagnose(model) if STUCK_POD in [tuple(o) for o in f.objects]]
    finally:
        diagnose_mod.RULES = rules
    return trace, texts


def main() -> None:
    """`python -m tests.support.paths`: each path's files, in the order first met, with the first function called."""
    import asyncio
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            "a. ResourceSlice from the watch to a Devices row": asyncio.run(slice_to_devices_row()),
            "b. the wizard's apply key to an audited cordon PATCH": asyncio.run(
                wizard_apply_to_cordon_patch(pathlib.Path(tmp))
            ),
            "c. a stuck pod to its finding text": stuck_pod_to_finding()[0],
        }
    for title, trace in runs.items():
        print(f"{title}: {len(trace.files)} files")
        for f in trace.files:
            print(f"  {f:34} {trace.why[f]}")
    print("left out:", "; ".join(f"{k} ({v})" for k, v in INFRASTRUCTURE.items()), "; and what", *DRAWING, "calls")


if __name__ == "__main__":
    main()
