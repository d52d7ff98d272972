"""Kubernetes' CEL format library (apiserver library/format.go): `format.<name>()` and `format.named(name)` give a
named format, `<format>.validate(s)` its complaints about `s` (optional.none() when `s` is valid). The validators
are apimachinery's (util/validation, api/validate/content) and kube-openapi strfmt's, with their regexes."""

from __future__ import annotations

import re

from dragoman.fleet.cel.urls import URLError, parse_request_uri

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + "(\\." + _DNS1123_LABEL + ")*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _LABEL_KEY + ")?"
_UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I | re.ASCII)
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$", re.ASCII)
_DATE_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$", re.S)
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _full(pattern: str) -> re.Pattern:
    # Go's regexp: $ is the end of the text (no newline before it), and the classes are ASCII.
    return re.compile(f"(?:{pattern})\\Z", re.ASCII)


_RX = {
    "label": _full(_DNS1123_LABEL),
    "subdomain": _full(_DNS1123_SUBDOMAIN),
    "1035": _full(_DNS1035_LABEL),
    "key": _full(_LABEL_KEY),
    "value": _full(_LABEL_VALUE),
}


def _max_len(n: int) -> str:
    return f"must be no more than {n} bytes"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    text = msg + " (e.g. " + " or ".join(f"'{e}'" for e in examples) + ", " if examples else msg + " ("
    return text + f"regex used for validation is '{fmt}')"


def _blen(s: str) -> int:
    return len(s.encode("utf-8"))


def is_dns1123_label(s: str) -> list[str]:
    errs = []
    if _blen(s) > 63:
        errs.append(_max_len(63))
    if not _RX["label"].match(s):
        if _RX["subdomain"].match(s):
            errs.append("must not contain dots")
        else:
            errs.append(
                _regex_error(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                    "start and end with an alphanumeric character",
                    _DNS1123_LABEL,
                    "my-name",
                    "123-abc",
                )
            )
    return errs


def is_dns1123_subdomain(s: str) -> list[str]:
    errs = []
    if _blen(s) > 253:
        errs.append(_max_len(253))
    if not _RX["subdomain"].match(s):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                "must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN,
                "example.com",
            )
        )
    return errs


def is_dns1035_label(s: str) -> list[str]:
    errs = []
    if _blen(s) > 63:
        errs.append(_max_len(63))
    if not _RX["1035"].match(s):
        errs.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character",
                _DNS1035_LABEL,
                "my-name",
                "abc-123",
            )
        )
    return errs


_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)


def is_qualified_name(s: str) -> list[str]:
    """content.IsLabelKey: an optional DNS-subdomain prefix and '/', then a name of at most 63 bytes."""
    errs = []
    parts = s.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in is_dns1123_subdomain(prefix)]
    else:
        return [
            "a valid label key "
            + _regex_error(_KEY_MSG, _LABEL_KEY, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _RX["key"].match(name):
        errs.append("name part " + _regex_error(_KEY_MSG, _LABEL_KEY, "MyName", "my.name", "123-abc"))
    return errs


def is_label_value(s: str) -> list[str]:
    errs = []
    if _blen(s) > 63:
        errs.append(_max_len(63))
    if not _RX["value"].match(s):
        errs.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                "must start and end with an alphanumeric character",
                _LABEL_VALUE,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errs


def _mask_trailing_dash(s: str) -> str:
    # apimachinery's maskTrailingDash (a generateName prefix may end in '-'): byte-wise, as Go slices strings.
    b = s.encode("utf-8", "surrogateescape")
    if len(b) > 1 and b.endswith(b"-"):
        return (b[:-2] + b"a").decode("utf-8", "surrogateescape")
    return s


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
    "dns1123LabelPrefix": ("DNS1123LabelPrefix", lambda s: is_dns1123_label(_mask_trailing_dash(s))),
    "dns1123SubdomainPrefix": ("DNS1123SubdomainPrefix", lambda s: is_dns1123_subdomain(_mask_trailing_dash(s))),
    "dns1035LabelPrefix": ("DNS1035LabelPrefix", lambda s: is_dns1035_label(_mask_trailing_dash(s))),
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
