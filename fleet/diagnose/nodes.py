"""Findings about nodes and pools (findings.md, "Nodes and pools"): both stacks on a node, a flapping plugin, the
DaemonSets' reach, missing slices, kubelet versions, sharing, and pools where the device plugin is fine."""

from __future__ import annotations

from collections.abc import Iterable

from dragoman.fleet import gpustack, k8s, nvidia_schema
from dragoman.fleet import ownership as own
from dragoman.fleet.diagnose.context import SMALL_POOL_NODES, Context, node_ref, plural, pod_ref
from dragoman.fleet.findings import WARNING, Finding, make_finding
from dragoman.fleet.migration import STEP_ORDER
from dragoman.fleet.model import (
    NodeView,
)


def _slices_text(v: NodeView) -> str:
    names = ", ".join(v.slices[:3]) + (" ..." if len(v.slices) > 3 else "")
    return f"ResourceSlice {names} publishes {plural(v.devices_gpu, 'device')} of driver {nvidia_schema.DRIVER} for it"


def stack_nodes(ctx: Context) -> Iterable[Finding]:
    for v in ctx.nodes.values():
        if not v.is_gpu:
            continue
        plugin_serving = v.allocatable_gpu > 0 or any(p.running for p in v.device_plugin)
        if v.mechanism == own.BOTH or (v.mechanism == own.FLAPPING and plugin_serving):
            ev = []
            if v.allocatable_gpu > 0:
                ev.append(f"node allocatable nvidia.com/gpu = {v.allocatable_gpu} (the device plugin's)")
            objs = [node_ref(v.name)]
            for p in v.device_plugin:
                objs.append(pod_ref(p.key))
                ev.append(f"device-plugin pod {p.key[0]}/{p.key[1]} is {p.phase} ({p.workload.describe()})")
            ev.append(_slices_text(v))
            ev += ctx.events("Node", "", v.name)
            yield make_finding(
                "both-stacks",
                objs,
                f"node {v.name}: the device plugin and the DRA driver both serve its GPUs",
                ev + ["nvidia.com/gpu pods get the device plugin's GPUs there, and claims can get the same GPUs again"],
                pool=v.pool,
                node=v.name,
            )
        if v.mechanism == own.FLAPPING:
            objs = [node_ref(v.name)]
            ev = []
            for p in v.device_plugin:
                if p.flapping:
                    objs.append(pod_ref(p.key))
                    ev.append(
                        f"device-plugin pod {p.key[0]}/{p.key[1]}: {p.flapping_reason}, {plural(p.restarts, 'restart')}"
                    )
                    ev += ctx.events("Pod", p.key[0], p.key[1])
            ev.append(f"node allocatable nvidia.com/gpu = {v.allocatable_gpu} now, capacity {v.capacity_gpu}")
            ev.append(_slices_text(v))
            yield make_finding(
                "plugin-flapping",
                objs,
                f"node {v.name}: the device plugin keeps restarting, so nvidia.com/gpu flips between it and DRA",
                ev,
                pool=v.pool,
                node=v.name,
            )


def daemonset_targets(ctx: Context) -> Iterable[Finding]:
    m = ctx.m
    for dk, w in sorted(m.daemonset_workloads().items()):
        ds = m.objects["DaemonSet"].get(dk)
        if ds is None:
            continue
        spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
        want = "dra" if w.role == "device-plugin" else "device-plugin"
        fid = "dp-targets-dra-pool" if w.role == "device-plugin" else "driver-targets-dp-pool"
        for pool in sorted(ctx.pools.values(), key=lambda p: p.name):
            if pool.target != want:
                continue
            hits = []
            for v in m.pool_nodes(pool.name):
                if not v.is_gpu:
                    continue
                if w.role == "device-plugin" and v.mechanism == own.DEVICE_PLUGIN and ctx.pool_migrating.get(pool.name):
                    # A node of a pool being migrated, not yet moved: the plugin serves it until its exclusion step.
                    continue
                if w.role == "dra-driver" and v.ownership in (own.DRA, own.MIGRATING):
                    # Nodes of the pool already moved: the driver is meant to serve them.
                    continue
                raw = m.objects["Node"].get(("", v.name)) or {}
                labels = w.selected_labels(v.labels)
                if k8s.pod_matches_node(spec, raw, labels=labels) and not k8s.untolerated_taints(
                    spec, raw, daemonset=True
                ):
                    hits.append(v)
            if not hits:
                continue
            names = [v.name for v in hits]
            ev = [
                (
                    f"DaemonSet {dk[0]}/{dk[1]} ({w.describe()}) selects {plural(len(names), 'node')} of pool "
                    f"{pool.name}: "
                )
                + ", ".join(names[:5])
                + (" ..." if len(names) > 5 else "")
            ]
            if w.deployed_by == "gpu-operator":
                missing = [v.name for v in hits if v.labels.get(gpustack.GPU_OPERATOR_DEPLOY_LABEL) != "false"]
                if missing:
                    ev.append(
                        f"{plural(len(missing), 'node')} without {gpustack.GPU_OPERATOR_DEPLOY_LABEL}=false "
                        f"(the operator fills a missing label with true): " + ", ".join(missing[:5])
                    )
            running = [v.name for v in hits if (v.device_plugin if w.role == "device-plugin" else v.dra_driver)]
            if running:
                ev.append(f"its pod runs on {', '.join(running[:5])}")
            if w.role == "device-plugin":
                summary = f"DaemonSet {dk[1]} still selects {plural(len(names), 'node')} of DRA pool {pool.name}"
            else:
                summary = f"DaemonSet {dk[1]} selects {plural(len(names), 'node')} of device-plugin pool {pool.name}"
            yield make_finding(
                fid,
                [("DaemonSet", dk[0], dk[1])] + [node_ref(n) for n in names],
                summary,
                ev,
                pool=pool.name,
                daemonset=f"{dk[0]}/{dk[1]}",
            )


def no_slices(ctx: Context) -> Iterable[Finding]:
    for v in ctx.nodes.values():
        if not v.is_gpu or v.devices_gpu > 0:
            continue
        pool = ctx.pools.get(v.pool)
        driver_here = [p for p in v.dra_driver]
        expected = (
            pool is not None and pool.target == "dra" and v.allocatable_gpu == 0 and v.mechanism != own.DEVICE_PLUGIN
        )
        if (
            expected
            and not driver_here
            and v.migration is not None
            and v.migration.in_progress
            and v.migration.step in STEP_ORDER
            and STEP_ORDER.index(v.migration.step) < STEP_ORDER.index("scope-driver")
        ):
            expected = False  # the driver is scoped to this node by a later step of the migration in progress
        if not (driver_here or expected or v.stale_slices):
            continue
        ev = []
        objs = [node_ref(v.name)]
        for p in driver_here:
            objs.append(pod_ref(p.key))
            ev.append(
                f"DRA driver pod {p.key[0]}/{p.key[1]} is {p.phase}{'' if p.ready else ', not ready'}"
                + (f", {plural(p.restarts, 'restart')}" if p.restarts else "")
            )
        if not driver_here:
            ev.append(f"no DRA driver pod runs on {v.name}, which is in DRA pool {v.pool}")
        if v.stale_slices:
            ev.append(
                f"only stale slices: {', '.join(v.stale_slices[:3])} (an older pool generation or an incomplete one)"
            )
        else:
            ev.append(f"no ResourceSlice of driver {nvidia_schema.DRIVER} for node {v.name}")
        ev.append(f"node allocatable nvidia.com/gpu = {v.allocatable_gpu}")
        ev += ctx.events("Node", "", v.name)
        yield make_finding(
            "no-slices", objs, f"node {v.name} should be on DRA but publishes no devices", ev, pool=v.pool, node=v.name
        )


def kubelets(ctx: Context) -> Iterable[Finding]:
    for pool in ctx.pools.values():
        nodes = [v for v in ctx.m.pool_nodes(pool.name) if v.is_gpu]
        for v in nodes:
            if v.kubelet is None or v.bridge_capable:
                continue
            if pool.target == "dra" or v.mechanism in (own.DRA, own.BOTH, own.FLAPPING):
                sev = "error"
                why = f"pool {pool.name} is served by DRA"
            elif ctx.pool_migrating.get(pool.name):
                sev = WARNING
                why = f"pool {pool.name} is being migrated to DRA"
            else:
                continue
            yield make_finding(
                "kubelet-too-old",
                [node_ref(v.name)],
                f"node {v.name} runs kubelet {v.kubelet_version}, without the extended-resource bridge, and {why}",
                [
                    f"node {v.name}: kubelet {v.kubelet_version} (the bridge needs v1.36 or newer)",
                    # Measured with the real kubelet v1.35.4 (tests/controlplane/test_real_kubelets_demo.py): its
                    # admission drops extended resources the node does not advertise, and with the bridge's gate off
                    # its DRA manager never prepares the claim in status.extendedResourceClaimStatus.
                    "such a kubelet admits an nvidia.com/gpu pod placed through DRA and runs it without the GPU; the "
                    "claim the scheduler made is never prepared and keeps its GPU reserved, idle",
                ],
                pool=pool.name,
                severity=sev,
            )
        versions = {v.name: v.kubelet for v in nodes if v.kubelet is not None}
        minors = {k[:2] for k in versions.values()}
        if len(minors) > 1:
            newest = max(versions.values())
            stragglers = sorted(n for n, k in versions.items() if k[:2] < newest[:2])
            spread = ", ".join(f"{c}× {ver}" for ver, c in sorted(pool.kubelet_versions.items()))
            target = next(ctx.nodes[n].kubelet_version for n, k in versions.items() if k == newest)
            yield make_finding(
                "kubelet-skew",
                [node_ref(n) for n in stragglers],
                f"pool {pool.name} mixes kubelet versions: {spread}",
                [f"node {n}: kubelet {ctx.nodes[n].kubelet_version}" for n in stragglers[:5]],
                pool=pool.name,
                version=target,
            )


def sharing(ctx: Context) -> Iterable[Finding]:
    for pool in ctx.pools.values():
        nodes = [v for v in ctx.m.pool_nodes(pool.name) if v.is_gpu]
        shared = [
            v
            for v in nodes
            if v.mechanism in (own.DEVICE_PLUGIN, own.BOTH, own.FLAPPING)
            and (
                v.replicas > 1
                or (v.sharing_strategy or "none") not in ("none", "")
                or (v.mig_strategy == "single" and v.capacity_gpu and "MIG" in (v.product or ""))
            )
        ]
        if not shared:
            continue
        ev = []
        for v in shared:
            if v.replicas > 1:
                ev.append(
                    f"node {v.name}: {v.sharing or 'time-slicing'} — nvidia.com/gpu capacity {v.capacity_gpu} "
                    f"for {v.gpu_count_label or v.capacity_gpu // v.replicas} physical GPUs"
                )
            elif v.mig_strategy == "single":
                ev.append(f"node {v.name}: MIG strategy single — nvidia.com/gpu counts MIG slices ({v.capacity_gpu})")
            else:
                ev.append(f"node {v.name}: sharing strategy {v.sharing_strategy}")
        yield make_finding(
            "sharing-capacity-change",
            [node_ref(v.name) for v in shared],
            f"pool {pool.name}: nvidia.com/gpu counts shared GPUs on {plural(len(shared), 'node')}; "
            f"through DRA it will count whole devices",
            ev,
            pool=pool.name,
        )


def migration_optional(ctx: Context) -> Iterable[Finding]:
    steering = ctx.pod_groups().steered_products
    for pool in ctx.pools.values():
        nodes = [v for v in ctx.m.pool_nodes(pool.name) if v.is_gpu]
        if not nodes or len(nodes) > SMALL_POOL_NODES or pool.target != "device-plugin":
            continue
        if any(v.mechanism != own.DEVICE_PLUGIN or v.sharing or v.mig_capacity or v.replicas > 1 for v in nodes):
            continue
        products = {v.product for v in nodes}
        if len(products) != 1 or None in products or any("MIG" in (p or "") for p in products):
            continue
        product = next(iter(products))
        if any(product in key.split(",") for key in steering):
            continue  # pods select this model: a tier DeviceClass would serve them better
        names = {v.name for v in nodes}
        if any((p.get("spec") or {}).get("resourceClaims") for n in names for p in ctx.m.pods_on_node(n)):
            continue
        gpus = sum(v.allocatable_gpu for v in nodes)
        yield make_finding(
            "migration-optional",
            [node_ref(v.name) for v in nodes],
            f"pool {pool.name}: {plural(len(nodes), 'node')} of identical {product} ({gpus} whole GPUs), "
            f"no sharing, no selection needs",
            [f"node {v.name}: {v.allocatable_gpu}× {v.product}, device plugin" for v in nodes[:4]],
            pool=pool.name,
        )
