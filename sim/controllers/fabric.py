"""The manager of a scenario's network-attached devices (a composable PCIe fabric, KEP-5007): when the scheduler
allocates one of them, it answers in the claim's status.devices what the device's ResourceSlice says it answers
(`BINDING_OUTCOMES`: an attach that fails, with its reason and message, the asked delay after the allocation). It runs
with the node agents, on the embedded simulator and on the real control plane, so the scheduler's PreBind meets the
same answer on both: a failure condition True fails the attempt, the next deallocates the claim and tries again, and
the fabric answers the new allocation the same way.

Devices a node's own DRA driver publishes, and their binding conditions, are the DRA kubelet plugin's
(sim/controllers/dra_plugin.py)."""

from __future__ import annotations

from typing import Any

from dragoman.sim.controllers.base import Controller, binding_outcomes

CLAIMS = "resourceclaims.resource.k8s.io"
SLICES = "resourceslices.resource.k8s.io"


class FabricManager(Controller):
    """Keyed by claim (namespace, name)."""

    name = "fabric-manager"

    def __init__(self, sim: Any) -> None:
        super().__init__(sim)
        # (claim uid, allocationTimestamp) → when to answer that allocation; an allocation is answered once.
        self._due: dict[tuple[str, str], float] = {}
        # (driver, pool) → slice name → what its annotation says: only slices that carry one (few, if any).
        self._answering: dict[tuple[str, str], dict[str, dict[str, dict]]] = {}

    def _file_slice(self, sl: dict, gone: bool = False) -> None:
        spec = sl.get("spec") or {}
        key = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""))
        name = sl["metadata"]["name"]
        outcomes = {} if gone else binding_outcomes(sl)
        if outcomes:
            self._answering.setdefault(key, {})[name] = outcomes
        elif name in self._answering.get(key, {}):
            del self._answering[key][name]
            if not self._answering[key]:
                del self._answering[key]

    def initial_keys(self):
        for sl in self.cache.all(SLICES):
            self._file_slice(sl)
        return sorted(
            (c["metadata"].get("namespace", ""), c["metadata"]["name"])
            for c in self.cache.all(CLAIMS)
            if self._asked(c)
        )

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        if resource == SLICES:
            self._file_slice(obj, gone=etype == "DELETED")
            return
        if resource != CLAIMS or not self._answering:
            return
        md = obj["metadata"]
        if etype == "DELETED":
            for k in [k for k in self._due if k[0] == md.get("uid")]:
                del self._due[k]
        elif self._asked(obj):
            self.enqueue((md.get("namespace", ""), md["name"]))

    def _outcomes(self, driver: str, pool: str) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for outcomes in self._answering.get((driver, pool), {}).values():
            out.update(outcomes)
        return out

    def _answers(self, claim: dict) -> list[tuple[dict, dict]]:
        """(allocation result, the fabric's answer) for each allocated device that waits on binding conditions and
        whose slice says how the fabric answers it."""
        alloc = (claim.get("status") or {}).get("allocation") or {}
        if not alloc or not self._answering:
            return []
        out = []
        for r in (alloc.get("devices") or {}).get("results") or ():
            if not r.get("bindingConditions"):
                continue
            answer = self._outcomes(r.get("driver", ""), r.get("pool", "")).get(r.get("device", ""))
            if answer is not None:
                out.append((r, answer))
        return out

    def _asked(self, claim: dict) -> bool:
        return bool(self._answers(claim))

    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        claim = self.store.get(CLAIMS, ns, name)
        answers = self._answers(claim) if claim is not None else []
        if not answers:
            return
        alloc_key = (claim["metadata"].get("uid", ""), str(claim["status"]["allocation"].get("allocationTimestamp")))
        due = self._due.get(alloc_key)
        if due is None:
            due = self._due[alloc_key] = self.clock.seconds() + max(a["delaySeconds"] for _, a in answers)
        if due < 0:
            return  # this allocation was answered
        if self.clock.seconds() < due:
            self.enqueue_at(key, due)
            return
        status = claim.setdefault("status", {})
        entries = {(d.get("driver"), d.get("pool"), d.get("device")): d for d in status.get("devices") or ()}
        changed = False
        now = self.clock.timestamp()
        for r, answer in answers:
            did = (r.get("driver"), r.get("pool"), r.get("device"))
            entry = entries.get(did)
            have = {c.get("type"): c for c in (entry or {}).get("conditions") or ()}
            if all(
                (have.get(c["type"]) or {}).get("status") == c["status"]
                and (have.get(c["type"]) or {}).get("message") == c["message"]
                for c in answer["conditions"]
            ):
                continue  # already says so (a snapshot's claim, loaded as it was)
            conds = {**have}
            for c in answer["conditions"]:
                conds[c["type"]] = {
                    **c,
                    "lastTransitionTime": now,
                    "observedGeneration": claim["metadata"].get("generation", 1),
                }
            new = {"driver": did[0], "pool": did[1], "device": did[2], "conditions": list(conds.values())}
            entries[did] = new
            changed = True
        if changed:
            status["devices"] = list(entries.values())
            self.store.update(CLAIMS, claim, "status", namespace=ns)
        self._due[alloc_key] = -1.0
