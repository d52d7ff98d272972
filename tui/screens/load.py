"""The load view (`:load`): claims, their create/delete rates, slices and Pending pods over time as sparklines, the
API server's object counts and storage size, the claim forecast per pool, and before/after baselines."""

from __future__ import annotations

from dragoman.fleet import baseline, forecast, load
from dragoman.tui.screens.prompt import ToolScreen
from dragoman.widgets.command_bar import CommandBar
from dragoman.widgets.footer import SteadyFooter
from dragoman.widgets.header import StatusHeader
from dragoman.widgets.load import (
    FORECAST_COLUMNS,
    PROMETHEUS_SERIES,
    SAMPLE_INTERVAL,
    SERIES,
    figure_text,
    forecast_cells,
    latest_value,
    migration_lines,
    sampler_of,
    spark_data,
)
from dragoman.widgets.marked_table import MarkedTable
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Sparkline, Static


class LoadScreen(ToolScreen):
    """Counts over time from the model (and /metrics, and Prometheus when given), the forecast per pool, baselines."""

    help_title = "Load"

    BINDINGS = [
        Binding("escape,q", "back", "Back", id="load.back", tooltip="Back to the previous view"),
        Binding(
            "m",
            "mark",
            "Mark baseline",
            id="load.mark",
            tooltip="Record the highlighted pool's figures now as a local baseline",
        ),
        Binding(
            "s",
            "sample",
            "Sample now",
            id="load.sample",
            tooltip="Take a sample now instead of waiting for the next one",
        ),
    ]
    DEFAULT_CSS = """
    LoadScreen .series { height: 1; }
    LoadScreen .series-label { width: 24; padding: 0 1; }
    LoadScreen .series-value { width: 12; text-align: right; padding: 0 1; }
    LoadScreen .series-source { width: 20; color: $text-muted; padding: 0 1; }
    LoadScreen Sparkline { width: 1fr; height: 1; }
    LoadScreen #load-forecast { height: auto; max-height: 12; }
    LoadScreen #load-forecast-heading { height: 1; padding: 0 1; text-style: bold; background: $boost; }
    LoadScreen #load-notes { height: auto; padding: 0 1; color: $text-muted; }
    LoadScreen #load-baselines { height: auto; padding: 0 1; }
    """

    def __init__(self, interval: float = SAMPLE_INTERVAL, window_hours: float = forecast.DEFAULT_WINDOW_HOURS) -> None:
        super().__init__("load")
        self.interval = interval
        self.window_hours = window_hours
        self.pool: str | None = None
        self.api_note = ""
        self.prometheus_note = ""
        self._pool_keys: list[str] = []
        self._reading = False

    def _series(self) -> tuple:
        return SERIES + (PROMETHEUS_SERIES if getattr(self.app, "prometheus_url", None) else ())

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        # Before/after first, and the body scrolls: at 80×24 with Prometheus' rows the series pushed it off the screen.
        with VerticalScroll(id="body", can_focus=False):
            yield Static("Control-plane load: counts over time, and what moving a pool adds", id="heading")
            yield Static("", id="load-baselines", markup=False)
            for name, label, source in self._series():
                ident = name.replace(".", "-")
                with Horizontal(classes="series"):
                    yield Static(label, classes="series-label")
                    yield Static("-", classes="series-value", id=f"value-{ident}")
                    yield Sparkline([], summary_function=max, id=f"spark-{ident}")
                    yield Static(source, classes="series-source")
            yield Static("", id="load-notes", markup=False)
            yield Static(
                f"Forecast: GPU pods created per hour on each pool (last {self.window_hours:g} h) ⇒ claims per hour "
                "once it is on DRA",
                id="load-forecast-heading",
            )
            table: DataTable = MarkedTable(id="load-forecast", cursor_type="row")
            table.add_columns(*FORECAST_COLUMNS)
            yield table
        yield CommandBar()
        yield SteadyFooter()

    def focus_main(self) -> None:
        self.query_one("#load-forecast", DataTable).focus()

    def on_mount(self) -> None:
        self.app.refresh_header(self)
        self.focus_main()
        self.action_sample()
        self.sampling = self.set_interval(self.interval, self.action_sample)  # kept: a picture can hold it still
        # The page opens at its top, before/after first (the table's focus had scrolled the body down to it).
        self.call_after_refresh(lambda: self.query_one("#body", VerticalScroll).scroll_home(animate=False))
        self.ready = True
        if hasattr(self.app, "screen_ready"):
            self.app.screen_ready()

    # ------------------------------------------------------------------ sampling
    def action_sample(self) -> None:
        # The model's counts are taken at once; /metrics and Prometheus fill the same sample when they answer. A tick
        # that comes while they are still being read is skipped, not queued: a slow server never piles requests up.
        feed = self.app.feed
        if not feed.loaded or self._reading:
            return
        sample = sampler_of(feed).sample(feed.model)
        self.render_figures()
        self._reading = True
        self.run_worker(self._read_remote(sample), group="load-sample", description="read /metrics and Prometheus")

    async def _read_remote(self, sample: load.LoadSample) -> None:
        feed = self.app.feed
        try:
            cluster = getattr(feed, "cluster", None)
            if cluster is not None:
                sample.api, self.api_note = await load.read_apiserver_metrics(cluster)
            else:
                self.api_note = "a snapshot has no /metrics"
            url = getattr(self.app, "prometheus_url", None)
            if url:
                sample.prometheus, self.prometheus_note = await load.query_prometheus(url)
        finally:
            self._reading = False
        self.render_figures()

    def render_figures(self) -> None:
        feed = self.app.feed
        sampler = sampler_of(feed)
        for name, _label, _source in self._series():
            ident = name.replace(".", "-")
            self.query_one(f"#value-{ident}", Static).update(figure_text(latest_value(sampler, name)))
            self.query_one(f"#spark-{ident}", Sparkline).data = spark_data(sampler.series(name))
        notes = [
            f'{len(sampler.samples)} samples every {self.interval:g} s; "model" figures are counted from the objects '
            "dragoman watches, the others as their source reports them."
        ]
        latest = sampler.latest
        if latest is not None and latest.api is not None:
            objs = latest.api.objects
            notes.append(
                "API server: "
                + ", ".join(
                    f"{k} {objs[k]}"
                    for k in ("pods", "resourceclaims.resource.k8s.io", "resourceslices.resource.k8s.io")
                    if k in objs
                )
                + f" ({latest.api.metric})"
            )
        if self.api_note:
            notes.append(f"/metrics: {self.api_note}.")
        if getattr(self.app, "prometheus_url", None):
            if self.prometheus_note:
                notes.append(f"Prometheus: {self.prometheus_note}.")
        else:
            notes.append(
                "scheduler_pending_pods and the DRA scheduler metrics: start with --prometheus URL to read them."
            )
        self.query_one("#load-notes", Static).update("\n".join(notes))
        self._fill_forecast()

    def _fill_forecast(self) -> None:
        from dragoman.fleet.accounting import pool_accounts

        feed = self.app.feed
        sampler = sampler_of(feed)
        api_objects = sampler.latest.api.total_objects if sampler.latest is not None and sampler.latest.api else None
        table = self.query_one("#load-forecast", DataTable)
        accounts = pool_accounts(feed.model)
        keys = [a.pool for a in accounts]
        every = forecast.forecast_all(feed.model, self.window_hours, api_objects=api_objects, pools=keys)
        rows = [forecast_cells(every[a.pool], a.state_label) for a in accounts]
        if keys == self._pool_keys:
            for key, cells in zip(keys, rows):
                for col, value in zip(table.ordered_columns, cells):
                    table.update_cell(key, col.key, value)
        else:
            table.clear()
            for key, cells in zip(keys, rows):
                table.add_row(*cells, key=key)
            self._pool_keys = keys
        if self.pool is None and keys:
            self.pool = keys[0]
        self._show_baselines()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value != self.pool:
            self.pool = event.row_key.value
            self._show_baselines()

    def _cluster_id(self) -> str:
        info = self.app.feed.info
        return info.server or info.cluster or "(unknown cluster)"

    def _show_baselines(self) -> None:
        if not self.pool:
            return
        model = self.app.feed.model
        lines = []
        recorded = baseline.recorded(model, self.pool)
        local = baseline.marks(self._cluster_id(), self.pool)
        now = baseline.figures_of(model, self.pool)
        lines.extend(migration_lines(recorded))
        if lines:
            recorded = []  # shown as before → after, not each against now
        for src, entries in (("migration ConfigMap", recorded), ("local mark", local[-3:])):
            for e in entries:
                changed = [(k, a, b) for k, a, b in baseline.compare(e.get("figures") or {}, now) if a != b]
                diff = (
                    ", ".join(f"{k} {figure_text(a)}→{figure_text(b)}" for k, a, b in changed[:6])
                    or "no figure changed"
                )
                lines.append(f"{src} {e.get('label', '')} {e.get('at', '')}: {diff}")
        if not lines:
            lines.append(
                f"No baseline of {self.pool} yet: press m to record its figures now (the migration records "
                "before/after figures in its ConfigMap)."
            )
        self.query_one("#load-baselines", Static).update(f"Before/after of {self.pool}:\n" + "\n".join(lines))

    def action_mark(self) -> None:
        if not self.pool:
            self.notify("highlight a pool first", severity="warning")
            return
        feed = self.app.feed
        latest = sampler_of(feed).latest
        api_objects = latest.api.total_objects if latest is not None and latest.api else None
        try:
            baseline.mark(
                self._cluster_id(), self.pool, baseline.figures_of(feed.model, self.pool, latest, api_objects)
            )
        except OSError as exc:
            self.notify(f"could not write the baseline: {exc}", severity="error")
            return
        self.notify(f"baseline of {self.pool} recorded in {baseline.default_path()}")
        self._show_baselines()
