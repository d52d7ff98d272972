"""policy/v1: PodDisruptionBudget validation."""

from __future__ import annotations

import json
import re

from dragoman.sim.api.validation.fields import GoValue, invalid


def _pdb_errors(obj: dict, old: dict | None) -> list[dict]:
    spec = obj.get("spec") or {}
    errs: list[dict] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        # The value printed is the internal Go struct (its field names, in its order), as field.Invalid writes it.
        internal = {
            "MinAvailable": spec.get("minAvailable"),
            "Selector": spec.get("selector"),
            "MaxUnavailable": spec.get("maxUnavailable"),
            "UnhealthyPodEvictionPolicy": spec.get("unhealthyPodEvictionPolicy"),
        }
        errs.append(
            invalid(
                "spec",
                GoValue(json.dumps(internal, separators=(",", ":"))),
                "minAvailable and maxUnavailable cannot be both set",
            )
        )
    for key in ("minAvailable", "maxUnavailable"):
        value = spec.get(key)
        if isinstance(value, int) and value < 0:
            errs.append(invalid(f"spec.{key}", value, "must be greater than or equal to 0"))
        elif isinstance(value, str):
            m = re.fullmatch(r"(\d+)%", value)
            if not m:
                errs.append(
                    invalid(
                        f"spec.{key}",
                        value,
                        "a valid percent string must be a numeric string followed by an ending '%' (e.g. "
                        "'1%',  or '93%', regex used for validation is '[0-9]+%')",
                    )
                )
            elif int(m.group(1)) > 100:
                errs.append(invalid(f"spec.{key}", value, "must not be greater than 100%"))
    return errs
