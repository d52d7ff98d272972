"""What a scenario's pod carries beyond what its author wrote, as a cluster stored it: its spec's defaults (the
simulator's own defaulting and priority admission, not a copy of them) and the conditions a kubelet has written on a pod
it started."""

from __future__ import annotations


def stored_spec(spec: dict, *, pod: bool = True) -> dict:
    """`spec` as the API server stores it, for a scenario generator: SetDefaults_PodSpec and the containers' defaults
    (sim/api/validation), and for a Pod (not a template) SetDefaults_Pod's and priority admission's. The keys in
    kubectl's order (sorted), as the demo pins them; `spec` and its containers are defaulted in place."""
    from dragoman.sim.api import admission
    from dragoman.sim.api.validation import default_object
    from dragoman.sim.api.validation.core import default_pod_spec

    if pod:
        default_object("pods", {"spec": spec})
        admission.admit_priority(spec)
    else:
        default_pod_spec(spec)
    return dict(sorted(spec.items()))


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
