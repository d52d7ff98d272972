"""The differential corpus: what both control planes are asked, in order (sim/controlplane/differential.py runs it).

Requests work in their own namespace (`dragoman-diff`) and on objects they create, so the answers do not depend on
the fleet's history (the embedded demo loads a settled picture; the real one rebuilds it through its controllers).
Reads of the fleet itself ask for what both sides hold alike: a node by name, the DeviceClasses, the slices.
"""

from __future__ import annotations

import json
from typing import Any

from dragoman.sim.controlplane.differential import Behaviour, KubectlCase, Request, Side
from dragoman.sim.controlplane.differential_clients import client_requests

NS = "dragoman-diff"
NODE = "gke-ml-prod-h100-dra-731a68f1-628r"  # a demo node both sides hold with the same labels and devices
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"
PARTIAL = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json"
APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSONPATCH = "application/json-patch+json"
PODS = f"/api/v1/namespaces/{NS}/pods"
CLAIMS = f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims"
CLASSES = "/apis/resource.k8s.io/v1/deviceclasses"
EVENTS_V1 = f"/apis/events.k8s.io/v1/namespaces/{NS}/events"
# The corpus's events.k8s.io Event (the controllers also write Events in its namespace, at times that differ by side).
MINE = {"dragoman.io/differential": "event"}
MINE_SELECTOR = "labelSelector=dragoman.io%2Fdifferential%3Devent"
# A pod no node selects: it stays Pending on both sides whatever the fleet holds.
NOWHERE = {"dragoman.io/differential": "nowhere"}


def pod(name: str, **spec: Any) -> dict:
    base = {
        "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
        "nodeSelector": dict(NOWHERE),
    }
    base.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": name}},
        "spec": base,
    }


def deployment(name: str, replicas: int, **pod_spec: Any) -> dict:
    spec = {
        "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
        "nodeSelector": dict(NOWHERE),
    }
    spec.update(pod_spec)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


def claim(name: str, cls: str = "gpu.nvidia.com", count: int = 1) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": cls, "count": count}}]}},
    }


def device_class(name: str, expression: str = 'device.driver == "gpu.nvidia.com"', **spec: Any) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": expression}}], **spec},
    }


def R(name: str, method: str, path: str, body: Any = None, **kw: Any) -> Request:
    group = kw.pop("group", "api/" + name.split(":", 1)[0])
    return Request(name, method, path, body, group=group, **kw)


def api_requests() -> list[Request]:
    ns = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": NS, "labels": {"dragoman.io/differential": "yes"}},
    }
    p1 = pod("p1")
    bad_pod = pod("bad")
    bad_pod["spec"]["containers"] = []
    unknown = pod("unknown-field")
    unknown["spec"]["nonsense"] = True
    unscheduled = pod("status-put", schedulerName="dragoman-none")
    claim_pod = pod(
        "claimer",
        resourceClaims=[{"name": "gpu", "resourceClaimName": "c1"}],
    )
    claim_pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "q", "namespace": NS},
        "spec": {"hard": {"pods": "20", "count/resourceclaims.resource.k8s.io": "10", "requests.nvidia.com/gpu": "4"}},
    }
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb", "namespace": NS},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": "ds"}},
            "template": {
                "metadata": {"labels": {"app": "ds"}},
                "spec": {"nodeSelector": dict(NOWHERE), "containers": [{"name": "c", "image": "busybox:1.36"}]},
            },
        },
    }
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "p1.diff", "namespace": NS},
        "involvedObject": {"kind": "Pod", "name": "p1", "namespace": NS, "apiVersion": "v1"},
        "reason": "Testing",
        "message": "written by the differential harness",
        "type": "Normal",
        "source": {"component": "dragoman-differential"},
    }
    # An Event written through events.k8s.io/v1 (what client-go's events/v1 recorder sends): the stricter strategy
    # of that API requires eventTime, reportingController and reportingInstance, and refuses the deprecated fields.
    events_v1 = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "p1.v1", "namespace": NS, "labels": dict(MINE)},
        "eventTime": "2026-01-02T03:04:05.123456Z",
        "reportingController": "dragoman.io/differential",
        "reportingInstance": "differential-1",
        "action": "Testing",
        "reason": "Tested",
        "regarding": {"kind": "Pod", "name": "p1", "namespace": NS, "apiVersion": "v1"},
        "related": {"kind": "Node", "name": NODE, "apiVersion": "v1"},
        "note": "written through events.k8s.io/v1",
        "type": "Warning",
    }
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "diff-slice"},
        "spec": {
            "driver": "diff.example.com",
            "pool": {"name": "diff", "generation": 1, "resourceSliceCount": 1},
            "nodeName": NODE,
            "devices": [
                {"name": "d0", "attributes": {"model": {"string": "x"}}, "capacity": {"memory": {"value": "1Gi"}}}
            ],
        },
    }
    container_status = {
        "name": "main",
        "image": "busybox:1.36",
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "state": {"waiting": {"reason": "ContainerCreating"}},
    }

    def status_with(name: str) -> dict:
        return {
            "status": {
                "containerStatuses": [
                    {**container_status, "allocatedResourcesStatus": [{"name": name, "resources": []}]}
                ]
            }
        }

    return [
        # --- discovery and the fleet as both hold it
        R("discovery: version", "GET", "/version", compare_body=False),
        R("discovery: resource.k8s.io/v1", "GET", "/apis/resource.k8s.io/v1"),
        R("discovery: policy/v1", "GET", "/apis/policy/v1"),
        R("nodes: get", "GET", f"/api/v1/nodes/{NODE}", capture={"node_rv": "metadata.resourceVersion"}, fleet=True),
        R("nodes: get as Table", "GET", f"/api/v1/nodes/{NODE}", accept=TABLE, fleet=True),
        R("nodes: get as PartialObjectMetadata", "GET", f"/api/v1/nodes/{NODE}", accept=PARTIAL, fleet=True),
        R("nodes: list page of 2", "GET", "/api/v1/nodes?limit=2", capture={"cont": "metadata.continue"}, fleet=True),
        R("nodes: next page", "GET", "/api/v1/nodes?limit=2&continue={cont}", fleet=True),
        R("nodes: bad continue", "GET", "/api/v1/nodes?limit=2&continue=not-a-token"),
        R("nodes: list as PartialObjectMetadataList", "GET", "/api/v1/nodes?limit=1", accept=PARTIAL_LIST, fleet=True),
        R("nodes: list as Table", "GET", "/api/v1/nodes?limit=1", accept=TABLE, fleet=True),
        R(
            "nodes: label selector",
            "GET",
            "/api/v1/nodes?labelSelector=cloud.google.com/gke-nodepool%3Dh100-dra&limit=1",
            fleet=True,
        ),
        R("nodes: bad label selector", "GET", "/api/v1/nodes?labelSelector=a%3D%3D%3Db"),
        R(
            "nodes: field selector metadata.name",
            "GET",
            f"/api/v1/nodes?fieldSelector=metadata.name%3D{NODE}",
            fleet=True,
        ),
        R("nodes: unknown field selector", "GET", "/api/v1/nodes?fieldSelector=spec.nonsense%3Dx"),
        R("nodes: status subresource", "GET", f"/api/v1/nodes/{NODE}/status", fleet=True),
        R("nodes: yaml", "GET", f"/api/v1/nodes/{NODE}", accept="application/yaml", fleet=True),
        R(
            "nodes: protobuf",
            "GET",
            f"/api/v1/nodes/{NODE}",
            accept="application/vnd.kubernetes.protobuf",
            compare_body=False,
        ),
        R("nodes: not acceptable", "GET", f"/api/v1/nodes/{NODE}", accept="text/html"),
        R("nodes: missing", "GET", "/api/v1/nodes/no-such-node"),
        R("rv: Exact without a version", "GET", "/api/v1/nodes?resourceVersionMatch=Exact"),
        R(
            "rv: NotOlderThan 0",
            "GET",
            "/api/v1/nodes?resourceVersion=0&resourceVersionMatch=NotOlderThan&limit=1",
            compare_body=False,
        ),
        R("rv: unknown match", "GET", "/api/v1/nodes?resourceVersion=1&resourceVersionMatch=Newest"),
        R("rv: not a number", "GET", "/api/v1/nodes?resourceVersion=abc&limit=1"),
        R("rv: compacted Exact", "GET", "/api/v1/nodes?resourceVersion=1&resourceVersionMatch=Exact&limit=1"),
        R(
            "rv: future NotOlderThan",
            "GET",
            "/api/v1/nodes?resourceVersion=999999999&resourceVersionMatch=NotOlderThan",
        ),
        R("rv: future get", "GET", f"/api/v1/nodes/{NODE}?resourceVersion=999999999"),
        R("rv: sendInitialEvents on a list", "GET", "/api/v1/nodes?sendInitialEvents=true"),
        R(
            "watch: sendInitialEvents without bookmarks",
            "GET",
            "/api/v1/nodes?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
            watch={"max_events": 1},
        ),
        R(
            "watch: compacted resourceVersion",
            "GET",
            "/api/v1/nodes?watch=1&resourceVersion=1&timeoutSeconds=2",
            watch={"max_events": 2},
        ),
        R(
            "watch: future resourceVersion",
            "GET",
            "/api/v1/nodes?watch=1&resourceVersion=999999999&timeoutSeconds=1",
            watch={"max_events": 2},
        ),
        R(
            "watch: unknown field selector",
            "GET",
            "/api/v1/pods?watch=1&fieldSelector=spec.nonsense%3Dx&timeoutSeconds=1",
            watch={"max_events": 2},
        ),
        R("classes: list", "GET", CLASSES, fleet=True),
        R("classes: get", "GET", f"{CLASSES}/gpu.nvidia.com", fleet=True),
        R(
            "slices: list for a node",
            "GET",
            f"/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3D{NODE}",
            fleet=True,
        ),
        R(
            "slices: unknown field selector",
            "GET",
            "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nonsense%3Dx",
        ),
        # --- a namespace of our own
        R("namespaces: create", "POST", "/api/v1/namespaces", ns),
        R("namespaces: create again", "POST", "/api/v1/namespaces", ns),
        # The name formats' words (apimachinery v0.37.2). Not compared here: a length error's limit ("no more than
        # 63 bytes"), which the harness's normalizer may take for a resourceVersion (test_api_validation has it).
        R("namespaces: a name with dots", "POST", "/api/v1/namespaces", {**ns, "metadata": {"name": "a.b"}}),
        R(
            "configmaps: an empty label key",
            "POST",
            f"/api/v1/namespaces/{NS}/configmaps",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "empty", "labels": {"": "v"}}},
        ),
        # TaintNodesByCondition admission: a Node is created with the not-ready NoSchedule taint (nothing lands on
        # it before the node lifecycle controller sees it Ready). No kubelet runs for this one: it goes at once.
        R(
            "nodes: create a node",
            "POST",
            "/api/v1/nodes",
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "differential-node", "labels": {"a": "b"}}},
        ),
        R("nodes: delete the created node", "DELETE", "/api/v1/nodes/differential-node"),
        R("namespaces: get", "GET", f"/api/v1/namespaces/{NS}"),
        R("namespaces: wrong kind in body", "POST", "/api/v1/namespaces", {**ns, "kind": "Pod"}),
        R("namespaces: name mismatch", "PUT", "/api/v1/namespaces/other", ns),
        # --- pods
        R("pods: list empty", "GET", PODS, capture={"rv0": "metadata.resourceVersion"}),
        R("pods: create", "POST", PODS, p1),
        R("pods: create dry run", "POST", PODS + "?dryRun=All", pod("dry")),
        R("pods: dry run left nothing", "GET", PODS + "/dry"),
        R(
            "pods: create generateName",
            "POST",
            PODS,
            {**pod("x"), "metadata": {"generateName": "gen-", "namespace": NS}},
            capture={"gen": "metadata.name"},
        ),
        # After both schedulers' first attempt at it (the embedded one is at once, the real one after its queue).
        R("pods: get generated", "GET", PODS + "/{gen}", settle=5.0),
        R("pods: create invalid", "POST", PODS, bad_pod),
        R("pods: create unknown field (warn)", "POST", PODS, unknown),
        R(
            "pods: create unknown field (strict)",
            "POST",
            PODS + "?fieldValidation=Strict",
            pod("strict") | {"bogus": 1},
        ),
        R(
            "pods: create in missing namespace",
            "POST",
            "/api/v1/namespaces/no-such-ns/pods",
            {**p1, "metadata": {"name": "p", "namespace": "no-such-ns"}},
        ),
        R("pods: namespace mismatch", "POST", PODS, {**p1, "metadata": {"name": "p", "namespace": "default"}}),
        R("pods: get", "GET", PODS + "/p1", capture={"p1_rv": "metadata.resourceVersion", "p1_uid": "metadata.uid"}),
        R("pods: list by label", "GET", PODS + "?labelSelector=app%3Dp1"),
        R("pods: list by field", "GET", PODS + "?fieldSelector=spec.nodeName%3D"),
        R("pods: list as Table", "GET", PODS, accept=TABLE),
        R("pods: merge patch", "PATCH", PODS + "/p1", {"metadata": {"labels": {"merged": "yes"}}}, content_type=MERGE),
        R(
            "pods: json patch",
            "PATCH",
            PODS + "/p1",
            [{"op": "add", "path": "/metadata/annotations", "value": {"a": "1"}}],
            content_type=JSONPATCH,
        ),
        R(
            "pods: json patch test fails",
            "PATCH",
            PODS + "/p1",
            [{"op": "test", "path": "/metadata/name", "value": "other"}],
            content_type=JSONPATCH,
        ),
        R(
            "pods: strategic patch",
            "PATCH",
            PODS + "/p1",
            {"spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]}},
            content_type=STRATEGIC,
        ),
        R(
            "pods: strategic patch of a forbidden field",
            "PATCH",
            PODS + "/p1",
            {"spec": {"containers": [{"name": "main", "command": ["true"]}]}},
            content_type=STRATEGIC,
        ),
        R(
            "pods: apply without fieldManager",
            "PATCH",
            PODS + "/p1",
            json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "labels": {"applied": "1"}}}),
            content_type=APPLY,
        ),
        R(
            "pods: apply",
            "PATCH",
            PODS + "/p1?fieldManager=diff-a",
            json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "labels": {"applied": "1"}}}),
            content_type=APPLY,
        ),
        R(
            "pods: apply conflict",
            "PATCH",
            PODS + "/p1?fieldManager=diff-b",
            json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "labels": {"applied": "2"}}}),
            content_type=APPLY,
        ),
        R(
            "pods: apply forced",
            "PATCH",
            PODS + "/p1?fieldManager=diff-b&force=true",
            json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "labels": {"applied": "2"}}}),
            content_type=APPLY,
        ),
        R("pods: unsupported patch type", "PATCH", PODS + "/p1", {"a": 1}, content_type="text/plain"),
        R(
            "pods: stale update",
            "PUT",
            PODS + "/p1",
            {**p1, "metadata": {**p1["metadata"], "resourceVersion": "{p1_rv}"}},
        ),
        R("pods: update without resourceVersion", "PUT", PODS + "/p1", p1),
        R(
            "pods: status patch",
            "PATCH",
            PODS + "/p1/status",
            {"status": {"conditions": [{"type": "Example", "status": "True"}]}},
            content_type=STRATEGIC,
        ),
        # A status write's metadata: pods/status takes labels and annotations from the request (its strategy resets
        # only the spec and the owner references) and backfills the QoS class. On a pod no scheduler takes, so no
        # controller writes its status back on either side.
        R("pods: create for a status update", "POST", PODS, unscheduled),
        R(
            "pods: status update with new labels and annotations",
            "PUT",
            PODS + "/status-put/status",
            {
                **unscheduled,
                "metadata": {
                    **unscheduled["metadata"],
                    "labels": {"app": "status-put", "by-status": "yes"},
                    "annotations": {"a": "b"},
                },
                "status": {"phase": "Pending", "conditions": [{"type": "Example", "status": "True"}]},
            },
        ),
        R("pods: delete after the status update", "DELETE", PODS + "/status-put"),
        # A pod no node holds has no kubelet to ask: kube-apiserver answers 204 with no body.
        R("pods: log of a pod no node holds", "GET", PODS + "/p1/log"),
        R("pods: log of a container the pod lacks", "GET", PODS + "/p1/log?container=nope"),
        R("pods: claimer", "POST", PODS, claim_pod),
        R(
            "pods: allocatedResourcesStatus by the object's name",
            "PATCH",
            PODS + "/claimer/status",
            status_with("claim:c1/gpu"),
            content_type=STRATEGIC,
        ),
        R(
            "pods: allocatedResourcesStatus by the pod's claim",
            "PATCH",
            PODS + "/claimer/status",
            status_with("claim:gpu"),
            content_type=STRATEGIC,
        ),
        R(
            "pods: allocatedResourcesStatus with a request",
            "PATCH",
            PODS + "/claimer/status",
            status_with("claim:gpu/gpu"),
            content_type=STRATEGIC,
        ),
        R(
            "pods: evict",
            "POST",
            PODS + "/{gen}/eviction",
            {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "{gen}", "namespace": NS}},
        ),
        R(
            "pods: evict missing",
            "POST",
            PODS + "/nope/eviction",
            {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "nope", "namespace": NS}},
        ),
        R(
            "pods: evict name mismatch",
            "POST",
            PODS + "/p1/eviction",
            {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "other", "namespace": NS}},
        ),
        R(
            "pods: delete with a wrong uid precondition",
            "DELETE",
            PODS + "/p1",
            {"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}},
        ),
        R("pods: delete dry run", "DELETE", PODS + "/p1?dryRun=All"),
        R("pods: delete", "DELETE", PODS + "/p1"),
        R("pods: delete missing", "DELETE", PODS + "/p1"),
        R(
            "watch: initial events then bookmark",
            "GET",
            PODS + "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
            "&timeoutSeconds=3",
            watch={"max_events": 10, "until_bookmark": True},
        ),
        # --- DRA kinds
        R(
            "classes: list before",
            "GET",
            CLASSES + "?limit=1",
            capture={"class_rv": "metadata.resourceVersion"},
            compare_body=False,
        ),
        R("classes: create", "POST", CLASSES, device_class("dragoman-diff.example.com")),
        R(
            "classes: create with a selector that does not compile",
            "POST",
            CLASSES,
            device_class("dragoman-diff-bad.example.com", "device.driver =="),
        ),
        R(
            # Three errors in cel-go's order (by location): a macro's from its parser's visitor, then two of ANTLR's.
            "classes: create with a selector cel-go refuses three times",
            "POST",
            CLASSES,
            device_class("dragoman-diff-bad3.example.com", "has(device) || 'abc"),
        ),
        R(
            # A constant pattern RE2 refuses: compiled when env.Program plans it, an Internal error (not Invalid).
            "classes: create with a pattern that fails when the program is built",
            "POST",
            CLASSES,
            device_class("dragoman-diff-bad4.example.com", 'device.driver.find("(") == ""'),
        ),
        R(
            # s.matches(<literal>): cel.ValidateRegexLiterals refuses it at compile time, in its own words.
            "classes: create with a matches pattern that does not compile",
            "POST",
            CLASSES,
            device_class("dragoman-diff-bad5.example.com", 'device.driver.matches("(")'),
        ),
        R(
            "classes: create with an extended resource name",
            "POST",
            CLASSES,
            device_class("dragoman-diff-ext.example.com", extendedResourceName="example.com/diff"),
        ),
        R(
            "classes: bad extended resource name",
            "POST",
            CLASSES,
            device_class("dragoman-diff-ext2.example.com", extendedResourceName="nodomain"),
        ),
        R(
            "classes: merge patch",
            "PATCH",
            f"{CLASSES}/dragoman-diff.example.com",
            {"metadata": {"labels": {"x": "y"}}},
            content_type=MERGE,
        ),
        R(
            "classes: strategic patch",
            "PATCH",
            f"{CLASSES}/dragoman-diff.example.com",
            {"metadata": {"labels": {"x": "z"}}},
            content_type=STRATEGIC,
        ),
        R("classes: delete", "DELETE", f"{CLASSES}/dragoman-diff.example.com"),
        R("classes: delete ext", "DELETE", f"{CLASSES}/dragoman-diff-ext.example.com"),
        R(
            "watch: replay from a resourceVersion",
            "GET",
            CLASSES + "?watch=1&resourceVersion={class_rv}&timeoutSeconds=1"
            "&fieldSelector=metadata.name%3Ddragoman-diff.example.com",
            watch={"max_events": 10},
        ),
        R("claims: create", "POST", CLAIMS, claim("c1")),
        R("claims: create invalid count", "POST", CLAIMS, claim("c2", count=0)),
        R("claims: create without requests", "POST", CLAIMS, {**claim("c3"), "spec": {"devices": {"requests": []}}}),
        R(
            "claims: spec is immutable",
            "PATCH",
            CLAIMS + "/c1",
            {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "x", "count": 2}}]}}},
            content_type=MERGE,
        ),
        R("claims: status subresource", "GET", CLAIMS + "/c1/status"),
        # resourceclaims/status resets the metadata to the stored one (ResetObjectMetaForStatus).
        R(
            "claims: status update with new labels",
            "PUT",
            CLAIMS + "/c1/status",
            {**claim("c1"), "metadata": {"name": "c1", "namespace": NS, "labels": {"by-status": "yes"}}, "status": {}},
        ),
        R(
            "claims: reservedFor without allocation",
            "PATCH",
            CLAIMS + "/c1/status",
            {"status": {"reservedFor": [{"resource": "pods", "name": "claimer", "uid": "{p1_uid}"}]}},
            content_type=MERGE,
        ),
        R("claims: list as Table", "GET", CLAIMS, accept=TABLE),
        R("claims: delete", "DELETE", CLAIMS + "/c1"),
        R("slices: create", "POST", "/apis/resource.k8s.io/v1/resourceslices", slice_),
        R(
            "slices: create without a node",
            "POST",
            "/apis/resource.k8s.io/v1/resourceslices",
            {**slice_, "metadata": {"name": "diff-slice-2"}, "spec": {**slice_["spec"], "nodeName": None}},
        ),
        # Counter set and counter names are DNS labels: v1.37.2 refused the demo's `memorySlice0` (the simulator took
        # it). One bad name per request: Go's map order would shuffle two of them.
        R(
            "slices: a shared counter name that is not a DNS label",
            "POST",
            "/apis/resource.k8s.io/v1/resourceslices",
            {
                **slice_,
                "metadata": {"name": "diff-counters"},
                "spec": {
                    **{k: v for k, v in slice_["spec"].items() if k != "devices"},
                    "sharedCounters": [{"name": "gpu-0-counter-set", "counters": {"memorySlice0": {"value": "1"}}}],
                },
            },
        ),
        R(
            "slices: a consumed counter set name that is not a DNS label",
            "POST",
            "/apis/resource.k8s.io/v1/resourceslices",
            {
                **slice_,
                "metadata": {"name": "diff-consumer"},
                "spec": {
                    **slice_["spec"],
                    "devices": [
                        {"name": "d0", "consumesCounters": [{"counterSet": "gpu_0", "counters": {"c": {"value": "1"}}}]}
                    ],
                },
            },
        ),
        R("slices: delete", "DELETE", "/apis/resource.k8s.io/v1/resourceslices/diff-slice"),
        # --- workloads, budgets, quota, events
        R("quota: create", "POST", f"/api/v1/namespaces/{NS}/resourcequotas", quota),
        R("quota: status after the controller", "GET", f"/api/v1/namespaces/{NS}/resourcequotas/q", settle=3.0),
        R("deployments: create", "POST", f"/apis/apps/v1/namespaces/{NS}/deployments", deployment("web", 2)),
        R(
            "deployments: invalid selector",
            "POST",
            f"/apis/apps/v1/namespaces/{NS}/deployments",
            {**deployment("bad", 1), "spec": {**deployment("bad", 1)["spec"], "selector": {"matchLabels": {"x": "y"}}}},
        ),
        R("deployments: scale", "GET", f"/apis/apps/v1/namespaces/{NS}/deployments/web/scale", settle=3.0),
        R(
            "deployments: scale to 3",
            "PATCH",
            f"/apis/apps/v1/namespaces/{NS}/deployments/web/scale",
            {"spec": {"replicas": 3}},
            content_type=MERGE,
        ),
        R(
            "deployments: negative scale",
            "PATCH",
            f"/apis/apps/v1/namespaces/{NS}/deployments/web/scale",
            {"spec": {"replicas": -1}},
            content_type=MERGE,
        ),
        R(
            "deployments: status after the controllers",
            "GET",
            f"/apis/apps/v1/namespaces/{NS}/deployments/web",
            settle=4.0,
        ),
        R("replicasets: list", "GET", f"/apis/apps/v1/namespaces/{NS}/replicasets"),
        R("daemonsets: create", "POST", f"/apis/apps/v1/namespaces/{NS}/daemonsets", ds),
        R("daemonsets: status", "GET", f"/apis/apps/v1/namespaces/{NS}/daemonsets/ds", settle=3.0),
        R("pdb: create", "POST", f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets", pdb),
        R("pdb: status", "GET", f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/pdb", settle=3.0),
        R(
            "pdb: both minAvailable and maxUnavailable",
            "POST",
            f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets",
            {**pdb, "metadata": {"name": "pdb2"}, "spec": {**pdb["spec"], "maxUnavailable": 1}},
        ),
        R(
            "pdb: evict a web pod",
            "POST",
            PODS + "/{web_pod}/eviction",
            {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "{web_pod}", "namespace": NS}},
        ),
        R("events: create", "POST", f"/api/v1/namespaces/{NS}/events", event),
        R("events: events.k8s.io view", "GET", f"{EVENTS_V1}/p1.diff"),
        R("events: events.k8s.io create", "POST", EVENTS_V1, events_v1),
        R("events: core view of an events.k8s.io write", "GET", f"/api/v1/namespaces/{NS}/events/p1.v1"),
        R(
            "events: events.k8s.io create without eventTime or reporter",
            "POST",
            EVENTS_V1,
            {
                **{k: v for k, v in events_v1.items() if k not in ("eventTime", "reportingController")},
                "metadata": {"name": "Not_A_Subdomain", "namespace": NS},
                "deprecatedCount": 2,
                "deprecatedSource": {"component": "x"},
                "series": {"count": 1},
                "type": "Odd",
            },
        ),
        R("events: events.k8s.io list", "GET", f"{EVENTS_V1}?fieldSelector=regarding.name%3Dp1,reason%3DTesting"),
        R(
            "events: events.k8s.io list by regarding and reporter",
            "GET",
            f"{EVENTS_V1}?fieldSelector=regarding.name%3Dp1,reportingController%3Ddragoman.io%2Fdifferential",
        ),
        R("events: events.k8s.io refuses a core field label", "GET", f"{EVENTS_V1}?fieldSelector=source%3Dx"),
        R("events: events.k8s.io as Table", "GET", f"{EVENTS_V1}?{MINE_SELECTOR}", accept=TABLE),
        R(
            "events: events.k8s.io watch by type",
            "GET",
            f"{EVENTS_V1}?watch=1&resourceVersion=0&{MINE_SELECTOR}&fieldSelector=type%3DWarning&timeoutSeconds=2",
            watch={"max_events": 5},
        ),
        R(
            "events: events.k8s.io patch of an immutable note",
            "PATCH",
            f"{EVENTS_V1}/p1.v1",
            {"note": "changed"},
            content_type=MERGE,
        ),
        R(
            "events: events.k8s.io patch of the series",
            "PATCH",
            f"{EVENTS_V1}/p1.v1",
            {"series": {"count": 2, "lastObservedTime": "2026-01-02T03:05:00.000001Z"}},
            content_type=MERGE,
        ),
        R(
            "events: events.k8s.io strategic patch of the series",
            "PATCH",
            f"{EVENTS_V1}/p1.v1",
            # What client-go tools/events sends for a repeat (createPatchBytesForSeries): only the series.
            {"series": {"count": 3, "lastObservedTime": "2026-01-02T03:06:00.000002Z"}},
            content_type=STRATEGIC,
        ),
        R(
            "events: core watch of an events.k8s.io write",
            "GET",
            f"/api/v1/namespaces/{NS}/events?watch=1&resourceVersion=0&{MINE_SELECTOR}&fieldSelector=type%3DWarning"
            "&timeoutSeconds=2",
            watch={"max_events": 5},
        ),
        R("events: events.k8s.io delete", "DELETE", f"{EVENTS_V1}/p1.v1"),
        R(
            "events: list by involved object",
            "GET",
            f"/api/v1/namespaces/{NS}/events?fieldSelector=involvedObject.name%3Dp1,reason%3DTesting",
        ),
        # --- what client libraries and helm send (captured: sim/controlplane/differential_clients.py)
        *client_requests(),
        R("configmaps: delete collection", "DELETE", f"/api/v1/namespaces/{NS}/configmaps"),
        R(
            "deployments: delete foreground",
            "DELETE",
            f"/apis/apps/v1/namespaces/{NS}/deployments/web",
            {"propagationPolicy": "Foreground"},
        ),
        # --- the namespace goes
        R("namespaces: delete", "DELETE", f"/api/v1/namespaces/{NS}"),
        R("namespaces: terminating", "GET", f"/api/v1/namespaces/{NS}"),
        R("namespaces: create in a terminating namespace", "POST", PODS, pod("late")),
    ]


def _capture_web_pod(side: Side) -> Any:
    """The name of one of `web`'s pods, for the eviction the PDB answers (pods of a Deployment have generated names)."""

    def find():
        body = side.get(f"{PODS}?labelSelector=app%3Dweb")
        items = (body or {}).get("items") or []
        return sorted(p["metadata"]["name"] for p in items) if len(items) >= 2 else None

    names = side.wait(find, 20) or []
    side.target.vars["web_pod"] = names[0] if names else "none"
    return {"web pods": len(names)}


def kubectl_cases() -> list[KubectlCase]:
    """What real kubectl sends for the commands an operator types around dragoman, and what it then prints."""
    return [
        KubectlCase("kubectl: get nodes -o name", ["get", "nodes", "-o", "name"]),
        KubectlCase("kubectl: get deviceclasses", ["get", "deviceclasses", "-o", "custom-columns=N:.metadata.name"]),
        KubectlCase("kubectl: get node -o json", ["get", "node", NODE, "-o", "jsonpath={.spec}"]),
        KubectlCase("kubectl: cordon", ["cordon", NODE]),
        KubectlCase("kubectl: uncordon", ["uncordon", NODE]),
        KubectlCase(
            "kubectl: unschedulable after uncordon", ["get", "node", NODE, "-o", "jsonpath={.spec.unschedulable}"]
        ),
        KubectlCase("kubectl: label", ["label", "node", NODE, "dragoman.io/differential=1"]),
        KubectlCase("kubectl: unlabel", ["label", "node", NODE, "dragoman.io/differential-"]),
        KubectlCase("kubectl: auth can-i evict", ["auth", "can-i", "create", "pods/eviction", "-n", "default"]),
        KubectlCase("kubectl: get missing", ["get", "pod", "no-such-pod", "-n", "default"]),
    ]


def cases() -> list:
    reqs = api_requests()
    i = next(n for n, r in enumerate(reqs) if r.name == "pdb: evict a web pod")
    from dragoman.sim.controlplane.differential_behaviour import behaviour_cases

    return [
        *kubectl_cases(),
        *reqs[:i],
        Behaviour("pdb: find a web pod", _capture_web_pod, group="api/pdb"),
        *reqs[i:],
        *behaviour_cases(),
    ]
