"""Test helpers: a simulator on a random loopback port with its kubeconfig, and kubernetes-asyncio clients for it."""

from __future__ import annotations

import contextlib
import pathlib
import tempfile
from collections.abc import AsyncIterator, Iterable

from dragoman.sim import scenario as scenario_mod
from dragoman.sim.server import Simulator


@contextlib.asynccontextmanager
async def running_simulator(
    objects: Iterable[dict] | None = None,
    scenario_path: str | pathlib.Path | None = None,
    users: Iterable[dict] | None = None,
    speed: float = 1.0,
    faults: str = "",
    **kwargs,
) -> AsyncIterator[Simulator]:
    """`async with running_simulator(objects=[...]) as sim:` — started on 127.0.0.1:<free port>, kubeconfig written
    to `sim.kubeconfig_path` (admin context current), stopped on exit."""
    objs = list(objects or [])
    all_users = list(users or [])
    if scenario_path is not None:
        sc = scenario_mod.load(str(scenario_path))
        objs = sc.objects + objs
        all_users = sc.users + all_users
        faults = faults or sc.faults
        speed = sc.speed or speed
        kwargs.setdefault("anonymous_read", sc.anonymous_read)
    sim = Simulator(objs, users=all_users, speed=speed, faults=faults, **kwargs)
    with tempfile.TemporaryDirectory(prefix="dragoman-sim-test-") as tmp:
        await sim.start()
        try:
            sim.kubeconfig_path = pathlib.Path(tmp) / "kubeconfig"  # type: ignore[attr-defined]
            sim.write_kubeconfig(sim.kubeconfig_path)
            yield sim
        finally:
            await sim.stop()


async def api_client(sim: Simulator, user: str | None = None):
    """A kubernetes-asyncio ApiClient for `user` (the admin by default). Close it with `await client.close()`."""
    from kubernetes_asyncio import client, config

    cfg = sim.kubeconfig(user)
    loader = config.kube_config.KubeConfigLoader(config_dict=cfg)
    configuration = client.Configuration()
    await loader.load_and_set(configuration)
    return client.ApiClient(configuration=configuration)
