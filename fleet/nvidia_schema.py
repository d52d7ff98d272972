"""NVIDIA's GPU stack as dragoman knows it: a GPU catalog, node hardware from GFD labels, the ResourceSlices each DRA
driver version publishes, and the prediction of a node's devices before its switch (the simulator publishes from this
same module)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re

DRIVER = "gpu.nvidia.com"
STD_DOMAIN = "resource.kubernetes.io"
MAX_DEVICES_PER_SLICE = 128
# A node sets its own labels, so `nvidia.com/gpu.count: "1000000000"` is input from outside: dragoman believes at most
# this many GPUs on one node (the largest servers carry 16: HGX-2/DGX-2; 64 leaves room for what comes next), and at
# most 7 MIG devices on one GPU (the A100's and H100's maximum), so a prediction never builds more than 448 devices.
MAX_GPUS_PER_NODE = 64
MAX_MIG_PER_GPU = 7
MAX_DEVICES_PER_NODE = MAX_GPUS_PER_NODE * MAX_MIG_PER_GPU

# Schema generations of the DRA driver's published attributes (dra-facts.md section d).
SCHEMA_25_3 = "25.3"  # int index, int minor, string pcieBusID
SCHEMA_25_8 = "25.8"  # index/minor dropped; pcieBusID still bare; pcieRoot in the standard domain
SCHEMA_25_12 = "25.12"  # pcieBusID moved to resource.kubernetes.io/pciBusID; addressingMode (also 0.4.x)
SCHEMAS = (SCHEMA_25_3, SCHEMA_25_8, SCHEMA_25_12)
STALE_ATTRIBUTES = ("index", "minor", "pcieBusID")
# A selector's clause keeping a class to whole GPUs: the driver's `type` attribute compared with "gpu", either way
# round (`device.attributes['gpu.nvidia.com'].type == 'gpu'`, `...["type"] == "gpu"`, `'gpu' == ....type`). A class
# serving nvidia.com/gpu without one hands MIG or vfio devices to pods that asked for a GPU (class-too-broad).
_TYPE = r"""(?:\.type\b|\[\s*['"]type['"]\s*\])"""
TYPE_GPU = re.compile(rf"""{_TYPE}\s*==\s*['"]gpu['"]|['"]gpu['"]\s*==\s*[^&|]*?{_TYPE}""")


def selects_whole_gpus(expressions: list[str]) -> bool:
    """Whether one of a class's selector expressions keeps it to whole GPUs (a `type == "gpu"` clause)."""
    return any(TYPE_GPU.search(e) for e in expressions)


@dataclasses.dataclass(frozen=True)
class MigProfile:
    name: str  # "1g.10gb"
    gi_profile_id: int
    slices: int  # memory slices the instance spans (placement size)
    memory_mib: int
    multiprocessors: int
    copy_engines: int
    decoders: int
    encoders: int
    jpeg_engines: int
    ofa_engines: int
    max_instances: int


@dataclasses.dataclass(frozen=True)
class GpuModel:
    key: str
    product_name: str  # as NVML reports it, e.g. "NVIDIA H100 80GB HBM3"
    gfd_product: str  # GFD's label value (spaces become dashes)
    brand: str
    architecture: str
    family: str  # GFD's nvidia.com/gpu.family
    compute_capability: str  # "9.0"
    memory_mib: int  # what the driver reports (an "80GB" H100 reports 81559Mi, less than 80Gi)
    gke_accelerator: str = ""
    addressing_mode: str = ""
    mig_profiles: tuple[MigProfile, ...] = ()

    def mig_profile(self, name: str) -> MigProfile:
        for p in self.mig_profiles:
            if p.name == name:
                return p
        raise KeyError(f"{self.product_name} has no MIG profile {name}")


def _mig(name, gi, slices, mem, sm, ce, dec, enc, jpeg, ofa, max_n):
    return MigProfile(name, gi, slices, mem, sm, ce, dec, enc, jpeg, ofa, max_n)


_MIG_80GB = (
    _mig("1g.10gb", 19, 1, 9728, 14, 1, 0, 0, 0, 0, 7),
    _mig("1g.20gb", 15, 2, 19968, 14, 1, 1, 0, 1, 0, 4),
    _mig("2g.20gb", 14, 2, 19968, 28, 2, 1, 0, 0, 0, 3),
    _mig("3g.40gb", 9, 4, 40192, 42, 3, 2, 0, 0, 0, 2),
    _mig("4g.40gb", 5, 4, 40192, 56, 4, 2, 0, 0, 0, 1),
    _mig("7g.80gb", 0, 8, 80384, 98, 7, 5, 0, 1, 1, 1),
)
_MIG_H100_80GB = (
    _mig("1g.10gb", 19, 1, 9984, 16, 1, 1, 0, 1, 0, 7),
    _mig("1g.20gb", 15, 2, 20096, 26, 1, 1, 0, 1, 0, 4),
    _mig("2g.20gb", 14, 2, 20096, 32, 2, 2, 0, 2, 0, 3),
    _mig("3g.40gb", 9, 4, 40320, 60, 3, 3, 0, 3, 0, 2),
    _mig("4g.40gb", 5, 4, 40320, 64, 4, 4, 0, 4, 0, 1),
    _mig("7g.80gb", 0, 8, 80768, 132, 8, 7, 0, 7, 1, 1),
)
_MIG_40GB = (
    _mig("1g.5gb", 19, 1, 4864, 14, 1, 0, 0, 0, 0, 7),
    _mig("2g.10gb", 14, 2, 9984, 28, 2, 1, 0, 0, 0, 3),
    _mig("3g.20gb", 9, 4, 19968, 42, 3, 2, 0, 0, 0, 2),
    _mig("4g.20gb", 5, 4, 19968, 56, 4, 2, 0, 0, 0, 1),
    _mig("7g.40gb", 0, 8, 40192, 98, 7, 5, 0, 1, 1, 1),
)

CATALOG: dict[str, GpuModel] = {
    m.key: m
    for m in (
        GpuModel(
            "h100-80gb",
            "NVIDIA H100 80GB HBM3",
            "NVIDIA-H100-80GB-HBM3",
            "Nvidia",
            "Hopper",
            "hopper",
            "9.0",
            81559,
            "nvidia-h100-80gb",
            "HMM",
            _MIG_H100_80GB,
        ),
        GpuModel(
            "a100-80gb",
            "NVIDIA A100-SXM4-80GB",
            "NVIDIA-A100-SXM4-80GB",
            "Nvidia",
            "Ampere",
            "ampere",
            "8.0",
            81920,
            "nvidia-a100-80gb",
            "",
            _MIG_80GB,
        ),
        GpuModel(
            "a100-40gb",
            "NVIDIA A100-SXM4-40GB",
            "NVIDIA-A100-SXM4-40GB",
            "Nvidia",
            "Ampere",
            "ampere",
            "8.0",
            40960,
            "nvidia-tesla-a100",
            "",
            _MIG_40GB,
        ),
        GpuModel("l40s", "NVIDIA L40S", "NVIDIA-L40S", "Nvidia", "Ada Lovelace", "ada-lovelace", "8.9", 46068, "", ""),
        GpuModel(
            "l4", "NVIDIA L4", "NVIDIA-L4", "Nvidia", "Ada Lovelace", "ada-lovelace", "8.9", 23034, "nvidia-l4", ""
        ),
        GpuModel("t4", "Tesla T4", "Tesla-T4", "Tesla", "Turing", "turing", "7.5", 15360, "nvidia-tesla-t4", ""),
    )
}


def model_by_gfd_product(product: str) -> GpuModel | None:
    """The catalog model for a GFD product label, ignoring the -SHARED and -MIG-<profile> suffixes GFD may add."""
    base = re.sub(r"(-MIG-\d+g\.\d+gb)?(-SHARED)?$", "", product)
    for m in CATALOG.values():
        if m.gfd_product == base:
            return m
    return None


@dataclasses.dataclass(frozen=True)
class NodeHardware:
    """A node's GPUs as the drivers see them, and how the device plugin is configured to share them."""

    model: GpuModel
    gpu_count: int
    mig_strategy: str = "none"  # none | single | mixed
    mig_layout: tuple[str, ...] = ()  # MIG profiles on every GPU, e.g. ("1g.10gb",) * 7; empty = MIG off
    replicas: int = 1  # time-slicing / MPS replicas per GPU
    sharing_strategy: str = "none"  # none | time-slicing | mps
    driver_version: str = "580.105.08"  # NVIDIA kernel driver
    cuda_driver_version: str = "13.0"
    # v1.37's partitionable devices as the driver's DynamicMIG gate publishes them: each GPU whole and every MIG
    # placement, all consuming the GPU's counter set of memory slices (DYNAMIC_MIG_LABEL says so on the node).
    dynamic_mig: bool = False
    # v1.37's consumable capacity: whole GPUs several claims may share, each consuming part of the memory
    # (SHARED_GPU_LABEL; the driver has no such mode yet: the simulator's stand-in for a sharing-capable driver).
    shared_memory: bool = False

    @property
    def mig_enabled(self) -> bool:
        return bool(self.mig_layout)

    def device_plugin_resources(self) -> dict[str, int]:
        """Extended resources the device plugin advertises for this hardware (what capacity/allocatable carry)."""
        if self.mig_enabled and self.mig_strategy == "mixed":
            out: dict[str, int] = {}
            for p in self.mig_layout:
                key = f"nvidia.com/mig-{p}"
                out[key] = out.get(key, 0) + self.gpu_count
            return out
        if self.mig_enabled and self.mig_strategy == "single":
            return {"nvidia.com/gpu": len(self.mig_layout) * self.gpu_count}
        return {"nvidia.com/gpu": self.gpu_count * max(1, self.replicas)}

    def dra_device_count(self) -> int:
        if self.dynamic_mig and self.model.mig_profiles:
            return self.gpu_count * (1 + self.model.mig_profile(DYNAMIC_MIG_PROFILE).max_instances)
        return self.gpu_count * (len(self.mig_layout) if self.mig_enabled else 1)

    def gfd_labels(self) -> dict[str, str]:
        """The labels GPU Feature Discovery puts on a node with this hardware."""
        major, minor, rev = (self.driver_version.split(".") + ["", ""])[:3]
        cmaj, cmin = self.compute_capability_parts()
        rt_major, rt_minor = self.cuda_driver_version.split(".")[:2]
        labels = {
            "nvidia.com/cuda.driver.major": major,
            "nvidia.com/cuda.driver.minor": minor,
            "nvidia.com/cuda.driver.rev": rev,
            "nvidia.com/cuda.driver-version.major": major,
            "nvidia.com/cuda.driver-version.minor": minor,
            "nvidia.com/cuda.driver-version.revision": rev,
            "nvidia.com/cuda.driver-version.full": self.driver_version,
            "nvidia.com/cuda.runtime.major": rt_major,
            "nvidia.com/cuda.runtime.minor": rt_minor,
            "nvidia.com/cuda.runtime-version.major": rt_major,
            "nvidia.com/cuda.runtime-version.minor": rt_minor,
            "nvidia.com/cuda.runtime-version.full": f"{rt_major}.{rt_minor}",
            "nvidia.com/gpu.compute.major": cmaj,
            "nvidia.com/gpu.compute.minor": cmin,
            "nvidia.com/gpu.family": self.model.family,
            "nvidia.com/gpu.mode": "compute",
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.count": str(self.gpu_count),
            "nvidia.com/gpu.memory": str(self.model.memory_mib),
            "nvidia.com/gpu.product": self.model.gfd_product,
            "nvidia.com/gpu.replicas": str(max(1, self.replicas)),
            "nvidia.com/gpu.sharing-strategy": self.sharing_strategy,
            "nvidia.com/mig.capable": "true" if self.model.mig_profiles else "false",
            "nvidia.com/mig.strategy": self.mig_strategy if self.model.mig_profiles else "none",
        }
        if self.dynamic_mig:
            labels[DYNAMIC_MIG_LABEL] = "true"
        if self.shared_memory:
            labels[SHARED_GPU_LABEL] = "true"
        if self.replicas > 1:
            labels["nvidia.com/gpu.product"] = self.model.gfd_product + "-SHARED"
        if self.mig_enabled and self.mig_strategy == "single":
            p = self.model.mig_profile(self.mig_layout[0])
            labels["nvidia.com/gpu.product"] = f"{self.model.gfd_product}-MIG-{p.name}"
            labels["nvidia.com/gpu.count"] = str(len(self.mig_layout) * self.gpu_count)
            labels["nvidia.com/gpu.memory"] = str(p.memory_mib)
            labels["nvidia.com/gpu.multiprocessors"] = str(p.multiprocessors)
        elif self.mig_enabled and self.mig_strategy == "mixed":
            counts: dict[str, int] = {}
            for name in self.mig_layout:
                counts[name] = counts.get(name, 0) + self.gpu_count
            for name, n in counts.items():
                p = self.model.mig_profile(name)
                labels[f"nvidia.com/mig-{name}.count"] = str(n)
                labels[f"nvidia.com/mig-{name}.memory"] = str(p.memory_mib)
                labels[f"nvidia.com/mig-{name}.multiprocessors"] = str(p.multiprocessors)
        return labels

    def compute_capability_parts(self) -> tuple[str, str]:
        a, b = self.model.compute_capability.split(".")
        return a, b


def _int(value: object) -> int | None:
    try:
        return int(str(value)) if value is not None else None
    except ValueError:  # not a number, or more than 4,300 digits
        return None


def count_cap_note(labels: dict) -> str:
    """A sentence when a node's GFD labels claim more GPUs or MIG devices than dragoman believes (and so uses fewer:
    node_hardware_from_labels caps them); "" otherwise."""
    labels = labels or {}
    mig_single = labels.get("nvidia.com/mig.strategy") == "single" and "-MIG-" in str(
        labels.get("nvidia.com/gpu.product")
    )
    for key, value in sorted(labels.items()):
        if key == "nvidia.com/gpu.count" or (key.startswith("nvidia.com/mig-") and key.endswith(".count")):
            n = _int(value)
            limit = MAX_GPUS_PER_NODE if key == "nvidia.com/gpu.count" and not mig_single else MAX_DEVICES_PER_NODE
            if n is not None and n > limit:
                shown = value if len(str(value)) <= 24 else str(value)[:23] + "…"
                return (
                    f"its label {key} says {shown}, more than any server holds; dragoman counts at most "
                    f"{MAX_GPUS_PER_NODE} GPUs ({MAX_DEVICES_PER_NODE} MIG devices) on a node"
                )
    return ""


def node_hardware_from_labels(labels: dict) -> NodeHardware | None:
    """Read a node's GPUs from its GPU Feature Discovery labels; None when the node carries no GFD GPU labels."""
    labels = labels or {}
    product = labels.get("nvidia.com/gpu.product")
    count = _int(labels.get("nvidia.com/gpu.count"))
    if not product or count is None:
        return None
    model = model_by_gfd_product(product)
    if model is None:
        # A GPU the catalog does not know: build its model from what GFD says.
        base = re.sub(r"(-MIG-\d+g\.\d+gb)?(-SHARED)?$", "", product)
        cmaj = labels.get("nvidia.com/gpu.compute.major", "0")
        cmin = labels.get("nvidia.com/gpu.compute.minor", "0")
        family = labels.get("nvidia.com/gpu.family", "")
        model = GpuModel(
            key=base.lower(),
            product_name=base.replace("-", " "),
            gfd_product=base,
            brand="Nvidia",
            architecture=family.replace("-", " ").title(),
            family=family,
            compute_capability=f"{cmaj}.{cmin}",
            memory_mib=_int(labels.get("nvidia.com/gpu.memory")) or 0,
        )
    strategy = labels.get("nvidia.com/mig.strategy", "none")
    replicas = _int(labels.get("nvidia.com/gpu.replicas")) or 1
    sharing = labels.get("nvidia.com/gpu.sharing-strategy", "time-slicing" if replicas > 1 else "none")
    if labels.get("nvidia.com/cuda.driver-version.full"):
        driver = labels["nvidia.com/cuda.driver-version.full"]
    else:
        parts = [
            labels.get(f"nvidia.com/cuda.driver-version.{k}") or labels.get(f"nvidia.com/cuda.driver.{o}")
            for k, o in (("major", "major"), ("minor", "minor"), ("revision", "rev"))
        ]
        driver = ".".join(p for p in parts if p) or "580.105.08"
    cuda = (
        labels.get("nvidia.com/cuda.runtime-version.full")
        or ".".join(
            p
            for p in (
                labels.get("nvidia.com/cuda.runtime-version.major") or labels.get("nvidia.com/cuda.runtime.major"),
                labels.get("nvidia.com/cuda.runtime-version.minor") or labels.get("nvidia.com/cuda.runtime.minor"),
            )
            if p
        )
        or "13.0"
    )
    if "." not in cuda:
        cuda += ".0"
    layout: tuple[str, ...] = ()
    gpus = count
    if strategy == "single" and "-MIG-" in product:
        profile = product.rsplit("-MIG-", 1)[1]
        per_gpu = model.mig_profile(profile).max_instances if model.mig_profiles else 1
        gpus = max(1, -(-count // per_gpu))
        layout = (profile,) * min(per_gpu, MAX_MIG_PER_GPU)
    elif strategy == "mixed":
        mig_counts = {}
        for key, value in labels.items():
            m = re.fullmatch(r"nvidia\.com/mig-(\d+g\.\d+gb)\.count", key)
            n = _int(value) or 0
            if m and n > 0:
                mig_counts[m.group(1)] = n
        if mig_counts and count:
            each = {p: min(MAX_MIG_PER_GPU, max(1, n // count)) for p, n in sorted(mig_counts.items())}
            layout = tuple(p for p, n in each.items() for _ in range(n))[:MAX_MIG_PER_GPU]
    return NodeHardware(
        model=model,
        gpu_count=min(gpus, MAX_GPUS_PER_NODE),
        mig_strategy=strategy,
        mig_layout=layout,
        replicas=replicas,
        sharing_strategy=sharing,
        driver_version=driver,
        cuda_driver_version=cuda,
        dynamic_mig=labels.get(DYNAMIC_MIG_LABEL) == "true",
        shared_memory=labels.get(SHARED_GPU_LABEL) == "true",
    )


# The simulator's stand-ins, on a node, for what the DRA driver is configured to publish there.
DYNAMIC_MIG_LABEL = "nvidia.com/dra.dynamic-mig"
SHARED_GPU_LABEL = "nvidia.com/dra.shared-gpu"
DYNAMIC_MIG_PROFILE = "1g.10gb"  # the placements the demo's dynamic-MIG pool publishes beside the whole GPU
SHARED_MEMORY_POLICY = {"default": "10Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}


def normalize_version(text: str) -> str:
    """Semver the way the driver normalises it: "9.0" -> "9.0.0", "580.105.08" -> "580.105.8"."""
    parts = [str(int(p)) for p in re.findall(r"\d+", text)[:3]]
    while len(parts) < 3:
        parts.append("0")
    return ".".join(parts)


def schema_for_version(version: str) -> str:
    """Map a driver release ("v25.3.2", "25.8.0", "v0.4.0", or a schema key) to its attribute schema."""
    nums = [int(n) for n in re.findall(r"\d+", version)[:2]] + [0, 0]
    major, minor = nums[0], nums[1]
    if major == 0:  # kubernetes-sigs/dra-driver-nvidia-gpu 0.x continues after NVIDIA's v25.12
        return SCHEMA_25_12
    if (major, minor) < (25, 8):
        return SCHEMA_25_3
    if (major, minor) < (25, 12):
        return SCHEMA_25_8
    return SCHEMA_25_12


def driver_version_from_image(image: str) -> str:
    """The attribute schema a kubelet-plugin image publishes, from its tag (untagged or unknown tags: newest)."""
    tag = image.rsplit("@", 1)[0]
    tag = tag.rsplit(":", 1)[1] if ":" in tag.rsplit("/", 1)[-1] else ""
    if not re.search(r"\d", tag):
        return SCHEMA_25_12
    return schema_for_version(tag)


# The CDI device names the GPU kubelet plugin returns from NodePrepareResources, one list per allocated device (vendor
# "k8s." + driver; cmd/gpu-kubelet-plugin/cdi.go and device_state.go). From v25.12 (and the 0.x releases after it):
# only the claim's own spec entry, `k8s.gpu.nvidia.com/claim=<claim uid>-<device name>`. v25.3 to v25.8 returned the
# node-wide standard device first, `k8s.gpu.nvidia.com/device=<device name>`, then (when a config adds container edits)
# the claim's entry. A kubelet v1.37 names the device in allocatedResourcesStatus by the first of them.
CDI_VENDOR = "k8s." + DRIVER
CDI_CLAIM_KIND = CDI_VENDOR + "/claim"
CDI_DEVICE_KIND = CDI_VENDOR + "/device"
_UID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_CDI_CLAIM_NAME = re.compile(rf"({_UID})-(.+)")


def cdi_device_ids(driver_version: str, claim_uid: str, device: str) -> list[str]:
    """The CDI device names driver `driver_version` (a release or schema key) returns for `device` of a claim."""
    claim_name = f"{CDI_CLAIM_KIND}={claim_uid}-{device}"
    if schema_for_version(driver_version) in (SCHEMA_25_3, SCHEMA_25_8):
        return [f"{CDI_DEVICE_KIND}={device}", claim_name]
    return [claim_name]


def device_of_cdi_id(cdi_id: str) -> tuple[str | None, str] | None:
    """(claim uid or None, device name) behind a CDI device name the GPU kubelet plugin hands out, or None when it is
    not one of its names."""
    kind, sep, name = cdi_id.partition("=")
    if not sep or not name:
        return None
    if kind == CDI_DEVICE_KIND:
        return None, name
    if kind == CDI_CLAIM_KIND:
        m = _CDI_CLAIM_NAME.fullmatch(name)
        return (m.group(1), m.group(2)) if m else None
    return None


def _hex(*parts: object) -> str:
    return hashlib.sha256("/".join(str(p) for p in parts).encode()).hexdigest()


def gpu_uuid(node_name: str, minor: int) -> str:
    h = _hex("gpu", node_name, minor)
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def mig_uuid(node_name: str, minor: int, index: int) -> str:
    h = _hex("mig", node_name, minor, index)
    return f"MIG-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


# PCI bus numbers of an 8-GPU HGX board, in minor order.
_BUSES = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)


def pci_bus_id(minor: int) -> str:
    bus = _BUSES[minor] if minor < len(_BUSES) else 0x10 + minor
    return f"0000:{bus:02x}:00.0"


def pcie_root(minor: int) -> str:
    bus = _BUSES[minor] if minor < len(_BUSES) else 0x10 + minor
    return f"pci0000:{bus - 1:02x}"


def _common_attributes(hw: NodeHardware, schema: str, minor: int) -> dict:
    m = hw.model
    attrs = {
        "productName": {"string": m.product_name},
        "brand": {"string": m.brand},
        "architecture": {"string": m.architecture},
        "cudaComputeCapability": {"version": normalize_version(m.compute_capability)},
        "driverVersion": {"version": normalize_version(hw.driver_version)},
        "cudaDriverVersion": {"version": normalize_version(hw.cuda_driver_version)},
    }
    if schema == SCHEMA_25_12:
        attrs[f"{STD_DOMAIN}/pciBusID"] = {"string": pci_bus_id(minor)}
        if m.addressing_mode:
            attrs["addressingMode"] = {"string": m.addressing_mode}
    else:
        attrs["pcieBusID"] = {"string": pci_bus_id(minor)}
    if schema != SCHEMA_25_3:
        attrs[f"{STD_DOMAIN}/pcieRoot"] = {"string": pcie_root(minor)}
    return attrs


def _quantity_mi(mib: int) -> str:
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


def devices_for_node(node_name: str, hw: NodeHardware, driver_version: str) -> list[dict]:
    """The devices driver `gpu.nvidia.com` publishes for this hardware: whole GPUs, or MIG devices where MIG is on."""
    schema = schema_for_version(driver_version)
    devices: list[dict] = []
    for minor in range(hw.gpu_count):
        uuid = gpu_uuid(node_name, minor)
        if hw.dynamic_mig and hw.model.mig_profiles:
            devices.extend(_dynamic_mig_devices(node_name, hw, schema, minor))
            continue
        if not hw.mig_enabled:
            attrs = {"type": {"string": "gpu"}, "uuid": {"string": uuid}, **_common_attributes(hw, schema, minor)}
            if schema == SCHEMA_25_3:
                attrs["index"] = {"int": minor}
                attrs["minor"] = {"int": minor}
            dev: dict = {
                "name": f"gpu-{minor}",
                "attributes": dict(sorted(attrs.items())),
                "capacity": {"memory": {"value": _quantity_mi(hw.model.memory_mib)}},
            }
            if hw.shared_memory:
                dev["allowMultipleAllocations"] = True
                dev["capacity"]["memory"]["requestPolicy"] = json.loads(json.dumps(SHARED_MEMORY_POLICY))
            devices.append(dev)
            continue
        start_by_profile: dict[str, int] = {}
        next_start = 0
        for i, profile_name in enumerate(hw.mig_layout):
            p = hw.model.mig_profile(profile_name)
            start = next_start
            next_start += p.slices
            start_by_profile[profile_name] = start
            attrs = {
                "type": {"string": "mig"},
                "uuid": {"string": mig_uuid(node_name, minor, i)},
                "parentUUID": {"string": uuid},
                "profile": {"string": p.name},
                **_common_attributes(hw, schema, minor),
            }
            if schema == SCHEMA_25_3:  # the parent's index and minor [unverified for MIG devices]
                attrs["index"] = {"int": minor}
                attrs["minor"] = {"int": minor}
            capacity = {
                "multiprocessors": {"value": str(p.multiprocessors)},
                "copyEngines": {"value": str(p.copy_engines)},
                "decoders": {"value": str(p.decoders)},
                "encoders": {"value": str(p.encoders)},
                "jpegEngines": {"value": str(p.jpeg_engines)},
                "ofaEngines": {"value": str(p.ofa_engines)},
                "memory": {"value": _quantity_mi(p.memory_mib)},
            }
            for s in range(start, start + p.slices):
                capacity[f"memorySlice{s}"] = {"value": "1"}
            devices.append(
                {
                    "name": f"gpu-{minor}-mig-{p.gi_profile_id}-{start}-{p.slices}",
                    "attributes": dict(sorted(attrs.items())),
                    "capacity": capacity,
                }
            )
    return devices


# NVIDIA's device plugin names a time-sliced replica <device id>::<replica> (its annotated IDs).
REPLICA_SEPARATOR = "::"


def device_plugin_devices(node_name: str, hw: NodeHardware) -> dict[str, list[dict]]:
    """The devices NVIDIA's device plugin registers on this node, per extended resource, in the order it lists them:
    each with the ID the kubelet's device manager tracks (a GPU or MIG UUID, `<uuid>::<n>` for a time-sliced
    replica), the UUID and index it stands for and the GPU's minor. Counts equal `hw.device_plugin_resources()`."""
    out: dict[str, list[dict]] = {}
    for minor in range(hw.gpu_count):
        uuid = gpu_uuid(node_name, minor)
        if hw.mig_enabled and hw.mig_strategy in ("single", "mixed"):
            for i, profile in enumerate(hw.mig_layout):
                resource = "nvidia.com/gpu" if hw.mig_strategy == "single" else f"nvidia.com/mig-{profile}"
                mig = mig_uuid(node_name, minor, i)
                out.setdefault(resource, []).append({"id": mig, "uuid": mig, "index": f"{minor}:{i}", "minor": minor})
            continue
        replicas = max(1, hw.replicas)
        for r in range(replicas):
            out.setdefault("nvidia.com/gpu", []).append(
                {
                    "id": uuid if replicas == 1 else f"{uuid}{REPLICA_SEPARATOR}{r}",
                    "uuid": uuid,
                    "index": str(minor),
                    "minor": minor,
                }
            )
    return out


def counter_set_name(minor: int) -> str:
    return f"gpu-{minor}-counter-set"


def _dynamic_mig_devices(node_name: str, hw: NodeHardware, schema: str, minor: int) -> list[dict]:
    """One GPU under DynamicMIG: the whole GPU consuming all its memory slices, and each placement of the demo's
    profile consuming its own (the allocator keeps them from overlapping through the GPU's counter set)."""
    uuid = gpu_uuid(node_name, minor)
    p = hw.model.mig_profile(DYNAMIC_MIG_PROFILE)
    total = max(q.slices for q in hw.model.mig_profiles)
    cs = counter_set_name(minor)
    attrs = {"type": {"string": "gpu"}, "uuid": {"string": uuid}, **_common_attributes(hw, schema, minor)}
    out = [
        {
            "name": f"gpu-{minor}",
            "attributes": dict(sorted(attrs.items())),
            "capacity": {"memory": {"value": _quantity_mi(hw.model.memory_mib)}},
            "consumesCounters": [
                {"counterSet": cs, "counters": {f"memory-slice-{s}": {"value": "1"} for s in range(total)}}
            ],
        }
    ]
    for i in range(p.max_instances):
        start = i * p.slices
        mattrs = {
            "type": {"string": "mig"},
            "parentUUID": {"string": uuid},
            "profile": {"string": p.name},
            **_common_attributes(hw, schema, minor),
        }
        out.append(
            {
                "name": f"gpu-{minor}-mig-{p.gi_profile_id}-{start}-{p.slices}",
                "attributes": dict(sorted(mattrs.items())),
                "capacity": {
                    "multiprocessors": {"value": str(p.multiprocessors)},
                    "memory": {"value": _quantity_mi(p.memory_mib)},
                },
                "consumesCounters": [
                    {
                        "counterSet": cs,
                        "counters": {f"memory-slice-{s}": {"value": "1"} for s in range(start, start + p.slices)},
                    }
                ],
            }
        )
    return out


def shared_counters(hw: NodeHardware) -> list[dict]:
    """The counter sets a DynamicMIG node publishes (in a slice of their own: a slice has devices or counters)."""
    if not (hw.dynamic_mig and hw.model.mig_profiles):
        return []
    total = max(q.slices for q in hw.model.mig_profiles)
    return [
        {"name": counter_set_name(m), "counters": {f"memory-slice-{s}": {"value": "1"} for s in range(total)}}
        for m in range(hw.gpu_count)
    ]


_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def name_suffix(*parts: object, length: int = 5) -> str:
    """A generateName-style random suffix, deterministic from its inputs."""
    h = int(_hex(*parts), 16)
    out = []
    for _ in range(length):
        h, r = divmod(h, len(_SUFFIX_ALPHABET))
        out.append(_SUFFIX_ALPHABET[r])
    return "".join(out)


def resource_slices_for_node(
    node_name: str,
    hardware: NodeHardware,
    driver_version: str,
    generation: int = 1,
    *,
    node_uid: str | None = None,
    creation_timestamp: str | None = None,
) -> list[dict]:
    """ResourceSlices of driver gpu.nvidia.com for one node, as that driver version publishes them (one pool per
    node)."""
    devices = devices_for_node(node_name, hardware, driver_version)
    # A slice whose devices use counters holds at most 64 of them (validation's limit with taints or counters).
    per_slice = MAX_DEVICES_PER_SLICE // 2 if hardware.dynamic_mig else MAX_DEVICES_PER_SLICE
    chunks: list = [devices[i : i + per_slice] for i in range(0, len(devices), per_slice)] or [[]]
    counters = shared_counters(hardware)
    if counters:
        chunks.append(counters)
    slices = []
    prefix = f"{node_name}-{DRIVER}-"
    for i, chunk in enumerate(chunks):
        meta: dict = {
            "name": prefix + name_suffix("slice", node_name, generation, i),
            "generateName": prefix,
            "uid": uid_for("ResourceSlice", node_name, generation, i),
        }
        if creation_timestamp:
            meta["creationTimestamp"] = creation_timestamp
        if node_uid:
            meta["ownerReferences"] = [
                {"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": node_uid, "controller": True}
            ]
        slices.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": meta,
                "spec": {
                    "driver": DRIVER,
                    "nodeName": node_name,
                    "pool": {"name": node_name, "generation": generation, "resourceSliceCount": len(chunks)},
                    **({"sharedCounters": chunk} if counters and i == len(chunks) - 1 else {"devices": chunk}),
                },
            }
        )
    return slices


def uid_for(*parts: object) -> str:
    """A stable RFC 4122 version-4-shaped uid from its inputs, so regenerated objects keep their identity."""
    h = _hex("uid", *parts)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:32]}"


def predict_devices(node: dict, driver_image_or_version: str) -> list[dict] | None:
    """The devices driver gpu.nvidia.com would publish on this node once its kubelet plugin runs there,
    from the node's GPU Feature Discovery labels and the driver's version; None when the labels say nothing."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    hw = node_hardware_from_labels(labels)
    if hw is None:
        return None
    version = (
        driver_version_from_image(driver_image_or_version)
        if ("/" in driver_image_or_version or ":" in driver_image_or_version)
        else schema_for_version(driver_image_or_version or SCHEMA_25_12)
    )
    return devices_for_node(node["metadata"]["name"], hw, version)


def published_attributes(driver_version: str) -> set[str]:
    """Attribute names (bare, domain gpu.nvidia.com) a whole GPU carries in this driver version's schema."""
    schema = (
        driver_version_from_image(driver_version)
        if ("/" in driver_version or ":" in driver_version)
        else schema_for_version(driver_version)
    )
    names = {
        "type",
        "uuid",
        "productName",
        "brand",
        "architecture",
        "cudaComputeCapability",
        "driverVersion",
        "cudaDriverVersion",
    }
    if schema == SCHEMA_25_3:
        names |= {"index", "minor", "pcieBusID"}
    elif schema == SCHEMA_25_8:
        names |= {"pcieBusID"}
    else:
        names |= {"addressingMode"}
    return names
