"""The preflight step: RBAC for every verb the plan needs (SelfSubjectAccessReview), PDBs that will block the drain,
room for the evicted pods."""

from __future__ import annotations

import dataclasses
import json

from dragoman.actions.capacity import allocatable_count
from dragoman.actions.drain import gpu_request
from dragoman.actions.picture import read_picture
from dragoman.actions.steps import Context, Step, StepPlan
from dragoman.fleet.k8s import pod_matches_node, untolerated_taints
from dragoman.fleet.ownership import GPU


@dataclasses.dataclass(frozen=True)
class Access:
    verb: str
    resource: str
    group: str = ""
    subresource: str = ""
    namespace: str = ""

    def text(self) -> str:
        res = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        if self.group:
            res = f"{res}.{self.group}"
        where = f" in namespace {self.namespace}" if self.namespace else " (cluster-wide)"
        return f"{self.verb} {res}{where}"


def required_access(plans: list[StepPlan], state_namespace: str) -> list[Access]:
    """Every verb the plan's writes need, plus dragoman's own lock and state objects."""
    need: set[Access] = {
        Access("get", "leases", "coordination.k8s.io", namespace=state_namespace),
        Access("create", "leases", "coordination.k8s.io", namespace=state_namespace),
        Access("update", "leases", "coordination.k8s.io", namespace=state_namespace),
        Access("get", "configmaps", namespace=state_namespace),
        Access("create", "configmaps", namespace=state_namespace),
        Access("update", "configmaps", namespace=state_namespace),
        Access("patch", "nodes"),  # the migration annotation on every node of the pool
    }
    for p in plans:
        for c in p.changes:
            if c.kind == "Node" and c.verb == "patch":
                need.add(Access("patch", "nodes"))
            elif c.kind == "Pod" and c.verb == "evict":
                need.add(Access("create", "pods", subresource="eviction", namespace=c.namespace))
                need.add(Access("get", "pods", namespace=c.namespace))
            elif c.kind == "Pod" and c.verb == "delete":
                need.add(Access("delete", "pods", namespace=c.namespace))
    return sorted(need, key=lambda a: (a.resource, a.subresource, a.verb, a.namespace))


async def missing_access(ctx: Context, needs: list[Access]) -> list[Access]:
    """The accesses a SelfSubjectAccessReview denies (SSARs do not change the cluster)."""
    out = []
    for a in needs:
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {
                "resourceAttributes": {
                    "verb": a.verb,
                    "group": a.group,
                    "resource": a.resource,
                    "subresource": a.subresource,
                    "namespace": a.namespace,
                }
            },
        }
        ans = await ctx.cluster.request(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body, retry=True
        )
        if not (ans.get("status") or {}).get("allowed"):
            out.append(a)
    return out


def _pdb_allowed(pdb: dict) -> int | None:
    st = pdb.get("status") or {}
    v = st.get("disruptionsAllowed")
    return int(v) if isinstance(v, int) else None


async def pdb_warnings(ctx: Context, plans: list[StepPlan]) -> list[str]:
    """PodDisruptionBudgets that allow fewer disruptions than the drain needs: the drain will wait on them."""
    pdbs, _ = await ctx.cluster.list_all("/apis/policy/v1/poddisruptionbudgets")
    by_key = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pdbs}
    wanted: dict[tuple[str, str], int] = {}
    for p in plans:
        for c in p.changes:
            if c.kind == "Pod" and c.verb == "evict":
                for name in filter(None, (c.detail.get("pdb") or "").split(",")):
                    wanted[(c.namespace, name)] = wanted.get((c.namespace, name), 0) + 1
    out = []
    for (ns, name), n in sorted(wanted.items()):
        pdb = by_key.get((ns, name))
        allowed = _pdb_allowed(pdb) if pdb else None
        if allowed is not None and allowed < n:
            spec = (pdb or {}).get("spec") or {}
            rule = (
                f"minAvailable {spec['minAvailable']}"
                if "minAvailable" in spec
                else f"maxUnavailable {spec.get('maxUnavailable')}"
            )
            out.append(
                f"PodDisruptionBudget {ns}/{name} ({rule}) allows {allowed} disruption(s) now and the drain evicts {n} "
                "of its pods: the drain will wait for replacements to become ready, up to its timeout."
            )
    return out


def _free_gpus(node: dict, pods: list[dict]) -> int:
    alloc = ((node.get("status") or {}).get("allocatable") or {}).get(GPU)
    try:
        total = int(alloc or 0)
    except (TypeError, ValueError):
        total = 0
    used = sum(gpu_request(p) for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
    return total - used


def _no_allocatable(node: dict | None) -> bool:
    alloc = ((node or {}).get("status") or {}).get("allocatable") or {}
    return str(alloc.get(GPU) or "0") in ("0", "")


async def room_warnings(ctx: Context, plans: list[StepPlan]) -> list[str]:
    """Whether the nodes outside the drained batch have free `nvidia.com/gpu` for the GPU pods the drain evicts."""
    evicted = [
        c
        for p in plans
        for c in p.changes
        if c.kind == "Pod" and c.verb in ("evict", "delete") and c.detail.get("gpus")
    ]
    if not evicted:
        return []
    drained = {n for p in plans if p.step in ("cordon", "drain") for n in p.nodes}
    # The plan's picture (every node and pod, read once for all of the plan's steps).
    pic = await read_picture(ctx)
    nodes, pods = pic.objects["Node"], pic.objects["Pod"]
    by_node: dict[str, list[dict]] = {}
    for pod in pods:
        by_node.setdefault((pod.get("spec") or {}).get("nodeName") or "", []).append(pod)
    pod_by_key = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}
    node_by_name = {n["metadata"]["name"]: n for n in nodes}
    free = {
        n["metadata"]["name"]: _free_gpus(n, by_node.get(n["metadata"]["name"], []))
        for n in nodes
        if n["metadata"]["name"] not in drained and not (n.get("spec") or {}).get("unschedulable")
    }
    # Nodes whose nvidia.com/gpu is served through DRA (no allocatable, a class serves the name): what the allocator
    # could give a bridged pod now (free, untainted: the scheduler's claim has no tolerations, counters left).
    serving_obj = None
    if pic.objects.get("ResourceSlice"):
        serving = pic.serving_class()
        serving_obj = next(
            (c for c in pic.objects["DeviceClass"] if (c.get("metadata") or {}).get("name") == serving), None
        )
    if serving_obj is not None:
        for name in free:
            if free[name] <= 0 and _no_allocatable(node_by_name[name]) and pic.published(name):
                counted, _ = allocatable_count(pic, name, serving_obj, holding=True)
                free[name] = counted or 0
    order = {name: i for i, name in enumerate(free)}
    eligible_by: dict[str, list[str]] = {}
    homeless: list[str] = []
    gpus_short = 0
    for c in sorted(evicted, key=lambda c: -int(c.detail.get("gpus") or 0)):
        found = pod_by_key.get((c.namespace, c.name))
        if found is None:
            continue
        want = int(c.detail.get("gpus") or 0)
        spec = found.get("spec") or {}
        # Which nodes a pod may go to depends only on these fields (pod_matches_node, untolerated_taints): the pods of
        # one template are held against the fleet's nodes once, not once each (4,000 evicted pods x 4,500 nodes at
        # the envelope took a minute).
        sig = json.dumps(
            [spec.get("nodeSelector"), spec.get("affinity"), spec.get("tolerations")], sort_keys=True, default=str
        )
        eligible = eligible_by.get(sig)
        if eligible is None:
            eligible = eligible_by[sig] = [
                n
                for n in free
                if pod_matches_node(spec, node_by_name[n]) and not untolerated_taints(spec, node_by_name[n])
            ]
        # First fit, nodes taken by free GPUs, fewest first (ties in the fleet's order).
        best = min(((free[n], order[n], n) for n in eligible if free[n] >= want), default=None)
        if best is not None:
            free[best[2]] -= want
        else:
            homeless.append(f"{c.namespace}/{c.name} ({want} GPU{'s' if want > 1 else ''})")
            gpus_short += want
    if not homeless:
        return []
    shown = ", ".join(homeless[:6]) + (f" and {len(homeless) - 6} more" if len(homeless) > 6 else "")
    return [
        f"the rest of the fleet has no room for {len(homeless)} evicted GPU pod(s) ({gpus_short} GPUs by the device "
        f"plugin's count, where they may run): {shown}; they will stay Pending until the pool is back."
    ]


class Preflight(Step):
    """Checks before anything is written: RBAC, blocking PDBs, room for the evicted pods. Writes nothing."""

    name = "preflight"
    title = "Preflight checks"
    verifies = "RBAC for every write, PodDisruptionBudgets and room were read; nothing blocks the plan"
    dangerous = False
    reversible = False

    async def plan(self, ctx: Context) -> StepPlan:
        plan = self.new_plan()
        plan.notes.append(
            "reads only: RBAC through SelfSubjectAccessReview, PodDisruptionBudgets, free GPUs elsewhere."
        )
        return plan

    async def check(self, ctx: Context, plans: list[StepPlan], plan: StepPlan) -> None:
        """Fill the preflight plan's blockers (RBAC) and warnings (PDBs, room) from the other steps' plans."""
        missing = await missing_access(ctx, required_access(plans, ctx.options.state_namespace))
        if missing:
            plan.blockers.append(f"user {ctx.cluster.user!r} may not: " + "; ".join(a.text() for a in missing) + ".")
        plan.warnings.extend(await pdb_warnings(ctx, plans))
        plan.warnings.extend(await room_warnings(ctx, plans))

    async def apply(self, ctx: Context, plan: StepPlan) -> list[str]:
        return list(plan.blockers)
