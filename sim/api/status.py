"""Kubernetes `Status` objects with the codes, reasons and message shapes the real API server sends."""

from __future__ import annotations

from typing import Any


def status(code: int, reason: str, message: str, details: dict | None = None) -> dict:
    """A failure `Status` (or a success one for code < 300 with reason "")."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if code < 300 else "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if code < 300 and not reason:
        del body["reason"]
    if not message:
        del body["message"]
    if details:
        body["details"] = details
    return body


def success(group: str = "", resource: str = "", name: str = "", uid: str | None = None) -> dict:
    """The `Status{status: Success}` a DELETE answers when the object is gone at once."""
    details: dict[str, Any] = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = resource
    if uid:
        details["uid"] = uid
    body = status(200, "", "", details)
    # The delete handler's Status{Success} sets no code (its zero is omitted on the wire).
    del body["code"]
    return body


def qualified_resource(group: str, resource: str) -> str:
    """`pods`, `deviceclasses.resource.k8s.io`: how apimachinery prints a GroupResource."""
    return f"{resource}.{group}" if group else resource


def _details(
    group: str, kind: str, name: str, causes: list[dict] | None = None, retry_after: int | None = None
) -> dict:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if kind:
        details["kind"] = kind
    if causes:
        details["causes"] = causes
    if retry_after is not None:
        details["retryAfterSeconds"] = retry_after
    return details


def not_found(group: str, resource: str, name: str) -> dict:
    """404: `pods "x" not found`, `deviceclasses.resource.k8s.io "x" not found`."""
    return status(
        404, "NotFound", f'{qualified_resource(group, resource)} "{name}" not found', _details(group, resource, name)
    )


def resource_type_not_found(message: str = "the server could not find the requested resource") -> dict:
    """404 for a path that names no resource type the server knows (what apimachinery sends for unknown kinds)."""
    return status(404, "NotFound", message)


def already_exists(group: str, resource: str, name: str) -> dict:
    """409 AlreadyExists: `pods "x" already exists`."""
    return status(
        409,
        "AlreadyExists",
        f'{qualified_resource(group, resource)} "{name}" already exists',
        _details(group, resource, name),
    )


OBJECT_MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"


def conflict(group: str, resource: str, name: str, detail: str = OBJECT_MODIFIED) -> dict:
    """409 Conflict: `Operation cannot be fulfilled on pods "x": <detail>`."""
    return status(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified_resource(group, resource)} "{name}": {detail}',
        _details(group, resource, name),
    )


def cause(reason: str, field: str, message: str) -> dict:
    """One `StatusCause` as validation produces it."""
    return {"reason": reason, "message": message, "field": field}


def _cause_text(c: dict) -> str:
    field = c.get("field") or ""
    return f"{field}: {c.get('message', '')}" if field else c.get("message", "")


def invalid(group: str, kind: str, name: str, causes: list[dict]) -> dict:
    """422 Invalid: `DeviceClass.resource.k8s.io "x" is invalid: spec.selectors[0].cel.expression: Invalid value: ...`.

    One cause prints bare; several print as `[a, b]`, as apimachinery's ErrorList aggregate does.
    """
    qualified = f"{kind}.{group}" if group else kind
    texts = [_cause_text(c) for c in causes]
    if len(texts) == 1:
        summary = texts[0]
    else:
        summary = "[" + ", ".join(texts) + "]"
    return status(422, "Invalid", f'{qualified} "{name}" is invalid: {summary}', _details(group, kind, name, causes))


def forbidden(group: str, resource: str, name: str, reason_text: str) -> dict:
    """403 Forbidden: `pods "x" is forbidden: <reason_text>` (a collection without a name prints the resource alone)."""
    qualified = qualified_resource(group, resource)
    subject = f'{qualified} "{name}"' if name else qualified
    return status(403, "Forbidden", f"{subject} is forbidden: {reason_text}", _details(group, resource, name))


def forbidden_message(message: str, group: str = "", resource: str = "", name: str = "") -> dict:
    """403 Forbidden with a message already written (e.g. rbac.forbidden_message())."""
    return status(403, "Forbidden", message, _details(group, resource, name))


def unauthorized(message: str = "Unauthorized") -> dict:
    """401: what the server answers a missing or unknown bearer token."""
    return status(401, "Unauthorized", message)


def bad_request(message: str) -> dict:
    """400 BadRequest."""
    return status(400, "BadRequest", message)


def method_not_allowed(group: str = "", resource: str = "", name: str = "", method: str = "") -> dict:
    """405: `the server does not allow this method on the requested resource`."""
    return status(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        _details(group, resource, name),
    )


def unsupported_media_type(content_type: str) -> dict:
    """415 for a PATCH whose Content-Type is no patch type: apimachinery's generic server response (its message is
    the code and text, its details empty), whatever the type was."""
    body = status(415, "UnsupportedMediaType", "415: Unsupported Media Type")
    body["details"] = {}
    return body


MEDIA_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")


def not_acceptable(available: tuple[str, ...] = MEDIA_TYPES) -> dict:
    """406 NotAcceptable as the negotiation package writes it (empty details)."""
    body = status(406, "NotAcceptable", "406: Not Acceptable\n\nAvailable representations: " + ", ".join(available))
    body["details"] = {}
    return body


def too_many_requests(message: str, retry_after: int | None = None, causes: list[dict] | None = None) -> dict:
    """429 TooManyRequests; `retry_after` lands in details.retryAfterSeconds (send the Retry-After header too)."""
    return status(429, "TooManyRequests", message, _details("", "", "", causes, retry_after) or None)


EVICTION_BLOCKED = "Cannot evict pod as it would violate the pod's disruption budget."


def eviction_blocked(pdb_name: str, pdb_namespace: str, needs: int, has: int) -> dict:
    """429 the eviction subresource answers when a PodDisruptionBudget forbids it (cause DisruptionBudget)."""
    return too_many_requests(
        EVICTION_BLOCKED,
        causes=[
            {
                "reason": "DisruptionBudget",
                "message": f"The disruption budget {pdb_name} needs {needs} healthy pods and has {has} currently",
            }
        ],
    )


def eviction_multiple_budgets() -> dict:
    """500 the eviction subresource answers when more than one PodDisruptionBudget selects the pod."""
    return internal_error(
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    )


def gone(message: str, reason: str = "Expired") -> dict:
    """410: `too old resource version: 5 (100)` (reason Expired, as watch and continue-token expiry send)."""
    return status(410, reason, message)


def too_old_resource_version(requested: int | str, oldest: int | str) -> dict:
    """410 Expired exactly as a watch from a compacted resourceVersion gets it."""
    return gone(f"too old resource version: {requested} ({oldest})")


def internal_error(message: str, raw: bool = False) -> dict:
    """500 InternalError: `Internal error occurred: <message>` (raw=True keeps the message as given)."""
    text = message if raw else f"Internal error occurred: {message}"
    return status(500, "InternalError", text, {"causes": [{"message": message}]})


def service_unavailable(message: str = "the server is currently unable to handle the request") -> dict:
    """503 ServiceUnavailable."""
    return status(503, "ServiceUnavailable", message)


def timeout(
    message: str = "the server was unable to return a response in the time allotted, but may still be processing the "
    "request",
    retry_after: int | None = None,
) -> dict:
    """504 Timeout."""
    return status(504, "Timeout", message, _details("", "", "", None, retry_after) or None)


def _parse_uint_error(value: str) -> str | None:
    """Go's strconv.ParseUint(value, 10, 64) error text, or None when it parses."""
    if value.isascii() and value.isdigit():
        return None if int(value) < 1 << 64 else f'strconv.ParseUint: parsing "{value}": value out of range'
    return f'strconv.ParseUint: parsing "{value}": invalid syntax'


def resource_version_problem(value: str, current: int, *, list_request: bool) -> dict | None:
    """What kube-apiserver answers a read whose resourceVersion is not a number (a LIST: 400 "invalid resource
    version"; a GET or WATCH: an untyped storage error, 500 without a reason) or is ahead of its storage (504
    Timeout with the ResourceVersionTooLarge cause, after the watch cache waited); None when it can be served."""
    if value in ("", "0"):
        return None
    problem = _parse_uint_error(value)
    if problem is not None:
        text = f'resourceVersion: Invalid value: "{value}": {problem}'
        if list_request:
            return bad_request(f"invalid resource version: {text}")
        body = status(500, "", text)
        del body["reason"]
        return body
    if int(value) > current:
        body = status(
            504,
            "Timeout",
            f"Timeout: Too large resource version: {int(value)}, current: {current}",
            {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]},
        )
        body["details"]["retryAfterSeconds"] = 1
        return body
    return None
