"""The diagnosis: each finding id from a small hand-written fleet, exactly; none on a healthy fleet; none read from
Events."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest
import yaml
from dragoman.fleet.diagnose import diagnose
from dragoman.fleet.findings import CATALOGUE
from dragoman.fleet.report import check_report, render_text
from fleet_fixtures import (
    GPU_CLASS_EXPR,
    allocated_claim,
    claim,
    device_class,
    dp_fleet,
    dra_daemonset,
    dra_fleet,
    ds_pod,
    event,
    fabric_slice,
    gpu_slice,
    mig_counter_slice,
    model_of,
    node,
    operator_dp_daemonset,
    pod,
    quota,
    shared_slice,
    taint_rule,
    template,
)

DP = operator_dp_daemonset()
DRA = dra_daemonset(pools=["h100-pool"])
READERS = ("allocatable-readers", ("Node", "", "h100-pool-0"))


def N(name):
    return ("Node", "", name)


def P(name, ns="ml"):
    return ("Pod", ns, name)


def base():
    return dp_fleet(6) + dra_fleet(3)


def replace(objs, kind, name, fn):
    out = []
    for o in objs:
        if o["kind"] == kind and o["metadata"]["name"] == name:
            o = copy.deepcopy(o)
            fn(o)
        out.append(o)
    return out


def without(objs, kind, name):
    return [o for o in objs if not (o["kind"] == kind and o["metadata"]["name"] == name)]


def keys(objs):
    return {f.key for f in diagnose(model_of(*objs))}


def _cordon(o):
    o["spec"]["unschedulable"] = True


def _kubelet(version):
    def fn(o):
        o["status"]["nodeInfo"]["kubeletVersion"] = version

    return fn


def _alloc(n):
    def fn(o):
        o["status"]["allocatable"]["nvidia.com/gpu"] = o["status"]["capacity"]["nvidia.com/gpu"] = str(n)

    return fn


def _migration_ann(o):
    o["metadata"]["annotations"]["dragoman.io/migration"] = '{"pool": "l4-pool", "step": "cordon", "state": "running"}'


def _ts(o):
    o["metadata"]["labels"]["nvidia.com/gpu.replicas"] = "4"
    o["status"]["capacity"]["nvidia.com/gpu"] = "16"
    o["status"]["allocatable"]["nvidia.com/gpu"] = "16"


def _not_ready(o):
    o["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    o["status"]["containerStatuses"][0]["ready"] = False


NO_MATCH = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"
ERCS = {
    "resourceClaimName": "b-extended-resources-1",
    "requestMappings": [
        {"containerName": "main", "resourceName": "nvidia.com/gpu", "requestName": "container-0-request-0"}
    ],
}

FORGOTTEN = {
    "type": "PodScheduled",
    "status": "False",
    "reason": "Unschedulable",
    "message": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
}


# ---- v1.37's DRA features (fleet/diagnose/devices.py) ----------------------------------------------------------------

H100_ONLY = {"cloud.google.com/gke-nodepool": "h100-pool"}
A100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"
SHARED = "device.allowMultipleAllocations"


def _claim_pod(name, claim_name, **kw):
    return pod(name, claims=[{"name": "gpu", "resourceClaimName": claim_name}], container_claims=["gpu"], **kw)


def _own_request(cls="gpu.nvidia.com", expr="true", **extra):
    return {"name": "gpu", "exactly": {"deviceClassName": cls, "selectors": [{"cel": {"expression": expr}}], **extra}}


def _result(pool, dev, driver="gpu.nvidia.com", **extra):
    return {"request": "gpu", "driver": driver, "pool": pool, "device": dev, **extra}


def _counters_case():
    held = allocated_claim("mig-a", [_result("h100-pool-0-mig", "gpu-0-mig-1g10gb-0")], request=_own_request())
    return base() + [
        *mig_counter_slice("h100-pool-0", pool="h100-pool-0-mig"),
        held,
        claim("whole", selectors=[A100]),
        _claim_pod("whole-gpu", "whole"),
    ]


def _capacity_case():
    held = allocated_claim(
        "share-a",
        [_result("h100-pool-0-shared", "gpu-shared-0", shareID="s1", consumedCapacity={"memory": "60Gi"})],
        request=_own_request(expr=SHARED),
    )
    want = claim("share-b", selectors=[SHARED])
    want["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {"requests": {"memory": "30Gi"}}
    return base() + [shared_slice("h100-pool-0"), held, want, _claim_pod("share-b", "share-b")]


XPU = "xpu.example.com"
BINDING = {
    "bindingConditions": ["fabric.example.com/attached"],
    "bindingFailureConditions": ["fabric.example.com/attach-failed"],
}


def _binding_case(failed):
    conds = [{"type": "fabric.example.com/attach-failed", "status": "True", "message": "link down"}] if failed else []
    c = allocated_claim(
        "fab",
        [_result("fabric", "xpu-0", driver="fabric.example.com", **BINDING)],
        request={"name": "gpu", "exactly": {"deviceClassName": XPU}},
        reserved_for="fab",
        status_devices=[{"driver": "fabric.example.com", "pool": "fabric", "device": "xpu-0", "conditions": conds}],
    )
    p = _claim_pod("fab", "fab")
    p["status"]["nominatedNodeName"] = "h100-pool-1"
    return base() + [fabric_slice(), device_class(XPU, ["device.driver == 'fabric.example.com'"]), c, p]


def _first_available_case():
    c = claim("fa")
    c["spec"]["devices"]["requests"] = [
        {
            "name": "gpu",
            "firstAvailable": [
                {"name": "h100x9", "deviceClassName": "gpu.nvidia.com", "count": 9},
                {"name": "a100", "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": A100}}]},
            ],
        }
    ]
    return base() + [c, _claim_pod("fa", "fa")]


def _admin_case():
    t = template("monitor")
    t["spec"]["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    p = pod("monitor", claims=[{"name": "gpu", "resourceClaimTemplateName": "monitor"}], container_claims=["gpu"])
    return base() + [t, p]


def _unhealthy_case():
    p = pod("sick", gpus=1, node_name="h100-pool-1", ercs=ERCS | {"resourceClaimName": "sick-extended-resources-1"})
    p["status"]["containerStatuses"] = [
        {
            "name": "main",
            "allocatedResourcesStatus": [
                {
                    "name": "claim:sick-extended-resources-1/container-0-request-0",
                    "resources": [
                        {"resourceID": "gpu.nvidia.com/h100-pool-1/gpu-0", "health": "Unhealthy", "message": "XID 79"}
                    ],
                }
            ],
        }
    ]
    c = claim("sick-extended-resources-1", allocated=[("h100-pool-1", "gpu-0")], reserved_for="sick", bridge_for="sick")
    return base() + [p, c]


def _constraint_case():
    """Two GPUs that must share a uuid: each node has free GPUs enough, no two share one."""
    c = claim("pair", count=2)
    c["spec"]["devices"]["constraints"] = [{"requests": ["gpu"], "matchAttribute": "gpu.nvidia.com/uuid"}]
    return base() + [c, _claim_pod("pair", "pair")]


TIMED_OUT = {
    "type": "PodScheduled",
    "status": "False",
    "reason": "Unschedulable",
    "message": "0/9 nodes are available: 3 timed out trying to allocate devices, 6 Insufficient nvidia.com/gpu.",
}

CASES = {
    "pending-device-taint": (
        lambda: base() + [taint_rule("gpu-maintenance"), pod("tainted", gpus=1, node_selector=H100_ONLY)],
        {("pending-device-taint", P("tainted")), READERS},
    ),
    "device-taint-eviction": (
        lambda: (
            base()
            + [
                taint_rule("drain-h100-0", pool="h100-pool-0", effect="NoExecute", evicting=True),
                allocated_claim(
                    "victim", [_result("h100-pool-0", "gpu-0")], request=_own_request(), reserved_for="victim"
                ),
                _claim_pod("victim", "victim", node_name="h100-pool-0"),
            ]
        ),
        {("device-taint-eviction", ("DeviceTaintRule", "", "drain-h100-0")), READERS},
    ),
    "pending-counters": (_counters_case, {("pending-counters", P("whole-gpu")), READERS}),
    "pending-capacity": (_capacity_case, {("pending-capacity", P("share-b")), READERS}),
    "binding-pending": (lambda: _binding_case(False), {("binding-pending", P("fab")), READERS}),
    "binding-failed": (lambda: _binding_case(True), {("binding-failed", P("fab")), READERS}),
    "pending-first-available": (_first_available_case, {("pending-first-available", P("fa")), READERS}),
    "claim-missing": (lambda: base() + [_claim_pod("orphan", "gone")], {("claim-missing", P("orphan")), READERS}),
    "class-missing": (
        lambda: base() + [claim("nocls", cls="tpu.example.com"), _claim_pod("nocls", "nocls")],
        {("class-missing", P("nocls")), READERS},
    ),
    "admin-access-forbidden": (_admin_case, {("admin-access-forbidden", P("monitor")), READERS}),
    "pending-constraint": (_constraint_case, {("pending-constraint", P("pair")), READERS}),
    "filter-timeout": (
        lambda: base() + [pod("slow", gpus=1) | {"status": {"phase": "Pending", "conditions": [TIMED_OUT]}}],
        {("filter-timeout", P("slow")), READERS},
    ),
    "device-unhealthy": (_unhealthy_case, {("device-unhealthy", P("sick")), READERS}),
    "both-stacks": (
        lambda: replace(base(), "Node", "h100-pool-0", _alloc(8)) + [ds_pod(DP, "h100-pool-0")],
        {("both-stacks", N("h100-pool-0")), ("allocatable-readers", N("h100-pool-1"))},
    ),
    "plugin-flapping": (
        lambda: base() + [ds_pod(DP, "h100-pool-0", restarts=9, crashloop=True)],
        # The crash-looping pod is Running between restarts: both stacks too, as findings.md words it.
        {("plugin-flapping", N("h100-pool-0")), ("both-stacks", N("h100-pool-0")), READERS},
    ),
    "dp-targets-dra-pool": (
        # A node added later by the autoscaler, without the operator's exclusion label.
        lambda: base() + [node("h100-pool-9", "h100-pool"), gpu_slice("h100-pool-9"), ds_pod(DRA, "h100-pool-9")],
        {("dp-targets-dra-pool", ("DaemonSet", "gpu-operator", "nvidia-device-plugin-daemonset")), READERS},
    ),
    "driver-targets-dp-pool": (
        lambda: without(base(), "DaemonSet", "dra-driver-nvidia-gpu-kubelet-plugin") + [dra_daemonset()],
        {
            ("driver-targets-dp-pool", ("DaemonSet", "dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu-kubelet-plugin")),
            READERS,
        },
    ),
    "no-slices": (
        lambda: without(base(), "ResourceSlice", "h100-pool-2-gpu.nvidia.com-g1"),
        {("no-slices", N("h100-pool-2")), READERS},
    ),
    "kubelet-too-old-error": (
        lambda: replace(base(), "Node", "h100-pool-2", _kubelet("v1.35.6")),
        {("kubelet-too-old", N("h100-pool-2")), ("kubelet-skew", N("h100-pool-2")), READERS},
    ),
    "kubelet-too-old-warning": (
        lambda: replace(replace(base(), "Node", "l4-pool-1", _kubelet("v1.35.6")), "Node", "l4-pool-0", _migration_ann),
        {("kubelet-too-old", N("l4-pool-1")), ("kubelet-skew", N("l4-pool-1")), READERS},
    ),
    "sharing-capacity-change": (
        lambda: replace(base(), "Node", "l4-pool-3", _ts),
        {("sharing-capacity-change", N("l4-pool-3")), READERS},
    ),
    "migration-optional": (
        lambda: dp_fleet(2, pool="t4-pool", product="Tesla-T4"),
        {("migration-optional", N("t4-pool-0"))},
    ),
    "duplicate-mapping": (
        lambda: base() + [device_class("legacy-gpu", [GPU_CLASS_EXPR], "nvidia.com/gpu", "2025-01-01T00:00:00Z")],
        {("duplicate-mapping", ("DeviceClass", "", "gpu.nvidia.com")), READERS},
    ),
    "class-too-broad": (
        lambda: (
            without(base(), "DeviceClass", "gpu.nvidia.com")
            + [device_class("gpu.nvidia.com", ["device.driver == 'gpu.nvidia.com'"], "nvidia.com/gpu")]
        ),
        {("class-too-broad", ("DeviceClass", "", "gpu.nvidia.com")), READERS},
    ),
    "selector-no-match": (
        lambda: base() + [template("a100", selectors=[NO_MATCH])],
        {("selector-no-match", ("ResourceClaimTemplate", "ml", "a100")), READERS},
    ),
    "selector-runtime-error": (
        lambda: (
            base()
            + [
                device_class("fast", ["device.attributes['gpu.nvidia.com'].clockMHz > 1500"]),
                template("fast", cls="fast"),
            ]
        ),
        {("selector-runtime-error", ("DeviceClass", "", "fast")), READERS},
    ),
    "stale-attribute": (
        lambda: (
            base()
            + [
                device_class(
                    "first-gpu", ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].index == 0"]
                ),
                template("first", cls="first-gpu"),
            ]
        ),
        # Unguarded, the retired attribute is a runtime error as well.
        {
            ("stale-attribute", ("DeviceClass", "", "first-gpu")),
            ("selector-runtime-error", ("DeviceClass", "", "first-gpu")),
            READERS,
        },
    ),
    "stale-attribute-guarded": (
        lambda: (
            base()
            + [
                device_class(
                    "first-gpu",
                    [
                        (
                            "'index' in device.attributes['gpu.nvidia.com'] && "
                            "device.attributes['gpu.nvidia.com'].index == 0"
                        )
                    ],
                ),
                template("first", cls="first-gpu"),
            ]
        ),
        {("stale-attribute", ("DeviceClass", "", "first-gpu")), READERS},
    ),
    "claim-equivalent-to-limits": (
        lambda: base() + [template("two-gpus", count=2)],
        {("claim-equivalent-to-limits", ("ResourceClaimTemplate", "ml", "two-gpus")), READERS},
    ),
    "double-request": (
        lambda: (
            base()
            + [
                template(
                    "h100", selectors=["device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"]
                ),
                pod(
                    "double",
                    gpus=1,
                    node_name="l4-pool-0",
                    claims=[{"name": "g", "resourceClaimTemplateName": "h100"}],
                    container_claims=["g"],
                ),
            ]
        ),
        {("double-request", P("double")), READERS},
    ),
    "nodeselector-steering": (
        lambda: (
            base()
            + [pod("steer", gpus=1, node_name="l4-pool-0", node_selector={"nvidia.com/gpu.product": "NVIDIA-L4"})]
        ),
        {("nodeselector-steering", P("steer")), READERS},
    ),
    "quota-claims-now-count": (
        lambda: (
            base()
            + [quota("gpus", "ml", {"requests.nvidia.com/gpu": "8"}), claim("notebook", selectors=[GPU_CLASS_EXPR])]
        ),
        {("quota-claims-now-count", ("ResourceQuota", "ml", "gpus")), READERS},
    ),
    "quota-blocks-claim": (
        lambda: (
            dra_fleet(2)
            + [
                quota(
                    "claims",
                    "ml",
                    {"count/resourceclaims.resource.k8s.io": "2"},
                    {"count/resourceclaims.resource.k8s.io": "2"},
                ),
                pod("blocked", gpus=1),
            ]
        ),
        {("quota-blocks-claim", P("blocked")), READERS},
    ),
    "pending-insufficient": (
        lambda: base() + [pod("huge", gpus=12)],
        {("pending-insufficient", P("huge")), READERS},
    ),
    "pending-unmapped": (
        lambda: (
            base()
            + [
                pod("fpga", gpus=0)
                | {"spec": {"containers": [{"name": "main", "resources": {"limits": {"example.com/fpga": "1"}}}]}}
            ]
        ),
        {("pending-unmapped", P("fpga")), READERS},
    ),
    "pending-selector": (
        lambda: (
            base()
            + [
                template("a100", selectors=[NO_MATCH]),
                pod("wants-a100", claims=[{"name": "g", "resourceClaimTemplateName": "a100"}], container_claims=["g"]),
            ]
        ),
        {
            ("pending-selector", P("wants-a100")),
            ("selector-no-match", ("ResourceClaimTemplate", "ml", "a100")),
            READERS,
        },
    ),
    "pending-cordoned": (
        lambda: [replace([o], "Node", o["metadata"]["name"], _cordon)[0] for o in dp_fleet(6)] + [pod("waits", gpus=1)],
        {("pending-cordoned", P("waits"))},
    ),
    "failed-admission": (
        lambda: (
            base()
            + [pod("rejected", gpus=1, node_name="h100-pool-1", phase="Failed", reason="UnexpectedAdmissionError")]
        ),
        {("failed-admission", P("rejected")), READERS},
    ),
    "prepare-failed": (
        lambda: (
            replace(base(), "Pod", "dra-driver-nvidia-gpu-kubelet-plugin-h100-pool-1", _not_ready)
            + [
                pod("b", gpus=1, node_name="h100-pool-1", phase="Pending", ercs=ERCS),
                claim("b-extended-resources-1", allocated=[("h100-pool-1", "gpu-0")], reserved_for="b", bridge_for="b"),
            ]
        ),
        {("prepare-failed", P("b")), READERS},
    ),
    "running-without-gpu": (
        lambda: (
            replace(base(), "Node", "h100-pool-1", _kubelet("v1.35.6"))
            + [pod("nogpu", gpus=1, node_name="h100-pool-1")]
        ),
        {
            ("running-without-gpu", P("nogpu")),
            ("kubelet-too-old", N("h100-pool-1")),
            ("kubelet-skew", N("h100-pool-1")),
            READERS,
        },
    ),
    "stale-bridge-claim": (
        lambda: (
            base()
            + [
                pod("retry", gpus=1),
                claim("retry-extended-resources-2", allocated=[("h100-pool-2", "gpu-0")], bridge_for="retry"),
            ]
        ),
        {("stale-bridge-claim", ("ResourceClaim", "ml", "retry-extended-resources-2")), READERS},
    ),
}


def test_every_catalogue_id_has_a_case():
    covered = {fid for _, expected in CASES.values() for fid, _ in expected}
    assert covered == set(CATALOGUE)


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_case_is_found_exactly(case):
    build, expected = CASES[case]
    assert keys(build()) == expected


def test_a_noexecute_taint_evicts_as_the_holders_tolerations_say():
    """The eviction controller reads the tolerations the scheduler copied into the allocation result: none, the pod
    goes (device-taint-eviction); tolerationSeconds, it goes that long after timeAdded (said in the evidence); a
    NoExecute toleration without seconds keeps it for ever (no finding)."""

    def fleet(tolerations):
        extra = {"tolerations": tolerations} if tolerations is not None else {}
        return base() + [
            taint_rule("xid-h100-0", pool="h100-pool-0", device="gpu-0", key="gpu.nvidia.com/xid", effect="NoExecute"),
            allocated_claim(
                "nb", [_result("h100-pool-0", "gpu-0", **extra)], request=_own_request(), reserved_for="nb"
            ),
            _claim_pod("nb", "nb", node_name="h100-pool-0"),
        ]

    def evictions(objs):
        return [f for f in diagnose(model_of(*objs)) if f.id == "device-taint-eviction"]

    (now,) = evictions(fleet(None))
    assert any(o[0] == "Pod" and o[2] == "nb" for o in now.objects)
    assert not any("tolerates" in e for e in now.evidence)
    grace = {"key": "gpu.nvidia.com/xid", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600}
    (later,) = evictions(fleet([grace]))
    assert any(
        "tolerates gpu.nvidia.com/xid:NoExecute for 600 s from the taint's timeAdded (2026-11-30T07:00:00Z)" in e
        for e in later.evidence
    ), later.evidence
    forever = {k: v for k, v in grace.items() if k != "tolerationSeconds"}
    assert evictions(fleet([forever])) == []
    # A toleration of another key tolerates nothing here.
    other = dict(grace, key="example.com/other")
    (still,) = evictions(fleet([other]))
    assert not any("tolerates" in e for e in still.evidence)


def test_admin_access_forbidden_quotes_the_api_servers_refusal_without_what_changes_per_retry():
    """The resourceclaim controller's Event, as kube-controller-manager v1.37.2 writes it: the claim's generated name
    and the Event's count change at each retry, the API server's reason does not."""
    objs = _admin_case()
    p = next(o for o in objs if o["kind"] == "Pod" and o["metadata"]["name"] == "monitor")
    said = (
        "spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the "
        "`resource.kubernetes.io/admin-access: true` label on the containing namespace"
    )
    ev = event(
        "monitor.1",
        p,
        "FailedResourceClaimCreation",
        f"(combined from similar events): PodResourceClaim gpu: create ResourceClaim : ResourceClaim.resource.k8s.io "
        f'"monitor-gpu-q76mp" is invalid: {said}',
    )
    ev["source"] = {"component": "resource_claim"}
    (f,) = [f for f in diagnose(model_of(*objs, ev)) if f.id == "admin-access-forbidden"]
    line = f"event FailedResourceClaimCreation from resource_claim: the API server refused pod claim gpu: {said}"
    assert line in f.evidence
    assert not any("q76mp" in e or "(x3)" in e for e in f.evidence)


def test_healthy_fleet_has_no_finding_but_the_accounting_note():
    assert keys(base()) == {READERS}
    assert keys(dp_fleet(6)) == set()
    # A bridged pod and a pod served by the device plugin are both fine.
    bridged = pod("b", gpus=1, node_name="h100-pool-1", ercs=ERCS)
    c = claim("b-extended-resources-1", allocated=[("h100-pool-1", "gpu-0")], reserved_for="b", bridge_for="b")
    assert keys(base() + [bridged, c, pod("old-style", gpus=2, node_name="l4-pool-2")]) == {READERS}


def test_findings_come_from_state_not_from_events():
    objs = CASES["pending-insufficient"][0]() + CASES["running-without-gpu"][0]()
    huge = next(o for o in objs if o["metadata"]["name"] == "huge")
    evs = [event("e1", huge, "FailedScheduling", "0/10 nodes are available: 10 Insufficient nvidia.com/gpu.")]
    with_events = diagnose(model_of(*objs, *evs))
    without_events = diagnose(model_of(*objs))
    assert {f.key for f in with_events} == {f.key for f in without_events}
    f = next(f for f in with_events if f.id == "pending-insufficient")
    assert any("FailedScheduling" in e for e in f.evidence)
    assert not any(
        "FailedScheduling" in e for e in next(x for x in without_events if x.id == "pending-insufficient").evidence
    )


def test_duplicate_mapping_fix_says_to_update_the_winner_after_removing_the_others():
    """kube-scheduler's extended-resource cache (v1.37.2) drops the name when any class naming it is deleted and
    promotes no other: the fix must not stop at 'delete the others'."""
    objs = base() + [device_class("legacy-gpu", [GPU_CLASS_EXPR], "nvidia.com/gpu", "2025-01-01T00:00:00Z")]
    f = next(f for f in diagnose(model_of(*objs)) if f.id == "duplicate-mapping")
    assert "then update gpu.nvidia.com" in f.fix and "restarts" in f.fix


def test_a_name_the_scheduler_forgot_is_pending_unmapped_with_the_way_out():
    """The pod fits through DRA by the classes that exist, yet its PodScheduled condition (state) says the scheduler
    found Insufficient nvidia.com/gpu: v1.37's class cache lost the name when a class naming it was deleted. The
    diagnosis says so and how to get the name back, instead of calling the pod merely waiting."""
    objs = base() + [pod("forgot", gpus=1) | {"status": {"phase": "Pending", "conditions": [FORGOTTEN]}}]
    found = [f for f in diagnose(model_of(*objs)) if f.objects and f.objects[0] == P("forgot")]
    assert [f.id for f in found] == ["pending-unmapped"]
    f = found[0]
    assert ("DeviceClass", "", "gpu.nvidia.com") in f.objects
    assert "update it" in f.fix and "restart kube-scheduler" in f.fix
    assert any("Insufficient nvidia.com/gpu" in e for e in f.evidence)
    # Without the scheduler's word the pod simply fits: no finding about it.
    plain = base() + [pod("forgot", gpus=1)]
    assert not [f for f in diagnose(model_of(*plain)) if f.objects and f.objects[0] == P("forgot")]


def test_pending_insufficient_gives_the_counts():
    objs = base() + [pod("huge", gpus=12)]
    f = next(f for f in diagnose(model_of(*objs)) if f.id == "pending-insufficient")
    # Six L4 nodes with 4 each through the device plugin; H100 nodes are DRA-served through the chart's class (8 each).
    assert any("requested 12 nvidia.com/gpu; largest free block 8; free total 48" in e for e in f.evidence), f.evidence


def test_kubelet_too_old_severity_depends_on_the_pool():
    err = next(f for f in diagnose(model_of(*CASES["kubelet-too-old-error"][0]())) if f.id == "kubelet-too-old")
    warn = next(f for f in diagnose(model_of(*CASES["kubelet-too-old-warning"][0]())) if f.id == "kubelet-too-old")
    assert (err.severity, warn.severity) == ("error", "warning")


def test_finding_shape_and_fix_adapted():
    f = next(f for f in diagnose(model_of(*CASES["both-stacks"][0]())) if f.id == "both-stacks")
    j = f.to_json()
    assert j["severity"] == "error" and j["pool"] == "h100-pool"
    assert {"kind": "Node", "namespace": None, "name": "h100-pool-0"} in j["objects"]
    assert "h100-pool-0" in j["fix"] and "{" not in j["fix"]
    assert any("ResourceSlice" in e for e in j["evidence"]) and any(
        "allocatable" in e or "Running" in e for e in j["evidence"]
    )


# ---- the demo scenario: the diagnosis equals exactly the cases it marks -------------------------------------------

DEMO_YAML = pathlib.Path(__file__).resolve().parents[2] / "sim" / "scenarios" / "demo.yaml"
MARK = "dragoman.io/demo-finding"


@pytest.fixture(scope="module")
def demo_objects():
    if DEMO_YAML.exists():
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        items = []
        for doc in yaml.load_all(DEMO_YAML.read_text(), Loader=loader):
            if isinstance(doc, dict) and doc.get("kind", "").endswith("List"):
                items.extend(doc.get("items") or [])
            elif isinstance(doc, dict):
                items.append(doc)
        return items
    # Until the pinned file is written, its builder gives the same objects.
    from dragoman.sim.scenarios import demo_build

    return demo_build.build()


def _marks(objs) -> set:
    out = set()
    for o in objs:
        meta = o.get("metadata") or {}
        for fid in ((meta.get("annotations") or {}).get(MARK) or "").split(","):
            if fid:
                out.add((fid, (o["kind"], meta.get("namespace") or "", meta["name"])))
    return out


def _assert_matches_marks(findings, marks):
    """Every mark is covered by a finding of that id naming the object; every finding's first object is marked."""
    covered = {(f.id, obj) for f in findings for obj in f.objects}
    missed = sorted(marks - covered)
    extra = sorted((f.id, f.objects[0], f.summary) for f in findings if (f.id, f.objects[0]) not in marks)
    assert not missed and not extra, f"missed: {missed}\nextra: {extra}"


def test_demo_diagnosis_equals_its_marks(demo_objects):
    marks = _marks(demo_objects)
    assert {fid for fid, _ in marks} == set(CATALOGUE)
    model = model_of(*demo_objects)
    _assert_matches_marks(diagnose(model), marks)


def test_demo_diagnosis_is_the_same_without_events(demo_objects):
    marks = _marks(demo_objects)
    no_events = [o for o in demo_objects if o["kind"] != "Event"]
    assert len(no_events) < len(demo_objects)
    with_ev = diagnose(model_of(*demo_objects))
    without_ev = diagnose(model_of(*no_events))
    _assert_matches_marks(without_ev, marks)
    assert [(f.id, f.objects) for f in with_ev] == [(f.id, f.objects) for f in without_ev]


def test_demo_diagnosis_never_reads_the_marks(demo_objects):
    stripped = copy.deepcopy(demo_objects)
    for o in stripped:
        (o.get("metadata") or {}).get("annotations", {}).pop(MARK, None)
    assert [(f.id, f.objects) for f in diagnose(model_of(*stripped))] == [
        (f.id, f.objects) for f in diagnose(model_of(*demo_objects))
    ]


# ---- what `dragoman check` prints -------------------------------------------------------------------------------


def test_check_json_has_schema_pools_and_findings(demo_objects):
    model = model_of(*demo_objects)
    findings = diagnose(model)
    doc = check_report(model, findings)
    json.dumps(doc)  # serialisable as is
    assert doc["schemaVersion"] == 1 and doc["poolLabel"] == "cloud.google.com/gke-nodepool"
    assert doc["summary"]["errors"] == sum(1 for f in findings if f.severity == "error") > 0
    pools = {p["name"]: p for p in doc["pools"]}
    assert pools["h100-dra"]["target"] == "dra" and pools["a100-train"]["ownership"] == "device-plugin"
    assert set(doc["findings"][0]) == {"id", "severity", "title", "pool", "objects", "summary", "evidence", "fix"}
    assert [f["severity"] for f in doc["findings"]] == sorted(
        (f["severity"] for f in doc["findings"]), key=["error", "warning", "info"].index
    )


def test_check_text_fits_80_columns_and_names_every_finding(demo_objects):
    model = model_of(*demo_objects)
    findings = diagnose(model)
    text = render_text(model, findings, width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    for f in findings:
        assert f.id in text
    assert "a100-serve" in text and "mixed (" in text


def test_check_text_on_a_healthy_fleet_says_so():
    model = model_of(*dp_fleet(6))
    assert "Nothing to report" in render_text(model, diagnose(model), width=80)


def test_replicas_of_one_workload_make_one_finding():
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "big-7f9",
            "namespace": "ml",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "big", "uid": "d", "controller": True}
            ],
        },
    }
    pods = [pod(f"big-7f9-{i}", gpus=12, owner=("ReplicaSet", "big-7f9")) for i in range(3)]
    found = [f for f in diagnose(model_of(*base(), rs, *pods)) if f.id == "pending-insufficient"]
    assert len(found) == 1
    pods = [P("big-7f9-0"), P("big-7f9-1"), P("big-7f9-2")]
    # The pods, the eligible nodes the fix names (issue 30: linked), then the owner.
    assert found[0].objects[:3] == pods and found[0].objects[-1] == ("Deployment", "ml", "big")
    assert all(o[0] == "Node" for o in found[0].objects[3:-1]) and len(found[0].objects) > 4
    assert found[0].summary.endswith("(and 2 more pods of Deployment big)")


def test_device_plugin_node_added_to_a_dra_pool_is_targeted_unless_the_pool_is_migrating():
    stray = [node("h100-pool-9", "h100-pool", alloc=8), ds_pod(DP, "h100-pool-9")]
    assert ("dp-targets-dra-pool", ("DaemonSet", "gpu-operator", "nvidia-device-plugin-daemonset")) in keys(
        base() + stray
    )
    migrating = replace(
        base(),
        "Node",
        "h100-pool-0",
        lambda o: o["metadata"]["annotations"].update(
            {"dragoman.io/migration": '{"pool": "h100-pool", "step": "scope-driver", "state": "running"}'}
        ),
    )
    assert not any(k[0] == "dp-targets-dra-pool" for k in keys(migrating + stray))


def test_a_held_operator_lock_makes_old_kubelets_a_warning_before_migrating():
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "dragoman-pool-l4-pool", "namespace": "kube-system"},
        "spec": {
            "holderIdentity": "sre@laptop",
            "leaseDurationSeconds": 60,
            "renewTime": "2026-11-30T08:00:00.000000Z",
        },
    }
    objs = replace(base(), "Node", "l4-pool-1", _kubelet("v1.35.6")) + [lease]
    found = [f for f in diagnose(model_of(*objs)) if f.id == "kubelet-too-old"]
    assert [(f.severity, f.objects[0]) for f in found] == [("warning", N("l4-pool-1"))]
    released = copy.deepcopy(lease)
    released["spec"]["holderIdentity"] = ""
    assert not [f for f in diagnose(model_of(*objs[:-1], released)) if f.id == "kubelet-too-old"]


def test_pods_sharing_parts_as_projections_do_are_each_diagnosed_and_a_change_is_seen_next_run():
    """A live store's projections share a template's containers and nodeSelector between pods, and the diagnosis
    computes each shared part once per run (Context.extended, Context.steered): every pod still gets its own findings,
    and a pod that changes to other parts is judged on them in the next run, not on what the last run remembered."""
    from fleet_fixtures import change

    objs = replace(base(), "Node", "h100-pool-1", _kubelet("v1.35.6"))
    gpu_a = pod("gpu-a", gpus=1, node_name="h100-pool-1")
    gpu_b = pod("gpu-b", gpus=1, node_name="h100-pool-1")
    gpu_b["spec"]["containers"] = gpu_a["spec"]["containers"]  # one list, as the LIST decoder shares it
    cpu_a = pod("cpu-a", node_name="h100-pool-1")
    cpu_b = pod("cpu-b", node_name="h100-pool-1")
    cpu_b["spec"]["containers"] = cpu_a["spec"]["containers"]
    steer = {"nvidia.com/gpu.product": "NVIDIA-L4"}
    st_a = pod("steer-a", gpus=1, node_name="l4-pool-0", node_selector=steer)
    st_b = pod("steer-b", gpus=1, node_name="l4-pool-1")
    st_b["spec"]["nodeSelector"] = st_a["spec"]["nodeSelector"]
    m = model_of(*objs, gpu_a, gpu_b, cpu_a, cpu_b, st_a, st_b)

    def by_id(fid):
        return {f.objects[0] for f in diagnose(m) if f.id == fid}

    assert by_id("running-without-gpu") == {P("gpu-a"), P("gpu-b")}
    assert by_id("nodeselector-steering") == {P("steer-a"), P("steer-b")}

    # cpu-b now asks for a GPU through a list of its own; steer-b drops its selector; gpu-a's shared list stays.
    new_cpu_b = copy.deepcopy(cpu_b)
    new_cpu_b["spec"]["containers"] = pod("x", gpus=2)["spec"]["containers"]
    new_st_b = copy.deepcopy(st_b)
    del new_st_b["spec"]["nodeSelector"]
    m.apply([change(new_cpu_b, old=cpu_b), change(new_st_b, old=st_b)])
    assert by_id("running-without-gpu") == {P("gpu-a"), P("gpu-b"), P("cpu-b")}
    assert by_id("nodeselector-steering") == {P("steer-a")}


def test_evidence_reads_both_event_shapes_count_and_order():
    """kube-scheduler writes through events.k8s.io/v1: the core view has no count or lastTimestamp, its repeats are
    in `series`. The evidence counts them from the series and orders the events by when each was last seen."""
    objs = CASES["pending-insufficient"][0]()
    huge = next(o for o in objs if o["metadata"]["name"] == "huge")
    core = {**event("e-core", huge, "FailedCreate", "older, counted by the core recorder"), "count": 2}
    core["lastTimestamp"] = "2026-01-02T03:04:10Z"
    series = {k: v for k, v in event("e-v1", huge, "FailedScheduling", "0/10 nodes are available").items()}
    del series["count"]
    series.update(
        source={},
        firstTimestamp=None,
        lastTimestamp=None,
        eventTime="2026-01-02T03:04:00.123456Z",
        series={"count": 5, "lastObservedTime": "2026-01-02T03:04:20.000001Z"},
        reportingComponent="default-scheduler",
        action="Scheduling",
    )
    f = next(f for f in diagnose(model_of(*objs, series, core)) if f.id == "pending-insufficient")
    evidence = [e for e in f.evidence if e.startswith("event ")]
    # The series event was last seen after the core one although its eventTime is earlier: it comes last.
    assert evidence == [
        "event FailedCreate (x2): older, counted by the core recorder",
        "event FailedScheduling (x5): 0/10 nodes are available",
    ]


def test_a_snapshot_of_the_events_k8s_io_view_reads_like_the_core_event():
    objs = CASES["pending-insufficient"][0]()
    huge = next(o for o in objs if o["metadata"]["name"] == "huge")
    core = event("e-core", huge, "FailedCreate", "core")
    view = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": core["metadata"],
        "regarding": core["involvedObject"],
        "reason": "FailedCreate",
        "note": "through the view",
        "type": "Warning",
        "deprecatedCount": 4,
        "deprecatedLastTimestamp": "2026-01-02T03:04:10Z",
    }
    f = next(f for f in diagnose(model_of(*objs, view)) if f.id == "pending-insufficient")
    assert "event FailedCreate (x4): through the view" in f.evidence


def _edge_pods(owned: bool = False) -> list[dict]:
    """Pods at the edges of what Context.pod_groups leaves out: CPU pods a finding still names, terminal pods a finding
    must not name, and pods sharing parts (as a live store's projections do) with pods of another phase. `owned`: the
    CPU pods belong to a ReplicaSet, so a live store keeps them as projections."""
    steer = {"nvidia.com/gpu.product": "NVIDIA-L4"}
    rs = ("ReplicaSet", "web-7d4f") if owned else None
    out = [
        pod("cpu-running", node_name="l4-pool-0", owner=rs),  # left out: nothing to say
        pod("cpu-oom", node_name="l4-pool-1", phase="Failed", reason="OutOfcpu", owner=rs),  # failed-admission
        pod("cpu-steer", node_name="l4-pool-2", node_selector=steer, owner=rs),  # a CPU pod picking a GPU model
        pod("gpu-done", gpus=1, node_name="l4-pool-0", phase="Succeeded", node_selector=steer),  # terminal: none
        pod("gpu-failed-steer", gpus=1, node_name="l4-pool-0", phase="Failed", node_selector=steer),
        pod("gpu-bridged", gpus=1, node_name="h100-pool-0", ercs=ERCS),  # Running through the bridge
        pod("gpu-nogpu", gpus=1, node_name="h100-pool-1"),  # running-without-gpu
        pod("cpu-pending", owner=rs),  # unscheduled, asks for nothing
        pod("gpu-pending", gpus=1),
    ]
    by = {p["metadata"]["name"]: p for p in out}
    # One containers list for a running CPU pod and a pending one, one nodeSelector for a Failed pod and a running one.
    by["cpu-pending"]["spec"]["containers"] = by["cpu-running"]["spec"]["containers"]
    by["cpu-steer"]["spec"]["nodeSelector"] = by["gpu-failed-steer"]["spec"]["nodeSelector"]
    by["gpu-done"]["spec"]["containers"] = by["gpu-nogpu"]["spec"]["containers"]
    return out


def _as_seen(findings):
    return [(f.id, f.objects, f.summary, f.evidence, f.pool) for f in findings]


def _as_listed(objs: list[dict]) -> list[dict]:
    """The objects as a live store holds them: pods through the LIST decoder (projections for those it may drop fields
    of, sharing each distinct part), the rest as decoded JSON."""
    from dragoman.fleet.projection import PodListDecoder

    pods = [o for o in objs if o["kind"] == "Pod"]
    page = json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": pods}).encode()
    listed = PodListDecoder()(page)["items"]
    return [o for o in json.loads(json.dumps(objs)) if o["kind"] != "Pod"] + listed


@pytest.mark.parametrize("case", [*CASES, "edges", "edges-listed"])
def test_the_pod_rules_skip_only_pods_they_have_nothing_to_say_about(case):
    """Context.pod_groups leaves most pods out of the pod rules in one pass: each rule over its group gives exactly
    what it gives over every pod in key order (the rule's own definition), on every catalogue case and on pods at the
    edges of what is left out, held whole or, as a live store holds CPU pods of a workload, as projections (whose
    requests the pass does not look up)."""
    from dragoman.fleet.diagnose.context import Context, steered_product
    from dragoman.fleet.diagnose.pods import pod_findings, pods
    from dragoman.fleet.diagnose.selectors import pod_shape_findings, pod_shapes
    from dragoman.fleet.model import pod_terminal
    from dragoman.fleet.projection import Projection

    if case.startswith("edges"):
        objs = base() + _edge_pods(owned=case == "edges-listed")
    else:
        objs = CASES[case][0]()
    if case == "edges-listed":
        whole = _as_seen(diagnose(model_of(*objs)))
        objs = _as_listed(objs)
        projected = {o["metadata"]["name"] for o in objs if isinstance(o, Projection)}
        assert {"cpu-running", "cpu-oom", "cpu-steer", "cpu-pending"} <= projected
        assert _as_seen(diagnose(model_of(*objs))) == whole
    m = model_of(*objs)
    every = sorted(m.objects["Pod"].items())
    live = [(pk, p) for pk, p in every if not pod_terminal(p)]
    ctx, plain = Context(m), Context(m)
    assert _as_seen(pods(ctx)) == _as_seen(f for pk, p in every for f in pod_findings(plain, pk, p))
    assert _as_seen(pod_shapes(ctx)) == _as_seen(
        f for pk, p in live for f in pod_shape_findings(plain, pk, p, steered_product(p["spec"]))
    )
    assert ctx.pod_groups().steered_products == {steered_product(p["spec"]) for _, p in live} - {None}
    if case.startswith("edges"):
        named = {(f.id, f.objects[0][2]) for f in diagnose(m)}
        assert {
            ("failed-admission", "cpu-oom"),
            ("nodeselector-steering", "cpu-steer"),
            ("running-without-gpu", "gpu-nogpu"),
        } <= named
        assert not {n for _, n in named} & {"gpu-done", "gpu-failed-steer", "cpu-running", "cpu-pending"}
        assert len(ctx.pod_groups().examined) < len(every)  # something was left out


def test_cannot_allocate_all_claims_is_explained_per_node_by_the_allocator():
    """The scheduler says only "cannot allocate all claims"; the finding says, node by node, what the allocator
    (fleet/k8s/allocator.py) excluded: here the whole A100 blocked by the counter set a MIG claim uses."""
    (f,) = [f for f in diagnose(model_of(*_counters_case())) if f.id == "pending-counters"]
    (line,) = [e for e in f.evidence if e.startswith("node h100-pool-0:")]
    assert "ml/whole gpu: 0 of 1 device(s) usable" in line and "1 counters" in line
    taint = next(f for f in diagnose(model_of(*CASES["pending-device-taint"][0]())) if f.id == "pending-device-taint")
    assert any(e.startswith("node h100-pool-") and "8 taint" in e for e in taint.evidence)


def test_a_tainted_gpu_is_not_free_and_the_diagnosis_does_not_stop_at_the_old_count():
    """By the old count (devices not in a claim) the pod fits; a NoSchedule rule over the pool's GPUs makes the
    bridged pod wait, and the diagnosis says why instead of 'fits, should be placed soon'."""
    objs = base() + [taint_rule("gpu-maintenance"), pod("tainted", gpus=1, node_selector=H100_ONLY)]
    m = model_of(*objs)
    assert sum(v.devices_free for v in m.nodes()) == 0
    assert [f.id for f in diagnose(m) if f.objects[0] == P("tainted")] == ["pending-device-taint"]


def test_a_pod_holding_a_device_plugin_gpu_does_not_run_without_it():
    """A real kubelet v1.37.2 (tests/controlplane/test_real_gpu_node.py): a pod admitted while the device plugin served
    the node keeps the GPU the device manager gave it after the plugin crashes, and says so in its container's
    allocatedResourcesStatus; allocatable 0 on a DRA node does not make it a pod without its GPU."""
    held = pod("held", gpus=1, node_name="h100-pool-1")
    held["status"]["containerStatuses"] = [
        {
            "name": held["spec"]["containers"][0]["name"],
            "allocatedResourcesStatus": [
                {"name": "nvidia.com/gpu", "resources": [{"resourceID": "GPU-1234", "health": "Healthy"}]}
            ],
        }
    ]
    assert "running-without-gpu" not in {fid for fid, _ in keys(base() + [held])}
    # A claim's entry is not the device plugin's: the pod without its GPU is still found.
    held["status"]["containerStatuses"][0]["allocatedResourcesStatus"][0]["name"] = "claim:x/y"
    assert ("running-without-gpu", P("held")) in keys(base() + [held])


def test_a_bridged_pod_on_a_kubelet_without_the_bridge_runs_without_its_gpu():
    """What the real kubelet v1.35.4 does (tests/controlplane/test_real_kubelets_demo.py): it admits a pod the
    scheduler placed through DRA and runs it without the GPU, its claim never prepared. The pod's status does carry
    extendedResourceClaimStatus (the scheduler writes it), so that is no sign of a bridge-less kubelet."""
    objs = replace(base(), "Node", "h100-pool-1", _kubelet("v1.35.6")) + [
        pod("b", gpus=1, node_name="h100-pool-1", ercs=ERCS),
        claim("b-extended-resources-1", allocated=[("h100-pool-1", "gpu-0")], reserved_for="b", bridge_for="b"),
    ]
    found = [f for f in diagnose(model_of(*objs)) if f.id == "running-without-gpu"]
    assert [f.objects[0] for f in found] == [P("b")]
    assert "a kubelet without the bridge never prepares that claim" in found[0].evidence[0]
    # The same pod on a kubelet with the bridge has its GPU.
    fine = base() + objs[len(base()) :]
    assert not [f for f in diagnose(model_of(*fine)) if f.id == "running-without-gpu"]


def test_device_health_is_read_only_from_pods_a_claim_is_for_and_only_when_some_pod_reports_it():
    """device-unhealthy reads the kubelet's allocatedResourcesStatus of the pods claims are reserved for: a fleet
    where no pod reports device health has nothing to say (no claim is read), a reporting pod no claim is for is not
    read either, and one reporting pod among many that do not is found."""
    from dragoman.fleet.diagnose import Context
    from dragoman.fleet.diagnose.devices import health

    def unhealthy(objs):
        return [f.objects[0] for f in health(Context(model_of(*objs)))]

    case = _unhealthy_case()
    sick = next(o for o in case if o["kind"] == "Pod" and o["metadata"]["name"] == "sick")
    quiet = copy.deepcopy(sick)
    quiet["status"]["containerStatuses"][0].pop("allocatedResourcesStatus")
    others = [pod(f"other-{i}", gpus=1, node_name="h100-pool-1") for i in range(5)]
    assert unhealthy([o for o in case if o is not sick] + [quiet] + others) == []
    assert unhealthy(case + others) == [("Pod", sick["metadata"]["namespace"], "sick")]
    unclaimed = [o for o in case if o["kind"] != "ResourceClaim"]
    assert unhealthy(unclaimed + others) == []


def test_the_pod_groups_are_what_steered_product_and_the_requests_say_of_each_pod():
    """Context.pod_groups reads each pod once with its memos inline and skips steered_product for a pod without
    affinity: on a table of pods (phases, nodes, bridge status, nodeSelector and affinity on the GFD product or not,
    claims) its groups are those the rule's own functions give pod by pod."""
    import itertools

    from dragoman.fleet.diagnose import Context
    from dragoman.fleet.diagnose.context import steered_product
    from dragoman.fleet.model import GFD_PRODUCT, pod_extended_requests

    affinities = [
        None,
        {},
        {"nodeAffinity": {}},
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": GFD_PRODUCT, "operator": "In", "values": ["A100", "H100"]}]}
                    ]
                }
            }
        },
    ]
    selectors = [None, {}, {"zone": "a"}, {GFD_PRODUCT: "NVIDIA H100 80GB HBM3"}]
    pods = []
    for i, (phase, node_name, gpus, sel, aff, claims, ercs) in enumerate(
        itertools.product(
            ["Pending", "Running", "Failed", "Succeeded"],
            [None, "h100-pool-1"],
            [0, 1],
            selectors,
            affinities,
            [None, [{"name": "gpu", "resourceClaimName": "c"}]],
            [None, ERCS],
        )
    ):
        p = pod(f"p{i:04d}", gpus=gpus, node_name=node_name, phase=phase, node_selector=sel, claims=claims, ercs=ercs)
        if aff is not None:
            p["spec"]["affinity"] = aff
        pods.append(p)
    ctx = Context(model_of(*base(), *pods))
    groups = ctx.pod_groups()
    examined, shaped = [], []
    for key in sorted(ctx.m.notable_pods()):
        p = ctx.m.objects["Pod"][key]
        status, spec = p.get("status") or {}, p.get("spec") or {}
        phase = status.get("phase")
        if phase == "Succeeded":
            continue
        v = ctx.nodes.get(spec.get("nodeName") or "")
        capable = v is None or v.kubelet is None or v.bridge_capable
        ercs = status.get("extendedResourceClaimStatus")
        if (
            phase != "Running"
            or not spec.get("nodeName")
            or (ercs and not capable)
            or (not ercs and pod_extended_requests(p))
        ):
            examined.append(key)
        if phase != "Failed":
            product = steered_product(spec)
            if product is not None or spec.get("resourceClaims"):
                shaped.append((key, product))
    assert [k for k, _ in groups.examined] == examined
    assert [(k, product) for k, _, product in groups.shaped] == shaped
    assert groups.steered_products == {"NVIDIA H100 80GB HBM3", "A100,H100"}
    assert len(examined) > 100 and len(shaped) > 100
