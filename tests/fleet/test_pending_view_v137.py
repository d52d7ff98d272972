"""The Stuck pods view names v1.37's device findings for the pods they are about (the demo's dra-lab stories)."""

from __future__ import annotations

from dragoman.fleet.findings import CATALOGUE
from dragoman.fleet.views.pending import POD_FINDINGS


def test_every_pod_finding_of_the_device_features_is_shown_for_its_pod():
    v137 = {
        "pending-device-taint",
        "pending-counters",
        "pending-capacity",
        "pending-first-available",
        "binding-pending",
        "binding-failed",
        "claim-missing",
        "class-missing",
        "admin-access-forbidden",
        "filter-timeout",
        "device-unhealthy",
    }
    assert v137 <= set(CATALOGUE) and v137 <= POD_FINDINGS
