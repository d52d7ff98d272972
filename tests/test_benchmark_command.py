"""The benchmark command's bookkeeping (no timing here: speed is measured by the command itself): `--only` with
pieces, runs saved and printed together, and the issue's targets shown beside what was measured or as not run."""

from __future__ import annotations

import json

import pytest
from dragoman.benchmarks import __main__ as bench
from dragoman.benchmarks.harness import Figure
from dragoman.benchmarks.targets import TARGETS, rows


def test_only_names_benchmarks_and_pieces_and_refuses_what_does_not_exist(capsys: pytest.CaptureFixture) -> None:
    assert bench.parse_only(["envelope:sync,envelope:tui", "sync"]) == {"envelope": ["sync", "tui"], "sync": []}
    assert bench.parse_only(["envelope:sync", "envelope"]) == {"envelope": []}  # the whole wins
    for bad, words in (
        ("envelope:nope", "its parts are sync, whole"),
        ("sync:x", "it runs whole"),
        ("nope", "unknown benchmark 'nope'"),
    ):
        with pytest.raises(SystemExit) as exc:
            bench.main(["--only", bad])
        assert exc.value.code == 2 and words in capsys.readouterr().err


def _figure(name: str, value: float, target: str = "", meets=None) -> dict:
    return bench._to_json(Figure(name, "s", [value], target, meets))


def test_saved_pieces_print_as_one_table_a_later_piece_replacing_an_earlier_figure(tmp_path, capsys) -> None:
    def run(date: str, figures: list[dict]) -> str:
        path = tmp_path / f"{date}.json"
        doc = {
            "date": date,
            "machine": "m",
            "mode": "full",
            "load_start": "9.0/8.0/7.0",
            "load_end": "9.5/8.0/7.0",
            "total_s": 1.0,
            "walls": [["envelope:sync", 1.0, "9.0", "9.5"]],
            "figures": figures,
        }
        path.write_text(json.dumps(doc))
        return str(path)

    live = "envelope: connect + LIST + watch all 17 kinds until live"
    first = run("d1", [_figure(live, 40.0, "< 6 s", lambda v: v < 6), _figure("envelope tui: first paint", 0.2)])
    second = run("d2", [_figure(live, 5.0, "< 6 s", lambda v: v < 6)])
    assert bench.main(["--from", first, second]) == 0
    out = capsys.readouterr().out
    assert "d1" in out and "d2" in out and "9.0/8.0/7.0 at start" in out  # each piece's date and load
    table = out.split("issue 21 target")[0]
    assert table.count(live) == 1 and " 5.00 " in table and "40.0" not in table
    targets = out.split("issue 21 target")[1]
    assert "met" in targets.splitlines()[2] and "not run" in targets  # the live model met; the burst not measured
    with pytest.raises(SystemExit, match="cannot read the saved run"):
        bench.main(["--from", str(tmp_path / "missing.json")])


def test_every_target_of_the_issue_has_a_row_measured_or_not_run() -> None:
    measured = [Figure("envelope tui: first paint", "s", [0.3], "< 1 s", lambda v: v < 1)]
    got = rows(measured)
    assert len(got) == len(TARGETS) + 1  # and the scale fleet against the README
    by_words = {r[0]: r for r in got}
    assert by_words["TUI first paint"][1:4] == ("0.3 s", "< 1 s", "met")
    assert all(r[3] == "not run" for r in got if r[0] != "TUI first paint")


def test_only_a_full_run_is_held_to_the_readme_table(tmp_path, capsys) -> None:
    figure = _figure("sync: connect + LIST all 17 kinds until live", 99.0)
    for mode, compared in (("full", True), ("--quick", False)):
        path = tmp_path / f"{mode}.json"
        doc = {"date": "d", "machine": "m", "mode": mode, "load_start": "1/1/1", "load_end": "1/1/1", "total_s": 1.0}
        path.write_text(json.dumps({**doc, "walls": [], "figures": [figure]}))
        bench.main(["--from", str(path)])
        assert ("vs README: sync: connect" in capsys.readouterr().out) is compared, mode


def test_controlplane_with_envelope_runs_the_envelope_on_the_real_server_and_alone_the_scale_fleet(monkeypatch) -> None:
    ran: list[tuple[str, list[str] | None]] = []

    def fake(name, quick, parts=None):
        ran.append((name, parts))
        return [], 0.0

    monkeypatch.setattr(bench, "run_isolated", fake)
    bench.main(["--controlplane", "--envelope"])
    bench.main(["--controlplane"])
    bench.main(["--envelope"])
    assert ran == [("controlplane", ["envelope"]), ("controlplane", None), ("envelope", None)]
    assert bench.parts_of("controlplane") == ("scale", "envelope")
