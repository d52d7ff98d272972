"""kube-controller-manager's device taint eviction controller (v1.37.2 pkg/controller/devicetainteviction), the part a
fleet meets: a pod whose allocated claim holds a device with a NoExecute taint (the device's own, in its ResourceSlice,
or a DeviceTaintRule's) that the claim's allocation does not tolerate is evicted; one tolerated for tolerationSeconds,
that long after the taint's timeAdded; one tolerated without a limit, never. The eviction is the pod condition
DisruptionTarget=True (DeletionByDeviceTaintManager), a DeviceTaintManagerEviction Event and a DELETE with the pod's
own grace period.

Each DeviceTaintRule carries its EvictionInProgress condition, written when the rule appears and then at most every
10 s: PodsPendingEviction while pods wait for theirs, Completed once they are gone, NotStarted when none was there,
OtherEffect for a NoSchedule rule, and for a rule of effect None what NoExecute would do (NoEffect). The counts of
evicted pods are this controller's own since it started, as upstream's are.

Runs on the embedded simulator only; on the real control plane kube-controller-manager does this.
"""

from __future__ import annotations

from typing import Any

from dragoman.fleet.k8s.allocator import device_tolerates, rule_selects_names
from dragoman.fleet.k8s.podclaims import pod_claim_names
from dragoman.sim.controllers.base import (
    Controller,
    Events,
    delete_pod,
    disruption_target,
    editable_status,
    nskey,
    write_status,
)

NAME = "device-taint-eviction-controller"  # names.DeviceTaintEvictionController: event source and field manager
RULES = "devicetaintrules.resource.k8s.io"
CLAIMS = "resourceclaims.resource.k8s.io"
SLICES = "resourceslices.resource.k8s.io"
CONDITION = "EvictionInProgress"  # resourceapi.DeviceTaintConditionEvictionInProgress
RULE_STATUS_PERIOD = 10.0  # ruleStatusPeriod: a rule's condition changes at most this often
EVICTING = "NoExecute"


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many.format(n)


class DeviceTaintEviction(Controller):
    """Keys: ("pod", namespace, name), ("rule", name), and ("all",) to look at every pod with claims again."""

    name = "device-taint-eviction"
    field_manager = NAME

    def __init__(self, sim: Any) -> None:
        super().__init__(sim)
        self.events = Events(self.store, self.clock, NAME)
        self._evicted: dict[str, int] = {}  # rule uid → pods this controller evicted for it (taintRuleStats)

    # ------------------------------------------------------------------ what changes

    def initial_keys(self):
        keys: list = [("all",)]
        keys += [("rule", r["metadata"]["name"]) for r in self.store.list(RULES)]
        return keys

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        if resource == RULES:
            self.enqueue(("rule", obj["metadata"]["name"]))
            effects = {((o.get("spec") or {}).get("taint") or {}).get("effect") for o in (obj, old) if o}
            if EVICTING in effects:
                self.enqueue(("all",))
        elif resource == SLICES:
            if any(self._slice_evicts(o) for o in (obj, old) if o):
                self.enqueue(("all",))
        elif resource == CLAIMS and etype != "DELETED":
            if (obj.get("status") or {}).get("allocation"):
                ns = obj["metadata"].get("namespace", "")
                for r in (obj.get("status") or {}).get("reservedFor") or ():
                    if r.get("resource") == "pods" and r.get("name"):
                        self.enqueue(("pod", ns, r["name"]))
        elif resource == "pods" and etype != "DELETED" and _has_claims(obj):
            if (obj.get("spec") or {}).get("nodeName"):
                ns, name = nskey(obj)
                self.enqueue(("pod", ns, name))

    @staticmethod
    def _slice_evicts(sl: dict) -> bool:
        return any(
            t.get("effect") == EVICTING
            for d in (sl.get("spec") or {}).get("devices") or ()
            for t in d.get("taints") or ()
        )

    def _anything_evicts(self) -> bool:
        """A NoExecute DeviceTaintRule, or a NoExecute taint on a published device."""
        if any(_effect(r) == EVICTING for r in self.store.list(RULES)):
            return True
        return any(self._slice_evicts(sl) for pool in self.cache.slices_by_pool.values() for sl in pool.values())

    # ------------------------------------------------------------------ reconcile

    def reconcile(self, key: Any) -> None:
        if key[0] == "all":
            # Nothing evicts without a NoExecute rule or slice taint: then no pod is looked at (at every start
            # before this, each bound pod with claims was, and each of its claims read). One appearing enqueues
            # ("all",) again (on_change).
            if self._anything_evicts():
                for pod in list(self.cache.all("pods")):
                    if (pod.get("spec") or {}).get("nodeName") and _has_claims(pod):
                        ns, name = nskey(pod)
                        self.enqueue(("pod", ns, name))
            for r in self.store.list(RULES):
                self.enqueue(("rule", r["metadata"]["name"]))
        elif key[0] == "pod":
            self._reconcile_pod(key[1], key[2])
        elif key[0] == "rule":
            self._reconcile_rule(key[1])

    def _reconcile_pod(self, ns: str, name: str) -> None:
        pod = self.cache.get("pods", ns, name)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            return
        eviction = self.pod_eviction(pod)
        if eviction is None:
            return
        when, rules = eviction
        if when > self.clock.seconds():
            self.enqueue_at(("pod", ns, name), when)
            return
        if self._evict(pod):
            for uid, rule_name in rules.items():
                self._evicted[uid] = self._evicted.get(uid, 0) + 1
                self.enqueue_after(("rule", rule_name), RULE_STATUS_PERIOD)

    def _evict(self, pod: dict) -> bool:
        """addConditionAndDeletePod: the DisruptionTarget condition, the Event, then a DELETE (uid precondition)."""
        ns, name = nskey(pod)
        cur = editable_status(self.store, "pods", ns, name)
        if cur is None or cur["metadata"].get("uid") != pod["metadata"].get("uid"):
            return False
        self.events.emit(pod, "Normal", "DeviceTaintManagerEviction", "Marking for deletion")
        conds = cur["status"].setdefault("conditions", [])
        dt = disruption_target(
            "DeletionByDeviceTaintManager",
            "Device Taint manager: deleting due to NoExecute taint",
            int(pod["metadata"].get("generation") or 1),
            self.clock.timestamp(),
        )
        old = next((c for c in conds if c.get("type") == "DisruptionTarget"), None)
        if old is None or any(old.get(k) != dt[k] for k in ("status", "reason", "message")):
            if old is None:
                conds.append(dt)
            else:
                old.update(dt)
            if not write_status(self.store, "pods", cur):
                return False
        delete_pod(self.store, pod)
        return True

    # ------------------------------------------------------------------ when a pod must go

    def pod_eviction(self, pod: dict, simulate: dict | None = None) -> tuple[float, dict[str, str]] | None:
        """podEvictionTime: the earliest eviction time (simulated-clock seconds) over the claims the pod uses and that
        are reserved for it, with the rules among the reasons (uid → name); None when nothing evicts it. `simulate`:
        a rule of effect None counted as if it were NoExecute (the NoEffect condition's "would be evicted")."""
        if not (pod.get("spec") or {}).get("nodeName"):
            return None
        ns = pod["metadata"].get("namespace", "")
        uid = pod["metadata"].get("uid")
        names = [n for _, n in pod_claim_names(pod) if n]
        ext = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        if ext:
            names.append(ext)
        best: float | None = None
        rules: dict[str, str] = {}
        for claim_name in names:
            claim = self.cache.get(CLAIMS, ns, claim_name)
            if claim is None:
                continue
            st = claim.get("status") or {}
            if not st.get("allocation"):
                continue
            if not any(r.get("resource") == "pods" and r.get("uid") == uid for r in st.get("reservedFor") or ()):
                continue
            found = self._claim_eviction(claim, simulate)
            if found is None:
                continue
            when, reasons = found
            best = when if best is None else min(best, when)
            rules.update(reasons)
        return None if best is None else (best, rules)

    def _claim_eviction(self, claim: dict, simulate: dict | None) -> tuple[float, dict[str, str]] | None:
        """claimEvictionTime: for each allocated device, each NoExecute taint (its slice's, then the rules') not
        tolerated for ever by the result's tolerations; its time is timeAdded, plus the smallest tolerationSeconds of
        the tolerations that match it."""
        rules = [r for r in self.store.list(RULES) if _effect(r) == EVICTING]
        if simulate is not None:
            rules.append(simulate)
        best: float | None = None
        reasons: dict[str, str] = {}
        for res in ((claim["status"]["allocation"].get("devices") or {}).get("results")) or ():
            driver, pool, device = res.get("driver", ""), res.get("pool", ""), res.get("device", "")
            taints: list[tuple[dict, dict | None]] = [
                (t, None) for t in self._slice_taints(driver, pool, device) if t.get("effect") == EVICTING
            ]
            taints += [
                ({**(r.get("spec") or {}).get("taint", {}), "effect": EVICTING}, r)
                for r in rules
                if rule_selects_names(r, driver, pool, device)
            ]
            for taint, rule in taints:
                limits: list[int] = []
                forever = False
                for tol in res.get("tolerations") or ():
                    if tol.get("effect") == EVICTING and device_tolerates(tol, taint):
                        if tol.get("tolerationSeconds") is None:
                            forever = True
                            break
                        limits.append(max(0, int(tol["tolerationSeconds"])))
                if forever:
                    continue
                # A taint without timeAdded counts from now.
                added = self.clock.seconds_at(taint.get("timeAdded"))
                when = (self.clock.seconds() if added is None else added) + (min(limits) if limits else 0)
                best = when if best is None else min(best, when)
                if rule is not None:
                    reasons[rule["metadata"].get("uid", "")] = rule["metadata"]["name"]
        return None if best is None else (best, reasons)

    def _slice_taints(self, driver: str, pool: str, device: str) -> list[dict]:
        for sl in self.cache.slices_by_pool.get((driver, pool), {}).values():
            for d in (sl.get("spec") or {}).get("devices") or ():
                if d.get("name") == device:
                    return list(d.get("taints") or ())
        return []

    # ------------------------------------------------------------------ the rule's condition

    def _reconcile_rule(self, name: str) -> None:
        """maybeUpdateRuleStatus: the EvictionInProgress condition, rewritten only when it differs, and not within
        10 s of its last change for the same generation."""
        rule = self.store.get(RULES, "", name)
        if rule is None:
            return
        generation = int(rule["metadata"].get("generation") or 1)
        conds = (rule.get("status") or {}).get("conditions") or []
        existing = next((c for c in conds if c.get("type") == CONDITION), None)
        if existing is not None and existing.get("observedGeneration") == generation:
            if existing.get("reason") == "NoEffect":  # "This information will not be updated again."
                return
            changed = self.clock.seconds_at(existing.get("lastTransitionTime"))
            since = 0.0 if changed is None else self.clock.seconds() - changed
            if since < RULE_STATUS_PERIOD:
                self.enqueue_after(("rule", name), RULE_STATUS_PERIOD - since)
                return
        uid = rule["metadata"].get("uid", "")
        effect = _effect(rule)
        new = {"type": CONDITION, "status": "False", "reason": f"Effect{effect}", "message": ""}
        if effect == EVICTING:
            pods, namespaces = self._pending(uid)
            if pods:
                new["status"], new["reason"] = "True", "PodsPendingEviction"
                new["message"] = (
                    _plural(pods, "1 pod needs", "{} pods need")
                    + " to be evicted in "
                    + _plural(namespaces, "1 namespace.", "{} different namespaces.")
                )
            else:
                new["reason"] = "Completed" if self._evicted.get(uid) else "NotStarted"
        elif effect == "None":
            pods, namespaces = self._pending(uid, simulate=rule)
            published, allocated = self._selected(rule)
            new["reason"] = "NoEffect"
            new["message"] = (
                _plural(published, "1 published device", "{} published devices")
                + " selected. "
                + _plural(allocated, "1 allocated device", "{} allocated devices")
                + " selected. "
                + _plural(pods, "1 pod", "{} pods")
                + " would be evicted in "
                + _plural(namespaces, "1 namespace ", "{} different namespaces ")
                + "if the effect was NoExecute. This information will not be updated again. Recreate the "
                "DeviceTaintRule to trigger an update."
            )
        else:
            new["reason"] = "OtherEffect"
            new["message"] = "Eviction only happens for the NoExecute effect."
        evicted = self._evicted.get(uid, 0)
        if evicted:
            new["message"] += (" " if new["message"] else "") + _plural(evicted, "1 pod ", "{} pods ")
            new["message"] += "evicted since starting the controller."
        new["observedGeneration"] = generation
        if existing is not None and all(existing.get(k) == v for k, v in new.items()):
            return
        cur = editable_status(self.store, RULES, None, name)
        if cur is None or cur["metadata"].get("uid") != uid:
            return
        new["lastTransitionTime"] = self.clock.timestamp()
        kept = [c for c in cur["status"].get("conditions") or () if c.get("type") != CONDITION]
        cur["status"]["conditions"] = [*kept, new]
        write_status(self.store, RULES, cur)

    def _pending(self, uid: str, simulate: dict | None = None) -> tuple[int, int]:
        """countPendingPods: pods not being deleted whose eviction has this rule among its reasons, and their
        namespaces."""
        pods = 0
        namespaces: set[str] = set()
        for pod in list(self.cache.all("pods")):
            if pod["metadata"].get("deletionTimestamp") or not _has_claims(pod):
                continue
            eviction = self.pod_eviction(pod, simulate)
            if eviction is not None and uid in eviction[1]:
                pods += 1
                namespaces.add(pod["metadata"].get("namespace", ""))
        return pods, len(namespaces)

    def _selected(self, rule: dict) -> tuple[int, int]:
        """countTaintedDevices: devices the rule selects in the published slices, and in allocated claims."""
        published = sum(
            1
            for (driver, pool), slices in self.cache.slices_by_pool.items()
            for sl in slices.values()
            for d in (sl.get("spec") or {}).get("devices") or ()
            if rule_selects_names(rule, driver, pool, d.get("name", ""))
        )
        allocated = sum(
            1
            for claim in self.cache.all(CLAIMS)
            for res in (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or ()
            if rule_selects_names(rule, res.get("driver", ""), res.get("pool", ""), res.get("device", ""))
        )
        return published, allocated


def _effect(rule: dict) -> str:
    return str(((rule.get("spec") or {}).get("taint") or {}).get("effect") or "")


def _has_claims(pod: dict) -> bool:
    return bool((pod.get("spec") or {}).get("resourceClaims")) or bool(
        ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    )
