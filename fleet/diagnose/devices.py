"""Findings about what v1.37's on-by-default DRA features do to pods (findings.md, "Pods" and "Devices"): device
taints and DeviceTaintRules (pending-device-taint, device-taint-eviction), counter sets (pending-counters), shared
capacity (pending-capacity), binding conditions (binding-pending, binding-failed), prioritized lists
(pending-first-available), missing claims and classes, admin access, the scheduler's filter timeout and device
health.

What keeps a device from a request comes from each device's state (fleet/k8s/devicestate.py, the model's
`device_state`): the same holders, taints, counters and shares the allocator reads."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from dragoman.fleet import k8s
from dragoman.fleet.diagnose.context import Context, plural, pod_ref
from dragoman.fleet.diagnose.selectors import pod_claim_specs
from dragoman.fleet.findings import Finding, ObjectRef, make_finding
from dragoman.fleet.k8s import key_of
from dragoman.fleet.k8s.devicestate import (
    BINDING_FAILED,
    DeviceState,
    binding_state,
    result_entries,
    rule_eviction,
)
from dragoman.fleet.k8s.podclaims import pod_claim_names
from dragoman.fleet.k8s.tolerations import tolerates
from dragoman.fleet.model import (
    DeviceId,
    FleetModel,
    claim_requests,
    device_health,
    event_count,
    event_last_seen,
    request_alternatives,
)

_EMPTY: dict = {}  # read only: what a missing status reads as

ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"  # on a namespace, "true": claims there may ask adminAccess
FILTER_TIMEOUT = (
    "timed out trying to allocate devices"  # the DynamicResources filter's message (DRASchedulerFilterTimeout)
)
# What PreBind's error says when a device's binding failure condition is True (v1.37.2 isClaimReadyForBinding):
# `device binding failed: claim=NAME, reason=REASON, message="MESSAGE"`.
BINDING_FAILED_WORDS = "device binding failed"
# The order a person acts on what keeps a request's devices from it: a taint or exhausted counters are what the
# new features add; held devices are plain "not enough".
CAUSES = ("taint", "counters", "capacity", "binding", "held")
CAUSE_WORDS = {
    "taint": "tainted",
    "counters": "blocked by counters",
    "capacity": "shared, too little left",
    "binding": "binding",
    "held": "held",
}
CAUSE_FINDING = {"taint": "pending-device-taint", "counters": "pending-counters", "capacity": "pending-capacity"}


def _obj_text(ref: ObjectRef) -> str:
    return f"{ref[0]} {ref[1]}/{ref[2]}" if ref[1] else f"{ref[0]} {ref[2]}"


# ---- device taints that evict ----------------------------------------------------------------------------------


def _tolerated_for(claim: dict, device: tuple, taint: dict) -> int | None:
    """How long the claim's allocation of `device` tolerates a NoExecute `taint`: seconds (the shortest of the
    tolerations that match), -1 for ever (a matching toleration without tolerationSeconds), None when none match."""
    secs: int | None = None
    for did, result in result_entries(claim):
        if did != device:
            continue
        for tol in result.get("tolerations") or ():
            if not isinstance(tol, dict) or (tol.get("effect") or "NoExecute") != "NoExecute":
                continue
            if not tolerates(tol, taint):
                continue
            if tol.get("tolerationSeconds") is None:
                return -1
            try:
                n = max(int(tol["tolerationSeconds"]), 0)
            except (TypeError, ValueError):
                continue
            secs = n if secs is None else min(secs, n)
    return secs


def taint_evictions(ctx: Context) -> Iterable[Finding]:
    """device-taint-eviction: a DeviceTaintRule whose EvictionInProgress condition is True, or a NoExecute taint (a
    rule's or a slice's) on devices claims hold without tolerating it: the eviction controller deletes their pods."""
    m = ctx.m
    states = m.device_states()
    rules = {key_of(r)[1]: r for r in m.objects["DeviceTaintRule"].values()}
    hit: dict[str, list[tuple[tuple, tuple]]] = defaultdict(list)  # source -> [(device, holders)]
    grace: dict[str, list[str]] = defaultdict(list)  # source -> what the holders' tolerations say
    # A state's taints are its device's (its slice's and the rules'): only tainted devices have a state to build.
    for dev in states.tainted():
        did = dev.id
        st = states.state(did)
        if not st.holders:
            continue
        for t in st.taints:
            if t.effect != "NoExecute":
                continue
            # The eviction controller reads the tolerations the scheduler copied into each allocation result: one
            # without tolerationSeconds keeps the claim for ever; with them, its pods go that long after timeAdded.
            holders = []
            for ck in st.holders:
                secs = _tolerated_for(m.objects["ResourceClaim"].get(ck) or {}, did, t.as_taint())
                if secs is None:
                    holders.append(ck)
                elif secs >= 0:
                    holders.append(ck)
                    grace[t.source].append(
                        f"claim {ck[0]}/{ck[1]} tolerates {t.key}:NoExecute for {secs} s from the taint's timeAdded"
                        + (f" ({t.time_added})" if t.time_added else "")
                        + ": its pods are evicted then"
                    )
            if holders:
                hit[t.source].append((did, tuple(holders)))
    sources = sorted(set(hit) | {f"DeviceTaintRule {n}" for n, r in rules.items() if rule_eviction(r) is not None})
    for source in sources:
        rule_name = source[len("DeviceTaintRule ") :] if source.startswith("DeviceTaintRule ") else None
        held = hit.get(source, [])
        claims = sorted({c for _, hs in held for c in hs})
        pods = sorted({p for ck in claims for p in m.claim_pods(m.objects["ResourceClaim"].get(ck) or {})})
        evidence = []
        objects: list[ObjectRef]
        if rule_name is not None:
            rule = rules.get(rule_name) or {}
            taint = (rule.get("spec") or {}).get("taint") or {}
            sel = (rule.get("spec") or {}).get("deviceSelector") or {}
            objects = [("DeviceTaintRule", "", rule_name)]
            evidence.append(
                f"DeviceTaintRule {rule_name}: taint {taint.get('key', '')}"
                + (f"={taint.get('value')}" if taint.get("value") else "")
                + f":{taint.get('effect', '')} on devices of "
                + (", ".join(f"{k} {v}" for k, v in sorted(sel.items())) or "every driver")
            )
            cond = rule_eviction(rule)
            if cond is not None:
                evidence.append(
                    f"condition EvictionInProgress=True ({cond.get('reason', '')}): {cond.get('message', '')}"
                )
            subject = f"DeviceTaintRule {rule_name}"
        else:
            views = [m._device_view(d) for d, _ in held]
            slices = sorted({v.slice for v in views if v is not None})
            objects = [("ResourceSlice", "", s) for s in slices[:3]]
            subject = f"the NoExecute taint of ResourceSlice {slices[0] if slices else '?'}"
            t = next(t for t in states.state(held[0][0]).taints if t.source == source and t.effect == "NoExecute")
            evidence.append(f"{len(held)} held device(s) carry {t.text()}")
        for did, hs in held[:3]:
            evidence.append(f"device {'/'.join(did)} held by {', '.join(f'{ns}/{n}' for ns, n in hs)}")
        evidence += grace.get(source, [])[:3]
        if pods:
            evidence.append(f"pods using them: {', '.join(f'{ns}/{n}' for ns, n in pods[:4])}")
        if not objects:
            continue
        yield make_finding(
            "device-taint-eviction",
            objects + [("ResourceClaim", *c) for c in claims[:4]] + [pod_ref(p) for p in pods[:4]],
            f"{subject} evicts {plural(len(pods), 'pod')} using {plural(len(held), 'tainted device')}",
            evidence,
            subject=subject,
        )


# ---- a pod's claims as the scheduler reads them ----------------------------------------------------------------


def claim_findings(ctx: Context, pk: tuple[str, str], pod: dict) -> Iterable[Finding]:
    """claim-missing, class-missing, admin-access-forbidden, binding-pending/failed: what stops a pending pod before
    any device is counted."""
    m = ctx.m
    ns = pk[0]
    pname = f"{pk[0]}/{pk[1]}"
    ref = pod_ref(pk)
    evs = ctx.events("Pod", *pk)
    generated = dict(pod_claim_names(pod))
    for rc in (pod.get("spec") or {}).get("resourceClaims") or ():
        if rc.get("resourceClaimName") and (ns, rc["resourceClaimName"]) not in m.objects["ResourceClaim"]:
            missing = ("ResourceClaim", ns, rc["resourceClaimName"])
        elif (
            rc.get("resourceClaimTemplateName")
            and (ns, rc["resourceClaimTemplateName"]) not in m.objects["ResourceClaimTemplate"]
            and not (generated.get(rc.get("name")) and (ns, generated[rc.get("name")]) in m.objects["ResourceClaim"])
        ):
            missing = ("ResourceClaimTemplate", ns, rc["resourceClaimTemplateName"])
        else:
            continue
        yield make_finding(
            "claim-missing",
            [ref, missing],
            f"pod {pname} refers to {missing[0]} {missing[2]}, which does not exist",
            [f"spec.resourceClaims[{rc.get('name', '')}]: {missing[0]} {ns}/{missing[2]} is not in the cluster"] + evs,
            subject=f"{missing[0]} {missing[2]}",
            namespace=ns,
            pod=pname,
        )
        return
    specs = pod_claim_specs(m, pod)
    namespace = m.objects["Namespace"].get(("", ns))
    allowed = ((namespace or {}).get("metadata") or {}).get("labels", {}).get(ADMIN_ACCESS_LABEL) == "true"
    for oref, cspec in specs.values():
        for req in claim_requests(cspec.get("devices")):
            alts = request_alternatives(req)
            gone = [b.get("deviceClassName", "") for _, b in alts if b.get("deviceClassName") not in ctx.classes]
            # A prioritized list may name a class that is not there among others; the scheduler aborts only when the
            # class of every alternative it reaches is missing. Without any alternative's class, the pod cannot start.
            if alts and len(gone) == len(alts):
                yield make_finding(
                    "class-missing",
                    [ref, oref, ("DeviceClass", "", gone[0])],
                    f"pod {pname} cannot get its devices: {_obj_text(oref)} request {req.get('name', '')} asks for "
                    f"DeviceClass {gone[0]}, which does not exist",
                    [f"{_obj_text(oref)} request {req.get('name', '')}: deviceClassName {', '.join(gone)}"]
                    + [f"DeviceClasses in the cluster: {', '.join(sorted(ctx.classes)[:6]) or 'none'}"]
                    + evs,
                    deviceclass=gone[0],
                    subject=_obj_text(oref),
                    pod=pname,
                )
                return
            admin = [n for n, b in alts if b.get("adminAccess")]
            existing = m.objects["ResourceClaim"].get(oref[1:]) if oref[0] == "ResourceClaim" else None
            # A claim allocated before the label went is kept; a new one (a template's) is refused on creation.
            if admin and not allowed and (existing is None or not m.claim_devices(existing)):
                yield make_finding(
                    "admin-access-forbidden",
                    [ref, oref],
                    f"pod {pname} waits: {_obj_text(oref)} asks for admin access, which namespace {ns} does not allow",
                    [
                        f"{_obj_text(oref)} request {admin[0]}: adminAccess: true",
                        f"namespace {ns} lacks the label {ADMIN_ACCESS_LABEL}=true: the API server refuses such a "
                        "claim there",
                    ]
                    + _claim_refusals(ctx, pk)
                    # Not the resourceclaim controller's FailedResourceClaimCreation Events as they are: it retries
                    # with backoff, so their count (and the generated claim name) changes from one reading to the
                    # next; what the API server said is in the line above.
                    + [e for e in evs if "FailedResourceClaimCreation" not in e],
                    namespace=ns,
                    subject=_obj_text(oref),
                )
                return
    found = list(_binding_findings(ctx, pk, pod, specs, evs))
    yield from found[:1]


# The resourceclaim controller's Event when the API server refuses the claim it makes from a pod's template
# (v1.37.2 pkg/controller/resourceclaim: "PodResourceClaim <name>: create ResourceClaim <name>: <error>"), the error
# naming the claim the server generated: `ResourceClaim.resource.k8s.io "<pod>-<claim>-xxxxx" is invalid: <causes>`.
_CLAIM_REFUSED_RE = re.compile(r"PodResourceClaim (\S+): create ResourceClaim [^:]*: .*? is invalid: (.*)$")


def _claim_refusals(ctx: Context, pk: tuple[str, str]) -> list[str]:
    """What the API server said when it refused the claim the resourceclaim controller made for the pod (its newest
    FailedResourceClaimCreation Event), without what changes at each retry (the generated name, the count)."""
    for e in reversed(ctx.m.events_for("Pod", *pk)):
        if e.get("reason") != "FailedResourceClaimCreation":
            continue
        found = _CLAIM_REFUSED_RE.search(str(e.get("message") or e.get("note") or ""))
        if found:
            who = (
                ((e.get("source") or {}).get("component")) or e.get("reportingController") or "resourceclaim controller"
            )
            return [
                f"event FailedResourceClaimCreation from {who}: the API server refused pod claim {found.group(1)}: "
                + found.group(2)
            ]
    return []


def scheduler_said(ctx: Context, pk: tuple[str, str], words: str) -> tuple[dict, int] | None:
    """The newest of the pod's FailedScheduling Events whose message holds `words`, with how many times such a
    failure was recorded: what the scheduler said on an earlier attempt stays (as long as the API server keeps the
    Event, an hour by default) when the next attempt fails otherwise (a binding that failed is deallocated and tried
    again; a filter that timed out may finish next time), so a story that cycles is still read."""
    said = [
        e
        for e in ctx.m.events_for("Pod", *pk)
        if e.get("reason") == "FailedScheduling" and words in str(e.get("message") or e.get("note") or "")
    ]
    if not said:
        return None
    return said[-1], sum(event_count(e) for e in said)


def _binding_findings(ctx: Context, pk: tuple[str, str], pod: dict, specs: dict, evs: list[str]) -> Iterable[Finding]:
    """binding-failed when a device's failure condition is True in its claim's status, or the scheduler said so on
    an earlier attempt (the claim deallocated since, maybe allocated again and waiting); else binding-pending while
    a device's binding conditions are not yet all True."""
    m = ctx.m
    pname = f"{pk[0]}/{pk[1]}"
    ref = pod_ref(pk)
    pending: list[tuple[Finding, str]] = []  # (binding-pending, the device it waits for)
    for oref, _ in specs.values():
        if oref[0] != "ResourceClaim":
            continue
        claim = m.objects["ResourceClaim"].get(oref[1:])
        if claim is None:
            continue
        for did, r in result_entries(claim):
            b = binding_state(claim, did, r)
            if b is None:
                continue
            kind, words = b
            fid = "binding-failed" if kind == BINDING_FAILED else "binding-pending"
            node = m.claim_node(claim) or (pod.get("status") or {}).get("nominatedNodeName") or "?"
            conds = ", ".join(
                r.get("bindingFailureConditions" if fid == "binding-failed" else "bindingConditions") or ()
            )
            finding = make_finding(
                fid,
                [ref, oref],
                f"pod {pname} {'cannot bind' if fid == 'binding-failed' else 'waits to bind'} to {node}: device "
                f"{did[2]} of claim {oref[2]} {'failed its binding' if fid == 'binding-failed' else 'is not ready yet'}"
                f" ({words})",
                [
                    f"claim {oref[1]}/{oref[2]} allocated {'/'.join(did)} (binding conditions: "
                    f"{', '.join(r.get('bindingConditions') or ()) or 'none'}; failure conditions: "
                    f"{', '.join(r.get('bindingFailureConditions') or ()) or 'none'})",
                    f"claim status.devices: {words}",
                ]
                + evs,
                device="/".join(did),
                conditions=conds,
                claim=f"{oref[1]}/{oref[2]}",
            )
            if fid == "binding-failed":
                yield finding
                return
            pending.append((finding, "/".join(did)))
    said = scheduler_said(ctx, pk, BINDING_FAILED_WORDS)
    if said is not None:
        event, times = said
        message = str(event.get("message") or event.get("note") or "")
        parsed = _BINDING_FAILED_RE.search(message)
        claim_name, reason, why = parsed.groups() if parsed else ("?", "", message)
        now = [f.evidence[0] for f, _ in pending[:1]]
        yield make_finding(
            "binding-failed",
            [ref] + ([("ResourceClaim", pk[0], claim_name)] if parsed else []),
            f"pod {pname} cannot bind: a device of claim {claim_name} failed its binding ({reason or 'failed'}: "
            f"{why}); the scheduler deallocates it and tries again",
            [f"event FailedScheduling{f' (x{times})' if times > 1 else ''} at {event_last_seen(event)}: {message}"]
            + (["now: " + n for n in now] or ["now: no device of its claims is waiting for binding conditions"])
            + evs,
            device=pending[0][1] if pending else f"claim {claim_name}'s device",
            conditions=reason or "its failure condition",
            claim=f"{pk[0]}/{claim_name}",
        )
        return
    for f, _ in pending:
        yield f


_BINDING_FAILED_RE = re.compile(r'device binding failed: claim=([^,]+), reason=([^,]*), message="(.*)"')


def filter_timeout(ctx: Context, pk: tuple[str, str], pod: dict) -> Iterable[Finding]:
    """filter-timeout when the pod's PodScheduled condition says the DRA filter timed out, or one of its
    FailedScheduling Events said so on an earlier attempt: the search's time depends on the scheduler's load, so the
    next attempt may fail on something else (what the count then explains) and the one after time out again."""
    cond = next((c for c in (pod.get("status") or {}).get("conditions") or () if c.get("type") == "PodScheduled"), None)
    message = (cond or {}).get("message") or ""
    said = scheduler_said(ctx, pk, FILTER_TIMEOUT)
    now = bool(cond and cond.get("status") == "False" and FILTER_TIMEOUT in message)
    if not now and said is None:
        return
    evidence = [f"condition PodScheduled=False ({(cond or {}).get('reason', '')}): {message}"] if cond else []
    if said is not None and not now:
        event, times = said
        evidence.insert(
            0,
            f"event FailedScheduling{f' (x{times})' if times > 1 else ''} at {event_last_seen(event)}: "
            f"{event.get('message') or event.get('note') or ''}",
        )
    yield make_finding(
        "filter-timeout",
        [pod_ref(pk)],
        f"pod {pk[0]}/{pk[1]} waits: the scheduler timed out allocating its devices"
        + ("" if now else " on an earlier attempt"),
        evidence + ctx.events("Pod", *pk),
        pod=f"{pk[0]}/{pk[1]}",
    )


def health(ctx: Context) -> Iterable[Finding]:
    """device-unhealthy for every pod holding DRA devices (those claims are reserved for) the kubelet reports
    unhealthy."""
    m = ctx.m
    all_pods = m.objects["Pod"]
    # The kubelet's allocatedResourcesStatus is the only source of these findings: when no pod carries any (a fleet of
    # kubelets that do not report it), no claim needs reading. One look at each pod, stopping at the first that does.
    if not any(map(_reports_device_health, all_pods.values())):
        return
    seen: set[tuple[str, str]] = set()
    reporting: list[tuple[tuple[str, str], dict]] = []
    # Each claim's pods looked at once, and only those the kubelet reports device health for sorted and read further
    # (a fleet's claims are reserved for 10,000s of pods, hardly any with allocatedResourcesStatus).
    claim_pods, get_pod, add = m.claim_pods, all_pods.get, seen.add
    for claim in m.objects["ResourceClaim"].values():
        for pk in claim_pods(claim):
            if pk in seen:
                continue
            add(pk)
            pod = get_pod(pk)
            if (
                pod is not None
                and _reports_device_health(pod)
                and (pod.get("status") or _EMPTY).get("phase") not in ("Succeeded", "Failed")
            ):
                reporting.append((pk, pod))
    for pk, pod in sorted(reporting, key=lambda kp: kp[0]):
        yield from unhealthy(ctx, pk, pod)


def _reports_device_health(pod: dict) -> bool:
    """Whether the kubelet reports the health of any of the pod's devices (allocatedResourcesStatus), the only source
    of device_health's entries: a pod without it has nothing to say, and its claims need not be read. (Asked of every
    pod a claim is reserved for: plain loops, no generator.)"""
    status = pod.get("status") or _EMPTY
    for field in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(field) or ():
            if isinstance(cs, dict) and cs.get("allocatedResourcesStatus"):
                return True
    return False


def unhealthy(ctx: Context, pk: tuple[str, str], pod: dict) -> Iterable[Finding]:
    if not _reports_device_health(pod):
        return
    m = ctx.m
    claims = [c for _, name in m.pod_claims(pod) if name and (c := m.claim(pk[0], name)) is not None]
    bad = [h for h in device_health(pod, claims) if h.health == "Unhealthy"]
    if not bad:
        return
    node = (pod.get("spec") or {}).get("nodeName") or "?"
    yield make_finding(
        "device-unhealthy",
        [pod_ref(pk)] + ([("Node", "", node)] if node != "?" else []),
        f"pod {pk[0]}/{pk[1]} runs on {plural(len(bad), 'unhealthy device')}: {bad[0].device}",
        [
            f"container {h.container}: {h.status_name}: {h.device}"
            + (f" (resourceID {h.resource_id})" if h.resource_id != h.device else "")
            + f" is {h.health}"
            + (f" ({h.message})" if h.message else "")
            for h in bad[:4]
        ]
        + ctx.events("Pod", *pk),
        device=bad[0].device,
        node=node,
        pod=f"{pk[0]}/{pk[1]}",
    )


# ---- why the devices a pending pod's requests select cannot be given now ------------------------------------------


@dataclasses.dataclass
class Alternative:
    """One way to satisfy a request (`exactly`, or one firstAvailable subrequest), judged on the eligible nodes."""

    name: str
    device_class: str
    want: int  # devices wanted; 0 for All (every matching device)
    matched: int = 0  # devices its selectors keep that the eligible nodes reach
    best_node: str | None = None
    best_usable: int = 0
    excluded: Counter = dataclasses.field(default_factory=Counter)  # on the best node: cause -> devices
    example: dict = dataclasses.field(default_factory=dict)  # cause -> (device, words)
    holders: list = dataclasses.field(default_factory=list)

    @property
    def satisfiable(self) -> bool:
        if self.want == 0:
            return self.best_usable > 0 and not self.excluded
        return self.best_usable >= self.want

    @property
    def cause(self) -> str | None:
        """The cause that, removed, would satisfy it on the best node; else the largest; None when it matches
        nothing or is satisfiable."""
        if self.satisfiable or not self.matched:
            return None
        need = self.want or self.best_usable + sum(self.excluded.values())
        for c in CAUSES:
            if self.excluded.get(c) and self.best_usable + self.excluded[c] >= need:
                return c
        ranked = sorted(self.excluded.items(), key=lambda kv: (-kv[1], CAUSES.index(kv[0])))
        return ranked[0][0] if ranked else "held"

    def words(self) -> str:
        want = "all" if self.want == 0 else str(self.want)
        where = f" on {self.best_node}" if self.best_node else ""
        parts = ", ".join(
            f"{n} {CAUSE_WORDS.get(c, c)}" for c, n in sorted(self.excluded.items(), key=lambda kv: -kv[1])
        )
        return (
            f"{self.name} (DeviceClass {self.device_class}): wants {want}, {self.best_usable} usable{where}"
            + (f" ({parts})" if parts else "")
            + ("" if self.matched else "; its selectors keep no device on an eligible node")
        )


def judge(ctx: Context, body: dict, name: str, nodes: list[str]) -> Alternative:
    """One alternative against the devices its selectors keep on these nodes (network-attached ones on each node they
    reach), each device's exclusion read from its state."""
    m = ctx.m
    mode = body.get("allocationMode") or "ExactCount"
    alt = Alternative(name, str(body.get("deviceClassName", "")), 0 if mode == "All" else int(body.get("count") or 1))
    res = m.request_matches(body)
    if res.compile_error or not res.matched:
        return alt
    tolerations = body.get("tolerations") or None
    caps = (body.get("capacity") or {}).get("requests") if isinstance(body.get("capacity"), dict) else None
    eligible = set(nodes)
    states = m.device_states()
    per_node: dict[str, Counter] = defaultdict(Counter)
    examples: dict[str, dict] = defaultdict(dict)
    holders: dict[str, set] = defaultdict(set)
    seen: set = set()
    by_node, attached = ctx.matched_by_node(res)
    # A device's exclusion is read from its state alone: devices that share a state (every free one, those the same
    # claims hold) are judged once (the memo holds each state, so an id is not reused while it lives).
    exclusions: dict[int, tuple[DeviceState, str]] = {}
    if attached:
        # A network-attached device reaches several nodes, in between the nodes' own: every device, in order.
        reached: Iterable[tuple[DeviceId, Sequence[str]]] = _reaches(m, res.matched, eligible)
    else:
        # Only the eligible nodes' own devices, each node's in the matched order: a pending pod that fits a few nodes
        # does not walk every matched device of the fleet (23 pending pods x 20,000 devices at 5,000 nodes).
        reached = ((d, (n,)) for n in eligible for d in by_node.get(n) or ())
    for d, where in reached:
        seen.add(d)
        st = states.state(d)
        hit = exclusions.get(id(st))
        if hit is None:
            hit = exclusions[id(st)] = (st, st.exclusion(tolerations, caps))
        cause = hit[1]
        for n in where:
            per_node[n][cause or "usable"] += 1
            if cause and cause not in examples[n]:
                examples[n][cause] = (d, st.words())
            if st.holders:
                holders[n].update(st.holders)
            for cb in st.counters:
                holders[n].update(cb.claims)
    alt.matched = len(seen)
    if not per_node:
        return alt
    best = max(sorted(per_node), key=lambda n: (per_node[n]["usable"], sum(per_node[n].values())))
    alt.best_node = best
    alt.best_usable = per_node[best]["usable"]
    alt.excluded = Counter({k: v for k, v in per_node[best].items() if k != "usable"})
    alt.example = examples[best]
    alt.holders = sorted(holders[best])
    return alt


def _reaches(m: FleetModel, matched: list[DeviceId], eligible: set[str]) -> Iterable[tuple[DeviceId, list[str]]]:
    """Each matched device with the eligible nodes it reaches (its pool's node, or a network-attached device's)."""
    for d in matched:
        dv_node = m.slice_pool_node(d[:2])
        if dv_node is not None:
            where = [dv_node] if dv_node in eligible else []
        else:
            dv = m._device_view(d)
            where = [n for n in m.device_nodes(dv) if n in eligible] if dv is not None else []
        if where:
            yield d, where


def eligible_nodes(ctx: Context, spec: dict) -> list[str]:
    """Nodes the pod's node selection and the node's taints and cordon leave to it."""
    out = []
    matches_node = k8s.compile_node_filter(spec)  # pod_matches_node, its terms read once for every candidate
    node_objs = ctx.m.objects["Node"]
    for name in ctx.candidates(spec.get("nodeSelector") or {}):
        v = ctx.nodes[name]
        raw = node_objs.get(("", name)) or {}
        if not v.schedulable or not matches_node(raw) or k8s.untolerated_taints(spec, raw):
            continue
        out.append(name)
    return out


def excluded_findings(
    ctx: Context, pk: tuple[str, str], pod: dict, reqs: dict[str, int], claims: dict
) -> Iterable[Finding]:
    """pending-first-available, pending-device-taint, pending-counters or pending-capacity for the first request the
    fleet cannot satisfy now because of that cause (nothing when held devices or selectors are the whole story)."""
    m = ctx.m
    spec = pod.get("spec") or {}
    pname = f"{pk[0]}/{pk[1]}"
    ref = pod_ref(pk)
    nodes = eligible_nodes(ctx, spec)
    evs = ctx.events("Pod", *pk)
    requests: list[tuple[str, ObjectRef | None, list[tuple[str, dict]]]] = []
    for res, n in reqs.items():
        cls = m.class_serving(res)
        if cls is not None:
            requests.append(
                (f"{n}× {res} through DeviceClass {cls}", None, [(res, {"deviceClassName": cls, "count": n})])
            )
    for oref, cspec in claims.values():
        for req in claim_requests(cspec.get("devices")):
            requests.append((f"{_obj_text(oref)} request {req.get('name', '')}", oref, request_alternatives(req)))
    for label, oref, alts in requests:
        judged = [judge(ctx, body, name, nodes) for name, body in alts]
        if any(a.satisfiable for a in judged):
            continue
        extra = [oref] if oref is not None else []
        # The nodes the scheduler would try first for it: where the most of its devices could be given.
        tried = list(dict.fromkeys([a.best_node for a in judged if a.best_node] + nodes))
        why_nodes = node_reasons(ctx, pod, reqs, claims, tried)
        if len(judged) > 1:
            yield make_finding(
                "pending-first-available",
                [ref, *extra],
                f"pod {pname} waits: no alternative of {label} can be satisfied now",
                [a.words() for a in judged] + _examples(judged) + why_nodes + evs,
                subject=label,
                pod=pname,
            )
            return
        (a,) = judged
        cause = a.cause
        fid = CAUSE_FINDING.get(cause or "")
        if fid is None:
            continue
        dev, words = a.example.get(cause, (None, ""))
        st = m.device_state(dev) if dev is not None else None
        params: dict = {"pod": pname}
        if fid == "pending-device-taint" and st is not None:
            tols = alts[0][1].get("tolerations") or None
            t = st.untolerated(tols)
            if t is not None:
                params.update(taint=f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}", source=t.source)
                if t.source.startswith("DeviceTaintRule "):
                    extra.append(("DeviceTaintRule", "", t.source[len("DeviceTaintRule ") :]))
        if fid == "pending-counters" and st is not None and st.counters:
            params.update(
                counter_set=st.counters[0].counter_set,
                holders=", ".join(f"{ns}/{n}" for ns, n in st.counters[0].claims[:3]) or "other claims",
            )
        if fid == "pending-capacity":
            params.update(holders=", ".join(f"{ns}/{n}" for ns, n in a.holders[:3]) or "other claims")
        why = {
            "taint": f"{params.get('taint', 'a taint')} (from {params.get('source', '?')}) is not tolerated",
            "counters": f"counter set {params.get('counter_set', '?')} is used by {params.get('holders', '?')}",
            "capacity": f"what is left of the shared device is too little ({words})",
        }[cause or ""]
        yield make_finding(
            fid,
            [ref, *extra],
            f"pod {pname} waits: no device for {label} can be given now: {why}",
            [a.words()] + _examples([a]) + why_nodes + evs,
            **params,
        )
        return


def _pod_claims(ctx: Context, pod: dict, reqs: dict[str, int], claims: dict) -> list[dict]:
    """The claims the scheduler allocates together for this pod: its claims (a template's as the claim it would make)
    and, for extended resources a DeviceClass serves, the bridge's <extended-resources> claim."""
    from dragoman.fleet.k8s.allocator import extended_resources_claim

    m = ctx.m
    pk = key_of(pod)
    wanted: list[dict] = []
    for oref, cspec in claims.values():
        obj = m.objects["ResourceClaim"].get(oref[1:]) if oref[0] == "ResourceClaim" else None
        wanted.append(obj or {"metadata": {"namespace": oref[1], "name": f"{pk[1]}-{oref[2]}"}, "spec": cspec})
    ext = {r: n for r, n in reqs.items() if m.class_serving(r) is not None}
    if ext:

        def class_for(resource: str) -> dict | None:
            name = m.class_serving(resource)
            c = ctx.classes.get(name) if name else None
            return c.raw if c is not None else None

        made = extended_resources_claim(pod, ext, class_for)
        if made is not None:
            wanted.append(made[0])
    return wanted


def _constraint_words(a, explained: list, claim: str, constraint: dict) -> str | None:
    """Why one constraint of `claim` cannot be met on a node from the devices its requests could each take (the
    allocator's candidates): None when these candidates could meet it alone."""
    from dragoman.fleet.k8s.allocator import RequestExplanation

    match = constraint.get("matchAttribute")
    distinct = constraint.get("distinctAttribute")
    attr = str(match or distinct or "")
    if not attr:
        return None
    names = [str(r) for r in constraint.get("requests") or ()]
    per_request: dict[str, tuple[int, set]] = {}
    for rq in explained:
        assert isinstance(rq, RequestExplanation)
        base = rq.request.split("/", 1)[0]
        if rq.claim != claim or (names and base not in names and rq.request not in names):
            continue
        # A firstAvailable request: the fewest devices any subrequest wants, from every subrequest's candidates.
        count, devs = per_request.get(base, (rq.count, set()))
        per_request[base] = (min(count, rq.count), devs | {c.device for c in rq.candidates})
    if not per_request:
        return None
    needed = sum(c for c, _ in per_request.values())
    usable = set().union(*(d for _, d in per_request.values()))
    values: Counter = Counter()
    lacking = 0
    for did in usable:
        dev = a.inventory.device(did)
        got = dev.attribute(attr) if dev is not None else None
        if got is None:
            lacking += 1
        else:
            values[got] += 1
    reqs = ", ".join(sorted(per_request))
    lack = f"; {lacking} lack it" if lacking else ""
    if match:
        top = max(values.values(), default=0)
        if top >= needed:
            return None
        return (
            f"{needed} devices of request {reqs} must share {attr}; the {len(usable)} it could take have "
            f"{len(values)} different values, at most {top} share one{lack}"
        )
    if len(values) >= needed:
        return None
    return (
        f"{needed} devices of request {reqs} must each have a different {attr}; the {len(usable)} it could take "
        f"have {len(values)}{lack}"
    )


def constraint_findings(
    ctx: Context, pk: tuple[str, str], pod: dict, reqs: dict[str, int], claims: dict, nodes: list[str], limit: int = 8
) -> Iterable[Finding]:
    """pending-constraint: each request of the pod's claims has enough devices it could take on the nodes where it
    fits by the counts, yet the allocator finds no allocation because of a claim's matchAttribute/distinctAttribute:
    the finding names the constraint and, per node, why no combination satisfies it."""
    if not nodes or not any((cspec.get("devices") or {}).get("constraints") for _, cspec in claims.values()):
        return
    m = ctx.m
    wanted = _pod_claims(ctx, pod, reqs, claims)  # the pod's claims first, in `claims`' order
    constrained = [
        (oref, cspec, "{}/{}".format(*key_of(obj)))
        for (oref, cspec), obj in zip(claims.values(), wanted, strict=False)
        if (cspec.get("devices") or {}).get("constraints")
    ]
    a = _allocator(ctx)
    why: dict[tuple, list[str]] = defaultdict(list)  # (claim ref, constraint text) -> per-node lines
    together: list[str] = []
    judged = 0
    for n in nodes[:limit]:
        node = m.objects["Node"].get(("", n))
        if node is None:
            continue
        ex = a.explain(node, wanted)
        if ex.error or ex.unusable_pools or ex.searched_out:
            return  # the search did not end in time: no verdict on the constraints from dragoman
        if ex.outcome is not None and ex.outcome.ok:
            return  # it fits there: something else keeps it Pending
        if not all(rq.satisfiable_alone for rq in ex.requests):
            return  # a request lacks devices on its own: the counts' findings say why
        judged += 1
        explained = False
        for oref, cspec, claim in constrained:
            for con in (cspec.get("devices") or {}).get("constraints") or ():
                words = _constraint_words(a, ex.requests, claim, con)
                if words is None:
                    continue
                kind = "matchAttribute" if con.get("matchAttribute") else "distinctAttribute"
                text = f"{kind} {con.get('matchAttribute') or con.get('distinctAttribute')}"
                why[(oref, text)].append(f"node {n}: {words}")
                explained = True
        if not explained:
            together.append(f"node {n}: each constraint could be met alone, not all of them together")
    if not judged:
        return
    pname = f"{pk[0]}/{pk[1]}"
    if why:
        (oref, text), lines = next(iter(why.items()))
        subject = _obj_text(oref)
    else:
        oref, text, lines = constrained[0][0], "its constraints", together
        subject = _obj_text(oref)
    rest = judged - len(lines)
    yield make_finding(
        "pending-constraint",
        [pod_ref(pk), oref],
        f"pod {pname} waits: no devices on one node satisfy {text} of {subject} together",
        lines[:4]
        + ([f"… and {len(lines) - 4} more node(s) alike"] if len(lines) > 4 else [])
        + ([f"{rest} other node(s) fail for another constraint"] if rest > 0 and why else [])
        + [f"on {plural(judged, 'node')} where each request alone has enough devices it could take"]
        + ctx.events("Pod", *pk),
        constraint=text,
        subject=subject,
        pod=pname,
    )


def _allocator(ctx: Context):
    """The scheduler's allocator (fleet/k8s/allocator.py) over this fleet's slices, rules, classes and claims: built
    once per diagnosis."""
    from dragoman.fleet.k8s.allocator import Allocator

    a = ctx.allocator_cache.get("allocator")
    if a is None:
        # The model's own reading of the devices (fleet/k8s/devicestate.py): the same Inventory and AllocatedState
        # the views count from, kept current by the watch, not a second one built per diagnosis.
        states = ctx.m.device_states()
        a = Allocator(states.inventory, states.allocated, {name: c.raw for name, c in ctx.classes.items()})
        ctx.allocator_cache["allocator"] = a
    return a


def node_reasons(
    ctx: Context, pod: dict, reqs: dict[str, int], claims: dict, nodes: list[str], limit: int = 3
) -> list[str]:
    """What kube-scheduler's "cannot allocate all claims" means on each of the first nodes, in dragoman's words: the
    allocator's why-not for the pod's claims (a template's as the claim it would make, the bridge's extended-resource
    claim) on that node."""
    m = ctx.m
    key = (tuple(sorted(reqs.items())), tuple(sorted(o for o, _ in claims.values())), tuple(nodes[:limit]))
    if not claims:
        hit = ctx.allocator_cache.get(key)
        if hit is not None:
            return hit
    wanted = _pod_claims(ctx, pod, reqs, claims)
    out: list[str] = []
    if wanted:
        a = _allocator(ctx)
        for n in nodes[:limit]:
            node = m.objects["Node"].get(("", n))
            if node is None:
                continue
            ex = a.explain(node, wanted)
            why = ex.why_not()
            if why:
                out.append(f"node {n}: {why}")
            if ex.searched_out:
                break  # each further node would cost as much again
    if not claims:
        ctx.allocator_cache[key] = out
    return out


def _examples(judged: list[Alternative]) -> list[str]:
    out = []
    for a in judged:
        for _, (dev, words) in sorted(a.example.items(), key=lambda kv: CAUSES.index(kv[0])):
            out.append(f"{a.name}: device {'/'.join(dev)}: {words}")
    return out[:6]
