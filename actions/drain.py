"""The drain step: every evictable pod of the batch's nodes through the Eviction API, PDB-aware, with retry,
concurrency, a deadline and progress."""

from __future__ import annotations

import asyncio
import hashlib
import time

from dragoman.actions import operations
from dragoman.actions.operations import Evict
from dragoman.actions.steps import (
    WRITE_ATTEMPTS,
    Context,
    Step,
    StepPlan,
    backoff,
    uncertain,
)
from dragoman.fleet.cluster import ApiError, Unreachable
from dragoman.fleet.k8s import match_label_selector
from dragoman.fleet.migration import MIGRATION_ANNOTATION
from dragoman.fleet.ownership import GPU

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def owner_of(pod: dict) -> dict | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    refs = (pod.get("metadata") or {}).get("ownerReferences") or []
    return refs[0] if refs else None


def skip_reason(pod: dict) -> str:
    """Why a drain leaves this pod alone ("" when it is evicted)."""
    md = pod.get("metadata") or {}
    if MIRROR_ANNOTATION in (md.get("annotations") or {}):
        return "mirror pod"
    owner = owner_of(pod)
    if owner and owner.get("kind") == "DaemonSet":
        return "DaemonSet pod"
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return "finished"
    return ""


def kubelet_silent(node: dict | None) -> str:
    """How a node reads when its kubelet does not post status (Ready Unknown or False, as the node lifecycle
    controller or the kubelet set it); "" when it is Ready or says nothing. No kubelet confirms a deletion on such a
    node, so kube-apiserver keeps an evicted pod there Terminating — past its grace period — until the kubelet is back
    or the Node object is deleted (the pod garbage collector then removes it)."""
    ready = next(
        (c for c in ((node or {}).get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), None
    )
    if ready is None or ready.get("status") == "True":
        return ""
    why = ready.get("message") or ready.get("reason") or ""
    return f"NotReady (Ready {ready.get('status')}{': ' + why if why else ''})"


def budget_applies(pod: dict) -> bool:
    """Whether kube-apiserver asks the pod's PodDisruptionBudget before evicting it (eviction.go canIgnorePDB): a
    Pending, Succeeded or Failed pod, or one already being deleted, is evicted whatever its budget allows, so it
    neither waits on the budget nor uses one of its disruptions."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Pending", "Succeeded", "Failed") and not (pod.get("metadata") or {}).get("deletionTimestamp")


def gpu_request(pod: dict) -> int:
    total = 0
    for c in (pod.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        v = (res.get("limits") or {}).get(GPU) or (res.get("requests") or {}).get(GPU)
        try:
            total += int(v or 0)
        except (TypeError, ValueError):
            pass
    return total


def pdbs_for(pod: dict, pdbs: list[dict]) -> list[dict]:
    md = pod.get("metadata") or {}
    return [
        p
        for p in pdbs
        if (p.get("metadata") or {}).get("namespace") == md.get("namespace")
        and match_label_selector((p.get("spec") or {}).get("selector"), md.get("labels") or {})
    ]


async def node_pods(ctx: Context, node: str) -> list[dict]:
    items, _ = await ctx.cluster.list_all("/api/v1/pods", field_selector=f"spec.nodeName={node}")
    return items


async def annotate(ctx: Context, node: str, step_id: str, step: str, state: str, started: str) -> None:
    """Bookkeeping: where the migration of this node stands (the `dragoman.io/migration` annotation)."""
    from dragoman.actions.cordon import migration_value

    value = migration_value(ctx, step_id, step, state, started)
    await operations.bookkeep(ctx, operations.NodeAnnotation(node, MIGRATION_ANNOTATION, value))


def pods_fingerprint(pods: list[dict]) -> str:
    uids = sorted(str((p.get("metadata") or {}).get("uid")) for p in pods if not skip_reason(p))
    return hashlib.sha256("\n".join(uids).encode()).hexdigest()[:16]


class Drain(Step):
    """Evict every pod of the nodes except DaemonSet, mirror and finished pods, and wait until they are gone."""

    name = "drain"
    title = "Drain the nodes"
    verifies = (
        "no pod a drain evicts is left on the nodes; their replacements run elsewhere (or are said unschedulable)"
    )
    dangerous = True
    reversible = False
    replan = True

    @classmethod
    def timeout(cls, options) -> float:
        return float(options.drain_timeout)

    async def preconditions(self, ctx: Context) -> list[str]:
        # Draining a schedulable node only moves its pods back onto it: the cordon comes first.
        out = []
        for name in self.nodes:
            node = await ctx.cluster.get(f"/api/v1/nodes/{name}")
            if not (node.get("spec") or {}).get("unschedulable"):
                out.append(f"node {name} is not cordoned; run the cordon step first (--step cordon).")
        return out

    async def plan(self, ctx: Context) -> StepPlan:
        plan = self.new_plan()
        pdbs, _ = await ctx.cluster.list_all("/apis/policy/v1/poddisruptionbudgets")
        skipped: dict[str, int] = {}
        for node in self.nodes:
            pods = await node_pods(ctx, node)
            plan.reads[f"Pods/{node}"] = pods_fingerprint(pods)
            silent = kubelet_silent(await ctx.cluster.get(f"/api/v1/nodes/{node}"))
            if silent and any(not skip_reason(p) for p in pods):
                plan.warnings.append(
                    f"node {node} is {silent}: no kubelet confirms an eviction there, so its evicted pods stay "
                    "Terminating (their containers may still run) until the kubelet is back or the Node is deleted; "
                    "the drain reports them once their grace period is over instead of waiting."
                )
            for pod in pods:
                why = skip_reason(pod)
                if why:
                    skipped[why] = skipped.get(why, 0) + 1
                    continue
                md = pod["metadata"]
                owner = owner_of(pod)
                op = Evict.of_pod(
                    pod,
                    forced=f"{md['namespace']}/{md['name']}" in ctx.options.force_pods,
                    owner=f"{owner['kind']}/{owner['name']}" if owner else "",
                    pdb=",".join(p["metadata"]["name"] for p in pdbs_for(pod, pdbs)) if budget_applies(pod) else "",
                    gpus=gpu_request(pod),
                )
                op.node = node
                plan.add(op)
                if not owner:
                    plan.warnings.append(
                        f"pod {md['namespace']}/{md['name']} has no controller: once evicted nothing recreates it."
                    )
        plan.blast_nodes = list(self.nodes) if plan.changes else []
        plan.blast_pools = [ctx.pool] if plan.changes else []
        for node in self.nodes:
            plan.notes.append(f"equivalent: kubectl drain {node} --ignore-daemonsets --delete-emptydir-data")
        if skipped:
            plan.notes.append(
                "left alone: " + ", ".join(f"{n} {w}{'s' if n > 1 else ''}" for w, n in sorted(skipped.items()))
            )
        if ctx.options.force_pods:
            plan.warnings.append(
                "forced pods are deleted without eviction: their PodDisruptionBudgets are not consulted."
            )
        return plan

    async def apply(self, ctx: Context, plan: StepPlan) -> list[str]:
        opts = ctx.options
        deadline = time.monotonic() + opts.drain_timeout
        sem = asyncio.Semaphore(max(1, opts.drain_concurrency))
        # Exactly the pods the plan shows (the preview is the writes): one gone since, or another pod under its name
        # now, needs no eviction; one that arrived since is not evicted unseen (the verification names it).
        work: list[tuple[str, dict]] = []
        for change in plan.changes:
            if change.verb not in ("evict", "delete"):
                continue
            node = change.detail.get("node") or ""
            pod = await self._current(
                ctx, f"/api/v1/namespaces/{change.namespace}/pods/{change.name}", change.detail.get("uid")
            )
            if pod is not None and node in self.nodes:
                work.append((node, pod))
        total = len(work)
        per_node_total = {n: sum(1 for m, _ in work if m == n) for n in self.nodes}
        per_node_done = {n: 0 for n in self.nodes}
        done = 0
        problems: list[str] = []
        # Dangling intents of pods that are gone since (a crash right after the eviction): close them first.
        for key, rec in list(ctx.dangling.items()):
            obj = rec.get("object") or {}
            if rec.get("step") == self.id and obj.get("kind") == "Pod":
                landed = await self.observe(ctx, rec)
                if landed:
                    operations.close_dangling(ctx, key, self.id, operations.dangling_record(rec))

        async def one(node: str, pod: dict) -> None:
            nonlocal done
            async with sem:
                err = await self._evict_and_wait(ctx, pod, deadline)
            md = pod["metadata"]
            if err:
                problems.append(err)
                ctx.emit(self.id, done, total, err, node=node, level="error")
            else:
                done += 1
                per_node_done[node] += 1
                ctx.emit(
                    self.id,
                    per_node_done[node],
                    per_node_total[node],
                    f"evicted {md['namespace']}/{md['name']}",
                    node=node,
                )
                ctx.emit(self.id, done, total, "pods evicted")

        ctx.emit(self.id, 0, total, f"draining {len(self.nodes)} node(s), {total} pod(s)")
        started = ctx.state.step_started(self.id) if ctx.state else ""
        for node in self.nodes:
            await annotate(ctx, node, self.id, self.name, "running", started)
        await asyncio.gather(*(one(n, p) for n, p in work))
        if not problems:
            # The next batch waits until this one's pods run elsewhere: a batch at a time means no more than a batch of
            # the workloads is ever away.
            await self._replacements(ctx, [p for _n, p in work], deadline)
        for node in self.nodes:
            failed = per_node_done[node] < per_node_total[node]
            await annotate(ctx, node, self.id, self.name, "failed" if failed else "done", started)
        return problems

    async def _evict_and_wait(self, ctx: Context, pod: dict, deadline: float) -> str:
        opts = ctx.options
        md = pod["metadata"]
        ns, name = md["namespace"], md["name"]
        op = Evict.of_pod(pod, forced=f"{ns}/{name}" in opts.force_pods)
        key = op.key(ctx.plan_id, self.id)
        node = op.node
        owner = owner_of(pod)
        if opts.wait_for_jobs > 0 and owner and owner.get("kind") == "Job":
            job_deadline = min(deadline, time.monotonic() + opts.wait_for_jobs)
            ctx.emit(
                self.id, 0, 0, f"waiting up to {opts.wait_for_jobs:g} s for Job pod {ns}/{name} to finish", node=node
            )
            while time.monotonic() < job_deadline:
                cur = await op.read(ctx.cluster)
                if cur is None or (cur.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                    if cur is None:
                        operations.close_dangling(ctx, key, self.id, op.record())
                    ctx.emit(self.id, 0, 0, f"Job pod {ns}/{name} finished; not evicted", node=node)
                    return ""
                await asyncio.sleep(min(opts.evict_retry, max(0.05, job_deadline - time.monotonic())))
        reported = ""
        failures = 0
        while True:
            cur = await op.read(ctx.cluster)
            if op.done(cur):  # gone, or terminating: the eviction (a crash's, a lost answer's) was made
                operations.close_dangling(ctx, key, self.id, op.record())
                if cur is None:
                    return ""
                break
            try:
                await operations.write_once(ctx, self.id, op, op.request(ctx.cluster, cur), label="evict")
                break
            except (ApiError, Unreachable) as exc:
                if uncertain(exc):
                    # The eviction may have been made (its intent stays open): the pod, read again, tells.
                    failures += 1
                    if failures >= WRITE_ATTEMPTS or time.monotonic() > deadline:
                        return f"pod {ns}/{name}: eviction failed {failures} times, the last with: {exc}"
                    await asyncio.sleep(backoff(exc, failures))
                    continue
                assert isinstance(exc, ApiError)
                if exc.status == 404:
                    operations.close_dangling(ctx, key, self.id, op.record())
                    return ""
                if exc.status == 409:  # uid precondition: the pod is another one now
                    operations.close_dangling(ctx, key, self.id, op.record())
                    return ""
                if exc.status != 429:
                    return f"pod {ns}/{name}: eviction failed: {exc.detail}"
                causes = (exc.body.get("details") or {}).get("causes") or []
                why = "; ".join(c.get("message", "") for c in causes if c.get("message")) or exc.detail
                if why != reported:
                    ctx.emit(self.id, 0, 0, f"{ns}/{name} blocked: {why}", node=node, level="warning")
                    reported = why
                retry = (exc.body.get("details") or {}).get("retryAfterSeconds") or opts.evict_retry
                if time.monotonic() + min(float(retry), opts.evict_retry) > deadline:
                    return f"pod {ns}/{name} is still blocked after {opts.drain_timeout:g} s: {why}"
                await asyncio.sleep(min(float(retry), opts.evict_retry))
        # Evicted: wait until it is gone (its grace period).
        poll = 0.1
        evicted_at = time.monotonic()
        while time.monotonic() < deadline:
            cur = await op.read(ctx.cluster)
            if cur is None:
                return ""
            # Its grace period counted on this machine's clock from the eviction (the cluster's may differ).
            grace = (cur.get("metadata") or {}).get("deletionGracePeriodSeconds")
            if grace is not None and time.monotonic() - evicted_at > float(grace) + 1.0:
                # Past its grace and still there: on a node whose kubelet is silent it stays so (nothing confirms).
                silent = kubelet_silent(await self._current_node(ctx, node))
                if silent:
                    return (
                        f"pod {ns}/{name} was evicted but stays Terminating: node {node} is {silent}, and no kubelet "
                        "confirms the deletion; it goes once the kubelet is back or the Node object is deleted."
                    )
            await asyncio.sleep(poll)
            poll = min(poll * 2, opts.pod_gone_poll)
        return f"pod {ns}/{name} was evicted but has not terminated after {opts.drain_timeout:g} s."

    async def _replacements(self, ctx: Context, evicted: list[dict], deadline: float) -> None:
        """Wait (until the drain's deadline) for the evicted pods' controllers to have their pods Running off these
        nodes. A replacement the scheduler says does not fit is reported once and not waited for (the preflight said
        whether the fleet has room)."""
        owners: dict[tuple[str, str, str], int] = {}
        for pod in evicted:
            ref = owner_of(pod)
            if ref is not None and ref.get("kind") != "Node":
                key = (pod["metadata"]["namespace"], ref.get("kind", ""), ref.get("name", ""))
                owners[key] = owners.get(key, 0) + 1
        if not owners:
            return
        told: set[str] = set()
        last = -1
        started = time.monotonic()
        total = sum(owners.values())
        while True:
            waiting = 0
            for ns in sorted({k[0] for k in owners}):
                pods, _ = await ctx.cluster.list_all(f"/api/v1/namespaces/{ns}/pods")
                for p in pods:
                    ref = owner_of(p) or {}
                    md = p.get("metadata") or {}
                    if (ns, ref.get("kind", ""), ref.get("name", "")) not in owners or md.get("deletionTimestamp"):
                        continue
                    st = p.get("status") or {}
                    if (p.get("spec") or {}).get("nodeName") in self.nodes or st.get("phase") != "Pending":
                        continue
                    unschedulable = next(
                        (
                            c
                            for c in st.get("conditions") or ()
                            if c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
                        ),
                        None,
                    )
                    if unschedulable is not None:
                        if md.get("name") not in told:
                            told.add(md.get("name", ""))
                            ctx.emit(
                                self.id,
                                0,
                                0,
                                f"{ns}/{md.get('name')} stays Pending: "
                                + (unschedulable.get("message") or "no node fits"),
                                level="warning",
                            )
                        continue
                    waiting += 1
            if not waiting:
                return
            if time.monotonic() > deadline:
                ctx.emit(self.id, 0, 0, f"{waiting} replacement pod(s) are still starting elsewhere", level="warning")
                return
            if waiting != last:
                last = waiting
                ctx.emit(
                    self.id,
                    total - waiting,
                    total,
                    f"waiting for {waiting} replacement pod(s) to run elsewhere ({time.monotonic() - started:.0f} s)",
                )
            await asyncio.sleep(ctx.options.pod_gone_poll)

    @staticmethod
    async def _current_node(ctx: Context, node: str) -> dict | None:
        try:
            return await ctx.cluster.get(f"/api/v1/nodes/{node}")
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    @staticmethod
    async def _current(ctx: Context, path: str, uid: str | None) -> dict | None:
        try:
            cur = await ctx.cluster.get(path)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise
        return cur if (cur.get("metadata") or {}).get("uid") == uid else None

    async def verify(self, ctx: Context) -> list[str]:
        out = []
        for node in self.nodes:
            left = [p for p in await node_pods(ctx, node) if not skip_reason(p)]
            if left:
                out.append(
                    f"node {node} still runs {len(left)} pod(s) a drain evicts: "
                    + ", ".join(p["metadata"]["name"] for p in left[:5])
                )
        return out

    async def observe(self, ctx: Context, intent: dict) -> bool | None:
        obj = intent.get("object") or {}
        if obj.get("kind") != "Pod":
            return None
        uid = intent.get("key", "").rsplit("/", 1)[-1]
        cur = await self._current(ctx, f"/api/v1/namespaces/{obj.get('namespace')}/pods/{obj.get('name')}", uid)
        return cur is None or bool((cur.get("metadata") or {}).get("deletionTimestamp"))
