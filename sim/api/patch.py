"""PATCH semantics of the API server: JSON merge, strategic merge (with the real types' patch tags), JSON patch,
server-side apply."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any

from dragoman.fleet.k8s.times import now_text
from dragoman.sim.api import schemas as _schemas


class PatchError(Exception):
    """A patch the server refuses: `code` 400 (malformed) or 422 (does not apply); `message` goes in the Status."""

    def __init__(self, message: str, code: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class ApplyConflict(Exception):
    """Server-side apply found fields another manager owns with a different value (409 Conflict)."""

    def __init__(self, message: str, causes: list[dict]) -> None:
        super().__init__(message)
        self.message = message
        self.causes = causes

    def status(self) -> dict:
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": "Conflict",
            "details": {"causes": self.causes},
            "code": 409,
        }


# ---------------------------------------------------------------- RFC 7386


def apply_json_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch; returns a new document (the target is not modified)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_json_merge_patch(result.get(key), value)
    return result


# ---------------------------------------------------------------- strategic merge patch

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"
SET_ORDER = "$setElementOrder/"


def apply_strategic_merge_patch(target: dict, patch: dict, kind: str) -> dict:
    """Strategic merge patch as apimachinery applies it on the server, with the patch tags of `kind`'s 1.37 Go types.

    Lists without a merge strategy are replaced; lists tagged `merge` merge by their merge key (or as sets
    of primitives). Directives: `$patch: replace|delete|merge`, `$retainKeys`, `$deleteFromPrimitiveList/<f>`,
    `$setElementOrder/<f>`; null deletes a key. Unknown kinds merge maps and replace lists.
    """
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be a JSON object", 400)
    schema = _schemas.schema_for_kind(kind, str(target.get("apiVersion") or "") if isinstance(target, dict) else "")
    result = _merge_map(copy.deepcopy(target) if isinstance(target, dict) else {}, copy.deepcopy(patch), schema)
    return result if result is not None else {}


def _merge_map(original: dict, patch: dict, schema: dict | None) -> dict | None:
    directive = patch.get(DIRECTIVE)
    if directive is not None:
        if directive == "replace":
            return _strip_directives({k: v for k, v in patch.items() if k != DIRECTIVE})
        if directive == "delete":
            return {}
        if directive != "merge":
            raise PatchError(f"Unknown patch type: {directive}", 400)
        patch = {k: v for k, v in patch.items() if k != DIRECTIVE}

    retain = patch.pop(RETAIN_KEYS, None)
    if retain is not None:
        if not isinstance(retain, list):
            raise PatchError("$retainKeys must be a list", 400)
        for key in patch:
            if not key.startswith("$") and key not in retain:
                raise PatchError("The list of keys in $retainKeys must contain all keys in the patch", 422)
        for key in list(original):
            if key not in retain:
                del original[key]

    orders: dict[str, list] = {}
    for key in list(patch):
        if key.startswith(SET_ORDER):
            orders[key[len(SET_ORDER) :]] = patch.pop(key)
        elif key.startswith(DELETE_PRIMITIVE):
            name = key[len(DELETE_PRIMITIVE) :]
            values = patch.pop(key)
            if isinstance(original.get(name), list) and isinstance(values, list):
                original[name] = [v for v in original[name] if v not in values]

    for key, value in patch.items():
        sub = _schemas.field(schema, key)
        if value is None:
            original.pop(key, None)
            continue
        current = original.get(key)
        if isinstance(value, dict):
            strategies, _ = _schemas.patch_meta(sub)
            if "replace" in strategies:
                original[key] = _strip_directives(value)
                continue
            merged = _merge_map(current if isinstance(current, dict) else {}, value, sub)
            if merged is None:
                original.pop(key, None)
            else:
                original[key] = merged
        elif isinstance(value, list):
            original[key] = _merge_list(current if isinstance(current, list) else [], value, sub, key)
        else:
            original[key] = value

    for name, order in orders.items():
        if isinstance(original.get(name), list):
            original[name] = _apply_order(original[name], order, _schemas.patch_meta(_schemas.field(schema, name))[1])
    return original


def _merge_list(original: list, patch: list, schema: dict | None, name: str) -> list:
    strategies, merge_key = _schemas.patch_meta(schema)
    element_schema = _schemas.items(schema)
    if "merge" not in strategies:
        return [_strip_directives(v) for v in patch]
    if not patch and not original:
        return []
    maps = any(isinstance(v, dict) for v in patch) or any(isinstance(v, dict) for v in original)
    if not maps:
        merged = list(original)
        for v in patch:
            if v not in merged:
                merged.append(v)
        return merged
    if not merge_key:
        raise PatchError(f"cannot merge lists without merge key for {name}", 400)
    result = list(original)
    plain: list[dict] = []
    for element in patch:
        if not isinstance(element, dict):
            raise PatchError(f"unable to find api field in struct {name} for the json field", 400)
        directive = element.get(DIRECTIVE)
        if directive == "replace":
            return [_strip_directives(e) for e in patch if not (isinstance(e, dict) and e.get(DIRECTIVE))]
        if directive == "delete":
            if merge_key not in element:
                raise PatchError("delete patch type with no merge key defined", 400)
            result = [e for e in result if not (isinstance(e, dict) and e.get(merge_key) == element[merge_key])]
            continue
        if directive is not None and directive != "merge":
            raise PatchError(f"Unknown patch type: {directive}", 400)
        plain.append(element)
    for element in plain:
        if merge_key not in element:
            raise PatchError(
                f"map: {json.dumps(element, separators=(',', ':'))} does not contain declared merge key: {merge_key}",
                400,
            )
        for i, existing in enumerate(result):
            if isinstance(existing, dict) and existing.get(merge_key) == element[merge_key]:
                merged = _merge_map(copy.deepcopy(existing), element, element_schema)
                result[i] = merged if merged is not None else {}
                break
        else:
            merged = _merge_map({}, element, element_schema)
            result.append(merged if merged is not None else {})
    return result


def _apply_order(values: list, order: list, merge_key: str | None) -> list:
    def ident(v: Any) -> Any:
        if merge_key and isinstance(v, dict):
            return json.dumps(v.get(merge_key), sort_keys=True)
        return json.dumps(v, sort_keys=True)

    wanted = [ident(o) for o in order]
    listed = {w: i for i, w in enumerate(wanted)}
    inside = sorted((v for v in values if ident(v) in listed), key=lambda v: listed[ident(v)])
    outside = [v for v in values if ident(v) not in listed]
    return inside + outside


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_directives(v) for k, v in value.items() if not k.startswith("$") and v is not None}
    if isinstance(value, list):
        return [_strip_directives(v) for v in value if not (isinstance(v, dict) and v.get(DIRECTIVE) == "delete")]
    return value


# ---------------------------------------------------------------- RFC 6902


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str):
        raise PatchError(f"invalid JSON pointer: {path!r}", 400)
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f'JSON pointer must be empty or start with a "/": {path}', 400)
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _index(container: list, token: str, path: str, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PatchError(f"unable to access invalid index: {token}: invalid index referenced: {path}", 422)
    idx = int(token)
    limit = len(container) if allow_end else len(container) - 1
    if idx > limit:
        raise PatchError(f"Unable to access invalid index: {idx}: invalid index referenced: {path}", 422)
    return idx


def _at_pointer(doc: Any, tokens: list[str], path: str, op: str) -> Any:
    """The value at `tokens` (a JSON pointer's, of `path`) in `doc`; a missing step is the patch's error."""
    node = doc
    for token in tokens:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, path, False)]
        else:
            raise PatchError(f'{op} operation does not apply: doc is missing path: "{path}": missing value', 422)
    return node


def _parent(doc: Any, tokens: list[str], path: str, op: str) -> Any:
    return _at_pointer(doc, tokens[:-1], path, op)


def _get(doc: Any, path: str, op: str) -> Any:
    return _at_pointer(doc, _pointer(path), path, op)


def _add(doc: Any, path: str, value: Any, op: str = "add") -> Any:
    tokens = _pointer(path)
    if not tokens:
        return copy.deepcopy(value)
    parent = _parent(doc, tokens, path, op)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = copy.deepcopy(value)
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, path, True), copy.deepcopy(value))
    else:
        raise PatchError(f'{op} operation does not apply: doc is missing path: "{path}": missing value', 422)
    return doc


def _remove(doc: Any, path: str, op: str = "remove") -> tuple[Any, Any]:
    tokens = _pointer(path)
    if not tokens:
        raise PatchError("unable to remove the whole document", 422)
    parent = _parent(doc, tokens, path, op)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"Unable to remove nonexistent key: {last}: missing value", 422)
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, path, False))
    raise PatchError(f'{op} operation does not apply: doc is missing path: "{path}": missing value', 422)


def apply_json_patch(target: Any, operations: list) -> Any:
    """RFC 6902 JSON patch (add, remove, replace, move, copy, test) with RFC 6901 pointers; returns a new document."""
    if not isinstance(operations, list):
        raise PatchError("json: cannot unmarshal object into Go value of type jsonpatch.Patch", 400)
    doc = copy.deepcopy(target)
    for operation in operations:
        if not isinstance(operation, dict) or not isinstance(operation.get("op"), str):
            raise PatchError("Unexpected kind: <nil>", 400)
        op = operation["op"]
        path = operation.get("path")
        if path is None:
            raise PatchError(f"{op} operation missing path", 422)
        if op in ("add", "replace", "test") and "value" not in operation:
            raise PatchError(f"{op} operation missing value", 422)
        if op == "add":
            doc = _add(doc, path, operation["value"])
        elif op == "remove":
            doc, _ = _remove(doc, path)
        elif op == "replace":
            tokens = _pointer(path)
            if not tokens:
                doc = copy.deepcopy(operation["value"])
                continue
            parent = _parent(doc, tokens, path, "replace")
            last = tokens[-1]
            if isinstance(parent, dict):
                if last not in parent:
                    raise PatchError(
                        f"replace operation does not apply: doc is missing key: {path}: missing value", 422
                    )
                parent[last] = copy.deepcopy(operation["value"])
            elif isinstance(parent, list):
                parent[_index(parent, last, path, False)] = copy.deepcopy(operation["value"])
            else:
                raise PatchError(f"replace operation does not apply: doc is missing key: {path}: missing value", 422)
        elif op in ("move", "copy"):
            source = operation.get("from")
            if source is None:
                raise PatchError(f"{op} operation missing from", 422)
            if op == "move":
                if path != source and path.startswith(source + "/"):
                    raise PatchError(f"Unable to move {source} into its own child {path}", 422)
                doc, value = _remove(doc, source, "move")
            else:
                value = copy.deepcopy(_get(doc, source, "copy"))
            doc = _add(doc, path, value, op)
        elif op == "test":
            try:
                actual = _get(doc, path, "test")
            except PatchError:
                actual = _MISSING
            if (
                actual is _MISSING
                or actual != operation["value"]
                or type(actual) is not type(operation["value"])
                and not (
                    isinstance(actual, (int, float))
                    and isinstance(operation["value"], (int, float))
                    and not isinstance(actual, bool)
                )
            ):
                raise PatchError(f"testing value {path} failed: test failed", 422)
        else:
            raise PatchError(f"Unexpected kind: {op}", 400)
    return doc


_MISSING = object()


# ---------------------------------------------------------------- field sets (managedFields, FieldsV1)

# Fields server-side apply never records: identity and server-set metadata (fieldmanager's stripSet), see
# _STRIPPED_META.


def _element_key(element: Any, keys: list[str]) -> str:
    if isinstance(element, dict):
        picked = {k: element[k] for k in keys if k in element}
        return "k:" + json.dumps(picked, separators=(",", ":"))
    return "v:" + json.dumps(element, separators=(",", ":"))


_STRIPPED_META = {
    "name",
    "namespace",
    "creationTimestamp",
    "selfLink",
    "uid",
    "generation",
    "managedFields",
    "resourceVersion",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
}
_MEMBER = object()  # the value recorded for a list-item membership path


def field_values(obj: dict, kind: str, include_status: bool = False) -> dict[tuple[str, ...], Any]:
    """{path: value} for every leaf and list-item path `obj` sets (FieldsV1 path elements), in one walk.

    Identity and server-set metadata are left out, and `status` unless include_status, as the field manager does.
    """
    out: dict[tuple[str, ...], Any] = {}
    if not isinstance(obj, dict):
        return out
    schema = _schemas.schema_for_kind(kind, str(obj.get("apiVersion") or ""))
    for key, child in obj.items():
        if key in ("apiVersion", "kind") or (key == "status" and not include_status):
            continue
        sub = _schemas.field(schema, key)
        if key == "metadata" and isinstance(child, dict):
            for mkey, mchild in child.items():
                if mkey not in _STRIPPED_META:
                    _walk(mchild, _schemas.field(sub, mkey), ("f:metadata", f"f:{mkey}"), out)
            continue
        _walk(child, sub, (f"f:{key}",), out)
    return out


def field_set(obj: dict, kind: str, include_status: bool = False) -> set[tuple[str, ...]]:
    """The set of field paths (FieldsV1 path elements) an object sets, as structured-merge-diff names them."""
    return set(field_values(obj, kind, include_status))


def _walk(value: Any, schema: dict | None, path: tuple[str, ...], out: dict) -> None:
    resolved = _schemas.resolve(schema)
    if isinstance(value, dict) and _is_atomic_map(schema):
        # An atomic map or struct (nodeSelector, a LabelSelector, an ObjectReference) is owned whole.
        out[path] = value
        return
    if (
        isinstance(value, dict)
        and value
        and (resolved is None or resolved.get("properties") or isinstance(resolved.get("additionalProperties"), dict))
    ):
        for key, child in value.items():
            _walk(child, _schemas.field(resolved, key), path + (f"f:{key}",), out)
        return
    if isinstance(value, list) and value and schema is not None:
        kind, keys = _schemas.list_type(schema)
        if kind == "map":
            raw_element = _schemas.items(schema)
            element_schema = _schemas.resolve(raw_element)
            atomic = _is_atomic_map(raw_element)
            for element in value:
                pe = path + (_element_key(element, keys),)
                out[pe] = _MEMBER
                if isinstance(element, dict) and not atomic:  # an atomic element (OwnerReference) is owned whole
                    for key, child in element.items():
                        _walk(child, _schemas.field(element_schema, key), pe + (f"f:{key}",), out)
            return
        if kind == "set":
            for element in value:
                out[path + (_element_key(element, []),)] = _MEMBER
            return
    out[path] = value


def fields_v1(paths: Iterable[tuple[str, ...]]) -> dict:
    """Nested FieldsV1 JSON for a set of paths (a path that is also a prefix of others gets `.`)."""
    root: dict = {}
    paths = sorted(set(paths))
    prefixes = {p[:i] for p in paths for i in range(1, len(p))}
    for path in paths:
        node = root
        for pe in path:
            node = node.setdefault(pe, {})
        if path in prefixes:
            node["."] = {}
    return root


def paths_of(fields: dict, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """The inverse of fields_v1: the leaf and member paths of a FieldsV1 document."""
    out: set[tuple[str, ...]] = set()
    for key, child in (fields or {}).items():
        if key == ".":
            out.add(prefix)
            continue
        path = prefix + (key,)
        if not child:
            out.add(path)
        else:
            out |= paths_of(child, path)
    return out


def path_string(path: tuple[str, ...]) -> str:
    """`.spec.containers[name="c"].image`: how fieldpath.Path prints in conflict messages."""
    text = ""
    for pe in path:
        if pe.startswith("f:"):
            text += "." + pe[2:]
        elif pe.startswith("k:"):
            keys = json.loads(pe[2:])
            text += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]"
        elif pe.startswith("v:"):
            text += "[=" + pe[2:] + "]"
        else:
            text += "[" + pe[2:] + "]"
    return text


def _value_at(obj: Any, path: tuple[str, ...]) -> Any:
    node = obj
    for pe in path:
        if pe.startswith("f:"):
            if not isinstance(node, dict) or pe[2:] not in node:
                return _MISSING
            node = node[pe[2:]]
        elif pe.startswith("k:") or pe.startswith("v:"):
            if not isinstance(node, list):
                return _MISSING
            node = _find_element(node, pe)
            if node is _MISSING:
                return _MISSING
        else:
            return _MISSING
    return node


def _find_element(values: list, pe: str) -> Any:
    if pe.startswith("k:"):
        keys = json.loads(pe[2:])
        for element in values:
            if isinstance(element, dict) and all(element.get(k) == v for k, v in keys.items()):
                return element
        return _MISSING
    wanted = json.loads(pe[2:])
    for element in values:
        if element == wanted:
            return element
    return _MISSING


def _remove_path(obj: Any, path: tuple[str, ...]) -> None:
    if not path:
        return
    parent = _value_at(obj, path[:-1])
    last = path[-1]
    if parent is _MISSING:
        return
    if last.startswith("f:") and isinstance(parent, dict):
        parent.pop(last[2:], None)
    elif isinstance(parent, list):
        element = _find_element(parent, last)
        if element is not _MISSING:
            parent.remove(element)


def _prune_empty(obj: Any, original: Any) -> None:
    """Drop maps emptied by field removal (but keep ones that were empty to start with)."""
    if isinstance(obj, dict):
        for key in list(obj):
            child = obj[key]
            orig_child = original.get(key) if isinstance(original, dict) else None
            _prune_empty(child, orig_child)
            if isinstance(child, dict) and not child and orig_child:
                del obj[key]


def _is_atomic_map(schema: dict | None) -> bool:
    resolved = _schemas.resolve(schema)
    return "atomic" in ((schema or {}).get("x-kubernetes-map-type"), (resolved or {}).get("x-kubernetes-map-type"))


def _ssa_merge(live: Any, applied: Any, schema: dict | None) -> Any:
    if isinstance(live, dict) and isinstance(applied, dict) and not _is_atomic_map(schema):
        result = dict(live)
        for key, value in applied.items():
            result[key] = (
                _ssa_merge(live.get(key), value, _schemas.field(schema, key)) if key in live else copy.deepcopy(value)
            )
        return result
    if isinstance(live, list) and isinstance(applied, list) and schema is not None:
        kind, keys = _schemas.list_type(schema)
        if kind == "map":
            element_schema = _schemas.items(schema)
            result = list(live)
            for element in applied:
                pe = _element_key(element, keys)
                found = _find_element(result, pe)
                if found is _MISSING:
                    result.append(copy.deepcopy(element))
                else:
                    result[result.index(found)] = _ssa_merge(found, element, element_schema)
            return result
        if kind == "set":
            result = list(applied)
            result += [v for v in live if v not in result]
            return result
    return copy.deepcopy(applied)


def _now(now: str | None) -> str:
    return now or now_text()


def _manager_label(entry: dict) -> str:
    text = json.dumps(entry.get("manager", ""))
    if entry.get("subresource"):
        text += f" with subresource {json.dumps(entry['subresource'])}"
    if entry.get("operation") == "Update":
        text += f" using {entry.get('apiVersion', '')}"
        if entry.get("time"):
            text += f" at {entry['time']}"
    return text


def server_side_apply(
    live: dict | None, applied: dict, manager: str, force: bool, now: str | None = None, subresource: str = ""
) -> dict:
    """`kubectl apply --server-side`: merge the applied configuration into `live`, owning its fields as `manager`.

    Fields this manager applied before and no longer applies are removed unless another manager owns them.
    A field another manager owns with a different value raises ApplyConflict unless `force` (then the
    ownership moves). Returns the new object with `metadata.managedFields` maintained (FieldsV1).
    Identity and server-set metadata (uid, resourceVersion, ...) stay the store's business.
    """
    if not isinstance(applied, dict):
        raise PatchError("apply patch must be an object", 400)
    kind = applied.get("kind") or (live or {}).get("kind") or ""
    api_version = applied.get("apiVersion") or (live or {}).get("apiVersion") or ""
    schema = _schemas.schema_for_kind(kind, api_version)
    base = copy.deepcopy(live) if live else {}
    meta = base.setdefault("metadata", {}) if live else {}
    entries: list[dict] = _convertible(copy.deepcopy(meta.get("managedFields") or []), api_version) if live else []
    if live and not entries:
        # An object nobody tracked yet: the server attributes its fields to this pseudo-manager first.
        before = field_set(live, kind)
        if before:
            entries.append(
                {
                    "manager": "before-first-apply",
                    "operation": "Update",
                    "apiVersion": api_version,
                    "time": _now(now),
                    "fieldsType": "FieldsV1",
                    "fieldsV1": fields_v1(before),
                }
            )

    on_status = subresource == "status"
    applied_values = field_values(applied, kind, include_status=on_status)
    if on_status:
        # Applying to the status subresource owns status fields only; the rest of the body is ignored.
        applied_values = {p: v for p, v in applied_values.items() if p[0] == "f:status"}
    applied_set = set(applied_values)
    live_values = field_values(live, kind, include_status=on_status) if live else {}
    previous: set = set()
    others: list[tuple[dict, set]] = []
    for entry in entries:
        paths = paths_of(entry.get("fieldsV1") or {})
        if (
            entry.get("manager") == manager
            and entry.get("operation") == "Apply"
            and entry.get("subresource", "") == subresource
        ):
            previous = paths
        else:
            others.append((entry, paths))

    conflicts: list[tuple[dict, tuple[str, ...]]] = []
    if live:
        for entry, paths in others:
            for path in sorted(applied_set & paths):
                if applied_values[path] != live_values.get(path, _MISSING):
                    conflicts.append((entry, path))
    if conflicts and not force:
        causes = [
            {"reason": "FieldManagerConflict", "message": f"conflict with {_manager_label(e)}", "field": path_string(p)}
            for e, p in conflicts
        ]
        if len(conflicts) == 1:
            entry, path = conflicts[0]
            message = f"Apply failed with 1 conflict: conflict with {_manager_label(entry)}: {path_string(path)}"
        else:
            lines: list[str] = []
            labels: dict[str, list[str]] = {}
            for entry, path in conflicts:
                labels.setdefault(_manager_label(entry), []).append(path_string(path))
            for label in sorted(labels):
                lines.append(f"conflicts with {label}:")
                lines += [f"- {p}" for p in labels[label]]
            message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
        raise ApplyConflict(message, causes)

    lost = {(id(e), p) for e, p in conflicts}
    kept_others: list[tuple[dict, set]] = []
    for entry, paths in others:
        paths = {p for p in paths if (id(entry), p) not in lost}
        kept_others.append((entry, paths))

    stripped_applied = copy.deepcopy(applied)
    stripped_applied.get("metadata", {}).pop("managedFields", None)
    if on_status:
        stripped_applied = {"status": stripped_applied.get("status", {})}
    else:
        stripped_applied.pop("status", None)
    result = _ssa_merge(base, stripped_applied, schema) if live else stripped_applied
    owned_elsewhere = set().union(*(p for _, p in kept_others)) if kept_others else set()
    for path in sorted(previous - applied_set, key=len, reverse=True):
        if path not in owned_elsewhere and not any(
            o[: len(path)] == path for o in owned_elsewhere | applied_set if len(o) > len(path)
        ):
            _remove_path(result, path)
    _prune_empty(result, live or {})

    new_entries: list[dict] = []
    placed = False
    for entry, paths in kept_others:
        if not paths:
            continue
        entry = dict(entry)
        entry["fieldsV1"] = fields_v1(paths)
        new_entries.append(entry)
    mine = {
        "manager": manager,
        "operation": "Apply",
        "apiVersion": api_version,
        "time": _now(now),
        "fieldsType": "FieldsV1",
        "fieldsV1": fields_v1(applied_set),
    }
    if subresource:
        mine["subresource"] = subresource
    # Keep the manager's entry where it was (the server keeps managedFields order stable).
    for i, entry in enumerate(entries):
        if (
            entry.get("manager") == manager
            and entry.get("operation") == "Apply"
            and entry.get("subresource", "") == subresource
        ):
            position = sum(1 for e, p in kept_others if p and entries.index(e) < i)
            new_entries.insert(position, mine)
            placed = True
            break
    if not placed:
        new_entries.append(mine)
    if live and previous == applied_set and not conflicts:
        unchanged = _without_managed_fields(result) == _without_managed_fields(live)
        if unchanged and live.get("metadata", {}).get("managedFields"):
            # A no-op apply leaves the object alone, timestamps included, so its resourceVersion stays.
            result["metadata"]["managedFields"] = copy.deepcopy(live["metadata"]["managedFields"])
            return result
    result.setdefault("metadata", {})["managedFields"] = new_entries
    return result


def _without_managed_fields(obj: dict) -> dict:
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    meta.pop("managedFields", None)
    out["metadata"] = meta
    return out


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _convertible(entries: list[dict], api_version: str) -> list[dict]:
    """The entries a write through `api_version` keeps. structured-merge-diff converts the object to each manager's
    apiVersion to see what the write changed for it, and drops a manager whose version the request's converter
    does not know (IsMissingVersionError): a write through events.k8s.io/v1 drops the managers recorded under core
    v1 of the same Event, and the other way round."""
    group = _group(api_version)
    return [e for e in entries if not api_version or _group(str(e.get("apiVersion") or api_version)) == group]


def update_managed_fields(
    old: dict | None, new: dict, manager: str, operation: str = "Update", now: str | None = None, subresource: str = ""
) -> dict:
    """Record a non-apply write (create, PUT, PATCH) in `new`'s managedFields, in place, and return `new`.

    The manager's Update entry gains every field the write changed (on create: every field); other managers
    lose those fields. Status writes pass `subresource="status"` (they record status fields).
    """
    kind = new.get("kind") or (old or {}).get("kind") or ""
    include_status = subresource == "status"
    new_values = field_values(new, kind, include_status=include_status)
    if old is None:
        changed = set(new_values)
        removed: set = set()
    else:
        old_values = field_values(old, kind, include_status=include_status)
        changed = {p for p, v in new_values.items() if p not in old_values or old_values[p] != v}
        removed = set(old_values) - set(new_values)
    entries = _convertible(
        copy.deepcopy(
            (old or {}).get("metadata", {}).get("managedFields") or new.get("metadata", {}).get("managedFields") or []
        ),
        str(new.get("apiVersion") or ""),
    )
    if not changed and not removed and entries:
        new.setdefault("metadata", {})["managedFields"] = entries
        return new
    touched = changed | removed
    out: list[dict] = []
    mine = None
    for entry in entries:
        is_mine = (
            entry.get("manager") == manager
            and entry.get("operation") == operation
            and entry.get("subresource", "") == subresource
        )
        paths = paths_of(entry.get("fieldsV1") or {})
        if is_mine:
            mine = entry
            paths = (paths | changed) - removed
            entry["time"] = _now(now)
            entry["apiVersion"] = new.get("apiVersion", entry.get("apiVersion"))
        elif paths & touched:
            paths = paths - touched
        else:
            out.append(entry)
            continue
        if paths:
            entry["fieldsV1"] = fields_v1(paths)
            out.append(entry)
    if mine is None and changed:
        entry = {
            "manager": manager,
            "operation": operation,
            "apiVersion": new.get("apiVersion", ""),
            "time": _now(now),
            "fieldsType": "FieldsV1",
            "fieldsV1": fields_v1(changed),
        }
        if subresource:
            entry["subresource"] = subresource
        out.append(entry)
    if out:
        new.setdefault("metadata", {})["managedFields"] = out
    else:
        new.setdefault("metadata", {}).pop("managedFields", None)  # nobody owns anything: no empty list either
    return new
