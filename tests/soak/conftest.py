"""The soak tests reuse the migration helpers in tests/actions."""

from __future__ import annotations

import pathlib
import sys

_ACTIONS = str(pathlib.Path(__file__).resolve().parent.parent / "actions")
if _ACTIONS not in sys.path:
    sys.path.insert(0, _ACTIONS)
