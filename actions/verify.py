"""The tail of the switch: uncordon behind the capacity gate (re-checked on the real slices) and `verify` — slices per
node, a canary pod proving the bridge end to end, no node on both stacks, the drained workloads back."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time

from dragoman.actions import capacity as cap
from dragoman.actions import operations, ops, picture
from dragoman.actions.cordon import Uncordon
from dragoman.actions.drain import gpu_request, node_pods, skip_reason
from dragoman.actions.operations import CreateObject, DeleteObject, Schedulable
from dragoman.actions.steps import Change, Context, Step, StepPlan
from dragoman.fleet import podstate
from dragoman.fleet.cluster import ApiError
from dragoman.fleet.ownership import GPU

VISIBLE_DEVICES = "dragoman.io/visible-devices"  # where a simulated kubelet says which GPUs a container sees
UUID_LINE = re.compile(r"\b((?:GPU|MIG)-[0-9a-fA-F-]{8,})")
DEFAULT_CANARY_IMAGE = "nvcr.io/nvidia/cuda:12.9.1-base-ubuntu24.04"


class GatedUncordon(Uncordon):
    """Uncordon the pool once the capacity gate, re-checked on the slices the driver published, still holds.

    The uncordon every plan runs (actions/registry.py): a pool that was not switched has nothing to gate, so a
    cordon/drain-only run and the rollback of a cordon behave as the plain Uncordon."""

    def replans(self) -> bool:
        # Undoing an uncordon drains again: the pods there move while the batches before it run.
        return self.id.startswith("rollback:uncordon")

    async def preconditions(self, ctx: Context) -> list[str]:
        if self.id.startswith("rollback:"):
            return []
        pic = await picture.read_picture(ctx)
        if not any(pic.published(n) for n in pic.nodes):
            # The pool is not switched (an uncordon of a cordon/drain-only run): nothing to gate.
            return []
        served = cap.recorded(ctx, "servedBefore")
        failures = [g for g in cap.gate(pic, served=served, use_slices_only=True) if not g.ok]
        if failures and not getattr(ctx.options, "accept_capacity_change", False):
            return [cap.gate_blocker(failures) + " The nodes stay cordoned."]
        return []

    async def plan(self, ctx: Context) -> StepPlan:
        if self.id.startswith("rollback:uncordon"):
            from dragoman.actions.reverse import recordon_plan

            return await recordon_plan(ctx, self.id.removeprefix("rollback:"), self.nodes)
        if self.id.startswith("rollback:"):
            return await super().plan(ctx)
        # Made before the cordon runs: every node the migration cordons comes back, not one cordoned before it.
        before = (
            cap.recorded(ctx, "cordonedBefore") if ctx.state is not None and ctx.state.plan_id == ctx.plan_id else None
        )
        plan = self.new_plan()
        for name in self.nodes:
            node = await ctx.cluster.get(f"/api/v1/nodes/{name}")
            ctx.nodes[name] = node
            was = name in before if before is not None else bool((node.get("spec") or {}).get("unschedulable"))
            if before is None and was:
                plan.notes.append(f"node {name} was cordoned before the migration and stays cordoned.")
                continue
            if was:
                continue
            # Shown as it will be when this step runs: cordoned by the migration.
            plan.add(Schedulable(name, False, was=True))
        plan.blast_nodes = [c.name for c in plan.changes]
        plan.blast_pools = [ctx.pool] if plan.changes else []
        plan.notes.append("the capacity gate is checked again first, on the slices the driver published.")
        return plan

    async def apply(self, ctx: Context, plan: StepPlan) -> list[str]:
        if self.id.startswith("rollback:uncordon"):
            from dragoman.actions.reverse import apply_recordon

            return await apply_recordon(ctx, self.id, plan)
        if self.id.startswith("rollback:"):
            # The plan anticipated the nodes as the steps ahead of it leave them (re-cordoned): it is sent as shown,
            # each write skipped when the cluster already shows it.
            pass
        elif ctx.state is not None and plan.changes and not ctx.read_only:
            await ctx.state.set_step(
                self.id, self.name, "running", by=ctx.by, rollback={"uncordoned": [c.name for c in plan.changes]}
            )
        return await super().apply(ctx, plan)

    async def verify(self, ctx: Context) -> list[str]:
        if self.id.startswith("rollback:uncordon"):
            out = []
            for n in self.nodes:
                node = await ctx.cluster.get(f"/api/v1/nodes/{n}")
                if not (node.get("spec") or {}).get("unschedulable"):
                    out.append(f"node {n} is still schedulable.")
                left = [p for p in await node_pods(ctx, n) if not skip_reason(p)]
                if left:
                    out.append(f"node {n} still runs {len(left)} pod(s) the drain evicts.")
            return out
        before = set(cap.recorded(ctx, "cordonedBefore") or [])
        out = []
        for name in self.nodes:
            if name in before:
                continue  # cordoned before the migration: left so
            node = await ctx.cluster.get(f"/api/v1/nodes/{name}")
            if (node.get("spec") or {}).get("unschedulable"):
                out.append(f"node {name} is still cordoned.")
        return out

    async def rollback_plan(self, ctx: Context, record: dict) -> StepPlan | None:
        from dragoman.actions.reverse import recordon_plan

        nodes = list(record.get("uncordoned") or [])
        if not nodes:
            return None
        return await recordon_plan(ctx, self.id, nodes)


# ---------------------------------------------------------------- verify


def canary_name(pool: str) -> str:
    base = re.sub(r"[^a-z0-9-]", "-", f"dragoman-canary-{pool}".lower())[:57].strip("-")
    return base


def canary_resource(pic: picture.Picture) -> str:
    """The extended resource the canary asks one of: nvidia.com/gpu when the class that serves it selects a device
    the pool publishes. A pool of MIG partitions only (the chart's gpu.nvidia.com selects `type == "gpu"`) serves no
    nvidia.com/gpu at all, and a canary asking for it stays Pending on any scheduler: it asks instead for an extended
    resource a class serves from the pool's devices (nvidia.com/mig-1g.10gb), the first by name. nvidia.com/gpu when
    none does (the canary then says why it waits)."""
    served: dict[str, str] = {}
    for c in pic.objects["DeviceClass"]:
        name = ((c.get("spec") or {}).get("extendedResourceName")) or ""
        if name and name not in served:
            winner = pic.model.class_serving(name)
            if winner:
                served[name] = winner
    classes = {(c.get("metadata") or {}).get("name"): c for c in pic.objects["DeviceClass"]}

    def selects_a_device(resource: str) -> bool:
        cls = classes.get(served.get(resource))
        if cls is None:
            return False
        for node in sorted(pic.nodes):
            rq = pic.servable(node, cls, holding=False)
            if rq is not None and rq.error is None and rq.candidates:
                return True
        return False

    if GPU not in served or selects_a_device(GPU):
        return GPU
    return next((r for r in sorted(served) if r != GPU and selects_a_device(r)), GPU)


def canary_pod(ctx: Context, resource: str = GPU) -> dict:
    ns = ops.option(ctx, "canary_namespace", "default")
    tolerations = ops.option(ctx, "canary_tolerations", None)
    if tolerations is None:
        tolerations = [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": canary_name(ctx.pool),
            "namespace": ns,
            "labels": {
                "app.kubernetes.io/managed-by": "dragoman",
                "dragoman.io/canary": "true",
                "dragoman.io/pool": ctx.pool,
            },
        },
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {ctx.pool_label: ctx.pool},
            "tolerations": tolerations,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "canary",
                    "image": ops.option(ctx, "canary_image", "") or DEFAULT_CANARY_IMAGE,
                    "command": ["sh", "-c", "nvidia-smi -L; sleep 3600"],
                    "resources": {
                        "requests": {"cpu": "10m", "memory": "16Mi"},
                        "limits": {resource: "1", "cpu": "100m", "memory": "64Mi"},
                    },
                }
            ],
        },
    }


@dataclasses.dataclass
class CanaryPod(CreateObject):
    """The verify step's canary: created when absent (a lost answer may have made it), deleted afterwards. The plan
    and the audit log show the same: where it is placed and the GPU limit it keeps."""

    collection: str = ""
    key_suffix: str = "canary"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.collection = f"/api/v1/namespaces/{self.namespace}/pods"

    @property
    def image(self) -> str:
        return self.body["spec"]["containers"][0]["image"]

    @property
    def resource(self) -> str:
        limits = self.body["spec"]["containers"][0]["resources"]["limits"]
        return next((r for r in limits if r not in ("cpu", "memory")), GPU)

    def preview(self) -> Change:
        selector = self.body["spec"]["nodeSelector"]
        return Change(
            "Pod",
            self.name,
            self.namespace,
            verb="create",
            after={"spec": {"nodeSelector": selector, "limits": {self.resource: "1"}}},
            command=f"kubectl run -n {self.namespace} {self.name} --image {self.image}",
            detail={"canary": True},
        )


def _device_uuid(pic: picture.Picture, pool: str, device: str) -> str | None:
    for d in pic.published(pool):
        if d.get("name") == device:
            a = (d.get("attributes") or {}).get("uuid") or (d.get("attributes") or {}).get("gpu.nvidia.com/uuid") or {}
            return a.get("string")
    return None


class CanaryResult:
    def __init__(self) -> None:
        self.problems: list[str] = []
        self.node = ""
        self.claim = ""
        self.allocated: list[str] = []
        self.seen: list[str] = []
        self.proof: list[str] = []  # the pool was full: the pods that run on it through bridge claims

    def to_json(self) -> dict:
        return {
            "provenByWorkloads": self.proof,
            "node": self.node,
            "claim": self.claim,
            "allocatedUUIDs": self.allocated,
            "seenUUIDs": self.seen,
            "problems": self.problems,
        }


def planned_resource(plan: StepPlan) -> str:
    """The extended resource the plan's canary asks for (its preview): the write sends what was shown."""
    for c in plan.changes:
        if c.kind == "Pod" and c.verb == "create" and (c.detail or {}).get("canary"):
            limits = ((c.after or {}).get("spec") or {}).get("limits") or {}
            return next(iter(limits), GPU)
    return GPU


async def run_canary(ctx: Context, step_id: str, resource: str = GPU) -> CanaryResult:
    """Create the canary, prove the bridge with it, and remove it whatever happens."""
    res = CanaryResult()
    body = canary_pod(ctx, resource)
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    path = f"/api/v1/namespaces/{ns}/pods/{name}"
    create = CanaryPod(body)
    try:
        try:
            old = await ctx.cluster.get(path)
        except ApiError as exc:
            if exc.status != 404:
                raise
            old = None
        if old is not None:  # a canary a crash left behind
            await _delete(ctx, step_id, ns, name)
            await _gone(ctx, path)
        # A create whose answer was lost may have made the pod: there it is, then.
        await operations.send(ctx, step_id, create, label="canary")
        ctx.emit(step_id, 0, 4, f"canary {ns}/{name} created")

        async def scheduled() -> list[str]:
            pod = await ctx.cluster.get(path)
            st = pod.get("status") or {}
            if st.get("phase") not in ("Running", "Succeeded"):
                cond = next(
                    (
                        c
                        for c in st.get("conditions") or []
                        if c.get("type") == "PodScheduled" and c.get("status") == "False"
                    ),
                    None,
                )
                return [
                    f"the canary is {st.get('phase') or 'Pending'}"
                    + (f": {cond.get('message')}" if cond and cond.get("message") else ".")
                ]
            return []

        async def placed_or_full() -> list[str]:
            waiting = await scheduled()
            if waiting and bridge_proof(await picture.read_picture(ctx)):
                return []  # no GPU is free for the canary: the workloads' own bridge claims are the proof
            return waiting

        waited = await _poll(ctx, step_id, placed_or_full, ops.option(ctx, "canary_timeout", 120.0))
        if waited:
            res.problems.extend(waited)
            return res
        pod = await ctx.cluster.get(path)
        if (pod.get("status") or {}).get("phase") not in ("Running", "Succeeded"):
            proof = bridge_proof(await picture.read_picture(ctx))
            if proof:
                res.proof = proof
                ctx.emit(
                    step_id,
                    2,
                    4,
                    f"no GPU of the pool is free for the canary: {len(proof)} pod(s) run on it through bridge claims "
                    f"({', '.join(proof[:3])}{' …' if len(proof) > 3 else ''}); taken as the proof",
                )
                return res
        pod = await ctx.cluster.get(path)
        res.node = (pod.get("spec") or {}).get("nodeName") or ""
        pic = await picture.read_picture(ctx)
        if res.node not in pic.nodes:
            res.problems.append(f"the canary ran on {res.node}, not on pool {ctx.pool}.")
            return res
        ercs = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
        res.claim = ercs.get("resourceClaimName") or ""
        if not res.claim:
            res.problems.append(
                f"the canary on {res.node} has no status.extendedResourceClaimStatus: its GPU did not come "
                "through the bridge."
            )
            return res
        ctx.emit(step_id, 1, 4, f"canary on {res.node}, claim {res.claim}")
        try:
            claim = await ctx.cluster.get(f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims/{res.claim}")
        except ApiError:
            res.problems.append(f"the canary's claim {ns}/{res.claim} does not exist.")
            return res
        alloc = (claim.get("status") or {}).get("allocation") or {}
        results = (alloc.get("devices") or {}).get("results") or []
        if not results:
            res.problems.append(f"claim {ns}/{res.claim} is not allocated.")
            return res
        reserved = [r.get("uid") for r in (claim.get("status") or {}).get("reservedFor") or []]
        if pod["metadata"].get("uid") not in reserved:
            res.problems.append(f"claim {ns}/{res.claim} is not reserved for the canary.")
        for r in results:
            u = _device_uuid(pic, r.get("pool", ""), r.get("device", ""))
            if u:
                res.allocated.append(u)
        res.seen = await _seen_uuids(ctx, ns, name, pod)
        ctx.emit(step_id, 2, 4, f"canary sees {', '.join(res.seen) or 'no GPU'}")
        if sorted(res.seen) != sorted(res.allocated):
            res.problems.append(
                f"the canary sees GPUs {res.seen or 'none'} but claim {res.claim} allocated {res.allocated}."
            )
        return res
    finally:
        try:
            await _delete(ctx, step_id, ns, name)
            ctx.emit(step_id, 3, 4, f"canary {ns}/{name} removed")
        except Exception as exc:  # noqa: BLE001 - reported, the verification result stands
            res.problems.append(f"the canary {ns}/{name} could not be removed: {exc}; delete it by hand.")


async def _seen_uuids(ctx: Context, ns: str, name: str, pod: dict) -> list[str]:
    """The GPU uuids the canary reports (nvidia-smi -L in its log), else what the kubelet exposes to it."""
    try:
        text = await _log(ctx, ns, name)
    except Exception:  # noqa: BLE001 - a server without logs falls back to the annotation
        text = ""
    found = UUID_LINE.findall(text or "")
    if found:
        return sorted(set(found))
    vis = ((pod.get("metadata") or {}).get("annotations") or {}).get(VISIBLE_DEVICES) or ""
    return sorted(u for u in vis.split(",") if u)


async def _log(ctx: Context, ns: str, name: str) -> str:
    """The canary's log: plain text (the API server relays it from the kubelet), not JSON."""
    try:
        return await ctx.cluster.pod_log(ns, name)
    except ApiError:
        return ""


async def _exists(ctx: Context, path: str) -> bool:
    try:
        await ctx.cluster.get(path)
    except ApiError as exc:
        if exc.status == 404:
            return False
        raise
    return True


def canary_delete(ns: str, name: str) -> DeleteObject:
    """The canary's removal: previewed with its creation, sent after the checks whatever they found."""
    return DeleteObject("Pod", name, ns, f"/api/v1/namespaces/{ns}/pods", key_suffix="canary-delete")


async def _delete(ctx: Context, step_id: str, ns: str, name: str) -> None:
    path = f"/api/v1/namespaces/{ns}/pods/{name}"
    if not await _exists(ctx, path):
        return
    await operations.send(ctx, step_id, canary_delete(ns, name), label="canary-delete")


async def _gone(ctx: Context, path: str) -> None:
    async def check() -> list[str]:
        try:
            await ctx.cluster.get(path)
        except ApiError as exc:
            if exc.status == 404:
                return []
            raise
        return ["the previous canary is still terminating."]

    await _poll(ctx, "verify", check, 60.0)


async def _poll(ctx: Context, step_id: str, check, timeout: float) -> list[str]:
    from dragoman.actions.gitops import wait_for

    return await wait_for(
        check,
        timeout=timeout,
        poll=ops.option(ctx, "switch_poll", 0.5),
        on_wait=lambda m: ctx.emit(step_id, 0, 0, f"waiting: {m}"),
    )


async def stack_problems(ctx: Context) -> list[str]:
    """A ResourceSlice with devices per node, and no node owned by both stacks."""
    pic = await picture.read_picture(ctx)
    out = []
    for n in sorted(pic.nodes):
        if not pic.published(n):
            out.append(f"node {n} publishes no ResourceSlice with devices.")
        if pic.published(n) and (pic.allocatable(n) > 0 or any(podstate.pod_running(p) for p in pic.plugin_pods(n))):
            out.append(
                f"both-stacks: node {n} has the device plugin (allocatable {pic.allocatable(n)}) and DRA devices."
            )
    return out


def bridge_proof(pic: picture.Picture) -> list[str]:
    """When every device the pool publishes is allocated and held by pods Running on the pool through their bridge
    claims: those pods ("ns/name on node"). They prove the pool on DRA as the canary would — the scheduler made their
    claims from `limits: nvidia.com/gpu` and the kubelet prepared them — and leave no GPU for a canary. Empty when a
    device is free or is held by anything else."""
    # A node cordoned before the migration stays cordoned: its devices are no pod's to take.
    nodes = pic.node_objects()
    open_nodes = [n for n in pic.nodes if not ((nodes.get(n) or {}).get("spec") or {}).get("unschedulable")]
    published = {(n, d.get("name")) for n in open_nodes for d in pic.published(n)}
    if not published:
        return []
    claims = {
        ((c.get("metadata") or {}).get("namespace"), (c.get("metadata") or {}).get("name")): c
        for c in pic.objects["ResourceClaim"]
    }
    held: set[tuple[str, str]] = set()
    proof: list[str] = []
    for p in pic.objects["Pod"]:
        md, spec, st = p.get("metadata") or {}, p.get("spec") or {}, p.get("status") or {}
        name = (st.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        if not name or spec.get("nodeName") not in pic.nodes or st.get("phase") != "Running":
            continue
        claim = claims.get((md.get("namespace"), name)) or {}
        results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        mine = {(r.get("pool"), r.get("device")) for r in results} & published
        if mine:
            held |= mine
            proof.append(f"{md.get('namespace')}/{md.get('name')} on {spec['nodeName']}")
    return sorted(proof) if held == published else []


def drained_owners(ctx: Context) -> dict[tuple[str, str], int]:
    """(namespace, owner "Kind/name") → pods the drain evicted, from the plan recorded in the pool's ConfigMap."""
    plan = (ctx.state.plan if ctx.state is not None else None) or {}
    out: dict[tuple[str, str], int] = {}
    for sp in plan.get("steps") or []:
        if sp.get("step") != "drain":
            continue
        for c in sp.get("changes") or []:
            owner = (c.get("detail") or {}).get("owner")
            if owner and (c.get("detail") or {}).get("gpus"):
                out[(c.get("namespace", ""), owner)] = out.get((c.get("namespace", ""), owner), 0) + 1
    return out


async def workloads_back(ctx: Context) -> list[str]:
    pic = await picture.read_picture(ctx)
    if bridge_proof(pic):
        # Every GPU of the pool is held by pods running through bridge claims: a drained pod still Pending waits for
        # a GPU the pool does not have (it had no more before), not for the migration.
        return [p for p in _stack_only(pic, ctx)]
    out = []
    owners = drained_owners(ctx)
    pending_before = set(cap.recorded(ctx, "pendingBefore") or [])  # stuck before the migration: not its doing
    by_owner: dict[tuple[str, str], list[dict]] = {}
    for p in pic.objects["Pod"]:
        md = p.get("metadata") or {}
        for ref in md.get("ownerReferences") or []:
            by_owner.setdefault((md.get("namespace", ""), f"{ref.get('kind')}/{ref.get('name')}"), []).append(p)
    for (ns, owner), n in sorted(owners.items()):
        pods = [p for p in by_owner.get((ns, owner), []) if not (p.get("metadata") or {}).get("deletionTimestamp")]
        live = [p for p in pods if (p.get("status") or {}).get("phase") in ("Running", "Succeeded")]
        if owner.startswith("Job/") and any((p.get("status") or {}).get("phase") == "Succeeded" for p in pods):
            continue
        if len(live) < min(n, max(1, len(pods))):
            out.append(f"{owner} in {ns}: {len(live)} of {n} drained GPU pod(s) back Running.")
    for p in pic.objects["Pod"]:
        spec = p.get("spec") or {}
        st = p.get("status") or {}
        if not gpu_request(p) or skip_reason(p) == "DaemonSet pod":
            continue
        md = p.get("metadata") or {}
        if (
            spec.get("nodeName") in pic.nodes
            and st.get("phase") == "Running"
            and not st.get("extendedResourceClaimStatus")
        ):
            out.append(f"pod {md.get('namespace')}/{md.get('name')} runs on {spec['nodeName']} without a bridge claim.")
        if (
            st.get("phase") == "Pending"
            and (spec.get("nodeSelector") or {}).get(ctx.pool_label) == ctx.pool
            and f"{md.get('namespace')}/{md.get('name')}" not in pending_before
        ):
            out.append(f"GPU pod {md.get('namespace')}/{md.get('name')} of the pool is stuck Pending.")
    return out


def _stack_only(pic: picture.Picture, ctx: Context) -> list[str]:
    """Of the workload checks, those a full pool does not excuse: a GPU pod running on the pool without a claim."""
    out = []
    for p in pic.objects["Pod"]:
        spec, st, md = p.get("spec") or {}, p.get("status") or {}, p.get("metadata") or {}
        if not gpu_request(p) or skip_reason(p) == "DaemonSet pod":
            continue
        if (
            spec.get("nodeName") in pic.nodes
            and st.get("phase") == "Running"
            and not st.get("extendedResourceClaimStatus")
        ):
            out.append(f"pod {md.get('namespace')}/{md.get('name')} runs on {spec['nodeName']} without a bridge claim.")
    return out


class Verify(Step):
    """Slices on every node, a canary pod through the bridge (claim, status, the GPUs it sees), no node on both
    stacks, the drained workloads back on bridge claims; the pool's before/after figures recorded."""

    name = "verify"
    title = "Verify the pool on DRA (canary)"
    verifies = "slices on every node, the canary's GPU through the bridge, no node on both stacks, the workloads back"
    dangerous = False
    reversible = False

    @classmethod
    def timeout(cls, options) -> float:
        return float(getattr(options, "switch_timeout", 300.0))

    async def plan(self, ctx: Context) -> StepPlan:
        plan = self.new_plan()
        resource = canary_resource(await picture.read_picture(ctx))
        body = canary_pod(ctx, resource)
        # Both writes the step sends: the canary, and its removal once the checks are done.
        plan.add(CanaryPod(body))
        plan.add(canary_delete(body["metadata"]["namespace"], body["metadata"]["name"]))
        if resource != GPU:
            plan.notes.append(
                f"the pool's devices serve no {GPU} (no device matches the class that serves it): the canary asks "
                f"for {resource} instead."
            )
        plan.notes.append(
            f"checks: a ResourceSlice with devices per node; the canary keeping limits {resource} lands on the "
            "pool with an allocated claim recorded in its status, and sees exactly the allocated GPUs; it is "
            "removed afterwards even when a check fails; no node owned by both stacks; the drained workloads "
            "back and Running on bridge claims; no GPU pod of the pool stuck."
        )
        return plan

    async def apply(self, ctx: Context, plan: StepPlan) -> list[str]:
        problems = await _poll(ctx, self.id, lambda: stack_problems(ctx), ops.option(ctx, "switch_timeout", 300.0))
        if problems:
            return problems
        # The drained workloads first: the canary then takes a GPU they left free instead of racing them for it.
        problems.extend(
            await _poll(ctx, self.id, lambda: workloads_back(ctx), ops.option(ctx, "switch_timeout", 300.0))
        )
        canary = await run_canary(ctx, self.id, planned_resource(plan))
        problems.extend(canary.problems)
        problems.extend(await stack_problems(ctx))
        if not ctx.read_only:
            await cap.record(ctx, "canary", canary.to_json(), "switch: canary result recorded")
            # Prometheus's figures only once it has scraped after the canary: its bridge claim is the switch's first
            # claim creation, and a rate taken before that scrape reads the minutes before the switch.
            after = await cap.figures(ctx, since=time.time())
            await cap.record(ctx, "after", after, "switch: the pool's figures after the switch recorded")
            if not problems:
                # The node annotation is what the Pools view shows: "verified" once the canary came through.
                from dragoman.actions.drain import annotate

                started = ctx.state.step_started(self.id) if ctx.state else ""
                sem = asyncio.Semaphore(16)  # a 500-node pool is annotated in seconds, without flooding the server

                async def one(node: str) -> None:
                    async with sem:
                        await annotate(ctx, node, self.id, self.name, "verified", started)

                await asyncio.gather(*(one(n) for n in self.nodes))
        return problems

    async def verify(self, ctx: Context) -> list[str]:
        return await stack_problems(ctx)
