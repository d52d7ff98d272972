"""kube-controller-manager's device taint eviction on the embedded simulator (sim/controllers/devicetaints.py): which
pods a NoExecute device taint evicts and when, the pod's DisruptionTarget and Event, and the DeviceTaintRule's
EvictionInProgress condition in the words and steps of v1.37.2's own table (device_taint_eviction_test.go: the first
status before any eviction, Completed a status period after it, NoEffect's counts, OtherEffect)."""

from __future__ import annotations

import datetime

import pytest
from dragoman.sim.controllers.base import settle
from dragoman.sim.controllers.devicetaints import RULE_STATUS_PERIOD, DeviceTaintEviction
from dragoman.sim.server import Simulator

DRIVER = "gpu.nvidia.com"
RULES = "devicetaintrules.resource.k8s.io"
START = datetime.datetime(2026, 11, 30, 8, 0, 0, tzinfo=datetime.UTC)


def _stamp(minutes_ago: float) -> str:
    return (START - datetime.timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _slice(node: str, taints: dict | None = None) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}", **({"taints": [taints]} if taints and i == 0 else {})} for i in range(3)],
        },
    }


def _claim_and_pod(name: str, node: str, device: str, ns: str = "default", tolerations: list | None = None):
    uid = f"uid-{ns}-{name}"
    result = {"request": "gpu", "driver": DRIVER, "pool": node, "device": device}
    if tolerations:
        result["tolerations"] = tolerations
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
        "status": {
            "allocation": {"devices": {"results": [result]}},
            "reservedFor": [{"resource": "pods", "name": name, "uid": uid}],
        },
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": uid},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": name}],
        },
        "status": {"phase": "Running"},
    }
    return [claim, pod]


def _rule(name: str, effect: str = "NoExecute", device: str | None = "gpu-0", pool: str = "n1", **taint) -> dict:
    selector = {"driver": DRIVER, "pool": pool}
    if device:
        selector["device"] = device
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {"deviceSelector": selector, "taint": {"key": "gpu.nvidia.com/xid", "effect": effect, **taint}},
    }


def _fleet(*objects: dict) -> tuple[Simulator, DeviceTaintEviction]:
    ns = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("default", "other")]
    sim = Simulator([*ns, _slice("n1"), _slice("n2"), *objects], start=START)
    ctrl = DeviceTaintEviction(sim)
    settle([ctrl])
    return sim, ctrl


def _condition(sim: Simulator, rule: str) -> tuple[str, str, str]:
    obj = sim.store.get(RULES, "", rule) or {}
    (c,) = [c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == "EvictionInProgress"]
    return c["status"], c["reason"], c["message"]


def _gone_or_going(sim: Simulator, name: str, ns: str = "default") -> bool:
    pod = sim.store.get("pods", ns, name)
    return pod is None or bool(pod["metadata"].get("deletionTimestamp"))


def _events(sim: Simulator, name: str) -> list[tuple[str, str, str]]:
    return [
        (e.get("reason"), e.get("message") or e.get("note"), (e.get("source") or {}).get("component"))
        for e in sim.store.list("events")
        if (e.get("involvedObject") or {}).get("name") == name
    ]


def test_an_untolerated_rule_is_pending_first_evicts_at_once_and_is_completed_a_status_period_later() -> None:
    sim, ctrl = _fleet(*_claim_and_pod("a", "n1", "gpu-0"), *_claim_and_pod("b", "n1", "gpu-1"))
    sim.store.create(RULES, _rule("xid"))
    # The rule's first status, written before any pod goes (upstream: PodsPendingEviction at the taint's time).
    ctrl.process()
    assert _condition(sim, "xid") == ("True", "PodsPendingEviction", "1 pod needs to be evicted in 1 namespace.")
    settle([ctrl])
    assert _gone_or_going(sim, "a") and not _gone_or_going(sim, "b")
    pod = sim.store.get("pods", "default", "a")
    if pod is not None:
        (dt,) = [c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget"]
        assert (dt["status"], dt["reason"], dt["message"]) == (
            "True",
            "DeletionByDeviceTaintManager",
            "Device Taint manager: deleting due to NoExecute taint",
        )
    assert ("DeviceTaintManagerEviction", "Marking for deletion", "device-taint-eviction-controller") in _events(
        sim, "a"
    )
    # Not rewritten within the status period; then Completed, with the controller's count.
    assert _condition(sim, "xid")[1] == "PodsPendingEviction"
    sim.clock.step(RULE_STATUS_PERIOD)
    settle([ctrl])
    assert _condition(sim, "xid") == ("False", "Completed", "1 pod evicted since starting the controller.")
    managers = {m["manager"] for m in sim.store.get(RULES, "", "xid")["metadata"].get("managedFields") or ()}
    assert "device-taint-eviction-controller" in managers


def test_a_toleration_delays_the_eviction_from_the_taints_time_added_and_one_without_seconds_stops_it() -> None:
    tolerate_1h = [
        {"key": "gpu.nvidia.com/xid", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 3600}
    ]
    forever = [{"key": "gpu.nvidia.com/xid", "operator": "Exists", "effect": "NoExecute"}]
    sim, ctrl = _fleet(
        *_claim_and_pod("waits", "n1", "gpu-0", tolerations=tolerate_1h),
        *_claim_and_pod("stays", "n1", "gpu-1", tolerations=forever),
        *_claim_and_pod("elsewhere", "n1", "gpu-1", ns="other", tolerations=tolerate_1h),
    )
    # Added 30 minutes before the clock's start: the tolerating pod has 30 minutes left.
    sim.store.create(RULES, _rule("xid", device=None, timeAdded=_stamp(30)))
    settle([ctrl])
    assert not _gone_or_going(sim, "waits") and not _gone_or_going(sim, "stays")
    pending = "2 pods need to be evicted in 2 different namespaces."
    assert _condition(sim, "xid") == ("True", "PodsPendingEviction", pending)
    sim.clock.step(29 * 60)
    settle([ctrl])
    assert not _gone_or_going(sim, "waits")
    sim.clock.step(60)
    settle([ctrl])
    assert _gone_or_going(sim, "waits") and _gone_or_going(sim, "elsewhere", "other")
    assert not _gone_or_going(sim, "stays")


def test_a_slices_own_no_execute_taint_evicts_without_a_rule() -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}
    sim = Simulator(
        [
            ns,
            _slice("n1", {"key": "x", "effect": "NoExecute", "timeAdded": _stamp(1)}),
            *_claim_and_pod("a", "n1", "gpu-0"),
        ],
        start=START,
    )
    settle([DeviceTaintEviction(sim)])
    assert _gone_or_going(sim, "a")


@pytest.mark.parametrize(
    ("effect", "want"),
    [
        ("NoSchedule", ("False", "OtherEffect", "Eviction only happens for the NoExecute effect.")),
        (
            "None",
            (
                "False",
                "NoEffect",
                "3 published devices selected. 2 allocated devices selected. 2 pods would be evicted in 1 namespace if "
                "the effect was NoExecute. This information will not be updated again. Recreate the DeviceTaintRule "
                "to trigger an update.",
            ),
        ),
        ("NoExecute", ("False", "NotStarted", "")),
    ],
)
def test_the_rules_condition_for_each_effect(effect: str, want: tuple[str, str, str]) -> None:
    # The NoExecute rule selects pool n2, where nothing is allocated: nothing to evict, NotStarted.
    pool = "n2" if effect == "NoExecute" else "n1"
    sim, ctrl = _fleet(*_claim_and_pod("a", "n1", "gpu-0"), *_claim_and_pod("b", "n1", "gpu-1"))
    sim.store.create(RULES, _rule("r", effect=effect, device=None, pool=pool))
    settle([ctrl])
    assert _condition(sim, "r") == want
    assert not _gone_or_going(sim, "a") and not _gone_or_going(sim, "b")


def test_the_api_server_stamps_a_taints_time_added_and_moves_it_when_the_effect_changes() -> None:
    sim, _ = _fleet()
    made = sim.store.create(RULES, _rule("r", effect="None"))
    assert made["spec"]["taint"]["timeAdded"] == sim.clock.timestamp()
    sim.clock.step(120)
    made["spec"]["taint"]["effect"] = "NoExecute"
    changed = sim.store.update(RULES, made)
    assert changed["spec"]["taint"]["timeAdded"] == sim.clock.timestamp() != made["metadata"]["creationTimestamp"]
    sl = sim.store.create("resourceslices.resource.k8s.io", {**_slice("n3", {"key": "k", "effect": "NoSchedule"})})
    assert sl["spec"]["devices"][0]["taints"][0]["timeAdded"] == sim.clock.timestamp()


def test_the_demos_xid_rule_stays_pending_at_its_snapshot_and_evicts_the_notebook_when_its_toleration_ends() -> None:
    """The demo's a100-lab-xid-79 rule was added 30 minutes before the snapshot and the notebook tolerates it for
    2 h: a live demo shows the eviction pending (as kube-controller-manager writes it on the real control plane),
    and 90 minutes on, the notebook is evicted and the rule Completed."""
    from dragoman.sim import scenario as scenario_mod

    sim = Simulator.from_scenario(scenario_mod.load("demo"))
    ctrl = DeviceTaintEviction(sim)
    settle([ctrl])
    rule = "a100-lab-xid-79"
    assert _condition(sim, rule) == ("True", "PodsPendingEviction", "1 pod needs to be evicted in 1 namespace.")
    assert not _gone_or_going(sim, "notebook-mig", "dra-lab")
    sim.clock.step(89 * 60)
    settle([ctrl])
    assert not _gone_or_going(sim, "notebook-mig", "dra-lab")
    sim.clock.step(60)
    settle([ctrl])
    assert _gone_or_going(sim, "notebook-mig", "dra-lab")
    sim.clock.step(RULE_STATUS_PERIOD)
    settle([ctrl])
    assert _condition(sim, rule) == ("False", "Completed", "1 pod evicted since starting the controller.")


def test_beside_a_real_control_plane_the_demos_rules_are_made_now_and_nothing_is_evicted_at_start() -> None:
    """The differential's simulator runs on the wall's clock, like the real control plane whose loader leaves a
    rule's timeAdded for kube-apiserver to stamp: the same taint_added_now, so the Xid rule's 2-hour toleration
    starts at the load on both sides and the notebook stays (with the scenario's time it would be days overdue)."""
    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.controlplane.loader import _clean

    sc = scenario_mod.load("demo")
    (rule,) = [o for o in sc.objects if o["metadata"]["name"] == "a100-lab-xid-79"]
    assert "timeAdded" in rule["spec"]["taint"]
    assert "timeAdded" not in _clean(rule)["spec"]["taint"]
    assert "timeAdded" in rule["spec"]["taint"], "the scenario's object is not changed"
    sim = Simulator.from_scenario(sc, real_time=True)
    ctrl = DeviceTaintEviction(sim)
    settle([ctrl])
    made = sim.store.get(RULES, "", "a100-lab-xid-79")
    added = datetime.datetime.fromisoformat(made["spec"]["taint"]["timeAdded"].replace("Z", "+00:00"))
    assert abs((added - datetime.datetime.now(datetime.UTC)).total_seconds()) < 60
    assert not _gone_or_going(sim, "notebook-mig", "dra-lab")
    assert _condition(sim, "a100-lab-xid-79")[1] == "PodsPendingEviction"


def test_at_start_no_pod_is_looked_at_until_something_evicts() -> None:
    """The start's look at every bound pod with claims (each claim read) is skipped when no NoExecute rule or slice
    taint exists; a NoExecute rule appearing looks at them all, and a slice's own NoExecute taint at start does too."""

    def pods() -> list[dict]:
        return [o for i in range(5) for o in _claim_and_pod(f"p{i}", "n1", f"gpu-{i % 3}")]

    sim = Simulator([_slice("n1"), _slice("n2"), *pods(), _rule("soft", effect="NoSchedule")], start=START)
    ctrl = DeviceTaintEviction(sim)
    looked: list[tuple] = []
    reconcile = ctrl.reconcile
    ctrl.reconcile = lambda key: (looked.append(key), reconcile(key))  # type: ignore[method-assign]
    settle([ctrl])
    assert ("all",) in looked and [k for k in looked if k[0] == "pod"] == []

    sim.store.create(RULES, _rule("xid", device="gpu-2"))
    settle([ctrl])
    assert {k for k in looked if k[0] == "pod"} == {("pod", "default", f"p{i}") for i in range(5)}
    assert _gone_or_going(sim, "p2") and not _gone_or_going(sim, "p0")

    tainted = Simulator(
        [_slice("n1", {"key": "x", "effect": "NoExecute", "timeAdded": _stamp(1)}), *pods()], start=START
    )
    settle([DeviceTaintEviction(tainted)])
    assert _gone_or_going(tainted, "p0") and not _gone_or_going(tainted, "p1")
