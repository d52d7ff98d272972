"""kube-controller-manager's pod garbage collector (pkg/controller/podgc), the part a fleet meets: a pod bound to a
node that no longer exists (deleted, scaled away by an autoscaler) has no kubelet to end it, so once the node has been
missing for the quarantine the collector marks the pod Failed with DisruptionTarget (DeletionByPodGC, "PodGC: node no
longer exists") and force-deletes it — whether it was Running or already terminating.

Runs on the embedded simulator only; on the real control plane kube-controller-manager's own collector does this.
"""

from __future__ import annotations

from typing import Any

from dragoman.sim.controllers.base import (
    Controller,
    delete_pod,
    disruption_target,
    editable_status,
    nskey,
    write_status,
)

# gc_controller.go: the collector looks every 20 s; a node missing at one look is checked again 40 s later.
CHECK_SECONDS = 20.0
QUARANTINE_SECONDS = 40.0


class PodGC(Controller):
    """Keys: names of nodes that pods are bound to and that do not exist."""

    name = "pod-gc"

    def __init__(self, sim: Any) -> None:
        super().__init__(sim)
        self._missing_since: dict[str, float] = {}  # node → when the collector first found it missing

    def initial_keys(self):
        return sorted({n for n in self.cache.pods_by_node if self.cache.get("nodes", "", n) is None})

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        if resource == "nodes":
            name = obj["metadata"]["name"]
            if etype == "DELETED":
                if self.cache.pods_by_node.get(name):
                    self.enqueue(name)
            else:
                self._missing_since.pop(name, None)
        elif resource == "pods" and etype != "DELETED":
            node = (obj.get("spec") or {}).get("nodeName")
            if node and self.cache.get("nodes", "", node) is None and node not in self._missing_since:
                self.enqueue(node)

    def reconcile(self, key: Any) -> None:
        if self.cache.get("nodes", "", key) is not None:
            self._missing_since.pop(key, None)
            return
        pods = list(self.cache.pods_by_node.get(key, {}).values())
        if not pods:
            self._missing_since.pop(key, None)
            return
        now = self.clock.seconds()
        # Found missing at one of the collector's looks, deleted at the first look after the quarantine.
        since = self._missing_since.setdefault(key, now + CHECK_SECONDS / 2)
        due = since + QUARANTINE_SECONDS
        if now < due:
            self.enqueue_at(key, due)
            return
        for pod in pods:
            self._delete(pod)

    def _delete(self, pod: dict) -> None:
        """markFailedAndDeletePodWithCondition: phase Failed and the condition first (unless it ended already), then
        a delete with grace period 0."""
        ns, name = nskey(pod)
        if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            cur = editable_status(self.store, "pods", ns, name)
            if cur is None or cur["metadata"].get("uid") != pod["metadata"].get("uid"):
                return
            status = cur["status"]
            generation = int(cur["metadata"].get("generation") or 1)
            status["phase"] = "Failed"
            status["observedGeneration"] = generation
            conds = status.setdefault("conditions", [])
            dt = disruption_target(
                "DeletionByPodGC", "PodGC: node no longer exists", generation, self.clock.timestamp()
            )
            old = next((c for c in conds if c.get("type") == "DisruptionTarget"), None)
            if old is None:
                conds.append(dt)
            elif old.get("status") != "True":
                old.update(dt)
            else:
                old.update({k: dt[k] for k in ("reason", "message", "observedGeneration")})
            if not write_status(self.store, "pods", cur):
                return
        delete_pod(self.store, pod, grace_period_seconds=0)
