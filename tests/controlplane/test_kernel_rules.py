"""The rules of fleet/k8s/ that kube-apiserver or kube-scheduler apply, asked of the real v1.37.2 control plane and of
the embedded simulator with the same objects: a label selector with Gt on a non-decimal label, a pod with a GPU
sidecar, a DeviceClass selector over the new-expression limits, and a pool with a missing ResourceSlice. Each
answer must be the kernel's on both sides (the simulator once disagreed on the first, dragoman's diagnosis on the
second, the model on the third, and the model, the CEL evaluation and the simulated scheduler on the fourth).

Everything is written in its own namespace and cluster-scoped names of its own, and removed at the end, so the
user flows of test_real_demo.py that follow see the demo fleet as loaded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from dragoman.fleet.k8s.selectors import label_selector_matcher
from dragoman.fleet.model import pod_extended_requests
from dragoman.sim.controlplane import differential
from dragoman.sim.controlplane.differential import Target

from tests.controlplane.support import Served, wait_for

pytestmark = pytest.mark.controlplane

NS = "dragoman-kernel"
CM = f"/api/v1/namespaces/{NS}/configmaps"
PODS = f"/api/v1/namespaces/{NS}/pods"
CLAIMS = f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims"
CLASSES = "/apis/resource.k8s.io/v1/deviceclasses"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
DRIVER = "kernel.example.com"
GPU = "nvidia.com/gpu"
# Over the new-expression length limit, and includes(), declared for stored selectors only (fleet/k8s/celenv.py).
LONG = '"' + "a" * 11_000 + '" != ""'
INCLUDES = "[1, 2].includes(1)"


@pytest.fixture(scope="module")
def sides(real: Served) -> Iterator[dict[str, Target]]:
    with differential.embedded_side() as embedded:
        targets = {"embedded": embedded, "real": Target.from_kubeconfig("real", real.kubeconfig)}
        differential.wait_settled(targets["real"])
        for t in targets.values():
            t.send("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        try:
            yield targets
        finally:
            for t in targets.values():
                for path in (
                    f"{CLASSES}/kernel-class",
                    f"{CLASSES}/kernel-long",
                    f"{CLASSES}/kernel-includes",
                    f"{SLICES}/kernel-pool-0",
                    f"{SLICES}/kernel-pool-1",
                    f"/api/v1/namespaces/{NS}",
                ):
                    t.send("DELETE", path)


def _both(sides: dict[str, Target], method: str, path: str, body: Any = None) -> dict[str, Any]:
    return {name: t.send(method, path, body) for name, t in sides.items()}


def _wait(check, timeout: float = 90.0) -> Any:
    """The check's first true answer, or its last one when none came in time (the caller's assert says what)."""
    try:
        return wait_for(check, timeout, "the control plane's answer")
    except AssertionError:
        return check()


def test_a_label_selector_compares_int64_as_the_api_server(sides: dict[str, Target]) -> None:
    labels = {"ten": "10", "underscored": "1_0", "three": "3"}
    for name, value in labels.items():
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"x": value}}}
        assert {n: a.code for n, a in _both(sides, "POST", CM, body).items()} == {"embedded": 201, "real": 201}
    matches = label_selector_matcher("x>5")
    assert matches is not None
    want = sorted(n for n, v in labels.items() if matches({"x": v}))
    assert want == ["ten"]  # the kernel: 1_0 is no integer to strconv.ParseInt
    for name, ans in _both(sides, "GET", f"{CM}?labelSelector=x%3E5").items():
        assert ans.code == 200, (name, ans.body)
        assert sorted(o["metadata"]["name"] for o in ans.body["items"]) == want, name
    refused = _both(sides, "GET", f"{CM}?labelSelector=x%3E1_0")
    assert {n: a.code for n, a in refused.items()} == {"embedded": 400, "real": 400}
    for ans in refused.values():
        assert "for 'Gt', 'Lt' operators, the value must be an integer" in ans.body["message"]


def _largest_gpu_allocatable(t: Target) -> int:
    nodes = t.send("GET", "/api/v1/nodes").body["items"]
    return max(int((n.get("status") or {}).get("allocatable", {}).get(GPU) or 0) for n in nodes)


def test_a_gpu_sidecar_is_counted_by_the_scheduler_and_the_diagnosis(sides: dict[str, Target]) -> None:
    for side, t in sides.items():
        _sidecar_pod_is_refused(side, t)


def _sidecar_pod_is_refused(side: str, t: Target) -> None:
    most = _largest_gpu_allocatable(t)
    assert most > 0, side
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "sidecar"},
        "spec": {
            "initContainers": [
                {
                    "name": "proxy",
                    "image": "busybox:1.36",
                    "restartPolicy": "Always",
                    "resources": {"limits": {GPU: "1"}},
                }
            ],
            "containers": [{"name": "main", "image": "busybox:1.36", "resources": {"limits": {GPU: str(most)}}}],
        },
    }
    ans = t.send("POST", PODS, pod)
    assert ans.code == 201, (side, ans.body)

    def unschedulable() -> str:
        got = t.send("GET", f"{PODS}/sidecar").body
        cond = next((c for c in (got.get("status") or {}).get("conditions") or () if c["type"] == "PodScheduled"), {})
        return cond.get("message", "") if cond.get("reason") == "Unschedulable" else ""

    message = _wait(unschedulable)
    # most + 1 GPUs: no node has that many, whatever is free (the sidecar keeps running beside main).
    assert message and f"Insufficient {GPU}" in message, (side, message)
    assert pod_extended_requests(t.send("GET", f"{PODS}/sidecar").body) == {GPU: most + 1}, side


def _class(name: str, expr: str) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": expr}}]},
    }


def test_a_selector_being_written_is_checked_in_the_new_expression_environment(sides: dict[str, Target]) -> None:
    for name, expr in (("kernel-long", LONG), ("kernel-includes", INCLUDES)):
        for side, ans in _both(sides, "POST", CLASSES, _class(name, expr)).items():
            assert ans.code == 422, (side, name, ans.body)
    # A stored class whose selectors an update keeps is not checked again: both accept a label change.
    for side, ans in _both(sides, "POST", CLASSES, _class("kernel-class", f"device.driver == '{DRIVER}'")).items():
        assert ans.code == 201, (side, ans.body)
    patch = {"metadata": {"labels": {"team": "ml"}}}
    for side, t in sides.items():
        ans = t.send("PATCH", f"{CLASSES}/kernel-class", patch, content_type="application/merge-patch+json")
        assert ans.code == 200, (side, ans.body)


def _slice(node: str, part: int, count: int) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"kernel-pool-{part}"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": "kernel-pool", "generation": 1, "resourceSliceCount": count},
            "nodeName": node,
            "devices": [{"name": f"dev-{part}", "attributes": {"model": {"string": "x"}}}],
        },
    }


def test_nothing_is_allocated_from_a_pool_with_a_missing_slice(sides: dict[str, Target]) -> None:
    node = differential_node(sides["real"])
    for side, ans in _both(sides, "POST", SLICES, _slice(node, 0, 2)).items():
        assert ans.code == 201, (side, ans.body)
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "from-kernel-pool"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "kernel-class"}}]}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "kernel-pool-user"},
        "spec": {
            "containers": [{"name": "main", "image": "busybox:1.36", "resources": {"claims": [{"name": "c"}]}}],
            "resourceClaims": [{"name": "c", "resourceClaimName": "from-kernel-pool"}],
        },
    }
    for path, body in ((CLAIMS, claim), (PODS, pod)):
        for side, ans in _both(sides, "POST", path, body).items():
            assert ans.code == 201, (side, ans.body)

    def allocated(t: Target) -> bool:
        return bool((t.send("GET", f"{CLAIMS}/from-kernel-pool").body.get("status") or {}).get("allocation"))

    def pending_unschedulable(t: Target) -> bool:
        got = t.send("GET", f"{PODS}/kernel-pool-user").body
        return any(
            c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
            for c in (got.get("status") or {}).get("conditions") or ()
        )

    for side, t in sides.items():
        assert _wait(lambda t=t: pending_unschedulable(t)), side
        assert not allocated(t), side
    # The second slice completes the pool: both schedulers allocate from it now.
    for side, ans in _both(sides, "POST", SLICES, _slice(node, 1, 2)).items():
        assert ans.code == 201, (side, ans.body)
    for side, t in sides.items():
        assert _wait(lambda t=t: allocated(t), timeout=180), side


def differential_node(t: Target) -> str:
    """A node both sides hold with the same labels (the differential corpus's)."""
    from dragoman.sim.controlplane.differential_corpus import NODE

    assert t.send("GET", f"/api/v1/nodes/{NODE}").code == 200
    return NODE
