"""What every simulator controller shares: an indexed cache fed by the store's change feed, a keyed work queue with
clock timers, events, and pod helpers."""

from __future__ import annotations

import asyncio
import collections
import datetime
import hashlib
import heapq
import json
import logging
import socket
import weakref
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from dragoman.fleet import backoff
from dragoman.fleet.gpustack import pod_role
from dragoman.fleet.k8s.times import format_micro_time, parse_rfc3339
from dragoman.sim.store import ApiError

log = logging.getLogger("dragoman.sim.controllers")

# Annotations the simulator reads (faults and timing); nothing outside the simulator and tests should rely on them.
RUN_SECONDS = "sim.dragoman.io/run-seconds"  # a container exits 0 after this many simulated seconds (Jobs)
# Each start of the container runs this many seconds, then exits 1 (Error); the kubelet restarts it after its own
# crash-loop back-off (none the first time, then 10 s doubling to 300 s, or the node's MAX_RESTART_SECONDS). The
# one meaning for the Python kubelet (sim/controllers/kubelet.py) and dragoman-cri under a real kubelet
# (controlplane/cmd/dragoman-cri/faults.go), which reads it at each container start; the agent also plays it on a
# container already running when the fault arrives (it exits N s after its start).
CRASH_LOOP_SECONDS = "sim.dragoman.io/crash-loop-seconds"
# On a Node: its kubelet's crashLoopBackOff.maxContainerRestartPeriod, in seconds (1-300): the restart back-off
# starts at min(10 s, it) and never exceeds it (KubeletCrashLoopBackOffMax, beta and on since v1.35; a real cluster's
# kubelets default to 300 s). A rehearsal's setting, so a crash loop shows its restarts in seconds: the real kubelets
# of `sim serve --real-kubelets` get it in their KubeletConfiguration, the Python kubelet backs off the same.
MAX_RESTART_SECONDS = "sim.dragoman.io/max-container-restart-seconds"
# On a Node: its DRA driver's devices ask for binding conditions (KEP-5007), which the driver sets True once "attached"
# after a delay. JSON: {"conditions": [...], "failureConditions": [...], "bindsToNode": bool, "delaySeconds": n}.
BINDING_CONDITIONS = "sim.dragoman.io/binding-conditions"
# On a ResourceSlice of devices no node agent publishes (a network-attached fabric): what the fabric's manager answers
# when one of them is allocated, per device. JSON: {"<device>": {"delaySeconds": n, "conditions": [{"type", "status",
# "reason", "message"}]}}. A device not named is never answered (its attach stays under way).
BINDING_OUTCOMES = "sim.dragoman.io/binding-outcomes"
# On a Node: devices of its GPU DRA driver's pool its health checks find unhealthy (an Xid, an ECC error), JSON
# {"<device>": "<message>"}. The kubelet reports them Unhealthy, with the message, in the allocatedResourcesStatus of
# the pods that hold them (KEP-4680, ResourceHealthStatus: on by default in v1.37), as a real kubelet does from the
# driver's DRA health stream; the Go dragoman-dra-plugin gets the same names in its unhealthy file (nodedevices).
DEVICE_HEALTH = "sim.dragoman.io/device-health"
NOT_READY = "sim.dragoman.io/not-ready"  # "true": the container runs but never passes its readiness probe
# "true": every start of the container fails at once (exit 1): the kubelet restarts it after its back-off, forever,
# and it never runs long enough to do anything (a DRA driver that crash-loops publishes no slices).
CRASH_AT_START = "sim.dragoman.io/crash-at-start"
# On a Node: faults for the pods of DaemonSets that land there, whichever pod that is (the DaemonSet controller may make
# a fresh one): JSON {"<DaemonSet name>": {"<pod fault annotation above>": "<value>"}}. The node agents apply them
# (pod_faults) as if the pod carried them.
POD_FAULTS = "sim.dragoman.io/pod-faults"
# Pod faults that keep the pod from ever being ready (a start of the real control plane does not wait for them).
UNREADY_FAULTS = (CRASH_AT_START, NOT_READY)
# Written by the simulated kubelet: the uuids of the DRA devices a pod's containers got (what NVIDIA_VISIBLE_DEVICES
# holds).
VISIBLE_DEVICES = "dragoman.io/visible-devices"

CACHED = (
    "nodes",
    "pods",
    "daemonsets.apps",
    "deployments.apps",
    "replicasets.apps",
    "statefulsets.apps",
    "jobs.batch",
    "resourceslices.resource.k8s.io",
    "resourceclaims.resource.k8s.io",
)

Key = Hashable
Handler = Callable[[str, str, dict, "dict | None"], None]


def nskey(obj: dict) -> tuple[str, str]:
    md = obj["metadata"]
    return md.get("namespace", ""), md["name"]


def controller_ref(obj: dict) -> dict | None:
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None


class Cache:
    """The objects the controllers read, kept current from the store's change feed, with the indexes they need.

    The store never mutates a committed dict, so the cache holds the committed dicts themselves: read them, never
    change them. Handlers run after the indexes are updated, synchronously inside the write.
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        self.objs: dict[str, dict[tuple[str, str], dict]] = {r: {} for r in CACHED}
        self.pods_by_node: dict[str, dict[tuple[str, str], dict]] = collections.defaultdict(dict)
        self.by_controller: dict[str, dict[tuple[str, str, str], dict]] = collections.defaultdict(dict)
        self.slices_by_pool: dict[tuple[str, str], dict[str, dict]] = collections.defaultdict(dict)
        self.slices_by_node: dict[str, dict[str, dict]] = collections.defaultdict(dict)
        self.handlers: list[Handler] = []
        for resource in CACHED:
            for entry in store.entries(resource):
                self._apply("ADDED", resource, entry.obj, None)
        self._unsubscribe = store.subscribe(self._on_change)

    def close(self) -> None:
        self._unsubscribe()

    def get(self, resource: str, namespace: str, name: str) -> dict | None:
        return self.objs[resource].get((namespace or "", name))

    def all(self, resource: str) -> Iterable[dict]:
        return self.objs[resource].values()

    def owned(self, uid: str, resource: str | None = None) -> list[dict]:
        """Objects whose controller ownerReference points at `uid`."""
        return [o for (r, _, _), o in self.by_controller.get(uid, {}).items() if resource is None or r == resource]

    def _apply(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        key = nskey(obj)
        table = self.objs[resource]
        prev = table.get(key) if old is None else old
        if prev is not None:
            self._unindex(resource, key, prev)
        if etype == "DELETED":
            table.pop(key, None)
        else:
            table[key] = obj
            self._index(resource, key, obj)

    def _index(self, resource: str, key: tuple[str, str], obj: dict) -> None:
        ref = controller_ref(obj)
        if ref and ref.get("uid"):
            self.by_controller[ref["uid"]][(resource, *key)] = obj
        if resource == "pods":
            node = obj.get("spec", {}).get("nodeName")
            if node:
                self.pods_by_node[node][key] = obj
        elif resource == "resourceslices.resource.k8s.io":
            spec = obj.get("spec", {})
            self.slices_by_pool[(spec.get("driver", ""), spec.get("pool", {}).get("name", ""))][key[1]] = obj
            if spec.get("nodeName"):
                self.slices_by_node[spec["nodeName"]][key[1]] = obj

    def _unindex(self, resource: str, key: tuple[str, str], obj: dict) -> None:
        ref = controller_ref(obj)
        if ref and ref.get("uid"):
            owned = self.by_controller.get(ref["uid"])
            if owned is not None:
                owned.pop((resource, *key), None)
                if not owned:
                    del self.by_controller[ref["uid"]]
        if resource == "pods":
            node = obj.get("spec", {}).get("nodeName")
            if node and node in self.pods_by_node:
                self.pods_by_node[node].pop(key, None)
                if not self.pods_by_node[node]:
                    del self.pods_by_node[node]
        elif resource == "resourceslices.resource.k8s.io":
            spec = obj.get("spec", {})
            pool = (spec.get("driver", ""), spec.get("pool", {}).get("name", ""))
            if pool in self.slices_by_pool:
                self.slices_by_pool[pool].pop(key[1], None)
                if not self.slices_by_pool[pool]:
                    del self.slices_by_pool[pool]
            node = spec.get("nodeName")
            if node and node in self.slices_by_node:
                self.slices_by_node[node].pop(key[1], None)
                if not self.slices_by_node[node]:
                    del self.slices_by_node[node]

    def _on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        if resource not in self.objs:
            for h in self.handlers:
                h(etype, resource, obj, old)
            return
        self._apply(etype, resource, obj, old)
        for h in self.handlers:
            try:
                h(etype, resource, obj, old)
            except Exception:  # a bad handler must not break the write that triggered it
                log.exception("controller handler failed on %s %s", etype, resource)


_caches: weakref.WeakKeyDictionary[Any, Cache] = weakref.WeakKeyDictionary()


def shared_cache(store: Any) -> Cache:
    """One cache per store, shared by every controller of that simulator."""
    cache = _caches.get(store)
    if cache is None:
        cache = _caches[store] = Cache(store)
    return cache


class Controller:
    """A level-triggered controller: change events enqueue keys, `reconcile(key)` makes the world match.

    Keys are deduplicated while queued and processed in arrival order. `enqueue_after` schedules a key on the
    simulated clock, so a test that steps the clock makes timers fire. `reconcile` must be idempotent and write
    only when something differs.
    """

    name = "controller"
    batch = 256
    # The field manager kube-apiserver records for this controller's writes: the real component's name (its
    # User-Agent's first word), None for writes that record none.
    field_manager: str | None = None

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.store = sim.store
        self.clock = sim.clock
        self.cache: Cache | None = None
        self._queue: dict[Key, None] = {}
        self._timers: list[tuple[float, int, Key]] = []
        self._seq = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._failures: dict[Key, int] = {}
        self.started = False

    # -------------------------------------------------------------- override points

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        """Map one store change to the keys it affects (call self.enqueue)."""

    def initial_keys(self) -> Iterable[Key]:
        return ()

    def reconcile(self, key: Key) -> None:
        raise NotImplementedError

    # -------------------------------------------------------------- queue

    def enqueue(self, key: Key) -> None:
        if key not in self._queue:
            self._queue[key] = None
            self._wake.set()

    def enqueue_after(self, key: Key, seconds: float) -> None:
        self._seq += 1
        heapq.heappush(self._timers, (self.clock.seconds() + max(0.0, seconds), self._seq, key))
        self._wake.set()

    def enqueue_at(self, key: Key, at: float) -> None:
        self.enqueue_after(key, at - self.clock.seconds())

    @property
    def idle(self) -> bool:
        return not self._queue

    def _fire_timers(self, until: float | None = None) -> None:
        now = self.clock.seconds() if until is None else until
        while self._timers and self._timers[0][0] <= now:
            _, _, key = heapq.heappop(self._timers)
            self.enqueue(key)

    def start_sync(self) -> None:
        """Attach to the store and queue the initial keys (no I/O, no awaiting)."""
        if self.started:
            return
        self.started = True
        self.cache = shared_cache(self.store)
        self.cache.handlers.append(self.on_change)
        for key in self.initial_keys():
            self.enqueue(key)

    def process(self, limit: int | None = None, until: float | None = None) -> int:
        """Reconcile up to `limit` queued keys (all when None) after firing the timers due by `until` (default:
        now on the clock); returns how many ran."""
        self._fire_timers(until)
        n = 0
        while self._queue and (limit is None or n < limit):
            key = next(iter(self._queue))
            del self._queue[key]
            n += 1
            acting = self.field_manager is not None and hasattr(self.store, "actor")
            if acting:
                self.store.actor = self.field_manager
            try:
                self.reconcile(key)
                self._failures.pop(key, None)
            except Exception as exc:
                tries = self._failures.get(key, 0) + 1
                self._failures[key] = tries
                delay = backoff.delay(tries, 0.5, 30.0)  # a controller's rate limiter: 1 s, 2 s, ... 30 s
                level = logging.DEBUG if tries < 3 else logging.WARNING
                log.log(
                    level,
                    "%s: reconcile %r failed (%s); retrying in %.1fs",
                    self.name,
                    key,
                    exc,
                    delay,
                    exc_info=tries >= 3,
                )
                self.enqueue_after(key, delay)
            finally:
                if acting:
                    self.store.actor = None
        return n

    async def run(self) -> None:
        """Run until cancelled."""
        self.start_sync()
        while True:
            self._fire_timers()
            if self._queue:
                self.process(self.batch)
                await asyncio.sleep(0)
                continue
            self._wake.clear()
            waits = [asyncio.ensure_future(self._wake.wait())]
            if self._timers:
                waits.append(asyncio.ensure_future(self.clock.sleep(self._timers[0][0] - self.clock.seconds())))
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()

    async def start(self, sim: Any = None) -> None:
        """Attach and run as a task (the Simulator's add_controller protocol: `await start(sim)`, `await stop()`)."""
        self.start_sync()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self.run(), name=f"controller:{self.name}")

    async def stop(self) -> None:
        if self.cache is not None and self.on_change in self.cache.handlers:
            self.cache.handlers.remove(self.on_change)
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - its failure was logged where it ran
                pass
            self._task = None
        self.started = False


def editable_status(store: Any, resource: str, namespace: str | None, name: str) -> dict | None:
    """The stored object with only its status copied: enough to change the status and write it back (cheap)."""
    ref = store.get_ref(resource, namespace, name)
    if ref is None:
        return None
    out = dict(ref)
    out["status"] = json.loads(json.dumps(ref.get("status") or {}))
    return out


def write_status(store: Any, resource: str, obj: dict) -> bool:
    """Write `obj` (from editable_status) through the status subresource; False when the object went meanwhile (404:
    nothing left to change, as the controllers' UpdateStatus callers treat NotFound). Other errors propagate."""
    try:
        store.update(resource, obj, subresource="status")
    except ApiError as exc:
        if exc.code == 404:
            return False
        raise
    return True


def disruption_target(reason: str, message: str, generation: int, stamp: str) -> dict:
    """The DisruptionTarget=True pod condition a controller writes before it deletes a pod (podgc, taint eviction),
    with its observedGeneration (CalculatePodConditionObservedGeneration, PodObservedGenerationTracking GA in v1.35)."""
    return {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
        "lastProbeTime": None,
        "lastTransitionTime": stamp,
    }


def delete_pod(store: Any, pod: dict, grace_period_seconds: int | None = None) -> None:
    """Delete `pod` if it is still the same pod (a uid precondition): gone (404) or replaced by a namesake (409) is
    what the controller wanted already."""
    ns, name = nskey(pod)
    try:
        store.delete(
            "pods",
            ns,
            name,
            grace_period_seconds=grace_period_seconds,
            preconditions={"uid": pod["metadata"].get("uid")},
        )
    except ApiError as exc:
        if exc.code not in (404, 409):
            raise


def settle(controllers: Iterable[Controller], rounds: int = 10_000) -> int:
    """Run every controller's queue to exhaustion (timers due now included) without the event loop; returns keys run.

    For in-process tests and scenario loading: deterministic, and the same work the running controllers would do.
    """
    ctrls = list(controllers)
    for c in ctrls:
        c.start_sync()
    # Timers due by the time settle was called: with a running clock, later ones would keep it from ever settling.
    until = ctrls[0].clock.seconds() if ctrls else None
    total = 0
    for _ in range(rounds):
        n = sum(c.process(until=until) for c in ctrls)
        total += n
        if n == 0:
            break
    return total


# ------------------------------------------------------------------ pods


def short_hash(data: str, n: int = 10) -> str:
    """A stable name-safe hash (the alphabet Kubernetes uses for generated suffixes)."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    h = int.from_bytes(hashlib.sha256(data.encode()).digest()[:12], "big")
    out = []
    for _ in range(n):
        h, r = divmod(h, len(alphabet))
        out.append(alphabet[r])
    return "".join(out)


def pod_phase(pod: dict) -> str:
    return pod.get("status", {}).get("phase") or "Pending"


def pod_terminating(pod: dict) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def pod_active(pod: dict) -> bool:
    return not pod_terminating(pod) and pod_phase(pod) not in ("Succeeded", "Failed")


def containers_running(pod: dict) -> bool:
    """Phase Running and every regular container running (a crash-looping container is waiting)."""
    if pod_phase(pod) != "Running" or pod_terminating(pod):
        return False
    statuses = pod.get("status", {}).get("containerStatuses") or []
    if not statuses:
        return True
    return all("running" in (cs.get("state") or {}) for cs in statuses)


def pod_ready(pod: dict) -> bool:
    for cond in pod.get("status", {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


DRA_CHART_NAMES = ("dra-driver-nvidia-gpu", "nvidia-dra-driver-gpu", "k8s-dra-driver-gpu")


def is_device_plugin_pod(pod: dict) -> bool:
    """An NVIDIA device plugin pod (GPU Operator, standalone chart, static manifest), not its feature discovery:
    the client's classifier (fleet/gpustack.py pod_role), so the simulator runs what dragoman recognises."""
    return pod_role(pod) == "device-plugin"


def is_dra_kubelet_plugin_pod(pod: dict) -> bool:
    """A kubelet-plugin pod of the NVIDIA DRA driver (not its controller Deployment's pod): fleet/gpustack.py's."""
    return pod_role(pod) == "dra-driver"


def dra_plugin_image(pod: dict) -> str:
    """The image of the DRA driver's gpus container (the one whose tag says the driver version)."""
    containers = pod.get("spec", {}).get("containers") or []
    for c in containers:
        if c.get("name") == "gpus":
            return c.get("image", "")
    for c in containers:
        if any(n in c.get("image", "") for n in DRA_CHART_NAMES):
            return c.get("image", "")
    return containers[0].get("image", "") if containers else ""


# ------------------------------------------------------------------ events


# client-go tools/record (events_cache.go): more than 10 messages of one reason about one object within 10 minutes
# are combined into one Event; a source may send 25 events about an object at once, then one every 5 minutes.
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
SPAM_BURST = 25
SPAM_REFILL = 300.0  # seconds a token takes to come back
LRU_ENTRIES = 4096  # each of the correlator's caches (maxLruCacheEntries)


def _bounded(cache: dict, key: Any, value: Any) -> None:
    """Set `key` as the most recent entry of an LRU cache of LRU_ENTRIES, dropping the least recent."""
    cache.pop(key, None)
    cache[key] = value
    if len(cache) > LRU_ENTRIES:
        del cache[next(iter(cache))]


class Events:
    """The core event recorder of client-go tools/record (kube-controller-manager's controllers, the kubelet): one
    Event per getEventKey (source, object, type, reason, message), its repeats counted (count, lastTimestamp); the
    EventCorrelator's aggregation of similar events and its spam filter."""

    def __init__(self, store: Any, clock: Any, component: str, host: str | None = None) -> None:
        self.store = store
        self.clock = clock
        self.component = component
        self.host = host
        self._seen: dict[tuple[str, ...], tuple[str, str]] = {}
        self._counts: dict[tuple[str, ...], int] = {}  # the logger's count per key, filtered occurrences included
        self._similar: dict[tuple[str, ...], tuple[dict[str, None], float]] = {}
        self._tokens: dict[tuple[str, ...], tuple[float, float]] = {}  # spam key -> (tokens, when counted)

    def _accept(self, spam_key: tuple[str, ...], now: float) -> bool:
        """The token bucket of EventSourceObjectSpamFilter: full at first, one token back every 5 minutes."""
        tokens, at = self._tokens.get(spam_key, (float(SPAM_BURST), now))
        tokens = min(float(SPAM_BURST), tokens + (now - at) / SPAM_REFILL)
        accepted = tokens >= 1.0
        _bounded(self._tokens, spam_key, (tokens - 1.0 if accepted else tokens, now))
        return accepted

    def emit(self, obj: dict, etype: str, reason: str, message: str, host: str | None = None) -> None:
        md = obj["metadata"]
        ns = md.get("namespace") or "default"
        host = host or self.host or ""
        ref = object_reference(obj)
        about = (
            self.component,
            host,
            ref["kind"],
            ref.get("namespace", ""),
            ref["name"],
            ref["uid"],
            ref["apiVersion"],
        )
        seconds = self.clock.seconds()
        # EventAggregate: the messages of one (source, object, type, reason) within 10 minutes of the last.
        agg_key = (*about, etype, reason)
        messages, last = self._similar.get(agg_key, ({}, seconds))
        if seconds - last > AGGREGATE_INTERVAL:
            messages = {}
        messages[message] = None
        _bounded(self._similar, agg_key, (messages, seconds))
        if len(messages) >= AGGREGATE_MAX_EVENTS:
            # Over the threshold: one aggregate Event under the group's key (Go pops any one message; the oldest).
            messages.pop(next(iter(messages)))
            message = f"(combined from similar events): {message}"
            key: tuple[str, ...] = ("aggregate", *agg_key)
        else:
            # getEventKey (tools/record/events_cache.go): source, the object (not its resourceVersion), type,
            # reason, message.
            key = (self.component, host, md.get("uid", ""), etype, reason, message)
        count = self._counts.get(key, 0) + 1
        _bounded(self._counts, key, count)
        if not self._accept((*about, etype), seconds):  # dropped, though the logger counted it
            return
        now = self.clock.timestamp()
        known = self._seen.get(key)
        if known is not None:
            cur = self.store.get("events", known[0], known[1])
            if cur is not None:
                cur["count"] = count
                cur["lastTimestamp"] = now
                cur["message"] = message
                try:
                    self.store.update("events", cur)
                    return
                except Exception:  # noqa: BLE001 - a lost update race: record a new event instead
                    pass
        name = f"{md['name']}.{short_hash(md.get('uid', '') + reason + message + now, 16)}"
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": ns},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "type": etype,
            "source": {"component": self.component, **({"host": host} if host else {})},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": count,  # a repeat whose Event is gone (or was filtered) is created with its count
            "reportingComponent": self.component,
            "reportingInstance": host,
        }
        try:
            self.store.create("events", event)
            _bounded(self._seen, key, (ns, name))
        except Exception as exc:  # noqa: BLE001 - events are best effort, never a controller's failure
            log.debug("event %s/%s not recorded: %s", ns, name, exc)


def object_reference(obj: dict) -> dict:
    """reference.GetReference of a stored object: what an Event's involvedObject/regarding holds (its
    resourceVersion included, so a recorder tells two versions of one object apart)."""
    md = obj["metadata"]
    return {
        "kind": obj.get("kind", ""),
        **({"namespace": md["namespace"]} if md.get("namespace") else {}),
        "name": md["name"],
        "uid": md.get("uid", ""),
        "apiVersion": obj.get("apiVersion", "v1"),
        "resourceVersion": md.get("resourceVersion", ""),
    }


# client-go tools/events (event_broadcaster.go): a series ends after this long without a repeat, checked on a ticker
# of the same period that starts with the broadcaster; every open series is written again on a 30-minute ticker.
SERIES_FINISH = 360.0
SERIES_REFRESH = 1800.0
EVENTS_VIEW = "events.events.k8s.io"


def reporting_instance(controller: str) -> str:
    """The recorder's reportingInstance: `<controller>-<hostname>` (NewRecorder), the host the simulator runs on as
    the real component would on the same machine."""
    return f"{controller}-{socket.gethostname()}"


class SeriesEvents:
    """The events.k8s.io/v1 recorder of client-go tools/events, as kube-scheduler uses it.

    An Event is written through events.k8s.io/v1 (eventTime, action, reportingController/Instance; no source, count
    or first/last timestamps, which the core view shows as `{}`, null and null). Repeats are found by the isomorphic
    key — type, action, reason, reporting controller and instance, the regarding reference (resourceVersion
    included) and related; NOT the note, so a repeat keeps the first note. The 2nd occurrence patches
    `series: {count: 2, lastObservedTime}`; later ones only count in the recorder's cache, written when the finish
    ticker ends the series (no repeat for 6 minutes) or the 30-minute refresh ticker fires. An entry older than
    6 minutes at a finish tick leaves the cache, so the next occurrence is a new Event.

    `tick()` runs the tickers due by now; the owning controller calls it from a timer (`next_tick()`).
    """

    def __init__(self, store: Any, clock: Any, controller: str, instance: str | None = None) -> None:
        self.store = store
        self.clock = clock
        self.controller = controller
        self.instance = instance if instance is not None else reporting_instance(controller)
        self._cache: dict[str, dict] = {}
        # wait.Until runs each ticker at once, then every period.
        self._next_finish = clock.seconds()
        self._next_refresh = clock.seconds()
        self._last_name = 0

    def _micro(self) -> str:
        return format_micro_time(self.clock.now())

    def emit(
        self, obj: dict, etype: str, reason: str, action: str, note: str, related: dict | None = None
    ) -> dict | None:
        """Record one occurrence; returns the Event written (None when only the cache counted it)."""
        self.tick()
        regarding = object_reference(obj)
        rel = object_reference(related) if related is not None else None
        key = json.dumps([etype, action, reason, self.controller, self.instance, regarding, rel or {}], sort_keys=True)
        cached = self._cache.get(key)
        if cached is not None:
            if cached.get("series"):
                cached["series"] = {"count": cached["series"]["count"] + 1, "lastObservedTime": self._micro()}
                return None
            cached["series"] = {"count": 2, "lastObservedTime": self._micro()}
            return self._record(cached)
        now = self.clock.now()
        # GenerateEventName: `<name>.<unix nanoseconds in hex>`, strictly increasing here so two in one tick differ.
        nano = max(int(now.timestamp() * 1e9), self._last_name + 1)
        self._last_name = nano
        md = obj["metadata"]
        event: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{md['name']}.{nano:x}", "namespace": md.get("namespace") or "default"},
            "eventTime": self._micro(),
            "reportingController": self.controller,
            "reportingInstance": self.instance,
            "action": action,
            "reason": reason,
            "regarding": regarding,
            **({"related": rel} if rel else {}),
            "note": note,
            "type": etype,
        }
        self._cache[key] = event
        return self._record(event)

    def _record(self, event: dict) -> dict | None:
        """recordEvent: a series is a strategic-merge patch of `series` (a create when the Event is gone), a
        singleton a create. Best effort, as an event never fails the controller that records it."""
        md = event["metadata"]
        try:
            if event.get("series"):
                try:
                    out, _ = self.store.patch(
                        EVENTS_VIEW, md["namespace"], md["name"], {"series": event["series"]}, "strategic"
                    )
                    return out
                except ApiError as exc:
                    if exc.code != 404:
                        raise
            return self.store.create(EVENTS_VIEW, event)
        except Exception as exc:  # noqa: BLE001 - events are best effort
            log.debug("event %s/%s not recorded: %s", md["namespace"], md["name"], exc)
            return None

    def next_tick(self) -> float:
        """Simulated seconds until the next ticker is due."""
        return max(0.0, min(self._next_finish, self._next_refresh) - self.clock.seconds())

    def tick(self) -> None:
        """Run the tickers due by now. Several due finish ticks act as the last of them alone would (each removes
        what the later one would), and a series is written once however many refreshes fell due."""
        now = self.clock.seconds()
        if self._next_refresh <= now:
            for event in self._cache.values():
                if event.get("series"):
                    self._record(event)
            self._next_refresh += SERIES_REFRESH * (1 + int((now - self._next_refresh) // SERIES_REFRESH))
        if self._next_finish <= now:
            at = self._next_finish + SERIES_FINISH * int((now - self._next_finish) // SERIES_FINISH)
            cutoff = self.clock.now() - datetime.timedelta(seconds=now - at + SERIES_FINISH)
            for key, event in list(self._cache.items()):
                series = event.get("series")
                if parse_rfc3339(series["lastObservedTime"] if series else event["eventTime"]) < cutoff:
                    if series:
                        self._record(event)
                    del self._cache[key]
            self._next_finish = at + SERIES_FINISH


def _annotation_object(obj: dict | None, annotation: str) -> dict | None:
    """The JSON object a scenario-contract annotation of `obj` holds (POD_FAULTS, DEVICE_HEALTH, BINDING_CONDITIONS,
    BINDING_OUTCOMES); None when it says nothing usable: absent, empty, not JSON, or JSON but not an object."""
    raw = (((obj or {}).get("metadata") or {}).get("annotations") or {}).get(annotation)
    if not raw:
        return None
    try:
        said = json.loads(raw)
    except (TypeError, ValueError):
        return None
    return said if isinstance(said, dict) else None


def _delay_seconds(value: object) -> float:
    """A scenario's delaySeconds: a number of seconds from 0 to an hour, else 0."""
    return float(value) if isinstance(value, (int, float)) and 0 <= value <= 3600 else 0.0


def binding_outcomes(slice_: dict) -> dict[str, dict]:
    """What a slice's BINDING_OUTCOMES annotation says the fabric answers, checked: {device: {"delaySeconds",
    "conditions"}}, each condition with a type, a status of True/False/Unknown, a reason and a message; {} when it
    says nothing usable."""
    want = _annotation_object(slice_, BINDING_OUTCOMES)
    if want is None:
        return {}
    out: dict[str, dict] = {}
    for device, ask in list(want.items())[:128]:
        if not isinstance(device, str) or not isinstance(ask, dict):
            continue
        conds = [
            {
                "type": c["type"],
                "status": c.get("status") if c.get("status") in ("True", "False", "Unknown") else "True",
                "reason": str(c.get("reason") or "Answered")[:1024],
                "message": str(c.get("message") or "")[:32768],
            }
            for c in ask.get("conditions") or ()
            if isinstance(c, dict) and isinstance(c.get("type"), str) and c["type"]
        ][:8]
        if not conds:
            continue
        out[device] = {"delaySeconds": _delay_seconds(ask.get("delaySeconds", 0)), "conditions": conds}
    return out


def node_pod_faults(node: dict | None) -> dict[str, dict[str, str]]:
    """What a node's POD_FAULTS annotation gives each DaemonSet's pods there, checked: {DaemonSet: {annotation:
    value}} (strings only); {} when it says nothing usable (absent, not JSON, not that shape)."""
    want = _annotation_object(node, POD_FAULTS)
    if want is None:
        return {}
    return {
        str(ds): {str(k): str(v) for k, v in faults.items() if isinstance(v, (str, int))}
        for ds, faults in want.items()
        if isinstance(faults, dict)
    }


def never_steadily_ready(faults: dict) -> bool:
    """Whether these fault annotations keep a pod from ever being ready, or from staying ready (a crash loop of
    CRASH_LOOP_SECONDS is down half the time): a start of the real control plane does not wait for such a pod."""
    return any(faults.get(f) == "true" for f in UNREADY_FAULTS) or bool(faults.get(CRASH_LOOP_SECONDS))


def unready_daemonsets(daemonsets: Iterable[dict], nodes: Iterable[dict]) -> list[dict]:
    """The DaemonSets still coming up: fewer pods ready than scheduled, or the spec not yet observed — but for the
    pods a node's fault keeps from ever being ready (its POD_FAULTS: a crash loop, a probe that never passes) or
    from staying ready (a container that crashes every N seconds), which a wait would sit out to its timeout."""
    never: dict[str, int] = {}
    for n in nodes:
        for ds, faults in node_pod_faults(n).items():
            if never_steadily_ready(faults):
                never[ds] = never.get(ds, 0) + 1
    out = []
    for d in daemonsets:
        status = d.get("status") or {}
        meta = d.get("metadata") or {}
        if status.get("numberReady", 0) + never.get(meta.get("name", ""), 0) < status.get(
            "desiredNumberScheduled", 1
        ) or status.get("observedGeneration", 0) < meta.get("generation", 1):
            out.append(d)
    return out


def max_restart_seconds(node: dict | None) -> int | None:
    """The node's MAX_RESTART_SECONDS (a whole number of seconds, 1-300, as the kubelet's validation allows); None
    when it has none or it says something else (`sim serve --real-kubelets` refuses that with a sentence)."""
    raw = (((node or {}).get("metadata") or {}).get("annotations") or {}).get(MAX_RESTART_SECONDS)
    if not isinstance(raw, str) or not (raw.isascii() and raw.strip().isdigit()):
        return None
    n = int(raw.strip())
    return n if 1 <= n <= 300 else None


def pod_faults(pod: dict, node: dict | None) -> dict:
    """The fault annotations that apply to a pod: its own, and those its node's POD_FAULTS gives the pods of the
    DaemonSet that owns it (the node's fault, whichever of the DaemonSet's pods lands there)."""
    own = (pod.get("metadata") or {}).get("annotations") or {}
    by_ds = node_pod_faults(node)
    if not by_ds:
        return own
    refs = (pod.get("metadata") or {}).get("ownerReferences") or ()
    owner = next((r.get("name") for r in refs if r.get("kind") == "DaemonSet"), None)
    extra = by_ds.get(owner or "")
    return {**own, **extra} if extra else own


def unhealthy_devices(node: dict | None) -> dict[str, str]:
    """What a node's DEVICE_HEALTH annotation says: {device: message}; empty when absent or not a JSON object."""
    said = _annotation_object(node, DEVICE_HEALTH)
    if said is None:
        return {}
    return {str(d): str(m)[:1024] for d, m in said.items() if isinstance(d, str) and d}


def binding_request(node: dict) -> dict | None:
    """What a node's BINDING_CONDITIONS annotation asks of its DRA driver's devices, checked: {"conditions",
    "failureConditions", "bindsToNode", "delaySeconds"}; None when it asks nothing (absent, not JSON, no conditions)."""
    want = _annotation_object(node, BINDING_CONDITIONS)
    if want is None:
        return None
    conds = [c for c in want.get("conditions") or () if isinstance(c, str) and c]
    if not conds:
        return None
    # The API requires failure conditions beside binding conditions: one is named after the first when none is given.
    failure = [c for c in want.get("failureConditions") or () if isinstance(c, str) and c] or [conds[0] + "-failed"]
    return {
        "conditions": conds[:4],
        "failureConditions": failure[:4],
        "bindsToNode": bool(want.get("bindsToNode", True)),
        "delaySeconds": _delay_seconds(want.get("delaySeconds", 0)),
    }
