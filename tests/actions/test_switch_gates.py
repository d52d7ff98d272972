"""What stops the switch before anything is written: the capacity gate (time-slicing, a narrower winning class),
stale-attribute and class-too-broad caught before the class step; GitOps-owned objects waited for, never patched."""

from __future__ import annotations

import asyncio
import json
import pathlib

from migrate_support import base_args, cli, demo, real_writes
from switch_support import ALL_STEPS, NeverBoth, pool_nodes

A100 = "a100-train"
L4 = "l4-inference"
CLASSES = "deviceclasses.resource.k8s.io"


def _class(sim, name: str, expr: str) -> None:
    sim.store.create(
        CLASSES,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expr}}], "extendedResourceName": "nvidia.com/gpu"},
        },
    )


def _plan(out: str) -> dict:
    return json.loads(out)


async def test_capacity_gate_refuses_a_time_sliced_pool_with_nothing_written(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        rc = await cli(base_args(sim, tmp_path, L4, "--yes", *ALL_STEPS))
        err = capsys.readouterr().err
        assert rc == 3
        assert "capacity gate" in err and "time-slicing ×4" in err and "16 nvidia.com/gpu today, 4 after" in err
        assert "gpu.nvidia.com" in err and "--accept-capacity-change" in err
        assert real_writes(sim) == []
        # Accepted explicitly, the plan has no blocker left and says what was accepted.
        rc = await cli(
            base_args(sim, tmp_path, L4, "--plan", "--output", "json", "--accept-capacity-change", *ALL_STEPS)
        )
        plan = _plan(capsys.readouterr().out)
        assert rc == 0
        pre = plan["steps"][0]
        assert not pre["blockers"] and any("capacity change accepted" in w for w in pre["warnings"])
        assert any("sharing-capacity-change" in w for w in pre["warnings"])


async def test_capacity_gate_names_a_narrower_winning_class(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        _class(
            sim,
            "a100-80gb-only",
            "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu' && "
            "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'",
        )
        rc = await cli(base_args(sim, tmp_path, A100, "--plan", "--output", "json", *ALL_STEPS))
        plan = _plan(capsys.readouterr().out)
        assert rc == 3
        blockers = " ".join(plan["steps"][0]["blockers"])
        assert "DeviceClass a100-80gb-only" in blockers and "matches only 0 of the node's 8 GPUs" in blockers
        assert real_writes(sim) == []


async def test_stale_attribute_and_class_too_broad_caught_before_the_class_step(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        _class(
            sim, "gpu-low-index", "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].index < 4"
        )
        rc = await cli(base_args(sim, tmp_path, A100, "--yes", *ALL_STEPS))
        err = capsys.readouterr().err
        assert rc == 3 and "stale-attribute" in err and "gpu-low-index" in err and "index" in err
        assert real_writes(sim) == []
    async with demo() as sim:
        _class(sim, "all-nvidia", 'device.driver == "gpu.nvidia.com"')
        rc = await cli(base_args(sim, tmp_path, A100, "--plan", "--output", "json", *ALL_STEPS))
        plan = _plan(capsys.readouterr().out)
        assert rc == 0
        pre = plan["steps"][0]
        assert any(w.startswith("class-too-broad: DeviceClass all-nvidia") for w in pre["warnings"])
        dc = next(s for s in plan["steps"] if s["step"] == "device-class")
        assert [c["verb"] for c in dc["changes"]] == ["update"]
        assert "type == 'gpu'" in json.dumps(dc["changes"][0]["after"])
        # Cluster-wide: the MIG pool already on DRA sees its nvidia.com/gpu devices change, and is named.
        assert "a100-mig" in dc["blastRadius"]["pools"]
        assert not dc["blockers"]


async def test_gitops_owned_driver_is_waited_for_not_patched(tmp_path: pathlib.Path, capsys) -> None:
    async with demo(controllers=True) as sim:
        sim.store.delete("poddisruptionbudgets.policy", "ml-training", "llama-pretrain")
        sim.store.delete("jobs.batch", "ml-training", "eval-sweep-8gpu")
        sim.store.delete("statefulsets.apps", "ml-training", "llama-pretrain")
        ds_key = ("daemonsets.apps", "dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-kubelet-plugin")
        sim.store.patch(*ds_key, {"metadata": {"labels": {"argocd.argoproj.io/instance": "gpu-stack"}}})
        watcher = NeverBoth(sim, A100)

        async def argo_sync() -> None:
            # The operator makes the change in Git; Argo CD applies it once dragoman is waiting for it.
            while True:
                cm = sim.store.get_ref("configmaps", "kube-system", f"dragoman-pool-{A100}")
                state = json.loads(cm["data"]["state.json"]) if cm else {}
                if (state.get("steps") or {}).get("scope-driver", {}).get("state") == "running":
                    break
                await asyncio.sleep(0.05)
            ds = json.loads(json.dumps(sim.store.get_ref(*ds_key)))
            terms = ds["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ]["nodeSelectorTerms"]
            for t in terms:
                for e in t["matchExpressions"]:
                    if e["key"] == "cloud.google.com/gke-nodepool":
                        e["values"] = e["values"] + [A100]
            sim.store.patch(
                *ds_key, {"spec": {"template": {"spec": {"affinity": ds["spec"]["template"]["spec"]["affinity"]}}}}
            )

        sync = asyncio.create_task(argo_sync())
        rc = await cli(base_args(sim, tmp_path, A100, "--yes", "--switch-timeout", "60", *ALL_STEPS))
        out = capsys.readouterr().out
        await asyncio.wait_for(sync, 5)
        assert rc == 0, out[-2000:]
        assert "Argo CD application gpu-stack" in out.replace("\n      ", " ")
        assert not [r for r in real_writes(sim) if r.resource == "daemonsets.apps"]
        assert watcher.violations == [] and watcher.seen_dra == set(pool_nodes(sim, A100))
        watcher.unsubscribe()

        # The standing check: drift brings the plugin back on one node (its label reverted); the diagnosis says so.
        from dragoman.fleet.diagnose import diagnose
        from test_switch_e2e import _model

        drifted = pool_nodes(sim, A100)[0]
        sim.store.patch(
            "nodes", None, drifted, {"metadata": {"labels": {"nvidia.com/gpu.deploy.device-plugin": "true"}}}
        )
        for _ in range(200):
            node = sim.store.get_ref("nodes", None, drifted)
            if int(node["status"].get("allocatable", {}).get("nvidia.com/gpu", "0") or 0) > 0:
                break
            await asyncio.sleep(0.05)
        ids = {(f.id, n) for f in diagnose(_model(sim)) for n in [drifted] if n in json.dumps(f.to_json())}
        assert ("both-stacks", drifted) in ids and ("dp-targets-dra-pool", drifted) in ids
