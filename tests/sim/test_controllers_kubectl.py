"""Real kubectl against the behaving simulator: labelling a node off the GPU Operator's device plugin empties its
allocatable."""

from __future__ import annotations

import asyncio
import os

import pytest
from dragoman.sim.controllers import default_controllers

from tests.sim.test_controllers_gpu import gpu_node, operator_ds
from tests.support.sim import running_simulator


@pytest.mark.kubectl
async def test_kubectl_label_removes_the_device_plugin_and_allocatable_follows():
    from tests.support.kubectl import ensure_binary

    kubectl = str(ensure_binary("kubectl"))
    objects = [gpu_node("gpu-a-1", "pool-a"), operator_ds()]
    async with running_simulator(objects=objects) as sim:
        for c in default_controllers(sim, scheduler=False):
            sim.add_controller(c)
        env = {**os.environ, "KUBECONFIG": str(sim.kubeconfig_path), "HOME": str(sim.kubeconfig_path.parent)}

        async def run(*args: str) -> str:
            proc = await asyncio.create_subprocess_exec(
                kubectl, *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
            )
            out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
            assert proc.returncode == 0, out.decode()
            return out.decode()

        async def allocatable() -> str:
            return await run("get", "node", "gpu-a-1", "-o", r"jsonpath={.status.allocatable.nvidia\.com/gpu}")

        async def until(pred, what: str):
            for _ in range(300):
                value = await pred()
                if value:
                    return value
                await asyncio.sleep(0.1)
            raise AssertionError(f"timed out waiting for {what}")

        await until(lambda: _is(allocatable(), "8"), "the operator's plugin to advertise 8 GPUs")
        out = await run("label", "node", "gpu-a-1", "nvidia.com/gpu.deploy.device-plugin=false", "--overwrite")
        assert "labeled" in out
        await until(lambda: _is(allocatable(), "0"), "allocatable to drop to 0")
        pods = await run("get", "pods", "-n", "gpu-operator", "--field-selector", "spec.nodeName=gpu-a-1", "-o", "name")
        assert pods.strip() == ""
        capacity = await run("get", "node", "gpu-a-1", "-o", r"jsonpath={.status.capacity.nvidia\.com/gpu}")
        assert capacity == "8"


async def _is(coro, want: str) -> bool:
    return (await coro).strip() == want
