"""Workloads and DaemonSets in the simulator through kubernetes-asyncio: evicted pods come back, Jobs complete on the
clock, StatefulSet ordinals, DaemonSet placement and status counts."""

from __future__ import annotations

import asyncio

from kubernetes_asyncio import client

from tests.sim.test_controllers_gpu import Cluster, cluster_factory, eventually, gpu_node  # noqa: F401  (fixture)


def _pinned_template(app: str, node: str, annotations: dict | None = None) -> dict:
    # No scheduler is needed: the template pins the node, so the kubelet starts the pods.
    md = {"labels": {"app": app}}
    if annotations:
        md["annotations"] = annotations
    return {"metadata": md, "spec": {"nodeName": node, "containers": [{"name": "main", "image": "nginx:1.27"}]}}


def deployment(name: str, replicas: int, node: str) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": _pinned_template(name, node),
        },
    }


async def test_deployment_pods_come_back_after_eviction(cluster_factory):
    sim, k = await cluster_factory([gpu_node("node-1", "a"), deployment("web", 3, "node-1")])
    apps = k.apps

    async def available():
        d = await Cluster._json(await apps.read_namespaced_deployment("web", "default", _preload_content=False))
        st = d.get("status") or {}
        return (
            d
            if st.get("availableReplicas") == 3 and st.get("readyReplicas") == 3 and st.get("updatedReplicas") == 3
            else None
        )

    d = await eventually(available, what="3 available replicas")
    conds = {c["type"]: c for c in d["status"]["conditions"]}
    assert conds["Available"]["status"] == "True" and conds["Progressing"]["reason"] == "NewReplicaSetAvailable"

    rs_list = (await Cluster._json(await apps.list_namespaced_replica_set("default", _preload_content=False)))["items"]
    assert len(rs_list) == 1
    rs = rs_list[0]
    h = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{h}" and rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"

    pods = await k.pods("default", label_selector="app=web")
    assert len(pods) == 3 and all(p["metadata"]["labels"]["pod-template-hash"] == h for p in pods)
    victim = pods[0]["metadata"]["name"]
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": victim, "namespace": "default"}}
    await Cluster._json(await k.core.create_namespaced_pod_eviction(victim, "default", body, _preload_content=False))

    async def replaced():
        now = await k.pods("default", label_selector="app=web")
        names = {p["metadata"]["name"] for p in now}
        running = [p for p in now if p["status"].get("phase") == "Running"]
        return now if victim not in names and len(running) == 3 else None

    await eventually(replaced, what="a replacement pod")
    await eventually(available, what="the deployment available again")

    # Scaling down deletes pods; the status follows.
    await Cluster._json(
        await apps.patch_namespaced_deployment(
            "web",
            "default",
            {"spec": {"replicas": 1}},
            _content_type="application/merge-patch+json",
            _preload_content=False,
        )
    )

    async def one():
        d = await Cluster._json(await apps.read_namespaced_deployment("web", "default", _preload_content=False))
        return d if d["status"].get("replicas") == 1 and d["status"].get("availableReplicas") == 1 else None

    await eventually(one, what="scaled to one")


async def test_a_changed_template_rolls_to_a_new_replicaset(cluster_factory):
    sim, k = await cluster_factory([gpu_node("node-1", "a"), deployment("web", 2, "node-1")])
    await eventually(lambda: _running(k, "app=web", 2), what="two pods")
    d = await Cluster._json(await k.apps.read_namespaced_deployment("web", "default", _preload_content=False))
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    await Cluster._json(await k.apps.replace_namespaced_deployment("web", "default", d, _preload_content=False))

    async def rolled():
        pods = await k.pods("default", label_selector="app=web")
        images = {p["spec"]["containers"][0]["image"] for p in pods if p["status"].get("phase") == "Running"}
        return pods if images == {"nginx:1.28"} and len(pods) == 2 else None

    await eventually(rolled, what="pods of the new template")
    rs_list = (await Cluster._json(await k.apps.list_namespaced_replica_set("default", _preload_content=False)))[
        "items"
    ]
    assert sorted(r["spec"]["replicas"] for r in rs_list) == [0, 2]


async def test_job_runs_its_completions_on_the_simulated_clock(cluster_factory):
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "default"},
        "spec": {
            "completions": 2,
            "parallelism": 1,
            "template": _pinned_template("train", "node-1", {"sim.dragoman.io/run-seconds": "60"}),
        },
    }
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    sim, k = await cluster_factory([gpu_node("node-1", "a"), job])
    batch = client.BatchV1Api(k.api)

    async def status():
        return (await Cluster._json(await batch.read_namespaced_job("train", "default", _preload_content=False))).get(
            "status"
        ) or {}

    await eventually(lambda: _st(status, lambda s: s.get("active") == 1 and s.get("ready") == 1), what="one active pod")
    sim.clock.step(61)
    await eventually(
        lambda: _st(status, lambda s: s.get("succeeded") == 1 and s.get("active") == 1),
        what="first completion, second pod",
    )
    sim.clock.step(61)
    st = await eventually(lambda: _st(status, lambda s: s.get("succeeded") == 2), what="two completions")
    conds = {c["type"]: c["status"] for c in st["conditions"]}
    assert conds.get("Complete") == "True" and st.get("completionTime") and not st.get("active")
    pods = await k.pods("default", label_selector="batch.kubernetes.io/job-name=train")
    assert sorted(p["status"]["phase"] for p in pods) == ["Succeeded", "Succeeded"]


async def test_statefulset_pods_have_ordinal_names_and_come_back(cluster_factory):
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": _pinned_template("db", "node-1"),
        },
    }
    sim, k = await cluster_factory([gpu_node("node-1", "a"), sts])

    async def ready():
        s = await Cluster._json(await k.apps.read_namespaced_stateful_set("db", "default", _preload_content=False))
        return s if (s.get("status") or {}).get("readyReplicas") == 3 else None

    await eventually(ready, what="3 ready replicas")
    pods = await k.pods("default", label_selector="app=db")
    assert sorted(p["metadata"]["name"] for p in pods) == ["db-0", "db-1", "db-2"]
    uid = next(p["metadata"]["uid"] for p in pods if p["metadata"]["name"] == "db-1")
    await Cluster._json(await k.core.delete_namespaced_pod("db-1", "default", _preload_content=False))

    async def back():
        p = [p for p in await k.pods("default", label_selector="app=db") if p["metadata"]["name"] == "db-1"]
        return p and p[0]["metadata"]["uid"] != uid and p[0]["status"].get("phase") == "Running"

    await eventually(back, what="db-1 recreated")


async def test_daemonset_places_pods_by_selector_affinity_and_taints_with_status_counts(cluster_factory):
    nodes = [gpu_node(f"n{i}", "gpu" if i < 4 else "cpu") for i in range(5)]
    nodes[1]["spec"] = {
        "unschedulable": True,
        "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
    }
    nodes[2]["spec"] = {"taints": [{"key": "dedicated", "value": "other", "effect": "NoSchedule"}]}
    nodes[3]["metadata"]["labels"]["tier"] = "spot"
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {
                    "nodeSelector": {"pool": "gpu"},
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]},
                                    {
                                        "matchExpressions": [
                                            {"key": "tier", "operator": "In", "values": ["spot"]},
                                            {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["n3"]},
                                        ]
                                    },
                                ]
                            }
                        }
                    },
                    "containers": [{"name": "agent", "image": "busybox"}],
                },
            },
        },
    }
    sim, k = await cluster_factory(nodes + [ds])

    async def status():
        d = await k.ds("kube-system", "agent")
        return d if (d.get("status") or {}).get("numberReady") == 2 else None

    d = await eventually(status, what="two ready daemon pods")
    st = d["status"]
    # n0 fits; n1 is cordoned (daemon pods tolerate that); n2 has an untolerated taint; n3 fails both OR-ed terms; n4 is
    # not in the pool.
    assert (
        st["desiredNumberScheduled"],
        st["currentNumberScheduled"],
        st["numberAvailable"],
        st["updatedNumberScheduled"],
        st["numberMisscheduled"],
    ) == (2, 2, 2, 2, 0)
    assert st["observedGeneration"] == 1
    pods = await k.pods("kube-system", label_selector="app=agent")
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["n0", "n1"]
    tolerated = {t["key"] for t in pods[0]["spec"]["tolerations"]}
    assert "node.kubernetes.io/unschedulable" in tolerated and "node.kubernetes.io/not-ready" in tolerated
    assert pods[0]["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"

    # A node that stops matching loses its pod; one that starts matching gets one.
    await k.label_node("n0", {"tier": "batch"})
    await k.label_node("n4", {"pool": "gpu"})

    async def moved():
        p = await k.pods("kube-system", label_selector="app=agent")
        return sorted(x["spec"]["nodeName"] for x in p) == ["n1", "n4"] and all(
            x["status"].get("phase") == "Running" for x in p
        )

    await eventually(moved, what="pods following the labels")
    await eventually(status, what="status counts after the move")
    # A deleted daemon pod is replaced.
    pods = await k.pods("kube-system", label_selector="app=agent")
    await Cluster._json(
        await k.core.delete_namespaced_pod(pods[0]["metadata"]["name"], "kube-system", _preload_content=False)
    )

    async def replaced():
        p = await k.pods("kube-system", label_selector="app=agent")
        return len(p) == 2 and pods[0]["metadata"]["name"] not in {x["metadata"]["name"] for x in p}

    await eventually(replaced, what="the daemon pod replaced")
    await asyncio.sleep(0)


async def _running(k: Cluster, selector: str, n: int):
    pods = await k.pods("default", label_selector=selector)
    return len([p for p in pods if p["status"].get("phase") == "Running"]) == n


async def _st(getter, pred):
    s = await getter()
    return s if pred(s) else None


def test_pods_the_kubelet_keeps_rejecting_are_replaced_with_backoff_not_in_a_loop():
    from dragoman.sim.controllers import default_controllers
    from dragoman.sim.controllers.base import settle
    from dragoman.sim.server import Simulator

    # A node whose device plugin is gone (allocatable 0, capacity still 8): the kubelet rejects GPU pods.
    node = gpu_node("node-1", "a")
    node["status"]["capacity"]["nvidia.com/gpu"] = "8"
    node["status"]["allocatable"]["nvidia.com/gpu"] = "0"
    dep = deployment("trainer", 1, "node-1")
    dep["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "1"}}
    sim = Simulator([node, dep])
    controllers = default_controllers(sim, scheduler=False)
    settle(controllers)
    pods = sim.store.list("pods")
    assert len(pods) == 3 and {p["status"]["phase"] for p in pods} == {"Failed"}
    assert pods[0]["status"]["reason"] == "UnexpectedAdmissionError"
    settle(controllers)
    assert len(sim.store.list("pods")) == 3
    sim.clock.step(11)
    settle(controllers)
    assert len(sim.store.list("pods")) == 4
