"""A drain on a node whose kubelet does not post status: kube-apiserver keeps an evicted pod there Terminating past
its grace period (no kubelet confirms the deletion; the differential's NotReady case shows it on the real v1.37.2
control plane), so the drain says so — in its plan, and once the grace period is over — instead of waiting out its
timeout for a pod that will not go."""

from __future__ import annotations

import pathlib
import time
from typing import Any

from dragoman.actions.drain import Drain, kubelet_silent

from tests.actions.fake_cluster import FakeCluster, node, pod
from tests.actions.test_step_plans import context

UNKNOWN = {
    "type": "Ready",
    "status": "Unknown",
    "reason": "NodeStatusUnknown",
    "message": "Kubelet stopped posting node status.",
}


class KeepsTerminating(FakeCluster):
    """Evictions are accepted and the pods stay, terminating, as on a node whose kubelet is down."""

    def _apply(self, method: str, path: str, body: Any) -> Any:
        if path.endswith("/eviction"):
            self._check(method, path, body)
            target = self.objects[path.removesuffix("/eviction")]
            target["metadata"]["deletionTimestamp"] = "2026-12-02T07:00:00Z"
            target["metadata"]["deletionGracePeriodSeconds"] = 1
            return {"kind": "Status", "status": "Success"}
        return super()._apply(method, path, body)


def _silent_node(name: str) -> tuple[str, dict]:
    path, obj = node(name, unschedulable=True)
    obj["status"]["conditions"] = [dict(UNKNOWN)]
    return path, obj


async def test_the_plan_warns_and_the_drain_reports_a_pod_that_stays_terminating(tmp_path: pathlib.Path) -> None:
    cluster = KeepsTerminating(_silent_node("n1"), pod("ml", "web-0", "n1"))
    ctx = context(cluster, tmp_path, drain_timeout=60.0)
    step = Drain("drain", ["n1"])
    plan = await step.plan(ctx)
    assert any(
        "node n1 is NotReady (Ready Unknown: Kubelet stopped posting node status.)" in w and "stay Terminating" in w
        for w in plan.warnings
    ), plan.warnings
    t0 = time.monotonic()
    problems = await step.apply(ctx, plan)
    assert time.monotonic() - t0 < 15, "reported after the pod's 1 s grace, not after the 60 s drain timeout"
    assert problems == [
        "pod ml/web-0 was evicted but stays Terminating: node n1 is NotReady (Ready Unknown: Kubelet stopped posting "
        "node status.), and no kubelet confirms the deletion; it goes once the kubelet is back or the Node object is "
        "deleted."
    ]


async def test_a_ready_node_or_one_without_conditions_is_not_called_silent(tmp_path: pathlib.Path) -> None:
    _, plain = node("n1")
    assert kubelet_silent(plain) == ""
    _, ready = node("n2")
    ready["status"]["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]
    assert kubelet_silent(ready) == ""
    cluster = FakeCluster(node("n1", unschedulable=True), pod("ml", "web-0", "n1"))
    plan = await Drain("drain", ["n1"]).plan(context(cluster, tmp_path))
    assert not [w for w in plan.warnings if "NotReady" in w]
