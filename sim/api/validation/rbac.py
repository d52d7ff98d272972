"""rbac.authorization.k8s.io/v1: binding defaulting and Role, ClusterRole, RoleBinding, ClusterRoleBinding checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dragoman.sim.api.validation.fields import _list, invalid, not_supported, required


def _default_binding_subjects(obj: dict) -> None:
    for subject in obj.get("subjects") or []:
        if "apiGroup" not in subject:
            subject["apiGroup"] = "" if subject.get("kind") == "ServiceAccount" else "rbac.authorization.k8s.io"
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = "rbac.authorization.k8s.io"


def _rule_errors(rules: Any, path: str, namespaced: bool) -> list[dict]:
    errs: list[dict] = []
    for i, rule in enumerate(_list(rules)):
        p = f"{path}[{i}]"
        rule = rule if isinstance(rule, dict) else {}
        if not rule.get("verbs"):
            errs.append(required(f"{p}.verbs", "verbs must contain at least one value"))
        if rule.get("nonResourceURLs"):
            if namespaced:
                errs.append(
                    invalid(
                        f"{p}.nonResourceURLs",
                        rule["nonResourceURLs"],
                        "namespaced rules cannot apply to non-resource URLs",
                    )
                )
            if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                errs.append(
                    invalid(
                        f"{p}.nonResourceURLs",
                        rule["nonResourceURLs"],
                        "rules cannot apply to both regular resources and non-resource URLs",
                    )
                )
            continue
        if not rule.get("apiGroups"):
            errs.append(required(f"{p}.apiGroups", "resource rules must supply at least one api group"))
        if not rule.get("resources"):
            errs.append(required(f"{p}.resources", "resource rules must supply at least one resource"))
    return errs


def _role_errors(namespaced: bool) -> Callable[[dict, dict | None], list[dict]]:
    def check(obj: dict, old: dict | None) -> list[dict]:
        return _rule_errors(obj.get("rules"), "rules", namespaced)

    return check


def _binding_errors(cluster: bool) -> Callable[[dict, dict | None], list[dict]]:
    def check(obj: dict, old: dict | None) -> list[dict]:
        errs: list[dict] = []
        ref = obj.get("roleRef")
        if not isinstance(ref, dict):
            return [required("roleRef", "")]
        kinds = ["ClusterRole"] if cluster else ["Role", "ClusterRole"]
        if ref.get("kind") not in kinds:
            errs.append(not_supported("roleRef.kind", ref.get("kind"), kinds))
        if ref.get("apiGroup") not in (None, "", "rbac.authorization.k8s.io"):
            errs.append(not_supported("roleRef.apiGroup", ref.get("apiGroup"), ["rbac.authorization.k8s.io"]))
        if not ref.get("name"):
            errs.append(required("roleRef.name", ""))
        for i, subject in enumerate(_list(obj.get("subjects"))):
            p = f"subjects[{i}]"
            subject = subject if isinstance(subject, dict) else {}
            kind = subject.get("kind")
            if kind not in ("ServiceAccount", "User", "Group"):
                errs.append(not_supported(f"{p}.kind", kind, ["ServiceAccount", "User", "Group"]))
            if not subject.get("name"):
                errs.append(required(f"{p}.name", ""))
            if kind == "ServiceAccount":
                if subject.get("apiGroup"):
                    errs.append(not_supported(f"{p}.apiGroup", subject.get("apiGroup"), [""]))
                if cluster and not subject.get("namespace"):
                    errs.append(required(f"{p}.namespace", ""))
            elif kind in ("User", "Group") and subject.get("apiGroup") not in (None, "rbac.authorization.k8s.io"):
                errs.append(not_supported(f"{p}.apiGroup", subject.get("apiGroup"), ["rbac.authorization.k8s.io"]))
        if old is not None and (old.get("roleRef") or {}) != ref:
            old_ref = dict(old.get("roleRef") or {})
            new_ref = dict(ref)
            old_ref.setdefault("apiGroup", "rbac.authorization.k8s.io")
            new_ref.setdefault("apiGroup", "rbac.authorization.k8s.io")
            if old_ref != new_ref:
                errs.append(invalid("roleRef", ref, "cannot change roleRef"))
        return errs

    return check
