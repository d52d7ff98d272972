"""The navigation registry: every place `:` (a digit, the palette, help) can take the operator, in one table.

A destination is a table view (a pure module of fleet/views/, drawn by tui/screens/table.py) or a tool screen of its
own (built on first use, so the app starts without importing every tool). Help's view list, the `:` bar's
suggestions, the palette and the jump itself all read `DESTINATIONS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from dragoman.fleet.delta import Delta
from dragoman.fleet.views.attributes import AttributesView
from dragoman.fleet.views.base import Fleet, Ref, View
from dragoman.fleet.views.claims import ClaimsView
from dragoman.fleet.views.devices import DevicesView
from dragoman.fleet.views.events import EventsView
from dragoman.fleet.views.filter import RowFilter, parse_filter
from dragoman.fleet.views.findings import FindingsView
from dragoman.fleet.views.nodes import NodesView
from dragoman.fleet.views.pending import StuckView
from dragoman.fleet.views.pools import PoolsView

if TYPE_CHECKING:
    from textual.screen import Screen

__all__ = [
    "DESTINATIONS",
    "JUMPS",
    "SCREENS",
    "VIEWS",
    "VIEW_DOCS",
    "AttributesView",
    "ClaimsView",
    "Destination",
    "DevicesView",
    "EventsView",
    "Fleet",
    "FindingsView",
    "NodesView",
    "PoolsView",
    "Ref",
    "RowFilter",
    "StuckView",
    "Touched",
    "View",
    "jump_candidates",
    "parse_filter",
    "resolve_jump",
    "touched_by",
]


def _playground() -> Screen:
    from dragoman.tui.screens.playground import PlaygroundScreen

    return PlaygroundScreen()


def _migrate() -> Screen:
    from dragoman.tui.screens.migrate import MigrateScreen

    return MigrateScreen()


def _accounting() -> Screen:
    from dragoman.tui.screens.accounting import AccountingScreen

    return AccountingScreen()


def _load() -> Screen:
    from dragoman.tui.screens.load import LoadScreen

    return LoadScreen()


@dataclasses.dataclass(frozen=True)
class Destination:
    """One `:` target: its name, digit, aliases (k9s's short names too), what it shows, and what opens."""

    name: str
    digit: str
    aliases: tuple[str, ...]
    doc: str
    view: type[View] | None = None  # a table view
    screen: Callable[[], Screen] | None = None  # a tool screen of its own
    # Neither: an app action (ctx switches the kubeconfig context).
    screen_title: str = ""  # what a tool screen is called (a table view's title is its View's)

    @property
    def title(self) -> str:
        """What the screen it opens is called: `:po` suggests "po→Stuck pods", the view a k9s user means by pods."""
        return self.view.title if self.view is not None else self.screen_title


DESTINATIONS: tuple[Destination, ...] = (
    Destination("pools", "1", ("pool",), "pools, their GPUs on each mechanism, ownership, findings", view=PoolsView),
    Destination(
        "nodes",
        "2",
        ("node", "no"),
        "nodes (of a pool after enter on it): plugin and driver pods, GPUs, devices",
        view=NodesView,
    ),
    Destination(
        "devices",
        "3",
        ("device", "dev"),
        "driver → pool → node → device; / attr=value filters by attribute",
        view=DevicesView,
    ),
    Destination(
        "claims",
        "4",
        ("claim", "resourceclaims", "rc"),
        "claims → pods → devices → node; bridge-made marked ⇄; pending first",
        view=ClaimsView,
    ),
    Destination(
        # dragoman's pods view: the pods in trouble with their GPUs (k9s's :po, :pod, :pods come here).
        "pending",
        "5",
        ("pods", "pod", "po", "stuck"),
        "stuck GPU pods with their finding; d: evidence, the scheduler's words, the fix",
        view=StuckView,
    ),
    Destination(
        "findings",
        "6",
        ("finding",),
        "every finding; filter severity=error, id=both-stacks, pool=NAME",
        view=FindingsView,
    ),
    Destination(
        "attributes",
        "7",
        ("attrs", "attribute", "attr"),
        "every attribute and capacity published, its values, counts and pools",
        view=AttributesView,
    ),
    Destination(
        "events",
        "",
        ("event", "ev"),
        "every event, warnings and the newest first; enter: the object it is about (l: a pod's log)",
        view=EventsView,
    ),
    Destination(
        "cel",
        "",
        ("playground",),
        "the CEL playground: a selector against every device, live",
        screen=_playground,
        screen_title="CEL playground",
    ),
    Destination(
        "migrate",
        "",
        ("mig", "migration"),
        "the migration wizard: pick a pool, see its plan, apply, roll back",
        screen=_migrate,
        screen_title="Migration wizard",
    ),
    Destination(
        "accounting",
        "",
        ("acct", "quota", "quotas"),
        "GPUs as allocatable, slices and claims count them; quotas a move changes",
        screen=_accounting,
        screen_title="Accounting",
    ),
    Destination(
        "load",
        "",
        (),
        "claims, rates, slices, Pending pods and API objects over time; what a pool's move adds",
        screen=_load,
        screen_title="Load",
    ),
    Destination("ctx", "", ("context", "contexts"), "switch kubeconfig context", screen_title="Contexts"),
)

# Read-only indexes of the one table above.
BY_NAME: dict[str, Destination] = {d.name: d for d in DESTINATIONS}
VIEWS: dict[str, type[View]] = {d.name: d.view for d in DESTINATIONS if d.view is not None}
SCREENS: dict[str, Callable[[], Screen]] = {d.name: d.screen for d in DESTINATIONS if d.screen is not None}
VIEW_DOCS = tuple((d.name, d.digit, d.aliases, d.doc) for d in DESTINATIONS)
JUMPS = {alias: d.name for d in DESTINATIONS for alias in (d.name, *d.aliases)}


def jump_candidates(text: str) -> list[tuple[str, str]]:
    """(name typed, view) pairs starting with `text`: views by their own names first, in the digits' order, then
    aliases."""
    t = text.strip().lower()
    names = [(d.name, d.name) for d in DESTINATIONS if d.name.startswith(t)]
    aliases = [(a, d.name) for d in DESTINATIONS for a in d.aliases if a.startswith(t)]
    exact = [c for c in names + aliases if c[0] == t]
    return exact + [c for c in names + aliases if c not in exact]


def resolve_jump(text: str) -> str | None:
    """The view `:text` means: an exact name or alias, else the one view every name starting with it leads to."""
    t = text.strip().lower()
    if t in JUMPS:
        return JUMPS[t]
    targets = {v for _a, v in jump_candidates(t)} if t else set()
    return targets.pop() if len(targets) == 1 else None


# The model's delta under the name the table screens and their tests know it by.
Touched = Delta


def touched_by(fleet: Fleet, changes: Sequence[Any], before: dict | None = None) -> Delta:
    """Which rows a batch of (already absorbed) changes touched: the model decides (fleet/delta.py)."""
    return fleet.model.delta(changes, before)
