"""The resource registry (fleet/k8s/registry.py): where each kind lives, as kube-apiserver v1.37.2 serves it, and the
tables derived from it agreeing with it (the client's store, the actions' writes, the simulator's discovery,
OpenAPI documents and scope check), so a kind added or moved in one place cannot be missed in another."""

from __future__ import annotations

import pytest
from dragoman.fleet.k8s import registry
from dragoman.fleet.store import KINDS

# (kind, namespace, name, path) — facts of the Kubernetes API.
PATHS = [
    ("Node", None, "n1", "/api/v1/nodes/n1"),
    ("Node", "ignored", None, "/api/v1/nodes"),  # cluster-scoped: no namespace segment
    ("Pod", "ml", "p", "/api/v1/namespaces/ml/pods/p"),
    ("Pod", None, None, "/api/v1/pods"),
    ("DaemonSet", "kube-system", "d", "/apis/apps/v1/namespaces/kube-system/daemonsets/d"),
    ("Lease", "dragoman", "l", "/apis/coordination.k8s.io/v1/namespaces/dragoman/leases/l"),
    ("DeviceClass", None, "gpu.nvidia.com", "/apis/resource.k8s.io/v1/deviceclasses/gpu.nvidia.com"),
    ("ResourceSlice", None, None, "/apis/resource.k8s.io/v1/resourceslices"),
    ("ResourceClaim", "ml", None, "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims"),
    ("DeviceTaintRule", None, "t", "/apis/resource.k8s.io/v1/devicetaintrules/t"),
    ("Event", "ml", None, "/api/v1/namespaces/ml/events"),  # the core Event, not events.k8s.io's view
]


@pytest.mark.parametrize(("kind", "ns", "name", "path"), PATHS)
def test_paths(kind: str, ns: str | None, name: str | None, path: str) -> None:
    assert registry.of_kind(kind).path(ns, name) == path


def test_scope_of_the_kinds_dragoman_reads() -> None:
    cluster = {"Node", "Namespace", "DeviceClass", "ResourceSlice", "DeviceTaintRule"}
    for kind, info in KINDS.items():
        assert info.namespaced is (kind not in cluster), kind
        rt = registry.of_kind(kind)
        assert (info.group, info.version, info.plural) == (rt.group, rt.version, rt.plural)
        assert info.path("ns", "x") == rt.path("ns", "x")


def test_the_simulators_scope_check_and_documents_follow_the_registry() -> None:
    from dragoman.sim.api import openapi
    from dragoman.sim.api.validation import meta

    assert meta.CLUSTER_SCOPED == {r.plural for r in registry.RESOURCES if not r.namespaced}
    documented = {(g, v, k): (p, ns) for (g, v), rows in openapi.RESOURCES.items() for k, p, ns, *_ in rows}
    for r in registry.RESOURCES:
        if not r.custom:
            assert documented[(r.group, r.version, r.kind)] == (r.plural, r.namespaced), r.kind


def test_namespaces_have_no_deletecollection() -> None:
    # kube-apiserver v1.37.2's discovery: namespaces are deleted one by one (the registry once said otherwise).
    assert "deletecollection" not in registry.of_kind("Namespace").verbs
    assert "deletecollection" in registry.of_kind("Pod").verbs


def test_a_kind_nobody_serves_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        registry.of_kind("Secretive")
