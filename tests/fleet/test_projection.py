"""Pod projections (fleet/projection.py): what a projection drops is never needed by a view, a finding or a write,
and a page that shows a whole object fetches it."""

from __future__ import annotations

import asyncio
import json

import pytest
from dragoman.fleet import accounting
from dragoman.fleet.diagnose import diagnose
from dragoman.fleet.load import model_counts
from dragoman.fleet.model import FleetModel, key_of
from dragoman.fleet.projection import (
    PodListDecoder,
    Projection,
    fetch_whole,
    keeps_whole,
    needs_fetch,
    project_pod,
    whole_of,
)
from dragoman.sim.scenarios import DEMO_PATH, load_scenario
from dragoman.sim.scenarios.scale import generate_envelope

SMALL = dict(nodes=20, gpu_nodes=10, pods=400, gpu_pods=40, job_pods=30)


def _page(pods: list[dict]) -> bytes:
    return json.dumps(
        {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "7"}, "items": pods}
    ).encode()


def test_the_envelope_has_its_shape() -> None:
    objs = generate_envelope(**SMALL)
    nodes = [o for o in objs if o["kind"] == "Node"]
    pods = [o for o in objs if o["kind"] == "Pod"]
    assert len(nodes) == 20 and len(pods) == 400
    gpu = sum(int(n["status"]["capacity"].get("nvidia.com/gpu", 0)) for n in nodes)
    devices = sum(len(s["spec"]["devices"]) for s in objs if s["kind"] == "ResourceSlice")
    assert gpu + devices == 10 * 16  # half the GPU nodes on the device plugin, half publishing on DRA
    cpu_nodes = {n["metadata"]["name"] for n in nodes if "nvidia.com/gpu.product" not in n["metadata"]["labels"]}
    assert len(cpu_nodes) == 10
    owners = {p["metadata"]["ownerReferences"][0]["kind"] for p in pods if p["metadata"].get("ownerReferences")}
    assert {"ReplicaSet", "Job", "DaemonSet"} <= owners
    assert sum(1 for p in pods if p["status"]["phase"] == "Succeeded") > 0  # finished Job pods
    # GPU pods and claim holders are a minority beside the CPU pods.
    whole = [p for p in pods if keeps_whole(p)]
    assert 0 < len(whole) < len(pods) / 4


def test_the_fast_decoder_builds_exactly_what_the_dict_projection_builds() -> None:
    pods = [o for o in generate_envelope(**SMALL) if o["kind"] == "Pod"]
    raw = _page(pods)
    page = PodListDecoder()(raw)
    assert page["metadata"] == {"resourceVersion": "7"} and page["kind"] == "PodList"
    slow = [project_pod(p) for p in json.loads(raw)["items"]]
    assert page["items"] == slow
    assert [type(p) for p in page["items"]] == [type(p) for p in slow]
    by_name = {p["metadata"]["name"]: p for p in page["items"]}
    for whole in pods:
        got = by_name[whole["metadata"]["name"]]
        if keeps_whole(whole):
            assert type(got) is dict and got == json.loads(json.dumps(whole))
            continue
        assert isinstance(got, Projection)
        assert "managedFields" not in got["metadata"] and "volumes" not in got["spec"] and "podIP" not in got["status"]
        assert (
            got["spec"]["nodeName"] == whole["spec"]["nodeName"] and got["status"]["phase"] == whole["status"]["phase"]
        )
        assert got["metadata"]["ownerReferences"] == whole["metadata"]["ownerReferences"]
        assert got["spec"]["containers"][0]["resources"] == whole["spec"]["containers"][0]["resources"]
    # GPU pods, claim holders and the GPU stack's pods stay whole.
    gpu = [p for p in page["items"] if p["metadata"]["name"].startswith(("gpu-job-", "nvdp-", "dra-driver-"))]
    assert gpu and all(type(p) is dict for p in gpu)


def test_an_item_of_odd_shape_is_decoded_whole_for_the_shape_checks() -> None:
    pods = [o for o in generate_envelope(**SMALL) if o["kind"] == "Pod" and o["metadata"]["name"].startswith("svc-")][
        :3
    ]
    odd = json.loads(json.dumps(pods[1]))
    odd["metadata"]["name"] = 5  # not a string: msgspec refuses it, json reads it, fleet/shapes judges it
    page = PodListDecoder()(_page([pods[0], odd, pods[2]]))
    assert isinstance(page["items"][0], Projection) and isinstance(page["items"][2], Projection)
    assert type(page["items"][1]) is dict and page["items"][1]["metadata"]["name"] == 5
    assert PodListDecoder()(b'{"items": 3}') == {"items": 3}  # not a list page: left to list_all's checks


def _models() -> tuple[FleetModel, FleetModel, int]:
    objs = load_scenario(DEMO_PATH)
    whole = FleetModel()
    whole.load_list(json.loads(json.dumps(objs)))
    projected_objs = [project_pod(o) if o.get("kind") == "Pod" else o for o in json.loads(json.dumps(objs))]
    projected = FleetModel()
    projected.load_list(projected_objs)
    return whole, projected, sum(isinstance(o, Projection) for o in projected_objs)


def test_findings_and_views_are_the_same_from_projected_pods_on_the_demo_fleet() -> None:
    whole, projected, n = _models()
    assert n >= 20  # the demo's GPU Feature Discovery and operator pods are projected
    assert diagnose(projected) == diagnose(whole)
    assert [v.to_json() for v in projected.nodes()] == [v.to_json() for v in whole.nodes()]
    assert [(p.name, p.nodes) for p in projected.pools()] == [(p.name, p.nodes) for p in whole.pools()]
    assert projected.gpu_pods() == whole.gpu_pods()
    assert model_counts(projected) == model_counts(whole)
    for ns in {k[0] for k in whole.objects["Pod"]}:
        assert accounting.namespace_usage(projected, ns) == accounting.namespace_usage(whole, ns)
    for node in whole.node_names():
        assert [key_of(p) for p in projected.pods_on_node(node)] == [key_of(p) for p in whole.pods_on_node(node)]
        assert [
            (s.key, s.phase, s.ready, s.restarts)
            for s in projected.node(node).device_plugin + projected.node(node).dra_driver
        ] == [
            (s.key, s.phase, s.ready, s.restarts) for s in whole.node(node).device_plugin + whole.node(node).dra_driver
        ]


def test_a_projection_is_never_printed_as_if_it_were_whole() -> None:
    import yaml
    from dragoman.widgets.detail import yaml_text

    _, projected, _ = _models()
    pod = next(p for p in projected.objects["Pod"].values() if isinstance(p, Projection))
    with pytest.raises(yaml.YAMLError):
        yaml_text(pod)  # the safe dumper refuses the type: a page must fetch the whole object first
    assert not needs_fetch(pod)  # no store behind it (loaded from a list): nothing to fetch from
    assert whole_of(pod) is pod


async def test_a_live_store_projects_and_fetches_the_whole_object_on_demand() -> None:
    from dragoman.fleet.cluster import connect
    from dragoman.fleet.informer import sync
    from dragoman.fleet.store import FleetStore

    from tests.support.sim import running_simulator

    async with running_simulator(objects=generate_envelope(**SMALL)) as sim:
        cluster = await connect(str(sim.kubeconfig_path), None)
        store = FleetStore()
        syncer = await sync(cluster, store)
        try:
            await syncer.wait_synced(60)
            pods = store.objects("Pod")
            projected = [p for p in pods.values() if isinstance(p, Projection)]
            assert len(projected) == store.projected("Pod") > 200
            pod = projected[0]
            ns, name = key_of(pod)
            assert needs_fetch(pod)
            whole = await fetch_whole(pod)
            server = sim.store.get("pods", ns, name)
            assert (
                whole["spec"]["volumes"] == server["spec"]["volumes"]
                and whole["metadata"]["uid"] == server["metadata"]["uid"]
            )
            assert whole_of(pod) is whole and not needs_fetch(pod)
            # A change on the server: the projection moves on, and the whole object kept is no longer the one shown.
            cur = sim.store.entry(sim.store._rt("pods"), ns, name)
            sim.store._commit(
                "MODIFIED",
                sim.store._rt("pods"),
                {
                    **cur.obj,
                    "metadata": {**cur.obj["metadata"], "labels": {**cur.obj["metadata"]["labels"], "rolled": "yes"}},
                },
                cur,
            )
            for _ in range(200):
                if store.get("Pod", ns, name)["metadata"]["labels"].get("rolled"):
                    break
                import asyncio

                await asyncio.sleep(0.02)
            moved = store.get("Pod", ns, name)
            assert isinstance(moved, Projection) and moved["metadata"]["labels"]["rolled"] == "yes"
            # The watch event went through the LIST's projecting decoder: the same projection of the server's pod.
            assert moved == project_pod(json.loads(json.dumps(sim.store.get("pods", ns, name))))
            assert needs_fetch(moved) and whole_of(moved) is moved
            assert (await fetch_whole(moved))["metadata"]["labels"]["rolled"] == "yes"
        finally:
            await syncer.stop()
            await cluster.close()


async def test_a_drain_of_a_node_full_of_projected_cpu_pods_evicts_every_one() -> None:
    from dragoman.actions.drain import Drain, skip_reason
    from dragoman.actions.steps import Context
    from dragoman.fleet.cluster import connect
    from dragoman.fleet.informer import sync
    from dragoman.fleet.store import FleetStore
    from dragoman.sim.scenarios.scale import POOL_LABEL

    from tests.support.feed import following
    from tests.support.sim import running_simulator

    async with running_simulator(objects=generate_envelope(**SMALL)) as sim:
        cluster = await connect(str(sim.kubeconfig_path), None)
        store = FleetStore()
        syncer = await sync(cluster, store)
        try:
            await syncer.wait_synced(60)
            async with following(store) as feed:
                model = feed.model
                node = next(n for n in model.node_names() if n.startswith("gke-env-cpu-"))
                # Two more of a Deployment's pods land on the node after the LIST: they come through the watch,
                # projected by the LIST's decoder, and the drain must count them too.
                rt = sim.store._rt("pods")
                template = next(
                    p
                    for p in sim.store.list("pods")
                    if p["spec"].get("nodeName") == node
                    and p["metadata"].get("ownerReferences", [{}])[0].get("kind") == "ReplicaSet"
                )
                for suffix in ("wtch1", "wtch2"):
                    md = {**template["metadata"], "name": template["metadata"]["name"][:-5] + suffix}
                    md["uid"] = f"uid-{suffix}"
                    sim.store._commit("ADDED", rt, {**template, "metadata": md}, None)
                for _ in range(300):
                    if {"wtch1", "wtch2"} <= {k[1][-5:] for k in store.objects("Pod")}:
                        break
                    await asyncio.sleep(0.02)
                store.flush()
                for _ in range(300):  # the feed absorbs a batch within PUMP_INTERVAL
                    if {"wtch1", "wtch2"} <= {p["metadata"]["name"][-5:] for p in model.pods_on_node(node)}:
                        break
                    await asyncio.sleep(0.02)
                on_node = model.pods_on_node(node)
                watched = [p for p in on_node if p["metadata"]["name"].endswith(("wtch1", "wtch2"))]
                assert len(watched) == 2 and all(isinstance(p, Projection) for p in watched)
                assert on_node and all(isinstance(p, Projection) for p in on_node)
                # What the model says a drain of this node moves, read from projections only...
                expected = {key_of(p) for p in on_node if not skip_reason(p)}
                # DaemonSet pods (and finished Job pods) stay.
                assert len(expected) >= 20 and len(expected) < len(on_node)
                node_obj = await cluster.get(f"/api/v1/nodes/{node}")
                ctx = Context(
                    cluster, node_obj["metadata"]["labels"][POOL_LABEL], POOL_LABEL, [node_obj], audit=None, by={}
                )
                plan = await Drain("drain", [node]).plan(ctx)
                # ...is exactly what the drain, planned from the server's whole objects, evicts.
                assert {(c.namespace, c.name) for c in plan.changes if c.verb == "evict"} == expected
        finally:
            await syncer.stop()
            await cluster.close()


def test_a_projection_keeps_every_pod_field_the_shape_checks_read() -> None:
    from dragoman.fleet.projection import CONTAINER_KEEP, SECTIONS
    from dragoman.fleet.shapes import SHAPES

    kept = {section: set(names) for section, names in SECTIONS}
    for kind, path, _typ in SHAPES:
        if kind not in ("*", "Pod"):
            continue
        parts = path.split(".")
        if len(parts) >= 2:
            assert parts[1] in kept[parts[0]], path  # else a projected pod would escape that check
        if parts[:2] in (["spec", "containers"], ["spec", "initContainers"]) and len(parts) > 3:
            assert parts[3] in CONTAINER_KEEP, path


def test_findings_views_and_drain_sets_are_the_same_from_projected_pods_on_the_envelope() -> None:
    """The envelope's CPU pods (Deployments, Jobs, DaemonSets on CPU nodes), projected by the LIST decoder as a live
    store does, give the same findings, node views, pools, accounting and per-node drain sets as the whole pods."""
    from dragoman.actions.drain import skip_reason

    objs = json.loads(json.dumps(generate_envelope(**SMALL)))
    pods = [o for o in objs if o["kind"] == "Pod"]
    rest = [o for o in objs if o["kind"] != "Pod"]
    decoded = PodListDecoder()(_page([{k: v for k, v in p.items() if k != "kind"} for p in pods]))["items"]
    for p in decoded:
        p.setdefault("kind", "Pod")
    assert sum(isinstance(p, Projection) for p in decoded) > len(pods) / 2
    whole, projected = FleetModel(), FleetModel()
    whole.load_list(rest + pods)
    projected.load_list(json.loads(json.dumps(rest)) + decoded)
    assert diagnose(projected) == diagnose(whole)
    assert [v.to_json() for v in projected.nodes()] == [v.to_json() for v in whole.nodes()]
    assert [(p.name, p.nodes) for p in projected.pools()] == [(p.name, p.nodes) for p in whole.pools()]
    assert model_counts(projected) == model_counts(whole)
    for ns in {k[0] for k in whole.objects["Pod"]}:
        assert accounting.namespace_usage(projected, ns) == accounting.namespace_usage(whole, ns)
    cpu_nodes = [n for n in whole.node_names() if n.startswith("gke-env-cpu-")]
    assert cpu_nodes
    for node in whole.node_names():
        mine = [(key_of(p), skip_reason(p)) for p in projected.pods_on_node(node)]
        assert mine == [(key_of(p), skip_reason(p)) for p in whole.pods_on_node(node)], node


async def test_a_watch_event_decodes_to_exactly_what_the_list_decoded(tmp_path) -> None:
    """The watch's objects go through the projecting LIST decoder too (fleet/cluster.py reads the event's envelope with
    msgspec, the informer hands its decoder's `item`): a pod from an event is the same object, of the same type, as
    the same pod from a LIST page; an odd shape is still skipped with a note; other events decode as json.loads."""
    from dragoman.fleet.cluster import Cluster
    from dragoman.fleet.kubeconfig import resolve

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    cluster = Cluster(resolve(str(kubeconfig)))
    try:
        pods = [o for o in generate_envelope(**SMALL) if o["kind"] == "Pod"]
        listed = PodListDecoder()(_page(pods))["items"]
        decoder = PodListDecoder()
        decoder(_page(pods[:50]))  # a live informer's decoder has read its LIST first: its shared parts are warm
        for etype in ("ADDED", "MODIFIED", "DELETED"):
            for pod, want in zip(pods, listed, strict=True):
                line = json.dumps({"type": etype, "object": pod}).encode()
                got_type, got = cluster._event(line, "/api/v1/pods", decoder.item)
                assert got_type == etype and type(got) is type(want) and got == want
                if isinstance(got, Projection):
                    assert got.shapes_checked
                plain = cluster._event(line, "/api/v1/pods")[1]  # no decoder: the whole pod, as json.loads reads it
                assert type(plain) is dict and plain == json.loads(json.dumps(pod))
        assert sum(isinstance(p, Projection) for p in listed) > len(listed) / 2
        odd = json.loads(json.dumps(pods[-1]))
        odd["metadata"]["ownerReferences"][0]["name"] = 7  # msgspec reads it; the shape rule for it does not hold
        got_type, _ = cluster._event(
            json.dumps({"type": "MODIFIED", "object": odd}).encode(), "/api/v1/pods", decoder.item
        )
        assert got_type == "SKIPPED" and any("ownerReferences" in v for v in cluster.malformed.values())
        bookmark = {"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "9"}}}
        assert cluster._event(json.dumps(bookmark).encode(), "/api/v1/pods", decoder.item) == (
            "BOOKMARK",
            bookmark["object"],
        )
        # What only json reads (NaN) still reads as before; what is not an event is still refused with a sentence.
        assert cluster._event(b'{"type":"ADDED","object":{"metadata":{"name":"a"},"x":NaN}}', "/api/v1/nodes")[0]
        from dragoman.fleet.cluster import Malformed

        for bad in (b'{"type":"ADDED"}', b"[1]", b'{"type":"ADDED","object":3}', b"{"):
            with pytest.raises(Malformed):
                cluster._event(bad, "/api/v1/pods", decoder.item)
    finally:
        await cluster.close()


def test_a_pods_own_status_parts_are_checked_without_the_memo() -> None:
    """Container statuses are each pod's own (UNSHARED): decoded by msgspec in the page's pass, outside the shared-parts
    memo, yet held to the same shape rules, and never shared between pods. A pod whose statuses msgspec cannot read as
    objects is kept whole, as it came, and the rules name the field."""
    from dragoman.fleet.shapes import shape_problem

    pods = [o for o in generate_envelope(**SMALL) if o["kind"] == "Pod" and o["metadata"]["name"].startswith("svc-")][
        :3
    ]
    odd = json.loads(json.dumps(pods[1]))
    odd["status"]["containerStatuses"].append(3)  # msgspec reads it; the rule (a list of objects) does not hold
    decoder = PodListDecoder()
    items = decoder(_page([pods[0], odd, pods[2]]))["items"]
    assert isinstance(items[0], Projection) and isinstance(items[2], Projection)
    assert not isinstance(items[1], Projection) and items[1]["status"]["containerStatuses"][-1] == 3
    assert shape_problem(items[0]) is None and shape_problem(items[2]) is None
    assert "containerStatuses" in (shape_problem(items[1]) or "")
    again = decoder(_page([pods[0]]))["items"][0]
    assert again == items[0] and again["status"]["containerStatuses"] is not items[0]["status"]["containerStatuses"]
    assert again["spec"]["containers"] is items[0]["spec"]["containers"]  # the template's parts are still shared


def test_the_decoders_remembered_verdict_follows_the_words_of_each_pods_name() -> None:
    """Whether a pod is kept whole is remembered per template (labels, owner, containers) and the role words of its
    name: pods of one template whose names hold other words are judged on their own, exactly as keeps_whole would."""
    objs = generate_envelope(**SMALL)
    svc = next(o for o in objs if o["kind"] == "Pod" and o["metadata"]["name"].startswith("svc-"))
    stack = next(o for o in objs if o["kind"] == "Pod" and o["metadata"]["name"].startswith("nvdp-"))

    def named(pod: dict, name: object) -> dict:
        copy = json.loads(json.dumps(pod))
        copy["metadata"]["name"] = name
        return copy

    pods = [
        named(svc, "svc-a-1"),
        named(svc, "svc-nvidia-device-plugin-2"),  # the device plugin by its name alone: whole
        named(svc, "svc-b-3"),
        named(svc, None),  # no name to read: keeps_whole cannot judge it, so it is kept whole
        named(stack, "nvdp-x-4"),  # the device plugin by its labels and image: whole
        named(stack, "gpu-feature-discovery-5"),  # same template, but GPU Feature Discovery serves no GPUs
        named(stack, "NVDP-FEATURE-DISCOVERY-6"),  # case aside, the same words
    ]
    expected = [keeps_whole(p) for p in pods]
    assert expected == [False, True, False, True, True, False, False]
    items = PodListDecoder()(_page(pods))["items"]
    assert [type(i) is dict for i in items] == expected
    assert all(isinstance(i, Projection) for i, whole in zip(items, expected, strict=True) if not whole)
    assert items[0]["spec"]["containers"] is items[2]["spec"]["containers"]  # the template's parts shared


def test_the_store_takes_a_watch_pod_the_decoder_judged_as_it_came_and_judges_the_others_itself() -> None:
    """A watch event's pod the decoder projected, or kept whole because keeps_whole said so, is stored as it came
    (`decoded`: not judged a second time); one it could only read whole (msgspec refused a field) is not `judged`, and
    the store projects it as it would any whole pod. Either way the store holds what a plain apply would."""
    from dragoman.fleet.store import FleetStore

    pods = [o for o in generate_envelope(**SMALL) if o["kind"] == "Pod"]
    odd = json.loads(json.dumps(next(p for p in pods if not keeps_whole(p))))
    odd["metadata"]["labels"] = {"x": "1", **odd["metadata"].get("labels", {})}
    odd["status"]["startTime"] = 7  # msgspec's pod type refuses it; the projection leaves it out anyway
    judged_store, plain_store = FleetStore(["Pod"]), FleetStore(["Pod"])
    for s in (judged_store, plain_store):
        s.serve_whole_from(object())
    decoder = judged_store.page_decoder("Pod")
    verdicts = []
    for pod in [*pods, odd]:
        raw = json.dumps(pod).encode()
        got = decoder.item(raw)
        verdicts.append(decoder.judged(got))
        judged_store.apply("Pod", "ADDED", got, decoded=verdicts[-1])
        plain_store.apply("Pod", "ADDED", json.loads(raw))
    assert all(verdicts[:-1]) and not verdicts[-1]
    held, plain = judged_store.objects("Pod"), plain_store.objects("Pod")
    assert held.keys() == plain.keys()
    for k in held:
        assert type(held[k]) is type(plain[k]) and held[k] == plain[k], k
    assert sum(isinstance(p, Projection) for p in held.values()) > len(held) / 2
    assert any(type(p) is dict for p in held.values())  # the GPU stack's and GPU pods: whole, as judged
