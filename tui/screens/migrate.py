"""`:migrate`: the migration wizard of one pool — the whole plan, each step's state, live progress, confirmation,
verification and rollback. It steps: the selected step runs alone after its own confirmation, the wizard stops after
it, says what the step verified and offers the next; "run all" is the explicit choice to go to the end."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

from dragoman.fleet.glyphs import glyph, labelled
from dragoman.tui.bindings import MIGRATE_KEYS, MIGRATE_MOVES, PICKER_MOVES, dangerous_actions, textual_bindings
from dragoman.tui.screens.base import DragomanScreen
from dragoman.widgets.footer import SteadyFooter
from dragoman.widgets.header import StatusHeader
from dragoman.widgets.marked_table import MarkedTable
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.markup import escape
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, Input, Label, OptionList, ProgressBar, RichLog, Static
from textual.widgets.option_list import Option

STATE_MARK = {
    "pending": labelled("none", "pending"),  # not run yet
    "running": labelled("now", "running"),
    "done": labelled("done", "done"),
    "failed": labelled("failed", "failed"),
    "no change": labelled("same", "no change"),
    "skipped": labelled("skipped", "skipped"),
}


# The name a wizard left while its run goes on is installed under (one run at a time: the pool lock says so).
RUNNING = "migrate-running"


def open_wizard(app, make: Callable[[], Screen]) -> None:
    """Push the wizard the operator left running, if there is one, else a new one from `make`."""
    if app.is_screen_installed(RUNNING) and app.get_screen(RUNNING) not in app.screen_stack:
        app.push_screen(RUNNING)
        return
    app.push_screen(make())


class MigrateScreen(DragomanScreen):
    """The wizard for one pool. Writes (apply, rollback) are absent in read-only mode, and always go through a
    confirmation."""

    help_title = "migration wizard"

    BINDINGS = [
        *textual_bindings(MIGRATE_KEYS),
        # k9s habits: j/k move on the picker's list and on the steps alike.
        Binding("j", "move(1)", "Down", show=False, id="migrate.down"),
        Binding("k", "move(-1)", "Up", show=False, id="migrate.up"),
    ]
    DANGEROUS = dangerous_actions(MIGRATE_KEYS)

    DEFAULT_CSS = """
    MigrateScreen #mig-title { height: auto; padding: 0 1; background: $panel; }
    MigrateScreen #mig-blocked { height: auto; padding: 0 1; color: $text-error; text-style: bold; display: none; }
    MigrateScreen #mig-steps { height: auto; max-height: 12; }
    MigrateScreen #mig-detail { height: auto; padding: 0 1; display: none; }
    MigrateScreen .bar-row { height: 1; padding: 0 1; }
    MigrateScreen .bar-row Label { width: 36; }
    MigrateScreen #mig-verified { height: auto; padding: 0 1; display: none; }
    MigrateScreen #mig-log { height: 1fr; border-top: solid $panel; }
    MigrateScreen #mig-pools { height: 1fr; }
    """

    def __init__(
        self,
        pool: str | None = None,
        *,
        cluster: Any = None,
        options: Any = None,
        audit_path: str | None = None,
        read_only: bool | None = None,
        pool_label: str | None = None,
        steps: list[str] | None = None,
    ) -> None:
        super().__init__(name="migrate")
        self.pool = pool
        self._cluster = cluster
        self.options = options
        self.audit_path = audit_path
        self._read_only = read_only
        self.pool_label = pool_label
        self.steps = steps
        self.plan: Any = None
        self.runner: Any = None
        self.result: Any = None
        self.busy = False
        self.error = ""
        self.step_state: dict[str, str] = {}
        # Options not given (the app opened the wizard): the batch size and canary node are suggested from the pool.
        self.suggest = options is None
        self.batch_why = ""
        # The run's lines (timestamped), kept across re-plans: the plan's text is drawn again above them.
        self.run_lines: list[str] = []
        self.running_step = ""
        self.step_started = 0.0
        self.step_offsets: dict[str, int] = {}

    # ------------------------------------------------------------------ facts
    @property
    def help_moves(self) -> tuple[tuple[str, str], ...]:
        """What help lists under "Also": the picker's keys until a pool is chosen, then the plan's."""
        return PICKER_MOVES if self.pool is None else MIGRATE_MOVES

    @property
    def read_only(self) -> bool:
        if self._read_only is not None:
            return self._read_only
        return bool(getattr(self.app, "read_only", False))

    @property
    def cluster(self) -> Any:
        if self._cluster is not None:
            return self._cluster
        feed = getattr(self.app, "feed", None)
        return getattr(feed, "cluster", None)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        # Read-only: the dangerous keys do not exist (hidden from the footer, palette and keyboard alike).
        if action in self.DANGEROUS and self.read_only:
            return False
        if action in self.DANGEROUS and self.busy:
            return None
        if action in (*self.DANGEROUS, "replan", "batches") and self.pool is None:
            return False  # the picker: no plan yet, so the footer does not offer to apply one
        if action == "batches" and self.busy:
            return None
        return True

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield StatusHeader()
        yield Static("", id="mig-title")
        yield Static("", id="mig-blocked", markup=False)
        # After a step ran (step mode): what its verification proved, or what it found.
        yield Static("", id="mig-verified", markup=False)
        if self.pool is None:
            yield OptionList(id="mig-pools")
        table: DataTable = MarkedTable(id="mig-steps", cursor_type="row", zebra_stripes=True)
        yield table
        # The selected step in full: at 80 columns WHAT is cut ("Exclude the device plug…").
        yield Static("", id="mig-detail", markup=False)
        with Horizontal(classes="bar-row"):
            yield Label("overall", id="mig-overall-label")
            yield ProgressBar(id="mig-overall", show_eta=False)
        with Horizontal(classes="bar-row"):
            yield Label("step", id="mig-step-label")
            yield ProgressBar(id="mig-step", show_eta=False)
        # Not following the end by itself: the plan is read from its top; run lines ask to follow (log_line).
        yield RichLog(id="mig-log", wrap=True, markup=False, highlight=False, auto_scroll=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        # Progress bars appear with the first run: idle bars pulsed, and "overall" showed a share before anything ran.
        for row in self.query(".bar-row"):
            row.display = False
        self.set_interval(1.0, self._tick)
        refresh = getattr(self.app, "refresh_header", None)
        if callable(refresh):
            try:
                refresh(self)
            except Exception:  # noqa: BLE001 - an app without a feed has no header to fill
                pass
        if self.cluster is None:
            self._title(
                "a snapshot (or a disconnected view) cannot be migrated: open dragoman on a cluster or with --demo"
            )
            return
        if self.pool is None:
            self._title("pick the pool to migrate (enter)")
            self.list_pools()
        else:
            self.make_plan()

    def _title(self, text: str) -> None:
        # Escaped: the title carries the API's and the runner's words (an error naming `spec.devices[0]` or holding
        # `[/]`), which Textual would read as markup — dropping the bracketed part or failing to render.
        ro = "  [READ-ONLY: plan only]" if self.read_only else ""
        self.query_one("#mig-title", Static).update(escape(text + ro))

    def log_line(self, text: str) -> None:
        """A line of the run, with the time it happened (kept when the plan is drawn again)."""
        line = f"{time.strftime('%H:%M:%S')} {text}"
        self.run_lines.append(line)
        for log in self.query("#mig-log").results(RichLog):
            log.write(line, scroll_end=True)

    def _drawn(self) -> bool:
        """Whether the screen's widgets are there to draw on. A run outlives them while the app shuts down (Ctrl+Q
        mid-step): its progress is then kept (run_lines, step_state) and drawn by nothing, not raised as a crash."""
        return bool(self.query("#mig-log"))

    def _tick(self) -> None:
        """While a step runs: how long it has run, and how long it may wait, beside its name."""
        if not self.busy or not self.running_step:
            return
        elapsed = time.monotonic() - self.step_started
        text = f"{self.running_step} {_clock(elapsed)}"
        step = self._step(self.running_step)
        if step is not None:
            from dragoman.actions.registry import step_class

            limit = step_class(step.step).timeout(self.runner.options) if self.runner is not None else 0
            if limit:
                text += f" of {_clock(limit)}"
        self.query_one("#mig-step-label", Label).update(text)

    def _step(self, step_id: str):
        return next((s for s in self.plan.steps if s.id == step_id), None) if self.plan is not None else None

    # ------------------------------------------------------------------ pool picker
    def list_pools(self) -> None:
        """The picker: at once from the fleet the app already watches; from the API (with a line saying so while it
        reads) when the wizard has a cluster of its own. It stood as an empty box for 2-4 s while nodes were listed."""
        from dragoman.fleet.pools import UNLABELED

        feed = getattr(self.app, "feed", None)
        model = getattr(feed, "model", None)
        if self._cluster is None and model is not None and getattr(feed, "loaded", False):
            views = [v for v in model.pools() if v.name != UNLABELED]
            self._fill_picker({v.name: len(v.nodes) for v in views}, {v.name: v.ownership for v in views})
            return
        self.query_one("#mig-pools", OptionList).add_option(
            Option("reading the cluster's nodes and pools …", id="-reading", disabled=True)
        )
        self._list_pools_from_api(model)

    @work(exclusive=True, group="migrate-plan", description="list the pools")
    async def _list_pools_from_api(self, model) -> None:
        from dragoman.fleet.pools import pool_label_of

        nodes, _ = await self.cluster.list_all("/api/v1/nodes")
        label = self.pool_label or pool_label_of(nodes)
        pools: dict[str, int] = {}
        for n in nodes:
            p = ((n.get("metadata") or {}).get("labels") or {}).get(label or "")
            if p:
                pools[p] = pools.get(p, 0) + 1
        states = {}
        for p in pools:
            view = model.pool(p) if model is not None else None
            states[p] = view.ownership if view is not None else ""
        self._fill_picker(pools, states)

    def _fill_picker(self, pools: dict[str, int], states: dict[str, str]) -> None:
        ol = self.query_one("#mig-pools", OptionList)
        ol.clear_options()
        # Pools still to move first; those already on DRA next (selectable: their rollback is planned), those with no
        # GPU last, greyed: there is nothing to migrate or undo there.
        todo = [p for p in sorted(pools) if states.get(p) not in ("dra", "none")]
        moved = [p for p in sorted(pools) if states.get(p) == "dra"]
        idle = [p for p in sorted(pools) if states.get(p) == "none"]
        for p in todo:
            ol.add_option(
                Option(f"{p}  ({pools[p]} node{'s' if pools[p] != 1 else ''}, {states.get(p) or 'unknown'})", id=p)
            )
        for p in moved:
            ol.add_option(Option(f"{p}  (on DRA: enter plans its rollback)", id=p))
        for p in idle:
            ol.add_option(Option(f"{p}  (no GPUs)", id=p, disabled=True))
        self.pool_states = states
        if todo or moved:
            ol.highlighted = 0
        ol.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.pool = event.option.id
        event.option_list.display = False
        self.refresh_bindings()
        # A pool already on DRA: what there is to do is its rollback (shown; `r` runs it after a confirmation).
        self.make_plan(rollback=getattr(self, "pool_states", {}).get(self.pool) == "dra")

    def action_move(self, delta: int) -> None:
        pools = self.query("#mig-pools")
        if pools and pools.first().display:
            ol = cast(OptionList, pools.first())
            ol.action_cursor_down() if delta > 0 else ol.action_cursor_up()
            return
        table = self.query_one("#mig-steps", DataTable)
        table.action_cursor_down() if delta > 0 else table.action_cursor_up()

    # ------------------------------------------------------------------ plan
    def _runner(self):
        from dragoman.actions.runner import Runner
        from dragoman.actions.steps import Options

        return Runner(
            self.cluster,
            cast(str, self.pool),  # a plan is made only once a pool is picked
            pool_label=self.pool_label,
            options=self.options or Options(prometheus_url=getattr(self.app, "prometheus_url", None) or ""),
            audit_path=self.audit_path or getattr(self.app, "audit_path", None),
            read_only=self.read_only,
            progress=self.on_progress,
            warn=lambda m: self.log_line(f"! {m}"),
        )

    @work(exclusive=True, group="migrate-plan", description="build the migration plan")
    async def make_plan(self, rollback: bool = False) -> None:
        await self._build_plan(rollback)

    async def _build_plan(self, rollback: bool = False) -> None:

        self.plan = None
        self._title(f"pool {self.pool}: reading the cluster …")
        try:
            self.runner = self._runner()
            if self.suggest and not rollback:
                # Once: the canary node alone first, then batches the pool's PDBs and the free GPUs allow.
                self.suggest = False
                size, canary, why = await self.runner.suggest_batches()
                self.options = self.runner.options
                self.options.batch_size, self.options.canary_node = size, canary
                self.batch_why = why
            plan = await self.runner.prepare(self.steps, rollback=rollback)
        except Exception as exc:  # noqa: BLE001 - the sentence is shown; the screen stays
            self.error = str(getattr(exc, "message", exc))
            self._title(f"pool {self.pool}: ✗ {self.error}")
            self.log_line(f"✗ {self.error}")
            return
        self.plan = plan
        self.step_state = {s.id: ("pending" if s.writes or s.step == "preflight" else "no change") for s in plan.steps}
        if self.runner.state is not None:
            for s in plan.steps:
                if not rollback and self.runner.state.step_done(s.id) and not s.writes:
                    self.step_state[s.id] = "done"
        self._fill_table()
        nxt = self.next_step()
        if nxt is not None:
            # The wizard offers the next step: the cursor stands on it.
            self.query_one("#mig-steps", DataTable).move_cursor(row=plan.steps.index(nxt), animate=False)
        blocked = self.query_one("#mig-blocked", Static)
        blockers = list(plan.blockers)
        blocked.update(escape("\n".join(f"✗ blocked: {b}" for b in blockers)))  # the preflight's words, as written
        blocked.display = bool(blockers)
        what = "rollback" if rollback else "migration"
        n = len(plan.steps)
        title = f"pool {self.pool}: {what} plan {plan.id} — {n} step{'s' if n != 1 else ''}"
        opts = self.runner.options
        if not rollback and (opts.canary_node or opts.batch_size):
            title += (", a canary node first" if opts.canary_node else "") + (
                f", then {opts.batch_size} at a time" if opts.batch_size else ""
            )
        if rollback and not self.read_only:
            # The footer's keys act differently on a rollback plan: a plans and applies the migration again. (On a
            # migration plan the title said "(a: apply, r: roll back)", the footer's words again, and wrapped at 80.)
            title += "\nr rolls these steps back; a plans and applies the migration instead"
        self._title(title)
        self._render_plan()

    def _render_plan(self) -> None:
        """The plan's text at the screen's width, from its top (the first lines say what blocks it); the run's lines
        under it. The text follows the selected step (`_follow`)."""
        from dragoman.actions.plan import render

        if self.plan is None:
            return
        log = self.query_one("#mig-log", RichLog)
        log.clear()
        self._plan_width = self.size.width or 80
        lines = render(self.plan, width=max(40, self._plan_width - 4))
        self.step_offsets = {}
        for i, s in enumerate(self.plan.steps, 1):
            head = f"{i:>2}. {s.id} — "
            self.step_offsets[s.id] = next((j for j, line in enumerate(lines) if line.startswith(head)), 0)
        for line in lines:
            log.write(line, scroll_end=False)
        if self.run_lines:
            log.write("", scroll_end=False)
            for line in self.run_lines[-200:]:
                log.write(line, scroll_end=False)
        log.scroll_home(animate=False)
        self.call_after_refresh(self._follow)

    def _follow(self) -> None:
        """The plan's text scrolled to the selected step (the first step: from the plan's top)."""
        if self.plan is None or self.busy:
            return
        table = self.query_one("#mig-steps", DataTable)
        row = table.cursor_row
        if not 0 <= row < len(self.plan.steps):
            return
        log = self.query_one("#mig-log", RichLog)
        y = 0
        if row:
            # The line as drawn (the log wraps again at its own width): the step's first line.
            head = f"{row + 1:>2}. {self.plan.steps[row].id} — "
            y = next((j for j, line in enumerate(log.lines) if line.text.startswith(head)), 0)
        self.step_offsets[self.plan.steps[row].id] = y
        log.scroll_to(y=y, animate=False)

    def on_resize(self, event) -> None:
        if self.plan is not None and not self.busy and getattr(self, "_plan_width", None) != event.size.width:
            self._fill_table()
            self._render_plan()

    def _fill_table(self) -> None:
        table = self.query_one("#mig-steps", DataTable)
        row = table.cursor_row  # kept when the table is filled again at a new width
        table.clear(columns=True)
        # STATE must stay on screen at 80 columns: WHAT gets what the other columns leave, cut with an ellipsis.
        width = (self.size.width or 80) - 2
        fixed = {"#": 2, "STEP": max([len(s.id) for s in self.plan.steps] + [4]), "CHANGES": 9, "STATE": 12}
        # No wider than the longest title: at 200 columns STATE stood 140 columns away from the step it describes.
        what = max(
            12, min(width - sum(fixed.values()) - 2 * 5, max((len(s.title) for s in self.plan.steps), default=12))
        )
        for label in ("#", "STEP", "WHAT", "CHANGES", "STATE"):
            table.add_column(label, width=what if label == "WHAT" else fixed[label], key=label)
        for i, s in enumerate(self.plan.steps, 1):
            n = len(s.changes)
            changes = f"{n}" + (f" {glyph('dangerous')}" if s.dangerous and n else "")
            if s.blockers:
                changes = "✗ blocked"
            title = s.title if len(s.title) <= what else s.title[: what - 1] + "…"
            table.add_row(
                str(i),
                s.id,
                title,
                changes,
                STATE_MARK.get(self.step_state.get(s.id, ""), self.step_state.get(s.id, "")),
                key=s.id,
            )
        if self.plan.steps:
            row = min(max(row, 0), len(self.plan.steps) - 1)
            table.move_cursor(row=row, animate=False)
            self._show_detail(self.plan.steps[row].id)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.row_key.value if event.row_key is not None else None)
        self._follow()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        # enter on a step: run it (as s), after its confirmation.
        if self.check_action("run_step", ()):
            self.action_run_step()

    def _show_detail(self, step_id: str | None) -> None:
        detail = self.query_one("#mig-detail", Static)
        step = next((s for s in self.plan.steps if s.id == step_id), None) if self.plan is not None else None
        detail.display = step is not None
        if step is None:
            return
        n = len(step.changes)
        i = self.plan.steps.index(step) + 1
        facts = [f"{n} change{'s' if n != 1 else ''}" + (", dangerous" if step.dangerous and n else "")]
        if step.blast_nodes:
            facts.append(f"{len(step.blast_nodes)} node{'s' if len(step.blast_nodes) != 1 else ''}")
        if step.blockers:
            facts.append(f"✗ {len(step.blockers)} blocker{'s' if len(step.blockers) != 1 else ''}")
        if step.warnings:
            facts.append(f"! {len(step.warnings)} warning{'s' if len(step.warnings) != 1 else ''} in the plan")
        # The step's id is on its row: the line has room for the whole title and what the step does at 80 columns.
        detail.update(f"{glyph('selected')} {i}. {step.title} — " + ", ".join(facts))

    def _set_state(self, step_id: str, state: str) -> None:
        self.step_state[step_id] = state
        table = self.query_one("#mig-steps", DataTable)
        try:
            table.update_cell(step_id, "STATE", STATE_MARK.get(state, state))
        except Exception:  # noqa: BLE001 - a row of an older plan
            pass

    # ------------------------------------------------------------------ progress (called on the app's loop by the
    # runner)
    def on_progress(self, ev) -> None:
        mark = {"warning": glyph("warning"), "error": glyph("failed")}.get(ev.level, " ")
        where = f" {ev.node}" if ev.node else ""
        count = f" {ev.done}/{ev.total}" if ev.total else ""
        self.log_line(f"{mark} {ev.step_id}{where}{count} {ev.message}".rstrip())
        if not self._drawn():
            for end, state in ((": started", "running"), (": done, verified", "done"), (": failed", "failed")):
                if ev.message.endswith(end):
                    self.step_state[ev.step_id] = state
            return
        if ev.message.endswith(": started"):
            self._set_state(ev.step_id, "running")
            self.running_step, self.step_started = ev.step_id, time.monotonic()
            self._tick()
            self.query_one("#mig-step", ProgressBar).update(total=max(1, ev.total), progress=0)
        elif ev.message.endswith(": done, verified"):
            self._set_state(ev.step_id, "done")
            self.query_one("#mig-step", ProgressBar).update(total=1, progress=1)
            self.query_one("#mig-overall", ProgressBar).update(
                progress=sum(1 for v in self.step_state.values() if v in ("done", "no change"))
            )
        elif ev.message.endswith(": failed"):
            self._set_state(ev.step_id, "failed")
        elif ev.total and not ev.node:
            self.query_one("#mig-step", ProgressBar).update(total=ev.total, progress=ev.done)

    # ------------------------------------------------------------------ actions
    def action_back(self) -> None:
        if self.busy:
            self.notify(
                "a step is running; it continues if you leave (:migrate comes back to it), and its state stays in "
                "the cluster",
                severity="warning",
            )
        self.app.pop_screen()

    def on_screen_suspend(self) -> None:
        """Left (popped) with no run going: a screen installed for its run (run_plan) is let go now, as Textual
        removes any other popped screen. Covered by a modal, or left mid-run, it stays."""
        if self.busy or not self.app.is_screen_installed(self):
            return
        if self in self.app.screen_stack:
            return
        self.app.uninstall_screen(self)
        self.call_later(self.remove)

    def action_replan(self) -> None:
        if not self.busy and self.pool:
            self.make_plan()

    def next_step(self):
        """The first step not done yet (None: every step is done)."""
        if self.plan is None:
            return None
        return next((s for s in self.plan.steps if self.step_state.get(s.id) != "done"), None)

    def action_apply(self) -> None:
        if self.read_only or self.busy or self.plan is None:
            return
        if self.plan.rollback:
            # After a rollback ran, the screen still holds its plan: `a` applies the migration, as the footer says
            # (it answered "nothing to roll back").
            self._apply_fresh_plan()
            return
        self._confirm_and_run(self.plan)

    def action_run_step(self) -> None:
        """The selected step alone, in order: the steps before it must be done."""
        if self.read_only or self.busy or self.plan is None:
            return
        table = self.query_one("#mig-steps", DataTable)
        if not 0 <= table.cursor_row < len(self.plan.steps):
            return
        step = self.plan.steps[table.cursor_row]
        if self.step_state.get(step.id) == "done":
            nxt = self.next_step()
            self.notify(
                f"{step.id} is done; the next step is {nxt.id}" if nxt else f"{step.id} is done; every step is done"
            )
            return
        nxt = self.next_step()
        if nxt is not None and nxt.id != step.id:
            self.notify(f"steps run in order: {nxt.id} comes first (it is selected now)", severity="warning")
            table.move_cursor(row=self.plan.steps.index(nxt), animate=False)
            return
        self._confirm_and_run(self.plan, only=step.id)

    @work(exclusive=True, group="migrate-plan", description="plan the migration again, then apply")
    async def _apply_fresh_plan(self) -> None:
        await self._build_plan(rollback=False)
        if self.plan is not None:
            self._confirm_and_run(self.plan)

    def action_rollback(self) -> None:
        if self.read_only or self.busy or not self.pool:
            return
        if self.plan is not None and self.plan.rollback and self.plan.steps:
            # The rollback plan is on screen (a pool picked as already on DRA): confirm exactly it.
            self._confirm_and_run(self.plan)
            return
        self._rollback_flow()

    def action_batches(self) -> None:
        if self.busy or not self.pool or self.runner is None:
            return
        nodes = sorted(self.runner.ctx.nodes) if self.runner.ctx is not None else []
        opts = self.runner.options

        def chosen(answer: tuple[int, str] | None) -> None:
            if answer is None:
                return
            opts.batch_size, opts.canary_node = answer
            self.options = opts
            self.log_line(f"batches: canary {opts.canary_node or '-'}, then {opts.batch_size or 'all'} at a time")
            self.make_plan()

        self.app.push_screen(BatchScreen(nodes, opts.batch_size, opts.canary_node, self.batch_why), chosen)

    @work(exclusive=True, group="migrate-rollback", description="plan the rollback")
    async def _rollback_flow(self) -> None:
        await self._build_plan(rollback=True)
        if self.plan is not None:
            self._confirm_and_run(self.plan)
        else:
            # No rollback to plan (nothing recorded, or refused): say why, and show the migration plan again.
            self.notify(f"no rollback: {self.error}", severity="warning", timeout=10)
            await self._build_plan(rollback=False)

    def _confirm_and_run(self, plan, only: str | None = None) -> None:
        from dragoman.actions.confirm import words_to_type
        from dragoman.tui.screens.confirm import ConfirmWriteScreen

        if plan.blockers:
            self.notify("refused by preflight: " + " ".join(plan.blockers), severity="error", timeout=10)
            self._back_to_migration(plan)
            return
        steps = [s for s in plan.steps if only is None or s.id == only]
        if only is None and not self.runner.pending_work(plan):
            self.notify(
                "nothing to roll back: no step of the pool's state is recorded as done"
                if plan.rollback
                else "nothing to do: every step of the plan is already done"
            )
            self._back_to_migration(plan)
            return
        if only is not None and not any(s.changes for s in steps):
            # A step that writes nothing (the preflight's reads, a step with no change) runs at once: nothing to
            # confirm.
            self.run_plan(plan, only)
            return
        cluster = self.cluster
        dangerous = any(s.dangerous and s.changes for s in steps)
        evicts = any(
            c.verb in ("evict", "delete") and c.kind == "Pod" and "node" in c.detail for s in steps for c in s.changes
        )
        typed = [
            (t.prompt, t.word)
            for t in words_to_type(
                cluster.context_name or "",
                cluster.server or "",
                patterns=self.runner.options.prod_patterns,
                pool=plan.pool if dangerous else None,
                why="This evicts pods" if evicts else "This is dangerous",
            )
        ]
        writes = sum(len(s.changes) for s in steps)
        nodes = len({n for s in steps for n in s.blast_nodes})
        kind = "Roll back" if plan.rollback else "Apply"
        what = f"step {only}" if only is not None else f"plan {plan.id}"
        # The pool is in the box's title. One line for the steps, so the warnings fit under it at 80x24 (a line per
        # step pushed them out of view); a step's name, count and ⚠ as one word, never split over two lines.
        per_step = ", ".join(f"{s.id}={len(s.changes)}{'⚠' if s.dangerous else ''}" for s in steps if s.changes)
        legend = " (⚠ dangerous)" if any(s.dangerous and s.changes for s in steps) else ""
        text = (
            f"{kind} {what} on {cluster.context_name}: {writes} "
            f"write{'s' if writes != 1 else ''} on {nodes} node{'s' if nodes != 1 else ''}.\n"
            + (
                f"Changes per step{legend}: {per_step}."
                if only is None
                else "\n".join(_change_lines(steps[0])) + "\nThe wizard stops after this step and offers the next."
            )
        )
        # Every warning, each in full: the confirmation is where they are read (the first 4 only were shown).
        warnings = [w for s in steps for w in s.warnings]
        footnote = "A server dry run precedes each write; each write is recorded in the audit log."

        def chosen(ok: bool | None) -> None:
            if ok:
                self.run_plan(plan, only)
            else:
                self.log_line("cancelled: nothing was written.")
                if plan.rollback and only is None:
                    self.notify("rollback cancelled: nothing was written; showing the migration plan again")
                    self._back_to_migration(plan)

        self.app.push_screen(
            ConfirmWriteScreen(
                f"{kind} — pool {plan.pool}" + (f", step {only}" if only else ""),
                text,
                warnings=warnings,
                footnote=footnote,
                typed=typed,
                confirm_label=kind,
            ),
            chosen,
        )

    def _back_to_migration(self, plan) -> None:
        """A rollback that did not run gives the screen back to the migration plan, so `a` applies what the footer
        says."""
        if plan.rollback:
            self.make_plan()

    async def _replanned(self, confirmed, fresh) -> bool:
        """A drain planned again right before it runs found other pods than the ones confirmed: ask again."""
        from dragoman.actions.runner import replan_text
        from dragoman.tui.screens.confirm import ConfirmWriteScreen

        self.log_line(f"! {confirmed.id}: {replan_text(confirmed, fresh)}")
        text = f"{replan_text(confirmed, fresh)}.\n" + "\n".join(_change_lines(fresh))
        typed = (
            [(f"This evicts pods. Type the pool name ({self.pool}):", cast(str, self.pool))] if fresh.changes else []
        )
        return bool(
            await self.app.push_screen_wait(
                cast(Any, ConfirmWriteScreen)(
                    f"{confirmed.id} — its plan changed",
                    text,
                    warnings=fresh.warnings,
                    typed=typed,
                    confirm_label="Apply",
                )
            )
        )

    @work(exclusive=True, group="migrate-run", description="run the migration plan")
    async def run_plan(self, plan, only: str | None = None) -> None:
        for row in self.query(".bar-row"):
            row.display = True
        self.query_one("#mig-overall", ProgressBar).update(
            total=max(1, len(plan.steps)), progress=sum(1 for v in self.step_state.values() if v == "done")
        )
        self.query_one("#mig-step", ProgressBar).update(total=1, progress=0)
        self.query_one("#mig-verified", Static).display = False
        # Textual removes a popped screen and cancels its workers: leaving the wizard (esc, or a jump to a view)
        # would stop the run at whatever await it was in, and its log lines would have no screen to go to.
        # Installed, the screen outlives a pop; the run goes on and :migrate comes back to it (open_wizard).
        if not self.app.is_screen_installed(self):
            self.app.install_screen(self, RUNNING)
        self.busy = True
        self.refresh_bindings()
        # While it runs no key acts on the plan: the title says what is happening, not which keys to press.
        doing = "rolling back" if plan.rollback else "applying"
        self._title(f"pool {self.pool}: {doing} {'step ' + only if only else 'plan ' + plan.id} …")
        try:
            self.result = await self.runner.run(plan, only=None if only is None else {only}, replanned=self._replanned)
        except Exception as exc:  # noqa: BLE001 - a refusal or an API error is a sentence on screen
            self.error = str(getattr(exc, "message", exc))
            self.log_line(f"✗ {self.error}")
            self.notify(self.error, severity="error", timeout=10)
            return
        finally:
            self.busy = False
            self.running_step = ""
            self.refresh_bindings()
            if self not in self.app.screen_stack:
                self.app.notify(f"the run on pool {self.pool} has ended: :migrate shows its result")
        if not self._drawn():  # the app shut down while it ran: the result is kept, nothing to draw it on
            self.step_state.update(self.result.steps)
            return
        from dragoman.actions.registry import step_class

        for sid, state in self.result.steps.items():
            self._set_state(sid, state)
        for sid, problems in self.result.verified.items():
            step = self._step(sid)
            proves = step_class(step.step).verifies if step is not None and not plan.rollback else ""
            self.log_line(
                (f"✓ {sid}: verified" + (f": {proves}" if proves else ""))
                if not problems
                else f"✗ {sid}: " + "; ".join(problems)
            )
        for p in self.result.problems:
            self.log_line(f"✗ {p}")
        if only is not None:
            problems = self.result.verified.get(only)
            step = self._step(only)
            proves = step_class(step.step).verifies if step is not None and not plan.rollback else ""
            verified = self.query_one("#mig-verified", Static)
            if self.result.problems:
                verified.update(f"✗ {only}: " + "; ".join(self.result.problems[:2]))
            elif problems is not None:
                verified.update(f"✓ {only} verified" + (f": {proves}" if proves else ""))
            verified.display = bool(self.result.problems) or problems is not None
            await self._after_step(plan, only)
            return
        done = sum(1 for v in self.result.steps.values() if v == "done")
        self.log_line(f"{done}/{len(plan.steps)} steps done; audit log: {self.runner.audit.path}")
        self._title(
            f"pool {self.pool}: {'rolled back' if plan.rollback else 'plan'} {plan.id} — "
            + ("stopped on a problem" if self.result.problems else "done")
        )

    async def _after_step(self, plan, only: str) -> None:
        """Step mode: the plan made again from the cluster (what is left, as it is now), the cursor on the next step,
        and the title saying what the step did and what comes next."""
        failed = bool(self.result.problems)
        ran = self.result.steps.get(only, "")
        keep = list(self.run_lines)
        await self._build_plan(rollback=plan.rollback)
        self.run_lines = keep
        self._render_plan()
        if self.plan is None:
            return
        nxt = self.next_step()
        if failed:
            head = f"pool {self.pool}: step {only} {ran or 'stopped'} — read the log; s runs it again"
        elif nxt is None or (plan.rollback and not self.plan.steps):
            head = f"pool {self.pool}: step {only} done — {'rolled back' if plan.rollback else 'every step is done'}"
        else:
            head = f"pool {self.pool}: step {only} done — next: {nxt.id} (s or enter runs it, a runs all)"
        self._title(head)
        self.log_line(head.split(": ", 1)[1])


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}:{s:02d}"


def _change_lines(step) -> list[str]:
    """What one step writes, a line per object (the first 12): the confirmation of a single step shows them."""
    out = []
    for c in step.changes[:12]:
        where = f" on {c.detail.get('node')}" if c.detail.get("node") else ""
        diff = [d for d in c.diff() if d.startswith("+")] if c.verb == "patch" else []
        out.append(f"  {c.verb} {c.ref}{where}" + (f" ({', '.join(diff)[:60]})" if diff else ""))
    if len(step.changes) > 12:
        out.append(f"  … and {len(step.changes) - 12} more (the plan lists them all)")
    return out


class BatchScreen(ModalScreen[tuple[int, str] | None]):
    """The batch size and canary node of the batched steps (cordon, drain, uncordon): the canary alone first."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="batches.cancel", tooltip="Keep the batches as they are")]
    DEFAULT_CSS = """
    BatchScreen { align: center middle; }
    BatchScreen > Vertical { width: 76; max-width: 100%; height: auto; border: thick $primary; background: $panel;
        padding: 0 1; }
    BatchScreen Input { margin-bottom: 1; }
    BatchScreen #batch-wrong { color: $text-error; display: none; }
    """

    def __init__(self, nodes: list[str], size: int, canary: str, why: str) -> None:
        super().__init__()
        self.nodes, self.size_, self.canary, self.why = nodes, size, canary, why

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Batches"
            yield Static(
                f"{len(self.nodes)} nodes. Cordon, drain and uncordon go a batch at a time, the canary node alone "
                "first; a batch waits for its pods to run elsewhere before the next."
                + (f"\nSuggested from the pool: {self.why}." if self.why else ""),
                markup=False,
            )
            yield Label("Batch size (0: the rest of the pool at once):")
            yield Input(str(self.size_), id="batch-size", restrict=r"[0-9]*")
            yield Label("Canary node (empty: none):")
            yield Input(self.canary, id="batch-canary")
            yield Static("", id="batch-wrong", markup=False)
            with Horizontal():
                yield Button("Cancel", id="batch-cancel", compact=True)
                yield Button("Re-plan", id="batch-ok", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#batch-size", Input).focus()

    def _answer(self) -> tuple[int, str] | None:
        size_text = self.query_one("#batch-size", Input).value.strip() or "0"
        canary = self.query_one("#batch-canary", Input).value.strip()
        wrong = self.query_one("#batch-wrong", Static)
        if canary and canary not in self.nodes:
            wrong.update(
                f"✗ {canary} is not a node of the pool: {', '.join(self.nodes[:4])}"
                + (" …" if len(self.nodes) > 4 else "")
            )
            wrong.display = True
            return None
        return int(size_text), canary

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "batch-size":
            self.query_one("#batch-canary", Input).focus()
            return
        answer = self._answer()
        if answer is not None:
            self.dismiss(answer)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "batch-ok":
            answer = self._answer()
            if answer is not None:
                self.dismiss(answer)
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
