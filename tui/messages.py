"""The feed's news for the screens, as typed Textual messages: the fleet was loaded, rows were touched, findings or
the attribute catalogue changed, the connection changed.

A screen (or the App) that wants them calls `feed.listen(self)` when mounted and `feed.unlisten(self)` when unmounted,
and handles them the Textual way (`on_rows_touched`, ...). They do not bubble: each listener gets its own copy, so a
screen's handler never reaches the App a second time.
"""

from __future__ import annotations

from dragoman.fleet.delta import Delta
from dragoman.fleet.store import ConnectionState
from dragoman.fleet.views.base import Ref
from textual.message import Message


class FeedMessage(Message, bubble=False):
    """Something the feed tells every listener."""


class FleetLoaded(FeedMessage):
    """The model holds the whole fleet now: fill the view."""


class RowsTouched(FeedMessage):
    """A batch of watch changes was absorbed: recompute the rows it touched."""

    def __init__(self, touched: Delta) -> None:
        super().__init__()
        self.touched = touched


class FindingsChanged(FeedMessage):
    """A diagnosis ended with other findings for these objects and pools."""

    def __init__(self, refs: set[Ref], pools: set[str]) -> None:
        super().__init__()
        self.refs = refs
        self.pools = pools


class CatalogueChanged(FeedMessage):
    """The attribute catalogue (what the devices publish) was recomputed."""


class ConnectionChanged(FeedMessage):
    """The picture's connection state changed (live, reconnecting, ...): the header says it."""

    def __init__(self, state: ConnectionState) -> None:
        super().__init__()
        self.state = state
