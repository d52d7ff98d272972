"""One node's GPUs as the project's Go plugins serve them (`controlplane/cmd/dragoman-device-plugin`,
`controlplane/cmd/dragoman-dra-plugin`): a devices.json written from the same schema the Python node agents publish.

The Python DRA kubelet plugin (sim/controllers/dra_plugin.py) publishes `nvidia_schema.resource_slices_for_node` for
the hardware the node's GPU Feature Discovery labels describe; the Python kubelet advertises
`NodeHardware.device_plugin_resources()`. This module writes exactly those (the slices' device and counter lists for
every attribute schema, the device plugin's device IDs per resource) so a real kubelet's plugins serve the same GPUs,
with the same UUIDs, as the agents they stand in for. The Go side reads the file and computes nothing about GPUs.

The file (schemaVersion 1):
- `node`, `driver` (gpu.nvidia.com), `pool` (the node's name, as the driver names its pool);
- `schema`: the attribute schema to publish (from the driver's image; the plugin takes `DRAGOMAN_DRIVER_SCHEMA`
  instead when set), and `slicesBySchema`: for each schema the slices' specs minus what the publishing library
  sets itself (driver, nodeName, pool), i.e. `{"devices": [...]}` or `{"sharedCounters": [...]}` per slice;
- `devicePlugin`: one entry per extended resource the device plugin advertises, each device with the ID the kubelet
  sees (a GPU or MIG UUID; `<uuid>::<n>` for a time-slicing replica, as NVIDIA's plugin annotates them), the UUID and
  index it stands for, and its device node;
- `gpus`: minor, UUID, PCI bus ID and device node of each physical GPU (what a test maps a CDI name or an
  `NVIDIA_VISIBLE_DEVICES` entry back to).
A node whose labels describe no GPUs gets empty lists: its plugins advertise and publish nothing, as the agents do.
"""

from __future__ import annotations

import json
import os
import pathlib
import tempfile
from collections.abc import Iterable
from typing import Any

from dragoman.fleet import nvidia_schema as nv
from dragoman.sim.controllers.base import binding_request

SCHEMA_VERSION = 1
DEFAULT_DRIVER_IMAGE = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.0"
# CDI kinds: NVIDIA's device plugin names devices `nvidia.com/gpu=<uuid or index>`; its DRA driver's are
# fleet/nvidia_schema.cdi_device_ids (`k8s.gpu.nvidia.com/claim=<claim uid>-<device name>`; before v25.12 also
# `k8s.gpu.nvidia.com/device=<device name>`).
DEVICE_PLUGIN_CDI_KIND = "nvidia.com/gpu"


def device_node(minor: int) -> str:
    return f"/dev/nvidia{minor}"


def _slice_specs(node_name: str, hw: nv.NodeHardware, schema: str) -> list[dict]:
    """The specs the Python DRA agent would publish for this schema, without the fields the library owns."""
    out = []
    for sl in nv.resource_slices_for_node(node_name, hw, schema):
        spec = sl["spec"]
        out.append({k: spec[k] for k in ("devices", "sharedCounters") if k in spec})
    return out


def _device_plugin(node_name: str, hw: nv.NodeHardware) -> list[dict]:
    """What NVIDIA's device plugin registers (nvidia_schema.device_plugin_devices, which the Python kubelet hands out
    too), with each device's node."""
    return [
        {
            "resource": r,
            "devices": [
                {"id": d["id"], "uuid": d["uuid"], "index": d["index"], "deviceNode": device_node(d["minor"])}
                for d in devs
            ],
        }
        for r, devs in sorted(nv.device_plugin_devices(node_name, hw).items())
    ]


def node_devices(node: dict, driver_image: str | None = None) -> dict:
    """The devices.json document for one Node object (its GFD labels say the hardware), for the DRA driver image
    (its tag says the attribute schema; the demo's driver when not given)."""
    name = node["metadata"]["name"]
    hw = nv.node_hardware_from_labels((node.get("metadata") or {}).get("labels") or {})
    schema = nv.driver_version_from_image(driver_image or DEFAULT_DRIVER_IMAGE)
    doc: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "node": name,
        "driver": nv.DRIVER,
        "pool": name,
        "schema": schema,
        "slicesBySchema": {s: [] for s in nv.SCHEMAS},
        "devicePlugin": [],
        "gpus": [],
    }
    if hw is None:
        return doc
    doc["slicesBySchema"] = {s: _slice_specs(name, hw, s) for s in nv.SCHEMAS}
    binding = binding_request(node)
    if binding:
        # The scenario asks for binding conditions (KEP-5007): every device carries them, and the DRA plugin sets
        # them True on each allocated claim after the delay, as a driver's controller does once a device is attached.
        for specs in doc["slicesBySchema"].values():
            for spec in specs:
                for dev in spec.get("devices") or ():
                    dev["bindingConditions"] = binding["conditions"]
                    dev["bindingFailureConditions"] = binding["failureConditions"]
                    dev["bindsToNode"] = binding["bindsToNode"]
        doc["binding"] = {
            c: {
                "status": "True",
                "reason": "Attached",
                "message": f"attached to {name}",
                "delaySeconds": binding["delaySeconds"],
            }
            for c in binding["conditions"]
        }
    doc["devicePlugin"] = _device_plugin(name, hw)
    doc["gpus"] = [
        {
            "minor": m,
            "uuid": nv.gpu_uuid(name, m),
            "pciBusID": nv.pci_bus_id(m),
            "deviceNode": device_node(m),
            "draDevice": f"gpu-{m}",
        }
        for m in range(hw.gpu_count)
    ]
    return doc


def _node_of(scenario_or_node: Any, node_name: str | None) -> dict:
    if isinstance(scenario_or_node, dict) and scenario_or_node.get("kind") == "Node":
        return scenario_or_node
    for obj in _objects(scenario_or_node):
        if obj.get("kind") == "Node" and (node_name is None or obj["metadata"]["name"] == node_name):
            return obj
    raise KeyError(f"no Node {node_name!r} in the scenario")


def _objects(scenario: Any) -> Iterable[dict]:
    if isinstance(scenario, dict):
        if scenario.get("kind") == "List":
            return scenario.get("items") or []
        return [scenario]
    return scenario


def write_node_devices(
    scenario_or_node: Any, path: str | os.PathLike, *, node_name: str | None = None, driver_image: str | None = None
) -> pathlib.Path:
    """Write one node's devices.json (atomically: a reader never sees half a file). `scenario_or_node` is a Node
    object, or a scenario's objects (a `List` or an iterable of objects) with `node_name` saying which node. The
    devices the node's DEVICE_HEALTH annotation names go to `<path>.unhealthy`, which dragoman-dra-plugin reports
    Unhealthy to the kubelet (the Python agents read the annotation itself)."""
    from dragoman.sim.controllers.base import unhealthy_devices

    node = _node_of(scenario_or_node, node_name)
    doc = node_devices(node, driver_image)
    path = pathlib.Path(path)
    bad = unhealthy_devices(node)
    if bad:
        pathlib.Path(f"{path}.unhealthy").write_text("".join(f"{d}\n" for d in sorted(bad)))
    fd, tmp = tempfile.mkstemp(prefix=".devices-", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise
    return path


def published_specs(doc: dict, schema: str | None = None) -> list[dict]:
    """The ResourceSlice specs a plugin serving `doc` publishes (what the Python agent's slices hold)."""
    specs = []
    slices = doc["slicesBySchema"][schema or doc["schema"]]
    for sl in slices:
        spec = {
            "driver": doc["driver"],
            "nodeName": doc["node"],
            "pool": {"name": doc["pool"], "resourceSliceCount": len(slices)},
        }
        spec.update(sl)
        specs.append(spec)
    return specs


def uuid_of_cdi_name(doc: dict, cdi_name: str) -> str | None:
    """The GPU UUID behind a CDI device name either plugin hands out for this node (None if not one of them)."""
    kind, _, name = cdi_name.partition("=")
    if kind == DEVICE_PLUGIN_CDI_KIND:
        for res in doc["devicePlugin"]:
            for d in res["devices"]:
                if name in (d["uuid"], d["index"]):
                    return d["uuid"]
        return None
    dra = nv.device_of_cdi_id(cdi_name)
    if dra is not None:
        for sl in doc["slicesBySchema"][doc["schema"]]:
            for dev in sl.get("devices") or ():
                if dev["name"] == dra[1]:
                    attrs = dev.get("attributes") or {}
                    return (attrs.get("uuid") or attrs.get("parentUUID") or {}).get("string")
    return None
