"""A pool's migration plan: batches, ordered steps with stable ids, its JSON file, its text, and the drift check
`--apply-plan` runs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import textwrap

from dragoman.actions.cordon import node_fingerprint
from dragoman.actions.drain import node_pods, pods_fingerprint
from dragoman.actions.registry import preflight, step_class
from dragoman.actions.state import PoolState
from dragoman.actions.steps import BATCHED, DEFAULT_PLAN, Context, StepPlan
from dragoman.fleet.cluster import ApiError
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.fleet.k8s.times import now_text
from dragoman.fleet.migration import STEP_ORDER

SCHEMA_VERSION = 1


def batches(nodes: list[str], canary: str = "", batch_size: int = 0) -> list[tuple[str, list[str]]]:
    """(label, nodes): the canary node alone first, then `batch_size` at a time; the whole pool by default."""
    nodes = sorted(nodes)
    out: list[tuple[str, list[str]]] = []
    rest = list(nodes)
    if canary:
        if canary not in nodes:
            raise UserError(
                f"--canary-node {canary} is not a node of the pool (its nodes: {', '.join(nodes) or 'none'}).",
                ExitCode.INPUT,
            )
        out.append(("canary", [canary]))
        rest.remove(canary)
    if not rest:
        return out
    if batch_size and batch_size > 0:
        for i in range(0, len(rest), batch_size):
            out.append((f"batch-{len(out) + 1}", rest[i : i + batch_size]))
    else:
        out.append(("all" if not out else f"batch-{len(out) + 1}", rest))
    return out


async def suggested_batches(ctx: Context) -> tuple[int, str, str]:
    """(batch size, canary node, why): the node with the fewest pods to evict first, then as many nodes at a time as
    the pods' PodDisruptionBudgets and the GPUs free outside the pool allow (at least one, never the whole rest)."""
    from dragoman.actions.drain import gpu_request, pdbs_for, skip_reason
    from dragoman.actions.preflight import _free_gpus

    nodes = sorted(ctx.nodes)
    if len(nodes) < 2:
        return 0, "", "one node: nothing to batch"
    pods, _ = await ctx.cluster.list_all("/api/v1/pods")
    fleet, _ = await ctx.cluster.list_all("/api/v1/nodes")
    pdbs, _ = await ctx.cluster.list_all("/apis/policy/v1/poddisruptionbudgets")
    by_node: dict[str, list[dict]] = {}
    for p in pods:
        by_node.setdefault((p.get("spec") or {}).get("nodeName") or "", []).append(p)
    evicted = {n: [p for p in by_node.get(n, []) if not skip_reason(p)] for n in nodes}
    per_node = max((sum(gpu_request(p) for p in ps) for ps in evicted.values()), default=0)
    free = sum(
        max(0, _free_gpus(n, by_node.get(n["metadata"]["name"], [])))
        for n in fleet
        if n["metadata"]["name"] not in ctx.nodes and not (n.get("spec") or {}).get("unschedulable")
    )
    by_room = len(nodes) if per_node == 0 else free // per_node
    allowed = [
        int((pdb.get("status") or {}).get("disruptionsAllowed") or 0)
        for pdb in pdbs
        if any(pdbs_for(p, [pdb]) for ps in evicted.values() for p in ps)
    ]
    by_pdb = min(allowed) if allowed else len(nodes)
    size = max(1, min(by_room, by_pdb, len(nodes) - 1))
    canary = min(nodes, key=lambda n: (len(evicted[n]), n))
    why = [f"{free} GPU(s) free outside the pool, up to {per_node} evicted per node"]
    if allowed:
        why.append(f"its PodDisruptionBudgets allow {min(allowed)} disruption(s)")
    return size, canary, "; ".join(why)


def step_id(name: str, label: str, single: bool) -> str:
    return name if single else f"{name}@{label}"


@dataclasses.dataclass
class MigrationPlan:
    """The ordered steps of one run against one pool of one cluster, shown whole before anything runs."""

    id: str
    pool: str
    pool_label: str
    cluster: dict
    created: str
    by: dict
    options: dict
    steps: list[StepPlan]
    rollback: bool = False

    @property
    def writes(self) -> bool:
        return any(s.writes for s in self.steps)

    @property
    def blockers(self) -> list[str]:
        return [b for s in self.steps for b in s.blockers]

    @property
    def dangerous(self) -> bool:
        return any(s.dangerous and s.writes for s in self.steps)

    def to_json(self) -> dict:
        return {
            "schemaVersion": SCHEMA_VERSION,
            "kind": "MigrationPlan",
            "id": self.id,
            "pool": self.pool,
            "poolLabel": self.pool_label,
            "cluster": self.cluster,
            "createdAt": self.created,
            "createdBy": self.by,
            "options": self.options,
            "rollback": self.rollback,
            "steps": [s.to_json() for s in self.steps],
        }

    @classmethod
    def from_json(cls, d: dict) -> MigrationPlan:
        problem = plan_problem(d)
        if problem:
            raise UserError(
                f"the plan file is not a plan dragoman can apply: {problem}; nothing was read from it or written. "
                "Write one with `dragoman migrate --plan --output json`.",
                ExitCode.INPUT,
            )
        if not isinstance(d, dict) or d.get("kind") != "MigrationPlan":
            raise UserError(
                "the plan file is not a dragoman MigrationPlan (write one with `dragoman migrate --plan "
                "--output json`).",
                ExitCode.INPUT,
            )
        if d.get("schemaVersion") != SCHEMA_VERSION:
            raise UserError(
                f"the plan file has schemaVersion {d.get('schemaVersion')!r}; this dragoman reads {SCHEMA_VERSION}.",
                ExitCode.INPUT,
            )
        return cls(
            d["id"],
            d["pool"],
            d.get("poolLabel", ""),
            d.get("cluster") or {},
            d.get("createdAt", ""),
            d.get("createdBy") or {},
            d.get("options") or {},
            [StepPlan.from_json(s) for s in d.get("steps") or []],
            bool(d.get("rollback")),
        )


_STR_LISTS = ("nodes", "notes", "warnings", "blockers")


def _name_problem(value: object, what: str) -> str:
    """ "" when `value` is a Kubernetes object name (DNS-1123 subdomain), else what is wrong with it."""
    from dragoman.fleet.errors import printable
    from dragoman.fleet.k8s.names import is_dns1123_subdomain

    if not isinstance(value, str) or is_dns1123_subdomain(value):
        return f"{what} {printable(repr(value), 60)} is not a Kubernetes name"
    return ""


def _json_type(value: object) -> str:
    """The JSON word for a decoded value's type ("null", "a string", "a number", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    return {str: "a string", int: "a number", float: "a number", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__
    )


def plan_problem(d: object) -> str:
    """What makes `d` (a decoded plan file) not a MigrationPlan this dragoman wrote, or "" — every field the runner
    reads checked for its type, so a hand-edited or hostile file is refused whole instead of half-applied (a `null`
    file once became a fresh, unreviewed plan)."""
    if not isinstance(d, dict):
        return f"it holds {_json_type(d)}, not a MigrationPlan object"
    if d.get("kind") != "MigrationPlan":
        return "its kind is not MigrationPlan"
    if d.get("schemaVersion") != SCHEMA_VERSION:
        return f"its schemaVersion is not {SCHEMA_VERSION}"
    for key in ("id", "pool"):
        if not isinstance(d.get(key), str) or not d[key]:
            return f"it has no {key}"
    for key in ("poolLabel", "createdAt"):
        if not isinstance(d.get(key, ""), str):
            return f"its {key} is not a string"
    for key in ("createdBy", "options"):
        if not isinstance(d.get(key) or {}, dict):
            return f"its {key} is not an object"
    if not isinstance(d.get("rollback", False), bool):
        return "its rollback is not true or false"
    cluster = d.get("cluster")
    if (
        not isinstance(cluster, dict)
        or not isinstance(cluster.get("kubeSystemUID"), str)
        or not cluster["kubeSystemUID"]
    ):
        return "it names no cluster (cluster.kubeSystemUID)"
    steps = d.get("steps")
    if not isinstance(steps, list):
        return f"its steps are {'missing' if steps is None else _json_type(steps)}, not a list"
    seen: set[str] = set()
    for n, sp in enumerate(steps, 1):
        where = f"step {n}"
        if not isinstance(sp, dict):
            return f"{where} is {_json_type(sp)}, not an object"
        if not isinstance(sp.get("id"), str) or not sp["id"] or sp["id"] in seen:
            return f"{where} has no id of its own"
        seen.add(sp["id"])
        if sp.get("step") not in STEP_ORDER:
            return f"{where} ({sp['id'][:60]}) is not a step dragoman runs"
        if not isinstance(sp.get("title", ""), str):
            return f"{where} has a title that is not a string"
        for key in _STR_LISTS:
            v = sp.get(key) or []
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                return f"{where}'s {key} are not a list of strings"
        for node in sp.get("nodes") or []:
            if problem := _name_problem(node, f"{where}'s node"):
                return problem
        br = sp.get("blastRadius") or {}
        if not isinstance(br, dict) or not all(
            isinstance(br.get(k) or [], list) and all(isinstance(x, str) for x in br.get(k) or []) for k in br
        ):
            return f"{where}'s blastRadius is not lists of names"
        reads = sp.get("reads") or {}
        if not isinstance(reads, dict) or not all(isinstance(v, str) for v in reads.values()):
            return f"{where}'s reads are not fingerprints"
        for key in reads:
            kind, _, rest = key.partition("/")
            if kind in ("Node", "Pods") and (problem := _name_problem(rest, f"{where}'s read of")):
                return problem
        changes = sp.get("changes") or []
        if not isinstance(changes, list):
            return f"{where}'s changes are not a list"
        for i, c in enumerate(changes, 1):
            if not isinstance(c, dict):
                return f"change {i} of {where} is {_json_type(c)}, not an object"
            if not isinstance(c.get("kind"), str) or not c["kind"]:
                return f"change {i} of {where} has no kind"
            if problem := _name_problem(c.get("name"), f"change {i} of {where} has the name"):
                return problem if "name" in c else f"change {i} of {where} has no name"
            if not isinstance(c.get("namespace") or "", str) or not isinstance(c.get("verb", "patch"), str):
                return f"change {i} of {where} has a namespace or verb that is not a string"
            detail = c.get("detail") or {}
            if not isinstance(detail, dict) or not isinstance(c.get("command", ""), str):
                return f"change {i} of {where} has a detail that is not an object"
            gpus = detail.get("gpus")
            if gpus is not None and (not isinstance(gpus, int) or isinstance(gpus, bool) or gpus < 0):
                return f"change {i} of {where} counts GPUs that are not a whole number"
            from dragoman.actions.operations import DECODERS, decode
            from dragoman.actions.steps import Change

            op = detail.get("op")
            if op is not None and not isinstance(op, str):
                return f"change {i} of {where} names its operation with {_json_type(op)}, not a string"
            if op in DECODERS:
                # A switch step's change must decode to the operation it previews, as the runner will decode it.
                try:
                    decode(Change.from_json(c))
                except Exception:  # noqa: BLE001 - any way it fails to decode, it is not a change dragoman made
                    return f"change {i} of {where} is not a {str(detail['op'])[:40]} change dragoman made"
    return ""


def plan_id(pool: str, cluster_uid: str, steps: list[tuple[str, list[str]]], rollback: bool) -> str:
    """Stable for the same pool, cluster, steps and nodes: a re-run and a resume find the same plan."""
    h = hashlib.sha256(json.dumps([pool, cluster_uid, steps, rollback]).encode()).hexdigest()[:10]
    return f"{'rb' if rollback else 'mig'}-{re.sub(r'[^a-z0-9-]', '-', pool.lower())[:30]}-{h}"


async def build(ctx: Context, names: list[str] | None = None, *, created_by: dict | None = None) -> MigrationPlan:
    """The forward plan: preflight first, then each batched step per batch, in STEP_ORDER."""
    wanted = list(names or DEFAULT_PLAN)
    for n in wanted:
        if n not in STEP_ORDER:
            raise UserError(f"there is no step {n!r}; the steps are: {', '.join(STEP_ORDER)}.", ExitCode.INPUT)
    if "preflight" not in wanted:
        wanted.insert(0, "preflight")
    order = [n for n in STEP_ORDER if n in wanted]
    groups = batches(list(ctx.nodes), ctx.options.canary_node, ctx.options.batch_size)
    single = len(groups) == 1
    specs: list[tuple[str, str, list[str]]] = []
    # Batched steps run batch by batch (cordon, drain of the canary, then the next batch); the others once, in order.
    # Pool-level steps run once in their place; each run of consecutive batched steps (cordon, drain; later
    # uncordon after the switch's pool-level steps) runs batch by batch.
    all_nodes = sorted(ctx.nodes)
    i = 0
    while i < len(order):
        if order[i] not in BATCHED:
            specs.append((order[i], order[i], all_nodes))
            i += 1
            continue
        run = []
        while i < len(order) and order[i] in BATCHED:
            run.append(order[i])
            i += 1
        for label, nodes in groups:
            for n in run:
                specs.append((step_id(n, label, single), n, nodes))
    pid = plan_id(ctx.pool, str(ctx.cluster.kube_system_uid), [(sid, nodes) for sid, _, nodes in specs], False)
    ctx.plan_id = pid
    plans: list[StepPlan] = []
    ctx.anticipated = {}
    # Planning writes nothing, so the steps share one read of the pool's picture (every pod among them).
    with ctx.reading_once():
        for sid, n, nodes in specs:
            step = step_class(n)(sid, nodes)
            sp = await step.plan(ctx)
            st = ctx.state
            if st is not None and st.plan_id == pid and st.step_done(sid) and sp.changes:
                # Resuming this plan: a step an earlier run finished is not made again (the uncordon after it undid
                # the cordon).
                sp.changes = []
                sp.notes.insert(0, "done in an earlier run of this plan.")
            plans.append(sp)
        pre = next((p for p in plans if p.step == "preflight"), None)
        if pre is not None:
            await preflight(pre.id, pre.nodes).check(ctx, plans, pre)
    return MigrationPlan(
        pid, ctx.pool, ctx.pool_label, _cluster(ctx), _now(), created_by or ctx.by, _options(ctx), plans
    )


async def build_rollback(
    ctx: Context, state: PoolState | None, names: list[str] | None = None, *, created_by: dict | None = None
) -> MigrationPlan:
    """Undo what the pool's state records as done, newest first; steps that cannot be undone are named in a note."""
    steps = (state.state.get("steps") or {}) if state else {}
    records = (state.state.get("rollback") or {}) if state else {}
    done = [(sid, e) for sid, e in steps.items() if e.get("state") in ("done", "failed", "running")]
    done.sort(
        key=lambda kv: (STEP_ORDER.index(kv[1].get("step")) if kv[1].get("step") in STEP_ORDER else 0, kv[0]),
        reverse=True,
    )
    plans: list[StepPlan] = []
    notes: list[str] = []
    ctx.anticipated = {}
    # As in build: nothing is written while planning, so the steps share one read of the picture.
    with ctx.reading_once():
        for sid, e in done:
            name = e.get("step", "")
            if names and name not in names:
                continue
            try:
                cls = step_class(name)
            except KeyError:
                continue
            if not cls.reversible:
                if name not in ("preflight",):
                    notes.append(
                        f"{sid} cannot be undone ({name}); evicted pods come back through their controllers once "
                        "the nodes are schedulable."
                    )
                continue
            record = records.get(sid)
            if not record:
                continue
            rp = await cls(sid, []).rollback_plan(ctx, record)
            if rp is not None:
                rp.id = f"rollback:{sid}"
                # Named for what it does ("Uncordon again"), not for the step it undoes.
                rp.title = cls.undo_title or f"Undo: {cls.title[:1].lower()}{cls.title[1:]}"
                plans.append(rp)
    if plans and notes:
        plans[0].notes.extend(notes)
    pid = plan_id(ctx.pool, str(ctx.cluster.kube_system_uid), [(p.id, p.nodes) for p in plans], True)
    ctx.plan_id = pid
    plan = MigrationPlan(
        pid, ctx.pool, ctx.pool_label, _cluster(ctx), _now(), created_by or ctx.by, _options(ctx), plans, rollback=True
    )
    if not plans:
        plan.options["note"] = " ".join(notes) or "nothing recorded to roll back."
    return plan


def _now() -> str:
    return now_text()


def _cluster(ctx: Context) -> dict:
    return {
        "server": ctx.cluster.server,
        "kubeSystemUID": ctx.cluster.kube_system_uid,
        "context": ctx.cluster.context_name,
    }


def _options(ctx: Context) -> dict:
    o = ctx.options
    return {
        "stateNamespace": o.state_namespace,
        "batchSize": o.batch_size,
        "canaryNode": o.canary_node,
        "drainConcurrency": o.drain_concurrency,
        "drainTimeoutSeconds": o.drain_timeout,
        "waitForJobsSeconds": o.wait_for_jobs,
        "forcePods": list(o.force_pods),
    }


def check_cluster(plan: MigrationPlan, ctx: Context) -> None:
    """A plan made against another cluster is refused (server URL and kube-system uid)."""
    want = plan.cluster.get("kubeSystemUID")
    have = ctx.cluster.kube_system_uid
    if want != have:
        raise UserError(
            f"refused: the plan was made for cluster {plan.cluster.get('server')} (kube-system uid {want}); "
            f"this is {ctx.cluster.server} (kube-system uid {have}).",
            ExitCode.REFUSED,
        )
    if plan.pool != ctx.pool:
        raise UserError(f"refused: the plan is for pool {plan.pool}, not {ctx.pool}.", ExitCode.REFUSED)
    # Every node a step would touch is a node of this pool now: a plan naming another pool's node is not this pool's.
    outside = sorted({n for s in plan.steps for n in s.nodes if n not in ctx.nodes})
    if outside:
        raise UserError(
            f"refused: the plan names node(s) that are not in pool {ctx.pool}: {', '.join(outside[:5])}"
            + (" …" if len(outside) > 5 else "")
            + ". Make a new plan.",
            ExitCode.REFUSED,
        )


async def drift(plan: MigrationPlan, ctx: Context) -> list[str]:
    """What changed since the plan read the cluster: each object it read, by its fingerprint."""
    out = []
    for sp in plan.steps:
        for key, fp in sp.reads.items():
            kind, _, rest = key.partition("/")
            try:
                if kind == "Node":
                    now = node_fingerprint(await ctx.cluster.get(f"/api/v1/nodes/{rest}"))
                elif kind == "Pods":
                    now = pods_fingerprint(await node_pods(ctx, rest))
                else:
                    continue
            except ApiError as exc:
                if exc.status != 404:
                    raise
                now = "(gone)"
            if now != fp:
                what = {
                    "Node": f"node {rest} changed (schedulability or identity)",
                    "Pods": f"the pods a drain would evict on node {rest} changed",
                }[kind]
                out.append(f"{sp.id}: {what}")
    return out


# ---------------------------------------------------------------- text


def render(plan: MigrationPlan, width: int = 80) -> list[str]:
    """The whole plan as lines of at most `width` columns."""
    out = [
        f"{'Rollback' if plan.rollback else 'Migration'} plan {plan.id} for pool {plan.pool}",
        f"  cluster {plan.cluster.get('server')} (context {plan.cluster.get('context')})",
    ]
    if not plan.steps:
        out.append("  " + plan.options.get("note", "nothing to do."))
    for i, s in enumerate(plan.steps, 1):
        out.extend(render_step(s, i, width))
    return out


def render_step(s: StepPlan, i: int, width: int = 80) -> list[str]:
    """One step of the plan: its line, blockers, warnings, each change (the first 50), blast radius and notes."""
    w = textwrap.TextWrapper(width=width, subsequent_indent="      ", break_on_hyphens=False)
    out: list[str] = []
    tag = " [dangerous]" if s.dangerous and s.writes else ""
    n = len(s.changes)
    what = "no change" if not n and s.step != "preflight" else (f"{n} change{'s' if n != 1 else ''}" if n else "checks")
    out.append(f"{i:>2}. {s.id} — {s.title}: {what}{tag}")
    for b in s.blockers:
        out.extend(w.wrap(f"    ✗ {b}"))
    for warn in s.warnings:
        out.extend(w.wrap(f"    ! {warn}"))
    for c in s.changes[:50]:
        if c.verb == "evict" or (c.verb == "delete" and "node" in c.detail):
            d = c.detail
            line = f"    {c.verb} {c.namespace}/{c.name} on {d.get('node')} owner {d.get('owner') or '-'}"
            line += f" pdb {d.get('pdb') or '-'} grace {d.get('gracePeriodSeconds')}s"
            if d.get("gpus"):
                line += f" gpus {d['gpus']}"
            out.extend(w.wrap(line))
        elif c.verb == "delete":
            out.extend(w.wrap(f"    delete {c.ref}"))
            if c.command:
                out.extend(w.wrap(f"      $ {c.command}"))
        else:
            out.extend(w.wrap(f"    {c.ref}: " + ", ".join(c.diff())))
            if c.command:
                out.extend(w.wrap(f"      $ {c.command}"))
    if len(s.changes) > 50:
        out.append(f"    … and {len(s.changes) - 50} more")
    if s.blast_nodes:
        nodes = ", ".join(s.blast_nodes[:8]) + (f" (+{len(s.blast_nodes) - 8})" if len(s.blast_nodes) > 8 else "")
        out.extend(w.wrap(f"    blast radius: pool {', '.join(s.blast_pools)}; nodes {nodes}"))
    for note in s.notes:
        out.extend(w.wrap(f"    · {note}"))
    return out
