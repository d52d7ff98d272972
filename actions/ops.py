"""The ownership switch's shared shape: node affinity edits (a pool added to or kept off a DaemonSet) and SwitchStep,
whose plan is a list of operations (actions/operations.py) applied idempotently with their inverses recorded first."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from dragoman.actions import operations
from dragoman.actions.operations import REQUIRED, copy
from dragoman.actions.steps import Context, Step, StepPlan

__all__ = ["REQUIRED", "SwitchStep", "option", "required_terms", "with_not_in", "with_pool", "without_pool"]


# ---------------------------------------------------------------- node affinity edits


def required_terms(pod_spec: dict) -> list[dict] | None:
    req = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(REQUIRED)
    return None if req is None else list(req.get("nodeSelectorTerms") or [])


def with_not_in(required: dict | None, key: str, value: str) -> dict:
    """The required node affinity with `key NotIn [value]` in every term (terms are OR-ed); created when absent."""
    req = copy(required) if required else {}
    terms = req.get("nodeSelectorTerms") or [{}]
    out = []
    for t in terms:
        t = copy(t)
        exprs = list(t.get("matchExpressions") or [])
        done = False
        for e in exprs:
            if e.get("key") == key and e.get("operator") == "NotIn":
                if value not in (e.get("values") or []):
                    e["values"] = list(e.get("values") or []) + [value]
                done = True
            elif e.get("key") == key and e.get("operator") == "In" and value in (e.get("values") or []):
                e["values"] = [v for v in e["values"] if v != value]
                if not e["values"]:
                    e["values"] = ["__dragoman-none__"]
                done = True
        if not done:
            exprs.append({"key": key, "operator": "NotIn", "values": [value]})
        t["matchExpressions"] = exprs
        out.append(t)
    req["nodeSelectorTerms"] = out
    return req


def with_pool(required: dict | None, key: str, value: str) -> dict | None:
    """The required node affinity extended to nodes with `key=value`: the pool added to each term's `In` on the key
    (other conditions kept), a NotIn on it lifted, or one term for the pool added; None when nothing restricts."""
    if not required:
        return None
    req = copy(required)
    terms = req.get("nodeSelectorTerms") or []
    touched = False
    for t in terms:
        for e in t.get("matchExpressions") or []:
            if e.get("key") != key:
                continue
            if e.get("operator") == "In" and value not in (e.get("values") or []):
                e["values"] = list(e.get("values") or []) + [value]
                touched = True
            elif e.get("operator") == "NotIn" and value in (e.get("values") or []):
                e["values"] = [v for v in e["values"] if v != value]
                touched = True
        t["matchExpressions"] = [
            e for e in t.get("matchExpressions") or [] if not (e.get("operator") == "NotIn" and not e.get("values"))
        ]
    if not touched:
        terms.append({"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]})
    req["nodeSelectorTerms"] = terms
    return req


def without_pool(required: dict | None, key: str, value: str) -> dict:
    """The required node affinity no longer selecting `key=value` (the reverse of with_pool where it added the pool)."""
    return with_not_in(required, key, value)


# ---------------------------------------------------------------- the switch steps' shared shape


def option(ctx: Context, name: str, default: Any) -> Any:
    """A switch option from Options when the CLI set it, else its default (Options predates the switch)."""
    return getattr(ctx.options, name, default)


class SwitchStep(Step):
    """A step whose plan is a list of data changes: apply makes each (recording its inverse first), verify polls
    until the cluster shows the effect, rollback applies the recorded inverses newest first."""

    reversible = True

    @classmethod
    def timeout(cls, options) -> float:
        return float(getattr(options, "switch_timeout", 300.0))

    @property
    def rolling_back(self) -> bool:
        return self.id.startswith("rollback:")

    async def apply(self, ctx: Context, plan: StepPlan) -> list[str]:
        mine = {f"{ctx.plan_id}/{self.id}/{c.ref}" for c in plan.changes}
        for key, rec in list(ctx.dangling.items()):
            # A write a crash left without outcome that the fresh plan no longer needs: the cluster shows it made.
            if rec.get("step") == self.id and key not in mine:
                operations.close_dangling(ctx, key, self.id, operations.dangling_record(rec))
        total = len(plan.changes)
        for i, change in enumerate(plan.changes, 1):
            op = operations.decode(change)
            if not op.sends:
                ctx.emit(self.id, i - 1, total, f"waiting: {change.detail.get('text')}", level="warning")
                continue
            if not self.rolling_back and ctx.state is not None and not ctx.read_only:
                inv = op.inverse()
                if inv is not None:
                    await ctx.state.set_step(
                        self.id, self.name, "running", by=ctx.by, rollback={"changes": [inv.preview().to_json()]}
                    )
            await operations.send(ctx, self.id, op, label=self.name)
            ctx.emit(self.id, i, total, f"{change.verb} {change.ref}")
        return []

    async def rollback_plan(self, ctx: Context, record: dict) -> StepPlan | None:
        from dragoman.actions.steps import Change

        ops = [operations.decode(Change.from_json(c)) for c in reversed(record.get("changes") or [])]
        if not ops:
            return None
        step = type(self)(f"rollback:{self.id}", [])
        plan = step.new_plan()
        plan.title = self.undo_title or f"Undo: {self.title.lower()}"
        for op in ops:
            if not await op.landed(ctx.cluster):
                plan.add(op)
        plan.nodes = sorted(ctx.nodes)
        plan.blast_nodes = sorted(ctx.nodes) if plan.changes else []
        plan.blast_pools = [ctx.pool] if plan.changes else []
        return plan

    async def poll(
        self, ctx: Context, check: Callable[[], Awaitable[list[str]]], timeout: float | None = None, what: str = ""
    ) -> list[str]:
        from dragoman.actions.gitops import wait_for

        t = option(ctx, "switch_timeout", 300.0) if timeout is None else timeout
        return await wait_for(
            check,
            timeout=t,
            poll=option(ctx, "switch_poll", 0.5),
            on_wait=lambda m: ctx.emit(self.id, 0, 0, f"waiting: {m}"),
        )
