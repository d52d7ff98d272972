"""The exclude-device-plugin step: take the pool's GPUs away from the device plugin by the mechanism that manages it
(GPU Operator label, helm values, DaemonSet affinity, or the GitOps source)."""

from __future__ import annotations

from dragoman.actions import gitops, helm, ops
from dragoman.actions.operations import GitOpsWait, HelmRelease, NodeLabel, WorkloadAffinity, same
from dragoman.actions.picture import Picture, Stack, read_picture
from dragoman.actions.steps import Context, StepPlan
from dragoman.fleet import gpustack

LABEL = gpustack.GPU_OPERATOR_DEPLOY_LABEL
# How each mechanism keeps a device plugin off the pool, as the plan's note says it.
_EXCLUDED_BY = {
    "gitops": "its GitOps source",
    "node-label": "the GPU Operator deploy label",
    "helm": "a helm upgrade of its release",
    "daemonset": "its node affinity",
}


def mechanism(st: Stack) -> str:
    """gitops | node-label | helm | daemonset: how this device plugin is kept off a pool."""
    if gitops.owner(st.ds):
        return "gitops"
    if st.workload.deployed_by == "gpu-operator":
        return "node-label"  # the operator reverts edits of its DaemonSet; it honours the deploy label
    if helm.release_of(st.ds) and helm.helm_binary():
        return "helm"
    return "daemonset"


async def plan_changes(ctx: Context, pic: Picture, plan: StepPlan) -> None:
    """Fill `plan` with what excludes every device plugin that selects or runs on the pool."""
    pool, key = ctx.pool, ctx.pool_label
    for st in pic.device_plugins:
        how = mechanism(st)
        w = st.workload
        plan.notes.append(f"{st.ref} ({w.describe()}): excluded by {_EXCLUDED_BY[how]}.")
        if how == "node-label":
            for name in sorted(pic.nodes):
                old = ((pic.nodes[name].get("metadata") or {}).get("labels") or {}).get(LABEL)
                if old != "false":
                    plan.add(NodeLabel(name, LABEL, old, "false"))
            plan.notes.append(
                f"put {LABEL}=false in the node template of pool {pool} too, so nodes an autoscaler adds later "
                "stay off the device plugin (the operator sets a missing label to true)."
            )
            continue
        req = ((st.pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(ops.REQUIRED)
        new_req = ops.with_not_in(req, key, pool)
        if same(new_req, req) or not any(pic.selects(st, n) for n in pic.nodes.values()):
            continue
        if how == "gitops":
            who = gitops.owner(st.ds) or "GitOps"
            text = (
                f"add {{key: {key}, operator: NotIn, values: [{pool}]}} to every nodeSelectorTerm of "
                f"{w.namespace}/{w.name}'s required node affinity"
            )
            plan.add(GitOpsWait("DaemonSet", w.namespace, w.name, who, text))
            plan.warnings.append(gitops.instructions(who, "DaemonSet", w.namespace, w.name, text))
            continue
        if how == "helm":
            release, rns = helm.release_of(st.ds)  # type: ignore[misc]
            values = await helm.get_values(ctx.cluster, release, rns)
            info = await helm.release_info(ctx.cluster, release, rns)
            chart, version = (
                helm.split_chart((info or {}).get("chart") or "") if info else (helm.chart_of(st.ds) or ("", ""))
            )
            base_req = (((values.get("affinity") or {}).get("nodeAffinity") or {}).get(ops.REQUIRED)) or req
            new_values = helm.merged(
                values, {"affinity": {"nodeAffinity": {ops.REQUIRED: ops.with_not_in(base_req, key, pool)}}}
            )
            op = HelmRelease(release, rns, chart, version, new_values, values, shown=("affinity",))
            plan.add(op.with_command(ctx.cluster))
            continue
        owned = helm.release_of(st.ds)
        if owned:
            plan.warnings.append(
                f"{st.ref} belongs to Helm release {owned[0]} but helm is not on PATH: "
                "dragoman patches the DaemonSet; put the same NotIn in the release's `affinity` value, "
                "or the next helm upgrade brings the plugin back."
            )
        plan.add(WorkloadAffinity.of_daemonset(st.ds, new_req, f"exclude pool {pool}"))


class ExcludeDevicePlugin(ops.SwitchStep):
    """No device-plugin pod on the pool and no allocatable nvidia.com/gpu, by the right mechanism."""

    name = "exclude-device-plugin"
    title = "Exclude the device plugin from the pool"
    verifies = "no device-plugin pod runs on the pool and its nodes report no allocatable nvidia.com/gpu"
    undo_title = "Let the device plugin back"
    dangerous = True
    reversible = True

    async def plan(self, ctx: Context) -> StepPlan:
        plan = self.new_plan()
        pic = await read_picture(ctx)
        if not pic.device_plugins:
            plan.notes.append("no device-plugin DaemonSet selects or runs on this pool.")
        await plan_changes(ctx, pic, plan)
        plan.blast_nodes = sorted(pic.nodes) if plan.changes else []
        plan.blast_pools = [ctx.pool] if plan.changes else []
        plan.notes.append(
            "done when no device-plugin pod runs on the pool and allocatable nvidia.com/gpu is 0 or absent "
            "(seconds; capacity follows after the kubelet's 5-minute grace)."
        )
        return plan

    async def verify(self, ctx: Context) -> list[str]:
        if self.rolling_back:
            return await self.poll(ctx, lambda: plugin_back(ctx))
        return await self.poll(
            ctx,
            lambda: plugin_gone(ctx),
            timeout=ops.option(ctx, "gitops_timeout", 600.0) if await _gitops_pending(ctx) else None,
        )


async def _gitops_pending(ctx: Context) -> bool:
    pic = await read_picture(ctx)
    return any(mechanism(st) == "gitops" for st in pic.device_plugins)


async def plugin_gone(ctx: Context) -> list[str]:
    pic = await read_picture(ctx)
    out = []
    for n in sorted(pic.nodes):
        pods = pic.plugin_pods(n)
        if pods:
            out.append(
                f"device-plugin pod {pods[0]['metadata']['namespace']}/{pods[0]['metadata']['name']} still runs on {n}."
            )
        elif pic.allocatable(n) > 0:
            out.append(f"node {n} still reports allocatable nvidia.com/gpu {pic.allocatable(n)}.")
    return out


async def plugin_back(ctx: Context) -> list[str]:
    pic = await read_picture(ctx)
    out = []
    for n in sorted(pic.nodes):
        if not [p for p in pic.plugin_pods(n) if (p.get("status") or {}).get("phase") == "Running"]:
            out.append(f"no device-plugin pod runs on {n} yet.")
        elif pic.allocatable(n) == 0:
            out.append(f"node {n} reports no allocatable nvidia.com/gpu yet.")
    return out
