"""The scheduler differential's generated DRA scenarios (sim/controlplane/differential_dra.py) through the simulated
scheduler alone: deterministic, every pod decided (never a scheduler error on valid input), and what the allocator
gives respects what it must (an untolerated NoSchedule taint, a counter set's total, a shared device's capacity)."""

from __future__ import annotations

from fractions import Fraction

from dragoman.fleet.cel.device import parse_quantity
from dragoman.sim.controllers.scheduling import ClusterView, apply_decision, schedule_one
from dragoman.sim.controlplane import differential_dra as dd
from scheduler_fixtures import node

NOW = "2026-12-05T10:00:00Z"


def _run(sc: dict) -> list:
    view = ClusterView(
        nodes=[node(dd.NODE, labels={"kubernetes.io/hostname": dd.NODE})],
        deviceclasses=[sc["class"]],
        resourceslices=sc["slices"],
        devicetaintrules=sc["rules"],
    )
    out = []
    for claim in sc["claims"]:
        view.upsert_claim(claim)
        pod = dd._pod(claim)
        pod["metadata"]["uid"] = f"uid-{claim['metadata']['name']}"
        view.upsert_pod(pod)
        dec = schedule_one(pod, view, NOW)
        apply_decision(view, dec)
        alloc = next(
            (
                c["status"]["allocation"]
                for c in dec.claim_updates
                if c["metadata"]["name"] == claim["metadata"]["name"]
            ),
            None,
        )
        out.append((claim, dec, alloc))
    return out


def test_scenarios_are_deterministic() -> None:
    assert dd.scenario(3, 28) == dd.scenario(3, 28)
    assert dd.scenario(3, 28) != dd.scenario(3, 29)


def test_every_generated_pod_is_decided_and_allocations_respect_the_rules() -> None:
    kinds: dict[str, set[str]] = {}
    for i in range(120):
        sc = dd.scenario(i, 28)
        devices = {d["name"]: d for s in sc["slices"] for d in s["spec"].get("devices") or []}
        ruled = {r["spec"]["deviceSelector"]["device"] for r in sc["rules"]}
        counters_total = next(
            (
                parse_quantity(s["spec"]["sharedCounters"][0]["counters"]["memory"]["value"]).value
                for s in sc["slices"]
                if s["spec"].get("sharedCounters")
            ),
            None,
        )
        used_counters = Fraction(0)
        shared_used: dict[str, Fraction] = {}
        for _claim, dec, alloc in _run(sc):
            # Upstream errors (not Unschedulable) on one case: an All request whose devices break a constraint.
            upstream_error = "because a claim constraint would not be satisfied" in (dec.message or "")
            assert dec.outcome in ("scheduled", "unschedulable") or upstream_error, (i, dec.outcome, dec.message)
            kinds.setdefault(sc["kind"], set()).add(dec.outcome)
            if alloc is None:
                continue
            for r in alloc["devices"]["results"]:
                dev = devices[r["device"]]
                tolerated = bool(r.get("tolerations"))
                tainted = r["device"] in ruled or any(t["effect"] == "NoSchedule" for t in dev.get("taints") or [])
                assert not tainted or tolerated, (i, r)
                if dev.get("nodeName"):
                    assert dev["nodeName"] == dd.NODE, (i, r)
                for cc in dev.get("consumesCounters") or []:
                    used_counters += parse_quantity(cc["counters"]["memory"]["value"]).value
                for name, q in (r.get("consumedCapacity") or {}).items():
                    shared_used[r["device"]] = shared_used.get(r["device"], Fraction(0)) + parse_quantity(q).value
                    assert name == "mem"
        if counters_total is not None:
            assert used_counters <= counters_total, i
        for dev_name, used in shared_used.items():
            assert used <= parse_quantity(devices[dev_name]["capacity"]["mem"]["value"]).value, (i, dev_name)
    # Both outcomes for the features that decide them.
    for kind in ("taint", "rule", "counters", "shared", "plain"):
        assert kinds.get(kind) == {"scheduled", "unschedulable"}, (kind, kinds.get(kind))


class _FlakySide:
    """A side whose scheduler abandons the first binding of `flaky` (nominates it, then leaves it Unschedulable, as
    the real one does after a failed PreBind or Bind) and binds every pod after: enough of Side for run_scenario."""

    name = "real"

    def __init__(self, flaky: str) -> None:
        self.flaky = flaky
        self.objects: dict[str, dict] = {}
        self.notes: list[str] = []
        self.deletes: list[str] = []

    def call(self, method: str, path: str, body: dict | None = None) -> object:
        import types

        path = path.split("?", 1)[0]
        if method == "POST":
            key = f"{path}/{body['metadata']['name']}"
            if key in self.objects:
                return types.SimpleNamespace(code=409, body={})
            obj = {**body}
            if path.endswith("/pods"):
                if body["metadata"]["name"] == self.flaky and not self.deletes:
                    obj["status"] = {
                        "nominatedNodeName": dd.NODE,
                        "conditions": [
                            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1"}
                        ],
                    }
                else:
                    obj["spec"] = {**body["spec"], "nodeName": dd.NODE}
            self.objects[key] = obj
            return types.SimpleNamespace(code=201, body=obj)
        if method == "DELETE":
            self.deletes.append(path)
            self.objects.pop(path, None)
            return types.SimpleNamespace(code=200, body={})
        raise AssertionError(method)

    def get(self, path: str) -> dict | None:
        if "/events" in path:
            msg = "running PreBind plugin DynamicResources: etcdserver: request timed out"
            return {"items": [{"message": msg}]} if self.flaky in path else {"items": []}
        return self.objects.get(path)

    def wait(self, check, timeout: float, interval: float = 0.5):
        return check()

    def note(self, case: str, text: str) -> None:
        self.notes.append(f"{case} on {self.name}: {text}")


def test_a_binding_the_scheduler_abandoned_runs_the_scenario_again_and_says_so() -> None:
    sc = dd.scenario(198, 28)
    first = sc["claims"][0]["metadata"]["name"]
    side = _FlakySide(first)
    seen = dd.run_scenario(side, sc)  # type: ignore[arg-type]
    # The second run's outcome stands: bound, every object created anew (not 409 against the first run's leftovers).
    assert [p["node"] for p in seen["pods"]] == [dd.NODE] * len(sc["claims"])
    assert set(seen["created"]) == {201}
    # Its claims went too, before the run again under the same names.
    assert f"/apis/resource.k8s.io/v1/namespaces/{dd.NS}/resourceclaims/{first}" in side.deletes
    assert len(side.notes) == 1
    assert "s198 ran again" in side.notes[0] and first in side.notes[0]
    assert "etcdserver: request timed out" in side.notes[0]


def test_an_unschedulable_pod_never_nominated_is_a_decision_not_run_again() -> None:
    outcome = {"node": None, "nominated": None, "scheduled": ["False", "Unschedulable", "0/1"], "devices": []}
    assert not dd._abandoned(outcome)
    assert dd._abandoned(dict(outcome, nominated=dd.NODE))
    waiting = dict(outcome, nominated=dd.NODE, devices=[{"bindingConditions": ["FabricAttached"]}])
    assert not dd._abandoned(waiting)
