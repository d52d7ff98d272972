"""events.k8s.io/v1 Events: a second view of the core v1 Events, converted on every read, write and watch.

kube-apiserver serves `/apis/events.k8s.io/v1/.../events` from the same storage as `/api/v1/.../events`
(pkg/registry/events/rest: the core event REST storage), so an Event written through either API is read through
both. Only the field names differ (k8s.io/kubernetes pkg/apis/events/v1/conversion.go):

    core v1                     events.k8s.io/v1
    involvedObject              regarding
    message                     note
    source                      deprecatedSource
    firstTimestamp              deprecatedFirstTimestamp
    lastTimestamp               deprecatedLastTimestamp
    count                       deprecatedCount
    reportingComponent          reportingController
    (same name in both: eventTime, series, reportingInstance, action, reason, related, type)

The store keeps the core shape; these two functions turn one into the other, as Go's conversion through the
internal type does (every field maps, so the round trip loses nothing a client sent). What is validated differs
by the API a write came through: sim/api/validation/core.py's event checks take the request's API version.
"""

from __future__ import annotations

from typing import Any

API_VERSION = "events.k8s.io/v1"

# Field selector labels of the view and the core labels they stand for (AddFieldLabelConversionsForEvent): the
# store evaluates a label on the view object itself, where each of these reads the value its core label reads.
FIELD_LABELS = {
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    "reason": "reason",
    "reportingController": "reportingComponent",
    "type": "type",
}


def _set(out: dict, key: str, value: Any) -> None:
    """A field with `omitempty`: written only when it is not Go's zero."""
    if value not in (None, "", 0, {}):
        out[key] = value


def to_view(core: dict) -> dict:
    """A stored core v1 Event as events.k8s.io/v1 writes it: Go's field order, `eventTime`, `regarding`,
    `deprecatedSource` and the two deprecated timestamps always present (no `omitempty` reaches them), the other
    fields only when set. The metadata dict is shared, not copied (stored objects are never changed)."""
    out: dict[str, Any] = {"kind": "Event", "apiVersion": API_VERSION, "metadata": core.get("metadata") or {}}
    out["eventTime"] = core.get("eventTime")
    _set(out, "series", core.get("series"))
    _set(out, "reportingController", core.get("reportingComponent"))
    _set(out, "reportingInstance", core.get("reportingInstance"))
    _set(out, "action", core.get("action"))
    _set(out, "reason", core.get("reason"))
    out["regarding"] = core.get("involvedObject") or {}
    _set(out, "related", core.get("related"))
    _set(out, "note", core.get("message"))
    _set(out, "type", core.get("type"))
    out["deprecatedSource"] = core.get("source") or {}
    out["deprecatedFirstTimestamp"] = core.get("firstTimestamp")
    out["deprecatedLastTimestamp"] = core.get("lastTimestamp")
    _set(out, "deprecatedCount", core.get("count"))
    return out


def to_core(view: dict) -> dict:
    """An events.k8s.io/v1 Event (a request body, or a view being patched) as the core v1 Event stored for it.
    Fields the view does not have are dropped, as decoding into the Go type drops them."""
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Event", "metadata": view.get("metadata")}
    pairs = (
        ("regarding", "involvedObject"),
        ("reason", "reason"),
        ("note", "message"),
        ("deprecatedSource", "source"),
        ("deprecatedFirstTimestamp", "firstTimestamp"),
        ("deprecatedLastTimestamp", "lastTimestamp"),
        ("deprecatedCount", "count"),
        ("type", "type"),
        ("eventTime", "eventTime"),
        ("series", "series"),
        ("action", "action"),
        ("related", "related"),
        ("reportingController", "reportingComponent"),
        ("reportingInstance", "reportingInstance"),
    )
    for view_key, core_key in pairs:
        if view_key in view:
            out[core_key] = view[view_key]
    return out
