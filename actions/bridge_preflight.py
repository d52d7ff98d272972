"""The switch's preflight items (the bridge served, kubelets, how each stack is managed, node prerequisites, sharing,
gangs, migration-optional) and the capacity gate, added to the plan's preflight."""

from __future__ import annotations

import re

from dragoman.actions import capacity as cap
from dragoman.actions import picture
from dragoman.actions import preflight as base
from dragoman.actions.exclude_plugin import mechanism
from dragoman.actions.steps import Context, StepPlan
from dragoman.fleet.cluster import RETRYABLE_STATUS, ApiError
from dragoman.fleet.k8s import kubelet

# How each mechanism keeps a device plugin off the pool, as the preflight's note says it.
_EXCLUDED_BY = {
    "node-label": "the GPU Operator deploy label",
    "helm": "helm upgrade",
    "daemonset": "a DaemonSet affinity patch",
    "gitops": "its GitOps source",
}
SWITCH_STEPS = {"exclude-device-plugin", "scope-driver", "device-class", "uncordon", "verify"}
GANG_MARKS = (
    "scheduling.x-k8s.io/pod-group",
    "pod-group.scheduling.sigs.k8s.io",
    "jobset.sigs.k8s.io/jobset-name",
    "kueue.x-k8s.io/pod-group-name",
    "scheduling.k8s.io/group-name",
    "volcano.sh/job-name",
)
MIN_KERNEL_DRIVER = (550, 0)


def _kubelet_ok(version: str | None) -> bool:
    return kubelet.has_bridge(version) is True  # a write's gate: an unreadable version does not pass


async def bridge_served(ctx: Context) -> tuple[list[str], list[str]]:
    """(blockers, notes): the server version, and a server-side dry-run create of a DeviceClass naming an extended
    resource whose field survives (an apiserver without the bridge drops it)."""
    blockers, notes = [], []
    version = getattr(ctx.cluster, "server_version", "") or ""
    if not version:
        try:
            version = (await ctx.cluster.get("/version")).get("gitVersion", "")
        except ApiError:
            version = ""
    if kubelet.has_bridge(version) is False:
        blockers.append(
            f"the API server is {version}; the extended-resource bridge (DRAExtendedResource) is on from v1.36."
        )
    probe = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "dragoman-preflight-bridge-probe"},
        "spec": {
            "selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}],
            "extendedResourceName": "example.com/dragoman-probe",
        },
    }
    try:
        # A dry run changes nothing, so a 429 or 5xx is simply asked again.
        ans = await ctx.cluster.request(
            "POST", "/apis/resource.k8s.io/v1/deviceclasses", probe, query={"dryRun": "All"}, retry=True
        )
        if (ans.get("spec") or {}).get("extendedResourceName") != "example.com/dragoman-probe":
            blockers.append(
                "the API server dropped DeviceClass spec.extendedResourceName in a dry run: it does not serve the "
                "extended-resource bridge (DRAExtendedResource off)."
            )
        else:
            notes.append(
                f"the API server {version or ''} serves the bridge: a dry-run DeviceClass kept "
                "extendedResourceName.".replace("  ", " ")
            )
    except ApiError as exc:
        if exc.status == 403:
            blockers.append(
                "user may not create DeviceClasses (a dry run was forbidden); the device-class step needs it."
            )
        elif exc.status in RETRYABLE_STATUS:
            # The server is struggling, which is no answer about the bridge: stop, and let the operator run it again.
            raise
        else:
            blockers.append(f"a dry-run DeviceClass with extendedResourceName failed: {exc.detail}")
    return blockers, notes


def _driver_facts(pic: picture.Picture) -> list[str]:
    st = pic.driver
    if st is None:
        return [
            "the NVIDIA DRA driver is not installed: the scope-driver step installs chart dra-driver-nvidia-gpu 0.4.0 "
            "(it renders extendedResourceName nvidia.com/gpu on class gpu.nvidia.com)."
        ]
    w = st.workload
    out = [f"DRA driver: {st.ref} ({w.describe()}), image {st.image or '?'}."]
    ver = w.version or ""
    nums = [int(x) for x in re.findall(r"\d+", ver)[:2]] + [0, 0]
    if nums[0] == 0 and (nums[0], nums[1]) >= (0, 4) or nums[0] >= 25 and (nums[0], nums[1]) >= (25, 12):
        out.append(
            f"driver {ver} renders extendedResourceName nvidia.com/gpu on gpu.nvidia.com and publishes "
            "resource.kubernetes.io/pciBusID (no index, minor or pcieBusID)."
        )
    elif ver:
        out.append(
            f"driver {ver} predates v25.12.0: its chart does not put extendedResourceName on its class, and it "
            "publishes older attributes; upgrade it before relying on the bridge."
        )
    return out


def _node_prereqs(pic: picture.Picture) -> tuple[list[str], list[str]]:
    blockers, warnings = [], []
    for name, n in sorted(pic.nodes.items()):
        info = (n.get("status") or {}).get("nodeInfo") or {}
        rt = info.get("containerRuntimeVersion") or ""
        m = re.match(r"(containerd|cri-o)://v?(\d+)\.(\d+)", rt)
        if m and (
            (m.group(1) == "containerd" and (int(m.group(2)), int(m.group(3))) < (1, 7))
            or (m.group(1) == "cri-o" and (int(m.group(2)), int(m.group(3))) < (1, 23))
        ):
            blockers.append(
                f"node {name}: container runtime {rt} has no CDI support the DRA driver needs "
                "(containerd 1.7+, CRI-O 1.23+)."
            )
        labels = (n.get("metadata") or {}).get("labels") or {}
        kd = labels.get("nvidia.com/cuda.driver-version.full") or ".".join(
            x
            for x in (
                labels.get("nvidia.com/cuda.driver-version.major"),
                labels.get("nvidia.com/cuda.driver-version.minor"),
            )
            if x
        )
        if kd:
            parts = [int(x) for x in re.findall(r"\d+", kd)[:2]] + [0]
            if tuple(parts[:2]) < MIN_KERNEL_DRIVER:
                warnings.append(f"node {name}: NVIDIA kernel driver {kd} is older than the DRA driver supports (550+).")
    return blockers, warnings


def _gangs(pic: picture.Picture) -> list[str]:
    nodes = set(pic.nodes)
    groups: dict[str, int] = {}
    for p in pic.objects["Pod"]:
        if (p.get("spec") or {}).get("nodeName") not in nodes:
            continue
        md = p.get("metadata") or {}
        marks = {**(md.get("labels") or {}), **(md.get("annotations") or {})}
        for k in GANG_MARKS:
            if marks.get(k):
                groups[f"{md.get('namespace')}/{marks[k]}"] = groups.get(f"{md.get('namespace')}/{marks[k]}", 0) + 1
        if (p.get("spec") or {}).get("schedulingGroup") or (p.get("spec") or {}).get("workloadRef"):
            groups[f"{md.get('namespace')}/{md.get('name')}"] = 1
    return [
        f"gang workload {g} ({n} pod(s) on the pool): a drain evicts its members one by one and splits it."
        for g, n in sorted(groups.items())
    ]


async def switch_checks(ctx: Context, plans: list[StepPlan], plan: StepPlan) -> None:
    """Everything issue 9 adds to the preflight, into `plan` (blockers stop the run with exit 3)."""
    pic = await picture.read_picture(ctx)
    b, notes = await bridge_served(ctx)
    plan.blockers.extend(b)
    plan.notes.extend(notes)
    for name in sorted(pic.nodes):
        kv = ((pic.nodes[name].get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion")
        if not _kubelet_ok(kv):
            plan.blockers.append(
                f"kubelet-too-old: node {name} runs kubelet {kv or '?'}; the bridge needs v1.36+ "
                "(an older kubelet runs nvidia.com/gpu pods without their GPU). Upgrade the pool first."
            )
    for st in pic.device_plugins:
        plan.notes.append(
            f"device plugin: {st.ref} ({st.workload.describe()}) — excluded by {_EXCLUDED_BY[mechanism(st)]}."
        )
    plan.notes.extend(_driver_facts(pic))
    nb, nw = _node_prereqs(pic)
    plan.blockers.extend(nb)
    plan.warnings.extend(nw)
    for name in sorted(pic.nodes):
        v = pic.node_view(name)
        if v is not None and v.sharing:
            plan.warnings.append(
                f"sharing-capacity-change: node {name} shares its GPUs ({v.sharing}); nvidia.com/gpu counts "
                "replicas or MIG slices today and whole devices through DRA."
            )
    plan.warnings.extend(_gangs(pic))
    views = [pic.node_view(n) for n in pic.nodes]
    products = {v.product for v in views if v is not None}
    if len(views) <= 2 and len(products) == 1 and not any(v.sharing for v in views if v is not None):
        plan.notes.append(
            "migration-optional: a small pool of identical whole GPUs with no sharing; the device plugin "
            "remains a reasonable choice here."
        )
    # The class that will serve nvidia.com/gpu, caught before the class step.
    from dragoman.actions.device_class import decide

    d = decide(pic)
    for fid, sentence in d.problems:
        fixed = (
            " — the device-class step adds the type clause" if fid == "class-too-broad" and d.change is not None else ""
        )
        plan.warnings.append(f"{fid}: DeviceClass {d.name}, which will serve nvidia.com/gpu, {sentence}{fixed}.")
    plan.blockers.extend(d.blockers)
    # A node whose driver does not run publishes nothing: the switch would count on devices that are not there. Said
    # as what it is (no-slices), not as the capacity change it also causes.
    down = cap.driver_down(pic)
    for node, why in down.items():
        plan.blockers.append(
            f"no-slices: node {node} publishes no devices: {why}. Its GPUs cannot be served through DRA until the "
            "driver runs there: fix it on that node first, or take the node out of the pool."
        )
    # The capacity gate: before anything is written, cordon included.
    before = served_before(ctx)
    gate = cap.gate(pic, served=before)
    failures = [g for g in gate if not g.ok and g.node not in down]
    if failures:
        if cap_accepted(ctx):
            plan.warnings.append(
                "capacity change accepted (--accept-capacity-change): " + " ".join(f.reason + "." for f in failures)
            )
        else:
            plan.blockers.append(cap.gate_blocker(failures))
    else:
        plan.notes.append(
            "capacity gate: "
            + ", ".join(f"{g.node} {g.served}→{g.after}" for g in gate)
            + f" nvidia.com/gpu (through DeviceClass {d.name})."
        )
    missing = await base.missing_access(ctx, _switch_access(ctx, plans, pic))
    if missing:
        plan.blockers.append(f"user {ctx.cluster.user!r} may not: " + "; ".join(a.text() for a in missing) + ".")


def served_before(ctx: Context) -> dict | None:
    """GPUs per node the pool served before this plan's first write (recorded by its preflight), when resuming it."""
    if ctx.state is not None and ctx.state.plan_id and ctx.state.plan_id == ctx.plan_id:
        return cap.recorded(ctx, "servedBefore")
    return None


def cap_accepted(ctx: Context) -> bool:
    return bool(getattr(ctx.options, "accept_capacity_change", False))


def _switch_access(ctx: Context, plans: list[StepPlan], pic: picture.Picture) -> list[base.Access]:
    need: set[base.Access] = set()
    for p in plans:
        for c in p.changes:
            if c.kind == "DaemonSet" and c.verb == "patch":
                need.add(base.Access("patch", "daemonsets", "apps", namespace=c.namespace))
            elif c.kind == "DeviceClass":
                need.add(
                    base.Access(
                        {"create": "create", "update": "update", "delete": "delete"}.get(c.verb, "update"),
                        "deviceclasses",
                        "resource.k8s.io",
                    )
                )
    if any(p.step == "verify" for p in plans):
        ns = getattr(ctx.options, "canary_namespace", "default")
        need.add(base.Access("create", "pods", namespace=ns))
        need.add(base.Access("delete", "pods", namespace=ns))
    return sorted(need, key=lambda a: (a.resource, a.verb, a.namespace))


def canary_room(pic: picture.Picture, pool_label: str, pool: str) -> list[str]:
    """Whether the verify step's canary will find a free GPU once the pool is back: the GPUs of the pool's schedulable
    nodes against what its pods want (those running there, and the Pending ones bound for it, which the uncordon lets
    in first)."""
    from dragoman.actions.drain import gpu_request

    nodes = pic.node_objects()
    open_nodes = {n for n in pic.nodes if not ((nodes.get(n) or {}).get("spec") or {}).get("unschedulable")}
    gpus = sum(pic.allocatable(n) or len(pic.published(n)) for n in open_nodes)
    want = 0
    for p in pic.objects["Pod"]:
        spec, phase = p.get("spec") or {}, (p.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed") or not gpu_request(p):
            continue
        if spec.get("nodeName") in pic.nodes or (
            phase == "Pending" and (spec.get("nodeSelector") or {}).get(pool_label) == pool
        ):
            want += gpu_request(p)
    if gpus and want < gpus:
        return []
    return [
        f"the pool will have no free GPU for the verify step's canary: its workloads want {want} GPU(s) and its "
        f"schedulable nodes have {gpus}. The canary is created and removed all the same; when it finds no GPU, the "
        "workloads running on the pool through their own bridge claims are taken as the proof."
    ]


class SwitchPreflight(base.Preflight):
    """The layer's preflight, plus the ownership switch's items and the capacity gate when the plan switches."""

    async def plan(self, ctx: Context) -> StepPlan:
        plan = await super().plan(ctx)
        return plan

    async def check(self, ctx: Context, plans: list[StepPlan], plan: StepPlan) -> None:
        await super().check(ctx, plans, plan)
        if any(p.step in SWITCH_STEPS for p in plans):
            await switch_checks(ctx, plans, plan)
            plan.reads["Switch/pool"] = "1"
        if any(p.step == "verify" for p in plans):
            plan.warnings.extend(canary_room(await picture.read_picture(ctx), ctx.pool_label, ctx.pool))

    async def apply(self, ctx: Context, plan: StepPlan) -> list[str]:
        problems = await super().apply(ctx, plan)
        if not problems and "Switch/pool" in plan.reads and cap.recorded(ctx, "servedBefore") is None:
            # What the pool served before the first write: the gate before uncordon and a resumed preflight compare to
            # it.
            pic = await picture.read_picture(ctx)
            served = {g.node: g.served for g in cap.gate(pic)}
            await cap.record(ctx, "servedBefore", served, "switch: GPUs served before the switch recorded")
            await cap.record(
                ctx, "before", await cap.figures(ctx, pic), "switch: the pool's figures before the switch recorded"
            )
            await cap.record(
                ctx,
                "pendingBefore",
                sorted(
                    f"{p['metadata']['namespace']}/{p['metadata']['name']}"
                    for p in pic.objects["Pod"]
                    if (p.get("status") or {}).get("phase") == "Pending"
                    and ((p.get("spec") or {}).get("nodeSelector") or {}).get(ctx.pool_label) == ctx.pool
                ),
                "switch: GPU pods of the pool pending before the migration recorded",
            )
            await cap.record(
                ctx,
                "cordonedBefore",
                sorted(n for n, o in pic.nodes.items() if (o.get("spec") or {}).get("unschedulable")),
                "switch: nodes cordoned before the migration recorded",
            )
        return problems
