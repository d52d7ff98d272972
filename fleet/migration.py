"""Where a dragoman migration of a node stands: the `dragoman.io/migration` annotation and the order of the steps a
migration runs (actions/ runs them; the model and the diagnosis read how far a node has come)."""

from __future__ import annotations

import dataclasses
import json

MIGRATION_ANNOTATION = "dragoman.io/migration"

_FINISHED_STATES = {"done", "complete", "completed", "succeeded", "verified", "rolled-back", "rolledback"}

# Every step of a dragoman migration, in the order a full one runs them: the `step` a migration annotation names.
# actions/registry.py maps each to its class.
STEP_ORDER = (
    "preflight",
    "cordon",
    "drain",
    "exclude-device-plugin",
    "scope-driver",
    "device-class",
    "uncordon",
    "verify",
)


@dataclasses.dataclass(frozen=True)
class MigrationState:
    """The `dragoman.io/migration` node annotation: where a dragoman migration of this node stands."""

    pool: str | None
    step: str | None
    state: str | None
    started: str | None = None
    by: str | None = None
    plan: str | None = None

    @property
    def in_progress(self) -> bool:
        return (self.state or "").lower() not in _FINISHED_STATES

    @property
    def finished(self) -> bool:
        return not self.in_progress and (self.state or "").lower() not in ("rolled-back", "rolledback")

    def describe(self) -> str:
        if (self.state or "").lower() == "verified":
            return "verified"  # the whole switch ran and its canary came through: nothing more to say
        return f"{self.step or '?'} {self.state or ''}".strip()


def parse_migration(node: dict) -> MigrationState | None:
    raw = ((node.get("metadata") or {}).get("annotations") or {}).get(MIGRATION_ANNOTATION)
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, TypeError):
        return MigrationState(None, None, "unreadable")
    if not isinstance(data, dict):
        return MigrationState(None, None, "unreadable")
    return MigrationState(
        data.get("pool"),
        data.get("step"),
        data.get("state"),
        data.get("started"),
        data.get("by"),
        data.get("plan") or data.get("planId"),
    )
