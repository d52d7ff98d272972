"""The fleet diagnosis: every case of the findings catalogue, found from cluster state (Events only as supporting
evidence)."""

from __future__ import annotations

import gc
import json
import re
from collections import defaultdict
from collections.abc import Iterable

from dragoman.fleet import ownership as own
from dragoman.fleet import placement
from dragoman.fleet.findings import WARNING, Finding, ObjectRef, make_finding, sort_findings
from dragoman.fleet.model import (
    BRIDGE_ANNOTATION,
    GFD_PRODUCT,
    POD_CLAIM_ANNOTATION,
    DeviceView,
    FleetModel,
    NodeView,
    SelectorResult,
    claim_requests,
    claim_spec,
    container_extended,
    is_bridge_claim,
    key_of,
    pod_extended_requests,
    pod_terminal,
    request_alternatives,
)
from dragoman.fleet.ownership import GPU, STEP_ORDER

STALE_ATTRIBUTES = ("index", "minor", "pcieBusID")
SMALL_POOL_NODES = 4
_TYPE_GPU = re.compile(r"""type['"]?\]?\s*==\s*['"]gpu['"]|['"]gpu['"]\s*==\s*device\.attributes""")
_CLAIM_QUOTA = "count/resourceclaims.resource.k8s.io"


def _node_ref(name: str) -> ObjectRef:
    return ("Node", "", name)


def _pod_ref(key: tuple[str, str]) -> ObjectRef:
    return ("Pod", key[0], key[1])


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _lease_held(lease: dict, now: float | None) -> bool:
    spec = lease.get("spec") or {}
    if not spec.get("holderIdentity"):
        return False
    renewed = own.parse_time(spec.get("renewTime") or spec.get("acquireTime"))
    if now is None or renewed is None:
        return True
    return renewed + float(spec.get("leaseDurationSeconds") or 0) >= now


class _Context:
    """What several rules share, computed once per diagnosis."""

    def __init__(self, model: FleetModel) -> None:
        self.m = model
        self.nodes = {v.name: v for v in model.nodes()}
        self.pools = {p.name: p for p in model.pools()}
        self.classes = model.classes()
        self.gpu_class = model.class_serving(GPU)
        self.has_devices = any(v.devices_total for v in self.nodes.values())
        self._dp_used: dict[str, dict[str, int]] = {}
        self._class_free: dict[str, dict[str, int]] = {}
        self.fit_cache: dict = {}
        self._label_index: dict[str, dict[str, set[str]]] = {}
        self.pool_migrating = {
            p: any(v.migration is not None and v.migration.in_progress for v in model.pool_nodes(p)) for p in self.pools
        }
        # A held operator lock means an operator is migrating the pool right now (the ConfigMap outlives the migration).
        for (_ns, name), lease in model.objects["Lease"].items():
            pool = name[len("dragoman-pool-") :] if name.startswith("dragoman-pool-") else None
            if pool in self.pools and _lease_held(lease, model.now):
                self.pool_migrating[pool] = True

    def candidates(self, node_selector: dict) -> list[str]:
        """Nodes carrying every label of a nodeSelector, from a per-key index (the full predicate still runs on
        them)."""
        if not node_selector:
            return list(self.nodes)
        out: set[str] | None = None
        for k, v in node_selector.items():
            index = self._label_index.get(k)
            if index is None:
                index = defaultdict(set)
                for name, view in self.nodes.items():
                    if k in view.labels:
                        index[view.labels[k]].add(name)
                self._label_index[k] = index
            names = index.get(v, set())
            out = set(names) if out is None else out & names
        return sorted(out or ())

    def events(self, kind: str, ns: str, name: str, limit: int = 2) -> list[str]:
        out = []
        for e in self.m.events_for(kind, ns, name)[-limit:]:
            count = e.get("count") or (e.get("series") or {}).get("count")
            times = f" (x{count})" if count and int(count) > 1 else ""
            msg = e.get("message") or e.get("note") or ""
            out.append(f"event {e.get('reason', '')}{times}: {msg}")
        return out

    def dp_used(self, node: str) -> dict[str, int]:
        """Extended resources held through the device plugin by the pods bound to a node."""
        used = self._dp_used.get(node)
        if used is None:
            used = defaultdict(int)
            for pod in self.m.pods_on_node(node):
                if pod_terminal(pod) or (pod.get("status") or {}).get("extendedResourceClaimStatus"):
                    continue
                for k, v in pod_extended_requests(pod).items():
                    used[k] += v
            self._dp_used[node] = used
        return used

    def class_free(self, cls: str) -> dict[str, int]:
        free = self._class_free.get(cls)
        if free is None:
            free = self._class_free[cls] = self.m.class_nodes(cls)
        return free

    def request_free(self, body: dict) -> tuple[dict[str, int], SelectorResult]:
        res = self.m.request_matches(body)
        free: dict[str, int] = defaultdict(int)
        for d in res.matched:
            n = self.m._pool_node.get(d[:2])
            if n is not None and self.m.device_claim(d) is None:
                free[n] += 1
        return free, res


# ---- nodes and pools -----------------------------------------------------------------------------------------------


def _slices_text(v: NodeView) -> str:
    names = ", ".join(v.slices[:3]) + (" ..." if len(v.slices) > 3 else "")
    return f"ResourceSlice {names} publishes {_plural(v.devices_gpu, 'device')} of driver {own.DRA_DRIVER} for it"


def _stack_nodes(ctx: _Context) -> Iterable[Finding]:
    for v in ctx.nodes.values():
        if not v.is_gpu:
            continue
        plugin_serving = v.allocatable_gpu > 0 or any(p.running for p in v.device_plugin)
        if v.mechanism == own.BOTH or (v.mechanism == own.FLAPPING and plugin_serving):
            ev = []
            if v.allocatable_gpu > 0:
                ev.append(f"node allocatable nvidia.com/gpu = {v.allocatable_gpu} (the device plugin's)")
            objs = [_node_ref(v.name)]
            for p in v.device_plugin:
                objs.append(_pod_ref(p.key))
                ev.append(f"device-plugin pod {p.key[0]}/{p.key[1]} is {p.phase} ({p.workload.describe()})")
            ev.append(_slices_text(v))
            ev += ctx.events("Node", "", v.name)
            yield make_finding(
                "both-stacks",
                objs,
                f"node {v.name}: the device plugin and the DRA driver both serve its GPUs",
                ev + ["nvidia.com/gpu pods get the device plugin's GPUs there, and claims can get the same GPUs again"],
                pool=v.pool,
                node=v.name,
            )
        if v.mechanism == own.FLAPPING:
            objs = [_node_ref(v.name)]
            ev = []
            for p in v.device_plugin:
                if p.flapping:
                    objs.append(_pod_ref(p.key))
                    ev.append(
                        f"device-plugin pod {p.key[0]}/{p.key[1]}: {p.flapping_reason}, "
                        f"{_plural(p.restarts, 'restart')}"
                    )
                    ev += ctx.events("Pod", p.key[0], p.key[1])
            ev.append(f"node allocatable nvidia.com/gpu = {v.allocatable_gpu} now, capacity {v.capacity_gpu}")
            ev.append(_slices_text(v))
            yield make_finding(
                "plugin-flapping",
                objs,
                f"node {v.name}: the device plugin keeps restarting, so nvidia.com/gpu flips between it and DRA",
                ev,
                pool=v.pool,
                node=v.name,
            )


def _daemonset_targets(ctx: _Context) -> Iterable[Finding]:
    m = ctx.m
    for dk, w in sorted(m.daemonset_workloads().items()):
        ds = m.objects["DaemonSet"].get(dk)
        if ds is None:
            continue
        spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
        want = "dra" if w.role == "device-plugin" else "device-plugin"
        fid = "dp-targets-dra-pool" if w.role == "device-plugin" else "driver-targets-dp-pool"
        for pool in sorted(ctx.pools.values(), key=lambda p: p.name):
            if pool.target != want:
                continue
            hits = []
            for v in m.pool_nodes(pool.name):
                if not v.is_gpu:
                    continue
                if w.role == "device-plugin" and v.mechanism == own.DEVICE_PLUGIN and ctx.pool_migrating.get(pool.name):
                    # A node of a pool being migrated, not yet moved: the plugin serves it until its exclusion step.
                    continue
                if w.role == "dra-driver" and v.ownership in (own.DRA, own.MIGRATING):
                    # Nodes of the pool already moved: the driver is meant to serve them.
                    continue
                raw = m.objects["Node"].get(("", v.name)) or {}
                labels = v.labels
                if w.deployed_by == "gpu-operator" and not labels.get(own.GPU_OPERATOR_DEPLOY_LABEL):
                    # The operator fills a missing deploy label with "true" on GPU nodes.
                    labels = {**labels, own.GPU_OPERATOR_DEPLOY_LABEL: "true"}
                if placement.selects_node(spec, raw, labels_override=labels) and not placement.untolerated_taints(
                    spec, raw, daemonset=True
                ):
                    hits.append(v)
            if not hits:
                continue
            names = [v.name for v in hits]
            ev = [
                (
                    f"DaemonSet {dk[0]}/{dk[1]} ({w.describe()}) selects {_plural(len(names), 'node')} of pool "
                    f"{pool.name}: "
                )
                + ", ".join(names[:5])
                + (" ..." if len(names) > 5 else "")
            ]
            if w.deployed_by == "gpu-operator":
                missing = [v.name for v in hits if v.labels.get(own.GPU_OPERATOR_DEPLOY_LABEL) != "false"]
                if missing:
                    ev.append(
                        f"{_plural(len(missing), 'node')} without {own.GPU_OPERATOR_DEPLOY_LABEL}=false "
                        f"(the operator fills a missing label with true): " + ", ".join(missing[:5])
                    )
            running = [v.name for v in hits if (v.device_plugin if w.role == "device-plugin" else v.dra_driver)]
            if running:
                ev.append(f"its pod runs on {', '.join(running[:5])}")
            if w.role == "device-plugin":
                summary = f"DaemonSet {dk[1]} still selects {_plural(len(names), 'node')} of DRA pool {pool.name}"
            else:
                summary = f"DaemonSet {dk[1]} selects {_plural(len(names), 'node')} of device-plugin pool {pool.name}"
            yield make_finding(
                fid,
                [("DaemonSet", dk[0], dk[1])] + [_node_ref(n) for n in names],
                summary,
                ev,
                pool=pool.name,
                daemonset=f"{dk[0]}/{dk[1]}",
            )


def _no_slices(ctx: _Context) -> Iterable[Finding]:
    for v in ctx.nodes.values():
        if not v.is_gpu or v.devices_gpu > 0:
            continue
        pool = ctx.pools.get(v.pool)
        driver_here = [p for p in v.dra_driver]
        expected = (
            pool is not None and pool.target == "dra" and v.allocatable_gpu == 0 and v.mechanism != own.DEVICE_PLUGIN
        )
        if (
            expected
            and not driver_here
            and v.migration is not None
            and v.migration.in_progress
            and v.migration.step in STEP_ORDER
            and STEP_ORDER.index(v.migration.step) < STEP_ORDER.index("scope-driver")
        ):
            expected = False  # the driver is scoped to this node by a later step of the migration in progress
        if not (driver_here or expected or v.stale_slices):
            continue
        ev = []
        objs = [_node_ref(v.name)]
        for p in driver_here:
            objs.append(_pod_ref(p.key))
            ev.append(
                f"DRA driver pod {p.key[0]}/{p.key[1]} is {p.phase}{'' if p.ready else ', not ready'}"
                + (f", {_plural(p.restarts, 'restart')}" if p.restarts else "")
            )
        if not driver_here:
            ev.append(f"no DRA driver pod runs on {v.name}, which is in DRA pool {v.pool}")
        if v.stale_slices:
            ev.append(
                f"only stale slices: {', '.join(v.stale_slices[:3])} (an older pool generation or an incomplete one)"
            )
        else:
            ev.append(f"no ResourceSlice of driver {own.DRA_DRIVER} for node {v.name}")
        ev.append(f"node allocatable nvidia.com/gpu = {v.allocatable_gpu}")
        ev += ctx.events("Node", "", v.name)
        yield make_finding(
            "no-slices", objs, f"node {v.name} should be on DRA but publishes no devices", ev, pool=v.pool, node=v.name
        )


def _kubelets(ctx: _Context) -> Iterable[Finding]:
    for pool in ctx.pools.values():
        nodes = [v for v in ctx.m.pool_nodes(pool.name) if v.is_gpu]
        for v in nodes:
            if v.kubelet is None or v.bridge_capable:
                continue
            if pool.target == "dra" or v.mechanism in (own.DRA, own.BOTH, own.FLAPPING):
                sev = "error"
                why = f"pool {pool.name} is served by DRA"
            elif ctx.pool_migrating.get(pool.name):
                sev = WARNING
                why = f"pool {pool.name} is being migrated to DRA"
            else:
                continue
            yield make_finding(
                "kubelet-too-old",
                [_node_ref(v.name)],
                f"node {v.name} runs kubelet {v.kubelet_version}, without the extended-resource bridge, and {why}",
                [
                    f"node {v.name}: kubelet {v.kubelet_version} (the bridge needs v1.36 or newer)",
                    "such a kubelet rejects nvidia.com/gpu pods placed through DRA or runs them without the GPU",
                ],
                pool=pool.name,
                severity=sev,
            )
        versions = {v.name: v.kubelet for v in nodes if v.kubelet is not None}
        minors = {k[:2] for k in versions.values()}
        if len(minors) > 1:
            newest = max(versions.values())
            stragglers = sorted(n for n, k in versions.items() if k[:2] < newest[:2])
            spread = ", ".join(f"{c}× {ver}" for ver, c in sorted(pool.kubelet_versions.items()))
            target = next(ctx.nodes[n].kubelet_version for n, k in versions.items() if k == newest)
            yield make_finding(
                "kubelet-skew",
                [_node_ref(n) for n in stragglers],
                f"pool {pool.name} mixes kubelet versions: {spread}",
                [f"node {n}: kubelet {ctx.nodes[n].kubelet_version}" for n in stragglers[:5]],
                pool=pool.name,
                version=target,
            )


def _sharing(ctx: _Context) -> Iterable[Finding]:
    for pool in ctx.pools.values():
        nodes = [v for v in ctx.m.pool_nodes(pool.name) if v.is_gpu]
        shared = [
            v
            for v in nodes
            if v.mechanism in (own.DEVICE_PLUGIN, own.BOTH, own.FLAPPING)
            and (
                v.replicas > 1
                or (v.sharing_strategy or "none") not in ("none", "")
                or (v.mig_strategy == "single" and v.capacity_gpu and "MIG" in (v.product or ""))
            )
        ]
        if not shared:
            continue
        ev = []
        for v in shared:
            if v.replicas > 1:
                ev.append(
                    f"node {v.name}: {v.sharing or 'time-slicing'} — nvidia.com/gpu capacity {v.capacity_gpu} "
                    f"for {v.gpu_count_label or v.capacity_gpu // v.replicas} physical GPUs"
                )
            elif v.mig_strategy == "single":
                ev.append(f"node {v.name}: MIG strategy single — nvidia.com/gpu counts MIG slices ({v.capacity_gpu})")
            else:
                ev.append(f"node {v.name}: sharing strategy {v.sharing_strategy}")
        yield make_finding(
            "sharing-capacity-change",
            [_node_ref(v.name) for v in shared],
            f"pool {pool.name}: nvidia.com/gpu counts shared GPUs on {_plural(len(shared), 'node')}; "
            f"through DRA it will count whole devices",
            ev,
            pool=pool.name,
        )


def _steering_pods(ctx: _Context) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list] = defaultdict(list)
    for pk, pod in ctx.m.objects["Pod"].items():
        if pod_terminal(pod):
            continue
        product = _steered_product(pod.get("spec") or {})
        if product is not None:
            out[product].append(pk)
    return out


def _steered_product(spec: dict) -> str | None:
    sel = spec.get("nodeSelector") or {}
    if GFD_PRODUCT in sel:
        return sel[GFD_PRODUCT]
    for term in placement.required_affinity_terms(spec) or ():
        for e in term.get("matchExpressions") or ():
            if e.get("key") == GFD_PRODUCT and e.get("operator") == "In":
                return ",".join(e.get("values") or ())
    return None


def _migration_optional(ctx: _Context) -> Iterable[Finding]:
    steering = _steering_pods(ctx)
    for pool in ctx.pools.values():
        nodes = [v for v in ctx.m.pool_nodes(pool.name) if v.is_gpu]
        if not nodes or len(nodes) > SMALL_POOL_NODES or pool.target != "device-plugin":
            continue
        if any(v.mechanism != own.DEVICE_PLUGIN or v.sharing or v.mig_capacity or v.replicas > 1 for v in nodes):
            continue
        products = {v.product for v in nodes}
        if len(products) != 1 or None in products or any("MIG" in (p or "") for p in products):
            continue
        product = next(iter(products))
        if any(product in key.split(",") for key in steering):
            continue  # pods select this model: a tier DeviceClass would serve them better
        names = {v.name for v in nodes}
        if any((p.get("spec") or {}).get("resourceClaims") for n in names for p in ctx.m.pods_on_node(n)):
            continue
        gpus = sum(v.allocatable_gpu for v in nodes)
        yield make_finding(
            "migration-optional",
            [_node_ref(v.name) for v in nodes],
            f"pool {pool.name}: {_plural(len(nodes), 'node')} of identical {product} ({gpus} whole GPUs), "
            f"no sharing, no selection needs",
            [f"node {v.name}: {v.allocatable_gpu}× {v.product}, device plugin" for v in nodes[:4]],
            pool=pool.name,
        )


# ---- classes and selectors ----------------------------------------------------------------------------------------


def _classes(ctx: _Context) -> Iterable[Finding]:
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
        if any(_TYPE_GPU.search(e) for e in c.expressions):
            continue
        ev = [f"DeviceClass {name} serves nvidia.com/gpu with selectors: " + (" && ".join(c.expressions) or "(none)")]
        res = m.class_matches(name)
        if res.compile_error is None:
            others = [d for d in m.devices() if d.id in set(res.matched) and d.type not in (None, "gpu")]
            if others:
                kinds = sorted({str(d.type) for d in others})  # never None: filtered above
                ev.append(f"it matches {_plural(len(others), 'device')} that are not whole GPUs ({', '.join(kinds)})")
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
            reads |= {i for (d, i) in s.attributes_read if d == own.DRA_DRIVER and i}
    except Exception:  # noqa: BLE001 - any compile failure: fall back to reading the words of the text
        text = " ".join(exprs)
        reads = {a for a in STALE_ATTRIBUTES if re.search(rf"\b{a}\b", text)}
    stale = [a for a in STALE_ATTRIBUTES if a in reads]
    if not stale:
        return []
    published = model.attribute_catalogue().get(own.DRA_DRIVER, {})
    return [a for a in stale if f"{own.DRA_DRIVER}/{a}" not in published]


def _selector_findings(
    ctx: _Context,
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
            f"no {own.DRA_DRIVER} device in the fleet publishes {', '.join(stale)}",
        ]
        if res.errors:
            dev, err = next(iter(sorted(res.errors.items())))
            ev.append(f"CEL runtime error on {_plural(len(res.errors), 'device')}, e.g. {'/'.join(dev)}: {err}")
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
            out.append(
                make_finding(
                    "selector-runtime-error",
                    [ref],
                    f"{subject} fails at runtime on {_plural(len(res.errors), 'device')} of {res.evaluated}",
                    [f"selector: {shown}", f"on device {'/'.join(dev)}: CEL runtime error: {err}"] + extra,
                    subject=subject,
                )
            )
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
        dev, err = next(iter(sorted(res.errors.items())))
        return [
            make_finding(
                "selector-runtime-error",
                [ref],
                f"{subject} fails at runtime on {_plural(len(res.errors), 'device')} of {res.evaluated}",
                [f"selector: {shown}", f"on device {'/'.join(dev)}: CEL runtime error: {err}"] + extra,
                subject=subject,
            )
        ]
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


def _top_level_clauses(expression: str) -> list[str]:
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


_READ_FIELD = re.compile(r"device\.(capacity|attributes)\[\s*['\"]([^'\"]+)['\"]\s*\]\.(\w+)")


def _device_value(dev: DeviceView, section: str, domain: str, name: str) -> str | None:
    """The value a device publishes for `device.<section>[domain].name`, as the slice writes it."""
    entries = dev.raw.get(section) or {}
    entry = entries.get(f"{domain}/{name}") or (entries.get(name) if domain == dev.driver else None)
    if not isinstance(entry, dict):
        return None
    if section == "capacity":
        return str(entry.get("value")) if entry.get("value") is not None else None
    for kind in ("string", "int", "bool", "version"):
        if kind in entry:
            return str(entry[kind])
    return None


def _excluding_clause(m: FleetModel, body: dict, pod_spec: dict) -> str | None:
    """For a request no device satisfies: the one top-level clause of its own selectors that excludes every device
    the rest keeps (its class's selectors and its other clauses) on the nodes the pod may use, with what those devices
    publish for the field it
    reads, e.g. `... memory.compareTo(quantity('80Gi')) >= 0 excludes all 8 devices the rest keeps (NVIDIA H100 80GB
    HBM3): they have 81559Mi`. None when no single clause is to blame (a combination, an error, no devices)."""
    cls = m.classes().get(body.get("deviceClassName", ""))
    if cls is None:
        return None
    own_exprs = [(s.get("cel") or {}).get("expression", "") for s in body.get("selectors") or () if s.get("cel")]
    clauses = [c for e in own_exprs for c in _top_level_clauses(e)]
    if not clauses:
        return None
    nodes = m.objects["Node"]
    # Only the devices of nodes the pod's nodeSelector and affinity allow (network-attached ones always count).
    devices = [
        d for d in m.devices() if d.node is None or placement.selects_node(pod_spec, nodes.get(("", d.node)) or {})
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
        products = sorted({v for d in candidates if (v := _device_value(d, "attributes", d.driver, "productName"))})
        what = f" ({', '.join(products[:2])}{', ...' if len(products) > 2 else ''})" if products else ""
        text = f"{clause} excludes all {_plural(len(candidates), 'device')} the rest of the selector keeps{what}"
        read = _READ_FIELD.search(clause)
        if read:
            values = sorted({v for d in candidates if (v := _device_value(d, *read.groups())) is not None})
            if values:
                shown = ", ".join(values[:3]) + (f" and {len(values) - 3} more" if len(values) > 3 else "")
                text += f": {'it has' if len(candidates) == 1 else 'they have'} {shown}"
        return text
    return None


def _used_classes(ctx: _Context) -> dict[str, list[str]]:
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


def _selectors(ctx: _Context) -> Iterable[Finding]:
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


def _exact_gpu_count(ctx: _Context, spec: dict) -> int | None:
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


def _claims(ctx: _Context) -> Iterable[Finding]:
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


def _pod_claim_specs(m: FleetModel, pod: dict) -> dict[str, tuple[ObjectRef, dict]]:
    """Pod claim name → (the claim or template, its ResourceClaimSpec)."""
    ns = key_of(pod)[0]
    out = {}
    generated = {
        s.get("name"): s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()
    }
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
            elif generated.get(pname):
                obj = m.objects["ResourceClaim"].get((ns, generated[pname]))
                if obj is not None:
                    out[pname] = (("ResourceClaim", ns, generated[pname]), claim_spec(obj, "ResourceClaim"))
    return out


def _pod_shapes(ctx: _Context) -> Iterable[Finding]:
    m = ctx.m
    for pk, pod in sorted(m.objects["Pod"].items()):
        if pod_terminal(pod):
            continue
        spec = pod.get("spec") or {}
        product = _steered_product(spec)
        if product is not None:
            owner = m.owner_chain(pod)
            yield make_finding(
                "nodeselector-steering",
                [_pod_ref(pk)],
                f"pod {pk[0]}/{pk[1]} picks its GPU model through a selector on {GFD_PRODUCT}={product}",
                [f"pod {pk[1]}: nodeSelector/affinity {GFD_PRODUCT} = {product}"]
                + ([f"managed by {owner[-1][0]} {owner[-1][2]}"] if owner else []),
                pool=ctx.nodes[spec["nodeName"]].pool if spec.get("nodeName") in ctx.nodes else None,
                product=product,
            )
        if ctx.gpu_class is None or not spec.get("resourceClaims"):
            continue
        claims = _pod_claim_specs(m, pod)
        for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            if container_extended(c).get(GPU, 0) <= 0:
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
                    [_pod_ref(pk), obj_ref],
                    f"container {c.get('name')} of pod {pk[0]}/{pk[1]} gets GPUs twice: nvidia.com/gpu limits "
                    f"and a {ctx.gpu_class} claim",
                    [
                        f"container {c.get('name')}: limits nvidia.com/gpu = {container_extended(c)[GPU]}",
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


# ---- accounting ---------------------------------------------------------------------------------------------------


def _accounting(ctx: _Context) -> Iterable[Finding]:
    m = ctx.m
    for pool in sorted(ctx.pools.values(), key=lambda p: p.name):
        if pool.target != "dra":
            continue
        nodes = [
            v
            for v in m.pool_nodes(pool.name)
            if v.is_gpu and v.allocatable_gpu == 0 and not any(v.mig_allocatable.values())
        ]
        if not nodes:
            continue
        devices = sum(v.devices_gpu for v in nodes)
        yield make_finding(
            "allocatable-readers",
            [_node_ref(v.name) for v in nodes],
            f"pool {pool.name}: {_plural(len(nodes), 'node')} on DRA report 0 allocatable nvidia.com/gpu; "
            f"sums of node allocatable miss {_plural(devices, 'device')}",
            [
                (
                    f"{_plural(len(nodes), 'node')} with allocatable nvidia.com/gpu 0 or absent, {devices} devices "
                    "in their ResourceSlices"
                )
            ],
            pool=pool.name,
        )
    if ctx.gpu_class is None:
        return
    for (ns, qname), quota in sorted(m.objects["ResourceQuota"].items()):
        hard = (quota.get("spec") or {}).get("hard") or {}
        if f"requests.{GPU}" not in hard:
            continue
        plain = []
        for (cns, cname), claim in sorted(m.objects["ResourceClaim"].items()):
            if cns != ns or is_bridge_claim(claim):
                continue
            cls = {
                b.get("deviceClassName")
                for r in claim_requests(claim_spec(claim, "ResourceClaim").get("devices"))
                for _, b in request_alternatives(r)
            }
            if ctx.gpu_class in cls:
                plain.append(("ResourceClaim", cns, cname))
        if not plain:
            continue
        used = ((quota.get("status") or {}).get("used") or {}).get(f"requests.{GPU}")
        yield make_finding(
            "quota-claims-now-count",
            [("ResourceQuota", ns, qname)] + plain,
            f"namespace {ns}: {_plural(len(plain), 'plain claim')} of {ctx.gpu_class} now "
            f"{'counts' if len(plain) == 1 else 'count'} against quota {qname}'s requests.{GPU}",
            [
                (
                    f"ResourceQuota {qname}: requests.{GPU} hard {hard[f'requests.{GPU}']}, used "
                    f"{used if used is not None else '?'}"
                ),
                "claims: " + ", ".join(c[2] for c in plain[:5]),
            ],
            quota=qname,
            namespace=ns,
        )


# ---- pods -----------------------------------------------------------------------------------------------------------


def _quota_block(ctx: _Context, ns: str, cls: str, count: int) -> tuple[ObjectRef, str, str] | None:
    for (qns, qname), quota in sorted(ctx.m.objects["ResourceQuota"].items()):
        if qns != ns:
            continue
        hard = (quota.get("spec") or {}).get("hard") or {}
        used = (quota.get("status") or {}).get("used") or {}
        for res, need in ((_CLAIM_QUOTA, 1), (f"{cls}.deviceclass.resource.k8s.io/devices", count)):
            if res in hard and own.parse_count(used.get(res)) + need > own.parse_count(hard[res]):
                return (
                    ("ResourceQuota", qns, qname),
                    res,
                    f"ResourceQuota {qname}: {res} used {used.get(res, 0)} of {hard[res]}, the claim needs {need} more",
                )
    return None


def _pods(ctx: _Context) -> Iterable[Finding]:
    for pk, pod in sorted(ctx.m.objects["Pod"].items()):
        yield from _pod_findings(ctx, pk, pod)


def _pod_findings(ctx: _Context, pk: tuple[str, str], pod: dict) -> Iterable[Finding]:
    """Why one pod is Pending, Failed, or Running without its GPU (nothing when none of these)."""
    m = ctx.m
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    phase = status.get("phase")
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return
    node_name = spec.get("nodeName")
    reqs = pod_extended_requests(pod)
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
                [_pod_ref(pk)] + ([_node_ref(node_name)] if node_name else []),
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
        ercs = status.get("extendedResourceClaimStatus")
        if phase == "Running" and not ercs and reqs:
            dra_names = [
                k
                for k in reqs
                if m.class_serving(k) is not None
                and own.parse_count(
                    ((m.objects["Node"].get(("", node_name)) or {}).get("status") or {}).get("allocatable", {}).get(k)
                )
                == 0
            ]
            if dra_names and v.devices_gpu > 0:
                yield make_finding(
                    "running-without-gpu",
                    [_pod_ref(pk), _node_ref(node_name)],
                    f"pod {pk[0]}/{pk[1]} runs on DRA node {node_name} without the {', '.join(dra_names)} it asked for",
                    [
                        (
                            f"pod asks for {', '.join(f'{k}: {reqs[k]}' for k in dra_names)}; status has no "
                            "extendedResourceClaimStatus"
                        ),
                        (
                            f"node {node_name}: allocatable nvidia.com/gpu {v.allocatable_gpu}, {v.devices_gpu} "
                            f"DRA devices, kubelet {v.kubelet_version}"
                        ),
                    ]
                    + ctx.events("Pod", *pk),
                    pool=v.pool,
                    node=node_name,
                    pod=f"{pk[0]}/{pk[1]}",
                )
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
                    [_pod_ref(pk), _node_ref(node_name)],
                    f"pod {pk[0]}/{pk[1]} is bound to {node_name} but its devices cannot be prepared: {why}",
                    [f"claims: {', '.join(c for _, c in m.pod_claims(pod) if c)}", f"node {node_name}: {why}"]
                    + ctx.events("Pod", *pk),
                    pool=v.pool,
                    node=node_name,
                )
        return
    # Unscheduled pods.
    if not reqs and not spec.get("resourceClaims"):
        return
    yield from _pending(ctx, pk, pod, reqs)


def _node_fit(ctx: _Context, spec: dict, reqs: dict[str, int], request_free: list) -> tuple:
    """Per node, as the scheduler's filters read it: does the pod fit on resources, and is the node cordoned or
    tainted against it? Returns (fit and free, fit but blocked, served per resource, free per resource, DRA fits)."""
    m = ctx.m
    fit_free: list[NodeView] = []
    fit_blocked: list[tuple[NodeView, str]] = []
    served: dict[str, bool] = {k: False for k in reqs}
    free_by_res: dict[str, list[int]] = defaultdict(list)
    dra_fit_nodes: dict[str, list[str]] = defaultdict(list)
    for name in ctx.candidates(spec.get("nodeSelector") or {}):
        v = ctx.nodes[name]
        raw = m.objects["Node"].get(("", name)) or {}
        if not placement.selects_node(spec, raw):
            continue
        alloc = (raw.get("status") or {}).get("allocatable") or {}
        fits = True
        for res, n in reqs.items():
            a = own.parse_count(alloc.get(res))
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
            free_by_res[res].append(free)
            if free < n:
                fits = False
            elif a <= 0:
                dra_fit_nodes[res].append(name)
        for _, count, best, pinned in request_free:
            if pinned is not None and pinned != name:
                fits = False
            elif best.get(name, 0) < count and pinned is None:
                fits = False
        blocked = []
        if not v.schedulable:
            blocked.append("cordoned")
        taints = placement.untolerated_taints(spec, raw)
        blocked += [
            f"taint {placement.taint_text(t)}" for t in taints if t.get("key") != "node.kubernetes.io/unschedulable"
        ]
        if fits:
            if blocked:
                fit_blocked.append((v, ", ".join(blocked)))
            else:
                fit_free.append(v)
    return fit_free, fit_blocked, served, free_by_res, dra_fit_nodes


def _pending(ctx: _Context, pk: tuple[str, str], pod: dict, reqs: dict[str, int]) -> Iterable[Finding]:
    m = ctx.m
    spec = pod.get("spec") or {}
    ref = _pod_ref(pk)
    pname = f"{pk[0]}/{pk[1]}"
    evs = ctx.events("Pod", *pk)
    # A claim the scheduler made in an earlier cycle, while the pod is still unbound.
    for ck in sorted(m._claims_by_owner_pod.get(pk, ())):
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
    claims = _pod_claim_specs(m, pod)
    selector_problem: list[str] = []
    # The first alternative with its own selectors, per failing request: where the excluding clause is looked for.
    selector_bodies: dict[str, dict] = {}
    request_free: list[tuple[str, int, dict[str, int], str | None]] = []
    for oref, cspec in claims.values():
        claim_obj = m.objects["ResourceClaim"].get((oref[1], oref[2])) if oref[0] == "ResourceClaim" else None
        pinned = m.claim_node(claim_obj) if claim_obj is not None and m.claim_devices(claim_obj) else None
        for req in claim_requests(cspec.get("devices")):
            best: dict[str, int] = defaultdict(int)
            count = 1
            ok_alt = False
            for _, body in request_alternatives(req):
                free, sel = ctx.request_free(body)
                count = int(body.get("count") or 1)
                if sel.matched and not sel.errors and not sel.compile_error:
                    ok_alt = True
                for node, c in free.items():
                    best[node] = max(best[node], c)
            if not ok_alt:
                subject = f"{oref[0]} {oref[2]} request {req.get('name')}"
                selector_problem.append(subject)
                with_selectors = next((b for _, b in request_alternatives(req) if b.get("selectors")), None)
                if with_selectors is not None:
                    selector_bodies[subject] = with_selectors
            request_free.append((f"{oref[2]}/{req.get('name')}", count, best, pinned))
    sig = None
    if not request_free:
        # Pods of one workload share their scheduling needs: reason about the nodes once for all of them.
        sig = (
            json.dumps([spec.get("nodeSelector"), spec.get("affinity"), spec.get("tolerations")], sort_keys=True),
            tuple(sorted(reqs.items())),
        )
    fit = ctx.fit_cache.get(sig) if sig is not None else None
    if fit is None:
        fit = _node_fit(ctx, spec, reqs, request_free)
        if sig is not None:
            ctx.fit_cache[sig] = fit
    fit_free, fit_blocked, served, free_by_res, dra_fit_nodes = fit
    pool = None
    if fit_free:
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
                    f"pod {pname} fits on {_plural(len(fit_free), 'node')} but quota rejects the claim for its "
                    f"{n}× {res}",
                    [text, f"DeviceClass {cls} serves {res} on those nodes through DRA"] + evs,
                    resource=qres,
                    quota=qref[2],
                    namespace=pk[0],
                )
                return
        return
    if fit_blocked:
        nodes = [v.name for v, _ in fit_blocked]
        yield make_finding(
            "pending-cordoned",
            [ref] + [_node_ref(n) for n in nodes],
            f"pod {pname} fits only on {_plural(len(nodes), 'node')} that {'is' if len(nodes) == 1 else 'are'} "
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
        why = {s: _excluding_clause(m, selector_bodies[s], spec) for s in selector_problem if s in selector_bodies}
        summary = f"pod {pname} cannot get its devices because of the selector of {subjects[0]}"
        if why.get(subjects[0]):
            summary += f": {why[subjects[0]]}"
        yield make_finding(
            "pending-selector",
            [ref],
            summary,
            [
                f"{s}: {why[s]}" if why.get(s) else f"{s}: selects no usable device (see its selector finding)"
                for s in subjects
            ]
            + evs,
            subject=subjects[0],
        )
        return
    ev = []
    res_name, want = next(iter(reqs.items())) if reqs else ("devices", request_free[0][1] if request_free else 0)
    for res, n in reqs.items():
        frees = [f for f in free_by_res.get(res, []) if f > 0]
        ev.append(
            f"requested {n} {res}; largest free block {max(frees) if frees else 0}; free total {sum(frees)} "
            f"on {_plural(len(free_by_res.get(res, [])), 'eligible node')}"
        )
    for label, count, best, _ in request_free:
        vals = [c for c in best.values() if c > 0]
        ev.append(
            f"claim {label}: requested {count}; largest free block {max(vals) if vals else 0}; free total {sum(vals)}"
        )
    yield make_finding(
        "pending-insufficient",
        [ref],
        f"pod {pname} waits for {want} {res_name}: no eligible node has that many free",
        ev + evs,
        pool=pool,
        resource=res_name,
        pod=pname,
    )


# Pod findings that repeat for every replica of a workload: shown once per workload, naming all its pods.
MERGED_PER_WORKLOAD = (
    "nodeselector-steering",
    "double-request",
    "pending-insufficient",
    "pending-unmapped",
    "pending-selector",
    "pending-cordoned",
    "running-without-gpu",
    "failed-admission",
)


def _merge_replicas(model: FleetModel, findings: list[Finding]) -> list[Finding]:
    groups: dict[tuple, list[Finding]] = defaultdict(list)
    out: list[Finding] = []
    for f in findings:
        if f.id in MERGED_PER_WORKLOAD and f.objects and f.objects[0][0] == "Pod":
            pod = model.objects["Pod"].get(f.objects[0][1:])
            chain = model.owner_chain(pod) if pod is not None else []
            if chain:
                key = (f.id, chain[-1])
                if not groups[key]:
                    out.append(f)
                groups[key].append(f)
                continue
        out.append(f)
    for (_fid, owner), group in groups.items():
        first = group[0]
        pods = [g.objects[0] for g in group]
        rest = [o for g in group for o in g.objects[1:] if o[0] != "Pod" and o != owner]
        first.objects = pods + list(dict.fromkeys(rest)) + [owner]
        if len(group) > 1:
            first.summary += f" (and {_plural(len(group) - 1, 'more pod')} of {owner[0]} {owner[2]})"
    return out


RULES = (
    _stack_nodes,
    _daemonset_targets,
    _no_slices,
    _kubelets,
    _sharing,
    _migration_optional,
    _classes,
    _selectors,
    _claims,
    _pod_shapes,
    _accounting,
    _pods,
)


def explain_pod(model: FleetModel, namespace: str, name: str) -> tuple[list[Finding], str]:
    """The findings about one pod (its own, and those of the node it is bound to), and one sentence of status when
    there is none (a pending pod that fits somewhere: how many nodes could take it)."""
    pod = model.objects["Pod"].get((namespace, name))
    if pod is None:
        return [], f"pod {namespace}/{name} does not exist"
    ctx = _Context(model)
    own_findings = list(_pod_findings(ctx, (namespace, name), pod))
    node_name = (pod.get("spec") or {}).get("nodeName")
    if node_name:
        node_ids = {"both-stacks", "plugin-flapping", "no-slices", "kubelet-too-old"}
        own_findings += [f for f in diagnose(model) if f.id in node_ids and ("Node", "", node_name) in f.objects]
    if own_findings:
        return sort_findings(own_findings), ""
    phase = (pod.get("status") or {}).get("phase", "")
    if node_name:
        return [], f"{phase or 'bound'} on {node_name}; nothing known to be wrong"
    reqs = pod_extended_requests(pod)
    spec = pod.get("spec") or {}
    if not reqs and not spec.get("resourceClaims"):
        return [], "Pending; it asks for no GPU, so its cause is outside what dragoman checks"
    fit_free, _, _, _, dra_fit = _node_fit(ctx, spec, reqs, [])
    via_dra = {n for names in dra_fit.values() for n in names}
    n_dra = sum(1 for v in fit_free if v.name in via_dra)
    return [], (
        f"Pending; it fits on {_plural(len(fit_free), 'node')} ({len(fit_free) - n_dra} through the device plugin, "
        f"{n_dra} through DRA), so the scheduler should place it soon"
    )


def diagnose(model: FleetModel) -> list[Finding]:
    """Every finding of the catalogue present in the model, most severe first."""
    was_enabled = gc.isenabled()
    gc.disable()  # many short-lived containers, no cycles; a collection would rescan the whole fleet
    try:
        ctx = _Context(model)
        out: list[Finding] = []
        for rule in RULES:
            out.extend(rule(ctx))
        out = _merge_replicas(model, out)
    finally:
        if was_enabled:
            gc.enable()
    return sort_findings(out)
