"""Node heartbeats and what the control plane makes of them: each kubelet's Lease in kube-node-lease (renewed while
its kubelet runs; `sim.dragoman.io/kubelet-stopped: "true"` on a Node stops it, as a powered-off machine), and the
node lifecycle controller of kube-controller-manager v1.37.2 (pkg/controller/nodelifecycle) that turns a silent
node's conditions Unknown, taints it unreachable, marks its pods not ready; the taint eviction controller then
deletes the pods that do not tolerate the NoExecute taint (for as long as they say they do).

NodeLeases is a node agent (it runs against the real control plane too); NodeLifecycle and TaintEviction run on the
embedded simulator only, where no kube-controller-manager does.
"""

from __future__ import annotations

import logging
from typing import Any

from dragoman.fleet.k8s import tolerates
from dragoman.fleet.k8s.times import format_micro_time
from dragoman.sim.controllers.base import (
    Controller,
    Events,
    delete_pod,
    disruption_target,
    editable_status,
    nskey,
    write_status,
)
from dragoman.sim.store import ApiError

log = logging.getLogger("dragoman.sim.controllers")

KUBELET_STOPPED = "sim.dragoman.io/kubelet-stopped"  # "true": the node's kubelet is down (no lease, no status)
LEASE_NAMESPACE = "kube-node-lease"
LEASES = "leases.coordination.k8s.io"
# The kubelet's defaults: renew every 10 s a lease of 40 s (nodeLeaseDurationSeconds).
LEASE_SECONDS = 40
RENEW_SECONDS = 10.0
# The lease controller tries a failed renewal this many times at once, then waits for its next tick (maxUpdateRetries).
MAX_UPDATE_RETRIES = 5
# kube-controller-manager's defaults (nodelifecycle config v1alpha1): --node-monitor-period 5 s,
# --node-monitor-grace-period 50 s.
MONITOR_SECONDS = 5.0
GRACE_SECONDS = 50.0
UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
# The taints the node lifecycle controller puts for a node's Ready condition (Unknown, False) and takes off when Ready.
CONDITION_TAINTS = (UNREACHABLE, NOT_READY_TAINT)
CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


# "true": the node's container runtime is down; its kubelet runs (Lease renewed, status posted) and reports Ready=False.
RUNTIME_DOWN = "sim.dragoman.io/container-runtime-down"


def kubelet_stopped(node: dict | None) -> bool:
    return ((node or {}).get("metadata", {}).get("annotations") or {}).get(KUBELET_STOPPED) == "true"


def runtime_down(node: dict | None) -> bool:
    return ((node or {}).get("metadata", {}).get("annotations") or {}).get(RUNTIME_DOWN) == "true"


class NodeLeases(Controller):
    """Each node's heartbeat Lease, renewed as a kubelet renews it. Keys: node names.

    Started over a running fleet (the simulator restarted on its own snapshot, agents restarted beside a control
    plane), each heartbeat resumes where its Lease shows it: a Lease this node renewed less than a period ago is next
    renewed when that period is up, not at once. The simulator's restart is not its kubelets' restart, and renewing
    every Lease in the first instant was one write per node on every restart (5,000 at the benchmark's fleet), all at
    the same moment, where a running fleet's heartbeats are spread over the period."""

    name = "node-leases"

    def __init__(self, sim: Any) -> None:
        super().__init__(sim)
        self._resumed: set[str] = set()  # the nodes whose first look (resume a fresh Lease's period) is done

    def initial_keys(self):
        return [n["metadata"]["name"] for n in self.cache.all("nodes")]

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        if resource == "nodes" and etype != "DELETED" and (old is None or kubelet_stopped(old) != kubelet_stopped(obj)):
            self.enqueue(obj["metadata"]["name"])

    def reconcile(self, key: Any) -> None:
        node = self.cache.get("nodes", "", key)
        if node is None or kubelet_stopped(node):
            return
        if key not in self._resumed:
            self._resumed.add(key)
            due = self._fresh_until(key)
            if due is not None:
                self.enqueue_at(key, due)
                return
        # The next renewal is due a period from now whatever this one does (the lease controller's JitterUntil
        # tick): a failed renewal is tried again at the next tick, never after a growing backoff that could outlast
        # the node lifecycle controller's grace period.
        self.enqueue_after(key, RENEW_SECONDS)
        for attempt in range(MAX_UPDATE_RETRIES):
            try:
                self._renew(key, node)
                return
            except ApiError as exc:
                if attempt == MAX_UPDATE_RETRIES - 1 or exc.code == 404:
                    log.debug("node %s: lease not renewed: %s", key, exc)
                    return

    def _fresh_until(self, key: str) -> float | None:
        """When this node's Lease, renewed by it less than a period ago, is next due (None: renew now). A renewTime
        ahead of the clock counts as now, so a Lease from the future cannot silence the heartbeat."""
        lease = self.store.get_ref(LEASES, LEASE_NAMESPACE, key)
        spec = (lease or {}).get("spec") or {}
        if spec.get("holderIdentity") != key or spec.get("leaseDurationSeconds") != LEASE_SECONDS:
            return None
        renewed = self.clock.seconds_at(spec.get("renewTime"))
        if renewed is None:
            return None
        due = min(renewed, self.clock.seconds()) + RENEW_SECONDS
        return due if due > self.clock.seconds() else None

    def _renew(self, key: str, node: dict) -> None:
        now = format_micro_time(self.clock.now())
        lease = self.store.get(LEASES, LEASE_NAMESPACE, key)
        spec = {"holderIdentity": key, "leaseDurationSeconds": LEASE_SECONDS, "renewTime": now}
        if lease is None:
            owner = {"apiVersion": "v1", "kind": "Node", "name": key, "uid": node["metadata"].get("uid", "")}
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": key, "namespace": LEASE_NAMESPACE, "ownerReferences": [owner]},
                "spec": spec,
            }
            try:
                self.store.create(LEASES, body)
            except ApiError as exc:
                if exc.code != 409:
                    raise
        else:
            lease["spec"] = {**(lease.get("spec") or {}), **spec}
            self.store.update(LEASES, lease)


class NodeLifecycle(Controller):
    """monitorNodeHealth: a node whose Lease has not been renewed (as this controller observed it) for the grace
    period gets its conditions Unknown ("Kubelet stopped posting node status."), a NodeNotReady event, its pods'
    Ready=False (each with a NodeNotReady event), and the unreachable taints (NoSchedule, then NoExecute with
    timeAdded). Keys: node names, checked every monitor period."""

    name = "node-lifecycle"

    def __init__(self, sim: Any) -> None:
        super().__init__(sim)
        self.events = Events(self.store, self.clock, "node-controller")
        # node → (the lease renewTime last seen, when it was seen on this clock): the probe timestamp.
        self._probe: dict[str, tuple[str | None, float]] = {}
        self._last_pass: dict[str, float] = {}  # node → when this controller last looked at it
        self._known: set[str] = set()  # knownNodeSet: the nodes this controller has registered

    def initial_keys(self):
        # The nodes there at start are known already: the simulator loads a running cluster, whose controller
        # registered them long ago (a real kube-controller-manager starting fresh reports each as RegisteredNode).
        self._known = {n["metadata"]["name"] for n in self.cache.all("nodes")}
        return sorted(self._known)

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        if resource != "nodes":
            return
        name = obj["metadata"]["name"]
        if etype == "DELETED":
            self._probe.pop(name, None)
            self._last_pass.pop(name, None)
            if name in self._known:
                self._known.discard(name)
                self.events.emit(
                    obj, "Normal", "RemovingNode", f"Node {name} event: Removing Node {name} from Controller"
                )
        elif name not in self._known:
            self._known.add(name)
            self.events.emit(
                obj, "Normal", "RegisteredNode", f"Node {name} event: Registered Node {name} in Controller"
            )
            self.enqueue(name)
        elif _ready(obj) != _ready(old):
            # Its kubelet posted another Ready: the node update re-taints it at once (doNoScheduleTaintingPass), the
            # next monitor pass the NoExecute way (the tainting queue, or markNodeAsReachable when Ready).
            self.enqueue(name)

    def reconcile(self, key: Any) -> None:
        node = self.cache.get("nodes", "", key)
        if node is None:
            self._probe.pop(key, None)
            return
        self.enqueue_after(key, MONITOR_SECONDS)
        now = self.clock.seconds()
        lease = self.store.get_ref(LEASES, LEASE_NAMESPACE, key)
        renew = ((lease or {}).get("spec") or {}).get("renewTime")
        seen = self._probe.get(key)
        last, self._last_pass[key] = self._last_pass.get(key), now
        if last is not None and now - last > 3 * MONITOR_SECONDS:
            # The simulated clock jumped (a test or a fast-forward): the renewals a running kubelet made in that
            # interval were never observed, so observation restarts now rather than calling every node silent.
            seen = None
        if seen is None or seen[0] != renew:
            # The probe is when this controller saw a new renewal, not the renewTime itself (clocks may differ).
            self._probe[key] = (renew, now)
        elif now - seen[1] > GRACE_SECONDS:
            self._mark_unknown(node)
            return
        ready = _ready(node)
        if ready == "True":
            self._mark_reachable(node)
        elif ready == "False":
            # The kubelet posts NotReady (it runs: its Lease is renewed). The controller taints the node not-ready;
            # it records no NodeNotReady event and leaves the pods' Ready alone — those come only with a transition
            # it makes itself (monitorNodeHealth: current != True while observed was True).
            self._taint(node["metadata"]["name"], NOT_READY_TAINT)

    def _mark_unknown(self, node: dict) -> None:
        name = node["metadata"]["name"]
        cur = editable_status(self.store, "nodes", None, name)
        if cur is None:
            return
        conds = cur["status"].setdefault("conditions", [])
        was_ready = next((c.get("status") for c in conds if c.get("type") == "Ready"), None)
        changed = False
        stamp = self.clock.timestamp()
        for ctype in CONDITIONS:
            c = next((c for c in conds if c.get("type") == ctype), None)
            if c is None:
                conds.append(
                    {
                        "type": ctype,
                        "status": "Unknown",
                        "reason": "NodeStatusNeverUpdated",
                        "message": "Kubelet never posted node status.",
                        "lastHeartbeatTime": node["metadata"].get("creationTimestamp"),
                        "lastTransitionTime": stamp,
                    }
                )
                changed = True
            elif c.get("status") != "Unknown":
                c.update(
                    status="Unknown",
                    reason="NodeStatusUnknown",
                    message="Kubelet stopped posting node status.",
                    lastTransitionTime=stamp,
                )
                changed = True
        if changed:
            self.store.update("nodes", cur, subresource="status")
        if was_ready == "True":
            self.events.emit(node, "Normal", "NodeNotReady", f"Node {name} status is now: NodeNotReady")
            self._mark_pods_not_ready(name)
        self._taint(name, UNREACHABLE)

    def _mark_pods_not_ready(self, node_name: str) -> None:
        """controllerutil.MarkPodsNotReady: Ready=False on every pod of the node (UpdatePodCondition keeps the
        reason and message), and a Warning NodeNotReady event for each it changed."""
        for pod in list(self.cache.pods_by_node.get(node_name, {}).values()):
            ns, pname = nskey(pod)
            cur = editable_status(self.store, "pods", ns, pname)
            if cur is None:
                continue
            ready = next((c for c in cur["status"].get("conditions") or () if c.get("type") == "Ready"), None)
            if ready is None or ready.get("status") == "False":
                continue
            ready["status"] = "False"
            ready["lastTransitionTime"] = self.clock.timestamp()
            if not write_status(self.store, "pods", cur):
                continue
            self.events.emit(pod, "Warning", "NodeNotReady", "Node is not ready")

    def _taint(self, name: str, key: str) -> None:
        """The NoSchedule and NoExecute taints of `key` (unreachable for Ready Unknown, not-ready for False), each
        with its timeAdded; the other key's taints go (SwapNodeControllerTaint: the two are mutually exclusive)."""
        node = self.store.get("nodes", None, name)
        if node is None:
            return
        old = list((node.get("spec") or {}).get("taints") or [])
        taints = [t for t in old if t.get("key") not in CONDITION_TAINTS or t.get("key") == key]
        have = {(t.get("key"), t.get("effect")) for t in taints}
        for effect in ("NoSchedule", "NoExecute"):
            if (key, effect) not in have:
                taints.append({"key": key, "effect": effect, "timeAdded": self.clock.timestamp()})
        if taints == old:
            return
        node.setdefault("spec", {})["taints"] = taints
        self.store.update("nodes", node)

    def _mark_reachable(self, node: dict) -> None:
        """A Ready node loses the taints this controller put for its conditions (unreachable, not-ready)."""
        if not _condition_taints(node):
            return
        cur = self.store.get("nodes", None, node["metadata"]["name"])
        if cur is None:
            return
        taints = [t for t in (cur.get("spec") or {}).get("taints") or () if t.get("key") not in CONDITION_TAINTS]
        if taints:
            cur["spec"]["taints"] = taints
        else:
            cur["spec"].pop("taints", None)  # an empty list is dropped on the wire (omitempty)
        self.store.update("nodes", cur)


def _ready(node: dict | None) -> str | None:
    return next(
        (
            c.get("status")
            for c in ((node or {}).get("status") or {}).get("conditions") or ()
            if c.get("type") == "Ready"
        ),
        None,
    )


def _condition_taints(node: dict) -> list[dict]:
    return [t for t in (node.get("spec") or {}).get("taints") or () if t.get("key") in CONDITION_TAINTS]


class TaintEviction(Controller):
    """The taint eviction controller: a pod on a node with a NoExecute taint it does not tolerate is deleted at once;
    one that tolerates it for tolerationSeconds, that long after the taint was added. Before the DELETE the pod gets
    DisruptionTarget=True (DeletionByTaintManager) and a TaintManagerEviction event."""

    name = "taint-eviction"

    def __init__(self, sim: Any) -> None:
        super().__init__(sim)
        self.events = Events(self.store, self.clock, "taint-eviction-controller")

    def initial_keys(self):
        return [n["metadata"]["name"] for n in self.cache.all("nodes") if _no_execute(n)]

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        if resource == "nodes" and etype != "DELETED" and _no_execute(obj):
            self.enqueue(obj["metadata"]["name"])
        elif resource == "pods" and etype != "DELETED" and obj.get("spec", {}).get("nodeName"):
            if old is None or not (old.get("spec") or {}).get("nodeName"):  # a pod bound to a tainted node
                self.enqueue(obj["spec"]["nodeName"])

    def reconcile(self, key: Any) -> None:
        node = self.cache.get("nodes", "", key)
        if node is None:
            return
        taints = _no_execute(node)
        if not taints:
            return
        now = self.clock.seconds()
        for pod in list(self.cache.pods_by_node.get(key, {}).values()):
            if pod["metadata"].get("deletionTimestamp"):
                continue
            due = None
            tolerations = (pod.get("spec") or {}).get("tolerations") or ()
            for t in taints:
                # getMinTolerationTime: an untolerated taint evicts now; else the shortest tolerationSeconds of the
                # tolerations that match (none: tolerated for ever), counted from the taint's timeAdded.
                tols = [tol for tol in tolerations if tolerates(tol, t)]
                if not tols:
                    due = now
                    break
                limits = [
                    max(0, int(tol["tolerationSeconds"])) for tol in tols if tol.get("tolerationSeconds") is not None
                ]
                if not limits:
                    continue
                # A taint without timeAdded (or not a time) counts from now.
                added = self.clock.seconds_at(t.get("timeAdded"))
                at = (now if added is None else added) + min(limits)
                due = at if due is None else min(due, at)
            if due is None:
                continue
            if due > now:
                self.enqueue_at(key, due)
                continue
            self._evict(pod)

    def _evict(self, pod: dict) -> None:
        """addConditionAndDeletePod: the DisruptionTarget condition (unless the pod has one), an event, then a delete
        with the pod's own grace period."""
        ns, name = nskey(pod)
        cur = editable_status(self.store, "pods", ns, name)
        if cur is None:
            return
        conds = cur["status"].setdefault("conditions", [])
        if not any(c.get("type") == "DisruptionTarget" for c in conds):
            generation = int(pod["metadata"].get("generation") or 1)
            conds.append(
                disruption_target(
                    "DeletionByTaintManager",
                    "Taint manager: deleting due to NoExecute taint",
                    generation,
                    self.clock.timestamp(),
                )
            )
            if not write_status(self.store, "pods", cur):
                return
        self.events.emit(pod, "Normal", "TaintManagerEviction", f"Marking for deletion Pod {ns}/{name}")
        delete_pod(self.store, pod)


def _no_execute(node: dict) -> list[dict]:
    return [t for t in (node.get("spec") or {}).get("taints") or () if t.get("effect") == "NoExecute"]
