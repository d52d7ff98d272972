"""The :accounting and :load views by keyboard on the demo simulator, their pure row renderers, and a snapshot."""

from __future__ import annotations

from dragoman.fleet import accounting as A
from dragoman.widgets import accounting as WA
from textual.widgets import DataTable, Sparkline, Static

from tests.fleet.test_accounting import demo_model
from tests.tui.conftest import demo_app, snapshot_app, snapshot_copy, static_text, wait_for
from tests.tui.test_tui_snapshots import _keys as _k


def _text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def _rows(screen, selector: str) -> dict:
    table = screen.query_one(selector, DataTable)
    return {rk.value: [str(c) for c in table.get_row(rk)] for rk in table.rows}


async def test_accounting_answers_what_the_a100_move_costs_by_keyboard(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DRAGOMAN_STATE_DIR", str(tmp_path))
    async with demo_app() as (sim, app, pilot):
        await pilot.press("colon", *"accounting", "enter")
        await wait_for(
            pilot,
            lambda: type(app.screen).__name__ == "AccountingScreen" and app.screen.acc is not None,
            what="the accounting view",
        )
        screen = app.screen
        pools = _rows(screen, "#acc-pools")
        assert pools["a100-train"][2] == "24" and pools["a100-train"][7] == "24"  # allocatable, drop if moved
        assert pools["(fleet)"][0] == "fleet"
        # The A100 training pool is the default move: its quota changes meaning, and the summary says how many GPUs go.
        assert screen.pool == "a100-train"
        summary = _text(screen, "#acc-summary")
        assert "Moving a100-train drops another 24 GPUs" in summary and "ml-training/gpu-quota" in summary
        quotas = _rows(screen, "#acc-quotas")
        assert quotas["ml-training|gpu-quota|requests.nvidia.com/gpu"][6] == "≈ same number, new meaning"
        # The dashboard's recording rules sum allocatable: named, with what they miss today and what to count instead.
        await wait_for(
            pilot,
            lambda: "monitoring/gpu-capacity" in _text(screen, "#acc-rules"),
            what="the rules reading allocatable",
        )
        rules = _text(screen, "#acc-rules")
        missed = screen.acc.totals["missedByAllocatableNow"]
        assert (
            f"record: cluster:nvidia_gpu_allocatable:sum: sums allocatable; misses {missed} GPUs today, 24 more after "
            "a100-train moves"
        ) in rules.replace("\n", " ") and "ResourceSlices" in rules
        assert "alert: GPUCapacityDropped" in rules
        # Highlighting another pool recomputes the quotas for that move.
        table = screen.query_one("#acc-pools", DataTable)
        table.focus()
        await pilot.press("k", "k")
        await wait_for(pilot, lambda: screen.pool == "a100-mig", what="the highlighted pool to drive the quotas")
        assert "a100-mig" in _text(screen, "#acc-quota-heading")
        await pilot.press("m")
        assert (tmp_path / "baselines.json").exists()
        # tab to the quotas, y shows the quota's YAML; enter on a pool opens its nodes.
        await pilot.press("tab", "y")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "DetailScreen", what="the quota's YAML")
        assert "kind: ResourceQuota" in str(app.screen.query_one("#detail-text").render())
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="back to accounting")
        screen.query_one("#acc-pools", DataTable).focus()
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: getattr(getattr(app.screen, "view", None), "name", "") == "nodes", what="nodes of the pool"
        )
        assert app.screen.view.scope == ("pool", "a100-mig")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="back to accounting")
        # One A100 node loses its device plugin (allocatable 0): the row and the drop follow live.
        node = sorted(v.name for v in app.feed.model.pool_nodes("a100-train"))[0]
        await app.feed.cluster.request(
            "PATCH",
            f"/api/v1/nodes/{node}/status",
            body={"status": {"allocatable": {"nvidia.com/gpu": "0"}}},
            content_type="application/merge-patch+json",
        )
        await wait_for(
            pilot, lambda: _rows(screen, "#acc-pools")["a100-train"][2] == "16", what="allocatable to drop live"
        )
        row = _rows(screen, "#acc-pools")["a100-train"]
        assert (
            row[1] == "◐ partly" and row[6] == "8" and row[7] == "16"
        )  # 8 GPUs already missed, 16 more when the rest moves
        await pilot.press("escape")
        await wait_for(
            pilot, lambda: getattr(getattr(app.screen, "view", None), "name", "") == "pools", what="back to pools"
        )


async def test_load_view_samples_counts_and_forecasts_claims(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DRAGOMAN_STATE_DIR", str(tmp_path))
    async with demo_app() as (sim, app, pilot):
        await pilot.press("colon", *"load", "enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "LoadScreen", what="the load view")
        screen = app.screen
        model = app.feed.model
        await wait_for(
            pilot,
            lambda: (
                getattr(app.feed, "load_sampler", None)
                and app.feed.load_sampler.latest
                and app.feed.load_sampler.latest.api is not None
            ),
            what="a first sample with /metrics",
        )
        assert _text(screen, "#value-claims") == str(len(model.objects["ResourceClaim"]))
        assert _text(screen, "#value-slices") == str(len(model.objects["ResourceSlice"]))
        assert int(_text(screen, "#value-apiObjects")) == sum(sim.store.counts().values())
        await pilot.press("s")
        await wait_for(pilot, lambda: len(app.feed.load_sampler.samples) >= 2, what="a second sample")
        assert len(screen.query_one("#spark-claims", Sparkline).data) >= 2
        forecast = _rows(screen, "#load-forecast")
        assert "a100-train" in forecast and forecast["a100-train"][1] == "◇ planned"
        assert "--prometheus URL" in _text(screen, "#load-notes")
        await pilot.press("m")
        await wait_for(pilot, lambda: "local mark" in _text(screen, "#load-baselines"), what="the baseline shown")


def test_row_renderers_are_pure_and_say_what_changes() -> None:
    acc = A.account(demo_model())
    train = next(a for a in acc.pools if a.pool == "a100-train")
    assert WA.pool_cells(train)[:3] == ("a100-train", "◇ planned", "24")
    line = next(q for q in acc.quotas if q.quota == "gpu-quota")
    assert WA.quota_cells(line)[-1] == "≈ same number, new meaning"
    assert "drops another 24 GPUs" in WA.summary_text(acc)


def test_accounting_view_snapshot(snap_compare, tmp_path) -> None:
    path = snapshot_copy(tmp_path)

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: pilot.app.feed.loaded, 60, "the snapshot to load")
        await pilot.press("colon", *"accounting", "enter")
        await wait_for(
            pilot,
            lambda: (
                type(pilot.app.screen).__name__ == "AccountingScreen"
                and pilot.app.screen.acc is not None
                and pilot.app.screen.rules_done
            ),
            60,
            what="the accounting view with the snapshot's rules",
        )
        await pilot.pause()

    assert snap_compare(snapshot_app(path), terminal_size=(120, 40), run_before=run_before)


async def test_load_at_80x24_with_prometheus_rows_keeps_before_after_on_screen(tmp_path) -> None:
    app = snapshot_app(snapshot_copy(tmp_path))
    app.prometheus_url = "http://127.0.0.1:9"  # never answers: the rows are there, empty
    async with app.run_test(size=(80, 24)) as pilot:
        await _k("colon", *"load", "enter")(pilot)
        app.screen.sampling.pause()
        await pilot.pause(0.3)
        assert app.screen.query("#value-prometheus-etcdDbSizeBytes"), "the Prometheus rows are shown"
        shown = app.screen.query_one("#load-baselines")
        assert "Before/after of" in static_text(shown, 80)
        assert 0 < shown.region.y and shown.region.bottom <= 24 - 2, shown.region  # above the command bar and footer
