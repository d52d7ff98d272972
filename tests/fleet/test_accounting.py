"""GPU accounting: per-pool figures on the demo checked against the raw objects, quotas before and after a pool moves,
PrometheusRules reading allocatable, and the figures following a pool's move live on the simulator."""

from __future__ import annotations

import asyncio
import functools
import pathlib
import time
from collections import defaultdict

from dragoman.fleet import accounting as A
from dragoman.fleet.cluster import connect
from dragoman.fleet.informer import sync
from dragoman.fleet.model import FleetModel, key_of
from dragoman.fleet.store import FleetStore
from dragoman.sim import scenario

from tests.fleet import fleet_fixtures as F
from tests.support.feed import following
from tests.support.sim import running_simulator

DEMO = pathlib.Path(__file__).resolve().parents[2] / "sim" / "scenarios" / "demo.yaml"
POOL_LABEL = "cloud.google.com/gke-nodepool"
FAST = {"backoff_initial": 0.05, "backoff_max": 0.3, "forbidden_retry": 0.5}


@functools.lru_cache(maxsize=1)
def demo_objects() -> tuple:
    return tuple(scenario.load("demo").objects)


def demo_model() -> FleetModel:
    m = FleetModel()
    m.load_list(list(demo_objects()))
    return m


def _count(v) -> int:
    s = str(v or "0")
    return int(s) if s.isdigit() else 0


def expected_from_raw(objs) -> dict[str, dict[str, int]]:
    """Per pool, computed straight from the objects: allocatable, whole-GPU devices in the newest slices, and allocated
    devices."""
    pool_of = {}
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for o in objs:
        if o["kind"] == "Node":
            pool = o["metadata"].get("labels", {}).get(POOL_LABEL)
            pool_of[o["metadata"]["name"]] = pool
            out[pool]["allocatable"] += _count(o.get("status", {}).get("allocatable", {}).get("nvidia.com/gpu"))
    newest: dict[tuple, int] = {}
    slices = [o for o in objs if o["kind"] == "ResourceSlice"]
    for s in slices:
        k = (s["spec"]["driver"], s["spec"]["pool"]["name"])
        newest[k] = max(newest.get(k, 0), int(s["spec"]["pool"]["generation"]))
    device_node = {}
    for s in slices:
        spec = s["spec"]
        if (
            spec["driver"] != "gpu.nvidia.com"
            or int(spec["pool"]["generation"]) != newest[(spec["driver"], spec["pool"]["name"])]
        ):
            continue
        for d in spec.get("devices", []):
            device_node[(spec["driver"], spec["pool"]["name"], d["name"])] = spec["nodeName"]
            typ = (d.get("attributes", {}).get("type") or {}).get("string")
            if typ in (None, "gpu"):
                out[pool_of[spec["nodeName"]]]["slice_gpus"] += 1
    held = set()
    for o in objs:
        if o["kind"] != "ResourceClaim":
            continue
        for r in (o.get("status", {}).get("allocation") or {}).get("devices", {}).get("results", []):
            # An admin-access result sees a device without holding it; shares of one device hold it once.
            if r.get("adminAccess"):
                continue
            node = device_node.get((r["driver"], r["pool"], r["device"]))
            if node and (r["driver"], r["pool"], r["device"]) not in held:
                held.add((r["driver"], r["pool"], r["device"]))
                out[pool_of[node]]["allocated"] += 1
    return out


def a100mig_state(accounts: dict) -> str:
    """a100-mig: every GPU node publishes devices and none reports allocatable — the whole pool is on DRA."""
    a = accounts["a100-mig"]
    assert a.nodes_unserved == 0 and a.nodes_on_dra == a.gpu_nodes
    return a.state


def test_demo_pool_figures_equal_what_the_objects_say() -> None:
    m = demo_model()
    expected = expected_from_raw(demo_objects())
    accounts = {a.pool: a for a in A.pool_accounts(m)}
    assert set(accounts) >= {"a100-train", "h100-dra", "a100-serve", "a100-mig", "l4-inference", "t4-batch", "l4-dev"}
    for pool, a in accounts.items():
        e = expected[pool]
        assert (a.allocatable, a.slice_gpus, a.allocated) == (e["allocatable"], e["slice_gpus"], e["allocated"]), pool
    # The A100 training pool is on the device plugin: all 24 of its GPUs leave sums of allocatable when it moves.
    train = accounts["a100-train"]
    assert train.state == "planned" and train.allocatable == 24 and train.drop_if_moved == 24 and train.missed_now == 0
    # A pool off the plugin: allocatable says 0, the slices say otherwise. One of its four nodes publishes no devices
    # (the demo's no-slices finding), so it is only partly migrated, as Pools' ◐ says, not "migrated".
    h100 = accounts["h100-dra"]
    assert (h100.state, h100.nodes_unserved, h100.nodes_on_dra) == ("partly migrated", 1, 3)
    assert h100.state_label == "◐ partly, 1 unserved"
    assert a100mig_state(accounts) == "migrated"
    assert h100.allocatable == 0 and h100.slice_gpus > 0 and h100.missed_now >= h100.slice_gpus
    totals = A.fleet_totals(accounts.values())
    assert totals["allocatableGpus"] == sum(e["allocatable"] for e in expected.values())
    assert totals["allocatedDevices"] == sum(e["allocated"] for e in expected.values())


def test_demo_quota_counts_match_the_quota_controller_and_the_a100_move_changes_the_ml_training_quota() -> None:
    m = demo_model()
    acc = A.account(m)
    assert acc.pool == "a100-train"  # the planned pool with the most allocatable (ties by name)
    lines = {(q.namespace, q.quota, q.resource): q for q in acc.quotas}
    gpu = lines[("ml-training", "gpu-quota", "requests.nvidia.com/gpu")]
    claims = lines[("research", "research-quota", "count/resourceclaims.resource.k8s.io")]
    for q in (gpu, claims):
        assert q.used_status is not None and q.counted_now == int(q.used_status), q
    # Its pods keep charging requests.nvidia.com/gpu: same number, new meaning (DRA devices instead of plugin GPUs).
    assert gpu.after == gpu.counted_now and gpu.pods_moving > 0 and gpu.changes_meaning
    assert not claims.changes_meaning  # research runs on the DRA pools already
    text = "\n".join(A.text_lines(acc))
    assert "gpu-quota" in text and "CHANGES MEANING" in text and "24" in text


def test_a_claim_count_quota_fills_when_the_pool_moves() -> None:
    objs = [F.node(f"n{i}", "l4", gpus=4, alloc=4) for i in range(2)] + [F.chart_gpu_class()]
    objs += [F.pod(f"p{i}", "team", gpus=2, node_name=f"n{i % 2}", phase="Running") for i in range(3)]
    objs += [
        F.quota(
            "claims",
            "team",
            {"count/resourceclaims.resource.k8s.io": "2", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "10"},
        )
    ]
    m = F.model_of(*objs)
    lines = {q.resource: q for q in A.quota_lines(m, "l4")}
    count = lines["count/resourceclaims.resource.k8s.io"]
    assert (count.counted_now, count.after, count.pods_moving) == (0, 3, 3)
    assert count.blocks_after and not count.blocks_now and count.changes_meaning
    devices = lines["gpu.nvidia.com.deviceclass.resource.k8s.io/devices"]
    assert (devices.counted_now, devices.after) == (0, 6) and not devices.blocks_after
    # Moving another pool changes nothing here.
    assert all(q.after == q.counted_now for q in A.quota_lines(m, "elsewhere"))


def test_plain_and_bridge_claims_charge_as_the_quota_evaluator_does() -> None:
    cls = F.chart_gpu_class()
    plain = F.claim("mine", "team", count=2)
    m = F.model_of(F.node("n0", "h100", gpus=0), cls, plain)
    charges = A.claim_charges(m, plain)
    assert charges["count/resourceclaims.resource.k8s.io"] == 1
    assert charges["gpu.nvidia.com.deviceclass.resource.k8s.io/devices"] == 2
    assert (
        charges["requests.nvidia.com/gpu"] == 2
    )  # a plain claim of the serving class consumes requests.nvidia.com/gpu
    assert charges["requests.deviceclass.resource.kubernetes.io/gpu.nvidia.com"] == 2


def test_prometheus_rules_reading_gpu_allocatable_are_named_with_a_replacement() -> None:
    rule = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "gpu", "namespace": "monitoring"},
        "spec": {
            "groups": [
                {
                    "name": "capacity",
                    "rules": [
                        {
                            "record": "cluster:gpu_allocatable:sum",
                            "expr": 'sum(kube_node_status_allocatable{resource="nvidia_com_gpu"})',
                        },
                        {
                            "alert": "GPUCapacityLow",
                            "expr": 'sum(kube_node_status_capacity{resource="nvidia_com_gpu"}) < 10',
                        },
                        {"record": "cluster:cpu:sum", "expr": 'sum(kube_node_status_allocatable{resource="cpu"})'},
                    ],
                }
            ]
        },
    }
    rule["spec"]["groups"][0]["rules"].append({"alert": "Indirect", "expr": "cluster:gpu_allocatable:sum < 3"})
    rule["spec"]["groups"][0]["rules"].append({"alert": "NotIndirect", "expr": "cluster:gpu_allocatable:sum_total < 3"})
    readers = A.rule_readers([rule], missed_now=16)
    assert [r.rule for r in readers] == [
        "record: cluster:gpu_allocatable:sum",
        "alert: GPUCapacityLow",
        "alert: Indirect",
    ]
    assert readers[2].via == "cluster:gpu_allocatable:sum"
    assert all(r.undercount == 16 and "ResourceSlices" in r.replacement for r in readers)
    acc = A.account(demo_model(), rules=[rule])
    assert acc.rules and acc.rules[0].undercount == acc.totals["missedByAllocatableNow"]
    assert A.account(demo_model()).to_json()["prometheusRules"] is None


async def until(predicate, timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_moving_the_a100_pool_on_the_simulator_updates_the_drop_and_the_quotas_live() -> None:
    from dragoman.sim.controllers import default_controllers

    async with running_simulator(scenario_path=DEMO) as sim:
        for c in default_controllers(sim, scheduler=False):  # nothing here needs placing; the scheduler costs CPU
            sim.add_controller(c)
        cluster = await connect(str(sim.kubeconfig_path), None)
        # Only what accounting reads: Events churn under the controllers and are not needed here.
        store = FleetStore(
            ["Node", "Pod", "DaemonSet", "ResourceQuota", "DeviceClass", "ResourceSlice", "ResourceClaim"]
        )
        syncer = await sync(cluster, store, **FAST)
        try:
            await syncer.wait_synced(120)
            async with following(store) as feed:
                model = feed.model
                before = A.pool_account(model, "a100-train")
                assert before.allocatable == 24 and before.drop_if_moved == 24
                # A quota on claims in the training namespace: nothing counted now, filled by the move.
                await cluster.request(
                    "POST",
                    "/api/v1/namespaces/ml-training/resourcequotas",
                    body={
                        "apiVersion": "v1",
                        "kind": "ResourceQuota",
                        "metadata": {"name": "claims", "namespace": "ml-training"},
                        "spec": {"hard": {"count/resourceclaims.resource.k8s.io": "3"}},
                    },
                )

                def claim_line():
                    return next((q for q in A.quota_lines(model, "a100-train") if q.quota == "claims"), None)

                await until(lambda: claim_line() is not None, what="the new quota in the accounting")
                q = claim_line()
                assert q.after > q.counted_now and q.blocks_after
                # Take the GPU Operator's device plugin off the pool, as the migration does.
                for v in model.pool_nodes("a100-train"):
                    await cluster.request(
                        "PATCH",
                        f"/api/v1/nodes/{v.name}",
                        body={"metadata": {"labels": {"nvidia.com/gpu.deploy.device-plugin": "false"}}},
                        content_type="application/merge-patch+json",
                    )
                await until(
                    lambda: A.pool_account(model, "a100-train").allocatable == 0, timeout=60, what="allocatable to drop"
                )
                after = A.pool_account(model, "a100-train")
                assert after.drop_if_moved == 0 and after.missed_now == 24 and after.state == "unserved"
                acc = A.account(model)
                assert (
                    acc.pool != "a100-train"
                    and acc.totals["allocatableGpus"] == A.account(demo_model()).totals["allocatableGpus"] - 24
                )
        finally:
            await syncer.stop()
            await cluster.close()


def test_check_report_carries_the_accounting_in_json_and_80_column_text() -> None:
    from dragoman.fleet.diagnose import diagnose
    from dragoman.fleet.report import check_report, render_text

    m = demo_model()
    findings = diagnose(m)
    doc = check_report(m, findings)
    acc = doc["accounting"]
    pools = {p["pool"]: p for p in acc["pools"]}
    assert pools["a100-train"]["allocatableDropIfMoved"] == 24 and acc["movingPool"] == "a100-train"
    assert acc["fleet"]["allocatableGpus"] == doc["summary"]["allocatableGpus"]
    assert any(q["quota"] == "gpu-quota" and q["changesMeaning"] for q in acc["quotas"])
    text = render_text(m, findings, width=80)
    assert (
        "Accounting (what sums of node allocatable see)" in text and max(len(line) for line in text.splitlines()) <= 80
    )


async def test_prometheus_rules_are_read_from_the_simulator_and_a_forbidden_list_is_a_sentence() -> None:
    async with running_simulator(scenario_path=DEMO) as sim:
        cluster = await connect(str(sim.kubeconfig_path), None)
        try:
            rules, note = await A.read_prometheus_rules(cluster)
        finally:
            await cluster.close()
        assert note == "" and [key_of(r) for r in rules] == [("monitoring", "gpu-capacity")]
        readers = A.account(demo_model(), rules=rules).rules
        assert [r.rule for r in readers] == [
            "record: cluster:nvidia_gpu_allocatable:sum",
            "record: nodepool:nvidia_gpu_allocatable:sum",
            "alert: GPUCapacityDropped",
        ]
        # The alert reads the recording rule: moving a100-train takes 24 more GPUs off it, so it may fire.
        alert = readers[2]
        assert alert.via == "cluster:nvidia_gpu_allocatable:sum" and alert.drop_if_moved == 24
        assert "may fire when a pool moves" in alert.describe(
            "a100-train"
        ) and "24 more after a100-train moves" in alert.describe("a100-train")
        sim.add_user({"name": "nobody", "clusterRoles": []})
        sim.write_kubeconfig(sim.kubeconfig_path, user="nobody")
        cluster = await connect(str(sim.kubeconfig_path), None)
        try:
            rules, note = await A.read_prometheus_rules(cluster)
        finally:
            await cluster.close()
        assert rules is None and "403" in note


def test_check_reads_the_rules_kept_in_a_snapshot(capsys) -> None:
    import json

    from dragoman.tui.cli import main

    assert main(["check", "--snapshot", str(DEMO), "-o", "json"]) == 1  # the demo has error findings
    doc = json.loads(capsys.readouterr().out)
    rules = doc["accounting"]["prometheusRules"]
    assert [r["rule"] for r in rules][-1] == "alert: GPUCapacityDropped" and rules[-1]["missesMoreAfterMove"] == 24
    main(["check", "--snapshot", str(DEMO)])
    assert "it may fire when a pool moves" in capsys.readouterr().out
