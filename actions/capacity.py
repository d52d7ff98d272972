"""The ownership switch's picture of a pool (its stacks, the serving DeviceClass, predicted devices) and the capacity
gate: GPUs served today vs devices served after the switch."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from typing import Any

from dragoman.fleet import k8s
from dragoman.fleet import nvidia_schema as nvs
from dragoman.fleet import ownership as own
from dragoman.fleet.cel.api import Environment
from dragoman.fleet.cluster import ApiError
from dragoman.fleet.k8s import celenv
from dragoman.fleet.k8s.allocator import AllocatedState, Allocator, Inventory, RequestExplanation
from dragoman.fleet.k8s.slices import newest_slices
from dragoman.fleet.model import FleetModel

GPU = "nvidia.com/gpu"
DRIVER = "gpu.nvidia.com"
# The chart's class (dra-facts.md §d): whole GPUs only.
CANONICAL_CLASS = "gpu.nvidia.com"
CANONICAL_SELECTOR = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
TYPE_GPU = re.compile(
    r"""\.type\s*==\s*['"]gpu['"]|\[['"]type['"]\]\s*==\s*['"]gpu['"]|['"]gpu['"]\s*==\s*[^&|]*\.type\b"""
)
STALE = ("index", "minor", "pcieBusID")

_LISTS = {
    "Node": "/api/v1/nodes",
    "Pod": "/api/v1/pods",
    "DaemonSet": "/apis/apps/v1/daemonsets",
    "ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
    "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
    "ResourceClaim": "/apis/resource.k8s.io/v1/resourceclaims",
    "DeviceTaintRule": "/apis/resource.k8s.io/v1/devicetaintrules",
}


@dataclasses.dataclass
class Stack:
    """A device-plugin or DRA-driver DaemonSet and how it is deployed."""

    workload: own.Workload
    ds: dict

    @property
    def ref(self) -> str:
        return f"DaemonSet {self.workload.namespace}/{self.workload.name}"

    @property
    def path(self) -> str:
        return f"/apis/apps/v1/namespaces/{self.workload.namespace}/daemonsets/{self.workload.name}"

    @property
    def pod_spec(self) -> dict:
        return ((self.ds.get("spec") or {}).get("template") or {}).get("spec") or {}

    @property
    def image(self) -> str:
        cs = self.pod_spec.get("containers") or []
        for c in cs:
            if c.get("name") == "gpus":
                return c.get("image", "")
        return cs[0].get("image", "") if cs else ""


@dataclasses.dataclass
class Picture:
    """What the switch steps read about one pool, fresh from the cluster."""

    pool: str
    pool_label: str
    model: FleetModel
    nodes: dict[str, dict]  # the pool's raw nodes
    device_plugins: list[Stack]  # device-plugin DaemonSets selecting or running on the pool
    driver: Stack | None  # the NVIDIA DRA driver's kubelet plugin DaemonSet
    objects: dict[str, list[dict]]

    def node_view(self, name: str):
        return self.model.node(name)

    def selects(self, stack: Stack, node: dict) -> bool:
        labels = stack.workload.selected_labels((node.get("metadata") or {}).get("labels") or {})
        return k8s.pod_matches_node(stack.pod_spec, node, labels=labels)

    def slices_of(self, node: str) -> list[dict]:
        return [
            s
            for s in self.objects["ResourceSlice"]
            if (s.get("spec") or {}).get("nodeName") == node and (s.get("spec") or {}).get("driver") == DRIVER
        ]

    def published(self, node: str) -> list[dict]:
        """Devices of the newest generation the driver publishes for the node."""
        return [d for s in newest_slices(self.slices_of(node)) for d in (s.get("spec") or {}).get("devices") or []]

    def plugin_pods(self, node: str) -> list[dict]:
        out = []
        for p in self.objects["Pod"]:
            if (p.get("spec") or {}).get("nodeName") != node:
                continue
            w = own.classify_pod(p, {(s.workload.namespace, s.workload.name): s.workload for s in self.device_plugins})
            if (
                w is not None
                and w.role == "device-plugin"
                and (p.get("status") or {}).get("phase") in ("Running", "Pending")
                and not (p.get("metadata") or {}).get("deletionTimestamp")
            ):
                out.append(p)
        return out

    def driver_pods(self, node: str) -> list[dict]:
        out = []
        for p in self.objects["Pod"]:
            if (p.get("spec") or {}).get("nodeName") != node:
                continue
            w = own.classify_pod(p, {})
            if w is not None and w.role == "dra-driver":
                out.append(p)
        return out

    def allocatable(self, node: str) -> int:
        n = self.nodes.get(node) or {}
        return own.parse_count(((n.get("status") or {}).get("allocatable") or {}).get(GPU))

    def serving_class(self) -> str | None:
        names = self.model.classes_naming(GPU)
        return names[0] if names else None

    def class_expressions(self, name: str) -> list[str]:
        c = self.model.classes().get(name)
        return list(c.expressions) if c else []

    def allocator(self, *, holding: bool, extra_classes: tuple[dict, ...] = ()) -> Allocator:
        """fleet's allocator over this picture: slices with their DeviceTaintRules, the cluster's classes (and
        `extra_classes`), and what allocated claims hold when `holding` (free now) or nothing (what a node can
        serve once drained)."""
        key = ("holding" if holding else "capacity", tuple(_class_name(c) for c in extra_classes))
        hit = self._allocators.get(key)
        if hit is not None:
            return hit
        inv = self._inventory
        if inv is None:
            inv = self._inventory = Inventory(self.objects["ResourceSlice"], self.objects.get("DeviceTaintRule") or ())
        classes = {_class_name(c): c for c in self.objects["DeviceClass"]}
        classes.update({_class_name(c): c for c in extra_classes})
        state = AllocatedState.from_claims(self.objects["ResourceClaim"]) if holding else AllocatedState()
        made = self._allocators[key] = Allocator(inv, state, classes)
        return made

    def servable(self, node: str, cls: dict, *, holding: bool) -> RequestExplanation | None:
        """The devices of DeviceClass `cls` the allocator could give a bridged nvidia.com/gpu pod (no tolerations)
        on `node`, and why not the others; None when the node is unknown."""
        raw = self.nodes.get(node) or self.node_objects().get(node)
        if raw is None:
            return None
        name = _class_name(cls)
        known = any(_class_name(c) == name and c is cls for c in self.objects["DeviceClass"])
        return self.allocator(holding=holding, extra_classes=() if known else (cls,)).request_devices(raw, name)

    def node_objects(self) -> dict[str, dict]:
        if self._node_objects is None:
            self._node_objects = {(n.get("metadata") or {}).get("name", ""): n for n in self.objects["Node"]}
        return self._node_objects

    _allocators: dict = dataclasses.field(default_factory=dict)
    _inventory: Inventory | None = None
    _node_objects: dict[str, dict] | None = None


async def read_picture(ctx: Any) -> Picture:
    """List what the switch needs and classify the pool's stacks; once per plan while one is built
    (Context.reading_once): at 150,000 pods each read of every pod costs seconds, and the plan's steps all read it."""
    memo = getattr(ctx, "reads", None)
    if memo is not None and "picture" in memo:
        return memo["picture"]
    pic = await _read_picture(ctx)
    if memo is not None:
        memo["picture"] = pic
    return pic


async def _read_picture(ctx: Any) -> Picture:
    objects: dict[str, list[dict]] = {}
    for kind, path in _LISTS.items():
        try:
            items, _ = await ctx.cluster.list_all(path)
        except ApiError as exc:
            if exc.status not in (403, 404):
                raise
            items = []
        for it in items:
            it.setdefault("kind", kind)
        objects[kind] = items
    model = FleetModel(ctx.pool_label)
    model.load(objects)
    nodes = {
        n["metadata"]["name"]: n
        for n in objects["Node"]
        if ((n.get("metadata") or {}).get("labels") or {}).get(ctx.pool_label) == ctx.pool
    }
    dps: list[Stack] = []
    drivers: list[Stack] = []
    for ds in objects["DaemonSet"]:
        w = own.classify_daemonset(ds)
        if w is None:
            continue
        st = Stack(w, ds)
        if w.role == "device-plugin":
            dps.append(st)
        elif w.role == "dra-driver":
            drivers.append(st)
    pic = Picture(ctx.pool, ctx.pool_label, model, nodes, [], None, objects)
    for st in dps:
        running_here = any(
            own.classify_pod(p, {(st.workload.namespace, st.workload.name): st.workload}) == st.workload
            and (p.get("spec") or {}).get("nodeName") in nodes
            for p in objects["Pod"]
        )
        if running_here or any(pic.selects(st, n) for n in nodes.values()):
            pic.device_plugins.append(st)
    # The GPU kubelet plugin (a container named gpus or the chart's kubelet-plugin DaemonSet) over other driver parts.
    drivers.sort(key=lambda s: (0 if "kubelet-plugin" in s.workload.name else 1, s.workload.name))
    pic.driver = drivers[0] if drivers else None
    return pic


# ---------------------------------------------------------------- predictions and the gate


def driver_version(pic: Picture) -> str:
    """The attribute schema the pool's devices will be published with (the driver's image tag; newest when none)."""
    if pic.driver is not None and pic.driver.image:
        return pic.driver.image
    return "v0.4.0"


def expected_devices(pic: Picture, node: str) -> tuple[list[dict], str]:
    """(devices, source): the node's published devices when it has some, else those predicted from GFD labels."""
    published = pic.published(node)
    if published:
        return published, "slices"
    predicted = nvs.predict_devices(pic.nodes[node], driver_version(pic))
    if predicted is None:
        return [], "none"
    return predicted, "GFD labels"


def matching(
    devices: list[dict], expressions: list[str], environment: Environment | None = None
) -> tuple[int, list[str]]:
    """How many devices all the expressions select, and the distinct evaluation errors. `environment`: where the
    expressions come from (fleet/k8s/celenv.py): a class the cluster stores (celenv.STORED), or one about to be written
    (celenv.WRITTEN, the default)."""
    from dragoman.fleet.cel import compile_expression
    from dragoman.fleet.cel.fleeteval import DeviceIndex, evaluate_fleet
    from dragoman.fleet.k8s import celenv

    try:
        sels = [compile_expression(e, environment=environment or celenv.WRITTEN) for e in expressions]
    except Exception as exc:  # noqa: BLE001 - a compile error is a reason, shown as such
        return 0, [f"compile error: {getattr(exc, 'message', exc)}"]
    ev = evaluate_fleet(sels, DeviceIndex.of_devices(DRIVER, devices))
    n, errors = 0, []
    for g in ev.group_of:
        out = ev.outcomes[g]
        if out is None or (out.error is None and out.value is True):
            n += 1
        elif out.error and out.error not in errors:
            errors.append(out.error)
    return n, errors


def class_problems(expressions: list[str], version: str) -> list[tuple[str, str]]:
    """(finding id, sentence) for a class that will serve nvidia.com/gpu: too broad, or reading retired attributes."""
    out = []
    text = " ".join(expressions)
    if not any(TYPE_GPU.search(e) for e in expressions):
        out.append(
            (
                "class-too-broad",
                "its selector has no type == 'gpu' clause, so MIG or vfio devices would go to nvidia.com/gpu pods",
            )
        )
    published = nvs.published_attributes(version)
    stale = [a for a in STALE if re.search(rf"\b{a}\b", text) and a not in published]
    if stale:
        out.append(
            (
                "stale-attribute",
                f"its selector reads {', '.join(stale)}, which driver {version.rsplit(':', 1)[-1]} no longer "
                "publishes (use uuid or resource.kubernetes.io/pciBusID)",
            )
        )
    return out


@dataclasses.dataclass
class NodeGate:
    node: str
    served: int  # GPUs served today (allocatable nvidia.com/gpu, or devices of the serving class on a DRA node)
    after: int  # devices the class that will serve nvidia.com/gpu matches after the switch
    source: str  # "slices" | "GFD labels" | "none"
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.served == self.after

    def to_json(self) -> dict:
        return {
            "node": self.node,
            "servedToday": self.served,
            "servedAfter": self.after,
            "source": self.source,
            "reason": self.reason,
        }


def future_class(pic: Picture) -> tuple[str, list[str], str]:
    """(name, expressions, why) of the class that will serve nvidia.com/gpu once the device-class step has run."""
    from dragoman.actions.device_class import decide

    d = decide(pic)
    return d.name, d.expressions, d.why


def _class_name(cls: dict) -> str:
    return str((cls.get("metadata") or {}).get("name", ""))


def class_object(name: str, expressions: list[str]) -> dict:
    """A DeviceClass with these selectors, for a class the plan will write (or rewrite) before the switch."""
    return {"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]}}


def allocatable_count(pic: Picture, node: str, cls: dict, *, holding: bool = False) -> tuple[int | None, list[str]]:
    """How many of the node's published devices the allocator could give a bridged nvidia.com/gpu pod through `cls`
    (a tainted device serves no such pod: the scheduler's claim carries no tolerations), and why not the others,
    grouped; None when the allocator refuses the attempt (a CEL error: `matching` words it)."""
    rq = pic.servable(node, cls, holding=holding)
    if rq is None or rq.error is not None:
        return None, []
    notes: dict[str, int] = {}
    for _, ex in rq.excluded:
        if ex.kind in ("class-selector", "selector"):
            continue
        text = ex.message if ex.kind == "taint" else ex.kind
        notes[text] = notes.get(text, 0) + 1
    return len(rq.candidates), [f"{n} device(s) {t}" if t != "in-use" else f"{n} held" for t, n in notes.items()]


def gate(pic: Picture, *, served: dict[str, int] | None = None, use_slices_only: bool = False) -> list[NodeGate]:
    """Per node of the pool: today's count vs the count after the switch, with the reason when they differ.

    Published devices are counted by the allocator (fleet/k8s/allocator.py): only what it could give a bridged pod
    counts, so a device tainted by its slice or a DeviceTaintRule does not."""
    name, exprs, why = future_class(pic)
    future = class_object(name, exprs)
    serving = pic.serving_class()
    serving_obj = next((c for c in pic.objects["DeviceClass"] if _class_name(c) == serving), None)
    out = []
    for node in sorted(pic.nodes):
        today = (served or {}).get(node)
        if today is None:
            today = pic.allocatable(node)
            if today == 0 and pic.published(node):
                stored = pic.class_expressions(serving) if serving else None
                today = matching(pic.published(node), stored, celenv.STORED)[0] if stored is not None else 0
                if serving_obj is not None:
                    counted, _ = allocatable_count(pic, node, serving_obj)
                    today = counted if counted is not None else today
        if use_slices_only:
            devices, source = pic.published(node), "slices"
        else:
            devices, source = expected_devices(pic, node)
        n, errors = matching(devices, exprs)
        excluded: list[str] = []
        if source == "slices" and not errors:
            counted, excluded = allocatable_count(pic, node, future)
            if counted is not None:
                n = counted
        g = NodeGate(node, today, n, source)
        if not g.ok:
            g.reason = _reason(pic, node, g, name, exprs, why, devices, errors)
            if excluded:
                g.reason += "; the allocator leaves out " + ", ".join(excluded)
        out.append(g)
    return out


def _reason(
    pic: Picture, node: str, g: NodeGate, cls: str, exprs: list[str], why: str, devices: list[dict], errors: list[str]
) -> str:
    raw = pic.nodes[node]
    labels = (raw.get("metadata") or {}).get("labels") or {}
    replicas = own.parse_count(labels.get("nvidia.com/gpu.replicas")) or 1
    whole = sum(1 for d in devices if ((d.get("attributes") or {}).get("type") or {}).get("string") == "gpu")
    if not devices:
        return (
            f"node {node}: no devices are expected "
            f"({'no GFD labels and no slices' if g.source == 'none' else 'no slices published'}), and it "
            f"serves {g.served} nvidia.com/gpu today"
        )
    parts = [
        (
            f"node {node}: serves {g.served} nvidia.com/gpu today, {g.after} after the switch through DeviceClass "
            f"{cls} ({why})"
        )
    ]
    if g.source == "GFD labels" and nvs.count_cap_note(labels):
        parts.append(nvs.count_cap_note(labels))
    if replicas > 1:
        strategy = labels.get("nvidia.com/gpu.sharing-strategy") or "time-slicing"
        parts.append(
            f"{strategy} ×{replicas} makes the device plugin offer {whole} GPUs as {whole * replicas} replicas; "
            "through DRA each GPU is one device (the replicas disappear)"
        )
    elif errors:
        parts.append("its selector fails on these devices: " + errors[0])
    elif g.after < whole:
        parts.append(f"its selector ({' && '.join(exprs)}) matches only {g.after} of the node's {whole} GPUs")
    elif g.after > g.served:
        parts.append(f"the class matches {g.after} devices, more than the {g.served} GPUs the device plugin offers")
    return "; ".join(parts)


def gate_blocker(failures: list[NodeGate]) -> str:
    shown = " ".join(f"{f.reason}." for f in failures[:4])
    more = f" (and {len(failures) - 4} more nodes)" if len(failures) > 4 else ""
    return (
        f"capacity gate: the number of GPUs the pool serves as nvidia.com/gpu would change on {len(failures)} "
        f"node(s): {shown}{more} Pass --accept-capacity-change to accept the new count."
    )


# ---------------------------------------------------------------- figures recorded in the pool's ConfigMap


async def record(ctx: Any, key: str, value: Any, message: str = "") -> None:
    """Keep `value` under `switch.<key>` in the pool's state (figures, what rollback needs beyond one step)."""
    if ctx.state is None or ctx.read_only:
        return
    await ctx.state.record_switch(key, value, message or f"switch: {key} recorded")


def recorded(ctx: Any, key: str) -> Any:
    if ctx.state is None:
        return None
    return (ctx.state.state.get("switch") or {}).get(key)


async def figures(ctx: Any, pic: Picture | None = None, since: float | None = None) -> dict:
    """The pool's figures for the Load view: Pending GPU pods, claims, slices, GPUs by mechanism, API object counts,
    and with a Prometheus (--prometheus URL) what it says of the scheduler, claim creations, etcd and the API server
    (with `since`, once it has scraped every target after that moment)."""
    pic = pic or await read_picture(ctx)
    nodes = set(pic.nodes)
    pods = [p for p in pic.objects["Pod"] if (p.get("spec") or {}).get("nodeName") in nodes]
    pending = [
        p
        for p in pic.objects["Pod"]
        if (p.get("status") or {}).get("phase") == "Pending"
        and ((p.get("spec") or {}).get("nodeSelector") or {}).get(pic.pool_label) == pic.pool
    ]
    claims = [
        c
        for c in pic.objects["ResourceClaim"]
        if any(
            ((r.get("pool") or "") in nodes)
            for r in ((((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or [])
        )
    ]
    slices = [s for s in pic.objects["ResourceSlice"] if (s.get("spec") or {}).get("nodeName") in nodes]
    out = {
        "time": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "nodes": len(nodes),
        "allocatableGpu": sum(pic.allocatable(n) for n in nodes),
        "devices": sum(len(pic.published(n)) for n in nodes),
        "pendingPods": len(pending),
        "pods": len(pods),
        "claims": len(claims),
        "bridgeClaims": sum(
            1
            for c in claims
            if ((c.get("metadata") or {}).get("annotations") or {}).get(
                "resource.kubernetes.io/extended-resource-claim"
            )
            == "true"
        ),
        "slices": len(slices),
        "apiObjects": {k: len(v) for k, v in pic.objects.items()},
    }
    url = getattr(ctx.options, "prometheus_url", "")
    if url:
        # The control plane's side, as its Prometheus sees it: scheduler queue, claim creations, etcd's size.
        from dragoman.fleet.load import prometheus_figures

        out["prometheus"] = await prometheus_figures(url, since=since)
    return out


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
