"""Which ResourceClaim a pod's claim is (k8s.io/dynamic-resource-allocation@v0.37.2 resourceclaim.Name).

A pod claim names its ResourceClaim (`resourceClaimName`) or a template (`resourceClaimTemplateName`); the claim made
from a template is found through the pod's `status.resourceClaimStatuses` entry of the same name, whose
`resourceClaimName` is null when the claim was intentionally not created. The model, the diagnosis, and the
simulator's scheduler, admission and kubelet all resolve a pod's claims here.
"""

from __future__ import annotations


def claim_name(pod: dict, pod_claim: dict) -> tuple[str | None, bool, str | None]:
    """resourceclaim.Name: (the claim's name or None, whether its owner must be checked (IsForPod), an error)."""
    if pod_claim.get("resourceClaimName"):
        return pod_claim["resourceClaimName"], False, None
    meta = pod.get("metadata") or {}
    if pod_claim.get("resourceClaimTemplateName"):
        for st in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
            if st.get("name") == pod_claim.get("name"):
                return st.get("resourceClaimName"), True, None
        return None, False, f'pod "{meta.get("namespace")}/{meta.get("name")}": ResourceClaim not created yet'
    return (
        None,
        False,
        f'pod "{meta.get("namespace")}/{meta.get("name")}", spec.resourceClaim "{pod_claim.get("name")}": '
        "resource claims are not supported by the API server",
    )


def pod_claim_names(pod: dict) -> list[tuple[str, str | None]]:
    """(pod claim name, ResourceClaim name) for each entry of the pod's spec.resourceClaims, in order; the name is
    None while a template's claim is not made yet, when it was intentionally not made, or when the entry names neither
    a claim nor a template."""
    return [(pc.get("name", ""), claim_name(pod, pc)[0]) for pc in (pod.get("spec") or {}).get("resourceClaims") or ()]
