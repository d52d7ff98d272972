"""Which ResourceClaim a pod's claim is: fleet/k8s/podclaims.py against resourceclaim.Name's cases
(k8s.io/dynamic-resource-allocation@v0.37.2). The model, the diagnosis and the simulator's scheduler, admission and
kubelet resolved it in eight copies before; some looked in the status for an entry that names no template."""

from __future__ import annotations

import pytest
from dragoman.fleet.k8s.podclaims import claim_name, pod_claim_names


def _pod(claims: list[dict], statuses: list[dict] | None = None) -> dict:
    pod: dict = {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"resourceClaims": claims}}
    if statuses is not None:
        pod["status"] = {"resourceClaimStatuses": statuses}
    return pod


CASES = [
    ("a claim by name", {"name": "a", "resourceClaimName": "c1"}, None, ("c1", False, None)),
    (
        "a template's claim, made",
        {"name": "a", "resourceClaimTemplateName": "t"},
        [{"name": "a", "resourceClaimName": "p-a-x7k2"}],
        ("p-a-x7k2", True, None),
    ),
    (
        "a template's claim, intentionally not made",
        {"name": "a", "resourceClaimTemplateName": "t"},
        [{"name": "a"}],
        (None, True, None),
    ),
    (
        "a template's claim, not made yet",
        {"name": "a", "resourceClaimTemplateName": "t"},
        [{"name": "b", "resourceClaimName": "other"}],
        (None, False, 'pod "ns/p": ResourceClaim not created yet'),
    ),
    (
        "neither a claim nor a template: the status is not read",
        {"name": "a"},
        [{"name": "a", "resourceClaimName": "p-a-x7k2"}],
        (None, False, 'pod "ns/p", spec.resourceClaim "a": resource claims are not supported by the API server'),
    ),
]


@pytest.mark.parametrize(("what", "pod_claim", "statuses", "want"), CASES, ids=[c[0] for c in CASES])
def test_claim_name(what: str, pod_claim: dict, statuses: list[dict] | None, want: tuple) -> None:
    assert claim_name(_pod([pod_claim], statuses), pod_claim) == want


def test_pod_claim_names_in_spec_order() -> None:
    claims = [
        {"name": "t", "resourceClaimTemplateName": "tmpl"},
        {"name": "c", "resourceClaimName": "shared"},
        {"name": "odd"},
    ]
    statuses = [{"name": "t", "resourceClaimName": "p-t-1"}, {"name": "odd", "resourceClaimName": "p-odd-1"}]
    assert pod_claim_names(_pod(claims, statuses)) == [("t", "p-t-1"), ("c", "shared"), ("odd", None)]
    assert pod_claim_names({"metadata": {}}) == []
