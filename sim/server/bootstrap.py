"""What every simulated cluster holds before the scenario loads: namespaces, bootstrap RBAC, the kubernetes Service and
a CRD per custom kind."""

from __future__ import annotations

from dragoman.fleet.k8s import registry
from dragoman.fleet.k8s.registry import ResourceType
from dragoman.sim.store import clone

BOOTSTRAP_RBAC: list[dict] = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "cluster-admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
        "rules": [
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
            {"nonResourceURLs": ["*"], "verbs": ["*"]},
        ],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "view", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "cluster-admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}],
    },
]

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

# The Service the real API server keeps for itself in `default` (`kubectl cluster-info` and in-cluster clients).
KUBERNETES_SERVICE: dict = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {
        "name": "kubernetes",
        "namespace": "default",
        "labels": {"component": "apiserver", "provider": "kubernetes"},
    },
    "spec": {
        "clusterIP": "10.96.0.1",
        "clusterIPs": ["10.96.0.1"],
        "internalTrafficPolicy": "Cluster",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
        "sessionAffinity": "None",
        "type": "ClusterIP",
    },
    "status": {"loadBalancer": {}},
}


def crd_for(rt: ResourceType) -> dict:
    """The CustomResourceDefinition a cluster serving the custom kind `rt` holds, established, schema-less (stored as
    sent, as the simulator does)."""
    names = {"plural": rt.plural, "singular": rt.singular, "kind": rt.kind, "listKind": rt.list_kind}
    if rt.short_names:
        names["shortNames"] = list(rt.short_names)
    if rt.categories:
        names["categories"] = list(rt.categories)

    def cond(t: str, reason: str, msg: str) -> dict:
        return {"type": t, "status": "True", "reason": reason, "message": msg, "lastTransitionTime": None}

    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{rt.plural}.{rt.group}"},
        "spec": {
            "group": rt.group,
            "names": names,
            "scope": "Namespaced" if rt.namespaced else "Cluster",
            "versions": [
                {
                    "name": rt.version,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
            "conversion": {"strategy": "None"},
        },
        "status": {
            "acceptedNames": names,
            "storedVersions": [rt.version],
            "conditions": [
                cond("NamesAccepted", "NoConflicts", "no conflicts found"),
                cond("Established", "InitialNamesAccepted", "the initial names have been accepted"),
            ],
        },
    }


def bootstrap_objects() -> list[dict]:
    out: list[dict] = [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": n, "labels": {"kubernetes.io/metadata.name": n}},
        }
        for n in DEFAULT_NAMESPACES
    ]
    out.extend(clone(BOOTSTRAP_RBAC))
    out.append(clone(KUBERNETES_SERVICE))
    out.extend(crd_for(rt) for rt in registry.RESOURCES if rt.custom)
    return out
