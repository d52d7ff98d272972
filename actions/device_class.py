"""The device-class step: make exactly the right DeviceClass serve nvidia.com/gpu — adopt the winner when it is right,
else create or fix one after a server-side dry run — with the fleet-wide blast radius."""

from __future__ import annotations

import dataclasses

from dragoman.actions import ops
from dragoman.actions.capacity import CANONICAL_CLASS, CANONICAL_SELECTOR, class_problems, matching
from dragoman.actions.operations import DeviceClassWrite
from dragoman.actions.picture import Picture, driver_version, read_picture
from dragoman.actions.steps import Context, StepPlan
from dragoman.fleet.k8s import celenv
from dragoman.fleet.ownership import GPU

TYPE_CLAUSE = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"


@dataclasses.dataclass
class Decision:
    name: str  # the class that will serve nvidia.com/gpu
    expressions: list[str]  # its selectors after the step
    why: str
    change: DeviceClassWrite | None = None  # None: the class is adopted as it is
    problems: list[tuple[str, str]] = dataclasses.field(
        default_factory=list
    )  # (finding id, sentence) of the class as it is
    blockers: list[str] = dataclasses.field(default_factory=list)


def decide(pic: Picture) -> Decision:
    """Which class serves nvidia.com/gpu after the step, and the change that gets it there (None: adopt as is)."""
    winner = pic.serving_class()
    classes = pic.model.classes()
    version = driver_version(pic)
    if winner is None:
        existing = classes.get(CANONICAL_CLASS)
        body = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": CANONICAL_CLASS, "labels": {"app.kubernetes.io/managed-by": "dragoman"}},
            "spec": {"selectors": [{"cel": {"expression": CANONICAL_SELECTOR}}], "extendedResourceName": GPU},
        }
        if existing is not None:
            spec = dict(existing.raw.get("spec") or {})
            exprs = list(existing.expressions)
            probs = class_problems(exprs, version)
            if any(p[0] == "class-too-broad" for p in probs):
                spec["selectors"] = list(spec.get("selectors") or []) + [{"cel": {"expression": TYPE_CLAUSE}}]
                exprs.append(TYPE_CLAUSE)
            spec["extendedResourceName"] = GPU
            body = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {
                    "name": CANONICAL_CLASS,
                    "labels": (existing.raw.get("metadata") or {}).get("labels") or {},
                },
                "spec": spec,
            }
            d = Decision(
                CANONICAL_CLASS, exprs, "no class served nvidia.com/gpu; dragoman names it on the existing class"
            )
            d.change = DeviceClassWrite.to(CANONICAL_CLASS, existing.raw, body, d.why)
        else:
            d = Decision(
                CANONICAL_CLASS,
                [CANONICAL_SELECTOR],
                "no class served nvidia.com/gpu; dragoman creates the chart's class",
            )
            d.change = DeviceClassWrite.to(CANONICAL_CLASS, None, body, d.why)
        stale = [p for p in class_problems(d.expressions, version) if p[0] == "stale-attribute"]
        d.blockers += [f"DeviceClass {CANONICAL_CLASS}: {s} ({fid})." for fid, s in stale]
        return d
    c = classes[winner]
    exprs = list(c.expressions)
    probs = class_problems(exprs, version)
    naming = pic.model.classes_naming(GPU)
    why = (
        f"adopted: it serves nvidia.com/gpu today (newest of {len(naming)} naming it)"
        if len(naming) > 1
        else "adopted: it serves nvidia.com/gpu today"
    )
    d = Decision(winner, exprs, why, problems=probs)
    for fid, sentence in probs:
        if fid == "stale-attribute":
            d.blockers.append(
                f"DeviceClass {winner}, which serves nvidia.com/gpu, {sentence} ({fid}): every pod asking for "
                "nvidia.com/gpu on the pool would fail to schedule. Fix the selector before migrating."
            )
    if any(p[0] == "class-too-broad" for p in probs) and not d.blockers:
        spec = dict(c.raw.get("spec") or {})
        spec["selectors"] = list(spec.get("selectors") or []) + [{"cel": {"expression": TYPE_CLAUSE}}]
        body = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": winner, "labels": (c.raw.get("metadata") or {}).get("labels") or {}},
            "spec": spec,
        }
        d.expressions = exprs + [TYPE_CLAUSE]
        d.why = "updated: the type == 'gpu' clause added, so only whole GPUs serve nvidia.com/gpu"
        d.change = DeviceClassWrite.to(winner, c.raw, body, d.why)
    return d


def blast(pic: Picture, d: Decision) -> tuple[list[str], list[str], list[str]]:
    """(nodes, pools, refusals): every node already on DRA whose nvidia.com/gpu devices would change, and refusals
    for nodes of other pools that would lose whole GPUs."""
    if d.change is None:
        return [], [], []
    old_name = pic.serving_class()
    old_exprs = pic.class_expressions(old_name) if old_name else None
    nodes, pools, refusals = [], set(), []
    for view in pic.model.nodes():
        if view.allocatable_gpu > 0 or view.pool == pic.pool:
            continue
        devices = pic.published(view.name)
        if not devices:
            continue
        before = matching(devices, old_exprs, celenv.STORED)[0] if old_exprs is not None else 0
        after = matching(devices, d.expressions)[0]
        gpus = [x for x in devices if ((x.get("attributes") or {}).get("type") or {}).get("string") == "gpu"]
        lost_whole = (matching(gpus, old_exprs, celenv.STORED)[0] if old_exprs is not None else 0) - matching(
            gpus, d.expressions
        )[0]
        if before != after or old_name != d.name:
            nodes.append(view.name)
            pools.add(view.pool)
        if lost_whole > 0:
            refusals.append(
                f"node {view.name} of pool {view.pool}, already on DRA, would lose {lost_whole} GPU(s) "
                f"of nvidia.com/gpu through DeviceClass {d.name}"
            )
    return sorted(nodes), sorted(pools), refusals


class DeviceClassStep(ops.SwitchStep):
    """Exactly the right DeviceClass serves nvidia.com/gpu (usually the chart's, adopted as is)."""

    name = "device-class"
    title = "The DeviceClass serving nvidia.com/gpu"
    verifies = "the class the step chose serves nvidia.com/gpu, exactly as the step left it"
    undo_title = "Put the DeviceClass back as it was"
    dangerous = True
    reversible = True

    async def plan(self, ctx: Context) -> StepPlan:
        plan = self.new_plan()
        pic = await read_picture(ctx)
        d = decide(pic)
        plan.notes.append(f"DeviceClass {d.name} will serve nvidia.com/gpu: {d.why}.")
        for fid, sentence in d.problems:
            plan.warnings.append(f"{fid}: DeviceClass {d.name} {sentence}.")
        plan.blockers.extend(d.blockers)
        if d.change is not None:
            plan.add(d.change)
            nodes, pools, refusals = blast(pic, d)
            plan.blast_nodes = sorted(set(nodes) | set(pic.nodes))
            plan.blast_pools = sorted(set(pools) | {ctx.pool})
            if nodes:
                plan.warnings.append(
                    f"a DeviceClass is cluster-wide: nvidia.com/gpu changes on {len(nodes)} node(s) already on DRA "
                    f"(pools {', '.join(pools)})."
                )
            for r in refusals:
                plan.blockers.append(f"refused: {r}.")
            plan.notes.append("the class is written after a server-side dry run (dryRun=All).")
        return plan

    async def verify(self, ctx: Context) -> list[str]:
        if self.rolling_back:
            return []

        async def check() -> list[str]:
            pic = await read_picture(ctx)
            d = decide(pic)
            if d.change is not None:
                return [f"DeviceClass {d.name} is not yet as the step left it."]
            if pic.serving_class() != d.name:
                return [f"nvidia.com/gpu is served by {pic.serving_class()}, not {d.name}."]
            return []

        return await self.poll(ctx, check, timeout=30.0)
