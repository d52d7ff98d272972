"""What the store keeps of a pod that matters to dragoman only through a few fields, and a LIST decoder that builds it
straight from the server's bytes.

At Kubernetes' envelope (150,000 pods) the store is mostly pods that count for dragoman only through a few fields: a
CPU pod of a Deployment matters on its node (drain blast radius, pods per node), in its namespace, by its owner and
phase. Its volumes, env, probes, managedFields, addresses and image digests are read by no view, no finding and no
write (every write GETs or LISTs what it changes from the server first: actions/drain.py's node_pods, capacity.py's
picture). Such pods are kept as a Projection: the same shape with those fields gone, so every reader works
unchanged. The YAML and describe pages fetch the whole object on demand (FleetStore.fetch_whole).

Kept whole: every pod that asks for extended resources (GPUs) or holds claims, pods that look like the GPU stack's
(fleet/ownership.classify_pod), and bare pods (no owner: static and mirror pods), which findings read closely. Every
other kind is kept whole: even at the envelope nodes, slices and claims are tens of MiB and DRA's views read them all.

Measured on the envelope's Deployment pods (4.5 KB of JSON each; benchmarks/bench_envelope.py prints the figures):
the whole decoded dicts take ~195 MiB per 10,000 pods, the projection ~65 MiB, and the projection with identical parts
shared (decoded once per distinct JSON value: a template's containers, its tolerations, labels, owner, conditions)
~20 MiB. json.loads costs ~100 µs a pod on this machine and projecting the dicts ~45 µs more; decoding the page with
msgspec into the kept fields only costs ~25 µs, which is what makes a 150,000-pod LIST fit in seconds.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from typing import Any

import msgspec
from dragoman.fleet.shapes import fits

# Pod fields a projection keeps; anything not named here is dropped. Containers keep name, image (GPU-stack
# classification reads images) and resources (extended requests, accounting); statuses keep what readiness and
# crash-loop detection read (fleet/ownership.pod_ready, crash_looping).
META_KEEP = (
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
)
SPEC_KEEP = (
    "nodeName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "priority",
    "priorityClassName",
    "schedulerName",
    "resourceClaims",
    "overhead",
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "schedulingGates",
    "runtimeClassName",
    "containers",
    "initContainers",
)
STATUS_KEEP = (
    "phase",
    "reason",
    "message",
    "nominatedNodeName",
    "startTime",
    "conditions",
    "containerStatuses",
    "initContainerStatuses",
    "resourceClaimStatuses",
    "extendedResourceClaimStatus",
)
CONTAINER_KEEP = ("name", "image", "resources", "restartPolicy")
CONTAINER_STATUS_KEEP = ("name", "ready", "restartCount", "state", "lastState", "started")
# Strings many pods share (one object for all of them).
SHARED_STRINGS = {
    ("metadata", "namespace"),
    ("spec", "nodeName"),
    ("status", "phase"),
    ("spec", "schedulerName"),
    ("spec", "restartPolicy"),
    ("spec", "priorityClassName"),
    ("status", "startTime"),
    ("metadata", "creationTimestamp"),
}
CANON_LIMIT = 200_000  # distinct shared values remembered; past it the memo starts again (sharing, never correctness)
# Kept fields whose value is the pod's own (container IDs, start times): no two pods send the same bytes, so they are
# decoded and checked without the memo, whose copy of their bytes would be ~90 MiB of keys at 150,000 pods.
UNSHARED = {("status", "containerStatuses"), ("status", "initContainerStatuses")}


class Projection(dict):
    """A pod kept as the fields dragoman reads (see the *_KEEP lists); `source` is the store that can fetch it whole.

    A dict, so every reader works unchanged; a distinct type, so a page that shows the whole object can tell, and so
    YAML's safe dumper refuses it rather than print an object with fields missing. Never mutate one: its parts are
    shared with other projections."""

    # `shapes_checked`: set by the LIST decoder once every field fleet/shapes.py checks has been held to its rules
    # (each distinct shared part once), so the check of the whole item is not made again.
    __slots__ = ("source", "shapes_checked")
    source: Any
    shapes_checked: bool


def _keep(d: Any, names: tuple[str, ...]) -> Any:
    return {k: d[k] for k in names if k in d} if isinstance(d, dict) else d


def _containers(v: Any) -> Any:
    return [_keep(c, CONTAINER_KEEP) for c in v] if isinstance(v, list) else v


def _statuses(v: Any) -> Any:
    return [_keep(c, CONTAINER_STATUS_KEEP) for c in v] if isinstance(v, list) else v


# How a kept field is cut further (the same in both paths below).
TRIM: dict[str, Callable[[Any], Any]] = {
    "containers": _containers,
    "initContainers": _containers,
    "containerStatuses": _statuses,
    "initContainerStatuses": _statuses,
}
SECTIONS = (("metadata", META_KEEP), ("spec", SPEC_KEEP), ("status", STATUS_KEEP))


def keeps_whole(pod: dict) -> bool:
    """Whether dragoman keeps this pod whole (GPU requests, claims, the GPU stack, no owner) rather than projected."""
    from dragoman.fleet.model import pod_extended_requests
    from dragoman.fleet.ownership import classify_pod

    meta = pod.get("metadata")
    spec = pod.get("spec")
    status = pod.get("status") or {}
    if (
        not isinstance(meta, dict)
        or not isinstance(spec, dict)
        or not isinstance(status, dict)
        or not meta.get("ownerReferences")
    ):
        return True
    if spec.get("resourceClaims") or status.get("resourceClaimStatuses") or status.get("extendedResourceClaimStatus"):
        return True
    try:
        return bool(pod_extended_requests(pod)) or classify_pod(pod, {}) is not None
    except (AttributeError, TypeError, ValueError):  # an odd shape: keep it as it came; the shape checks judge it
        return True


def project_pod(pod: dict, strings: dict[str, str] | None = None) -> dict:
    """The pod as a Projection, or the pod itself when it is kept whole: the path for dicts already decoded (a live
    informer decodes its LIST pages and watch events through PodListDecoder instead)."""
    if isinstance(pod, Projection) or not isinstance(pod, dict) or keeps_whole(pod):
        return pod
    out = Projection()
    for k in ("apiVersion", "kind"):
        if k in pod:
            out[k] = pod[k]
    for section, names in SECTIONS:
        src = pod.get(section)
        if not isinstance(src, dict):
            if section in pod:
                out[section] = src
            continue
        part = {}
        for name in names:
            if name in src:
                v = src[name]
                trim = TRIM.get(name)
                if trim is not None:
                    v = trim(v)
                elif strings is not None and isinstance(v, str) and (section, name) in SHARED_STRINGS:
                    v = strings.setdefault(v, v)
                part[name] = v
        out[section] = part
    return out


# ---------------------------------------------------------------------------------------------------- fast LIST path

_UNSET = msgspec.UNSET
_STR_FIELDS = {
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "nodeName",
    "priorityClassName",
    "schedulerName",
    "restartPolicy",
    "runtimeClassName",
    "phase",
    "reason",
    "message",
    "nominatedNodeName",
    "startTime",
}
_INT_FIELDS = {"generation", "deletionGracePeriodSeconds", "priority", "terminationGracePeriodSeconds"}


def _struct(name: str, fields: tuple[str, ...]) -> type:
    spec: list[tuple[str, Any, Any]] = []
    for f in fields:
        if f in _STR_FIELDS:
            spec.append((f, str | None | msgspec.UnsetType, _UNSET))
        elif f in _INT_FIELDS:
            spec.append((f, int | None | msgspec.UnsetType, _UNSET))
        else:
            spec.append((f, msgspec.Raw, msgspec.Raw()))
    return msgspec.defstruct(name, spec)


_Meta = _struct("_Meta", META_KEEP)
_Spec = _struct("_Spec", SPEC_KEEP)
_Status = _struct("_Status", STATUS_KEEP)
_Pod = msgspec.defstruct(
    "_Pod",
    [
        ("apiVersion", str | None | msgspec.UnsetType, _UNSET),
        ("kind", str | None | msgspec.UnsetType, _UNSET),
        ("metadata", _Meta | None | msgspec.UnsetType, _UNSET),
        ("spec", _Spec | None | msgspec.UnsetType, _UNSET),
        ("status", _Status | None | msgspec.UnsetType, _UNSET),
    ],
)


class _Page(msgspec.Struct):
    apiVersion: Any = None
    kind: Any = None
    metadata: Any = None
    items: list[msgspec.Raw] | None = None


_page_decoder = msgspec.json.Decoder(_Page)
# Any: the struct types are made at import time (defstruct), so their fields are not known to a type checker.
_pod_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(_Pod)
_generic_decoder = msgspec.json.Decoder()
_SECTION_FIELDS = tuple(
    (
        section,
        names,
        tuple(
            (
                n,
                TRIM.get(n),
                (section, n) in SHARED_STRINGS,
                n not in _STR_FIELDS and n not in _INT_FIELDS,
                f"{section}.{n}",
                (section, n) in UNSHARED,
            )
            for n in names
        ),
    )
    for section, names in SECTIONS
)


def _asks_extended(containers: Any) -> bool:
    from dragoman.fleet.model import container_extended

    try:
        return isinstance(containers, list) and any(isinstance(c, dict) and container_extended(c) for c in containers)
    except (AttributeError, TypeError, ValueError):
        return True  # an odd shape: decoded whole, for the shape checks to judge


class PodListDecoder:
    """Decodes LIST pages of pods from bytes into projections (or whole pods, for those kept whole).

    Each kept field that is not a plain scalar is decoded once per distinct JSON value and shared by every pod that
    sends the same bytes; an item msgspec cannot read as a pod (a field of an odd type) is decoded with json and left
    to the same checks as any other, so a malformed object is judged exactly as on the plain path."""

    def __init__(self, strings: dict[str, str] | None = None) -> None:
        self.strings: dict[str, str] = strings if strings is not None else {}
        self._canon: dict[bytes, Any] = {}
        # (section.field, the value's bytes) -> whether the value keeps fleet/shapes.py's rules for that field.
        self._fit: dict[tuple[str, bytes], bool] = {}
        self._unfit = False
        self.whole = 0
        self.projected = 0

    def _value(self, raw: msgspec.Raw, trim: Callable[[Any], Any] | None, where: str = "") -> Any:
        key = bytes(raw)
        hit = self._canon.get(key, self)
        if hit is self:
            # msgspec has read these bytes as JSON already (they are a Raw of the pod it decoded): its generic decoder
            # gives what json.loads would, twice as fast for the small values here.
            hit = _generic_decoder.decode(key)
            if trim is not None:
                hit = trim(hit)
            if len(self._canon) >= CANON_LIMIT:
                self._canon.clear()
                self._fit.clear()
            self._canon[key] = hit
        if where:
            ok = self._fit.get((where, key))
            if ok is None:
                ok = self._fit[(where, key)] = hit is None or fits("Pod", where)(hit)
            if not ok:
                self._unfit = True
        return hit

    def _own(self, raw: msgspec.Raw, trim: Callable[[Any], Any] | None, where: str) -> Any:
        """A value only this pod sends (UNSHARED): decoded, cut and checked as _value does, without the memo."""
        v = _generic_decoder.decode(raw)
        if trim is not None:
            v = trim(v)
        if v is not None and not fits("Pod", where)(v):
            self._unfit = True
        return v

    def _whole(self, raw: msgspec.Raw | bytes) -> dict:
        self.whole += 1
        data = raw if isinstance(raw, bytes) else bytes(raw)
        try:
            # msgspec's generic decoder: the same objects as json.loads, a third faster item by item.
            return _generic_decoder.decode(data)
        except msgspec.DecodeError:
            return json.loads(data)  # what json accepts and msgspec does not (NaN, ...): as the plain path reads it

    def item(self, raw: msgspec.Raw) -> dict:
        # Pods kept whole are decoded once, whole, without building a projection first: no owner at all (the
        # bytes never name the field), claims, or GPU requests in the containers decide before anything is built.
        data = memoryview(raw).tobytes()
        if b'"ownerReferences"' not in data:
            return self._whole(data)
        try:
            pod = _pod_decoder.decode(raw)
        except msgspec.DecodeError:
            return self._whole(raw)
        spec, status = pod.spec, pod.status
        if spec not in (None, _UNSET) and (
            spec.resourceClaims or spec.containers and _asks_extended(self._value(spec.containers, _containers))
        ):
            return self._whole(raw)
        if status not in (None, _UNSET) and (status.resourceClaimStatuses or status.extendedResourceClaimStatus):
            return self._whole(raw)
        out = Projection()
        # Scalars were typed by msgspec (str or int, or null, as shapes.py's rules for them say); the other kept
        # fields are checked below, once per distinct value.
        self._unfit = False
        if pod.apiVersion is not _UNSET:
            out["apiVersion"] = pod.apiVersion
        if pod.kind is not _UNSET:
            out["kind"] = pod.kind
        strings = self.strings
        for section, _names, fields in _SECTION_FIELDS:
            src = getattr(pod, section)
            if src is _UNSET:
                continue
            if src is None:
                out[section] = None
                continue
            part = {}
            for name, trim, shared, is_raw, where, unshared in fields:
                v = getattr(src, name)
                if is_raw:
                    if not v:
                        continue
                    v = self._own(v, trim, where) if unshared else self._value(v, trim, where)
                elif v is _UNSET:
                    continue
                elif shared and v is not None:
                    v = strings.setdefault(v, v)
                part[name] = v
            out[section] = part
        if keeps_whole(out):
            return self._whole(raw)
        self.projected += 1
        # A field that breaks a rule: left to the item's whole check, which names it (Cluster.admit).
        out.shapes_checked = not self._unfit
        return out

    def __call__(self, raw: bytes) -> Any:
        """A LIST page as fleet/cluster.decode would give it, with pods projected; the GC paused as it does there."""
        was = gc.isenabled()
        gc.disable()
        try:
            try:
                page = _page_decoder.decode(raw)
            except msgspec.DecodeError:
                return json.loads(raw)  # not a list page: the caller's checks say what it is
            out: dict[str, Any] = {}
            for k in ("apiVersion", "kind", "metadata"):
                v = getattr(page, k)
                if v is not None:
                    out[k] = v
            out["items"] = None if page.items is None else [self.item(r) for r in page.items]
            return out
        finally:
            if was:
                from dragoman.fleet.cluster import FREEZE_ABOVE

                # As fleet/cluster.decode does: a fleet's worth of objects out of the cyclic collector's way.
                if len(raw) >= FREEZE_ABOVE:
                    gc.freeze()
                gc.enable()


# ---------------------------------------------------------------------------------------------------- whole on demand


def needs_fetch(obj: Any) -> bool:
    """Whether a page showing `obj` whole must fetch it first (a projection whose whole object is not at hand)."""
    return isinstance(obj, Projection) and getattr(obj, "source", None) is not None and obj.source.needs_fetch(obj)


def whole_of(obj: Any) -> Any:
    """The whole object behind `obj` once fetched (or `obj` itself)."""
    if isinstance(obj, Projection) and getattr(obj, "source", None) is not None:
        return obj.source.whole_of(obj)
    return obj


async def fetch_whole(obj: Any) -> Any:
    """Fetch the whole object behind a projection from its store's cluster (one GET); whole objects come back as is."""
    if isinstance(obj, Projection) and getattr(obj, "source", None) is not None:
        return await obj.source.fetch_whole(obj)
    return obj
