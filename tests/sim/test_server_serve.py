"""`dragoman sim serve`, scenarios, kubeconfigs, validation on write, and in-process controllers on the simulator."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from dragoman.fleet.errors import UserError
from dragoman.sim import scenario
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

from tests.support.sim import running_simulator


def _serve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dragoman", "sim", "serve", *args], capture_output=True, text=True, timeout=60
    )


def test_serve_refuses_a_non_loopback_host_with_a_sentence():
    proc = _serve("--host", "0.0.0.0")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "only on loopback" in proc.stderr


def test_serve_refuses_a_bad_fault_spec_and_a_missing_scenario(tmp_path):
    proc = _serve("--faults", "error=lots")
    assert proc.returncode == 2 and "--faults:" in proc.stderr and "rate" in proc.stderr
    proc = _serve("--scenario", str(tmp_path / "absent.yaml"))
    assert proc.returncode == 2 and "the scenario" in proc.stderr and "does not exist" in proc.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: [unclosed\n")
    proc = _serve("--scenario", str(bad))
    assert proc.returncode == 2 and "not valid YAML" in proc.stderr


def test_scenario_files_split_lists_config_and_unknown_kinds(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n1}}\n- "
        "{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: web, namespace: "
        "default}}\n---\napiVersion: sim.dragoman.io/v1\nkind: SimulatorConfig\nspeed: 5\nfaults: "
        "latency=1ms\nusers: [{name: viewer, clusterRoles: [view]}]\n---\n{apiVersion: v1, kind: "
        "ConfigMap, metadata: {name: c, namespace: team}}\n"
    )
    sc = scenario.load(str(f))
    assert [o["kind"] for o in sc.objects] == ["Node", "ConfigMap"]
    assert sc.skipped == {"networking.k8s.io/v1/Ingress": 1}
    assert sc.speed == 5 and sc.faults == "latency=1ms" and sc.users[0]["name"] == "viewer"
    with pytest.raises(UserError) as err:
        scenario.load("no-such-scenario")
    assert "no scenario named" in err.value.message


async def test_written_kubeconfig_works_with_the_standard_loader(tmp_path):
    async with running_simulator(
        objects=[{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "team"}}],
        users=[{"name": "viewer", "clusterRoles": ["view"]}],
    ) as sim:
        path = tmp_path / "kc.yaml"
        sim.write_kubeconfig(path)
        kc = sim.kubeconfig()
        assert kc["current-context"] == "dragoman-sim"
        assert {c["name"] for c in kc["contexts"]} == {"dragoman-sim", "dragoman-sim-viewer"}
        assert kc["clusters"][0]["cluster"]["server"].startswith("https://127.0.0.1:")
        for ctx, can_write in (("dragoman-sim", True), ("dragoman-sim-viewer", False)):
            api = await config.new_client_from_config(config_file=str(path), context=ctx)
            try:
                v1 = client.CoreV1Api(api)
                cms = await v1.list_namespaced_config_map("team")
                # Every namespace holds the cluster's CA bundle, as kube-controller-manager publishes it.
                assert [c.metadata.name for c in cms.items] == ["c", "kube-root-ca.crt"]
                if can_write:
                    await v1.patch_namespaced_config_map("c", "team", {"data": {"a": "b"}})
                else:
                    with pytest.raises(ApiException) as err:
                        await v1.patch_namespaced_config_map("c", "team", {"data": {"a": "c"}})
                    assert err.value.status == 403
            finally:
                await api.close()
        assert [(r.user, r.status) for r in sim.request_log.find(method="PATCH")] == [("admin", 200), ("viewer", 403)]


async def test_writes_are_defaulted_and_validated_as_the_real_api_does():
    async with running_simulator() as sim:
        from tests.support.sim import api_client

        c = await api_client(sim)
        try:
            rv1 = client.ResourceV1Api(c)
            bad = {"metadata": {"name": "bad"}, "spec": {"selectors": [{"cel": {"expression": "device.nme == 1"}}]}}
            with pytest.raises(ApiException) as err:
                await rv1.create_device_class(bad)
            body = json.loads(err.value.body)
            assert err.value.status == 422 and body["reason"] == "Invalid"
            assert body["message"].startswith(
                'DeviceClass.resource.k8s.io "bad" is invalid: spec.selectors[0].cel.expression: Invalid value'
            )
            assert body["details"]["causes"][0]["field"] == "spec.selectors[0].cel.expression"
            assert sim.store.get("deviceclasses", None, "bad") is None
            v1 = client.CoreV1Api(c)
            pod = await v1.create_namespaced_pod(
                "default", {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
            )
            assert pod.spec.restart_policy == "Always" and pod.spec.termination_grace_period_seconds == 30
        finally:
            await c.close()


async def test_in_process_controllers_start_and_stop_with_the_server():
    class Labeller:
        """Labels every new ConfigMap, through the same store path HTTP writes take."""

        def __init__(self) -> None:
            self.stopped = False

        async def run(self, sim) -> None:
            queue: asyncio.Queue = asyncio.Queue()
            sim.store.subscribe(
                lambda t, key, obj, old: key == "configmaps" and t == "ADDED" and queue.put_nowait(obj["metadata"])
            )
            for obj in sim.store.list("configmaps"):  # level-triggered: what existed before the subscription too
                queue.put_nowait(obj["metadata"])
            while True:
                md = await queue.get()
                sim.store.patch(
                    "configmaps", md["namespace"], md["name"], {"metadata": {"labels": {"seen": "yes"}}}, "merge"
                )

    async with running_simulator() as sim:
        sim.add_controller(Labeller())
        sim.store.create("configmaps", {"metadata": {"name": "x", "namespace": "default"}})
        for _ in range(200):
            if (sim.store.get_ref("configmaps", "default", "x")["metadata"].get("labels") or {}).get("seen") == "yes":
                break
            await asyncio.sleep(0.02)
        assert sim.store.get_ref("configmaps", "default", "x")["metadata"]["labels"] == {"seen": "yes"}
