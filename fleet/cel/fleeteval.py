"""Evaluating compiled selectors over every device of a fleet's ResourceSlices, deduplicated and cancellable."""

from __future__ import annotations

import dataclasses
import threading
from typing import Callable, Iterable, Sequence

from dragoman.fleet.cel.api import CompiledSelector


@dataclasses.dataclass(frozen=True)
class DeviceResult:
    """One device's verdict; `reason` is empty for a plain match."""

    driver: str
    pool: str
    device: str
    node: str | None
    result: str  # "match" | "no-match" | "error"
    reason: str

    def to_json(self) -> dict:
        return {"driver": self.driver, "pool": self.pool, "device": self.device, "node": self.node, "result": self.result, "reason": self.reason}


@dataclasses.dataclass
class FleetEvaluation:
    """Per-device results plus a summary: {devices, matched, notMatched, errors, evaluations, pools, products}."""

    results: list[DeviceResult]
    summary: dict
    cancelled: bool = False


Cancel = threading.Event | Callable[[], bool] | None


def devices_of_slices(slices: Iterable[dict]):
    """Yield (slice, raw device) for every device in the newest generation of each (driver, pool)."""
    raise NotImplementedError


def evaluate_fleet(selectors: CompiledSelector | Sequence[CompiledSelector], slices: Iterable[dict], *, cancel: Cancel = None, chunk: int = 1000) -> FleetEvaluation:
    """All `selectors` must be true (the scheduler's rule), per device; `cancel` is checked between chunks."""
    raise NotImplementedError
