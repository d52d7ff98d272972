"""Compiling DRA CEL selectors and evaluating them with Kubernetes' rules (being built)."""

from __future__ import annotations

from dragoman.fleet.cel.api import CelCompileError, CelDevice, CompiledSelector, EvalOutcome, TRUE


def compile_expression(expression: str) -> CompiledSelector:
    raise CelCompileError("the CEL engine is being built", "unsupported")


def evaluate_all(selectors: list[CompiledSelector], device: CelDevice) -> EvalOutcome:
    """The scheduler's rule: every selector must be true; stop at the first false or error."""
    for sel in selectors:
        out = sel.evaluate(device)
        if out.value is not True:
            return out
    return TRUE


def scheduler_error_message(owner: str, index: int, driver: str, pool: str, device: str, error: str) -> str:
    return f"{owner}: selector #{index} on device {driver}/{pool}/{device}: CEL runtime error: {error}"
