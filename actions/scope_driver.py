"""The scope-driver step: install the NVIDIA DRA driver or extend its kubelet plugin to the pool (helm when a release
owns it, the GitOps source, or a DaemonSet patch), then wait for its pods and slices."""

from __future__ import annotations

from dragoman.actions import gitops, helm, ops
from dragoman.actions.operations import GitOpsWait, HelmRelease, WorkloadAffinity
from dragoman.actions.picture import Picture, read_picture
from dragoman.actions.steps import Context, StepPlan
from dragoman.fleet import podstate

GPU_OPERATOR_DRIVER_ROOT = "/run/nvidia/driver"
GKE_DRIVER_ROOT = "/home/kubernetes/bin/nvidia"


def driver_root(pic: Picture) -> str:
    """nvidiaDriverRoot: what the running driver uses, else GPU Operator-managed drivers, GKE, or `/`."""
    if pic.driver is not None:
        for c in pic.driver.pod_spec.get("containers") or []:
            for e in c.get("env") or []:
                if e.get("name") == "NVIDIA_DRIVER_ROOT" and e.get("value"):
                    return e["value"]
    if any(st.workload.deployed_by == "gpu-operator" for st in pic.device_plugins) and any(
        ((n.get("metadata") or {}).get("labels") or {}).get("nvidia.com/gpu.deploy.driver") == "true"
        for n in pic.nodes.values()
    ):
        return GPU_OPERATOR_DRIVER_ROOT
    if any(
        "cloud.google.com/gke-nodepool" in ((n.get("metadata") or {}).get("labels") or {}) for n in pic.nodes.values()
    ):
        return GKE_DRIVER_ROOT
    return "/"


def required_values(pic: Picture, values: dict) -> dict:
    """The chart's settings a scoped install needs: gpuResourcesEnabledOverride (the chart refuses gpus.enabled
    without it) and nvidiaDriverRoot when not already set."""
    out: dict = {"gpuResourcesEnabledOverride": True}
    if "nvidiaDriverRoot" not in values:
        out["nvidiaDriverRoot"] = driver_root(pic)
    return out


def kubelet_plugin_affinity(pool_label: str, pools: list[str]) -> dict:
    return {
        "nodeAffinity": {
            ops.REQUIRED: {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]},
                            {"key": pool_label, "operator": "In", "values": sorted(pools)},
                        ]
                    }
                ]
            }
        }
    }


async def plan_changes(ctx: Context, pic: Picture, plan: StepPlan) -> None:
    pool, key = ctx.pool, ctx.pool_label
    st = pic.driver
    if st is None:
        values = {"kubeletPlugin": {"affinity": kubelet_plugin_affinity(key, [pool])}}
        values.update(required_values(pic, {}))
        if helm.helm_binary() is None:
            plan.blockers.append(
                f"the NVIDIA DRA driver is not installed and helm is not on PATH: install chart "
                f"{helm.DRA_CHART} {helm.DRA_CHART_VERSION} with gpuResourcesEnabledOverride=true and "
                f"its kubelet plugin scoped to pool {pool}, then run again."
            )
            return
        op = HelmRelease(
            helm.DRA_CHART, helm.DRA_CHART, helm.DRA_CHART, helm.DRA_CHART_VERSION, values, {}, install=True
        )
        plan.add(op.with_command(ctx.cluster))
        return
    w = st.workload
    if all(pic.selects(st, n) for n in pic.nodes.values()):
        plan.notes.append(f"{st.ref} ({w.describe()}) already selects every node of the pool.")
        return
    sel = st.pod_spec.get("nodeSelector") or {}
    if sel and not all(
        all(((n.get("metadata") or {}).get("labels") or {}).get(k) == v for k, v in sel.items())
        for n in pic.nodes.values()
    ):
        plan.blockers.append(
            f"{st.ref} places its pods with nodeSelector {sel}, which the pool's nodes do not all carry; "
            "label the nodes or move the selector to node affinity first."
        )
        return
    req = ((st.pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(ops.REQUIRED)
    who = gitops.owner(st.ds)
    if who:
        text = f"add {pool} to the {key} In values of every nodeSelectorTerm of the kubelet plugin's node affinity"
        plan.add(GitOpsWait("DaemonSet", w.namespace, w.name, who, text))
        plan.warnings.append(gitops.instructions(who, "DaemonSet", w.namespace, w.name, text))
        return
    rel = helm.release_of(st.ds)
    if rel and helm.helm_binary():
        release, rns = rel
        values = await helm.get_values(ctx.cluster, release, rns)
        info = await helm.release_info(ctx.cluster, release, rns)
        chart, version = (
            helm.split_chart((info or {}).get("chart") or "") if info else (helm.chart_of(st.ds) or ("", ""))
        )
        base = (((values.get("kubeletPlugin") or {}).get("affinity") or {}).get("nodeAffinity") or {}).get(
            ops.REQUIRED
        ) or req
        new_req = ops.with_pool(base, key, pool) or base
        patch = {"kubeletPlugin": {"affinity": {"nodeAffinity": {ops.REQUIRED: new_req}}}}
        patch.update(required_values(pic, values))
        new_values = helm.merged(values, patch)
        shown = ("kubeletPlugin", "gpuResourcesEnabledOverride", "nvidiaDriverRoot")
        op = HelmRelease(release, rns, chart, version, new_values, values, shown=shown)
        plan.add(op.with_command(ctx.cluster))
        return
    if rel:
        plan.warnings.append(
            f"{st.ref} belongs to Helm release {rel[0]} but helm is not on PATH: dragoman patches the "
            "DaemonSet; put the same affinity in the release's kubeletPlugin.affinity value."
        )
    new_req = ops.with_pool(req, key, pool)
    if new_req is None:
        plan.notes.append(f"{st.ref} has no required node affinity; nothing keeps it off the pool.")
        return
    plan.add(WorkloadAffinity.of_daemonset(st.ds, new_req, f"extend the kubelet plugin to pool {pool}"))


class ScopeDriver(ops.SwitchStep):
    """The DRA driver's kubelet plugin runs on every node of the pool and publishes its devices."""

    name = "scope-driver"
    title = "Scope the DRA driver to the pool"
    verifies = "the DRA driver runs on every node of the pool and publishes its ResourceSlices"
    undo_title = "Take the DRA driver off the pool again"
    dangerous = True
    reversible = True

    async def plan(self, ctx: Context) -> StepPlan:
        plan = self.new_plan()
        pic = await read_picture(ctx)
        await plan_changes(ctx, pic, plan)
        plan.blast_nodes = sorted(pic.nodes) if plan.changes else []
        plan.blast_pools = [ctx.pool] if plan.changes else []
        plan.notes.append(
            "done when a driver pod is Running and a ResourceSlice with devices is published for every node of "
            "the pool."
        )
        return plan

    async def verify(self, ctx: Context) -> list[str]:
        if self.rolling_back:
            return await self.poll(ctx, lambda: driver_gone(ctx))
        return await self.poll(ctx, lambda: driver_serving(ctx))


async def driver_serving(ctx: Context) -> list[str]:
    pic = await read_picture(ctx)
    out = []
    for n in sorted(pic.nodes):
        if not any(podstate.pod_running(p) for p in pic.driver_pods(n)):
            out.append(f"no DRA driver pod is Running on {n} yet.")
        elif not pic.published(n):
            out.append(f"node {n} publishes no ResourceSlice with devices yet.")
    return out


async def driver_gone(ctx: Context) -> list[str]:
    pic = await read_picture(ctx)
    out = []
    for n in sorted(pic.nodes):
        if pic.driver_pods(n):
            out.append(f"a DRA driver pod still runs on {n}.")
        elif pic.published(n):
            out.append(f"node {n} still publishes DRA devices.")
    return out
