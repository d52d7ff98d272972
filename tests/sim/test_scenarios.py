"""The demo and scale scenarios: every finding marked, schema-valid, lossless through the 1.37 models, and
consistent."""

from __future__ import annotations

import datetime as dt
import functools
import json
import pathlib
import re

import kubernetes.client as kc
import kubernetes_validate
import pytest
import yaml
from dragoman.sim.controllers.base import pod_faults
from dragoman.sim.scenarios import (
    DEMO_PATH,
    demo_build,
    demo_marks,
    load_documents,
    load_scenario,
    parse_scenario_text,
    scenario_users,
)

FINDINGS_MD = pathlib.Path("/work/shared/reference/findings.md")
REPO_FINDINGS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "findings.md"


def _finding_ids() -> set[str]:
    for path in (FINDINGS_MD, REPO_FINDINGS):
        if path.exists():
            return set(re.findall(r"^\| `([a-z-]+)` \|", path.read_text(), re.M))
    # The catalogue as of this writing, when neither copy is around.
    return {
        "both-stacks",
        "plugin-flapping",
        "dp-targets-dra-pool",
        "driver-targets-dp-pool",
        "no-slices",
        "kubelet-too-old",
        "kubelet-skew",
        "sharing-capacity-change",
        "migration-optional",
        "duplicate-mapping",
        "class-too-broad",
        "selector-no-match",
        "selector-runtime-error",
        "stale-attribute",
        "claim-equivalent-to-limits",
        "double-request",
        "nodeselector-steering",
        "allocatable-readers",
        "quota-claims-now-count",
        "quota-blocks-claim",
        "pending-insufficient",
        "pending-unmapped",
        "pending-selector",
        "pending-cordoned",
        "failed-admission",
        "prepare-failed",
        "running-without-gpu",
        "stale-bridge-claim",
    }


@functools.cache
def _documents() -> tuple[dict, ...]:
    return tuple(load_documents("demo"))


@functools.cache
def _demo() -> tuple[dict, ...]:
    return tuple(o for o in _documents() if o["apiVersion"] != "sim.dragoman.io/v1")


@pytest.fixture(scope="module")
def demo() -> list[dict]:
    return list(_demo())


def _index(objs: list[dict]) -> dict[tuple[str, str, str], dict]:
    return {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in objs}


def _of(objs: list[dict], kind: str) -> list[dict]:
    return [o for o in objs if o["kind"] == kind]


def _daemon_pod(objs: list[dict], daemonset: str, node: str) -> dict:
    (pod,) = [
        p
        for p in _of(objs, "Pod")
        if p["spec"].get("nodeName") == node
        and any(r["name"] == daemonset for r in p["metadata"].get("ownerReferences", []))
    ]
    return pod


# ---------------------------------------------------------------- marks


def test_every_finding_id_is_marked_and_marks_name_only_real_ids(demo: list[dict]) -> None:
    from dragoman.fleet.findings import CATALOGUE

    marks = demo_marks(demo)
    # The code's catalogue is the one list; the shared reference may lag it (v1.37's device findings) but never
    # names an id the code lacks.
    ids = set(CATALOGUE)
    assert _finding_ids() <= ids
    assert len(ids) >= 40
    assert ids - set(marks) == set(), "finding ids without a case in the demo"
    assert set(marks) - ids == set(), "marks naming ids that are not in the catalogue"


def test_each_story_plants_exactly_the_findings_it_is_keyed_by() -> None:
    """demo_build.STORIES names, per story, the finding ids it plants: the marks on what each story adds (or marks
    on what it added) are exactly those, and together the stories plant every finding of the demo."""
    fleet = demo_build.Fleet()
    planted: dict[str, set[str]] = {}
    for story in demo_build.STORIES:
        before = {id(o): json.dumps(o.get("metadata", {}).get("annotations"), sort_keys=True) for o in fleet.d.objects}
        story.build(fleet)
        touched = [
            o
            for o in fleet.d.objects
            if before.get(id(o)) != json.dumps(o.get("metadata", {}).get("annotations"), sort_keys=True)
        ]
        marks = set(demo_marks(touched))
        assert marks == set(story.plants), story.name
        for fid in marks:
            planted.setdefault(fid, set()).add(story.name)
    assert set(planted) == set(demo_marks(fleet.d.objects))
    assert fleet.d.objects == demo_build.build()


def test_single_case_findings_are_not_duplicated_by_accident(demo: list[dict]) -> None:
    classes = _of(demo, "DeviceClass")
    by_name: dict[str, list[str]] = {}
    for c in classes:
        ern = c["spec"].get("extendedResourceName")
        if ern:
            by_name.setdefault(ern, []).append(c["metadata"]["name"])
    duplicated = {k: sorted(v) for k, v in by_name.items() if len(v) > 1}
    assert duplicated == {"nvidia.com/gpu": ["gpu.nvidia.com", "nvidia-gpu"]}
    assert sorted(n for _, _, n in demo_marks(demo)["duplicate-mapping"]) == ["gpu.nvidia.com", "nvidia-gpu"]
    # The chart's class is the newest of the two, so it serves nvidia.com/gpu; the broad one waits behind it.
    ts = {c["metadata"]["name"]: c["metadata"]["creationTimestamp"] for c in classes}
    assert ts["gpu.nvidia.com"] > ts["nvidia-gpu"]
    broad = [
        c["metadata"]["name"]
        for c in classes
        if c["spec"].get("extendedResourceName") == "nvidia.com/gpu"
        and not any("type" in s["cel"]["expression"] for s in c["spec"]["selectors"])
    ]
    assert broad == ["nvidia-gpu"]
    steering = [
        p["metadata"]["name"]
        for p in _of(demo, "Pod")
        if "nvidia.com/gpu.product" in (p["spec"].get("nodeSelector") or {})
    ]
    assert sorted(steering) == sorted(n for _, _, n in demo_marks(demo)["nodeselector-steering"])


def test_marked_pods_show_their_case_in_state(demo: list[dict]) -> None:
    idx = _index(demo)
    marks = demo_marks(demo)

    def pod(fid: str) -> dict:
        (key,) = [k for k in marks[fid] if k[0] == "Pod"]
        return idx[key]

    for fid in (
        "pending-insufficient",
        "pending-unmapped",
        "pending-selector",
        "pending-cordoned",
        "quota-blocks-claim",
        "stale-bridge-claim",
    ):
        p = pod(fid)
        assert p["status"]["phase"] == "Pending" and "nodeName" not in p["spec"], fid
        assert p["status"]["conditions"][0]["type"] == "PodScheduled", fid
    assert pod("failed-admission")["status"]["reason"] == "UnexpectedAdmissionError"
    # running-without-gpu: placed through the bridge on a kubelet that predates it (the real kubelet v1.35.4 admits
    # such a pod and runs it without the GPU, its claim reserved and never prepared).
    rwg = pod("running-without-gpu")
    assert rwg["status"]["phase"] == "Running"
    claim = idx[
        (
            "ResourceClaim",
            rwg["metadata"]["namespace"],
            rwg["status"]["extendedResourceClaimStatus"]["resourceClaimName"],
        )
    ]
    assert claim["status"]["reservedFor"][0]["name"] == rwg["metadata"]["name"] and "devices" not in claim["status"]
    node = idx[("Node", "", rwg["spec"]["nodeName"])]
    assert node["status"]["nodeInfo"]["kubeletVersion"].startswith("v1.35.")
    assert "nvidia.com/gpu" not in node["status"]["allocatable"]
    pf = pod("prepare-failed")
    assert pf["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating"
    plugin = _daemon_pod(demo, "dra-driver-nvidia-gpu-kubelet-plugin", pf["spec"]["nodeName"])
    # Not ready by a fault of its node (whichever driver pod lands there), not of this pod.
    assert pod_faults(plugin, idx[("Node", "", pf["spec"]["nodeName"])])["sim.dragoman.io/not-ready"] == "true"
    assert "sim.dragoman.io/not-ready" not in plugin["metadata"].get("annotations", {})
    assert plugin["status"]["containerStatuses"][0]["ready"] is False
    dr = pod("double-request")
    c = dr["spec"]["containers"][0]
    assert c["resources"]["limits"]["nvidia.com/gpu"] == "1" and c["resources"]["claims"] == [{"name": "gpu"}]


def test_marked_nodes_show_their_case_in_state(demo: list[dict]) -> None:
    idx = _index(demo)
    marks = demo_marks(demo)
    slices_on = {s["spec"].get("nodeName") for s in _of(demo, "ResourceSlice") if s["spec"].get("devices")}
    for _, _, name in marks["both-stacks"]:
        node = idx[("Node", "", name)]
        assert name in slices_on
        assert "nvidia.com/gpu" in node["status"]["capacity"]
    for _, _, name in marks["no-slices"]:
        assert name not in slices_on
        plugin = _daemon_pod(demo, "dra-driver-nvidia-gpu-kubelet-plugin", name)
        assert plugin["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        assert "sim.dragoman.io/crash-loop-seconds" not in plugin["metadata"].get("annotations", {})
    for _, _, name in marks["plugin-flapping"]:
        node = idx[("Node", "", name)]
        assert (
            node["status"]["allocatable"]["nvidia.com/gpu"] == "0"
            and node["status"]["capacity"]["nvidia.com/gpu"] == "8"
        )
        dp = _daemon_pod(demo, "nvidia-device-plugin-daemonset", name)
        assert dp["status"]["containerStatuses"][0]["restartCount"] > 5
        # Flapping by a fault of its node, which a fresh device-plugin pod there plays too.
        assert int(pod_faults(dp, node)["sim.dragoman.io/crash-loop-seconds"]) > 0
        assert "sim.dragoman.io/crash-loop-seconds" not in dp["metadata"].get("annotations", {})
    for _, _, name in marks["sharing-capacity-change"]:
        labels = idx[("Node", "", name)]["metadata"]["labels"]
        assert int(labels["nvidia.com/gpu.replicas"]) > 1
        assert idx[("Node", "", name)]["status"]["allocatable"]["nvidia.com/gpu"] == "16"


# ---------------------------------------------------------------- schemas and models


@functools.cache
def _validator(kind: str, api_version: str):
    """kubernetes-validate's strict 1.37 check, with its schema loaded once per kind instead of once per object."""
    import jsonschema
    from kubernetes_validate import utils
    from referencing import Registry, Resource

    api = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    folder = "kubernetes-json-schema/v1.37.0-local-strict"
    schema = utils.schema_contents(f"{folder}/{kind.lower()}-{api}.json", "1.37.0")
    definitions = utils.schema_contents(f"{folder}/_definitions.json", "1.37.0")
    registry = Resource.from_contents(definitions) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


# Custom resources (the Prometheus Operator's PrometheusRule) have no schema or model in Kubernetes 1.37 itself.
CRD_GROUPS = ("monitoring.coreos.com/",)


def _builtin(demo: list[dict]) -> list[dict]:
    return [o for o in demo if not o["apiVersion"].startswith(CRD_GROUPS)]


def test_every_demo_object_validates_against_the_137_schemas(demo: list[dict]) -> None:
    errors = []
    for o in _builtin(demo):
        for e in _validator(o["kind"], o["apiVersion"]).iter_errors(o):
            errors.append(f"{o['kind']}/{o['metadata']['name']}: {e.message}")
    assert errors == []
    # The cached validators are kubernetes-validate's own check: they catch what it catches.
    bad = json.loads(json.dumps(_of(demo, "ResourceSlice")[0]))
    bad["spec"]["devices"][0]["bogus"] = 1
    assert list(_validator("ResourceSlice", "resource.k8s.io/v1").iter_errors(bad))
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, "1.37.0", strict=True)
    kubernetes_validate.validate(_of(demo, "Pod")[0], "1.37.0", strict=True)


def test_every_demo_status_is_one_the_api_server_accepts_in_a_status_write(demo: list[dict]) -> None:
    """A scenario is loaded as it is, but every later status write (the kubelet's, an eviction's DisruptionTarget
    condition) is validated whole: a status the API server would refuse makes each of those writes fail. The demo's
    shared-GPU pods named their allocatedResourcesStatus `claim:<claim object>/gpu` (the kubelet writes the
    container's claim entry, `claim:gpu`), so evicting them failed and a100-lab's drain stopped at 7 of 12 writes."""
    from dragoman.fleet.k8s.registry import BY_API_KIND
    from dragoman.sim.api.validation import validate_object

    refused = []
    for o in _builtin(demo):
        rt = BY_API_KIND.get((o["apiVersion"], o["kind"]))
        if rt is None or "status" not in rt.subresources or not o.get("status"):
            continue
        before = {**o, "status": {}}  # the same object, its status written anew
        errs = validate_object(rt.plural, o, before, rt.api_version)
        refused += [f"{o['kind']} {o['metadata'].get('namespace', '')}/{o['metadata']['name']}: {e}" for e in errs]
    assert refused == []


def _model(kind: str):
    for name in (f"V1{kind}", f"ResourceV1{kind}", f"CoreV1{kind}"):
        if hasattr(kc, name):
            return getattr(kc, name)
    raise AssertionError(f"no kubernetes model for {kind}")


def _normal(x):
    if isinstance(x, dict):
        return {k: _normal(v) for k, v in x.items() if v is not None}
    if isinstance(x, list):
        return [_normal(v) for v in x]
    if isinstance(x, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", x):
        return dt.datetime.fromisoformat(x.replace("Z", "+00:00")).isoformat()
    return x


def test_every_demo_object_round_trips_through_the_kubernetes_37_models(demo: list[dict]) -> None:
    api = kc.ApiClient()
    lost = []
    for o in _builtin(demo):
        back = api.sanitize_for_serialization(_model(o["kind"]).from_dict(o))
        if _normal(back) != _normal(o):
            lost.append(f"{o['kind']}/{o['metadata']['name']}")
    assert lost == []
    # The fields the bridge writes are among those that survive.
    pod = next(p for p in _of(demo, "Pod") if p["status"].get("extendedResourceClaimStatus"))
    model = kc.V1Pod.from_dict(pod)
    assert model.status.extended_resource_claim_status.request_mappings[0].request_name.startswith("container-0-")


def test_pinned_file_is_what_the_builder_makes() -> None:
    built = json.loads(json.dumps(demo_build.build()))
    assert built == list(_demo()), "demo.yaml is stale: run python -m dragoman.sim.scenarios.demo_build"


# ---------------------------------------------------------------- consistency


def _match_expr(labels: dict, e: dict) -> bool:
    v = labels.get(e["key"])
    op = e["operator"]
    if op == "In":
        return v in e["values"]
    if op == "NotIn":
        return v not in e["values"]
    if op == "Exists":
        return e["key"] in labels
    if op == "DoesNotExist":
        return e["key"] not in labels
    raise AssertionError(op)


def _selects(tpl_spec: dict, node: dict) -> bool:
    labels = node["metadata"].get("labels", {})
    if any(labels.get(k) != v for k, v in (tpl_spec.get("nodeSelector") or {}).items()):
        return False
    req = ((tpl_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if req:
        return any(all(_match_expr(labels, e) for e in t.get("matchExpressions", [])) for t in req["nodeSelectorTerms"])
    return True


def test_uids_unique_owners_exist_namespaces_exist(demo: list[dict]) -> None:
    uids = [o["metadata"]["uid"] for o in demo]
    assert len(uids) == len(set(uids))
    by_uid = {o["metadata"]["uid"]: o for o in demo}
    namespaces = {o["metadata"]["name"] for o in _of(demo, "Namespace")}
    assert {
        "kube-system",
        "gpu-operator",
        "nvidia-device-plugin",
        "dra-driver-nvidia-gpu",
        "ml-training",
        "ml-inference",
        "research",
    } <= namespaces
    for o in demo:
        ns = o["metadata"].get("namespace")
        if ns:
            assert ns in namespaces, o["metadata"]["name"]
        for ref in o["metadata"].get("ownerReferences", []):
            if ref["kind"] == "ClusterPolicy":  # the GPU Operator's CR: its CRD is not part of the demo
                continue
            owner = by_uid.get(ref["uid"])
            assert owner is not None and owner["metadata"]["name"] == ref["name"] and owner["kind"] == ref["kind"]
        assert o["metadata"]["creationTimestamp"].startswith("2026-")


def test_pods_sit_on_existing_nodes_and_match_their_controllers(demo: list[dict]) -> None:
    idx = _index(demo)
    nodes = {n["metadata"]["name"]: n for n in _of(demo, "Node")}
    by_uid = {o["metadata"]["uid"]: o for o in demo}
    pods = _of(demo, "Pod")
    for p in pods:
        if "nodeName" in p["spec"]:
            assert p["spec"]["nodeName"] in nodes
        for ref in p["metadata"].get("ownerReferences", []):
            owner = by_uid[ref["uid"]]
            sel = owner["spec"]["selector"]["matchLabels"]
            assert all(p["metadata"]["labels"].get(k) == v for k, v in sel.items()), p["metadata"]["name"]
    for ds in _of(demo, "DaemonSet"):
        mine = [
            p for p in pods if any(r["uid"] == ds["metadata"]["uid"] for r in p["metadata"].get("ownerReferences", []))
        ]
        eligible = sorted(n for n, node in nodes.items() if _selects(ds["spec"]["template"]["spec"], node))
        assert sorted(p["spec"]["nodeName"] for p in mine) == eligible, ds["metadata"]["name"]
        assert ds["status"]["desiredNumberScheduled"] == len(eligible)
    for rs in _of(demo, "ReplicaSet"):
        mine = [
            p for p in pods if any(r["uid"] == rs["metadata"]["uid"] for r in p["metadata"].get("ownerReferences", []))
        ]
        assert len(mine) == rs["spec"]["replicas"]
    for sts in _of(demo, "StatefulSet"):
        assert all(
            ("Pod", sts["metadata"]["namespace"], f"{sts['metadata']['name']}-{i}") in idx
            for i in range(sts["spec"]["replicas"])
        )


def _served_by_dra(node: dict, slices_on: set[str]) -> bool:
    return node["metadata"]["name"] in slices_on and int(node["status"]["allocatable"].get("nvidia.com/gpu", "0")) == 0


def test_claims_reservations_and_allocations_are_consistent(demo: list[dict]) -> None:
    idx = _index(demo)
    pods_by_uid = {p["metadata"]["uid"]: p for p in _of(demo, "Pod")}
    devices = {
        (s["spec"]["pool"]["name"], d["name"]) for s in _of(demo, "ResourceSlice") for d in s["spec"].get("devices", ())
    }
    allocated: list[tuple[str, str]] = []
    for c in _of(demo, "ResourceClaim"):
        ns = c["metadata"]["namespace"]
        for r in c.get("status", {}).get("reservedFor", []):
            pod = pods_by_uid[r["uid"]]
            assert pod["metadata"]["name"] == r["name"] and pod["metadata"]["namespace"] == ns
        alloc = c.get("status", {}).get("allocation")
        if alloc:
            node = alloc["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"][0]
            for res in alloc["devices"]["results"]:
                # The NVIDIA driver's pools are per node; the lab's fabric pool is a network pool of its nodes.
                assert res["pool"] == node or res["driver"] != "gpu.nvidia.com"
                assert (res["pool"], res["device"]) in devices, res
                # Shares of one device (consumable capacity) are each its own allocation.
                allocated.append((res["pool"], res["device"], res.get("shareID")))
            for r in c["status"].get("reservedFor", []):
                p = pods_by_uid[r["uid"]]
                # A pod waiting for its devices' binding conditions is nominated to the node, not yet bound.
                assert p["spec"].get("nodeName", p["status"].get("nominatedNodeName")) == node
        if c["metadata"].get("annotations", {}).get("resource.kubernetes.io/extended-resource-claim") == "true":
            assert c["metadata"]["generateName"].endswith("-extended-resources-")
            (owner,) = c["metadata"]["ownerReferences"]
            assert owner["kind"] == "Pod" and owner["controller"] is True
            assert c["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
            for req in c["spec"]["devices"]["requests"]:
                assert re.fullmatch(r"container-\d+-request-\d+", req["name"])
    assert len(allocated) == len(set(allocated)), "a device is allocated twice"
    slices_on = {s["spec"].get("nodeName") for s in _of(demo, "ResourceSlice") if s["spec"].get("devices")}
    for p in _of(demo, "Pod"):
        st = p["status"].get("extendedResourceClaimStatus")
        if st:
            claim = idx[("ResourceClaim", p["metadata"]["namespace"], st["resourceClaimName"])]
            assert claim["metadata"]["ownerReferences"][0]["uid"] == p["metadata"]["uid"]
            names = {r["name"] for r in claim["spec"]["devices"]["requests"]}
            for m in st["requestMappings"]:
                assert m["requestName"] in names
                c = next(c for c in p["spec"]["containers"] if c["name"] == m["containerName"])
                assert m["resourceName"] in c["resources"]["limits"]
            assert _served_by_dra(idx[("Node", "", p["spec"]["nodeName"])], slices_on)
        for rcs in p["status"].get("resourceClaimStatuses", []):
            assert ("ResourceClaim", p["metadata"]["namespace"], rcs["resourceClaimName"]) in idx


def test_device_plugin_counts_fit_allocatable(demo: list[dict]) -> None:
    nodes = {n["metadata"]["name"]: n for n in _of(demo, "Node")}
    used: dict[str, int] = {}
    for p in _of(demo, "Pod"):
        if p["status"]["phase"] != "Running" or p["status"].get("extendedResourceClaimStatus"):
            continue
        for c in p["spec"]["containers"]:
            n = int(c["resources"].get("requests", {}).get("nvidia.com/gpu", 0))
            if n:
                used[p["spec"]["nodeName"]] = used.get(p["spec"]["nodeName"], 0) + n
    for node, n in used.items():
        alloc = int(nodes[node]["status"]["allocatable"].get("nvidia.com/gpu", "0"))
        assert n <= alloc or alloc == 0, node


def test_quota_usage_matches_the_objects(demo: list[dict]) -> None:
    idx = _index(demo)
    research = idx[("ResourceQuota", "research", "research-quota")]
    claims = [c for c in _of(demo, "ResourceClaim") if c["metadata"]["namespace"] == "research"]
    assert research["status"]["used"]["count/resourceclaims.resource.k8s.io"] == str(len(claims))
    assert research["status"]["used"] == research["status"]["hard"]
    training = idx[("ResourceQuota", "ml-training", "gpu-quota")]
    pods = sum(
        int(c["resources"]["requests"].get("nvidia.com/gpu", 0))
        for p in _of(demo, "Pod")
        if p["metadata"]["namespace"] == "ml-training" and p["status"]["phase"] in ("Pending", "Running")
        for c in p["spec"]["containers"]
    )
    assert int(training["status"]["used"]["requests.nvidia.com/gpu"]) == pods + 1  # + the plain claim shared-h100


def test_slices_come_from_the_driver_on_its_nodes(demo: list[dict]) -> None:
    nodes = {n["metadata"]["name"]: n for n in _of(demo, "Node")}
    for s in _of(demo, "ResourceSlice"):
        spec = s["spec"]
        if spec["driver"] == "pcie-fabric.example.com":
            # The lab's fabric-attached pool: a network slice of the pool's nodes, not of one node.
            assert "nodeName" not in spec and spec["nodeSelector"]["nodeSelectorTerms"]
            continue
        assert spec["driver"] == "gpu.nvidia.com" and spec["pool"]["name"] == spec["nodeName"] in nodes
        assert s["metadata"]["ownerReferences"][0]["uid"] == nodes[spec["nodeName"]]["metadata"]["uid"]
        if not spec.get("devices"):
            assert spec["sharedCounters"]  # a DynamicMIG node's counter sets, in a slice of their own
            continue
        attrs = spec["devices"][0]["attributes"]
        assert "resource.kubernetes.io/pciBusID" in attrs and "index" not in attrs  # v0.4.0's schema


def test_kubelet_versions_and_pools(demo: list[dict]) -> None:
    pools: dict[str, set[str]] = {}
    for n in _of(demo, "Node"):
        pools.setdefault(n["metadata"]["labels"]["cloud.google.com/gke-nodepool"], set()).add(
            n["status"]["nodeInfo"]["kubeletVersion"]
        )
    skewed = {p for p, v in pools.items() if len(v) > 1}
    assert skewed == {"a100-serve"}
    assert len(pools) >= 6


# ---------------------------------------------------------------- loading


def test_users_and_their_rbac(demo: list[dict]) -> None:
    users = {u["name"]: u for u in scenario_users(list(_documents()))}
    assert len(load_scenario("demo")) == len(_demo())
    assert set(users) == {"admin", "viewer", "no-evict"}
    assert users["admin"]["groups"] == ["system:masters"]
    assert not any("token" in u for u in users.values())  # made per run by the simulator (issue 19)
    idx = _index(demo)
    for binding, user in (("dragoman-demo-viewer", "viewer"), ("dragoman-demo-no-evict", "no-evict")):
        b = idx[("ClusterRoleBinding", "", binding)]
        assert b["subjects"][0]["name"] == user
        role = idx[("ClusterRole", "", b["roleRef"]["name"])]
        assert not any("pods/eviction" in r["resources"] for r in role["rules"])
    view = idx[("ClusterRole", "", "dragoman-demo-view")]["rules"]
    assert view == [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]
    assert scenario_users(demo) == []  # load_scenario() keeps Kubernetes objects only


def test_the_simulators_loader_reads_the_demo_whole() -> None:
    from dragoman.sim import scenario

    sc = scenario.load("demo")
    assert sc.skipped == {}
    assert {u["name"] for u in sc.users} == {"admin", "viewer", "no-evict"}
    assert len(sc.objects) == len(_demo())


def test_loading_lists_documents_and_typed_lists(tmp_path: pathlib.Path) -> None:
    docs = (
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: "
        "{name: b}\n"
    )
    assert [o["metadata"]["name"] for o in parse_scenario_text(docs)] == ["a", "b"]
    typed = json.dumps({"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "p"}}]})
    assert parse_scenario_text(typed) == [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}]
    f = tmp_path / "snap.yaml"
    f.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(_demo())[:3]}))
    assert len(load_scenario(f)) == 3
    with pytest.raises(FileNotFoundError, match="No scenario named"):
        load_scenario("no-such-scenario")
    assert DEMO_PATH.exists()


def test_a_scenarios_clock_starts_where_it_says_and_now_when_judged_beside_a_real_one(tmp_path: pathlib.Path) -> None:
    """SimulatorConfig startTime (unquoted, as a person writes it) starts the simulated clock there; without it, or
    for a run beside a real control plane (real_time), the clock starts at the wall's now. The demo's is its
    snapshot, the moment its stories are written against."""
    import datetime

    from dragoman.sim import scenario as scenario_mod
    from dragoman.sim.scenarios.demofleet.objects import SNAPSHOT
    from dragoman.sim.server import Simulator

    f = tmp_path / "sc.yaml"
    f.write_text("apiVersion: sim.dragoman.io/v1\nkind: SimulatorConfig\nstartTime: 2025-02-03T04:05:06Z\n")
    sc = scenario_mod.load(str(f))
    at = datetime.datetime(2025, 2, 3, 4, 5, 6, tzinfo=datetime.UTC)
    assert sc.start == at
    assert abs((Simulator.from_scenario(sc).clock.now() - at).total_seconds()) < 5
    wall = datetime.datetime.now(datetime.UTC)
    assert abs((Simulator.from_scenario(sc, real_time=True).clock.now() - wall).total_seconds()) < 5
    f.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")
    assert abs((Simulator.from_scenario(scenario_mod.load(str(f))).clock.now() - wall).total_seconds()) < 5
    assert scenario_mod.load("demo").start == SNAPSHOT


# ---------------------------------------------------------------- scale


def test_scale_default_counts() -> None:
    from dragoman.sim.scenarios.scale import generate_scale

    objs = generate_scale()
    kinds: dict[str, int] = {}
    for o in objs:
        kinds[o["kind"]] = kinds.get(o["kind"], 0) + 1
    assert kinds["Node"] == 5000
    assert kinds["ResourceSlice"] == 2500
    assert sum(len(s["spec"]["devices"]) for s in objs if s["kind"] == "ResourceSlice") == 20000
    gpu_pods = [p for p in objs if p["kind"] == "Pod" and p["metadata"]["name"].startswith("gpu-job-")]
    assert len(gpu_pods) == 20000 and all(p["status"]["phase"] == "Running" for p in gpu_pods)
    assert kinds["ResourceClaim"] == 10000
    everything = generate_scale(dra_fraction=1.0, pending=20000)
    slices = [s for s in everything if s["kind"] == "ResourceSlice"]
    assert len(slices) == 5000 and sum(len(s["spec"]["devices"]) for s in slices) == 40000


def test_scale_is_deterministic_consistent_and_valid() -> None:
    from dragoman.sim.scenarios.scale import generate_scale

    a = generate_scale(nodes=200, pods=900, seed=3, pending=100)
    assert a == generate_scale(nodes=200, pods=900, seed=3, pending=100)
    assert a != generate_scale(nodes=200, pods=900, seed=4, pending=100)
    nodes = {n["metadata"]["name"]: n for n in a if n["kind"] == "Node"}
    pods = [p for p in a if p["kind"] == "Pod" and p["metadata"]["name"].startswith("gpu-job-")]
    pending = [p for p in pods if p["status"]["phase"] == "Pending"]
    assert len(pending) == 100 and all("nodeName" not in p["spec"] for p in pending)
    sides = [p["metadata"]["labels"]["scale.dragoman.io/side"] for p in pending]
    assert sides.count("dp") == sides.count("dra") == 50
    used: dict[str, int] = {}
    devices = {
        (s["spec"]["nodeName"], d["name"]) for s in a if s["kind"] == "ResourceSlice" for d in s["spec"]["devices"]
    }
    taken = []
    for p in pods:
        if "nodeName" not in p["spec"]:
            continue
        node = nodes[p["spec"]["nodeName"]]
        assert (
            node["metadata"]["labels"]["cloud.google.com/gke-nodepool"]
            == p["spec"]["nodeSelector"]["cloud.google.com/gke-nodepool"]
        )
        n = int(p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"])
        used[node["metadata"]["name"]] = used.get(node["metadata"]["name"], 0) + n
    for c in (o for o in a if o["kind"] == "ResourceClaim"):
        for r in c["status"]["allocation"]["devices"]["results"]:
            taken.append((r["pool"], r["device"]))
    assert set(taken) <= devices and len(taken) == len(set(taken))
    assert all(v <= 8 for v in used.values())
    seen = set()
    for o in a:
        if o["kind"] not in seen:
            seen.add(o["kind"])
            kubernetes_validate.validate(o, "1.37.0", strict=True)
    assert {"Node", "Pod", "ResourceSlice", "ResourceClaim", "DaemonSet", "DeviceClass"} <= seen
    bridged = next(p for p in pods if p["status"].get("extendedResourceClaimStatus"))
    for p in (pending[0], bridged):
        kubernetes_validate.validate(p, "1.37.0", strict=True)
    assert len({o["metadata"]["uid"] for o in a}) == len(a)


# ---------------------------------------------------------------- selectors, through the project's CEL engine


def test_demo_selectors_do_what_their_marks_say(demo: list[dict]) -> None:
    from dragoman.fleet.cel import cel_device, compile_expression, evaluate_all

    devices = [
        cel_device(s["spec"]["driver"], d)
        for s in _of(demo, "ResourceSlice")
        if s["spec"]["driver"] == "gpu.nvidia.com"
        for d in s["spec"].get("devices", ())
    ]
    classes = {
        c["metadata"]["name"]: [compile_expression(x["cel"]["expression"]) for x in c["spec"]["selectors"]]
        for c in _of(demo, "DeviceClass")
    }

    def tally(selectors: list) -> dict[str, int]:
        out = {"match": 0, "no-match": 0, "error": 0}
        for dev in devices:
            r = evaluate_all(selectors, dev)
            out["error" if r.error is not None else "match" if r.value is True else "no-match"] += 1
        return out

    whole = sum(1 for dev in devices if dev.attributes["gpu.nvidia.com"]["type"] == "gpu")
    assert tally(classes["gpu.nvidia.com"])["match"] == whole > 0
    assert tally(classes["nvidia-gpu"])["match"] == len(devices) > whole  # MIG devices too: too broad
    assert tally(classes["mig-1g.10gb.nvidia.com"])["match"] == len(devices) - whole
    assert tally(classes["h100-low-index"])["error"] == len(devices)  # `index` is gone in v0.4.0
    idx = _index(demo)
    request = idx[("ResourceClaimTemplate", "research", "h100-80gi")]["spec"]["spec"]["devices"]["requests"][0]
    sels = classes["gpu.nvidia.com"] + [
        compile_expression(s["cel"]["expression"]) for s in request["exactly"]["selectors"]
    ]
    assert tally(sels) == {"match": 0, "no-match": len(devices), "error": 0}  # 81559Mi < 80Gi
    shared = idx[("ResourceClaim", "ml-training", "shared-h100")]["spec"]["devices"]["requests"][0]["exactly"]
    sels = classes["gpu.nvidia.com"] + [compile_expression(s["cel"]["expression"]) for s in shared["selectors"]]
    assert tally(sels)["match"] == 24


# ---------------------------------------------------------------- the demo in a running simulator


def _state(objs: list[dict]) -> dict:
    out: dict = {}
    for o in objs:
        md = o["metadata"]
        key = (o["kind"], md.get("namespace", ""), md["name"])
        if o["kind"] == "Pod":
            out[key] = (
                o["status"].get("phase"),
                o["spec"].get("nodeName"),
                bool(o["status"].get("extendedResourceClaimStatus")),
                tuple(sorted((cs.get("state") or {}).keys()) for cs in o["status"].get("containerStatuses", [])),
            )
        elif o["kind"] == "Node":
            out[key] = (
                o["status"]["allocatable"].get("nvidia.com/gpu"),
                o["status"]["capacity"].get("nvidia.com/gpu"),
                o["spec"].get("unschedulable", False),
            )
        elif o["kind"] == "ResourceSlice":
            where = o["spec"].get("nodeName") or o["spec"]["pool"]["name"]
            names = [d["name"] for d in o["spec"].get("devices", ())]
            names += [f"counters:{c['name']}" for c in o["spec"].get("sharedCounters", ())]
            out[("ResourceSlice", "", where)] = tuple(sorted([*out.get(("ResourceSlice", "", where), ()), *names]))
        elif o["kind"] == "ResourceClaim":
            st = o.get("status") or {}
            out[key] = (bool(st.get("allocation")), len(st.get("reservedFor", [])))
    return out


async def test_the_demo_holds_still_in_a_running_simulator() -> None:
    """Loaded with every controller, the demo keeps its cases: only the transient ones and the flapping plugin move."""
    import asyncio

    from dragoman.sim.controllers import default_controllers

    from tests.support.sim import running_simulator

    objs = list(_demo())
    marks = demo_marks(objs)
    # What a live simulator rewrites by design (demo_build.LIVE_CHURN_FINDINGS' binding and timeout stories: the
    # simulated scheduler neither waits for binding conditions nor times out), with those pods' claims.
    churn = ("stale-bridge-claim", "plugin-flapping", "binding-pending", "binding-failed", "filter-timeout")
    moving = {key for fid in churn for key in marks[fid]}
    moving |= {("ResourceClaim", ns, name) for kind, ns, name in list(moving) if kind == "Pod"}
    flapping_nodes = {name for _, _, name in marks["plugin-flapping"]}
    stale_pods = {name for kind, _, name in marks["stale-bridge-claim"] if kind == "Pod"}
    before = _state(objs)
    from dragoman.sim import scenario as scenario_mod

    # At the demo's clock (its snapshot): the Xid rule's notebook is still within its toleration there.
    async with running_simulator(objects=objs, speed=20.0, start=scenario_mod.load("demo").start) as sim:
        for c in default_controllers(sim):
            sim.add_controller(c)
        start = sim.clock.seconds()
        # Controllers that lag under load change less, never more: waiting on the simulated clock is enough.
        while sim.clock.seconds() - start < 100:
            await asyncio.sleep(0.5)
        live = [o for key in sim.store.counts() for o in sim.store.list(key)]
    after = _state(live)
    changed = set()
    for key in set(before) | set(after):
        if before.get(key) == after.get(key) or key in moving:
            continue
        kind, _, name = key
        if kind == "Pod" and any(name.startswith(p + "-extended-resources-") for p in stale_pods):
            continue
        if kind == "ResourceClaim" and any(name.startswith(p + "-extended-resources-") for p in stale_pods):
            continue
        pod = next((o for o in live + objs if o["kind"] == "Pod" and o["metadata"]["name"] == name), None)
        if (
            kind == "Pod"
            and pod
            and pod["spec"].get("nodeName") in flapping_nodes
            and pod["metadata"].get("ownerReferences", [{}])[0].get("kind") == "DaemonSet"
        ):
            continue  # the flapping plugin's own pod
        changed.add((key, repr(before.get(key)), repr(after.get(key))))
    assert changed == set()


def test_node_hardware_from_gfd_labels_agrees_with_what_nodes_advertise(demo: list[dict]) -> None:
    from dragoman.fleet import nvidia_schema as nv

    slices: dict[str, int] = {}
    for s in _of(demo, "ResourceSlice"):
        if s["spec"].get("nodeName"):
            n = s["spec"]["nodeName"]
            slices[n] = slices.get(n, 0) + len(s["spec"].get("devices", ()))
    serving = 0
    for node in _of(demo, "Node"):
        hw = nv.node_hardware_from_labels(node["metadata"]["labels"])
        name = node["metadata"]["name"]
        if hw is None:
            assert "nvidia.com/gpu" not in node["status"]["capacity"] and name not in slices
            continue
        if name in slices:
            assert slices[name] == hw.dra_device_count()
        for resource, count in hw.device_plugin_resources().items():
            if int(node["status"]["allocatable"].get(resource, "0")) > 0:
                serving += 1
                assert node["status"]["allocatable"][resource] == str(count)
    assert serving >= 8


def test_a_shipped_scenario_is_parsed_once_a_process_and_each_read_is_a_copy(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulators started in one process (the suite, `sim serve` restarts) read the 840 KB demo each time: one parse,
    # then copies of it, and a changed file is parsed again.
    from dragoman.fleet import safefile
    from dragoman.sim import scenarios
    from dragoman.sim.scenarios import shipped_documents

    parses: list[int] = []
    real = safefile.parse_documents
    monkeypatch.setattr(
        safefile, "parse_documents", lambda text, *a, **k: parses.append(len(text)) or real(text, *a, **k)
    )
    monkeypatch.setattr(scenarios, "_shipped", {})
    path = tmp_path / "shipped.yaml"
    path.write_text("kind: Node\napiVersion: v1\nmetadata: {name: n1, labels: {a: b}}\n")
    first = shipped_documents(path)
    second = shipped_documents(path)
    assert first == second == [{"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1", "labels": {"a": "b"}}}]
    assert len(parses) == 1
    second[0]["metadata"]["labels"]["a"] = "changed"  # a caller changing its copy changes no later read
    assert shipped_documents(path)[0]["metadata"]["labels"] == {"a": "b"}
    path.write_text("kind: Node\napiVersion: v1\nmetadata: {name: n2}\n")
    assert shipped_documents(path)[0]["metadata"]["name"] == "n2"
    assert len(parses) == 2
    # The demo's two readers share it: the simulator's scenario and the objects tests read.
    from dragoman.sim import scenario

    before = len(parses)
    scenario.load("demo")
    objects = load_scenario("demo")
    assert len(parses) == before + 1 and len(objects) > 200


def test_a_broken_shipped_scenario_is_one_sentence(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A shipped scenario is read without a file's checks, not without its sentence: an edited demo.yaml that is no
    # list of objects is refused as a file is (UserError, exit 2), not a traceback.
    from dragoman.fleet.errors import ExitCode, UserError
    from dragoman.sim import scenario

    (tmp_path / "edited.yaml").write_text("- 1\n- two\n")
    monkeypatch.setattr(scenario, "SCENARIO_DIR", tmp_path)
    with pytest.raises(UserError) as err:
        scenario.load("edited")
    assert err.value.exit_code == ExitCode.INPUT
    assert str(err.value).startswith(
        f"the scenario {tmp_path / 'edited.yaml'} is not one the simulator can load: item 1"
    )
