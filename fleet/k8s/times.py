"""Timestamps as the API server writes them (metav1.Time: RFC 3339, seconds, `Z`)."""

from __future__ import annotations

import datetime


def parse_time(text: str | None) -> float | None:
    """RFC 3339 as the API server writes it → epoch seconds."""
    if not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
