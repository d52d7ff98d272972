"""devices.json (sim/controlplane/nodedevices.py) is what the Python node agents publish: the Go device plugin and DRA
kubelet plugin serve it to real kubelets, so a divergence here is a divergence between the two node halves."""

from __future__ import annotations

import asyncio
import json
import pathlib

import pytest
import yaml
from dragoman.fleet import nvidia_schema as nv
from dragoman.sim.controllers import default_controllers
from dragoman.sim.controllers.base import (
    BINDING_CONDITIONS,
    binding_request,
    dra_plugin_image,
    is_dra_kubelet_plugin_pod,
)
from dragoman.sim.controllers.kubelet import plugin_resources_from_labels
from dragoman.sim.controlplane import nodedevices as nd
from dragoman.sim.controlplane.kubelets import scenario_reserved

from tests.support.sim import running_simulator

DEMO = pathlib.Path(nd.__file__).parents[1] / "scenarios" / "demo.yaml"
DRIVER = "gpu.nvidia.com"


def _demo_objects() -> list[dict]:
    out = []
    for doc in yaml.safe_load_all(DEMO.read_text()):
        if doc and doc.get("kind") == "List":
            out.extend(doc["items"])
    return out


def _canonical(specs: list[dict]) -> list[dict]:
    """What a pool publishes, without what the publisher chooses (slice names, generation, order of slices)."""
    return sorted(
        (
            {k: v for k, v in s.items() if k != "pool"} | {"pool": {"name": s["pool"]["name"]}}
            for s in json.loads(json.dumps(specs))
        ),
        key=lambda s: json.dumps(s, sort_keys=True),
    )


def _node(name: str, hw: nv.NodeHardware, extra: dict | None = None) -> dict:
    labels = {"kubernetes.io/hostname": name, "pool": "p", **hw.gfd_labels(), **(extra or {})}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {
            "nodeInfo": {"kubeletVersion": "v1.37.2"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ready"}],
            "capacity": {"cpu": "96", "memory": "1000Gi", "pods": "110"},
            "allocatable": {"cpu": "95", "memory": "990Gi", "pods": "110"},
        },
    }


def _dra_ds(image: str) -> dict:
    labels = {"app.kubernetes.io/name": "dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-component": "kubelet-plugin"}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "dra-kubelet-plugin", "namespace": "dra", "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "gpus", "image": image}]}},
        },
    }


def _model(key: str) -> nv.GpuModel:
    return nv.CATALOG[key]


HARDWARE = {
    "whole": nv.NodeHardware(model=_model("h100-80gb"), gpu_count=8),
    "mig-mixed": nv.NodeHardware(
        model=_model("a100-80gb"), gpu_count=2, mig_strategy="mixed", mig_layout=("3g.40gb", "2g.20gb", "1g.10gb")
    ),
    "mig-single": nv.NodeHardware(
        model=_model("a100-80gb"), gpu_count=2, mig_strategy="single", mig_layout=("1g.10gb",) * 7
    ),
    "time-sliced": nv.NodeHardware(model=_model("l4"), gpu_count=4, replicas=4, sharing_strategy="time-slicing"),
    "dynamic-mig": nv.NodeHardware(model=_model("h100-80gb"), gpu_count=2, dynamic_mig=True),
    "shared-memory": nv.NodeHardware(model=_model("l4"), gpu_count=2, shared_memory=True),
}


@pytest.mark.parametrize("kind", sorted(HARDWARE))
def test_device_plugin_ids_count_what_the_python_kubelet_advertises(kind):
    node = _node("n-" + kind, HARDWARE[kind])
    doc = nd.node_devices(node)
    counts = {r["resource"]: len(r["devices"]) for r in doc["devicePlugin"]}
    assert counts == plugin_resources_from_labels(node["metadata"]["labels"])
    ids = [d["id"] for r in doc["devicePlugin"] for d in r["devices"]]
    assert len(ids) == len(set(ids)) and all(len(i) <= 63 for i in ids)  # the device-plugin API's ID limit
    # Every ID the device plugin hands out names a GPU of this node (a replica or a MIG device its parent's).
    gpu_uuids = {g["uuid"] for g in doc["gpus"]}
    for r in doc["devicePlugin"]:
        for d in r["devices"]:
            if d["uuid"].startswith("GPU-"):
                assert d["uuid"] in gpu_uuids


def test_a_node_whose_labels_name_no_gpus_serves_nothing():
    doc = nd.node_devices({"kind": "Node", "metadata": {"name": "cpu-1", "labels": {"pool": "cpu"}}})
    assert doc["devicePlugin"] == [] and doc["gpus"] == []
    assert all(v == [] for v in doc["slicesBySchema"].values())


async def _agent_publishes(objects: list[dict], nodes: list[str]) -> tuple[dict[str, list[dict]], list[dict]]:
    """Run the embedded simulator's node agents on `objects` until every node in `nodes` publishes slices of
    gpu.nvidia.com: {node: [slice spec]}, and the DRA driver's pods."""
    async with running_simulator(objects=objects) as sim:
        for c in default_controllers(sim, scheduler=False):
            sim.add_controller(c)
        deadline = asyncio.get_running_loop().time() + 60
        while True:
            published: dict[str, list[dict]] = {n: [] for n in nodes}
            for s in sim.store.list("resourceslices.resource.k8s.io"):
                if s["spec"]["driver"] == DRIVER and s["spec"].get("nodeName") in published:
                    published[s["spec"]["nodeName"]].append(s["spec"])
            if all(published.values()) or asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.2)
        pods = [p for p in sim.store.list("pods") if is_dra_kubelet_plugin_pod(p)]
    assert all(published.values()), {k: len(v) for k, v in published.items()}
    return published, pods


async def test_devices_json_is_what_the_python_dra_agent_publishes(tmp_path):
    """The embedded simulator's DRA agent publishes each node's slices from its labels and the driver image; the
    devices.json written for the same node and image must hold exactly those devices and counters."""
    image = "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.1"
    nodes = [_node("n-" + k, hw) for k, hw in sorted(HARDWARE.items())]
    published, _ = await _agent_publishes([*nodes, _dra_ds(image)], [n["metadata"]["name"] for n in nodes])
    for node in nodes:
        name = node["metadata"]["name"]
        path = nd.write_node_devices(node, tmp_path / f"{name}.json", driver_image=image)
        doc = json.loads(path.read_text())
        assert doc["schema"] == nv.SCHEMA_25_8
        assert _canonical(nd.published_specs(doc)) == _canonical(published[name]), name


async def test_devices_json_is_what_the_demo_publishes(tmp_path):
    """Every demo node whose DRA driver runs: the agent's slices (as `--demo` serves them) equal devices.json's."""
    objects = _demo_objects()
    # The demo's stored slices taken away: the agent publishes them anew where the driver's pod runs.
    stored = [o for o in objects if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == DRIVER]
    nodes = sorted({o["spec"]["nodeName"] for o in stored})
    assert len(nodes) >= 5, "the demo publishes DRA slices on several nodes"
    by_node, pods = await _agent_publishes([o for o in objects if o not in stored], nodes)
    images = {p["spec"].get("nodeName"): dra_plugin_image(p) for p in pods}
    for name, specs in sorted(by_node.items()):
        path = nd.write_node_devices(objects, tmp_path / f"{name}.json", node_name=name, driver_image=images.get(name))
        assert _canonical(nd.published_specs(json.loads(path.read_text()))) == _canonical(specs), name


def test_cdi_names_map_back_to_the_gpu_uuid():
    node = _node("n-1", HARDWARE["whole"])
    doc = nd.node_devices(node)
    uuid = nv.gpu_uuid("n-1", 3)
    assert nd.uuid_of_cdi_name(doc, f"nvidia.com/gpu={uuid}") == uuid
    assert nd.uuid_of_cdi_name(doc, "nvidia.com/gpu=3") == uuid
    claim_uid = "0b6d1c4e-2f5a-4d3b-9e8f-7a6b5c4d3e2f"
    # NVIDIA's driver from v25.12 names the claim's own entry; v25.3 to v25.8 the standard device first.
    assert nv.cdi_device_ids("v0.4.0", claim_uid, "gpu-3") == [f"k8s.gpu.nvidia.com/claim={claim_uid}-gpu-3"]
    assert nv.cdi_device_ids("v25.8.1", claim_uid, "gpu-3")[0] == "k8s.gpu.nvidia.com/device=gpu-3"
    for name in nv.cdi_device_ids("v25.3.2", claim_uid, "gpu-3"):
        assert nd.uuid_of_cdi_name(doc, name) == uuid
    assert nd.uuid_of_cdi_name(doc, "k8s.gpu.nvidia.com/device=gpu-99") is None
    assert nd.uuid_of_cdi_name(doc, f"k8s.gpu.nvidia.com/claim={claim_uid}-gpu-99") is None
    assert nd.uuid_of_cdi_name(doc, "k8s.gpu.nvidia.com/claim=not-a-uid-gpu-3") is None
    assert nd.uuid_of_cdi_name(doc, "example.com/x=gpu-3") is None


def test_written_atomically_and_for_the_named_node_only(tmp_path):
    objects = [_node("a", HARDWARE["whole"]), _node("b", HARDWARE["time-sliced"])]
    path = nd.write_node_devices(objects, tmp_path / "b.json", node_name="b")
    assert json.loads(path.read_text())["node"] == "b"
    assert [p.name for p in tmp_path.iterdir()] == ["b.json"]  # no temporary left behind
    with pytest.raises(KeyError):
        nd.write_node_devices(objects, tmp_path / "c.json", node_name="c")
    assert not (tmp_path / "c.json").exists()


def test_a_node_asking_for_binding_conditions_serves_devices_that_carry_them():
    node = next(o for o in _demo_objects() if o["kind"] == "Node" and "h100-dra" in o["metadata"]["name"])
    assert "binding" not in nd.node_devices(node)
    node = json.loads(json.dumps(node))
    ask = {"conditions": ["gpu.nvidia.com/attached"], "bindsToNode": True, "delaySeconds": 4}
    node["metadata"].setdefault("annotations", {})[BINDING_CONDITIONS] = json.dumps(ask)
    doc = nd.node_devices(node)
    devices = [d for s in doc["slicesBySchema"][doc["schema"]] for d in s.get("devices") or ()]
    assert devices and all(
        d["bindingConditions"] == ["gpu.nvidia.com/attached"]
        # The API refuses binding conditions without failure conditions: one is named when the scenario gives none.
        and d["bindingFailureConditions"] == ["gpu.nvidia.com/attached-failed"]
        and d["bindsToNode"] is True
        for d in devices
    )
    assert doc["binding"] == {
        "gpu.nvidia.com/attached": {
            "status": "True",
            "reason": "Attached",
            "message": f"attached to {node['metadata']['name']}",
            "delaySeconds": 4.0,
        }
    }


@pytest.mark.parametrize("raw", ["", "not json", "[]", '{"conditions": []}', '{"conditions": [3]}'])
def test_a_binding_annotation_that_asks_nothing_is_ignored(raw):
    assert binding_request({"metadata": {"annotations": {BINDING_CONDITIONS: raw}}}) is None


def test_the_real_kubelet_reserves_what_the_scenario_node_does_not_offer():
    node = {
        "status": {"capacity": {"cpu": "208", "memory": "100Gi"}, "allocatable": {"cpu": "205860m", "memory": "90Gi"}}
    }
    assert scenario_reserved(node) == {"cpu": "2140m", "memory": str(10 << 30)}
    assert scenario_reserved({"status": {"capacity": {"cpu": "8"}}}) == {}


async def test_the_python_dra_agent_sets_the_binding_conditions_the_node_asks(tmp_path):
    """A node whose annotation asks for a binding condition: the embedded simulator's DRA agent publishes its devices
    with it (as devices.json says), and, as the driver's controller, sets it True in the claim's status.devices the
    asked delay after the allocation; the scheduler waits in PreBind until then, and binds the pod after."""
    image = "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.1"
    cond = "gpu.nvidia.com/attached"
    ask = {"conditions": [cond], "bindsToNode": True, "delaySeconds": 4}
    node = _node("n-bind", HARDWARE["whole"])
    node["metadata"]["annotations"] = {BINDING_CONDITIONS: json.dumps(ask)}
    cls = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "attached", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "waits-for-attach", "namespace": "default"},
        "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "attached"}],
            "containers": [{"name": "main", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
        },
    }
    async with running_simulator(objects=[node, _dra_ds(image), cls]) as sim:
        for c in default_controllers(sim):
            sim.add_controller(c)
        loop = asyncio.get_running_loop()

        async def until(check, what: str, timeout: float = 60.0):
            deadline = loop.time() + timeout
            while not (got := check()):
                assert loop.time() < deadline, f"timed out waiting for {what}"
                await asyncio.sleep(0.05)
            return got

        def published():
            devs = [
                d
                for s in sim.store.list("resourceslices.resource.k8s.io")
                if s["spec"].get("nodeName") == "n-bind"
                for d in s["spec"].get("devices") or ()
            ]
            return devs if devs and all(d.get("bindingConditions") == [cond] for d in devs) else None

        devices = await until(published, "the devices published with their binding condition")
        assert all(d["bindingFailureConditions"] == [cond + "-failed"] and d["bindsToNode"] is True for d in devices)
        specs = [s["spec"] for s in sim.store.list("resourceslices.resource.k8s.io") if s["spec"]["driver"] == DRIVER]
        doc = nd.node_devices(node, driver_image=image)
        assert _canonical(nd.published_specs(doc)) == _canonical(specs)

        sim.store.create("resourceclaims.resource.k8s.io", claim)
        sim.store.create("pods", pod)

        def reserved():
            c = sim.store.get("resourceclaims.resource.k8s.io", "default", "attached")
            return c if (c.get("status") or {}).get("reservedFor") else None

        held = await until(reserved, "the claim allocated and reserved")
        allocated_at = sim.clock.seconds()
        (result,) = held["status"]["allocation"]["devices"]["results"]
        assert result["bindingConditions"] == [cond] and result["pool"] == "n-bind"
        assert not held["status"].get("devices")
        waiting = sim.store.get("pods", "default", "waits-for-attach")
        assert not waiting["spec"].get("nodeName") and waiting["status"].get("nominatedNodeName") == "n-bind"

        def attached():
            c = sim.store.get("resourceclaims.resource.k8s.io", "default", "attached")
            return c if (c.get("status") or {}).get("devices") else None

        after = await until(attached, "the agent setting the binding condition")
        # Not before the asked delay (a little slack for the scheduler's clock reading the reservation late).
        assert sim.clock.seconds() - allocated_at >= ask["delaySeconds"] - 1
        (status,) = after["status"]["devices"]
        assert (status["driver"], status["pool"], status["device"]) == (DRIVER, "n-bind", result["device"])
        (c,) = status["conditions"]
        # What devices.json tells the real kubelet's plugin to write: True, Attached, "attached to n-bind".
        said = doc["binding"][cond]
        assert (c["type"], c["status"], c["reason"], c["message"]) == (
            cond,
            said["status"],
            said["reason"],
            said["message"],
        )
        assert c["observedGeneration"] == after["metadata"].get("generation", 1) and c["lastTransitionTime"]
        bound = await until(
            lambda: (p := sim.store.get("pods", "default", "waits-for-attach"))["spec"].get("nodeName") and p,
            "the pod bound once the condition is True",
        )
        assert bound["spec"]["nodeName"] == "n-bind"


def test_the_devices_a_node_says_unhealthy_go_to_the_plugins_unhealthy_file(tmp_path):
    from dragoman.sim.controllers.base import DEVICE_HEALTH

    # The demo's shared lab GPU has an ECC error (its node's annotation): dragoman-dra-plugin reads its name there.
    (node,) = [o for o in _demo_objects() if o["kind"] == "Node" and DEVICE_HEALTH in o["metadata"]["annotations"]]
    path = nd.write_node_devices(node, tmp_path / "devices.json")
    assert pathlib.Path(f"{path}.unhealthy").read_text() == "gpu-0\n"
    doc = json.loads(path.read_text())
    assert "gpu-0" in {d["name"] for d in nd.published_specs(doc)[0]["devices"]}
    # A node that says nothing has no such file (the plugin then reports every device Healthy).
    healthy = nd.write_node_devices(_node("a", HARDWARE["whole"]), tmp_path / "a.json")
    assert not pathlib.Path(f"{healthy}.unhealthy").exists()
