"""The running kube-scheduler of the simulator, with the resourceclaim controller and quota admission beside it."""

from __future__ import annotations

import copy
import json
import weakref
from collections.abc import Iterable
from typing import Any

from dragoman.fleet import backoff
from dragoman.fleet.k8s.allocator import (
    BINDING_POLL_SECONDS,
    FINALIZER,
    binding_readiness,
    has_binding_conditions,
)
from dragoman.fleet.k8s.podclaims import pod_claim_names
from dragoman.sim.api import status as st
from dragoman.sim.controllers import quota as quota_mod
from dragoman.sim.controllers.base import Controller, Events, SeriesEvents, log
from dragoman.sim.controllers.bridge import POD_CLAIM_NAME_ANNOTATION
from dragoman.sim.controllers.scheduling import (
    SCHEDULER_NAME,
    ClusterView,
    claim_from_template,
    pod_claim_status_patch,
    schedule_one,
    truncate_note,
)
from dragoman.sim.store import ApiError

CLAIMS = "resourceclaims.resource.k8s.io"
KINDS = {
    "nodes": "Node",
    "pods": "Pod",
    "resourceslices.resource.k8s.io": "ResourceSlice",
    "deviceclasses.resource.k8s.io": "DeviceClass",
    CLAIMS: "ResourceClaim",
    "resourceclaimtemplates.resource.k8s.io": "ResourceClaimTemplate",
    "resourcequotas": "ResourceQuota",
    "namespaces": "Namespace",
    "devicetaintrules.resource.k8s.io": "DeviceTaintRule",
}
# kube-scheduler: podInitialBackoffDuration 1s, podMaxBackoffDuration 10s, unschedulable pods flushed after 5 minutes.
INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0
UNSCHEDULABLE_FLUSH = 300.0

_quota_hooked: weakref.WeakKeyDictionary[Any, Scheduler] = weakref.WeakKeyDictionary()


def _md(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _terminal(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _node_sig(node: dict | None) -> str:
    if node is None:
        return ""
    md = _md(node)
    return json.dumps(
        [md.get("labels"), node.get("spec"), (node.get("status") or {}).get("allocatable")], sort_keys=True
    )


class Scheduler(Controller):
    """Keys: ("pod", ns, name) schedules one pod; ("claim", ns, name) keeps a claim's reservations, allocation and
    finalizer in step with its pods; ("quota", ns) refreshes ResourceQuota status.used."""

    name = "scheduler"
    field_manager = "kube-scheduler"

    def __init__(self, sim: Any, *, percentage_of_nodes_to_score: int = 0) -> None:
        super().__init__(sim)
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.view: ClusterView | None = None
        # kube-scheduler records through events.k8s.io/v1 (tools/events); the resourceclaim controller is
        # kube-controller-manager's and uses the core recorder.
        self.events = SeriesEvents(self.store, self.clock, SCHEDULER_NAME)
        self.claim_events = Events(self.store, self.clock, "resource_claim")  # its recorder's name in v1.37.2
        self.unschedulable: set[tuple] = set()
        self.waiting: set[tuple] = set()
        self._backoff: dict[tuple, int] = {}  # failed attempts in a row, per pod
        self._retry_pending: set[tuple] = set()
        self._binding: dict[tuple, tuple[str, str]] = {}  # pods waiting in PreBind: (node, the Scheduled message)
        self._flush_pending = False

    # ---------------------------------------------------------------- setup

    def start_sync(self) -> None:
        if self.started:
            return
        self.view = ClusterView(percentage_of_nodes_to_score=self.percentage_of_nodes_to_score)
        for resource, kind in KINDS.items():
            for entry in self.store.entries(resource):
                self.view.upsert(kind, entry.obj)
        if _quota_hooked.get(self.store) is None:
            self.store.add_admission(self._admit_quota)
        _quota_hooked[self.store] = self
        super().start_sync()
        self.enqueue_after(("events",), self.events.next_tick())

    def initial_keys(self) -> Iterable:
        keys: list = []
        for (ns, name), pod in list(self.view.pods.items()):
            if self._wants_scheduling(pod):
                keys.append(("pod", ns, name))
        for ns, name in list(self.view.claims):
            keys.append(("claim", ns, name))
        for ns in {ns for ns, _ in self.view.quotas}:
            keys.append(("quota", ns))
        return keys

    @staticmethod
    def _wants_scheduling(pod: dict) -> bool:
        spec = pod.get("spec") or {}
        return (
            not spec.get("nodeName")
            and not _md(pod).get("deletionTimestamp")
            and (spec.get("schedulerName") or SCHEDULER_NAME) == SCHEDULER_NAME
            and not _terminal(pod)
        )

    # ---------------------------------------------------------------- change feed

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        kind = KINDS.get(resource)
        if kind is None or self.view is None:
            return
        prev_node = (
            self.view.nodes[_md(obj).get("name", "")].node
            if kind == "Node" and _md(obj).get("name") in self.view.nodes
            else None
        )
        if etype == "DELETED":
            self.view.remove(kind, obj)
        else:
            self.view.upsert(kind, obj)
        ns, name = _md(obj).get("namespace", ""), _md(obj).get("name", "")
        if kind == "Pod":
            self._pod_changed(etype, obj, old)
        elif kind == "Node":
            if etype == "ADDED" or etype == "DELETED" or _node_sig(prev_node) != _node_sig(obj):
                self._requeue_unschedulable()
        elif kind in ("ResourceSlice", "DeviceClass", "DeviceTaintRule"):
            self._requeue_unschedulable()
        elif kind == "ResourceClaim":
            self.enqueue(("claim", ns, name))
            if (
                etype == "DELETED"
                or ((old or {}).get("status") or {}).get("allocation")
                and not (obj.get("status") or {}).get("allocation")
            ):
                self._requeue_unschedulable()
            self._requeue_waiting(ns)
            self._quota_dirty(ns)
        elif kind == "ResourceQuota":
            self.enqueue(("quota", ns))
            self._requeue_unschedulable()
        elif kind == "ResourceClaimTemplate":
            self._requeue_waiting(ns)

    def _pod_changed(self, etype: str, pod: dict, old: dict | None) -> None:
        md = _md(pod)
        ns, name = md.get("namespace", ""), md.get("name", "")
        key = ("pod", ns, name)
        if (
            etype != "DELETED"
            and self._wants_scheduling(pod)
            and (etype == "ADDED" or old is None or self._pod_updated(old, pod))
        ):
            self.enqueue(key)
        gone = etype == "DELETED" or _terminal(pod) or bool(md.get("deletionTimestamp"))
        if gone:
            self.unschedulable.discard(key)
            self.waiting.discard(key)
            for claim_key in self._claims_of(pod):
                self.enqueue(("claim", *claim_key))
            if (pod.get("spec") or {}).get("nodeName"):
                self._requeue_unschedulable()
        if (
            etype != "MODIFIED"
            or gone
            or (old is not None and (old.get("spec") or {}).get("nodeName") != (pod.get("spec") or {}).get("nodeName"))
        ):
            self._quota_dirty(ns)

    @staticmethod
    def _pod_updated(old: dict, new: dict) -> bool:
        """The scheduling queue's isPodUpdated: a status-only write (ours included) does not retry a pod, except the
        resourceclaim controller linking a generated claim (UpdatePodGeneratedResourceClaim)."""

        def strip(p: dict) -> dict:
            md = {
                k: v
                for k, v in (p.get("metadata") or {}).items()
                if k not in ("resourceVersion", "managedFields", "generation")
            }
            return {"metadata": md, "spec": p.get("spec")}

        if strip(old) != strip(new):
            return True
        return (old.get("status") or {}).get("resourceClaimStatuses") != (new.get("status") or {}).get(
            "resourceClaimStatuses"
        )

    def _claims_of(self, pod: dict) -> list[tuple[str, str]]:
        md = _md(pod)
        ns = md.get("namespace", "")
        status = pod.get("status") or {}
        out = [(ns, n) for _, n in pod_claim_names(pod) if n]
        ext = (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        if ext:
            out.append((ns, ext))
        bridge = self.view.bridge_claims.get(md.get("uid", "")) if self.view else None
        if bridge:
            out.append(bridge)
        return out

    def _requeue_unschedulable(self) -> None:
        # One queued marker however many events arrive before it runs: a burst of slice or node writes retries each
        # unschedulable pod once, not once per write.
        if self.unschedulable:
            self.enqueue(("requeue",))

    def _move_unschedulable(self) -> None:
        for key in self.unschedulable:
            self.enqueue(key)
        self.unschedulable.clear()

    def _requeue_waiting(self, ns: str) -> None:
        for key in [k for k in self.waiting if k[1] == ns]:
            self.waiting.discard(key)
            self.enqueue(key)

    def _quota_dirty(self, ns: str) -> None:
        if self.view is not None and any(qns == ns for qns, _ in self.view.quotas):
            self.enqueue(("quota", ns))

    # ---------------------------------------------------------------- quota admission

    def _admit_quota(self, op: str, rt: Any, obj: dict, old: dict | None) -> None:
        if self.view is None or not self.view.quotas:
            return
        if rt.key == "pods" and op == "CREATE":
            allowed, message = quota_mod.charge(obj, None, self.view)
        elif rt.key == CLAIMS and (
            op == "CREATE" or (op == "UPDATE" and old is not None and old.get("spec") != obj.get("spec"))
        ):
            allowed, message = quota_mod.charge(obj, None, self.view, old if op == "UPDATE" else None)
        else:
            return
        if not allowed:
            raise ApiError(st.forbidden_message(message, rt.group, rt.plural, _md(obj).get("name", "")))

    # ---------------------------------------------------------------- reconcile

    def reconcile(self, key: tuple) -> None:
        if key[0] == "events":  # the event recorder's tickers: a series ends, or is written again
            self.events.tick()
            self.enqueue_after(key, self.events.next_tick())
        elif key[0] == "requeue":
            self._move_unschedulable()
        elif key[0] == "flush":
            self._flush_pending = False
            self._move_unschedulable()
        elif key[0] == "retry":
            self._retry_pending.discard(key[1])
            self.enqueue(key[1])
        elif key[0] == "pod":
            if key in self._binding:
                return  # its binding cycle is waiting in PreBind
            self._schedule(key)
        elif key[0] == "bindwait":
            self._binding_wait(key[1])
        elif key[0] == "claim":
            self._sync_claim(key[1], key[2])
        elif key[0] == "quota":
            self._sync_quota(key[1])

    def _schedule(self, key: tuple) -> None:
        _, ns, name = key
        pod = self.store.get("pods", ns, name)
        if pod is None or not self._wants_scheduling(pod):
            self._backoff.pop(key, None)
            return
        if self._ensure_template_claims(pod):
            return  # the pod status update re-queues it
        dec = schedule_one(pod, self.view, self.clock.timestamp())
        if dec.outcome == "skip":
            return
        if dec.outcome == "waiting":
            self.waiting.add(key)
            return
        if dec.outcome == "scheduled":
            try:
                self._prebind(pod, dec)
            except ApiError as exc:
                self._fail(
                    key,
                    pod,
                    "SchedulerError",
                    f'running PreBind plugin "DynamicResources": {exc.status.get("message", str(exc))}',
                    error=True,
                )
                return
            if any(has_binding_conditions(c) for c in self._claims_now(pod)):
                # PreBind waits (polling every 5 s, up to the binding timeout) until the devices' binding conditions
                # are True in the claims' status.devices, which the driver's controller sets; the pod stays unbound.
                self.events.emit(
                    pod,
                    "Normal",
                    "BindingConditionsPending",
                    "Scheduling",
                    f"waiting for binding conditions for device on node {dec.node}",
                )
                self._binding[key] = (dec.node, dec.message)
                self.enqueue(("bindwait", key))
                return
            self._bind(ns, name, dec.node)
            self.events.emit(pod, "Normal", "Scheduled", "Binding", dec.message)
            self._backoff.pop(key, None)
            self.unschedulable.discard(key)
            return
        # Failed first: the pod is then in the unschedulable set, so the claim writes below requeue it.
        self._fail(key, pod, dec.condition["reason"], dec.message, error=dec.is_error)
        for cns, cname in dec.claims_to_delete:
            self._delete_claim(cns, cname)
        for claim in dec.claim_updates:
            self._write_claim_status(claim)

    def _fail(self, key: tuple, pod: dict, reason: str, message: str, *, error: bool) -> None:
        ns, name = key[1], key[2]
        cur = self.store.get("pods", ns, name)
        if cur is not None:
            conds = (cur.get("status") or {}).get("conditions") or []
            old = next((c for c in conds if c.get("type") == "PodScheduled"), None)
            # Every failure clears a nomination (clearNominatedNode; the simulator does not preempt), so a pod the
            # PreBind nominated and then failed is written again even when its condition is unchanged.
            nominated = "nominatedNodeName" in (cur.get("status") or {})
            # PodObservedGenerationTracking (GA in v1.35): the condition says which generation of the pod it judged.
            # UpdatePodCondition does not compare it, so a new generation alone writes nothing (the old one stays).
            generation = int((cur.get("metadata") or {}).get("generation") or 1)
            if (
                old is None
                or old.get("status") != "False"
                or old.get("reason") != reason
                or old.get("message") != message
                or nominated
            ):
                cond = {
                    "type": "PodScheduled",
                    "status": "False",
                    "observedGeneration": generation,
                    "lastProbeTime": None,
                    "lastTransitionTime": old.get("lastTransitionTime")
                    if old and old.get("status") == "False"
                    else self.clock.timestamp(),
                    "reason": reason,
                    "message": message,
                }
                if cur["metadata"].get("generation"):
                    # v1.37's scheduler stamps the pod generation it judged (PodObservedGenerationTracking).
                    cond["observedGeneration"] = cur["metadata"]["generation"]
                cur.setdefault("status", {})["conditions"] = [c for c in conds if c.get("type") != "PodScheduled"] + [
                    cond
                ]
                cur["status"].pop("nominatedNodeName", None)
                self.store.update("pods", cur, "status", namespace=ns, check_rv=False)
        self.events.emit(pod, "Warning", "FailedScheduling", "Scheduling", truncate_note(message))
        # One timer per pod for backoff and one for the periodic flush, however often attempts fail.
        if error:
            failures = self._backoff.get(key, 0)
            delay = backoff.delay(failures, INITIAL_BACKOFF, MAX_BACKOFF)
            self._backoff[key] = failures + 1
            if key not in self._retry_pending:
                self._retry_pending.add(key)
                self.enqueue_after(("retry", key), delay)
        else:
            self.unschedulable.add(key)
            if not self._flush_pending:
                self._flush_pending = True
                self.enqueue_after(("flush",), UNSCHEDULABLE_FLUSH)

    def _prebind(self, pod: dict, dec) -> None:
        ns = _md(pod).get("namespace", "")
        if (pod.get("spec") or {}).get("resourceClaims") or dec.claims_to_create or dec.claim_updates:
            # NominatedNodeNameForExpectation (on in v1.37): DynamicResources' PreBindPreFlight has work, so the
            # scheduler first tells watchers (an autoscaler) where the pod is going; the binding clears it.
            cur = self.store.get("pods", ns, _md(pod)["name"])
            if cur is not None and (cur.get("status") or {}).get("nominatedNodeName") != dec.node:
                cur.setdefault("status", {})["nominatedNodeName"] = dec.node
                self.store.update("pods", cur, "status", namespace=ns, check_rv=False)
        for claim in dec.claim_updates:
            cur = self.store.get(CLAIMS, ns, _md(claim)["name"])
            if cur is None:
                raise ApiError(st.not_found("resource.k8s.io", "resourceclaims", _md(claim)["name"]))
            if FINALIZER not in (_md(cur).get("finalizers") or []):
                cur["metadata"].setdefault("finalizers", []).append(FINALIZER)
                cur = self.store.update(CLAIMS, cur, namespace=ns, check_rv=False)
            cur["status"] = copy.deepcopy(claim.get("status") or {})
            self.store.update(CLAIMS, cur, "status", namespace=ns, check_rv=False)
        ext_status = (dec.pod_status_patch or {}).get("extendedResourceClaimStatus")
        for claim in dec.claims_to_create:
            body = copy.deepcopy(claim)
            status = body.pop("status", {})
            body["metadata"].pop("name", None)  # the apiserver generates it from generateName
            # bindClaim: created without the finalizer, which an Update adds before the status (a watcher sees three
            # writes: ADDED, the finalizer, then allocation and reservedFor).
            finalizers = body["metadata"].pop("finalizers", None) or []
            try:
                created = self.store.create(CLAIMS, body, namespace=ns)
            except ApiError as exc:
                raise ApiError(
                    dict(
                        exc.status,
                        message=f"create claim for extended resources {ns}/: {exc.status.get('message', '')}",
                    )
                ) from exc
            if finalizers:
                created["metadata"]["finalizers"] = finalizers
                created = self.store.update(CLAIMS, created, namespace=ns, check_rv=False)
            created["status"] = status
            self.store.update(CLAIMS, created, "status", namespace=ns, check_rv=False)
            if ext_status is not None:
                ext_status = dict(ext_status, resourceClaimName=_md(created)["name"])
        if ext_status is not None:
            cur = self.store.get("pods", ns, _md(pod)["name"])
            if cur is not None:
                cur.setdefault("status", {})["extendedResourceClaimStatus"] = ext_status
                self.store.update("pods", cur, "status", namespace=ns, check_rv=False)

    def _claims_now(self, pod: dict) -> list[dict]:
        """The pod's claims as stored now (its own and the scheduler-made one)."""
        ns = _md(pod).get("namespace", "")
        uid = _md(pod).get("uid")
        out = []
        for (cns, _), claim in list(self.view.claims.items()) if self.view is not None else []:
            if cns != ns:
                continue
            if any(r.get("uid") == uid for r in (claim.get("status") or {}).get("reservedFor") or []):
                cur = self.store.get(CLAIMS, ns, _md(claim)["name"])
                if cur is not None:
                    out.append(cur)
        return out

    def _binding_wait(self, key: tuple) -> None:
        """One poll of PreBind's wait: bind when every binding condition is True; on a failure condition or the
        timeout, Unreserve (the pod leaves reservedFor) and fail the attempt with the plugin's error — the next
        attempt's Filter finds the claim unavailable and PostFilter deallocates it."""
        node, message = self._binding.get(key, (None, ""))
        if node is None:
            return
        _, ns, name = key
        pod = self.store.get("pods", ns, name)
        if pod is None or _md(pod).get("deletionTimestamp") or (pod.get("spec") or {}).get("nodeName"):
            self._binding.pop(key, None)
            return
        claims = [c for c in self._claims_now(pod) if has_binding_conditions(c)]
        states = [binding_readiness(c, self.clock.now().timestamp()) for c in claims]
        bad = next((msg for st_, msg in states if st_ in ("failed", "timeout")), None)
        if bad is None and all(st_ == "ready" for st_, _ in states):
            self._binding.pop(key, None)
            self._bind(ns, name, node)
            self.events.emit(pod, "Normal", "Scheduled", "Binding", message)
            self._backoff.pop(key, None)
            self.unschedulable.discard(key)
            return
        if bad is None:
            self.enqueue_after(("bindwait", key), BINDING_POLL_SECONDS)
            return
        self._binding.pop(key, None)
        uid = _md(pod).get("uid")
        for claim in self._claims_now(pod):
            st_ = claim.get("status") or {}
            st_["reservedFor"] = [r for r in st_.get("reservedFor") or [] if r.get("uid") != uid]
            self.store.update(CLAIMS, claim, "status", namespace=ns, check_rv=False)
        self._fail(key, pod, "SchedulerError", f'running PreBind plugin "DynamicResources": {bad}', error=True)

    def _bind(self, ns: str, name: str, node: str) -> None:
        """pods/binding: spec.nodeName, then PodScheduled=True (what the binding subresource writes)."""
        cur = self.store.get("pods", ns, name)
        if cur is None or (cur.get("spec") or {}).get("nodeName"):
            return
        cur["spec"]["nodeName"] = node
        # The binding subresource writes past the field manager: no managedFields entry for either write.
        self.store.update("pods", cur, namespace=ns, check_rv=False, field_manager="")
        cur = self.store.get("pods", ns, name)
        conds = [c for c in (cur.get("status") or {}).get("conditions") or [] if c.get("type") != "PodScheduled"]
        conds.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": self.clock.timestamp(),
            }
        )
        cur.setdefault("status", {})["conditions"] = conds
        # ClearingNominatedNodeNameAfterBinding: the binding clears the nomination (the pod is where it was going).
        cur["status"].pop("nominatedNodeName", None)
        self.store.update("pods", cur, "status", namespace=ns, check_rv=False, field_manager="", strategy=False)

    def _write_claim_status(self, claim: dict) -> None:
        md = _md(claim)
        cur = self.store.get(CLAIMS, md.get("namespace"), md["name"])
        if cur is None:
            return
        cur["status"] = copy.deepcopy(claim.get("status") or {})
        self.store.update(CLAIMS, cur, "status", namespace=md.get("namespace"), check_rv=False)

    def _delete_claim(self, ns: str, name: str) -> None:
        cur = self.store.get(CLAIMS, ns, name)
        if cur is None:
            return
        fins = [f for f in _md(cur).get("finalizers") or [] if f != FINALIZER]
        if fins != (_md(cur).get("finalizers") or []):
            cur["metadata"]["finalizers"] = fins
            self.store.update(CLAIMS, cur, namespace=ns, check_rv=False)
        try:
            self.store.delete(CLAIMS, ns, name)
        except ApiError as exc:
            if exc.code != 404:
                raise

    # ---------------------------------------------------------------- the resourceclaim controller's part

    def _ensure_template_claims(self, pod: dict) -> bool:
        """Create the claims a pod's template references need; True when the pod status was changed."""
        md = _md(pod)
        ns = md.get("namespace", "")
        have = {s.get("name") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
        changed = False
        for pc in (pod.get("spec") or {}).get("resourceClaims") or []:
            tname = pc.get("resourceClaimTemplateName")
            if not tname or pc.get("name") in have:
                continue
            template = self.view.templates.get((ns, tname))
            if template is None:
                continue
            existing = next(
                (
                    c
                    for (cns, _), c in self.view.claims.items()
                    if cns == ns
                    and (_md(c).get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) == pc.get("name")
                    and any(
                        o.get("uid") == md.get("uid") and o.get("controller")
                        for o in _md(c).get("ownerReferences") or []
                    )
                ),
                None,
            )
            if existing is None:
                body = claim_from_template(pod, pc, template)
                body["metadata"].pop("name", None)
                try:
                    existing = self.store.create(CLAIMS, body, namespace=ns)
                except ApiError as exc:
                    self.claim_events.emit(
                        pod,
                        "Warning",
                        "FailedResourceClaimCreation",
                        # The controller's own words: the claim has no name before the create (generateName).
                        f"PodResourceClaim {pc.get('name')}: create ResourceClaim : {exc.status.get('message', '')}",
                    )
                    continue
            cur = self.store.get("pods", ns, md["name"])
            if cur is None:
                return False
            cur.setdefault("status", {}).update(pod_claim_status_patch(cur, pc, existing))
            self.store.update("pods", cur, "status", namespace=ns, check_rv=False)
            changed = True
        return changed

    def _sync_claim(self, ns: str, name: str) -> None:
        """The resourceclaim controller: drop reservations of pods that are gone or done; deallocate on the last one;
        delete a generated claim whose pod is done; release the finalizer of a deleted, unused claim."""
        claim = self.store.get(CLAIMS, ns, name)
        if claim is None:
            return
        status = claim.get("status") or {}
        reserved = status.get("reservedFor") or []
        valid = []
        for ref in reserved:
            if ref.get("resource") != "pods":
                valid.append(ref)
                continue
            pod = self.store.get("pods", ns, ref.get("name", ""))
            if pod is not None and _md(pod).get("uid") == ref.get("uid") and not _terminal(pod):
                valid.append(ref)
        if len(valid) < len(reserved):
            new_status = dict(status)
            if valid:
                new_status["reservedFor"] = valid
            else:
                # The transition from used to unused is the one moment a claim gets deallocated.
                new_status.pop("reservedFor", None)
                new_status.pop("allocation", None)
                new_status.pop("devices", None)
            claim["status"] = new_status
            claim = self.store.update(CLAIMS, claim, "status", namespace=ns, check_rv=False)
            if not valid and FINALIZER in (_md(claim).get("finalizers") or []):
                claim["metadata"]["finalizers"] = [f for f in claim["metadata"]["finalizers"] if f != FINALIZER]
                claim = self.store.update(CLAIMS, claim, namespace=ns, check_rv=False)
        if not valid:
            owner = next(
                (o for o in _md(claim).get("ownerReferences") or [] if o.get("controller") and o.get("kind") == "Pod"),
                None,
            )
            if owner is not None and not _md(claim).get("deletionTimestamp"):
                pod = self.store.get("pods", ns, owner.get("name", ""))
                if pod is not None and (_md(pod).get("uid") != owner.get("uid") or _terminal(pod)):
                    self._delete_claim(ns, name)
                    return
        if _md(claim).get("deletionTimestamp") and not (claim.get("status") or {}).get("reservedFor"):
            if (claim.get("status") or {}).get("allocation"):
                claim["status"] = {
                    k: v for k, v in (claim.get("status") or {}).items() if k not in ("allocation", "devices")
                }
                claim = self.store.update(CLAIMS, claim, "status", namespace=ns, check_rv=False)
            if FINALIZER in (_md(claim).get("finalizers") or []):
                claim["metadata"]["finalizers"] = [f for f in claim["metadata"]["finalizers"] if f != FINALIZER]
                self.store.update(CLAIMS, claim, namespace=ns, check_rv=False)

    # ---------------------------------------------------------------- quota status

    def _sync_quota(self, ns: str) -> None:
        for (qns, qname), q in list(self.view.quotas.items()):
            if qns != ns:
                continue
            want = quota_mod.quota_status(q, self.view)
            if (q.get("status") or {}) == want:
                continue
            cur = self.store.get("resourcequotas", ns, qname)
            if cur is None:
                continue
            cur["status"] = want
            try:
                # The resource quota controller's write (kube-controller-manager), though this one keeps the books.
                self.store.update(
                    "resourcequotas",
                    cur,
                    "status",
                    namespace=ns,
                    check_rv=False,
                    field_manager="kube-controller-manager",
                )
            except ApiError as exc:
                log.debug("quota status update failed: %s", exc)
