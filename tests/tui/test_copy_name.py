"""`c` copies the selected row's name, k9s's key, and shows it in the notification (issue 30): a terminal without a
clipboard (OSC 52 ignored) gives no sign, so the name is there to select by hand."""

from __future__ import annotations

from tests.tui.conftest import snapshot_app, snapshot_copy
from tests.tui.test_tui_snapshots import _keys


async def test_c_copies_the_rows_name_and_shows_it(tmp_path) -> None:
    app = snapshot_app(snapshot_copy(tmp_path))
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await _keys("5")(pilot)
        key = app.screen.table.cursor_key
        await pilot.press("c")
        await pilot.pause(0.2)
        assert copied == [key[1]]
        shown = [n.message for n in app._notifications]
        assert any(f"copied {key[1]}" in m for m in shown), shown


async def test_help_has_the_whole_legend_and_says_it_scrolls(tmp_path) -> None:
    from dragoman.tui.screens.help import LEGEND
    from textual.containers import VerticalScroll

    # Every glyph the views draw has its meaning in the legend (issue 30: ·1 and ⊘1 were in none).
    for glyph in (
        "◇ device plugin",
        "▲ warning",
        "◉ reserved",
        "* in the left gutter",
        "·1",
        "⊘1",
        "⇄",
        "○ allocated",
        "…",
    ):
        assert glyph in LEGEND, glyph
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await _keys("question_mark")(pilot)
        await pilot.pause(0.3)
        vs = app.screen.query_one(VerticalScroll)
        assert vs.max_scroll_y > 0 and vs.border_subtitle.startswith("↓ more below")
        assert LEGEND.splitlines()[0] in str(app.screen.query_one("#help-text").render())
        await pilot.press("end")
        vs.scroll_end(animate=False)
        await pilot.pause(0.3)
        assert vs.border_subtitle == "end of help"
