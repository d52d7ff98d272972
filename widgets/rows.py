"""Each view's columns and row function now live with the view, one pure module each in fleet/views/; this module
only re-exports them under the names the row tests (tests/tui/test_tui_rows.py) use."""

from __future__ import annotations

from dragoman.fleet.views.attributes import COLUMNS as ATTRIBUTE_COLUMNS
from dragoman.fleet.views.attributes import attribute_row
from dragoman.fleet.views.cells import SEV_GLYPH, attr_value, counts_text, findings_cell, short_product, without_subject
from dragoman.fleet.views.claims import CLAIM_RANK, claim_row, claim_state
from dragoman.fleet.views.claims import COLUMNS as CLAIM_COLUMNS
from dragoman.fleet.views.devices import COLUMNS as DEVICE_COLUMNS
from dragoman.fleet.views.devices import device_facets, device_row
from dragoman.fleet.views.findings import COLUMNS as FINDING_COLUMNS
from dragoman.fleet.views.findings import finding_facets, finding_row
from dragoman.fleet.views.nodes import COLUMNS as NODE_COLUMNS
from dragoman.fleet.views.nodes import node_facets, node_row, stack_pod_cell
from dragoman.fleet.views.pending import COLUMNS as STUCK_COLUMNS
from dragoman.fleet.views.pending import pod_asks, scheduler_message, stuck_row
from dragoman.fleet.views.pools import COLUMNS as POOL_COLUMNS
from dragoman.fleet.views.pools import fleet_summary, pool_row

__all__ = [
    "ATTRIBUTE_COLUMNS",
    "CLAIM_COLUMNS",
    "CLAIM_RANK",
    "DEVICE_COLUMNS",
    "FINDING_COLUMNS",
    "NODE_COLUMNS",
    "POOL_COLUMNS",
    "SEV_GLYPH",
    "STUCK_COLUMNS",
    "attr_value",
    "attribute_row",
    "claim_row",
    "claim_state",
    "counts_text",
    "device_facets",
    "device_row",
    "finding_facets",
    "finding_row",
    "findings_cell",
    "fleet_summary",
    "node_facets",
    "node_row",
    "pod_asks",
    "pool_row",
    "scheduler_message",
    "short_product",
    "stack_pod_cell",
    "stuck_row",
    "without_subject",
]
