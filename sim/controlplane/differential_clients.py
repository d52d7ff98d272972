"""What client libraries send, replayed verbatim by the differential corpus (sim/controlplane/differential_corpus.py).

The requests were captured, not imagined: each library ran a script of the verbs an operator's tool uses (list,
get, watch, create, replace, patch of every type, apply, delete, evict, dry run, status, scale) against the embedded
simulator behind a logger of method, path, query, Content-Type, Accept, User-Agent and body. Versions: the
`kubernetes` Python client 37.0.2, lightkube 1.0.1, kr8s 0.20.15, @kubernetes/client-node 1.4.0 and helm v4.3.1.
What a library chose is kept as it chose it: the `kubernetes` client's Eviction without kind or apiVersion and its
PUT carrying the object it read back (managedFields and all), lightkube's `?fieldManager=` on every write, kr8s's
merge patches and scale by patching the Deployment, client-node's PUT of a bare Scale, helm's protobuf Secrets and
its server-side apply with `fieldValidation=Strict&force=false`. The User-Agent is replayed too: it is the field
manager kube-apiserver records when a request names none.

The libraries themselves are not dependencies: their requests are data here, and a library's next version that
sends something else is a new capture, not a silent change of what is compared.
"""

from __future__ import annotations

from typing import Any

from dragoman.sim.controlplane.differential import Request

NS = "dragoman-diff"
CM = f"/api/v1/namespaces/{NS}/configmaps"
PODS = f"/api/v1/namespaces/{NS}/pods"
DEPLOYS = f"/apis/apps/v1/namespaces/{NS}/deployments"
SECRETS = f"/api/v1/namespaces/{NS}/secrets"
NODE = "gke-ml-prod-h100-dra-731a68f1-628r"
NOWHERE = {"dragoman.io/differential": "nowhere"}
PROTOBUF = "application/vnd.kubernetes.protobuf"
PROTOBUF_ACCEPT = "application/vnd.kubernetes.protobuf,application/json"

KUBERNETES_PY = "OpenAPI-Generator/37.0.2/python"
LIGHTKUBE = "python-httpx2/2.16.2"
KR8S = "kr8s/0.20.15"
CLIENT_NODE = "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)"
HELM = "Helm/4.3.1"


def _pod(name: str, app: str) -> dict:
    return {
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"nodeSelector": dict(NOWHERE), "containers": [{"name": "c", "image": "busybox:1.36"}]},
    }


def _deployment(name: str) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"nodeSelector": dict(NOWHERE), "containers": [{"name": "c", "image": "busybox:1.36"}]},
            },
        },
    }


def _typed(api_version: str, kind: str, obj: dict, namespace: str | None = NS) -> dict:
    md = dict(obj.get("metadata") or {})
    if namespace:
        md["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, **obj, "metadata": md}


def _r(name: str, method: str, path: str, body: Any = None, **kw: Any) -> Request:
    group = "api/" + name.split(":", 1)[0]
    return Request(name, method, path, body, group=group, **kw)


def kubernetes_py() -> list[Request]:
    """The official `kubernetes` Python client (CoreV1Api, AppsV1Api, PolicyV1Api; watch.Watch)."""
    ua = {"user_agent": KUBERNETES_PY}
    return [
        _r("kubernetes-py: list nodes", "GET", "/api/v1/nodes?limit=2", fleet=True, compare_body=False, **ua),
        _r("kubernetes-py: create configmap", "POST", CM, {"metadata": {"name": "k8s-cm"}, "data": {"a": "1"}}, **ua),
        _r(
            "kubernetes-py: read configmap",
            "GET",
            CM + "/k8s-cm",
            capture={"k8s_cm_rv": "metadata.resourceVersion"},
            **ua,
        ),
        _r(
            "kubernetes-py: replace configmap",
            "PUT",
            CM + "/k8s-cm",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "k8s-cm", "namespace": NS, "resourceVersion": "{k8s_cm_rv}"},
                "data": {"a": "1", "b": "2"},
            },
            **ua,
        ),
        _r(
            "kubernetes-py: patch configmap",
            "PATCH",
            CM + "/k8s-cm",
            {"data": {"c": "3"}},
            content_type="application/strategic-merge-patch+json",
            **ua,
        ),
        _r("kubernetes-py: dry run", "POST", CM + "?dryRun=All", {"metadata": {"name": "k8s-dry"}}, **ua),
        _r(
            "kubernetes-py: watch",
            "GET",
            CM + "?fieldSelector=metadata.name%3Dk8s-cm&timeoutSeconds=1&watch=true",
            watch={"max_events": 3},
            **ua,
        ),
        _r("kubernetes-py: create pod", "POST", PODS, _pod("k8s-pod", "k8s"), **ua),
        _r(
            "kubernetes-py: patch pod status",
            "PATCH",
            PODS + "/k8s-pod/status",
            {"status": {"conditions": [{"type": "Example", "status": "True"}]}},
            content_type="application/strategic-merge-patch+json",
            settle=5.0,  # after each scheduler's first attempt at the unschedulable pod (timing, not API)
            **ua,
        ),
        _r("kubernetes-py: read pod status", "GET", PODS + "/k8s-pod/status", **ua),
        _r("kubernetes-py: create deployment", "POST", DEPLOYS, _deployment("k8s-web"), **ua),
        # After the controllers' first pass on both sides (a client reading at once races them: timing, not API).
        _r("kubernetes-py: read scale", "GET", DEPLOYS + "/k8s-web/scale", settle=3.0, **ua),
        _r(
            "kubernetes-py: patch scale",
            "PATCH",
            DEPLOYS + "/k8s-web/scale",
            {"spec": {"replicas": 2}},
            content_type="application/strategic-merge-patch+json",
            **ua,
        ),
        # No kind or apiVersion: the client serializes V1Eviction without them (the server takes the URL's).
        _r(
            "kubernetes-py: evict",
            "POST",
            PODS + "/k8s-pod/eviction",
            {"metadata": {"name": "k8s-pod", "namespace": NS}},
            **ua,
        ),
        _r("kubernetes-py: delete configmap", "DELETE", CM + "/k8s-cm", **ua),
        _r(
            "kubernetes-py: delete foreground",
            "DELETE",
            DEPLOYS + "/k8s-web?propagationPolicy=Foreground",
            settle=3.0,  # the answer carries status.replicas: after both controllers acted on the scale to 2 (timing)
            **ua,
        ),
    ]


def lightkube() -> list[Request]:
    """lightkube's Client(field_manager="lightkube"): every write names its field manager in the query."""
    ua = {"user_agent": LIGHTKUBE, "accept": "*/*"}
    fm = "?fieldManager=lightkube"
    return [
        _r("lightkube: list page", "GET", "/api/v1/nodes?limit=2", fleet=True, compare_body=False, **ua),
        _r("lightkube: get node", "GET", f"/api/v1/nodes/{NODE}", fleet=True, compare_body=False, **ua),
        _r(
            "lightkube: create",
            "POST",
            CM + fm,
            _typed("v1", "ConfigMap", {"metadata": {"name": "lk-cm"}, "data": {"a": "1"}}),
            **ua,
        ),
        _r("lightkube: get", "GET", CM + "/lk-cm", capture={"lk_cm_rv": "metadata.resourceVersion"}, **ua),
        _r(
            "lightkube: replace",
            "PUT",
            CM + "/lk-cm" + fm,
            _typed(
                "v1", "ConfigMap", {"metadata": {"name": "lk-cm", "resourceVersion": "{lk_cm_rv}"}, "data": {"b": "2"}}
            ),
            **ua,
        ),
        _r(
            "lightkube: strategic patch",
            "PATCH",
            CM + "/lk-cm" + fm,
            {"data": {"c": "3"}},
            content_type="application/strategic-merge-patch+json",
            **ua,
        ),
        _r(
            "lightkube: merge patch",
            "PATCH",
            CM + "/lk-cm" + fm,
            {"data": {"d": "4"}},
            content_type="application/merge-patch+json",
            **ua,
        ),
        _r(
            "lightkube: json patch",
            "PATCH",
            CM + "/lk-cm" + fm,
            [{"op": "add", "path": "/data/e", "value": "5"}],
            content_type="application/json-patch+json",
            **ua,
        ),
        _r(
            "lightkube: apply",
            "PATCH",
            CM + "/lk-applied" + fm,
            _typed("v1", "ConfigMap", {"metadata": {"name": "lk-applied"}, "data": {"a": "1"}}),
            content_type="application/apply-patch+yaml",
            **ua,
        ),
        _r(
            "lightkube: dry run",
            "POST",
            CM + "?dryRun=All&fieldManager=lightkube",
            _typed("v1", "ConfigMap", {"metadata": {"name": "lk-dry"}}),
            **ua,
        ),
        _r("lightkube: create pod", "POST", PODS + fm, _typed("v1", "Pod", _pod("lk-pod", "lk")), **ua),
        _r(
            "lightkube: patch status",
            "PATCH",
            PODS + "/lk-pod/status" + fm,
            {"status": {"conditions": [{"type": "Example", "status": "True"}]}},
            content_type="application/strategic-merge-patch+json",
            settle=5.0,  # after each scheduler's first attempt at the unschedulable pod (timing, not API)
            **ua,
        ),
        _r(
            "lightkube: create deployment",
            "POST",
            DEPLOYS + fm,
            _typed("apps/v1", "Deployment", _deployment("lk-web")),
            **ua,
        ),
        _r(
            "lightkube: patch scale",
            "PATCH",
            DEPLOYS + "/lk-web/scale" + fm,
            {"spec": {"replicas": 2}},
            content_type="application/strategic-merge-patch+json",
            settle=3.0,
            **ua,
        ),
        _r(
            "lightkube: evict",
            "POST",
            PODS + "/lk-pod/eviction" + fm,
            {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "lk-pod", "namespace": NS}},
            **ua,
        ),
        _r("lightkube: delete", "DELETE", CM + "/lk-cm", **ua),
        _r("lightkube: delete collection dry run", "DELETE", CM + "?dryRun=All", compare_body=False, **ua),
        _r("lightkube: delete deployment", "DELETE", DEPLOYS + "/lk-web", **ua),
    ]


def kr8s() -> list[Request]:
    """kr8s's sync objects API: merge patches for labels and scale, `limit=100` lists, discovery of every group."""
    ua = {"user_agent": KR8S, "accept": "*/*", "content_type": "application/json"}
    merge = {"user_agent": KR8S, "accept": "*/*", "content_type": "application/merge-patch+json"}
    return [
        _r("kr8s: version", "GET", "/version/", compare_body=False, **ua),
        _r("kr8s: legacy discovery", "GET", "/api/", **ua),
        _r("kr8s: group discovery", "GET", "/apis/", **ua),
        _r(
            "kr8s: get by name",
            "GET",
            f"/api/v1/nodes?limit=100&fieldSelector=metadata.name%3D{NODE},metadata.name%3D{NODE}",
            fleet=True,
            compare_body=False,
            **ua,
        ),
        _r("kr8s: create", "POST", CM, {"metadata": {"name": "kr-cm", "namespace": NS}, "data": {"a": "1"}}, **ua),
        _r("kr8s: merge patch", "PATCH", CM + "/kr-cm", {"data": {"c": "3"}}, **merge),
        _r(
            "kr8s: json patch",
            "PATCH",
            CM + "/kr-cm",
            [{"op": "add", "path": "/data/e", "value": "5"}],
            user_agent=KR8S,
            accept="*/*",
            content_type="application/json-patch+json",
        ),
        _r("kr8s: list by label", "GET", CM + "?limit=100&labelSelector=x%3Dy", **ua),
        _r(
            "kr8s: create pod",
            "POST",
            PODS,
            {**_pod("kr-pod", "kr"), "metadata": {"name": "kr-pod", "namespace": NS}},
            **ua,
        ),
        # After the scheduler judged the pod on both sides (its condition is in the answer).
        _r("kr8s: label", "PATCH", PODS + "/kr-pod", {"metadata": {"labels": {"kr": "1"}}}, settle=2.0, **merge),
        _r("kr8s: create deployment", "POST", DEPLOYS, _deployment("kr-web"), **ua),
        _r("kr8s: scale", "PATCH", DEPLOYS + "/kr-web", {"spec": {"replicas": 2}}, settle=3.0, **merge),
        _r("kr8s: delete", "DELETE", CM + "/kr-cm", {}, **ua),
        _r("kr8s: delete deployment", "DELETE", DEPLOYS + "/kr-web", {}, **ua),
    ]


def client_node() -> list[Request]:
    """@kubernetes/client-node (CoreV1Api, AppsV1Api, Watch)."""
    ua = {"user_agent": CLIENT_NODE, "accept": "application/json, */*;q=0.8"}
    return [
        _r("client-node: create", "POST", CM, {"metadata": {"name": "js-cm"}, "data": {"a": "1"}}, **ua),
        _r("client-node: read", "GET", CM + "/js-cm", capture={"js_cm_rv": "metadata.resourceVersion"}, **ua),
        _r(
            "client-node: replace",
            "PUT",
            CM + "/js-cm",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "js-cm", "namespace": NS, "resourceVersion": "{js_cm_rv}"},
                "data": {"a": "1", "b": "2"},
            },
            **ua,
        ),
        _r(
            "client-node: json patch",
            "PATCH",
            CM + "/js-cm",
            [{"op": "add", "path": "/data/c", "value": "3"}],
            content_type="application/json-patch+json",
            **ua,
        ),
        _r(
            "client-node: apply forced",
            "PATCH",
            CM + "/js-applied?fieldManager=client-node&force=true",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "js-applied", "namespace": NS},
                "data": {"a": "1"},
            },
            content_type="application/apply-patch+yaml",
            **ua,
        ),
        _r(
            "client-node: watch",
            "GET",
            CM + "?fieldSelector=metadata.name%3Djs-cm&watch=true&timeoutSeconds=1",
            watch={"max_events": 3},
            user_agent=CLIENT_NODE,
            accept="*/*",
        ),
        _r("client-node: create deployment", "POST", DEPLOYS, _deployment("js-web"), **ua),
        # A Scale without kind or apiVersion, as the generated model serializes it.
        _r(
            "client-node: replace scale",
            "PUT",
            DEPLOYS + "/js-web/scale",
            {"metadata": {"name": "js-web", "namespace": NS}, "spec": {"replicas": 2}},
            settle=3.0,
            **ua,
        ),
        _r(
            "client-node: delete background",
            "DELETE",
            DEPLOYS + "/js-web?propagationPolicy=Background",
            content_type="application/json",
            **ua,
        ),
        _r("client-node: delete", "DELETE", CM + "/js-cm", **ua),
    ]


def helm() -> list[Request]:
    """helm v4's install and uninstall with its default storage: release Secrets read and written as protobuf, the
    chart's objects applied server-side with strict field validation."""
    from dragoman.sim.api import protobuf as pb

    release = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "sh.helm.release.v1.web.v1",
            "namespace": NS,
            "labels": {"name": "web", "owner": "helm", "status": "pending-install", "version": "1"},
        },
        "type": "helm.sh/release.v1",
        "data": {"release": "SDRzSUFBQUFBQUFDLzZxdUJRUUFBUC8vWVFCTnN3QUFBQUE9"},
    }
    deployed = {
        **release,
        "metadata": {**release["metadata"], "labels": {**release["metadata"]["labels"], "status": "deployed"}},
    }
    pbua = {"user_agent": HELM, "accept": PROTOBUF_ACCEPT}
    return [
        _r(
            "helm: release history",
            "GET",
            SECRETS + "?labelSelector=name%3Dweb,owner%3Dhelm",
            compare_body=False,
            **pbua,
        ),
        _r("helm: release history as JSON", "GET", SECRETS + "?labelSelector=name%3Dweb,owner%3Dhelm", user_agent=HELM),
        _r("helm: object lookup", "GET", CM + "/web-config", user_agent=HELM),
        _r(
            "helm: store the release",
            "POST",
            SECRETS,
            pb.encode_request(release),
            content_type=PROTOBUF,
            compare_body=False,
            **pbua,
        ),
        _r(
            "helm: apply the chart",
            "PATCH",
            CM + "/web-config?fieldManager=helm&fieldValidation=Strict&force=false",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "web-config",
                    "namespace": NS,
                    "annotations": {"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": NS},
                    "labels": {"app.kubernetes.io/managed-by": "Helm"},
                },
                "data": {"greeting": "hello"},
            },
            content_type="application/apply-patch+yaml",
            user_agent=HELM,
        ),
        _r(
            "helm: mark deployed",
            "PUT",
            SECRETS + "/sh.helm.release.v1.web.v1",
            pb.encode_request(deployed),
            content_type=PROTOBUF,
            compare_body=False,
            **pbua,
        ),
        _r("helm: read the release", "GET", SECRETS + "/sh.helm.release.v1.web.v1", user_agent=HELM),
        _r(
            "helm: uninstall an object",
            "DELETE",
            CM + "/web-config",
            {"propagationPolicy": "Background"},
            user_agent=HELM,
        ),
        _r(
            "helm: delete the release",
            "DELETE",
            SECRETS + "/sh.helm.release.v1.web.v1",
            pb.encode_request({"apiVersion": "v1", "kind": "DeleteOptions"}),
            content_type=PROTOBUF,
            compare_body=False,
            **pbua,
        ),
    ]


def client_requests() -> list[Request]:
    return [*kubernetes_py(), *lightkube(), *kr8s(), *client_node(), *helm()]
