"""Findings about DeviceClasses, selectors and claims (findings.md, "DeviceClasses and selectors")."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from dragoman.fleet import k8s, nvidia_schema
from dragoman.fleet.cel import cel_device
from dragoman.fleet.cel_explain import NearMiss, clause_values, have
from dragoman.fleet.diagnose.context import Context, plural, pod_ref
from dragoman.fleet.findings import Finding, ObjectRef, make_finding
from dragoman.fleet.k8s.podclaims import pod_claim_names
from dragoman.fleet.k8s.podresources import container_requests
from dragoman.fleet.k8s.quantity import count
from dragoman.fleet.model import (
    BRIDGE_ANNOTATION,
    GFD_PRODUCT,
    POD_CLAIM_ANNOTATION,
    FleetModel,
    claim_requests,
    claim_spec,
    key_of,
    request_alternatives,
)
from dragoman.fleet.ownership import GPU
from dragoman.fleet.selectors import SelectorResult


def classes(ctx: Context) -> Iterable[Finding]:
    m = ctx.m
    naming: dict[str, list[str]] = defaultdict(list)
    for c in ctx.classes.values():
        if c.extended_resource_name:
            naming[c.extended_resource_name].append(c.name)
    for ern, names in sorted(naming.items()):
        if len(names) < 2:
            continue
        ordered = m.classes_naming(ern)
        winner = ordered[0]
        yield make_finding(
            "duplicate-mapping",
            [("DeviceClass", "", n) for n in ordered],
            f"{len(ordered)} DeviceClasses name {ern}; {winner} wins (newest)",
            [f"DeviceClass {n}: extendedResourceName {ern}, created {ctx.classes[n].created or '?'}" for n in ordered],
            resource=ern,
            winner=winner,
        )
    for name in naming.get(GPU, ()):
        c = ctx.classes[name]
        if nvidia_schema.selects_whole_gpus(c.expressions):
            continue
        ev = [f"DeviceClass {name} serves nvidia.com/gpu with selectors: " + (" && ".join(c.expressions) or "(none)")]
        res = m.class_matches(name)
        if res.compile_error is None:
            matched = set(res.matched)  # once: built per device it made this rule quadratic (20,000 devices: 35 s)
            others = [d for d in m.devices() if d.id in matched and d.type not in (None, "gpu")]
            if others:
                kinds = sorted({str(d.type) for d in others})  # never None: filtered above
                ev.append(f"it matches {plural(len(others), 'device')} that are not whole GPUs ({', '.join(kinds)})")
        yield make_finding(
            "class-too-broad",
            [("DeviceClass", "", name)],
            f'DeviceClass {name} serves nvidia.com/gpu without a type == "gpu" clause',
            ev,
            deviceclass=name,
        )


def _stale_read(exprs: list[str], model: FleetModel) -> list[str]:
    """Retired NVIDIA attributes read by the expressions and published by no current device."""
    reads: set = set()
    try:
        for s in model.compile(exprs):
            if s.attributes_read is None:
                raise ValueError
            reads |= {i for (d, i) in s.attributes_read if d == nvidia_schema.DRIVER and i}
    except Exception:  # noqa: BLE001 - any compile failure: fall back to reading the words of the text
        text = " ".join(exprs)
        reads = {a for a in nvidia_schema.STALE_ATTRIBUTES if re.search(rf"\b{a}\b", text)}
    stale = [a for a in nvidia_schema.STALE_ATTRIBUTES if a in reads]
    if not stale:
        return []
    published = model.attribute_catalogue().get(nvidia_schema.DRIVER, {})
    return [a for a in stale if f"{nvidia_schema.DRIVER}/{a}" not in published]


def _runtime_error(ref: ObjectRef, subject: str, shown: str, res: SelectorResult, extra: list[str]) -> Finding:
    """selector-runtime-error for a selector that fails on some devices, with the first device and its error."""
    dev, err = next(iter(sorted(res.errors.items())))
    return make_finding(
        "selector-runtime-error",
        [ref],
        f"{subject} fails at runtime on {plural(len(res.errors), 'device')} of {res.evaluated}",
        [f"selector: {shown}", f"on device {'/'.join(dev)}: CEL runtime error: {err}"] + extra,
        subject=subject,
    )


def _selector_findings(
    ctx: Context,
    ref: ObjectRef,
    subject: str,
    exprs: list[str],
    res: SelectorResult,
    extra: list[str],
    used: bool = True,
) -> list[Finding]:
    """The findings of one selector set: a retired attribute (with the runtime error it causes when read unguarded),
    else a runtime or compile error, else no match (only for what something uses)."""
    stale = _stale_read(exprs, ctx.m)
    shown = "; ".join(exprs)
    if stale:
        ev = [
            f"{subject} reads {', '.join(stale)}: " + shown,
            f"no {nvidia_schema.DRIVER} device in the fleet publishes {', '.join(stale)}",
        ]
        if res.errors:
            dev, err = next(iter(sorted(res.errors.items())))
            ev.append(f"CEL runtime error on {plural(len(res.errors), 'device')}, e.g. {'/'.join(dev)}: {err}")
        out = [
            make_finding(
                "stale-attribute",
                [ref],
                f"{subject} reads {', '.join(stale)}, which the installed driver no longer publishes",
                ev + extra,
                attribute=stale[0],
                subject=subject,
            )
        ]
        if res.errors:
            # Read unguarded, the retired attribute is also a runtime error on every device tested.
            out.append(_runtime_error(ref, subject, shown, res, extra))
        return out
    if res.compile_error:
        return [
            make_finding(
                "selector-runtime-error",
                [ref],
                f"{subject}: the selector does not compile",
                [f"{shown}: {res.compile_error}"] + extra,
                subject=subject,
            )
        ]
    if res.errors:
        return [_runtime_error(ref, subject, shown, res, extra)]
    if not res.matched and ctx.has_devices and used:
        return [
            make_finding(
                "selector-no-match",
                [ref],
                f"{subject} selects none of the fleet's {res.evaluated} devices",
                [f"selector: {shown or '(none)'}"] + extra,
                subject=subject,
            )
        ]
    return []


def top_level_clauses(expression: str) -> list[str]:
    """The operands of an expression's top-level `&&` (outside brackets and string literals), stripped."""
    out, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(expression):
        ch = expression[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and expression.startswith("&&", i):
            out.append(expression[start:i].strip())
            start, i = i + 2, i + 1
        i += 1
    out.append(expression[start:].strip())
    return [c for c in out if c]


def excluding_clause(m: FleetModel, body: dict, pod_spec: dict) -> str | None:
    """For a request no device satisfies: the one top-level clause of its own selectors that excludes every device
    the rest keeps (its class's selectors and its other clauses) on the nodes the pod may use, with what those devices
    publish for what it reads, e.g. `... memory.compareTo(quantity('80Gi')) >= 0 excludes all 8 devices the rest keeps
    (NVIDIA H100 80GB HBM3): they have 81559Mi`. None when no single clause is to blame (a combination, an error, no
    devices)."""
    miss = excluding_miss(m, body, pod_spec)
    return None if miss is None else miss[0]


def excluding_miss(m: FleetModel, body: dict, pod_spec: dict) -> tuple[str, NearMiss] | None:
    """excluding_clause's sentence and the near miss behind it (the clause, the devices, their values and what to
    write: cel_explain, the playground's own words)."""
    cls = m.classes().get(body.get("deviceClassName", ""))
    if cls is None:
        return None
    own_exprs = [(s.get("cel") or {}).get("expression", "") for s in body.get("selectors") or () if s.get("cel")]
    clauses = [c for e in own_exprs for c in top_level_clauses(e)]
    if not clauses:
        return None
    nodes = m.objects["Node"]
    # Only the devices of nodes the pod's nodeSelector and affinity allow (network-attached ones always count).
    devices = [
        d for d in m.devices() if d.node is None or k8s.pod_matches_node(pod_spec, nodes.get(("", d.node)) or {})
    ]
    for i, clause in enumerate(clauses):
        rest = m.evaluate_selectors(list(cls.expressions) + clauses[:i] + clauses[i + 1 :], devices)
        if not rest.ok or not rest.matched:
            continue
        kept = set(rest.matched)
        candidates = [d for d in devices if d.id in kept]
        alone = m.evaluate_selectors([clause], candidates)
        if not alone.ok or alone.matched:
            continue
        products = sorted({str(p) for d in candidates if (p := d.attribute("productName"))})
        what = f" ({', '.join(products[:2])}{', ...' if len(products) > 2 else ''})" if products else ""
        text = f"{clause} excludes all {plural(len(candidates), 'device')} the rest of the selector keeps{what}"
        # The same words and values as the playground's near misses (one home: fleet/cel_explain.py).
        values = clause_values(clause, (cel_device(d.driver, d.raw) for d in candidates))
        miss = NearMiss(clause, ", ".join(products), len(candidates), values)
        if values:
            text += f": {have(miss.value_texts, len(candidates))}"
        return text, miss
    return None


def _used_classes(ctx: Context) -> dict[str, list[str]]:
    """Classes something relies on, and who: claims, templates, pods through an extended resource they serve."""
    used: dict[str, list[str]] = defaultdict(list)
    for kind in ("ResourceClaim", "ResourceClaimTemplate"):
        for (ns, name), obj in ctx.m.objects[kind].items():
            for req in claim_requests(claim_spec(obj, kind).get("devices")):
                for _, body in request_alternatives(req):
                    if body.get("deviceClassName"):
                        used[body["deviceClassName"]].append(f"{kind} {ns}/{name}")
    for c in ctx.classes.values():
        if c.extended_resource_name and c.extended_resource_name in c.serves:
            used[c.name].append(f"pods asking for {c.extended_resource_name}")
    return used


def selectors(ctx: Context) -> Iterable[Finding]:
    m = ctx.m
    used = _used_classes(ctx)
    bad_classes: set[str] = set()
    # Every class is checked for runtime errors and retired attributes; "matches nothing" only matters for classes in
    # use (the chart installs classes, e.g. for vfio, that a fleet may never need).
    for name in sorted(ctx.classes):
        c = ctx.classes[name]
        res = m.class_matches(name)
        users = used.get(name, [])
        extra = [f"used by {', '.join(users[:3])}" + (" ..." if len(users) > 3 else "")] if users else []
        found = _selector_findings(
            ctx, ("DeviceClass", "", name), f"DeviceClass {name}", c.expressions, res, extra, used=bool(users)
        )
        if found:
            bad_classes.add(name)
        yield from found
    for kind in ("ResourceClaim", "ResourceClaimTemplate"):
        for (ns, name), obj in sorted(m.objects[kind].items()):
            ann = (obj.get("metadata") or {}).get("annotations") or {}
            if kind == "ResourceClaim" and (BRIDGE_ANNOTATION in ann or POD_CLAIM_ANNOTATION in ann):
                continue  # the scheduler's claims and template copies: their source is what gets reported
            for req in claim_requests(claim_spec(obj, kind).get("devices")):
                alts = request_alternatives(req)
                if not alts or any(b.get("deviceClassName") in bad_classes for _, b in alts):
                    continue
                if any(b.get("deviceClassName") not in ctx.classes for _, b in alts):
                    continue  # a class that is not there is class-missing (fleet/diagnose/devices.py), not a selector

                own_sel = [b for _, b in alts if b.get("selectors")]
                if not own_sel:
                    continue
                results = [(rn, b, m.request_matches(b)) for rn, b in alts]
                if any(r.matched and not r.errors and not r.compile_error for _, _, r in results):
                    continue
                rn, body, res = next(((rn, b, r) for rn, b, r in results if b.get("selectors")), results[0])
                exprs = [
                    (s.get("cel") or {}).get("expression", "") for s in body.get("selectors") or () if s.get("cel")
                ]
                cls_exprs = (
                    ctx.classes[body["deviceClassName"]].expressions
                    if body.get("deviceClassName") in ctx.classes
                    else []
                )
                subject = f"{kind} {ns}/{name} request {rn}"
                found = _selector_findings(
                    ctx,
                    (kind, ns, name),
                    subject,
                    exprs,
                    res,
                    [f"with DeviceClass {body.get('deviceClassName')}: {' && '.join(cls_exprs) or '(no selectors)'}"],
                )
                yield from found


def _exact_gpu_count(ctx: Context, spec: dict) -> int | None:
    """N when the claim spec is exactly one ExactCount request of the nvidia.com/gpu class, with nothing else."""
    devices = spec.get("devices") or {}
    if devices.get("constraints") or devices.get("config"):
        return None
    reqs = claim_requests(devices)
    if len(reqs) != 1 or reqs[0].get("exactly") is None:
        return None
    ex = reqs[0]["exactly"]
    if ex.get("deviceClassName") != ctx.gpu_class or ctx.gpu_class is None:
        return None
    if ex.get("selectors") or ex.get("adminAccess") or ex.get("tolerations") or ex.get("capacity"):
        return None
    if (ex.get("allocationMode") or "ExactCount") != "ExactCount":
        return None
    return int(ex.get("count") or 1)


def claims(ctx: Context) -> Iterable[Finding]:
    m = ctx.m
    for kind in ("ResourceClaimTemplate", "ResourceClaim"):
        for (ns, name), obj in sorted(m.objects[kind].items()):
            ann = (obj.get("metadata") or {}).get("annotations") or {}
            if kind == "ResourceClaim" and (BRIDGE_ANNOTATION in ann or POD_CLAIM_ANNOTATION in ann):
                continue
            n = _exact_gpu_count(ctx, claim_spec(obj, kind))
            if n is None:
                continue
            yield make_finding(
                "claim-equivalent-to-limits",
                [(kind, ns, name)],
                f"{kind} {ns}/{name} asks only for {n}× {ctx.gpu_class}, which limits: nvidia.com/gpu: {n} also gets",
                [
                    (
                        f"one request: exactly {{deviceClassName: {ctx.gpu_class}, count: {n}}}, no selectors, "
                        "constraints or config"
                    ),
                    f"DeviceClass {ctx.gpu_class} serves nvidia.com/gpu",
                ],
                count=n,
                subject=f"{kind} {name}",
            )


def pod_claim_specs(m: FleetModel, pod: dict) -> dict[str, tuple[ObjectRef, dict]]:
    """Pod claim name → (the claim or template, its ResourceClaimSpec)."""
    ns = key_of(pod)[0]
    out = {}
    generated = dict(pod_claim_names(pod))
    for rc in (pod.get("spec") or {}).get("resourceClaims") or ():
        pname = rc.get("name", "")
        if rc.get("resourceClaimName"):
            obj = m.objects["ResourceClaim"].get((ns, rc["resourceClaimName"]))
            if obj is not None:
                out[pname] = (("ResourceClaim", ns, rc["resourceClaimName"]), claim_spec(obj, "ResourceClaim"))
        elif rc.get("resourceClaimTemplateName"):
            obj = m.objects["ResourceClaimTemplate"].get((ns, rc["resourceClaimTemplateName"]))
            if obj is not None:
                out[pname] = (
                    ("ResourceClaimTemplate", ns, rc["resourceClaimTemplateName"]),
                    claim_spec(obj, "ResourceClaimTemplate"),
                )
            elif made := generated.get(pname):
                obj = m.objects["ResourceClaim"].get((ns, made))
                if obj is not None:
                    out[pname] = (("ResourceClaim", ns, made), claim_spec(obj, "ResourceClaim"))
    return out


def pod_shapes(ctx: Context) -> Iterable[Finding]:
    # Pods neither Succeeded nor Failed that pick a model or hold claims (Context.pod_groups): no other pod makes one.
    for pk, pod, product in ctx.pod_groups().shaped:
        yield from pod_shape_findings(ctx, pk, pod, product)


def pod_shape_findings(ctx: Context, pk: tuple[str, str], pod: dict, product: str | None) -> Iterable[Finding]:
    """What one pod's shape says: it picks its GPU model (`product`, Context.steered's answer for it) through a
    selector, or gets GPUs twice (limits and a claim of the class that serves them)."""
    m = ctx.m
    spec = pod.get("spec") or {}
    if product is not None:
        owner = m.owner_chain(pod)
        yield make_finding(
            "nodeselector-steering",
            [pod_ref(pk)],
            f"pod {pk[0]}/{pk[1]} picks its GPU model through a selector on {GFD_PRODUCT}={product}",
            [f"pod {pk[1]}: nodeSelector/affinity {GFD_PRODUCT} = {product}"]
            + ([f"managed by {owner[-1][0]} {owner[-1][2]}"] if owner else []),
            pool=ctx.nodes[spec["nodeName"]].pool if spec.get("nodeName") in ctx.nodes else None,
            product=product,
        )
    if ctx.gpu_class is None or not spec.get("resourceClaims"):
        return
    claims = pod_claim_specs(m, pod)
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        gpus = count(container_requests(c).get(GPU))
        if gpus <= 0:
            continue
        for ref in (c.get("resources") or {}).get("claims") or ():
            got = claims.get(ref.get("name"))
            if got is None:
                continue
            obj_ref, cspec = got
            classes = {
                b.get("deviceClassName")
                for r in claim_requests(cspec.get("devices"))
                for _, b in request_alternatives(r)
                if not ref.get("request") or r.get("name") == ref.get("request")
            }
            if ctx.gpu_class not in classes:
                continue
            yield make_finding(
                "double-request",
                [pod_ref(pk), obj_ref],
                f"container {c.get('name')} of pod {pk[0]}/{pk[1]} gets GPUs twice: nvidia.com/gpu limits "
                f"and a {ctx.gpu_class} claim",
                [
                    f"container {c.get('name')}: limits nvidia.com/gpu = {gpus}",
                    (
                        f"and claim {ref.get('name')} ({obj_ref[0]} {obj_ref[2]}) of DeviceClass "
                        f"{ctx.gpu_class}, which serves nvidia.com/gpu"
                    ),
                ],
                pool=ctx.nodes[spec["nodeName"]].pool if spec.get("nodeName") in ctx.nodes else None,
                deviceclass=ctx.gpu_class,
                pod=f"{pk[0]}/{pk[1]}",
            )
            break
