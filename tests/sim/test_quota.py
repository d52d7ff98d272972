"""Quota with DRA extended resources: bridged pods still charge requests.nvidia.com/gpu, plain claims now do, claims can
be rejected."""

from __future__ import annotations

from dragoman.sim.controllers import quota
from dragoman.sim.controllers.scheduling import ClusterView, apply_decision, schedule_one
from scheduler_fixtures import claim, device_class, exactly, gpu_pod, gpu_slice, node

NOW = "2026-11-30T12:00:00Z"


def _quota(hard: dict, name: str = "gpu-quota", ns: str = "default") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"hard": hard},
    }


def test_bridged_pod_and_its_claim_do_not_double_charge() -> None:
    view = ClusterView(nodes=[node("gpu-1")], deviceclasses=[device_class()], resourceslices=[gpu_slice("gpu-1")])
    pod = gpu_pod("trainer", 2)
    view.upsert_pod(pod)
    dec = schedule_one(pod, view, NOW)
    made = dec.claims_to_create[0]
    assert quota.claim_usage(made, view) == {
        "count/resourceclaims.resource.k8s.io": 1,
        "gpu.nvidia.com.deviceclass.resource.k8s.io/devices": 2,
        "requests.deviceclass.resource.kubernetes.io/gpu.nvidia.com": 2,
    }
    apply_decision(view, dec)
    used = quota.usage("default", view)
    # The pod charges requests.nvidia.com/gpu whatever backs it; the claim does not add to it.
    assert used["requests.nvidia.com/gpu"] == 2 and used["requests.cpu"] == 1000 and used["pods"] == 1
    assert used["gpu.nvidia.com.deviceclass.resource.k8s.io/devices"] == 2


def test_plain_claims_of_the_serving_class_now_charge_requests_nvidia_com_gpu() -> None:
    view = ClusterView(deviceclasses=[device_class(), device_class("mig.nvidia.com", extended=None)])
    plain = claim("mine", [exactly("gpu", count=3)])
    assert quota.claim_usage(plain, view) == {
        "count/resourceclaims.resource.k8s.io": 1,
        "gpu.nvidia.com.deviceclass.resource.k8s.io/devices": 3,
        "requests.deviceclass.resource.kubernetes.io/gpu.nvidia.com": 3,
        "requests.nvidia.com/gpu": 3,
    }
    all_mode = claim("all", [exactly("gpu", cls="mig.nvidia.com", mode="All")])
    assert quota.claim_usage(all_mode, view)["mig.nvidia.com.deviceclass.resource.k8s.io/devices"] == 32
    flex = claim(
        "flex",
        [
            {
                "name": "g",
                "firstAvailable": [
                    {"name": "a", "deviceClassName": "gpu.nvidia.com", "count": 4},
                    {"name": "b", "deviceClassName": "gpu.nvidia.com", "count": 2},
                    {"name": "c", "deviceClassName": "mig.nvidia.com", "count": 3},
                ],
            }
        ],
    )
    use = quota.claim_usage(flex, view)
    assert (
        use["gpu.nvidia.com.deviceclass.resource.k8s.io/devices"] == 4
        and use["mig.nvidia.com.deviceclass.resource.k8s.io/devices"] == 3
    )


def test_claim_count_quota_rejects_the_schedulers_claim() -> None:
    existing = [claim(f"c{i}", [exactly("gpu")]) for i in range(2)]
    q = _quota({"count/resourceclaims.resource.k8s.io": "2", "requests.nvidia.com/gpu": "16"})
    view = ClusterView(
        nodes=[node("gpu-1")],
        deviceclasses=[device_class()],
        resourceslices=[gpu_slice("gpu-1")],
        resourceclaims=existing,
        resourcequotas=[q],
    )
    pod = gpu_pod("trainer", 1)
    view.upsert_pod(pod)
    made = schedule_one(pod, view, NOW).claims_to_create[0]
    allowed, message = quota.charge(made, None, view)
    assert not allowed
    assert message == (
        f'resourceclaims.resource.k8s.io "{made["metadata"]["name"]}" is forbidden: exceeded quota: gpu-quota, '
        "requested: count/resourceclaims.resource.k8s.io=1, used: count/resourceclaims.resource.k8s.io=2, "
        "limited: count/resourceclaims.resource.k8s.io=2"
    )
    st = quota.quota_status(q, view)
    assert st["used"] == {"count/resourceclaims.resource.k8s.io": "2", "requests.nvidia.com/gpu": "3"}


def test_per_class_device_quota_and_pod_quota() -> None:
    q = _quota(
        {"gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "4", "requests.nvidia.com/gpu": "4", "requests.cpu": "2"}
    )
    view = ClusterView(
        deviceclasses=[device_class()], resourcequotas=[q], resourceclaims=[claim("c0", [exactly("gpu", count=3)])]
    )
    allowed, message = quota.charge(claim("c1", [exactly("gpu", count=2)]), None, view)
    assert not allowed and message == (
        'resourceclaims.resource.k8s.io "c1" is forbidden: exceeded quota: gpu-quota, '
        "requested: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=2,requests.nvidia.com/gpu=2, "
        "used: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=3,requests.nvidia.com/gpu=3, "
        "limited: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=4,requests.nvidia.com/gpu=4"
    )
    allowed, message = quota.charge(gpu_pod("p", 1, cpu="3"), None, view)
    assert not allowed and message == (
        'pods "p" is forbidden: exceeded quota: gpu-quota, requested: requests.cpu=3, used: requests.cpu=0, '
        "limited: requests.cpu=2"
    )
    assert quota.charge(gpu_pod("small", 1, cpu="500m"), None, view) == (True, "")
    other_ns = gpu_pod("elsewhere", 8, namespace="other")
    assert quota.charge(other_ns, None, view) == (True, "")


def test_cpu_quota_requires_every_container_to_state_it() -> None:
    q = _quota({"requests.cpu": "10", "limits.memory": "64Gi"}, name="compute")
    view = ClusterView(resourcequotas=[q])
    pod = gpu_pod("p", 1)
    allowed, message = quota.charge(pod, None, view)
    assert (
        not allowed and message == 'pods "p" is forbidden: failed quota: compute: must specify limits.memory for: main'
    )
    pod["spec"]["containers"][0]["resources"]["limits"]["memory"] = "4Gi"
    assert quota.charge(pod, None, view) == (True, "")
