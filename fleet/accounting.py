"""GPU accounting per pool and fleet-wide: node allocatable vs ResourceSlice devices vs claim allocations, the
allocatable each pool's move takes from sums, quotas before and after a move, and PrometheusRules reading
allocatable."""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from dragoman.fleet import nvidia_schema
from dragoman.fleet.errors import NAME_SHOWN, printable, shown_words
from dragoman.fleet.glyphs import labelled
from dragoman.fleet.k8s.extended import is_dra_extended_resource_name
from dragoman.fleet.k8s.quantity import count
from dragoman.fleet.model import (
    IMPLICIT_PREFIX,
    FleetModel,
    claim_requests,
    claim_spec,
    is_bridge_claim,
    key_of,
    pod_extended_requests,
    pod_terminal,
    request_alternatives,
)
from dragoman.fleet.ownership import GPU

CLAIM_COUNT = "count/resourceclaims.resource.k8s.io"
PER_CLASS_SUFFIX = ".deviceclass.resource.k8s.io/devices"
IMPLICIT_REQUEST_PREFIX = "requests." + IMPLICIT_PREFIX
ALL_MODE_WORST_CASE = 32  # the quota evaluator charges an `All` request as the largest possible allocation
MONITORING_PATH = "/apis/monitoring.coreos.com/v1/prometheusrules"

# What to count instead of node allocatable, said once and reused wherever a reader is named.
DEVICE_SOURCE = (
    "devices: ResourceSlices of driver gpu.nvidia.com (newest pool generation); in use: ResourceClaims' "
    "status.allocation.devices.results"
)
PROMQL_SOURCE = (
    "a per-GPU exporter counts GPUs whatever serves them, e.g. count by (Hostname) (DCGM_FI_DEV_GPU_UTIL) "
    "from dcgm-exporter"
)

_ALLOC_METRIC = re.compile(r"kube_node_status_(allocatable|capacity)")
_GPU_RESOURCE = re.compile(r"nvidia_com_gpu|nvidia\.com/gpu|resource\s*=~\s*\"[^\"]*gpu")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# ---- pools ------------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class PoolAccount:
    """One pool's GPUs as three sources count them, and what sums of node allocatable miss now or after it moves."""

    pool: str
    served_by: str  # the pool's ownership ("device-plugin", "dra", "mixed", ...)
    target: str | None
    gpu_nodes: int
    physical_gpus: int  # GFD's count per node, else what the plugin or the driver reports (MIG slices are not GPUs)
    allocatable: int  # node.status.allocatable["nvidia.com/gpu"], summed
    allocatable_mig: int  # nvidia.com/mig-* allocatable, summed
    capacity: int
    slice_devices: int  # devices of gpu.nvidia.com in the newest slices of the pool's nodes
    slice_gpus: int  # of which whole GPUs (type gpu)
    allocated: int  # of those devices, allocated to a ResourceClaim
    plugin_in_use: int  # nvidia.com/gpu held through the device plugin by pods bound to the pool's nodes
    missed_now: (
        int  # GPUs on nodes reporting 0 allocatable while publishing devices: what sums of allocatable miss today
    )
    drop_if_moved: int  # allocatable nvidia.com/gpu that disappears from sums when the rest of the pool moves
    nodes_on_dra: int  # GPU nodes reporting 0 allocatable while publishing devices
    # "migrated" | "planned" | "partly migrated" | "unserved" | "no GPUs". A pool whose plugin is gone but where a
    # node publishes no devices is only partly migrated: that node's GPUs are served by nothing (Pools shows it ◐).
    state: str
    nodes_unserved: int = 0  # GPU nodes reporting 0 allocatable that publish no devices either

    @property
    def state_label(self) -> str:
        """The state as the Accounting and Load views write it (one wording for both)."""
        label = {
            "planned": labelled("plugin", "planned"),  # still on the device plugin
            "migrated": labelled("dra", "migrated"),
            "partly migrated": labelled("mixed", "partly"),
            "unserved": labelled("none", "unserved"),
        }.get(self.state, self.state)
        if self.nodes_unserved and self.state == "partly migrated" and not self.allocatable:
            label += f", {self.nodes_unserved} unserved"  # GPU nodes: short, the column is narrow at 80 wide
        return label

    @property
    def source(self) -> str:
        """The replacement data source for this pool's GPU count."""
        if self.state == "planned":
            return f"after the move: {DEVICE_SOURCE}"
        return DEVICE_SOURCE

    def to_json(self) -> dict:
        return {
            "pool": self.pool,
            "servedBy": self.served_by,
            "state": self.state,
            "gpuNodes": self.gpu_nodes,
            "physicalGpus": self.physical_gpus,
            "allocatableGpus": self.allocatable,
            "allocatableMig": self.allocatable_mig,
            "capacityGpus": self.capacity,
            "sliceDevices": self.slice_devices,
            "sliceGpus": self.slice_gpus,
            "allocatedDevices": self.allocated,
            "pluginGpusInUse": self.plugin_in_use,
            "missedByAllocatableNow": self.missed_now,
            "gpuNodesUnserved": self.nodes_unserved,
            "allocatableDropIfMoved": self.drop_if_moved,
            "replacementSource": self.source,
        }


def _plugin_in_use(model: FleetModel, node: str) -> int:
    n = 0
    for pod in model.pods_on_node(node):
        if pod_terminal(pod) or (pod.get("status") or {}).get("extendedResourceClaimStatus"):
            continue
        n += pod_extended_requests(pod).get(GPU, 0)
    return n


def _physical(v, gpu_devs) -> int:
    """Physical GPUs behind a node's devices: whole GPUs plus the distinct parents of its MIG devices (GFD's count if
    larger)."""
    whole = sum(1 for d in gpu_devs if d.type in (None, "gpu"))
    parents = {d.attribute("parentUUID") for d in gpu_devs if d.type == "mig"}
    parents.discard(None)
    if not gpu_devs:
        return v.gpu_count_label or v.capacity_gpu
    return max(whole + len(parents), v.gpu_count_label if not whole and parents else 0)


def pool_account(model: FleetModel, name: str) -> PoolAccount | None:
    """The accounting of one pool, from its nodes' views (allocatable, slices, allocations) and the pods bound there."""
    p = model.pool(name)
    if p is None:
        return None
    nodes = [v for v in model.pool_nodes(name) if v.is_gpu]
    alloc = sum(v.allocatable_gpu for v in nodes)
    alloc_mig = sum(sum(v.mig_allocatable.values()) for v in nodes)
    slice_devices = slice_gpus = allocated = missed = on_dra = in_use = off = 0
    for v in nodes:
        gpu_devs = [d for d in v.devices if d.driver == nvidia_schema.DRIVER]
        slice_devices += len(gpu_devs)
        slice_gpus += sum(1 for d in gpu_devs if d.type in (None, "gpu"))
        allocated += sum(1 for d in gpu_devs if model.device_claim(d.id) is not None)
        if v.allocatable_gpu == 0 and not any(v.mig_allocatable.values()):
            # Whatever serves them (DRA, or nothing between two steps), sums of allocatable no longer see these GPUs.
            missed += _physical(v, gpu_devs)
            on_dra += 1 if gpu_devs else 0
            off += 1
        in_use += _plugin_in_use(model, v.name)
    if not nodes:
        state = "no GPUs"
    elif alloc == 0 and on_dra and on_dra < off:
        state = "partly migrated"
    elif alloc == 0 and (on_dra or p.target == "dra"):
        state = "migrated"
    elif alloc == 0:
        state = "unserved"  # the plugin is gone and no driver publishes devices yet
    elif off == 0:
        state = "planned"
    else:
        state = "partly migrated"
    return PoolAccount(
        pool=name,
        served_by=p.ownership,
        target=p.target,
        gpu_nodes=len(nodes),
        physical_gpus=sum(p.products.values()),
        allocatable=alloc,
        allocatable_mig=alloc_mig,
        capacity=p.capacity_gpus,
        slice_devices=slice_devices,
        slice_gpus=slice_gpus,
        allocated=allocated,
        plugin_in_use=in_use,
        missed_now=missed,
        drop_if_moved=alloc,
        nodes_on_dra=on_dra,
        state=state,
        nodes_unserved=off - on_dra if on_dra else 0,
    )


def pool_accounts(model: FleetModel) -> list[PoolAccount]:
    """Every pool with GPU nodes, by name."""
    out = []
    for name in model.pool_names():
        a = pool_account(model, name)
        if a is not None and a.gpu_nodes:
            out.append(a)
    return out


def fleet_totals(accounts: Iterable[PoolAccount]) -> dict[str, int]:
    """Fleet-wide sums of the per-pool figures (JSON keys)."""
    keys = (
        "gpuNodes",
        "physicalGpus",
        "allocatableGpus",
        "allocatableMig",
        "capacityGpus",
        "sliceDevices",
        "sliceGpus",
        "allocatedDevices",
        "pluginGpusInUse",
        "missedByAllocatableNow",
        "allocatableDropIfMoved",
    )
    out = dict.fromkeys(keys, 0)
    for a in accounts:
        j = a.to_json()
        for k in keys:
            out[k] += j[k]
    return out


# ---- quota charging (the resourceclaims and pods evaluators, DRAExtendedResource on; dra-facts.md §b) ---------


def pod_charges(pod: dict) -> dict[str, int]:
    """What a pod charges: `requests.<extended resource>` whatever backs it (terminal pods charge nothing)."""
    if pod_terminal(pod):
        return {}
    return {f"requests.{k}": v for k, v in pod_extended_requests(pod).items()}


def _class_charges(out: dict[str, int], cls: str, n: int, explicit: str | None, pod_names: set[str] | None) -> None:
    out[cls + PER_CLASS_SUFFIX] = out.get(cls + PER_CLASS_SUFFIX, 0) + n
    implicit = IMPLICIT_PREFIX + cls
    # A scheduler-made claim does not charge again the name its pod already charged for that class.
    if pod_names is None or implicit not in pod_names:
        out["requests." + implicit] = out.get("requests." + implicit, 0) + n
    if explicit and (pod_names is None or explicit not in pod_names):
        out["requests." + explicit] = out.get("requests." + explicit, 0) + n


def claim_charges(model: FleetModel, claim: dict) -> dict[str, int]:
    """What a ResourceClaim charges: one claim, devices per class, and the class's implicit and explicit request
    names."""
    out: dict[str, int] = {CLAIM_COUNT: 1}
    classes = model.classes()
    pod_names: set[str] | None = None
    if is_bridge_claim(claim):
        ns = key_of(claim)[0]
        owner = next(
            (o for o in (claim.get("metadata") or {}).get("ownerReferences") or () if o.get("kind") == "Pod"), None
        )
        pod = model.objects["Pod"].get((ns, owner.get("name", ""))) if owner else None
        if pod is not None:
            pod_names = set(pod_extended_requests(pod))
    for req in claim_requests(claim_spec(claim, "ResourceClaim").get("devices")):
        best: dict[str, int] = {}
        for _, body in request_alternatives(req):
            mode = body.get("allocationMode") or "ExactCount"
            n = int(body.get("count") or 1) if mode == "ExactCount" else ALL_MODE_WORST_CASE if mode == "All" else 0
            cls = body.get("deviceClassName", "")
            scratch: dict[str, int] = {}
            c = classes.get(cls)
            _class_charges(scratch, cls, n, c.extended_resource_name if c else None, pod_names)
            for k, v in scratch.items():
                best[k] = max(best.get(k, 0), v)
        for k, v in best.items():
            out[k] = out.get(k, 0) + v
    return out


def namespace_usage(model: FleetModel, namespace: str) -> dict[str, int]:
    """Everything the namespace's pods and claims charge, as the quota controller adds it up."""
    out: dict[str, int] = defaultdict(int)
    for (ns, _), pod in model.objects["Pod"].items():
        if ns == namespace:
            for k, v in pod_charges(pod).items():
                out[k] += v
    for (ns, _), claim in model.objects["ResourceClaim"].items():
        if ns == namespace:
            for k, v in claim_charges(model, claim).items():
                out[k] += v
    return dict(out)


def move_delta(model: FleetModel, namespace: str, pool: str) -> tuple[dict[str, int], int]:
    """What the namespace's quotas gain when `pool` moves to DRA: the scheduler-made claim each of its GPU pods there
    will get (count, devices of the serving class, the class's implicit request name). Also the number of such pods."""
    out: dict[str, int] = defaultdict(int)
    pods = 0
    view = model.pool(pool)
    members = set(view.nodes) if view else set()
    classes = model.classes()
    for (ns, _), pod in model.objects["Pod"].items():
        if ns != namespace or pod_terminal(pod):
            continue
        if (pod.get("spec") or {}).get("nodeName") not in members:
            continue
        if (pod.get("status") or {}).get("extendedResourceClaimStatus"):
            continue  # already served through DRA
        reqs = pod_extended_requests(pod)
        counted = False
        for resource, n in sorted(reqs.items()):
            cls = model.class_serving(resource)
            if cls is None:
                continue
            if not counted:
                out[CLAIM_COUNT] += 1
                counted = True
            c = classes.get(cls)
            scratch: dict[str, int] = {}
            _class_charges(scratch, cls, n, c.extended_resource_name if c else None, set(reqs))
            for k, v in scratch.items():
                out[k] += v
        pods += counted
    return dict(out), pods


def quota_relevant(resource: str) -> bool:
    """Quota names that count GPUs or DRA objects: nvidia.com/* requests, the claim count, DeviceClass resources."""
    if resource == CLAIM_COUNT or resource.endswith(PER_CLASS_SUFFIX) or resource.startswith(IMPLICIT_REQUEST_PREFIX):
        return True
    if resource.startswith("requests."):
        name = resource[len("requests.") :]
        return is_dra_extended_resource_name(name) and name.startswith("nvidia.com/")
    return False


@dataclasses.dataclass
class QuotaLine:
    """One GPU-related resource of one ResourceQuota: its limit, what it counts now, and after a pool moves."""

    namespace: str
    quota: str
    resource: str
    hard: int
    hard_text: str
    used_status: str | None  # status.used as the quota controller last wrote it
    counted_now: int  # recomputed from the namespace's pods and claims
    after: int  # after `pool` moves (same as now when no pool is given)
    pool: str | None
    pods_moving: int  # the namespace's GPU pods on that pool that will get a claim
    meaning: str  # one sentence: what this resource counts, and what changes

    @property
    def changes(self) -> bool:
        return self.after != self.counted_now

    @property
    def changes_meaning(self) -> bool:
        """The figure moves, or it keeps its number while counting DRA devices instead of device-plugin GPUs."""
        return self.changes or (self.resource == f"requests.{GPU}" and self.pods_moving > 0)

    @property
    def blocks_after(self) -> bool:
        return self.after > self.hard

    @property
    def blocks_now(self) -> bool:
        return self.counted_now > self.hard

    def to_json(self) -> dict:
        return {
            "namespace": self.namespace,
            "quota": self.quota,
            "resource": self.resource,
            "hard": self.hard_text,
            "used": self.used_status,
            "countedNow": self.counted_now,
            "pool": self.pool,
            "afterPoolMoves": self.after,
            "podsGettingClaims": self.pods_moving,
            "changes": self.changes,
            "changesMeaning": self.changes_meaning,
            "wouldBlock": self.blocks_after,
            "meaning": self.meaning,
        }


def _meaning(
    model: FleetModel, resource: str, now: int, after: int, pool: str | None, pods: int, plain_claims: int
) -> str:
    gpu_class = model.class_serving(GPU)
    moving = f"when pool {pool} moves" if pool else "when a pool moves"
    if resource == f"requests.{GPU}":
        parts = ["pods keep charging it whatever serves them, and their scheduler-made claims do not charge it again"]
        if pods:
            parts.insert(
                0,
                f"{moving}, {_plural(pods, 'pod')} here get DRA devices instead of device-plugin GPUs under "
                f"the same number",
            )
        if gpu_class:
            parts.append(f"plain claims of {gpu_class} count too ({plain_claims} today)")
        return "; ".join(parts) + "."
    if resource == CLAIM_COUNT:
        if after != now:
            return f"{moving}, each of its {_plural(pods, 'GPU pod')} here makes a claim: +{after - now}."
        return "counts every ResourceClaim, including the one the scheduler makes for each GPU pod on a DRA pool."
    if resource.endswith(PER_CLASS_SUFFIX):
        cls = resource[: -len(PER_CLASS_SUFFIX)]
        if after != now:
            return f"{moving}, the claims of {_plural(pods, 'pod')} here add {after - now} devices of {cls}."
        return f"counts devices of DeviceClass {cls} in claims, the scheduler-made ones included."
    if resource.startswith(IMPLICIT_REQUEST_PREFIX):
        cls = resource[len(IMPLICIT_REQUEST_PREFIX) :]
        if after != now:
            return (
                f"{moving}, the claims of {_plural(pods, 'pod')} here charge {after - now} more under {cls}'s "
                "implicit name."
            )
        return f"counts devices of {cls} requested under its implicit extended-resource name."
    return "counts pods' requests of this extended resource, and plain claims of a class that serves it."


def quota_lines(model: FleetModel, pool: str | None = None) -> list[QuotaLine]:
    """Every GPU-related resource of every ResourceQuota, with what it counts now and after `pool` moves to DRA."""
    out: list[QuotaLine] = []
    usage_cache: dict[str, dict[str, int]] = {}
    delta_cache: dict[str, tuple[dict[str, int], int]] = {}
    gpu_class = model.class_serving(GPU)
    for (ns, qname), quota in sorted(model.objects["ResourceQuota"].items()):
        hard = (quota.get("spec") or {}).get("hard") or {}
        used = (quota.get("status") or {}).get("used") or {}
        names = [r for r in sorted(hard) if quota_relevant(r)]
        if not names:
            continue
        if ns not in usage_cache:
            usage_cache[ns] = namespace_usage(model, ns)
            delta_cache[ns] = move_delta(model, ns, pool) if pool else ({}, 0)
        now_all = usage_cache[ns]
        delta, pods = delta_cache[ns]
        plain = 0
        if gpu_class:
            for (cns, _), c in model.objects["ResourceClaim"].items():
                if (
                    cns == ns
                    and not is_bridge_claim(c)
                    and any(
                        b.get("deviceClassName") == gpu_class
                        for r in claim_requests(claim_spec(c, "ResourceClaim").get("devices"))
                        for _, b in request_alternatives(r)
                    )
                ):
                    plain += 1
        for r in names:
            now = now_all.get(r, 0)
            after = now + delta.get(r, 0)
            out.append(
                QuotaLine(
                    namespace=ns,
                    quota=qname,
                    resource=r,
                    hard=count(hard[r]),
                    hard_text=str(hard[r]),
                    used_status=str(used[r]) if r in used else None,
                    counted_now=now,
                    after=after,
                    pool=pool,
                    pods_moving=pods,
                    meaning=_meaning(model, r, now, after, pool, pods, plain),
                )
            )
    return out


# ---- PrometheusRules -----------------------------------------------------------------------------------------------


@dataclasses.dataclass
class RuleReader:
    """One rule of a PrometheusRule whose expression sums node allocatable (or capacity) nvidia.com/gpu."""

    namespace: str
    name: str
    group: str
    rule: str  # "alert: X" or "record: Y"
    expr: str
    undercount: int  # GPUs the expression misses today (on nodes reporting 0 allocatable)
    drop_if_moved: int = 0  # and how many more once the pool being considered moves
    via: str | None = None  # the recording rule through which it reads allocatable

    @property
    def replacement(self) -> str:
        return f"count devices, not allocatable: {DEVICE_SOURCE}; in PromQL, {PROMQL_SOURCE}"

    def describe(self, pool: str | None = None) -> str:
        how = f"reads {self.via}, which sums allocatable" if self.via else "sums allocatable"
        more = f", {self.drop_if_moved} more after {pool} moves" if pool and self.drop_if_moved else ""
        fires = "; it may fire when a pool moves" if self.via and self.rule.startswith("alert:") else ""
        return f"{self.namespace}/{self.name} {self.rule}: {how}; misses {self.undercount} GPUs today{more}{fires}"

    def to_json(self) -> dict:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "group": self.group,
            "rule": self.rule,
            "expr": self.expr,
            "via": self.via,
            "missesGpusNow": self.undercount,
            "missesMoreAfterMove": self.drop_if_moved,
            "replacementSource": self.replacement,
        }


def reads_gpu_allocatable(expr: str) -> bool:
    """Whether a PromQL expression reads kube-state-metrics' node allocatable/capacity for nvidia.com/gpu."""
    return bool(_ALLOC_METRIC.search(expr or "")) and bool(_GPU_RESOURCE.search(expr or ""))


def rule_readers(rules: Iterable[dict] | None, missed_now: int = 0, drop_if_moved: int = 0) -> list[RuleReader]:
    """The rules (of monitoring.coreos.com/v1 PrometheusRule objects) that read nvidia.com/gpu allocatable, directly
    or through a recording rule that does (an alert on such a series fires when a pool moves)."""
    found: list[tuple[str, str, str, dict]] = []
    for obj in rules or ():
        ns, name = key_of(obj)
        for g in (obj.get("spec") or {}).get("groups") or ():
            for r in g.get("rules") or ():
                found.append((ns, name, g.get("name", ""), r))
    out: list[RuleReader] = []
    records: set[str] = set()
    rest = []
    for ns, name, group, r in found:
        expr = str(r.get("expr") or "")
        if reads_gpu_allocatable(expr):
            out.append(RuleReader(ns, name, group, _rule_label(r), expr, missed_now, drop_if_moved))
            if r.get("record"):
                records.add(r["record"])
        else:
            rest.append((ns, name, group, r))
    changed = True
    while changed and records:
        changed = False
        for item in list(rest):
            ns, name, group, r = item
            expr = str(r.get("expr") or "")
            via = next(
                (rec for rec in sorted(records) if re.search(rf"(?<![\w:]){re.escape(rec)}(?![\w:])", expr)), None
            )
            if via:
                out.append(RuleReader(ns, name, group, _rule_label(r), expr, missed_now, drop_if_moved, via))
                rest.remove(item)
                if r.get("record"):
                    records.add(r["record"])
                changed = True
    return out


def _rule_label(r: dict) -> str:
    return f"alert: {r['alert']}" if r.get("alert") else f"record: {r.get('record', '?')}"


def rules_in(objects: Iterable[dict]) -> list[dict]:
    """The PrometheusRule objects among others (a snapshot file, a scenario)."""
    return [
        o
        for o in objects
        if o.get("kind") == "PrometheusRule" and str(o.get("apiVersion", "")).startswith("monitoring.coreos.com/")
    ]


async def read_cluster_rules(kubeconfig: str | None, context: str | None) -> tuple[list[dict] | None, str]:
    """Connect, read PrometheusRules, close: for one-shot commands whose fleet read has already closed its
    connection."""
    from dragoman.fleet.cluster import connect

    cluster = await connect(kubeconfig, context)
    try:
        return await read_prometheus_rules(cluster)
    finally:
        await cluster.close()


async def read_prometheus_rules(cluster: Any) -> tuple[list[dict] | None, str]:
    """PrometheusRules from the cluster: (rules, "") when the monitoring API is served; (None, why) otherwise."""
    from dragoman.fleet.cluster import ApiError

    try:
        items, _ = await cluster.list_all(MONITORING_PATH)
    except ApiError as exc:
        if exc.status == 404:
            return None, "the monitoring API (monitoring.coreos.com/v1) is not served"
        if exc.status == 403:
            return None, "not allowed to list prometheusrules (403 Forbidden)"
        raise
    return items, ""


# ---- the whole picture -----------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Accounting:
    """Per pool and fleet-wide GPU accounting, quotas around one pool's move, and rules reading allocatable."""

    pools: list[PoolAccount]
    totals: dict[str, int]
    pool: str | None  # the pool whose move the quota figures describe
    quotas: list[QuotaLine]
    rules: list[RuleReader] | None  # None: the monitoring API was not read or is not served
    rules_note: str

    def to_json(self) -> dict:
        return {
            "pools": [a.to_json() for a in self.pools],
            "fleet": dict(self.totals),
            "movingPool": self.pool,
            "quotas": [q.to_json() for q in self.quotas],
            "prometheusRules": [r.to_json() for r in self.rules] if self.rules is not None else None,
            "prometheusRulesNote": self.rules_note or None,
            "replacementSource": DEVICE_SOURCE,
        }


def default_moving_pool(accounts: list[PoolAccount]) -> str | None:
    """The pool a question about "the next move" most likely means: the planned pool with the most allocatable GPUs."""
    planned = [a for a in accounts if a.state in ("planned", "partly migrated") and a.allocatable]
    if not planned:
        return None
    return sorted(planned, key=lambda a: (-a.allocatable, a.pool))[0].pool


def account(
    model: FleetModel, pool: str | None = None, rules: Iterable[dict] | None = None, rules_note: str = ""
) -> Accounting:
    """The accounting of the fleet; quota figures for `pool`'s move (default: the planned pool with most
    allocatable)."""
    accounts = pool_accounts(model)
    totals = fleet_totals(accounts)
    if pool is None:
        pool = default_moving_pool(accounts)
    drop = next((a.drop_if_moved for a in accounts if a.pool == pool), 0)
    readers = rule_readers(rules, totals["missedByAllocatableNow"], drop) if rules is not None else None
    return Accounting(accounts, totals, pool, quota_lines(model, pool), readers, rules_note)


def text_lines(acc: Accounting, width: int = 80) -> list[str]:
    """The accounting as `dragoman check` prints it."""
    import textwrap

    rows = [("POOL", "STATE", "ALLOC", "SLICES", "ALLOCATED", "MISSED", "DROP")]
    for a in acc.pools:
        rows.append(
            (
                printable(a.pool, NAME_SHOWN),
                a.state,
                str(a.allocatable),
                str(a.slice_gpus),
                str(a.allocated),
                str(a.missed_now),
                str(a.drop_if_moved),
            )
        )
    t = acc.totals
    rows.append(
        (
            "fleet",
            "",
            str(t["allocatableGpus"]),
            str(t["sliceGpus"]),
            str(t["allocatedDevices"]),
            str(t["missedByAllocatableNow"]),
            str(t["allocatableDropIfMoved"]),
        )
    )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(c.ljust(widths[i]) if i < 2 else c.rjust(widths[i]) for i, c in enumerate(r)).rstrip() for r in rows
    ]

    def wrap(s: str, ind: str = "  ") -> list[str]:
        return textwrap.wrap(
            shown_words(s), width, initial_indent=ind, subsequent_indent=ind + "  ", break_on_hyphens=False
        )

    lines += wrap(
        "ALLOC: node allocatable nvidia.com/gpu; SLICES: whole GPUs in ResourceSlices; ALLOCATED: devices in "
        "claims; MISSED: GPUs sums of allocatable miss today; DROP: allocatable lost when the pool moves.",
        "",
    )
    lines += wrap(
        f"Sums of node allocatable nvidia.com/gpu miss {t['missedByAllocatableNow']} GPUs today. Count instead "
        f"{DEVICE_SOURCE}.",
        "",
    )
    if acc.quotas:
        lines.append("")
        head = (
            f"Quotas counting GPUs or claims (after pool {printable(acc.pool, NAME_SHOWN)} moves)"
            if acc.pool
            else "Quotas counting GPUs or claims"
        )
        lines.append(head)
        for q in acc.quotas:
            flag = "  WOULD BLOCK" if q.blocks_after and not q.blocks_now else ("  FULL" if q.blocks_now else "")
            flag += "  CHANGES MEANING" if q.changes_meaning else ""
            lines += wrap(
                f"{q.namespace}/{q.quota} {q.resource}: hard {q.hard_text}, counts {q.counted_now} now, "
                f"{q.after} after{flag}",
                "  ",
            )
            lines += wrap(q.meaning, "      ")
    lines.append("")
    if acc.rules is None:
        lines += wrap(
            "PrometheusRules: not read "
            f"({acc.rules_note or 'the :accounting view reads them when the monitoring API is served'}).",
            "",
        )
    elif not acc.rules:
        lines.append("PrometheusRules: none reads nvidia.com/gpu allocatable.")
    else:
        lines.append("PrometheusRules reading nvidia.com/gpu allocatable")
        for r in acc.rules:
            lines += wrap(r.describe(acc.pool), "  ")
        lines += wrap(f"replace with: {acc.rules[0].replacement}", "  ")
    return lines
