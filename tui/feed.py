"""The live picture behind the TUI: store → model → touched rows, with model loading and diagnosis in threads and bursts
coalesced. What changed reaches the screens as tui/messages.py's typed messages, posted to each listener."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from dragoman.fleet.forked import ChildUnavailable
from dragoman.fleet.model import FleetModel
from dragoman.fleet.store import SNAPSHOT, ConnectionState, FleetStore
from dragoman.fleet.views.base import Fleet
from dragoman.tui.messages import (
    CatalogueChanged,
    ConnectionChanged,
    FeedMessage,
    FindingsChanged,
    FleetLoaded,
    RowsTouched,
)
from dragoman.tui.offload import in_child_process, in_daemon_thread

log = logging.getLogger(__name__)

PUMP_INTERVAL = 0.05  # at most 20 view updates a second, however fast the watch events come
PUMP_SLICE = 100  # changes absorbed per turn of the loop, so a backlog never holds a keystroke for long
DIAGNOSE_MIN_GAP = 2.0
# The diagnosis runs in a forked child (Linux: fork is cheap and the child inherits the model as it stands, copy on
# write): the UI's process holds the GIL, so a thread's diagnosis takes the UI's core, while the child takes the idle
# one. Elsewhere (macOS forks badly with threads) it runs in a thread, as it does if the child cannot be made.
DIAGNOSE_IN_CHILD = sys.platform.startswith("linux") and hasattr(os, "fork")


@dataclasses.dataclass
class SourceInfo:
    """What the header says about where the picture comes from."""

    cluster: str = ""
    context: str = ""
    server: str = ""
    version: str = ""
    user: str = ""
    read_only: bool = False
    may_write: bool | None = None  # what RBAC answered for patching nodes (None: not asked yet)
    badge: str = ""  # "DEMO", "SNAPSHOT 2026-11-01", ""


class Listener(Protocol):
    """What receives the feed's messages: a Textual screen or the App (anything with `post_message`)."""

    def post_message(self, message: Any) -> bool: ...


class Feed:
    """Keeps a FleetModel in step with a FleetStore and tells its listeners which rows changed.

    Everything here runs on the app's event loop except `diagnose`, which runs in a forked child (a copy of the
    model as it stands) or, where there is no fork, in a thread while the store's writes and the model's changes wait,
    so the model is never read and written at once. The model reads the store's objects and indexes, never a copy.
    """

    def __init__(
        self,
        store: FleetStore,
        info: SourceInfo,
        *,
        pool_label: str | None = None,
        cluster: Any = None,
        syncer: Any = None,
    ) -> None:
        self.store = store
        self.info = info
        self.cluster = cluster
        self.syncer = syncer
        self.model = FleetModel(pool_label)
        self.fleet = Fleet(self.model)
        self.loaded = False
        self._listeners: list[Listener] = []
        self._pending: list = []
        self._busy = False  # the model is loading, or a thread reads it: hold changes back
        self._readers = 0  # threads reading the model (_read_in_thread)
        self._diagnosing = False  # a diagnosis is under way (in a child process the model stays free to change)
        self._warm: threading.Thread | None = None
        self._pump_handle: asyncio.Handle | None = None  # call_later's TimerHandle, or call_soon's Handle
        self._diag_dirty = True
        self._catalogue_dirty = True
        self._diag_handle: asyncio.TimerHandle | None = None
        self._last_diag_end = 0.0
        self.diag_seconds = 0.0
        self.events = 0  # changes absorbed (the benchmark reads it)
        self.pumps = 0
        self._unsub: list[Callable[[], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._unsub.append(self.store.subscribe(self._on_batch))
        if not self.loaded:
            # The load reads the store whole: its first LISTs need not be told object by object (see _maybe_load).
            self.store.announce_first_lists = False
        self._unsub.append(self.store.subscribe_state(self._on_state))
        if self.syncer is not None and not self.syncer.informers[next(iter(self.syncer.informers))].task:
            self.syncer.start()
            # While the informers list, this loop mostly waits on the network: time for what the first diagnosis
            # would otherwise do first.
            self._warm = threading.Thread(target=warm_cel, name="dragoman-warm-cel", daemon=True)
            self._warm.start()
        self._maybe_load()

    async def stop(self) -> None:
        self._closed = True
        for u in self._unsub:
            u()
        for h in (self._pump_handle, self._diag_handle):
            if h is not None:
                h.cancel()
        if self.syncer is not None:
            await self.syncer.stop()
        if self.cluster is not None:
            await self.cluster.close()

    def listen(self, target: Listener) -> None:
        """Post every message of tui/messages.py to `target` from now on (a screen calls it when mounted)."""
        if target not in self._listeners:
            self._listeners.append(target)

    def unlisten(self, target: Listener) -> None:
        """No more messages for `target` (a screen calls it when unmounted)."""
        if target in self._listeners:
            self._listeners.remove(target)

    def _post(self, make: Callable[[], FeedMessage]) -> None:
        # A message is a listener's own (Textual marks it as it is handled): one made for each.
        for target in list(self._listeners):
            target.post_message(make())

    def relist(self) -> None:
        if self.syncer is not None:
            self.syncer.relist()

    @property
    def state(self) -> ConnectionState:
        return self.store.overall

    # ------------------------------------------------------------------ store events
    def _on_state(self, kind: str | None, state: ConnectionState) -> None:
        if kind is not None:
            return
        self._post(lambda: ConnectionChanged(state))
        self._maybe_load()

    def _on_batch(self, batch: list) -> None:
        if not self.loaded and not self._busy:
            self._maybe_load()
            return  # the load reads the store itself
        # Loading or diagnosing: held back, absorbed when the thread is done (re-applying a change the copy held is
        # harmless).
        self._pending.extend(batch)
        self._schedule_pump()

    def _schedule_pump(self) -> None:
        if self._pump_handle is None and not self._busy and self._loop is not None and not self._closed:
            self._pump_handle = self._loop.call_later(PUMP_INTERVAL, self.pump)

    def pump(self) -> None:
        """Absorb every held change into the model and tell listeners which rows they touched."""
        self._pump_handle = None
        if self._busy or not self._pending:
            return
        batch, self._pending = self._pending[:PUMP_SLICE], self._pending[PUMP_SLICE:]
        touched = self.model.apply(batch)
        self.events += len(batch)
        self.pumps += 1
        self._post(lambda: RowsTouched(touched))
        self._diag_dirty = True
        if touched.slices or touched.everything:
            self._catalogue_dirty = True
        if self._pending and self._loop is not None:
            # A backlog (after a diagnosis or a burst): the next slice on the next turn, keys go in between.
            self._pump_handle = self._loop.call_soon(self.pump)
        self._schedule_diagnosis()

    # ------------------------------------------------------------------ loading
    def _synced(self) -> bool:
        st = self.store.overall
        return st.synced or st.status == SNAPSHOT

    def _maybe_load(self) -> None:
        if self.loaded or self._busy or self._closed or not self._synced() or self._loop is None:
            return
        self._busy = True
        # From now on the model follows the store by its changes, a kind first listed later (allowed at last, say)
        # included.
        self.store.announce_first_lists = True
        # Changes the store holds back (the last LIST's whole page of ADDEDs, coalescing) are already in the objects
        # the model reads: deliver them now, while busy, so they are dropped with `_pending` below instead of arriving
        # after the load and being applied a second time (150,000 pods' worth on the envelope).
        self.store.flush()
        self._pending = []
        try:
            # Here, in the same turn of the loop: the model reads the store's objects and indexes as they are (no
            # copy; pods through the store's indexes, not one by one), so every change the store delivers from now on
            # is one the model has not seen, and no thread races the informers' writes.
            self.model.load_store(self.store)
        except Exception:  # a model bug must show as a message, not kill the loop
            log.exception("model load failed")
            self._busy = False
            return
        self._loop.create_task(self._loaded())

    async def _loaded(self) -> None:
        self._busy = False
        self.loaded = True
        settle_gc()
        self._diag_dirty = self._catalogue_dirty = True
        # The node and pool views every screen's first rows read, built in a thread before anything else: on the loop
        # (the Pools screen's first row settles every pool) they froze the screen ~1 s at 5,000 nodes. Built before
        # the first diagnosis forks, its child inherits them instead of building them again.
        try:
            await self._read_in_thread(self._warm_views, "dragoman-views")
        except Exception:  # a model bug must show as a message, not stop the screens from being told
            log.exception("building the node and pool views failed")
        # The first diagnosis starts before the screens are told: FleetLoaded has them build their rows, and a
        # diagnosis scheduled behind that work forked only once it was done. Now the child takes the other core at
        # once and the rows are built while it runs. One turn of the loop lets the task reach its fork (nothing before
        # it awaits unless the CEL warm-up thread is still running).
        if self._diag_handle is not None:
            self._diag_handle.cancel()
            self._diag_handle = None
        if self._loop is not None and not self._closed:
            self._loop.create_task(self._diagnose())
            await asyncio.sleep(0)
        self._post(FleetLoaded)
        self._schedule_pump()

    def _warm_views(self) -> None:
        self.model.nodes()
        self.model.pools()

    async def _read_in_thread(self, fn: Callable[[], Any], name: str) -> Any:
        """`fn()` in a daemon thread that reads the live model: the model's changes, and the informers' writes to the
        store whose mappings it reads, wait meanwhile and are absorbed when the last such thread is done. The loop
        (keys, repaints) goes on."""
        self._readers += 1
        self._busy = True
        release = self.store.hold()
        try:
            return await in_daemon_thread(fn, name)
        finally:
            release()
            self._readers -= 1
            if not self._readers:
                self._busy = False
                if self._pending:
                    self._schedule_pump()

    # ------------------------------------------------------------------ diagnosis
    def _schedule_diagnosis(self, delay: float | None = None) -> None:
        if self._diag_handle is not None or self._loop is None or self._closed:
            return
        if delay is None:
            since = time.monotonic() - self._last_diag_end
            # Diagnosis holds the GIL in a thread: leave the UI thread at least twice its length in between.
            delay = max(0.2, max(DIAGNOSE_MIN_GAP, 3 * self.diag_seconds) - since)
        loop = self._loop
        self._diag_handle = loop.call_later(delay, lambda: loop.create_task(self._diagnose()))

    async def _diagnose(self) -> None:
        self._diag_handle = None
        if not self._diag_dirty or self._closed:
            return
        if self._busy or self._diagnosing:
            self._schedule_diagnosis()
            return
        if self._pending:
            self.pump()
            if len(self._pending) > PUMP_SLICE:
                # A backlog: absorb it first (slice by slice), diagnose right after.
                self._schedule_diagnosis(PUMP_INTERVAL)
                return
        self._diag_dirty = False
        want_catalogue = self._catalogue_dirty
        self._catalogue_dirty = False
        t0 = time.monotonic()

        def work(with_catalogue: bool = want_catalogue):
            findings = diagnose(self.model)
            catalogue = self.model.attribute_catalogue() if with_catalogue else None
            return findings, catalogue

        self._diagnosing = True
        try:
            result = None
            if DIAGNOSE_IN_CHILD:
                if self._warm is not None and self._warm.is_alive():
                    # A fork copies no thread: an import the warming thread was in the middle of would never end in
                    # the child. It is done long before the fleet is listed; wait for it if not.
                    await asyncio.to_thread(self._warm.join)
                import dragoman.fleet.diagnose  # noqa: F401  (here, before the fork: no child imports it again)

                try:
                    # A snapshot of the model as it stands: changes go on being absorbed meanwhile. The attribute
                    # catalogue reads only the slices: this process makes it while the child diagnoses (off the
                    # child's time, which is what the first picture waits for), in a thread: 0.4-0.6 s at 40,000
                    # devices, a frozen screen when it ran on the loop.
                    child = asyncio.ensure_future(in_child_process(lambda: work(False)))
                    await asyncio.sleep(0)  # the task runs to its fork
                    try:
                        catalogue = await self._catalogue_in_thread() if want_catalogue else None
                    except BaseException:
                        child.cancel()  # the child is killed: nobody would read its answer
                        raise
                    result = ((await child)[0], catalogue)
                except ChildUnavailable as exc:
                    log.info("diagnosing in a thread: %s", exc)
            if result is None:
                result = await self._read_in_thread(work, "dragoman-diagnosis")
            findings, catalogue = result
        except Exception:
            log.exception("diagnosis failed")
            findings, catalogue = None, None
        finally:
            self._diagnosing = False
            self.diag_seconds = time.monotonic() - t0
            self._last_diag_end = time.monotonic()
        if findings is not None:
            old_obj = {k: [f.key for f in v] for k, v in self.fleet.by_object.items()}
            old_pool = {k: [(f.id, f.severity) for f in v] for k, v in self.fleet.by_pool.items()}
            self.fleet.set_findings(findings)
            new_obj = {k: [f.key for f in v] for k, v in self.fleet.by_object.items()}
            new_pool = {k: [(f.id, f.severity) for f in v] for k, v in self.fleet.by_pool.items()}
            refs = {k for k in set(old_obj) | set(new_obj) if old_obj.get(k) != new_obj.get(k)}
            pools = {k for k in set(old_pool) | set(new_pool) if old_pool.get(k) != new_pool.get(k)}
            self._post(lambda: FindingsChanged(refs, pools))
        settle_gc()
        if catalogue is not None:
            self.fleet.catalogue = catalogue
            self._post(CatalogueChanged)
        if self._pending:
            self._schedule_pump()
        if self._diag_dirty:
            self._schedule_diagnosis()

    async def _catalogue_in_thread(self) -> dict:
        """The model's attribute catalogue, made in a thread (_read_in_thread): the screen stays live."""
        return await self._read_in_thread(self.model.attribute_catalogue, "dragoman-catalogue")


def diagnose(model: FleetModel) -> list:
    """fleet.diagnose.diagnose, imported when first needed, not with this module: it brings the CEL engine, ~0.18 s
    of the TUI's imports before its first paint. warm_cel imports it in its thread while the informers list."""
    from dragoman.fleet.diagnose import diagnose as findings_of

    return findings_of(model)


def warm_cel() -> None:
    """Import the diagnosis and the CEL engine and build its parser (~0.5 s on a 2-core machine, paid by the first
    compile of a DeviceClass selector otherwise: the first diagnosis's)."""
    try:
        import dragoman.fleet.diagnose  # noqa: F401  (what the first diagnosis imports, the CEL engine among it)
        from dragoman.fleet.cel import compile_expression

        compile_expression("true")
    except Exception:  # a head start only: the diagnosis reports what is really wrong with a selector
        log.debug("warming the CEL engine failed", exc_info=True)


def settle_gc() -> None:
    """Move what lives now (the fleet, the views) out of the cyclic collector's reach.

    A full collection rescans every tracked object: with a fleet in memory that is a pause of 0.1-0.6 s, which a
    keystroke would feel. Objects made since are still collected; refcounting frees the rest as always.
    """
    gc.freeze()
    # Watch events bring ~100 small acyclic objects each; the default thresholds would rescan them every few ms.
    gc.set_threshold(10_000, 50, 100)
