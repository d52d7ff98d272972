"""The standalone-chart pool through helm: a fake `helm` on PATH records the upgrades and applies what the charts would;
the values keep earlier pools, carry the driver chart's required settings, and keep the installed chart and version."""

from __future__ import annotations

import json
import pathlib

import fake_helm
from migrate_support import assert_one_intent_one_outcome, audit_records, base_args, cli, demo, real_writes
from switch_support import ALL_STEPS, POOL_LABEL, NeverBoth, pool_nodes

T4 = "t4-batch"
DRA = ("daemonsets.apps", "dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-kubelet-plugin")
NVDP = ("daemonsets.apps", "nvidia-device-plugin", "nvdp-nvidia-device-plugin")
REQ = "requiredDuringSchedulingIgnoredDuringExecution"


def _affinity(sim, key) -> dict:
    return json.loads(json.dumps(sim.store.get_ref(*key)["spec"]["template"]["spec"]["affinity"]))


def _pool_values(term: dict, op: str) -> list[str]:
    return next((e["values"] for e in term["matchExpressions"] if e["key"] == POOL_LABEL and e["operator"] == op), [])


async def test_standalone_chart_pool_through_helm(tmp_path: pathlib.Path, capsys, monkeypatch) -> None:
    async with demo(controllers=True) as sim:
        nodes = pool_nodes(sim, T4)
        for n in nodes:  # the demo cordoned one node and keeps a pod pending behind it; free the pool for the canary
            sim.store.patch("nodes", None, n, {"spec": {"unschedulable": False, "taints": None}})
        for e in list(sim.store.entries("pods")):
            p = e.obj
            if p["status"].get("phase") == "Pending" and (p["spec"].get("nodeSelector") or {}).get(POOL_LABEL) == T4:
                ns = p["metadata"]["namespace"]
                for ref in p["metadata"].get("ownerReferences") or []:
                    res = {"ReplicaSet": "replicasets.apps", "Job": "jobs.batch", "StatefulSet": "statefulsets.apps"}[
                        ref["kind"]
                    ]
                    owner = sim.store.get_ref(res, ns, ref["name"])
                    for up in (owner or {}).get("metadata", {}).get("ownerReferences") or []:
                        sim.store.delete("deployments.apps", ns, up["name"])
                    sim.store.delete(res, ns, ref["name"])
                if sim.store.get_ref("pods", ns, p["metadata"]["name"]) is not None:
                    sim.store.delete("pods", ns, p["metadata"]["name"])
        # The driver as a Helm release too, so both stacks go through helm.
        sim.store.patch(
            *DRA,
            {
                "metadata": {
                    "annotations": {
                        "meta.helm.sh/release-name": "dra-driver-nvidia-gpu",
                        "meta.helm.sh/release-namespace": "dra-driver-nvidia-gpu",
                    },
                    "labels": {"helm.sh/chart": "dra-driver-nvidia-gpu-0.4.0"},
                }
            },
        )
        nvdp_values = {
            "affinity": _affinity(sim, NVDP),
            "config": {"name": "nvdp-nvidia-device-plugin-configs", "default": "default"},
        }
        dra_values = {
            "gpuResourcesEnabledOverride": True,
            "nvidiaDriverRoot": "/home/kubernetes/bin/nvidia",
            "resources": {"computeDomains": {"enabled": False}},
            "kubeletPlugin": {"affinity": _affinity(sim, DRA)},
        }
        helm_dir = tmp_path / "helm"
        fake_helm.install(
            helm_dir,
            {
                "nvidia-device-plugin/nvdp": {
                    "chart": "nvidia-device-plugin-0.18.0",
                    "app_version": "0.18.0",
                    "values": nvdp_values,
                },
                "dra-driver-nvidia-gpu/dra-driver-nvidia-gpu": {
                    "chart": "dra-driver-nvidia-gpu-0.4.0",
                    "app_version": "0.4.0",
                    "values": dra_values,
                },
            },
        )
        monkeypatch.setenv("PATH", f"{helm_dir}:{__import__('os').environ['PATH']}")
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
        watcher = NeverBoth(sim, T4)
        rc = await cli(base_args(sim, tmp_path, T4, "--yes", "--switch-timeout", "60", *ALL_STEPS))
        out = capsys.readouterr().out
        assert rc == 0, out[-3000:]
        assert "$ helm upgrade nvdp nvidia-device-plugin --repo" in out.replace("\n      ", " ")
        assert watcher.violations == [] and watcher.seen_dra == set(nodes)

        ups = [c for c in fake_helm.calls(helm_dir) if c["argv"][0] == "upgrade"]
        real = [c for c in ups if not c["dryRun"]]
        assert [c["argv"][1] for c in real] == ["nvdp", "dra-driver-nvidia-gpu"]
        assert all(any(d["dryRun"] and d["argv"][1] == c["argv"][1] for d in ups[: ups.index(c)]) for c in real)
        # The device plugin: NotIn t4-batch on every term, the earlier pools and other values kept, same chart and
        # version.
        nv = real[0]
        assert nv["argv"][2] == "nvidia-device-plugin" and nv["argv"][nv["argv"].index("--version") + 1] == "0.18.0"
        terms = nv["values"]["affinity"]["nodeAffinity"][REQ]["nodeSelectorTerms"]
        assert len(terms) == 3
        for t in terms:
            assert T4 not in _pool_values(t, "In") or T4 in _pool_values(t, "NotIn")
            assert {"l4-inference", "l4-dev"} <= set(_pool_values(t, "In"))
        assert nv["values"]["config"] == nvdp_values["config"]
        # The driver: t4-batch added to every term, earlier pools kept, the required settings, same chart and version.
        dr = real[1]
        assert dr["argv"][2] == "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu"
        assert dr["argv"][dr["argv"].index("--version") + 1] == "0.4.0"
        assert dr["values"]["gpuResourcesEnabledOverride"] is True
        assert dr["values"]["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia"
        assert dr["values"]["resources"] == {"computeDomains": {"enabled": False}}
        for t in dr["values"]["kubeletPlugin"]["affinity"]["nodeAffinity"][REQ]["nodeSelectorTerms"]:
            assert set(_pool_values(t, "In")) == {"h100-dra", "a100-serve", "a100-mig", "l4-dev", "a100-lab", T4}
        rel = fake_helm.releases(helm_dir)
        assert rel["nvidia-device-plugin/nvdp"]["upgradedWith"] == "nvidia-device-plugin-0.18.0"
        assert rel["dra-driver-nvidia-gpu/dra-driver-nvidia-gpu"]["upgradedWith"] == "dra-driver-nvidia-gpu-0.4.0"
        # Helm made the DaemonSet changes; dragoman wrote to no DaemonSet itself.
        assert not [
            r
            for r in real_writes(sim)
            if r.resource == "daemonsets.apps" and "Go-http" not in r.user_agent and "dragoman" in r.user_agent
        ]
        assert_one_intent_one_outcome(audit_records(tmp_path))

        # Rollback through helm too: the release values go back to what they were.
        rc = await cli(base_args(sim, tmp_path, T4, "--yes", "--rollback", "--switch-timeout", "60"))
        out = capsys.readouterr().out
        assert rc == 0, out[-3000:]
        assert watcher.violations == []
        rel = fake_helm.releases(helm_dir)
        assert rel["nvidia-device-plugin/nvdp"]["values"] == nvdp_values
        assert rel["dra-driver-nvidia-gpu/dra-driver-nvidia-gpu"]["values"] == dra_values
        for n in nodes:
            assert int(sim.store.get_ref("nodes", None, n)["status"]["allocatable"]["nvidia.com/gpu"]) == 1
