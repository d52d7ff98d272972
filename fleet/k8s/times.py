"""Timestamps as the API server writes them (metav1.Time: RFC 3339, seconds, `Z`)."""

from __future__ import annotations

import datetime


def parse_datetime(text: str | None) -> datetime.datetime | None:
    """RFC 3339 as the API server writes it → an aware datetime (None when absent or not a time)."""
    if not text or not isinstance(text, str):
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def parse_time(text: str | None) -> float | None:
    """RFC 3339 as the API server writes it → epoch seconds."""
    t = parse_datetime(text)
    return None if t is None else t.timestamp()
