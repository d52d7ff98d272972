"""The resource registry: every kind dragoman reads or its simulator serves, with its group, version, plural, scope
and the paths that follow from them (as k9s derives everything from one registry). The kinds are kube-apiserver
v1.37.2's (plus one CRD the simulator serves); short names, subresources, verbs, field-selector labels and whether
spec changes bump metadata.generation are its answers too.

The client's store (fleet/store.py KINDS), the writes of actions/, the simulator's discovery, OpenAPI documents
and scope checks (sim/resources.py, sim/api/openapi.py, sim/api/validation/meta.py) all read this table.
"""

from __future__ import annotations

import dataclasses


def api_path(group: str, version: str, plural: str, namespace: str | None = None, name: str | None = None) -> str:
    """`/api/v1/namespaces/ns/pods/name`, `/apis/resource.k8s.io/v1/resourceslices`: the REST path of a collection
    or object (the namespace segment only when given)."""
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    if namespace:
        path += f"/namespaces/{namespace}"
    path += f"/{plural}"
    return f"{path}/{name}" if name else path


STANDARD_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclasses.dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    verbs: tuple[str, ...] = STANDARD_VERBS
    categories: tuple[str, ...] = ()
    # Field selector labels beyond metadata.name / metadata.namespace.
    fields: tuple[str, ...] = ()
    # Kinds whose spec changes bump metadata.generation.
    has_generation: bool = True
    # A kind a CustomResourceDefinition serves (the simulator also serves its CRD; strategic merge patch is 415).
    custom: bool = False
    # The store key of the kind whose objects this resource serves in another shape (events.k8s.io/v1 Events are
    # the core Events, converted: sim/api/events.py); "" for a kind stored as itself.
    storage: str = ""

    @property
    def key(self) -> str:
        """The store key: the plural, qualified by the group outside the core group ("daemonsets.apps")."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    def field_labels(self) -> tuple[str, ...]:
        base = ("metadata.name", "metadata.namespace") if self.namespaced else ("metadata.name",)
        return base + self.fields

    def collection_path(self, namespace: str | None = None) -> str:
        return api_path(self.group, self.version, self.plural, namespace if self.namespaced else None)

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The collection (in a namespace, for a namespaced kind) or one object by name."""
        return api_path(self.group, self.version, self.plural, namespace if self.namespaced else None, name)


_POD_FIELDS = (
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
)
_EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)
# The events.k8s.io/v1 labels (pkg/apis/events/v1 AddFieldLabelConversionsForEvent; sim/api/events.py maps them).
_EVENTS_V1_FIELDS = (
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reason",
    "reportingController",
    "type",
)
_WORKLOAD = ("all",)

RESOURCES: tuple[ResourceType, ...] = (
    ResourceType(
        "",
        "v1",
        "Namespace",
        "namespaces",
        "namespace",
        False,
        ("ns",),
        ("status", "finalize"),
        # kube-apiserver serves no deletecollection of namespaces.
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
        fields=("status.phase",),
        has_generation=False,
    ),
    ResourceType(
        "",
        "v1",
        "Node",
        "nodes",
        "node",
        False,
        ("no",),
        ("status",),
        fields=("spec.unschedulable",),
        has_generation=False,
    ),
    ResourceType(
        "",
        "v1",
        "Pod",
        "pods",
        "pod",
        True,
        ("po",),
        ("binding", "eviction", "log", "status"),
        categories=_WORKLOAD,
        fields=_POD_FIELDS,
    ),
    ResourceType("", "v1", "Event", "events", "event", True, ("ev",), fields=_EVENT_FIELDS, has_generation=False),
    ResourceType("", "v1", "ConfigMap", "configmaps", "configmap", True, ("cm",), has_generation=False),
    ResourceType(
        "",
        "v1",
        "ResourceQuota",
        "resourcequotas",
        "resourcequota",
        True,
        ("quota",),
        ("status",),
        has_generation=False,
    ),
    ResourceType(
        "", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", True, ("sa",), ("token",), has_generation=False
    ),
    # helm's default release storage. dragoman never reads them (fleet/snapshot.py lists only what it needs).
    ResourceType("", "v1", "Secret", "secrets", "secret", True, fields=("type",), has_generation=False),
    # `kubectl cluster-info` reads the `kubernetes` Service in `default` (made at start, as the real server does).
    ResourceType(
        "",
        "v1",
        "Service",
        "services",
        "service",
        True,
        ("svc",),
        ("status",),
        categories=_WORKLOAD,
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
        has_generation=False,
    ),
    ResourceType(
        "apps", "v1", "DaemonSet", "daemonsets", "daemonset", True, ("ds",), ("status",), categories=_WORKLOAD
    ),
    ResourceType(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        "deployment",
        True,
        ("deploy",),
        ("scale", "status"),
        categories=_WORKLOAD,
    ),
    ResourceType(
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        "replicaset",
        True,
        ("rs",),
        ("scale", "status"),
        categories=_WORKLOAD,
    ),
    ResourceType(
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        "statefulset",
        True,
        ("sts",),
        ("scale", "status"),
        categories=_WORKLOAD,
    ),
    ResourceType(
        "batch", "v1", "Job", "jobs", "job", True, (), ("status",), categories=_WORKLOAD, fields=("status.successful",)
    ),
    ResourceType("batch", "v1", "CronJob", "cronjobs", "cronjob", True, ("cj",), ("status",), categories=_WORKLOAD),
    ResourceType(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        True,
        ("pdb",),
        ("status",),
    ),
    ResourceType("coordination.k8s.io", "v1", "Lease", "leases", "lease", True, has_generation=False),
    ResourceType("rbac.authorization.k8s.io", "v1", "Role", "roles", "role", True, has_generation=False),
    ResourceType(
        "rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", "clusterrole", False, has_generation=False
    ),
    ResourceType(
        "rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", "rolebinding", True, has_generation=False
    ),
    ResourceType(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        "clusterrolebinding",
        False,
        has_generation=False,
    ),
    ResourceType(
        "authorization.k8s.io",
        "v1",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        "selfsubjectaccessreview",
        False,
        verbs=("create",),
        has_generation=False,
    ),
    ResourceType(
        "authorization.k8s.io",
        "v1",
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
        "selfsubjectrulesreview",
        False,
        verbs=("create",),
        has_generation=False,
    ),
    ResourceType(
        "authentication.k8s.io",
        "v1",
        "SelfSubjectReview",
        "selfsubjectreviews",
        "selfsubjectreview",
        False,
        verbs=("create",),
        has_generation=False,
    ),
    ResourceType(
        "authentication.k8s.io",
        "v1",
        "TokenReview",
        "tokenreviews",
        "tokenreview",
        False,
        verbs=("create",),
        has_generation=False,
    ),
    ResourceType(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        "customresourcedefinition",
        False,
        ("crd", "crds"),
        ("status",),
        categories=("api-extensions",),
    ),
    # The same objects as the core Events, in the events.k8s.io/v1 shape (kube-apiserver serves both from one storage).
    ResourceType(
        "events.k8s.io",
        "v1",
        "Event",
        "events",
        "event",
        True,
        ("ev",),
        fields=_EVENTS_V1_FIELDS,
        has_generation=False,
        storage="events",
    ),
    ResourceType("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", "deviceclass", False),
    ResourceType(
        "resource.k8s.io",
        "v1",
        "ResourceSlice",
        "resourceslices",
        "resourceslice",
        False,
        fields=("spec.nodeName", "spec.driver", "spec.pool.name"),
    ),
    # Claims and templates keep no metadata.generation (their registry strategies never set one).
    ResourceType(
        "resource.k8s.io",
        "v1",
        "ResourceClaim",
        "resourceclaims",
        "resourceclaim",
        True,
        (),
        ("status",),
        has_generation=False,
    ),
    ResourceType(
        "resource.k8s.io",
        "v1",
        "ResourceClaimTemplate",
        "resourceclaimtemplates",
        "resourceclaimtemplate",
        True,
        has_generation=False,
    ),
    ResourceType(
        "resource.k8s.io", "v1", "DeviceTaintRule", "devicetaintrules", "devicetaintrule", False, (), ("status",)
    ),
    # The Prometheus Operator's CRD, as clusters with kube-prometheus serve it: alert and recording rules that may read
    # node allocatable nvidia.com/gpu (the accounting view names them). No 1.37 schema: stored as sent.
    ResourceType(
        "monitoring.coreos.com",
        "v1",
        "PrometheusRule",
        "prometheusrules",
        "prometheusrule",
        True,
        ("promrule",),
        custom=True,
    ),
)

BY_API_KIND: dict[tuple[str, str], ResourceType] = {(r.api_version, r.kind): r for r in RESOURCES}


def of_kind(kind: str, api_version: str | None = None) -> ResourceType:
    """The resource of a kind (the first served version unless `api_version` says); KeyError when unknown."""
    if api_version is not None:
        return BY_API_KIND[(api_version, kind)]
    for r in RESOURCES:
        if r.kind == kind and not r.storage:
            return r
    raise KeyError(kind)


def cluster_scoped() -> frozenset[str]:
    """The plurals of the cluster-scoped kinds (metadata.namespace is not allowed on them)."""
    return frozenset(r.plural for r in RESOURCES if not r.namespaced)
