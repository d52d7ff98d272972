"""Which pods and DaemonSets are the GPU stack's: NVIDIA's device plugin and its DRA driver's kubelet plugin,
recognised by images, labels and names, with how they are deployed (GPU Operator, Helm chart, DaemonSet) and by whom.

The one classifier: the model, the diagnosis, the actions and the simulated kubelet and DRA plugin
(sim/controllers/base.py) all read it.
"""

from __future__ import annotations

import dataclasses
import re

# The GPU Operator's switch for its device plugin on a node (the migration sets it to "false").
GPU_OPERATOR_DEPLOY_LABEL = "nvidia.com/gpu.deploy.device-plugin"

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
_NO_WORD = dict(zip(ROLE_NAME_WORDS, _NO_ROLE_WORDS, strict=True))  # read only: a name holding none of the words


def role_name_words(name: str) -> tuple[bool, ...]:
    """Which of ROLE_NAME_WORDS the name holds (case aside), in their order."""
    lname = name.lower()
    if _ANY_ROLE_WORD.search(lname) is None:  # most names: one scan instead of one per word
        return _NO_ROLE_WORDS
    return tuple([w in lname for w in ROLE_NAME_WORDS])


# The label values _role_from takes a role from: the DRA driver chart's name, its kubelet plugin component, and the
# device plugin's labels (key, value) across its charts and the GPU Operator.
_DRA_DRIVER_NAMES = ("dra-driver-nvidia-gpu", "nvidia-dra-driver-gpu")
_KUBELET_PLUGIN = "kubelet-plugin"
_DEVICE_PLUGIN_LABELS = (
    ("app", "nvidia-device-plugin-daemonset"),
    ("name", "nvidia-device-plugin-ds"),
    ("app.kubernetes.io/name", "nvidia-device-plugin"),
    ("k8s-app", "nvidia-device-plugin"),
)
_ROLE_LABEL_VALUES = frozenset((*_DRA_DRIVER_NAMES, _KUBELET_PLUGIN, *(v for _, v in _DEVICE_PLUGIN_LABELS)))


def _may_have_role(labels: dict, pod_spec: dict, name: str) -> bool:
    """False only where _role_from answers None: no label value it takes a role from, no "dra-driver" image, and no
    "plugin" in the name (every name word that makes a role holds it). Most bare pods of a fleet are answered so
    without their images joined or their role remembered (a model's load asks it of 20,000). Anything unexpected
    (a value that is not a string) is left to _role_from."""
    try:
        if not _ROLE_LABEL_VALUES.isdisjoint(labels.values()):
            return True
    except (TypeError, AttributeError):
        return True
    if name.__class__ is not str or "plugin" in name.lower():
        return True
    for key in ("containers", "initContainers"):
        for c in pod_spec.get(key) or ():
            image = c.get("image") if c.__class__ is dict else None
            if image is not None and (image.__class__ is not str or "dra-driver" in image):
                return True
    return False


def _role_from(labels: dict, images: list[str], name: str) -> str | None:
    joined = " ".join(images)
    # A word of the name is read only through this mapping: one not in ROLE_NAME_WORDS raises KeyError.
    words = role_name_words(name)
    word = _NO_WORD if words is _NO_ROLE_WORDS else dict(zip(ROLE_NAME_WORDS, words, strict=True))
    # GPU Feature Discovery and the MPS control daemon ship in the device plugin's image; they serve no GPUs.
    if (
        word["feature-discovery"]
        or word["mps-control-daemon"]
        or labels.get("app") in ("gpu-feature-discovery", "nvidia-device-plugin-mps-control-daemon")
        or labels.get("app.kubernetes.io/name") == "gpu-feature-discovery"
    ):
        return None
    if (
        labels.get("app.kubernetes.io/name") in _DRA_DRIVER_NAMES
        or _kubelet_plugin_component(labels)
        or "dra-driver" in joined
        or (word["dra-driver"] and word["kubelet-plugin"])
    ):
        # The driver's controller Deployment shares the image; only the kubelet plugin publishes devices.
        if (
            labels.get(
                "dra-driver-nvidia-gpu-component", labels.get("nvidia-dra-driver-gpu-component", _KUBELET_PLUGIN)
            )
            != _KUBELET_PLUGIN
        ):
            return None
        return "dra-driver"
    if (
        any(labels.get(k) == v for k, v in _DEVICE_PLUGIN_LABELS)
        or ("k8s-device-plugin" in joined and word["device-plugin"])
        or word["nvidia-device-plugin"]
    ):
        return "device-plugin"
    return None


def _kubelet_plugin_component(labels: dict) -> bool:
    """A label `<anything>-component: kubelet-plugin` (the value compared first: most labels' differ)."""
    for k, v in labels.items():
        if v == _KUBELET_PLUGIN and k.endswith("-component"):
            return True
    return False


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
    return _classified(ds, labels, template.get("spec") or {})


def _classified(obj: dict, labels: dict, pod_spec: dict) -> Workload | None:
    """The workload `obj` (a DaemonSet or a bare pod) is, from these labels and the images of this pod spec."""
    images = _images(pod_spec)
    role = _role_of(labels, images, _meta(obj).get("name", ""))
    return None if role is None else _workload(role, obj, labels, images)


# _role_from's answers by all it reads: the labels, the images, the name's role words. A fleet's bare pods are the pods
# of a few templates (a model's load classifies every one: 20,000 at the scale benchmark).
_ROLES: dict[tuple, str | None] = {}
_ROLES_LIMIT = 4096
_UNKNOWN = "?"


def _role_of(labels: dict, images: list[str], name: str) -> str | None:
    """_role_from, remembered by what it reads."""
    words = role_name_words(name)
    try:
        key = (tuple(labels.items()), tuple(images), words)
        role = _ROLES.get(key, _UNKNOWN)
    except TypeError:  # a value that cannot be hashed (a label that is not a string): read it, not remembered
        return _role_from(labels, images, name)
    if role is _UNKNOWN:
        if len(_ROLES) >= _ROLES_LIMIT:
            _ROLES.clear()
        role = _ROLES[key] = _role_from(labels, images, name)
    return role


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
    labels, spec = meta.get("labels") or {}, pod.get("spec") or {}
    if not _may_have_role(labels, spec, meta.get("name", "")):
        return None
    return _classified(pod, labels, spec)
