"""The demo's cluster under the workloads: namespaces, node pools, the GPU Operator, the device plugin, the DRA driver,
its slices and the DeviceClasses."""

from __future__ import annotations

import json

from dragoman.fleet import nvidia_schema as nv
from dragoman.sim.controllers.base import DEVICE_HEALTH
from dragoman.sim.scenarios.demofleet.fleet import DRA_LABELS, Fleet, Story, make_daemonset, make_device_class
from dragoman.sim.scenarios.demofleet.objects import (
    ADMIN_ACCESS_LABEL,
    CLUSTER,
    CRASH_AT_START,
    CRASH_LOOP_SECONDS,
    DP_IMAGE,
    DRA_IMAGE,
    GPU_DRIVER,
    NOT_READY,
    OLD_KUBELET,
    POOL_LABEL,
    NodeSpec,
    meta,
    sfx,
    ts,
    uid,
)
from dragoman.sim.scenarios.demofleet.workloads import container


def _namespaces(f: Fleet) -> None:
    """The namespaces, as old as the teams that own them."""
    d = f.d
    for ns, age in (
        ("default", 322),
        ("kube-system", 322),
        ("kube-public", 322),
        ("kube-node-lease", 322),
        ("gpu-operator", 300),
        ("nvidia-device-plugin", 290),
        ("dra-driver-nvidia-gpu", 181),
        ("ml-training", 280),
        ("ml-inference", 280),
        ("research", 240),
        ("batch", 200),
        ("monitoring", 310),
        ("dra-lab", 20),
        ("gpu-monitoring", 20),
    ):
        labels = {"kubernetes.io/metadata.name": ns}
        if ns in ("gpu-operator", "dra-driver-nvidia-gpu", "nvidia-device-plugin"):
            labels["pod-security.kubernetes.io/enforce"] = "privileged"
        if ns == "gpu-monitoring":
            labels[ADMIN_ACCESS_LABEL] = "true"  # its probes may see devices others hold (admin access)
        d.add(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": meta(ns, created=ts(days=age), labels=labels, kind="Namespace"),
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
        )


def _nodes(f: Fleet) -> None:
    """The node pools (DEMO_README's table): hardware, what serves each node, and the node findings."""
    d, specs = f.d, f.specs

    def node_name(pool: str, i: int) -> str:
        group = nv._hex("group", pool)[:8]
        return f"gke-{CLUSTER}-{pool}-{group}-{sfx('node', pool, i, length=4)}"

    zones = ("us-central1-a", "us-central1-b", "us-central1-c")

    def pool(
        name: str, n: int, machine: str, cpu: int, mem: int, hw: nv.NodeHardware | None, age: float, **kw
    ) -> list[NodeSpec]:
        out = []
        for i in range(n):
            s = NodeSpec(
                node_name(name, i),
                name,
                machine,
                zones[i % 3] if hw is None or "a3" not in machine else "us-central1-a",
                cpu,
                mem,
                hw,
                ts(days=age - i * 0.01),
                **kw,
            )
            out.append(s)
        specs[name] = out
        return out

    def gpu_hw(key: str, count: int, **kw) -> nv.NodeHardware:
        return nv.NodeHardware(nv.CATALOG[key], count, driver_version=GPU_DRIVER, cuda_driver_version="13.0", **kw)

    system = pool("system", 2, "e2-standard-8", 8, 32, None, 322)
    a100t = pool(
        "a100-train", 3, "a2-highgpu-8g", 96, 680, gpu_hw("a100-40gb", 8), 210, dp="operator", operator_dp_label="true"
    )
    l4 = pool("l4-inference", 3, "g2-standard-48", 48, 192, gpu_hw("l4", 4), 150, dp="nvdp")
    l4[2].hw = gpu_hw("l4", 4, replicas=4, sharing_strategy="time-slicing")
    l4[2].extra_labels = {"nvidia.com/device-plugin.config": "l4-time-sliced-4"}
    l4[2].findings.append("sharing-capacity-change")
    t4 = pool("t4-batch", 2, "n1-standard-8", 8, 30, gpu_hw("t4", 1), 200, dp="nvdp")
    t4[1].unschedulable = True
    for s in t4:
        s.findings.append("migration-optional")
    # The pool that migrates cleanly as shipped: whole GPUs, spare capacity for the canary, no PDB (the default plan
    # drains the whole pool at once, and its pods can only run on the pool: any budget short of 100% would block it).
    l4serve = pool(
        "l4-serve", 2, "g2-standard-48", 48, 192, gpu_hw("l4", 4), 90, dp="operator", operator_dp_label="true"
    )
    for s in l4serve:
        s.findings.append("migration-optional")
    l4dev = pool("l4-dev", 1, "g2-standard-8", 8, 32, gpu_hw("l4", 1), 60, dp="nvdp", dra=True)
    l4dev[0].findings.append("both-stacks")
    h100 = pool("h100-dra", 4, "a3-highgpu-8g", 208, 1872, gpu_hw("h100-80gb", 8), 150, dra=True)
    h100[2].dra_state = "not-ready"
    # Faults of their nodes, as h100[3]'s: whichever pod the DaemonSet makes there plays them (on the real control
    # plane the DaemonSet controller makes its own; under a real kubelet dragoman-cri plays them).
    h100[2].node_faults["dra-driver-nvidia-gpu-kubelet-plugin"] = {NOT_READY: "true"}
    h100[3].dra_state = "crashloop"
    # Whichever driver pod runs there crash-loops (the real control plane's DaemonSet controller makes a fresh one).
    h100[3].node_faults["dra-driver-nvidia-gpu-kubelet-plugin"] = {CRASH_AT_START: "true"}
    h100[3].findings.append("no-slices")
    serve = pool("a100-serve", 5, "a2-ultragpu-8g", 96, 1360, gpu_hw("a100-80gb", 8), 120, dra=True, dp_state="gone")
    serve[1].dp, serve[1].dp_state, serve[1].operator_dp_label = "operator", "serving", "true"
    serve[1].created = ts(days=3, hours=4)  # added by the autoscaler after the pool was migrated
    serve[1].findings.append("both-stacks")
    serve[2].kubelet = OLD_KUBELET
    serve[2].dp_state = "forgotten"  # node restarted since the plugin left: no nvidia.com/gpu key at all
    serve[2].findings += ["kubelet-too-old", "kubelet-skew"]
    serve[3].dp, serve[3].dp_state, serve[3].operator_dp_label = "operator", "crashloop", "true"
    serve[3].node_faults["nvidia-device-plugin-daemonset"] = {CRASH_LOOP_SECONDS: "120"}
    serve[3].findings += ["plugin-flapping", "both-stacks"]
    mig = pool(
        "a100-mig",
        2,
        "a2-ultragpu-8g",
        96,
        1360,
        gpu_hw("a100-80gb", 8, mig_strategy="mixed", mig_layout=("1g.10gb",) * 7),
        100,
        dra=True,
        dp_state="forgotten",
    )
    # v1.37's DRA features, one node each: DynamicMIG (counters), a shared GPU (consumable capacity), a GPU under
    # a maintenance DeviceTaintRule.
    lab = pool("a100-lab", 3, "a2-ultragpu-1g", 12, 170, gpu_hw("a100-80gb", 1), 20, dra=True, dp_state="forgotten")
    lab[0].hw = gpu_hw("a100-80gb", 1, dynamic_mig=True)
    lab[1].hw = gpu_hw("a100-80gb", 1, shared_memory=True)
    for s in h100 + mig + lab + [serve[0], serve[2], serve[3], serve[4]]:
        s.findings.append("allocatable-readers")
    for s in h100:
        s.dp_state = "forgotten"
    for group in (system, a100t, l4, t4, l4serve, l4dev, h100, serve, mig, lab):
        for s in group:
            if s.hw is None:
                s.operator_dp_label = ""
            d.add_node(s)
    # The shared lab GPU's health checks found a double-bit ECC error (v137.py: the pods sharing it see it Unhealthy).
    d.node_objs[lab[1].name]["metadata"].setdefault("annotations", {})[DEVICE_HEALTH] = json.dumps(
        {"gpu-0": "XID 48: double bit ECC error"}
    )
    for s in system:
        labels = d.node_objs[s.name]["metadata"]["labels"]
        for k in [k for k in labels if k.startswith("nvidia.com/")]:
            del labels[k]


def _gpu_operator(f: Fleet) -> None:
    """The GPU Operator: its device-plugin DaemonSet (whose rules reach a DRA pool) and GPU feature discovery."""
    d, w, N = f.d, f.w, f.by_name
    system, serve = f.specs["system"], f.specs["a100-serve"]
    w.deployment(
        "gpu-operator",
        "gpu-operator",
        created=ts(days=300),
        replicas=1,
        containers=[container("gpu-operator", "nvcr.io/nvidia/gpu-operator:v25.10.0", cpu="200m", memory="350Mi")],
        placements=[system[0].name],
        labels={
            "app": "gpu-operator",
            "app.kubernetes.io/component": "gpu-operator",
            "app.kubernetes.io/instance": "gpu-operator",
            "app.kubernetes.io/managed-by": "Helm",
            "app.kubernetes.io/version": "v25.10.0",
            "helm.sh/chart": "gpu-operator-v25.10.0",
        },
        annotations={"meta.helm.sh/release-name": "gpu-operator", "meta.helm.sh/release-namespace": "gpu-operator"},
    )
    cluster_policy_uid = uid("ClusterPolicy", None, "cluster-policy")

    op_nodes = [s for s in N.values() if s.dp == "operator"]
    make_daemonset(
        d,
        "nvidia-device-plugin-daemonset",
        "gpu-operator",
        created=ts(days=300),
        labels={
            "app": "nvidia-device-plugin-daemonset",
            "app.kubernetes.io/managed-by": "gpu-operator",
            "helm.sh/chart": "gpu-operator-v25.10.0",
        },
        annotations={"nvidia.com/last-applied-hash": str(int(nv._hex("op-ds")[:8], 16))},
        owner={
            "apiVersion": "nvidia.com/v1",
            "kind": "ClusterPolicy",
            "name": "cluster-policy",
            "uid": cluster_policy_uid,
            "controller": True,
            "blockOwnerDeletion": True,
        },
        selector={"app": "nvidia-device-plugin-daemonset"},
        pod_labels={
            "app": "nvidia-device-plugin-daemonset",
            "app.kubernetes.io/managed-by": "gpu-operator",
            "helm.sh/chart": "gpu-operator-v25.10.0",
        },
        containers=[
            container(
                "nvidia-device-plugin",
                DP_IMAGE,
                cpu="50m",
                memory="64Mi",
                command=["/bin/bash", "-c"],
                args=["/bin/entrypoint.sh"],
                env=[
                    {"name": "PASS_DEVICE_SPECS", "value": "true"},
                    {"name": "FAIL_ON_INIT_ERROR", "value": "true"},
                    {"name": "DEVICE_LIST_STRATEGY", "value": "envvar"},
                    {"name": "DEVICE_ID_STRATEGY", "value": "uuid"},
                    {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                    {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "all"},
                    {"name": "MIG_STRATEGY", "value": "single"},
                    {"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"},
                ],
            )
        ],
        nodes=op_nodes,
        node_selector={"nvidia.com/gpu.deploy.device-plugin": "true"},
        service_account="nvidia-device-plugin",
        finding="dp-targets-dra-pool",
        states={serve[3].name: "crashloop"},
    )

    gfd_labels = {
        "app": "gpu-feature-discovery",
        "app.kubernetes.io/managed-by": "gpu-operator",
        "app.kubernetes.io/part-of": "nvidia-gpu",
        "helm.sh/chart": "gpu-operator-v25.10.0",
    }
    make_daemonset(
        d,
        "gpu-feature-discovery",
        "gpu-operator",
        created=ts(days=300),
        labels=gfd_labels,
        annotations={"nvidia.com/last-applied-hash": str(int(nv._hex("gfd-ds")[:8], 16))},
        owner={
            "apiVersion": "nvidia.com/v1",
            "kind": "ClusterPolicy",
            "name": "cluster-policy",
            "uid": cluster_policy_uid,
            "controller": True,
            "blockOwnerDeletion": True,
        },
        selector={"app": "gpu-feature-discovery", "app.kubernetes.io/part-of": "nvidia-gpu"},
        pod_labels={"app": "gpu-feature-discovery", "app.kubernetes.io/part-of": "nvidia-gpu"},
        containers=[
            container(
                "gpu-feature-discovery",
                DP_IMAGE,
                cpu="10m",
                memory="64Mi",
                command=["gpu-feature-discovery"],
                env=[
                    {"name": "GFD_SLEEP_INTERVAL", "value": "60s"},
                    {"name": "GFD_FAIL_ON_INIT_ERROR", "value": "true"},
                    {"name": "MIG_STRATEGY", "value": "mixed"},
                ],
            )
        ],
        nodes=[s for s in N.values() if s.hw is not None],
        node_selector={"nvidia.com/gpu.deploy.gpu-feature-discovery": "true"},
        service_account="nvidia-gpu-feature-discovery",
    )


def _nvdp(f: Fleet) -> None:
    """The standalone device-plugin chart (release nvdp), scoped to its pools in each default term."""
    d, N = f.d, f.by_name
    nvdp_pools = ["l4-inference", "t4-batch", "l4-dev"]
    pool_expr = {"key": POOL_LABEL, "operator": "In", "values": nvdp_pools}
    nvdp_aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "feature.node.kubernetes.io/pci-10de.present",
                                "operator": "In",
                                "values": ["true"],
                            },
                            pool_expr,
                        ]
                    },
                    {
                        "matchExpressions": [
                            {
                                "key": "feature.node.kubernetes.io/cpu-model.vendor_id",
                                "operator": "In",
                                "values": ["NVIDIA"],
                            },
                            pool_expr,
                        ]
                    },
                    {
                        "matchExpressions": [
                            {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]},
                            pool_expr,
                        ]
                    },
                ]
            }
        }
    }
    nvdp_labels = {
        "app.kubernetes.io/instance": "nvdp",
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/name": "nvidia-device-plugin",
        "app.kubernetes.io/version": "0.18.0",
        "helm.sh/chart": "nvidia-device-plugin-0.18.0",
    }
    d.add(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta(
                "nvdp-nvidia-device-plugin-configs",
                "nvidia-device-plugin",
                created=ts(days=290),
                labels=nvdp_labels,
                annotations={
                    "meta.helm.sh/release-name": "nvdp",
                    "meta.helm.sh/release-namespace": "nvidia-device-plugin",
                },
                kind="ConfigMap",
            ),
            "data": {
                "default": "version: v1\nflags:\n  migStrategy: none\n",
                "l4-time-sliced-4": "version: v1\nflags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n"
                "    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n",
            },
        }
    )
    make_daemonset(
        d,
        "nvdp-nvidia-device-plugin",
        "nvidia-device-plugin",
        created=ts(days=290),
        labels=nvdp_labels,
        annotations={"meta.helm.sh/release-name": "nvdp", "meta.helm.sh/release-namespace": "nvidia-device-plugin"},
        selector={"app.kubernetes.io/instance": "nvdp", "app.kubernetes.io/name": "nvidia-device-plugin"},
        pod_labels={"app.kubernetes.io/instance": "nvdp", "app.kubernetes.io/name": "nvidia-device-plugin"},
        containers=[
            container(
                "nvidia-device-plugin-ctr",
                DP_IMAGE,
                cpu="50m",
                memory="64Mi",
                command=["nvidia-device-plugin"],
                env=[
                    {"name": "MPS_ROOT", "value": "/run/nvidia/mps"},
                    {"name": "CONFIG_FILE", "value": "/config/config.yaml"},
                    {"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"},
                    {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                    {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"},
                ],
            )
        ],
        nodes=[s for s in N.values() if s.dp == "nvdp"],
        affinity=nvdp_aff,
        service_account="nvdp-nvidia-device-plugin-service-account",
    )


def _dra(f: Fleet) -> None:
    """The DRA driver, applied as plain manifests rendered from the 0.4.0 chart (its rules reach a device-plugin
    pool)."""
    d, w, N = f.d, f.w, f.by_name
    system = f.specs["system"]
    dra_pools = ["h100-dra", "a100-serve", "a100-mig", "l4-dev", "a100-lab"]
    dra_term_base = [
        [{"key": "feature.node.kubernetes.io/pci-10de.present", "operator": "In", "values": ["true"]}],
        [{"key": "feature.node.kubernetes.io/cpu-model.vendor_id", "operator": "In", "values": ["NVIDIA"]}],
        [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}],
    ]
    dra_aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": t + [{"key": POOL_LABEL, "operator": "In", "values": dra_pools}]}
                    for t in dra_term_base
                ]
            }
        }
    }
    dra_states = {s.name: s.dra_state for s in N.values() if s.dra}
    make_daemonset(
        d,
        "dra-driver-nvidia-gpu-kubelet-plugin",
        "dra-driver-nvidia-gpu",
        created=ts(days=181),
        labels=DRA_LABELS,
        selector={
            "app.kubernetes.io/name": "dra-driver-nvidia-gpu",
            "dra-driver-nvidia-gpu-component": "kubelet-plugin",
        },
        pod_labels={
            "app.kubernetes.io/name": "dra-driver-nvidia-gpu",
            "dra-driver-nvidia-gpu-component": "kubelet-plugin",
            "nvidia-dra-driver-gpu-component": "kubelet-plugin",
        },
        containers=[
            container(
                "gpus",
                DRA_IMAGE,
                cpu="100m",
                memory="256Mi",
                command=["bash", "-c"],
                args=["exec gpu-kubelet-plugin"],
                env=[
                    {"name": "NVIDIA_DRIVER_ROOT", "value": "/home/kubernetes/bin/nvidia"},
                    {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"},
                    {"name": "CDI_ROOT", "value": "/var/run/cdi"},
                    {"name": "KUBELET_REGISTRAR_DIRECTORY_PATH", "value": "/var/lib/kubelet/plugins_registry"},
                ],
            )
        ],
        nodes=[s for s in N.values() if s.dra],
        affinity=dra_aff,
        states=dra_states,
        service_account="dra-driver-nvidia-gpu-service-account",
        finding="driver-targets-dp-pool",
    )
    w.deployment(
        "dra-driver-nvidia-gpu-controller",
        "dra-driver-nvidia-gpu",
        created=ts(days=181),
        replicas=1,
        containers=[
            container("compute-domain", DRA_IMAGE, cpu="50m", memory="128Mi", command=["compute-domain-controller"])
        ],
        placements=[system[1].name],
        labels={"dra-driver-nvidia-gpu-component": "controller"},
    )


def _slices(f: Fleet) -> None:
    """ResourceSlices published by the driver where its pod is ready (or was, before it stopped being ready)."""
    d, N = f.d, f.by_name
    for s in N.values():
        if s.dra and s.dra_state != "crashloop":
            node_obj = d.node_objs[s.name]
            slices = nv.resource_slices_for_node(
                s.name,
                s.hw,
                "v0.4.0",
                generation=1,
                node_uid=node_obj["metadata"]["uid"],
                creation_timestamp=max(ts(days=181), s.created),
            )
            d.slices[s.name] = slices
            for sl in slices:
                d.add(sl)


def _classes(f: Fleet) -> None:
    """DeviceClasses: the chart's, MIG's, an early too-broad one and one whose selector reads a retired attribute."""
    d = f.d
    # An early trial's class, older than the chart's: the chart's class wins nvidia.com/gpu (newest wins).
    make_device_class(
        d,
        "nvidia-gpu",
        ['device.driver == "gpu.nvidia.com"'],
        created=ts(days=230),
        ern="nvidia.com/gpu",
        labels={"team": "ml-platform"},
        finding="class-too-broad,duplicate-mapping",
    )
    make_device_class(
        d,
        "gpu.nvidia.com",
        ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"],
        created=ts(days=181),
        ern="nvidia.com/gpu",
        labels=DRA_LABELS,
        finding="duplicate-mapping",
    )
    make_device_class(
        d,
        "mig.nvidia.com",
        ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"],
        created=ts(days=181),
        labels=DRA_LABELS,
    )
    make_device_class(
        d,
        "mig-1g.10gb.nvidia.com",
        [
            "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && "
            "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
        ],
        created=ts(days=100),
        ern="nvidia.com/mig-1g.10gb",
        labels={"team": "ml-platform"},
    )
    make_device_class(
        d,
        "h100-low-index",
        ['device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].index < 4'],
        created=ts(days=240),
        labels={"team": "research"},
        finding="stale-attribute,selector-runtime-error",
        annotations={"kubernetes.io/description": "First four GPUs of a node (NUMA 0) for latency-sensitive jobs"},
    )


# This group's stories, in the order their objects are written.
STORIES: tuple[Story, ...] = (
    Story("namespaces", (), _namespaces),
    Story(
        "nodes",
        (
            "allocatable-readers",
            "both-stacks",
            "kubelet-skew",
            "kubelet-too-old",
            "migration-optional",
            "no-slices",
            "plugin-flapping",
            "sharing-capacity-change",
        ),
        _nodes,
    ),
    Story("gpu-operator", ("dp-targets-dra-pool",), _gpu_operator),
    Story("nvdp", (), _nvdp),
    Story("dra", ("driver-targets-dp-pool",), _dra),
    Story("slices", (), _slices),
    Story("classes", ("class-too-broad", "duplicate-mapping", "selector-runtime-error", "stale-attribute"), _classes),
)
