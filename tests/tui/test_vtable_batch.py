"""A batch places the rows it adds with one sort when it ends (VTable._fresh): the table must then read exactly as if
each row had been put in place as it came, whatever the batch did to them meanwhile."""

from __future__ import annotations

from dragoman.widgets.vtable import Column, VTable
from hypothesis import given, settings
from hypothesis import strategies as st

KEYS = st.integers(0, 30)
ROWS = st.tuples(st.sampled_from(["a", "b", "c"]), st.text("xyz", max_size=3))
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), KEYS, ROWS),
        st.tuples(st.just("remove"), KEYS),
        st.tuples(st.just("filter"), st.sampled_from([None, "a", "x"])),
        st.tuples(st.just("batch"), st.booleans()),
    ),
    max_size=80,
)


def _table() -> VTable:
    # Sorted by the first cell, then the key: a row whose first cell changes moves.
    return VTable([Column("k", "K"), Column("v", "V")], sort_key=lambda key, row: (row[0], key))


def _predicate(text):
    if text is None:
        return None
    return lambda key, row, facets: text in "".join(row)


def _seen(t: VTable):
    return t.keys(), sorted(t.all_keys()), t.visible_count, t.cursor_key, [t.row(k) for k in t.keys()]


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_a_batch_reads_as_rows_placed_one_by_one(ops):
    batched, plain = _table(), _table()
    depth = 0
    for op in ops:
        if op[0] == "batch":
            if op[1]:
                batched.begin_batch()
                depth += 1
            elif depth:
                batched.end_batch()
                depth -= 1
                if not depth:
                    assert _seen(batched) == _seen(plain)
            continue
        for t in (batched, plain):
            if op[0] == "set":
                t.set_row(op[1], op[2], {"n": op[1]})
            elif op[0] == "remove":
                t.remove_row(op[1])
            else:
                t.set_filter(_predicate(op[1]))
    while depth:
        batched.end_batch()
        depth -= 1
    assert _seen(batched) == _seen(plain)


def test_a_fresh_fill_is_sorted_once_and_readable_inside_the_batch():
    t = _table()
    t.begin_batch()
    for k in range(100, 0, -1):
        t.set_row(k, ("b" if k % 2 else "a", str(k)))
    assert t._fresh  # placed later, not one by one
    t.set_row(7, ("a", "moved"))  # a row of this batch changes its place before it is placed
    t.remove_row(8)
    assert t.keys()[:3] == [2, 4, 6]  # a reader inside the batch sees the rows in place
    t.end_batch()
    assert t.keys()[49:51] == [100, 1] and t.row(7) == ("a", "moved") and 8 not in t.all_keys()


LAZY_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), KEYS, ROWS),
        st.tuples(st.just("lazy"), KEYS, ROWS),
        st.tuples(st.just("remove"), KEYS),
        st.tuples(st.just("filter"), st.sampled_from([None, "a", "x"])),
        st.tuples(st.just("batch"), st.booleans()),
        st.tuples(st.just("read"), KEYS),
        st.tuples(st.just("sort"), st.sampled_from([None, 0, 1]), st.booleans()),
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(LAZY_OPS)
def test_lazy_rows_read_as_rows_set_whole(ops):
    """A row added by its key and place (set_lazy), its cells from the source when read, filtered or drawn, reads
    exactly as the same row set whole; and it is built only when something reads it."""
    truth: dict = {}  # what the source has now
    lazy, plain = _table(), _table()
    built = []

    def source(key):
        built.append(key)
        return [(key, truth[key], {"n": key})] if key in truth else []

    lazy.set_source(source)
    depth = 0
    for op in ops:
        if op[0] == "batch":
            if op[1]:
                lazy.begin_batch()
                plain.begin_batch()
                depth += 1
            elif depth:
                lazy.end_batch()
                plain.end_batch()
                depth -= 1
            continue
        if op[0] == "read":
            if not depth:
                assert lazy.row(op[1]) == plain.row(op[1])
            continue
        if op[0] == "sort":  # by a column (its cells read), or back to the view's order
            lazy.sort_by(op[1], op[2])
            plain.sort_by(op[1], op[2])
            continue
        if op[0] in ("set", "lazy"):
            truth[op[1]] = op[2]
        elif op[0] == "remove":
            truth.pop(op[1], None)
        if op[0] == "set":
            lazy.set_row(op[1], op[2], {"n": op[1]})
            plain.set_row(op[1], op[2], {"n": op[1]})
        elif op[0] == "lazy":
            before = len(built)
            lazy.set_lazy(op[1], (op[2][0], op[1]))  # what the sort key says of the row
            plain.set_row(op[1], op[2], {"n": op[1]})
            if lazy._filter is None and lazy.sort_column is None:
                assert len(built) == before, "set_lazy built a row nothing read"
        elif op[0] == "remove":
            lazy.remove_row(op[1])
            plain.remove_row(op[1])
        else:
            lazy.set_filter(_predicate(op[1]))
            plain.set_filter(_predicate(op[1]))
    while depth:
        lazy.end_batch()
        plain.end_batch()
        depth -= 1
    assert _seen(lazy) == _seen(plain)
    assert [lazy.facets(k) for k in lazy.keys()] == [plain.facets(k) for k in plain.keys()]
    assert not lazy.unbuilt or lazy._filter is None


def test_build_some_builds_lazy_rows_a_slice_at_a_time() -> None:
    """What the filter prompt does while the operator types: lazy rows built a few at a time until none is left, each
    with its source's cells."""
    rows = {k: (("a", "b", "c")[k % 3], f"x{k}") for k in range(100)}
    t = _table()
    t.set_source(lambda key: [(key, rows[key], {"n": key})])
    for k, row in rows.items():
        t.set_lazy(k, (row[0], k))
    assert t.unbuilt == 100
    assert t.build_some(30) == 70
    assert t.build_some(1000) == 0
    assert [t.row(k) for k in t.keys()] == [rows[k] for k in sorted(rows, key=lambda k: (rows[k][0], k))]
