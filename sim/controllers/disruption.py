"""The PodDisruptionBudget status controller (the disruption controller's status half): it recomputes a budget's
status whenever a pod or budget of its namespace changes, and eviction asks it whether a budget allows one more."""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

from dragoman.fleet.k8s import match_label_selector
from dragoman.fleet.k8s.times import format_time, parse_rfc3339
from dragoman.sim.clock import Clock
from dragoman.sim.store import ApiError, Store, clone

log = logging.getLogger("dragoman.sim")

PDBS = "poddisruptionbudgets.policy"


class PdbStatus:
    """Keeps every PodDisruptionBudget's status current. It subscribes at construction (a change before start
    still marks its namespace); `start()` runs the worker, which the simulator cancels at stop."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self._dirty_namespaces: set[str] = set()
        self._wakeup: asyncio.Event | None = None
        self.store.subscribe(self._on_change)

    def start(self) -> asyncio.Task:
        """The worker task; every namespace holding a budget is recomputed once at start."""
        self._wakeup = asyncio.Event()
        task = asyncio.create_task(self._worker())
        self._dirty_namespaces.update(ns for (ns, _) in self.store._data[PDBS])
        self._wakeup.set()
        return task

    def _on_change(self, etype: str, key: str, obj: dict, old: dict | None) -> None:
        if key in ("pods", PDBS):
            ns = obj["metadata"].get("namespace", "")
            if ns and (key != "pods" or any(k[0] == ns for k in self.store._data[PDBS])):
                self._dirty_namespaces.add(ns)
                if self._wakeup is not None:
                    self._wakeup.set()

    async def _worker(self) -> None:
        assert self._wakeup is not None
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            await asyncio.sleep(0.02)
            dirty, self._dirty_namespaces = self._dirty_namespaces, set()
            for ns in dirty:
                for e in list(self.store.entries(PDBS, ns)):
                    try:
                        self.refresh(e.obj["metadata"]["namespace"], e.obj["metadata"]["name"])
                    except ApiError:
                        pass
                    except Exception:
                        log.exception("pdb status failed")

    @staticmethod
    def pod_ready(pod: dict) -> bool:
        for c in pod.get("status", {}).get("conditions") or []:
            if c.get("type") == "Ready":
                return c.get("status") == "True"
        return False

    def _pods(self, pdb: dict) -> list[dict]:
        ns = pdb["metadata"]["namespace"]
        sel = pdb.get("spec", {}).get("selector")
        if sel is None:
            return []
        return [
            e.obj for e in self.store.entries("pods", ns) if match_label_selector(sel, e.obj["metadata"].get("labels"))
        ]

    def compute(self, pdb: dict) -> dict:
        """PodDisruptionBudget status as the disruption controller computes it (expected pods = matching pods)."""
        spec = pdb.get("spec") or {}
        pods = [p for p in self._pods(pdb) if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]
        old_status = pdb.get("status") or {}
        now = self.clock.now()
        disrupted = {}
        live_names = {p["metadata"]["name"]: p for p in pods}
        for name, stamp in (old_status.get("disruptedPods") or {}).items():
            p = live_names.get(name)
            try:
                fresh = (now - parse_rfc3339(stamp)).total_seconds() < 120
            except (TypeError, ValueError):
                fresh = False
            if p is not None and not p["metadata"].get("deletionTimestamp") and fresh:
                disrupted[name] = stamp
        healthy = sum(
            1
            for p in pods
            if self.pod_ready(p)
            and not p["metadata"].get("deletionTimestamp")
            and p["metadata"]["name"] not in disrupted
        )
        expected = len(pods)

        def resolve(value: Any, round_up: bool) -> int:
            if isinstance(value, str) and value.endswith("%"):
                frac = int(value[:-1]) * expected / 100
                return math.ceil(frac) if round_up else math.floor(frac)
            return int(value)

        if spec.get("minAvailable") is not None:
            desired = resolve(spec["minAvailable"], True)
        elif spec.get("maxUnavailable") is not None:
            desired = max(0, expected - resolve(spec["maxUnavailable"], True))
        else:
            desired = expected
        allowed = max(0, healthy - desired)
        cond_status = "True" if allowed > 0 else "False"
        prev = next((c for c in old_status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
        transition = prev.get("lastTransitionTime") if prev and prev.get("status") == cond_status else format_time(now)
        status: dict[str, Any] = {
            "observedGeneration": pdb["metadata"].get("generation", 1),
            "disruptionsAllowed": allowed,
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
            "conditions": [
                {
                    "type": "DisruptionAllowed",
                    "status": cond_status,
                    "reason": "SufficientPods" if allowed > 0 else "InsufficientPods",
                    "message": "",
                    "observedGeneration": pdb["metadata"].get("generation", 1),
                    "lastTransitionTime": transition,
                }
            ],
        }
        if disrupted:
            status["disruptedPods"] = disrupted
        return status

    def refresh(self, namespace: str, name: str) -> dict | None:
        pdb = self.store.get_ref(PDBS, namespace, name)
        if pdb is None:
            return None
        status = self.compute(pdb)
        if status != pdb.get("status"):
            new = clone(pdb)
            new["status"] = status
            return self.store.update(PDBS, new, "status", check_rv=False, field_manager="kube-controller-manager")
        return pdb
