"""The steps by name: one table, read top to bottom. The classes a plan runs are exactly these (no step replaces
another by being imported later), and the table names every step of STEP_ORDER, in that order."""

from __future__ import annotations

from dragoman.actions.bridge_preflight import SwitchPreflight
from dragoman.actions.cordon import Cordon
from dragoman.actions.device_class import DeviceClassStep
from dragoman.actions.drain import Drain
from dragoman.actions.exclude_plugin import ExcludeDevicePlugin
from dragoman.actions.preflight import Preflight
from dragoman.actions.scope_driver import ScopeDriver
from dragoman.actions.steps import Step
from dragoman.actions.verify import GatedUncordon, Verify
from dragoman.fleet.migration import STEP_ORDER

STEPS: dict[str, type[Step]] = {
    # The layer's checks (RBAC, PDBs, room), plus the switch's items and the capacity gate when the plan switches.
    "preflight": SwitchPreflight,
    "cordon": Cordon,
    "drain": Drain,
    "exclude-device-plugin": ExcludeDevicePlugin,
    "scope-driver": ScopeDriver,
    "device-class": DeviceClassStep,
    # Gated on the capacity re-check once the pool is switched; a plain uncordon when it is not.
    "uncordon": GatedUncordon,
    "verify": Verify,
}
if tuple(STEPS) != STEP_ORDER or any(cls.name != name for name, cls in STEPS.items()):
    raise RuntimeError("actions/registry.py must name every step of STEP_ORDER, in order, under its own name")


def step_class(name: str) -> type[Step]:
    """The class that runs the step `name`; KeyError for a name that is not a step."""
    return STEPS[name]


def preflight(step_id: str, nodes: list[str]) -> Preflight:
    """The preflight step, typed as such: the plan builder calls its `check` with the other steps' plans."""
    return SwitchPreflight(step_id, nodes)
