"""How the client and the simulator key every object: (namespace, name)."""

from __future__ import annotations

Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects


def key_of(obj: dict) -> Key:
    """(namespace or "", name) of a raw object: how the client and the simulator index every object."""
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")
