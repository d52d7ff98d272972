"""The capacity gate of the ownership switch: GPUs a pool serves today against the devices it will serve after the
switch, node by node, with the reason when they differ (the pool's picture is actions/picture.py's); and the figures
the switch records and the Load view shows."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from dragoman.actions.picture import Picture, class_name, driver_version, read_picture
from dragoman.fleet import nvidia_schema as nvs
from dragoman.fleet.cel.api import Environment
from dragoman.fleet.k8s import celenv, quantity
from dragoman.fleet.k8s.times import now_text
from dragoman.fleet.nvidia_schema import DRIVER, STALE_ATTRIBUTES

# The chart's class (dra-facts.md §d): whole GPUs only.
CANONICAL_CLASS = "gpu.nvidia.com"
CANONICAL_SELECTOR = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"

# ---------------------------------------------------------------- predictions and the gate


def expected_devices(pic: Picture, node: str) -> tuple[list[dict], str]:
    """(devices, source): the node's published devices when it has some, else those predicted from GFD labels."""
    published = pic.published(node)
    if published:
        return published, "slices"
    predicted = nvs.predict_devices(pic.nodes[node], driver_version(pic))
    if predicted is None:
        return [], "none"
    return predicted, "GFD labels"


def driver_down(pic: Picture) -> dict[str, str]:
    """Nodes of the pool that publish no devices because the DRA driver's pod there does not run (`no-slices`), with
    the reason in a sentence: the devices predicted from GFD labels there are not what the switch would get."""
    from dragoman.fleet import podstate

    out = {}
    for node in sorted(pic.nodes):
        if pic.published(node):
            continue
        for pod in pic.driver_pods(node):
            md = pod.get("metadata") or {}
            if md.get("deletionTimestamp") or podstate.pod_ready(pod):
                continue
            owner = next((r.get("name") for r in md.get("ownerReferences") or () if r.get("kind") == "DaemonSet"), "")
            which = f"its DRA driver pod {md.get('namespace', '')}/{md.get('name', '')}" + (
                f" (DaemonSet {owner})" if owner else ""
            )
            exited = podstate.failing_exit(pod)
            phase = (pod.get("status") or {}).get("phase") or "Pending"
            logs = f"kubectl logs -n {md.get('namespace', '')} {md.get('name', '')}"
            out[node] = (
                f"{which} crash-loops ({exited}); its logs: {logs} --previous"
                if exited
                else f"{which} is {phase} and not ready; its logs: {logs}"
            )
            break
    return out


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
    if not nvs.selects_whole_gpus(expressions):
        out.append(
            (
                "class-too-broad",
                "its selector has no type == 'gpu' clause, so MIG or vfio devices would go to nvidia.com/gpu pods",
            )
        )
    published = nvs.published_attributes(version)
    stale = [a for a in STALE_ATTRIBUTES if re.search(rf"\b{a}\b", text) and a not in published]
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
    serving_obj = next((c for c in pic.objects["DeviceClass"] if class_name(c) == serving), None)
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
    replicas = quantity.count(labels.get("nvidia.com/gpu.replicas")) or 1
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
        "time": now_text(),
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
