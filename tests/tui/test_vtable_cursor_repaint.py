"""A cursor move repaints only the row it left and the row it reached (VTable.watch_cursor): whatever the moves, the
screen must then read exactly as a whole repaint draws it (rows scrolled, set, removed or marked between moves)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from dragoman.widgets.vtable import Column, VTable
from textual.app import App, ComposeResult


class _TableApp(App):
    def compose(self) -> ComposeResult:
        yield VTable([Column("name", "NAME"), Column("state", "STATE", 5, 12)], sort_key=lambda k, r: k, id="t")


def _fill(t: VTable, n: int) -> None:
    t.begin_batch()
    for i in range(n):
        t.set_row(f"node-{i:03}", (f"node-{i:03}", "ready" if i % 3 else "cordoned"))
    t.end_batch()


@contextlib.asynccontextmanager
async def _filled_table() -> AsyncIterator[tuple[App, Any, VTable]]:
    """A 60x12 app with a focused table of 40 rows, drawn."""
    app = _TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(VTable)
        table.focus()
        _fill(table, 40)
        await pilot.pause()
        yield app, pilot, table


async def _screen(app: App, pilot) -> str:
    await pilot.pause()
    return app.export_screenshot()


async def _whole(app: App, pilot, table: VTable) -> str:
    table.refresh()
    return await _screen(app, pilot)


async def test_each_move_repaints_two_rows_and_the_screen_reads_as_a_whole_repaint() -> None:
    async with _filled_table() as (app, pilot, table):
        steps = [
            ("press", "j"),
            ("press", "j"),
            ("press", "k"),
            ("press", "pagedown"),  # scrolls: a whole repaint
            ("press", "k"),
            ("set", "node-000a"),  # a row above the cursor: rows move, the cursor stays on its row
            ("press", "j"),
            ("remove", "node-001"),
            ("press", "k"),
            ("press", "space"),  # marks the row and moves on
            ("press", "end"),
            ("press", "k"),
            ("press", "home"),
            ("press", "j"),
        ]
        for op, arg in steps:
            if op == "press":
                await pilot.press(arg)
            elif op == "set":
                table.set_row(arg, (arg, "ready"))
            else:
                table.remove_row(arg)
            shown = await _screen(app, pilot)
            assert shown == await _whole(app, pilot, table), f"after {op} {arg}"


async def test_a_move_redraws_only_the_two_rows() -> None:
    async with _filled_table() as (app, pilot, table):
        drawn: list[int] = []
        original = table.render_line

        def spy(y: int):
            drawn.append(y)
            return original(y)

        table.render_line = spy  # type: ignore[method-assign]
        await pilot.press("j")
        await pilot.pause()
        assert sorted(set(drawn)) == [1, 2]  # the first row (line 1, under the header) and the second
