"""Kubernetes' CEL format library (apiserver library/format.go): `format.<name>()` and `format.named(name)` give a
named format, `<format>.validate(s)` its complaints about `s` (optional.none() when `s` is valid). The name formats
are apimachinery's (fleet/k8s/), the others kube-openapi strfmt's and net/url's."""

from __future__ import annotations

import re

from dragoman.fleet.cel.urls import URLError, parse_request_uri
from dragoman.fleet.k8s import (
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    mask_trailing_dash,
)

_UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I | re.ASCII)
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$", re.ASCII)
_DATE_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$", re.S)
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_date(s: str) -> bool:
    """time.Parse("2006-01-02", s)."""
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", s, re.ASCII)
    if m is None:
        return False
    y, mo, d = (int(x) for x in m.groups())
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    return 1 <= mo <= 12 and 1 <= d <= (_DAYS[mo - 1] if mo != 2 or leap else 28)


def is_date_time(s: str) -> bool:
    """strfmt.IsDateTime: a date, 't', then the time pattern, compared as strings."""
    if len(s) < 4:
        return False
    parts = s.lower().split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    m = _DATE_TIME.match(parts[1])
    if m is None or not m.group(0) == parts[1]:
        return False
    return m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


def _uri(s: str) -> list[str]:
    try:
        parse_request_uri(s)
    except URLError as exc:
        return [f'parse "{s}": {exc}']
    return []


VALIDATORS = {
    "dns1123Label": ("DNS1123Label", is_dns1123_label),
    "dns1123Subdomain": ("DNS1123Subdomain", is_dns1123_subdomain),
    "dns1035Label": ("DNS1035Label", is_dns1035_label),
    "qualifiedName": ("QualifiedName", is_qualified_name),
    "dns1123LabelPrefix": ("DNS1123LabelPrefix", lambda s: is_dns1123_label(mask_trailing_dash(s))),
    "dns1123SubdomainPrefix": ("DNS1123SubdomainPrefix", lambda s: is_dns1123_subdomain(mask_trailing_dash(s))),
    "dns1035LabelPrefix": ("DNS1035LabelPrefix", lambda s: is_dns1035_label(mask_trailing_dash(s))),
    "labelValue": ("LabelValue", is_label_value),
    "uri": ("URI", _uri),
    "uuid": ("uuid", lambda s: [] if _UUID.match(s) and "\n" not in s else ["does not match the UUID format"]),
    "byte": ("byte", lambda s: [] if _BASE64.match(s) and "\n" not in s else ["invalid base64"]),
    "date": ("date", lambda s: [] if is_date(s) else ["invalid date"]),
    "datetime": ("datetime", lambda s: [] if is_date_time(s) else ["invalid datetime"]),
}


class NamedFormat:
    """An apiservercel.Format value: equal to another by its Name."""

    __slots__ = ("name", "validate")

    def __init__(self, key: str) -> None:
        self.name, self.validate = VALIDATORS[key]

    def __eq__(self, other: object) -> bool:
        return type(other) is NamedFormat and other.name == self.name

    def __hash__(self) -> int:
        return hash(("format", self.name))

    def __repr__(self) -> str:
        return f"format({self.name})"


FORMATS = {key: NamedFormat(key) for key in VALIDATORS}
