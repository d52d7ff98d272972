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


def test_the_cp_envelope_stops_the_scheduler_and_controller_manager_past_half_and_says_so(monkeypatch) -> None:
    from dragoman.benchmarks import bench_cp_envelope as cpe

    monkeypatch.delenv("DRAGOMAN_CP_ENVELOPE_RETIRE", raising=False)
    assert cpe.retire_after_settling(1.0) and not cpe.retire_after_settling(0.5)
    monkeypatch.setenv("DRAGOMAN_CP_ENVELOPE_RETIRE", "0")
    assert not cpe.retire_after_settling(1.0)
    monkeypatch.setenv("DRAGOMAN_CP_ENVELOPE_RETIRE", "1")
    assert cpe.retire_after_settling(0.1)
    load = {
        "objects": 1000, "seconds": 4.0, "requests": 2000, "throttled": 0, "retried": 0, "refused_n": 0,
        "created": {"Pod": 900}, "server_cpu": {"kube-apiserver": 5.0}, "cpu_s": 1.0,
        "peak": {"kube-apiserver": 900.0, "etcd": 100.0}, "settle_s": 10.0, "settle_rate": 0.5,
        "retired": {"kube-scheduler": 3600.0, "kube-controller-manager": 4100.0},
    }  # fmt: skip
    rows = {f.name: f for f in cpe.load_figures(load)}
    stopped = next(f for name, f in rows.items() if "stopped once settled" in name)
    assert stopped.runs == [7700.0] and "without their watches" in stopped.note
    real = {
        "label": "kube-apiserver",
        "sync": {"nodes": 1, "pods": 900, "slices": 0, "objects": 1000, "sync_s": 1.0, "peak_mib": 1.0,
                 "sync_cpu_s": 0.5},
        "tui": {"error": "x"}, "idle_cpu": {"kube-apiserver": 1.0}, "server_peak": {"kube-apiserver": 1.0},
        "costs": {"sync": {"kube-apiserver": 1.0}, "live": {"kube-apiserver": 1.0}, "rss": {"kube-apiserver": 1.0}},
        "retired": load["retired"], "kubectl_skipped": "needs ~9.0 GiB, 3.0 GiB available",
    }  # fmt: skip
    figures = cpe.figures_for(real)
    server = [f for f in figures if f.name.startswith("kube-apiserver: kube-apiserver")]
    assert len(server) == 3 and all("controller-manager stopped" in f.note for f in server)
    skipped = next(f for f in figures if "kubectl trio (not run)" in f.name)
    assert "9.0 GiB" in skipped.note
    assert not [f for f in cpe.figures_for({**real, "retired": None}) if "stopped" in f.note]


def test_the_kubectl_trio_waits_for_memory_the_machine_has(monkeypatch) -> None:
    from dragoman.benchmarks import bench_cp_envelope as cpe

    monkeypatch.setattr(cpe, "_available_mib", lambda: 9 * 1024.0)
    assert cpe.kubectl_room(75_000) is None  # half the envelope: ~7 GiB and 1 to spare
    assert cpe.kubectl_room(150_000) == "needs ~15.0 GiB, 9.0 GiB available"  # the whole envelope


async def test_each_way_of_reading_every_pod_counts_the_same_pods() -> None:
    """The cp envelope's list ways (JSON pages, protobuf pages, a WatchList stream) against the embedded simulator:
    each counts every pod of the fleet; the rows say what each cost the server per 1,000 pods."""
    import asyncio
    import os

    from dragoman.benchmarks import bench_cp_envelope as cpe
    from dragoman.sim.scenarios.scale import generate_envelope
    from dragoman.sim.server.users import ADMIN

    from tests.support.sim import running_simulator

    objects = generate_envelope(
        nodes=12, gpu_nodes=4, pods=1200, gpu_pods=40, job_pods=24, namespaces=2, cpu_pool_size=4, gpu_pool_size=2
    )
    want = sum(1 for o in objects if o["kind"] == "Pod")
    assert want > 500  # more than one page
    async with running_simulator(objects=objects) as sim:
        token, ca = sim.users[ADMIN].token, sim.certificate.cert_pem
        ways = await asyncio.to_thread(cpe.list_ways, sim.url, token, ca, os.getpid())
    assert set(ways) == set(cpe.LIST_WAYS)
    assert {way: w.get("pods") for way, w in ways.items()} == dict.fromkeys(cpe.LIST_WAYS, want), ways
    rows = cpe.list_way_figures(ways)
    assert len(rows) == 3 and all("per 1,000 pods" in f.name and f"{want:,} pods" in f.note for f in rows)
