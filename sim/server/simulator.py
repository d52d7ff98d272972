"""The simulated Kubernetes API server: HTTPS on loopback, discovery, CRUD, WATCH, tables, RBAC, eviction, faults.

The Simulator is composed of one mixin per job (sim/server/*.py); this module holds its state and lifecycle."""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from aiohttp import web
from dragoman.sim import certs
from dragoman.sim.clock import Clock
from dragoman.sim.controllers.disruption import PdbStatus
from dragoman.sim.faults import Faults
from dragoman.sim.requestlog import RequestLog
from dragoman.sim.server.auth import AuthMixin
from dragoman.sim.server.bootstrap import bootstrap_objects
from dragoman.sim.server.crud import CrudMixin
from dragoman.sim.server.discovery import DiscoveryMixin
from dragoman.sim.server.kubeconfig import KubeconfigMixin
from dragoman.sim.server.metrics import MetricsMixin
from dragoman.sim.server.routing import RoutingMixin
from dragoman.sim.server.subresources import SubresourcesMixin
from dragoman.sim.server.tls import listen
from dragoman.sim.server.users import ADMIN, User, new_token
from dragoman.sim.server.watch import WatchMixin
from dragoman.sim.server.wire import WireMixin
from dragoman.sim.store import Store, Watcher

if TYPE_CHECKING:
    from dragoman.sim.scenario import Scenario

log = logging.getLogger("dragoman.sim")


class Simulator(
    RoutingMixin,
    AuthMixin,
    DiscoveryMixin,
    CrudMixin,
    WatchMixin,
    SubresourcesMixin,
    WireMixin,
    KubeconfigMixin,
    MetricsMixin,
):
    """The embedded cluster: a store, a clock, faults, a request log and an HTTPS API on loopback."""

    def __init__(
        self,
        objects: list[dict] | None = None,
        users: Iterable[User | dict] | None = None,
        speed: float = 1.0,
        faults: str = "",
        history_size: int = 20_000,
        validate_load: bool = False,
        anonymous_read: bool = False,
        event_ttl: float = 3600.0,
        start: datetime.datetime | None = None,
    ) -> None:
        self.clock = Clock(speed, start)
        self.store = Store(self.clock, history_size=history_size)
        self.faults = Faults(faults)
        self.request_log = RequestLog()
        self.url = ""
        self.host = ""
        self.port = 0
        # A fresh key and certificate per simulator: HTTPS always, verified by clients through the kubeconfig.
        self.certificate = certs.make_serving_certificate()
        # Requests without a token: 401, unless the scenario lets anonymous clients read (get, list, watch).
        self.anonymous_read = anonymous_read
        self.event_ttl = event_ttl
        # `kubectl logs`: pod_logs(pod, container) -> text; the kubelet controller may install one. Without it a
        # running container's log is empty.
        self.pod_logs: Any = None
        # Real-time seconds between watch bookmarks (the real server sends one about a minute apart).
        self.bookmark_interval = 10.0
        self.users: dict[str, User] = {}
        self._tokens: dict[str, User] = {}
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task] = []
        self._controllers: list[Any] = []
        self._controller_tasks: list[asyncio.Task] = []
        self._watch_streams: set[Watcher] = set()
        self.request_count = 0
        self._started = False
        # Set by stop(): injected latency and hang= faults end at once, so a stop (Ctrl+C) never waits them out (the
        # HTTP runner's cleanup waits for every request in flight, up to a minute).
        self._stopping = asyncio.Event()
        self.add_user(User(ADMIN, new_token(), ("system:masters",)))
        for u in users or ():
            self.add_user(u)
        self.store.root_ca = self.certificate.cert_pem.decode()
        self.store.load(bootstrap_objects())
        if objects:
            self.store.validate = validate_load
            try:
                self.store.load(objects)
            finally:
                self.store.validate = True
        # PodDisruptionBudget status (sim/controllers/disruption.py): eviction asks it, its worker runs from start.
        self.pdb_status = PdbStatus(self.store, self.clock)

    @classmethod
    def from_scenario(
        cls, sc: Scenario, *, speed: float | None = None, faults: str = "", real_time: bool = False
    ) -> Simulator:
        """The simulator a scenario asks for (its objects, users, speed, faults, anonymous reads and clock start),
        `speed` and `faults` given on the command line winning. `real_time`: the clock starts now whatever the
        scenario says, for a run judged beside a real control plane, whose clock is the wall's; its taint rules are
        made now, as the real control plane's loader makes them."""
        from dragoman.sim.scenario import taint_added_now

        return cls(
            [taint_added_now(o) for o in sc.objects] if real_time else sc.objects,
            users=sc.users,
            speed=speed or sc.speed or 1.0,
            faults=faults or sc.faults,
            anonymous_read=sc.anonymous_read,
            start=None if real_time else sc.start,
        )

    # ---------------------------------------------------------------- lifecycle

    def add_controller(self, controller: Any) -> None:
        """Run a controller in-process on this simulator's store: `await controller.start(sim)` / `await
        controller.stop()` if it has them, otherwise `controller.run(sim)` as a task cancelled at stop."""
        self._controllers.append(controller)
        if self._started:
            asyncio.get_running_loop().create_task(self._start_controller(controller))

    @property
    def controllers(self) -> list[Any]:
        return list(self._controllers)

    async def _start_controller(self, controller: Any) -> None:
        if hasattr(controller, "start"):
            await controller.start(self)
        elif hasattr(controller, "run"):
            self._controller_tasks.append(asyncio.create_task(controller.run(self)))

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner, self.port = await listen(app, host, port, self.certificate)
        self.host = host
        shown = f"[{host}]" if ":" in host else host
        self.url = f"https://{shown}:{self.port}"
        self._tasks = [
            asyncio.create_task(self._reaper()),
            self.pdb_status.start(),
        ]
        self._started = True
        self._stopping.clear()
        for c in self._controllers:
            await self._start_controller(c)

    async def fault_wait(self, seconds: float) -> None:
        """An injected delay of `seconds`, cut short when the simulator stops."""
        try:
            await asyncio.wait_for(self._stopping.wait(), seconds)
        except TimeoutError:
            pass

    async def stop(self) -> None:
        self._started = False
        self._stopping.set()
        for c in reversed(self._controllers):
            if hasattr(c, "stop"):
                try:
                    await c.stop()
                except Exception:
                    log.exception("controller stop failed")
        for t in self._controller_tasks + self._tasks:
            t.cancel()
        for t in self._controller_tasks + self._tasks:
            try:
                await t
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        self._controller_tasks, self._tasks = [], []
        for w in list(self._watch_streams):
            w.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Simulator:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _reaper(self) -> None:
        last_ttl = 0.0
        while True:
            await asyncio.sleep(0.1)
            try:
                self.store.reap()
                if time.monotonic() - last_ttl > 5:
                    last_ttl = time.monotonic()
                    self.store.expire_events(self.event_ttl)
            except Exception:
                log.exception("reaper failed")
