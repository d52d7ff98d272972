"""Kubernetes rules the client and the simulator share, in one place so the two cannot disagree.

Node selectors and required node affinity (k8s.io/component-helpers@v0.37.2 scheduling/corev1/nodeaffinity over
apimachinery labels.Requirement), taints and tolerations (k8s.io/api@v0.37.2 core/v1 toleration.go), label
selectors (metav1.LabelSelector), the tolerations the DaemonSet controller adds, the DRA bridge's class prefix, and
the name formats (DNS labels and subdomains, label keys and values).
sim/ imports these; fleet/placement.py and fleet/diagnose/ read them. Pure functions over raw objects.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects


def key_of(obj: dict) -> Key:
    """(namespace or "", name) of a raw object: how the client and the simulator index every object."""
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


# The implicit extended-resource name every DeviceClass serves (`deviceclass.resource.kubernetes.io/<class>`).
DEVICECLASS_PREFIX = "deviceclass.resource.kubernetes.io/"

# What the DaemonSet controller adds to every daemon pod (pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations).
DAEMONSET_TOLERATIONS: tuple[dict, ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
# The effects that keep a pod off a node (the scheduler's TaintToleration filter).
DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")


# --- taints and tolerations (core/v1 toleration.go ToleratesTaint) ---


def tolerates(toleration: dict, taint: dict) -> bool:
    """One toleration tolerates one taint: effect empty or equal, key empty or equal, then by operator ("" is
    Equal: the values must be equal; Exists: any value; anything else tolerates nothing — the Gt/Lt toleration
    operators are behind a feature gate the simulated v1.37.2 leaves off).

    An empty key with Equal tolerates nothing here: validation refuses that toleration on write, so no stored pod
    has one; upstream would compare the values."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Equal":
        return bool(key) and (toleration.get("value") or "") == (taint.get("value") or "")
    return op == "Exists"


def tolerations_tolerate(tolerations: Iterable[dict] | None, taint: dict) -> bool:
    return any(tolerates(t, taint) for t in tolerations or ())


def first_untolerated_taint(
    taints: Iterable[dict] | None, tolerations: Iterable[dict] | None, effects: tuple[str, ...] = DO_NOT_SCHEDULE
) -> dict | None:
    """The first taint with one of `effects` that no toleration tolerates (v1helper.FindMatchingUntoleratedTaint)."""
    tols = list(tolerations or ())
    for taint in taints or ():
        if taint.get("effect") not in effects:
            continue
        if not tolerations_tolerate(tols, taint):
            return taint
    return None


# --- node selector requirements (component-helpers nodeaffinity over labels.Requirement) ---

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


def field_requirement_error(req: dict) -> str | None:
    """Why a matchFields entry is refused (only In and NotIn, with exactly one value), or None."""
    if req.get("operator") not in ("In", "NotIn"):
        return f"operator {req.get('operator')!r} is not supported for fields"
    if len(req.get("values") or []) != 1:
        return "must have one element"
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


def match_node_selector_term(term: dict, labels: dict, node_name: str) -> bool:
    """matchExpressions (labels) AND matchFields (metadata.name). A term with neither matches nothing; a term with a
    requirement NewRequirement refuses matches nothing either (the scheduler keeps the error, other terms still
    count). The fields are not checked for a node without a name, as upstream."""
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    if any(requirement_error(r) for r in exprs) or any(field_requirement_error(r) for r in fields):
        return False
    for req in exprs:
        key = req.get("key")
        if not match_requirement(req, labels.get(key), key in labels):
            return False
    if node_name:
        node_fields = {"metadata.name": node_name}
        for req in fields:
            key = req.get("key")
            # fields.Set: a missing field reads as "" (OneTermEqualSelector / OneTermNotEqualSelector).
            have = node_fields.get(key, "")
            want = (req.get("values") or [""])[0]
            if (have == want) != (req.get("operator") == "In"):
                return False
    return True


def node_identity(node: dict) -> tuple[dict, str]:
    md = node.get("metadata") or {}
    return md.get("labels") or {}, md.get("name", "")


def match_node_selector(selector: dict | None, node: dict) -> bool:
    """A v1.NodeSelector: its terms are OR-ed; no terms matches nothing; None (no required affinity) matches all."""
    if selector is None:
        return True
    labels, name = node_identity(node)
    return any(match_node_selector_term(t, labels, name) for t in selector.get("nodeSelectorTerms") or [])


def required_node_affinity(pod_spec: dict) -> dict | None:
    return ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )


def node_selector_matches(pod_spec: dict, labels: dict) -> bool:
    """spec.nodeSelector: every label equal (labels.SelectorFromSet)."""
    return all(labels.get(k) == v for k, v in (pod_spec.get("nodeSelector") or {}).items())


def pod_matches_node(pod_spec: dict, node: dict) -> bool:
    """nodeSelector AND required node affinity (RequiredNodeAffinity.Match) — the NodeAffinity filter and the
    DaemonSet rule."""
    labels, _ = node_identity(node)
    return node_selector_matches(pod_spec, labels) and match_node_selector(required_node_affinity(pod_spec), node)


def compile_node_filter(pod_spec: dict) -> Callable[[dict], bool]:
    """`pod_matches_node` bound to one pod spec, for checking many nodes."""
    node_selector = dict(pod_spec.get("nodeSelector") or {})
    required = required_node_affinity(pod_spec)

    def check(node: dict) -> bool:
        labels, _ = node_identity(node)
        for k, v in node_selector.items():
            if labels.get(k) != v:
                return False
        return match_node_selector(required, node)

    return check


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


# --- name formats (k8s.io/apimachinery@v0.37.2 util/validation and api/validate/content) --------------------------
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
