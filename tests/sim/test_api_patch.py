"""PATCH semantics: JSON merge (RFC 7386), strategic merge with the real patch tags, JSON patch (RFC 6902), server-side
apply."""

from __future__ import annotations

import pytest
from dragoman.sim.api.patch import (
    ApplyConflict,
    PatchError,
    apply_json_merge_patch,
    apply_json_patch,
    apply_strategic_merge_patch,
    field_set,
    fields_v1,
    paths_of,
    server_side_apply,
    update_managed_fields,
)

# RFC 7386 appendix A.
MERGE_CASES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize("target, patch, expected", MERGE_CASES)
def test_json_merge_patch_rfc7386(target, patch, expected):
    assert apply_json_merge_patch(target, patch) == expected


def test_json_merge_patch_does_not_modify_target():
    target = {"metadata": {"labels": {"a": "1"}}}
    apply_json_merge_patch(target, {"metadata": {"labels": {"a": None, "b": "2"}}})
    assert target == {"metadata": {"labels": {"a": "1"}}}


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "ownerReferences": [{"uid": "u1", "name": "rs", "kind": "ReplicaSet", "apiVersion": "apps/v1"}],
        "finalizers": ["a", "b"],
    },
    "spec": {
        "containers": [
            {
                "name": "app",
                "image": "app:1",
                "env": [{"name": "A", "value": "1"}],
                "ports": [{"containerPort": 80}],
                "volumeMounts": [{"name": "v", "mountPath": "/data"}],
            },
            {"name": "side", "image": "side:1"},
        ],
        "tolerations": [{"key": "x", "operator": "Exists"}],
        "volumes": [{"name": "v", "emptyDir": {}}],
        "imagePullSecrets": [{"name": "s1"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]}]
                }
            }
        },
    },
    "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}]},
}


def smp(patch, target=POD, kind="Pod"):
    return apply_strategic_merge_patch(target, patch, kind)


def test_containers_merge_by_name_and_env_by_name():
    out = smp({"spec": {"containers": [{"name": "app", "image": "app:2", "env": [{"name": "B", "value": "2"}]}]}})
    app, side = out["spec"]["containers"]
    assert app["image"] == "app:2" and side["image"] == "side:1"
    assert app["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert app["ports"] == [{"containerPort": 80}]


def test_new_container_is_appended_and_delete_directive_removes():
    out = smp({"spec": {"containers": [{"name": "new", "image": "n"}]}})
    assert [c["name"] for c in out["spec"]["containers"]] == ["app", "side", "new"]
    out = smp({"spec": {"containers": [{"name": "side", "$patch": "delete"}]}})
    assert [c["name"] for c in out["spec"]["containers"]] == ["app"]


def test_list_replace_directive():
    out = smp({"spec": {"containers": [{"name": "only", "image": "o"}, {"$patch": "replace"}]}})
    assert out["spec"]["containers"] == [{"name": "only", "image": "o"}]


def test_tolerations_and_node_selector_terms_are_replaced():
    out = smp({"spec": {"tolerations": [{"key": "y", "operator": "Exists"}]}})
    assert out["spec"]["tolerations"] == [{"key": "y", "operator": "Exists"}]
    term = {"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["b"]}]}
    out = smp(
        {
            "spec": {
                "affinity": {
                    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
                }
            }
        }
    )
    assert out["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ] == [term]


def test_conditions_merge_by_type_and_owner_refs_by_uid():
    out = smp({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert out["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "PodScheduled", "status": "True"},
    ]
    out = smp(
        {"metadata": {"ownerReferences": [{"uid": "u2", "name": "other", "kind": "Job", "apiVersion": "batch/v1"}]}}
    )
    assert [o["uid"] for o in out["metadata"]["ownerReferences"]] == ["u1", "u2"]


def test_primitive_merge_list_union_and_delete_from_primitive_list():
    out = smp({"metadata": {"finalizers": ["b", "c"]}})
    assert out["metadata"]["finalizers"] == ["a", "b", "c"]
    out = smp({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})
    assert out["metadata"]["finalizers"] == ["b"]


def test_null_deletes_and_map_delete_directive():
    out = smp({"spec": {"affinity": None}})
    assert "affinity" not in out["spec"]
    out = smp({"spec": {"affinity": {"$patch": "delete"}}})
    assert out["spec"]["affinity"] == {}


def test_set_element_order():
    out = smp(
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "side"}, {"name": "app"}],
                "containers": [{"name": "app", "image": "app:3"}],
            }
        }
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["side", "app"]
    assert out["spec"]["containers"][1]["image"] == "app:3"


def test_retain_keys_on_deployment_strategy():
    deploy = {"kind": "Deployment", "spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    out = smp({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}, deploy, "Deployment")
    assert out["spec"]["strategy"] == {"type": "Recreate"}
    with pytest.raises(PatchError) as err:
        smp({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}, deploy, "Deployment")
    assert err.value.code == 422


def test_cordon_and_uncordon_patches_on_node():
    node = {
        "kind": "Node",
        "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]},
        "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]},
    }
    cordoned = smp({"spec": {"unschedulable": True}}, node, "Node")
    assert cordoned["spec"]["unschedulable"] is True and cordoned["spec"]["taints"] == node["spec"]["taints"]
    assert "unschedulable" not in smp({"spec": {"unschedulable": None}}, cordoned, "Node")["spec"]
    out = smp({"status": {"addresses": [{"type": "Hostname", "address": "n1"}]}}, node, "Node")
    assert len(out["status"]["addresses"]) == 2
    # Node taints carry no patch strategy: the list is replaced.
    out = smp({"spec": {"taints": [{"key": "b", "effect": "NoExecute"}]}}, node, "Node")
    assert out["spec"]["taints"] == [{"key": "b", "effect": "NoExecute"}]


def test_daemonset_template_containers_merge_by_name():
    ds = {
        "kind": "DaemonSet",
        "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}}},
    }
    out = smp({"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "2"}]}}}}, ds, "DaemonSet")
    assert out["spec"]["template"]["spec"]["containers"] == [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]


def test_merge_key_missing_is_an_error_and_unknown_kind_replaces_lists():
    with pytest.raises(PatchError):
        smp({"spec": {"containers": [{"image": "x"}]}})
    out = apply_strategic_merge_patch({"spec": {"l": [1, 2]}}, {"spec": {"l": [3]}}, "Whatever")
    assert out == {"spec": {"l": [3]}}


def test_resource_claim_reserved_for_merges_by_uid():
    claim = {"kind": "ResourceClaim", "status": {"reservedFor": [{"resource": "pods", "name": "a", "uid": "1"}]}}
    out = smp({"status": {"reservedFor": [{"resource": "pods", "name": "b", "uid": "2"}]}}, claim, "ResourceClaim")
    assert [r["uid"] for r in out["status"]["reservedFor"]] == ["1", "2"]


# RFC 6902 appendix A (selection) plus escaping.
JSON_PATCH_CASES = [
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"foo": "bar", "baz": "qux"}),
    ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}], {"foo": ["bar", "qux", "baz"]}),
    ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
    ({"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),
    ({"baz": "qux", "foo": "bar"}, [{"op": "replace", "path": "/baz", "value": "boo"}], {"baz": "boo", "foo": "bar"}),
    (
        {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
        [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
        {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
    ),
    (
        {"foo": ["all", "grass", "cows", "eat"]},
        [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
        {"foo": ["all", "cows", "eat", "grass"]},
    ),
    ({"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}], {"foo": ["bar", ["abc", "def"]]}),
    ({"foo": 1}, [{"op": "copy", "from": "/foo", "path": "/bar"}], {"foo": 1, "bar": 1}),
    (
        {"baz": "qux", "foo": ["a", 2, "c"]},
        [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
        {"baz": "qux", "foo": ["a", 2, "c"]},
    ),
    (
        {"metadata": {"labels": {"a/b": "1", "m~n": "2"}}},
        [
            {"op": "remove", "path": "/metadata/labels/a~1b"},
            {"op": "replace", "path": "/metadata/labels/m~0n", "value": "3"},
        ],
        {"metadata": {"labels": {"m~n": "3"}}},
    ),
    ({"foo": "bar"}, [{"op": "add", "path": "", "value": {"x": 1}}], {"x": 1}),
]


@pytest.mark.parametrize("target, ops, expected", JSON_PATCH_CASES)
def test_json_patch_rfc6902(target, ops, expected):
    assert apply_json_patch(target, ops) == expected


@pytest.mark.parametrize(
    "target, ops",
    [
        ({"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}]),
        ({"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": "qux"}]),
        ({"foo": "bar"}, [{"op": "remove", "path": "/nope"}]),
        ({"foo": "bar"}, [{"op": "replace", "path": "/nope", "value": 1}]),
        ({"foo": [1]}, [{"op": "add", "path": "/foo/5", "value": 2}]),
        ({"foo": "1"}, [{"op": "test", "path": "/foo", "value": 1}]),
    ],
)
def test_json_patch_failures_are_422(target, ops):
    with pytest.raises(PatchError) as err:
        apply_json_patch(target, ops)
    assert err.value.code == 422


def test_json_patch_malformed_is_400_and_atomic():
    with pytest.raises(PatchError) as err:
        apply_json_patch({}, {"op": "add"})
    assert err.value.code == 400
    target = {"a": 1}
    with pytest.raises(PatchError):
        apply_json_patch(target, [{"op": "add", "path": "/b", "value": 2}, {"op": "test", "path": "/a", "value": 5}])
    assert target == {"a": 1}


# -------------------------------------------------------------- server-side apply

CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com", "labels": {"team": "ml"}},
    "spec": {
        "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
        "extendedResourceName": "example.com/gpu",
    },
}
NOW = "2026-11-30T12:00:00Z"


def test_apply_create_records_managed_fields():
    out = server_side_apply(None, CLASS, "kubectl", False, now=NOW)
    assert out["spec"] == CLASS["spec"]
    (entry,) = out["metadata"]["managedFields"]
    assert entry == {
        "manager": "kubectl",
        "operation": "Apply",
        "apiVersion": "resource.k8s.io/v1",
        "time": NOW,
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {"f:labels": {"f:team": {}}},
            "f:spec": {"f:extendedResourceName": {}, "f:selectors": {}},
        },
    }


def test_reapply_same_is_a_no_op_and_dropping_a_field_removes_it():
    live = server_side_apply(None, CLASS, "kubectl", False, now=NOW)
    again = server_side_apply(live, CLASS, "kubectl", False, now="2026-11-30T13:00:00Z")
    assert again == live  # no-op: managedFields timestamps are kept too
    smaller = {**CLASS, "spec": {"selectors": CLASS["spec"]["selectors"]}}
    out = server_side_apply(live, smaller, "kubectl", False, now=NOW)
    assert "extendedResourceName" not in out["spec"]
    assert out["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"] == {"f:selectors": {}}


def test_conflict_with_another_manager_and_force():
    live = server_side_apply(None, CLASS, "helm", False, now=NOW)
    changed = {**CLASS, "spec": {**CLASS["spec"], "extendedResourceName": "example.com/other"}}
    with pytest.raises(ApplyConflict) as err:
        server_side_apply(live, changed, "kubectl", False, now=NOW)
    assert err.value.message == 'Apply failed with 1 conflict: conflict with "helm": .spec.extendedResourceName'
    assert err.value.causes == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "helm"', "field": ".spec.extendedResourceName"}
    ]
    assert err.value.status()["code"] == 409
    forced = server_side_apply(live, changed, "kubectl", True, now=NOW)
    assert forced["spec"]["extendedResourceName"] == "example.com/other"
    owners = {e["manager"]: paths_of(e["fieldsV1"]) for e in forced["metadata"]["managedFields"]}
    assert ("f:spec", "f:extendedResourceName") in owners["kubectl"]
    assert ("f:spec", "f:extendedResourceName") not in owners["helm"]
    # Same value applied by a second manager: shared ownership, no conflict.
    shared = server_side_apply(live, CLASS, "kubectl", False, now=NOW)
    assert {e["manager"] for e in shared["metadata"]["managedFields"]} == {"helm", "kubectl"}


def test_conflict_with_update_manager_names_api_version_and_time():
    created = update_managed_fields(None, {**CLASS, "metadata": {"name": "gpu.example.com"}}, "kubectl-create", now=NOW)
    assert created["metadata"]["managedFields"][0]["operation"] == "Update"
    changed = {**CLASS, "spec": {**CLASS["spec"], "extendedResourceName": "example.com/x"}}
    with pytest.raises(ApplyConflict) as err:
        server_side_apply(created, changed, "kubectl", False, now=NOW)
    assert f'conflict with "kubectl-create" using resource.k8s.io/v1 at {NOW}' in err.value.message


def test_apply_merges_list_map_items_by_key():
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "1"}]},
    }
    live = server_side_apply(None, pod, "one", False, now=NOW)
    other = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "b", "image": "2"}]},
    }
    out = server_side_apply(live, other, "two", False, now=NOW)
    assert [c["name"] for c in out["spec"]["containers"]] == ["a", "b"]
    fs = field_set(other, "Pod")
    assert ("f:spec", "f:containers", 'k:{"name":"b"}') in fs and (
        "f:spec",
        "f:containers",
        'k:{"name":"b"}',
        "f:image",
    ) in fs
    assert fields_v1(fs)["f:spec"]["f:containers"]['k:{"name":"b"}']["."] == {}


def test_update_managed_fields_moves_ownership():
    obj = update_managed_fields(
        None,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}},
        "creator",
        now=NOW,
    )
    new = {**obj, "data": {"a": "2", "b": "3"}}
    update_managed_fields(obj, new, "editor", now=NOW)
    owners = {e["manager"]: paths_of(e["fieldsV1"]) for e in new["metadata"]["managedFields"]}
    assert owners == {"editor": {("f:data", "f:a"), ("f:data", "f:b")}}


def test_apply_to_status_subresource_owns_status_only():
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "d"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
    }
    live = server_side_apply(None, claim, "creator", False, now=NOW)
    status_apply = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "d"},
        "spec": {"devices": {"requests": []}},
        "status": {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]},
    }
    out = server_side_apply(live, status_apply, "scheduler", False, now=NOW, subresource="status")
    assert out["spec"] == claim["spec"]
    assert out["status"]["reservedFor"][0]["uid"] == "u1"
    entry = next(e for e in out["metadata"]["managedFields"] if e["manager"] == "scheduler")
    assert entry["subresource"] == "status" and set(entry["fieldsV1"]) == {"f:status"}
