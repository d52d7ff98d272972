"""The simulated kube-scheduler's decisions as pure logic over raw dicts: filters, DRA allocation, the KEP-5004 bridge,
messages."""

from __future__ import annotations

import bisect
import copy
import dataclasses
import datetime
import itertools
import json
import random
import time
from collections.abc import Iterable

from dragoman.fleet.k8s import (
    DEVICECLASS_PREFIX,
    UNSCHEDULABLE_TAINT,
    affinity_node_names,
    compile_node_filter,
    first_untolerated_taint,
    key_of,
    tolerations_tolerate,
)
from dragoman.fleet.k8s.allocator import (
    FILTER_TIMEOUT_SECONDS,
    FINALIZER,
    AllocatedState,
    AllocationError,
    AllocationTimeout,
    Allocator,
    Device,
    Inventory,
    SelectorCache,
    binding_readiness,
    bridge_requests,
)
from dragoman.fleet.k8s.extended import is_dra_extended_resource_name
from dragoman.fleet.k8s.podclaims import claim_name
from dragoman.fleet.k8s.podresources import pod_requests
from dragoman.fleet.k8s.quantity import amount as resource_amount
from dragoman.fleet.k8s.times import format_time, parse_time
from dragoman.sim.controllers import bridge as bridge_mod

SCHEDULER_NAME = "default-scheduler"
U = "Unschedulable"
UU = "UnschedulableAndUnresolvable"
DEFAULT_MILLI_CPU = 100  # schedutil.DefaultMilliCPURequest, used for scoring only
DEFAULT_MEMORY = 200 * 1024 * 1024
MAX_RESERVED_FOR = 256

# Quantities, resource names and what a pod requests are the kernel's (fleet/k8s/quantity.py, extended.py,
# podresources.py): the client's diagnosis counts with the same rules.
DRA_PREFIX = DEVICECLASS_PREFIX


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _epoch_seconds(now) -> float | None:
    if isinstance(now, datetime.datetime):
        return now.timestamp()
    return parse_time(now) if isinstance(now, str) else None


def _ts(now) -> str:
    if isinstance(now, str):
        return now
    if isinstance(now, (int, float)):
        now = datetime.datetime.fromtimestamp(now, datetime.UTC)
    if now is None:
        now = datetime.datetime.now(datetime.UTC)
    return format_time(now)


# --- the cluster as the scheduler caches it ---


class NodeInfo:
    """One node: its allocatable, what bound pods request, and the fields static filters read."""

    __slots__ = (
        "name",
        "node",
        "labels",
        "taints",
        "unschedulable",
        "allocatable",
        "requested",
        "pods",
        "static_sig",
        "index",
    )

    def __init__(self, node: dict) -> None:
        self.requested: dict[str, int] = {}
        self.pods: dict[str, int] = {}  # uid -> priority
        self.index = 0
        self.update(node)

    def update(self, node: dict) -> None:
        self.node = node
        m = _meta(node)
        self.name = m.get("name", "")
        self.labels = m.get("labels") or {}
        spec = node.get("spec") or {}
        self.taints = spec.get("taints") or []
        self.unschedulable = bool(spec.get("unschedulable"))
        alloc = (node.get("status") or {}).get("allocatable") or {}
        self.allocatable = {k: resource_amount(k, v) for k, v in alloc.items()}
        self.static_sig = json.dumps([self.labels, self.taints, self.unschedulable], sort_keys=True)

    @property
    def kubelet_version(self) -> str:
        return ((self.node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")


class ClusterView:
    """Indexes over raw objects that make one scheduling decision cheap; update it with `upsert`/`remove` or
    `apply_decision`."""

    def __init__(
        self,
        nodes: Iterable[dict] = (),
        pods: Iterable[dict] = (),
        resourceslices: Iterable[dict] = (),
        deviceclasses: Iterable[dict] = (),
        resourceclaims: Iterable[dict] = (),
        resourceclaimtemplates: Iterable[dict] = (),
        resourcequotas: Iterable[dict] = (),
        namespaces: Iterable[dict] = (),
        devicetaintrules: Iterable[dict] = (),
        *,
        cel_compile=None,
        percentage_of_nodes_to_score: int = 0,
        rng: random.Random | None = None,
        filter_timeout: float = FILTER_TIMEOUT_SECONDS,
    ) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self.node_order: list[NodeInfo] = []
        self.pods: dict[tuple, dict] = {}
        self._bound: dict[str, tuple[str, dict[str, int]]] = {}  # uid -> (node, requests)
        self.classes: dict[str, dict] = {}
        self.ext_cache = bridge_mod.ExtendedResourceCache()
        self.claims: dict[tuple, dict] = {}
        self.bridge_claims: dict[str, tuple] = {}  # pod uid -> claim key
        # What allocated claims hold and the slices' devices, as fleet/k8s/allocator.py (the one allocator) reads them.
        self.alloc_state = AllocatedState()
        self.inventory = Inventory()
        self.taint_rules: dict[str, dict] = {}
        self.templates: dict[tuple, dict] = {}
        self.quotas: dict[tuple, dict] = {}
        self.namespaces: dict[str, dict] = {}
        self.selector_cache = SelectorCache(cel_compile)
        # KubeSchedulerConfiguration.percentageOfNodesToScore: 0 (the default) is the adaptive percentage.
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        # DynamicResourcesArgs.filterTimeout: each node's Allocate in Filter gets this long (wall clock, as the real
        # scheduler's context deadline; 0 turns it off). The allocator here is slower than Go's, so a search near the
        # limit times out here first.
        self.filter_timeout = filter_timeout
        self.rng = rng or random.Random()
        self.static_epoch = 0
        self._static: dict[str, tuple] = {}
        # kube-scheduler's nextStartNodeIndex: where the next attempt starts looking, so that every node gets its
        # turn across pods.
        self.next_start_node_index = 0
        # A node's DynamicResources Filter answer for the same claims is the same until what it reads changes: the
        # slices and DeviceTaintRules (the inventory's epoch), the classes (`dra_epoch`, which also moves when a claim
        # of a device no single node owns is allocated or released) and the allocations of the node's own pools
        # (`node_dra_epoch`). Answers are kept per (node, claims) with those stamps: the allocator then runs only
        # where something changed (kube-scheduler runs it on every node of every attempt; the answer is the same).
        self.dra_epoch = 0
        self.node_dra_epoch: dict[str, int] = {}
        self.filter_answers: dict[tuple, tuple] = {}
        for n in nodes:
            self.upsert_node(n)
        for c in deviceclasses:
            self.upsert_class(c, _rebuild=False)
        self._rebuild_ext_map()
        for s in resourceslices:
            self.upsert_slice(s)
        for r in devicetaintrules:
            self.taint_rules[_meta(r).get("name", "")] = r
        if self.taint_rules:
            self.inventory.set_taint_rules(self.taint_rules.values())
        for c in resourceclaims:
            self.upsert_claim(c)
        for t in resourceclaimtemplates:
            self.templates[key_of(t)] = t
        for q in resourcequotas:
            self.quotas[key_of(q)] = q
        for ns in namespaces:
            self.namespaces[_meta(ns).get("name", "")] = ns
        for p in pods:
            self.upsert_pod(p)

    # -- generic dispatch --
    def upsert(self, kind: str, obj: dict) -> None:
        {
            "Node": self.upsert_node,
            "Pod": self.upsert_pod,
            "ResourceSlice": self.upsert_slice,
            "DeviceClass": self.upsert_class,
            "ResourceClaim": self.upsert_claim,
            "ResourceClaimTemplate": self.upsert_template,
            "ResourceQuota": self.upsert_quota,
            "Namespace": self.upsert_namespace,
            "DeviceTaintRule": self.upsert_taint_rule,
        }[kind](obj)

    def remove(self, kind: str, obj: dict) -> None:
        m = _meta(obj)
        if kind == "Node":
            self.remove_node(m.get("name", ""))
        elif kind == "Pod":
            self.remove_pod(m.get("namespace", ""), m.get("name", ""))
        elif kind == "ResourceSlice":
            self.remove_slice(m.get("name", ""))
        elif kind == "DeviceClass":
            self.remove_class(m.get("name", ""))
        elif kind == "ResourceClaim":
            self.remove_claim(m.get("namespace", ""), m.get("name", ""))
        elif kind == "ResourceClaimTemplate":
            self.templates.pop(key_of(obj), None)
        elif kind == "ResourceQuota":
            self.quotas.pop(key_of(obj), None)
        elif kind == "Namespace":
            self.namespaces.pop(m.get("name", ""), None)
        elif kind == "DeviceTaintRule":
            if self.taint_rules.pop(m.get("name", ""), None) is not None:
                self.inventory.set_taint_rules(self.taint_rules.values())

    # -- nodes --
    def upsert_node(self, node: dict) -> None:
        name = _meta(node).get("name", "")
        info = self.nodes.get(name)
        if info is None:
            info = NodeInfo(node)
            info.index = len(self.node_order)
            self.nodes[name] = info
            self.node_order.append(info)
            self.static_epoch += 1
            for uid, (n, reqs) in self._bound.items():
                if n == name:
                    self._account(info, uid, reqs, 1, 0)
        else:
            old = info.static_sig
            info.update(node)
            if info.static_sig != old:
                self.static_epoch += 1
                self.node_dra_epoch[name] = self.node_dra_epoch.get(name, 0) + 1

    def remove_node(self, name: str) -> None:
        info = self.nodes.pop(name, None)
        if info is None:
            return
        self.node_order.remove(info)
        for i, n in enumerate(self.node_order):
            n.index = i
        self.static_epoch += 1

    # -- pods --
    def _account(self, info: NodeInfo, uid: str, reqs: dict[str, int], sign: int, priority: int) -> None:
        for k, v in reqs.items():
            info.requested[k] = info.requested.get(k, 0) + sign * v
        if sign > 0:
            info.pods[uid] = priority
        else:
            info.pods.pop(uid, None)

    def upsert_pod(self, pod: dict) -> None:
        key = key_of(pod)
        self.pods[key] = pod
        uid = _meta(pod).get("uid") or f"{key[0]}/{key[1]}"
        node = (pod.get("spec") or {}).get("nodeName")
        phase = (pod.get("status") or {}).get("phase")
        counts = bool(node) and phase not in ("Succeeded", "Failed")
        prev = self._bound.get(uid)
        if prev is not None and (not counts or prev[0] != node):
            info = self.nodes.get(prev[0])
            if info is not None:
                self._account(info, uid, prev[1], -1, 0)
            del self._bound[uid]
            prev = None
        if counts and prev is None:
            reqs = pod_requests(pod)
            self._bound[uid] = (node, reqs)
            info = self.nodes.get(node)
            if info is not None:
                self._account(info, uid, reqs, 1, int((pod.get("spec") or {}).get("priority") or 0))

    def remove_pod(self, namespace: str, name: str) -> None:
        pod = self.pods.pop((namespace, name), None)
        if pod is None:
            return
        uid = _meta(pod).get("uid") or f"{namespace}/{name}"
        prev = self._bound.pop(uid, None)
        if prev is not None:
            info = self.nodes.get(prev[0])
            if info is not None:
                self._account(info, uid, prev[1], -1, 0)

    # -- device classes and the extended-resource mapping --
    # The mapping follows the events as kube-scheduler's cache does (bridge.ExtendedResourceCache): a deletion is not
    # undone by the classes that remain.
    def upsert_class(self, cls: dict, _rebuild: bool = True) -> None:
        name = _meta(cls).get("name", "")
        old = self.classes.get(name)
        self.classes[name] = cls
        self.dra_epoch += 1
        if _rebuild:
            self.ext_cache.update(cls, old)

    def remove_class(self, name: str) -> None:
        old = self.classes.pop(name, None)
        self.dra_epoch += 1
        if old is not None:
            self.ext_cache.delete(old)

    def _rebuild_ext_map(self) -> None:
        self.ext_cache = bridge_mod.ExtendedResourceCache(self.classes.values())

    @property
    def ext_map(self) -> dict[str, dict]:
        return self.ext_cache.map

    def class_for(self, resource: str) -> dict | None:
        return self.ext_cache.get(resource)

    # -- claims --
    def upsert_claim(self, claim: dict) -> None:
        key = key_of(claim)
        old = self.claims.get(key)
        if old is not None:
            self.alloc_state.remove_claim(old)
        self.claims[key] = claim
        self.alloc_state.add_claim(claim)
        before = ((old or {}).get("status") or {}).get("allocation")
        after = (claim.get("status") or {}).get("allocation")
        if before != after:
            self._allocation_moved(before)
            self._allocation_moved(after)
        owner_uid = bridge_mod.bridge_owner_uid(claim)
        if owner_uid:
            self.bridge_claims[owner_uid] = key

    def remove_claim(self, namespace: str, name: str) -> None:
        claim = self.claims.pop((namespace, name), None)
        if claim is None:
            return
        self.alloc_state.remove_claim(claim)
        self._allocation_moved((claim.get("status") or {}).get("allocation"))
        owner_uid = bridge_mod.bridge_owner_uid(claim)
        if owner_uid and self.bridge_claims.get(owner_uid) == (namespace, name):
            del self.bridge_claims[owner_uid]

    def _allocation_moved(self, allocation: dict | None) -> None:
        """An allocation came or went: the Filter answers of the nodes that can reach its devices are stale (the
        node owning each device's pool, or every node for a pool no single node owns)."""
        for r in ((allocation or {}).get("devices") or {}).get("results") or ():
            members = self.inventory.by_pool.get((str(r.get("driver", "")), str(r.get("pool", ""))))
            owners = {s.node_name for s in (members or {}).values()}
            if len(owners) == 1 and None not in owners and "" not in owners:
                (owner,) = owners
                self.node_dra_epoch[owner] = self.node_dra_epoch.get(owner, 0) + 1
            else:
                self.dra_epoch += 1

    def filter_answer(self, node: str, claims_key: tuple) -> tuple | None:
        hit = self.filter_answers.get((node, claims_key))
        if hit is not None and hit[0] == self._filter_stamp(node):
            return hit[1]
        return None

    def keep_filter_answer(self, node: str, claims_key: tuple, answer: tuple) -> None:
        if len(self.filter_answers) > 65536:
            self.filter_answers.clear()
        self.filter_answers[(node, claims_key)] = (self._filter_stamp(node), answer)

    def _filter_stamp(self, node: str) -> tuple[int, int, int]:
        return (self.inventory.epoch, self.dra_epoch, self.node_dra_epoch.get(node, 0))

    # -- slices, devices and DeviceTaintRules --
    def upsert_slice(self, slc: dict) -> None:
        self.inventory.upsert_slice(slc)

    def remove_slice(self, name: str) -> None:
        self.inventory.remove_slice(name)

    def upsert_taint_rule(self, rule: dict) -> None:
        self.taint_rules[_meta(rule).get("name", "")] = rule
        self.inventory.set_taint_rules(self.taint_rules.values())

    def device(self, key: tuple) -> Device | None:
        """The device (driver, pool, name) of its pool's newest generation."""
        return self.inventory.device(key)

    def allocator(self) -> Allocator:
        """One scheduling cycle's allocator over the current slices, claims and classes."""
        return Allocator(self.inventory, self.alloc_state, self.classes, cache=self.selector_cache)

    # -- others --
    def upsert_template(self, t: dict) -> None:
        self.templates[key_of(t)] = t

    def upsert_quota(self, q: dict) -> None:
        self.quotas[key_of(q)] = q

    def upsert_namespace(self, ns: dict) -> None:
        self.namespaces[_meta(ns).get("name", "")] = ns

    def feasible_to_find(self, num_all_nodes: int) -> int:
        """How many feasible nodes an attempt looks for among `num_all_nodes` before it stops filtering."""
        return num_feasible_nodes_to_find(self.percentage_of_nodes_to_score, None, num_all_nodes)


# kube-scheduler's schedule_one.go: an attempt stops filtering once it has found this many feasible nodes (at least
# minFeasibleNodesToFind, at least minFeasibleNodesPercentageToFind of the nodes); scoring then ranks only those.
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(global_percentage: int, profile_percentage: int | None, num_all_nodes: int) -> int:
    """v1.37.2's numFeasibleNodesToFind: every node under 100; else the profile's percentageOfNodesToScore, else the
    global one, else (0) the adaptive 50 - nodes/125 percent, at least 5 %; never fewer than 100 nodes."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    percentage = profile_percentage if profile_percentage is not None else global_percentage
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            percentage = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num_nodes = num_all_nodes * percentage // 100
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return MIN_FEASIBLE_NODES_TO_FIND
    return num_nodes


# --- the decision ---


@dataclasses.dataclass
class Decision:
    """What one scheduling attempt decided and what must be written for it."""

    namespace: str
    pod_name: str
    outcome: str  # "scheduled" | "unschedulable" | "error" | "waiting" | "skip"
    node: str | None = None
    message: str = ""
    condition: dict | None = None
    event: dict | None = None
    pod_status_patch: dict | None = None
    claims_to_create: list[dict] = dataclasses.field(default_factory=list)
    claim_updates: list[dict] = dataclasses.field(default_factory=list)
    claims_to_delete: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    node_reasons: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    pod_uid: str = ""

    @property
    def is_error(self) -> bool:
        return self.outcome == "error"

    @property
    def scheduled(self) -> bool:
        return self.outcome == "scheduled"

    def binding(self) -> dict | None:
        """The pods/binding body the scheduler POSTs."""
        if not self.node:
            return None
        return {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": self.pod_name, "namespace": self.namespace, "uid": self.pod_uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": self.node},
        }


class _Status:
    __slots__ = ("code", "reasons", "plugin")

    def __init__(self, code: str, reasons: list[str], plugin: str) -> None:
        self.code, self.reasons, self.plugin = code, reasons, plugin


class _CycleError(Exception):
    pass


def _failed_condition(reason: str, message: str, now) -> dict:
    return {
        "type": "PodScheduled",
        "status": "False",
        "lastProbeTime": None,
        "lastTransitionTime": _ts(now),
        "reason": reason,
        "message": message,
    }


NOTE_LENGTH_LIMIT = 1024  # validation.NoteLengthLimit: an Event's note/message


def truncate_note(message: str) -> str:
    """truncateMessage (pkg/scheduler/schedule_one.go): the event's note cut to the limit, ending " ..."; the pod
    condition keeps the whole message."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    return message[: NOTE_LENGTH_LIMIT - 4] + " ..."


def _event(kind: str, reason: str, message: str, now) -> dict:
    """The Event an attempt records, in events.k8s.io/v1's terms (kube-scheduler writes through that API)."""
    note = truncate_note(message)
    return {
        "type": kind,
        "reason": reason,
        "action": "Scheduling" if reason == "FailedScheduling" else "Binding",
        "note": note,
        "message": note,
        "reportingController": SCHEDULER_NAME,
        "eventTime": _ts(now),
    }


def _reserved_for_pod(claim: dict, uid: str) -> bool:
    return any(
        r.get("uid") == uid and r.get("resource") == "pods"
        for r in (claim.get("status") or {}).get("reservedFor") or []
    )


def _static_filters(view: ClusterView, spec: dict) -> tuple[list[int], dict[str, _Status]]:
    """NodeUnschedulable, TaintToleration and NodeAffinity over every node, cached per pod shape until nodes change:
    the positions (in `view.node_order`) of the nodes they pass, ascending, and the verdicts of the others."""
    tolerations = spec.get("tolerations") or []
    sig = json.dumps(
        [
            spec.get("nodeSelector"),
            ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            ),
            tolerations,
        ],
        sort_keys=True,
    )
    hit = view._static.get(sig)
    if hit is not None and hit[0] == view.static_epoch:
        return hit[1], hit[2]
    tolerates_cordon = tolerations_tolerate(tolerations, UNSCHEDULABLE_TAINT)
    node_filter = compile_node_filter(spec)
    eligible: list[int] = []
    failed: dict[str, _Status] = {}
    for info in view.node_order:
        if info.unschedulable and not tolerates_cordon:
            failed[info.name] = _Status(UU, ["node(s) were unschedulable"], "NodeUnschedulable")
        elif first_untolerated_taint(info.taints, tolerations) is not None:
            failed[info.name] = _Status(UU, ["node(s) had untolerated taint(s)"], "TaintToleration")
        elif not node_filter(info.node):
            failed[info.name] = _Status(UU, ["node(s) didn't match Pod's node affinity/selector"], "NodeAffinity")
        else:
            eligible.append(info.index)
    if len(view._static) > 512:
        view._static.clear()
    view._static[sig] = (view.static_epoch, eligible, failed)
    return eligible, failed


class _DraState:
    """What DynamicResources' PreFilter found: the pod's claims, the bridge claim and the per-node allocations."""

    def __init__(self) -> None:
        self.user_claims: list[dict] = []
        self.pod_claim_names: list[str] = []
        self.bridge_claim: dict | None = None  # existing (stale) claim or None
        self.bridge_needed = False  # some requested extended resource is served by a class
        self.ext_resources: dict[str, int] = {}
        self.unavailable: set[int] = set()
        self.allocator: Allocator | None = None
        self.now: float | None = None  # the attempt's time (epoch seconds), for binding timeouts
        self.ext_served: dict[str, bool] = {}  # per extended resource: whether a DeviceClass serves it
        self.bridge_requests: dict[tuple, tuple] = {}

    @property
    def has_claims(self) -> bool:
        return bool(self.user_claims) or self.bridge_needed


def schedule_one(pod: dict, view: ClusterView, now=None) -> Decision:
    """One kube-scheduler attempt for `pod` against `view`, with the real plugins' order, statuses and messages."""
    meta = _meta(pod)
    spec = pod.get("spec") or {}
    ns, name, uid = meta.get("namespace", ""), meta.get("name", ""), meta.get("uid", "")
    dec = Decision(ns, name, "skip", pod_uid=uid)
    if spec.get("nodeName") or meta.get("deletionTimestamp"):
        return dec
    if (spec.get("schedulerName") or SCHEDULER_NAME) != SCHEDULER_NAME:
        return dec
    if spec.get("schedulingGates"):
        dec.outcome, dec.message = "waiting", "scheduling gated"
        return dec

    # PreEnqueue (DynamicResources): every claim must exist before the pod is even tried; no event is recorded.
    dra = _DraState()
    dra.now = _epoch_seconds(now)
    for pc in spec.get("resourceClaims") or []:
        cname, check_owner, err = claim_name(pod, pc)
        if err:
            dec.outcome, dec.message = "waiting", err
            return dec
        if cname is None:
            continue
        claim = view.claims.get((ns, cname))
        if claim is None:
            dec.outcome, dec.message = "waiting", f'resourceclaim.resource.k8s.io "{cname}" not found'
            return dec
        if _meta(claim).get("deletionTimestamp"):
            dec.outcome, dec.message = "waiting", f'resourceclaim "{cname}" is being deleted'
            return dec
        if check_owner and not any(
            o.get("uid") == uid and o.get("controller") for o in _meta(claim).get("ownerReferences") or []
        ):
            dec.outcome, dec.message = (
                "waiting",
                f"ResourceClaim {ns}/{cname} was not created for pod {ns}/{name} (pod is not owner)",
            )
            return dec
        dra.user_claims.append(claim)
        dra.pod_claim_names.append(pc.get("name", ""))

    nodes_total = len(view.node_order)
    if nodes_total == 0:
        dec.outcome = "error"
        dec.message = "no nodes available to schedule pods"
        dec.condition = _failed_condition("SchedulerError", dec.message, now)
        dec.event = _event("Warning", "FailedScheduling", dec.message, now)
        dec.pod_status_patch = {"conditions": [dec.condition]}
        return dec

    requests = pod_requests(pod)
    pre_msg = None
    pinned = affinity_node_names(spec)
    if pinned is not None and not pinned:
        pre_msg = "pod affinity terms conflict"

    # PreFilter (DynamicResources), only reached when NodeAffinity's PreFilter passed.
    dra_prefilter_ok = False
    if pre_msg is None:
        pre_msg = _dra_prefilter(pod, view, dra, requests)
        dra_prefilter_ok = pre_msg is None

    statuses: dict[str, _Status] = {}
    # The static filters' verdicts (a few thousand nodes of other pools) are cached per pod shape and read only when
    # no node fits: copied into `statuses` for every pod, they were a twentieth of a scheduling attempt.
    static_failed: dict[str, _Status] = {}
    feasible: list[tuple[NodeInfo, object]] = []
    if pre_msg is None:
        eligible, static_failed = _static_filters(view, spec)
        nodes = view.node_order
        if pinned is not None:
            # NodeAffinity's PreFilter result: only the named nodes are filtered, the rest are absent.
            absent = _Status(UU, ["node(s) didn't satisfy plugin(s) [NodeAffinity]"], "NodeAffinity")
            for info in view.node_order:
                if info.name not in pinned:
                    statuses[info.name] = absent
            nodes = [i for i in view.node_order if i.name in pinned]
            eligible = [k for k, i in enumerate(nodes) if i.name not in static_failed]
        # findNodesThatPassFilters: from nextStartNodeIndex round the nodes until numFeasibleNodesToFind pass. A node
        # the static filters refuse is processed like any other (its verdict cached per pod shape), so only the
        # eligible ones are visited and the processed count is the stretch of the round walked.
        n = len(nodes)
        want = view.feasible_to_find(n)
        start = view.next_start_node_index % n if n else 0
        cut = bisect.bisect_left(eligible, start)
        processed = n
        pos = start
        try:
            for pos in itertools.chain(eligible[cut:], eligible[:cut]):
                info = nodes[pos]
                st, extra = _dynamic_filters(pod, view, info, requests, dra)
                if st is None:
                    feasible.append((info, extra))
                    if len(feasible) >= want:
                        processed = (pos - start) % n + 1
                        break
                else:
                    statuses[info.name] = st
        except _CycleError as exc:
            processed = (pos - start) % n
            msg = f'running "DynamicResources" filter plugin: {exc}'
            dec.outcome, dec.message = "error", msg
            dec.condition = _failed_condition("SchedulerError", msg, now)
            dec.event = _event("Warning", "FailedScheduling", msg, now)
            dec.pod_status_patch = {"conditions": [dec.condition]}
            return dec
        finally:
            # Moved on whether or not an error ended the search, so every node gets its turn.
            view.next_start_node_index = (view.next_start_node_index + processed) % max(len(view.node_order), 1)

    if feasible:
        return _bind(pod, view, dra, feasible, requests, dec, now)

    # FitError, then PostFilter: DynamicResources first, DefaultPreemption second.
    dec.outcome = "unschedulable"
    if pre_msg is not None:
        head = f"0/{nodes_total} nodes are available: {pre_msg}."
        all_status = {i.name: _Status(UU, [pre_msg], "PreFilter") for i in view.node_order}
    else:
        all_status = {**static_failed, **statuses}
        head = f"0/{nodes_total} nodes are available: {_histogram(all_status.values())}."
    post = []
    # DynamicResources' PostFilter answers Unschedulable without a reason when it has nothing to deallocate (v1.37.2
    # dynamicresources.go: "No new claims to deallocate" is a log line, not a status), so it adds no words then.
    if dra_prefilter_ok and dra.has_claims:
        post.append(_dra_postfilter(pod, view, dra, dec))
    post = [p for p in post if p]
    post.append("preemption: " + _preemption_message(pod, view, all_status, nodes_total))
    msg = f"{head} {', '.join(post)}"
    dec.message = msg
    dec.node_reasons = {k: list(v.reasons) for k, v in all_status.items()}
    dec.condition = _failed_condition("Unschedulable", msg, now)
    dec.event = _event("Warning", "FailedScheduling", msg, now)
    dec.pod_status_patch = {"conditions": [dec.condition]}
    return dec


def _histogram(statuses: Iterable[_Status]) -> str:
    counts: dict[str, int] = {}
    for st in statuses:
        for r in st.reasons:
            counts[r] = counts.get(r, 0) + 1
    return ", ".join(sorted(f"{v} {k}" for k, v in counts.items()))


def _preemption_message(pod: dict, view: ClusterView, statuses: dict[str, _Status], nodes_total: int) -> str:
    spec = pod.get("spec") or {}
    if spec.get("preemptionPolicy") == "Never":
        return "not eligible due to preemptionPolicy=Never."
    counts: dict[str, int] = {}
    for st in statuses.values():
        if st.code == UU:
            r = "Preemption is not helpful for scheduling"
        else:
            # Victims would be lower-priority pods; the simulator does not preempt, so it reports none found.
            r = "No preemption victims found for incoming pod"
        counts[r] = counts.get(r, 0) + 1
    body = ", ".join(sorted(f"{v} {k}" for k, v in counts.items()))
    return f"0/{nodes_total} nodes are available: {body}." if body else f"0/{nodes_total} nodes are available:"


def _dra_prefilter(pod: dict, view: ClusterView, dra: _DraState, requests: dict[str, int]) -> str | None:
    uid = _meta(pod).get("uid", "")
    for claim in dra.user_claims:
        status = claim.get("status") or {}
        if (
            status.get("allocation")
            and len(status.get("reservedFor") or []) >= MAX_RESERVED_FOR
            and not _reserved_for_pod(claim, uid)
        ):
            return "resourceclaim in use"
        if not status.get("allocation"):
            for req in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
                if req.get("exactly") is not None:
                    pairs = [(req.get("name"), req["exactly"].get("deviceClassName"))]
                elif req.get("firstAvailable"):
                    pairs = [
                        (f"{req.get('name')}/{s.get('name')}", s.get("deviceClassName")) for s in req["firstAvailable"]
                    ]
                else:
                    m = _meta(claim)
                    return (
                        f"resource claim {m.get('namespace')}/{m.get('name')}, request {req.get('name')}: "
                        "unknown request type"
                    )
                for rname, cname in pairs:
                    if cname not in view.classes:
                        return f"request {rname}: device class {cname} does not exist"
    # The bridge: any non-zero extended resource that some DeviceClass serves.
    for rname, amount in requests.items():
        if amount and is_dra_extended_resource_name(rname):
            dra.ext_resources[rname] = amount
            if view.class_for(rname) is not None:
                dra.bridge_needed = True
    if dra.bridge_needed:
        key = view.bridge_claims.get(uid)
        if key is not None:
            dra.bridge_claim = view.claims.get(key)
    return None


def _dynamic_filters(
    pod: dict, view: ClusterView, info: NodeInfo, requests: dict[str, int], dra: _DraState
) -> tuple[_Status | None, object]:
    """NodeResourcesFit, then DynamicResources, for one node that passed the static filters."""
    alloc = info.allocatable
    used = info.requested
    reasons = []
    unresolvable = False
    allowed = alloc.get("pods", 0)
    if len(info.pods) + 1 > allowed:
        reasons.append("Too many pods")
        unresolvable = unresolvable or 1 > allowed
    for rname, amount in requests.items():
        if not amount or rname == "pods":
            continue
        have = alloc.get(rname, 0)
        if rname not in ("cpu", "memory", "ephemeral-storage"):
            # shouldDelegateResourceToDRA: no allocatable here and a class serves the name.
            if have <= 0 and view.ext_map.get(rname) is not None:
                continue
        if amount > have - used.get(rname, 0):
            reasons.append(f"Insufficient {rname}")
            unresolvable = unresolvable or amount > have
    if reasons:
        return _Status(UU if unresolvable else U, reasons, "NodeResourcesFit"), None
    if not dra.has_claims:
        return None, None
    return _dra_filter(pod, view, info, dra)


def _dra_filter(pod: dict, view: ClusterView, info: NodeInfo, dra: _DraState) -> tuple[_Status | None, object]:
    node_ext: dict[str, int] = {}
    if dra.bridge_needed:
        if (
            dra.bridge_claim is not None
            and ((dra.bridge_claim.get("spec") or {}).get("devices") or {}).get("requests") is not None
        ):
            return _Status(UU, ["cannot schedule extended resource claim"], "DynamicResources"), None
        for rname, amount in dra.ext_resources.items():
            have = info.allocatable.get(rname)
            served = dra.ext_served.get(rname)
            if served is None:
                served = dra.ext_served[rname] = view.class_for(rname) is not None
            if served and not have:
                node_ext[rname] = amount
            elif have is None:
                return _Status(UU, ["cannot fit resource"], "DynamicResources"), None
    if not dra.user_claims and not node_ext:
        return None, None
    unavailable = []
    to_allocate: list[dict] = []
    for i, claim in enumerate(dra.user_claims):
        alloc = (claim.get("status") or {}).get("allocation")
        if alloc:
            sel = alloc.get("nodeSelector")
            if sel is not None:
                from dragoman.fleet.k8s import match_node_selector

                if not match_node_selector(sel, info.node):
                    unavailable.append(i)
                    continue
            # Allocated for binding conditions that failed or timed out: PostFilter deallocates it so other devices
            # can be tried (v1.37.2 Filter, isClaimReadyForBinding / isClaimTimeout).
            if binding_readiness(claim, dra.now)[0] in ("failed", "timeout"):
                unavailable.append(i)
            continue
        to_allocate.append(claim)
    node_claim = None
    mappings: list[dict] = []
    bridge_key = None
    if node_ext:
        key = tuple(sorted(node_ext.items())) if len(node_ext) > 1 else tuple(node_ext.items())
        cached = dra.bridge_requests.get(key)
        if cached is None:
            reqs, maps = bridge_requests(pod, node_ext, view.class_for)
            # One claim per attempt and shape of extended resources, the same object on every node (read only).
            claim_body = {
                "metadata": {"namespace": _meta(pod).get("namespace", ""), "name": "<extended-resources>"},
                "spec": {"devices": {"requests": reqs}},
            }
            cached = dra.bridge_requests[key] = (claim_body, maps, json.dumps([_meta(pod).get("namespace"), reqs]))
        node_claim, mappings, bridge_key = cached
        to_allocate.append(node_claim)
    allocations: list[dict] | None = []
    if to_allocate:
        # What the allocator is asked: the pod's own claims (a claim's spec never changes) and the bridge's requests.
        claims_key = (
            tuple((_meta(c).get("namespace"), _meta(c).get("name"), _meta(c).get("uid")) for c in to_allocate)
            if dra.user_claims
            else (),
            bridge_key,
        )
        known = view.filter_answer(info.name, claims_key)
        if known is not None:
            allocations, node_error = known
        else:
            if dra.allocator is None:
                dra.allocator = view.allocator()
            deadline = time.monotonic() + view.filter_timeout if view.filter_timeout > 0 else None
            try:
                outcome = dra.allocator.allocate(info.node, to_allocate, deadline)
            except AllocationError as exc:
                raise _CycleError(str(exc)) from exc
            except AllocationTimeout as exc:
                # An Error status, not Unschedulable: the attempt ends and the pod is retried with backoff.
                raise _CycleError(f"node {info.name}: timed out trying to allocate devices") from exc
            allocations, node_error = outcome.allocations, outcome.node_error
            # A shared device's result carries a share ID made for this allocation: never handed out twice.
            if not any(
                "shareID" in r for a in allocations or () for r in ((a.get("devices") or {}).get("results") or ())
            ):
                view.keep_filter_answer(info.name, claims_key, (allocations, node_error))
        if allocations is None:
            # ErrFailedAllocationOnNode (invalid pools) reads as its own words; otherwise the plugin's.
            return _Status(UU, [node_error or "cannot allocate all claims"], "DynamicResources"), None
    if unavailable:
        dra.unavailable.update(unavailable)
        return _Status(UU, ["resourceclaim not available on the node"], "DynamicResources"), None
    return None, (to_allocate, allocations, node_claim, mappings)


def _dra_postfilter(pod: dict, view: ClusterView, dra: _DraState, dec: Decision) -> str:
    uid = _meta(pod).get("uid", "")
    for i in sorted(dra.unavailable):
        claim = dra.user_claims[i]
        reserved = (claim.get("status") or {}).get("reservedFor") or []
        if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == uid):
            new = copy.deepcopy(claim)
            st = new.setdefault("status", {})
            st.pop("reservedFor", None)
            st.pop("allocation", None)
            st.pop("devices", None)
            dec.claim_updates.append(new)
            return "deallocation of ResourceClaim completed"
    if dra.bridge_claim is not None:
        dec.claims_to_delete.append(key_of(dra.bridge_claim))
        return "deletion of ResourceClaim completed"
    return ""  # fwk.NewStatus(fwk.Unschedulable): no reason


def _score(info: NodeInfo, requests: dict[str, int]) -> float:
    """NodeResourcesFit's LeastAllocated on cpu and memory, with the scheduler's non-zero defaults."""
    total = 0.0
    for rname, default in (("cpu", DEFAULT_MILLI_CPU), ("memory", DEFAULT_MEMORY)):
        cap = info.allocatable.get(rname, 0)
        if cap <= 0:
            continue
        want = requests.get(rname) or default
        used = info.requested.get(rname, 0) + want
        total += max(cap - used, 0) / cap
    return total


def _bind(
    pod: dict, view: ClusterView, dra: _DraState, feasible: list, requests: dict[str, int], dec: Decision, now
) -> Decision:
    best_info, best_extra = feasible[0]
    if len(feasible) > 1:
        best_score = _score(best_info, requests)
        for info, extra in feasible[1:]:
            s = _score(info, requests)
            if s > best_score:
                best_info, best_extra, best_score = info, extra, s
    meta = _meta(pod)
    ns, name, uid = meta.get("namespace", ""), meta.get("name", ""), meta.get("uid", "")
    dec.outcome = "scheduled"
    dec.node = best_info.name
    dec.message = f"Successfully assigned {ns}/{name} to {best_info.name}"
    dec.condition = {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": _ts(now)}
    dec.event = _event("Normal", "Scheduled", dec.message, now)
    status_patch: dict = {"conditions": [dec.condition]}
    reserved_entry = {"resource": "pods", "name": name, "uid": uid}
    allocated_now: dict[int, dict] = {}
    node_claim = None
    mappings: list[dict] = []
    if best_extra is not None:
        to_allocate, allocations, node_claim, mappings = best_extra
        for claim, allocation in zip(to_allocate, allocations or []):
            # v1.37's scheduler stamps when it allocated (AllocationResult.allocationTimestamp), on every claim.
            # A copy: the same answer may be kept for the node's next attempt (ClusterView.filter_answers).
            allocated_now[id(claim)] = {**copy.deepcopy(allocation), "allocationTimestamp": _ts(now)}
    for claim in dra.user_claims:
        allocation = allocated_now.get(id(claim))
        if allocation is None and _reserved_for_pod(claim, uid) and FINALIZER in (_meta(claim).get("finalizers") or []):
            continue
        new = copy.deepcopy(claim)
        m = new.setdefault("metadata", {})
        fins = m.setdefault("finalizers", [])
        if FINALIZER not in fins:
            fins.append(FINALIZER)
        st = new.setdefault("status", {})
        if allocation is not None:
            st["allocation"] = allocation
        rf = st.setdefault("reservedFor", [])
        if not any(r.get("uid") == uid for r in rf):
            rf.append(dict(reserved_entry))
        dec.claim_updates.append(new)
    if node_claim is not None:
        allocation = allocated_now[id(node_claim)]
        claim = bridge_mod.bridge_claim(pod, node_claim["spec"]["devices"]["requests"], allocation, view.rng)
        dec.claims_to_create.append(claim)
        status_patch["extendedResourceClaimStatus"] = {
            "requestMappings": mappings,
            "resourceClaimName": _meta(claim)["name"],
        }
    dec.pod_status_patch = status_patch
    return dec


def apply_decision(view: ClusterView, decision: Decision) -> None:
    """Update the view as if the decision's writes had landed: claims created/updated/deleted, pod bound."""
    for key in decision.claims_to_delete:
        view.remove_claim(*key)
    for claim in decision.claim_updates:
        view.upsert_claim(claim)
    for claim in decision.claims_to_create:
        view.upsert_claim(claim)
    if decision.outcome != "scheduled":
        if decision.pod_status_patch:
            pod = view.pods.get((decision.namespace, decision.pod_name))
            if pod is not None:
                new = dict(pod)
                new["status"] = _merge_status(pod.get("status") or {}, decision.pod_status_patch)
                view.pods[(decision.namespace, decision.pod_name)] = new
        return
    pod = view.pods.get((decision.namespace, decision.pod_name))
    if pod is None:
        return
    new = dict(pod)
    new["spec"] = dict(pod.get("spec") or {})
    new["spec"]["nodeName"] = decision.node
    new["status"] = _merge_status(pod.get("status") or {}, decision.pod_status_patch or {})
    view.upsert_pod(new)


def _merge_status(status: dict, patch: dict) -> dict:
    out = dict(status)
    for k, v in patch.items():
        if k == "conditions":
            conds = [c for c in out.get("conditions") or [] if c.get("type") not in {x.get("type") for x in v}]
            out["conditions"] = conds + list(v)
        else:
            out[k] = v
    return out


def claim_from_template(pod: dict, pod_claim: dict, template: dict, rng: random.Random | None = None) -> dict:
    """The ResourceClaim the resourceclaim controller creates for a pod's template reference (name generated as the
    apiserver does)."""
    meta = _meta(pod)
    pod_name, claim_name = meta.get("name", ""), pod_claim.get("name", "")
    generate = f"{pod_name}-{claim_name}-"
    max_base = 57
    if len(generate) > max_base:
        # Upstream truncates both parts proportionally so the pod claim name survives a long pod name.
        generate = (
            pod_name[: len(pod_name) * max_base // len(generate)]
            + "-"
            + claim_name[: len(claim_name) * max_base // len(generate)]
        )
    tspec = template.get("spec") or {}
    annotations = dict((tspec.get("metadata") or {}).get("annotations") or {})
    annotations["resource.kubernetes.io/pod-claim-name"] = claim_name
    claim_meta = {
        "name": bridge_mod.generate_name(generate, rng),
        "generateName": generate,
        "namespace": meta.get("namespace", ""),
        "annotations": annotations,
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod_name,
                "uid": meta.get("uid", ""),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    labels = (tspec.get("metadata") or {}).get("labels")
    if labels:
        claim_meta["labels"] = dict(labels)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": claim_meta,
        "spec": copy.deepcopy(tspec.get("spec") or {}),
    }


def pod_claim_status_patch(pod: dict, pod_claim: dict, claim: dict) -> dict:
    """The pod status change that links a template reference to its generated claim."""
    statuses = [
        s
        for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
        if s.get("name") != pod_claim.get("name")
    ]
    statuses.append({"name": pod_claim.get("name"), "resourceClaimName": _meta(claim).get("name")})
    return {"resourceClaimStatuses": statuses}
