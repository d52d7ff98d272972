"""Each view's row from recorded objects (k9s's render tests): a JSON fixture of one pool's objects as the demo's API
server serves them (fixtures/, a Kubernetes List), the row the view draws for one object, cell by cell. The row a view
builds alone (`View.row`, what a watch event redraws) must be the row of the whole table (`View.all_rows`).

The fixtures are the demo's objects (sim/scenarios/demo.yaml) of pool l4-dev (device plugin and DRA both on one node)
and pool a100-lab with namespace dra-lab (shared, MIG and tainted devices, claims, pods waiting for several reasons).
"""

from __future__ import annotations

import functools
import json
import pathlib

import pytest
from dragoman.fleet.diagnose import diagnose
from dragoman.fleet.model import FleetModel
from dragoman.fleet.views.base import Fleet
from dragoman.fleet.views.cells import text_of
from dragoman.tui.views import VIEWS

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
A100 = "gke-ml-prod-a100-lab-db545b14-"
L4 = "gke-ml-prod-l4-dev-ab45e629-nwp2"
UNAVAILABLE = (
    "0/27 nodes are available: 1 cannot allocate all claims, 1 node(s) were unschedulable, 25 node(s) didn't match "
    "Pod's node affinity/selector. preemption: 0/27 nodes are available: 27 Preemption is not helpful for scheduling."
)


@functools.cache
def recorded(pool: str) -> Fleet:
    """The fleet of one fixture: loaded, diagnosed and catalogued as the app's feed does it."""
    doc = json.loads((FIXTURES / f"{pool}.json").read_text())
    model = FleetModel()
    model.load_list(doc["items"])
    fleet = Fleet(model)
    fleet.set_findings(diagnose(model))
    fleet.catalogue = model.attribute_catalogue()
    return fleet


ROWS = [
    ("pools", "l4-dev", "l4-dev", ["l4-dev", "✖ BOTH", "1", "L4", "1", "1/1 free", "✖1 ▲1", "—", "v1.37.1", "—"]),
    (
        "nodes",
        "l4-dev",
        L4,
        [L4, "✖ BOTH", "ready", "✔ running", "✔ running", "1/1", "0/1", "✖1", "v1.37.1", "—"],
    ),
    (
        "devices",
        "a100-lab",
        ("gpu.nvidia.com", A100 + "hd77", "gpu-0"),
        [
            "gpu.nvidia.com",
            "a100-lab",
            A100 + "hd77",
            "gpu-0",
            "shared by 2: memory 20Gi left",
            "gpu",
            "NVIDIA A100-SXM4-80GB",
            "80Gi",
        ],
    ),
    (
        "devices",
        "a100-lab",
        ("gpu.nvidia.com", A100 + "p67c", "gpu-0-mig-19-0-1"),
        [
            "gpu.nvidia.com",
            "a100-lab",
            A100 + "p67c",
            "gpu-0-mig-19-0-1",
            "tainted gpu.nvidia.com/xid=79:NoExecute (DeviceTaintRule a100-lab-xid-79)",
            "mig",
            "NVIDIA A100-SXM4-80GB",
            "9728Mi",
        ],
    ),
    (
        "claims",
        "a100-lab",
        ("dra-lab", "notebook-mig"),
        ["◉ reserved", "dra-lab/notebook-mig", "claim", "notebook-mig", "gpu-0-mig-19-0-1", A100 + "p67c"],
    ),
    (
        "claims",
        "a100-lab",
        ("dra-lab", "finetune-a100"),
        ["◌ pending", "dra-lab/finetune-a100", "claim", "—", "—", "—"],
    ),
    (
        "pending",
        "a100-lab",
        ("dra-lab", "allgather"),
        [
            "allgather",
            "dra-lab",
            "✖ binding-failed",
            "2h",
            f"cannot bind to {A100}hd77: device fgpu-1 of claim allgather failed its binding "
            "(pcie-fabric.example.com/attach-failed=True: link training failed on port 3)",
            "Pending",
            "1 claim",
        ],
    ),
    (
        "pending",
        "a100-lab",
        ("dra-lab", "dcgm-lab"),
        [
            "dcgm-lab",
            "dra-lab",
            "✖ admin-access-forbidden",
            "2h",
            "waits: ResourceClaimTemplate dra-lab/dcgm-admin asks for admin access, which namespace dra-lab does not "
            "allow",
            "Pending",
            "1 claim",
        ],
    ),
    (
        "pending",
        "a100-lab",
        ("dra-lab", "bench-a100"),
        [
            "bench-a100",
            "dra-lab",
            "✖ pending-device-taint",
            "2h",
            "waits: no device for 1× nvidia.com/gpu through DeviceClass gpu.nvidia.com can be given now: "
            "example.com/firmware-upgrade=96.00.89:NoSchedule (from DeviceTaintRule a100-lab-firmware) "
            "is not tolerated",
            "Pending",
            "nvidia.com/gpu: 1",
        ],
    ),
    (
        "events",
        "a100-lab",
        ("dra-lab", "finetune-a100.f9cbdaba269176d4"),
        ["Pod dra-lab/finetune-a100", "Warning", "FailedScheduling", "3m", "9", UNAVAILABLE],
    ),
    (
        "attributes",
        "a100-lab",
        "gpu.nvidia.com/architecture",
        ["gpu.nvidia.com/architecture", "string", "10", "Ampere (10)", "a100-lab"],
    ),
]


def _texts(cells) -> list[str]:
    return [text_of(c) for c in cells]


@pytest.mark.parametrize(("view", "pool", "key", "want"), ROWS, ids=[f"{v}-{p}-{k}" for v, p, k, _ in ROWS])
def test_a_views_row_from_recorded_objects(view: str, pool: str, key, want: list[str]) -> None:
    fleet = recorded(pool)
    alone = VIEWS[view]().row(fleet, key)
    assert alone is not None, f"{view} has no row {key!r}"
    assert _texts(alone[0]) == want
    in_table = {k: cells for k, cells, _ in VIEWS[view]().all_rows(fleet)}
    assert _texts(in_table[key]) == want


def test_the_findings_row_of_both_stacks_names_the_node_and_says_why() -> None:
    rows = [_texts(cells) for _, cells, _ in VIEWS["findings"]().all_rows(recorded("l4-dev"))]
    assert [
        "✖ error",
        "both-stacks",
        "l4-dev",
        f"Node {L4}",
        "the device plugin and the DRA driver both serve its GPUs",
    ] in rows
