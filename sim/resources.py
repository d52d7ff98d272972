"""The kinds the simulated API server serves: group, version, plural, scope, short names, subresources, field
selectors."""

from __future__ import annotations

import dataclasses

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
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{prefix}/namespaces/{namespace}/{self.plural}"
        return f"{prefix}/{self.plural}"


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

# Kinds whose registry sets ReturnDeletedObject (k8s.io/kubernetes pkg/registry/*/storage): a DELETE that removes
# the object answers the object itself; other kinds answer a Status of success (apiserver registry/store.go).
RETURN_DELETED_OBJECT = frozenset(
    {
        "pods",
        "namespaces",
        "services",
        "serviceaccounts",
        "resourcequotas",
        "deviceclasses.resource.k8s.io",
        "resourceslices.resource.k8s.io",
        "resourceclaims.resource.k8s.io",
        "resourceclaimtemplates.resource.k8s.io",
    }
)

# Kinds that exist only as a verb on something else: never stored.
VIRTUAL = frozenset(
    {
        "selfsubjectaccessreviews.authorization.k8s.io",
        "selfsubjectrulesreviews.authorization.k8s.io",
        "selfsubjectreviews.authentication.k8s.io",
        "tokenreviews.authentication.k8s.io",
    }
)

BY_KEY: dict[str, ResourceType] = {r.key: r for r in RESOURCES}
BY_KIND: dict[tuple[str, str], ResourceType] = {(r.api_version, r.kind): r for r in RESOURCES}
BY_GV_PLURAL: dict[tuple[str, str, str], ResourceType] = {(r.group, r.version, r.plural): r for r in RESOURCES}


def group_versions() -> list[tuple[str, str]]:
    """Every (group, version) served, core first, in a stable order."""
    seen: list[tuple[str, str]] = []
    for r in RESOURCES:
        gv = (r.group, r.version)
        if gv not in seen:
            seen.append(gv)
    return seen


def lookup(resource: str) -> ResourceType:
    """A ResourceType from a store key, a plural, a singular, a short name or a kind; KeyError when unknown."""
    if resource in BY_KEY:
        return BY_KEY[resource]
    low = resource.lower()
    for r in RESOURCES:
        if low in (r.plural, r.singular, r.kind.lower()) or low in r.short_names:
            return r
    raise KeyError(resource)


def for_object(obj: dict) -> ResourceType:
    """The ResourceType of an object from its apiVersion and kind; KeyError when not served."""
    return BY_KIND[(obj.get("apiVersion", ""), obj.get("kind", ""))]
