"""The cells the table draws: their one home is fleet/views/cells.py (pure data, shared by the core's views)."""

from __future__ import annotations

from dragoman.fleet.views.cells import (  # noqa: F401  (re-exported for the widgets and their tests)
    OWNERSHIP,
    SEVERITY,
    TONES,
    Cell,
    CellLike,
    ownership_cell,
    severity_cell,
    text_of,
    tone_of,
)
