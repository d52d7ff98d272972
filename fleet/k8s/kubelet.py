"""Kubelet versions: the version a node reports, and from which one a kubelet carries the extended-resource bridge."""

from __future__ import annotations

import functools
import re

BRIDGE_VERSION = (1, 36)  # the first kubelet with DRAExtendedResource on by default (GA, locked on, in v1.37)


_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


@functools.lru_cache(maxsize=256)  # a fleet's nodes report a few versions: each node view reads its own
def parse_kubelet_version(text: str | None) -> tuple[int, int, int] | None:
    """`v1.35.4-eks-1a2b` → (1, 35, 4)."""
    if not text:
        return None
    m = _VERSION.match(text)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def has_bridge(version: str | None) -> bool | None:
    """Whether a kubelet of this version admits a pod through the extended-resource bridge (DRAExtendedResource);
    None when the version cannot be read (the diagnosis and the simulator give it the benefit of the doubt, a write's
    preflight does not)."""
    v = parse_kubelet_version(version)
    return None if v is None else v[:2] >= BRIDGE_VERSION
