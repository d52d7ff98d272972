"""What every diagnosis rule shares: the catalogue's constants and the per-run context (indexes built once per
diagnosis, not once per rule)."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from dragoman.fleet import ownership as own
from dragoman.fleet import placement
from dragoman.fleet.findings import ObjectRef
from dragoman.fleet.model import (
    GFD_PRODUCT,
    FleetModel,
    event_count,
    pod_extended_requests,
    pod_terminal,
)
from dragoman.fleet.ownership import GPU
from dragoman.fleet.selectors import SelectorResult

STALE_ATTRIBUTES = ("index", "minor", "pcieBusID")
SMALL_POOL_NODES = 4
TYPE_GPU = re.compile(r"""type['"]?\]?\s*==\s*['"]gpu['"]|['"]gpu['"]\s*==\s*device\.attributes""")
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
    renewed = own.parse_time(spec.get("renewTime") or spec.get("acquireTime"))
    if now is None or renewed is None:
        return True
    return renewed + float(spec.get("leaseDurationSeconds") or 0) >= now


def steered_product(spec: dict) -> str | None:
    """The GPU model a pod picks through a nodeSelector or required node affinity on the GFD product label."""
    sel = spec.get("nodeSelector") or {}
    if GFD_PRODUCT in sel:
        return sel[GFD_PRODUCT]
    for term in placement.required_affinity_terms(spec) or ():
        for e in term.get("matchExpressions") or ():
            if e.get("key") == GFD_PRODUCT and e.get("operator") == "In":
                return ",".join(e.get("values") or ())
    return None


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
        self._label_index: dict[str, dict[str, set[str]]] = {}
        self._pods_sorted: list[tuple[tuple[str, str], dict]] | None = None
        # Memos keyed by the identity of the parts a live store's projections share between pods (fleet/projection.py:
        # a template's containers, its nodeSelector and affinity): the envelope's 150,000 pods have a few hundred
        # distinct ones. An entry holds the parts it was computed from, so no id is reused while this context lives,
        # and a hit is checked against them. Never kept past one diagnosis: the model changes between runs.
        self._extended: dict[tuple[int, int], tuple[Any, Any, dict[str, int]]] = {}
        self._steered: dict[tuple[int, int], tuple[Any, Any, str | None]] = {}
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

    def pods_sorted(self) -> list[tuple[tuple[str, str], dict]]:
        """Every pod by key, in key order (the order findings are made in), sorted once per diagnosis."""
        if self._pods_sorted is None:
            self._pods_sorted = sorted(self.m.objects["Pod"].items())
        return self._pods_sorted

    def extended(self, pod: dict) -> dict[str, int]:
        """pod_extended_requests(pod), computed once per distinct containers/initContainers pair. Read only: the
        dict is shared by every pod of that template."""
        spec = pod.get("spec") or {}
        containers, inits = spec.get("containers"), spec.get("initContainers")
        key = (id(containers), id(inits))
        hit = self._extended.get(key)
        if hit is not None and hit[0] is containers and hit[1] is inits:
            return hit[2]
        reqs = pod_extended_requests(pod)
        self._extended[key] = (containers, inits, reqs)
        return reqs

    def steered(self, spec: dict) -> str | None:
        """steered_product(spec), computed once per distinct nodeSelector/affinity pair."""
        selector, affinity = spec.get("nodeSelector"), spec.get("affinity")
        key = (id(selector), id(affinity))
        hit = self._steered.get(key)
        if hit is not None and hit[0] is selector and hit[1] is affinity:
            return hit[2]
        product = steered_product(spec)
        self._steered[key] = (selector, affinity, product)
        return product

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
        res = self.m.request_matches(body)
        free: dict[str, int] = defaultdict(int)
        for d in res.matched:
            n = self.m._pool_node.get(d[:2])
            if n is not None and self.m.device_claim(d) is None:
                free[n] += 1
        return free, res
