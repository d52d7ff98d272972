"""The model reads what v1.37 publishes about devices: one test per field (DeviceTaintRule and slice taints,
counter sets, shared capacity, binding conditions, admin access, network node selection, health), and the
ResourceSlice shapes a saved snapshot may hold."""

from __future__ import annotations

import copy

from dragoman.fleet.k8s.devicestate import BINDING, BINDING_FAILED, COUNTERS, FREE, HELD, SHARED, TAINTED, rule_eviction
from dragoman.fleet.model import device_health, request_alternatives
from dragoman.fleet.snapshot import parse_objects
from fleet_fixtures import (
    allocated_claim,
    chart_gpu_class,
    claim,
    device_class,
    fabric_slice,
    gpu_slice,
    mig_counter_slice,
    model_of,
    node,
    pod,
    shared_slice,
    taint_rule,
)


def D(node_name, dev, driver="gpu.nvidia.com"):
    return (driver, node_name, dev)


def result(pool, dev, driver="gpu.nvidia.com", **extra):
    return {"request": "gpu", "driver": driver, "pool": pool, "device": dev, **extra}


def test_device_taint_rule_is_watched_and_taints_the_devices_it_selects():
    rule = taint_rule("maint-n1", pool="n1", key="example.com/maintenance", value="fw", effect="NoSchedule")
    m = model_of(node("n1"), node("n2"), gpu_slice("n1", 2), gpu_slice("n2", 2), rule)
    assert ("", "maint-n1") in m.objects["DeviceTaintRule"]
    st = m.device_state(D("n1", "gpu-0"))
    assert st.state == TAINTED and not st.allocatable
    (t,) = st.taints
    assert (t.key, t.value, t.effect, t.source) == (
        "example.com/maintenance",
        "fw",
        "NoSchedule",
        "DeviceTaintRule maint-n1",
    )
    assert m.device_state(D("n2", "gpu-0")).state == FREE
    # The node's free count follows: no device of n1 can be given now.
    assert (m.node("n1").devices_total, m.node("n1").devices_free) == (2, 0)
    assert m.node("n2").devices_free == 2


def test_a_rule_without_selector_taints_nothing_and_effect_none_is_informational():
    bare = taint_rule("nothing", driver=None)
    bare["spec"].pop("deviceSelector")
    info = taint_rule("fyi", effect="None")
    m = model_of(node("n1"), gpu_slice("n1", 1), bare, info)
    st = m.device_state(D("n1", "gpu-0"))
    assert [t.source for t in st.taints] == ["DeviceTaintRule fyi"]
    assert st.allocatable and st.state == FREE


def test_a_rule_arriving_by_watch_changes_the_node_free_count():
    from fleet_fixtures import change

    m = model_of(node("n1"), gpu_slice("n1", 2))
    assert m.node("n1").devices_free == 2
    m.apply([change(taint_rule("maint", pool="n1"), "ADDED")])
    assert m.node("n1").devices_free == 0
    m.apply([change(taint_rule("maint", pool="n1"), "DELETED")])
    assert m.node("n1").devices_free == 2


def test_eviction_in_progress_condition():
    assert rule_eviction(taint_rule("r", effect="NoExecute", evicting=True))["reason"] == "PodsPendingEviction"
    assert rule_eviction(taint_rule("r", effect="NoExecute", evicting=False)) is None
    assert rule_eviction(taint_rule("r")) is None


def test_slice_device_taints_are_read():
    s = gpu_slice("n1", 2)
    s["spec"]["devices"][1]["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoExecute"}]
    m = model_of(node("n1"), s)
    st = m.device_state(D("n1", "gpu-1"))
    assert st.state == TAINTED and st.taints[0].source == "slice" and "xid=79:NoExecute" in st.words()
    assert m.device_state(D("n1", "gpu-0")).state == FREE


def test_counter_sets_block_the_whole_gpu_when_a_partition_is_held_and_units_are_not_counted_twice():
    held = allocated_claim("mig-a", [result("n1", "gpu-0-mig-1g10gb-0")])
    m = model_of(node("n1"), *mig_counter_slice("n1", gpus=2, migs=2), held)
    whole = m.device_state(D("n1", "gpu-0"))
    assert whole.state == COUNTERS and not whole.allocatable
    (block,) = whole.counters
    assert (block.counter_set, block.claims) == ("gpu-0-counters", (("ml", "mig-a"),))
    assert "used by ml/mig-a" in block.text()
    # The other placement consumes a different counter: still free.
    assert m.device_state(D("n1", "gpu-0-mig-1g10gb-1")).allocatable
    assert m.device_state(D("n1", "gpu-0-mig-1g10gb-0")).state == HELD
    # Two GPUs with two partitions each: 6 devices, 2 physical units; gpu-0 is partly taken, gpu-1 wholly free.
    v = m.node("n1")
    assert (len(v.devices), v.devices_total, v.devices_gpu, v.devices_free) == (6, 2, 2, 1)
    assert m.device_totals() == (2, 1)


def test_shared_device_holders_and_capacity_left():
    a = allocated_claim(
        "share-a", [result("n1-shared", "gpu-shared-0", shareID="a1", consumedCapacity={"memory": "20Gi"})]
    )
    b = allocated_claim(
        "share-b", [result("n1-shared", "gpu-shared-0", shareID="b2", consumedCapacity={"memory": "40Gi"})]
    )
    policy = {"default": "10Gi", "validRange": {"min": "10Gi", "step": "10Gi"}}
    m = model_of(node("n1"), shared_slice("n1", policy=policy), a, b)
    st = m.device_state(("gpu.nvidia.com", "n1-shared", "gpu-shared-0"))
    assert st.state == SHARED and st.holders == (("ml", "share-a"), ("ml", "share-b"))
    (share,) = st.shares
    assert share.text() == "memory 60Gi used, 20Gi left of 80Gi"
    assert st.allocatable  # 20Gi left covers the 10Gi default
    assert st.words() == "shared by 2: memory 20Gi left"
    # Deleting one share leaves the device held by the other.
    m2 = model_of(node("n1"), shared_slice("n1", policy=policy), b)
    assert m2.device_state(("gpu.nvidia.com", "n1-shared", "gpu-shared-0")).holders == (("ml", "share-b"),)


def test_shared_device_without_room_for_the_default_request_is_not_free():
    a = allocated_claim("share-a", [result("n1-shared", "gpu-shared-0", consumedCapacity={"memory": "20Gi"})])
    # No request policy: a request naming no amount takes the whole capacity, which is no longer there.
    m = model_of(node("n1"), shared_slice("n1"), a)
    st = m.device_state(("gpu.nvidia.com", "n1-shared", "gpu-shared-0"))
    assert st.state == SHARED and not st.allocatable


def test_binding_conditions_pending_then_failed_then_bound():
    res = result(
        "fabric",
        "xpu-0",
        driver="fabric.example.com",
        bindingConditions=["fabric.example.com/attached"],
        bindingFailureConditions=["fabric.example.com/attach-failed"],
    )
    dev = ("fabric.example.com", "fabric", "xpu-0")

    def status(**conds):
        return [
            {
                "driver": "fabric.example.com",
                "pool": "fabric",
                "device": "xpu-0",
                "conditions": [{"type": k.replace("_", "/"), "status": v, "message": "m"} for k, v in conds.items()],
            }
        ]

    base = [node("n1"), fabric_slice()]
    pending = model_of(*base, allocated_claim("x", [res]))
    assert pending.device_state(dev).state == BINDING
    assert "waiting for fabric.example.com/attached=True" in pending.device_state(dev).words()
    failed = model_of(
        *base, allocated_claim("x", [res], status_devices=status(**{"fabric.example.com_attach-failed": "True"}))
    )
    assert failed.device_state(dev).state == BINDING_FAILED
    bound = model_of(
        *base, allocated_claim("x", [res], status_devices=status(**{"fabric.example.com_attached": "True"}))
    )
    assert bound.device_state(dev).state == HELD


def test_admin_access_results_do_not_hold_the_device():
    admin = allocated_claim("monitor", [result("n1", "gpu-0", adminAccess=True)], ns="monitoring")
    m = model_of(node("n1"), gpu_slice("n1", 1), admin)
    st = m.device_state(D("n1", "gpu-0"))
    assert st.admin == (("monitoring", "monitor"),) and st.holders == () and st.allocatable
    assert m.device_claim(D("n1", "gpu-0")) is None
    assert m.node("n1").devices_free == 1


def test_network_devices_count_on_the_nodes_they_reach():
    cls = device_class("xpu.example.com", ["device.driver == 'fabric.example.com'"])
    sel = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cloud.google.com/gke-nodepool", "operator": "In", "values": ["gpu-a"]}]}
        ]
    }
    everywhere = model_of(node("n1"), node("n2", "gpu-b"), fabric_slice(), cls)
    assert everywhere.class_nodes("xpu.example.com") == {"n1": 1, "n2": 1}
    some = model_of(node("n1"), node("n2", "gpu-b"), fabric_slice(selector=sel), cls)
    assert some.class_nodes("xpu.example.com") == {"n1": 1}
    # Each counted once across the fleet.
    assert everywhere.device_totals() == (1, 1)


def test_per_device_node_selection():
    s = fabric_slice()
    s["spec"].pop("allNodes")
    s["spec"]["perDeviceNodeSelection"] = True
    s["spec"]["devices"][0]["nodeName"] = "n2"
    m = model_of(node("n1"), node("n2"), s, device_class("xpu", ["device.driver == 'fabric.example.com'"]))
    assert m.class_nodes("xpu") == {"n2": 1}


def _health_pod(*ids: str) -> dict:
    p = pod("train", node_name="n1")
    resources = [{"resourceID": rid, "health": "Unhealthy", "message": "XID 79"} for rid in ids]
    p["status"]["containerStatuses"] = [
        {"name": "main", "allocatedResourcesStatus": [{"name": "claim:train-gpu/gpu", "resources": resources}]}
    ]
    return p


CLAIM_UID = "5f0c2d1e-8a7b-4c6d-9e0f-1a2b3c4d5e6f"


def test_pod_device_health_is_read():
    # The kubelet's fallback when the driver returned no CDI device: "<driver>/<pool>/<device>" (a pool may hold "/").
    assert device_health(_health_pod("gpu.nvidia.com/n1/gpu-0")) == [
        ("main", "claim:train-gpu/gpu", "gpu.nvidia.com/n1/gpu-0", "Unhealthy", "XID 79", "gpu.nvidia.com/n1/gpu-0")
    ]
    assert device_health(_health_pod("fabric.example.com/rack/1/xpu-3"))[0].device == "fabric.example.com/rack/1/xpu-3"


def test_pod_device_health_reads_the_cdi_device_nvidias_driver_prepared():
    """A kubelet v1.37 names a DRA device by the first CDI device name NodePrepareResources returned: NVIDIA's driver
    (v25.12 on) returns the claim's own entry, k8s.gpu.nvidia.com/claim=<claim uid>-<device>; v25.3 to v25.8 the
    standard device k8s.gpu.nvidia.com/device=<device> first. The pod's claims say the device's pool."""
    c = claim("train-gpu", allocated=[("n1", "gpu-0"), ("n1", "gpu-1")], reserved_for="train")
    c["metadata"]["uid"] = CLAIM_UID
    other = claim("other", allocated=[("n2", "gpu-0")])
    other["metadata"]["uid"] = "6f0c2d1e-8a7b-4c6d-9e0f-1a2b3c4d5e6f"
    new, old = f"k8s.gpu.nvidia.com/claim={CLAIM_UID}-gpu-1", "k8s.gpu.nvidia.com/device=gpu-0"
    (h,) = device_health(_health_pod(new), [c, other])
    assert (h.device, h.resource_id, h.health) == ("gpu.nvidia.com/n1/gpu-1", new, "Unhealthy")
    assert device_health(_health_pod(old), [c])[0].device == "gpu.nvidia.com/n1/gpu-0"
    # The claim entry's uid picks the claim: gpu-0 is in both claims, on two nodes.
    assert device_health(_health_pod(f"k8s.gpu.nvidia.com/claim={CLAIM_UID}-gpu-0"), [c, other])[0].device == (
        "gpu.nvidia.com/n1/gpu-0"
    )
    # Without the claims, or when the name is ambiguous or another driver's, the kubelet's words are kept as they are.
    assert device_health(_health_pod(new))[0].device == new
    assert device_health(_health_pod(old), [c, other])[0].device == old
    assert device_health(_health_pod("vendor.example.com/xpu=3"), [c])[0].device == "vendor.example.com/xpu=3"


def test_every_first_available_subrequest_keeps_its_count_and_mode():
    req = {
        "name": "gpu",
        "firstAvailable": [
            {"name": "h100", "deviceClassName": "h100.nvidia.com", "count": 2},
            {"name": "a100", "deviceClassName": "a100.nvidia.com", "allocationMode": "All"},
        ],
    }
    alts = request_alternatives(req)
    assert [(n, b.get("count"), b.get("allocationMode")) for n, b in alts] == [
        ("gpu/h100", 2, None),
        ("gpu/a100", None, "All"),
    ]


# ---- ResourceSlice shapes a saved snapshot may hold ----------------------------------------------------------------

V1_DEVICE = {
    "name": "gpu-0",
    "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA H100 80GB HBM3"}},
    "capacity": {"memory": {"value": "80Gi"}},
    "taints": [{"key": "k", "effect": "NoSchedule"}],
}


def _slice(api_version: str, device: dict) -> dict:
    return {
        "apiVersion": api_version,
        "kind": "ResourceSlice",
        "metadata": {"name": "n1-gpu"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "devices": [device],
        },
    }


def _read(obj: dict):
    import yaml

    (out,) = parse_objects(yaml.safe_dump(obj))
    return out


def _devices_of(sl: dict):
    m = model_of(node("n1"), chart_gpu_class(), sl)
    return [(d.name, d.type, d.attribute("productName"), d.raw.get("capacity"), d.taints) for d in m.devices()], m


def test_v1_slice_snapshot():
    devices, m = _devices_of(_read(_slice("resource.k8s.io/v1", V1_DEVICE)))
    assert devices == [
        ("gpu-0", "gpu", "NVIDIA H100 80GB HBM3", {"memory": {"value": "80Gi"}}, [V1_DEVICE["taints"][0]])
    ]
    assert m.device_state(D("n1", "gpu-0")).state == TAINTED


def test_v1beta2_slice_snapshot_reads_as_v1():
    sl = _read(_slice("resource.k8s.io/v1beta2", V1_DEVICE))
    assert sl["apiVersion"] == "resource.k8s.io/v1"
    assert _devices_of(sl)[0] == _devices_of(_read(_slice("resource.k8s.io/v1", V1_DEVICE)))[0]


def test_v1beta1_basic_wrapper_is_lifted():
    body = {k: v for k, v in V1_DEVICE.items() if k != "name"}
    sl = _read(_slice("resource.k8s.io/v1beta1", {"name": "gpu-0", "basic": copy.deepcopy(body)}))
    assert sl["apiVersion"] == "resource.k8s.io/v1" and "basic" not in sl["spec"]["devices"][0]
    devices, m = _devices_of(sl)
    assert devices == _devices_of(_read(_slice("resource.k8s.io/v1", V1_DEVICE)))[0]
    assert m.device_state(D("n1", "gpu-0")).taints[0].source == "slice"


def test_v1beta1_claim_requests_move_under_exactly():
    c = claim("old")
    c["apiVersion"] = "resource.k8s.io/v1beta1"
    c["spec"]["devices"]["requests"] = [{"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 2}]
    out = _read(c)
    assert out["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}
    ]


def test_a_snapshot_of_slices_without_nodes_still_counts_its_devices():
    from dragoman.fleet.report import check_report, render_text

    m = model_of(gpu_slice("gone-1", 4), fabric_slice())
    assert check_report(m, [])["summary"]["devices"] == 5
    assert "DRA devices of no known node" in render_text(m, [], width=100)


def test_playground_says_how_many_matches_could_be_allocated_now_and_why_not_the_others():
    from dragoman.fleet import cel_playground as P
    from dragoman.fleet.cel.fleeteval import DeviceIndex

    s = gpu_slice("n1", 4)
    held = claim("holder", allocated=[("n1", "gpu-0")])
    m = model_of(node("n1"), s, held, taint_rule("maint", pool="n1", device="gpu-1"))
    out, ev = P.evaluate(DeviceIndex(m.current_slices()), [], "", "device.driver == 'gpu.nvidia.com'")
    assert out.summary["matched"] == 4
    assert P.allocatable_now(ev, m) == "could be allocated now: 2 of the 4 matching devices (1 held, 1 tainted)"
    assert P.allocatable_now(ev, m, short=True) == "allocatable now 2/4 (1 held, 1 tainted)"


def test_cel_command_reports_allocatable_now(tmp_path):
    import json
    import subprocess
    import sys

    import yaml

    objs = [gpu_slice("n1", 2), claim("holder", allocated=[("n1", "gpu-0")])]
    path = tmp_path / "snap.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    run = subprocess.run(
        [sys.executable, "-m", "dragoman", "cel", "device.driver == 'gpu.nvidia.com'", "--snapshot", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "could be allocated now: 1 of the 2 matching devices (1 held)" in run.stdout, run.stdout + run.stderr
    doc = json.loads(
        subprocess.run(
            [sys.executable, "-m", "dragoman", "cel", "true", "--snapshot", str(path), "-o", "json"],
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
    )
    assert doc["allocatableNow"] == {"matched": 2, "now": 1, "notNow": {"held": 1}}


def test_device_states_kept_change_by_change_equal_a_fresh_reading() -> None:
    """The model keeps its device states incrementally (only the pools a slice, claim or rule touched are read again):
    after a stream of watch changes — claims allocated and released, slices republished, a DeviceTaintRule added and
    removed — every device's state equals a reading built from scratch."""
    import random

    from dragoman.benchmarks.bench_model import _by_kind, _events
    from dragoman.fleet.k8s.devicestate import FleetDevices
    from dragoman.fleet.model import FleetModel
    from dragoman.fleet.store import Change
    from dragoman.sim.scenarios.scale import generate_scale

    by_kind = _by_kind(generate_scale(nodes=40, gpus_per_node=8, pods=160, pending=4))
    m = FleetModel()
    m.load(by_kind)
    m.device_states()  # built now: what follows is applied change by change
    rng = random.Random(5)
    claims = list(by_kind["ResourceClaim"].values())
    changes = _events(by_kind, 300, seed=3)
    deleted = rng.sample(claims, 10)
    for c in deleted:
        changes.append(Change("ResourceClaim", "DELETED", c, c))
    rule = taint_rule("maint", pool=next(iter(by_kind["ResourceSlice"].values()))["spec"]["pool"]["name"])
    changes.append(Change("DeviceTaintRule", "ADDED", rule, None))
    for ch in changes:
        m.apply([ch])
    before = [m.device_state(d.id) for d in m.device_states().devices()]  # every pool read: a stale one would stay
    assert before
    for c in deleted[:5]:  # allocated again: their devices are held once more
        m.apply([Change("ResourceClaim", "ADDED", c, None)])
    fresh = FleetDevices(
        m.objects["ResourceSlice"].values(), m.objects["ResourceClaim"].items(), m.objects["DeviceTaintRule"].values()
    )
    kept = m.device_states()
    ids = [d.id for d in fresh.devices()]
    assert len(ids) == len([d.id for d in kept.devices()]) > 100
    assert [kept.state(i) for i in ids] == [fresh.state(i) for i in ids]
    assert any(kept.state(i).holders for i in ids) and any(kept.state(i).taints for i in ids)
    m.apply([Change("DeviceTaintRule", "DELETED", rule, rule)])
    assert not any(m.device_state(i).taints for i in ids)


def test_device_states_name_holders_by_the_claim_keys_and_absorb_a_change_they_already_hold() -> None:
    """A device's holders are the keys its claim's changes were filed with (one key object per claim, however many
    devices it holds: the states of a 150,000-pod fleet do not make a new (namespace, name) per device). States built
    from a store ahead of the queued changes see the claim's own change again: it is absorbed once, not twice, and
    its deletion frees the devices."""
    from dragoman.fleet.k8s.devicestate import FleetDevices

    c = allocated_claim("train", [result("n1", "gpu-0"), result("n1", "gpu-1")])
    ck = ("ml", "train")
    states = FleetDevices([gpu_slice("n1", 2)], [(ck, c)])
    first, second = states.state(D("n1", "gpu-0")), states.state(D("n1", "gpu-1"))
    assert first.holders == second.holders == (ck,)
    assert first.holders[0] is ck and second.holders[0] is ck
    states.set_claim(ck, c)  # the queued change of what the states were built from
    assert states.state(D("n1", "gpu-0")).holders == (ck,)
    assert states.allocated.holders[D("n1", "gpu-0")] == ("ml/train",)
    states.set_claim(ck, None)
    assert states.state(D("n1", "gpu-0")).state == FREE and states.state(D("n1", "gpu-1")).state == FREE
    assert not states.allocated.devices and not states.allocated.holders


def test_allocatable_and_units_answer_as_each_device_state_does_without_building_the_plain_ones() -> None:
    """FleetDevices.allocatable (and the per-pool units a node view counts) skip the DeviceState of a device with no
    taint, no sharing and no counters: every kind of device still reads as its state does — held, free, tainted by
    its slice or a rule, shared with and without room, blocked by counters, admin-access, waiting for binding."""
    from dragoman.fleet.k8s.devicestate import FleetDevices

    objs = [
        node("n1"),
        node("n2"),
        gpu_slice("n1", 4),
        *mig_counter_slice("n2", gpus=2, migs=2),
        shared_slice("n1"),
        fabric_slice(),
        taint_rule("maint", pool="n1"),
        allocated_claim("held", [result("n1", "gpu-0")]),
        allocated_claim("mig", [result("n2", "gpu-0-mig-1g10gb-0")]),
        allocated_claim("admin", [result("n1", "gpu-1", adminAccess=True)]),
        allocated_claim("share", [result("n1-shared", "gpu-shared-0", consumedCapacity={"memory": "20Gi"})]),
        allocated_claim("fabric", [result("fabric", "link-0", driver="fabric.example.com")]),
    ]
    m = model_of(*objs)
    raw = (m.objects["ResourceSlice"].values(), m.objects["ResourceClaim"].items(), m.objects["DeviceTaintRule"])
    seen: set[str] = set()
    for rules in (m.objects["DeviceTaintRule"].values(), ()):
        fast = FleetDevices(raw[0], raw[1], rules)  # asked before any state is built
        full = FleetDevices(raw[0], raw[1], rules)
        ids = [d.id for d in full.devices()]
        assert len(ids) > 10
        states = [full.state(i) for i in ids]
        assert [fast.allocatable(i) for i in ids] == [s.allocatable for s in states]
        seen |= {s.state for s in states}
        for pid in {i[:2] for i in ids}:
            names = [i[2] for i in ids if i[:2] == pid]
            units: dict[tuple, bool] = {}
            FleetDevices(raw[0], raw[1], rules).units(pid, names, units)
            want: dict[tuple, bool] = {}
            for n in names:
                unit = full.physical_key((*pid, n))
                want[unit] = want.get(unit, True) and full.state((*pid, n)).allocatable
            assert units == want, pid
    assert seen >= {HELD, FREE, SHARED, COUNTERS, TAINTED}


def test_a_plain_pools_states_read_as_its_converted_devices_say_and_its_devices_wait_until_read() -> None:
    """A pool whose devices publish only names, attributes and capacity, with no DeviceTaintRule in force, is read
    without converting its devices (allocator.Slice.devices, on first read): every state, `allocatable` and the units
    equal what the converted devices give — held, held twice, admin-access, waiting for binding, a claim holding a
    device of an older generation or none at all, free. A rule converts them and taints them; its deletion untaints."""
    from dragoman.fleet.k8s.devicestate import _FREE_STATE, FleetDevices

    bind = {"bindingConditions": ["Attached"], "bindingFailureConditions": ["Failed"]}
    slices = [gpu_slice("n1", 4, generation=2), gpu_slice("n1", 6, generation=1), gpu_slice("n2", 2)]
    claims = [
        allocated_claim("held", [result("n1", "gpu-0")]),
        allocated_claim("twice", [result("n1", "gpu-0")], ns="other"),
        allocated_claim("admin", [result("n1", "gpu-1", adminAccess=True)]),
        allocated_claim("binding", [result("n1", "gpu-2", **bind)]),
        allocated_claim("older", [result("n1", "gpu-5")]),  # only generation 1 has it: not a device now
        allocated_claim("gone", [result("n9", "gpu-0")]),
        allocated_claim("n2", [result("n2", "gpu-1")]),
    ]
    items = [((c["metadata"]["namespace"], c["metadata"]["name"]), c) for c in claims]
    ids = [D(n, f"gpu-{i}") for n in ("n1", "n2", "n9") for i in range(6)]
    lazy = FleetDevices(slices, items)
    units: dict[tuple, bool] = {}
    for pid in (("gpu.nvidia.com", "n1"), ("gpu.nvidia.com", "n2")):
        lazy.units(pid, [f"gpu-{i}" for i in range(6)], units)
    got = [(lazy.state(i), lazy.allocatable(i)) for i in ids]
    assert all(s._devices is None for s in lazy.inventory.slices.values())  # read, none converted
    assert not any(True for _ in lazy.tainted())
    # The same reading from the converted devices: FleetDevices._state of each Device.
    full = FleetDevices(slices, items)
    want = []
    for i in ids:
        ps = full._pool(i[:2])
        dev = ps.devices.get(i[2]) if ps is not None else None
        st = _FREE_STATE if dev is None else full._state(ps, dev)
        want.append((st, st.allocatable))
    assert got == want
    assert {s.state for s, _ in got} >= {HELD, FREE, BINDING}
    assert lazy.state(D("n1", "gpu-0")).holders == (("ml", "held"), ("other", "twice"))
    assert lazy.state(D("n1", "gpu-5")) is _FREE_STATE  # held, but not published by the newest generation
    assert units == {i: ok for i, (_, ok) in zip(ids, got, strict=True) if i[1] != "n9"}
    # A rule: the devices are converted and tainted; its deletion leaves their own (none).
    rule = taint_rule("maint", pool="n2")
    lazy.set_taint_rules([rule])
    assert all(s._devices is not None for s in lazy.inventory.slices.values())
    assert [d.id for d in lazy.tainted()] == [D("n2", "gpu-0"), D("n2", "gpu-1")]
    assert lazy.state(D("n2", "gpu-0")).state == TAINTED and not lazy.allocatable(D("n2", "gpu-0"))
    lazy.set_taint_rules([])
    assert lazy.state(D("n2", "gpu-0")) is _FREE_STATE and not any(True for _ in lazy.tainted())
    # A slice added while a rule is in force is converted with its taints; one added after is read plainly again.
    with_rule = FleetDevices([], (), [rule])
    with_rule.upsert_slice(gpu_slice("n2", 2))
    assert with_rule.state(D("n2", "gpu-1")).state == TAINTED


def test_not_now_words_are_each_device_states_word_and_a_plain_pools_free_devices_keep_no_state() -> None:
    """FleetDevices.not_now_words (the playground's "allocatable now" at every keystroke that compiles, over every
    device) gives each device's not_now_word, for every kind of device: held twice, admin-access, waiting for binding,
    a device of an older generation, none at all, tainted, shared, blocked by counters. A plain pool's unheld devices
    are read without a DeviceState kept for each: 40,000 of them were ~100,000 objects the cyclic collector scanned
    mid-typing."""
    from dragoman.fleet.k8s.devicestate import FleetDevices, not_now_word, not_now_words

    bind = {"bindingConditions": ["Attached"], "bindingFailureConditions": ["Failed"]}
    objs = [
        node("n1"),
        node("n2"),
        node("n3"),
        gpu_slice("n1", 4),
        *mig_counter_slice("n2", gpus=2, migs=2),
        shared_slice("n1"),
        gpu_slice("n3", 6, generation=2),
        gpu_slice("n3", 8, generation=1),
        taint_rule("maint", pool="n1"),
        allocated_claim("held", [result("n3", "gpu-0")]),
        allocated_claim("twice", [result("n3", "gpu-0")], ns="other"),
        allocated_claim("admin", [result("n3", "gpu-1", adminAccess=True)]),
        allocated_claim("binding", [result("n3", "gpu-2", **bind)]),
        allocated_claim("older", [result("n3", "gpu-7")]),
        allocated_claim("mig", [result("n2", "gpu-0-mig-1g10gb-0")]),
        allocated_claim("share", [result("n1-shared", "gpu-shared-0", consumedCapacity={"memory": "20Gi"})]),
    ]
    m = model_of(*objs)
    slices, claims = m.objects["ResourceSlice"].values(), m.objects["ResourceClaim"].items()
    words: set[str] = set()
    for rules in (m.objects["DeviceTaintRule"].values(), ()):
        full = FleetDevices(slices, claims, rules)
        ids = [d.id for d in full.devices()] + [D("n3", "gpu-7"), D("n9", "gpu-0")]
        want = [not_now_word(full.state(i)) for i in ids]
        fast = FleetDevices(slices, claims, rules)
        assert not_now_words(fast, ids) == want
        words |= set(want)
    assert {"", "held"} < words and len(words) >= 5, words
    # A plain pool (n3, no rule in force): only its held devices have a state kept, and only they are converted.
    plain = FleetDevices(slices, claims, ())
    n3 = [D("n3", f"gpu-{i}") for i in range(8)]
    not_now_words(plain, n3)  # the playground's path
    kept = plain._pools.get(("gpu.nvidia.com", "n3"))
    assert kept is None or set(kept.states) <= {"gpu-0", "gpu-1", "gpu-2", "gpu-7"}


def test_devices_held_by_the_same_claims_share_one_state_until_a_claim_changes() -> None:
    """A device held and nothing else (no taint, not shared, no counters, no binding) has the state its holders make:
    devices the same claims hold share one, and a claim's change forgets them all (a claim given again under a new key
    object names its devices by that key; a released device is free)."""
    from dragoman.fleet.k8s.devicestate import FleetDevices

    ck, other = ("ml", "train"), ("ml", "eval")
    states = FleetDevices(
        [gpu_slice("n1", 4)],
        [
            (ck, allocated_claim("train", [result("n1", "gpu-0"), result("n1", "gpu-1")])),
            (other, allocated_claim("eval", [result("n1", "gpu-2")])),
        ],
    )
    first, second, third = (states.state(D("n1", f"gpu-{i}")) for i in range(3))
    assert first is second and first.holders == (ck,) and first.state == HELD
    assert third.holders == (other,) and third is not first
    assert states.state(D("n1", "gpu-3")).state == FREE
    states.set_claim(ck, None)
    assert states.state(D("n1", "gpu-0")).state == FREE and states.state(D("n1", "gpu-2")).holders == (other,)
    again = ("ml", "train")
    states.set_claim(again, allocated_claim("train", [result("n1", "gpu-1")]))
    moved = states.state(D("n1", "gpu-1"))
    assert moved.holders == (again,) and moved.holders[0] is again
    assert states.state(D("n1", "gpu-0")).state == FREE


def test_a_plain_pools_device_names_are_read_once_and_answer_as_its_devices() -> None:
    """A plain pool's states answer `has` from its devices' names without converting them: the names are read once
    per pool (every matched device asks), and they are the names its converted devices carry."""
    from dragoman.fleet.k8s.devicestate import FleetDevices

    states = FleetDevices([gpu_slice("n1", 3)])
    ps = states._pool(D("n1", "gpu-0")[:2])
    assert ps is not None and ps._devices is None
    first = ps.names()
    assert ps.names() is first and set(first) == {"gpu-0", "gpu-1", "gpu-2"}
    assert ps.has("gpu-2") and not ps.has("gpu-3")
    assert set(ps.devices) == set(first) and ps.has("gpu-1") and not ps.has("gpu-3")


def test_device_states_built_at_once_equal_those_given_claim_by_claim() -> None:
    """FleetDevices reads the claims it is built with in one pass (each claim's results once): the same holders,
    admin-access viewers, binding waits and states as set_claim given the same claims one by one — a claim given twice
    (the second wins), one whose results hold nothing, one waiting for binding conditions, one deleted."""
    from dragoman.fleet.k8s.devicestate import FleetDevices

    bind = {"bindingConditions": ["Attached"], "bindingFailureConditions": ["Failed"]}
    slices = [gpu_slice("n1", 4), shared_slice("n1")]
    first = allocated_claim("twice", [result("n1", "gpu-3")])
    claims = [
        allocated_claim("held", [result("n1", "gpu-0"), result("n1", "gpu-1", adminAccess=True)]),
        allocated_claim("binding", [result("n1", "gpu-2", **bind)]),
        first,
        allocated_claim("twice", [result("n1", "gpu-1")]),
        allocated_claim("share", [result("n1-shared", "gpu-shared-0", consumedCapacity={"memory": "20Gi"})]),
        allocated_claim("nothing", ["not a result"]),  # type: ignore[list-item]
        claim("unallocated"),
    ]
    items = [((c["metadata"]["namespace"], c["metadata"]["name"]), c) for c in claims]
    at_once = FleetDevices(slices, items)
    one_by_one = FleetDevices(slices)
    for ck, c in items:
        one_by_one.set_claim(ck, c)
    for fd in (at_once, one_by_one):
        assert fd.allocated.holders == {
            D("n1", "gpu-0"): ("ml/held",),
            D("n1", "gpu-2"): ("ml/binding",),
            D("n1", "gpu-1"): ("ml/twice",),
            D("n1-shared", "gpu-shared-0"): ("ml/share",),
        }
    assert at_once.allocated == one_by_one.allocated
    assert at_once._binding == one_by_one._binding and at_once._binding
    assert at_once._claims == one_by_one._claims and set(at_once._claims) == {
        "ml/held",
        "ml/binding",
        "ml/twice",
        "ml/share",
    }
    ids = [d.id for d in at_once.devices()]
    assert [at_once.state(i) for i in ids] == [one_by_one.state(i) for i in ids]
    assert at_once.state(D("n1", "gpu-2")).state == BINDING and at_once.state(D("n1", "gpu-3")).state == FREE
    for fd in (at_once, one_by_one):
        fd.set_claim(("ml", "twice"), None)
    assert at_once.allocated == one_by_one.allocated and D("n1", "gpu-1") not in at_once.allocated.holders


def test_playground_allocatable_now_follows_the_states_between_keystrokes():
    """The words per device are kept across keystrokes; a claim or a taint rule arriving in between is counted."""
    from dragoman.fleet import cel_playground as P
    from dragoman.fleet.cel.fleeteval import DeviceIndex
    from fleet_fixtures import change

    m = model_of(node("n1"), gpu_slice("n1", 4))
    index = DeviceIndex(m.current_slices())
    _, ev = P.evaluate(index, [], "", "device.driver == 'gpu.nvidia.com'")
    assert P.allocatable_now(ev, m, short=True) == "allocatable now 4/4"
    m.apply([change(claim("holder", allocated=[("n1", "gpu-0")]), "ADDED")])
    _, ev = P.evaluate(index, [], "", "device.driver == 'gpu.nvidia.com' ")
    assert P.allocatable_now(ev, m, short=True) == "allocatable now 3/4 (1 held)"
    m.apply([change(taint_rule("maint", pool="n1", device="gpu-1"), "ADDED")])
    assert P.allocatable_now(ev, m, short=True) == "allocatable now 2/4 (1 held, 1 tainted)"
    # Only some groups match: counted per device of the matching groups.
    _, ev = P.evaluate(index, [], "", "device.attributes['resource.kubernetes.io'].pciBusID != '0000:00:00.0'")
    assert P.allocatable_now(ev, m, short=True) == "allocatable now 2/3 (1 tainted)"
    _, ev = P.evaluate(index, [], "", "device.driver == 'nobody'")
    assert P.allocatable_now(ev, m, short=True) == ""


def test_playground_explains_a_selector_matching_nothing_without_converting_every_device():
    """The reasons are worked out on one device of each group, not on the fleet converted whole."""
    from dragoman.fleet import cel_playground as P
    from dragoman.fleet.cel.fleeteval import DeviceIndex

    m = model_of(*[gpu_slice(f"n{i}", 8) for i in range(20)])
    index = DeviceIndex(m.current_slices())
    out, ev = P.evaluate(index, [], "", "device.driver == 'nobody'")
    P.explain(out, ev, [], "")
    assert out.summary["notMatched"] == 160 and out.false_clauses
    assert sum(d is not None for d in index._converted) < 160
