"""The Events view (k9s's :events): every Event the cluster keeps, core/v1 or events.k8s.io/v1 (the store reads both
shapes: `involvedObject`/`regarding`, `count`/`series`), warnings first, then by when they last happened; enter and `d`
open the object an event is about, `l` its log when it is a pod."""

from __future__ import annotations

from dragoman.fleet.k8s.times import parse_time
from dragoman.fleet.model import event_count, event_last_seen
from dragoman.fleet.views.base import View
from dragoman.fleet.views.cells import Cell, age_text

# The object first (the column that stays when the rest scrolls sideways), the message last (it takes the rest).
COLUMNS = (
    ("object", "OBJECT", 10, 44),
    ("type", "TYPE", 6, 7),
    ("reason", "REASON", 6, 24),
    ("age", "LAST SEEN", 4, 9),
    ("count", "COUNT", 5, 5),
    ("message", "MESSAGE", 16, None),
)


def regarding(event: dict) -> tuple[str, str, str]:
    """(kind, namespace, name) of the object an Event is about, in either API's shape."""
    inv = event.get("involvedObject") or event.get("regarding") or {}
    return (str(inv.get("kind") or ""), str(inv.get("namespace") or ""), str(inv.get("name") or ""))


def event_row(event: dict, now: float | None) -> tuple:
    kind, ns, name = regarding(event)
    etype = str(event.get("type") or "Normal")
    return (
        f"{kind} {ns + '/' if ns else ''}{name}" if kind else "—",
        Cell(etype, "warning" if etype == "Warning" else None),
        str(event.get("reason") or "—"),
        age_text(event_last_seen(event) or None, now),
        str(event_count(event)),
        " ".join(str(event.get("message") or event.get("note") or "").split()),
    )


class EventsView(View):
    name, title = "events", "Events"
    columns = COLUMNS
    name_column = "object"
    trim_middle = ("object",)
    empty = "no events: an API server keeps them for an hour (--event-ttl) after they last happen"

    def __init__(self, scope=None) -> None:
        super().__init__(scope)
        self._seen: dict = {}  # row key -> when the event last happened (epoch seconds), for the order

    def sort_key(self, key, row):
        # Warnings first, then the newest first: what an operator opens events for.
        return (0 if row[1].tone == "warning" else 1, -self._seen.get(key, 0.0), key)

    def row(self, fleet, key):
        ev = fleet.model.objects["Event"].get(key)
        if ev is None:
            return None
        self._seen[key] = parse_time(event_last_seen(ev) or None) or 0.0
        kind, ns, name = regarding(ev)
        return event_row(ev, fleet.model.now), {
            "type": str(ev.get("type") or "Normal"),
            "reason": str(ev.get("reason") or ""),
            "kind": kind,
            "namespace": ns,
            "name": name,
        }

    def all_rows(self, fleet):
        for key in list(fleet.model.objects["Event"]):
            r = self.row(fleet, key)
            if r:
                yield key, r[0], r[1]

    def affected(self, fleet, t):
        return None if t.everything else t.events

    def ref(self, fleet, key):
        """The object the event is about (its describe page says the rest, events included); the Event itself when
        that object is gone."""
        ev = fleet.model.objects["Event"].get(key)
        if ev is None:
            return None
        about = regarding(ev)
        store = fleet.model.objects.get(about[0])
        if about[0] and store is not None and (about[1], about[2]) in store:
            return about
        return ("Event", key[0], key[1])

    def palette(self, fleet):
        return [("events: only warnings", "filter type=Warning", "type=Warning")]
