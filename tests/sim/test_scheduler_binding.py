"""Binding conditions in the simulated scheduler, as v1.37.2's DynamicResources PreBind runs them: the claim is
allocated and reserved, the pod waits unbound (event BindingConditionsPending) until the driver sets the device's
binding conditions True in the claim's status.devices; a failure condition fails the attempt (SchedulerError), the pod
leaves reservedFor, and the next attempt finds the claim unavailable and PostFilter deallocates it."""

from __future__ import annotations

import asyncio

import pytest
from dragoman.sim.controllers import default_controllers

from tests.support.sim import running_simulator

DRIVER = "fabric.example.com"
CLAIMS = "resourceclaims.resource.k8s.io"


def _objects() -> list[dict]:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "spec": {},
        "status": {
            "nodeInfo": {"kubeletVersion": "v1.37.1"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ready"}],
            "capacity": {"cpu": "8", "memory": "64Gi", "pods": "110"},
            "allocatable": {"cpu": "8", "memory": "64Gi", "pods": "110"},
        },
    }
    cls = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }
    slc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "n1-fabric"},
        "spec": {
            "driver": DRIVER,
            "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": "nic-0",
                    "bindsToNode": True,
                    "bindingConditions": ["FabricAttached"],
                    "bindingFailureConditions": ["FabricFailed"],
                }
            ],
        },
    }
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "fabric", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": DRIVER}}]}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "attached", "namespace": "default"},
        "spec": {
            "resourceClaims": [{"name": "nic", "resourceClaimName": "fabric"}],
            "containers": [{"name": "main", "image": "busybox", "resources": {"claims": [{"name": "nic"}]}}],
        },
    }
    return [node, cls, slc, claim, pod]


async def _until(check, what: str, timeout: float = 20.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        got = check()
        if got:
            return got
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def _set_condition(sim, cond_type: str) -> None:
    claim = sim.store.get(CLAIMS, "default", "fabric")
    claim["status"]["devices"] = [
        {
            "driver": DRIVER,
            "pool": "n1",
            "device": "nic-0",
            "conditions": [
                {
                    "type": cond_type,
                    "status": "True",
                    "reason": "Done",
                    "message": "the fabric manager answered",
                    "lastTransitionTime": "2026-12-05T10:00:00Z",
                }
            ],
        }
    ]
    sim.store.update(CLAIMS, claim, "status", namespace="default", check_rv=False)


@pytest.mark.parametrize("outcome", ["attached", "failed"])
async def test_the_pod_waits_for_binding_conditions(outcome: str) -> None:
    async with running_simulator(objects=_objects()) as sim:
        for c in default_controllers(sim):
            sim.add_controller(c)

        def allocated():
            claim = sim.store.get(CLAIMS, "default", "fabric")
            return claim if (claim.get("status") or {}).get("allocation") else None

        claim = await _until(allocated, "the claim allocated")
        (result,) = claim["status"]["allocation"]["devices"]["results"]
        assert result["bindingConditions"] == ["FabricAttached"]
        assert result["bindingFailureConditions"] == ["FabricFailed"]
        assert [r["name"] for r in claim["status"]["reservedFor"]] == ["attached"]
        await asyncio.sleep(0.5)
        pod = sim.store.get("pods", "default", "attached")
        assert not pod["spec"].get("nodeName")  # waiting in PreBind
        assert pod["status"].get("nominatedNodeName") == "n1"
        if outcome == "attached":
            _set_condition(sim, "FabricAttached")
            pod = await _until(
                lambda: (p := sim.store.get("pods", "default", "attached"))["spec"].get("nodeName") and p,
                "the pod bound once the condition is True",
            )
            assert pod["spec"]["nodeName"] == "n1"
            return
        _set_condition(sim, "FabricFailed")

        def failed():
            p = sim.store.get("pods", "default", "attached")
            cond = next((c for c in p["status"].get("conditions") or [] if c["type"] == "PodScheduled"), None)
            return cond if cond and cond.get("reason") == "SchedulerError" else None

        cond = await _until(failed, "the attempt failed")
        assert cond["message"] == (
            'running PreBind plugin "DynamicResources": device binding failed: claim=fabric, reason=Done, '
            'message="the fabric manager answered"'
        )
        # The retry finds the claim unavailable; PostFilter deallocates it (then allocates again: the device is free).
        deallocated = await _until(
            lambda: not ((sim.store.get(CLAIMS, "default", "fabric").get("status") or {}).get("devices")) and True,
            "the claim deallocated (its device status cleared)",
        )
        assert deallocated
        assert not sim.store.get("pods", "default", "attached")["spec"].get("nodeName")
