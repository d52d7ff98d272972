"""Detail pages: an object's YAML, and its describe page whose links `enter` follows."""

from __future__ import annotations

from functools import partial
from typing import cast

from dragoman.fleet.projection import fetch_whole, needs_fetch
from dragoman.tui.bindings import DETAIL_KEYS, textual_bindings
from dragoman.tui.screens.base import DragomanScreen, PaletteCommand
from dragoman.widgets.detail import describe, page_renderable, raw_object, yaml_text
from dragoman.widgets.footer import SteadyFooter
from dragoman.widgets.header import StatusHeader
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


class DetailScreen(DragomanScreen):
    """`y` (YAML) or `d` (describe) of one object; the describe page lists the objects it links to."""

    help_title = "YAML / describe page"

    BINDINGS = textual_bindings(DETAIL_KEYS)

    def __init__(self, ref: tuple[str, str, str], mode: str, more: list | None = None) -> None:
        super().__init__(name=f"{mode}:{ref[0]}:{ref[1]}:{ref[2]}")
        self.ref = ref
        self.more = [tuple(r) for r in more or ()]  # marked rows: their YAML follows, one document each
        self.mode = mode
        self.links: list = []
        self.ready = False

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        fleet = self.app.feed.fleet
        self.fetching = self.mode in ("yaml", "describe") and needs_fetch(raw_object(fleet.model, self.ref))
        if self.fetching:
            # A projected pod: the page is drawn once its whole object has been read from the server (on_mount).
            yield Static(
                f"{self.mode.upper() if self.mode == 'yaml' else 'Describe'} of {self.ref[0]} "
                f"{self.ref[1] + '/' if self.ref[1] else ''}{self.ref[2]}",
                id="heading",
            )
            with VerticalScroll(id="detail-scroll"):
                yield Static("reading the whole object from the API server…", id="detail-text", markup=False)
            yield OptionList(id="links")
        elif self.mode == "yaml":
            what = (
                f"{self.ref[0]} {self.ref[1] + '/' if self.ref[1] and self.ref[0] != 'Attribute' else ''}{self.ref[2]}"
            )
            if self.more:
                what = f"{1 + len(self.more)} marked rows"
            yield Static(f"YAML of {what}", id="heading")
            docs = [yaml_text(raw_object(fleet.model, r, fleet), r[0]) for r in [self.ref, *self.more]]
            with VerticalScroll(id="detail-scroll"):
                yield Static("---\n".join(docs), id="detail-text", markup=False)
        else:
            page = describe(fleet, self.ref)
            self.links = page.links
            yield Static(f"Describe {page.title}", id="heading")
            with VerticalScroll(id="detail-scroll"):
                yield Static(page_renderable(page.text()), id="detail-text", markup=False)
            links = OptionList(*[Option(label, id=str(i)) for i, (label, _ref) in enumerate(page.links)], id="links")
            links.border_title = "links: enter follows · tab scrolls the page"
            yield links
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.app.refresh_header(self)
        if self.fetching:
            self.query_one("#links").display = False
            self.run_worker(self._fetch_whole, exclusive=True)  # type: ignore[arg-type]
            return
        if self.mode == "describe" and self.links:
            self.query_one("#links", OptionList).focus()
        else:
            self.query_one("#detail-scroll").focus()
            if self.mode == "describe":
                self.query_one("#links").display = False
        self.ready = True
        self.app.screen_ready()

    async def _fetch_whole(self) -> None:
        """Read the projected object whole (fleet/projection.fetch_whole: one GET), then draw the page from it."""
        obj = raw_object(self.app.feed.fleet.model, self.ref)
        try:
            await fetch_whole(obj)
        except Exception as exc:  # noqa: BLE001 - the page says why instead of showing part of the object
            self.query_one("#detail-text", Static).update(
                f"could not read the whole object from the API server: {getattr(exc, 'message', exc)}"
            )
            self.ready = True
            self.app.screen_ready()
            return
        await self.recompose()
        self.on_mount()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        _label, ref = self.links[int(cast(str, event.option.id))]  # every option is made with its index as id
        self.app.open_detail(ref, "describe")

    def action_back(self) -> None:
        self.app.back()

    def action_logs(self) -> None:
        self.app.open_logs(self.ref)

    def action_yaml(self) -> None:
        self.app.open_detail(self.ref, "yaml", replace=True)

    def action_describe(self) -> None:
        self.app.open_detail(self.ref, "describe", replace=True)

    def palette_commands(self) -> list[PaletteCommand]:
        cmds: list[PaletteCommand] = [
            ("object: yaml", "this object as YAML", self.action_yaml),
            ("object: describe", "this object's describe page", self.action_describe),
        ]
        for label, ref in self.links[:30]:
            cmds.append((f"open: {label}", "follow this link", partial(self.app.open_detail, ref, "describe")))
        return cmds
