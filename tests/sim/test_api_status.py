"""Status objects carry the real API server's codes, reasons and message shapes."""

from __future__ import annotations

import pytest
from dragoman.sim.api import status as st


@pytest.mark.parametrize(
    "body, code, reason, message",
    [
        (st.not_found("", "pods", "x"), 404, "NotFound", 'pods "x" not found'),
        (
            st.not_found("resource.k8s.io", "deviceclasses", "gpu"),
            404,
            "NotFound",
            'deviceclasses.resource.k8s.io "gpu" not found',
        ),
        (st.already_exists("apps", "daemonsets", "ds"), 409, "AlreadyExists", 'daemonsets.apps "ds" already exists'),
        (
            st.conflict("", "nodes", "n1"),
            409,
            "Conflict",
            (
                'Operation cannot be fulfilled on nodes "n1": the object has been modified; please apply your '
                "changes to the latest version and try again"
            ),
        ),
        (st.bad_request("bad"), 400, "BadRequest", "bad"),
        (
            st.method_not_allowed(),
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        ),
        (st.too_old_resource_version(5, 100), 410, "Expired", "too old resource version: 5 (100)"),
        (st.internal_error("boom"), 500, "InternalError", "Internal error occurred: boom"),
        (st.unauthorized(), 401, "Unauthorized", "Unauthorized"),
    ],
)
def test_failure_shapes(body, code, reason, message):
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["status"] == "Failure"
    assert (body["code"], body["reason"], body["message"]) == (code, reason, message)


def test_not_found_details_name_group_and_resource():
    body = st.not_found("resource.k8s.io", "deviceclasses", "gpu")
    assert body["details"] == {"name": "gpu", "group": "resource.k8s.io", "kind": "deviceclasses"}
    assert "group" not in st.not_found("", "pods", "p")["details"]


def test_invalid_one_cause_and_several():
    one = st.invalid(
        "resource.k8s.io",
        "DeviceClass",
        "x",
        [st.cause("FieldValueInvalid", "spec.selectors[0].cel.expression", 'Invalid value: "1": boom')],
    )
    assert one["code"] == 422 and one["reason"] == "Invalid"
    assert (
        one["message"]
        == 'DeviceClass.resource.k8s.io "x" is invalid: spec.selectors[0].cel.expression: Invalid value: "1": boom'
    )
    assert one["details"]["causes"][0]["field"] == "spec.selectors[0].cel.expression"
    two = st.invalid(
        "",
        "Pod",
        "p",
        [
            st.cause("FieldValueRequired", "spec.containers", "Required value"),
            st.cause("FieldValueRequired", "metadata.name", "Required value"),
        ],
    )
    assert two["message"] == 'Pod "p" is invalid: [spec.containers: Required value, metadata.name: Required value]'


def test_too_many_requests_and_eviction():
    body = st.too_many_requests("slow down", retry_after=3)
    assert body["code"] == 429 and body["details"]["retryAfterSeconds"] == 3
    blocked = st.eviction_blocked("web-pdb", "default", 2, 2)
    assert blocked["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert blocked["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget web-pdb needs 2 healthy pods and has 2 currently",
        }
    ]
    assert st.eviction_multiple_budgets()["code"] == 500


def test_forbidden_and_success():
    body = st.forbidden(
        "", "pods", "x", 'User "viewer" cannot delete resource "pods" in API group "" in the namespace "default"'
    )
    assert body["code"] == 403 and body["message"].startswith('pods "x" is forbidden: User "viewer"')
    ok = st.success("apps", "daemonsets", "ds", uid="u1")
    # kube-apiserver's DELETE answer: no code (its zero is omitted), no reason.
    assert ok["status"] == "Success" and "code" not in ok and ok["details"]["uid"] == "u1" and "reason" not in ok
