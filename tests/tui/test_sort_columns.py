"""k9s's sort keys on every table view (issue 30): Shift-N by name, Shift-A by age, ctrl+←/→ selects a column and
ctrl+o sorts by it; the same key again reverses. Numbers in names sort by value, ages by duration; rows set later take
their place by the same order, and the cursor stays on its row."""

from __future__ import annotations

from dragoman.widgets.vtable import Column, VTable, sort_value

from tests.tui.conftest import snapshot_app, snapshot_copy
from tests.tui.test_tui_snapshots import _keys


def test_numbers_sort_by_value_and_ages_by_duration() -> None:
    names = ["node-10", "node-9", "node-100", "—", "Node-2"]
    assert sorted(names, key=sort_value) == ["Node-2", "node-9", "node-10", "node-100", "—"]
    ages = ["3h", "40m", "2d", "59s", "—", "120m"]
    assert sorted(ages, key=lambda a: sort_value(a, "age")) == ["59s", "40m", "120m", "3h", "2d", "—"]


def _table() -> VTable:
    t = VTable([Column("name", "NAME"), Column("age", "AGE")], sort_key=lambda k, r: k)
    for key, age in (("b-2", "5m"), ("a-10", "1h"), ("a-9", "30s")):
        t.set_row(key, (key, age))
    return t


def test_sort_by_a_column_then_reverse_then_the_views_order() -> None:
    t = _table()
    assert t.keys() == ["a-10", "a-9", "b-2"]  # the view's own order (the key, as strings)
    t.action_sort_name()
    assert t.keys() == ["a-9", "a-10", "b-2"] and t.sort_label() == "sorted by NAME ↑"
    t.action_sort_name()
    assert t.keys() == ["b-2", "a-10", "a-9"] and t.sort_label() == "sorted by NAME ↓"
    t.action_sort_age()
    assert t.keys() == ["a-9", "b-2", "a-10"]
    # A row set later takes its place in the chosen order; a changed age moves its row.
    t.set_row("c-1", ("c-1", "2m"))
    t.set_row("a-10", ("a-10", "1s"))
    assert t.keys() == ["a-10", "a-9", "c-1", "b-2"]
    t.selected_column = 1
    t.action_sort_selected()  # AGE is sorted ascending already: ctrl+o reverses it
    assert t.keys() == ["b-2", "c-1", "a-9", "a-10"]
    t.action_sort_selected()  # a third time: the view's own order again
    assert t.sort_column is None and t.keys() == ["a-10", "a-9", "b-2", "c-1"]


def test_a_filter_survives_a_sort() -> None:
    t = _table()
    t.set_filter(lambda k, r, f: k.startswith("a"))
    t.action_sort_age()
    assert t.keys() == ["a-9", "a-10"]


async def test_shift_a_sorts_stuck_pods_by_age_and_the_heading_and_header_say_so(tmp_path) -> None:
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _keys("5")(pilot)
        table = app.screen.table
        before = table.keys()
        table.cursor = 3
        held = table.cursor_key
        await _keys("A")(pilot)
        assert table.cursor_key == held, "the cursor stays on its row"
        ages = [sort_value(str(table.row(k)[3]), "age") for k in table.keys()]
        assert ages == sorted(ages) and table.keys() != before or len(set(ages)) == 1
        assert "sorted by AGE ↑" in str(app.screen.query_one("#heading").content)
        assert "AGE↑" in table.render_line(0).text
        await _keys("A")(pilot)
        ages = [sort_value(str(table.row(k)[3]), "age") for k in table.keys()]
        assert ages == sorted(ages, reverse=True)
        assert "AGE↓" in table.render_line(0).text


async def test_ctrl_arrows_select_a_column_and_ctrl_o_sorts_the_nodes_by_it(tmp_path) -> None:
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await _keys("2", "ctrl+right", "ctrl+right", "ctrl+o")(pilot)
        table = app.screen.table
        assert table.columns[table.sort_column].label == "STATE"
        states = [sort_value(str(table.row(k)[2])) for k in table.keys()]
        assert states == sorted(states)
        assert "sorted by STATE ↑" in str(app.screen.query_one("#heading").content)
        await _keys("N")(pilot)  # Shift-N: the NODE column, k9s's NAME
        names = [sort_value(str(table.row(k)[0])) for k in table.keys()]
        assert table.sort_column == 0 and names == sorted(names)


async def test_help_lists_the_sort_keys(tmp_path) -> None:
    from dragoman.tui.screens.help import HelpScreen

    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _keys("5", "question_mark")(pilot)
        assert isinstance(app.screen, HelpScreen)
        focused = dict(dict(app.screen.groups)["Focused"])
        assert any("N" in k.split(" / ") for k in focused), focused
        assert any("A" in k.split(" / ") for k in focused), focused
        assert any("ctrl+o" in k.lower() or "^o" in k for k in focused), focused


async def test_a_populate_superseded_before_its_worker_starts_leaves_no_coroutine_unawaited(tmp_path) -> None:
    """populate() twice in one go (a filter and a fleet reload landing together): the exclusive worker cancels the
    first before it starts. It must not have made a coroutine that is then never awaited (CI printed that warning)."""
    import gc
    import warnings

    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _keys("5")(pilot)
        screen = app.screen
        rows = screen.table.keys()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            for _ in range(3):
                screen.populate()
            await pilot.pause(0.5)
            gc.collect()
        assert not [w for w in seen if "never awaited" in str(w.message)], [str(w.message) for w in seen]
        assert screen.table.keys() == rows  # the last populate filled the view as before
