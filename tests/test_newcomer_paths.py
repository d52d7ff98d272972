"""Issue 29's three newcomer paths may not grow: the dragoman files whose functions run along each, counted by
tests/support/paths.py (a `sys.setprofile` trace; `python -m tests.support.paths` lists them, in order, with the first
function each contributes). A new relay, adapter or forwarding module on a path makes its count grow and fails here:
fold it, or raise the bound in the same change and say why."""

from __future__ import annotations

import pathlib

from tests.support.paths import slice_to_devices_row, stuck_pod_to_finding, wizard_apply_to_cordon_patch

# Each path's files at most. Issue 29 counted 11, 12 and 12 by hand along each path's main line; this trace counts
# every product file whose code runs on the way (21, 24 and 23 when it was written, the stuck pod's with every rule
# family running beside the pods' rule; now the pods' rule alone). The Devices path lost the CEL library's quantity
# adapter and Fleet.node_pool, a relay to FleetModel.pool_of_node. What Textual's compositor calls to draw is left out
# (it draws on its own schedule, so a redraw under load made the wizard's path one file longer now and then).
SLICE_TO_ROW = 20
APPLY_TO_PATCH = 23
POD_TO_FINDING = 21


def _says(files: list[str], bound: int) -> str:
    return f"{len(files)} files, at most {bound}:\n  " + "\n  ".join(files)


async def test_a_resource_slice_reaches_its_devices_row_through_few_files() -> None:
    trace = await slice_to_devices_row()
    assert trace.stopped, "the row never appeared"
    # The path's ends are in it: the watch, the model, the view and the table.
    assert {"fleet/informer.py", "fleet/model.py", "fleet/views/devices.py", "widgets/vtable.py"} <= set(trace.files)
    assert len(trace.files) <= SLICE_TO_ROW, _says(trace.files, SLICE_TO_ROW)


async def test_the_wizards_apply_key_reaches_an_audited_cordon_patch_through_few_files(tmp_path: pathlib.Path) -> None:
    trace = await wizard_apply_to_cordon_patch(tmp_path)
    assert trace.stopped, "the cordon's PATCH was never audited as applied"
    assert {"tui/screens/migrate.py", "actions/cordon.py", "fleet/cluster.py", "actions/audit.py"} <= set(trace.files)
    assert len(trace.files) <= APPLY_TO_PATCH, _says(trace.files, APPLY_TO_PATCH)


def test_a_stuck_pod_reaches_its_finding_text_through_few_files() -> None:
    trace, texts = stuck_pod_to_finding()
    assert [t["id"] for t in texts] == ["pending-unmapped"], texts
    assert {"fleet/diagnose/pods.py", "fleet/findings.py"} <= set(trace.files)
    assert len(trace.files) <= POD_TO_FINDING, _says(trace.files, POD_TO_FINDING)
