"""The step machinery: a step's plan (changes with diffs, the kubectl equivalent, the blast radius), apply, verify,
rollback; the context every step runs in; the registry."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from dragoman.fleet.cluster import ApiError, Unreachable
from dragoman.fleet.errors import ReadOnlyError

GPU = "nvidia.com/gpu"
MIGRATION_ANNOTATION = "dragoman.io/migration"
CRASH_ENV = "DRAGOMAN_CRASH_AT"

# Every step name, in the order a full migration runs them. Issue 9's steps register themselves under these names.
STEP_ORDER = (
    "preflight",
    "cordon",
    "drain",
    "exclude-device-plugin",
    "scope-driver",
    "device-class",
    "uncordon",
    "verify",
)
# A pool's plan by default: the whole switch (issue 9), from preflight to the canary.
DEFAULT_PLAN = list(STEP_ORDER)
# Steps that run once per batch of nodes (canary, then N at a time); the others run once for the pool.
BATCHED = {"cordon", "drain", "uncordon"}

# A write that met one of these may or may not have landed (the server failed or the answer was lost): like a crash
# after sending, its intent stays open until a re-read shows the cluster's state.
UNCERTAIN_STATUS = frozenset({500, 502, 503, 504})
# A write that met one of these is read again and, unless the cluster already shows it, sent again.
RETRY_STATUS = frozenset({409, 429}) | UNCERTAIN_STATUS
WRITE_ATTEMPTS = 8


def uncertain(exc: BaseException) -> bool:
    """Whether a failed write may still have been made."""
    return isinstance(exc, Unreachable) or (isinstance(exc, ApiError) and exc.status in UNCERTAIN_STATUS)


def retryable(exc: BaseException) -> bool:
    """Whether a failed write is worth a re-read and another try: a conflict, a shed request, a server hiccup."""
    return isinstance(exc, Unreachable) or (isinstance(exc, ApiError) and exc.status in RETRY_STATUS)


def backoff(exc: BaseException, attempt: int) -> float:
    """Seconds before the next try: the server's retryAfterSeconds when it gives one (capped), else doubling from 0.1
    s."""
    after = (
        ((getattr(exc, "body", None) or {}).get("details") or {}).get("retryAfterSeconds")
        if isinstance(exc, ApiError)
        else None
    )
    try:
        return min(float(after), 5.0) if after else min(0.1 * 2**attempt, 3.0)
    except (TypeError, ValueError):
        return min(0.1 * 2**attempt, 3.0)


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


@dataclasses.dataclass
class Change:
    """One object a step will change: before and after (only the fields it touches), the kubectl line, details."""

    kind: str
    name: str
    namespace: str = ""
    verb: str = "patch"
    before: Any = None
    after: Any = None
    command: str = ""
    detail: dict = dataclasses.field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}" if self.namespace else f"{self.kind}/{self.name}"

    def diff(self) -> list[str]:
        """`- path: old` / `+ path: new` lines for the fields that change."""
        if self.verb == "evict":
            return [f"- pod {self.namespace}/{self.name} (evicted)"]
        a, b = _flatten(self.before or {}), _flatten(self.after or {})
        out = []
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                if k in a:
                    out.append(f"- {k}: {json.dumps(a[k])}")
                if k in b:
                    out.append(f"+ {k}: {json.dumps(b[k])}")
        return out

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "verb": self.verb,
            "before": self.before,
            "after": self.after,
            "diff": self.diff(),
            "command": self.command,
            "detail": self.detail,
        }

    @classmethod
    def from_json(cls, d: dict) -> Change:
        return cls(
            d["kind"],
            d["name"],
            d.get("namespace", ""),
            d.get("verb", "patch"),
            d.get("before"),
            d.get("after"),
            d.get("command", ""),
            d.get("detail") or {},
        )


@dataclasses.dataclass
class StepPlan:
    """What one step will do, shown whole before anything runs."""

    id: str
    step: str
    title: str
    dangerous: bool
    reversible: bool
    nodes: list[str]
    changes: list[Change] = dataclasses.field(default_factory=list)
    blast_nodes: list[str] = dataclasses.field(default_factory=list)
    blast_pools: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)
    blockers: list[str] = dataclasses.field(default_factory=list)
    # Fingerprints of what the plan read: `--apply-plan` refuses when they no longer match.
    reads: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def writes(self) -> bool:
        return bool(self.changes)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "step": self.step,
            "title": self.title,
            "dangerous": self.dangerous,
            "reversible": self.reversible,
            "nodes": self.nodes,
            "changes": [c.to_json() for c in self.changes],
            "blastRadius": {"nodes": self.blast_nodes, "pools": self.blast_pools},
            "notes": self.notes,
            "warnings": self.warnings,
            "blockers": self.blockers,
            "reads": self.reads,
        }

    @classmethod
    def from_json(cls, d: dict) -> StepPlan:
        br = d.get("blastRadius") or {}
        return cls(
            d["id"],
            d["step"],
            d.get("title", d["step"]),
            bool(d.get("dangerous")),
            bool(d.get("reversible")),
            list(d.get("nodes") or []),
            [Change.from_json(c) for c in d.get("changes") or []],
            list(br.get("nodes") or []),
            list(br.get("pools") or []),
            list(d.get("notes") or []),
            list(d.get("warnings") or []),
            list(d.get("blockers") or []),
            dict(d.get("reads") or {}),
        )


@dataclasses.dataclass
class ProgressEvent:
    """A step's progress: per node (`node` set) or overall; `message` is one short line."""

    step_id: str
    done: int
    total: int
    message: str = ""
    node: str = ""
    level: str = "info"  # info | warning | error


@dataclasses.dataclass
class Options:
    """How the steps run; the CLI flags and the wizard fill it."""

    state_namespace: str = "kube-system"
    batch_size: int = 0  # 0: the whole pool at once
    canary_node: str = ""
    drain_concurrency: int = 4
    drain_timeout: float = 300.0
    evict_retry: float = 5.0  # kubectl retries a PDB-blocked eviction every 5 s
    pod_gone_poll: float = 1.0
    wait_for_jobs: float = 0.0  # seconds to let Job pods finish before evicting them; 0: evict at once
    force_pods: tuple[str, ...] = ()  # "ns/name" deleted without eviction, only when named
    lease_seconds: int = 60
    prod_patterns: tuple[str, ...] = ("prod", "prd", "live")
    # The ownership switch (issue 9).
    accept_capacity_change: bool = False
    canary_image: str = ""
    canary_namespace: str = "default"
    switch_timeout: float = 300.0  # how long a switch step waits for the cluster to show its effect


class Context:
    """What a step needs: the cluster, the pool and its nodes, the audit log, state, options, progress and crash points.

    Every write of a step goes through `write`, which makes read-only a single switch, does the server-side dry
    run, records intent and outcome, and reuses a dangling intent left by a crash so each write is logged once.
    """

    def __init__(
        self,
        cluster: Any,
        pool: str,
        pool_label: str,
        nodes: list[dict],
        *,
        audit: Any,
        by: dict,
        options: Options | None = None,
        read_only: bool = False,
        plan_id: str = "",
        progress: Callable[[ProgressEvent], None] | None = None,
    ) -> None:
        self.cluster = cluster
        self.pool = pool
        self.pool_label = pool_label
        self.nodes = {n["metadata"]["name"]: n for n in nodes}
        self.audit = audit
        self.by = by
        self.options = options or Options()
        self.read_only = read_only
        self.plan_id = plan_id
        self.progress = progress or (lambda ev: None)
        self.dangling: dict[str, dict] = {}
        self.state: Any = None  # actions.state.PoolState, set by the runner
        self.rollback_records: dict[str, dict] = {}
        self._counts: dict[str, int] = {}
        crash = os.environ.get(CRASH_ENV, "")
        self.crash_points = {p.strip() for p in crash.split(",") if p.strip()}

    # ---------------------------------------------------------------- crash points (tests kill the process here)
    def crash(self, point: str) -> None:
        if point in self.crash_points:
            os._exit(97)

    # ---------------------------------------------------------------- writes
    async def write(
        self,
        step_id: str,
        change: Change,
        key: str,
        do: Callable[[bool], Awaitable[Any]],
        *,
        label: str,
        dry_run: bool = True,
    ) -> Any:
        """Make one write: dry run (when the API allows), intent, the write, outcome. `do(dry_run)` sends it."""
        if self.read_only:
            raise ReadOnlyError(f"{change.verb} {change.ref}")
        if dry_run:
            await do(True)
        n = self._counts[label] = self._counts.get(label, 0) + 1
        obj = {"kind": change.kind, "namespace": change.namespace, "name": change.name, "pool": self.pool}
        pending = self.dangling.pop(key, None)
        if pending is not None:
            write_id = pending["writeId"]
        else:
            write_id = self.audit.intent(
                key=key,
                plan_id=self.plan_id,
                step=step_id,
                obj=obj,
                verb=change.verb,
                before=change.before,
                after=change.after,
                command=change.command,
            )
        self.crash(f"{label}:{n}:intent")
        try:
            result = await do(False)
        except Exception as exc:
            if uncertain(exc):
                # Maybe made: the intent stays open, as after a crash. The step reads the object again and either
                # closes it (close_dangling) or sends the write again under this same write id.
                self.dangling[key] = {
                    "writeId": write_id,
                    "key": key,
                    "planId": self.plan_id,
                    "step": step_id,
                    "object": obj,
                    "verb": change.verb,
                    "after": change.after,
                }
                raise
            self.audit.outcome(
                write_id, key=key, plan_id=self.plan_id, step=step_id, obj=obj, result="failed", message=str(exc)
            )
            raise
        self.crash(f"{label}:{n}:sent")
        self.audit.outcome(
            write_id, key=key, plan_id=self.plan_id, step=step_id, obj=obj, result="applied", after=change.after
        )
        return result

    async def write_retrying(
        self,
        step_id: str,
        change: Change,
        key: str,
        prepare: Callable[[], Awaitable[Callable[[bool], Awaitable[Any]] | None]],
        *,
        label: str,
        dry_run: bool = True,
    ) -> None:
        """Make one write, reading the object again before each try: `prepare()` returns the sender built from what
        it read, or None when the cluster already shows the change (a crash's or a lost answer's intent is closed).
        A conflict, a 429 or a 5xx means another try after a backoff; anything else, or the last try, raises."""
        for attempt in range(WRITE_ATTEMPTS):
            do = await prepare()
            if do is None:
                self.close_dangling(key, step_id, change, True)
                return
            try:
                await self.write(step_id, change, key, do, label=label, dry_run=dry_run)
                return
            except Exception as exc:
                if not retryable(exc) or attempt == WRITE_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(backoff(exc, attempt))

    def close_dangling(self, key: str, step_id: str, change: Change, applied: bool) -> None:
        """A crash left this write's intent without an outcome: record what the cluster shows now."""
        rec = self.dangling.get(key)
        if rec is None or not applied:
            return
        del self.dangling[key]
        obj = {"kind": change.kind, "namespace": change.namespace, "name": change.name, "pool": self.pool}
        self.audit.outcome(
            rec["writeId"],
            key=key,
            plan_id=rec.get("planId", self.plan_id),
            step=step_id,
            obj=obj,
            result="applied",
            after=change.after,
            observed_on_resume=True,
        )

    # ---------------------------------------------------------------- helpers shared by steps
    def pool_of(self, node: dict) -> str:
        return ((node.get("metadata") or {}).get("labels") or {}).get(self.pool_label, "")

    def emit(self, step_id: str, done: int, total: int, message: str = "", node: str = "", level: str = "info") -> None:
        self.progress(ProgressEvent(step_id, done, total, message, node, level))


class Step:
    """A migration step. Subclasses set the class attributes and implement plan and apply."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    dangerous: ClassVar[bool] = False
    reversible: ClassVar[bool] = False

    def __init__(self, step_id: str, nodes: list[str]) -> None:
        self.id = step_id
        self.nodes = list(nodes)

    async def preconditions(self, ctx: Context) -> list[str]:
        """Sentences that stop the step before it starts (empty: it may run)."""
        return []

    async def plan(self, ctx: Context) -> StepPlan:
        raise NotImplementedError

    async def apply(self, ctx: Context, plan: StepPlan) -> list[str]:
        """Make the changes; returns problems (empty: done). Idempotent: only what is not already so is written."""
        raise NotImplementedError

    async def verify(self, ctx: Context) -> list[str]:
        """Sentences about what is not as the step left it (empty: verified)."""
        return []

    async def rollback_plan(self, ctx: Context, record: dict) -> StepPlan | None:
        """What rolling this step back would change, from what the step recorded; None when it cannot be undone."""
        return None

    async def observe(self, ctx: Context, intent: dict) -> bool | None:
        """Whether a write a crash left without outcome landed (True), did not (False), or is not this step's (None)."""
        return None

    def rollback_record(self, plan: StepPlan) -> dict | None:
        """What rollback will need, stored in the pool's ConfigMap before the step writes (lists merge across
        resumes)."""
        return None

    def new_plan(self, **kw: Any) -> StepPlan:
        return StepPlan(self.id, self.name, self.title, self.dangerous, self.reversible, list(self.nodes), **kw)


REGISTRY: dict[str, type[Step]] = {}


def register(cls: type[Step]) -> type[Step]:
    """Class decorator: make a step available by its name (to plans, `--step` and the wizard)."""
    if cls.name not in STEP_ORDER:
        raise ValueError(f"unknown step name {cls.name!r}; add it to STEP_ORDER")
    REGISTRY[cls.name] = cls
    return cls


# Modules whose steps register themselves on import; the ownership switch adds its own here.
STEP_MODULES = ["dragoman.actions.preflight", "dragoman.actions.cordon", "dragoman.actions.drain"]
# The ownership switch (issue 9); later modules override earlier registrations of the same name (preflight, uncordon).
STEP_MODULES += [
    "dragoman.actions.bridge_preflight",
    "dragoman.actions.exclude_plugin",
    "dragoman.actions.scope_driver",
    "dragoman.actions.device_class",
    "dragoman.actions.verify",
]


def _load_steps() -> None:
    import importlib

    for m in STEP_MODULES:
        try:
            importlib.import_module(m)
        except ModuleNotFoundError as exc:
            if exc.name != m:  # a step module that is not there yet is fine; a broken one is not
                raise


def step_class(name: str) -> type[Step]:
    _load_steps()
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(name) from None


def known_steps() -> list[str]:
    _load_steps()
    return [s for s in STEP_ORDER if s in REGISTRY]
