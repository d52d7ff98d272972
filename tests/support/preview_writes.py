"""Preview = writes: run a pool's whole plan, then its rollback, and compare what each plan previewed with the intents
the audit log recorded — the same objects, the same count, the same bodies, step by step."""

from __future__ import annotations

import collections
import json
import pathlib
from typing import Any


def demo_pools() -> list[str]:
    """Every pool of the demo (sim/scenarios/demo.yaml, read as it is: a pool added there is tested too)."""
    from dragoman.sim import scenario as scenario_mod

    nodes = [o for o in scenario_mod.load("demo").objects if o.get("kind") == "Node"]
    return sorted({(n["metadata"].get("labels") or {}).get("cloud.google.com/gke-nodepool", "") for n in nodes} - {""})


def _body(verb: str, kind: str, before: Any, after: Any, uid: str | None) -> str:
    # An eviction (or a forced delete) is of one pod: its uid. The audit's record adds the pod's node and phase.
    if kind == "Pod" and uid:
        return f"uid={uid}"
    return json.dumps([before, after], sort_keys=True)


def previewed(plan) -> collections.Counter:
    out: collections.Counter = collections.Counter()
    for s in plan.steps:
        for c in s.changes:
            if c.verb == "wait":  # a GitOps change: shown, never sent
                continue
            out[
                (
                    s.id,
                    c.verb,
                    c.kind,
                    c.namespace,
                    c.name,
                    _body(c.verb, c.kind, c.before, c.after, c.detail.get("uid")),
                )
            ] += 1
    return out


def _retried(records: list[dict]) -> set[str]:
    """Write ids of intents the server refused (a 409 because the object changed since it was read, a 429) and that
    were sent again under a new intent of the same key: one write, as the preview lists it, logged as two attempts."""
    outcome = {r["writeId"]: r.get("result") for r in records if r.get("record") == "outcome"}
    out, later = set(), set()
    for r in reversed(records):
        if r.get("record") != "intent":
            continue
        if outcome.get(r["writeId"]) == "failed" and r.get("key") in later:
            out.add(r["writeId"])
        later.add(r.get("key"))
    return out


def intents(audit: pathlib.Path, plan_id: str) -> collections.Counter:
    out: collections.Counter = collections.Counter()
    if not audit.exists():
        return out
    records = [r for r in map(json.loads, audit.read_text().splitlines()) if r.get("planId") == plan_id]
    retried = _retried(records)
    for r in records:
        if r.get("record") != "intent" or r["writeId"] in retried:
            continue
        o = r["object"]
        uid = (r.get("before") or {}).get("uid") if o["kind"] == "Pod" and r["verb"] in ("evict", "delete") else None
        out[
            (
                r["step"],
                r["verb"],
                o["kind"],
                o.get("namespace", ""),
                o["name"],
                _body(r["verb"], o["kind"], r.get("before"), r.get("after"), uid),
            )
        ] += 1
    return out


def compare(plan, result, audit: pathlib.Path) -> list[str]:
    """Differences between the plan's preview and the audit's intents: every step that finished wrote exactly its
    preview; a step that stopped wrote part of it and nothing else; a step that did not run wrote nothing."""
    want, got = previewed(plan), intents(audit, plan.id)
    out = []
    for s in plan.steps:
        w = collections.Counter({k: v for k, v in want.items() if k[0] == s.id})
        g = collections.Counter({k: v for k, v in got.items() if k[0] == s.id})
        state = result.steps.get(s.id)
        if state == "done" and w != g:
            out.append(f"{s.id}: previewed {sorted(w.elements())} wrote {sorted(g.elements())}")
        elif state != "done" and g - w:
            out.append(f"{s.id} ({state}): wrote what it did not preview: {sorted((g - w).elements())}")
    stray = [k for k in got if k[0] not in {s.id for s in plan.steps}]
    if stray:
        out.append(f"intents of steps the plan does not have: {stray}")
    return out


async def forward_and_back(cluster, pool: str, audit: pathlib.Path, options) -> dict:
    """The pool's default plan, then its rollback, each compared; returns what was seen for the report."""
    from dragoman.actions.runner import Runner

    seen: dict = {"pool": pool}
    for rollback in (False, True):
        runner = Runner(cluster, pool, options=options, audit_path=str(audit))
        plan = await runner.prepare(rollback=rollback)
        key = "back" if rollback else "forward"
        n = sum(previewed(plan).values())
        if plan.blockers:
            seen[key] = {"previewed": n, "blocked": plan.blockers}
            assert not intents(audit, plan.id), f"{pool}: a blocked plan wrote"
            continue
        result = await runner.run(plan)
        seen[key] = {
            "previewed": n,
            "written": sum(intents(audit, plan.id).values()),
            "steps": result.steps,
            "problems": result.problems,
            "differences": compare(plan, result, audit),
        }
    return seen
