"""The conditions a kubelet has written on a pod it started, as a scenario records them: PodReadyToStartContainers,
Initialized, Ready, ContainersReady and PodScheduled, in the order the kubelet's status manager writes them."""

from __future__ import annotations


def started_pod_conditions(
    when: str | None, *, sandbox_ready: bool, ready: bool, not_ready: dict[str, str] | None = None
) -> list[dict]:
    """The five conditions, all last changed at `when`; `not_ready` (reason, message) goes on Ready and
    ContainersReady when the containers are not ready."""

    def condition(kind: str, ok: bool) -> dict:
        return {"type": kind, "status": "True" if ok else "False", "lastProbeTime": None, "lastTransitionTime": when}

    out = [
        condition("PodReadyToStartContainers", sandbox_ready),
        condition("Initialized", True),
        condition("Ready", ready),
        condition("ContainersReady", ready),
        condition("PodScheduled", True),
    ]
    if not ready and not_ready:
        for c in out[2:4]:
            c.update(not_ready)
    return out
