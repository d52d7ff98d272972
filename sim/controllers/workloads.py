"""Workload controllers: Deployment → ReplicaSet → Pods, StatefulSet → Pods, Job → Pods, with their status fields, so
evicted workloads come back."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

from dragoman.sim.controllers.base import (
    Controller,
    Events,
    controller_ref,
    delete_pod,
    editable_status,
    pod_active,
    pod_phase,
    pod_ready,
    short_hash,
)
from dragoman.sim.store import ApiError

# Pods a ReplicaSet creates in one sync, as kube-controller-manager's burstReplicas: the rest on the next sync, so a
# replicas of 10^9 written through the API never holds the simulator's loop (nor Ctrl+C) for one long burst.
BURST_REPLICAS = 500

DEPLOY, RS, STS, JOB = "deployments.apps", "replicasets.apps", "statefulsets.apps", "jobs.batch"
HASH_LABEL = "pod-template-hash"
_KIND_KEY = {
    "ReplicaSet": ("rs", RS),
    "StatefulSet": ("sts", STS),
    "Job": ("job", JOB),
    "Deployment": ("deploy", DEPLOY),
}


def _replicas(obj: dict, default: int = 1) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return default if value is None else int(value)


def _without_hash(template: dict) -> str:
    t = copy.deepcopy(template or {})
    labels = (t.get("metadata") or {}).get("labels")
    if labels:
        labels.pop(HASH_LABEL, None)
    return json.dumps(t, sort_keys=True)


def _owner(obj: dict) -> dict:
    md = obj["metadata"]
    return {
        "apiVersion": obj.get("apiVersion", "apps/v1"),
        "kind": obj.get("kind", ""),
        "name": md["name"],
        "uid": md.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _pod_from_template(owner: dict, template: dict, **metadata: Any) -> dict:
    t = copy.deepcopy(template or {})
    tmd = t.get("metadata") or {}
    md: dict[str, Any] = {
        "namespace": owner["metadata"].get("namespace", "default"),
        "labels": dict(tmd.get("labels") or {}),
        "ownerReferences": [_owner(owner)],
    }
    if tmd.get("annotations"):
        md["annotations"] = dict(tmd["annotations"])
    for k, v in metadata.items():
        if k in ("labels", "annotations"):
            md.setdefault(k, {}).update(v)
        else:
            md[k] = v
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": t.get("spec") or {}}


def _set_condition(
    conditions: list[dict], ctype: str, status: str, reason: str, message: str, now: str, update_time: bool = True
) -> list[dict]:
    """Replace or add a condition; timestamps only move when status or reason change (no churn)."""
    out = []
    found = False
    for c in conditions:
        if c.get("type") != ctype:
            out.append(c)
            continue
        found = True
        if c.get("status") == status and c.get("reason") == reason and c.get("message") == message:
            out.append(c)
            continue
        n = dict(c, status=status, reason=reason, message=message)
        if c.get("status") != status:
            n["lastTransitionTime"] = now
        if update_time:
            n["lastUpdateTime"] = now
        out.append(n)
    if not found:
        n = {"type": ctype, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}
        if update_time:
            n["lastUpdateTime"] = now
        out.append(n)
    return out


class Workloads(Controller):
    """Keys ("deploy"|"rs"|"sts"|"job", namespace, name)."""

    name = "workload-controllers"
    field_manager = "kube-controller-manager"

    def __init__(self, sim: Any) -> None:
        super().__init__(sim)
        self._sts_revisions: dict[str, tuple[str, str]] = {}
        self.rs_events = Events(self.store, self.clock, "replicaset-controller")

    def initial_keys(self):
        for kind, resource in (("deploy", DEPLOY), ("rs", RS), ("sts", STS), ("job", JOB)):
            for obj in list(self.cache.all(resource)):
                yield (kind, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        md = obj["metadata"]
        ns = md.get("namespace", "")
        if resource in (DEPLOY, STS, JOB, RS):
            kind = {DEPLOY: "deploy", STS: "sts", JOB: "job", RS: "rs"}[resource]
            if etype != "DELETED":
                self.enqueue((kind, ns, md["name"]))
            if resource == RS:
                ref = controller_ref(obj)
                if ref and ref.get("kind") == "Deployment":
                    self.enqueue(("deploy", ns, ref.get("name", "")))
        elif resource == "pods":
            ref = controller_ref(obj)
            if ref and ref.get("kind") in ("ReplicaSet", "StatefulSet", "Job"):
                self.enqueue((_KIND_KEY[ref["kind"]][0], ns, ref.get("name", "")))

    def reconcile(self, key) -> None:
        kind, ns, name = key
        if kind == "deploy":
            self._deployment(ns, name)
        elif kind == "rs":
            self._replicaset(ns, name)
        elif kind == "sts":
            self._statefulset(ns, name)
        elif kind == "job":
            self._job(ns, name)

    # -------------------------------------------------------------- helpers

    def _owned_pods(self, owner: dict) -> list[dict]:
        pods = self.cache.owned(owner["metadata"].get("uid", ""), "pods")
        pods.sort(key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))
        return pods

    def _write_status(self, resource: str, obj: dict, status: dict, annotations: dict | None = None) -> None:
        have = obj["metadata"].get("annotations") or {}
        old = obj.get("status") or {}
        # A zero terminatingReplicas a stored status lacks (a scenario's, written before v1.37 counted them) is not
        # worth a write of its own; the next write for another reason carries it.
        if status.get("terminatingReplicas") == 0 and "terminatingReplicas" not in old:
            same = {k: v for k, v in status.items() if k != "terminatingReplicas"} == old
        else:
            same = status == old
        if same and all(have.get(k) == v for k, v in (annotations or {}).items()):
            return
        cur = editable_status(self.store, resource, obj["metadata"].get("namespace"), obj["metadata"]["name"])
        if cur is None:
            return
        cur["status"] = status
        if annotations:
            # editable_status shares the stored metadata: copy it before changing it.
            md = dict(cur["metadata"])
            md["annotations"] = {**(md.get("annotations") or {}), **annotations}
            cur["metadata"] = md
        self.store.update(resource, cur, subresource="status")

    # -------------------------------------------------------------- Deployment

    def _deployment(self, ns: str, name: str) -> None:
        d = self.cache.get(DEPLOY, ns, name)
        if d is None or d["metadata"].get("deletionTimestamp"):
            return
        spec = d.get("spec") or {}
        template = spec.get("template") or {}
        want = _replicas(d)
        rss = self.cache.owned(d["metadata"].get("uid", ""), RS)
        h = short_hash(_without_hash(template), 10)
        current = next((rs for rs in rss if rs["metadata"]["name"] == f"{name}-{h}"), None)
        if current is None:
            key = _without_hash(template)
            current = next(
                (rs for rs in rss if _without_hash((rs.get("spec") or {}).get("template") or {}) == key), None
            )
        if current is None:
            tmpl = copy.deepcopy(template)
            tmpl.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = h
            selector = copy.deepcopy(
                spec.get("selector") or {"matchLabels": dict((template.get("metadata") or {}).get("labels") or {})}
            )
            selector.setdefault("matchLabels", {})[HASH_LABEL] = h
            rs_body = {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": f"{name}-{h}",
                    "namespace": ns,
                    "labels": dict(tmpl["metadata"]["labels"]),
                    "annotations": {
                        "deployment.kubernetes.io/revision": str(
                            1
                            + max(
                                (
                                    int(
                                        (r["metadata"].get("annotations") or {}).get(
                                            "deployment.kubernetes.io/revision", 0
                                        )
                                        or 0
                                    )
                                    for r in rss
                                ),
                                default=0,
                            )
                        ),
                        "deployment.kubernetes.io/desired-replicas": str(want),
                        "deployment.kubernetes.io/max-replicas": str(want + _max_surge(d)),
                    },
                    "ownerReferences": [_owner(d)],
                },
                "spec": {
                    "replicas": 0 if spec.get("paused") else want,
                    "selector": selector,
                    "template": tmpl,
                    **({"minReadySeconds": spec["minReadySeconds"]} if spec.get("minReadySeconds") else {}),
                },
            }
            try:
                current = self.store.create(RS, rs_body)
            except Exception as exc:
                if getattr(exc, "code", None) != 409:
                    raise
                current = self.cache.get(RS, ns, f"{name}-{h}")
                if current is None:
                    return
        elif _replicas(current) != want and not spec.get("paused"):
            cur = self.store.get(RS, ns, current["metadata"]["name"])
            if cur is not None:
                cur["spec"]["replicas"] = want
                ann = cur["metadata"].setdefault("annotations", {})
                ann["deployment.kubernetes.io/desired-replicas"] = str(want)
                ann["deployment.kubernetes.io/max-replicas"] = str(want + _max_surge(d))
                current = self.store.update(RS, cur)
        # Old ReplicaSets scale to zero at once: the simulator rolls out as a Recreate would, in one step.
        for rs in rss:
            if rs["metadata"]["name"] != current["metadata"]["name"] and _replicas(rs, 0) != 0:
                cur = self.store.get(RS, ns, rs["metadata"]["name"])
                if cur is not None:
                    cur["spec"]["replicas"] = 0
                    self.store.update(RS, cur)
        self._deployment_status(d, current)

    def _deployment_status(self, d: dict, current: dict) -> None:
        rss = self.cache.owned(d["metadata"].get("uid", ""), RS)
        cur_name = current["metadata"]["name"]
        total = ready = available = updated = terminating = 0
        for rs in rss:
            st = rs.get("status") or {}
            total += int(st.get("replicas", 0))
            terminating += int(st.get("terminatingReplicas", 0))
            ready += int(st.get("readyReplicas", 0))
            available += int(st.get("availableReplicas", 0))
            if rs["metadata"]["name"] == cur_name:
                updated = int(st.get("replicas", 0))
        want = _replicas(d)
        old = d.get("status") or {}
        now = self.clock.timestamp()
        status = {"observedGeneration": d["metadata"].get("generation", 1)}
        if total:
            status["replicas"] = total
        if updated:
            status["updatedReplicas"] = updated
        if ready:
            status["readyReplicas"] = ready
        if available:
            status["availableReplicas"] = available
        if want - available > 0:
            status["unavailableReplicas"] = want - available
        status["terminatingReplicas"] = terminating
        conds = list(old.get("conditions") or [])
        if available >= want - _max_unavailable(d):
            conds = _set_condition(
                conds, "Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.", now
            )
        else:
            conds = _set_condition(
                conds,
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
                now,
            )
        has_progressing = any(c.get("type") == "Progressing" for c in conds)
        if updated == want and total == want and available >= want:
            conds = _set_condition(
                conds,
                "Progressing",
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{cur_name}" has successfully progressed.',
                now,
            )
        elif updated < want or total > updated or not has_progressing:
            conds = _set_condition(
                conds, "Progressing", "True", "ReplicaSetUpdated", f'ReplicaSet "{cur_name}" is progressing.', now
            )
        # A finished rollout whose pods later become unavailable keeps its Progressing condition (syncRolloutStatus).
        status["conditions"] = conds
        for k in ("collisionCount",):
            if k in old:
                status[k] = old[k]
        # The revision of the newest ReplicaSet, on the Deployment too (SetDeploymentRevision, written with the
        # status: the status strategy keeps a request's annotations).
        revision = (current["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision")
        annotations = {"deployment.kubernetes.io/revision": revision} if revision else None
        self._write_status(DEPLOY, d, status, annotations)

    # -------------------------------------------------------------- ReplicaSet

    def _replicaset(self, ns: str, name: str) -> None:
        rs = self.cache.get(RS, ns, name)
        if rs is None:
            return
        pods = self._owned_pods(rs)
        active = [p for p in pods if pod_active(p)]
        want = _replicas(rs)
        failure: str | None = None
        if not rs["metadata"].get("deletionTimestamp"):
            failed = [p for p in pods if pod_phase(p) == "Failed"]
            if len(active) < want and len(failed) >= 3:
                # Pods a kubelet keeps rejecting (OutOf<resource>) would be replaced in a tight loop; back off on the
                # clock instead, as the real controllers' rate limiting and the scheduler's pace do.
                delay = min(300.0, 10.0 * 2 ** (len(failed) - 3))
                last = max(
                    (p["status"].get("startTime") or p["metadata"].get("creationTimestamp") or "") for p in failed
                )
                at = self.clock.seconds_at(last)
                due = (float("-inf") if at is None else at) + delay
                if self.clock.seconds() < due:
                    self.enqueue_at(("rs", ns, name), due)
                    want = len(active)
            if len(active) < want:
                template = (rs.get("spec") or {}).get("template") or {}
                if want - len(active) > BURST_REPLICAS:
                    self.enqueue_after(("rs", ns, name), 0)  # the rest next time: the loop keeps serving meanwhile
                for _ in range(min(want - len(active), BURST_REPLICAS)):
                    try:
                        self.store.create("pods", _pod_from_template(rs, template, generateName=f"{name}-"))
                    except ApiError as exc:
                        # A refused create (quota, admission) is the ReplicaSet's to report, as the real controller
                        # does: a FailedCreate event and a ReplicaFailure condition, then a retry later.
                        if exc.code == 409:
                            raise
                        failure = str(exc)
                        self.rs_events.emit(rs, "Warning", "FailedCreate", f"Error creating: {failure}")
                        self.enqueue_after(("rs", ns, name), 10.0)
                        break
            elif len(active) > want:
                # Unscheduled first, then not ready, then the newest (controller.ActivePods ordering, simplified).
                victims = sorted(
                    active,
                    key=lambda p: (
                        bool(p["spec"].get("nodeName")),
                        pod_ready(p),
                        p["metadata"].get("creationTimestamp", ""),
                    ),
                )
                for p in victims[: len(active) - want]:
                    delete_pod(self.store, p)
        pods = self._owned_pods(rs)
        active = [p for p in pods if pod_active(p)]
        ready = sum(1 for p in active if pod_ready(p))
        old = rs.get("status") or {}
        status: dict[str, Any] = {"replicas": len(active), "observedGeneration": rs["metadata"].get("generation", 1)}
        if active:
            status["fullyLabeledReplicas"] = len(active)
        if ready:
            status["readyReplicas"] = ready
            status["availableReplicas"] = ready
        # v1.37 (DeploymentReplicaSetTerminatingReplicas, on by default) always writes the count, 0 included.
        status["terminatingReplicas"] = sum(1 for p in pods if p["metadata"].get("deletionTimestamp"))
        # replica_set_utils.calculateStatus: a failure adds ReplicaFailure (kept, not rewritten, while it lasts); a
        # sync without one removes it.
        conds = list(old.get("conditions") or ())
        has_failure = any(c.get("type") == "ReplicaFailure" for c in conds)
        if failure is not None and not has_failure:
            conds.append(
                {
                    "type": "ReplicaFailure",
                    "status": "True",
                    "lastTransitionTime": self.clock.timestamp(),
                    "reason": "FailedCreate",
                    "message": failure,
                }
            )
        elif failure is None and has_failure:
            conds = [c for c in conds if c.get("type") != "ReplicaFailure"]
        if conds:
            status["conditions"] = conds
        self._write_status(RS, rs, status)

    # -------------------------------------------------------------- StatefulSet

    def _statefulset(self, ns: str, name: str) -> None:
        sts = self.cache.get(STS, ns, name)
        if sts is None:
            return
        spec = sts.get("spec") or {}
        want = _replicas(sts)
        start = int(((spec.get("ordinals") or {}).get("start")) or 0)
        template = spec.get("template") or {}
        revision = self._sts_revision(sts)
        parallel = spec.get("podManagementPolicy") == "Parallel"
        owned = {p["metadata"]["name"]: p for p in self._owned_pods(sts)}
        if not sts["metadata"].get("deletionTimestamp"):
            for i in range(start, start + want):
                pod_name = f"{name}-{i}"
                pod = owned.get(pod_name)
                if (
                    pod is not None
                    and pod_phase(pod) in ("Succeeded", "Failed")
                    and not pod["metadata"].get("deletionTimestamp")
                ):
                    delete_pod(self.store, pod)
                    break
                if pod is None:
                    if self.cache.get("pods", ns, pod_name) is not None:
                        break  # a terminating predecessor with this name still exists
                    body = _pod_from_template(
                        sts,
                        template,
                        name=pod_name,
                        labels={
                            "statefulset.kubernetes.io/pod-name": pod_name,
                            "apps.kubernetes.io/pod-index": str(i),
                            "controller-revision-hash": revision,
                        },
                    )
                    body["spec"]["hostname"] = pod_name
                    if spec.get("serviceName"):
                        body["spec"]["subdomain"] = spec["serviceName"]
                    self.store.create("pods", body)
                    if not parallel:
                        break
                elif not parallel and not (pod_active(pod) and pod_ready(pod)):
                    break  # OrderedReady: the next ordinal waits for this one
            for pod_name, pod in sorted(owned.items(), key=lambda kv: -_ordinal(kv[0])):
                if _ordinal(pod_name) >= start + want and pod_active(pod):
                    delete_pod(self.store, pod)
        pods = [p for p in self._owned_pods(sts) if pod_active(p)]
        ready = sum(1 for p in pods if pod_ready(p))
        current = sum(
            1 for p in pods if (p["metadata"].get("labels") or {}).get("controller-revision-hash") in (revision, None)
        )
        old = sts.get("status") or {}
        status: dict[str, Any] = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": len(pods),
            "currentReplicas": current,
            "updatedReplicas": current,
            "currentRevision": old.get("currentRevision")
            if old.get("currentRevision") and current < len(pods)
            else revision,
            "updateRevision": revision,
            "collisionCount": old.get("collisionCount", 0),
            "availableReplicas": ready,
        }
        if ready:
            status["readyReplicas"] = ready
        self._write_status(STS, sts, status)

    def _sts_revision(self, sts: dict) -> str:
        """The update revision name: the loaded status's while the template is the one first seen, else our hash."""
        uid = sts["metadata"].get("uid", "")
        template = json.dumps((sts.get("spec") or {}).get("template") or {}, sort_keys=True)
        known = self._sts_revisions.get(uid)
        if known is None or known[0] != template:
            loaded = (sts.get("status") or {}).get("updateRevision")
            name = loaded if known is None and loaded else f"{sts['metadata']['name']}-{short_hash(template, 10)}"
            known = self._sts_revisions[uid] = (template, name)
        return known[1]

    # -------------------------------------------------------------- Job

    def _job(self, ns: str, name: str) -> None:
        job = self.cache.get(JOB, ns, name)
        if job is None:
            return
        spec = job.get("spec") or {}
        old = job.get("status") or {}
        finished = any(
            c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in old.get("conditions") or ()
        )
        pods = self._owned_pods(job)
        active = [p for p in pods if pod_active(p)]
        succeeded_pods = [p for p in pods if pod_phase(p) == "Succeeded"]
        failed = sum(1 for p in pods if pod_phase(p) == "Failed")
        parallelism = int(spec.get("parallelism", 1) if spec.get("parallelism") is not None else 1)
        completions = spec.get("completions")
        indexed = spec.get("completionMode") == "Indexed"
        backoff_limit = int(spec.get("backoffLimit", 6) if spec.get("backoffLimit") is not None else 6)
        now = self.clock.timestamp()
        uid = job["metadata"].get("uid", "")
        succeeded = len(succeeded_pods)
        if indexed:
            done_idx = {_index(p) for p in succeeded_pods}
            succeeded = len(done_idx)
        conditions = list(old.get("conditions") or [])
        completion_time = old.get("completionTime")
        if not finished and not job["metadata"].get("deletionTimestamp"):
            complete = (succeeded >= int(completions)) if completions is not None else (succeeded > 0 and not active)
            if failed > backoff_limit:
                for p in active:
                    delete_pod(self.store, p)
                conditions = _set_condition(
                    conditions,
                    "FailureTarget",
                    "True",
                    "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit",
                    now,
                    update_time=False,
                )
                conditions = _set_condition(
                    conditions,
                    "Failed",
                    "True",
                    "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit",
                    now,
                    update_time=False,
                )
                active = []
            elif complete:
                conditions = _set_condition(
                    conditions,
                    "SuccessCriteriaMet",
                    "True",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                    now,
                    update_time=False,
                )
                conditions = _set_condition(
                    conditions,
                    "Complete",
                    "True",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                    now,
                    update_time=False,
                )
                completion_time = completion_time or now
            elif spec.get("suspend"):
                for p in active:
                    delete_pod(self.store, p)
                active = []
            else:
                if completions is None:
                    want_active = parallelism if succeeded == 0 else 0
                else:
                    want_active = min(parallelism, int(completions) - succeeded)
                missing = want_active - len(active)
                if missing > 0:
                    template = spec.get("template") or {}
                    job_labels = {
                        "batch.kubernetes.io/controller-uid": uid,
                        "batch.kubernetes.io/job-name": name,
                        "controller-uid": uid,
                        "job-name": name,
                    }
                    busy = {_index(p) for p in active} | ({_index(p) for p in succeeded_pods} if indexed else set())
                    # The first `missing` free indexes, not all of them: completions may be 10^9 (the API allows it).
                    indexes = range(int(completions or parallelism)) if indexed else range(0)
                    free = list(itertools.islice((i for i in indexes if i not in busy), missing))
                    for n in range(missing):
                        extra: dict[str, Any] = {"labels": dict(job_labels), "generateName": f"{name}-"}
                        if indexed:
                            if n >= len(free):
                                break
                            idx = free[n]
                            extra["labels"]["batch.kubernetes.io/job-completion-index"] = str(idx)
                            extra["annotations"] = {"batch.kubernetes.io/job-completion-index": str(idx)}
                            extra["generateName"] = f"{name}-{idx}-"
                        body = _pod_from_template(job, template, **extra)
                        body["spec"].setdefault("restartPolicy", "Never")
                        self.store.create("pods", body)
                    active = [p for p in self._owned_pods(job) if pod_active(p)]
        status: dict[str, Any] = {}
        for k in ("startTime",):
            if old.get(k):
                status[k] = old[k]
        if not finished or "startTime" not in status:
            status.setdefault("startTime", old.get("startTime") or now)
        if active:
            status["active"] = len(active)
        if succeeded:
            status["succeeded"] = succeeded
        if failed:
            status["failed"] = failed
        status["ready"] = sum(1 for p in active if pod_ready(p))
        status["terminating"] = sum(1 for p in pods if p["metadata"].get("deletionTimestamp"))
        status["uncountedTerminatedPods"] = old.get("uncountedTerminatedPods", {})
        if indexed and succeeded:
            status["completedIndexes"] = _ranges(sorted({_index(p) for p in succeeded_pods}))
        if conditions:
            status["conditions"] = conditions
        if completion_time:
            status["completionTime"] = completion_time
        self._write_status(JOB, job, status)


def _max_surge(d: dict) -> int:
    """deploymentutil.MaxSurge: RollingUpdate's maxSurge (default 25%, percentages round up); 0 for Recreate."""
    spec = d.get("spec") or {}
    strategy = spec.get("strategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return 0
    value = (strategy.get("rollingUpdate") or {}).get("maxSurge", "25%")
    want = _replicas(d)
    if isinstance(value, str) and value.endswith("%"):
        try:
            return -(-want * int(value[:-1]) // 100)
        except ValueError:
            return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _max_unavailable(d: dict) -> int:
    """deploymentutil.MaxUnavailable: RollingUpdate's maxUnavailable (default 25%, percentages round down)."""
    spec = d.get("spec") or {}
    want = _replicas(d)
    strategy = spec.get("strategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate" or want == 0:
        return 0
    value = (strategy.get("rollingUpdate") or {}).get("maxUnavailable", "25%")
    surge = (strategy.get("rollingUpdate") or {}).get("maxSurge", "25%")

    def resolve(v, round_up: bool) -> int:
        if isinstance(v, str) and v.endswith("%"):
            try:
                pct = int(v[:-1])
            except ValueError:
                return 0
            n = want * pct
            return -(-n // 100) if round_up else n // 100
        try:
            return int(v)
        except (TypeError, ValueError):
            return 0

    unavailable = resolve(value, False)
    if unavailable == 0 and resolve(surge, True) == 0:
        unavailable = 1
    return min(unavailable, want)


def _ordinal(name: str) -> int:
    try:
        return int(name.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return -1


def _index(pod: dict) -> int:
    try:
        return int((pod["metadata"].get("annotations") or {}).get("batch.kubernetes.io/job-completion-index", -1))
    except ValueError:
        return -1


def _ranges(values: list[int]) -> str:
    out = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        out.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(out)
