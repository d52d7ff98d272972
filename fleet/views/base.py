"""What every view is and reads: the `View` protocol (columns, rows, what a delta touches, where enter goes) and
`Fleet`, the model with the latest diagnosis and attribute catalogue. No Textual: the table screen draws any View."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from dragoman.fleet.delta import Delta
from dragoman.fleet.findings import Finding
from dragoman.fleet.model import FleetModel

Ref = tuple[str, str, str]  # (kind, namespace, name)
Column = tuple[str, str, int, int | None]  # (key, header, narrowest, widest; None: takes what is left)
Row = tuple[Hashable, tuple, dict]  # (key, cells, facets the `/` filter reads)


class Fleet:
    """What every view reads: the model, the latest diagnosis by object and by pool, and the attribute catalogue."""

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
                self.by_object[(ref[0], ref[1], ref[2])].append(f)
            if f.pool:
                self.by_pool[f.pool].append(f)
        self.diagnosed = True


class View:
    """One table view. Each view module (fleet/views/<name>.py) names its columns and turns model objects into rows."""

    name = ""
    title = ""
    columns: Sequence[Column] = ()
    empty = "nothing to show"
    uses_findings = False
    uses_catalogue = False
    shows_summary = False  # a line above the table (`summary`), redrawn at most twice a second
    trim_middle: tuple[str, ...] = ("node", "pod", "claim", "object")
    # On a screen too narrow for the row: these columns give up width, in this order (down to their minimum, cut as
    # `trim_middle` says), until `reach` — (column, cells) — shows that many cells of its column on the first screen.
    give_way: tuple[str, ...] = ()
    reach: tuple[str, int] | None = None
    # The column k9s's Shift-N sorts by (its NAME); None: the first.
    name_column: str | None = None
    # The column that stays on screen when the rows scroll sideways (the columns before it scroll away first); None:
    # the first. A view whose rows are named further right (Devices: driver → pool → node → DEVICE) pins the name.
    pinned: str | None = None

    def __init__(self, scope: tuple[str, str] | None = None) -> None:
        # ("pool", name) or ("node", name): a drilled-down view shows only that part of the fleet.
        self.scope = scope

    @property
    def heading(self) -> str:
        return self.title + (f" of {self.scope[0]} {self.scope[1]}" if self.scope else "")

    def sort_key(self, key: Any, row: tuple) -> Any:
        return key

    def all_rows(self, fleet: Fleet) -> Iterable[Row]:
        raise NotImplementedError

    def row(self, fleet: Fleet, key: Any) -> tuple[tuple, dict] | None:
        raise NotImplementedError

    def order(self, fleet: Fleet) -> Iterable[tuple[Hashable, Any]] | None:
        """Every row's key and its sort key, without building its cells: a view that can say so has only the rows on
        screen built (the rest when a filter reads them). The sort key must be what `sort_key` says of the row's cells.
        None: this view builds every row (few rows, or a place that needs the cells)."""
        return None

    def rows_near(self, fleet: Fleet, key: Any) -> Iterable[Row]:
        """The row of `key` (none if it is gone), and any rows as cheap to build with it (a Devices row comes with the
        rest of its pool's)."""
        r = self.row(fleet, key)
        return [(key, r[0], r[1])] if r is not None else []

    def affected(self, fleet: Fleet, t: Delta) -> Iterable[Hashable] | None:
        """Keys to recompute for this delta; None means recompute every row (rare changes only)."""
        return None

    def regroup(self, fleet: Fleet, t: Delta) -> tuple[Iterable[Row], Any] | None:
        """Rows a delta may add or drop as a group: (the group's fresh rows, a test `key -> bool` for its current keys).

        None when rows only change in place (most views); the Devices view answers for a changed slice pool."""
        return None

    def ref(self, fleet: Fleet, key: Any) -> Ref | None:
        """The API object behind a row, for `y` and `d`."""
        return None

    def drill(self, fleet: Fleet, key: Any) -> tuple[str, tuple[str, str] | None] | None:
        """Where `enter` goes: (view name, scope), or None to open the describe page."""
        return None

    def findings_changed(self, fleet: Fleet, refs: set[Ref], pools: set[str]) -> Iterable[Hashable] | None:
        """Keys to recompute after a new diagnosis changed the findings of these objects and pools; None: every row.

        Only asked of views with `uses_findings`."""
        return None

    def empty_text(self, fleet: Fleet) -> str:
        """What the table says when it has no row (a view whose emptiness means something only once the first
        diagnosis has finished says so until then)."""
        return self.empty

    def summary(self, fleet: Fleet) -> str:
        """The line above the table, for views that set `shows_summary`."""
        return ""

    def palette(self, fleet: Fleet) -> list[tuple[str, str, str]]:
        """Extra filters for ctrl+p: (title, help, filter text)."""
        return []
