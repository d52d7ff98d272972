"""Steps on recorded objects, without a server: what cordon, uncordon and drain plan, how a plan is batched, what the
registry runs, and how a switch step records its inverses before it writes and rolls back only what is not undone."""

from __future__ import annotations

import json
import pathlib

from dragoman.actions import operations as opn
from dragoman.actions import plan as planmod
from dragoman.actions.audit import AuditLog
from dragoman.actions.cordon import Cordon, Uncordon
from dragoman.actions.drain import Drain
from dragoman.actions.exclude_plugin import ExcludeDevicePlugin
from dragoman.actions.registry import STEPS, step_class
from dragoman.actions.state import PoolState
from dragoman.actions.steps import Context, Options, StepPlan
from dragoman.actions.verify import GatedUncordon
from dragoman.fleet.migration import MIGRATION_ANNOTATION, STEP_ORDER

from tests.actions.fake_cluster import FakeCluster, node, pod


def context(cluster: FakeCluster, tmp: pathlib.Path, *, state: PoolState | None = None, **opts: object) -> Context:
    nodes = [o for p, o in sorted(cluster.objects.items()) if p.startswith("/api/v1/nodes/")]
    return Context(
        cluster,  # type: ignore[arg-type]
        "gpu",
        "pool",
        nodes,
        audit=AuditLog(tmp / "audit.jsonl", user={"name": "tester"}, cluster=cluster.identity),
        by={"name": "tester"},
        state=state,
        options=Options(**opts),  # type: ignore[arg-type]
        plan_id="plan-1",
    )


def test_the_registry_names_every_step_once_and_runs_the_gated_uncordon() -> None:
    assert tuple(STEPS) == STEP_ORDER
    assert all(cls.name == name for name, cls in STEPS.items())
    assert step_class("uncordon") is GatedUncordon and step_class("cordon") is Cordon


async def test_cordon_plans_only_schedulable_nodes_and_apply_sends_exactly_the_plan(tmp_path: pathlib.Path) -> None:
    cluster = FakeCluster(node("n1"), node("n2", unschedulable=True), node("n3"))
    ctx = context(cluster, tmp_path)
    step = Cordon("cordon", ["n1", "n2", "n3"])
    plan = await step.plan(ctx)
    assert [c.name for c in plan.changes] == ["n1", "n3"] and plan.blast_nodes == ["n1", "n3"]
    assert any("already cordoned" in n and "n2" in n for n in plan.notes)
    assert set(plan.reads) == {"Node/n1", "Node/n2", "Node/n3"}
    cluster.sent.clear()
    assert await step.apply(ctx, plan) == []
    sent = cluster.writes()
    assert [s.path for s in sent] == ["/api/v1/nodes/n1", "/api/v1/nodes/n3"]
    for s, c in zip(sent, plan.changes):
        assert s.body["spec"] == c.after["spec"]  # what was previewed is what went out
        annotation = json.loads(s.body["metadata"]["annotations"][MIGRATION_ANNOTATION])
        assert annotation["state"] == "done" and annotation["step"] == "cordon" and annotation["plan"] == "plan-1"
    assert await step.verify(ctx) == []
    # Planned again, nothing is left to do: idempotent.
    assert (await step.plan(ctx)).changes == []


async def test_a_cordon_rolls_back_through_the_gated_uncordon_and_only_for_the_nodes_it_cordoned(
    tmp_path: pathlib.Path,
) -> None:
    cluster = FakeCluster(node("n1", unschedulable=True), node("n2", unschedulable=True))
    ctx = context(cluster, tmp_path)
    rb = await Cordon("cordon", ["n1", "n2"]).rollback_plan(ctx, {"cordoned": ["n1"]})
    assert rb is not None and rb.step == "uncordon" and rb.id == "rollback:cordon"
    assert [(c.name, c.command) for c in rb.changes] == [("n1", "kubectl uncordon n1")]
    # The runner runs a plan by the step name it carries: the class that planned it.
    runs = step_class(rb.step)(rb.id, rb.nodes)
    assert isinstance(runs, GatedUncordon) and await runs.preconditions(ctx) == []
    assert await runs.apply(ctx, rb) == []
    assert (
        "unschedulable" not in cluster.objects["/api/v1/nodes/n1"]["spec"]
        or not cluster.objects["/api/v1/nodes/n1"]["spec"]["unschedulable"]
    )
    assert cluster.objects["/api/v1/nodes/n2"]["spec"]["unschedulable"] is True
    annotation = json.loads(cluster.objects["/api/v1/nodes/n1"]["metadata"]["annotations"][MIGRATION_ANNOTATION])
    assert annotation["state"] == "rolled-back"


async def test_uncordon_plans_what_cordon_undoes() -> None:
    cluster = FakeCluster(node("n1", unschedulable=True), node("n2"))
    ctx = context(cluster, pathlib.Path("/nonexistent"))
    plan = await Uncordon("uncordon", ["n1", "n2"]).plan(ctx)
    assert [(c.name, c.before, c.after) for c in plan.changes] == [
        ("n1", {"spec": {"unschedulable": True}}, {"spec": {"unschedulable": False}})
    ]


async def test_drain_plans_one_eviction_per_evictable_pod(tmp_path: pathlib.Path) -> None:
    cluster = FakeCluster(
        node("n1", unschedulable=True),
        pod("ml", "train-0", "n1", gpus=2),
        pod("ml", "solo", "n1", owner=""),
        pod("kube-system", "plugin-x", "n1", owner="DaemonSet"),
        pod("ml", "done-0", "n1", owner="Job", phase="Succeeded"),
        pod("ml", "elsewhere", "n2"),
    )
    ctx = context(cluster, tmp_path, force_pods=("ml/solo",))
    plan = await Drain("drain", ["n1"]).plan(ctx)
    assert [(c.verb, c.namespace, c.name) for c in plan.changes] == [
        ("delete", "ml", "solo"),
        ("evict", "ml", "train-0"),
    ]
    train = plan.changes[1]
    assert train.detail["gpus"] == 2 and train.detail["owner"] == "ReplicaSet/train-0-owner"
    assert any("left alone: 1 DaemonSet pod, 1 finished" in n for n in plan.notes)
    assert any("ml/solo has no controller" in w for w in plan.warnings)
    assert await Drain("drain", ["n1"]).preconditions(ctx) == []


async def test_drain_evicts_with_the_uid_and_logs_one_intent_and_outcome_per_pod(tmp_path: pathlib.Path) -> None:
    cluster = FakeCluster(node("n1", unschedulable=True), pod("ml", "a-0", "n1"), pod("ml", "b-0", "n1"))
    ctx = context(cluster, tmp_path, drain_timeout=5.0)
    step = Drain("drain", ["n1"])
    plan = await step.plan(ctx)
    assert await step.apply(ctx, plan) == []
    evictions = [s for s in cluster.writes() if s.path.endswith("/eviction")]
    assert sorted(s.body["deleteOptions"]["preconditions"]["uid"] for s in evictions) == ["uid-ml-a-0", "uid-ml-b-0"]
    lines = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert sorted((r["record"], r["object"]["name"]) for r in lines) == [
        ("intent", "a-0"),
        ("intent", "b-0"),
        ("outcome", "a-0"),
        ("outcome", "b-0"),
    ]
    assert await step.verify(ctx) == []


def test_batches_put_the_canary_alone_first_then_n_at_a_time() -> None:
    nodes = ["n4", "n1", "n3", "n2", "n5"]
    assert planmod.batches(nodes) == [("all", ["n1", "n2", "n3", "n4", "n5"])]
    assert planmod.batches(nodes, "n3", 2) == [
        ("canary", ["n3"]),
        ("batch-2", ["n1", "n2"]),
        ("batch-3", ["n4", "n5"]),
    ]
    assert planmod.batches(["n1"], "n1") == [("canary", ["n1"])]


async def test_a_batched_plan_runs_cordon_and_drain_batch_by_batch_with_a_stable_id(tmp_path: pathlib.Path) -> None:
    cluster = FakeCluster(node("n1"), node("n2"), node("n3"))
    ctx = context(cluster, tmp_path, canary_node="n2", batch_size=1)
    plan = await planmod.build(ctx, ["cordon", "drain"])
    assert [(s.id, s.nodes) for s in plan.steps] == [
        ("preflight", ["n1", "n2", "n3"]),
        ("cordon@canary", ["n2"]),
        ("drain@canary", ["n2"]),
        ("cordon@batch-2", ["n1"]),
        ("drain@batch-2", ["n1"]),
        ("cordon@batch-3", ["n3"]),
        ("drain@batch-3", ["n3"]),
    ]
    assert plan.blockers == [] and not cluster.writes(dry_run=None)  # planning writes nothing
    again = await planmod.build(ctx, ["cordon", "drain"])
    assert again.id == plan.id
    assert planmod.MigrationPlan.from_json(json.loads(json.dumps(plan.to_json()))).to_json() == plan.to_json()


async def test_a_switch_step_records_each_inverse_before_its_write_and_rolls_back_only_what_is_not_undone(
    tmp_path: pathlib.Path,
) -> None:
    key = "nvidia.com/gpu.deploy.device-plugin"
    cluster = FakeCluster(node("n1", labels={"pool": "gpu", key: "true"}), node("n2", labels={"pool": "gpu"}))
    state = await PoolState(cluster, "gpu", "kube-system").load()  # type: ignore[arg-type]
    ctx = context(cluster, tmp_path, state=state)
    step = ExcludeDevicePlugin("exclude-device-plugin", ["n1", "n2"])
    plan = StepPlan(step.id, step.name, step.title, True, True, ["n1", "n2"])
    plan.add(opn.NodeLabel("n1", key, "true", "false"))
    plan.add(opn.NodeLabel("n2", key, None, "false"))
    cluster.sent.clear()
    assert await step.apply(ctx, plan) == []
    order = [(s.method, s.path.rsplit("/", 1)[-1]) for s in cluster.writes()]
    # The state ConfigMap (with the inverse) is written before each node's label.
    assert order == [("POST", "configmaps"), ("PATCH", "n1"), ("PUT", "dragoman-pool-gpu"), ("PATCH", "n2")]
    record = state.rollback_record(step.id)
    assert [c["command"] for c in record["changes"]] == [
        f"kubectl label node n1 {key}=true --overwrite",
        f"kubectl label node n2 {key}-",
    ]
    # n2 is put back by hand: the rollback plan undoes only n1.
    cluster.objects["/api/v1/nodes/n2"]["metadata"]["labels"].pop(key)
    rb = await step.rollback_plan(ctx, record)
    assert rb is not None and [c.name for c in rb.changes] == ["n1"] and rb.title == "Let the device plugin back"
    undo = type(step)(rb.id, [])
    assert await undo.apply(ctx, rb) == []
    assert cluster.objects["/api/v1/nodes/n1"]["metadata"]["labels"][key] == "true"
    assert await step.rollback_plan(ctx, record) is not None
    assert (await step.rollback_plan(ctx, record)).changes == []  # type: ignore[union-attr]


def test_a_context_is_whole_at_construction() -> None:
    cluster = FakeCluster(node("n1"))
    ctx = Context(cluster, "gpu", "pool", [cluster.objects["/api/v1/nodes/n1"]], audit=None, by={})  # type: ignore[arg-type]
    assert list(ctx.nodes) == ["n1"] and ctx.state is None and ctx.dangling == {} and ctx.options == Options()
    assert ctx.pool_of(cluster.objects["/api/v1/nodes/n1"]) == "gpu"
