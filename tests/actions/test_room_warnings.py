"""The preflight's room check (actions/preflight.room_warnings) gives, on random fleets, exactly the warning of the
plain first-fit walk it replaced (each evicted GPU pod, most GPUs first, to the node with the fewest free GPUs that
holds it, selects it and tolerates it), though it holds each pod template against the nodes once, not each pod."""

from __future__ import annotations

import random
import types

from dragoman.actions.preflight import _free_gpus, room_warnings
from dragoman.actions.steps import Change, StepPlan
from dragoman.fleet.k8s import pod_matches_node, untolerated_taints

GPU = "nvidia.com/gpu"


def _walk(nodes: list[dict], pods: list[dict], plans: list[StepPlan]) -> list[str]:
    evicted = [c for p in plans for c in p.changes if c.kind == "Pod" and c.verb == "evict" and c.detail.get("gpus")]
    drained = {n for p in plans if p.step in ("cordon", "drain") for n in p.nodes}
    by_node: dict[str, list[dict]] = {}
    for pod in pods:
        by_node.setdefault(pod["spec"].get("nodeName") or "", []).append(pod)
    pod_by_key = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}
    free = {
        n["metadata"]["name"]: _free_gpus(n, by_node.get(n["metadata"]["name"], []))
        for n in nodes
        if n["metadata"]["name"] not in drained and not n["spec"].get("unschedulable")
    }
    node_by_name = {n["metadata"]["name"]: n for n in nodes}
    homeless, short = [], 0
    for c in sorted(evicted, key=lambda c: -int(c.detail["gpus"])):
        spec = pod_by_key[(c.namespace, c.name)]["spec"]
        want = int(c.detail["gpus"])
        for name, room in sorted(free.items(), key=lambda kv: kv[1]):
            if (
                room >= want
                and pod_matches_node(spec, node_by_name[name])
                and not untolerated_taints(spec, node_by_name[name])
            ):
                free[name] -= want
                break
        else:
            homeless.append(f"{c.namespace}/{c.name} ({want} GPU{'s' if want > 1 else ''})")
            short += want
    return homeless


def _fleet(rng: random.Random) -> tuple[list[dict], list[dict], list[StepPlan]]:
    pools = ["a", "b", "c"]
    nodes = []
    for i in range(rng.randint(3, 25)):
        taints = [{"key": "gpu", "value": "x", "effect": "NoSchedule"}] if rng.random() < 0.3 else []
        nodes.append(
            {
                "metadata": {"name": f"n{i}", "labels": {"pool": rng.choice(pools), "zone": rng.choice("xy")}},
                "spec": {"taints": taints, "unschedulable": rng.random() < 0.1},
                "status": {"allocatable": {GPU: str(rng.choice([0, 2, 4, 8]))}},
            }
        )
    pods, changes = [], []
    templates = [
        {
            "nodeSelector": {"pool": rng.choice(pools)} if rng.random() < 0.7 else {},
            "tolerations": [{"key": "gpu", "operator": "Exists"}] if rng.random() < 0.5 else [],
            "gpus": rng.choice([1, 1, 2, 4]),
        }
        for _ in range(rng.randint(1, 4))
    ]
    for i in range(rng.randint(1, 40)):
        t = rng.choice(templates)
        node = rng.choice(nodes)["metadata"]["name"]
        spec = {
            "nodeName": node,
            "nodeSelector": t["nodeSelector"],
            "tolerations": t["tolerations"],
            "containers": [{"name": "c", "resources": {"limits": {GPU: str(t["gpus"])}}}],
        }
        pods.append({"metadata": {"namespace": "ns", "name": f"p{i}"}, "spec": spec, "status": {"phase": "Running"}})
    drained = sorted({n["metadata"]["name"] for n in nodes if rng.random() < 0.3})
    for p in pods:
        if p["spec"]["nodeName"] in drained:
            gpus = int(p["spec"]["containers"][0]["resources"]["limits"][GPU])
            changes.append(Change("Pod", p["metadata"]["name"], "ns", "evict", detail={"gpus": gpus}))
    plans = [StepPlan("drain", "drain", "Drain", True, False, drained, changes)]
    return nodes, pods, plans


async def test_the_room_check_is_the_plain_first_fit_walk_on_random_fleets() -> None:
    warned = 0
    for seed in range(300):
        nodes, pods, plans = _fleet(random.Random(seed))
        ctx = types.SimpleNamespace(reads={"picture": types.SimpleNamespace(objects={"Node": nodes, "Pod": pods})})
        got = await room_warnings(ctx, plans)  # type: ignore[arg-type]
        homeless = _walk(nodes, pods, plans)
        if not homeless:
            assert got == [], seed
            continue
        warned += 1
        shown = ", ".join(homeless[:6]) + (f" and {len(homeless) - 6} more" if len(homeless) > 6 else "")
        assert len(got) == 1 and f"no room for {len(homeless)} evicted" in got[0] and shown in got[0], seed
    assert 30 < warned < 270  # both outcomes are exercised
