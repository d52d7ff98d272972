"""Name formats (k8s.io/apimachinery@v0.37.2 util/validation and api/validate/content): DNS labels and subdomains,
label keys and values."""

from __future__ import annotations

import re

# The DNS names are util/validation's (its MaxLenError counts "characters"); label keys and values are
# api/validate/content's ("bytes"), whose prefix check is content's own subdomain rule. CEL's format library
# (fleet/cel/formats.py) and the simulator's API validation (sim/api/validation/fields.py) validate with these.
_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + "(\\." + _DNS1123_LABEL + ")*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _LABEL_KEY + ")?"
# Go's regexp: `$` is the end of the text (never before a final newline), classes ASCII.
_NAME_RX = {
    key: re.compile(f"(?:{pattern})\\Z", re.ASCII)
    for key, pattern in (
        ("label", _DNS1123_LABEL),
        ("subdomain", _DNS1123_SUBDOMAIN),
        ("1035", _DNS1035_LABEL),
        ("key", _LABEL_KEY),
        ("value", _LABEL_VALUE),
    )
}
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character"
)
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)


def _max_len(n: int, unit: str) -> str:
    return f"must be no more than {n} {unit}"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError: the message, its examples, and the regex."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return (
        msg
        + " (e.g. "
        + "".join((" or " if i else "") + f"'{e}', " for i, e in enumerate(examples))
        + (f"regex used for validation is '{fmt}')")
    )


def _blen(s: str) -> int:
    return len(s.encode("utf-8", "surrogateescape"))


def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if _blen(value) > 63:
        errs.append(_max_len(63, "characters"))
    if not _NAME_RX["label"].match(value):
        if _NAME_RX["subdomain"].match(value):
            errs.append("must not contain dots")
        else:
            msg = (
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                "start and end with an alphanumeric character"
            )
            errs.append(regex_error(msg, _DNS1123_LABEL, "my-name", "123-abc"))
    return errs


def _dns1123_subdomain(value: str, unit: str) -> list[str]:
    errs = []
    if _blen(value) > 253:
        errs.append(_max_len(253, unit))
    if not _NAME_RX["subdomain"].match(value):
        errs.append(regex_error(_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN, "example.com"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    return _dns1123_subdomain(value, "characters")


def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if _blen(value) > 63:
        errs.append(_max_len(63, "characters"))
    if not _NAME_RX["1035"].match(value):
        msg = (
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
            "character, and end with an alphanumeric character"
        )
        errs.append(regex_error(msg, _DNS1035_LABEL, "my-name", "abc-123"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """content.IsLabelKey (validation.IsQualifiedName): an optional DNS-subdomain prefix and '/', then a name."""
    errs = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in _dns1123_subdomain(prefix, "bytes")]
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > 63:
        errs.append("name part " + _max_len(63, "bytes"))
    if not _NAME_RX["key"].match(name):
        errs.append("name part " + regex_error(_LABEL_KEY_MSG, _LABEL_KEY, "MyName", "my.name", "123-abc"))
    return errs


def is_label_value(value: str) -> list[str]:
    errs = []
    if _blen(value) > 63:
        errs.append(_max_len(63, "bytes"))
    if not _NAME_RX["value"].match(value):
        msg = (
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character"
        )
        errs.append(regex_error(msg, _LABEL_VALUE, "MyValue", "my_value", "12345"))
    return errs


def mask_trailing_dash(name: str) -> str:
    """api/validation maskTrailingDash (a generateName prefix may end in '-'), byte-wise as Go slices strings."""
    b = name.encode("utf-8", "surrogateescape")
    if len(b) > 1 and b.endswith(b"-"):
        return (b[:-2] + b"a").decode("utf-8", "surrogateescape")
    return name
