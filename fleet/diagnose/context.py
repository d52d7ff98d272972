"""What every diagnosis rule shares: the catalogue's constants and the per-run context (indexes built once per
diagnosis, not once per rule)."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any

from dragoman.fleet import k8s
from dragoman.fleet.findings import ObjectRef
from dragoman.fleet.k8s import times
from dragoman.fleet.model import (
    GFD_PRODUCT,
    FleetModel,
    event_count,
    pod_extended_requests,
    pod_terminal,
)
from dragoman.fleet.ownership import GPU
from dragoman.fleet.projection import Projection
from dragoman.fleet.selectors import SelectorResult

SMALL_POOL_NODES = 4
CLAIM_QUOTA = "count/resourceclaims.resource.k8s.io"


def node_ref(name: str) -> ObjectRef:
    return ("Node", "", name)


def pod_ref(key: tuple[str, str]) -> ObjectRef:
    return ("Pod", key[0], key[1])


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _lease_held(lease: dict, now: float | None) -> bool:
    spec = lease.get("spec") or {}
    if not spec.get("holderIdentity"):
        return False
    renewed = times.parse_time(spec.get("renewTime") or spec.get("acquireTime"))
    if now is None or renewed is None:
        return True
    return renewed + float(spec.get("leaseDurationSeconds") or 0) >= now


def steered_product(spec: dict) -> str | None:
    """The GPU model a pod picks through a nodeSelector or required node affinity on the GFD product label."""
    sel = spec.get("nodeSelector") or {}
    if GFD_PRODUCT in sel:
        return sel[GFD_PRODUCT]
    for term in (k8s.required_node_affinity(spec) or {}).get("nodeSelectorTerms") or ():
        for e in term.get("matchExpressions") or ():
            if e.get("key") == GFD_PRODUCT and e.get("operator") == "In":
                return ",".join(e.get("values") or ())
    return None


_EMPTY: dict = {}


def _first(item: tuple) -> Any:
    return item[0]


def _memo(table: dict[tuple[int, int], tuple[Any, Any, Any]], a: Any, b: Any, compute: Any, arg: Any) -> Any:
    """compute(arg), remembered in `table` by the identity of the two shared parts it reads (`a`, `b`). An entry holds
    its parts, so their ids are not reused while the table lives, and a hit is checked against them."""
    key = (id(a), id(b))
    hit = table.get(key)
    if hit is not None and hit[0] is a and hit[1] is b:
        return hit[2]
    value = compute(arg)
    table[key] = (a, b, value)
    return value


@dataclasses.dataclass(frozen=True, slots=True)
class PodGroups:
    """What the pod-reading rules look at (Context.pod_groups), each list in key order."""

    # Pods pods.pod_findings may say something about: all but those Succeeded, and those Running bound to a node that
    # got their extended resources through the bridge (extendedResourceClaimStatus) or asked for none.
    examined: list[tuple[tuple[str, str], dict]]
    # Pods neither Succeeded nor Failed that pick a GPU model (the product their nodeSelector or affinity names) or hold
    # claims: what selectors.pod_shapes reads.
    shaped: list[tuple[tuple[str, str], dict, str | None]]
    # The GPU models those pods pick (nodes.migration_optional's question).
    steered_products: set[str]


class Context:
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
        self.allocator_cache: dict = {}  # fleet/diagnose/devices.py: the allocator over this fleet, its answers
        self._label_index: dict[str, dict[str, set[str]]] = {}
        self._pod_groups: PodGroups | None = None
        # Memos keyed by the identity of the parts a live store's projections share between pods (fleet/projection.py:
        # a template's containers, its nodeSelector and affinity): the envelope's 150,000 pods have a few hundred
        # distinct ones. An entry holds the parts it was computed from, so no id is reused while this context lives,
        # and a hit is checked against them. Never kept past one diagnosis: the model changes between runs.
        self._extended: dict[tuple[int, int], tuple[Any, Any, dict[str, int]]] = {}
        self._steered: dict[tuple[int, int], tuple[Any, Any, str | None]] = {}
        self._by_node: dict[int, tuple[SelectorResult, dict[str, list], bool]] = {}
        self.pool_migrating = {
            p: any(v.migration is not None and v.migration.in_progress for v in model.pool_nodes(p)) for p in self.pools
        }
        # A held operator lock means an operator is migrating the pool right now (the ConfigMap outlives the migration).
        for (_ns, name), lease in model.objects["Lease"].items():
            pool = name[len("dragoman-pool-") :] if name.startswith("dragoman-pool-") else None
            if pool in self.pools and _lease_held(lease, model.now):
                self.pool_migrating[pool] = True

    def matched_by_node(self, res: SelectorResult) -> tuple[dict[str, list], bool]:
        """A selector result's matched devices by the node their pool publishes for, each node's in matched order, and
        whether any is network-attached (its pool names no node); once per result (the model caches results)."""
        hit = self._by_node.get(id(res))
        if hit is not None and hit[0] is res:
            return hit[1], hit[2]
        pool_node = self.m.slice_pool_node
        by_node: dict[str, list] = defaultdict(list)
        attached = False
        for d in res.matched:
            node = pool_node(d[:2])
            if node is None:
                attached = True
            else:
                by_node[node].append(d)
        self._by_node[id(res)] = (res, by_node, attached)
        return by_node, attached

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

    def pod_groups(self) -> PodGroups:
        """The pods the pod-reading rules look at, found in one pass over the store's notable pods (~25,000 of 150,000
        at the envelope: the rest are CPU pods running or done that no such rule has anything to say about), each group
        in key order (the order findings are made in)."""
        if self._pod_groups is None:
            self._pod_groups = self._group_pods()
        return self._pod_groups

    def _group_pods(self) -> PodGroups:
        examined: list[tuple[tuple[str, str], dict]] = []
        shaped: list[tuple[tuple[str, str], dict, str | None]] = []
        # The memos of `extended` and `steered`, asked directly: a call less for each of 150,000 pods.
        ext, steer = self._extended, self._steered
        nodes = self.nodes

        capable: dict[str, bool] = {}

        def bridge_capable(name: str) -> bool:
            c = capable.get(name)
            if c is None:
                v = nodes.get(name)
                # An unknown version is given the benefit.
                c = capable[name] = v is None or v.kubelet is None or v.bridge_capable
            return c

        # Only the pods the store files as notable (fleet/store.py pod_notable): every other one is Succeeded or a
        # projection running on its node that neither branch below would keep.
        objs = self.m.objects["Pod"]
        get = objs.get
        for key in self.m.notable_pods():
            pod = get(key)
            if pod is None:
                continue
            status = pod.get("status") or _EMPTY
            phase = status.get("phase")
            if phase == "Succeeded":
                continue  # terminal: no rule reads it
            spec = pod.get("spec") or _EMPTY
            ercs = status.get("extendedResourceClaimStatus")
            node_name = spec.get("nodeName")
            if (
                phase != "Running"
                or not node_name
                # Placed through the bridge on a kubelet without it: it runs without the GPU (running-without-gpu).
                or ercs
                and not bridge_capable(node_name)
            ):
                examined.append((key, pod))
            # A projection asks for no extended resource (fleet/projection.py keeps such a pod whole), and most of the
            # envelope's pods are projections: their requests need not be looked up.
            elif not ercs and pod.__class__ is not Projection:
                reqs = _memo(ext, spec.get("containers"), spec.get("initContainers"), pod_extended_requests, pod)
                if reqs:
                    examined.append((key, pod))
            if phase == "Failed":
                continue  # terminal for the steering and shape rules
            selector, affinity = spec.get("nodeSelector"), spec.get("affinity")
            if not affinity:
                # What steered_product reads of a pod without affinity: its nodeSelector's GFD product label.
                product = selector[GFD_PRODUCT] if selector and GFD_PRODUCT in selector else None
            else:
                product = _memo(steer, selector, affinity, steered_product, spec)
            if product is not None or spec.get("resourceClaims"):
                shaped.append((key, pod, product))
        examined.sort(key=_first)
        shaped.sort(key=_first)
        return PodGroups(examined, shaped, {p for _, _, p in shaped if p is not None})

    def extended(self, pod: dict) -> dict[str, int]:
        """pod_extended_requests(pod), computed once per distinct containers/initContainers pair. Read only: the
        dict is shared by every pod of that template."""
        spec = pod.get("spec") or _EMPTY
        return _memo(self._extended, spec.get("containers"), spec.get("initContainers"), pod_extended_requests, pod)

    def steered(self, spec: dict) -> str | None:
        """steered_product(spec), computed once per distinct nodeSelector/affinity pair."""
        return _memo(self._steered, spec.get("nodeSelector"), spec.get("affinity"), steered_product, spec)

    def events(self, kind: str, ns: str, name: str, limit: int = 2) -> list[str]:
        out = []
        for e in self.m.events_for(kind, ns, name)[-limit:]:
            count = event_count(e)
            times = f" (x{count})" if count > 1 else ""
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
                for k, v in self.extended(pod).items():
                    used[k] += v
            self._dp_used[node] = used
        return used

    def class_free(self, cls: str) -> dict[str, int]:
        free = self._class_free.get(cls)
        if free is None:
            free = self._class_free[cls] = self.m.class_nodes(cls)
        return free

    def request_free(self, body: dict) -> tuple[dict[str, int], SelectorResult]:
        """Per node, how many devices a request body's selectors keep that the allocator could give it now (its
        tolerations and capacity asks read), network-attached ones on every node they reach."""
        res = self.m.request_matches(body)
        caps = (body.get("capacity") or {}).get("requests") if isinstance(body.get("capacity"), dict) else None
        return self.m.free_by_node(res.matched, body.get("tolerations") or None, caps or None), res
