"""Informers: per kind a paginated LIST, then a WATCH from its resourceVersion with bookmarks, relist on 410, reconnect
with backoff; and one-shot reads."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
from collections.abc import Iterable
from typing import Any

from dragoman.fleet import backoff
from dragoman.fleet.cluster import ApiError, Cluster, ClusterError, Malformed, Unreachable, WatchGone
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.fleet.store import (
    FORBIDDEN,
    KINDS,
    LIVE,
    RECONNECTING,
    STOPPED,
    SYNCING,
    UNREACHABLE,
    FleetStore,
    KindInfo,
)

log = logging.getLogger(__name__)

BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 30.0
FORBIDDEN_RETRY = 60.0  # RBAC may be granted while the TUI is open; ask again now and then
WATCH_TIMEOUT = 300  # each watch asks the server to end it after 1-2x this, spread like client-go's 5-10 minutes


def backoff_delay(attempt: int, initial: float = BACKOFF_INITIAL, maximum: float = BACKOFF_MAX) -> float:
    """An informer's wait before listing or watching again: doubling with jitter, as client-go's reflector."""
    return backoff.delay(attempt, initial, maximum, jitter=True)


def _fill_type(items: list[dict], info: KindInfo) -> None:
    # LIST items come without kind/apiVersion; watch events carry them. Make both look alike.
    for item in items:
        if "kind" not in item:
            item["kind"] = info.kind
            item["apiVersion"] = info.api_version


def _take_notes(cluster: Cluster, store: FleetStore) -> None:
    """Hand the cluster's notes about malformed objects to the store, where headers and reports read them."""
    malformed = getattr(cluster, "malformed", None)
    if malformed:
        store.notes.update(malformed)
        store.malformed_count = getattr(cluster, "malformed_count", len(store.notes))


def _forbidden_message(cluster: Cluster, info: KindInfo, exc: ApiError) -> str:
    return f"user {cluster.user!r} may not list {info.plural} (403 Forbidden); that part of the picture is missing."


class Informer:
    """Keeps one kind of the store in step with the cluster until stopped."""

    def __init__(
        self,
        cluster: Cluster,
        store: FleetStore,
        info: KindInfo,
        *,
        backoff_initial: float = BACKOFF_INITIAL,
        backoff_max: float = BACKOFF_MAX,
        forbidden_retry: float = FORBIDDEN_RETRY,
        watch_timeout: int = WATCH_TIMEOUT,
    ) -> None:
        self.cluster = cluster
        self.store = store
        self.info = info
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.forbidden_retry = forbidden_retry
        self.watch_timeout = watch_timeout
        self.resource_version: str | None = None
        self.last_activity = 0.0  # wall time of the last LIST, watch event or bookmark: the UI's "last sync"
        self.lists = 0  # completed LISTs (first sync and relists)
        self.watches = 0  # watch streams opened
        self._inner: asyncio.Task | None = None
        self._relist_requested = False
        self._wake: asyncio.Event | None = None
        self._events_seen = 0
        # The projecting decoder of this kind's LIST pages and watch objects (None: decoded whole).
        self._decoder: Any = None
        self.task: asyncio.Task | None = None

    def start(self) -> asyncio.Task:
        self.task = asyncio.get_running_loop().create_task(self.run(), name=f"informer-{self.info.kind}")
        return self.task

    def relist(self) -> None:
        """Throw away the watch and list again (ctrl+r), also cutting short a wait before a retry."""
        self._relist_requested = True
        if self._inner is not None and not self._inner.done():
            self._inner.cancel()
        if self._wake is not None:
            self._wake.set()

    async def _sleep(self, seconds: float) -> None:
        self._wake = asyncio.Event()
        try:
            await asyncio.wait_for(self._wake.wait(), seconds)
        except TimeoutError:
            pass
        finally:
            self._wake = None

    def _state(self, status: str, message: str = "", synced: bool | None = None) -> None:
        self.store.set_state(self.info.kind, status, message, synced=synced)

    async def run(self) -> None:
        kind = self.info.kind
        attempt = 0
        try:
            while True:
                if self._relist_requested:
                    self._relist_requested = False
                    self.resource_version = None
                inner = asyncio.ensure_future(self._list_and_watch())
                self._inner = inner
                started, seen = time.monotonic(), self._events_seen
                try:
                    await inner
                    if time.monotonic() - started < 1.0 and self._events_seen == seen:
                        # The server ended the watch at once with nothing in it: do not spin on it.
                        await self._sleep(backoff_delay(attempt, self.backoff_initial, self.backoff_max))
                        attempt += 1
                    else:
                        attempt = 0
                    continue
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    if (task is not None and task.cancelling()) or not self._relist_requested:
                        raise
                    continue
                except WatchGone:
                    # Our resourceVersion fell out of the server's history: list again at once.
                    self.resource_version = None
                    if attempt:
                        await self._sleep(backoff_delay(attempt, self.backoff_initial, self.backoff_max))
                    attempt += 1
                    continue
                except ApiError as exc:
                    if exc.status == 403:
                        self.resource_version = None
                        self._state(FORBIDDEN, _forbidden_message(self.cluster, self.info, exc))
                        await self._sleep(self.forbidden_retry)
                        continue
                    if exc.status == 404:
                        # The server does not serve this kind (e.g. no resource.k8s.io/v1): none of it exists.
                        self.resource_version = None
                        self.store.replace(kind, [])
                        self._state(LIVE, f"the server does not serve {self.info.plural}.", synced=True)
                        await self._sleep(self.forbidden_retry)
                        continue
                    status = UNREACHABLE if exc.status == 401 else RECONNECTING
                    message = exc.message
                except Unreachable as exc:
                    status, message = UNREACHABLE, exc.message
                except Malformed as exc:
                    # A watch event that is not one (a line without end, an ERROR with no status code, an object
                    # that is not an object): list again from scratch, after the backoff, and say why meanwhile.
                    self.resource_version = None
                    status, message = RECONNECTING, exc.message
                except ClusterError as exc:
                    status, message = RECONNECTING, exc.message
                except UserError as exc:  # e.g. the exec plugin failed while refreshing
                    status, message = UNREACHABLE, exc.message
                except Exception as exc:  # whatever a server sent, the kind is not stopped for good
                    log.exception("%s informer", kind)
                    self.resource_version = None
                    status, message = RECONNECTING, f"reading {self.info.plural} failed ({type(exc).__name__}: {exc})."
                delay = backoff_delay(attempt, self.backoff_initial, self.backoff_max)
                attempt += 1
                self._state(status, f"{message} Retrying in {delay:.0f} s." if delay >= 1 else message)
                log.debug("%s: %s; retry in %.1fs", kind, message, delay)
                await self._sleep(delay)
        finally:
            if self._inner is not None and not self._inner.done():
                self._inner.cancel()
            self._state(STOPPED)

    async def _list_and_watch(self) -> None:
        """LIST when needed, then WATCH until the stream ends; returns to be called again, raises to back off."""
        info, store, cluster = self.info, self.store, self.cluster
        if self.resource_version is None:
            # A store that projects (fleet/projection.py) gets the pages decoded straight into projections, and the
            # watch's objects through the same decoder: one path, and the parts its LIST decoded once (a template's
            # containers, labels, owner) are shared by the events' objects too. A relist starts a fresh one.
            self._decoder = store.page_decoder(info.kind)
            if not store.state(info.kind).synced:
                self._state(SYNCING)
            items, rv = await cluster.list_all(
                info.list_path, label_selector=info.label_selector, decoder=self._decoder
            )
            _fill_type(items, info)
            store.replace(info.kind, items, decoded=self._decoder is not None)
            _take_notes(cluster, store)
            self.resource_version = rv
            self.lists += 1
            self.last_activity = time.time()
            self._state(LIVE, "", synced=True)
        async for etype, obj in cluster.watch(
            info.list_path,
            self.resource_version or "",
            label_selector=info.label_selector,
            timeout_seconds=int(self.watch_timeout * random.uniform(1.0, 2.0)),
            decoder=getattr(self._decoder, "item", None),
        ):
            self.last_activity = time.time()
            if etype == "OPENED":
                self.watches += 1
                self._state(LIVE, "", synced=True)
                continue
            self._events_seen += 1
            event_rv = (obj.get("metadata") or {}).get("resourceVersion")
            if etype == "SKIPPED":
                _take_notes(cluster, store)  # a malformed object: named in a note, never given to the model
            elif etype != "BOOKMARK":
                if "kind" not in obj:
                    obj["kind"], obj["apiVersion"] = info.kind, info.api_version
                if info.label_selector and etype != "DELETED" and not info.matches(obj):
                    etype = "DELETED"  # no longer ours: treat as gone, as the server's filtered watch would
                decoded = self._decoder is not None and self._decoder.judged(obj)
                store.apply(info.kind, etype, obj, decoded=decoded)
            if event_rv:
                self.resource_version = event_rv


class Syncer:
    """The informers of one cluster feeding one store."""

    def __init__(
        self,
        cluster: Cluster,
        store: FleetStore,
        kinds: Iterable[str] | None = None,
        *,
        project: bool = True,
        **informer_kw: Any,
    ) -> None:
        self.cluster = cluster
        self.store = store
        if project:
            # Live informers keep CPU pods as projections; the whole object is one GET away (FleetStore.fetch_whole).
            store.serve_whole_from(cluster)
        names = list(kinds) if kinds is not None else list(store.kinds)
        self.informers: dict[str, Informer] = {k: Informer(cluster, store, KINDS[k], **informer_kw) for k in names}

    def start(self) -> None:
        for inf in self.informers.values():
            inf.start()

    def _settled(self) -> bool:
        return all(self.store.state(k).synced or self.store.state(k).status == FORBIDDEN for k in self.informers)

    async def wait_synced(self, timeout: float = 60.0, *, fail_fast: bool = True) -> None:
        """Wait until every kind is listed (or forbidden). Raises UserError when it takes longer than `timeout`,
        or at once (with `fail_fast`) when every kind still missing has failed to reach the server."""
        changed = asyncio.Event()
        unsubscribe = self.store.subscribe_state(lambda kind, state: changed.set())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            while not self._settled():
                missing = [
                    k
                    for k in self.informers
                    if not self.store.state(k).synced and self.store.state(k).status != FORBIDDEN
                ]
                # Only a server that cannot be reached (or refuses us) ends the wait early; server errors are retried.
                failing = [k for k in missing if self.store.state(k).status == UNREACHABLE]
                if fail_fast and missing and len(failing) == len(missing):
                    msg = self.store.state(failing[0]).message.split(" Retrying in")[0]
                    raise UserError(msg or f"cannot read {', '.join(missing)} from the cluster.", ExitCode.INPUT)
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise UserError(
                        f"the cluster did not finish listing {', '.join(missing)} within {timeout:.0f} s.",
                        ExitCode.INPUT,
                    )
                changed.clear()
                try:
                    await asyncio.wait_for(changed.wait(), remaining)
                except TimeoutError:
                    pass
            # Hand the initial LISTs to subscribers now, so a view that reads `objects()` after this sees no stale
            # batch.
            self.store.flush()
        finally:
            unsubscribe()

    @property
    def last_activity(self) -> float:
        """Wall time of the most recent sign of life from the server (LIST, event or bookmark) on any kind."""
        return max((inf.last_activity for inf in self.informers.values()), default=0.0)

    def relist(self, kind: str | None = None) -> None:
        """List `kind` (every kind by default) again from scratch, as ctrl+r asks."""
        for name, inf in self.informers.items():
            if kind is None or name == kind:
                inf.relist()

    async def stop(self) -> None:
        tasks = [inf.task for inf in self.informers.values() if inf.task is not None and not inf.task.done()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def sync(cluster: Cluster, store: FleetStore, kinds: Iterable[str] | None = None, **informer_kw: Any) -> Syncer:
    """Start one informer per kind (all the store's kinds by default); returns the Syncer to wait on and stop."""
    syncer = Syncer(cluster, store, kinds, **informer_kw)
    syncer.start()
    return syncer


async def fetch_once(
    cluster: Cluster, store: FleetStore, kinds: Iterable[str] | None = None, *, concurrency: int = 6
) -> None:
    """List every kind once into the store (no watch): for headless commands and snapshots.

    A 403 marks that kind forbidden and the rest goes on; any other failure raises a UserError.
    """
    names = list(kinds) if kinds is not None else list(store.kinds)
    sem = asyncio.Semaphore(concurrency)

    async def list_retrying(info: KindInfo) -> list[dict]:
        async def once(_attempt: int) -> list[dict]:
            # A store that projects gets the pages decoded straight into projections, as a live informer's.
            decoder = store.page_decoder(info.kind)
            items, _rv = await cluster.list_all(info.list_path, label_selector=info.label_selector, decoder=decoder)
            return items

        # 429 and 5xx are the server's passing trouble: try again a few times before giving up.
        return await backoff.retrying(
            once,
            attempts=4,
            retryable=lambda exc: isinstance(exc, ApiError) and (exc.status == 429 or exc.status >= 500),
            wait=lambda _exc, attempt: backoff_delay(attempt),
        )

    async def one(kind: str) -> None:
        info = KINDS[kind]
        async with sem:
            try:
                items = await list_retrying(info)
            except ApiError as exc:
                if exc.status == 403:
                    store.set_state(kind, FORBIDDEN, _forbidden_message(cluster, info, exc))
                    return
                if exc.status == 404:
                    # The server does not serve this kind (e.g. no resource.k8s.io/v1): nothing of it exists.
                    store.replace(kind, [])
                    store.set_state(kind, LIVE, f"the server does not serve {info.plural}.", synced=True)
                    return
                raise
            _fill_type(items, info)
            store.replace(kind, items, decoded=store.page_decoder(kind) is not None)
            _take_notes(cluster, store)
            store.set_state(kind, LIVE, "", synced=True)

    await asyncio.gather(*(one(k) for k in names))
    store.flush()


@dataclasses.dataclass
class FleetSource:
    """A store read once from a cluster or a snapshot, with what headers and reports say about where it came from."""

    store: FleetStore
    context: str = ""
    server: str = ""
    server_version: str = ""
    resource_api_versions: list[str] = dataclasses.field(default_factory=list)
    identity: dict = dataclasses.field(default_factory=dict)
    snapshot: str | None = None

    @property
    def forbidden(self) -> list[str]:
        """Kinds the credentials may not list: that part of the picture is missing."""
        return [k for k in self.store.kinds if self.store.state(k).status == FORBIDDEN]


async def read_fleet(
    kubeconfig: str | None = None,
    context: str | None = None,
    snapshot: str | None = None,
    kinds: Iterable[str] | None = None,
    *,
    project: bool = False,
) -> FleetSource:
    """The fleet read once, for headless commands: from `snapshot` when given (read-only), else from the cluster.
    `project`: CPU pods kept as projections (fleet/projection.py), as the live informers keep them — for a command
    that reads only what the diagnosis reads (`check`), not for one that writes objects out (`snapshot`).

    Raises UserError (exit 2) with one sentence when the input cannot be read.
    """
    from dragoman.fleet.cluster import connect
    from dragoman.fleet.snapshot import store_from_snapshot

    if snapshot:
        return FleetSource(store_from_snapshot(snapshot, kinds=kinds), snapshot=snapshot)
    cluster = await connect(kubeconfig, context)
    try:
        store = FleetStore(kinds, source=f"cluster {cluster.server}")
        if project:
            store.serve_whole_from(cluster)
        await fetch_once(cluster, store)
    finally:
        await cluster.close()
    return FleetSource(
        store,
        cluster.context_name,
        cluster.server,
        cluster.version,
        list(cluster.resource_api_versions),
        cluster.identity,
    )
