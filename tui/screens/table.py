"""A view of the fleet as a live table: rows updated in place from the feed, `/` filter, `:` jump, drill down and detail
keys."""

from __future__ import annotations

import asyncio
import time
from functools import partial
from typing import cast

from dragoman.fleet.delta import Delta
from dragoman.fleet.views.base import View
from dragoman.fleet.views.filter import RowFilter, parse_filter
from dragoman.tui.bindings import TABLE_KEYS, textual_bindings
from dragoman.tui.messages import CatalogueChanged, FeedMessage, FindingsChanged, FleetLoaded, RowsTouched
from dragoman.tui.screens.base import PaletteCommand
from dragoman.tui.screens.prompt import PromptScreen
from dragoman.widgets.command_bar import CommandBar
from dragoman.widgets.footer import SteadyFooter
from dragoman.widgets.header import StatusHeader
from dragoman.widgets.vtable import Column, VTable
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

POPULATE_CHUNK = 2000  # rows set between yields, so keys keep flowing while a 40,000-row view fills
PREBUILD_CHUNK = 500  # lazy rows built per turn of the loop once the filter prompt opens
LAZY_CHUNK = 20_000  # rows placed by key (set_lazy, ~2 µs each) between yields: each yield may draw a frame


class TableScreen(PromptScreen[None]):
    """One View (pools, nodes, devices, attributes, claims, stuck pods, findings) as a keyed virtual table."""

    BINDINGS = textual_bindings(TABLE_KEYS)
    FILTERS = True

    def __init__(self, view: View) -> None:
        super().__init__(name=view.name)
        self.view = view
        self.filter_text = ""
        self._row_filter: RowFilter | None = None
        self.populated = False
        self.ready = False
        self._summary_at = 0.0

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield StatusHeader()
        with Vertical(id="body"):
            yield Static(self.view.heading, id="heading")
            yield Static("", id="summary")
            give = self.view.give_way
            cols = [
                Column(
                    k,
                    label,
                    mn,
                    mx,
                    "middle" if k in self.view.trim_middle else "end",
                    give.index(k) + 1 if k in give else 0,
                )
                for k, label, mn, mx in self.view.columns
            ]
            yield VTable(
                cols,
                sort_key=self.view.sort_key,
                name_column=self.view.name_column,
                pinned=self.view.pinned,
                empty="loading the fleet…",
                reach=self.view.reach,
                id="table",
            )
        yield CommandBar()
        yield SteadyFooter()

    @property
    def table(self) -> VTable:
        return self.query_one("#table", VTable)

    @property
    def fleet(self):
        return self.app.feed.fleet

    def on_mount(self) -> None:
        self.query_one("#summary", Static).display = self.view.shows_summary
        self.app.refresh_header(self)
        self.table.focus()
        self.app.feed.listen(self)
        if self.app.feed.loaded:
            self.populate()
        self.ready = True
        self.app.screen_ready()

    def on_unmount(self) -> None:
        self.app.feed.unlisten(self)

    # ------------------------------------------------------------------ the feed's messages
    def post_message(self, message: Message) -> bool:
        # A screen an opaque screen covers (the Pools view under the Nodes view) applies the feed's news at once,
        # in the feed's turn of the loop, instead of queueing it: a message handled by the screen just beneath the top
        # one has Textual (8.2) repaint the top screen whole. It counts that screen among the visible "background
        # screens", forwards its dirty region and leaves it marked for repaint, so each of its idles repaints again:
        # at 20 pumps a second, ~17 full repaints a second of the Nodes view, which the keystrokes waited behind.
        if isinstance(message, FeedMessage) and self._covered():
            self._handle_now(message)
            return True
        return super().post_message(message)

    def _covered(self) -> bool:
        """Whether an opaque screen above this one hides it whole."""
        try:
            stack = self.app.screen_stack
        except RuntimeError:  # Textual's NoActiveAppError: not in an app (yet, or any more)
            return False
        for i, screen in enumerate(stack):
            if screen is self:
                return any(above.styles.background.a >= 1 for above in stack[i + 1 :])
        return False

    def _handle_now(self, message: Message) -> None:
        """What the handlers below do with the feed's message, done now."""
        if isinstance(message, RowsTouched):
            self.apply_touched(message.touched)
        elif isinstance(message, FindingsChanged):
            self.apply_findings(message.refs, message.pools)
        elif isinstance(message, CatalogueChanged):
            self.apply_catalogue()
        elif isinstance(message, FleetLoaded):
            self.populate()
        # ConnectionChanged: the App's (the header); nothing a table shows.

    def on_fleet_loaded(self, _: FleetLoaded) -> None:
        self.populate()

    def on_rows_touched(self, message: RowsTouched) -> None:
        self.apply_touched(message.touched)

    def on_findings_changed(self, message: FindingsChanged) -> None:
        self.apply_findings(message.refs, message.pools)

    def on_catalogue_changed(self, _: CatalogueChanged) -> None:
        self.apply_catalogue()

    # ------------------------------------------------------------------ data
    def populate(self) -> None:
        # The method, not a coroutine made now: a populate superseded before its worker starts (exclusive) would leave
        # that coroutine never awaited. (Textual runs the method form; its annotation is narrower, hence the ignore.)
        self.run_worker(self._populate, exclusive=True, group="populate", description=f"fill {self.view.name}")  # type: ignore[arg-type]

    async def _populate(self) -> None:
        table = self.table
        seen = set()
        n = 0
        # With no filter a view that knows its order builds only the rows drawn (VTable.set_lazy); a filter reads
        # every row, so then each is built here.
        order = self.view.order(self.fleet) if self._row_filter is None and table.sort_column is None else None
        table.set_source(partial(self.view.rows_near, self.fleet))
        table.begin_batch()
        try:
            if order is not None:
                for key, place in order:
                    seen.add(key)
                    table.set_lazy(key, place)
                    n += 1
                    if n % LAZY_CHUNK == 0:
                        table.end_batch()
                        await asyncio.sleep(0)
                        table.begin_batch()
            for key, cells, facets in self.view.all_rows(self.fleet) if order is None else ():
                seen.add(key)
                table.set_row(key, cells, facets)
                n += 1
                if n % POPULATE_CHUNK == 0:
                    # Show what is there so far and let keys through, then go on.
                    table.end_batch()
                    await asyncio.sleep(0)
                    table.begin_batch()
            for key in [k for k in table.all_keys() if k not in seen]:
                table.remove_row(key)
            table.sample_widths()
        finally:
            table.end_batch()
        self.populated = True
        self._update_empty()
        self.refresh_summary()
        table.refresh()

    def _set(self, key) -> None:
        r = self.view.row(self.fleet, key)
        if r is None:
            self.table.remove_row(key)
        else:
            self.table.set_row(key, r[0], r[1])

    def apply_touched(self, t: Delta) -> None:
        """One batch of changes: recompute only the rows it touched (never clear-and-refill)."""
        if not self.populated:
            return
        keys = self.view.affected(self.fleet, t)
        if keys is None:
            self.populate()
            return
        self.table.begin_batch()
        try:
            self._apply_touched(t, keys)
        finally:
            self.table.end_batch()
        if self.view.shows_summary and time.monotonic() - self._summary_at > 0.5 and not self._covered():
            # The summary sums every pool: twice a second is live enough, and never for a screen out of sight (Textual's
            # is_current counts the covered screen beneath the top one too); on_screen_resume redoes it.
            self.refresh_summary()

    def _apply_touched(self, t: Delta, keys) -> None:
        group = self.view.regroup(self.fleet, t)
        if group is not None:
            # A change that may add or drop rows (a slice's devices): redo exactly that group's rows.
            table = self.table
            rows, in_group = group
            fresh = {key: (cells, facets) for key, cells, facets in rows}
            for key in [k for k in table.all_keys() if in_group(k) and k not in fresh]:
                table.remove_row(key)
            for key, (cells, facets) in fresh.items():
                table.set_row(key, cells, facets)
        for key in keys:
            self._set(key)

    def apply_findings(self, refs: set, pools: set) -> None:
        if not self.populated or not self.view.uses_findings:
            return
        keys = self.view.findings_changed(self.fleet, refs, pools)
        if keys is None:
            self.populate()
            return
        for key in keys:
            self._set(key)
        if self.view.shows_summary and not self._covered():
            self.refresh_summary()

    def apply_catalogue(self) -> None:
        if self.populated and self.view.uses_catalogue:
            self.populate()

    def on_screen_resume(self) -> None:
        if self.populated:
            self.refresh_summary()

    def refresh_summary(self) -> None:
        self._summary_at = time.monotonic()
        if self.view.shows_summary:
            self.query_one("#summary", Static).update(self.view.summary(self.fleet))
        shown = self.table.visible_count
        total = self.table.row_count
        count = f"{shown} of {total}" if self.filter_text else f"{total}"
        flt = f"   filter: {self.filter_text}" if self.filter_text else ""
        marked = f"   marked: {len(self.table.marked)}" if self.table.marked else ""
        order = f"   {self.table.sort_label()}" if self.table.sort_column is not None else ""
        self.query_one("#heading", Static).update(f"{self.view.heading} ({count}){flt}{marked}{order}")

    def on_vtable_sort_changed(self, event: VTable.SortChanged) -> None:
        self.refresh_summary()

    def on_vtable_marks_changed(self, event: VTable.MarksChanged) -> None:
        self.refresh_summary()

    def on_vtable_selected(self, event: VTable.Selected) -> None:
        target = self.view.drill(self.fleet, event.key)
        if target is None:
            ref = self.view.ref(self.fleet, event.key)
            if ref:
                self.app.open_detail(ref, "describe")
            return
        self.app.open_view(*target)

    # ------------------------------------------------------------------ actions
    def _current_ref(self):
        key = self.table.cursor_key
        return None if key is None else self.view.ref(self.fleet, key)

    def action_yaml(self) -> None:
        marked = [r for r in (self.view.ref(self.fleet, k) for k in self.table.keys() if k in self.table.marked) if r]
        if marked:
            # Marked rows are the batch: their YAML, one document each, in the table's order.
            self.app.open_detail(marked[0], "yaml", more=marked[1:])
            return
        ref = self._current_ref()
        if ref is None:
            self.notify("this row has no API object behind it; try d", severity="warning")
            return
        self.app.open_detail(ref, "yaml")

    def action_describe(self) -> None:
        ref = self._current_ref()
        if ref is None:
            self.notify("nothing to describe here", severity="warning")
            return
        self.app.open_detail(ref, "describe")

    def action_logs(self) -> None:
        self.app.open_logs(self._current_ref())

    def focus_main(self) -> None:
        self.table.focus()

    def apply_filter(self, text: str) -> None:
        self.set_filter(text)

    def preview_filter(self, text: str) -> None:
        # Live, as k9s does: the rows follow each keystroke (a 40,000-row view filters in a few ms).
        self.set_filter(text)

    def filter_hint(self, text: str) -> str:
        from rich.markup import escape

        if not text:
            was = getattr(self, "_filter_before", "")
            keep = f"esc keeps [b]{escape(was)}[/b] · " if was else ""
            return (
                f"enter applies · {keep}empty + enter clears · e.g. h100  *80GB*  pool=a100-serve  "
                "productName=NVIDIA*H100*"
            )
        shown, total = self.table.visible_count, self.table.row_count
        tone = "$text-success" if shown else "$text-error"
        return f"[{tone}]{shown} of {total} rows match[/] · enter applies · esc restores the previous filter"

    def action_filter(self) -> None:
        super().action_filter()
        if self.table.unbuilt:
            # A filter reads every row: build the rest while the operator types (a slice per turn of the loop, so
            # the keys go through), rather than all at the first key.
            self.run_worker(self._prebuild, exclusive=True, group="prebuild", description="build rows")  # type: ignore[arg-type]

    async def _prebuild(self) -> None:
        while self.table.build_some(PREBUILD_CHUNK):
            await asyncio.sleep(0)

    def set_filter(self, text: str) -> None:
        self.filter_text = text
        self._row_filter = parse_filter(text)
        if self._row_filter is not None and self.table.unbuilt:
            self.table.build_some(self.table.unbuilt)  # what the prompt's head start has not built yet
        self.table.set_filter(self._row_filter)
        self._update_empty()
        self.refresh_summary()

    def _update_empty(self) -> None:
        """What the empty table says: loading, the view's own empty sentence, or that the filter hides every row."""
        predicate, text = self._row_filter, self.filter_text
        if predicate is not None and self.table.row_count and not self.table.visible_count:
            missing = predicate.missing_keys()
            if missing:
                self.table.empty_text = (
                    f"no row here has a field named {', '.join(missing)} — {self._keys_hint()}; esc clears the filter"
                )
            else:
                self.table.empty_text = f"no row of {self.table.row_count} matches the filter {text!r}; esc clears it"
        elif self.populated:
            self.table.empty_text = self.view.empty_text(self.fleet)

    def _keys_hint(self) -> str:
        first = next(iter(self.table.all_keys()), None)
        keys = sorted(self.table.facets(first) if first is not None else ())
        return (
            ("fields here: " + " ".join(keys[:12]) + (" …" if len(keys) > 12 else ""))
            if keys
            else "this view has no fields"
        )

    def action_back(self) -> None:
        if self.close_prompt_first():
            return
        if self.filter_text:
            self.set_filter("")
        else:
            self.app.back()

    def action_back_or_quit(self) -> None:
        if self.prompt_mode:
            return
        self.app.back(quit_at_root=True)

    def check_action(self, action: str, parameters) -> bool | None:
        # "open in playground" belongs to the Stuck pods view only.
        if action == "open_playground":
            return self.view.name == "pending"
        if action == "open_migrate":
            return self.view.name == "pools"
        return True

    def action_open_migrate(self) -> None:
        from dragoman.tui.screens.migrate import MigrateScreen, open_wizard

        key = self.table.cursor_key
        if self.view.name == "pools" and key is not None:
            label = getattr(self.app, "pool_label", None)
            open_wizard(self.app, lambda: MigrateScreen(str(key), pool_label=label))

    def action_open_playground(self) -> None:
        from dragoman.tui.screens.playground import open_for_pod

        key = self.table.cursor_key
        if self.view.name == "pending" and key is not None:
            open_for_pod(self.app, cast(tuple[str, str], key))  # the Stuck view's rows are keyed by (namespace, name)

    def palette_commands(self) -> list[PaletteCommand]:
        """What fits this screen, for ctrl+p."""
        cmds: list[PaletteCommand] = [
            (
                f"{self.view.title.lower()}: filter",
                "filter the rows (words, label=value, attr=value)",
                self.action_filter,
            ),
            (f"{self.view.title.lower()}: clear filter", "show every row again", lambda: self.set_filter("")),
        ]
        if self.table.cursor_key is not None and self._current_ref() is not None:
            cmds += [
                ("object: yaml", "the selected object as YAML", self.action_yaml),
                ("object: describe", "the selected object's describe page", self.action_describe),
            ]
        if self.view.name == "pools" and self.table.cursor_key is not None:
            cmds.append(
                (
                    f"pool: migrate {self.table.cursor_key}",
                    "the migration wizard of this pool (m)",
                    self.action_open_migrate,
                )
            )
        for title, help_text, text in self.view.palette(self.fleet):
            cmds.append((title, help_text, partial(self.set_filter, text)))
        if self.view.name == "pending":
            if self.table.cursor_key is not None:
                cmds.append(
                    (
                        "stuck pod: open in playground",
                        "the pod's selector in the CEL playground (p)",
                        self.action_open_playground,
                    )
                )
        if self.table.marked:
            cmds.append(
                ("rows: yaml of marked", f"the {len(self.table.marked)} marked objects as YAML (y)", self.action_yaml)
            )
            cmds.append(("rows: copy marked names", "their names to the clipboard", self._copy_marked))
            cmds.append(("rows: unmark all", f"clear {len(self.table.marked)} marks", self._unmark))
        return cmds

    def action_copy_name(self) -> None:
        """`c`: the row's name to the clipboard, and in the notification: many terminals (and tmux without
        set-clipboard) ignore OSC 52, and nothing tells the app so."""
        key = self.table.cursor_key
        if key is None:
            self.notify("no row selected: nothing to copy", severity="warning")
            return
        ref = self.view.ref(self.fleet, key)
        name = str(ref[2] if ref else key[-1] if isinstance(key, tuple) else key)
        self.app.copy_to_clipboard(name)
        self.notify(f"copied {name}\n(no clipboard in this terminal? select it here)", title="name", timeout=8)

    def _copy_marked(self) -> None:
        names = [str(k[-1] if isinstance(k, tuple) else k) for k in self.table.keys() if k in self.table.marked]
        self.app.copy_to_clipboard("\n".join(names))
        self.notify(f"{len(names)} names copied")

    def _unmark(self) -> None:
        self.table.marked.clear()
        self.table.refresh()
        self.refresh_summary()
