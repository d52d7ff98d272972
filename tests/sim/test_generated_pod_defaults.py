"""The scenario generators' pods and pod templates are as the API server stores them: the simulator's own defaulting
(sim/api/validation) and priority admission change nothing in them. The generators once wrote these defaults by hand
in four places, and the scale generator's GPU pods lacked half of them (securityContext, enableServiceLinks, priority,
the containers' terminationMessagePath); now sim/scenarios/podstatus.stored_spec applies the simulator's defaulting."""

from __future__ import annotations

import copy

import pytest
from dragoman.sim.api import admission
from dragoman.sim.api.validation import default_object
from dragoman.sim.scenarios import DEMO_PATH, load_scenario
from dragoman.sim.scenarios.scale import generate_envelope, generate_scale

TEMPLATED = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job")


def _scenarios() -> dict[str, list[dict]]:
    return {
        "demo": load_scenario(DEMO_PATH),
        "scale": generate_scale(nodes=100, pods=300, seed=1, pending=20),
        "envelope": generate_envelope(nodes=60, gpu_nodes=30, pods=400, gpu_pods=120, job_pods=40),
    }


@pytest.mark.parametrize(("name", "objects"), _scenarios().items(), ids=lambda v: v if isinstance(v, str) else "")
def test_generated_pods_and_templates_need_no_defaulting(name: str, objects: list[dict]) -> None:
    pods = [o for o in objects if o["kind"] == "Pod"]
    templates = [o for o in objects if o["kind"] in TEMPLATED and "template" in (o.get("spec") or {})]
    assert pods and (templates or name != "demo")
    for pod in pods:
        again = copy.deepcopy(pod)
        default_object("pods", again)
        if not again["spec"].get("priorityClassName"):
            admission.admit_priority(again["spec"])
        assert again["spec"] == pod["spec"], (name, pod["metadata"]["name"])
    for obj in templates:
        again = copy.deepcopy(obj)
        default_object(obj["kind"].lower() + "s", again)
        assert again["spec"]["template"]["spec"] == obj["spec"]["template"]["spec"], (name, obj["metadata"]["name"])


def test_the_envelopes_node_daemonset_pods_have_unique_names_even_when_a_drawn_suffix_repeats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A node DaemonSet's 5,000 pods (kube-proxy, fluent-bit, node-exporter) draw from 27^5 suffixes: about one pair
    # per DaemonSet shared a name, and kube-apiserver refused the second (409; three pods of the envelope). Two letters
    # (32 suffixes) for 24 pods make a repeat all but certain; a repeated draw must be drawn again, not kept.
    from dragoman.sim.scenarios import scale

    monkeypatch.setattr(scale, "_ALPHABET", "ab")
    objects = generate_envelope(nodes=24, gpu_nodes=4, pods=110, gpu_pods=8, job_pods=4, namespaces=2)
    owners = {"kube-proxy", "fluent-bit", "node-exporter"}
    names = [
        (o["metadata"]["namespace"], o["metadata"]["name"])
        for o in objects
        if o["kind"] == "Pod" and (o["metadata"].get("ownerReferences") or [{}])[0].get("name") in owners
    ]
    assert len(names) == 3 * 24
    assert len(names) == len(set(names))


def test_the_envelopes_replicaset_pods_have_unique_names_even_when_a_drawn_suffix_repeats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The envelope's thousand ReplicaSets of 20-140 pods each drew one repeated name in all (kube-apiserver refused
    # svc-0133-flj7c7ct2j-4xtcl, 409, on 2026-12-06). Three letters (243 suffixes) for a ReplicaSet of 89 pods make
    # repeats all but certain.
    from dragoman.sim.scenarios import scale

    monkeypatch.setattr(scale, "_ALPHABET", "abc")
    objects = generate_envelope(nodes=24, gpu_nodes=4, pods=200, gpu_pods=8, job_pods=4, namespaces=2)
    names = [
        (o["metadata"]["namespace"], o["metadata"]["name"])
        for o in objects
        if o["kind"] == "Pod" and (o["metadata"].get("ownerReferences") or [{}])[0].get("kind") == "ReplicaSet"
    ]
    assert len(names) > 20
    assert len(names) == len(set(names))
