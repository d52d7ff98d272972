"""Defaulting and validation: the real server's defaults, causes and 422 message shapes."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest
from dragoman.fleet.k8s.extended import is_extended_resource_name
from dragoman.sim.api import status
from dragoman.sim.api.validation import default_object, prepare_for_create, validate_object

META = {
    "name": "x",
    "namespace": "default",
    "creationTimestamp": "2026-11-30T12:00:00Z",
    "uid": "6f1c2f44-0000-4000-8000-000000000001",
    "resourceVersion": "1",
}


def obj(api_version, kind, **rest):
    meta = dict(META)
    meta.update(rest.pop("metadata", {}))
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **rest}


POD = obj(
    "v1",
    "Pod",
    spec={
        "containers": [
            {
                "name": "app",
                "image": "registry.example/app:1.2",
                "resources": {"limits": {"nvidia.com/gpu": "1", "cpu": "1"}},
            }
        ]
    },
)
DEPLOY = obj(
    "apps/v1",
    "Deployment",
    spec={
        "selector": {"matchLabels": {"app": "x"}},
        "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    },
)
DS = obj(
    "apps/v1",
    "DaemonSet",
    spec={
        "selector": {"matchLabels": {"app": "x"}},
        "template": {
            "metadata": {"labels": {"app": "x"}},
            "spec": {"containers": [{"name": "c", "image": "busybox:latest"}]},
        },
    },
)
STS = obj(
    "apps/v1",
    "StatefulSet",
    spec={
        "serviceName": "s",
        "selector": {"matchLabels": {"app": "x"}},
        "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i:1"}]}},
    },
)
RS = obj(
    "apps/v1",
    "ReplicaSet",
    spec={
        "selector": {"matchLabels": {"app": "x"}},
        "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i:1"}]}},
    },
)
JOB = obj(
    "batch/v1",
    "Job",
    spec={"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i:1"}]}}},
)
NS = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
CLAIM = obj(
    "resource.k8s.io/v1",
    "ResourceClaim",
    spec={"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
)
TEMPLATE = obj(
    "resource.k8s.io/v1",
    "ResourceClaimTemplate",
    spec={
        "spec": {
            "devices": {
                "requests": [{"name": "gpu", "firstAvailable": [{"name": "big", "deviceClassName": "gpu.nvidia.com"}]}]
            }
        }
    },
)
CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com"},
    "spec": {
        "extendedResourceName": "nvidia.com/gpu",
        "selectors": [
            {
                "cel": {
                    "expression": (
                        'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"'
                    )
                }
            }
        ],
    },
}
SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "n1-gpu.nvidia.com-abcde"},
    "spec": {
        "driver": "gpu.nvidia.com",
        "nodeName": "n1",
        "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
        "devices": [
            {
                "name": "gpu-0",
                "attributes": {
                    "type": {"string": "gpu"},
                    "driverVersion": {"version": "580.65.6"},
                    "resource.kubernetes.io/pciBusID": {"string": "0000:3b:00.0"},
                },
                "capacity": {"memory": {"value": "80Gi"}},
            }
        ],
    },
}
RB = obj(
    "rbac.authorization.k8s.io/v1",
    "RoleBinding",
    roleRef={"kind": "ClusterRole", "name": "view"},
    subjects=[{"kind": "User", "name": "viewer"}, {"kind": "ServiceAccount", "name": "sa", "namespace": "default"}],
)

RESOURCES = [
    ("pods", POD),
    ("deployments", DEPLOY),
    ("daemonsets", DS),
    ("statefulsets", STS),
    ("replicasets", RS),
    ("jobs", JOB),
    ("namespaces", NS),
    ("resourceclaims", CLAIM),
    ("resourceclaimtemplates", TEMPLATE),
    ("deviceclasses", CLASS),
    ("resourceslices", SLICE),
    ("rolebindings", RB),
]


@pytest.mark.parametrize("resource, original", RESOURCES, ids=[r for r, _ in RESOURCES])
def test_defaulted_objects_are_valid_and_match_the_137_schema(resource, original):
    o = copy.deepcopy(original)
    default_object(resource, o)
    assert validate_object(resource, o, None) == []
    kubernetes_validate.validate(o, "1.37.0", strict=True)
    again = copy.deepcopy(o)
    default_object(resource, again)
    assert again == o  # defaulting is idempotent


def test_pod_defaults():
    pod = copy.deepcopy(POD)
    default_object("pods", pod)
    spec = pod["spec"]
    assert (spec["restartPolicy"], spec["dnsPolicy"], spec["schedulerName"], spec["terminationGracePeriodSeconds"]) == (
        "Always",
        "ClusterFirst",
        "default-scheduler",
        30,
    )
    c = spec["containers"][0]
    assert (c["imagePullPolicy"], c["terminationMessagePath"], c["terminationMessagePolicy"]) == (
        "IfNotPresent",
        "/dev/termination-log",
        "File",
    )
    assert c["resources"]["requests"] == {"nvidia.com/gpu": "1", "cpu": "1"}  # requests default to limits
    assert spec["enableServiceLinks"] is True
    # Decoding defaults only: admission (service account, priority, tolerations) and PrepareForCreate (status) come
    # after the field manager, so none of them may be here.
    for later in ("tolerations", "serviceAccountName", "serviceAccount", "priority", "volumes"):
        assert later not in spec
    assert "status" not in pod
    prepare_for_create("pods", pod)
    assert pod["status"] == {"phase": "Pending", "qosClass": "Burstable"}


def test_a_template_is_not_defaulted_as_a_pod():
    """SetDefaults_Pod (requests from limits, enableServiceLinks) is for Pods only; a template gets the PodSpec's."""
    d = copy.deepcopy(DEPLOY)
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1"}}
    d["spec"]["template"]["spec"]["serviceAccountName"] = "robot"
    default_object("deployments", d)
    spec = d["spec"]["template"]["spec"]
    assert spec["containers"][0]["resources"] == {"limits": {"cpu": "1"}}
    assert "enableServiceLinks" not in spec
    assert spec["serviceAccount"] == "robot"  # the deprecated alias, kept in sync by SetDefaults_PodSpec


def test_workload_and_claim_defaults():
    d = copy.deepcopy(DEPLOY)
    default_object("deployments", d)
    assert d["spec"]["replicas"] == 1 and d["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert d["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    ds = copy.deepcopy(DS)
    default_object("daemonsets", ds)
    assert ds["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    c = copy.deepcopy(CLAIM)
    default_object("resourceclaims", c)
    assert c["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu.nvidia.com",
        "allocationMode": "ExactCount",
        "count": 1,
    }
    t = copy.deepcopy(TEMPLATE)
    default_object("resourceclaimtemplates", t)
    assert t["spec"]["spec"]["devices"]["requests"][0]["firstAvailable"][0]["count"] == 1
    ns = copy.deepcopy(NS)
    default_object("namespaces", ns)
    assert ns["status"] == {"phase": "Active"} and ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a"}


def causes(resource, o, old=None):
    return [(c["field"], c["reason"], c["message"]) for c in validate_object(resource, o, old)]


def test_cel_compile_error_has_the_real_422_shape():
    bad = copy.deepcopy(CLASS)
    bad["spec"]["selectors"] = [{"cel": {"expression": 'device.name == "gpu-0"'}}]
    found = validate_object("deviceclasses", bad, None)
    assert found == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec.selectors[0].cel.expression",
            "message": (
                'Invalid value: "device.name == \\"gpu-0\\"": compilation failed: ERROR: <input>:1:7: '
                "undefined field 'name'\n | device.name == \"gpu-0\"\n | ......^"
            ),
        }
    ]
    body = status.invalid("resource.k8s.io", "DeviceClass", "gpu.nvidia.com", found)
    assert body["code"] == 422
    assert body["message"].startswith(
        'DeviceClass.resource.k8s.io "gpu.nvidia.com" is invalid: spec.selectors[0].cel.expression: '
        'Invalid value: "device.name == \\"gpu-0\\"": compilation failed: ERROR: <input>:1:7:'
    )


def test_cel_syntax_error_is_worded_as_the_api_server_words_it():
    # kube-apiserver v1.37.2's answer (cel-go's parser): every error, its location, the line and the caret.
    bad = copy.deepcopy(CLASS)
    bad["spec"]["selectors"] = [{"cel": {"expression": "device.driver =="}}]
    (cause,) = validate_object("deviceclasses", bad, None)
    assert cause["message"] == (
        'Invalid value: "device.driver ==": compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '
        "'<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, "
        "STRING, BYTES, IDENTIFIER}\n | device.driver ==\n | ................^"
    )
    bad["spec"]["selectors"] = [{"cel": {"expression": "'abc"}}]
    (cause,) = validate_object("deviceclasses", bad, None)
    assert cause["message"].endswith(
        "compilation failed: ERROR: <input>:1:1: Syntax error: token recognition error at: ''abc'\n | 'abc\n | ^\n"
        "ERROR: <input>:1:5: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', "
        "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 'abc\n | ....^"
    )


def test_cel_pattern_that_fails_in_the_planner_is_an_internal_error():
    # kube-apiserver v1.37.2: env.Program compiles a constant pattern; its failure is field.InternalError.
    bad = copy.deepcopy(CLASS)
    bad["spec"]["selectors"] = [{"cel": {"expression": 'device.driver.find("(") == ""'}}]
    (cause,) = validate_object("deviceclasses", bad, None)
    assert cause == {
        "reason": "InternalError",
        "field": "spec.selectors[0].cel.expression",
        "message": "Internal error: program instantiation failed: error parsing regexp: missing closing ): `(`",
    }


@pytest.mark.parametrize(
    "expression, reason, fragment",
    [
        ("device.driver ==", "FieldValueInvalid", "compilation failed: ERROR: <input>:1:17: "),
        ("1", "FieldValueInvalid", "must evaluate to bool or the unknown type, not int"),
        ("", "FieldValueRequired", "Required value"),
        ("device.driver == 'x' && " * 500 + "true", "FieldValueTooLong", "Too long: may not be more than 10240 bytes"),
    ],
)
def test_cel_errors(expression, reason, fragment):
    bad = copy.deepcopy(CLAIM)
    bad["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [{"cel": {"expression": expression}}]
    (cause,) = validate_object("resourceclaims", bad, None)
    assert cause["field"] == "spec.devices.requests[0].exactly.selectors[0].cel.expression"
    assert cause["reason"] == reason and fragment in cause["message"]


@pytest.mark.parametrize(
    "name, ok",
    [
        ("nvidia.com/gpu", True),
        ("example.com/mig-1g.12gb", True),
        ("gpu", False),
        ("kubernetes.io/gpu", False),
        ("deviceclass.resource.kubernetes.io/gpu.nvidia.com", False),
        ("requests.example.com/gpu", False),
        ("example.com/", False),
        ("bad_domain/gpu", False),
        ("example.com/" + "a" * 64, False),
    ],
)
def test_extended_resource_name(name, ok):
    assert is_extended_resource_name(name) is ok
    dc = copy.deepcopy(CLASS)
    dc["spec"]["extendedResourceName"] = name
    found = causes("deviceclasses", dc)
    assert (found == []) is ok
    if not ok:
        # v1.37.2 answers with the declarative validator's messages (api/validate/strfmt.go ExtendedResourceName).
        assert found and all(f[:2] == ("spec.extendedResourceName", "FieldValueInvalid") for f in found)
        assert all(f[2].startswith(f'Invalid value: "{name}": ') for f in found)
        expected = {
            "gpu": "a name must be a domain-prefixed path, such as 'example.com/my-prop'",
            "kubernetes.io/gpu": 'must not have "kubernetes.io/" domain',
            "requests.example.com/gpu": 'must not have "requests." prefix',
        }.get(name)
        if expected:
            assert f'Invalid value: "{name}": {expected}' in [f[2] for f in found]


def test_limits_and_request_shapes():
    dc = copy.deepcopy(CLASS)
    dc["spec"]["selectors"] = [{"cel": {"expression": "true"}}] * 33
    assert ("spec.selectors", "FieldValueTooMany", "Too many: 33: must have at most 32 items") in causes(
        "deviceclasses", dc
    )
    c = copy.deepcopy(CLAIM)
    c["spec"]["devices"]["requests"].append(
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 0}}
    )
    c["spec"]["devices"]["requests"].append({"name": "none"})
    found = causes("resourceclaims", c)
    assert ("spec.devices.requests[1]", "FieldValueDuplicate", 'Duplicate value: "gpu"') in found
    assert (
        "spec.devices.requests[1].exactly.count",
        "FieldValueInvalid",
        "Invalid value: 0: must be greater than zero",
    ) in found
    assert (
        "spec.devices.requests[2]",
        "FieldValueRequired",
        "Required value: exactly one of `exactly` or `firstAvailable` is required",
    ) in found
    c = copy.deepcopy(CLAIM)
    c["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "Some"
    assert (
        "spec.devices.requests[0].exactly.allocationMode",
        "FieldValueNotSupported",
        'Unsupported value: "Some": supported values: "All", "ExactCount"',
    ) in causes("resourceclaims", c)
    s = copy.deepcopy(SLICE)
    s["spec"]["devices"] = [{"name": f"gpu-{i}"} for i in range(129)]
    assert ("spec.devices", "FieldValueTooMany", "Too many: 129: must have at most 128 items") in causes(
        "resourceslices", s
    )


def test_names():
    assert causes("pods", {**POD, "metadata": {"name": "Bad_Name", "namespace": "default"}})[0][:2] == (
        "metadata.name",
        "FieldValueInvalid",
    )
    # kube-apiserver v1.37.2's words (apimachinery v0.37.2: util/validation's DNS label says why a valid subdomain is
    # not a label; label keys and values are api/validate/content's, which count bytes).
    assert causes("namespaces", {"metadata": {"name": "a.b"}}) == [
        ("metadata.name", "FieldValueInvalid", 'Invalid value: "a.b": must not contain dots')
    ]
    assert causes("namespaces", {"metadata": {"name": "A_b"}})[0][2].startswith(
        'Invalid value: "A_b": a lowercase RFC 1123 label must consist of'
    )
    long_value = {"metadata": {"name": "cm", "namespace": "default", "labels": {"k": "v" * 64}}}
    assert causes("configmaps", long_value) == [
        ("metadata.labels", "FieldValueInvalid", f'Invalid value: "{"v" * 64}": must be no more than 63 bytes')
    ]
    empty_key = {"metadata": {"name": "cm", "namespace": "default", "labels": {"": "v"}}}
    assert [m for _, _, m in causes("configmaps", empty_key)] == [
        'Invalid value: "": name part must be non-empty',
        "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
        "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]
    assert causes("clusterroles", {"metadata": {"name": "system:aggregate-to-view"}, "rules": []}) == []
    assert causes("pods", {**POD, "metadata": {"namespace": "default"}}) == [
        ("metadata.name", "FieldValueRequired", "Required value: name or generateName is required")
    ]
    assert causes("pods", {**POD, "metadata": {"generateName": "p-", "namespace": "default"}}) == []
    bad_labels = {**POD, "metadata": {"name": "p", "labels": {"a b": "x", "ok": "bad value!"}}}
    assert {c[0] for c in causes("pods", bad_labels)} == {"metadata.labels"}


def test_immutable_fields():
    c = copy.deepcopy(CLAIM)
    default_object("resourceclaims", c)
    changed = copy.deepcopy(c)
    changed["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    assert causes("resourceclaims", changed, c)[0][:2] == ("spec", "FieldValueInvalid")
    assert causes("resourceclaims", copy.deepcopy(c), c) == []
    s2 = copy.deepcopy(SLICE)
    s2["spec"]["driver"] = "other.example.com"
    s2["spec"]["pool"]["name"] = "n2"
    assert {f for f, _, _ in causes("resourceslices", s2, SLICE)} == {"spec.driver", "spec.pool.name"}
    pod = copy.deepcopy(POD)
    default_object("pods", pod)
    bound = copy.deepcopy(pod)
    bound["spec"]["nodeName"] = "n1"
    bound["spec"]["containers"][0]["image"] = "registry.example/app:1.3"
    assert causes("pods", bound, pod) == []
    moved = copy.deepcopy(bound)
    moved["spec"]["nodeName"] = "n2"
    assert causes("pods", moved, bound)[0][:2] == ("spec", "FieldValueForbidden")
    d = copy.deepcopy(DEPLOY)
    d2 = copy.deepcopy(d)
    d2["spec"]["selector"] = {"matchLabels": {"app": "y"}}
    d2["spec"]["template"]["metadata"]["labels"] = {"app": "y"}
    assert ("spec.selector", "FieldValueInvalid") in [c[:2] for c in causes("deployments", d2, d)]
    rb2 = copy.deepcopy(RB)
    rb2["roleRef"] = {"kind": "ClusterRole", "name": "edit"}
    assert causes("rolebindings", rb2, RB)[0][0] == "roleRef"


def test_core_checks():
    p = copy.deepcopy(POD)
    p["spec"]["containers"][0]["resources"] = {"requests": {"nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "1"}}
    assert (
        "spec.containers[0].resources.requests",
        "FieldValueInvalid",
        'Invalid value: "2": must be equal to nvidia.com/gpu limit of 1',
    ) in causes("pods", p)
    p = copy.deepcopy(POD)
    p["spec"]["containers"].append({"name": "app"})
    found = causes("pods", p)
    assert ("spec.containers[1].name", "FieldValueDuplicate", 'Duplicate value: "app"') in found and (
        "spec.containers[1].image",
        "FieldValueRequired",
        "Required value",
    ) in found
    d = copy.deepcopy(DEPLOY)
    d["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    assert causes("deployments", d)[0][:2] == ("spec.template.metadata.labels", "FieldValueInvalid")
    ds = copy.deepcopy(DS)
    ds["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert (
        "spec.template.spec.restartPolicy",
        "FieldValueNotSupported",
        'Unsupported value: "Never": supported values: "Always"',
    ) in causes("daemonsets", ds)
    j = copy.deepcopy(JOB)
    j["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    assert causes("jobs", j)[0][:2] == ("spec.template.spec.restartPolicy", "FieldValueNotSupported")
    pdb = obj("policy/v1", "PodDisruptionBudget", spec={"minAvailable": 1, "maxUnavailable": 1})
    assert causes("poddisruptionbudgets", pdb)[0][:2] == ("spec", "FieldValueInvalid")
    crb = {
        "metadata": {"name": "b"},
        "roleRef": {"kind": "Role", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "sa"}],
    }
    found = causes("clusterrolebindings", crb)
    assert (
        "roleRef.kind",
        "FieldValueNotSupported",
        'Unsupported value: "Role": supported values: "ClusterRole"',
    ) in found
    assert ("subjects[0].namespace", "FieldValueRequired", "Required value") in found
    role = obj("rbac.authorization.k8s.io/v1", "Role", rules=[{"verbs": ["get"], "nonResourceURLs": ["/metrics"]}])
    assert causes("roles", role)[0][0] == "rules[0].nonResourceURLs"
    node = {"metadata": {"name": "n1"}, "spec": {"taints": [{"key": "a", "effect": "Sometimes"}]}}
    assert causes("nodes", node)[0][:2] == ("spec.taints[0].effect", "FieldValueNotSupported")
    s = copy.deepcopy(SLICE)
    s["spec"]["allNodes"] = True
    assert causes("resourceslices", s)[0][0] == "spec"
    s = copy.deepcopy(SLICE)
    s["spec"]["devices"][0]["attributes"]["driverVersion"] = {"version": "580"}
    assert causes("resourceslices", s)[0][0] == 'spec.devices[0].attributes["driverVersion"].version'


def test_malformed_input_does_not_raise():
    assert validate_object("pods", {"metadata": {"name": "p"}, "spec": {"containers": "nope"}}, None)
    assert validate_object("resourceslices", {"metadata": {"name": "s"}, "spec": {"devices": [1, 2]}}, None)
    assert validate_object(
        "deviceclasses", {"metadata": {"name": "d"}, "spec": {"selectors": [{"cel": {"expression": 5}}]}}, None
    )


def test_counter_set_and_counter_names_are_dns_labels():
    """kube-apiserver v1.37.2 refused the demo's dynamic-MIG slices (`memorySlice0`) while the simulator took them:
    counter set names and counter names (shared and consumed) are short names (validateCounterSet,
    validateDeviceCounterConsumption; the map's key errors name the map)."""
    label = "a lowercase RFC 1123 label must consist of"
    counters = copy.deepcopy(SLICE)
    counters["metadata"]["name"] = "n1-counters"
    del counters["spec"]["devices"]
    counters["spec"]["sharedCounters"] = [{"name": "gpu-0-counter-set", "counters": {"memorySlice0": {"value": "1"}}}]
    got = causes("resourceslices", counters)
    assert [(f, r) for f, r, _ in got] == [("spec.sharedCounters[0].counters", "FieldValueInvalid")]
    assert got[0][2].startswith(f'Invalid value: "memorySlice0": {label}')
    counters["spec"]["sharedCounters"] = [{"name": "Set_0", "counters": {}}, {"name": "Set_0", "counters": {"a": {}}}]
    assert [(f, r) for f, r, _ in causes("resourceslices", counters)] == [
        ("spec.sharedCounters[0].name", "FieldValueInvalid"),
        ("spec.sharedCounters[0].counters", "FieldValueRequired"),
        ("spec.sharedCounters[1].name", "FieldValueInvalid"),
        ("spec.sharedCounters[1]", "FieldValueDuplicate"),
    ]
    counters["spec"]["sharedCounters"] = [{"name": "memory-slices", "counters": {"memory-slice-0": {"value": "1"}}}]
    assert causes("resourceslices", counters) == []

    consumer = copy.deepcopy(SLICE)
    consumer["spec"]["devices"][0]["consumesCounters"] = [
        {"counterSet": "gpu_0", "counters": {"memory-slice-0": {"value": "1"}}}
    ]
    got = causes("resourceslices", consumer)
    assert [(f, r) for f, r, _ in got] == [("spec.devices[0].consumesCounters[0].counterSet", "FieldValueInvalid")]
    consumer["spec"]["devices"][0]["consumesCounters"] = [
        {"counterSet": "gpu-0", "counters": {"memorySlice0": {"value": "1"}}}
    ]
    got = causes("resourceslices", consumer)
    assert [(f, r) for f, r, _ in got] == [("spec.devices[0].consumesCounters[0].counters", "FieldValueInvalid")]
    three = [{"counterSet": f"s-{i}", "counters": {"c": {"value": "1"}}} for i in range(3)]
    consumer["spec"]["devices"][0]["consumesCounters"] = three
    assert causes("resourceslices", consumer)[0][:2] == ("spec.devices[0].consumesCounters", "FieldValueTooMany")
