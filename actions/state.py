"""Migration state in the cluster: the per-pool ConfigMap `dragoman-pool-<pool>` (plan, step log, rollback records) and
the node annotations."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable
from typing import Any

from dragoman.actions.lock import MANAGED_BY, lease_name
from dragoman.fleet.cluster import ApiError
from dragoman.fleet.k8s.times import now_text

LOG_LINES = 500
# A ConfigMap holds at most 1 MiB; a plan for hundreds of nodes (a diff per node and per pod) is larger as text,
# so past this size it is kept gzipped in binaryData, where it shrinks about tenfold.
PLAN_TEXT_LIMIT = 256 * 1024


def _now() -> str:
    return now_text()


def _merge_record(old: dict, new: dict) -> dict:
    out = dict(old)
    for k, v in new.items():
        if isinstance(v, list) and isinstance(out.get(k), list):
            out[k] = out[k] + [x for x in v if x not in out[k]]
        else:
            out[k] = v
    return out


class PoolState:
    """The ConfigMap of one pool. `load` only reads; every other method writes it with its resourceVersion."""

    def __init__(self, cluster: Any, pool: str, namespace: str) -> None:
        self.cluster = cluster
        self.pool = pool
        self.namespace = namespace
        self.name = lease_name(pool)
        self.path = f"/api/v1/namespaces/{namespace}/configmaps/{self.name}"
        self.cm: dict | None = None
        self.state: dict = {}
        self.plan: dict | None = None
        self.read_only = False

    async def load(self) -> PoolState:
        try:
            self.cm = await self.cluster.get(self.path)
        except ApiError as exc:
            if exc.status not in (404, 403):
                raise
            self.cm = None
        data = (self.cm or {}).get("data") or {}
        packed = ((self.cm or {}).get("binaryData") or {}).get("plan.json.gz")
        try:
            self.state = json.loads(data.get("state.json") or "{}")
            if packed:
                self.plan = json.loads(gzip.decompress(base64.b64decode(packed)))
            else:
                self.plan = json.loads(data["plan.json"]) if data.get("plan.json") else None
        except (ValueError, OSError):
            self.state, self.plan = {}, None
        return self

    @property
    def plan_id(self) -> str:
        return str(self.state.get("planId") or "")

    @property
    def status(self) -> str:
        return str(self.state.get("status") or "")

    def step(self, step_id: str) -> dict:
        return (self.state.get("steps") or {}).get(step_id) or {}

    def step_done(self, step_id: str) -> bool:
        return self.step(step_id).get("state") == "done"

    def step_started(self, step_id: str) -> str:
        return self.step(step_id).get("started") or _now()

    def rollback_record(self, step_id: str) -> dict:
        return (self.state.get("rollback") or {}).get(step_id) or {}

    async def _write(self, mutate: Callable[[dict], None], log: str = "") -> None:
        for _ in range(8):
            plan = self.plan
            if self.cm is None:
                await self.load()
                self.plan = plan if plan is not None else self.plan
                plan = self.plan
            state = json.loads(json.dumps(self.state))
            mutate(state)
            data = dict((self.cm or {}).get("data") or {})
            binary = dict((self.cm or {}).get("binaryData") or {})
            data["state.json"] = json.dumps(state, sort_keys=True)
            if plan is not None:
                text = json.dumps(plan, sort_keys=True, separators=(",", ":"))
                if len(text) > PLAN_TEXT_LIMIT:
                    data.pop("plan.json", None)
                    binary["plan.json.gz"] = base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()
                else:
                    binary.pop("plan.json.gz", None)
                    data["plan.json"] = text
            if log:
                lines = (data.get("log") or "").splitlines()
                lines.append(json.dumps({"time": _now(), "message": log}, separators=(",", ":")))
                data["log"] = "\n".join(lines[-LOG_LINES:]) + "\n"
            md = {
                "name": self.name,
                "namespace": self.namespace,
                "labels": dict(MANAGED_BY, **{"dragoman.io/pool": self.pool}),
            }
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data}
            if binary:
                body["binaryData"] = binary
            try:
                if self.cm is None:
                    self.cm = await self.cluster.request("POST", self.path.rsplit("/", 1)[0], body, retry=True)
                else:
                    md["resourceVersion"] = self.cm["metadata"]["resourceVersion"]
                    self.cm = await self.cluster.request("PUT", self.path, body, retry=True)
                self.state = state
                return
            except ApiError as exc:
                if exc.status != 409:
                    raise
                self.cm = None  # someone else wrote it: read again and re-apply the change
        raise RuntimeError(f"the state ConfigMap {self.namespace}/{self.name} kept changing under dragoman")

    async def clear_rollback(self, step_id: str) -> None:
        """Forget what rolling `step_id` back needed (it was rolled back)."""

        def m(s: dict) -> None:
            (s.get("rollback") or {}).pop(step_id, None)

        await self._write(m, f"{step_id}: rollback record cleared")

    async def record_switch(self, key: str, value: Any, message: str) -> None:
        """Keep `value` under `switch.<key>` (the switch's figures, what its rollback needs beyond one step)."""

        def m(s: dict) -> None:
            s.setdefault("switch", {})[key] = value

        await self._write(m, message)

    async def begin(self, plan: dict, identity: dict, by: dict) -> None:
        """Record the plan this run applies (kept when it is the one already in progress)."""
        same = self.plan_id == plan["id"]
        self.plan = plan if not same or self.plan is None else self.plan

        def m(s: dict) -> None:
            if not same:
                # A rollback plan undoes what earlier plans recorded: keep their steps and rollback records, so a
                # second partial rollback (`--rollback --step X` after `--rollback --step Y`) still finds its records.
                kept = (
                    {"steps": s.get("steps") or {}, "rollback": s.get("rollback") or {}} if plan.get("rollback") else {}
                )
                s.clear()
                s.update(
                    planId=plan["id"],
                    pool=self.pool,
                    cluster=identity,
                    createdAt=_now(),
                    steps=kept.get("steps", {}),
                    rollback=kept.get("rollback", {}),
                )
            s["status"] = "running"
            s["by"] = by.get("name")

        await self._write(m, f"{'resumed' if same else 'started'} plan {plan['id']} by {by.get('name')}")

    async def set_step(
        self,
        step_id: str,
        step: str,
        state: str,
        *,
        by: dict,
        problems: list[str] | None = None,
        rollback: dict | None = None,
        message: str = "",
    ) -> None:
        def m(s: dict) -> None:
            entry = dict((s.setdefault("steps", {})).get(step_id) or {})
            entry.update(step=step, state=state, by=by.get("name"))
            if state == "running":
                entry.setdefault("started", _now())
            else:
                entry["finished"] = _now()
            if problems is not None:
                entry["problems"] = problems
            s["steps"][step_id] = entry
            if rollback:
                rb = s.setdefault("rollback", {})
                rb[step_id] = _merge_record(rb.get(step_id) or {}, rollback)

        await self._write(m, message or f"{step_id}: {state}")

    async def finish(self, status: str, message: str = "") -> None:
        def m(s: dict) -> None:
            s["status"] = status
            s["finishedAt"] = _now()

        await self._write(m, message or f"plan {self.plan_id}: {status}")
