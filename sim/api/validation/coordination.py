"""coordination.k8s.io/v1: Lease validation."""

from __future__ import annotations

from dragoman.sim.api.validation.fields import invalid


def _lease_errors(obj: dict, old: dict | None) -> list[dict]:
    spec = obj.get("spec") or {}
    errs = []
    for key in ("leaseDurationSeconds", "leaseTransitions"):
        value = spec.get(key)
        if value is not None and (not isinstance(value, int) or value < (1 if key == "leaseDurationSeconds" else 0)):
            errs.append(
                invalid(
                    f"spec.{key}",
                    value,
                    "must be greater than 0" if key == "leaseDurationSeconds" else "must be greater than or equal to 0",
                )
            )
    return errs
