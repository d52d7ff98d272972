"""Running a migration plan: refusals (read-only, preflight, drift, another cluster), the lock, state, step by step with
verification, resume and rollback."""

from __future__ import annotations

import dataclasses
import getpass
import socket
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from dragoman.actions import operations
from dragoman.actions import plan as planmod
from dragoman.actions.audit import AuditLog
from dragoman.actions.lock import PoolLock
from dragoman.actions.registry import step_class
from dragoman.actions.state import PoolState
from dragoman.actions.steps import Context, Options, ProgressEvent, StepPlan
from dragoman.fleet.errors import ExitCode, ReadOnlyError, UserError
from dragoman.fleet.pools import pool_label_of


def operator(cluster: Any) -> dict:
    """Who runs dragoman, as recorded in the audit log, the lock and the annotations (never a credential)."""
    try:
        local = getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers
        local = "unknown"
    return {"name": f"{local}@{socket.gethostname()}", "kubeUser": cluster.user, "context": cluster.context_name}


async def pool_nodes(cluster: Any, pool: str, pool_label: str | None) -> tuple[str, list[dict]]:
    """The pool label (auto-detected when not given) and the pool's nodes; an unknown pool is an input error."""
    nodes, _ = await cluster.list_all("/api/v1/nodes")
    if not pool_label:
        pool_label = pool_label_of(nodes)
        if not pool_label:
            raise UserError("no node carries a known pool label; name it with --pool-label KEY.", ExitCode.INPUT)
    mine = [n for n in nodes if ((n.get("metadata") or {}).get("labels") or {}).get(pool_label) == pool]
    if not mine:
        found = {((n.get("metadata") or {}).get("labels") or {}).get(pool_label) for n in nodes}
        pools = sorted(str(p) for p in found if p is not None)
        raise UserError(
            f"no node has {pool_label}={pool}; the pools are: {', '.join(pools) or 'none'}.", ExitCode.INPUT
        )
    return pool_label, mine


@dataclasses.dataclass
class RunResult:
    exit_code: int
    problems: list[str]
    steps: dict[str, str]  # step id -> done | failed | skipped
    verified: dict[str, list[str]] = dataclasses.field(default_factory=dict)


class Runner:
    """One pool, one cluster: prepare a plan (forward, rollback or from a file), then run it."""

    def __init__(
        self,
        cluster: Any,
        pool: str,
        *,
        pool_label: str | None = None,
        options: Options | None = None,
        audit_path: str | None = None,
        read_only: bool = False,
        progress: Callable[[ProgressEvent], None] | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.cluster = cluster
        self.pool = pool
        self.pool_label = pool_label
        self.options = options or Options()
        self.read_only = read_only
        self.progress = progress or (lambda ev: None)
        self.warn = warn or (lambda msg: None)
        self.by = operator(cluster)
        self.audit = AuditLog(audit_path, user=self.by, context=cluster.context_name, cluster=cluster.identity)
        self.ctx: Context | None = None
        self.state: PoolState | None = None

    async def _context(self) -> Context:
        if self.ctx is None:
            label, nodes = await pool_nodes(self.cluster, self.pool, self.pool_label)
            self.pool_label = label
            self.state = await PoolState(self.cluster, self.pool, self.options.state_namespace).load()
            self.ctx = Context(
                self.cluster,
                self.pool,
                label,
                nodes,
                audit=self.audit,
                by=self.by,
                state=self.state,
                options=self.options,
                read_only=self.read_only,
                progress=self.progress,
            )
            recorded = (self.state.state.get("cluster") or {}).get("kubeSystemUID")
            if recorded and self.cluster.kube_system_uid and recorded != self.cluster.kube_system_uid:
                raise UserError(
                    f"refused: the state of pool {self.pool} was written by another cluster (kube-system uid "
                    f"{recorded}, this one is {self.cluster.kube_system_uid}); it was copied here, so it "
                    "cannot be resumed.",
                    ExitCode.REFUSED,
                )
        return self.ctx

    async def prepare(
        self, steps: list[str] | None = None, *, rollback: bool = False, plan_file: dict | None = None
    ) -> planmod.MigrationPlan:
        ctx = await self._context()
        if plan_file is not None:
            plan = planmod.MigrationPlan.from_json(plan_file)
            planmod.check_cluster(plan, ctx)
            ctx.plan_id = plan.id
            # Drift only means something before the plan's first write; once it runs, its own writes change what it
            # read.
            if not (self.state and self.state.plan_id == plan.id):
                drifted = await planmod.drift(plan, ctx)
                if drifted:
                    raise UserError(
                        "refused: the cluster changed since the plan was made: "
                        + "; ".join(drifted[:8])
                        + ". Make a new plan.",
                        ExitCode.REFUSED,
                    )
        elif rollback:
            plan = await planmod.build_rollback(ctx, self.state, steps)
        else:
            plan = await planmod.build(ctx, steps)
        ctx.dangling = self.audit.dangling(cluster_uid=self.cluster.kube_system_uid, pool=self.pool)
        # Only this plan's dangling writes are resumed; older ones are reported.
        stale = {k: r for k, r in ctx.dangling.items() if r.get("planId") != plan.id}
        for k in stale:
            ctx.dangling.pop(k)
        if stale:
            self.warn(
                f"the audit log has {len(stale)} write(s) of another plan with no outcome; see {self.audit.path}."
            )
        return plan

    async def suggest_batches(self) -> tuple[int, str, str]:
        """The batch size and canary node the wizard offers first (actions/plan.py suggested_batches)."""
        return await planmod.suggested_batches(await self._context())

    def pending_work(self, plan: planmod.MigrationPlan) -> bool:
        assert self.ctx is not None
        return plan.writes or bool(self.ctx.dangling)

    async def run(
        self,
        plan: planmod.MigrationPlan,
        *,
        only: Collection[str] | None = None,
        replanned: Callable[[StepPlan, StepPlan], Awaitable[bool]] | None = None,
    ) -> RunResult:
        """Run the plan's steps in order; with `only`, just those steps (the wizard's step mode: the pool's state then
        says "paused" until every step is done). A step planned again right before it runs (a drain: pods moved
        while earlier batches ran) whose fresh plan is not the confirmed one runs only once `replanned(confirmed,
        fresh)` says yes; without that callback the change is reported and the fresh plan runs."""
        ctx = await self._context()
        ctx.plan_id = plan.id
        if plan.blockers:
            raise UserError("refused by preflight, nothing was written: " + " ".join(plan.blockers), ExitCode.REFUSED)
        state = self.state
        assert state is not None
        # A step recorded done by any earlier plan (same step id) needs no bookkeeping either: zero writes.
        recorded_done = all(state.step_done(s.id) for s in plan.steps) and state.status != "running"
        if not self.pending_work(plan) and (recorded_done or state.cm is None or plan.rollback):
            if plan.rollback and state.cm is not None and state.status == "running" and not self.read_only:
                # A rollback killed after its last step: nothing is left to undo, but the state still says running.
                lock = self._lock()
                await lock.acquire()
                try:
                    await state.finish("rolled-back")
                finally:
                    await lock.release()
            return RunResult(int(ExitCode.OK), [], {s.id: "done" for s in plan.steps})
        if self.read_only:
            raise ReadOnlyError(f"migrating pool {self.pool}")
        lock = self._lock()
        await lock.acquire()
        results: dict[str, str] = {}
        problems: list[str] = []
        verified: dict[str, list[str]] = {}
        try:
            resumed = state.plan_id == plan.id and not plan.rollback
            await state.begin(plan.to_json(), self.cluster.identity, self.by)
            await self._close_landed(plan, ctx)
            for sp in plan.steps:
                if only is not None and sp.id not in only:
                    continue
                ctx.crash(f"before:{sp.id}")
                name = sp.step
                if resumed and state.step_done(sp.id) and not sp.changes:
                    # Finished by an earlier run of this plan: later steps may have changed what it verified (uncordon).
                    results[sp.id] = "done"
                    continue
                step = step_class(name)(sp.id, sp.nodes)
                pre = await step.preconditions(ctx)
                if pre:
                    problems.extend(pre)
                    results[sp.id] = "failed"
                    await state.set_step(sp.id, name, "failed", by=self.by, problems=pre)
                    break
                if step.replans():
                    fresh = await step.plan(ctx)
                    if change_refs(fresh) != change_refs(sp):
                        ok = True
                        if replanned is not None:
                            ok = await replanned(sp, fresh)
                        else:
                            self.warn(f"{sp.id}: {replan_text(sp, fresh)}; it runs as planned now.")
                        if not ok:
                            problems.append(f"{sp.id}: {replan_text(sp, fresh)}; nothing of it was written.")
                            results[sp.id] = "skipped"
                            break
                    sp.changes, sp.reads, sp.warnings = fresh.changes, fresh.reads, fresh.warnings
                record = None if plan.rollback else step.rollback_record(sp)
                await state.set_step(sp.id, name, "running", by=self.by, rollback=record)
                self.progress(ProgressEvent(sp.id, 0, max(1, len(sp.changes)), f"{sp.id}: started"))
                errs = await step.apply(ctx, sp)
                if not errs:
                    errs = await step.verify(ctx)
                    verified[sp.id] = errs
                if errs:
                    problems.extend(errs)
                    results[sp.id] = "failed"
                    await state.set_step(sp.id, name, "failed", by=self.by, problems=errs)
                    self.progress(ProgressEvent(sp.id, 0, 1, f"{sp.id}: failed", level="error"))
                    break
                results[sp.id] = "done"
                if plan.rollback:
                    original = sp.id.removeprefix("rollback:")
                    await state.set_step(original, state.step(original).get("step", name), "rolled-back", by=self.by)
                    await self._clear_rollback(state, original)
                    await state.set_step(sp.id, name, "done", by=self.by)
                else:
                    await state.set_step(sp.id, name, "done", by=self.by)
                self.progress(ProgressEvent(sp.id, 1, 1, f"{sp.id}: done, verified"))
                ctx.crash(f"after:{sp.id}")
            status = "failed" if problems else ("rolled-back" if plan.rollback else "done")
            if (
                not problems
                and only is not None
                and not all(
                    results.get(s.id) == "done" or state.step_done(s.id) or (plan.rollback and not s.changes)
                    for s in plan.steps
                )
            ):
                status = "paused"  # step mode: the next step waits for its own confirmation
            await state.finish(status)
        finally:
            await lock.release()
        return RunResult(int(ExitCode.PROBLEM if problems else ExitCode.OK), problems, results, verified)

    def _lock(self) -> PoolLock:
        return PoolLock(
            self.cluster,
            self.pool,
            self.options.state_namespace,
            self.by,
            seconds=self.options.lease_seconds,
            warn=self.warn,
        )

    async def _close_landed(self, plan: planmod.MigrationPlan, ctx: Context) -> None:
        """Writes a crash left without outcome that the cluster shows as made: record their outcome now, once."""
        by_id = {s.id: s for s in plan.steps}
        for key, rec in list(ctx.dangling.items()):
            sp = by_id.get(rec.get("step", ""))
            if sp is None:
                continue
            landed = await step_class(sp.step)(sp.id, sp.nodes).observe(ctx, rec)
            if landed:
                operations.close_dangling(ctx, key, sp.id, operations.dangling_record({"verb": "", **rec}))

    @staticmethod
    async def _clear_rollback(state: PoolState, step_id: str) -> None:
        await state.clear_rollback(step_id)


def change_refs(sp: StepPlan) -> list[tuple[str, str, str]]:
    """The objects a step's plan writes, in order, with the verb: what must not change between preview and write."""
    return [(c.verb, c.ref, str(c.detail.get("uid") or "")) for c in sp.changes]


def replan_text(confirmed: StepPlan, fresh: StepPlan) -> str:
    """What changed in a step's plan since it was confirmed, in a few words."""
    old, new = set(change_refs(confirmed)), set(change_refs(fresh))
    added = [f"{v} {r}" for v, r, _ in change_refs(fresh) if (v, r, _) not in old]
    gone = [f"{v} {r}" for v, r, _ in change_refs(confirmed) if (v, r, _) not in new]
    parts = []
    if added:
        parts.append("now also " + ", ".join(added[:4]) + (f" and {len(added) - 4} more" if len(added) > 4 else ""))
    if gone:
        parts.append("no longer " + ", ".join(gone[:4]) + (f" and {len(gone) - 4} more" if len(gone) > 4 else ""))
    return "its plan changed since it was confirmed: " + "; ".join(parts or ["the same objects in another order"])
