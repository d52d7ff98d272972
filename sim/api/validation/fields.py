"""Field errors and name formats (k8s.io/apimachinery/pkg/util/validation and .../field): the pieces every group's
checks build their causes from."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from dragoman.fleet import k8s

REQUIRED, INVALID, FORBIDDEN = "FieldValueRequired", "FieldValueInvalid", "FieldValueForbidden"
INTERNAL = "InternalError"  # field.ErrorTypeInternal


TOO_LONG, TOO_MANY, NOT_SUPPORTED, DUPLICATE = (
    "FieldValueTooLong",
    "FieldValueTooMany",
    "FieldValueNotSupported",
    "FieldValueDuplicate",
)


_OMIT = object()


class GoValue(str):
    """A bad value already printed as field.Error prints a Go struct (its JSON with Go's field names)."""


def fmt_value(value: Any) -> str:
    """How field.Error prints a bad value: strings quoted (Go %q), numbers and bools bare, objects as JSON."""
    if isinstance(value, GoValue):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _err(reason: str, field: str, message: str) -> dict:
    return {"reason": reason, "message": message, "field": field}


def required(field: str, detail: str = "") -> dict:
    return _err(REQUIRED, field, "Required value" + (f": {detail}" if detail else ""))


def invalid(field: str, value: Any, detail: str = "") -> dict:
    body = "Invalid value" if value is _OMIT else f"Invalid value: {fmt_value(value)}"
    return _err(INVALID, field, body + (f": {detail}" if detail else ""))


def internal(field: str, detail: str) -> dict:
    # field.InternalError: what the API server answers when CEL's env.Program fails (a constant regex, bool("x")).
    return _err(INTERNAL, field, f"Internal error: {detail}")


def forbidden(field: str, detail: str = "") -> dict:
    return _err(FORBIDDEN, field, "Forbidden" + (f": {detail}" if detail else ""))


def too_long(field: str, limit: int) -> dict:
    return _err(TOO_LONG, field, f"Too long: may not be more than {limit} bytes")


def too_many(field: str, actual: int, limit: int) -> dict:
    return _err(TOO_MANY, field, f"Too many: {actual}: must have at most {limit} items")


def not_supported(field: str, value: Any, supported: list[str]) -> dict:
    return _err(
        NOT_SUPPORTED,
        field,
        f"Unsupported value: {fmt_value(value)}: supported values: " + ", ".join(json.dumps(s) for s in supported),
    )


def duplicate(field: str, value: Any) -> dict:
    return _err(DUPLICATE, field, f"Duplicate value: {fmt_value(value)}")


IMMUTABLE = "field is immutable"


# The name formats are fleet/k8s/'s (k8s.io/apimachinery v0.37.2, the one copy dragoman keeps): object names are
# util/validation's DNS rules ("characters", a namespace's "must not contain dots"), label keys, qualified names and
# label values api/validate/content's ("bytes", an empty name part both non-empty and regex errors), as
# kube-apiserver v1.37.2 writes them.
#
# Each is answered from memory for a string it has already judged: a fleet repeats the same label keys and values,
# container and device names on thousands of objects (a 5,000-node scenario's check asks 445,000 times, of a few
# thousand strings). The rule stays fleet/k8s/'s; only its answers are kept.
_REMEMBERED = 8192  # strings per rule; the memory is emptied when full (a fleet's unique names would only churn it)


def _remembered(rule: Callable[[str], list[str]]) -> Callable[[Any], list[str]]:
    """`rule`, a pure function of one string, answering a string it has judged before from memory (a new list each
    time: callers may extend it). A value that is not exactly a str is the rule's to answer, its error included."""
    seen: dict[str, tuple[str, ...]] = {}

    def remembered(value: Any) -> list[str]:
        if value.__class__ is not str:
            return rule(value)
        known = seen.get(value)
        if known is not None:
            return list(known)
        problems = rule(value)
        if len(seen) >= _REMEMBERED:
            seen.clear()
        seen[value] = tuple(problems)
        return problems

    remembered.__wrapped__ = rule  # type: ignore[attr-defined]
    remembered.__doc__ = rule.__doc__
    return remembered


dns1123_label_errors = _remembered(k8s.is_dns1123_label)
dns1123_subdomain_errors = _remembered(k8s.is_dns1123_subdomain)
qualified_name_errors = _remembered(k8s.is_qualified_name)
label_value_errors = _remembered(k8s.is_label_value)
mask_trailing_dash = k8s.mask_trailing_dash

_C_IDENTIFIER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CONFIG_KEY_RE = re.compile(r"^[-._a-zA-Z0-9]+$")


def path_segment_errors(value: str, prefix: bool = False) -> list[str]:
    """path.ValidatePathSegmentName, the RBAC object name rule (and the generic one every name meets); a
    generateName prefix may be "." or ".."."""
    if value in (".", "..") and not prefix:
        return [f"may not be '{value}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in value]


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []
