"""The writes of the ownership switch as data (a Change's `detail.op`): node labels, DaemonSet node affinity, helm upgrades, DeviceClasses — applied idempotently through the audited write path, and inverted for rollback."""

from __future__ import annotations

import json
from typing import Any

from dragoman.actions import helm
from dragoman.actions.steps import Change, Context
from dragoman.fleet.cluster import ApiError

MERGE = "application/merge-patch+json"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def copy(v: Any) -> Any:
    return json.loads(json.dumps(v))


# ---------------------------------------------------------------- node affinity edits


def required_terms(pod_spec: dict) -> list[dict] | None:
    req = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(REQUIRED)
    return None if req is None else list(req.get("nodeSelectorTerms") or [])


def with_not_in(required: dict | None, key: str, value: str) -> dict:
    """The required node affinity with `key NotIn [value]` in every term (terms are OR-ed); created when absent."""
    req = copy(required) if required else {}
    terms = req.get("nodeSelectorTerms") or [{}]
    out = []
    for t in terms:
        t = copy(t)
        exprs = list(t.get("matchExpressions") or [])
        done = False
        for e in exprs:
            if e.get("key") == key and e.get("operator") == "NotIn":
                if value not in (e.get("values") or []):
                    e["values"] = list(e.get("values") or []) + [value]
                done = True
            elif e.get("key") == key and e.get("operator") == "In" and value in (e.get("values") or []):
                e["values"] = [v for v in e["values"] if v != value]
                if not e["values"]:
                    e["values"] = ["__dragoman-none__"]
                done = True
        if not done:
            exprs.append({"key": key, "operator": "NotIn", "values": [value]})
        t["matchExpressions"] = exprs
        out.append(t)
    req["nodeSelectorTerms"] = out
    return req


def with_pool(required: dict | None, key: str, value: str) -> dict | None:
    """The required node affinity extended to nodes with `key=value`: the pool added to each term's `In` on the key
    (other conditions kept), a NotIn on it lifted, or one term for the pool added; None when nothing restricts."""
    if not required:
        return None
    req = copy(required)
    terms = req.get("nodeSelectorTerms") or []
    touched = False
    for t in terms:
        for e in t.get("matchExpressions") or []:
            if e.get("key") != key:
                continue
            if e.get("operator") == "In" and value not in (e.get("values") or []):
                e["values"] = list(e.get("values") or []) + [value]
                touched = True
            elif e.get("operator") == "NotIn" and value in (e.get("values") or []):
                e["values"] = [v for v in e["values"] if v != value]
                touched = True
        t["matchExpressions"] = [
            e for e in t.get("matchExpressions") or [] if not (e.get("operator") == "NotIn" and not e.get("values"))
        ]
    if not touched:
        terms.append({"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]})
    req["nodeSelectorTerms"] = terms
    return req


def without_pool(required: dict | None, key: str, value: str) -> dict:
    """The required node affinity no longer selecting `key=value` (the reverse of with_pool where it added the pool)."""
    return with_not_in(required, key, value)


# ---------------------------------------------------------------- changes


def label_change(node: str, key: str, old: str | None, new: str | None) -> Change:
    cmd = (
        f"kubectl label node {node} {key}={new} --overwrite" if new is not None else f"kubectl label node {node} {key}-"
    )
    return Change(
        "Node",
        node,
        before={"metadata": {"labels": {key: old}}},
        after={"metadata": {"labels": {key: new}}},
        command=cmd,
        detail={"op": "label", "key": key, "value": new},
    )


def term_text(term: dict) -> str:
    parts = [
        f"{e.get('key')} {e.get('operator')} [{', '.join(e.get('values') or [])}]".replace(" []", "")
        for e in term.get("matchExpressions") or []
    ]
    parts += [
        f"{e.get('key')} {e.get('operator')} [{', '.join(e.get('values') or [])}] (field)"
        for e in term.get("matchFields") or []
    ]
    return " && ".join(parts) or "(any node)"


def terms_view(required: dict | None) -> dict:
    """The required node affinity as one line per term: what the plan's diff shows."""
    if not required:
        return {"nodeSelectorTerms": None}
    return {"nodeSelectorTerms": {str(i): term_text(t) for i, t in enumerate(required.get("nodeSelectorTerms") or [])}}


def affinity_change(ds: dict, new_required: dict | None, why: str) -> Change:
    md = ds["metadata"]
    old = (
        ((((ds.get("spec") or {}).get("template") or {}).get("spec") or {}).get("affinity") or {})
        .get("nodeAffinity", {})
        .get(REQUIRED)
    )
    patch = {"spec": {"template": {"spec": {"affinity": {"nodeAffinity": {REQUIRED: new_required}}}}}}
    cmd = f"kubectl patch daemonset -n {md['namespace']} {md['name']} --type=merge -p '{json.dumps(patch, separators=(',', ':'))}'"
    return Change(
        "DaemonSet",
        md["name"],
        md["namespace"],
        before={"requiredNodeAffinity": terms_view(old)},
        after={"requiredNodeAffinity": terms_view(new_required)},
        command=cmd,
        detail={"op": "affinity", "required": new_required, "original": old, "why": why},
    )


def helm_change(
    cluster: Any,
    release: str,
    namespace: str,
    chart: str,
    version: str,
    old_values: dict,
    new_values: dict,
    *,
    install: bool = False,
    shown: tuple[str, ...] = (),
) -> Change:
    """A `helm upgrade` of `release` to exactly `new_values` (the installed chart and version)."""
    path = helm.values_file(new_values, release)
    args = helm.upgrade_args(cluster, release, namespace, chart, version, path, install=install)
    keys = shown or tuple(sorted(set(old_values) | set(new_values)))
    before = {"values": {k: old_values.get(k) for k in keys}}
    after = {"values": {k: new_values.get(k) for k in keys}}
    return Change(
        "HelmRelease",
        release,
        namespace,
        verb="install" if install else "upgrade",
        before=before,
        after=after,
        command=helm.command_text(args),
        detail={
            "op": "helm",
            "chart": chart,
            "version": version,
            "values": new_values,
            "install": install,
            "oldValues": old_values,
        },
    )


def class_change(name: str, old: dict | None, body: dict, why: str) -> Change:
    verb = "create" if old is None else "update"
    before = None if old is None else {"spec": old.get("spec")}
    after = {"spec": body.get("spec")}
    cmd = f"kubectl {'create' if old is None else 'replace'} -f deviceclass-{name}.yaml  # the spec shown above"
    return Change(
        "DeviceClass",
        name,
        verb=verb,
        before=before,
        after=after,
        command=cmd,
        detail={"op": "class", "body": body, "why": why},
    )


def gitops_change(kind: str, ns: str, name: str, who: str, text: str) -> Change:
    return Change(
        kind, name, ns, verb="wait", command=f"# in {who}: {text}", detail={"op": "gitops", "owner": who, "text": text}
    )


# ---------------------------------------------------------------- applying


async def current(ctx: Context, change: Change) -> Any:
    """What the cluster shows now for the part of the object this change touches (None when absent)."""
    op = change.detail.get("op")
    try:
        if op == "label":
            node = await ctx.cluster.get(f"/api/v1/nodes/{change.name}")
            return ((node.get("metadata") or {}).get("labels") or {}).get(change.detail["key"])
        if op == "affinity":
            ds = await ctx.cluster.get(f"/apis/apps/v1/namespaces/{change.namespace}/daemonsets/{change.name}")
            return (
                ((((ds.get("spec") or {}).get("template") or {}).get("spec") or {}).get("affinity") or {})
                .get("nodeAffinity", {})
                .get(REQUIRED)
            )
        if op == "class":
            obj = await ctx.cluster.get(f"/apis/resource.k8s.io/v1/deviceclasses/{change.name}")
            return obj.get("spec")
        if op == "helm":
            return await helm.get_values(ctx.cluster, change.name, change.namespace)
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise
    return None


def target(change: Change) -> Any:
    op = change.detail.get("op")
    if op == "label":
        return change.detail.get("value")
    if op == "affinity":
        return change.detail.get("required")
    if op == "class":
        return (change.detail.get("body") or {}).get("spec")
    if op == "helm":
        return change.detail.get("values")
    return None


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


async def is_done(ctx: Context, change: Change) -> bool:
    op = change.detail.get("op")
    if op == "class" and change.verb == "delete":
        return await current(ctx, change) is None
    return _same(await current(ctx, change), target(change))


async def execute(ctx: Context, step_id: str, change: Change, label: str) -> None:
    """Make one change unless the cluster already shows it (then a crash's dangling intent is closed)."""
    key = f"{ctx.plan_id}/{step_id}/{change.ref}"
    op = change.detail.get("op")
    if op == "gitops":
        return

    async def prepare() -> Any:
        return None if await is_done(ctx, change) else await _sender(ctx, change)

    await ctx.write_retrying(step_id, change, key, prepare, label=label, dry_run=True)


async def _sender(ctx: Context, change: Change):
    op = change.detail.get("op")
    q = lambda dry: {"dryRun": "All"} if dry else None  # noqa: E731
    if op == "label":
        node = await ctx.cluster.get(f"/api/v1/nodes/{change.name}")
        body = {
            "metadata": {
                "resourceVersion": node["metadata"]["resourceVersion"],
                "labels": {change.detail["key"]: change.detail.get("value")},
            }
        }

        async def do(dry: bool) -> Any:
            return await ctx.cluster.request(
                "PATCH", f"/api/v1/nodes/{change.name}", body, query=q(dry), content_type=MERGE
            )

        return do
    if op == "affinity":
        path = f"/apis/apps/v1/namespaces/{change.namespace}/daemonsets/{change.name}"
        ds = await ctx.cluster.get(path)
        body = {
            "metadata": {"resourceVersion": ds["metadata"]["resourceVersion"]},
            "spec": {"template": {"spec": {"affinity": {"nodeAffinity": {REQUIRED: change.detail.get("required")}}}}},
        }

        async def do(dry: bool) -> Any:
            return await ctx.cluster.request("PATCH", path, body, query=q(dry), content_type=MERGE)

        return do
    if op == "class":
        body = copy(change.detail["body"])
        base = "/apis/resource.k8s.io/v1/deviceclasses"
        if change.verb == "delete":

            async def do(dry: bool) -> Any:
                return await ctx.cluster.request("DELETE", f"{base}/{change.name}", query=q(dry))

            return do
        try:
            cur = await ctx.cluster.get(f"{base}/{change.name}")
        except ApiError as exc:
            if exc.status != 404:
                raise
            cur = None
        if cur is None:
            body.get("metadata", {}).pop("resourceVersion", None)

            async def do(dry: bool) -> Any:
                return await ctx.cluster.request("POST", base, body, query=q(dry))

            return do
        body["metadata"] = {
            **(cur.get("metadata") or {}),
            **{k: v for k, v in (body.get("metadata") or {}).items() if k in ("labels", "annotations")},
        }
        body["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]

        async def do(dry: bool) -> Any:
            return await ctx.cluster.request("PUT", f"{base}/{change.name}", body, query=q(dry))

        return do
    if op == "helm":
        d = change.detail
        path = helm.values_file(d["values"], change.name)
        args = helm.upgrade_args(
            ctx.cluster, change.name, change.namespace, d["chart"], d["version"], path, install=bool(d.get("install"))
        )

        async def do(dry: bool) -> Any:
            return await helm.run(args + (["--dry-run=server"] if dry else []))

        return do
    raise ValueError(f"unknown operation {op!r}")


def inverse(change: Change, old_object: Any = None) -> Change | None:
    """The change that undoes `change` (what rollback records before the write)."""
    op = change.detail.get("op")
    if op == "label":
        old = ((change.before or {}).get("metadata") or {}).get("labels", {}).get(change.detail["key"])
        return label_change(change.name, change.detail["key"], change.detail.get("value"), old)
    if op == "affinity":
        old = change.detail.get("original")
        return Change(
            "DaemonSet",
            change.name,
            change.namespace,
            before=change.after,
            after=change.before,
            command=f"kubectl patch daemonset -n {change.namespace} {change.name} --type=merge (the original node affinity)",
            detail={
                "op": "affinity",
                "required": old,
                "original": change.detail.get("required"),
                "why": "restore the original node affinity",
            },
        )
    if op == "helm":
        d = change.detail
        if d.get("install"):
            return None  # an install is undone with `helm uninstall`, named in the rollback notes, not run
        c = Change(
            "HelmRelease",
            change.name,
            change.namespace,
            verb="upgrade",
            before=change.after,
            after=change.before,
            command=change.command.replace(f"{change.name}-values.json", f"{change.name}-values.json"),
            detail={
                "op": "helm",
                "chart": d["chart"],
                "version": d["version"],
                "values": d.get("oldValues") or {},
                "install": False,
                "oldValues": d["values"],
            },
        )
        return c
    if op == "class":
        body = change.detail.get("body") or {}
        if change.verb == "create":
            return Change(
                "DeviceClass",
                change.name,
                verb="delete",
                before=change.after,
                after=None,
                command=f"kubectl delete deviceclass {change.name}",
                detail={"op": "class", "body": body, "why": "remove the class dragoman created"},
            )
        old_spec = (change.before or {}).get("spec")
        return Change(
            "DeviceClass",
            change.name,
            verb="update",
            before=change.after,
            after=change.before,
            command=f"kubectl replace deviceclass {change.name} (the original spec)",
            detail={"op": "class", "body": {**body, "spec": old_spec}, "why": "restore the original class"},
        )
    return None


# ---------------------------------------------------------------- the switch steps' shared shape

from dragoman.actions.steps import Step, StepPlan  # noqa: E402


def option(ctx: Context, name: str, default: Any) -> Any:
    """A switch option from Options when the CLI set it, else its default (Options predates the switch)."""
    return getattr(ctx.options, name, default)


class SwitchStep(Step):
    """A step whose plan is a list of data changes: apply makes each (recording its inverse first), verify polls
    until the cluster shows the effect, rollback applies the recorded inverses newest first."""

    reversible = True

    @property
    def rolling_back(self) -> bool:
        return self.id.startswith("rollback:")

    async def apply(self, ctx: Context, plan: StepPlan) -> list[str]:
        mine = {f"{ctx.plan_id}/{self.id}/{c.ref}" for c in plan.changes}
        for key, rec in list(ctx.dangling.items()):
            # A write a crash left without outcome that the fresh plan no longer needs: the cluster shows it made.
            if rec.get("step") == self.id and key not in mine:
                obj = rec.get("object") or {}
                ctx.close_dangling(
                    key,
                    self.id,
                    Change(
                        obj.get("kind", ""),
                        obj.get("name", ""),
                        obj.get("namespace", ""),
                        rec.get("verb", "patch"),
                        after=rec.get("after"),
                    ),
                    True,
                )
        total = len(plan.changes)
        for i, change in enumerate(plan.changes, 1):
            if change.detail.get("op") == "gitops":
                ctx.emit(self.id, i - 1, total, f"waiting: {change.detail.get('text')}", level="warning")
                continue
            if not self.rolling_back and ctx.state is not None and not ctx.read_only:
                inv = inverse(change)
                if inv is not None:
                    await ctx.state.set_step(
                        self.id, self.name, "running", by=ctx.by, rollback={"changes": [inv.to_json()]}
                    )
            await execute(ctx, self.id, change, label=self.name)
            ctx.emit(self.id, i, total, f"{change.verb} {change.ref}")
        return []

    async def rollback_plan(self, ctx: Context, record: dict) -> StepPlan | None:
        changes = [Change.from_json(c) for c in reversed(record.get("changes") or [])]
        if not changes:
            return None
        step = type(self)(f"rollback:{self.id}", [])
        plan = step.new_plan()
        plan.title = f"Undo: {self.title.lower()}"
        for c in changes:
            if not await is_done(ctx, c):
                plan.changes.append(c)
        plan.nodes = sorted(ctx.nodes)
        plan.blast_nodes = sorted(ctx.nodes) if plan.changes else []
        plan.blast_pools = [ctx.pool] if plan.changes else []
        return plan

    async def poll(self, ctx: Context, check, timeout: float | None = None, what: str = "") -> list[str]:
        from dragoman.actions.gitops import wait_for

        t = option(ctx, "switch_timeout", 300.0) if timeout is None else timeout
        return await wait_for(
            check,
            timeout=t,
            poll=option(ctx, "switch_poll", 0.5),
            on_wait=lambda m: ctx.emit(self.id, 0, 0, f"waiting: {m}"),
        )
