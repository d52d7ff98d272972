"""WATCH: the initial events or history, the event stream with bookmarks, timeouts and injected cuts."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp import web
from dragoman.fleet.k8s.registry import ResourceType
from dragoman.sim import pieces
from dragoman.sim.api import status as st
from dragoman.sim.api.gojson import encode_like_go
from dragoman.sim.server.crud import validate_list_options
from dragoman.sim.server.routing import Route
from dragoman.sim.server.wire import JSON_CT, _truthy
from dragoman.sim.store import ApiError, Entry, Watcher


class WatchMixin:
    """Watch streams over the store's watchers."""

    async def _watch(self, request: web.Request, route: Route) -> web.StreamResponse:
        rt = route.rt
        q = request.query
        pred = self._predicate(rt, q)
        ns = route.namespace or None
        if route.name:
            name = route.name
            base = pred
            pred = (
                (lambda o: o["metadata"]["name"] == name and base(o))
                if base
                else (lambda o: o["metadata"]["name"] == name)
            )
        validate_list_options(q, True)
        rv_param = q.get("resourceVersion", "")
        send_initial = _truthy(q.get("sendInitialEvents"))
        bookmarks = _truthy(q.get("allowWatchBookmarks"))
        table = self._wants_table(request)
        try:
            timeout = float(q["timeoutSeconds"]) if q.get("timeoutSeconds") else None
        except ValueError:
            raise ApiError(st.bad_request(f"timeoutSeconds: Invalid value: {q.get('timeoutSeconds')!r}")) from None
        w = self.store.shape_watcher(
            Watcher(
                rt,
                ns,
                pred,
                filter_key=(rt.key, ns, q.get("labelSelector", ""), q.get("fieldSelector", ""), route.name),
            )
        )
        initial: list[tuple[str, Entry]] = []
        error: dict | None = None
        if rv_param in ("", "0") or send_initial:
            initial = [("ADDED", e) for e in self.store.snapshot(rt, ns, w.matches if (ns or pred) else None).entries]
        else:
            problem = st.resource_version_problem(rv_param, 1 << 64, list_request=False)
            if problem is not None:
                raise ApiError(problem)
            since = int(rv_param)
            try:
                for etype, entry, old in self.store.history_since(rt, since):
                    w.offer(etype, entry, old)
            except ApiError as exc:
                error = exc.status
        if error is None:
            # Registered before the first await: no commit can fall between the snapshot/history and the stream.
            if initial:
                w.queue.extendleft(reversed(initial))
            if send_initial and bookmarks:
                w.queue.append(("BOOKMARK-INITIAL", Entry({"resourceVersion": str(self.store.resource_version)})))
            self.store.add_watcher(w)
            self._watch_streams.add(w)
        resp = web.StreamResponse(status=200, headers={"Content-Type": JSON_CT, "Cache-Control": "no-cache, private"})
        resp.enable_chunked_encoding()
        try:
            await resp.prepare(request)
        except BaseException:
            self.store.remove_watcher(w)
            self._watch_streams.discard(w)
            raise
        if error is not None:
            await resp.write(pieces.dumps({"type": "ERROR", "object": error}) + b"\n")
            await resp.write_eof()
            return resp
        cut_events, cut_after = self.faults.watch_limits(rt.key) if self.faults.active else (None, None)
        started = time.monotonic()
        deadline = started + timeout if timeout else None
        if cut_after is not None:
            deadline = min(deadline or float("inf"), started + cut_after)
        sent = 0
        next_bookmark = started + self.bookmark_interval
        try:
            while True:
                if w.queue:
                    batch = []
                    while w.queue:
                        batch.append(w.queue.popleft())
                        if cut_events is not None and sent + len(batch) >= cut_events:
                            break
                    await resp.write(b"".join(self._event_line(rt, etype, entry, table) for etype, entry in batch))
                    sent += len(batch)
                    if cut_events is not None and sent >= cut_events:
                        break
                    continue
                if w.closed:
                    break
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    break
                if bookmarks and now >= next_bookmark:
                    await resp.write(self._bookmark(rt, False))
                    next_bookmark = now + self.bookmark_interval
                    continue
                wait = 2.0
                if deadline is not None:
                    wait = min(wait, deadline - now)
                if bookmarks:
                    wait = min(wait, max(0.0, next_bookmark - now))
                w.wakeup.clear()
                if not w.queue and not w.closed:
                    try:
                        await asyncio.wait_for(w.wakeup.wait(), timeout=max(wait, 0.001))
                    except TimeoutError:
                        pass
                transport = request.transport
                if transport is None or transport.is_closing():
                    break
            await resp.write_eof()
        except (ConnectionResetError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self.store.remove_watcher(w)
            self._watch_streams.discard(w)
        return resp

    def _bookmark(self, rt: ResourceType, initial_end: bool, rv: str | None = None) -> bytes:
        md: dict[str, Any] = {"resourceVersion": rv or str(self.store.resource_version)}
        if initial_end:
            md["annotations"] = {"k8s.io/initial-events-end": "true"}
        # An empty object of the kind as Go encodes it (an events.k8s.io Event's `regarding: {}`, a Pod's
        # `spec: {containers: null}`), as kube-apiserver v1.37.2 sends its bookmarks.
        obj = encode_like_go({"kind": rt.kind, "apiVersion": rt.api_version, "metadata": md})
        return pieces.dumps({"type": "BOOKMARK", "object": obj}) + b"\n"

    def _event_line(self, rt: ResourceType, etype: str, entry: Entry, table: bool) -> bytes:
        if etype == "BOOKMARK-INITIAL":
            return self._bookmark(rt, True, entry.obj.get("resourceVersion"))
        if table:
            t = self._table(rt, [entry.obj], entry.obj["metadata"].get("resourceVersion", ""))
            return pieces.dumps({"type": etype, "object": t}) + b"\n"
        return b'{"type":"' + etype.encode() + b'","object":' + entry.raw + b"}\n"
