"""The cordon and uncordon steps: `spec.unschedulable` on the pool's nodes, the migration annotation in the same patch.

Planned here (one Schedulable operation per node), previewed, sent and audited in actions/operations.py."""

from __future__ import annotations

import json

from dragoman.actions import operations
from dragoman.actions.operations import Schedulable
from dragoman.actions.steps import Context, Step, StepPlan
from dragoman.fleet.cluster import ApiError
from dragoman.fleet.migration import MIGRATION_ANNOTATION


def node_fingerprint(node: dict) -> str:
    """What a cordon plan depends on: the node still exists (same uid), its schedulability and pool."""
    md = node.get("metadata") or {}
    return f"{md.get('uid')}|{bool((node.get('spec') or {}).get('unschedulable'))}"


def migration_value(ctx: Context, step_id: str, step: str, state: str, started: str) -> str:
    return json.dumps(
        {
            "pool": ctx.pool,
            "step": step,
            "stepId": step_id,
            "state": state,
            "started": started,
            "by": ctx.by.get("name", ""),
            "plan": ctx.plan_id,
        },
        separators=(",", ":"),
    )


class _Schedulability(Step):
    """Plans one Schedulable operation per node not already so; apply sends each through operations.send."""

    target: bool = True
    verb_word = "cordon"

    async def plan(self, ctx: Context) -> StepPlan:
        plan = self.new_plan()
        for name in self.nodes:
            node = await ctx.cluster.get(f"/api/v1/nodes/{name}")
            ctx.nodes[name] = node
            plan.reads[f"Node/{name}"] = node_fingerprint(node)
            # As the plan's earlier steps leave the node (a rollback cordons again before it uncordons): the preview
            # is the write this step sends when it runs, not the one it would send now.
            now = bool((node.get("spec") or {}).get("unschedulable"))
            was = ctx.anticipated.get(name, now) if ctx.reads is not None else now  # anticipated only while planning
            if was != self.target:
                plan.add(Schedulable(name, self.target, was))
            if ctx.reads is not None:  # planning: the steps after this one see the node as it leaves it
                ctx.anticipated[name] = self.target
        plan.blast_nodes = [c.name for c in plan.changes]
        plan.blast_pools = [ctx.pool] if plan.changes else []
        return plan

    async def apply(self, ctx: Context, plan: StepPlan) -> list[str]:
        total = len(plan.changes)
        started = ctx.state.step_started(self.id) if ctx.state else ""
        state = "rolled-back" if self.id.startswith("rollback:") else "done"
        for i, change in enumerate(plan.changes, 1):
            op = Schedulable.from_change(change)
            # Where the migration of the node stands rides in the same patch (the Pools view reads it).
            op.annotations = {MIGRATION_ANNOTATION: migration_value(ctx, self.id, self.name, state, started)}
            await operations.send(ctx, self.id, op, label=self.name)
            ctx.emit(self.id, i, total, f"{self.verb_word}ed {change.name}", node=change.name)
        return []

    async def verify(self, ctx: Context) -> list[str]:
        out = []
        for name in self.nodes:
            node = await ctx.cluster.get(f"/api/v1/nodes/{name}")
            if bool((node.get("spec") or {}).get("unschedulable")) != self.target:
                out.append(f"node {name} is {'still schedulable' if self.target else 'still cordoned'}.")
        return out

    async def observe(self, ctx: Context, intent: dict) -> bool | None:
        obj = intent.get("object") or {}
        if obj.get("kind") != "Node":
            return None
        try:
            node = await ctx.cluster.get(f"/api/v1/nodes/{obj.get('name')}")
        except ApiError:
            return False
        return bool((node.get("spec") or {}).get("unschedulable")) == bool(
            ((intent.get("after") or {}).get("spec") or {}).get("unschedulable")
        )


class Cordon(_Schedulability):
    """Mark the pool's nodes (or a batch) unschedulable; DaemonSet pods, the device plugin included, keep running."""

    name = "cordon"
    title = "Cordon the nodes"
    dangerous = False
    reversible = True
    target = True
    verb_word = "cordon"
    verifies = "the nodes are cordoned: no new pod is placed there"
    undo_title = "Uncordon again"

    async def plan(self, ctx: Context) -> StepPlan:
        plan = await super().plan(ctx)
        already = [n for n in self.nodes if f"Node/{n}" in plan.reads and n not in plan.blast_nodes]
        if already:
            plan.notes.append(
                f"already cordoned, left as they are (and left cordoned by a rollback): {', '.join(already)}"
            )
        plan.notes.append("DaemonSet pods tolerate the cordon: the device plugin keeps running until it is excluded.")
        return plan

    def rollback_record(self, plan: StepPlan) -> dict | None:
        return {"cordoned": [c.name for c in plan.changes]}

    async def rollback_plan(self, ctx: Context, record: dict) -> StepPlan | None:
        # Only nodes this step cordoned go back; a node cordoned before dragoman came stays cordoned.
        # The uncordon the migration runs (the gated one): its rollback branch plans exactly these nodes back, and
        # the runner executes the plan with that class, by the step name the plan carries.
        from dragoman.actions.registry import step_class

        nodes = list(record.get("cordoned") or [])
        return await step_class("uncordon")(f"rollback:{self.id}", nodes).plan(ctx)


class Uncordon(_Schedulability):
    """Make the pool's nodes schedulable again (the last step of a migration, and the rollback of cordon)."""

    name = "uncordon"
    title = "Uncordon the nodes"
    dangerous = False
    reversible = True
    target = False
    verb_word = "uncordon"
    verifies = "the nodes are schedulable again"
    undo_title = "Cordon and drain again"
