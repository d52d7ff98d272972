"""The step machinery: a step's plan (changes with diffs, the kubectl equivalent, the blast radius), apply, verify,
rollback, and the context every step runs in. The steps by name are in actions/registry.py; their writes go through
actions/operations.py."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from dragoman.actions.confirm import PROD_PATTERNS
from dragoman.fleet.backoff import delay as doubling
from dragoman.fleet.backoff import server_delay
from dragoman.fleet.cluster import ApiError, Unreachable
from dragoman.fleet.migration import STEP_ORDER

if TYPE_CHECKING:
    from dragoman.actions.audit import AuditLog
    from dragoman.actions.state import PoolState
    from dragoman.fleet.cluster import Cluster

CRASH_ENV = "DRAGOMAN_CRASH_AT"

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
    # A Status omits retryAfterSeconds when it is 0 (omitempty): 0 is "no hint", not "at once".
    return server_delay(after or None, doubling(attempt, 0.1, 3.0))


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


class Previewed(Protocol):
    def preview(self) -> Change: ...


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

    def add(self, op: Previewed) -> None:
        """Plan one operation (actions/operations.py): its preview is what the plan shows and a plan file keeps."""
        self.changes.append(op.preview())

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
    prod_patterns: tuple[str, ...] = PROD_PATTERNS
    # The ownership switch (issue 9).
    accept_capacity_change: bool = False
    canary_image: str = ""
    canary_namespace: str = "default"
    switch_timeout: float = 300.0  # how long a switch step waits for the cluster to show its effect
    # A Prometheus scraping the control plane (--prometheus URL): the before/after figures then carry its figures too.
    prometheus_url: str = ""


def _crash_points() -> set[str]:
    crash = os.environ.get(CRASH_ENV, "")
    return {p.strip() for p in crash.split(",") if p.strip()}


def _no_progress(ev: ProgressEvent) -> None:
    return None


@dataclasses.dataclass(eq=False)
class Context:
    """What a step needs: the cluster, the pool and its nodes, the audit log, the pool's state, options, progress and
    crash points. Every field is set when the runner makes it; the writes themselves go through actions/operations.py.
    """

    cluster: Cluster
    pool: str
    pool_label: str
    pool_nodes: dataclasses.InitVar[list[dict]]
    audit: AuditLog | None = dataclasses.field(kw_only=True)
    by: dict = dataclasses.field(kw_only=True)
    # The pool's ConfigMap (plan, step log, rollback records); None only where no run records anything (a test).
    state: PoolState | None = dataclasses.field(default=None, kw_only=True)
    options: Options = dataclasses.field(default_factory=Options, kw_only=True)
    read_only: bool = dataclasses.field(default=False, kw_only=True)
    plan_id: str = dataclasses.field(default="", kw_only=True)
    progress: Callable[[ProgressEvent], None] = dataclasses.field(default=_no_progress, kw_only=True)
    nodes: dict[str, dict] = dataclasses.field(init=False)
    # Intents without an outcome (a crash, a lost answer), by write key: the next write of that key reuses its id.
    dangling: dict[str, dict] = dataclasses.field(default_factory=dict, kw_only=True)
    write_counts: dict[str, int] = dataclasses.field(default_factory=dict, kw_only=True)
    crash_points: set[str] = dataclasses.field(default_factory=_crash_points, kw_only=True)
    # While a plan is built (nothing is written), reads every step makes alike are made once: `reading_once` sets it.
    # None otherwise: a step that applies reads the cluster afresh.
    reads: dict[str, Any] | None = dataclasses.field(default=None, kw_only=True)
    # While a plan is built: node name -> `spec.unschedulable` as the plan's earlier steps leave it (a rollback's
    # re-cordon before the uncordon of the cordon's rollback), so each step previews the writes it will send then.
    anticipated: dict[str, bool] = dataclasses.field(default_factory=dict, kw_only=True)

    def __post_init__(self, pool_nodes: list[dict]) -> None:
        self.nodes = {n["metadata"]["name"]: n for n in pool_nodes}

    @contextlib.contextmanager
    def reading_once(self) -> Iterator[None]:
        """Within the block, reads kept in `reads` are shared (the pool's picture: every pod, node, slice, class,
        claim and DaemonSet, which each step's plan and the preflight read); they are dropped when it ends."""
        outer = self.reads
        self.reads = {} if outer is None else outer
        try:
            yield
        finally:
            self.reads = outer

    # ---------------------------------------------------------------- crash points (tests kill the process here)
    def crash(self, point: str) -> None:
        if point in self.crash_points:
            os._exit(97)

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
    # What the step's verification proves once it passes: the line the wizard shows after the step ran.
    verifies: ClassVar[str] = ""
    # Its title when it undoes a step (the rollback's row): "Uncordon again", not "rollback:cordon — Cordon the nodes".
    undo_title: ClassVar[str] = ""

    # Planned again right before it runs (its objects move while earlier steps run: the pods a drain evicts), and the
    # fresh plan is what it sends; the runner asks again when the fresh plan is not the one confirmed.
    replan: ClassVar[bool] = False

    def __init__(self, step_id: str, nodes: list[str]) -> None:
        self.id = step_id
        self.nodes = list(nodes)

    def replans(self) -> bool:
        """Whether this step is planned again right before it runs (see `replan`)."""
        return self.replan

    @classmethod
    def timeout(cls, options: Options) -> float:
        """The longest the step waits for the cluster (0: it does not wait); the wizard shows it beside the elapsed
        time."""
        return 0.0

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
