"""The ownership switch end to end on the demo: the GPU Operator pool to DRA and back, never both stacks on a node,
workloads on bridge claims, the standing check after drift."""

from __future__ import annotations

import json
import pathlib

from dragoman.fleet.diagnose import diagnose
from dragoman.fleet.model import FleetModel
from migrate_support import assert_one_intent_one_outcome, audit_records, base_args, cli, demo
from switch_support import ALL_STEPS, NeverBoth, pool_nodes

A100 = "a100-train"
OP_DS = ("gpu-operator", "nvidia-device-plugin-daemonset")


def _ready_a100(sim) -> None:
    # The demo's pool has a PDB that allows no disruption and an 8-GPU Job waiting for a whole node: take both
    # away so the drained workloads fit back on the pool.
    sim.store.delete("poddisruptionbudgets.policy", "ml-training", "llama-pretrain")
    sim.store.delete("jobs.batch", "ml-training", "eval-sweep-8gpu")
    sim.store.delete("statefulsets.apps", "ml-training", "llama-pretrain")


def _pods_of(sim, ns: str, owner_kind: str, prefix: str) -> list[dict]:
    out = []
    for e in sim.store.entries("pods"):
        p = e.obj
        refs = p["metadata"].get("ownerReferences") or []
        if p["metadata"].get("namespace") == ns and any(
            r["kind"] == owner_kind and r["name"].startswith(prefix) for r in refs
        ):
            out.append(p)
    return out


def _model(sim) -> FleetModel:
    kinds = {
        "Node": "nodes",
        "Pod": "pods",
        "DaemonSet": "daemonsets.apps",
        "ResourceSlice": "resourceslices.resource.k8s.io",
        "DeviceClass": "deviceclasses.resource.k8s.io",
        "ResourceClaim": "resourceclaims.resource.k8s.io",
        "ConfigMap": "configmaps",  # the pool's state (the app reads only dragoman's own)
    }
    m = FleetModel("cloud.google.com/gke-nodepool")
    m.load({k: [dict(e.obj, kind=k) for e in sim.store.entries(r)] for k, r in kinds.items()})
    return m


async def test_gpu_operator_pool_to_dra_and_back_never_both(tmp_path: pathlib.Path, capsys) -> None:
    async with demo(controllers=True) as sim:
        _ready_a100(sim)
        nodes = pool_nodes(sim, A100)
        op_spec = json.dumps(sim.store.get_ref("daemonsets.apps", *OP_DS)["spec"], sort_keys=True)
        watcher = NeverBoth(sim, A100)
        rc = await cli(base_args(sim, tmp_path, A100, "--yes", "--switch-timeout", "60", *ALL_STEPS))
        out = capsys.readouterr().out
        assert rc == 0, out[-3000:]
        assert "8/8 steps done" in out
        assert watcher.violations == [] and watcher.events > 50
        assert watcher.seen_dra == set(nodes)
        # The label path, not a DaemonSet edit: the operator's DaemonSet is as it was, and nobody wrote to it.
        assert json.dumps(sim.store.get_ref("daemonsets.apps", *OP_DS)["spec"], sort_keys=True) == op_spec
        assert not [r for r in sim.request_log.writes() if "nvidia-device-plugin-daemonset" in r.path]
        for n in nodes:
            node = sim.store.get_ref("nodes", None, n)
            assert node["metadata"]["labels"]["nvidia.com/gpu.deploy.device-plugin"] == "false"
            assert not node["spec"].get("unschedulable")
            assert int(node["status"]["allocatable"].get("nvidia.com/gpu", "0")) == 0
        # Deployments and Jobs kept limits nvidia.com/gpu and run on bridge claims on the pool.
        bert = _pods_of(sim, "ml-training", "ReplicaSet", "bert-finetune")
        tok = _pods_of(sim, "ml-training", "Job", "tokenize-shards")
        for p in bert + tok:
            assert p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]
            assert p["status"]["phase"] == "Running", p["metadata"]["name"]
            assert p["spec"]["nodeName"] in nodes
            claim = p["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
            c = sim.store.get_ref("resourceclaims.resource.k8s.io", "ml-training", claim)
            assert c["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"] == "true"
            assert c["status"]["allocation"]["devices"]["results"]
        assert len(bert) == 2 and len(tok) == 1
        # The canary proved the uuids and is gone; the figures are in the pool's ConfigMap.
        assert sim.store.get_ref("pods", "default", "dragoman-canary-a100-train") is None
        state = json.loads(
            sim.store.get_ref("configmaps", "kube-system", f"dragoman-pool-{A100}")["data"]["state.json"]
        )
        canary = state["switch"]["canary"]
        assert canary["seenUUIDs"] and canary["seenUUIDs"] == canary["allocatedUUIDs"] and canary["node"] in nodes
        assert state["switch"]["before"]["allocatableGpu"] == 24 and state["switch"]["after"]["allocatableGpu"] == 0
        assert state["switch"]["after"]["devices"] == 24 and state["switch"]["after"]["bridgeClaims"] >= 3
        assert set(state["switch"]["servedBefore"].values()) == {8}
        assert_one_intent_one_outcome(audit_records(tmp_path))

        # The standing check: a node that loses the label gets the plugin back, and the diagnosis says so.
        m = _model(sim)
        # The :load view reads those figures from the ConfigMap and shows them before → after.
        from dragoman.fleet.baseline import recorded
        from dragoman.widgets.load import migration_lines

        assert [r["label"] for r in recorded(m, A100)] == ["before", "after"]
        assert "allocatableGpu 24→0" in migration_lines(recorded(m, A100))[0]
        # The Pools view's MIGRATION column: every node verified by the canary, not "uncordon done".
        assert m.pool(A100).migration == {"verified": len(nodes)}
        assert not [
            f for f in diagnose(m) if f.id == "both-stacks" and any(n in json.dumps(f.to_json()) for n in nodes)
        ]

        # The whole switch back, never both.
        rc = await cli(base_args(sim, tmp_path, A100, "--yes", "--rollback", "--switch-timeout", "60"))
        out = capsys.readouterr().out
        assert rc == 0, out[-3000:]
        assert (
            out.index("rollback:uncordon")
            < out.index("rollback:scope-driver")
            < out.index("rollback:exclude-device-plugin")
            < out.index("rollback:cordon")
        )
        assert watcher.violations == []
        watcher.unsubscribe()
        for n in nodes:
            node = sim.store.get_ref("nodes", None, n)
            assert node["metadata"]["labels"]["nvidia.com/gpu.deploy.device-plugin"] == "true"
            assert int(node["status"]["allocatable"]["nvidia.com/gpu"]) == 8
            assert not node["spec"].get("unschedulable")
            assert not [
                e for e in sim.store.entries("resourceslices.resource.k8s.io") if e.obj["spec"].get("nodeName") == n
            ]
        assert_one_intent_one_outcome(audit_records(tmp_path))
