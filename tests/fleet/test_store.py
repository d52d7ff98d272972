"""FleetStore: replace/apply semantics, batched and folded notifications, connection state."""

from __future__ import annotations

import asyncio

from dragoman.fleet.projection import Projection
from dragoman.fleet.store import (
    FORBIDDEN,
    KINDS,
    LIVE,
    RECONNECTING,
    SNAPSHOT,
    SYNCING,
    UNREACHABLE,
    Change,
    FleetStore,
)


def pod(name: str, rv: str, ns: str = "default", **extra: object) -> dict:
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": ns, "resourceVersion": rv},
        **extra,
    }


def test_kinds_cover_issue_5_with_paths_and_selectors() -> None:
    assert set(KINDS) == {
        "Node",
        "Pod",
        "DaemonSet",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "Job",
        "Namespace",
        "Event",
        "ResourceQuota",
        "PodDisruptionBudget",
        "ConfigMap",
        "Lease",
        "DeviceClass",
        "ResourceSlice",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "DeviceTaintRule",
    }
    assert "Secret" not in KINDS
    # v1.37.2 serves DeviceTaintRule GA in resource.k8s.io/v1, cluster-scoped (k8s.io/api resource/v1/types.go).
    assert KINDS["DeviceTaintRule"].list_path == "/apis/resource.k8s.io/v1/devicetaintrules"
    assert not KINDS["DeviceTaintRule"].namespaced
    assert KINDS["Pod"].list_path == "/api/v1/pods"
    assert KINDS["ResourceSlice"].list_path == "/apis/resource.k8s.io/v1/resourceslices"
    assert (
        KINDS["Lease"].path("kube-system", "dragoman-pool-a")
        == "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/dragoman-pool-a"
    )
    assert KINDS["Node"].path("ignored", "n1") == "/api/v1/nodes/n1"
    assert KINDS["ConfigMap"].label_selector == "app.kubernetes.io/managed-by=dragoman"
    assert KINDS["ConfigMap"].matches({"metadata": {"labels": {"app.kubernetes.io/managed-by": "dragoman"}}})
    assert not KINDS["ConfigMap"].matches({"metadata": {"labels": {"app.kubernetes.io/managed-by": "helm"}}})
    assert KINDS["DeviceClass"].api_version == "resource.k8s.io/v1" and not KINDS["DeviceClass"].namespaced


def test_replace_emits_the_difference_and_keeps_unchanged_objects() -> None:
    store = FleetStore(["Pod"])
    batches: list[list[Change]] = []
    store.subscribe(batches.append)
    a, b = pod("a", "1"), pod("b", "1")
    live = store.objects("Pod")
    store.replace("Pod", [a, b])
    assert set(live) == {("default", "a"), ("default", "b")}  # the mapping a reader holds stays current
    assert [(c.type, c.obj["metadata"]["name"]) for c in batches[-1]] == [("ADDED", "a"), ("ADDED", "b")]
    # A relist: a unchanged (same resourceVersion, new dict), b modified, c new, and nothing else.
    a2, b2, c = pod("a", "1"), pod("b", "2"), pod("c", "1")
    store.replace("Pod", [a2, b2, c])
    got = {(ch.type, ch.obj["metadata"]["name"]) for ch in batches[-1]}
    assert got == {("MODIFIED", "b"), ("ADDED", "c")}
    assert store.get("Pod", "default", "a") is a  # readers' references stay valid
    mod = next(ch for ch in batches[-1] if ch.type == "MODIFIED")
    assert mod.old is b and mod.obj is b2
    store.replace("Pod", [c])
    assert {(ch.type, ch.obj["metadata"]["name"]) for ch in batches[-1]} == {("DELETED", "a"), ("DELETED", "b")}
    assert list(store.objects("Pod")) == [("default", "c")]


async def test_a_first_list_into_an_empty_kind_folds_with_changes_still_pending() -> None:
    """The first LIST of a kind takes the short path (everything is an addition), yet a change of the same object
    still waiting for delivery folds with it as any other would."""
    store = FleetStore(["Pod"], coalesce=60)
    batches: list[list[Change]] = []
    store.subscribe(batches.append)
    a, b = pod("a", "1"), pod("b", "1")
    store.replace("Pod", [a, b])
    store.flush()
    store.apply("Pod", "DELETED", pod("a", "2"))  # pending, not delivered yet
    store.apply("Pod", "DELETED", pod("b", "2"))
    assert store.count("Pod") == 0
    a3, c = pod("a", "3"), pod("c", "1")
    store.replace("Pod", [a3, c])  # a relist into the emptied kind
    store.flush()
    got = {
        (ch.type, ch.obj["metadata"]["name"], (ch.old or {}).get("metadata", {}).get("resourceVersion"))
        for ch in batches[-1]
    }
    assert got == {("MODIFIED", "a", "1"), ("DELETED", "b", "1"), ("ADDED", "c", None)}
    assert store.get("Pod", "default", "a") is a3 and store.count("Pod") == 2


def test_a_bulk_first_list_pauses_the_cyclic_collector_and_restores_it() -> None:
    import gc

    from dragoman.fleet.store import BULK_CHANGES

    store = FleetStore(["Pod", "Node"])
    batches: list[list[Change]] = []
    store.subscribe(batches.append)
    seen: list[bool] = []
    try:
        assert gc.isenabled()
        store.replace("Pod", [pod(f"p{i}", "1") for i in range(BULK_CHANGES)])
        seen.append(gc.isenabled())
        gc.disable()  # a caller that paused it keeps it paused
        store.replace("Node", [{"kind": "Node", "metadata": {"name": f"n{i}"}} for i in range(BULK_CHANGES)])
        seen.append(gc.isenabled())
    finally:
        gc.enable()
    assert seen == [True, False]
    assert len(batches[0]) == BULK_CHANGES and len(batches[1]) == BULK_CHANGES


def test_a_projecting_store_takes_its_own_decoders_pages_as_they_are() -> None:
    """Pages decoded by the store's page decoder are projected already, and their projections point back at the store
    (whole objects on demand); objects from elsewhere are still projected on the way in."""
    import json

    from dragoman.fleet.projection import Projection
    from dragoman.sim.scenarios.scale import generate_envelope

    pods = [
        o for o in generate_envelope(nodes=20, gpu_nodes=10, pods=200, gpu_pods=20, job_pods=20) if o["kind"] == "Pod"
    ]
    store = FleetStore(["Pod"])
    store.serve_whole_from(object())
    decode = store.page_decoder("Pod")
    assert decode is not None
    items = decode(json.dumps({"kind": "PodList", "items": pods[:100]}).encode())["items"]
    store.replace("Pod", items, decoded=True)
    held = list(store.objects("Pod").values())
    assert held == items and sum(isinstance(p, Projection) for p in held) > 50
    assert all(p.source is store for p in held if isinstance(p, Projection))
    store.replace("Pod", [*items, *json.loads(json.dumps(pods[100:]))])  # whole dicts: projected here
    extra = [store.get("Pod", p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods[100:]]
    assert sum(isinstance(p, Projection) for p in extra) > 50
    assert all(p.source is store for p in extra if isinstance(p, Projection))


def test_apply_events_and_duplicates() -> None:
    store = FleetStore(["Pod", "Node"])
    batches: list[list[Change]] = []
    store.subscribe(batches.append)
    store.apply("Pod", "ADDED", pod("a", "5"))
    store.apply("Pod", "ADDED", pod("a", "5"))  # replayed after a reconnect: no change
    assert len(batches) == 1
    store.apply("Pod", "MODIFIED", pod("a", "6", spec={"nodeName": "n1"}))
    assert batches[-1][0].type == "MODIFIED" and batches[-1][0].old["metadata"]["resourceVersion"] == "5"
    store.apply("Pod", "DELETED", pod("a", "7"))
    assert batches[-1][0].type == "DELETED" and store.get("Pod", "default", "a") is None
    store.apply("Pod", "DELETED", pod("zzz", "8"))  # unknown: nothing to say
    assert len(batches) == 3
    node = {"kind": "Node", "metadata": {"name": "n1", "resourceVersion": "1"}}
    store.apply("Node", "ADDED", node)
    assert store.get("Node", None, "n1") is node and store.count() == 1


async def test_bursts_reach_subscribers_as_folded_batches() -> None:
    store = FleetStore(["Pod"], coalesce=0.05)
    batches: list[list[Change]] = []
    store.subscribe(batches.append)
    for i in range(1000):
        store.apply("Pod", "ADDED", pod(f"p{i}", "1"))
    # Same object changed three times, one added then deleted: folded.
    store.apply("Pod", "MODIFIED", pod("p1", "2"))
    store.apply("Pod", "MODIFIED", pod("p1", "3"))
    store.apply("Pod", "ADDED", pod("tmp", "1"))
    store.apply("Pod", "DELETED", pod("tmp", "2"))
    assert batches == []  # held while the burst goes on
    for _ in range(200):
        await asyncio.sleep(0.02)
        if batches:
            break
    assert len(batches) == 1
    batch = batches[0]
    assert len(batch) == 1000
    p1 = next(c for c in batch if c.obj["metadata"]["name"] == "p1")
    assert p1.type == "ADDED" and p1.obj["metadata"]["resourceVersion"] == "3"
    assert all(c.obj["metadata"]["name"] != "tmp" for c in batch)
    # A modify-then-delete of a known object reaches subscribers as one DELETED holding the first old object.
    store.apply("Pod", "MODIFIED", pod("p2", "9"))
    store.apply("Pod", "DELETED", pod("p2", "10"))
    store.flush()
    assert [(c.type, c.old["metadata"]["resourceVersion"]) for c in batches[-1]] == [("DELETED", "1")]


def test_unsubscribe_and_a_broken_subscriber_does_not_starve_others() -> None:
    store = FleetStore(["Pod"])
    seen: list[int] = []

    def broken(batch: list[Change]) -> None:
        raise RuntimeError("boom")

    store.subscribe(broken)
    unsub = store.subscribe(lambda b: seen.append(len(b)))
    store.apply("Pod", "ADDED", pod("a", "1"))
    assert seen == [1]
    unsub()
    store.apply("Pod", "ADDED", pod("b", "1"))
    assert seen == [1]


def test_connection_state_per_kind_and_overall() -> None:
    store = FleetStore(["Pod", "Node", "ResourceSlice"])
    events: list[tuple[str | None, str]] = []
    store.subscribe_state(lambda kind, st: events.append((kind, st.status)))
    assert store.overall.status == SYNCING and not store.overall.synced
    store.set_state("Pod", LIVE, synced=True)
    store.set_state("Node", LIVE, synced=True)
    assert store.overall.status == SYNCING
    store.set_state("ResourceSlice", FORBIDDEN, "user 'u' may not list resourceslices (403 Forbidden).")
    overall = store.overall
    assert overall.status == LIVE and overall.synced and "ResourceSlice" in overall.message
    assert ("ResourceSlice", FORBIDDEN) in events and (None, LIVE) in events
    store.set_state("Pod", RECONNECTING, "the watch of /api/v1/pods broke.")
    assert store.overall.status == RECONNECTING and "broke" in store.overall.message
    assert store.state("Pod").synced  # still holds a whole (if aging) picture
    store.set_state("Pod", UNREACHABLE, "cannot reach the cluster.")
    store.set_state("Node", UNREACHABLE, "cannot reach the cluster.")
    assert store.overall.status == UNREACHABLE
    n = len(events)
    store.set_state("Node", UNREACHABLE, "cannot reach the cluster.")  # no change, no event
    assert len(events) == n
    for k in store.kinds:
        store.set_state(k, SNAPSHOT, synced=True)
    assert store.overall.status == SNAPSHOT


def _on(name: str, rv: str, node: str | None, phase: str | None = None) -> dict:
    return pod(name, rv, spec={"nodeName": node} if node else {}, status={"phase": phase} if phase else {})


def test_the_store_files_its_objects_in_its_indexes_on_every_path() -> None:
    """client-go's Indexers: a first LIST, a relist's difference, watch events and a late add_indexers all leave the
    indexes saying what the objects say, and a value no object is filed under any more is gone."""
    store = FleetStore(["Pod"])
    store.replace("Pod", [_on("a", "1", "n1", "Running"), _on("b", "1", "n1"), _on("c", "1", None, "Pending")])
    assert store.index("Pod", "node", "n1") == {("default", "a"), ("default", "b")}
    assert store.index("Pod", "waiting", True) == {("default", "b"), ("default", "c")}
    assert [p["metadata"]["name"] for p in store.by_index("Pod", "node", "n1")] == ["a", "b"]
    # A relist: a moved, b gone, c bound and running.
    store.replace("Pod", [_on("a", "2", "n2", "Running"), _on("c", "2", "n1", "Running")])
    assert store.index("Pod", "node", "n1") == {("default", "c")}
    assert store.index("Pod", "node", "n2") == {("default", "a")}
    assert not store.index("Pod", "waiting", True) and set(store.index_values("Pod", "waiting")) == set()
    store.apply("Pod", "DELETED", _on("c", "3", "n1"))
    assert set(store.index_values("Pod", "node")) == {"n2"}
    store.apply("Pod", "ADDED", _on("d", "4", "n2", "Failed"))
    assert store.index("Pod", "waiting", True) == {("default", "d")}
    store.add_indexers("Pod", {"phase": lambda p: ((p.get("status") or {}).get("phase") or "",)})
    assert store.index("Pod", "phase", "Running") == {("default", "a")}
    store.apply("Pod", "MODIFIED", _on("a", "5", "n2", "Succeeded"))
    assert store.index("Pod", "phase", "Succeeded") == {("default", "a")} and not store.index("Pod", "phase", "Running")


def test_a_held_store_makes_its_writes_in_order_once_released() -> None:
    """A reader in another thread holds the store: nothing it iterates changes size under it."""
    store = FleetStore(["Pod"])
    store.replace("Pod", [_on("a", "1", "n1")])
    release = store.hold()
    store.apply("Pod", "ADDED", _on("b", "2", "n1"))
    store.apply("Pod", "MODIFIED", _on("b", "3", "n2"))
    store.replace("Pod", [_on("a", "1", "n1"), _on("b", "3", "n2"), _on("c", "4", "n2")])
    assert set(store.objects("Pod")) == {("default", "a")} and store.index("Pod", "node", "n1") == {("default", "a")}
    release()
    release()  # a second call is harmless
    assert set(store.objects("Pod")) == {("default", "a"), ("default", "b"), ("default", "c")}
    assert store.index("Pod", "node", "n2") == {("default", "b"), ("default", "c")}
    assert store.get("Pod", "default", "b")["metadata"]["resourceVersion"] == "3"


def _filed(store: FleetStore, kind: str = "Pod") -> dict:
    """What a store's indexes say, read through `index` (how a value holds its keys is the store's business)."""
    return {
        name: {v: set(store.index(kind, name, v)) for v in store.index_values(kind, name)}
        for name in store._indices[kind]
    }


def test_an_index_value_holds_one_key_then_many_then_one_again() -> None:
    """A value filed once holds its key itself, several keys a dict of them: `index` answers the same keys either way,
    through every add, move and delete (and no value is left behind with none)."""
    store = FleetStore(["Pod"])
    store.apply("Pod", "ADDED", _on("a", "1", "n1"))
    assert store.index("Pod", "node", "n1") == {("default", "a")}
    store.apply("Pod", "ADDED", _on("b", "2", "n1"))
    store.apply("Pod", "ADDED", _on("c", "3", "n1"))
    assert store.index("Pod", "node", "n1") == {("default", "a"), ("default", "b"), ("default", "c")}
    assert ("default", "b") in store.index("Pod", "node", "n1") and len(store.index("Pod", "node", "n1")) == 3
    store.apply("Pod", "MODIFIED", _on("b", "4", "n2"))
    store.apply("Pod", "DELETED", _on("a", "5", "n1"))
    assert store.index("Pod", "node", "n1") == {("default", "c")}
    assert store.index("Pod", "node", "n2") == {("default", "b")}
    assert [p["metadata"]["name"] for p in store.by_index("Pod", "node", "n1")] == ["c"]
    store.apply("Pod", "ADDED", _on("a", "6", "n1"))
    store.apply("Pod", "ADDED", _on("a", "7", "n1"))  # filed again under the same value: still one key
    assert store.index("Pod", "node", "n1") == {("default", "a"), ("default", "c")}
    for name in ("a", "c"):
        store.apply("Pod", "DELETED", _on(name, "8", "n1"))
    assert not store.index("Pod", "node", "n1") and "n1" not in store.index_values("Pod", "node")
    assert set(store.index_values("Pod", "node")) == {"n2"}
    # A first LIST files the same way.
    listed = FleetStore(["Pod"])
    listed.replace("Pod", [_on("b", "4", "n2")])
    assert _filed(listed) == _filed(store)


def test_a_first_list_of_pods_is_filed_in_one_loop_exactly_as_the_index_functions_say() -> None:
    from dragoman.fleet.store import INDEXERS

    def owned(name: str, *owners: tuple[str, str], **extra: object) -> dict:
        p = pod(name, "1", **extra)
        if owners:
            p["metadata"]["ownerReferences"] = [{"kind": k, "name": n} for k, n in owners]
        return p

    pods = [
        owned("bare-pending", status={"phase": "Pending"}),
        owned("bare-running", spec={"nodeName": "n1"}, status={"phase": "Running"}),
        owned("ds", ("DaemonSet", "dp"), spec={"nodeName": "n1"}, status={"phase": "Running"}),
        owned("two-owners", ("ReplicaSet", "rs"), ("DaemonSet", "other"), spec={"nodeName": "n2"}),
        owned("failed", ("Job", "j"), spec={"nodeName": "n2"}, status={"phase": "Failed"}),
        owned("done", ("Job", "j"), spec={"nodeName": "n2"}, status={"phase": "Succeeded"}),
        owned("unscheduled", ("ReplicaSet", "rs"), spec={}, status={}),
    ]
    # Projections (CPU pods as a live LIST keeps them): running on a node, only those steered by a selector, an
    # affinity or the bridge are notable to the diagnosis.
    for name, extra_spec, extra_status in (
        ("cpu", {}, {}),
        ("cpu-selector", {"nodeSelector": {"nvidia.com/gpu.product": "A100"}}, {}),
        ("cpu-affinity", {"affinity": {"nodeAffinity": {}}}, {}),
        ("cpu-bridge", {}, {"extendedResourceClaimStatus": {"resourceClaimName": "c"}}),
        ("cpu-done", {}, {"phase": "Succeeded"}),
        ("cpu-pending", {"nodeName": ""}, {"phase": "Pending"}),
    ):
        p = owned(name, ("ReplicaSet", "rs"))
        p["spec"] = {"nodeName": "n1", **extra_spec}
        p["status"] = {"phase": "Running", **extra_status}
        pods.append(Projection(p))
    fused = FleetStore(["Pod"])
    fused.replace("Pod", pods)
    generic = FleetStore(["Pod"])
    # Wrapped, the table is no longer the standard one: the generic path, one call per pod and index.
    generic._indexers["Pod"] = {name: (lambda p, fn=fn: fn(p)) for name, fn in INDEXERS["Pod"].items()}
    generic.replace("Pod", pods)
    assert _filed(fused) == _filed(generic)
    assert fused.index("Pod", "daemonset", ("default", "other")) == {("default", "two-owners")}
    # Whole pods are notable unless Succeeded; projections only when not simply running on their node.
    assert fused.index("Pod", "notable", True) == {
        ("default", n)
        for n in (
            "bare-pending",
            "bare-running",
            "ds",
            "two-owners",
            "failed",
            "unscheduled",
            "cpu-selector",
            "cpu-affinity",
            "cpu-bridge",
            "cpu-pending",
        )
    }
    assert fused.index("Pod", "waiting", True) == {
        ("default", "bare-pending"),
        ("default", "two-owners"),  # no phase yet
        ("default", "failed"),
        ("default", "unscheduled"),
        ("default", "cpu-pending"),
    }
    only_running = FleetStore(["Pod"])
    only_running.replace("Pod", [pods[2]])
    assert set(only_running.index_values("Pod", "waiting")) == set() == set(only_running.index_values("Pod", "bare"))
    only_cpu = FleetStore(["Pod"])
    only_cpu.replace("Pod", [pods[7]])
    assert set(only_cpu.index_values("Pod", "notable")) == set()


def test_a_pod_event_is_filed_as_the_index_functions_say_when_the_store_skips_what_did_not_move() -> None:
    """A MODIFIED pod whose indexed fields did not change is not refiled (fleet/store._pod_filing); a change of any one
    of them (node, phase, owners, namespace, steering, claims, the bridge, being a projection) between two versions of
    a pod still moves it exactly as the one-call-per-index path does."""
    import itertools
    import random

    from dragoman.fleet.store import INDEXERS

    choices = {
        "node": [None, "n1", "n2", ""],
        "phase": [None, "Pending", "Running", "Succeeded", "Failed", "Unknown"],
        "owners": [(), (("DaemonSet", "dp"),), (("ReplicaSet", "rs"),), (("Job", "j"), ("DaemonSet", "other"))],
        "namespace": ["default", "kube-system"],
        "selector": [False, True],
        "affinity": [False, True],
        "claims": [False, True],
        "bridge": [False, True],
        "projection": [False, True],
    }

    def make(c: dict, rv: int) -> dict:
        p = pod("p", str(rv), spec={}, status={})
        p["metadata"]["namespace"] = c["namespace"]
        if c["owners"]:
            p["metadata"]["ownerReferences"] = [{"kind": k, "name": n} for k, n in c["owners"]]
        spec: dict = {"nodeName": c["node"]} if c["node"] is not None else {}
        spec.update({"nodeSelector": {"a": "b"}} if c["selector"] else {})
        spec.update({"affinity": {"nodeAffinity": {}}} if c["affinity"] else {})
        spec.update({"resourceClaims": [{"name": "c"}]} if c["claims"] else {})
        status: dict = {"phase": c["phase"]} if c["phase"] is not None else {}
        status.update({"extendedResourceClaimStatus": {"resourceClaimName": "c"}} if c["bridge"] else {})
        p["spec"], p["status"] = spec, status
        return Projection(p) if c["projection"] else p

    rng = random.Random(29)
    combos = [dict(zip(choices, values)) for values in itertools.product(*choices.values())]
    fused = FleetStore(["Pod"])
    generic = FleetStore(["Pod"])
    generic._indexers["Pod"] = {name: (lambda p, fn=fn: fn(p)) for name, fn in INDEXERS["Pod"].items()}
    rv, moves, pairs = 0, 0, 0
    # Random starts, and every start of a running projection on its node steered by nothing (the one not notable):
    # one field away from it, each of the notable rule's fields decides.
    plain_running = [
        c
        for c in combos
        if c["phase"] == "Running" and c["projection"] and c["node"] == "n1"
        if not (c["selector"] or c["affinity"] or c["claims"] or c["bridge"])
    ]
    for start in rng.sample(combos, 120) + plain_running:
        for field, values in choices.items():
            for value in values:
                rv += 2
                for store in (fused, generic):
                    store.apply("Pod", "MODIFIED", make(start, rv))
                    before = _filed(store)
                    store.apply("Pod", "MODIFIED", make({**start, field: value}, rv + 1))
                assert _filed(fused) == _filed(generic), (start, field, value)
                moves += before != _filed(fused)
                pairs += 1
    assert moves > pairs // 4, "the pairs move the pod between index values, not only within one"


def test_an_owned_object_is_filed_under_each_owner_of_the_kind_asked() -> None:
    """_owners reads one owner without a generator (most claims): the answer is the general reading's for one owner of
    the kind, one of another kind, several (mixed), none, and an owner list that is not a list."""
    from dragoman.fleet.store import claim_owner_pods, pod_daemonsets

    def claim(refs: object) -> dict:
        return {"metadata": {"namespace": "ml", "name": "c", "ownerReferences": refs}}

    pod = {"kind": "Pod", "name": "p"}
    rs = {"kind": "ReplicaSet", "name": "r"}
    assert claim_owner_pods(claim([pod])) == (("ml", "p"),)
    assert claim_owner_pods(claim([rs])) == ()
    assert claim_owner_pods(claim([rs, pod, {"kind": "Pod", "name": "q"}])) == (("ml", "p"), ("ml", "q"))
    assert claim_owner_pods(claim([])) == () and claim_owner_pods(claim(None)) == ()
    assert claim_owner_pods(claim((pod,))) == (("ml", "p"),)  # a tuple (a hand-made object): the general reading
    assert pod_daemonsets(claim([{"kind": "DaemonSet", "name": "d"}])) == (("ml", "d"),)
    assert claim_owner_pods({"metadata": {"name": "c", "ownerReferences": [pod]}}) == (("", "p"),)
