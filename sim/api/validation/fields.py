"""Field errors and name formats (k8s.io/apimachinery/pkg/util/validation and .../field): the pieces every group's
checks build their causes from."""

from __future__ import annotations

import json
import re
from typing import Any

REQUIRED, INVALID, FORBIDDEN = "FieldValueRequired", "FieldValueInvalid", "FieldValueForbidden"


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


_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"


_DNS1123_SUBDOMAIN = _DNS1123_LABEL + r"(\." + _DNS1123_LABEL + ")*"


_LABEL_RE = re.compile(f"^{_DNS1123_LABEL}$")


_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN}$")


_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"


_QUALIFIED_RE = re.compile(f"^{_QUALIFIED_NAME}$")


_LABEL_VALUE_RE = re.compile(f"^({_QUALIFIED_NAME})?$")


_C_IDENTIFIER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


_CONFIG_KEY_RE = re.compile(r"^[-._a-zA-Z0-9]+$")


LABEL_MSG = (
    (
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
        "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '"
    )
    + _DNS1123_LABEL
    + "')"
)


SUBDOMAIN_MSG = (
    (
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '"
    )
    + _DNS1123_SUBDOMAIN
    + "')"
)


QUALIFIED_MSG = (
    (
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '"
    )
    + _QUALIFIED_NAME
    + "')"
)


LABEL_VALUE_MSG = (
    (
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
        "validation is '("
    )
    + _QUALIFIED_NAME
    + ")?')"
)


def dns1123_label_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_RE.match(value):
        errs.append(LABEL_MSG)
    return errs


def dns1123_subdomain_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _SUBDOMAIN_RE.match(value):
        errs.append(SUBDOMAIN_MSG)
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """validation.IsQualifiedName: `[prefix/]name`, prefix a DNS subdomain, name <= 63."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + e for e in dns1123_subdomain_errors(prefix)]
    else:
        return [
            (
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                "validation is '"
            )
            + _QUALIFIED_NAME
            + "') with an "
            "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if name and not _QUALIFIED_RE.match(name):
        errs.append(QUALIFIED_MSG)
    return errs


def label_value_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RE.match(value):
        errs.append(LABEL_VALUE_MSG)
    return errs


def path_segment_errors(value: str) -> list[str]:
    """path.IsValidPathSegmentName, the RBAC object name rule."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    for bad in ("/", "%"):
        if bad in value:
            return [f"may not contain '{bad}'"]
    return []


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: domain-prefixed, not kubernetes.io, not `requests.`, valid as
    `requests.<name>`."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []
