"""Findings about pods (findings.md, "Pods"): why a pod is pending, rejected, unprepared or running without its
GPU."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable

from dragoman.fleet import k8s, nvidia_schema
from dragoman.fleet.cel_explain import NearMiss, short_clause, suggestions
from dragoman.fleet.diagnose.context import CLAIM_QUOTA, Context, node_ref, plural, pod_ref
from dragoman.fleet.diagnose.devices import claim_findings, constraint_findings, excluded_findings, filter_timeout
from dragoman.fleet.diagnose.selectors import excluding_miss, pod_claim_specs
from dragoman.fleet.findings import Finding, ObjectRef, make_finding
from dragoman.fleet.k8s import quantity
from dragoman.fleet.model import (
    BRIDGE_ANNOTATION,
    NodeView,
    claim_requests,
    is_bridge_claim,
    key_of,
    request_alternatives,
)


def _quota_block(ctx: Context, ns: str, cls: str, count: int) -> tuple[ObjectRef, str, str] | None:
    for (qns, qname), quota in sorted(ctx.m.objects["ResourceQuota"].items()):
        if qns != ns:
            continue
        hard = (quota.get("spec") or {}).get("hard") or {}
        used = (quota.get("status") or {}).get("used") or {}
        for res, need in ((CLAIM_QUOTA, 1), (f"{cls}.deviceclass.resource.k8s.io/devices", count)):
            if res in hard and quantity.count(used.get(res)) + need > quantity.count(hard[res]):
                return (
                    ("ResourceQuota", qns, qname),
                    res,
                    f"ResourceQuota {qname}: {res} used {used.get(res, 0)} of {hard[res]}, the claim needs {need} more",
                )
    return None


def pods(ctx: Context) -> Iterable[Finding]:
    # Only the pods pod_findings may say something about (Context.pod_groups: most of a fleet's 150,000 are bound CPU
    # pods running and Jobs done, left out in one pass shared with the other pod rules).
    for pk, pod in ctx.pod_groups().examined:
        yield from pod_findings(ctx, pk, pod)


def _device_plugin_held(status: dict) -> set[str]:
    """Extended resources whose devices the kubelet's device manager gave the pod's containers (their
    allocatedResourcesStatus entries named after the resource, not after a claim)."""
    out: set[str] = set()
    for cs in status.get("containerStatuses") or ():
        for entry in cs.get("allocatedResourcesStatus") or ():
            name = entry.get("name") or ""
            if not name.startswith("claim:") and entry.get("resources"):
                out.add(name)
    return out


def _running_without_gpu(ctx: Context, pk: tuple[str, str], pod: dict, v: NodeView, ercs: dict) -> Iterable[Finding]:
    """A Running pod on a node with DRA devices that did not get the GPU it asked for, in one of two ways:
    - the scheduler placed it through the bridge (its claim in status.extendedResourceClaimStatus) on a kubelet older
      than the bridge: the real kubelet v1.35.4 admits it, never prepares the claim, and runs it without the GPU;
    - it was placed by counting (no extendedResourceClaimStatus) and the node now advertises none of it, with no
      device of the device plugin reported as given to it (a pod admitted while the plugin served keeps that GPU,
      and a kubelet v1.37 names it in allocatedResourcesStatus)."""
    m = ctx.m
    node_name = v.name
    # Only a node with DRA devices can run a pod without the GPUs it asked for: the requests are not read elsewhere
    # (most running GPU pods are on device-plugin nodes).
    reqs = ctx.extended(pod) if v.devices_gpu > 0 else {}
    if not reqs:
        return
    bridged = {mp.get("resourceName") for mp in ercs.get("requestMappings") or ()}
    node_line = (
        f"node {node_name}: allocatable nvidia.com/gpu {v.allocatable_gpu}, {v.devices_gpu} DRA devices, "
        f"kubelet {v.kubelet_version}"
    )
    if ercs:
        too_old = v.kubelet is not None and not v.bridge_capable  # an unknown version is given the benefit
        names = [k for k in reqs if k in bridged] if too_old else []
        first = (
            f"pod asks for {', '.join(f'{k}: {reqs[k]}' for k in names)}; the scheduler placed it through DRA "
            f"(claim {ercs.get('resourceClaimName', '?')}), and a kubelet without the bridge never prepares that claim"
        )
    else:
        status = pod.get("status") or {}
        # A kubelet names the devices its device manager gave a container in allocatedResourcesStatus: a pod admitted
        # while the device plugin served the node keeps that GPU after the plugin leaves or crashes (a real kubelet
        # v1.37.2 shows it so), whatever allocatable says now.
        held = _device_plugin_held(status)
        allocatable = ((m.objects["Node"].get(("", node_name)) or {}).get("status") or {}).get("allocatable", {})
        names = [
            k
            for k in reqs
            if k not in held and m.class_serving(k) is not None and quantity.count(allocatable.get(k)) == 0
        ]
        first = f"pod asks for {', '.join(f'{k}: {reqs[k]}' for k in names)}; status has no extendedResourceClaimStatus"
    if not names:
        return
    yield make_finding(
        "running-without-gpu",
        [pod_ref(pk), node_ref(node_name)],
        f"pod {pk[0]}/{pk[1]} runs on DRA node {node_name} without the {', '.join(names)} it asked for",
        [first, node_line] + ctx.events("Pod", *pk),
        pool=v.pool,
        node=node_name,
        pod=f"{pk[0]}/{pk[1]}",
    )


def pod_findings(ctx: Context, pk: tuple[str, str], pod: dict) -> Iterable[Finding]:
    """Why one pod is Pending, Failed, or Running without its GPU (nothing when none of these)."""
    m = ctx.m
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    phase = status.get("phase")
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return
    node_name = spec.get("nodeName")
    if phase == "Failed":
        reason = status.get("reason") or ""
        if reason == "UnexpectedAdmissionError" or reason.startswith("OutOf"):
            v = ctx.nodes.get(node_name or "")
            ev = [f"pod status: {reason}: {status.get('message', '')}".rstrip(": ")]
            if v is not None:
                ev.append(
                    f"node {v.name}: kubelet {v.kubelet_version}, {v.ownership}, allocatable nvidia.com/gpu "
                    f"{v.allocatable_gpu}"
                )
            yield make_finding(
                "failed-admission",
                [pod_ref(pk)] + ([node_ref(node_name)] if node_name else []),
                f"pod {pk[0]}/{pk[1]} was rejected by the kubelet of {node_name or '?'} ({reason})",
                ev + ctx.events("Pod", *pk),
                pool=v.pool if v else None,
                node=node_name or "?",
                pod=f"{pk[0]}/{pk[1]}",
            )
        return
    if phase == "Succeeded":
        return
    if node_name:
        v = ctx.nodes.get(node_name)
        if v is None:
            return
        ercs = status.get("extendedResourceClaimStatus") or {}
        if phase == "Running":
            yield from _running_without_gpu(ctx, pk, pod, v, ercs)
        elif phase == "Pending" and (m.pod_claims(pod)):
            driver_ok = any(p.running and p.ready for p in v.dra_driver)
            if not driver_ok:
                why = (
                    "no DRA driver pod runs there"
                    if not v.dra_driver
                    else (
                        f"DRA driver pod {v.dra_driver[0].key[1]} is "
                        f"{v.dra_driver[0].phase}{'' if v.dra_driver[0].ready else ', not ready'}"
                    )
                )
                yield make_finding(
                    "prepare-failed",
                    [pod_ref(pk), node_ref(node_name)],
                    f"pod {pk[0]}/{pk[1]} is bound to {node_name} but its devices cannot be prepared: {why}",
                    [f"claims: {', '.join(c for _, c in m.pod_claims(pod) if c)}", f"node {node_name}: {why}"]
                    + ctx.events("Pod", *pk),
                    pool=v.pool,
                    node=node_name,
                )
        return
    # Unscheduled pods.
    reqs = ctx.extended(pod)
    if not reqs and not spec.get("resourceClaims"):
        return
    yield from _pending(ctx, pk, pod, reqs)


def node_fit(ctx: Context, spec: dict, reqs: dict[str, int], request_free: list) -> tuple:
    """Per node, as the scheduler's filters read it: does the pod fit on resources, and is the node cordoned or
    tainted against it? Returns (fit and free, fit but blocked, served per resource, free per resource, DRA fits)."""
    m = ctx.m
    fit_free: list[NodeView] = []
    fit_blocked: list[tuple[NodeView, str]] = []
    served: dict[str, bool] = {k: False for k in reqs}
    free_by_res: dict[str, list[tuple[str, int]]] = defaultdict(list)  # (eligible node, free) per resource
    dra_fit_nodes: dict[str, list[str]] = defaultdict(list)
    matches_node = k8s.compile_node_filter(spec)  # pod_matches_node, its terms read once for every candidate
    node_objs = m.objects["Node"]
    for name in ctx.candidates(spec.get("nodeSelector") or {}):
        v = ctx.nodes[name]
        raw = node_objs.get(("", name)) or {}
        if not matches_node(raw):
            continue
        alloc = (raw.get("status") or {}).get("allocatable") or {}
        fits = True
        for res, n in reqs.items():
            a = quantity.count(alloc.get(res))
            if a > 0:
                served[res] = True
                free = a - ctx.dp_used(name).get(res, 0)
            else:
                cls = m.class_serving(res)
                if cls is None:
                    fits = False
                    continue
                free = ctx.class_free(cls).get(name, 0)
                if v.devices_total:
                    served[res] = True
            free_by_res[res].append((name, free))
            if free < n:
                fits = False
            elif a <= 0:
                dra_fit_nodes[res].append(name)
        for _, count, best, pinned, _ in request_free:
            if pinned is not None and pinned != name:
                fits = False
            elif best.get(name, 0) < count and pinned is None:
                fits = False
        blocked = []
        if not v.schedulable:
            blocked.append("cordoned")
        taints = k8s.untolerated_taints(spec, raw)
        blocked += [f"taint {k8s.taint_text(t)}" for t in taints if t.get("key") != "node.kubernetes.io/unschedulable"]
        if fits:
            if blocked:
                fit_blocked.append((v, ", ".join(blocked)))
            else:
                fit_free.append(v)
    return fit_free, fit_blocked, served, free_by_res, dra_fit_nodes


def _pending(ctx: Context, pk: tuple[str, str], pod: dict, reqs: dict[str, int]) -> Iterable[Finding]:
    m = ctx.m
    spec = pod.get("spec") or {}
    ref = pod_ref(pk)
    pname = f"{pk[0]}/{pk[1]}"
    evs = ctx.events("Pod", *pk)
    # A claim the scheduler made in an earlier cycle, while the pod is still unbound.
    for ck in m.claims_owned_by(pk):
        claim = m.objects["ResourceClaim"].get(ck)
        if claim is not None and is_bridge_claim(claim):
            state = "allocated" if m.claim_devices(claim) else "pending"
            yield make_finding(
                "stale-bridge-claim",
                [("ResourceClaim", ck[0], ck[1]), ref],
                f"claim {ck[1]} left by an earlier scheduling attempt blocks pod {pname}",
                [f"ResourceClaim {ck[0]}/{ck[1]} ({state}) carries {BRIDGE_ANNOTATION} and is owned by the unbound pod"]
                + evs,
                claim=f"{ck[0]}/{ck[1]}",
            )
            return
    # What stops the pod before any device is counted: a claim or class that is not there, admin access refused,
    # devices allocated but waiting for (or failing) their binding conditions.
    early = list(claim_findings(ctx, pk, pod))
    if early:
        yield from early
        return
    claims = pod_claim_specs(m, pod)
    selector_problem: list[str] = []
    # The first alternative with its own selectors, per failing request: where the excluding clause is looked for.
    selector_bodies: dict[str, dict] = {}
    selector_refs: dict[str, ObjectRef] = {}  # the claim or template holding each failing request: what to change
    # Per request: (label, the fewest devices an alternative wants, per node the free devices of an alternative that
    # fits there (0 where none does), the node a claim is pinned to, per node the most free devices of any
    # alternative). A firstAvailable request fits a node when one of its subrequests does, each with its own count.
    request_free: list[tuple[str, int, dict[str, int], str | None, dict[str, int]]] = []
    for oref, cspec in claims.values():
        claim_obj = m.objects["ResourceClaim"].get((oref[1], oref[2])) if oref[0] == "ResourceClaim" else None
        pinned = m.claim_node(claim_obj) if claim_obj is not None and m.claim_devices(claim_obj) else None
        for req in claim_requests(cspec.get("devices")):
            best: dict[str, int] = defaultdict(int)
            most: dict[str, int] = defaultdict(int)
            counts = []
            ok_alt = False
            for _, body in request_alternatives(req):
                free, sel = ctx.request_free(body)
                # All: every matching device, at least one (the allocator's own check is the finer one).
                alt_count = 1 if body.get("allocationMode") == "All" else int(body.get("count") or 1)
                counts.append(alt_count)
                if sel.matched and not sel.errors and not sel.compile_error:
                    ok_alt = True
                for node, c in free.items():
                    most[node] = max(most[node], c)
                    if c >= alt_count:
                        best[node] = max(best[node], c)
            count = min(counts) if counts else 1
            if not ok_alt:
                subject = f"{oref[0]} {oref[2]} request {req.get('name')}"
                selector_problem.append(subject)
                selector_refs[subject] = oref
                with_selectors = next((b for _, b in request_alternatives(req) if b.get("selectors")), None)
                if with_selectors is not None:
                    selector_bodies[subject] = with_selectors
            request_free.append((f"{oref[2]}/{req.get('name')}", count, best, pinned, most))
    sig = None
    if not request_free:
        # Pods of one workload share their scheduling needs: reason about the nodes once for all of them.
        sig = (
            json.dumps([spec.get("nodeSelector"), spec.get("affinity"), spec.get("tolerations")], sort_keys=True),
            tuple(sorted(reqs.items())),
        )
    fit = ctx.fit_cache.get(sig) if sig is not None else None
    if fit is None:
        fit = node_fit(ctx, spec, reqs, request_free)
        if sig is not None:
            ctx.fit_cache[sig] = fit
    fit_free, fit_blocked, served, free_by_res, dra_fit_nodes = fit
    pool = None
    if fit_free:
        # By the counts it fits; the scheduler may still have given up on it (its DRA filter's timeout).
        timed_out = list(filter_timeout(ctx, pk, pod))
        if timed_out:
            yield from timed_out
            return
        # A claim's constraints may leave no combination of the devices each request could take (the search).
        constrained = list(constraint_findings(ctx, pk, pod, reqs, claims, [v.name for v in fit_free]))
        if constrained:
            yield from constrained
            return
        # The scheduler can place it; what can still stop it is quota on the claim it must create.
        for res, n in reqs.items():
            cls = m.class_serving(res)
            if cls is None or not dra_fit_nodes.get(res) or not any(v.name in dra_fit_nodes[res] for v in fit_free):
                continue
            block = _quota_block(ctx, pk[0], cls, n)
            if block is not None:
                qref, qres, text = block
                yield make_finding(
                    "quota-blocks-claim",
                    [ref, qref],
                    f"pod {pname} fits on {plural(len(fit_free), 'node')} but quota rejects the claim for its "
                    f"{n}× {res}",
                    [text, f"DeviceClass {cls} serves {res} on those nodes through DRA"] + evs,
                    resource=qres,
                    quota=qref[2],
                    namespace=pk[0],
                )
                return
        yield from _forgotten_name(ctx, pod, pk, reqs, fit_free, dra_fit_nodes, evs)
        return
    if fit_blocked:
        nodes = [v.name for v, _ in fit_blocked]
        yield make_finding(
            "pending-cordoned",
            [ref] + [node_ref(n) for n in nodes],
            f"pod {pname} fits only on {plural(len(nodes), 'node')} that {'is' if len(nodes) == 1 else 'are'} "
            "cordoned or tainted against it",
            [f"node {v.name}: {why}" for v, why in fit_blocked[:5]] + evs,
            pool=fit_blocked[0][0].pool,
            nodes=", ".join(nodes[:3]),
            pod=pname,
        )
        return
    unmapped = [res for res, ok in served.items() if not ok and m.class_serving(res) is None]
    if unmapped:
        res = unmapped[0]
        yield make_finding(
            "pending-unmapped",
            [ref],
            f"pod {pname} asks for {res}, which no node offers through the device plugin and no DeviceClass serves",
            [
                f"pod requests {res}: {reqs[res]}",
                f"no eligible node has allocatable {res} > 0",
                f"no DeviceClass has extendedResourceName {res}",
            ]
            + evs,
            resource=res,
            pod=pname,
            remedy=_unmapped_remedy(ctx, pod, res),
            forgotten=_also_insufficient(pod, evs),
        )
        return
    class_problems = []
    for res in reqs:
        cls = m.class_serving(res)
        if cls is not None:
            r = m.class_matches(cls)
            if r.errors or r.compile_error or (not r.matched and not served.get(res)):
                class_problems.append(f"DeviceClass {cls}")
    if selector_problem or class_problems:
        subjects = class_problems + selector_problem
        why = {s: excluding_miss(m, selector_bodies[s], spec) for s in selector_problem if s in selector_bodies}
        first = why.get(subjects[0])
        summary = f"pod {pname} cannot get its devices because of the selector of {subjects[0]}"
        if first is not None:
            summary = (
                f"pod {pname} cannot get its devices: `{short_clause(first[1].clause)}` in {subjects[0]} leaves out "
                f"every device the rest of its selector keeps"
            )
        # The objects to change, linked from the finding (the page's links follow objects[1:]).
        targets = [selector_refs[s] for s in selector_problem if s in selector_refs] + [
            ("DeviceClass", "", c.split(" ", 1)[1]) for c in class_problems
        ]
        yield make_finding(
            "pending-selector",
            [ref] + [t for i, t in enumerate(targets) if t not in targets[:i]],
            summary,
            [
                f"{s}: {w[0]}" if (w := why.get(s)) else f"{s}: selects no usable device (see its selector finding)"
                for s in subjects
            ]
            + evs,
            subject=_object_text(targets[0]) if targets else subjects[0],
            write=_what_to_write(first[1]) if first is not None else "",
        )
        return
    # The devices are there but cannot be given now: tainted, their counters used, their shared capacity gone, or no
    # alternative of a prioritized list left.
    excluded = list(excluded_findings(ctx, pk, pod, reqs, claims))
    if excluded:
        yield from excluded
        return
    yield from filter_timeout(ctx, pk, pod)
    ev = []
    res_name, want = next(iter(reqs.items())) if reqs else ("devices", request_free[0][1] if request_free else 0)
    eligible: list[str] = []
    for res, n in reqs.items():
        nodes = free_by_res.get(res, [])
        frees = [f for _, f in nodes if f > 0]
        eligible += [name for name, _ in nodes if name not in eligible]
        # The eligible nodes by name, most free first: where capacity would have to be freed.
        named = ", ".join(f"{name} ({f} free)" for name, f in sorted(nodes, key=lambda x: (-x[1], x[0]))[:5])
        ev.append(
            f"requested {n} {res}; largest free block {max(frees) if frees else 0}; free total {sum(frees)} "
            f"on {plural(len(nodes), 'eligible node')}"
            + (f": {named}" if named else "")
            + (f" and {len(nodes) - 5} more" if len(nodes) > 5 else "")
        )
    for label, count, _, _, best in request_free:
        vals = [c for c in best.values() if c > 0]
        ev.append(
            f"claim {label}: requested {count}; largest free block {max(vals) if vals else 0}; free total {sum(vals)}"
        )
    where = (
        f" on {', '.join(eligible[:3])}{f' (or {len(eligible) - 3} more eligible nodes)' if len(eligible) > 3 else ''}"
        if eligible
        else ""
    )
    yield make_finding(
        "pending-insufficient",
        [ref] + [node_ref(n) for n in eligible[:5]],
        f"pod {pname} waits for {want} {res_name}: no eligible node has that many free",
        ev + evs,
        pool=pool,
        resource=res_name,
        pod=pname,
        where=where,
    )


def _published_mig_profiles(ctx: Context) -> list[str]:
    """The MIG profiles the fleet offers today: published by the DRA driver (`profile`) or allocatable through the
    device plugin (`nvidia.com/mig-<profile>`)."""
    published = ctx.m.attribute_catalogue().get(nvidia_schema.DRIVER, {})
    entry = published.get(f"{nvidia_schema.DRIVER}/profile") or published.get("profile") or {}
    found = set(entry.get("values") or {})
    for node in ctx.m.objects["Node"].values():
        for name, qty in ((node.get("status") or {}).get("allocatable") or {}).items():
            if name.startswith("nvidia.com/mig-") and str(qty) not in ("0", ""):
                found.add(name[len("nvidia.com/mig-") :])
    return sorted(str(p) for p in found)


def _unmapped_remedy(ctx: Context, pod: dict, res: str) -> str:
    """What to change for a pod asking for an extended resource nothing serves. A MIG profile no GPU of the fleet is
    partitioned into is not fixed by naming it in a class (the class would select nothing): say which profiles exist."""
    owner = ctx.m.owner_chain(pod)
    who = f"{owner[-1][0]} {owner[-1][1]}/{owner[-1][2]}" if owner else f"pod {key_of(pod)[0]}/{key_of(pod)[1]}"
    if res.startswith("nvidia.com/mig-"):
        profile = res[len("nvidia.com/mig-") :]
        offered = _published_mig_profiles(ctx)
        if profile not in offered:
            if not offered:
                return (
                    f"No GPU in the fleet is partitioned into MIG slices: change {who} to ask for whole GPUs, or "
                    f"partition a pool's GPUs into {profile} first."
                )
            choices = " or ".join(f"nvidia.com/mig-{p}" for p in offered[:3])
            return (
                f"No GPU in the fleet offers MIG profile {profile} (it publishes {', '.join(offered)}): change {who} "
                f"to ask for {choices}, or repartition a pool's GPUs into {profile} first."
            )
    return (
        f"Add extendedResourceName: {res} to a DeviceClass, or keep the device plugin where {who} may run "
        f"(or change {who}'s request)."
    )


_INSUFFICIENT = re.compile(r"(\d+) Insufficient ([\w./-]*\w)")


def _also_insufficient(pod: dict, evs: list[str]) -> str:
    """` The scheduler also found Insufficient cpu (2 nodes) and memory (4 nodes): ...` — what else its words say
    stands in the way besides the extended resource (the PodScheduled condition, else the events)."""
    cond: dict = next(
        (c for c in (pod.get("status") or {}).get("conditions") or () if c.get("type") == "PodScheduled"), {}
    )
    text = (cond.get("message") or "") + " " + " ".join(evs)
    seen: dict[str, int] = {}
    for n, what in _INSUFFICIENT.findall(text.split("preemption:")[0] if "preemption:" in text else text):
        if "/" not in what and what not in seen:
            seen[what] = int(n)
    if not seen:
        return ""
    parts = [f"{what} ({plural(n, 'node')})" for what, n in seen.items()]
    return (
        f" The scheduler also found Insufficient {' and '.join(parts)}: lower the pod's "
        f"{' and '.join(seen)} requests or free {'them' if len(seen) > 1 else 'it'} on the nodes it may use."
    )


def _object_text(ref: ObjectRef) -> str:
    kind, ns, name = ref
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def _what_to_write(miss: NearMiss) -> str:
    """` : change `memory >= 80Gi` to quantity('80G') (or quantity('79Gi')): the 24 devices ... have 81559Mi` — the
    value that keeps the devices the rest of the selector keeps, when dragoman can compute one; else the clause."""
    clause = short_clause(miss.clause)
    texts = miss.value_texts
    shown = ", ".join(texts[:3]) + (f" and {len(texts) - 3} more" if len(texts) > 3 else "")
    values = f"the {plural(miss.devices, 'device')} the pod may use ({miss.product or 'no productName'}) have {shown}"
    hints = suggestions(miss.clause, miss.values)
    if hints:
        alt = f" (or {hints[1]})" if len(hints) > 1 else ""
        return f": in `{clause}`, write {hints[0]}{alt} — {values}"
    return f": `{clause}` leaves out {values}" if miss.values else f": `{clause}` leaves out every device it may use"


def _forgotten_name(
    ctx: Context,
    pod: dict,
    pk: tuple[str, str],
    reqs: dict[str, int],
    fit_free: list[NodeView],
    dra_fit_nodes: dict[str, list[str]],
    evs: list[str],
) -> Iterable[Finding]:
    """The pod fits through DRA by the classes that exist, yet its PodScheduled condition (state, not an event) says
    the scheduler found `Insufficient <resource>`: kube-scheduler v1.37 keeps the classes that serve a name in a cache
    fed by class events, and a class naming it that was deleted (or stopped naming it) took the name out of that
    cache without giving it to the class that remains (extendedresourcecache.go)."""
    m = ctx.m
    cond = next((c for c in (pod.get("status") or {}).get("conditions") or () if c.get("type") == "PodScheduled"), None)
    if not cond or cond.get("status") != "False":
        return
    message = cond.get("message") or ""
    for res in sorted(reqs):
        cls = m.class_serving(res)
        dra = dra_fit_nodes.get(res) or []
        nodes = [v.name for v in fit_free if v.name in dra]
        if cls is None or not nodes or f"Insufficient {res}" not in message:
            continue
        # From the scheduler's side nothing serves the name: pending-unmapped, with the way out of this state.
        yield make_finding(
            "pending-unmapped",
            [pod_ref(pk), ("DeviceClass", "", cls)],
            f"pod {pk[0]}/{pk[1]} asks for {res}, which kube-scheduler no longer serves though DeviceClass {cls} "
            "names it",
            [
                f"DeviceClass {cls} names {res}; {plural(len(nodes), 'node')} with allocatable {res} 0 "
                f"offer its devices: {', '.join(nodes[:3])}",
                f"condition PodScheduled=False ({cond.get('reason')}): {message}",
            ]
            + evs,
            resource=res,
            pod=f"{pk[0]}/{pk[1]}",
            remedy="",
            forgotten=(
                f"DeviceClass {cls} names {res} already: update it (any change, e.g. an annotation) or restart "
                f"kube-scheduler — v1.37 forgets {res} when a class naming it is deleted or stops naming it, until a "
                "class naming it is updated."
            ),
        )
        return
