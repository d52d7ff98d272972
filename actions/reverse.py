"""Reverse migration: the rollback of uncordon (cordon and drain the pool again), so a whole-switch rollback runs in a
never-both order — pods off, driver off the pool, then the device plugin back, then uncordon."""

from __future__ import annotations

from dragoman.actions.cordon import Cordon
from dragoman.actions.drain import Drain
from dragoman.actions.steps import Context, StepPlan


async def recordon_plan(ctx: Context, step_id: str, nodes: list[str]) -> StepPlan:
    """Undo an uncordon: cordon the nodes again and evict the pods that run on DRA claims there, so nothing holds a
    GPU through DRA when the device plugin comes back."""
    from dragoman.actions.verify import GatedUncordon

    step = GatedUncordon(f"rollback:{step_id}", nodes)
    plan = step.new_plan()
    plan.title = "Cordon and drain again"
    # One step id for both halves: the audit log names the step the preview showed.
    cordon = await Cordon(step.id, nodes).plan(ctx)
    drain = await Drain(step.id, nodes).plan(ctx)
    plan.changes = cordon.changes + drain.changes
    plan.reads = {**cordon.reads, **drain.reads}
    plan.warnings = drain.warnings
    gpu_pods = sum(1 for c in drain.changes if c.detail.get("gpus"))
    plan.notes.append(
        f"the pool goes back to the device plugin: {gpu_pods} GPU pod(s) are evicted so that none keeps a DRA "
        "device while the plugin returns; their controllers recreate them once the pool is uncordoned."
    )
    plan.blast_nodes = sorted(nodes)
    plan.blast_pools = [ctx.pool]
    plan.dangerous = True
    return plan


async def apply_recordon(ctx: Context, step_id: str, plan: StepPlan) -> list[str]:
    """The writes the plan shows, in its order: the cordons, then the evictions."""
    cordon = Cordon(step_id, plan.nodes)
    cp = cordon.new_plan(changes=[c for c in plan.changes if c.kind == "Node"])
    problems = await cordon.apply(ctx, cp)
    if problems:
        return problems
    drain = Drain(step_id, plan.nodes)
    dp = drain.new_plan(changes=[c for c in plan.changes if c.verb in ("evict", "delete")])
    return await drain.apply(ctx, dp)
