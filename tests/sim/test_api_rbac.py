"""RBAC decisions: verbs, groups, resources with subresources, resourceNames, namespaces, subjects, non-resource
URLs."""

from __future__ import annotations

import pytest
from dragoman.sim.api.rbac import (
    RequestAttributes,
    attributes_from_review,
    authorize,
    forbidden_message,
    forbidden_status,
)

G = "rbac.authorization.k8s.io"

CLUSTER_ROLES = [
    {
        "metadata": {"name": "cluster-admin"},
        "rules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, {"verbs": ["*"], "nonResourceURLs": ["*"]}],
    },
    {
        "metadata": {"name": "view"},
        "rules": [
            {
                "verbs": ["get", "list", "watch"],
                "apiGroups": ["", "apps", "resource.k8s.io"],
                "resources": ["pods", "nodes", "daemonsets", "deviceclasses", "resourceslices"],
            }
        ],
    },
    {
        "metadata": {"name": "drainer"},
        "rules": [
            {"verbs": ["get", "list", "delete"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["patch"], "apiGroups": [""], "resources": ["nodes"], "resourceNames": ["node-1"]},
        ],
    },
    {"metadata": {"name": "scaler"}, "rules": [{"verbs": ["update"], "apiGroups": ["apps"], "resources": ["*/scale"]}]},
    {"metadata": {"name": "metrics"}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics", "/logs/*"]}]},
]
ROLES = [
    {
        "metadata": {"name": "evictor", "namespace": "team-a"},
        "rules": [{"verbs": ["create"], "apiGroups": [""], "resources": ["pods/eviction"]}],
    },
    {
        "metadata": {"name": "cm-one", "namespace": "team-a"},
        "rules": [
            {"verbs": ["get", "update"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["lock"]}
        ],
    },
]
CRBS = [
    {
        "metadata": {"name": "admin"},
        "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "User", "name": "admin"}],
    },
    {
        "metadata": {"name": "viewers"},
        "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "Group", "name": "viewers"}, {"kind": "User", "name": "viewer"}],
    },
    {
        "metadata": {"name": "drainer"},
        "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "drainer"},
        "subjects": [{"kind": "User", "name": "noevict"}],
    },
    {
        "metadata": {"name": "metrics"},
        "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "metrics"},
        "subjects": [{"kind": "ServiceAccount", "name": "prom", "namespace": "mon"}],
    },
]
RBS = [
    {
        "metadata": {"name": "evict", "namespace": "team-a"},
        "roleRef": {"apiGroup": G, "kind": "Role", "name": "evictor"},
        "subjects": [{"kind": "User", "name": "ops"}],
    },
    {
        "metadata": {"name": "lock", "namespace": "team-a"},
        "roleRef": {"apiGroup": G, "kind": "Role", "name": "cm-one"},
        "subjects": [{"kind": "ServiceAccount", "name": "dragoman"}],
    },
    {
        "metadata": {"name": "scale", "namespace": "team-a"},
        "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "scaler"},
        "subjects": [{"kind": "Group", "name": "scalers"}],
    },
]


def req(user, verb, resource, group="", sub="", ns="", name="", groups=(), path=None):
    return RequestAttributes(
        user=user,
        groups=list(groups),
        verb=verb,
        api_group=group,
        resource=resource,
        subresource=sub,
        namespace=ns,
        name=name,
        non_resource_path=path,
    )


MATRIX = [
    (req("admin", "delete", "deviceclasses", "resource.k8s.io", name="x"), True),
    (req("admin", "get", "", path="/anything"), True),
    (req("someone", "create", "pods", groups=["system:masters"], ns="x"), True),
    (req("viewer", "list", "pods", ns="default"), True),
    (req("viewer", "get", "resourceslices", "resource.k8s.io"), True),
    (req("viewer", "create", "pods", ns="default"), False),
    (req("viewer", "create", "pods", sub="eviction", ns="default", name="p"), False),
    (req("viewer", "get", "pods", sub="log", ns="default", name="p"), False),
    (req("viewer", "list", "resourceclaims", "resource.k8s.io", ns="default"), False),
    (req("viewer", "list", "pods", "batch", ns="default"), False),
    (req("carol", "watch", "daemonsets", "apps", ns="x", groups=["viewers"]), True),
    (req("ops", "create", "pods", sub="eviction", ns="team-a", name="p"), True),
    (req("ops", "create", "pods", sub="eviction", ns="team-b", name="p"), False),
    (req("ops", "create", "pods", ns="team-a"), False),
    (req("noevict", "create", "pods", sub="eviction", ns="default", name="p"), False),
    (req("noevict", "delete", "pods", ns="default", name="p"), True),
    (req("noevict", "patch", "nodes", name="node-1"), True),
    (req("noevict", "patch", "nodes", name="node-2"), False),
    (req("noevict", "list", "nodes"), False),
    (req("system:serviceaccount:team-a:dragoman", "get", "configmaps", ns="team-a", name="lock"), True),
    (req("system:serviceaccount:team-a:dragoman", "get", "configmaps", ns="team-a", name="other"), False),
    (req("system:serviceaccount:team-a:dragoman", "list", "configmaps", ns="team-a"), False),
    (req("system:serviceaccount:team-b:dragoman", "get", "configmaps", ns="team-a", name="lock"), False),
    (req("bob", "update", "deployments", "apps", sub="scale", ns="team-a", name="d", groups=["scalers"]), True),
    (req("bob", "update", "deployments", "apps", ns="team-a", name="d", groups=["scalers"]), False),
    (req("bob", "update", "deployments", "apps", sub="scale", ns="team-b", name="d", groups=["scalers"]), False),
    (req("system:serviceaccount:mon:prom", "get", "", path="/metrics"), True),
    (req("system:serviceaccount:mon:prom", "get", "", path="/logs/kubelet"), True),
    (req("system:serviceaccount:mon:prom", "get", "", path="/debug"), False),
    (req("system:serviceaccount:mon:prom", "post", "", path="/metrics"), False),
    # Bootstrap policy: any authenticated user may discover and review itself.
    (req("nobody", "get", "", path="/apis/resource.k8s.io/v1"), True),
    (req("nobody", "create", "selfsubjectaccessreviews", "authorization.k8s.io"), True),
    (req("nobody", "get", "pods", ns="default", name="p"), False),
    (req("system:anonymous", "get", "", path="/version", groups=["system:unauthenticated"]), True),
    (req("system:anonymous", "get", "", path="/api", groups=["system:unauthenticated"]), False),
]


@pytest.mark.parametrize(
    "attrs, allowed",
    MATRIX,
    ids=[
        f"{a.user}-{a.verb}-{a.resource or a.non_resource_path}-{a.subresource}-{a.name}-{i}"
        for i, (a, _) in enumerate(MATRIX)
    ],
)
def test_allow_deny_matrix(attrs, allowed):
    ok, reason = authorize(attrs, ROLES, CLUSTER_ROLES, RBS, CRBS)
    assert ok is allowed
    assert (reason != "") is allowed


def test_reasons_name_the_binding():
    _, reason = authorize(
        req("ops", "create", "pods", sub="eviction", ns="team-a", name="p"), ROLES, CLUSTER_ROLES, RBS, CRBS
    )
    assert reason == 'RBAC: allowed by RoleBinding "evict/team-a" of Role "evictor" to User "ops"'
    _, reason = authorize(req("admin", "get", "pods", ns="x"), ROLES, CLUSTER_ROLES, RBS, CRBS)
    assert reason == 'RBAC: allowed by ClusterRoleBinding "admin" of ClusterRole "cluster-admin" to User "admin"'


def test_without_bootstrap_discovery_is_denied():
    ok, _ = authorize(req("nobody", "get", "", path="/api"), [], [], [], [], include_bootstrap=False)
    assert not ok


def test_forbidden_messages():
    attrs = req("viewer", "create", "pods", sub="eviction", ns="default", name="x")
    assert forbidden_message(attrs) == (
        'pods "x" is forbidden: User "viewer" cannot create resource "pods/eviction" in API group "" in '
        'the namespace "default"'
    )
    cluster = req("viewer", "list", "deviceclasses", "resource.k8s.io")
    assert forbidden_message(cluster) == (
        'deviceclasses.resource.k8s.io is forbidden: User "viewer" cannot list resource "deviceclasses" in '
        'API group "resource.k8s.io" at the cluster scope'
    )
    assert (
        forbidden_message(req("viewer", "get", "", path="/metrics"))
        == 'forbidden: User "viewer" cannot get path "/metrics"'
    )
    body = forbidden_status(attrs)
    assert body["code"] == 403 and body["reason"] == "Forbidden" and body["details"] == {"name": "x", "kind": "pods"}


def test_attributes_from_review():
    review = {
        "spec": {
            "resourceAttributes": {
                "namespace": "default",
                "verb": "create",
                "resource": "pods",
                "subresource": "eviction",
            }
        }
    }
    attrs = attributes_from_review(review, "viewer", ["g"])
    assert (attrs.verb, attrs.resource, attrs.subresource, attrs.namespace, attrs.is_resource_request) == (
        "create",
        "pods",
        "eviction",
        "default",
        True,
    )
    attrs = attributes_from_review({"spec": {"nonResourceAttributes": {"path": "/metrics", "verb": "get"}}}, "u", [])
    assert attrs.non_resource_path == "/metrics" and not attrs.is_resource_request
