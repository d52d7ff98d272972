"""apps/v1: defaulting of Deployments, DaemonSets, ReplicaSets and StatefulSets and the workload checks they share
with Jobs (selector, template, counts, immutability)."""

from __future__ import annotations

from collections.abc import Callable

from dragoman.fleet.k8s import match_label_selector
from dragoman.sim.api.validation.core import _default_template, pod_spec_errors
from dragoman.sim.api.validation.fields import IMMUTABLE, invalid, required


def _default_deployment(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _default_template(obj)


TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def _default_daemonset(obj: dict) -> None:
    # The internal templateGeneration, written by conversion as this annotation (1 for a new DaemonSet).
    annotations = obj.setdefault("metadata", {}).setdefault("annotations", {})
    annotations.setdefault(TEMPLATE_GENERATION, "1")
    spec = obj.setdefault("spec", {})
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _default_template(obj)


def _default_replicaset(obj: dict) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _default_template(obj)


def _default_statefulset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
    _default_template(obj)


def _workload_errors(kind: str, restart: list[str]) -> Callable[[dict, dict | None], list[dict]]:
    def check(obj: dict, old: dict | None) -> list[dict]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec", "")]
        errs: list[dict] = []
        selector = spec.get("selector")
        template = spec.get("template")
        if kind != "Job" or selector is not None:
            if not isinstance(selector, dict) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
                errs.append(required("spec.selector", ""))
        if not isinstance(template, dict):
            errs.append(required("spec.template", ""))
            return errs
        labels = (template.get("metadata") or {}).get("labels") or {}
        if (
            isinstance(selector, dict)
            and (selector.get("matchLabels") or selector.get("matchExpressions"))
            and not match_label_selector(selector, labels)
        ):
            errs.append(invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
        errs += pod_spec_errors(template.get("spec"), "spec.template.spec", restart)
        for key in (
            "replicas",
            "revisionHistoryLimit",
            "minReadySeconds",
            "parallelism",
            "completions",
            "backoffLimit",
        ):
            value = spec.get(key)
            if value is not None and (not isinstance(value, int) or value < 0):
                errs.append(invalid(f"spec.{key}", value, "must be greater than or equal to 0"))
        if old is not None and kind != "Job":
            if spec.get("selector") != (old.get("spec") or {}).get("selector"):
                errs.append(invalid("spec.selector", spec.get("selector"), IMMUTABLE))
        if old is not None and kind == "Job":
            old_spec = old.get("spec") or {}
            if spec.get("completions") != old_spec.get("completions") and old_spec.get("completionMode") != "Indexed":
                errs.append(invalid("spec.completions", spec.get("completions"), IMMUTABLE))
            if spec.get("selector") != old_spec.get("selector"):
                errs.append(invalid("spec.selector", spec.get("selector"), IMMUTABLE))
        return errs

    return check


def prepare_daemonset_update(new: dict, old: dict) -> None:
    """The DaemonSet strategy's PrepareForUpdate: a changed pod template is a new template generation."""
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    before = (old.get("metadata") or {}).get("annotations", {}).get(TEMPLATE_GENERATION, "1")
    annotations = new.setdefault("metadata", {}).setdefault("annotations", {})
    if new_spec.get("template") != old_spec.get("template"):
        annotations[TEMPLATE_GENERATION] = str(int(before) + 1 if before.isdigit() else 1)
    else:
        annotations[TEMPLATE_GENERATION] = before
