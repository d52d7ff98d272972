"""What one batch of watch changes touched, as keys the views understand: `FleetModel.apply` returns it.

Each field names the rows that read it (the views in `fleet/views/` say which field their rows follow):

- `nodes`: a Node row (Nodes view) and, through `pools`, its pool's row;
- `pools`: a Pools row;
- `device_pools`: every Devices row of a (driver, DRA pool): a ResourceSlice may add or drop devices there;
- `devices`: one Devices row (a claim allocated or released it);
- `claims`: a Claims row;
- `pods`: a Stuck pods row;
- `slices`: some ResourceSlice changed, so the attribute catalogue (Attributes view) is stale;
- `everything`: a change may move any row (a DaemonSet's role, a DeviceClass): rare, so every view is rebuilt.

A ResourceSlice, for instance, arrives by its informer's watch (fleet/informer.py) in the raw store (fleet/store.py),
whose batches the UI's feed (tui/feed.py `pump`) hands to `FleetModel.apply` (fleet/model.py); there it is indexed by
`_index_ResourceSlice` (`FleetModel.INDEXERS` names each kind's indexer), which also marks the model's selector
results stale (fleet/selectors.py), and `delta_of` below turns it into its (driver, pool), the node it publishes for
and that node's pool: the Devices rows of that slice pool, that node's Nodes row and its pool's Pools row are
recomputed, nothing else (each view's `affected` in fleet/views/ reads the field its rows follow).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dragoman.fleet.k8s import Key, key_of

if TYPE_CHECKING:
    from dragoman.fleet.model import FleetModel

DeviceId = tuple[str, str, str]  # (driver, pool, device)


@dataclasses.dataclass
class Delta:
    """What a batch of changes touched; `everything` when a change may move any row."""

    nodes: set[str] = dataclasses.field(default_factory=set)
    pools: set[str] = dataclasses.field(default_factory=set)
    device_pools: set[tuple[str, str]] = dataclasses.field(default_factory=set)
    devices: set[DeviceId] = dataclasses.field(default_factory=set)
    claims: set[Key] = dataclasses.field(default_factory=set)
    pods: set[Key] = dataclasses.field(default_factory=set)
    events: set[Key] = dataclasses.field(default_factory=set)  # the Events view's rows
    slices: bool = False
    everything: bool = False


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


def _pod_shows_same(old: dict, new: dict) -> bool:
    """Whether two versions of a pod are alike in all the node, pool and claim rows show of it (its phase, node,
    deletion, claims and container statuses): compared as they are, not printed first."""
    ost, nst = old.get("status") or _NONE, new.get("status") or _NONE
    for field in _SHOWN_STATUS:
        if ost.get(field) != nst.get(field):
            return False
    return (old.get("spec") or _NONE).get("nodeName") == (new.get("spec") or _NONE).get("nodeName") and (
        old.get("metadata") or _NONE
    ).get("deletionTimestamp") == (new.get("metadata") or _NONE).get("deletionTimestamp")


def stack_pod_unchanged(old: dict, new: dict) -> bool:
    """Whether a DaemonSet's device-plugin or DRA-driver pod changed nothing its node's row shows (fleet/model.py
    `StackPod`: phase, readiness, restarts, deletion, node) nor what classifies it (fleet/gpustack.py `classify_pod`:
    its owner, else its labels and images): an annotation, say. False for a pod without a DaemonSet owner, whose
    annotations classify it too."""
    om, nm = old.get("metadata") or _NONE, new.get("metadata") or _NONE
    owners = nm.get("ownerReferences")
    if not owners or owners != om.get("ownerReferences") or not any(o.get("kind") == "DaemonSet" for o in owners):
        return False
    if nm.get("labels") != om.get("labels") or not _pod_shows_same(old, new):
        return False
    if (old.get("status") or _NONE).get("conditions") != (new.get("status") or _NONE).get("conditions"):
        return False
    osp, nsp = old.get("spec") or _NONE, new.get("spec") or _NONE
    return osp.get("containers") == nsp.get("containers") and osp.get("initContainers") == nsp.get("initContainers")


_NONE: dict = {}
_SHOWN_STATUS = ("phase", "containerStatuses", "resourceClaimStatuses", "extendedResourceClaimStatus")


def delta_of(model: FleetModel, changes: Sequence[Any], before: dict | None = None) -> Delta:
    """Which rows a batch of changes can alter, read from the model after it absorbed the batch.

    `before` maps (kind, key) to the pool a node or claim sat in before the batch, for moves between pools.
    """
    t = Delta()
    for ch in changes:
        kind, new, old = ch.kind, ch.obj, ch.old
        if ch.type == "DELETED":
            new, old = None, old or ch.obj
        if kind == "Node":
            t.nodes.add(key_of(ch.obj)[1])
            if old:  # a relabelled node leaves its old pool's row too
                t.pools.add(model.pool_of_labels((old.get("metadata") or {}).get("labels") or {}))
        elif kind == "Pod":
            pk = key_of(ch.obj)
            t.pods.add(pk)
            if old is not None and new is not None:
                if model.is_stack_pod(pk):
                    if stack_pod_unchanged(old, new):
                        continue  # the GPU stack's pod, an annotation changed: its node's row shows the same
                elif _pod_shows_same(old, new):
                    continue  # a heartbeat, an annotation: nothing a node, pool or claim row shows
            for p in (old, new):
                n = _pod_node(p)
                if n:
                    t.nodes.add(n)
                for c in _pod_claim_names(p):
                    t.claims.add((pk[0], c))
        elif kind == "ResourceSlice":
            t.slices = True
            for s in (old, new):
                if not s:
                    continue
                spec = s.get("spec") or {}
                dp = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""))
                t.device_pools.add(dp)
                n = spec.get("nodeName") or model.slice_pool_node(dp)
                if n:
                    t.nodes.add(n)
        elif kind == "ResourceClaim":
            t.claims.add(key_of(ch.obj))
            for c in (old, new):
                if not c:
                    continue
                for d in model.claim_devices(c):
                    t.devices.add(d)
                    if model.device_states().counter_sets(d[:2]):
                        # The pool shares counters: what the claim takes changes what its other devices can be.
                        t.device_pools.add(d[:2])
                    n = model.slice_pool_node(d[:2])
                    if n:
                        t.nodes.add(n)
                for r in (c.get("status") or {}).get("reservedFor") or ():
                    if r.get("resource") == "pods" and r.get("name"):
                        t.pods.add((key_of(c)[0], r["name"]))
        elif kind == "Event":
            t.events.add(key_of(ch.obj))
        elif kind in ("DaemonSet", "DeviceClass", "DeviceTaintRule"):
            # Ownership of every node (a DaemonSet's role), what serves nvidia.com/gpu, or which devices a rule taints
            # may change: rare, and whole.
            t.everything = True
    for n in t.nodes:
        p = model.pool_of_node(n)
        if p:
            t.pools.add(p)
    if before:
        t.pools.update(v for v in before.values() if v)
    return t
