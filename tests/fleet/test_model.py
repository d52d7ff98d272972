"""The fleet model: ownership per node and pool, pools, classes and claims, incremental updates, fleet CEL."""

from __future__ import annotations

import asyncio
import copy

import pytest
from dragoman.fleet.model import FleetModel
from dragoman.fleet.store import LIVE, FleetStore
from fleet_fixtures import (
    GPU_CLASS_EXPR,
    POOL,
    change,
    chart_dp_daemonset,
    chart_gpu_class,
    claim,
    cpu_node,
    device_class,
    dp_fleet,
    dra_daemonset,
    dra_fleet,
    ds_pod,
    gpu_slice,
    model_of,
    node,
    operator_dp_daemonset,
    pod,
)

from tests.support.feed import following

DP = operator_dp_daemonset()
DRA = dra_daemonset()


def _one(*objs):
    m = model_of(*objs)
    return m, m.node("n1")


def test_device_plugin_owns_a_node_with_allocatable_and_no_slices():
    _, v = _one(DP, node("n1", alloc=8), ds_pod(DP, "n1"))
    assert v.mechanism == v.ownership == "device-plugin"
    assert v.allocatable_gpu == 8 and v.capacity_gpu == 8
    assert [p.workload.deployed_by for p in v.device_plugin] == ["gpu-operator"]


def test_dra_owns_a_node_with_slices_and_no_allocatable():
    _, v = _one(DRA, node("n1"), ds_pod(DRA, "n1"), gpu_slice("n1"))
    assert v.ownership == "dra"
    assert v.devices_gpu == 8 and v.devices_free == 8
    drv = v.dra_driver[0].workload
    assert (drv.deployed_by, drv.chart, drv.version) == ("helm-chart", "dra-driver-nvidia-gpu", "v0.4.0")


def test_zero_allocatable_counts_as_absent_as_the_scheduler_reads_it():
    _, v = _one(node("n1", alloc=0), gpu_slice("n1"))
    assert v.ownership == "dra"
    assert v.has_allocatable_key and v.allocatable_gpu == 0


def test_both_when_the_plugin_serves_and_the_driver_publishes():
    _, v = _one(DP, DRA, node("n1", alloc=8), ds_pod(DP, "n1"), ds_pod(DRA, "n1"), gpu_slice("n1"))
    assert v.ownership == "both"


def test_both_while_the_plugin_pod_runs_even_before_allocatable_appears():
    _, v = _one(DP, node("n1"), ds_pod(DP, "n1"), gpu_slice("n1"))
    assert v.ownership == "both"


def test_none_without_either():
    _, v = _one(node("n1"))
    assert v.ownership == "none" and v.is_gpu


def test_flapping_plugin_on_a_node_with_slices():
    _, v = _one(DP, node("n1", alloc=0, cap=8), ds_pod(DP, "n1", restarts=7, crashloop=True), gpu_slice("n1"))
    assert v.ownership == "flapping"
    assert v.device_plugin[0].restarts == 7 and "CrashLoopBackOff" in v.device_plugin[0].flapping_reason


def test_capacity_window_after_the_plugin_stopped_is_decided_on_allocatable():
    # The plugin is gone: allocatable fell to 0 at once, capacity keeps 8 for the kubelet's grace period.
    _, v = _one(node("n1", alloc=0, cap=8), gpu_slice("n1"))
    assert v.ownership == "dra" and v.capacity_window
    _, v = _one(node("n1", alloc=0, cap=8))
    assert v.ownership == "none" and v.capacity_window
    _, v = _one(node("n1", alloc=8), gpu_slice("n1"))
    assert v.ownership == "both" and not v.capacity_window


def test_migration_step_in_progress_shows_as_migrating_unless_something_is_wrong():
    mig = {"pool": "gpu-a", "step": "drain", "state": "running", "started": "2026-11-30T10:00:00Z", "by": "sre"}
    _, v = _one(DP, node("n1", alloc=8, unschedulable=True, migration=mig), ds_pod(DP, "n1"))
    assert v.ownership == "migrating" and v.mechanism == "device-plugin"
    assert v.migration.step == "drain" and v.migration.in_progress
    _, v = _one(DP, node("n1", alloc=8, migration=mig), ds_pod(DP, "n1"), gpu_slice("n1"))
    assert v.ownership == "both"
    done = {**mig, "step": "verify", "state": "done"}
    _, v = _one(node("n1", migration=done), gpu_slice("n1"))
    assert v.ownership == "dra" and not v.migration.in_progress


def test_pool_label_auto_detected_and_unlabeled_nodes_grouped():
    m = model_of(node("a", "p1"), node("b", "p1"), node("c", None), cpu_node("s"))
    assert m.pool_label == POOL
    assert m.pool_names() == ["(no pool)", "p1", "system"]
    eks = node("e", None, labels={"eks.amazonaws.com/nodegroup": "ng"})
    m = model_of(eks, pool_label="eks.amazonaws.com/nodegroup")
    assert m.pool_names() == ["ng"]


def test_pool_aggregates_ownership_models_and_kubelets():
    objs = [
        DP,
        DRA,
        node("a", alloc=8),
        ds_pod(DP, "a"),
        node("b", kubelet="v1.35.3"),
        gpu_slice("b"),
        ds_pod(DRA, "b"),
    ]
    m = model_of(*objs)
    p = m.pool("gpu-a")
    assert p.ownership == "mixed" and p.ownership_counts == {"device-plugin": 1, "dra": 1}
    assert p.kubelet_versions == {"v1.37.1": 1, "v1.35.3": 1}
    assert p.allocatable_gpus == 8 and p.devices == 8
    assert p.products == {"NVIDIA-H100-80GB-HBM3": 16}


def test_sharing_from_gfd_labels():
    ts = node(
        "t",
        alloc=16,
        gpus=4,
        labels={"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"},
    )
    m = model_of(ts)
    assert m.node("t").sharing == "time-slicing x4"
    assert m.pool("gpu-a").sharing == {"time-slicing x4": 1}


def test_standalone_chart_with_gitops_owner_recognised():
    ds = chart_dp_daemonset()
    m = model_of(ds, node("n1", alloc=8), ds_pod(ds, "n1"))
    w = m.node("n1").device_plugin[0].workload
    assert (w.deployed_by, w.release, w.gitops) == ("helm-chart", "nvdp", "Argo CD application gpu-stack")


def test_only_the_newest_slice_generation_counts():
    m = model_of(node("n1"), gpu_slice("n1", 4, generation=1), gpu_slice("n1", 8, generation=2))
    v = m.node("n1")
    assert v.devices_gpu == 8 and v.stale_slices == ["n1-gpu.nvidia.com-g1"]
    assert len(list(m.devices())) == 8 and len(m.current_slices()) == 1


def test_extended_resource_mapping_newest_wins_then_name():
    old = device_class("legacy-gpu", [GPU_CLASS_EXPR], "nvidia.com/gpu", "2026-01-01T00:00:00Z")
    new = chart_gpu_class("2026-06-01T00:00:00Z")
    twin = device_class("a-gpu", [GPU_CLASS_EXPR], "nvidia.com/gpu", "2026-06-01T00:00:00Z")
    m = model_of(old, new)
    assert m.class_serving("nvidia.com/gpu") == "gpu.nvidia.com"
    assert m.classes()["legacy-gpu"].shadowed_by == {"nvidia.com/gpu": "gpu.nvidia.com"}
    assert m.class_serving("deviceclass.resource.kubernetes.io/legacy-gpu") == "legacy-gpu"
    m = model_of(old, new, twin)
    assert m.classes_naming("nvidia.com/gpu") == ["a-gpu", "gpu.nvidia.com", "legacy-gpu"]
    # Deleting the winner promotes the next.
    m.apply([change(twin, "DELETED")])
    assert m.class_serving("nvidia.com/gpu") == "gpu.nvidia.com"


def test_claims_join_pods_devices_and_nodes_both_ways():
    p = pod(
        "trainer",
        gpus=2,
        node_name="n1",
        ercs={
            "resourceClaimName": "trainer-extended-resources-x",
            "requestMappings": [
                {"containerName": "main", "resourceName": "nvidia.com/gpu", "requestName": "container-0-request-0"}
            ],
        },
    )
    c = claim(
        "trainer-extended-resources-x",
        count=2,
        allocated=[("n1", "gpu-0"), ("n1", "gpu-1")],
        reserved_for="trainer",
        bridge_for="trainer",
    )
    m = model_of(node("n1"), gpu_slice("n1"), chart_gpu_class(), p, c)
    assert m.claim_node(c) == "n1"
    assert m.claim_pods(c) == [("ml", "trainer")]
    assert m.pod_claims(p) == [("<extended-resources>", "trainer-extended-resources-x")]
    assert m.device_claim(("gpu.nvidia.com", "n1", "gpu-1")) == ("ml", "trainer-extended-resources-x")
    assert m.node("n1").devices_allocated == 2 and m.node("n1").devices_free == 6
    assert m.pod_request_style(p) == "limits"
    assert m.node_claims("n1") == [("ml", "trainer-extended-resources-x")]
    assert m.gpu_pods() == {"limits": [("ml", "trainer")]}
    assert m.pod_request_style(pod("x", claims=[{"name": "g", "resourceClaimTemplateName": "t"}])) == "claims"


def test_incremental_updates_match_a_rebuild():
    objs = dp_fleet(3) + dra_fleet(2)
    m = model_of(*objs)
    before = m.node("h100-pool-0")
    assert before.ownership == "dra"
    # A device-plugin pod appears on a DRA node: both stacks.
    dp = operator_dp_daemonset()
    stray = ds_pod(dp, "h100-pool-0")
    m.apply([change(stray, "ADDED")])
    assert m.node("h100-pool-0").ownership == "both"
    assert m.pool("h100-pool").ownership == "mixed"
    # Its slice goes away: device plugin alone.
    sl = next(o for o in objs if o["kind"] == "ResourceSlice" and o["spec"]["nodeName"] == "h100-pool-0")
    m.apply([change(sl, "DELETED")])
    assert m.node("h100-pool-0").ownership == "device-plugin"
    # A claim allocates devices on another node.
    c = claim("c1", allocated=[("h100-pool-1", "gpu-0")])
    m.apply([change(c, "ADDED")])
    assert m.node("h100-pool-1").devices_allocated == 1
    # Relabel a node into another pool.
    n = copy.deepcopy(m.objects["Node"][("", "l4-pool-0")])
    n["metadata"]["labels"][POOL] = "h100-pool"
    m.apply([change(n)])
    assert "l4-pool-0" in m.pool("h100-pool").nodes and "l4-pool-0" not in m.pool("l4-pool").nodes
    # Whatever happened incrementally, a rebuild from the same objects agrees.
    fresh = FleetModel()
    fresh.load(m.objects)
    for name in m.node_names():
        assert m.node(name).to_json() == fresh.node(name).to_json(), name
    assert [p.to_json() for p in m.pools()] == [p.to_json() for p in fresh.pools()]


def test_daemonset_change_reclassifies_its_pods():
    ds = copy.deepcopy(DP)
    ds["metadata"]["name"] = "mystery"
    ds["metadata"]["labels"] = {}
    ds["metadata"]["ownerReferences"] = []
    ds["spec"]["template"]["metadata"]["labels"] = {"app": "mystery"}
    ds["spec"]["template"]["spec"]["containers"][0]["image"] = "example.com/thing:1"
    p = ds_pod(ds, "n1")
    p["spec"]["containers"] = [{"name": "c", "image": "example.com/thing:1"}]
    m = model_of(ds, node("n1"), p)
    assert m.node("n1").device_plugin == []
    ds2 = copy.deepcopy(ds)
    ds2["metadata"]["labels"] = {"app.kubernetes.io/name": "nvidia-device-plugin"}
    m.apply([change(ds2)])
    assert len(m.node("n1").device_plugin) == 1


def test_an_annotation_on_a_stack_pod_leaves_its_node_row_and_its_readiness_does_not():
    p = ds_pod(DP, "n1")
    m = model_of(DP, node("n1", alloc=8), p)
    shown = m.node("n1")
    noted = copy.deepcopy(p)
    noted["metadata"]["annotations"] = {"example.com/tick": "1"}
    t = m.apply([change(noted, old=p)])
    # Nothing the Nodes or Pools row shows changed: neither is named, and the node's view is not rebuilt.
    assert t.nodes == set() and t.pools == set() and t.pods == {(p["metadata"]["namespace"], p["metadata"]["name"])}
    assert m.node("n1") is shown and m.is_stack_pod(t.pods.pop())
    unready = copy.deepcopy(noted)
    unready["status"]["conditions"][0]["status"] = "False"
    t = m.apply([change(unready, old=noted)])
    assert t.nodes == {"n1"}
    assert m.node("n1").device_plugin[0].ready is False and m.node("n1").device_plugin[0].running
    relabelled = copy.deepcopy(unready)
    relabelled["metadata"]["labels"] = {"app": "something-else"}
    assert m.apply([change(relabelled, old=unready)]).nodes == {
        "n1"
    }  # what classifies a pod may have changed: its node redone


def test_a_bare_pod_is_classified_again_when_what_names_its_role_changes():
    probe = pod("static-probe", node_name="n1", phase="Running")
    key = ("ml", "static-probe")
    m = model_of(DP, node("n1", alloc=8), probe)
    noted = copy.deepcopy(probe)
    noted["metadata"]["annotations"] = {"example.com/tick": "1"}
    m.apply([change(noted, old=probe)])
    assert not m.is_stack_pod(key) and m.node("n1").dra_driver == []
    driver = copy.deepcopy(noted)
    driver["spec"]["containers"][0]["image"] = "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.3.0"
    assert m.apply([change(driver, old=noted)]).nodes == {"n1"}
    assert m.is_stack_pod(key) and len(m.node("n1").dra_driver) == 1
    m = model_of(DP, node("n1", alloc=8), noted)
    plugin = copy.deepcopy(noted)
    plugin["metadata"]["labels"] = {"app": "nvidia-device-plugin-daemonset"}
    assert m.apply([change(plugin, old=noted)]).nodes == {"n1"}
    assert m.is_stack_pod(key) and len(m.node("n1").device_plugin) == 1


def test_gpu_feature_discovery_in_the_plugin_image_is_not_a_device_plugin():
    gfd = copy.deepcopy(DP)
    gfd["metadata"]["name"] = "gpu-feature-discovery"
    gfd["metadata"]["labels"] = {"app": "gpu-feature-discovery"}
    gfd["spec"]["template"]["metadata"]["labels"] = {"app": "gpu-feature-discovery"}
    gfd["spec"]["template"]["spec"]["containers"][0]["command"] = ["gpu-feature-discovery"]
    _, v = _one(gfd, node("n1"), ds_pod(gfd, "n1"), gpu_slice("n1"))
    assert v.device_plugin == [] and v.ownership == "dra"


def test_fleet_cel_class_request_and_expression():
    mig_class = device_class("mig-1g", ["device.attributes['gpu.nvidia.com'].type == 'mig'"], "nvidia.com/mig-1g.10gb")
    m = model_of(node("n1"), gpu_slice("n1", 4, mig=2), chart_gpu_class(), mig_class)
    assert len(m.class_matches("gpu.nvidia.com").matched) == 4
    assert len(m.class_matches("mig-1g").matched) == 2
    body = {
        "deviceClassName": "gpu.nvidia.com",
        "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].uuid == 'GPU-n1-2'"}}],
    }
    assert m.request_matches(body).matched == [("gpu.nvidia.com", "n1", "gpu-2")]
    res = m.evaluate_selectors(["device.attributes['gpu.nvidia.com'].index == 0"])
    assert res.matched == [] and len(res.errors) == 6 and "no such key" in next(iter(res.errors.values()))
    bad = m.evaluate_selectors(["device.name == 'x'"])
    assert bad.compile_error
    assert m.class_nodes("gpu.nvidia.com") == {"n1": 4}


def test_attribute_catalogue_types_values_and_pools():
    m = model_of(node("n1"), node("n2"), gpu_slice("n1", 2), gpu_slice("n2", 2, stale_schema=True))
    cat = m.attribute_catalogue()["gpu.nvidia.com"]
    assert cat["gpu.nvidia.com/productName"]["type"] == "string"
    assert cat["gpu.nvidia.com/productName"]["values"] == {"NVIDIA H100 80GB HBM3": 4}
    assert cat["gpu.nvidia.com/index"]["type"] == "int" and cat["gpu.nvidia.com/index"]["pools"] == ["n2"]
    assert cat["gpu.nvidia.com/memory"]["kind"] == "capacity"
    assert cat["resource.kubernetes.io/pciBusID"]["pools"] == ["n1"]


def test_attribute_catalogue_counts_names_shared_by_kinds_pools_and_ties_exactly():
    """The catalogue's edges: a bare and a qualified name for one attribute, an attribute and a capacity under one
    name, list values, a type that changes between devices, equal counts (kept in the order first seen), and pools
    that publish different names."""
    a = gpu_slice("n1", 2)
    b = gpu_slice("n2", 1)
    d0, d1 = a["spec"]["devices"]
    d0["attributes"]["gpu.nvidia.com/arch"] = {"string": "hopper"}
    d1["attributes"]["arch"] = {"string": "ampere"}  # bare: the same qualified name
    d0["attributes"]["memory"] = {"int": 80}  # an attribute named as the capacity
    d1["attributes"]["modes"] = {"strings": ["a", "b"]}
    b["spec"]["devices"][0]["attributes"]["arch"] = {"version": "1.0.0"}  # another type
    b["spec"]["devices"][0]["capacity"]["cores"] = 132
    m = model_of(node("n1"), node("n2"), a, b)
    cat = m.attribute_catalogue()["gpu.nvidia.com"]
    assert cat["gpu.nvidia.com/arch"] == {
        "kind": "attribute",
        "type": "mixed",
        "values": {"hopper": 1, "ampere": 1, "1.0.0": 1},
        "devices": 3,
        "pools": ["n1", "n2"],
    }
    assert cat["gpu.nvidia.com/memory"] == {
        "kind": "attribute",
        "type": "int",
        "values": {"81559Mi": 3, 80: 1},
        "devices": 4,
        "pools": ["n1", "n2"],
    }
    assert cat["gpu.nvidia.com/modes"]["values"] == {'["a", "b"]': 1}
    assert cat["gpu.nvidia.com/modes"]["pools"] == ["n1"]
    assert cat["gpu.nvidia.com/cores"] == {
        "kind": "capacity",
        "type": "quantity",
        "values": {"132": 1},
        "devices": 1,
        "pools": ["n2"],
    }
    assert list(cat["gpu.nvidia.com/uuid"]["values"]) == ["GPU-n1-0", "GPU-n1-1", "GPU-n2-0"]
    assert list(cat) == sorted(cat)


@pytest.mark.parametrize("kind", ["Pod", "ResourceSlice", "Node"])
def test_deleting_unknown_objects_is_harmless(kind):
    m = model_of(node("n1"))
    obj = {"kind": kind, "metadata": {"name": "ghost", "namespace": "x" if kind == "Pod" else ""}}
    m.apply([change(obj, "DELETED")])
    assert m.node_names() == ["n1"]


def test_which_mechanism_offers_a_resource_per_node():
    objs = [
        DP,
        node("dp1", alloc=4),
        ds_pod(DP, "dp1"),
        node("dra1"),
        gpu_slice("dra1"),
        node("bare"),
        chart_gpu_class(),
    ]
    m = model_of(*objs)
    assert m.resource_nodes("nvidia.com/gpu") == {"dp1": "device-plugin", "dra1": "dra"}
    assert m.resource_nodes("deviceclass.resource.kubernetes.io/gpu.nvidia.com") == {"dra1": "dra"}
    assert m.resource_nodes("nvidia.com/mig-1g.10gb") == {}


async def test_fed_from_a_store_the_model_follows_its_changes_until_the_feed_stops():
    """The app's path (tui/feed.py): the model is loaded from the store once it is synced, then absorbs its change
    batches; a stopped feed hands it no more."""
    store = FleetStore()
    for obj in dra_fleet(2):
        store.apply(obj["kind"], "ADDED", obj)
    for kind in store.kinds:
        store.set_state(kind, LIVE, synced=True)
    async with following(store) as feed:
        m = feed.model
        assert m.node("h100-pool-0").ownership == "dra"
        store.apply("Pod", "ADDED", ds_pod(operator_dp_daemonset(), "h100-pool-0"))
        for _ in range(500):
            if m.node("h100-pool-0").ownership == "both":
                break
            await asyncio.sleep(0.01)
        assert m.node("h100-pool-0").ownership == "both" and feed.events == 1
    generation, absorbed = m.generation, feed.events
    store.apply("Node", "DELETED", m.objects["Node"][("", "h100-pool-1")])
    store.flush()
    # Stopped, the feed hands the model no more changes (it reads the store's objects, never a copy of them).
    assert m.generation == generation and feed.events == absorbed
    assert m.objects["Node"] is store.objects("Node")


def test_the_store_keeps_the_indexes_the_model_reads_and_the_model_holds_no_second_map():
    store = FleetStore()
    for obj in dra_fleet(2):
        store.apply(obj["kind"], "ADDED", obj)
    pod = ds_pod(operator_dp_daemonset(), "h100-pool-0")
    store.apply("Pod", "ADDED", pod)
    m = FleetModel()
    m.load_store(store)
    for kind in m.objects:
        assert m.objects[kind] is store.objects(kind)
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
    assert key in store.index("Pod", "node", "h100-pool-0")
    assert [p["metadata"]["name"] for p in m.pods_on_node("h100-pool-0")] == [
        p["metadata"]["name"] for p in store.by_index("Pod", "node", "h100-pool-0")
    ]
    # A pod moved by the server is filed under its new node, and the old node's set is gone once empty.
    moved = {
        **pod,
        "metadata": {**pod["metadata"], "resourceVersion": "99"},
        "spec": {**pod["spec"], "nodeName": "h100-pool-1"},
    }
    store.apply("Pod", "MODIFIED", moved)
    assert key in store.index("Pod", "node", "h100-pool-1")
    assert key not in store.index("Pod", "node", "h100-pool-0")
    store.apply("Pod", "DELETED", moved)
    assert key not in store.index("Pod", "node", "h100-pool-1")
    assert all(key not in store.index("Pod", "daemonset", v) for v in store.index_values("Pod", "daemonset"))


def test_fleet_evaluation_goes_through_the_cel_engine_over_current_slices():
    m = model_of(
        node("n1"),
        gpu_slice("n1", 4, mig=2, generation=2),
        gpu_slice("n1", 1, generation=1, name="old"),
        chart_gpu_class(),
    )
    result = m.evaluate_fleet(m.compile(["device.attributes['gpu.nvidia.com'].type == 'mig'"]))
    assert (result.summary["devices"], result.summary["matched"]) == (6, 2)


def test_custom_pool_label_follows_relabels():
    a = node("a", None, labels={"team": "vision"})
    m = model_of(a, node("b", None, labels={"team": "nlp"}), pool_label="team")
    assert m.pool_names() == ["nlp", "vision"]
    moved = copy.deepcopy(a)
    moved["metadata"]["labels"]["team"] = "nlp"
    m.apply([change(moved)])
    assert m.pool_names() == ["nlp"] and m.pool("nlp").nodes == ["a", "b"]
    bumped = copy.deepcopy(moved)
    bumped["status"]["allocatable"]["nvidia.com/gpu"] = "8"
    m.apply([change(bumped)])
    assert m.pool("nlp").allocatable_gpus == 8 and m.node("a").ownership == "device-plugin"


def test_a_plugin_running_again_between_crashes_still_flaps():
    def with_heartbeat(n, t):
        n["status"]["conditions"][0]["lastHeartbeatTime"] = t
        return n

    p = ds_pod(DP, "n1", restarts=6)
    p["status"]["containerStatuses"][0]["lastState"] = {
        "terminated": {"reason": "Error", "finishedAt": "2026-11-30T07:55:00Z"}
    }
    _, v = _one(DP, with_heartbeat(node("n1", alloc=8), "2026-11-30T08:00:00Z"), p, gpu_slice("n1"))
    assert v.ownership == "flapping" and "running again after a crash" in v.device_plugin[0].flapping_reason
    # The same restarts long ago: a plugin that runs, so both stacks serve the node.
    _, v = _one(DP, with_heartbeat(node("n1", alloc=8), "2026-11-30T09:00:00Z"), p, gpu_slice("n1"))
    assert v.ownership == "both"


def test_the_indexer_table_names_every_indexer_under_a_kind_dragoman_reads():
    """INDEXERS is the one place that says which kinds the model indexes: an `_index_<Kind>` method left out of it
    would never run, and a kind outside fleet/store.py's KINDS would never arrive."""
    from dragoman.fleet.store import KINDS

    methods = {name.removeprefix("_index_"): fn for name, fn in vars(FleetModel).items() if name.startswith("_index_")}
    methods.pop("stack_pod")  # a helper of _index_Pod, not a kind's indexer
    assert FleetModel.INDEXERS == methods
    assert set(FleetModel.INDEXERS) <= set(KINDS)


def test_a_kind_without_an_indexer_is_stored_and_not_indexed():
    m = FleetModel()
    cm = {"kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}}
    assert "ConfigMap" not in FleetModel.INDEXERS
    m.apply([change(cm)])
    assert m.objects["ConfigMap"] == {("ns", "c"): cm}


def test_a_reload_moves_the_selector_epoch_on_so_a_screen_that_saw_the_first_load_sees_the_second():
    # The playground caches by cel_epoch: a second load (the TUI relists after a reconnect) restarting the epoch at
    # the first load's value would keep it showing the first load's devices.
    m = FleetModel()
    m.load_list(dra_fleet(3))
    seen = m.cel_epoch
    first = {d.id for d in m.devices()}
    m.load_list(dra_fleet(1))  # fewer slices: fewer invalidations than the first load made
    assert m.cel_epoch > seen
    assert {d.id for d in m.devices()} < first


def test_loading_pods_from_a_mapping_a_list_or_one_by_one_gives_the_same_indexes():
    """The load takes a store's mapping by its keys and indexes pods on a path of their own (the bulk of a fleet);
    a list, and changes applied one by one, go through the generic indexer: all three must agree."""
    dp = operator_dp_daemonset()
    bare = pod("static-gpu-probe", node_name="l4-pool-1")
    bare["metadata"]["labels"] = {"app": "nvidia-device-plugin-daemonset"}  # a stack pod with no owner
    bare["spec"]["containers"][0]["image"] = "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"
    objs = (
        dp_fleet(3)
        + dra_fleet(2)
        + [
            ds_pod(dp, "h100-pool-0"),  # a device-plugin pod on a DRA node: both stacks
            pod("web", node_name="l4-pool-0", owner=("ReplicaSet", "web-1")),
            pod("pending", gpus=1),
            bare,
        ]
    )
    by_kind: dict[str, dict] = {}
    for o in objs:
        by_kind.setdefault(o["kind"], {})[(o["metadata"].get("namespace") or "", o["metadata"]["name"])] = o
    from_mapping = FleetModel()
    from_mapping.load(by_kind)
    from_list = FleetModel()
    from_list.load_list(objs)
    one_by_one = FleetModel()
    one_by_one.load({k: v for k, v in by_kind.items() if k != "Pod"})
    one_by_one.apply([change(o, "ADDED") for o in by_kind["Pod"].values()])
    # The TUI's way: a store listed whole (no change per object), read by the model through its indexes, then the pods
    # the watch brings afterwards followed through the store's changes.
    from dragoman.fleet.store import FleetStore

    store = FleetStore()
    store.announce_first_lists = False
    late = [p for p in by_kind["Pod"].values() if p["metadata"]["name"] in ("web", "static-gpu-probe")]
    for kind, objects in by_kind.items():
        store.replace(kind, [o for o in objects.values() if o not in late])
    store.announce_first_lists = True
    from_store = FleetModel()
    from_store.load_store(store)
    store.subscribe(from_store.apply)  # as tui/feed.py hands the store's batches over
    for o in late:
        store.apply("Pod", "ADDED", o)
    for m in (from_list, one_by_one, from_store):
        assert set(m.objects["Pod"]) == set(from_mapping.objects["Pod"])
        for name in from_mapping.node_names():
            assert [key_of_pod(p) for p in m.pods_on_node(name)] == [
                key_of_pod(p) for p in from_mapping.pods_on_node(name)
            ], name
            assert m.node(name).to_json() == from_mapping.node(name).to_json(), name
        for pk in by_kind["Pod"]:
            assert m.is_stack_pod(pk) == from_mapping.is_stack_pod(pk), pk
    assert from_mapping.node("h100-pool-0").ownership == "both"
    assert from_mapping.is_stack_pod(("ml", "static-gpu-probe"))
    assert not from_mapping.is_stack_pod(("ml", "web"))


def key_of_pod(p: dict) -> tuple[str, str]:
    return (p["metadata"].get("namespace") or "", p["metadata"]["name"])


def test_the_waiting_pods_index_follows_every_phase_change() -> None:
    """model.waiting_pods() (the Stuck view's candidates) is what a scan of every pod would say, after a load and
    after each change: a pod scheduled and running leaves it, a failed or new one enters, a deleted one is gone."""
    from types import SimpleNamespace

    from dragoman.fleet.model import WAITING_PHASES, FleetModel
    from dragoman.sim.scenarios.scale import generate_scale

    def scan(m: FleetModel) -> set:
        return {k for k, p in m.objects["Pod"].items() if (p.get("status") or {}).get("phase") in WAITING_PHASES}

    m = FleetModel()
    m.load_list(generate_scale(nodes=20, pods=120, pending=10))
    assert m.waiting_pods() == scan(m) and m.waiting_pods(), "a fleet with pending pods: an empty index proves nothing"
    pods = list(m.objects["Pod"].values())
    waiting = next(p for p in pods if (p.get("status") or {}).get("phase") == "Pending")
    running = next(p for p in pods if (p.get("status") or {}).get("phase") == "Running")
    started = copy.deepcopy(waiting)
    started["status"]["phase"] = "Running"
    failed = copy.deepcopy(running)
    failed["status"]["phase"] = "Failed"
    fresh = copy.deepcopy(running)
    fresh["metadata"]["name"] += "-new"
    del fresh["status"]
    for event, obj in (("MODIFIED", started), ("MODIFIED", failed), ("ADDED", fresh), ("DELETED", failed)):
        m.apply([SimpleNamespace(kind="Pod", type=event, obj=obj, old=None)])
        assert m.waiting_pods() == scan(m), event
    assert (started["metadata"]["namespace"], started["metadata"]["name"]) not in m.waiting_pods()
    assert (fresh["metadata"]["namespace"], fresh["metadata"]["name"]) in m.waiting_pods()
