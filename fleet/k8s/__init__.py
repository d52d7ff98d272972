"""The kernel: the Kubernetes rules the client and the simulator share, in one place so the two cannot disagree.

One submodule per rule; every name is importable from `dragoman.fleet.k8s` too. sim/ imports these; fleet/ and
actions/ read them. Pure functions over raw objects.

- objects.py: the (namespace, name) key of every object
- registry.py: every kind's group, version, plural, scope and paths
- tolerations.py: taints and tolerations, the DaemonSet controller's tolerations
- labels.py: label requirements and label selectors (metav1.LabelSelector), int64 parsing as the API server does
- selectors.py: label and field selector strings, parsed as the API server parses them
- nodeaffinity.py: nodeSelector and required node affinity
- names.py: name formats (DNS labels and subdomains, label keys and values)
- quantity.py: resource.Quantity
- podresources.py: what a pod requests (sidecars, init containers, pod-level resources, overhead)
- extended.py: extended-resource names (native, extended, a DeviceClass's implicit name)
- podclaims.py: which ResourceClaim a pod's claim is (resourceclaim.Name)
- slices.py: the newest ResourceSlice generation of a pool and whether it is complete; a device attribute's value
- celenv.py: which CEL environment applies where (imports the CEL engine: import it by its module)
- allocator.py: the DRA structured allocator
"""

from __future__ import annotations

from dragoman.fleet.k8s.extended import DEVICECLASS_PREFIX
from dragoman.fleet.k8s.labels import match_label_selector, match_requirement, parse_int64, requirement_error
from dragoman.fleet.k8s.names import (
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    mask_trailing_dash,
    regex_error,
)
from dragoman.fleet.k8s.nodeaffinity import (
    affinity_node_names,
    compile_node_filter,
    field_requirement_error,
    match_node_selector,
    match_node_selector_term,
    node_identity,
    node_selector_matches,
    pod_matches_node,
    required_node_affinity,
)
from dragoman.fleet.k8s.objects import Key, key_of
from dragoman.fleet.k8s.tolerations import (
    DAEMONSET_TOLERATIONS,
    DO_NOT_SCHEDULE,
    UNSCHEDULABLE_TAINT,
    first_untolerated_taint,
    taint_text,
    tolerates,
    tolerations_tolerate,
    untolerated_taints,
)

__all__ = [
    "affinity_node_names",
    "DAEMONSET_TOLERATIONS",
    "DEVICECLASS_PREFIX",
    "DO_NOT_SCHEDULE",
    "UNSCHEDULABLE_TAINT",
    "Key",
    "compile_node_filter",
    "field_requirement_error",
    "first_untolerated_taint",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_value",
    "is_qualified_name",
    "key_of",
    "mask_trailing_dash",
    "match_label_selector",
    "match_node_selector",
    "match_node_selector_term",
    "match_requirement",
    "node_identity",
    "node_selector_matches",
    "parse_int64",
    "pod_matches_node",
    "regex_error",
    "required_node_affinity",
    "requirement_error",
    "taint_text",
    "tolerates",
    "tolerations_tolerate",
    "untolerated_taints",
]
