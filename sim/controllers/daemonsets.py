"""The DaemonSet controller: one daemon pod per eligible node (nodeSelector, required node affinity, taints), rolling
updates, and status counts."""

from __future__ import annotations

import copy
import json
from typing import Any

from dragoman.fleet.k8s import DAEMONSET_TOLERATIONS, nodeaffinity, tolerations
from dragoman.sim.controllers.base import (
    Controller,
    controller_ref,
    delete_pod,
    editable_status,
    pod_active,
    pod_phase,
    pod_ready,
    short_hash,
)

DS = "daemonsets.apps"

# What the DaemonSet controller adds to every daemon pod: one home with the client (fleet/k8s/).
DAEMON_TOLERATIONS = DAEMONSET_TOLERATIONS
NETWORK_TOLERATION = {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}


def template_hash(ds: dict) -> str:
    return short_hash(json.dumps((ds.get("spec") or {}).get("template") or {}, sort_keys=True), 10)


def daemon_tolerations(spec: dict) -> list[dict]:
    tols = list(spec.get("tolerations") or [])
    extra = list(DAEMON_TOLERATIONS) + ([NETWORK_TOLERATION] if spec.get("hostNetwork") else [])
    for t in extra:
        if not any(x.get("key") == t["key"] and x.get("effect") == t["effect"] for x in tols):
            tols.append(dict(t))
    return tols


class _Compiled:
    """One DaemonSet's eligibility rules, compiled once per generation."""

    __slots__ = ("uid", "generation", "fits", "tolerations", "hash")

    def __init__(self, ds: dict) -> None:
        spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
        self.uid = ds["metadata"].get("uid", "")
        self.generation = ds["metadata"].get("generation")
        self.fits = nodeaffinity.compile_node_filter(spec)
        self.tolerations = daemon_tolerations(spec)
        self.hash = template_hash(ds)

    def should_run(self, node: dict) -> tuple[bool, bool]:
        """(should run a new pod here, may keep a running one) — NodeShouldRunDaemonPod."""
        if not self.fits(node):
            return False, False
        taints = (node.get("spec") or {}).get("taints") or []
        if tolerations.first_untolerated_taint(taints, self.tolerations, ("NoExecute",)) is not None:
            return False, False
        if tolerations.first_untolerated_taint(taints, self.tolerations, ("NoSchedule",)) is not None:
            return False, True
        return True, True


class DaemonSets(Controller):
    """Keys: ("ds", ns, name) a full sync, ("node", name) every DaemonSet on one node, ("one", ns, name, node),
    ("status", ns, name) the counts and the rolling update."""

    name = "daemonset-controller"
    field_manager = "kube-controller-manager"

    def __init__(self, sim: Any) -> None:
        super().__init__(sim)
        self._compiled: dict[tuple[str, str], _Compiled] = {}
        self._should: dict[tuple[str, str], set[str]] = {}
        self._by_uid: dict[str, tuple[str, str]] = {}
        self._pod_summaries: dict[str, dict[tuple[str, str], tuple]] = {}

    def initial_keys(self):
        for ds in list(self.cache.all(DS)):
            md = ds["metadata"]
            self._by_uid[md.get("uid", "")] = (md.get("namespace", ""), md["name"])
            yield ("ds", md.get("namespace", ""), md["name"])

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        if resource == DS:
            md = obj["metadata"]
            key = (md.get("namespace", ""), md["name"])
            if etype == "DELETED":
                self._compiled.pop(key, None)
                self._should.pop(key, None)
                self._by_uid.pop(md.get("uid", ""), None)
                self._pod_summaries.pop(md.get("uid", ""), None)
                return
            self._by_uid[md.get("uid", "")] = key
            if (
                old is None
                or old.get("spec") != obj.get("spec")
                or old["metadata"].get("generation") != md.get("generation")
            ):
                self.enqueue(("ds", *key))
            else:
                self.enqueue(("status", *key))
        elif resource == "nodes":
            name = obj["metadata"]["name"]
            if etype == "DELETED":
                for should in self._should.values():
                    should.discard(name)
                for key in list(self._should):
                    self.enqueue(("status", *key))
                return
            if (
                old is not None
                and old["metadata"].get("labels") == obj["metadata"].get("labels")
                and (old.get("spec") or {}).get("taints") == (obj.get("spec") or {}).get("taints")
            ):
                return
            self.enqueue(("node", name))
        elif resource == "pods":
            ref = controller_ref(obj)
            if not ref or ref.get("kind") != "DaemonSet":
                return
            key = self._by_uid.get(ref.get("uid", ""))
            if key is None:
                return
            table = self._pod_summaries.get(ref.get("uid", ""))
            if table is not None:
                if etype == "DELETED":
                    table.pop((obj["metadata"].get("namespace", ""), obj["metadata"]["name"]), None)
                else:
                    table[(obj["metadata"].get("namespace", ""), obj["metadata"]["name"])] = _summary(obj)
            node = obj.get("spec", {}).get("nodeName")
            if node:
                self.enqueue(("one", *key, node))
            self.enqueue(("status", *key))

    # -------------------------------------------------------------- reconcile

    def reconcile(self, key) -> None:
        kind = key[0]
        if kind == "node":
            node = self.cache.get("nodes", "", key[1])
            if node is None:
                return
            for ds in list(self.cache.all(DS)):
                self._sync_node(ds, node)
                self.enqueue(("status", ds["metadata"].get("namespace", ""), ds["metadata"]["name"]))
            return
        ds = self.cache.get(DS, key[1], key[2])
        if ds is None:
            return
        if kind == "ds":
            self._compiled.pop((key[1], key[2]), None)
            comp = self._compile(ds)
            self._should[(key[1], key[2])] = set()
            for node in list(self.cache.all("nodes")):
                self._sync_node(ds, node, comp)
            # Pods on nodes that no longer exist are not this controller's (pod GC's), but pods on nodes that do
            # exist and no longer fit were handled above.
            self.enqueue(("status", key[1], key[2]))
        elif kind == "one":
            node = self.cache.get("nodes", "", key[3])
            if node is not None:
                self._sync_node(ds, node)
        elif kind == "status":
            self._roll(ds)
            self._status(ds)

    def _compile(self, ds: dict) -> _Compiled:
        key = (ds["metadata"].get("namespace", ""), ds["metadata"]["name"])
        comp = self._compiled.get(key)
        if comp is None or comp.uid != ds["metadata"].get("uid") or comp.generation != ds["metadata"].get("generation"):
            comp = self._compiled[key] = _Compiled(ds)
        return comp

    def _pods_on(self, ds: dict, node_name: str) -> list[dict]:
        uid = ds["metadata"].get("uid")
        out = []
        for pod in self.cache.pods_by_node.get(node_name, {}).values():
            ref = controller_ref(pod)
            if ref and ref.get("uid") == uid:
                out.append(pod)
        out.sort(key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))
        return out

    def _sync_node(self, ds: dict, node: dict, comp: _Compiled | None = None) -> None:
        comp = comp or self._compile(ds)
        ds_key = (ds["metadata"].get("namespace", ""), ds["metadata"]["name"])
        node_name = node["metadata"]["name"]
        should_run, may_continue = comp.should_run(node)
        should = self._should.setdefault(ds_key, set())
        if should_run:
            should.add(node_name)
        else:
            should.discard(node_name)
        if ds["metadata"].get("deletionTimestamp"):
            return
        pods = self._pods_on(ds, node_name)
        for p in pods:
            # Failed daemon pods are deleted so that a new one is made (as the real controller does).
            if pod_phase(p) == "Failed" and not p["metadata"].get("deletionTimestamp"):
                delete_pod(self.store, p)
        active = [p for p in pods if pod_active(p)]
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp") and pod_phase(p) != "Failed"]
        if should_run and not live:
            self._create(ds, comp, node_name)
        elif not may_continue:
            for p in active:
                delete_pod(self.store, p)
        elif len(active) > 1:
            for p in active[1:]:
                delete_pod(self.store, p)

    def _create(self, ds: dict, comp: _Compiled, node_name: str) -> None:
        md = ds["metadata"]
        template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
        tmd = template.get("metadata") or {}
        labels = dict(tmd.get("labels") or {})
        labels["controller-revision-hash"] = comp.hash
        labels["pod-template-generation"] = str(md.get("generation", 1))
        spec = template.get("spec") or {}
        spec["tolerations"] = comp.tolerations
        affinity = spec.setdefault("affinity", {})
        node_aff = affinity.setdefault("nodeAffinity", {})
        node_aff["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]
        }
        spec["nodeName"] = node_name
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": f"{md['name']}-",
                "namespace": md.get("namespace", "default"),
                "labels": labels,
                **({"annotations": dict(tmd["annotations"])} if tmd.get("annotations") else {}),
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "DaemonSet",
                        "name": md["name"],
                        "uid": md.get("uid", ""),
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": spec,
        }
        self.store.create("pods", pod)

    def _summaries(self, ds: dict) -> dict[tuple[str, str], tuple]:
        """Per daemon pod (node, terminating, active, ready, hash, generation), kept current from pod events."""
        uid = ds["metadata"].get("uid", "")
        table = self._pod_summaries.get(uid)
        if table is None:
            table = self._pod_summaries[uid] = {}
            for pod in self.cache.owned(uid, "pods"):
                table[(pod["metadata"].get("namespace", ""), pod["metadata"]["name"])] = _summary(pod)
        return table

    def _roll(self, ds: dict) -> None:
        strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate" or ds["metadata"].get("deletionTimestamp"):
            return
        comp = self._compile(ds)
        summaries = self._summaries(ds)
        if all(_is_updated(s[4], s[5], comp, ds) for s in summaries.values() if s[2]):
            return
        key = (ds["metadata"].get("namespace", ""), ds["metadata"]["name"])
        should = self._should.get(key, set())
        first: dict[str, tuple] = {}
        for pod_key, s in sorted(summaries.items()):
            if s[2] and s[0] in should and s[0] not in first:
                first[s[0]] = (pod_key, s)
        max_unavailable = _max_unavailable(strategy, len(should))
        unavailable = sum(1 for node in should if node not in first or not first[node][1][3])
        budget = max(0, max_unavailable - unavailable)
        for node in sorted(first):
            if budget <= 0:
                break
            pod_key, s = first[node]
            if s[3] and not _is_updated(s[4], s[5], comp, ds):
                pod = self.cache.get("pods", *pod_key)
                if pod is not None:
                    delete_pod(self.store, pod)
                    budget -= 1

    def _status(self, ds: dict) -> None:
        comp = self._compile(ds)
        key = (ds["metadata"].get("namespace", ""), ds["metadata"]["name"])
        should = self._should.get(key, set())
        nodes: dict[str, list[bool]] = {}
        for s in self._summaries(ds).values():
            node, terminating = s[0], s[1]
            if not node or terminating:
                continue
            agg = nodes.setdefault(node, [False, False])
            agg[0] = agg[0] or s[3]
            agg[1] = agg[1] or _is_updated(s[4], s[5], comp, ds)
        current = ready = updated = misscheduled = 0
        for node, (is_ready, is_updated) in nodes.items():
            if node not in should:
                misscheduled += 1
                continue
            current += 1
            ready += is_ready
            updated += is_updated
        old = ds.get("status") or {}
        status = dict(old)
        status.update(
            {
                "currentNumberScheduled": current,
                "numberMisscheduled": misscheduled,
                "desiredNumberScheduled": len(should),
                "numberReady": ready,
                "observedGeneration": ds["metadata"].get("generation", 1),
                "updatedNumberScheduled": updated,
                "numberAvailable": ready,
            }
        )
        if len(should) - ready > 0:
            status["numberUnavailable"] = len(should) - ready
        else:
            status.pop("numberUnavailable", None)
        if status == old:
            return
        cur = editable_status(self.store, DS, key[0], key[1])
        if cur is None:
            return
        cur["status"] = status
        self.store.update(DS, cur, subresource="status")


def _summary(pod: dict) -> tuple:
    labels = pod["metadata"].get("labels") or {}
    return (
        pod.get("spec", {}).get("nodeName") or "",
        bool(pod["metadata"].get("deletionTimestamp")),
        pod_active(pod),
        pod_ready(pod),
        labels.get("controller-revision-hash"),
        labels.get("pod-template-generation"),
    )


def _is_updated(h: str | None, g: str | None, comp: _Compiled, ds: dict) -> bool:
    if h is None and g is None:
        return True  # a snapshot's pod without revision labels counts as current (no churn on load)
    return h == comp.hash or g == str(ds["metadata"].get("generation"))


def _max_unavailable(strategy: dict, desired: int) -> int:
    value = (strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1)
    if isinstance(value, str) and value.endswith("%"):
        try:
            return max(1, int(desired * int(value[:-1]) / 100))
        except ValueError:
            return 1
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return 1
