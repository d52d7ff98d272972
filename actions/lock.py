"""The operator lock: a coordination.k8s.io/v1 Lease `dragoman-pool-<pool>`, taken, renewed while running, released, and
taken over when expired."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import socket
from collections.abc import Callable
from typing import Any

from dragoman.fleet.cluster import ApiError
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.fleet.k8s.times import format_micro_time, parse_datetime

HOLDER_ANNOTATION = "dragoman.io/holder"
MANAGED_BY = {"app.kubernetes.io/managed-by": "dragoman"}


def lease_name(pool: str) -> str:
    return f"dragoman-pool-{pool}"


def _micro(t: dt.datetime) -> str:
    return format_micro_time(t)


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LockHeld(UserError):
    def __init__(self, message: str) -> None:
        super().__init__(message, ExitCode.REFUSED)


class PoolLock:
    """One run's hold on a pool. `acquire` refuses (LockHeld, exit 3) when another live dragoman holds it."""

    def __init__(
        self,
        cluster: Any,
        pool: str,
        namespace: str,
        by: dict,
        *,
        seconds: int = 60,
        session: str = "",
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.cluster = cluster
        self.pool = pool
        self.namespace = namespace
        self.by = by
        self.seconds = seconds
        self.session = session or os.urandom(4).hex()
        self.identity = f"{by.get('name', 'dragoman')} pid {os.getpid()} ({self.session})"
        self.warn = warn or (lambda msg: None)
        self.lease: dict | None = None
        self._task: asyncio.Task | None = None
        self.path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{lease_name(pool)}"

    def _holder_note(self, since: str) -> str:
        return json.dumps(
            {
                "by": self.by.get("name"),
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "session": self.session,
                "since": since,
            },
            separators=(",", ":"),
        )

    def _body(self, since: str, rv: str | None = None) -> dict:
        now = _micro(_utcnow())
        md: dict = {
            "name": lease_name(self.pool),
            "namespace": self.namespace,
            "labels": dict(MANAGED_BY, **{"dragoman.io/pool": self.pool}),
            "annotations": {HOLDER_ANNOTATION: self._holder_note(since)},
        }
        if rv:
            md["resourceVersion"] = rv
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": md,
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": self.seconds,
                "acquireTime": since,
                "renewTime": now,
            },
        }

    @staticmethod
    def describe(lease: dict) -> tuple[str, str, dt.datetime | None, bool]:
        """(holder, since, expiry, held) of a Lease as another dragoman would read it."""
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        renew = parse_datetime(spec.get("renewTime"))
        expiry = renew + dt.timedelta(seconds=int(spec.get("leaseDurationSeconds") or 0)) if renew else None
        held = bool(holder) and expiry is not None and expiry > _utcnow()
        return holder, spec.get("acquireTime") or "", expiry, held

    async def acquire(self) -> None:
        since = _micro(_utcnow())
        for _ in range(5):
            try:
                cur = await self.cluster.get(self.path)
            except ApiError as exc:
                if exc.status != 404:
                    raise
                try:
                    self.lease = await self.cluster.request(
                        "POST", self.path.rsplit("/", 1)[0], self._body(since), retry=True
                    )
                    break
                except ApiError as exc2:
                    if exc2.status == 409:
                        continue
                    raise
            holder, since_other, expiry, held = self.describe(cur)
            note = self._note(cur)
            if held and holder != self.identity:
                if (
                    note.get("host") == socket.gethostname()
                    and isinstance(note.get("pid"), int)
                    and not _pid_alive(note["pid"])
                ):
                    self.warn(
                        f"the previous run on this machine (pid {note['pid']}) holding pool {self.pool} is "
                        "gone; taking its lock over."
                    )
                else:
                    left = int((expiry - _utcnow()).total_seconds()) if expiry else 0
                    raise LockHeld(
                        f"refused: pool {self.pool} is being migrated by {holder} since {since_other or '?'} "
                        f"(lease {self.namespace}/{lease_name(self.pool)}, renewed until {expiry:%H:%M:%S} "
                        f"UTC, {left} s from now); "
                        "wait for it to finish, or for the lease to expire if that run is gone."
                    )
            elif holder and holder != self.identity:
                self.warn(
                    f"the lock on pool {self.pool} held by {holder} expired at {expiry:%Y-%m-%d %H:%M:%S} UTC; "
                    "taking it over."
                )
            try:
                self.lease = await self.cluster.request(
                    "PUT", self.path, self._body(since, cur["metadata"]["resourceVersion"]), retry=True
                )
                break
            except ApiError as exc:
                if exc.status == 409:
                    continue
                raise
        else:
            raise LockHeld(
                f"refused: the lock on pool {self.pool} kept changing while dragoman tried to take it; another "
                "run is starting."
            )
        self._task = asyncio.get_running_loop().create_task(self._renew_loop())

    @staticmethod
    def _note(lease: dict) -> dict:
        raw = ((lease.get("metadata") or {}).get("annotations") or {}).get(HOLDER_ANNOTATION)
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            data = {}
        return data if isinstance(data, dict) else {}

    async def renew(self) -> None:
        if self.lease is None:
            return
        body = json.loads(json.dumps(self.lease))
        body["spec"]["renewTime"] = _micro(_utcnow())
        try:
            self.lease = await self.cluster.request("PUT", self.path, body, retry=True)
        except ApiError as exc:
            if exc.status != 409:
                raise
            cur = await self.cluster.get(self.path)
            if (cur.get("spec") or {}).get("holderIdentity") != self.identity:
                raise LockHeld(
                    f"the lock on pool {self.pool} was taken by "
                    f"{(cur.get('spec') or {}).get('holderIdentity')} while this run held it; stopping."
                ) from None
            self.lease = cur
            await self.renew()

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(max(1.0, self.seconds / 3))
            try:
                await self.renew()
            except Exception as exc:  # noqa: BLE001 - a failed renewal is reported; the next one may succeed
                self.warn(f"renewing the lock on pool {self.pool} failed: {exc}")

    async def release(self) -> None:
        if self._task:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - stopping: a renewal's failure was reported
                pass
            self._task = None
        if self.lease is None:
            return
        try:
            cur = await self.cluster.get(self.path)
            if (cur.get("spec") or {}).get("holderIdentity") == self.identity:
                body = json.loads(json.dumps(cur))
                body["spec"].pop("holderIdentity", None)
                body["spec"]["renewTime"] = _micro(_utcnow())
                await self.cluster.request("PUT", self.path, body, retry=True)
        except ApiError:
            pass  # an unreleased lease simply expires
        self.lease = None
