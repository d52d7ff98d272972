"""Pure parts of the TUI: render functions (object → row), the filter syntax, the column layout and the touched-rows
routing."""

from __future__ import annotations

import pytest
from dragoman.fleet.findings import make_finding
from dragoman.fleet.model import FleetModel
from dragoman.fleet.views.cells import Cell, findings_cell, ownership_cell
from dragoman.fleet.views.claims import CLAIM_RANK
from dragoman.fleet.views.nodes import node_row
from dragoman.sim.scenarios import DEMO_PATH, load_scenario
from dragoman.tui.views import ClaimsView, DevicesView, Fleet, NodesView, PoolsView, parse_filter, touched_by
from dragoman.widgets.detail import describe, yaml_text
from dragoman.widgets.header import header_cells
from dragoman.widgets.vtable import _cell_text


@pytest.fixture(scope="module")
def fleet() -> Fleet:
    m = FleetModel()
    m.load_list(load_scenario(DEMO_PATH))
    return Fleet(m)


def test_ownership_always_has_a_glyph_and_a_word() -> None:
    for value in ("device-plugin", "dra", "both", "flapping", "migrating", "none"):
        cell = ownership_cell(value)
        glyph, word = cell.text.split(" ", 1)
        assert glyph and not glyph.isalnum() and word.isalpha() and cell.tone
    assert ownership_cell("both").tone == "both" != ownership_cell("dra").tone != ownership_cell("device-plugin").tone


def test_pool_rows_from_the_demo(fleet: Fleet) -> None:
    rows = {name: cells for name, cells, _ in PoolsView().all_rows(fleet)}
    assert rows["l4-dev"][1] == Cell("✖ BOTH", "both")
    assert rows["a100-train"][1].text == "◇ plugin" and rows["a100-train"][4] == "24"
    assert rows["a100-mig"][1].text == "● DRA" and rows["a100-mig"][5] == "106/112 free"  # the CLI's words
    serve = rows["a100-serve"][1]
    assert serve.text.startswith("◐") and "✖" in serve.text and serve.tone == "both"
    assert "time-slicing x4" in rows["l4-inference"][7]


def test_node_row_and_findings_cell(fleet: Fleet) -> None:
    node = "gke-ml-prod-a100-serve-fb9bedd9-52mw"
    f = make_finding("plugin-flapping", [("Node", "", node)], "flaps", [], pool="a100-serve", node=node)
    cells = node_row(fleet.model.node(node), [f])
    assert cells[0] == node
    assert cells[3].text.startswith("↯ crash") and cells[3].tone == "error"
    assert cells[7] == Cell("▲1", "warning")
    assert findings_cell([]) == Cell("—", "muted")


def test_claims_put_pending_and_failed_first_and_mark_the_bridge(fleet: Fleet) -> None:
    view = ClaimsView()
    rows = sorted(view.all_rows(fleet), key=lambda r: view.sort_key(r[0], r[1]))
    states = [cells[0].text.split(" ", 1)[1] for _, cells, _ in rows]
    ranks = [CLAIM_RANK[s] for s in states]
    assert ranks == sorted(ranks) and "pending" in states
    assert any(cells[2] == Cell("⇄ bridge", "dra") for _, cells, _ in rows)


def test_filter_words_labels_attributes_and_prefixes() -> None:
    facets = {
        "gpu.nvidia.com/productName": "NVIDIA H100 80GB HBM3",
        "pool": "h100-dra",
        "cloud.google.com/gke-nodepool": "h100-dra",
    }
    row = ("gpu-0", Cell("free", "ok"))
    assert parse_filter("") is None
    assert parse_filter("gpu-0")(None, row, facets)
    assert not parse_filter("gpu-1")(None, row, facets)
    assert parse_filter("productName=nvidia*h100*")(None, row, facets)  # a glob anywhere in the value
    assert parse_filter("productName=NVIDIA*")(None, row, facets)
    assert parse_filter("pool=h100-dra free")(None, row, facets)
    assert not parse_filter("pool=a100-serve")(None, row, facets)
    assert parse_filter("gke-nodepool=h100-dra")(None, row, facets)  # a label by its name after the prefix
    assert not parse_filter("nosuchkey=x")(None, row, facets)


def test_cell_trimming() -> None:
    assert _cell_text("abcdef", 4) == "abc…"
    assert _cell_text("gke-ml-prod-a100-serve-fb9bedd9-52mw", 16, "middle") == "gke-ml-p…d9-52mw"


def test_header_names_cluster_context_version_mode_and_state() -> None:
    from dragoman.tui.feed import SourceInfo

    info = SourceInfo(cluster="prod", context="prod-admin", version="v1.37.1", read_only=True, badge="DEMO")
    text = "".join(c.text for c in header_cells(info, "reconnecting", "cannot reach the cluster"))
    for part in ("DEMO", "prod", "ctx prod-admin", "v1.37.1", "READ-ONLY", "reconnecting", "cannot reach"):
        assert part in text


def test_describe_follows_links(fleet: Fleet) -> None:
    m = fleet.model
    claim = next(c for c in m.objects["ResourceClaim"].values() if (c.get("status") or {}).get("allocation"))
    ns, name = claim["metadata"]["namespace"], claim["metadata"]["name"]
    page = describe(fleet, ("ResourceClaim", ns, name))
    kinds = {ref[0] for _, ref in page.links}
    assert {"Device", "Node"} <= kinds
    pod_page = describe(fleet, ("Pod", ns, m.claim_pods(claim)[0][1])) if m.claim_pods(claim) else None
    if pod_page is not None:
        assert any(ref == ("ResourceClaim", ns, name) for _, ref in pod_page.links)
    cls = describe(fleet, ("DeviceClass", "", "gpu.nvidia.com"))
    assert "devices match of" in cls.text()
    assert "managedFields" not in yaml_text({"kind": "X", "metadata": {"name": "a", "managedFields": [1]}})


def test_one_pod_event_touches_its_node_pool_and_claims(fleet: Fleet) -> None:
    from dragoman.fleet.store import Change

    m = fleet.model
    pod = next(p for p in m.objects["Pod"].values() if (p.get("status") or {}).get("extendedResourceClaimStatus"))
    new = {
        **pod,
        "metadata": {**pod["metadata"], "resourceVersion": "999999"},
        "status": {**pod["status"], "phase": "Failed"},
    }
    t = touched_by(fleet, [Change("Pod", "MODIFIED", new, pod)])
    assert t.nodes == {pod["spec"]["nodeName"]} and len(t.pools) == 1 and len(t.claims) == 1 and not t.everything
    assert len(list(NodesView().affected(fleet, t))) == 1
    assert list(DevicesView().affected(fleet, t)) == []
    # A heartbeat (an annotation) touches only the pod's own row, nothing derived.
    beat = {**pod, "metadata": {**pod["metadata"], "resourceVersion": "1000000", "annotations": {"x": "1"}}}
    t = touched_by(fleet, [Change("Pod", "MODIFIED", beat, pod)])
    assert not t.nodes and not t.pools and not t.claims and len(t.pods) == 1


@pytest.mark.parametrize(
    "view",
    [DevicesView(), DevicesView(("pool", "a100-mig")), DevicesView(("node", "gke-ml-prod-a100-serve-fb9bedd9-52mw"))]
    + [NodesView(), NodesView(("pool", "a100-serve")), ClaimsView()],
    ids=lambda v: f"{v.name}-{v.scope}",
)
def test_a_lazy_views_order_is_its_rows_sort_keys(fleet: Fleet, view) -> None:
    """A view that builds only the rows on screen places each by `order`: the same rows, in the same places, as the
    sort keys of its rows built whole; and `rows_near` builds the row asked for."""
    rows = list(view.all_rows(fleet))
    assert rows, "an empty view proves nothing"
    assert sorted(view.order(fleet)) == sorted((key, view.sort_key(key, cells)) for key, cells, _ in rows)
    for key, cells, facets in rows[:: max(1, len(rows) // 10)]:
        assert (key, cells, facets) in list(view.rows_near(fleet, key))
