"""What the store keeps of a pod that matters to dragoman only through a few fields, and a LIST decoder that builds it
straight from the server's bytes.

At Kubernetes' envelope (150,000 pods) the store is mostly pods that count for dragoman only through a few fields: a
CPU pod of a Deployment matters on its node (drain blast radius, pods per node), in its namespace, by its owner and
phase. Its volumes, env, probes, managedFields, addresses and image digests are read by no view, no finding and no
write (every write GETs or LISTs what it changes from the server first: actions/drain.py's node_pods, capacity.py's
picture). Such pods are kept as a Projection: the same shape with those fields gone, so every reader works
unchanged. The YAML and describe pages fetch the whole object on demand (FleetStore.fetch_whole).

Kept whole: every pod that asks for extended resources (GPUs) or holds claims, pods that look like the GPU stack's
(fleet/gpustack.classify_pod), and bare pods (no owner: static and mirror pods), which findings read closely. Every
other kind is kept whole: even at the envelope nodes, slices and claims are tens of MiB and DRA's views read them all.

Measured on the envelope's Deployment pods (4.5 KB of JSON each; benchmarks/bench_envelope.py prints the figures):
the whole decoded dicts take ~195 MiB per 10,000 pods, the projection ~65 MiB, and the projection with identical parts
shared (decoded once per distinct JSON value: a template's containers, its tolerations, labels, owner, conditions)
~20 MiB. json.loads costs ~100 µs a pod on this machine and projecting the dicts ~45 µs more. PodListDecoder decodes
a page in one msgspec pass into dicts of the kept fields (TypedDicts made from the lists below), then decodes each
shared part once and asks keeps_whole once per template: ~13 µs a Deployment pod, of which msgspec's pass is ~4.5 µs
and ~20 µs a pod over the envelope's pages, its GPU pods (decoded whole) included (34 µs with a Python loop over
struct fields and keeps_whole per pod), which is what makes a 150,000-pod LIST fit in a few seconds. A shared part is
first compared with the same field of the pod before (a LIST comes in name order, so a template's pods come together:
85-100% of them match), which skips copying and hashing its bytes for the memo, and a pod's own container statuses
are cut by msgspec in the page's one pass: 12.8 -> 11.2 µs a pod over the envelope's pages (2026-12-05).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from typing import Any, TypedDict

import msgspec
from dragoman.fleet.gpustack import role_name_words
from dragoman.fleet.shapes import fits

# Pod fields a projection keeps; anything not named here is dropped. Containers keep name, image (GPU-stack
# classification reads images) and resources (extended requests, accounting); statuses keep what readiness and
# crash-loop detection read (fleet/podstate.pod_ready, crash_looping).
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
CONTAINER_STATUS_KEEP = ("name", "ready", "restartCount", "state", "lastState", "started", "allocatedResourcesStatus")
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
    from dragoman.fleet.gpustack import classify_pod
    from dragoman.fleet.model import pod_extended_requests

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


def _section(name: str, fields: tuple[str, ...], typed: dict[str, Any] | None = None) -> Any:
    """A section of the pod as msgspec decodes it: a dict of the kept fields the JSON holds (the others skipped in C),
    scalars typed as fleet/shapes.py's rules want them, the fields of `typed` decoded by msgspec as the type given,
    every other kept field left as its bytes (a Raw)."""
    ann: dict[str, Any] = {}
    for f in fields:
        if typed and f in typed:
            ann[f] = typed[f]
        else:
            ann[f] = str | None if f in _STR_FIELDS else int | None if f in _INT_FIELDS else msgspec.Raw
    return _TypedDict(name, ann, total=False)


# A TypedDict made from the KEEP lists (one home for what is kept): msgspec decodes it into a plain dict holding only
# the fields named, in the JSON's order, absent ones absent; so a section's dict is built by msgspec, not field by
# field in Python.
_TypedDict: Any = TypedDict
# A pod's own container statuses (UNSHARED) cut to CONTAINER_STATUS_KEEP by msgspec in the page's one pass: a list of
# anything else fails that pass, and the page is read item by item (the pod kept whole, judged by the shape rules).
_ContainerStatus: Any = _TypedDict("_ContainerStatus", {n: Any for n in CONTAINER_STATUS_KEEP}, total=False)
_OWN_TYPES = {n: list[_ContainerStatus] | None for section, n in UNSHARED}
_Pod = _TypedDict(
    "_Pod",
    {
        "apiVersion": str | None,
        "kind": str | None,
        "metadata": _section("_Meta", META_KEEP) | None,
        "spec": _section("_Spec", SPEC_KEEP) | None,
        "status": _section("_Status", STATUS_KEEP, _OWN_TYPES) | None,
    },
    total=False,
)


class _Page(msgspec.Struct):
    apiVersion: Any = None
    kind: Any = None
    metadata: Any = None
    items: list[msgspec.Raw] | None = None


class _TypedPage(msgspec.Struct):
    apiVersion: Any = None
    kind: Any = None
    metadata: Any = None
    items: list[_Pod] | None = None  # type: ignore[valid-type]  # a TypedDict made at import time


_page_decoder = msgspec.json.Decoder(_Page)
_typed_page_decoder = msgspec.json.Decoder(_TypedPage)
_pod_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(_Pod)
_generic_decoder = msgspec.json.Decoder()
# Per section: its kept fields msgspec leaves as bytes, by name -> (trim, "section.field" for the shape rules); its
# fields msgspec decoded whole (the pod's own), by name -> "section.field"; and its shared strings. The loop below
# visits the fields a pod has, not every name kept.
_RAW_FIELDS = tuple(
    (
        {
            n: (TRIM.get(n), f"{section}.{n}")
            for n in names
            if n not in _STR_FIELDS and n not in _INT_FIELDS and (section, n) not in UNSHARED
        },
        {n: f"{section}.{n}" for n in names if (section, n) in UNSHARED},
        frozenset(n for n in names if (section, n) in SHARED_STRINGS),
    )
    for section, names in SECTIONS
)


class PodListDecoder:
    """Decodes LIST pages of pods from bytes into projections (or whole pods, for those kept whole).

    Each kept field that is not a plain scalar is decoded once per distinct JSON value and shared by every pod that
    sends the same bytes; an item msgspec cannot read as a pod (a field of an odd type) is decoded with json and left
    to the same checks as any other, so a malformed object is judged exactly as on the plain path.

    Whether a pod is kept whole is decided once per template: keeps_whole reads, beyond the claims checked here, only
    the pod's labels, owner references, containers, init containers and which of gpustack.ROLE_NAME_WORDS its name
    holds; the first four are shared parts (one object per distinct value), so their identities and the name's words
    are an exact key for its answer."""

    def __init__(self, strings: dict[str, str] | None = None, source: Any = None) -> None:
        self.strings: dict[str, str] = strings if strings is not None else {}
        # The store whose projections these are (Projection.source): set here, so the store need not visit each one.
        self.source = source
        # (section.field, the value's bytes) -> (the value decoded and cut, whether it keeps fleet/shapes.py's rules for
        # that field).
        self._memo: dict[tuple[str, bytes], tuple[Any, bool]] = {}
        # section.field -> (the bytes of that field in the last pod that had it, its memo entry).
        self._last: dict[str, tuple[msgspec.Raw, tuple[Any, bool]]] = {}
        # (ids of labels, ownerReferences, containers, initContainers; name words) -> (keeps_whole's answer, those
        # objects, held so that their ids stay theirs while the answer is remembered).
        self._verdicts: dict[tuple, tuple] = {}
        self._unfit = False
        # The pod `item` last kept whole having judged it (keeps_whole's answer): the store need not judge it again.
        self._judged: Any = None
        self.whole = 0
        self.projected = 0

    def _value(self, raw: msgspec.Raw, trim: Callable[[Any], Any] | None, where: str) -> Any:
        """A shared part: decoded, cut and checked once per distinct bytes (and field)."""
        key = (where, bytes(raw))
        hit = self._memo.get(key)
        if hit is None:
            hit = self._remember(key, trim)
        if not hit[1]:
            self._unfit = True
        return hit[0]

    def _remember(self, key: tuple[str, bytes], trim: Callable[[Any], Any] | None) -> tuple[Any, bool]:
        # msgspec has read these bytes as JSON already (they are a Raw of the pod it decoded): its generic decoder
        # gives what json.loads would, twice as fast for the small values here.
        v = _generic_decoder.decode(key[1])
        if trim is not None:
            v = trim(v)
        if len(self._memo) >= CANON_LIMIT:
            self._memo.clear()
            self._verdicts.clear()
        hit = self._memo[key] = (v, v is None or fits("Pod", key[0])(v))
        return hit

    def _whole(self, raw: msgspec.Raw | bytes) -> dict:
        self.whole += 1
        try:
            # msgspec's generic decoder: the same objects as json.loads, a third faster item by item (a Raw read in
            # place: no copy of its bytes).
            return _generic_decoder.decode(raw)
        except msgspec.DecodeError:
            # What json accepts and msgspec does not (NaN, ...): as the plain path reads it.
            return json.loads(raw if isinstance(raw, bytes) else bytes(raw))

    def _keeps_whole(self, out: Projection, meta: dict, spec: dict) -> bool:
        """keeps_whole(out), remembered per template and name words: see the class."""
        name = meta.get("name", "")
        if name.__class__ is not str:
            return keeps_whole(out)
        parts = (meta.get("labels"), meta["ownerReferences"], spec.get("containers"), spec.get("initContainers"))
        key = (*map(id, parts), role_name_words(name))
        hit = self._verdicts.get(key)
        if hit is None:
            hit = self._verdicts[key] = (keeps_whole(out), parts)
        return hit[0]

    def item(self, raw: msgspec.Raw) -> dict:
        """One pod from its bytes (a watch event's object): a Projection, or the whole pod."""
        try:
            pod = _pod_decoder.decode(raw)
        except msgspec.DecodeError:
            return self._whole(raw)
        out = self._project(pod)
        if out is not None:
            return out
        whole = self._judged = self._whole(raw)
        return whole

    def judged(self, obj: Any) -> bool:
        """Whether `obj` is as this decoder's `item` made it, judged: a projection, or the pod it last kept whole
        because keeps_whole said so (not one it could only read whole, unjudged)."""
        return obj.__class__ is Projection or obj is self._judged

    def _project(self, pod: dict) -> Projection | None:
        """The kept fields msgspec decoded (a _Pod) made a Projection, or None for a pod kept whole."""
        meta, spec, status = pod.get("metadata"), pod.get("spec"), pod.get("status")
        # No owner at all (static and mirror pods) or no spec: kept whole, decided before anything is built.
        if meta is None or spec is None or "ownerReferences" not in meta:
            return None
        # Scalars were typed by msgspec (str or int, or null, as shapes.py's rules for them say), and so were the pod's
        # own container statuses (checked here); the other kept fields are decoded once per distinct value and shared.
        self._unfit = False
        strings = self.strings
        memo = self._memo
        last = self._last
        for (raws, owns, shared), part in zip(_RAW_FIELDS, (meta, spec, status), strict=True):
            if part is None:
                continue
            # Values are replaced, never added or removed: iterating the dict's items while doing so is sound.
            for name, v in part.items():
                if v is None:
                    continue
                how = raws.get(name)
                if how is not None:
                    # _value, inlined (a Deployment pod has ~5 shared parts, 150,000 pods 750,000 of them), with the
                    # same field of the pod before compared first: a LIST comes in name order, so a template's pods
                    # come together, and comparing the bytes costs a tenth of copying and hashing them for the memo.
                    where = how[1]
                    prev = last.get(where)
                    if prev is not None and prev[0] == v:
                        hit = prev[1]
                    else:
                        key = (where, bytes(v))
                        got = memo.get(key)
                        if got is None:
                            got = self._remember(key, how[0])
                            memo = self._memo
                        hit = got
                        # A Raw of the key's own copy: the page's buffer is not held past the page.
                        last[where] = (msgspec.Raw(key[1]), hit)
                    if not hit[1]:
                        self._unfit = True
                    part[name] = hit[0]
                elif name in shared:
                    part[name] = strings.setdefault(v, v)
                else:
                    own = owns.get(name)
                    if own is not None and not fits("Pod", own)(v):
                        self._unfit = True
        if (
            not meta["ownerReferences"]
            or spec.get("resourceClaims")
            or status is not None
            and (status.get("resourceClaimStatuses") or status.get("extendedResourceClaimStatus"))
        ):
            return None
        out = Projection(pod)
        if self._keeps_whole(out, meta, spec):
            return None
        self.projected += 1
        # A field that breaks a rule: left to the item's whole check, which names it (Cluster.admit).
        out.shapes_checked = not self._unfit
        if self.source is not None:
            out.source = self.source
        return out

    def __call__(self, raw: bytes) -> Any:
        """A LIST page as fleet/cluster.decode would give it, with pods projected; the GC paused as it does there."""
        was = gc.isenabled()
        gc.disable()
        try:
            page: Any
            items: list[Any] | None
            try:
                # Every item read as a _Pod in one pass over the page.
                page = _typed_page_decoder.decode(raw)
            except msgspec.DecodeError:
                page = None  # an item of odd shape somewhere: item by item below, each judged on its own
            if page is not None:
                items = None if page.items is None else [self._project(p) for p in page.items]
                if items is not None and None in items:
                    # Pods kept whole are decoded again, whole, from their own bytes. (Reading every page's items as
                    # bytes first and each item as a _Pod, which finds them without a second pass, measured ~8% slower
                    # over the envelope's pages, where 6 of 30 pages hold a pod kept whole.)
                    raws = _page_decoder.decode(raw).items or []
                    items = [self._whole(r) if i is None else i for i, r in zip(items, raws, strict=True)]
            else:
                try:
                    page = _page_decoder.decode(raw)
                except msgspec.DecodeError:
                    return json.loads(raw)  # not a list page: the caller's checks say what it is
                items = None if page.items is None else [self.item(r) for r in page.items]
            out: dict[str, Any] = {}
            for k in ("apiVersion", "kind", "metadata"):
                v = getattr(page, k)
                if v is not None:
                    out[k] = v
            out["items"] = items
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
