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
