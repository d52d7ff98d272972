"""A crash at each step boundary of the switch (and in the middle of a step's writes) resumed to the end, then the last
steps rolled back on their own, never both stacks on a node."""

from __future__ import annotations

import json
import pathlib

from migrate_support import assert_one_intent_one_outcome, audit_records, base_args, cli, cli_process, demo
from switch_support import ALL_STEPS, NeverBoth, pool_nodes
from test_switch_e2e import A100, _ready_a100

CRASHES = [
    "exclude-device-plugin:2:sent",
    "after:exclude-device-plugin",
    "after:scope-driver",
    "after:device-class",
    "after:uncordon",
]


def _state(sim) -> dict:
    return json.loads(sim.store.get_ref("configmaps", "kube-system", f"dragoman-pool-{A100}")["data"]["state.json"])


async def test_crash_at_each_boundary_resumes_then_steps_roll_back(tmp_path: pathlib.Path, capsys) -> None:
    async with demo(controllers=True) as sim:
        _ready_a100(sim)
        nodes = pool_nodes(sim, A100)
        watcher = NeverBoth(sim, A100)
        args = base_args(sim, tmp_path, A100, "--yes", "--switch-timeout", "60", *ALL_STEPS)
        for point in CRASHES:
            rc, out, err = await cli_process(args, env={"DRAGOMAN_CRASH_AT": point})
            assert rc == 97, (point, out[-1500:], err[-1500:])
        rc, out, err = await cli_process(args)
        assert rc == 0, "\n".join(out.splitlines()[-12:] + err.splitlines()[-5:])
        assert _state(sim)["status"] == "done"
        assert watcher.violations == []
        counts = assert_one_intent_one_outcome(audit_records(tmp_path))
        # Each label was written once across the crashes and resumes.
        assert sum(1 for k in counts if "exclude-device-plugin/Node/" in k) == 3
        labels = [r for r in sim.request_log.writes() if r.resource == "nodes" and r.method == "PATCH"]
        assert labels

        # The last steps rolled back on their own (the rest stays): the pool cordoned and drained, the driver off it,
        # the plugin still excluded — no GPUs offered by either stack, never both.
        rc = await cli(
            base_args(
                sim,
                tmp_path,
                A100,
                "--yes",
                "--rollback",
                "--step",
                "uncordon",
                "--step",
                "scope-driver",
                "--switch-timeout",
                "60",
            )
        )
        out = capsys.readouterr().out
        assert rc == 0, out[-2000:]
        assert (
            out.index("rollback:uncordon") < out.index("rollback:scope-driver")
            and "rollback:exclude-device-plugin" not in out
        )
        for n in nodes:
            node = sim.store.get_ref("nodes", None, n)
            assert node["spec"].get("unschedulable")
            assert int(node["status"]["allocatable"].get("nvidia.com/gpu", "0")) == 0
        assert not [
            e for e in sim.store.entries("resourceslices.resource.k8s.io") if e.obj["spec"].get("nodeName") in nodes
        ]
        ds = sim.store.get_ref("daemonsets.apps", "dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-kubelet-plugin")
        assert A100 not in json.dumps(ds["spec"]["template"]["spec"]["affinity"])
        assert watcher.violations == []
        assert_one_intent_one_outcome(audit_records(tmp_path))

        # A second partial rollback, in a later run, still finds what the first one left: the plugin returns.
        rc = await cli(
            base_args(
                sim, tmp_path, A100, "--yes", "--rollback", "--step", "exclude-device-plugin", "--switch-timeout", "60"
            )
        )
        out = capsys.readouterr().out
        assert rc == 0, out[-2000:]
        assert "rollback:exclude-device-plugin" in out
        for n in nodes:
            labels = sim.store.get_ref("nodes", None, n)["metadata"]["labels"]
            assert labels.get("nvidia.com/gpu.deploy.device-plugin") != "false"
        assert watcher.violations == []
        assert_one_intent_one_outcome(audit_records(tmp_path))
