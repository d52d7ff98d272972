"""The playground's Textual-free core: where a selector starts from, and one evaluation turned into counts, rows and
reasons."""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import compress
from typing import TYPE_CHECKING

from dragoman.fleet.cel import CelCompileError, compile_expression
from dragoman.fleet.cel.fleeteval import DeviceIndex, FleetEvaluation, evaluate_fleet
from dragoman.fleet.cel_explain import Explainer, NearMiss, near_misses, short_clause
from dragoman.fleet.k8s import celenv
from dragoman.fleet.model import FleetModel, claim_spec, key_of, pod_extended_requests, request_alternatives

if TYPE_CHECKING:
    from dragoman.fleet.k8s.devicestate import FleetDevices

BLOCKS = "blocks scheduling of every pod using this selector"
# The table's order: runtime errors (they block scheduling), what one clause alone left out (the selector's most useful
# fact when it matches nothing), what it picks, then the rest it leaves out.
ORDER = ("error", "near-miss", "match", "no-match")


@dataclasses.dataclass
class Start:
    """What the editor opens with: the expression to edit, and the class selectors that apply before it (read-only)."""

    expression: str
    title: str = "a new selector"
    base: list[str] = dataclasses.field(default_factory=list)  # the request's class selectors, evaluated first
    base_label: str = ""  # e.g. "class gpu.nvidia.com"
    class_name: str = ""  # a class to generate against (a claim template's deviceClassName)
    namespace: str = ""


def join_and(expressions: Sequence[str]) -> str:
    exprs = [e.strip() for e in expressions if e.strip()]
    if len(exprs) == 1:
        return exprs[0]
    return " && ".join(f"({e})" for e in exprs)


def start_from_class(model: FleetModel, name: str) -> Start:
    cls = model.classes().get(name)
    if cls is None:
        return Start("", f"DeviceClass {name} (not found)")
    return Start(join_and(cls.expressions), f"DeviceClass {name}", class_name=name)


def start_from_request(model: FleetModel, body: dict, title: str, namespace: str = "") -> Start:
    """A claim request (`exactly` or a subrequest): its own selectors in the editor, its class's applied first.

    A request without selectors of its own is its class: then the class's selectors are what there is to edit."""
    cname = body.get("deviceClassName", "")
    own = [(s.get("cel") or {}).get("expression", "") for s in body.get("selectors") or () if s.get("cel")]
    cls = model.classes().get(cname)
    cls_exprs = list(cls.expressions) if cls else []
    if not own:
        return Start(join_and(cls_exprs), f"{title} → DeviceClass {cname}", class_name=cname, namespace=namespace)
    return Start(
        join_and(own), title, base=cls_exprs, base_label=f"class {cname}", class_name=cname, namespace=namespace
    )


def claim_requests_of(model: FleetModel) -> list[tuple[str, dict, str]]:
    """(title, request body, namespace) of every request in the fleet's claim templates and user-made claims."""
    out = []
    for kind in ("ResourceClaimTemplate", "ResourceClaim"):
        for key, obj in sorted(model.objects.get(kind, {}).items()):
            ann = (obj.get("metadata") or {}).get("annotations") or {}
            if kind == "ResourceClaim" and (
                ann.get("resource.kubernetes.io/extended-resource-claim")
                or ann.get("resource.kubernetes.io/pod-claim-name")
            ):
                continue  # made by the scheduler or from a template: the template is the place to start
            for req in (claim_spec(obj, kind).get("devices") or {}).get("requests") or ():
                for rname, body in request_alternatives(req):
                    out.append((f"{kind} {key[0]}/{key[1]} request {rname}", body, key[0]))
    return out


def start_from_pod(model: FleetModel, pod: dict) -> Start | None:
    """The selector a (stuck) pod waits on: its first claim's first request, or the class serving its extended
    resource."""
    ns, name = key_of(pod)
    for rc in (pod.get("spec") or {}).get("resourceClaims") or ():
        if rc.get("resourceClaimTemplateName"):
            obj, kind = (
                model.objects.get("ResourceClaimTemplate", {}).get((ns, rc["resourceClaimTemplateName"])),
                "ResourceClaimTemplate",
            )
            label = f"template {rc['resourceClaimTemplateName']}"
        else:
            obj, kind = (
                model.objects.get("ResourceClaim", {}).get((ns, rc.get("resourceClaimName", ""))),
                "ResourceClaim",
            )
            label = f"claim {rc.get('resourceClaimName')}"
        if obj is None:
            continue
        for req in (claim_spec(obj, kind).get("devices") or {}).get("requests") or ():
            for rname, body in request_alternatives(req):
                return start_from_request(model, body, f"pod {ns}/{name} {label} request {rname}", ns)
    for resource in sorted(pod_extended_requests(pod)):
        cname = model.class_serving(resource)
        if cname:
            st = start_from_class(model, cname)
            st.title = f"pod {ns}/{name} {resource} → DeviceClass {cname}"
            st.namespace = ns
            return st
    return None


@dataclasses.dataclass
class Outcome:
    """One evaluation as the screen shows it."""

    expression: str
    compile_error: CelCompileError | None = None
    summary: dict | None = None
    rows: list[tuple] = dataclasses.field(default_factory=list)  # (result, driver, pool, device, node, product, reason)
    errors: list[tuple[str, int]] = dataclasses.field(default_factory=list)  # (reason, devices), most first
    false_clauses: list[tuple[str, int]] = dataclasses.field(default_factory=list)
    # Devices one clause of the edited expression alone leaves out, per product, most first (cel_explain.near_misses).
    near: list[NearMiss] = dataclasses.field(default_factory=list)
    cancelled: bool = False
    # Of the matches, how many the allocator could give now, and what keeps the others (allocatable_now).
    allocatable: str = ""


def compile_all(base: Sequence[str], expression: str) -> tuple[list, CelCompileError | None]:
    """Compiled base selectors and the edited one; the edited one's compile error. The base selectors are the
    cluster's (a class's, stored: compiled as the scheduler compiles them), the edited one is checked as the API server
    will check it when it is written (fleet/k8s/celenv.py)."""
    try:
        sel = compile_expression(expression if expression.strip() else "true", environment=celenv.WRITTEN)
    except CelCompileError as exc:
        return [], exc
    sels = []
    for e in base:
        try:
            sels.append(compile_expression(e, environment=celenv.STORED))
        except CelCompileError:
            continue  # the scheduler fails every pod of this class: the class's own finding says so
    return sels + [sel], None


def evaluate(
    index: DeviceIndex, base: Sequence[str], base_label: str, expression: str, cancel: Callable[[], bool] | None = None
) -> tuple[Outcome, FleetEvaluation | None]:
    """Counts only (the fast part): compile, evaluate every device once per distinct group."""
    sels, err = compile_all(base, expression)
    out = Outcome(expression)
    if err is not None:
        out.compile_error = err
        return out, None
    labels = [f"{base_label} selector #{i}: " for i in range(len(sels) - 1)] + [""]
    ev = evaluate_fleet(sels, index, labels=labels, cancel=cancel, chunk=200)
    out.cancelled = ev.cancelled
    if not ev.cancelled:
        out.summary = ev.summary
    return out, ev


def explain(
    out: Outcome,
    ev: FleetEvaluation,
    base: Sequence[str],
    base_label: str,
    *,
    limit: int = 150,
    cancel: Callable[[], bool] | None = None,
) -> Outcome:
    """Fill the rows (errors, then near misses, then non-matches, then matches; `limit` at most, a share each when
    several kinds exist), the reasons by count and the near misses per product."""
    exprs = list(base) + [out.expression]
    index = ev.index
    explainers: dict[int, Explainer] = {}
    # Per group of identical devices (what the selectors read), not per device: a reason is the same for the whole
    # group.
    group_reason: list[tuple[str, str] | None] = [None] * len(ev.outcomes)
    clauses: dict[int, str] = {}  # left-out groups: their (first or only) false clause, by its source text
    rank: dict[int, int] = {}  # near-miss groups: where their product's sentence stands in out.near
    candidates: list[int] = []  # groups the edited expression (not a base selector) left out: maybe near misses
    for g, i in enumerate(ev.reps):
        if cancel is not None and g % 200 == 0 and cancel():
            out.cancelled = True
            return out
        o = ev.outcomes[g]
        if o is None:
            continue
        if o.value is True:
            group_reason[g] = ("match", "")
            continue
        at = ev.failed_at[g]
        prefix = f"{base_label} selector #{at}: " if at < len(base) else ""
        if o.error is not None:
            group_reason[g] = ("error", f"{prefix}{o.error}")
            continue
        ex = explainers.get(at)
        if ex is None:
            ex = explainers[at] = Explainer(exprs[at])
        clause = ex.first_false(index.device(i))
        text = clause.text if clause else exprs[at]
        clauses[g] = f"{prefix}{text}"  # counted by its source text; the row shows it as a person reads it
        group_reason[g] = ("no-match", f"{prefix}{short_clause(text)}")
        if at == len(base):
            candidates.append(g)
    tally = index.tally(ev.group_of)
    if candidates:
        wanted_groups = set(candidates)
        per_group: dict[int, list[tuple[str, int]]] = {}
        for (g, qid), n in tally.products:
            if g in wanted_groups:
                per_group.setdefault(g, []).append((index.products[qid], n))
        out.near, misses = near_misses(
            out.expression, [(index.device(ev.reps[g]), per_group.get(g, [])) for g in candidates]
        )
        near_rank = {(nm.clause, nm.product): n for n, nm in enumerate(out.near)}
        for g, miss in zip(candidates, misses):
            if miss is not None:
                clauses[g] = miss.clause
                rank[g] = near_rank[(miss.clause, index.products[index.product_of[ev.reps[g]]])]
                group_reason[g] = ("near-miss", miss.reason())
    errors: Counter = Counter()
    falses: Counter = Counter()
    wanted = {"error": 0, "near-miss": 0, "no-match": 0, "match": 0}
    # Groups are numbered in order of their first device, so reasons enter the counters in device order (ties keep it).
    for g, (res, n) in enumerate(zip(group_reason, tally.sizes)):
        if res is None:
            continue
        kind, reason = res
        if kind == "error":
            errors[reason] += n
        elif kind in ("no-match", "near-miss"):
            falses[clauses.get(g, reason)] += n
        wanted[kind] += n
    buckets: dict[str, list[tuple]] = {k: [] for k in wanted}
    row_rank: dict[tuple[str, str, str], int] = {}
    left = sum(min(limit, n) for n in wanted.values())
    # The first `limit` devices of each kind, in device order: stop as soon as every kind has its rows.
    for i, g in enumerate(ev.group_of):
        if not left:
            break
        res = group_reason[g]
        if res is None:
            continue
        kind, reason = res
        b = buckets[kind]
        if len(b) < limit:
            ref = index.refs[i]
            b.append((kind, ref.driver, ref.pool, ref.device, ref.node or "", ref.product, reason))
            row_rank[ref.device, ref.pool, ref.driver] = rank.get(g, 0)
            left -= 1
    # Some of each kind, so matches stay visible beside thousands of non-matches; then top up in order.
    share = limit // len(buckets)
    rows = [r for kind in ORDER for r in buckets[kind][:share]]
    for kind in ORDER:
        rows += buckets[kind][share : share + limit - len(rows)]
    # Near misses in the order of their sentences (the H100s the memory clause left out before the A100s).
    rows.sort(key=lambda r: (ORDER.index(r[0]), row_rank.get((r[3], r[2], r[1]), 0)))
    out.rows = rows
    out.errors = errors.most_common()
    out.false_clauses = falses.most_common()
    return out


def counts_text(summary: dict) -> str:
    """`match 24 · no match 153 · error 0 of 177 devices` for the counts line."""
    return (
        f"match {summary['matched']} · no match {summary['notMatched']} · error {summary['errors']}"
        f"  of {summary['devices']} devices"
    )


def allocatable_now(ev: FleetEvaluation, model: FleetModel, *, short: bool = False) -> str:
    """Beside "match N": how many of the matching devices the allocator could give now, and what keeps the others
    (held, shared without room, tainted, counters, binding), from the model's device states. `short`: for the
    playground's counts line."""
    from dragoman.fleet.k8s.devicestate import availability_text, tally_not_now

    matches = [ev.verdict(g)[0] == "match" for g in range(len(ev.outcomes))]
    if not any(matches):
        return ""  # nothing matches: "match 0" says it all
    words = _not_now_words(ev.index, model.device_states())
    # Per group, not per device: the playground asks this at every keystroke that compiles, over the whole fleet.
    counted = words if all(matches) else compress(words, map(matches.__getitem__, ev.group_of))
    total, now, why = tally_not_now(counted)
    if total == 0:
        return ""
    if not short:
        return availability_text(total, now, why)
    rest = ", ".join(f"{n} {w}" for w, n in why.items())
    return f"allocatable now {now}/{total}" + (f" ({rest})" if rest else "")


# What keeps each device of an index (devicestate.not_now_word, in the index's order), kept while the device states
# have not changed: typing a selector changes which devices match, not their states.
_WORDS: weakref.WeakKeyDictionary[DeviceIndex, tuple[FleetDevices, int, list[str]]] = weakref.WeakKeyDictionary()
_WORDS_LOCK = threading.Lock()


def _not_now_words(index: DeviceIndex, states: FleetDevices) -> list[str]:
    from dragoman.fleet.k8s.devicestate import not_now_words

    changes = states.changes
    with _WORDS_LOCK:
        hit = _WORDS.get(index)
    if hit is not None and hit[0] is states and hit[1] == changes:
        return hit[2]
    words = not_now_words(states, index.ids)
    if states.changes == changes:  # not changed meanwhile (the model's thread changes them)
        with _WORDS_LOCK:
            _WORDS[index] = (states, changes, words)
    return words
