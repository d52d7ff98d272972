"""RBAC authorization as the API server's RBAC authorizer decides it, over raw Role/ClusterRole/binding dicts."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from dragoman.sim.api import status as _status


@dataclasses.dataclass
class RequestAttributes:
    """What one request asks to do (authorizer.Attributes). `non_resource_path` set means a non-resource request."""

    user: str
    groups: list[str]
    verb: str
    api_group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    non_resource_path: str | None = None

    @property
    def is_resource_request(self) -> bool:
        return self.non_resource_path is None


MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"

# The bootstrap policy every cluster has (plugin/pkg/auth/authorizer/rbac/bootstrappolicy): discovery and
# self-reviews for any authenticated user, health and version for everyone.
BOOTSTRAP_CLUSTER_ROLES: list[dict] = [
    {
        "metadata": {"name": "system:discovery"},
        "rules": [
            {
                "verbs": ["get"],
                "nonResourceURLs": [
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/healthz",
                    "/livez",
                    "/openapi",
                    "/openapi/*",
                    "/readyz",
                    "/version",
                    "/version/",
                ],
            }
        ],
    },
    {
        "metadata": {"name": "system:basic-user"},
        "rules": [
            {
                "verbs": ["create"],
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
            },
            {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
        ],
    },
    {
        "metadata": {"name": "system:public-info-viewer"},
        "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"]}],
    },
]
BOOTSTRAP_CLUSTER_ROLE_BINDINGS: list[dict] = [
    {
        "metadata": {"name": "system:discovery"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:discovery"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": AUTHENTICATED}],
    },
    {
        "metadata": {"name": "system:basic-user"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:basic-user"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": AUTHENTICATED}],
    },
    {
        "metadata": {"name": "system:public-info-viewer"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "system:public-info-viewer",
        },
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": AUTHENTICATED},
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": UNAUTHENTICATED},
        ],
    },
]


def bootstrap_rules(role: str) -> list[dict]:
    """The rules of one bootstrap ClusterRole (a rules review lists them for every authenticated user)."""
    return next(r["rules"] for r in BOOTSTRAP_CLUSTER_ROLES if r["metadata"]["name"] == role)


def _verb_matches(rule: dict, verb: str) -> bool:
    verbs = rule.get("verbs") or []
    return "*" in verbs or verb in verbs


def _group_matches(rule: dict, group: str) -> bool:
    groups = rule.get("apiGroups") or []
    return "*" in groups or group in groups


def _resource_matches(rule: dict, combined: str, subresource: str) -> bool:
    for res in rule.get("resources") or []:
        if res == "*" or res == combined:
            return True
        if subresource and len(res) == len(subresource) + 2 and res.startswith("*/") and res.endswith(subresource):
            return True
    return False


def _name_matches(rule: dict, name: str) -> bool:
    names = rule.get("resourceNames") or []
    return not names or name in names


def _url_matches(rule: dict, path: str) -> bool:
    for url in rule.get("nonResourceURLs") or []:
        if url == "*" or url == path:
            return True
        if url.endswith("*") and path.startswith(url[:-1]):
            return True
    return False


def rule_allows(attrs: RequestAttributes, rule: dict) -> bool:
    """One PolicyRule against one request (RuleAllows in the RBAC authorizer)."""
    if attrs.is_resource_request:
        combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        return (
            _verb_matches(rule, attrs.verb)
            and _group_matches(rule, attrs.api_group)
            and _resource_matches(rule, combined, attrs.subresource)
            and _name_matches(rule, attrs.name)
        )
    return _verb_matches(rule, attrs.verb) and _url_matches(rule, attrs.non_resource_path or "")


def _effective_groups(attrs: RequestAttributes) -> set[str]:
    groups = set(attrs.groups or [])
    if attrs.user == ANONYMOUS or UNAUTHENTICATED in groups:
        groups.add(UNAUTHENTICATED)
    else:
        groups.add(AUTHENTICATED)
    return groups


def _subject_matches(subject: dict, user: str, groups: set[str], binding_namespace: str) -> bool:
    kind = subject.get("kind")
    name = subject.get("name", "")
    if kind == "User":
        return user == name
    if kind == "Group":
        return name in groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return bool(namespace) and user == f"system:serviceaccount:{namespace}:{name}"
    return False


def _subject_text(subject: dict) -> str:
    kind = subject.get("kind", "")
    if kind == "ServiceAccount":
        return f'ServiceAccount "{subject.get("namespace", "")}/{subject.get("name", "")}"'
    return f'{kind} "{subject.get("name", "")}"'


def _index(objs: Iterable[dict]) -> dict[tuple[str, str], dict]:
    return {
        ((o.get("metadata") or {}).get("namespace", ""), (o.get("metadata") or {}).get("name", "")): o for o in objs
    }


def authorize(
    attrs: RequestAttributes,
    roles: list[dict],
    cluster_roles: list[dict],
    role_bindings: list[dict],
    cluster_role_bindings: list[dict],
    include_bootstrap: bool = True,
) -> tuple[bool, str]:
    """(allowed, reason) for one request. The reason is the RBAC authorizer's "allowed by ..." text, or "" when denied.

    Users are implicitly in `system:authenticated` (or `system:unauthenticated` for `system:anonymous`);
    `system:masters` may do anything. With `include_bootstrap`, the bootstrap discovery/self-review
    policy applies even if the scenario did not define it.
    """
    groups = _effective_groups(attrs)
    if MASTERS in groups:
        return True, f'RBAC: allowed by group "{MASTERS}"'
    role_index = _index(roles)
    cluster_index = _index(cluster_roles)
    crbs = list(cluster_role_bindings)
    if include_bootstrap:
        for role in BOOTSTRAP_CLUSTER_ROLES:
            cluster_index.setdefault(("", role["metadata"]["name"]), role)
        crbs += BOOTSTRAP_CLUSTER_ROLE_BINDINGS

    for binding in crbs:
        ref = binding.get("roleRef") or {}
        if ref.get("kind") != "ClusterRole":
            continue
        subject = next((s for s in binding.get("subjects") or [] if _subject_matches(s, attrs.user, groups, "")), None)
        if subject is None:
            continue
        role = cluster_index.get(("", ref.get("name", "")))
        if role and any(rule_allows(attrs, r) for r in role.get("rules") or []):
            name = (binding.get("metadata") or {}).get("name", "")
            return (
                True,
                (
                    f'RBAC: allowed by ClusterRoleBinding "{name}" of ClusterRole "{ref.get("name")}" to '
                    f"{_subject_text(subject)}"
                ),
            )

    if attrs.is_resource_request and attrs.namespace:
        for binding in role_bindings:
            meta = binding.get("metadata") or {}
            if meta.get("namespace", "") != attrs.namespace:
                continue
            subject = next(
                (s for s in binding.get("subjects") or [] if _subject_matches(s, attrs.user, groups, attrs.namespace)),
                None,
            )
            if subject is None:
                continue
            ref = binding.get("roleRef") or {}
            if ref.get("kind") == "ClusterRole":
                role = cluster_index.get(("", ref.get("name", "")))
            elif ref.get("kind") == "Role":
                role = role_index.get((attrs.namespace, ref.get("name", "")))
            else:
                role = None
            if role and any(rule_allows(attrs, r) for r in role.get("rules") or []):
                return True, (
                    f'RBAC: allowed by RoleBinding "{meta.get("name", "")}/{attrs.namespace}" of {ref.get("kind")} '
                    f'"{ref.get("name")}" to {_subject_text(subject)}'
                )
    return False, ""


def denial_text(attrs: RequestAttributes) -> str:
    """`User "viewer" cannot create resource "pods/eviction" in API group "" in the namespace "default"`
    (responsewriters.forbiddenMessage)."""
    if not attrs.is_resource_request:
        return f'User "{attrs.user}" cannot {attrs.verb} path "{attrs.non_resource_path}"'
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if attrs.namespace:
        return (
            f'User "{attrs.user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" '
            f'in the namespace "{attrs.namespace}"'
        )
    return (
        f'User "{attrs.user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" at '
        "the cluster scope"
    )


def forbidden_message(attrs: RequestAttributes, reason: str = "") -> str:
    """The whole 403 message: `pods "x" is forbidden: User "viewer" cannot create resource "pods/eviction" in API group
    "" in the namespace "default"`."""
    text = denial_text(attrs)
    if reason:
        text += f": {reason}"
    if not attrs.is_resource_request:
        return f"forbidden: {text}"
    qualified = _status.qualified_resource(attrs.api_group, attrs.resource)
    if attrs.name:
        return f'{qualified} "{attrs.name}" is forbidden: {text}'
    return f"{qualified} is forbidden: {text}"


def forbidden_status(attrs: RequestAttributes, reason: str = "") -> dict:
    """The 403 Status for a denied request (details name/group/kind as the server fills them)."""
    if not attrs.is_resource_request:
        return _status.forbidden_message(forbidden_message(attrs, reason))
    return _status.forbidden_message(forbidden_message(attrs, reason), attrs.api_group, attrs.resource, attrs.name)


def attributes_from_review(review: dict, user: str, groups: list[str]) -> RequestAttributes:
    """RequestAttributes for a SelfSubjectAccessReview's spec (resourceAttributes or nonResourceAttributes)."""
    spec = review.get("spec") or {}
    res = spec.get("resourceAttributes")
    if res is not None:
        return RequestAttributes(
            user=user,
            groups=list(groups),
            verb=res.get("verb", ""),
            api_group=res.get("group", ""),
            resource=res.get("resource", ""),
            subresource=res.get("subresource", ""),
            namespace=res.get("namespace", ""),
            name=res.get("name", ""),
        )
    non = spec.get("nonResourceAttributes") or {}
    return RequestAttributes(
        user=user,
        groups=list(groups),
        verb=non.get("verb", ""),
        api_group="",
        resource="",
        non_resource_path=non.get("path", ""),
    )
