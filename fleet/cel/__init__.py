"""The DRA CEL environment on cel-python, with Kubernetes semantics where they differ, plus a fast engine."""

from __future__ import annotations

from dragoman.fleet.cel.api import (
    COST_LIMIT,
    MAX_EXPRESSION_LENGTH,
    CelCompileError,
    CelDevice,
    CompiledSelector,
    EvalOutcome,
)
from dragoman.fleet.cel.device import cel_device
from dragoman.fleet.cel.engine import compile_expression, evaluate_all, scheduler_error_message
from dragoman.fleet.cel.fleeteval import DeviceResult, FleetEvaluation, devices_of_slices, evaluate_fleet

__all__ = [
    "COST_LIMIT",
    "MAX_EXPRESSION_LENGTH",
    "CelCompileError",
    "CelDevice",
    "CompiledSelector",
    "EvalOutcome",
    "DeviceResult",
    "FleetEvaluation",
    "cel_device",
    "compile_expression",
    "devices_of_slices",
    "evaluate_all",
    "evaluate_fleet",
    "scheduler_error_message",
]
