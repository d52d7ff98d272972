"""The accounting view (`:accounting`): per pool allocatable vs slice devices vs allocations, what moving the
highlighted pool drops from sums and does to quotas, and PrometheusRules reading allocatable."""

from __future__ import annotations

import asyncio
import time
from typing import cast

from dragoman.fleet import accounting as A
from dragoman.tui.messages import FleetLoaded, RowsTouched
from dragoman.tui.screens.prompt import ToolScreen
from dragoman.widgets.accounting import (
    POOL_COLUMNS,
    QUOTA_COLUMNS,
    fleet_cells,
    pool_cells,
    quota_cells,
    rules_text,
    summary_text,
)
from dragoman.widgets.command_bar import CommandBar
from dragoman.widgets.footer import SteadyFooter
from dragoman.widgets.header import StatusHeader
from dragoman.widgets.marked_table import MarkedTable
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import DataTable, Static

REFRESH_GAP = 1.0  # at most one recomputation a second, however fast the watch events come


def _snapshot_rules(path: str) -> tuple[list[dict] | None, str]:
    """PrometheusRules kept in a snapshot file (the store reads only Kubernetes kinds, so the file is read again)."""
    from dragoman.fleet.snapshot import load_snapshot

    rules = [
        o
        for o in load_snapshot(path)
        if o.get("kind") == "PrometheusRule" and str(o.get("apiVersion", "")).startswith("monitoring.coreos.com/")
    ]
    if not rules:
        return None, "the snapshot holds no PrometheusRule"
    return rules, ""


class AccountingScreen(ToolScreen):
    """Per pool and fleet-wide accounting; the highlighted pool is the one whose move the quota table describes."""

    help_title = "Accounting"

    BINDINGS = [
        Binding("escape,q", "back", "Back", id="accounting.back", tooltip="Back to the previous view"),
        Binding(
            "m",
            "mark",
            "Mark baseline",
            id="accounting.mark",
            tooltip="Record this pool's figures now as a local baseline",
        ),
        Binding("y", "yaml", "YAML", id="accounting.yaml", tooltip="The selected quota as YAML"),
        Binding("d", "describe", "Describe", id="accounting.describe", tooltip="The selected quota's describe page"),
        Binding("R", "rules", "Reread rules", id="accounting.rules", tooltip="Read PrometheusRules again", show=False),
    ]
    DEFAULT_CSS = """
    AccountingScreen #acc-summary { height: auto; max-height: 4; padding: 0 1; color: $text; }
    AccountingScreen #acc-pools { height: auto; max-height: 14; }
    AccountingScreen #acc-quota-heading { height: 1; padding: 0 1; text-style: bold; background: $boost; }
    AccountingScreen #acc-quotas { height: auto; max-height: 10; }
    AccountingScreen #acc-meaning { height: auto; padding: 0 1; color: $text-muted; }
    AccountingScreen #acc-rules { height: auto; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, pool: str | None = None) -> None:
        super().__init__("accounting")
        self.pool = pool
        self.acc: A.Accounting | None = None
        self.rules: list[dict] | None = None
        self.rules_note = ""
        self.rules_done = False
        self._last = 0.0
        self._cost = 0.0
        self._timer: Timer | None = None
        self._pool_keys: list[str] = []
        self._quota_keys: list[tuple] = []
        self._unsub = None

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        with Vertical(id="body"):
            yield Static("Accounting: what sums of node allocatable see, and what moving a pool changes", id="heading")
            yield Static("", id="acc-summary")
            pools: DataTable = MarkedTable(id="acc-pools", cursor_type="row", zebra_stripes=True)
            pools.add_columns(*POOL_COLUMNS)
            yield pools
            yield Static("", id="acc-quota-heading")
            quotas: DataTable = MarkedTable(id="acc-quotas", cursor_type="row")
            quotas.add_columns(*QUOTA_COLUMNS)
            yield quotas
            yield Static("", id="acc-meaning", markup=False)
            yield Static("", id="acc-rules", markup=False)
        yield CommandBar()
        yield SteadyFooter()

    def focus_main(self) -> None:
        self.query_one("#acc-pools", DataTable).focus()

    def on_mount(self) -> None:
        self.app.refresh_header(self)
        self.focus_main()
        self.app.feed.listen(self)
        self.recompute()
        self.read_rules()
        self.ready = True
        if hasattr(self.app, "screen_ready"):
            self.app.screen_ready()

    def on_unmount(self) -> None:
        self.app.feed.unlisten(self)

    # ------------------------------------------------------------------ data
    def on_fleet_loaded(self, _: FleetLoaded) -> None:
        self.recompute()

    def on_rows_touched(self, _: RowsTouched) -> None:
        # On a large fleet one recomputation takes a while: keep the loop free at least 90% of the time.
        gap = max(REFRESH_GAP, 10 * self._cost)
        since = time.monotonic() - self._last
        if since >= gap:
            self.recompute()
        elif self._timer is None:
            self._timer = self.set_timer(gap - since, self._deferred)

    def _deferred(self) -> None:
        self._timer = None
        self.recompute()

    def recompute(self) -> None:
        feed = self.app.feed
        if not feed.loaded:
            self.query_one("#acc-summary", Static).update("loading the fleet…")
            return
        t0 = time.monotonic()
        acc = A.account(feed.model, self.pool, self.rules, self.rules_note)
        self._last = time.monotonic()
        self._cost = self._last - t0
        if self.pool is None:
            self.pool = acc.pool
        self.acc = acc
        self._fill_pools(acc)
        self._fill_quotas(acc)
        self.query_one("#acc-summary", Static).update(summary_text(acc))
        self.query_one("#acc-rules", Static).update(rules_text(acc))

    def _fill_pools(self, acc: A.Accounting) -> None:
        table = self.query_one("#acc-pools", DataTable)
        keys = [a.pool for a in acc.pools] + ["(fleet)"]
        rows = [pool_cells(a) for a in acc.pools] + [fleet_cells(acc.totals)]
        if keys == self._pool_keys:
            for key, cells in zip(keys, rows):
                for col, value in zip(table.ordered_columns, cells):
                    table.update_cell(key, col.key, value)
        else:
            current = self.pool
            table.clear()
            for key, cells in zip(keys, rows):
                table.add_row(*cells, key=key)
            self._pool_keys = keys
            if current in keys:
                table.move_cursor(row=keys.index(current), animate=False)

    def _fill_quotas(self, acc: A.Accounting) -> None:
        table = self.query_one("#acc-quotas", DataTable)
        heading = (
            f"Quotas counting GPUs or claims: now, and after {acc.pool} moves"
            if acc.pool
            else "Quotas counting GPUs or claims"
        )
        self.query_one("#acc-quota-heading", Static).update(heading)
        table.clear()
        self._quota_keys = []
        for q in acc.quotas:
            key = (q.namespace, q.quota, q.resource)
            table.add_row(*quota_cells(q), key="|".join(key))
            self._quota_keys.append(key)
        meaning = "\n".join(
            f"{q.namespace}/{q.quota} {q.resource}: {q.meaning}" for q in acc.quotas if q.changes_meaning or q.changes
        )
        self.query_one("#acc-meaning", Static).update(
            meaning or ("no ResourceQuota counts GPUs or claims" if not acc.quotas else "")
        )

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id != "acc-pools" or event.row_key is None:
            return
        key = event.row_key.value
        if key and key != "(fleet)" and key != self.pool:
            self.pool = key
            self.recompute()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """enter: a pool opens its nodes; a quota opens its describe page."""
        key = event.row_key.value if event.row_key is not None else None
        if event.data_table.id == "acc-pools" and key and key != "(fleet)":
            self.app.open_view("nodes", ("pool", key))
        elif event.data_table.id == "acc-quotas" and key:
            self.action_describe()

    def _quota_ref(self):
        table = self.query_one("#acc-quotas", DataTable)
        if self.focused is not table or not self._quota_keys or table.cursor_row >= len(self._quota_keys):
            return None
        ns, name, _resource = self._quota_keys[table.cursor_row]
        return ("ResourceQuota", ns, name)

    def action_yaml(self) -> None:
        ref = self._quota_ref()
        if ref is None:
            self.notify("select a quota row (tab moves to the quota table)", severity="warning")
            return
        self.app.open_detail(ref, "yaml")

    def action_describe(self) -> None:
        ref = self._quota_ref()
        if ref is None:
            self.notify("select a quota row (tab moves to the quota table)", severity="warning")
            return
        self.app.open_detail(ref, "describe")

    # ------------------------------------------------------------------ actions
    def read_rules(self) -> None:
        self.rules_done = False
        feed = self.app.feed
        cluster = getattr(feed, "cluster", None)
        source = getattr(feed.store, "source", "") or ""
        if cluster is None and not (source.startswith("snapshot ") and source != "snapshot -"):
            self.rules, self.rules_note, self.rules_done = None, "this source has no monitoring API to ask", True
            return
        self.run_worker(
            self._read_rules(cluster, source[len("snapshot ") :] if cluster is None else None),
            exclusive=True,
            group="accounting-rules",
            description="read PrometheusRules",
        )

    async def _read_rules(self, cluster, snapshot_path: str | None) -> None:
        try:
            if cluster is not None:
                rules, note = await A.read_prometheus_rules(cluster)
            else:
                # Without a cluster the source is a snapshot, whose path the caller passes.
                rules, note = await asyncio.to_thread(_snapshot_rules, cast(str, snapshot_path))
        except Exception as exc:  # noqa: BLE001 - the view stays useful without rules; say why they are missing
            rules, note = None, getattr(exc, "message", str(exc))
        self.rules, self.rules_note = rules, note
        self.rules_done = True
        self.recompute()

    def action_rules(self) -> None:
        self.read_rules()

    def action_mark(self) -> None:
        from dragoman.fleet import baseline

        if not self.pool:
            self.notify("highlight a pool first", severity="warning")
            return
        feed = self.app.feed
        cluster = feed.info.server or feed.info.cluster or "(unknown cluster)"
        try:
            baseline.mark(cluster, self.pool, baseline.figures_of(feed.model, self.pool))
        except OSError as exc:
            self.notify(f"could not write the baseline: {exc}", severity="error")
            return
        self.notify(f"baseline of {self.pool} recorded in {baseline.default_path()}")
