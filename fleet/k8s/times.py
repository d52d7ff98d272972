"""Timestamps as the API server writes and reads them (metav1.Time: RFC 3339, seconds, `Z`; metav1.MicroTime:
microseconds): every client and simulator time format and lenient parse is here."""

from __future__ import annotations

import datetime


def format_time(t: datetime.datetime) -> str:
    """metav1.Time as the API server writes it: UTC, whole seconds, `Z` (a naive time is taken as UTC)."""
    return (t.astimezone(datetime.UTC) if t.tzinfo is not None else t).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(t: datetime.datetime) -> str:
    """metav1.MicroTime (a Lease's renewTime, an Event's eventTime): UTC, microseconds, `Z`."""
    return (t.astimezone(datetime.UTC) if t.tzinfo is not None else t).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now_text() -> str:
    """Now, as a metav1.Time."""
    return format_time(datetime.datetime.now(datetime.UTC))


def parse_rfc3339(text: str) -> datetime.datetime:
    """RFC 3339 → an aware datetime (a time without an offset is UTC); ValueError when it is not a time."""
    t = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return t if t.tzinfo is not None else t.replace(tzinfo=datetime.UTC)


def parse_datetime(text: str | None) -> datetime.datetime | None:
    """RFC 3339 as the API server writes it → an aware datetime (None when absent or not a time)."""
    if not text or not isinstance(text, str):
        return None
    try:
        return parse_rfc3339(text)
    except ValueError:
        return None


def parse_time(text: str | None) -> float | None:
    """RFC 3339 as the API server writes it → epoch seconds."""
    t = parse_datetime(text)
    return None if t is None else t.timestamp()
