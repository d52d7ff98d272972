"""Which mechanism serves a node's GPUs: recognising device-plugin and DRA-driver workloads, and the ownership rule.

How ownership is decided, in order:
- a pod is a device plugin's or a DRA driver's (`classify_pod`, `classify_daemonset`: images, labels, Helm and
  GitOps owners, below);
- a node's mechanism is `decide_mechanism` below, on its allocatable `nvidia.com/gpu`, whether a plugin pod runs or
  flaps there, and how many devices its ResourceSlices publish (fleet/model.py `_build_node` gathers those inputs,
  and shows "migrating" while a dragoman step is in progress there, `parse_migration`);
- a pool's ownership is its nodes' when they agree, else "mixed"; what the pool is meant to be on is `_target` in
  fleet/pools.py (the mechanism most of its GPU nodes use alone).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import re

from dragoman.fleet.k8s.quantity import count
from dragoman.fleet.nvidia_schema import DRIVER

GPU = "nvidia.com/gpu"
DRA_DRIVER = DRIVER  # NVIDIA's DRA driver name (fleet/nvidia_schema.py)
MIG_PREFIX = "nvidia.com/mig-"
MIGRATION_ANNOTATION = "dragoman.io/migration"
GPU_OPERATOR_DEPLOY_LABEL = "nvidia.com/gpu.deploy.device-plugin"
BRIDGE_VERSION = (1, 36)  # the first kubelet with DRAExtendedResource on by default

# Ownership values. "migrating" is shown when a dragoman migration step is in progress and nothing is wrong.
DEVICE_PLUGIN = "device-plugin"
DRA = "dra"
BOTH = "both"
NONE = "none"
FLAPPING = "flapping"
MIGRATING = "migrating"
OWNERSHIPS = (DEVICE_PLUGIN, DRA, BOTH, NONE, FLAPPING, MIGRATING)

_FINISHED_STATES = {"done", "complete", "completed", "succeeded", "verified", "rolled-back", "rolledback"}

# GitOps tools mark what they manage with these labels/annotations.
GITOPS_KEYS = (
    ("argocd.argoproj.io/instance", "Argo CD application"),
    ("app.kubernetes.io/instance", None),  # only with argocd tracking; see gitops_owner
    ("kustomize.toolkit.fluxcd.io/name", "Flux Kustomization"),
    ("helm.toolkit.fluxcd.io/name", "Flux HelmRelease"),
)


@dataclasses.dataclass(frozen=True)
class Workload:
    """A GPU stack component recognised from a DaemonSet (or a bare pod): its role and how it is deployed."""

    role: str  # "device-plugin" | "dra-driver"
    deployed_by: str  # "gpu-operator" | "helm-chart" | "daemonset"
    namespace: str
    name: str  # the DaemonSet's name ("" for a pod without one)
    chart: str | None = None
    release: str | None = None
    version: str | None = None
    gitops: str | None = None  # e.g. "Argo CD application gpu-stack"

    def describe(self) -> str:
        how = {"gpu-operator": "GPU Operator", "helm-chart": "Helm chart", "daemonset": "plain DaemonSet"}[
            self.deployed_by
        ]
        parts = [how]
        if self.release:
            parts.append(f"release {self.release}")
        if self.version:
            parts.append(self.version)
        if self.gitops:
            parts.append(f"via {self.gitops}")
        return ", ".join(parts)

    def selected_labels(self, labels: dict) -> dict:
        """A node's labels as this workload's DaemonSet selects by them: the GPU Operator fills a missing deploy label
        with "true" on GPU nodes."""
        if self.deployed_by == "gpu-operator" and not labels.get(GPU_OPERATOR_DEPLOY_LABEL):
            return {**labels, GPU_OPERATOR_DEPLOY_LABEL: "true"}
        return labels


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _images(pod_spec: dict) -> list[str]:
    return [c.get("image") or "" for c in (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or [])]


def image_version(image: str) -> str | None:
    """The tag of an image reference (digest dropped), e.g. `v0.4.0`."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return None


# The words of a name _role_from reads, and all it reads of the name: two names holding the same of them are classified
# alike (fleet/projection.py remembers a pod's verdict by them and its template).
ROLE_NAME_WORDS = (
    "feature-discovery",
    "mps-control-daemon",
    "dra-driver",
    "kubelet-plugin",
    "nvidia-device-plugin",
    "device-plugin",
)


_ANY_ROLE_WORD = re.compile("|".join(map(re.escape, ROLE_NAME_WORDS)))
_NO_ROLE_WORDS = (False,) * len(ROLE_NAME_WORDS)


def role_name_words(name: str) -> tuple[bool, ...]:
    """Which of ROLE_NAME_WORDS the name holds (case aside), in their order."""
    lname = name.lower()
    if _ANY_ROLE_WORD.search(lname) is None:  # most names: one scan instead of one per word
        return _NO_ROLE_WORDS
    return tuple([w in lname for w in ROLE_NAME_WORDS])


def _role_from(labels: dict, images: list[str], name: str) -> str | None:
    joined = " ".join(images)
    # A word of the name is read only through this mapping: one not in ROLE_NAME_WORDS raises KeyError.
    word = dict(zip(ROLE_NAME_WORDS, role_name_words(name), strict=True))
    # GPU Feature Discovery and the MPS control daemon ship in the device plugin's image; they serve no GPUs.
    if (
        word["feature-discovery"]
        or word["mps-control-daemon"]
        or labels.get("app") in ("gpu-feature-discovery", "nvidia-device-plugin-mps-control-daemon")
        or labels.get("app.kubernetes.io/name") == "gpu-feature-discovery"
    ):
        return None
    if (
        labels.get("app.kubernetes.io/name") in ("dra-driver-nvidia-gpu", "nvidia-dra-driver-gpu")
        or any(k.endswith("-component") and v == "kubelet-plugin" for k, v in labels.items())
        or "dra-driver" in joined
        or (word["dra-driver"] and word["kubelet-plugin"])
    ):
        # The driver's controller Deployment shares the image; only the kubelet plugin publishes devices.
        if (
            labels.get(
                "dra-driver-nvidia-gpu-component", labels.get("nvidia-dra-driver-gpu-component", "kubelet-plugin")
            )
            != "kubelet-plugin"
        ):
            return None
        return "dra-driver"
    if (
        labels.get("app") == "nvidia-device-plugin-daemonset"
        or labels.get("name") == "nvidia-device-plugin-ds"
        or labels.get("app.kubernetes.io/name") == "nvidia-device-plugin"
        or labels.get("k8s-app") == "nvidia-device-plugin"
        or ("k8s-device-plugin" in joined and word["device-plugin"])
        or word["nvidia-device-plugin"]
    ):
        return "device-plugin"
    return None


def gitops_owner(obj: dict) -> str | None:
    meta = _meta(obj)
    labels = meta.get("labels") or {}
    ann = meta.get("annotations") or {}
    if labels.get("argocd.argoproj.io/instance"):
        return f"Argo CD application {labels['argocd.argoproj.io/instance']}"
    if ann.get("argocd.argoproj.io/tracking-id"):
        return f"Argo CD application {ann['argocd.argoproj.io/tracking-id'].split(':', 1)[0]}"
    if labels.get("kustomize.toolkit.fluxcd.io/name"):
        return (
            "Flux Kustomization "
            f"{labels.get('kustomize.toolkit.fluxcd.io/namespace', '')}/{labels['kustomize.toolkit.fluxcd.io/name']}"
        ).replace(" /", " ")
    if labels.get("helm.toolkit.fluxcd.io/name"):
        return (
            "Flux HelmRelease "
            f"{labels.get('helm.toolkit.fluxcd.io/namespace', '')}/{labels['helm.toolkit.fluxcd.io/name']}"
        ).replace(" /", " ")
    return None


def classify_daemonset(ds: dict) -> Workload | None:
    """A device-plugin or DRA-driver DaemonSet, with how it is deployed; None for anything else."""
    meta = _meta(ds)
    template = (ds.get("spec") or {}).get("template") or {}
    labels = {**(meta.get("labels") or {}), **((template.get("metadata") or {}).get("labels") or {})}
    pod_spec = template.get("spec") or {}
    images = _images(pod_spec)
    role = _role_from(labels, images, meta.get("name", ""))
    if role is None:
        return None
    return _workload(role, ds, labels, images)


def _workload(role: str, obj: dict, labels: dict, images: list[str]) -> Workload:
    meta = _meta(obj)
    ann = meta.get("annotations") or {}
    owners = meta.get("ownerReferences") or []
    release = ann.get("meta.helm.sh/release-name") or (
        labels.get("app.kubernetes.io/instance")
        if labels.get("app.kubernetes.io/managed-by") == "Helm" or labels.get("helm.sh/chart")
        else None
    )
    chart = labels.get("helm.sh/chart")
    if chart:
        # helm.sh/chart is "<chart>-<version>".
        chart = re.sub(r"-v?\d+(\.\d+)*([-+].*)?$", "", chart)
    if (
        any(o.get("kind") == "ClusterPolicy" for o in owners)
        or labels.get("app.kubernetes.io/managed-by") == "gpu-operator"
        or (
            role == "device-plugin"
            and meta.get("name") == "nvidia-device-plugin-daemonset"
            and meta.get("namespace") != "kube-system"
        )
    ):
        deployed_by = "gpu-operator"
        release = None
    elif release or chart:
        deployed_by = "helm-chart"
        chart = chart or labels.get("app.kubernetes.io/name")
    else:
        deployed_by = "daemonset"
        if role == "dra-driver":
            # Manifests rendered from the chart keep its name label.
            chart = labels.get("app.kubernetes.io/name")
    version = None
    for img in images:
        if ("dra-driver" in img) == (role == "dra-driver") or len(images) == 1:
            version = image_version(img)
            if version:
                break
    if version is None and labels.get("app.kubernetes.io/version"):
        version = labels["app.kubernetes.io/version"]
    return Workload(
        role, deployed_by, meta.get("namespace", ""), meta.get("name", ""), chart, release, version, gitops_owner(obj)
    )


def pod_role(pod: dict) -> str | None:
    """Which GPU stack a pod serves, from its own labels, images and name: "device-plugin", "dra-driver" (the DRA
    driver's kubelet plugin, not its controller), or None. The one classifier: the simulated kubelet and DRA plugin
    use it too (sim/controllers/base.py)."""
    meta = _meta(pod)
    return _role_from(meta.get("labels") or {}, _images(pod.get("spec") or {}), meta.get("name", ""))


def classify_pod(pod: dict, daemonsets: dict[tuple[str, str], Workload | None]) -> Workload | None:
    """A pod of a device-plugin or DRA-driver stack: through its owning DaemonSet, else from its own labels and
    images."""
    meta = _meta(pod)
    ns = meta.get("namespace", "")
    for o in meta.get("ownerReferences") or ():
        if o.get("kind") == "DaemonSet":
            key = (ns, o.get("name", ""))
            if key in daemonsets:
                return daemonsets[key]
    labels = meta.get("labels") or {}
    spec = pod.get("spec") or {}
    images = _images(spec)
    role = _role_from(labels, images, meta.get("name", ""))
    if role is None:
        return None
    return _workload(role, pod, labels, images)


def pod_running(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and not _meta(pod).get("deletionTimestamp")


def pod_ready(pod: dict) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


RECENT_RESTART_SECONDS = 600


def parse_time(text: str | None) -> float | None:
    """RFC 3339 as the API server writes it → epoch seconds."""
    if not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def crash_looping(pod: dict, now: float | None = None) -> tuple[bool, int, str]:
    """(restarting repeatedly now, restarts, why): CrashLoopBackOff; several restarts and not ready; or, between two
    crashes, several restarts with the last one less than ten minutes before `now` (the cluster's clock)."""
    restarts = 0
    reason = ""
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        restarts = max(restarts, int(cs.get("restartCount") or 0))
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") == "CrashLoopBackOff":
            reason = "CrashLoopBackOff"
        term = (cs.get("lastState") or {}).get("terminated") or {}
        if not reason and term.get("reason") and int(cs.get("restartCount") or 0) >= 3:
            if not cs.get("ready"):
                reason = f"restarting ({term.get('reason')})"
            elif now is not None:
                finished = parse_time(term.get("finishedAt"))
                if finished is not None and now - finished < RECENT_RESTART_SECONDS:
                    reason = f"running again after a crash ({term.get('reason')}) at {term.get('finishedAt')}"
    if reason:
        return True, restarts, reason
    if restarts >= 3 and not pod_ready(pod) and (pod.get("status") or {}).get("phase") == "Running":
        return True, restarts, "restarting, not ready"
    return False, restarts, ""


def parse_count(value: object) -> int:
    """A count a node reports: fleet/k8s/quantity.py's `count` (actions/capacity.py still calls it by this name)."""
    return count(value)


def parse_kubelet_version(text: str | None) -> tuple[int, int, int] | None:
    """`v1.35.4-eks-1a2b` → (1, 35, 4)."""
    if not text:
        return None
    m = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


# Every step of a dragoman migration, in the order a full one runs them: the `step` a migration annotation names.
# actions/ runs them (actions/registry.py maps each to its class); diagnosis reads how far a node has come.
STEP_ORDER = (
    "preflight",
    "cordon",
    "drain",
    "exclude-device-plugin",
    "scope-driver",
    "device-class",
    "uncordon",
    "verify",
)


@dataclasses.dataclass(frozen=True)
class MigrationState:
    """The `dragoman.io/migration` node annotation: where a dragoman migration of this node stands."""

    pool: str | None
    step: str | None
    state: str | None
    started: str | None = None
    by: str | None = None
    plan: str | None = None

    @property
    def in_progress(self) -> bool:
        return (self.state or "").lower() not in _FINISHED_STATES

    @property
    def finished(self) -> bool:
        return not self.in_progress and (self.state or "").lower() not in ("rolled-back", "rolledback")

    def describe(self) -> str:
        if (self.state or "").lower() == "verified":
            return "verified"  # the whole switch ran and its canary came through: nothing more to say
        return f"{self.step or '?'} {self.state or ''}".strip()


def parse_migration(node: dict) -> MigrationState | None:
    raw = (_meta(node).get("annotations") or {}).get(MIGRATION_ANNOTATION)
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, TypeError):
        return MigrationState(None, None, "unreadable")
    if not isinstance(data, dict):
        return MigrationState(None, None, "unreadable")
    return MigrationState(
        data.get("pool"),
        data.get("step"),
        data.get("state"),
        data.get("started"),
        data.get("by"),
        data.get("plan") or data.get("planId"),
    )


def decide_mechanism(allocatable_gpu: int, plugin_running: bool, plugin_flapping: bool, dra_devices: int) -> str:
    """The mechanism that serves nvidia.com/gpu on a node, decided on allocatable as the scheduler does (dra-facts §b).

    allocatable > 0 → the device plugin serves it; 0 or absent with published devices → DRA. A running plugin pod
    alongside published devices is `both` even in the seconds before allocatable catches up; a plugin that keeps
    restarting on a node with devices is `flapping` (allocatable, and with it the mechanism, flips).
    """
    plugin = allocatable_gpu > 0 or plugin_running
    if dra_devices > 0:
        if plugin_flapping:
            return FLAPPING
        if plugin:
            return BOTH
        return DRA
    if plugin:
        return DEVICE_PLUGIN
    return NONE
