"""The operation protocol on recorded objects, without a server: what each kind of write previews, sends, skips when
already so, and how it is undone; the door's dry run, audit, retry, resume and read-only."""

from __future__ import annotations

import json
import pathlib

import pytest
from dragoman.actions import operations as opn
from dragoman.actions.audit import AuditLog
from dragoman.actions.ops import with_not_in, with_pool
from dragoman.actions.steps import Change, Context
from dragoman.fleet.cluster import ApiError
from dragoman.fleet.errors import ReadOnlyError
from dragoman.fleet.migration import MIGRATION_ANNOTATION

from tests.actions.fake_cluster import MERGE, FakeCluster, node, pod


def context(cluster: FakeCluster, tmp: pathlib.Path, *, read_only: bool = False) -> Context:
    nodes = [o for p, o in cluster.objects.items() if p.startswith("/api/v1/nodes/")]
    return Context(
        cluster,  # type: ignore[arg-type]
        "gpu",
        "pool",
        nodes,
        audit=AuditLog(tmp / "audit.jsonl", user={"name": "tester"}, cluster=cluster.identity),
        by={"name": "tester"},
        read_only=read_only,
        plan_id="plan-1",
    )


def records(tmp: pathlib.Path) -> list[dict]:
    path = tmp / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def roundtrip(op: opn.Operation) -> Change:
    """The preview as a plan file keeps it, read back."""
    return Change.from_json(json.loads(json.dumps(op.preview().to_json())))


# ---------------------------------------------------------------- schedulable


def test_a_cordon_previews_the_target_it_sends() -> None:
    path, n = node("n1")
    op = opn.Schedulable.of_node(n, True)
    change = op.preview()
    assert change.ref == "Node/n1" and change.command == "kubectl cordon n1"
    assert change.diff() == ["- spec.unschedulable: false", "+ spec.unschedulable: true"]
    op.annotations = {MIGRATION_ANNOTATION: "{}"}
    req = op.request(None, FakeCluster(node("n1")).objects[path])  # type: ignore[arg-type]
    assert isinstance(req, opn.HttpWrite) and (req.method, req.path, req.content_type) == ("PATCH", path, MERGE)
    # The previewed `after` is literally what the patch carries, next to the guard and the bookkeeping.
    assert req.body["spec"] == change.after["spec"]
    assert req.body["metadata"] == {"resourceVersion": "101", "annotations": {MIGRATION_ANNOTATION: "{}"}}


def test_a_cordon_inverse_is_the_uncordon_and_a_plan_file_gives_back_the_same_operation() -> None:
    op = opn.Schedulable("n1", True, was=False)
    inv = op.inverse()
    assert (inv.unschedulable, inv.was) == (False, True)
    assert inv.preview().command == "kubectl uncordon n1"
    assert opn.Schedulable.from_change(roundtrip(op)) == op
    assert opn.Schedulable.from_change(roundtrip(inv)) == inv


async def test_send_dry_runs_audits_and_writes_once_then_does_nothing(tmp_path: pathlib.Path) -> None:
    cluster = FakeCluster(node("n1"))
    ctx = context(cluster, tmp_path)
    op = opn.Schedulable("n1", True, was=False)
    await opn.send(ctx, "cordon", op, label="cordon")
    assert [(w.method, w.dry_run) for w in cluster.writes(dry_run=None)] == [("PATCH", True), ("PATCH", False)]
    assert cluster.objects["/api/v1/nodes/n1"]["spec"]["unschedulable"] is True
    intent, outcome = records(tmp_path)
    assert intent["record"] == "intent" and outcome["record"] == "outcome" and outcome["result"] == "applied"
    assert intent["key"] == "plan-1/cordon/Node/n1" == outcome["key"] and intent["writeId"] == outcome["writeId"]
    assert intent["before"] == op.preview().before and intent["after"] == op.preview().after
    assert intent["command"] == "kubectl cordon n1"
    assert intent["object"] == {"kind": "Node", "namespace": "", "name": "n1", "pool": "gpu"}
    # Idempotent: the cluster shows it, so a second send reads and writes nothing, and logs nothing.
    cluster.sent.clear()
    await opn.send(ctx, "cordon", op, label="cordon")
    assert cluster.writes(dry_run=None) == [] and len(records(tmp_path)) == 2
    assert await op.landed(cluster)  # type: ignore[arg-type]


async def test_a_conflict_is_read_again_and_sent_again_with_the_new_resource_version(tmp_path: pathlib.Path) -> None:
    cluster = FakeCluster(node("n1"))
    cluster.fail("PATCH", "/api/v1/nodes/n1", 409)
    await opn.send(context(cluster, tmp_path), "cordon", opn.Schedulable("n1", True, False), label="cordon")
    real = cluster.writes()
    assert len(real) == 2 and cluster.objects["/api/v1/nodes/n1"]["spec"]["unschedulable"] is True
    assert [r["result"] for r in records(tmp_path) if r["record"] == "outcome"] == ["failed", "applied"]


async def test_a_lost_answer_keeps_one_write_id_and_is_closed_from_what_the_cluster_shows(
    tmp_path: pathlib.Path,
) -> None:
    cluster = FakeCluster(node("n1"))
    cluster.fail("PATCH", "/api/v1/nodes/n1", 503, made=True)  # made, but the answer says 503
    ctx = context(cluster, tmp_path)
    await opn.send(ctx, "cordon", opn.Schedulable("n1", True, False), label="cordon")
    assert len(cluster.writes()) == 1  # never sent twice
    intent, outcome = records(tmp_path)
    assert outcome["writeId"] == intent["writeId"] and outcome["observedOnResume"] is True
    assert ctx.dangling == {}


async def test_a_crash_s_open_intent_is_reused_not_logged_twice(tmp_path: pathlib.Path) -> None:
    cluster = FakeCluster(node("n1"))
    ctx = context(cluster, tmp_path)
    ctx.dangling["plan-1/cordon/Node/n1"] = {"writeId": "w-crashed", "planId": "plan-1", "step": "cordon"}
    await opn.send(ctx, "cordon", opn.Schedulable("n1", True, False), label="cordon")
    (outcome,) = records(tmp_path)
    assert outcome["record"] == "outcome" and outcome["writeId"] == "w-crashed"


async def test_read_only_refuses_at_the_door_before_anything_is_sent(tmp_path: pathlib.Path) -> None:
    cluster = FakeCluster(node("n1"))
    with pytest.raises(ReadOnlyError, match="read-only"):
        await opn.send(
            context(cluster, tmp_path, read_only=True), "cordon", opn.Schedulable("n1", True, False), label="c"
        )
    assert cluster.writes(dry_run=None) == [] and records(tmp_path) == []
    ctx = context(cluster, tmp_path, read_only=True)
    await opn.bookkeep(ctx, opn.NodeAnnotation("n1", MIGRATION_ANNOTATION, "x"))
    assert cluster.writes(dry_run=None) == []


async def test_the_migration_annotation_is_set_once_unaudited_and_asked_again_after_a_5xx(
    tmp_path: pathlib.Path,
) -> None:
    cluster = FakeCluster(node("n1"))
    cluster.fail("PATCH", "/api/v1/nodes/n1", 503)
    ctx = context(cluster, tmp_path)
    op = opn.NodeAnnotation("n1", MIGRATION_ANNOTATION, "v1")
    await opn.bookkeep(ctx, op)
    await opn.bookkeep(ctx, op)  # already so: not sent again
    assert len(cluster.writes()) == 2 and records(tmp_path) == []
    assert cluster.objects["/api/v1/nodes/n1"]["metadata"]["annotations"] == {MIGRATION_ANNOTATION: "v1"}


# ---------------------------------------------------------------- evict


def test_an_eviction_carries_the_uid_precondition_and_a_forced_pod_is_deleted() -> None:
    _, p = pod("ml", "train-0", "n1", gpus=2)
    op = opn.Evict.of_pod(p, forced=False, owner="ReplicaSet/train", gpus=2)
    req = op.request(None, p)  # type: ignore[arg-type]
    assert isinstance(req, opn.HttpWrite) and req.method == "POST" and req.path.endswith("/train-0/eviction")
    assert req.body["deleteOptions"] == {"preconditions": {"uid": "uid-ml-train-0"}}
    assert op.preview().verb == "evict" and op.preview().detail["gpus"] == 2
    assert op.record().before == {"uid": "uid-ml-train-0", "nodeName": "n1", "phase": "Running"}
    assert op.key("p", "drain") == "p/drain/Pod/ml/train-0/uid-ml-train-0"
    forced = opn.Evict.of_pod(p, forced=True)
    freq = forced.request(None, p)  # type: ignore[arg-type]
    assert isinstance(freq, opn.HttpWrite) and freq.method == "DELETE" and forced.preview().verb == "delete"
    assert op.inverse() is None


async def test_an_eviction_is_done_when_the_pod_is_gone_terminating_or_another_pod(tmp_path: pathlib.Path) -> None:
    path, p = pod("ml", "train-0", "n1")
    cluster = FakeCluster((path, p))
    op = opn.Evict.of_pod(p, forced=False)
    assert not await op.landed(cluster)  # type: ignore[arg-type]
    cluster.objects[path]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert await op.landed(cluster)  # type: ignore[arg-type]
    cluster.objects[path]["metadata"].pop("deletionTimestamp")
    cluster.objects[path]["metadata"]["uid"] = "a-new-pod"
    assert await op.read(cluster) is None and await op.landed(cluster)  # type: ignore[arg-type]


# ---------------------------------------------------------------- node label


async def test_a_label_sends_its_preview_and_its_inverse_restores_the_old_value(tmp_path: pathlib.Path) -> None:
    cluster = FakeCluster(node("n1", labels={"pool": "gpu", "nvidia.com/gpu.deploy.device-plugin": "true"}))
    key = "nvidia.com/gpu.deploy.device-plugin"
    op = opn.NodeLabel("n1", key, "true", "false")
    assert op.preview().command == f"kubectl label node n1 {key}=false --overwrite"
    ctx = context(cluster, tmp_path)
    await opn.send(ctx, "exclude-device-plugin", op, label="x")
    (sent,) = cluster.writes()
    assert sent.body["metadata"]["labels"] == op.preview().after["metadata"]["labels"]
    inv = op.inverse()
    assert opn.decode(roundtrip(inv)) == inv
    await opn.send(ctx, "rollback:exclude-device-plugin", inv, label="x")
    assert cluster.objects["/api/v1/nodes/n1"]["metadata"]["labels"][key] == "true"
    removal = opn.NodeLabel("n1", key, "true", None)
    assert removal.preview().command == f"kubectl label node n1 {key}-"
    await opn.send(ctx, "s", removal, label="x")
    assert key not in cluster.objects["/api/v1/nodes/n1"]["metadata"]["labels"]


# ---------------------------------------------------------------- workload affinity


def test_not_in_goes_into_every_term_and_lifts_the_pool_from_an_in() -> None:
    req = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["gpu", "cpu"]}]},
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
        ]
    }
    out = with_not_in(req, "pool", "gpu")
    assert out["nodeSelectorTerms"][0]["matchExpressions"] == [{"key": "pool", "operator": "In", "values": ["cpu"]}]
    assert {"key": "pool", "operator": "NotIn", "values": ["gpu"]} in out["nodeSelectorTerms"][1]["matchExpressions"]
    assert req["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["gpu", "cpu"]  # the input is left alone
    zone_only = {"nodeSelectorTerms": [req["nodeSelectorTerms"][1]]}
    once = with_not_in(zone_only, "pool", "gpu")
    assert with_not_in(once, "pool", "gpu") == once  # idempotent: the NotIn is not added twice
    back = with_pool(out, "pool", "gpu")
    assert back is not None and back["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["cpu", "gpu"]
    assert with_pool(None, "pool", "gpu") is None  # nothing restricts: nothing to extend


async def test_an_affinity_patch_sends_the_target_and_its_inverse_sends_the_original(tmp_path: pathlib.Path) -> None:
    original = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]}
    ds = {
        "metadata": {"name": "nvidia-device-plugin", "namespace": "kube-system"},
        "spec": {"template": {"spec": {"affinity": {"nodeAffinity": {opn.REQUIRED: original}}}}},
    }
    path = opn.ds_path("kube-system", "nvidia-device-plugin")
    cluster = FakeCluster((path, ds))
    op = opn.WorkloadAffinity.of_daemonset(ds, with_not_in(original, "pool", "gpu"), "exclude pool gpu")
    change = op.preview()
    assert change.diff() == [
        '- requiredNodeAffinity.nodeSelectorTerms.0: "gpu Exists"',
        '+ requiredNodeAffinity.nodeSelectorTerms.0: "gpu Exists && pool NotIn [gpu]"',
    ]
    assert change.command.startswith("kubectl patch daemonset -n kube-system nvidia-device-plugin --type=merge -p '")
    ctx = context(cluster, tmp_path)
    await opn.send(ctx, "exclude-device-plugin", op, label="x")
    (sent,) = cluster.writes()
    assert (
        sent.body["spec"] == op.target()["spec"] and json.loads(change.command.split("-p ", 1)[1][1:-1]) == op.target()
    )
    assert opn.required_of(cluster.objects[path]) == op.required
    inv = op.inverse()
    assert opn.decode(roundtrip(op)) == op and opn.decode(roundtrip(inv)) == inv
    await opn.send(ctx, "rollback:exclude-device-plugin", inv, label="x")
    assert opn.required_of(cluster.objects[path]) == original


# ---------------------------------------------------------------- DeviceClass


async def test_a_created_class_is_the_body_shown_and_its_inverse_deletes_it(tmp_path: pathlib.Path) -> None:
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.nvidia.com"},
        "spec": {"selectors": [{"cel": {"expression": "true"}}], "extendedResourceName": "nvidia.com/gpu"},
    }
    cluster = FakeCluster()
    op = opn.DeviceClassWrite.to("gpu.nvidia.com", None, body, "no class served nvidia.com/gpu")
    assert op.verb == "create" and op.preview().before is None and op.preview().after == {"spec": body["spec"]}
    ctx = context(cluster, tmp_path)
    await opn.send(ctx, "device-class", op, label="x")
    (dry, real) = cluster.writes(dry_run=None)
    assert (dry.method, dry.dry_run, real.method) == ("POST", True, "POST") and real.body == body
    inv = op.inverse()
    assert inv.verb == "delete" and inv.preview().command == "kubectl delete deviceclass gpu.nvidia.com"
    assert opn.decode(roundtrip(inv)) == inv
    await opn.send(ctx, "rollback:device-class", inv, label="x")
    assert f"{opn.CLASSES}/gpu.nvidia.com" not in cluster.objects
    assert await inv.landed(cluster)  # type: ignore[arg-type]


async def test_an_updated_class_keeps_the_cluster_s_metadata_and_its_inverse_restores_the_spec(
    tmp_path: pathlib.Path,
) -> None:
    old = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu", "uid": "u1", "labels": {"a": "b"}},
        "spec": {"selectors": [{"cel": {"expression": "true"}}]},
    }
    path = f"{opn.CLASSES}/gpu"
    cluster = FakeCluster((path, old))
    new = json.loads(json.dumps(old))
    new["spec"]["extendedResourceName"] = "nvidia.com/gpu"
    new["metadata"] = {"name": "gpu", "labels": {"a": "b"}}
    op = opn.DeviceClassWrite.to("gpu", cluster.objects[path], new, "named")
    ctx = context(cluster, tmp_path)
    await opn.send(ctx, "device-class", op, label="x")
    (sent,) = cluster.writes()
    assert sent.method == "PUT" and sent.body["metadata"]["uid"] == "u1" and sent.body["spec"] == new["spec"]
    assert sent.body["metadata"]["resourceVersion"] == "101"
    inv = op.inverse()
    assert opn.decode(roundtrip(inv)) == inv
    await opn.send(ctx, "rollback:device-class", inv, label="x")
    assert cluster.objects[path]["spec"] == old["spec"]


# ---------------------------------------------------------------- helm


async def test_a_helm_upgrade_writes_its_target_values_where_the_command_says(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cluster = FakeCluster()
    old = {"image": "x", "affinity": {}}
    new = {"image": "x", "affinity": {"nodeAffinity": {"k": 1}}}
    op = opn.HelmRelease("nvdp", "kube-system", "nvidia-device-plugin", "0.17.0", new, old, shown=("affinity",))
    op.with_command(cluster)  # type: ignore[arg-type]
    change = op.preview()
    assert change.verb == "upgrade" and change.before == {"values": {"affinity": {}}}
    assert change.after == {"values": {"affinity": {"nodeAffinity": {"k": 1}}}}
    req = op.request(cluster, old)  # type: ignore[arg-type]
    assert isinstance(req, opn.HelmRun)
    values_path = req.args[req.args.index("-f") + 1]
    # Planning and making the request write nothing (`--plan` and `--read-only` write no file); sending does.
    assert not pathlib.Path(values_path).exists() and req.values_path == values_path
    ran: list[list[str]] = []

    async def fake_run(args: list[str], **_: object) -> str:
        ran.append(args)
        return ""

    monkeypatch.setattr(opn.helm, "run", fake_run)
    await req.send(cluster, dry=False)  # type: ignore[arg-type]
    assert ran and json.loads(pathlib.Path(values_path).read_text()) == new == op.target()
    assert oct(pathlib.Path(values_path).stat().st_mode & 0o777) == "0o600"
    assert values_path in change.command and "--reuse-values" not in req.args
    inv = op.inverse()
    assert inv is not None and inv.values == old and inv.preview().after == change.before
    assert opn.decode(roundtrip(op)) == op and opn.decode(roundtrip(inv)) == inv
    assert op.done(new) and not op.done(old)
    install = opn.HelmRelease("dra", "dra", "dra-driver-nvidia-gpu", "0.4.0", new, {}, install=True)
    assert install.verb == "install" and install.inverse() is None


# ---------------------------------------------------------------- GitOps, whole objects, decoding


async def test_a_gitops_change_is_shown_never_sent() -> None:
    op = opn.GitOpsWait("DaemonSet", "kube-system", "nvdp", "Argo CD application gpu", "add NotIn")
    assert (
        not op.sends
        and op.preview().verb == "wait"
        and op.preview().command == "# in Argo CD application gpu: add NotIn"
    )
    assert opn.decode(roundtrip(op)) == op and op.inverse() is None
    with pytest.raises(ReadOnlyError):
        op.request(FakeCluster(), None)  # type: ignore[arg-type]


async def test_create_and_delete_of_a_whole_object_are_idempotent(tmp_path: pathlib.Path) -> None:
    cluster = FakeCluster()
    ctx = context(cluster, tmp_path)
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "canary", "namespace": "default"}, "spec": {}}
    create = opn.CreateObject(body, "/api/v1/namespaces/default/pods", key_suffix="canary")
    await opn.send(ctx, "verify", create, label="canary")
    await opn.send(ctx, "verify", create, label="canary")
    assert [w.method for w in cluster.writes()] == ["POST"]
    delete = create.inverse()
    assert delete.preview().command == "kubectl delete pod -n default canary"
    await opn.send(ctx, "verify", delete, label="canary-delete")
    await opn.send(ctx, "verify", delete, label="canary-delete")
    assert [w.method for w in cluster.writes()] == ["POST", "DELETE"] and not cluster.objects
    assert [r["key"] for r in records(tmp_path) if r["record"] == "intent"] == [
        "plan-1/verify/canary",
        "plan-1/verify/Pod/default/canary",
    ]


def test_an_applied_object_is_created_or_replaced_and_left_alone_when_its_spec_is_so() -> None:
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "x"}, "spec": {"a": 1}}
    fresh = opn.ApplyObject(body, opn.CLASSES, None)
    req = fresh.request(None, None)  # type: ignore[arg-type]
    assert fresh.verb == "create" and isinstance(req, opn.HttpWrite) and req.method == "POST" and req.body == body
    cur = {**body, "metadata": {"name": "x", "uid": "u", "resourceVersion": "7"}, "spec": {"a": 0}}
    again = opn.ApplyObject(body, opn.CLASSES, cur)
    put = again.request(None, cur)  # type: ignore[arg-type]
    assert again.verb == "replace" and isinstance(put, opn.HttpWrite) and put.method == "PUT"
    assert put.body["metadata"]["uid"] == "u" and put.body["spec"] == {"a": 1}
    assert again.preview().before == {"spec": {"a": 0}} and again.preview().after == {"spec": {"a": 1}}
    assert opn.ApplyObject(body, opn.CLASSES, body).done(body)


def test_an_unknown_operation_in_a_plan_file_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown operation 'teleport'"):
        opn.decode(Change("Node", "n1", detail={"op": "teleport"}))


async def test_a_write_the_server_refuses_is_logged_failed_and_raised(tmp_path: pathlib.Path) -> None:
    cluster = FakeCluster(node("n1"))
    cluster.fail("PATCH", "/api/v1/nodes/n1", 422)
    with pytest.raises(ApiError):
        await opn.send(context(cluster, tmp_path), "cordon", opn.Schedulable("n1", True, False), label="c")
    assert [r.get("result") for r in records(tmp_path)] == [None, "failed"]
