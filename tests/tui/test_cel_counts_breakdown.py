"""The playground's counts line sums the per-node pools by node pool once per outcome: an outcome is drawn twice (when
evaluated, then explained with "allocatable now"), and the sum over 5,000 pools ran on the UI thread each time."""

from __future__ import annotations

from dragoman.fleet.cel_playground import Outcome
from dragoman.widgets.cel_results import counts_markup


def _outcome(matched: int) -> Outcome:
    pools = [
        {"pool": f"node-{i}", "node": f"node-{i}", "devices": 8, "matched": matched, "errors": 0} for i in range(6)
    ]
    summary = {
        "devices": 48,
        "matched": 6 * matched,
        "notMatched": 48 - 6 * matched,
        "errors": 0,
        "products": [{"product": "NVIDIA H100 80GB HBM3", "devices": 48, "matched": 6 * matched, "errors": 0}],
        "pools": pools,
    }
    return Outcome(expression="true", summary=summary)


def test_an_outcome_drawn_twice_is_summed_by_pool_once_and_a_new_one_again() -> None:
    asked: list[str | None] = []

    def pool_of(node: str | None) -> str | None:
        asked.append(node)
        return "train" if node in ("node-0", "node-1", "node-2") else "infer"

    out = _outcome(2)
    first = counts_markup(out, pool_of)
    assert "by pool: infer 6/24 · train 6/24" in first
    out.allocatable = "allocatable now 10/12"
    second = counts_markup(out, pool_of)
    assert len(asked) == 6, "the second drawing reuses the first's breakdown"
    assert second.splitlines()[1:] == first.splitlines()[1:] and "allocatable now 10/12" in second
    fresh = counts_markup(_outcome(8), pool_of)
    assert len(asked) == 12 and "by pool: infer 24/24 · train 24/24" in fresh

    def other_pools(node: str | None) -> str | None:
        return "all"

    assert "by pool: all 12/48" in counts_markup(out, other_pools), "another pool_of is asked again"


def test_the_caret_of_a_long_selector_stays_in_view() -> None:
    """At 80 columns a long selector's caret fell past the line's end; cut around the caret, both lines fit and the
    caret still points at the same character."""
    from dragoman.fleet.cel import engine
    from dragoman.fleet.cel.api import CelCompileError
    from dragoman.widgets.cel_results import caret_in_view
    from rich.cells import cell_len

    expr = (
        'device.driver == "gpu.nvidia.com" && '
        'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H1") &&& x'
    )
    try:
        engine.compile_expression(expr)
    except CelCompileError as exc:
        whole = exc.caret(expr, terminal=True)
    snippet, marks = (line[3:] for line in whole.split("\n"))
    assert snippet[marks.index("^")] == "&"
    for width in (30, 76, 100):
        cut = caret_in_view(whole, width)
        top, bottom = cut.split("\n")
        assert cell_len(bottom) <= width and top.startswith(" | …") and bottom.startswith(" | .")
        at = bottom.index("^")
        assert top[at] == "&" and top[at - 2 : at + 3] == "&&& x", (width, cut)
    assert caret_in_view(whole, 118) == whole  # the caret fits: as cel-go draws it
    assert caret_in_view("", 76) == ""


def test_a_pasted_100000_character_line_is_cut_around_its_caret() -> None:
    """The cut walks back from the caret once: a pasted line of 100,000 characters (the playground's editor takes it)
    is cut like a short one (it took 30 s of the UI thread, measuring the rest of the line at every step)."""
    from dragoman.widgets.cel_results import caret_in_view

    n = 100_000
    cut = caret_in_view(" | " + "a" * (n - 1) + "&\n | " + "." * (n - 1) + "^", 76)
    top, bottom = cut.split("\n")
    assert len(top) == len(bottom) == 52 and top.endswith("a&") and bottom.endswith(".^")
