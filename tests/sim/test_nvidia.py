"""NVIDIA's published devices: attribute sets per driver version, GFD label parsing, deterministic and schema-valid
slices."""

from __future__ import annotations

import kubernetes_validate
import pytest
from dragoman.fleet import nvidia_schema as nv

H100 = nv.NodeHardware(nv.CATALOG["h100-80gb"], 8)
MIG = nv.NodeHardware(nv.CATALOG["a100-80gb"], 8, mig_strategy="mixed", mig_layout=("1g.10gb",) * 7)


def _attrs(version: str, hw: nv.NodeHardware = H100) -> set[str]:
    slices = nv.resource_slices_for_node("gke-prod-h100-dra-1", hw, version)
    return set(slices[0]["spec"]["devices"][0]["attributes"])


def test_attribute_sets_follow_the_driver_version() -> None:
    common = {
        "type",
        "uuid",
        "productName",
        "brand",
        "architecture",
        "cudaComputeCapability",
        "driverVersion",
        "cudaDriverVersion",
    }
    assert _attrs("v25.3.2") == common | {"index", "minor", "pcieBusID"}
    assert _attrs("v25.8.1") == common | {"pcieBusID", "resource.kubernetes.io/pcieRoot"}
    new = common | {"resource.kubernetes.io/pciBusID", "resource.kubernetes.io/pcieRoot", "addressingMode"}
    assert _attrs("v25.12.0") == new
    assert _attrs("v0.4.0") == new
    slices = nv.resource_slices_for_node("n", H100, "v25.3.2")
    index = slices[0]["spec"]["devices"][3]["attributes"]["index"]
    assert index == {"int": 3}


@pytest.mark.parametrize(
    ("image", "schema"),
    [
        ("registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.0", nv.SCHEMA_25_12),
        ("nvcr.io/nvidia/k8s-dra-driver-gpu:v25.3.2", nv.SCHEMA_25_3),
        ("nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.0", nv.SCHEMA_25_8),
        ("nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0-ubi9", nv.SCHEMA_25_12),
        ("localhost:5000/k8s-dra-driver-gpu", nv.SCHEMA_25_12),
    ],
)
def test_driver_version_from_image(image: str, schema: str) -> None:
    assert nv.driver_version_from_image(image) == schema


def test_h100_values_as_the_driver_reports_them() -> None:
    dev = nv.resource_slices_for_node("n", H100, "v0.4.0")[0]["spec"]["devices"][0]
    assert dev["name"] == "gpu-0"
    assert dev["attributes"]["productName"] == {"string": "NVIDIA H100 80GB HBM3"}
    assert dev["attributes"]["cudaComputeCapability"] == {"version": "9.0.0"}
    assert dev["attributes"]["driverVersion"] == {"version": "580.105.8"}
    # An "80GB" H100 reports less than 80Gi.
    assert dev["capacity"]["memory"] == {"value": "81559Mi"}
    assert 81559 < 80 * 1024
    assert dev["attributes"]["uuid"]["string"].startswith("GPU-")


def test_slices_are_deterministic_and_per_node() -> None:
    a = nv.resource_slices_for_node("node-a", H100, "v0.4.0", generation=2)
    b = nv.resource_slices_for_node("node-a", H100, "v0.4.0", generation=2)
    c = nv.resource_slices_for_node("node-b", H100, "v0.4.0", generation=2)
    assert a == b
    uuids_a = {d["attributes"]["uuid"]["string"] for d in a[0]["spec"]["devices"]}
    uuids_c = {d["attributes"]["uuid"]["string"] for d in c[0]["spec"]["devices"]}
    assert len(uuids_a) == 8 and not uuids_a & uuids_c
    spec = a[0]["spec"]
    assert spec["driver"] == "gpu.nvidia.com" and spec["nodeName"] == "node-a"
    assert spec["pool"] == {"name": "node-a", "generation": 2, "resourceSliceCount": 1}
    assert a[0]["metadata"]["name"].startswith("node-a-gpu.nvidia.com-")


def test_mig_devices_use_canonical_names_and_capacities() -> None:
    devices = nv.resource_slices_for_node("n", MIG, "v0.4.0")[0]["spec"]["devices"]
    assert len(devices) == 56
    names = [d["name"] for d in devices]
    assert names[:3] == ["gpu-0-mig-19-0-1", "gpu-0-mig-19-1-1", "gpu-0-mig-19-2-1"]
    assert len(set(names)) == 56
    d = devices[0]
    assert d["attributes"]["type"] == {"string": "mig"}
    assert d["attributes"]["profile"] == {"string": "1g.10gb"}
    assert d["attributes"]["parentUUID"]["string"].startswith("GPU-")
    assert d["capacity"]["memorySlice0"] == {"value": "1"}
    assert d["capacity"]["multiprocessors"] == {"value": "14"}


def test_more_than_128_devices_split_into_a_counted_pool() -> None:
    big = nv.NodeHardware(nv.CATALOG["a100-80gb"], 20, mig_strategy="mixed", mig_layout=("1g.10gb",) * 7)
    slices = nv.resource_slices_for_node("big", big, "v0.4.0")
    assert [len(s["spec"]["devices"]) for s in slices] == [128, 12]
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in slices} == {2}
    assert len({s["metadata"]["name"] for s in slices}) == 2


@pytest.mark.parametrize("version", ["v25.3.2", "v25.8.1", "v0.4.0"])
@pytest.mark.parametrize("hw", [H100, MIG, nv.NodeHardware(nv.CATALOG["t4"], 1)], ids=["h100", "mig", "t4"])
def test_slices_validate_against_the_137_schema(version: str, hw: nv.NodeHardware) -> None:
    for s in nv.resource_slices_for_node(
        "gke-node-1", hw, version, node_uid=nv.uid_for("x"), creation_timestamp="2026-05-01T10:00:00Z"
    ):
        kubernetes_validate.validate(s, "1.37.0", strict=True)
        assert len(s["spec"]["devices"]) <= 128
        for d in s["spec"]["devices"]:
            assert len(d["attributes"]) + len(d["capacity"]) <= 32


def test_hardware_round_trips_through_gfd_labels() -> None:
    for hw in (
        H100,
        MIG,
        nv.NodeHardware(nv.CATALOG["l4"], 4, replicas=4, sharing_strategy="time-slicing"),
        nv.NodeHardware(nv.CATALOG["a100-40gb"], 8, mig_strategy="single", mig_layout=("1g.5gb",) * 7),
    ):
        labels = hw.gfd_labels()
        back = nv.node_hardware_from_labels(labels)
        assert back == hw, labels
        assert back.device_plugin_resources() == hw.device_plugin_resources()


def test_device_plugin_resources_count_replicas_and_mig() -> None:
    assert nv.NodeHardware(nv.CATALOG["l4"], 4, replicas=4).device_plugin_resources() == {"nvidia.com/gpu": 16}
    assert MIG.device_plugin_resources() == {"nvidia.com/mig-1g.10gb": 56}
    single = nv.NodeHardware(nv.CATALOG["a100-40gb"], 8, mig_strategy="single", mig_layout=("1g.5gb",) * 7)
    assert single.device_plugin_resources() == {"nvidia.com/gpu": 56}
    assert single.gfd_labels()["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"


def test_labels_of_a_real_node_and_of_an_unknown_gpu() -> None:
    labels = {
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.memory": "81559",
        "nvidia.com/cuda.driver.major": "570",
        "nvidia.com/cuda.driver.minor": "124",
        "nvidia.com/cuda.driver.rev": "06",
    }
    hw = nv.node_hardware_from_labels(labels)
    assert hw.model.key == "h100-80gb" and hw.gpu_count == 8 and hw.driver_version == "570.124.06"
    odd = nv.node_hardware_from_labels(
        {
            "nvidia.com/gpu.product": "NVIDIA-B200",
            "nvidia.com/gpu.count": "8",
            "nvidia.com/gpu.memory": "183359",
            "nvidia.com/gpu.family": "blackwell",
            "nvidia.com/gpu.compute.major": "10",
            "nvidia.com/gpu.compute.minor": "0",
        }
    )
    assert odd.model.product_name == "NVIDIA B200" and odd.model.memory_mib == 183359
    assert odd.model.compute_capability == "10.0"
    assert nv.node_hardware_from_labels({"kubernetes.io/os": "linux"}) is None
