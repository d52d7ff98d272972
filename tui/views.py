"""The views as data: columns, which rows a batch of changes touches, and each row rendered from the model (no Textual here)."""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from dragoman.fleet.findings import Finding
from dragoman.fleet.model import FleetModel, is_bridge_claim, key_of, pod_extended_requests, pod_terminal
from dragoman.widgets import rows as R

Ref = tuple[str, str, str]  # (kind, namespace, name)


class Fleet:
    """What every view reads: the model, the latest diagnosis indexed by object and pool, and the attribute catalogue."""

    def __init__(self, model: FleetModel) -> None:
        self.model = model
        self.findings: list[Finding] = []
        self.by_object: dict[Ref, list[Finding]] = defaultdict(list)
        self.by_pool: dict[str, list[Finding]] = defaultdict(list)
        self.catalogue: dict[str, dict[str, dict]] = {}
        self.diagnosed = False

    def set_findings(self, findings: list[Finding]) -> None:
        self.findings = findings
        self.by_object = defaultdict(list)
        self.by_pool = defaultdict(list)
        for f in findings:
            for ref in f.objects[:1]:
                self.by_object[tuple(ref)].append(f)
            if f.pool:
                self.by_pool[f.pool].append(f)
        self.diagnosed = True

    def node_pool(self, node: str | None) -> str | None:
        if not node:
            return None
        v = self.model.node(node)
        return v.pool if v is not None else None


class Touched:
    """What a batch of changes touched, as keys each view understands; `everything` when a change may move any row."""

    def __init__(self) -> None:
        self.nodes: set[str] = set()
        self.pools: set[str] = set()
        self.device_pools: set[tuple[str, str]] = set()
        self.devices: set[tuple[str, str, str]] = set()
        self.claims: set[tuple[str, str]] = set()
        self.pods: set[tuple[str, str]] = set()
        self.slices = False
        self.everything = False


def _pod_node(pod: dict | None) -> str | None:
    return ((pod or {}).get("spec") or {}).get("nodeName") if pod else None


def _pod_claim_names(pod: dict | None) -> list[str]:
    status = (pod or {}).get("status") or {}
    names = [
        s.get("resourceClaimName") for s in status.get("resourceClaimStatuses") or () if s.get("resourceClaimName")
    ]
    ext = status.get("extendedResourceClaimStatus") or {}
    if ext.get("resourceClaimName"):
        names.append(ext["resourceClaimName"])
    return names


def _pod_sig(pod: dict) -> tuple:
    """What of a pod the node, pool and claim rows can show."""
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    return (
        status.get("phase"),
        spec.get("nodeName"),
        (pod.get("metadata") or {}).get("deletionTimestamp"),
        repr(status.get("extendedResourceClaimStatus")),
        repr(status.get("resourceClaimStatuses")),
        repr(status.get("containerStatuses")),
    )


def touched_by(fleet: Fleet, changes: Sequence[Any], before: dict | None = None) -> Touched:
    """Which rows a batch of changes can alter (call after the model absorbed the batch).

    `before` maps (kind, key) to the pool a node or claim sat in before the batch, for moves between pools.
    """
    m = fleet.model
    t = Touched()
    for ch in changes:
        kind, new, old = ch.kind, ch.obj, ch.old
        if ch.type == "DELETED":
            new, old = None, old or ch.obj
        if kind == "Node":
            t.nodes.add(key_of(ch.obj)[1])
            if old:  # a relabelled node leaves its old pool's row too
                t.pools.add(m._pool_of_labels((old.get("metadata") or {}).get("labels") or {}))
        elif kind == "Pod":
            t.pods.add(key_of(ch.obj))
            if (
                old is not None
                and new is not None
                and key_of(ch.obj) not in m._stack_pods
                and _pod_sig(old) == _pod_sig(new)
            ):
                continue  # a heartbeat, an annotation: nothing a node, pool or claim row shows
            for p in (old, new):
                n = _pod_node(p)
                if n:
                    t.nodes.add(n)
                ns = key_of(ch.obj)[0]
                for c in _pod_claim_names(p):
                    t.claims.add((ns, c))
        elif kind == "ResourceSlice":
            t.slices = True
            for s in (old, new):
                if not s:
                    continue
                spec = s.get("spec") or {}
                dp = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""))
                t.device_pools.add(dp)
                n = spec.get("nodeName") or m._pool_node.get(dp)
                if n:
                    t.nodes.add(n)
        elif kind == "ResourceClaim":
            t.claims.add(key_of(ch.obj))
            for c in (old, new):
                if not c:
                    continue
                for d in m.claim_devices(c):
                    t.devices.add(d)
                    n = m._pool_node.get(d[:2])
                    if n:
                        t.nodes.add(n)
                for r in (c.get("status") or {}).get("reservedFor") or ():
                    if r.get("resource") == "pods" and r.get("name"):
                        t.pods.add((key_of(c)[0], r["name"]))
        elif kind in ("DaemonSet", "DeviceClass"):
            # Ownership of every node (a DaemonSet's role) or what serves nvidia.com/gpu may change: rare, and whole.
            t.everything = True
    for n in t.nodes:
        p = fleet.node_pool(n)
        if p:
            t.pools.add(p)
    if before:
        t.pools.update(v for v in before.values() if v)
    return t


class View:
    """One table view. Subclasses name their columns and turn model objects into rows."""

    name = ""
    title = ""
    columns: Sequence[tuple] = ()
    empty = "nothing to show"
    uses_findings = False
    uses_catalogue = False
    trim_middle: tuple[str, ...] = ("node", "pod", "claim", "object")
    essential: tuple[str, ...] = ()

    def __init__(self, scope: tuple[str, str] | None = None) -> None:
        # ("pool", name) or ("node", name): a drilled-down view shows only that part of the fleet.
        self.scope = scope

    @property
    def heading(self) -> str:
        return self.title + (f" of {self.scope[0]} {self.scope[1]}" if self.scope else "")

    def sort_key(self, key: Hashable, row: tuple) -> Any:
        return key

    def all_rows(self, fleet: Fleet) -> Iterable[tuple[Hashable, tuple, dict]]:
        raise NotImplementedError

    def row(self, fleet: Fleet, key: Hashable) -> tuple[tuple, dict] | None:
        raise NotImplementedError

    def affected(self, fleet: Fleet, t: Touched) -> Iterable[Hashable] | None:
        """Keys to recompute for these touches; None means recompute every row (rare changes only)."""
        return None

    def ref(self, fleet: Fleet, key: Hashable) -> Ref | None:
        """The API object behind a row, for `y` and `d`."""
        return None

    def drill(self, fleet: Fleet, key: Hashable) -> tuple[str, tuple[str, str] | None] | None:
        """Where `enter` goes: (view name, scope), or None to open the describe page."""
        return None


class PoolsView(View):
    name, title = "pools", "Pools"
    columns = R.POOL_COLUMNS
    essential = ("pool", "ownership", "nodes", "plugin", "dra", "findings")
    uses_findings = True
    empty = "no nodes in this cluster"

    def sort_key(self, key, row):
        return key

    def _row(self, fleet: Fleet, name: str):
        p = fleet.model.pool(name)
        if p is None:
            return None
        return R.pool_row(p, fleet.by_pool.get(name, ())), {"pool": name, "ownership": p.ownership}

    def all_rows(self, fleet):
        for name in fleet.model.pool_names():
            r = self._row(fleet, name)
            if r:
                yield name, r[0], r[1]

    def row(self, fleet, key):
        return self._row(fleet, key)

    def affected(self, fleet, t):
        return None if t.everything else t.pools

    def ref(self, fleet, key):
        return ("Pool", "", key)

    def drill(self, fleet, key):
        return ("nodes", ("pool", key))


class NodesView(View):
    name, title = "nodes", "Nodes"
    columns = R.NODE_COLUMNS
    essential = ("node", "ownership", "sched", "plugin", "driver", "findings")
    uses_findings = True
    empty = "no nodes here"

    def _keys(self, fleet: Fleet) -> Iterable[str]:
        if self.scope and self.scope[0] == "pool":
            return sorted(fleet.model._pools[self.scope[1]].members) if self.scope[1] in fleet.model._pools else []
        return fleet.model.node_names()

    def row(self, fleet, key):
        v = fleet.model.node(key)
        if v is None or (self.scope and self.scope[0] == "pool" and v.pool != self.scope[1]):
            return None
        return R.node_row(v, fleet.by_object.get(("Node", "", key), ())), R.node_facets(v)

    def all_rows(self, fleet):
        for n in self._keys(fleet):
            r = self.row(fleet, n)
            if r:
                yield n, r[0], r[1]

    def affected(self, fleet, t):
        return None if t.everything else t.nodes

    def ref(self, fleet, key):
        return ("Node", "", key)

    def drill(self, fleet, key):
        return ("devices", ("node", key))


class DevicesView(View):
    name, title = "devices", "Devices"
    columns = R.DEVICE_COLUMNS
    essential = ("node", "device", "product", "claim")
    empty = "no ResourceSlice publishes devices here"

    def _device_pools(self, fleet: Fleet) -> list[tuple[str, str]]:
        m = fleet.model
        if self.scope and self.scope[0] == "node":
            return sorted(m._slice_pools_by_node.get(self.scope[1], ()))
        return sorted(m._slices_by_pool)

    def _pool_rows(self, fleet: Fleet, dp: tuple[str, str]):
        m = fleet.model
        node_default = m._pool_node.get(dp)
        for s in m.pool_slices(*dp)[0]:
            spec = s.get("spec") or {}
            node = spec.get("nodeName") or node_default
            npool = fleet.node_pool(node)
            if self.scope and self.scope[0] == "pool" and npool != self.scope[1]:
                continue
            from dragoman.fleet.model import DeviceView

            for d in spec.get("devices") or ():
                dv = DeviceView(dp[0], dp[1], d.get("name", ""), node, key_of(s)[1], d)
                yield dv.id, R.device_row(dv, npool, m.device_claim(dv.id)), R.device_facets(dv, npool)

    def sort_key(self, key, row):
        # driver → node pool → node → device, as the tree reads.
        return (row[0], row[1], row[2], key[2])

    def all_rows(self, fleet):
        for dp in self._device_pools(fleet):
            yield from self._pool_rows(fleet, dp)

    def rows_of_pools(self, fleet: Fleet, pools: Iterable[tuple[str, str]]):
        for dp in pools:
            yield from self._pool_rows(fleet, dp)

    def row(self, fleet, key):
        for k, cells, facets in self._pool_rows(fleet, key[:2]):
            if k == key:
                return cells, facets
        return None

    def affected(self, fleet, t):
        return None if t.everything else t.devices

    def ref(self, fleet, key):
        return ("Device", key[0] + "/" + key[1], key[2])


class AttributesView(View):
    name, title = "attributes", "Attribute distribution"
    columns = R.ATTRIBUTE_COLUMNS
    essential = ("attribute", "type", "devices", "pools")
    uses_catalogue = True
    empty = "no device publishes attributes"

    def all_rows(self, fleet):
        m = fleet.model
        for driver, attrs in fleet.catalogue.items():
            for qn, entry in attrs.items():
                # The catalogue names DRA pools (one per node for NVIDIA's driver); an operator thinks in node pools.
                node_pools = sorted(
                    {fleet.node_pool(m._pool_node.get((driver, p))) or p for p in entry.get("pools") or ()}
                )
                yield (
                    qn,
                    R.attribute_row(qn, entry, node_pools),
                    {"driver": driver, "attribute": qn, "kind": entry.get("kind", ""), "pools": ",".join(node_pools)},
                )

    def row(self, fleet, key):
        for k, cells, facets in self.all_rows(fleet):
            if k == key:
                return cells, facets
        return None

    def affected(self, fleet, t):
        return ()  # rows change only when the catalogue is recomputed (after slices change)

    def ref(self, fleet, key):
        for driver, attrs in fleet.catalogue.items():
            if key in attrs:
                return ("Attribute", driver, key)
        return None

    def drill(self, fleet, key):
        return ("devices", None)


class ClaimsView(View):
    name, title = "claims", "Claims"
    columns = R.CLAIM_COLUMNS
    essential = ("state", "claim", "source", "pod", "devices", "node")
    empty = "no ResourceClaims"

    def sort_key(self, key, row):
        state = row[0].text.split(" ", 1)[1]
        return (R.CLAIM_RANK.get(state, 9), key)

    def row(self, fleet, key):
        m = fleet.model
        c = m.claim(*key)
        if c is None:
            return None
        pods = m.claim_pods(c)
        phase = None
        for pk in pods:
            pod = m.objects["Pod"].get(pk)
            if pod is not None:
                phase = (pod.get("status") or {}).get("phase")
        state = R.claim_state(c, phase)
        node = m.claim_node(c)
        cells = R.claim_row(c, state, is_bridge_claim(c), pods, m.claim_devices(c), node)
        return cells, {
            "namespace": key[0],
            "state": state,
            "node": node or "",
            "pool": fleet.node_pool(node) or "",
            "bridge": "true" if is_bridge_claim(c) else "false",
        }

    def all_rows(self, fleet):
        for key in list(fleet.model.objects["ResourceClaim"]):
            r = self.row(fleet, key)
            if r:
                yield key, r[0], r[1]

    def affected(self, fleet, t):
        return None if t.everything else t.claims

    def ref(self, fleet, key):
        return ("ResourceClaim", key[0], key[1])


def is_gpu_pod(pod: dict) -> bool:
    return bool(pod_extended_requests(pod)) or bool((pod.get("spec") or {}).get("resourceClaims"))


POD_FINDINGS = {
    "pending-insufficient",
    "pending-unmapped",
    "pending-selector",
    "pending-cordoned",
    "failed-admission",
    "prepare-failed",
    "running-without-gpu",
    "double-request",
    "quota-blocks-claim",
    "nodeselector-steering",
}


class StuckView(View):
    name, title = "pending", "Stuck pods"
    columns = R.STUCK_COLUMNS
    essential = ("pod", "finding", "why")
    uses_findings = True
    empty = "no stuck GPU pod"

    def sort_key(self, key, row):
        return (0 if row[1].tone == "error" else 1 if row[1].tone == "warning" else 2, key)

    def _findings(self, fleet: Fleet, key) -> list[Finding]:
        return [
            f
            for f in fleet.by_object.get(("Pod", key[0], key[1]), ())
            if f.id in POD_FINDINGS and f.id != "nodeselector-steering"
        ]

    def row(self, fleet, key):
        pod = fleet.model.objects["Pod"].get(key)
        if pod is None:
            return None
        found = self._findings(fleet, key)
        phase = (pod.get("status") or {}).get("phase")
        stuck = found or (
            is_gpu_pod(pod)
            and phase in ("Pending", "Failed", None)
            and not (pod.get("metadata") or {}).get("deletionTimestamp")
        )
        if not stuck:
            return None
        pool = fleet.node_pool(_pod_node(pod)) or (found[0].pool if found else None)
        return R.stuck_row(pod, found), {
            "namespace": key[0],
            "pool": pool or "",
            "id": ",".join(f.id for f in found),
            "phase": phase or "",
        }

    def all_rows(self, fleet):
        keys = {
            k
            for k, pod in fleet.model.objects["Pod"].items()
            if (pod.get("status") or {}).get("phase") in ("Pending", "Failed", None) and is_gpu_pod(pod)
        }
        keys |= {(ns, n) for (kind, ns, n) in fleet.by_object if kind == "Pod"}
        for key in sorted(keys):
            r = self.row(fleet, key)
            if r:
                yield key, r[0], r[1]

    def affected(self, fleet, t):
        return None if t.everything else t.pods

    def ref(self, fleet, key):
        return ("Pod", key[0], key[1])


class FindingsView(View):
    name, title = "findings", "Findings"
    columns = R.FINDING_COLUMNS
    essential = ("severity", "id", "object", "summary")
    uses_findings = True
    empty = "no findings: the fleet is consistent"

    def sort_key(self, key, row):
        return key[0], key[1:]

    def all_rows(self, fleet):
        from dragoman.fleet.findings import CATALOGUE, SEVERITY_ORDER

        ids = list(CATALOGUE)
        for i, f in enumerate(fleet.findings):
            key = (
                SEVERITY_ORDER.get(f.severity, 9),
                ids.index(f.id) if f.id in ids else 99,
                f.pool or "",
                tuple(f.objects[0]) if f.objects else ("", "", ""),
                f.summary,
            )
            yield key, R.finding_row(f), R.finding_facets(f)

    def row(self, fleet, key):
        for k, cells, facets in self.all_rows(fleet):
            if k == key:
                return cells, facets
        return None

    def affected(self, fleet, t):
        return ()  # findings change only with a new diagnosis

    def ref(self, fleet, key):
        obj = key[3]
        return tuple(obj) if obj and obj[0] else None


VIEWS: dict[str, type[View]] = {
    v.name: v for v in (PoolsView, NodesView, DevicesView, AttributesView, ClaimsView, StuckView, FindingsView)
}

# Every `:` target once: (name, digit, aliases incl. k9s's short names, what it shows). Help's view list, the `:` bar's
# suggestions, the palette and the jump itself all read this table.
VIEW_DOCS = (
    ("pools", "1", ("pool",), "pools, their GPUs on each mechanism, ownership, findings"),
    ("nodes", "2", ("node", "no"), "nodes (of a pool after enter on it): plugin and driver pods, GPUs, devices"),
    ("devices", "3", ("device", "dev"), "driver → pool → node → device; / attr=value filters by attribute"),
    (
        "claims",
        "4",
        ("claim", "resourceclaims", "rc"),
        "claims → pods → devices → node; bridge-made marked ⇄; pending first",
    ),
    (
        "pending",
        "5",
        ("stuck", "pods", "pod", "po"),
        "stuck GPU pods with their finding; d: evidence, the scheduler's words, the fix",
    ),
    ("findings", "6", ("finding",), "every finding; filter severity=error, id=both-stacks, pool=NAME"),
    (
        "attributes",
        "7",
        ("attrs", "attribute", "attr"),
        "every attribute and capacity published, its values, counts and pools",
    ),
    ("cel", "", ("playground",), "the CEL playground: a selector against every device, live"),
    ("migrate", "", ("mig", "migration"), "the migration wizard: pick a pool, see its plan, apply, roll back"),
    (
        "accounting",
        "",
        ("acct", "quota", "quotas"),
        "GPUs as allocatable, slices and claims count them; quotas a move changes",
    ),
    ("load", "", (), "claims, rates, slices, Pending pods and API objects over time; what a pool's move adds"),
    ("ctx", "", ("context", "contexts"), "switch kubeconfig context"),
)
JUMPS = {alias: name for name, _digit, aliases, _doc in VIEW_DOCS for alias in (name, *aliases)}
# Views that are screens of their own rather than tables: jump target -> "module:Screen class" (imported when opened).
SCREENS = {
    "accounting": "dragoman.widgets.accounting:AccountingScreen",
    "load": "dragoman.widgets.load:LoadScreen",
    "cel": "dragoman.tui.screens.playground:PlaygroundScreen",
    "migrate": "dragoman.tui.screens.migrate:MigrateScreen",
}


def jump_candidates(text: str) -> list[tuple[str, str]]:
    """(name typed, view) pairs starting with `text`: views by their own names first, in the digits' order, then aliases."""
    t = text.strip().lower()
    names = [(n, n) for n, *_ in VIEW_DOCS if n.startswith(t)]
    aliases = [(a, n) for n, _d, al, _doc in VIEW_DOCS for a in al if a.startswith(t)]
    exact = [c for c in names + aliases if c[0] == t]
    return exact + [c for c in names + aliases if c not in exact]


def resolve_jump(text: str) -> str | None:
    """The view `:text` means: an exact name or alias, else the one view every name starting with it leads to."""
    t = text.strip().lower()
    if t in JUMPS:
        return JUMPS[t]
    targets = {v for _a, v in jump_candidates(t)} if t else set()
    return targets.pop() if len(targets) == 1 else None


GLOB = set("*?[")


class RowFilter:
    """The `/` filter: every word must appear somewhere in the row's text, every `key=value` (or `key!=value`) must
    hold for one of the row's labels, attributes or fields. Case-insensitive; `*` and `?` are globs anywhere, and a
    word with no glob matches as a substring (`h100`, `*80GB*`, `productName=NVIDIA*H100*`, `pool!=system`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words: list[str] = []
        self.pairs: list[tuple[str, str, bool]] = []  # (key, value, negated)
        for token in text.split():
            if "=" in token.strip("=") and not token.startswith("="):
                k, _, v = token.partition("=")
                neg = k.endswith("!")
                self.pairs.append((k.rstrip("!").strip().lower(), v.strip().lower(), neg))
            else:
                self.words.append(token.lower())
        self.keys_seen: set[str] = set()  # keys some row had: "no row has a field X" is said only when none did

    def __bool__(self) -> bool:
        return bool(self.words or self.pairs)

    @staticmethod
    def _word(pattern: str, text: str) -> bool:
        if GLOB & set(pattern):
            return fnmatch.fnmatchcase(text, "*" + pattern.strip("*") + "*") if pattern.strip("*") else True
        return pattern in text

    @staticmethod
    def _value(pattern: str, value: str) -> bool:
        if GLOB & set(pattern):
            return fnmatch.fnmatchcase(value, pattern) or fnmatch.fnmatchcase(value.replace(" ", "-"), pattern)
        return value == pattern or value.replace(" ", "-") == pattern

    def __call__(self, key, row, facets) -> bool:
        if self.words:
            blob = " ".join(str(c) for c in row).lower()
            if not all(self._word(w, blob) for w in self.words):
                return False
        if self.pairs:
            lowered = {str(k).lower(): str(v).lower() for k, v in facets.items()}
            for k, v, neg in self.pairs:
                candidates = [val for fk, val in lowered.items() if fk == k or fk.endswith("/" + k)]
                if candidates:
                    self.keys_seen.add(k)
                hit = any(self._value(v, c) for c in candidates)
                if hit == neg:
                    return False
        return True

    def missing_keys(self) -> list[str]:
        """Keys of the filter that no row checked so far has at all (a typo, or a field another view has)."""
        return [k for k, _v, _n in self.pairs if k not in self.keys_seen]


def parse_filter(text: str) -> RowFilter | None:
    """The table predicate for `/text`, or None for no filter."""
    f = RowFilter(text)
    return f if f else None
