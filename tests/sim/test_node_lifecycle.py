"""Node heartbeats and kube-controller-manager's reactions on the embedded simulator (sim/controllers/nodelifecycle.py),
and how a deleted or evicted pod ends (the API server's DisruptionTarget, the kubelet's terminal status): the
behaviour the differential cases compare with the real v1.37.2 control plane, checked here without it."""

from __future__ import annotations

import asyncio

from dragoman.sim.controllers import default_controllers
from dragoman.sim.controllers.kubelet import MAX_WAIT_FOR_CONTAINER_RUNTIME, STOP_SECONDS
from dragoman.sim.controllers.nodelifecycle import GRACE_SECONDS, KUBELET_STOPPED, MONITOR_SECONDS, RUNTIME_DOWN
from dragoman.sim.controllers.podgc import CHECK_SECONDS, QUARANTINE_SECONDS

from tests.sim.test_controllers_gpu import Cluster, eventually, gpu_node
from tests.support.sim import api_client, running_simulator


def _pod(name: str, node: str, **spec) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"nodeName": node, "containers": [{"name": "app", "image": "busybox"}], **spec},
    }


async def _with(objects, body):
    async with running_simulator(objects=objects) as sim:
        for c in default_controllers(sim, scheduler=False):
            sim.add_controller(c)
        api = await api_client(sim)
        try:
            await body(sim, Cluster(api))
        finally:
            await api.close()


def _cond(obj: dict, ctype: str) -> dict:
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c.get("type") == ctype), {})


async def test_a_stopped_kubelet_makes_the_node_unknown_tainted_and_its_pods_not_ready_after_the_grace():
    tolerating = _pod(
        "tolerates-5s",
        "gpu-1",
        tolerations=[
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 5,
            }
        ],
    )

    async def body(sim, k):
        pod = lambda: sim.store.get("pods", "default", "tolerates-5s")  # noqa: E731
        await eventually(_async(lambda: (pod() or {}).get("status", {}).get("phase") == "Running"), what="running")
        lease = await eventually(
            _async(lambda: sim.store.get("leases.coordination.k8s.io", "kube-node-lease", "gpu-1"))
        )
        assert lease["spec"]["holderIdentity"] == "gpu-1" and lease["spec"]["leaseDurationSeconds"] == 40
        await k.core.patch_node(
            "gpu-1",
            {"metadata": {"annotations": {KUBELET_STOPPED: "true"}}},
            _content_type="application/merge-patch+json",
        )
        await asyncio.sleep(0.3)
        renewed = sim.store.get("leases.coordination.k8s.io", "kube-node-lease", "gpu-1")["spec"]["renewTime"]
        await _advance(sim, GRACE_SECONDS - 15)
        await asyncio.sleep(0.3)
        node = sim.store.get("nodes", None, "gpu-1")
        assert _cond(node, "Ready")["status"] == "True", "still within the grace period"
        assert sim.store.get("leases.coordination.k8s.io", "kube-node-lease", "gpu-1")["spec"]["renewTime"] == renewed

        def unknown():
            n = sim.store.get("nodes", None, "gpu-1")
            return n if _cond(n, "Ready").get("status") == "Unknown" and (n["spec"].get("taints") or []) else None

        for _ in range(8):  # past the grace period one monitor period at a time (at most 40 s more)
            await _advance(sim, MONITOR_SECONDS)
            await asyncio.sleep(0.1)
            if unknown():
                break
        node = await eventually(_async(unknown), what="Ready Unknown and tainted")
        ready = _cond(node, "Ready")
        assert (ready["reason"], ready["message"]) == ("NodeStatusUnknown", "Kubelet stopped posting node status.")
        assert {c["type"]: c["status"] for c in node["status"]["conditions"]}["MemoryPressure"] == "Unknown"
        assert sorted((t["key"], t["effect"], "timeAdded" in t) for t in node["spec"]["taints"]) == [
            ("node.kubernetes.io/unreachable", "NoExecute", True),
            ("node.kubernetes.io/unreachable", "NoSchedule", True),
        ]
        assert _cond(pod(), "Ready")["status"] == "False"
        events = {(e["reason"], e["message"]) for e in sim.store.list("events")}
        assert ("NodeNotReady", "Node gpu-1 status is now: NodeNotReady") in events
        assert ("NodeNotReady", "Node is not ready") in events
        assert not pod()["metadata"].get("deletionTimestamp"), "it tolerates the taint for 5 s"
        await _advance(sim, 6)
        gone = await eventually(_async(lambda: (pod() or {}).get("metadata", {}).get("deletionTimestamp") and pod()))
        dt = _cond(gone, "DisruptionTarget")
        assert (dt["status"], dt["reason"], dt["message"]) == (
            "True",
            "DeletionByTaintManager",
            "Taint manager: deleting due to NoExecute taint",
        )
        # The kubelet is down: nobody ends the containers, so the pod stays terminating and Running.
        assert gone["status"]["phase"] == "Running"

    await _with([gpu_node("gpu-1", "p"), tolerating], body)


async def test_an_evicted_pod_gets_disruption_target_then_its_terminal_status_before_it_goes():
    async def body(sim, k):
        get = lambda: sim.store.get("pods", "default", "web")  # noqa: E731
        await eventually(_async(lambda: (get() or {}).get("status", {}).get("phase") == "Running"), what="running")
        seen: list[dict] = []
        unsub = sim.store.subscribe(lambda et, res, obj, old: res == "pods" and seen.append((et, obj)))
        try:
            await k.core.create_namespaced_pod_eviction(
                "web", "default", {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web"}}
            )
            await eventually(_async(lambda: get() is None), what="the pod gone")
        finally:
            unsub()
        states = [
            (
                et,
                o["status"].get("phase"),
                bool(o["metadata"].get("deletionTimestamp")),
                _cond(o, "DisruptionTarget").get("reason"),
            )
            for et, o in seen
        ]
        assert states[0] == ("MODIFIED", "Running", False, "EvictionByEvictionAPI")
        assert ("MODIFIED", "Running", True, "EvictionByEvictionAPI") in states
        assert ("MODIFIED", "Failed", True, "EvictionByEvictionAPI") in states
        assert states[-1][0] == "DELETED"
        last = seen[-1][1]
        assert last["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 143
        assert _cond(last, "Ready")["reason"] == "PodFailed"

    await _with([gpu_node("gpu-1", "p"), _pod("web", "gpu-1")], body)


async def test_a_deleted_pods_kubelet_first_writes_its_status_at_the_new_generation_then_stops_it():
    """A graceful deletion bumps the pod's generation (rest.BeforeDelete); a kubelet v1.37.2 writes the status of the
    deleted pod (its own conditions and the status at the new observedGeneration, containers still running) before it
    stops the containers (SyncTerminatingPod); the eviction's DisruptionTarget stays as the API server wrote it
    (status_manager mergePodStatus keeps other writers' conditions)."""
    slow = _pod("slow", "gpu-1")
    slow["metadata"]["annotations"] = {STOP_SECONDS: "3"}

    async def body(sim, k):
        get = lambda: sim.store.get("pods", "default", "slow")  # noqa: E731
        await eventually(_async(lambda: (get() or {}).get("status", {}).get("phase") == "Running"), what="running")
        await k.core.create_namespaced_pod_eviction(
            "slow", "default", {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "slow"}}
        )

        def seen_by_kubelet():
            p = get()
            return p if p and p["status"].get("observedGeneration") == p["metadata"]["generation"] == 2 else None

        p = await eventually(_async(seen_by_kubelet), what="the kubelet's write of the deleted pod")
        assert p["metadata"].get("deletionTimestamp") and p["status"]["phase"] == "Running"
        assert "running" in p["status"]["containerStatuses"][0]["state"], "its containers take 3 s to stop"
        generations = {c["type"]: c.get("observedGeneration") for c in p["status"]["conditions"]}
        # The eviction API's condition carries no observedGeneration (pkg/registry/core/pod/storage/eviction.go), and
        # the kubelet leaves it so.
        assert "DisruptionTarget" in generations and generations.pop("DisruptionTarget") is None
        assert set(generations.values()) == {2}, generations
        sim.clock.step(3)
        await eventually(_async(lambda: get() is None), what="the pod gone once its containers stopped")

    await _with([gpu_node("gpu-1", "p"), slow], body)


async def _advance(sim, seconds: float) -> None:
    """Move the simulated clock in monitor-period steps, letting the controllers run between them (a jump larger
    than a few periods restarts the node lifecycle controller's observation, as it should)."""
    while seconds > 0:
        step = min(seconds, MONITOR_SECONDS)
        sim.clock.step(step)
        seconds -= step
        await asyncio.sleep(0.05)


def _async(fn):
    async def check():
        return fn()

    return check


async def test_a_kubelet_back_makes_the_node_ready_untainted_and_ends_the_pod_deleted_while_it_was_down():
    async def body(sim, k):
        pod = lambda name: sim.store.get("pods", "default", name)  # noqa: E731
        for name in ("stays", "deleted"):
            await eventually(_async(lambda n=name: (pod(n) or {}).get("status", {}).get("phase") == "Running"))
        await k.core.patch_node("gpu-1", {"metadata": {"annotations": {KUBELET_STOPPED: "true"}}}, _content_type=MERGE)
        await asyncio.sleep(0.3)
        await _advance(sim, GRACE_SECONDS + 3 * MONITOR_SECONDS)
        node = await eventually(_async(lambda: _unknown(sim)), what="Ready Unknown")
        assert {t["key"] for t in node["spec"]["taints"]} == {"node.kubernetes.io/unreachable"}
        assert _cond(pod("stays"), "Ready")["status"] == "False"

        # A pod deleted while its kubelet is down: nobody confirms it, so it stays terminating past its grace.
        await k.core.delete_namespaced_pod("deleted", "default", grace_period_seconds=5)
        await _advance(sim, 30)
        await asyncio.sleep(0.3)
        assert pod("deleted")["metadata"].get("deletionTimestamp"), "kept while no kubelet confirms"

        await k.core.patch_node("gpu-1", {"metadata": {"annotations": {KUBELET_STOPPED: None}}}, _content_type=MERGE)

        def recovered():
            n = sim.store.get("nodes", None, "gpu-1")
            return n if _cond(n, "Ready").get("status") == "True" and not n["spec"].get("taints") else None

        node = await eventually(_async(recovered), what="Ready and untainted")
        assert {c["type"]: c["status"] for c in node["status"]["conditions"]} == {
            "MemoryPressure": "False",
            "DiskPressure": "False",
            "PIDPressure": "False",
            "Ready": "True",
        }
        assert _cond(node, "Ready")["reason"] == "KubeletReady"
        await eventually(_async(lambda: _cond(pod("stays"), "Ready").get("status") == "True"), what="pod Ready")
        await eventually(_async(lambda: pod("deleted") is None), what="the deleted pod gone once confirmed")
        events = {(e["reason"], e["message"]) for e in sim.store.list("events")}
        assert ("NodeReady", "Node gpu-1 status is now: NodeReady") in events
        assert ("NodeHasSufficientMemory", "Node gpu-1 status is now: NodeHasSufficientMemory") in events

    await _with([gpu_node("gpu-1", "p"), _pod("stays", "gpu-1"), _pod("deleted", "gpu-1")], body)


MERGE = "application/merge-patch+json"


def _unknown(sim):
    n = sim.store.get("nodes", None, "gpu-1")
    return n if _cond(n, "Ready").get("status") == "Unknown" and (n["spec"].get("taints") or []) else None


async def test_a_runtime_down_makes_the_kubelet_post_not_ready_and_the_node_tainted_not_ready_until_it_is_back():
    async def body(sim, k):
        pod = lambda: sim.store.get("pods", "default", "web")  # noqa: E731
        await eventually(_async(lambda: (pod() or {}).get("status", {}).get("phase") == "Running"), what="running")
        await k.core.patch_node("gpu-1", {"metadata": {"annotations": {RUNTIME_DOWN: "true"}}}, _content_type=MERGE)

        def tainted():
            n = sim.store.get("nodes", None, "gpu-1")
            keys = {(t["key"], t["effect"], "timeAdded" in t) for t in n["spec"].get("taints") or ()}
            return n if ("node.kubernetes.io/not-ready", "NoExecute", True) in keys else None

        # The kubelet says so once its last good runtime check is 30 s old (maxWaitForContainerRuntime): not before.
        await _advance(sim, MAX_WAIT_FOR_CONTAINER_RUNTIME - MONITOR_SECONDS)
        await asyncio.sleep(0.2)
        assert _cond(sim.store.get("nodes", None, "gpu-1"), "Ready")["status"] == "True"
        await _advance(sim, 2 * MONITOR_SECONDS)
        node = await eventually(_async(tainted), what="tainted not-ready")
        ready = _cond(node, "Ready")
        assert (ready["status"], ready["reason"], ready["message"]) == (
            "False",
            "KubeletNotReady",
            "container runtime is down",
        )
        assert sorted((t["key"], t["effect"]) for t in node["spec"]["taints"]) == [
            ("node.kubernetes.io/not-ready", "NoExecute"),
            ("node.kubernetes.io/not-ready", "NoSchedule"),
        ]
        # The kubelet posted NotReady itself: the controller neither records its own event nor marks the pods.
        assert _cond(pod(), "Ready")["status"] == "True"
        sources = {(e["reason"], e["source"]["component"]) for e in sim.store.list("events")}
        assert ("NodeNotReady", "kubelet") in sources and ("NodeNotReady", "node-controller") not in sources

        await k.core.patch_node("gpu-1", {"metadata": {"annotations": {RUNTIME_DOWN: None}}}, _content_type=MERGE)
        await _advance(sim, MONITOR_SECONDS)

        def back():
            n = sim.store.get("nodes", None, "gpu-1")
            return n if _cond(n, "Ready").get("status") == "True" and not n["spec"].get("taints") else None

        await eventually(_async(back), what="Ready and untainted")

    await _with([gpu_node("gpu-1", "p"), _pod("web", "gpu-1")], body)


async def test_pods_of_a_deleted_node_are_failed_and_removed_by_the_pod_collector_after_its_quarantine():
    async def body(sim, k):
        pod = lambda: sim.store.get("pods", "default", "web")  # noqa: E731
        await eventually(_async(lambda: (pod() or {}).get("status", {}).get("phase") == "Running"), what="running")
        seen: list[dict] = []
        unsub = sim.store.subscribe(lambda et, res, obj, old: res == "pods" and seen.append((et, obj)))
        try:
            await k.core.delete_node("gpu-1")
            await _advance(sim, QUARANTINE_SECONDS - 5)
            await asyncio.sleep(0.3)
            assert pod() is not None and pod()["status"]["phase"] == "Running", "kept through the quarantine"
            await _advance(sim, CHECK_SECONDS + 5)
            await eventually(_async(lambda: pod() is None), what="the orphan removed")
        finally:
            unsub()
        failed = next(o for et, o in seen if et == "MODIFIED" and o["status"].get("phase") == "Failed")
        dt = _cond(failed, "DisruptionTarget")
        assert (dt["status"], dt["reason"], dt["message"]) == (
            "True",
            "DeletionByPodGC",
            "PodGC: node no longer exists",
        )
        assert seen[-1][0] == "DELETED"

    await _with([gpu_node("gpu-1", "p"), _pod("web", "gpu-1")], body)


async def test_the_kubelet_records_a_cordon_and_an_uncordon_as_node_events_and_a_cordon_it_already_saw_as_none():
    """kubelet v1.37.2's recordNodeSchedulableEvent: its status sync compares spec.unschedulable with what it last saw
    and records NodeNotSchedulable / NodeSchedulable on a change. A node cordoned before the simulator started has had
    its kubelet all along: no event for it."""

    def schedulable_events(node: str) -> list:
        return sorted(
            (e["reason"], e["message"], e["source"].get("component"), e["count"])
            for e in sim_ref[0].store.list("events")
            if e["involvedObject"]["name"] == node and "Schedulable" in e["reason"]
        )

    sim_ref: list = []
    cordoned = gpu_node("gpu-2", "p")
    cordoned["spec"] = {"unschedulable": True}

    async def body(sim, k):
        sim_ref.append(sim)
        await k.core.patch_node("gpu-1", {"spec": {"unschedulable": True}}, _content_type=MERGE)
        want = [("NodeNotSchedulable", "Node gpu-1 status is now: NodeNotSchedulable", "kubelet", 1)]
        await eventually(_async(lambda: schedulable_events("gpu-1") == want), what="NodeNotSchedulable")
        await k.core.patch_node("gpu-1", {"spec": {"unschedulable": None}}, _content_type=MERGE)
        want.append(("NodeSchedulable", "Node gpu-1 status is now: NodeSchedulable", "kubelet", 1))
        await eventually(_async(lambda: schedulable_events("gpu-1") == sorted(want)), what="NodeSchedulable")
        # A change of something else (a label) is no second event.
        await k.core.patch_node("gpu-1", {"metadata": {"labels": {"x": "y"}}}, _content_type=MERGE)
        await asyncio.sleep(0.3)
        assert schedulable_events("gpu-1") == sorted(want)
        assert schedulable_events("gpu-2") == []

    await _with([gpu_node("gpu-1", "p"), cordoned], body)
