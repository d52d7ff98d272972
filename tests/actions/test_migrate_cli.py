"""`dragoman migrate` headless against the demo simulator: cordon and drain, zero writes on a re-run, refusals, drift,
rollback."""

from __future__ import annotations

import json
import pathlib

from dragoman.fleet.migration import MIGRATION_ANNOTATION
from migrate_support import (
    A100,
    L4,
    T4,
    T4_NODES,
    assert_one_intent_one_outcome,
    audit_records,
    base_args,
    cli,
    demo,
    evictions,
    node,
    real_writes,
)

# These tests are about cordon and drain; the default plan is now the whole switch.
CD = ("--step", "cordon", "--step", "drain")


async def test_cordon_and_drain_a_demo_pool_then_rerun_writes_nothing(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        rc = await cli(base_args(sim, tmp_path, L4, *CD, "--yes"))
        out = capsys.readouterr().out
        assert rc == 0, out
        nodes = [
            n.obj
            for n in sim.store.entries("nodes")
            if n.obj["metadata"]["labels"].get("cloud.google.com/gke-nodepool") == L4
        ]
        assert len(nodes) == 3 and all(n["spec"].get("unschedulable") for n in nodes)
        for n in nodes:
            ann = json.loads(n["metadata"]["annotations"][MIGRATION_ANNOTATION])
            assert (
                ann["pool"] == L4
                and ann["step"] == "drain"
                and ann["state"] == "done"
                and ann["plan"].startswith("mig-")
            )
        # No pod a drain evicts is left on the pool; DaemonSet pods stay.
        left = [
            p.obj
            for p in sim.store.entries("pods")
            if p.obj["spec"].get("nodeName") in {n["metadata"]["name"] for n in nodes}
        ]
        assert left and all(p["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet" for p in left)
        ev = evictions(sim)
        assert len(ev) == 6 and set(ev.values()) == {1}
        counts = assert_one_intent_one_outcome(audit_records(tmp_path))
        assert len(counts) == 3 + 6
        for line in out.splitlines():
            assert len(line) <= 80 or line.startswith("audit log: "), line
        assert "3/3 steps done" in out
        # The lease is released, the ConfigMap records the plan.
        lease = sim.store.get_ref("leases.coordination.k8s.io", "kube-system", f"dragoman-pool-{L4}")
        assert lease is not None and not lease["spec"].get("holderIdentity")
        cm = sim.store.get_ref("configmaps", "kube-system", f"dragoman-pool-{L4}")
        assert cm["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "dragoman"
        state = json.loads(cm["data"]["state.json"])
        assert state["status"] == "done" and {s["state"] for s in state["steps"].values()} == {"done"}
        assert json.loads(cm["data"]["plan.json"])["pool"] == L4

        sim.request_log.clear()
        rc = await cli(base_args(sim, tmp_path, L4, *CD, "--yes"))
        assert rc == 0
        assert "nothing to do" in capsys.readouterr().out
        assert real_writes(sim) == []
        rc = await cli(base_args(sim, tmp_path, L4, "--yes", "--step", "cordon"))
        assert rc == 0 and real_writes(sim) == []


async def test_a_blocking_pdb_makes_the_drain_wait_report_and_time_out(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        rc = await cli(base_args(sim, tmp_path, A100, *CD, "--plan"))
        out = capsys.readouterr().out
        assert rc == 0
        assert "PodDisruptionBudget ml-training/llama-pretrain (maxUnavailable 0) allows 0" in out.replace(
            "\n      ", " "
        )
        rc = await cli(base_args(sim, tmp_path, A100, *CD, "--yes", "--drain-timeout", "2"))
        out = capsys.readouterr().out
        assert rc == 1, out
        assert "blocked: The disruption budget llama-pretrain" in out, out
        assert "still blocked after 2 s" in out
        # The other pods went; the budget's three stayed; the run ended cleanly.
        ev = evictions(sim)
        assert not any("llama-pretrain" in p for p in ev) and any("bert-finetune" in p for p in ev)
        lease = sim.store.get_ref("leases.coordination.k8s.io", "kube-system", f"dragoman-pool-{A100}")
        assert not lease["spec"].get("holderIdentity")
        state = json.loads(
            sim.store.get_ref("configmaps", "kube-system", f"dragoman-pool-{A100}")["data"]["state.json"]
        )
        assert state["status"] == "failed" and state["steps"]["drain"]["state"] == "failed"
        assert_one_intent_one_outcome(audit_records(tmp_path))


async def test_a_pending_pod_under_a_zero_budget_neither_warns_nor_blocks_the_drain(
    tmp_path: pathlib.Path, capsys
) -> None:
    """kube-apiserver evicts a Pending pod without asking its PodDisruptionBudget (canIgnorePDB): the plan does not
    warn that the budget will hold the drain, and the drain does not wait on it."""
    async with demo() as sim:
        target = next(
            n.obj["metadata"]["name"]
            for n in sim.store.entries("nodes")
            if n.obj["metadata"]["labels"].get("cloud.google.com/gke-nodepool") == L4
        )
        sim.store.create(
            "poddisruptionbudgets.policy",
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "stuck-budget", "namespace": "default"},
                "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "stuck"}}},
            },
        )
        sim.store.create(
            "pods",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "stuck", "namespace": "default", "labels": {"app": "stuck"}},
                "spec": {
                    "nodeName": target,
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "app", "image": "busybox"}],
                },
                "status": {"phase": "Pending"},
            },
        )
        rc = await cli(base_args(sim, tmp_path, L4, *CD, "--plan"))
        out = capsys.readouterr().out.replace("\n      ", " ")
        assert rc == 0 and "stuck" in out
        assert "PodDisruptionBudget default/stuck-budget" not in out
        rc = await cli(base_args(sim, tmp_path, L4, *CD, "--yes", "--drain-timeout", "20"))
        out = capsys.readouterr().out
        assert rc == 0, out
        assert any("/namespaces/default/pods/stuck/" in p for p in evictions(sim))
        assert sim.store.get("pods", "default", "stuck") is None


async def test_rbac_forbidden_eviction_is_caught_by_preflight_with_nothing_written(
    tmp_path: pathlib.Path, capsys
) -> None:
    async with demo() as sim:
        rc = await cli(base_args(sim, tmp_path, T4, *CD, "--yes", context="dragoman-sim-no-evict"))
        captured = capsys.readouterr()
        assert rc == 3
        assert "refused by preflight, nothing was written" in captured.err
        assert "create pods/eviction in namespace batch" in captured.err
        assert real_writes(sim) == []
        assert audit_records(tmp_path) == []


async def test_a_second_dragoman_is_refused_and_an_expired_lock_taken_over(tmp_path: pathlib.Path, capsys) -> None:
    from dragoman.actions.lock import PoolLock
    from dragoman.fleet.cluster import connect

    async with demo() as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            held = PoolLock(cluster, T4, "kube-system", {"name": "alice@laptop"}, seconds=30)
            await held.acquire()
            rc = await cli(base_args(sim, tmp_path, T4, *CD, "--yes"))
            err = capsys.readouterr().err
            assert rc == 3
            assert "pool t4-batch is being migrated by alice@laptop" in err and "since" in err
            assert not node(sim, T4_NODES[0])["spec"].get("unschedulable")
            await held.release()
            # A lease left behind by a run elsewhere that stopped renewing is taken over with a warning.
            lease = sim.store.get_ref("leases.coordination.k8s.io", "kube-system", "dragoman-pool-t4-batch")
            body = json.loads(json.dumps(lease))
            body["spec"].update(
                holderIdentity="bob@desk pid 1 (dead)", renewTime="2026-01-01T00:00:00.000000Z", leaseDurationSeconds=30
            )
            body["metadata"]["annotations"] = {}
            await cluster.request(
                "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/dragoman-pool-t4-batch", body
            )
        finally:
            await cluster.close()
        rc = await cli(base_args(sim, tmp_path, T4, "--yes", "--step", "cordon"))
        err = capsys.readouterr().err
        assert rc == 0
        assert "held by bob@desk pid 1 (dead) expired" in err and "taking it over" in err
        assert node(sim, T4_NODES[0])["spec"]["unschedulable"] is True


async def test_read_only_plans_but_never_writes(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        assert await cli(["--read-only", *base_args(sim, tmp_path, T4, *CD, "--plan")]) == 0
        rc = await cli(base_args(sim, tmp_path, T4, *CD, "--yes", "--read-only"))
        err = capsys.readouterr().err
        assert rc == 3 and "--read-only" in err
        assert real_writes(sim) == []


async def test_apply_plan_runs_exactly_the_plan_and_refuses_after_drift(tmp_path: pathlib.Path, capsys) -> None:
    from dragoman.fleet.cluster import connect

    async with demo() as sim:
        rc = await cli(base_args(sim, tmp_path, L4, *CD, "--plan", "--output", "json"))
        plan = json.loads(capsys.readouterr().out)
        assert rc == 0 and plan["kind"] == "MigrationPlan" and plan["schemaVersion"] == 1
        assert [s["id"] for s in plan["steps"]] == ["preflight", "cordon", "drain"]
        evict = [c for c in plan["steps"][2]["changes"] if c["verb"] == "evict"]
        assert len(evict) == 6 and all(
            c["detail"]["owner"].startswith("ReplicaSet/") and c["detail"]["gracePeriodSeconds"] is not None
            for c in evict
        )
        assert plan["steps"][1]["blastRadius"]["pools"] == [L4]
        path = tmp_path / "plan.json"
        path.write_text(json.dumps(plan))

        # Another cluster's plan is refused.
        other = json.loads(json.dumps(plan))
        other["cluster"]["kubeSystemUID"] = "another-cluster"
        (tmp_path / "other.json").write_text(json.dumps(other))
        assert await cli(base_args(sim, tmp_path, L4, "--yes", "--apply-plan", str(tmp_path / "other.json"))) == 3
        assert "the plan was made for cluster" in capsys.readouterr().err

        # Someone cordons a node by hand: the plan no longer describes the cluster.
        first = plan["steps"][1]["changes"][0]["name"]
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            await cluster.request(
                "PATCH",
                f"/api/v1/nodes/{first}",
                {"spec": {"unschedulable": True}},
                content_type="application/merge-patch+json",
            )
            sim.request_log.clear()
            rc = await cli(base_args(sim, tmp_path, L4, "--yes", "--apply-plan", str(path)))
            err = capsys.readouterr().err
            assert rc == 3 and "changed since the plan was made" in err and first in err
            assert real_writes(sim) == []
            await cluster.request(
                "PATCH",
                f"/api/v1/nodes/{first}",
                {"spec": {"unschedulable": False}},
                content_type="application/merge-patch+json",
            )
        finally:
            await cluster.close()
        rc = await cli(base_args(sim, tmp_path, L4, "--yes", "--apply-plan", str(path)))
        assert rc == 0, capsys.readouterr()
        assert len(evictions(sim)) == 6


async def test_rollback_of_cordon_uncordons_only_what_dragoman_cordoned(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        assert node(sim, T4_NODES[1])["spec"].get("unschedulable") is True  # cordoned before dragoman came
        assert await cli(base_args(sim, tmp_path, T4, "--yes", "--step", "cordon")) == 0
        assert node(sim, T4_NODES[0])["spec"]["unschedulable"] is True
        rc = await cli(base_args(sim, tmp_path, T4, "--rollback", "--plan"))
        out = capsys.readouterr().out
        assert rc == 0 and "rollback:cordon" in out and "kubectl uncordon gke-ml-prod-t4-batch-c3418deb-tq7g" in out
        assert "uncordon gke-ml-prod-t4-batch-c3418deb-wh8x" not in out
        assert await cli(base_args(sim, tmp_path, T4, "--rollback", "--yes")) == 0
        assert "unschedulable" not in node(sim, T4_NODES[0])["spec"]  # as the real server stores an uncordon
        assert node(sim, T4_NODES[1])["spec"]["unschedulable"] is True
        ann = json.loads(node(sim, T4_NODES[0])["metadata"]["annotations"][MIGRATION_ANNOTATION])
        assert ann["state"] == "rolled-back"
        state = json.loads(
            sim.store.get_ref("configmaps", "kube-system", "dragoman-pool-t4-batch")["data"]["state.json"]
        )
        assert state["steps"]["cordon"]["state"] == "rolled-back" and "cordon" not in state["rollback"]
        # Nothing left to roll back: no write.
        sim.request_log.clear()
        assert await cli(base_args(sim, tmp_path, T4, "--rollback", "--yes")) == 0
        assert real_writes(sim) == []
        assert_one_intent_one_outcome(audit_records(tmp_path))


async def test_batches_canary_first_then_n_at_a_time(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        canary = "gke-ml-prod-l4-inference-f09e1e7f-zj49"
        rc = await cli(
            base_args(
                sim, tmp_path, L4, *CD, "--plan", "--output", "json", "--canary-node", canary, "--batch-size", "1"
            )
        )
        plan = json.loads(capsys.readouterr().out)
        assert rc == 0
        ids = [s["id"] for s in plan["steps"]]
        assert ids == [
            "preflight",
            "cordon@canary",
            "drain@canary",
            "cordon@batch-2",
            "drain@batch-2",
            "cordon@batch-3",
            "drain@batch-3",
        ]
        assert plan["steps"][1]["nodes"] == [canary]
        assert await cli(base_args(sim, tmp_path, L4, *CD, "--canary-node", "nope", "--plan")) == 2
        assert "is not a node of the pool" in capsys.readouterr().err


async def test_without_yes_and_without_a_terminal_nothing_runs(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        # pytest's stdin is not a terminal: the prompt cannot be answered, so the run is refused.
        rc = await cli(base_args(sim, tmp_path, T4, *CD))
        assert rc == 3 and "pass --yes" in capsys.readouterr().err
        assert real_writes(sim) == []


async def test_the_terminal_prompt_wants_the_pool_name_typed(tmp_path: pathlib.Path) -> None:
    import asyncio
    import os
    import pty
    import sys

    async with demo() as sim:

        async def run(answer: str) -> tuple[int, str]:
            master, slave = pty.openpty()
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "dragoman",
                *base_args(sim, tmp_path, T4, *CD),
                stdin=slave,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            os.close(slave)
            os.write(master, (answer + "\n").encode())
            out, _ = await asyncio.wait_for(proc.communicate(), 120)
            os.close(master)
            return proc.returncode, out.decode()

        rc, out = await run("t4")
        assert rc == 3 and "Type the pool name (t4-batch)" in out and "cancelled; nothing was written" in out
        assert real_writes(sim) == []
        rc, out = await run(T4)
        assert rc == 0, out
        assert node(sim, T4_NODES[0])["spec"]["unschedulable"] is True


async def test_a_forced_pod_is_deleted_without_eviction_only_when_named(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        pod = "batch/transcode-daily-m7cfg"
        rc = await cli(base_args(sim, tmp_path, T4, *CD, "--plan", "--force-pod", pod))
        out = capsys.readouterr().out
        assert (
            rc == 0
            and "delete batch/transcode-daily-m7cfg" in out
            and "deleted without eviction" in out.replace("\n      ", " ")
        )
        rc = await cli(base_args(sim, tmp_path, T4, *CD, "--yes", "--force-pod", pod))
        assert rc == 0
        deletes = [r for r in sim.request_log.writes() if r.method == "DELETE" and r.resource == "pods"]
        assert [r.name for r in deletes] == ["transcode-daily-m7cfg"] and not evictions(sim)
        assert sim.store.get_ref("pods", "batch", "transcode-daily-m7cfg") is None


async def test_wait_for_jobs_lets_a_job_pod_finish_instead_of_evicting_it(tmp_path: pathlib.Path, capsys) -> None:
    import asyncio

    async with demo() as sim:
        task = asyncio.ensure_future(cli(base_args(sim, tmp_path, T4, *CD, "--yes", "--wait-for-jobs", "60")))
        loop = asyncio.get_running_loop()
        end = loop.time() + 60
        while not node(sim, T4_NODES[0])["spec"].get("unschedulable"):
            assert loop.time() < end
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        pod = json.loads(json.dumps(sim.store.get_ref("pods", "batch", "transcode-daily-m7cfg")))
        pod["status"]["phase"] = "Succeeded"
        sim.store.update("pods", pod, "status", check_rv=False)
        rc = await asyncio.wait_for(task, 120)
        out = " ".join(capsys.readouterr().out.split())
        assert rc == 0, out
        assert "waiting up to 60 s for Job pod batch/transcode-daily-m7cfg" in out and "finished; not evicted" in out
        assert not evictions(sim)


async def test_the_lock_is_renewed_while_held(tmp_path: pathlib.Path) -> None:
    import asyncio

    from dragoman.actions.lock import PoolLock
    from dragoman.fleet.cluster import connect

    async with demo() as sim:
        cluster = await connect(str(sim.kubeconfig_path))
        try:
            lock = PoolLock(cluster, T4, "kube-system", {"name": "tester"}, seconds=3)
            await lock.acquire()
            first = sim.store.get_ref("leases.coordination.k8s.io", "kube-system", "dragoman-pool-t4-batch")["spec"][
                "renewTime"
            ]
            loop = asyncio.get_running_loop()
            end = loop.time() + 30
            while (
                sim.store.get_ref("leases.coordination.k8s.io", "kube-system", "dragoman-pool-t4-batch")["spec"][
                    "renewTime"
                ]
                == first
            ):
                assert loop.time() < end, "never renewed"
                await asyncio.sleep(0.1)
            lease = sim.store.get_ref("leases.coordination.k8s.io", "kube-system", "dragoman-pool-t4-batch")
            assert lease["spec"]["holderIdentity"] == lock.identity and lease["spec"]["leaseDurationSeconds"] == 3
            assert json.loads(lease["metadata"]["annotations"]["dragoman.io/holder"])["by"] == "tester"
            await lock.release()
            assert not sim.store.get_ref("leases.coordination.k8s.io", "kube-system", "dragoman-pool-t4-batch")[
                "spec"
            ].get("holderIdentity")
        finally:
            await cluster.close()


async def test_drain_alone_on_schedulable_nodes_is_stopped_before_any_eviction(tmp_path: pathlib.Path, capsys) -> None:
    async with demo() as sim:
        rc = await cli(base_args(sim, tmp_path, L4, "--yes", "--step", "drain"))
        out = " ".join(capsys.readouterr().out.split())
        assert rc == 1 and "is not cordoned; run the cordon step first" in out
        assert not evictions(sim)
