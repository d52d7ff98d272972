"""Label requirements (apimachinery labels.Requirement) and label selectors (metav1.LabelSelector)."""

from __future__ import annotations

import re

_INT64 = re.compile(r"[+-]?[0-9]+")


def parse_int64(text: object) -> int | None:
    """strconv.ParseInt(text, 10, 64): an optional sign and ASCII digits, in int64 range; None otherwise (Python's
    int() would also take spaces, underscores and other scripts' digits)."""
    if not isinstance(text, str) or not _INT64.fullmatch(text):
        return None
    n = int(text)
    return n if -(2**63) <= n < 2**63 else None


_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def requirement_error(req: dict) -> str | None:
    """Why labels.NewRequirement refuses a matchExpressions entry (a refused entry fails its whole term), or None.

    The label key and value formats are not checked here: the API server's validation refuses them on write."""
    op = req.get("operator")
    values = req.get("values") or []
    if op not in _LABEL_OPERATORS:
        return f"operator {op!r} is not supported"
    if op in ("In", "NotIn") and not values:
        return "for 'in', 'notin' operators, values set can't be empty"
    if op in ("Exists", "DoesNotExist") and values:
        return "values set must be empty for exists and does not exist"
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            return "for 'Gt', 'Lt' operators, exactly one value is required"
        if parse_int64(values[0]) is None:
            return "for 'Gt', 'Lt' operators, the value must be an integer"
    return None


def match_requirement(req: dict, value: str | None, present: bool) -> bool:
    """One well-formed requirement against a label value (labels.Requirement.Matches); `present` says whether the key
    exists. Gt/Lt compare the label and the one value as int64; a label that is not an integer matches neither."""
    op = req.get("operator")
    values = req.get("values") or []
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        have, want = parse_int64(value), parse_int64(values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


# --- label selectors (metav1.LabelSelector) ---


def match_label_selector(selector: dict | None, labels: dict | None) -> bool:
    """metav1.LabelSelector: matchLabels AND matchExpressions; an empty selector matches everything, None nothing."""
    if selector is None:
        return False
    labels = labels or {}
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for req in selector.get("matchExpressions") or []:
        key = req.get("key")
        op = req.get("operator")
        values = req.get("values") or []
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True
