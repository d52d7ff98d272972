"""How a scenario is loaded into a real API server (sim/controlplane/loader.py), checked without one: what is left
to controllers, what is cleaned, the order, and owner references re-pointed to the new cluster's uids."""

from __future__ import annotations

from dragoman.sim import scenario as scenario_mod
from dragoman.sim.controlplane import loader


def _demo() -> list[dict]:
    return scenario_mod.load("demo").objects


def test_controller_made_objects_are_left_to_their_controllers() -> None:
    objects = _demo()
    infra, report = loader.plan(objects, "infrastructure")
    workloads, report2 = loader.plan(objects, "workloads")
    kinds = {o["kind"] for o in infra}
    assert "Node" in kinds and "DaemonSet" in kinds and not kinds & loader.WORKLOAD_KINDS
    # Every pod a controller owns, every ReplicaSet a Deployment owns, every bridge or template claim: theirs.
    assert report2.left_to_controllers["Pod"] >= 90 and report2.left_to_controllers["ReplicaSet"] == 16
    assert all(not loader._controller_owned(o) for o in workloads)
    assert {o["kind"] for o in workloads} <= loader.WORKLOAD_KINDS
    assert report.skipped.get("Event", 0) + report2.skipped.get("Event", 0) == sum(
        1 for o in objects if o["kind"] == "Event"
    )


def test_workloads_go_in_the_order_their_pods_were_made_and_claims_first() -> None:
    workloads, _ = loader.plan(_demo(), "workloads")
    names = [(o["kind"], o["metadata"]["name"]) for o in workloads]
    assert names[0][0] == "ResourceClaim"
    # The demo's story: the daily transcode got the T4s before the urgent one, which stays Pending.
    assert names.index(("Job", "transcode-daily")) < names.index(("Job", "transcode-urgent"))


def test_server_fields_are_dropped_and_pods_go_unbound() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "n", "uid": "u", "resourceVersion": "7", "creationTimestamp": "x"},
        "spec": {
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}},
            "template": {
                "metadata": {"labels": {"batch.kubernetes.io/controller-uid": "u", "job-name": "j", "app": "a"}},
                "spec": {},
            },
        },
        "status": {"succeeded": 1},
    }
    clean = loader._clean(job)
    assert "uid" not in clean["metadata"] and "resourceVersion" not in clean["metadata"] and "status" not in clean
    assert "selector" not in clean["spec"] and clean["spec"]["template"]["metadata"]["labels"] == {"app": "a"}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeName": "n1", "containers": []}}
    assert "nodeName" not in loader._clean(pod)["spec"]


def test_owner_references_follow_the_new_uids_and_missing_owners_are_dropped() -> None:
    owner = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "owner", "namespace": "default", "uid": "old-owner"},
    }
    owned = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "owned",
            "namespace": "default",
            "uid": "old-owned",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "old-owner"},
                {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "name": "cluster-policy", "uid": "not-here"},
            ],
        },
    }
    sent: list[tuple[str, str, dict]] = []

    def request(method: str, path: str, body=None, **_):
        if method == "POST":
            sent.append((method, path, body))
            return 201, {**body, "metadata": {**body["metadata"], "uid": "new-" + body["metadata"]["name"]}}
        return 200, {}

    report = loader.load(request, [owned, owner])
    created = {b["metadata"]["name"]: b for _, _, b in sent}
    assert created["owned"]["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "new-owner"}
    ]
    assert report.created["ConfigMap"] == 2
    assert any("ClusterPolicy cluster-policy" in d for d in report.dropped_owner_refs)


def test_an_admin_access_template_is_made_as_it_was_while_the_namespace_had_the_label() -> None:
    """kube-apiserver checks the namespace's admin-access label only when a claim or template is created: a scenario's
    template in a namespace without it was made while the namespace had it. The loader makes it so again, label on for
    the create and off after; a refusal for anything else stays a refusal."""
    (template,) = [o for o in _demo() if o["kind"] == "ResourceClaimTemplate" and o["metadata"]["name"] == "dcgm-admin"]
    labelled: set[str] = set()
    calls: list[tuple[str, str]] = []

    def request(method: str, path: str, body=None, **_):
        calls.append((method, path))
        if method == "PATCH":
            ns = path.rsplit("/", 1)[1]
            if body["metadata"]["labels"][loader.ADMIN_ACCESS_LABEL] == "true":
                labelled.add(ns)
            else:
                labelled.discard(ns)
            return 200, {}
        if body["metadata"]["namespace"] not in labelled:
            return 422, {"message": f"... is invalid: ...adminAccess: Forbidden: {loader.ADMIN_ACCESS_REFUSED} on ..."}
        return 201, {**body, "metadata": {**body["metadata"], "uid": "new"}}

    report = loader.load(request, [template])
    assert report.created == {"ResourceClaimTemplate": 1} and not report.refused
    ns = "/api/v1/namespaces/dra-lab"
    post = "/apis/resource.k8s.io/v1/namespaces/dra-lab/resourceclaimtemplates"
    assert calls == [("POST", post), ("PATCH", ns), ("POST", post), ("PATCH", ns)]
    assert not labelled  # the label is off again: the claims the resourceclaim controller makes are refused

    def refuse(method: str, path: str, body=None, **_):
        return 422, {"message": "spec.devices.requests[0].name: Required value"}

    assert loader.load(refuse, [template]).refused


def test_a_device_taint_rule_is_stamped_when_it_is_made() -> None:
    """A DeviceTaintRule's timeAdded is left to the API server (now): tolerationSeconds count from there, so an
    eviction the scenario has pending is pending on the rebuilt cluster too, not overdue by the scenario's clock."""
    (rule,) = [o for o in _demo() if o["kind"] == "DeviceTaintRule" and o["spec"]["taint"]["effect"] == "NoExecute"]
    assert rule["spec"]["taint"]["timeAdded"]
    clean = loader._clean(rule)
    assert "timeAdded" not in clean["spec"]["taint"] and clean["spec"]["taint"]["key"] == "gpu.nvidia.com/xid"
    assert rule["spec"]["taint"]["timeAdded"]  # the scenario's object is not changed


def _pod(name: str, *, claims: list[dict] | None = None, status: dict | None = None, node: str = "") -> dict:
    return {
        "metadata": {"name": name, "namespace": "dra-lab"},
        "spec": {"nodeName": node, "resourceClaims": claims or []},
        "status": status or {},
    }


def test_a_pod_the_scheduler_decided_or_will_never_try_is_not_waited_for() -> None:
    """The load waits, workload by workload, until the scheduler has decided each pod. A pod it will not try (its
    claim or template absent) or one it chose a node for and waits to bind (binding conditions) is decided: each
    of the demo's three such pods made every later dra-lab workload wait 20 s on the real control plane."""
    claims, templates = {"a100-claim"}, {"gpu-template"}
    unschedulable = {"conditions": [{"type": "PodScheduled", "status": "False"}]}
    assert loader._decided(_pod("bound", node="n1"), claims, templates)
    assert loader._decided(_pod("unschedulable", status=unschedulable), claims, templates)
    assert loader._decided(_pod("allreduce", status={"nominatedNodeName": "n1"}), claims, templates)
    assert loader._decided(_pod("eval-orphan", claims=[{"name": "g", "resourceClaimName": "gone"}]), claims, templates)
    assert loader._decided(
        _pod("template-gone", claims=[{"name": "g", "resourceClaimTemplateName": "x"}]), claims, templates
    )
    # Still coming: its claim and template exist, the scheduler has not answered yet.
    waiting = [
        {"name": "g", "resourceClaimName": "a100-claim"},
        {"name": "h", "resourceClaimTemplateName": "gpu-template"},
    ]
    assert not loader._decided(_pod("queued", claims=waiting), claims, templates)
    # The resourceclaim controller was refused its claim (dcgm-lab: admin access, the namespace unlabelled).
    dcgm = _pod("dcgm-lab", claims=[{"name": "g", "resourceClaimTemplateName": "gpu-template"}])
    assert not loader._decided(dcgm, claims, templates)
    assert loader._decided(dcgm, claims, templates, {"dcgm-lab"})
    assert not loader._decided(_pod("plain"), claims, templates)


def test_a_pod_given_up_on_once_is_not_waited_for_again() -> None:
    """A pod still undecided at the timeout joins `stuck`: the next wait does not sit out the timeout again."""
    pods = {"items": [_pod("stuck-one", claims=[{"name": "g", "resourceClaimName": "a100-claim"}])]}
    lists = {"pods": pods, "resourceclaims": {"items": [{"metadata": {"name": "a100-claim"}}]}}

    def request(method: str, path: str, body=None, **kw):
        return 200, lists.get(path.split("?")[0].rsplit("/", 1)[1], {"items": []})

    import time

    stuck: set[str] = set()
    t0 = time.monotonic()
    loader._pods_decided(request, "dra-lab", 1, 0.3, stuck)
    assert stuck == {"stuck-one"} and time.monotonic() - t0 >= 0.3
    t1 = time.monotonic()
    loader._pods_decided(request, "dra-lab", 1, 5.0, stuck)
    assert time.monotonic() - t1 < 1.0  # returns at once: nothing else to wait for
