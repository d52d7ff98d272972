"""The files a newcomer walks along a path: the files holding a frame on the call stack at each hop where the path's
data changes hands.

Issue 29 counted each path by hand along its main line (11, 12 and 12 files): where the data goes, not every helper
that runs beside it. This measures that, mechanically. Each path names its hops: the functions where its datum is
handed on (the watch event decoded, the store taking it, the model absorbing it, the view making its row, the table
showing it), each with a test on the call's arguments (or its return value) that picks the path's own datum out of
the others. `PathTrace` is a `sys.setprofile` hook (on every thread); at a hop's first call that passes the test it
takes the call stack: every product file with a frame on it, from the task's or thread's bottom up to the hop. The
path's files are those stacks' files, in the order first met. A helper that runs and returns before a hop (a
quantity parsed, a glyph picked) is not on the path; a relay that passes the datum on is, because it holds a frame
while the datum is handed on. A hop that is never met fails the path (`PathTrace.missed`): nothing is counted short.

Left out: the files of `INFRASTRUCTURE` (said why), and the test driving the path. The hops name functions that have
kept their names since the issue was filed, so the same measure runs on the tree the issue was filed against
(5435770) and on today's: `python -m tests.support.paths` prints each path's files with the hop that put each there.
"""

from __future__ import annotations

import dataclasses
import pathlib
import sys
import threading
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
PRODUCT = ("fleet", "actions", "widgets", "tui")

# Left out, with why.
INFRASTRUCTURE = {
    "sim/": "the embedded API server: the other side of the wire, which a real cluster plays in production (a stack "
    "with a simulator frame on it is the server's doing, not the path's, and is not taken)",
    "fleet/cel/gen/": "the parser generated from CEL's grammar: nobody reads it to follow a path",
}


@dataclasses.dataclass(frozen=True)
class Hop:
    """Where the path's datum changes hands: `function` (its qualified name) in product file `file`, at its call or
    its `return`, when `when(args)` holds (the call's arguments by name; at a return also "return": the value)."""

    what: str
    file: str
    function: str
    when: Callable[[dict], bool] = lambda args: True
    at: str = "call"


def _rel(filename: str) -> str | None:
    try:
        return pathlib.Path(filename).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None


class PathTrace:
    """`with PathTrace(hops) as t: ...` then `t.files` (the product files on the hops' stacks, first met first),
    `t.via` (file -> the hop that first put it there) and `t.missed` (hops never met)."""

    def __init__(self, hops: list[Hop]) -> None:
        self.hops = hops
        self.stacks: dict[str, list[str]] = {}  # hop.what -> the product files on its stack, bottom up
        self.files: list[str] = []
        self.via: dict[str, str] = {}
        self._by_code: dict[CodeType, list[Hop]] = {}
        self._rels: dict[str, str | None] = {}
        self._lock = threading.Lock()
        self.stopped = False

    @property
    def done(self) -> bool:
        """Every hop met."""
        return len(self.stacks) == len(self.hops)

    @property
    def missed(self) -> list[str]:
        return [h.what for h in self.hops if h.what not in self.stacks]

    def _file(self, filename: str) -> str | None:
        rel = self._rels.get(filename, "")
        if rel == "":
            rel = self._rels[filename] = _rel(filename)
        return rel

    def _hops_of(self, code: CodeType) -> list[Hop]:
        hops = self._by_code.get(code)
        if hops is None:
            rel = self._file(code.co_filename)
            hops = self._by_code[code] = [h for h in self.hops if h.file == rel and h.function == code.co_qualname]
        return hops

    def _hook(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return") or self.stopped:
            return
        hops = self._hops_of(frame.f_code)
        if not hops:
            return
        for hop in hops:
            if hop.at != event or hop.what in self.stacks:
                continue
            args = dict(frame.f_locals)
            if event == "return":
                args["return"] = arg
            try:
                if not hop.when(args):
                    continue
            except Exception:  # noqa: BLE001 - a datum of another shape is not the path's
                continue
            stack = self._stack(frame)
            if stack is not None:
                self._take(hop, stack)

    def _stack(self, frame: FrameType) -> list[str] | None:
        """The product files with a frame on the stack, bottom up, each where it first appears; None when a simulator
        frame is on it."""
        files: list[str] = []
        f: FrameType | None = frame
        while f is not None:
            rel = self._file(f.f_code.co_filename)
            if rel is not None:
                if rel.startswith("sim/"):
                    return None
                if rel.startswith(tuple(p + "/" for p in PRODUCT)) and not rel.startswith(tuple(INFRASTRUCTURE)):
                    files.append(rel)
            f = f.f_back
        return list(dict.fromkeys(reversed(files)))

    def _take(self, hop: Hop, stack: list[str]) -> None:
        with self._lock:
            if hop.what in self.stacks:
                return
            self.stacks[hop.what] = stack
            for rel in stack:
                if rel not in self.via:
                    self.via[rel] = hop.what
                    self.files.append(rel)

    def __enter__(self) -> PathTrace:
        threading.setprofile(self._hook)
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped = True
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


def _named(obj: Any, name: str) -> bool:
    return isinstance(obj, dict) and (obj.get("metadata") or {}).get("name") == name


def _holds(value: Any, name: str, depth: int = 3) -> bool:
    """Whether `value` is, or holds within `depth` levels (lists, tuples, a dict's values, an object's fields), an
    object named `name`."""
    if _named(value, name):
        return True
    if depth == 0:
        return False
    if isinstance(value, (list, tuple)):
        return any(_holds(v, name, depth - 1) for v in value)
    if isinstance(value, dict):
        return any(_holds(v, name, depth - 1) for v in value.values())
    fields = getattr(value, "__dict__", None) or {
        k: getattr(value, k) for k in getattr(type(value), "__slots__", ()) if hasattr(value, k)
    }
    return any(_holds(v, name, depth - 1) for v in fields.values())


# ---------------------------------------------------------------- the three newcomer paths (issue 29)

NEW_SLICE, NEW_DEVICE = "newcomer-slice", "gpu-newcomer"

SLICE_HOPS = [
    Hop(
        "the watch event decoded",
        "fleet/cluster.py",
        "Cluster._event",
        lambda a: _named(a["return"][1], NEW_SLICE),
        at="return",
    ),
    Hop("the store takes it", "fleet/store.py", "FleetStore.apply", lambda a: _named(a["obj"], NEW_SLICE)),
    Hop("the model absorbs it", "fleet/model.py", "FleetModel.apply", lambda a: _holds(a["changes"], NEW_SLICE)),
    Hop("the view makes its row", "fleet/views/devices.py", "device_row", lambda a: a["d"].name == NEW_DEVICE),
    Hop("the table shows the row", "widgets/vtable.py", "VTable.set_row", lambda a: a["key"][-1] == NEW_DEVICE),
]


async def _until(pilot: Any, predicate: Any, timeout: float = 60.0, trace: PathTrace | None = None) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for the path's end (hops never met: {trace and trace.missed})")
        await pilot.pause(0.02)


async def slice_to_devices_row() -> PathTrace:
    """(a) A new ResourceSlice from the watch to its row in the Devices view: the demo app on the simulator, Devices
    open; traced from the slice's creation on the server until its device's row is set in the table."""
    import copy

    from tests.tui.conftest import demo_app, wait_for

    trace = PathTrace(SLICE_HOPS)
    async with demo_app() as (sim, app, pilot):
        await pilot.press("colon", *"devices", "enter")
        await wait_for(pilot, lambda: getattr(app.screen, "view", None) is not None and app.screen.populated)
        assert app.screen.view.name == "devices"
        new = copy.deepcopy(next(e.obj for e in sim.store.entries("resourceslices")))
        md = new["metadata"]
        md.clear()
        md["name"] = NEW_SLICE
        new["spec"]["pool"].update(name="newcomer-pool", generation=1, resourceSliceCount=1)
        new["spec"]["devices"] = [dict(new["spec"]["devices"][0], name=NEW_DEVICE)]
        await pilot.pause(0.2)
        with trace:
            sim.store.create("resourceslices", new)
            await _until(pilot, lambda: trace.done, trace=trace)
    return trace


def _cordon_patch(a: dict) -> bool:
    return a["method"] == "PATCH" and "/nodes/" in a["path"] and "dryRun" not in (a.get("query") or {})


def _applied_cordon(a: dict) -> bool:
    return a["step"] == "cordon" and a["result"] == "applied"


WIZARD_HOPS = [
    Hop("the apply key", "tui/screens/migrate.py", "MigrateScreen.action_apply"),
    Hop(
        "the confirmation's yes",
        "tui/screens/confirm.py",
        "ConfirmWriteScreen.on_button_pressed",
        lambda a: a["event"].button.id == "confirm",
    ),
    Hop(
        "the wizard takes the yes",
        "tui/screens/migrate.py",
        "MigrateScreen._confirm_and_run.<locals>.chosen",
        lambda a: a["ok"] is True,
    ),
    Hop("the cordon's PATCH sent", "fleet/cluster.py", "Cluster.request", _cordon_patch),
    Hop("its outcome audited", "actions/audit.py", "AuditLog.outcome", _applied_cordon),
]


async def wizard_apply_to_cordon_patch(tmp: pathlib.Path) -> PathTrace:
    """(b) The wizard's `a` to the audited PATCH that cordons a node: the wizard of l4-inference (preflight and
    cordon) on the demo simulator; traced from the key through the confirmation until the PATCH's outcome is in the
    audit log."""
    from dragoman.actions.steps import Options
    from dragoman.fleet.cluster import connect
    from dragoman.tui.screens.confirm import ConfirmWriteScreen
    from dragoman.tui.screens.migrate import MigrateScreen
    from textual.app import App

    from tests.support.sim import running_simulator

    class WizardApp(App):
        def on_mount(self) -> None:
            self.push_screen(screen)

    trace = PathTrace(WIZARD_HOPS)
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
                await _until(pilot, lambda: screen.plan is not None)
                await pilot.pause(0.2)
                with trace:
                    await pilot.press("a")
                    await _until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen))
                    await pilot.click("#confirm")
                    await _until(pilot, lambda: trace.done, trace=trace)
                # The run goes on (the cordon's verification, the state's bookkeeping): the screen stays until it is
                # done, or its worker would find the screen gone.
                await _until(pilot, lambda: screen.result is not None and not screen.busy, 120)
        finally:
            await cluster.close()
    return trace


STUCK_POD = ("Pod", "ml-inference", "asr-batch-large-wr6l9")  # the demo's pod asking for a MIG profile nobody maps

POD_HOPS = [
    Hop(
        "the model takes the pod", "fleet/model.py", "FleetModel.load_list", lambda a: _holds(a["items"], STUCK_POD[2])
    ),
    Hop("the pods' rule judges it", "fleet/diagnose/pods.py", "pod_findings", lambda a: _named(a["pod"], STUCK_POD[2])),
    Hop(
        "its finding made",
        "fleet/findings.py",
        "make_finding",
        lambda a: a["return"].id == "pending-unmapped" and STUCK_POD in [tuple(o) for o in a["return"].objects],
        at="return",
    ),
    Hop("the finding's text", "fleet/findings.py", "Finding.to_json", lambda a: a["self"].id == "pending-unmapped"),
]


def stuck_pod_to_finding() -> tuple[PathTrace, list[dict]]:
    """(c) A stuck pod to its finding's text: the demo's pending MIG pod and one A100 node loaded into a model and
    diagnosed, to the finding's text (`Finding.to_json`, what `check` and `explain` print)."""
    from dragoman.fleet.diagnose import diagnose
    from dragoman.fleet.model import FleetModel
    from dragoman.sim.scenarios import DEMO_PATH, load_scenario

    objects = load_scenario(DEMO_PATH)
    pod = next(o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == STUCK_POD[2])
    node = next(o for o in objects if o["kind"] == "Node" and "a100" in o["metadata"]["name"])
    with PathTrace(POD_HOPS) as trace:
        model = FleetModel()
        model.load_list([node, pod])
        texts = [f.to_json() for f in diagnose(model) if STUCK_POD in [tuple(o) for o in f.objects]]
    return trace, texts


def main() -> None:
    """`python -m tests.support.paths`: each path's files, in the order first met, with the hop that put each there."""
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
        print(f"{title}: {len(trace.files)} files" + (f" (hops never met: {trace.missed})" if trace.missed else ""))
        for f in trace.files:
            print(f"  {f:34} {trace.via[f]}")
    print("left out:", "; ".join(f"{k} ({v})" for k, v in INFRASTRUCTURE.items()))


if __name__ == "__main__":
    main()
