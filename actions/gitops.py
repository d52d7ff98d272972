"""GitOps ownership of the objects the switch would change: detect Argo CD and Flux, say what to change in the source of
truth, and wait for it (never patch)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from dragoman.fleet import gpustack


def owner(obj: dict) -> str | None:
    """ "Argo CD application X" / "Flux Kustomization ns/X" / "Flux HelmRelease ns/X", or None.

    Argo CD marks what it manages with the argocd.argoproj.io/instance label or the tracking-id annotation;
    Flux with kustomize.toolkit.fluxcd.io/* or helm.toolkit.fluxcd.io/* labels."""
    return gpustack.gitops_owner(obj)


def instructions(who: str, kind: str, ns: str, name: str, change: str) -> str:
    """One sentence: what to change where, and that dragoman waits."""
    return (
        f"{kind} {ns}/{name} is managed by {who}: dragoman does not patch it (the next sync would revert it). "
        f"Change it in that source of truth: {change}; dragoman waits until the cluster shows the change."
    )


async def wait_for(
    check: Callable[[], Awaitable[list[str]]],
    *,
    timeout: float,
    poll: float = 1.0,
    on_wait: Callable[[str], None] | None = None,
) -> list[str]:
    """Poll `check` (problems; empty = done) until it passes or `timeout` seconds pass; the last problems."""
    deadline = time.monotonic() + timeout
    last: list[str] = []
    told = ""
    while True:
        last = await check()
        if not last:
            return []
        if on_wait and last[0] != told:
            on_wait(last[0])
            told = last[0]
        if time.monotonic() >= deadline:
            return last
        await asyncio.sleep(poll)
