"""The KEP-5004 bridge as kube-scheduler implements it: which class serves a name, the claim it makes, the request
mappings."""

from __future__ import annotations

import random
from collections.abc import Iterable

from dragoman.fleet.k8s import DEVICECLASS_PREFIX
from dragoman.fleet.k8s.allocator import FINALIZER

DRA_PREFIX = DEVICECLASS_PREFIX  # one home with the client: fleet/k8s/
BRIDGE_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
# k8s.io/apimachinery/pkg/util/rand: no vowels and no confusable characters.
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_MAX_GENERATED_BASE = 58  # names.SimpleNameGenerator: 63 - 5 random characters


def generate_name(base: str, rng: random.Random | None = None) -> str:
    """What the apiserver makes of `generateName`: the base cut to 58 characters plus 5 random ones."""
    rng = rng or random
    if len(base) > _MAX_GENERATED_BASE:
        base = base[:_MAX_GENERATED_BASE]
    return base + "".join(rng.choice(_ALPHANUMS) for _ in range(5))


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _newer(a: dict, b: dict) -> bool:
    """True when class `a` wins over `b`: newer creationTimestamp, ties to the lexicographically smaller name."""
    ta, tb = _meta(a).get("creationTimestamp") or "", _meta(b).get("creationTimestamp") or ""
    if ta != tb:
        return ta > tb
    return (_meta(a).get("name") or "") < (_meta(b).get("name") or "")


class ExtendedResourceCache:
    """kube-scheduler's extended-resource cache as v1.37.2 keeps it (dynamic-resource-allocation
    deviceclass/extendedresourcecache): not a function of the classes that exist but of the events that reached it.

    - add or update: a class naming a resource takes it only if it is newer than the class holding it (ties to the
      smaller name); a class that loses keeps no mapping at all, not even its implicit name;
    - delete: the class's implicit name and its extendedResourceName are removed, whoever held the latter. No other
      class takes the name back until it is updated (or the scheduler restarts and lists the classes again).
    So after the class serving `nvidia.com/gpu` is deleted, or any class naming it, nothing serves the name.
    The initial LIST arrives in etcd's key order (by name)."""

    def __init__(self, classes: Iterable[dict] = ()) -> None:
        self.map: dict[str, dict] = {}
        for cls in sorted(classes, key=lambda c: _meta(c).get("name") or ""):
            self.update(cls, None)

    def update(self, new: dict, old: dict | None) -> None:
        name = _meta(new).get("name") or ""
        explicit = (new.get("spec") or {}).get("extendedResourceName")
        holder = self.map.get(explicit) if explicit else None
        # An update of the holder itself ties on both and returns too: the cache keeps the object it has.
        if holder is not None and not _newer(new, holder):
            return
        if old is not None:
            self.map.pop(DRA_PREFIX + (_meta(old).get("name") or ""), None)
            old_explicit = (old.get("spec") or {}).get("extendedResourceName")
            if old_explicit:
                self.map.pop(old_explicit, None)
        if explicit:
            self.map[explicit] = new
        self.map[DRA_PREFIX + name] = new

    def delete(self, cls: dict) -> None:
        self.map.pop(DRA_PREFIX + (_meta(cls).get("name") or ""), None)
        explicit = (cls.get("spec") or {}).get("extendedResourceName")
        if explicit:
            self.map.pop(explicit, None)

    def get(self, resource: str) -> dict | None:
        return self.map.get(resource)


def bridge_owner_uid(claim: dict) -> str | None:
    """The uid of the pod a scheduler-made claim belongs to (annotation "true" and a controller owner), or None."""
    meta = _meta(claim)
    if (meta.get("annotations") or {}).get(BRIDGE_ANNOTATION) != "true":
        return None
    for o in meta.get("ownerReferences") or []:
        if o.get("kind") == "Pod" and o.get("controller"):
            return o.get("uid")
    return None


def bridge_claim(pod: dict, requests: list[dict], allocation: dict, rng: random.Random | None = None) -> dict:
    """The claim kube-scheduler creates in PreBind, with the status it then writes (allocation, reservedFor the pod)."""
    meta = _meta(pod)
    base = f"{meta.get('name', '')}-extended-resources-"
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": generate_name(base, rng),
            "generateName": base,
            "namespace": meta.get("namespace", ""),
            "annotations": {BRIDGE_ANNOTATION: "true"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta.get("name", ""),
                    "uid": meta.get("uid", ""),
                    "controller": True,
                }
            ],
            "finalizers": [FINALIZER],
        },
        "spec": {"devices": {"requests": requests}},
        "status": {
            "allocation": allocation,
            "reservedFor": [{"resource": "pods", "name": meta.get("name", ""), "uid": meta.get("uid", "")}],
        },
    }
