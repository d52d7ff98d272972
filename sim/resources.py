"""The kinds the simulated API server serves are the registry's (fleet/k8s/registry.py); what only the simulator
needs (which DELETEs answer the object, which kinds are verbs) and its lookups live here."""

from __future__ import annotations

from dragoman.fleet.k8s.registry import RESOURCES, ResourceType

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
