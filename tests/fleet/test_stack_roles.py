"""One classifier of GPU-stack pods (fleet/gpustack.py pod_role): what dragoman calls a device-plugin or DRA-driver
pod is what the simulated kubelet and DRA plugin run as one (sim/controllers/base.py once had its own rules, with a
label the client did not read)."""

from __future__ import annotations

import pytest
from dragoman.fleet.gpustack import pod_role
from dragoman.sim import scenario
from dragoman.sim.controllers.base import is_device_plugin_pod, is_dra_kubelet_plugin_pod


def _pod(name: str, labels: dict, image: str = "busybox", owner: str = "DaemonSet") -> dict:
    return {
        "metadata": {
            "name": name,
            "namespace": "gpu",
            "labels": labels,
            "ownerReferences": [{"kind": owner, "name": "x", "controller": True}],
        },
        "spec": {"containers": [{"name": "c", "image": image}]},
    }


TABLE = [
    (
        "operator plugin",
        _pod("nvidia-device-plugin-daemonset-a", {"app": "nvidia-device-plugin-daemonset"}),
        "device-plugin",
    ),
    ("k8s-app label", _pod("gpu-plugin-a", {"k8s-app": "nvidia-device-plugin"}), "device-plugin"),
    ("chart image", _pod("dp-device-plugin-a", {}, "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"), "device-plugin"),
    (
        "feature discovery",
        _pod("gpu-feature-discovery-a", {"app": "gpu-feature-discovery"}, "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"),
        None,
    ),
    (
        "kubelet plugin",
        _pod(
            "dra-kp-a",
            {"app.kubernetes.io/name": "dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-component": "kubelet-plugin"},
        ),
        "dra-driver",
    ),
    (
        "driver controller",
        _pod(
            "dra-ctl-a",
            {"app.kubernetes.io/name": "dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-component": "controller"},
            owner="ReplicaSet",
        ),
        None,
    ),
    ("anything else", _pod("web-a", {"app": "web"}), None),
]


@pytest.mark.parametrize(("pod", "role"), [t[1:] for t in TABLE], ids=[t[0] for t in TABLE])
def test_the_client_and_the_simulator_classify_alike(pod: dict, role: str | None) -> None:
    assert pod_role(pod) == role
    assert is_device_plugin_pod(pod) is (role == "device-plugin")
    assert is_dra_kubelet_plugin_pod(pod) is (role == "dra-driver")


def test_every_demo_pod_is_classified_alike() -> None:
    pods = [o for o in scenario.load("demo").objects if o.get("kind") == "Pod"]
    roles = {pod_role(p) for p in pods}
    assert {"device-plugin", "dra-driver", None} <= roles
    for p in pods:
        sim = "device-plugin" if is_device_plugin_pod(p) else "dra-driver" if is_dra_kubelet_plugin_pod(p) else None
        assert sim == pod_role(p), p["metadata"]["name"]


@pytest.mark.parametrize("pod,role", [(p, r) for _, p, r in TABLE], ids=[n for n, _, _ in TABLE])
def test_a_remembered_role_is_the_role_read_again(pod: dict, role: str | None) -> None:
    """_role_of remembers _role_from's answer by everything it reads (labels, images, the name's role words): asked
    again, or of another pod alike, it answers the same; a label value that cannot be hashed is read, not remembered."""
    from dragoman.fleet import gpustack

    meta, images = pod["metadata"], gpustack._images(pod["spec"])
    gpustack._ROLES.clear()
    for _ in range(2):
        assert gpustack._role_of(meta["labels"], images, meta["name"]) == role
        assert gpustack._role_from(meta["labels"], images, meta["name"]) == role
    assert len(gpustack._ROLES) == 1
    # The same template under another name with the same role words: one entry still; a list as a label value: none.
    twin = meta["name"] + "-twin"
    assert gpustack.role_name_words(twin) == gpustack.role_name_words(meta["name"])
    assert gpustack._role_of(meta["labels"], images, twin) == role and len(gpustack._ROLES) == 1
    odd = {**meta["labels"], "odd": ["not", "hashable"]}
    assert gpustack._role_of(odd, images, meta["name"]) == gpustack._role_from(odd, images, meta["name"])
    assert len(gpustack._ROLES) == 1


def test_a_bare_pod_passed_over_unread_has_no_role() -> None:
    """classify_pod passes over a bare pod that _may_have_role rules out (most of a fleet's) without reading its role:
    over pods made of every word, label and image _role_from reads (case changed, joined, with others), the pods it
    passes over are exactly none of those _role_from gives a role, and classify_pod answers as _classified does. Fails
    if _role_from learns a rule the pass-over does not know."""
    import itertools
    import random

    from dragoman.fleet import gpustack

    rng = random.Random(29)
    names = ["web-a", "x", "", "Plugin-A", *gpustack.ROLE_NAME_WORDS]
    names += [f"{a}-{b}" for a, b in itertools.product(gpustack.ROLE_NAME_WORDS, repeat=2)]
    label_sets: list[dict] = [{}, {"app": "web"}, {"app.kubernetes.io/name": "gpu-job-00"}]
    label_sets += [{k: v} for k, v in gpustack._DEVICE_PLUGIN_LABELS]
    label_sets += [{"app.kubernetes.io/name": n} for n in gpustack._DRA_DRIVER_NAMES]
    label_sets += [
        {f"{n}-component": c} for n in ("x", *gpustack._DRA_DRIVER_NAMES) for c in ("kubelet-plugin", "controller")
    ]
    label_sets += [{"app": "gpu-feature-discovery"}, {"app": "nvidia-device-plugin-mps-control-daemon"}]
    images = [
        "busybox",
        "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
        "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.0",
        "nvcr.io/nvidia/pytorch:25.10-py3",
    ]
    seen = {True: 0, False: 0}
    passed_over = 0
    for _ in range(4000):
        name = rng.choice(names)
        name = name.upper() if rng.random() < 0.2 else name
        labels: dict = {}
        for _ in range(rng.randint(0, 3)):
            labels.update(rng.choice(label_sets))
        containers = [{"name": "c", "image": rng.choice(images)} for _ in range(rng.randint(0, 2))]
        init = [{"name": "i", "image": rng.choice(images)}] if rng.random() < 0.2 else []
        pod = {
            "metadata": {"name": name, "namespace": "gpu", "labels": labels},
            "spec": {"containers": containers, "initContainers": init},
        }
        role = gpustack._role_from(labels, gpustack._images(pod["spec"]), name)
        may = gpustack._may_have_role(labels, pod["spec"], name)
        assert may or role is None, (name, labels, containers, init)
        passed_over += not may
        seen[role is not None] += 1
        assert gpustack.classify_pod(pod, {}) == gpustack._classified(pod, labels, pod["spec"])
    assert seen[True] > 500 and seen[False] > 500, seen
    # ... and it does pass over: a workload pod (no role word, label or image) is answered without _role_from.
    assert passed_over > 200, passed_over
    job = {"app.kubernetes.io/name": "gpu-job-00"}
    assert not gpustack._may_have_role(job, {"containers": [{"image": "nvcr.io/nvidia/pytorch:25.10-py3"}]}, "job-a")
