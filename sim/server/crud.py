"""Get, list, create, update, patch and delete of stored objects (continue tokens, list options, representations)."""

from __future__ import annotations

import base64
import json
from typing import Any

import yaml
from aiohttp import web
from dragoman.fleet.k8s.registry import ResourceType
from dragoman.fleet.k8s.selectors import SelectorError, parse_field_selector, parse_label_selector
from dragoman.sim import pieces, resources
from dragoman.sim.api import status as st
from dragoman.sim.server.routing import Route
from dragoman.sim.server.wire import JSON_CT, PROTOBUF_CT, YAML_CT, _json, _truthy, negotiate
from dragoman.sim.store import ApiError

CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list."
)


def _encode_continue(token_id: str, offset: int, rv: int) -> str:
    raw = json.dumps({"v": "dragoman.sim/1", "id": token_id, "o": offset, "rv": rv}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _go_json_start_error(data: bytes) -> str:
    """encoding/json's complaint about bytes that are not JSON (what DecodeContinue passes on)."""
    text = data.lstrip(b" \t\r\n")
    if not text:
        return "unexpected end of JSON input"
    c = chr(text[0])
    if c in '{["-0123456789tfn':
        return "unexpected end of JSON input"
    quoted = {"'": "'\\''", '"': "'\"'"}.get(c) or "'" + json.dumps(c)[1:-1] + "'"
    return f"invalid character {quoted} looking for beginning of value"


def _bad_continue(detail: str) -> ApiError:
    return ApiError(st.bad_request(f"invalid continue token: continue key is not valid: {detail}"))


def _decode_continue(token: str) -> tuple[str, int, int]:
    """The token's parts; a token that is not one of ours is refused with the words storage.DecodeContinue uses
    (base64 without padding, then JSON)."""
    bad = next((i for i, ch in enumerate(token) if ch not in _B64URL), None)
    if bad is None and len(token) % 4 == 1:
        bad = len(token) - 1
    if bad is not None:
        raise _bad_continue(f"illegal base64 data at input byte {bad}")
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    try:
        data = json.loads(raw)
    except ValueError:
        raise _bad_continue(_go_json_start_error(raw)) from None
    try:
        return str(data["id"]), int(data["o"]), int(data["rv"])
    except (KeyError, TypeError, ValueError):
        raise ApiError(
            st.bad_request(
                "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion "
                "(version meta.k8s.io/v1)"
            )
        ) from None


def _fold_string_data(rt: ResourceType, body: dict) -> None:
    """A Secret's write-only stringData becomes base64 data (it wins over data for the same key), as the server does."""
    if rt.key != "secrets" or "stringData" not in body:
        return
    extra = body.pop("stringData")
    if not isinstance(extra, dict) or not all(isinstance(v, str) for v in extra.values()):
        raise ApiError(st.bad_request("stringData must be a map of strings"))
    data = body.get("data") if isinstance(body.get("data"), dict) else {}
    body["data"] = {**data, **{k: base64.b64encode(v.encode()).decode() for k, v in extra.items()}}


def validate_list_options(q: Any, watch: bool) -> None:
    """apimachinery's ValidateListOptions (meta/internalversion/validation): 422 Invalid ListOptions, with the
    WatchList feature on as in 1.37."""
    match = q.get("resourceVersionMatch") or ""
    rv, cont = q.get("resourceVersion") or "", q.get("continue") or ""
    send_initial = "sendInitialEvents" in q
    causes = []
    forbid = lambda f, m: causes.append(st.cause("FieldValueForbidden", f, f"Forbidden: {m}"))  # noqa: E731

    def unsupported(values: list[str]) -> None:
        quoted = ", ".join(f'"{v}"' for v in values)
        causes.append(
            st.cause(
                "FieldValueNotSupported",
                "resourceVersionMatch",
                f'Unsupported value: "{match}": supported values: {quoted}',
            )
        )

    if watch:
        if send_initial and match != "NotOlderThan":
            forbid("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
        if match:
            if not send_initial:
                forbid(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                )
            if match != "NotOlderThan":
                unsupported(["NotOlderThan"])
            if cont:
                forbid("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided")
    else:
        if match:
            if not rv:
                forbid("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided")
            if cont:
                forbid("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided")
            if match not in ("Exact", "NotOlderThan"):
                unsupported(["Exact", "NotOlderThan", ""])
            if match == "Exact" and rv == "0":
                forbid("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
        if send_initial:
            forbid("sendInitialEvents", "sendInitialEvents is forbidden for list")
    if causes:
        raise ApiError(st.invalid("meta.k8s.io", "ListOptions", "", causes))


# Kinds whose field label conversion (pkg/apis/<group>/<version>/conversion.go) says "field label not supported: X";
# ResourceSlice's names its GroupVersionKind; every other kind has apimachinery's default conversion.
_LEGACY_FIELD_LABELS = {"Pod", "Node", "ReplicationController", "Event", "Namespace", "Secret", "Service", "Job"}
_UNSUPPORTED_LABEL = "field label not supported: "


def _field_label_message(rt: ResourceType, message: str) -> str:
    if not message.startswith(_UNSUPPORTED_LABEL) or rt.custom:
        return message
    label = message[len(_UNSUPPORTED_LABEL) :]
    if rt.kind in _LEGACY_FIELD_LABELS and rt.group in ("", "batch", "events.k8s.io"):
        return message
    if rt.kind == "ResourceSlice":
        return f"field label not supported for {rt.group}/{rt.version}, Kind={rt.kind}: {label}"
    return f'"{label}" is not a known field selector: only "metadata.name", "metadata.namespace"'


class CrudMixin:
    """The verbs on stored objects, over the simulator's store."""

    async def _write(self, request: web.Request, route: Route, method: str) -> web.Response:
        if method == "POST":
            return await self._create(request, route)
        if method == "PUT":
            return await self._update(request, route)
        return await self._patch(request, route)

    # ---------------------------------------------------------------- reads

    def _predicate(self, rt: ResourceType, q: Any) -> Any:
        try:
            lp = parse_label_selector(q.get("labelSelector"))
            fp = parse_field_selector(q.get("fieldSelector"), rt.field_labels())
        except SelectorError as exc:
            raise ApiError(st.bad_request(_field_label_message(rt, str(exc)))) from None
        if lp and fp:
            return lambda o: lp(o) and fp(o)
        return lp or fp

    @staticmethod
    def _wants_table(request: web.Request) -> bool:
        return "as=Table" in request.headers.get("Accept", "")

    def _table(self, rt: ResourceType, objs: list[dict], rv: str) -> dict:
        # A view's rows are the stored kind's (kube-apiserver prints events.k8s.io Events with the core printer).
        if rt.storage:
            objs = [self.store.stored_shape(rt, o) for o in objs]
        return pieces.table_for(rt.plural, objs, self.clock.now(), rv)

    def _get(self, request: web.Request, route: Route) -> web.Response:
        rt = route.rt
        problem = st.resource_version_problem(
            request.query.get("resourceVersion", ""), self.store.resource_version, list_request=False
        )
        if problem is not None:
            raise ApiError(problem)
        e = self.store.entry(rt, route.namespace or None, route.name)
        if e is None:
            raise ApiError(st.not_found(rt.group, rt.plural, route.name))
        if route.subresource == "scale":
            return _json(self._scale_of(e.obj))
        if route.subresource == "log":
            return self._log(request, e.obj)
        if route.subresource and route.subresource != "status":
            raise ApiError(st.method_not_allowed(rt.group, rt.plural, route.name))
        form = negotiate(request.headers.get("Accept", ""), False)
        if form == "table":
            return _json(self._table(rt, [e.obj], e.obj["metadata"].get("resourceVersion", "")))
        if form == "json":
            return web.Response(body=e.raw, headers={"Content-Type": JSON_CT})
        if form == "partial":
            return self._represent(
                {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": e.obj["metadata"]}, "json"
            )
        return self._represent(e.obj, form)

    def _answer(self, request: web.Request, obj: dict, code: int = 200) -> web.Response:
        """A write's answer in the representation the client accepts (helm asks for protobuf first)."""
        try:
            form = negotiate(request.headers.get("Accept", ""), False)
        except ApiError:
            form = "json"
        if form == "protobuf":
            try:
                resp = self._represent(obj, form)
            except ApiError:  # a kind without a compiled message: the write happened, so answer it as JSON
                return _json(obj, code)
            resp.set_status(code)
            return resp
        return _json(obj, code)

    @staticmethod
    def _represent(obj: dict, form: str) -> web.Response:
        """`obj` as JSON, YAML or protobuf (an envelope of the kind's message; 406 for a kind not compiled in)."""
        if form == "yaml":
            return web.Response(body=yaml.safe_dump(obj, sort_keys=False).encode(), headers={"Content-Type": YAML_CT})
        if form == "protobuf":
            from dragoman.sim.api import protobuf as pb

            try:
                body = pb.encode_request(obj)
            except (pb.ProtobufError, TypeError, ValueError, AttributeError):
                raise ApiError(st.not_acceptable()) from None
            return web.Response(body=body, headers={"Content-Type": PROTOBUF_CT})
        return _json(obj)

    def _list(self, request: web.Request, route: Route) -> web.Response:
        rt = route.rt
        q = request.query
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise ApiError(st.bad_request(f"limit: Invalid value: {q.get('limit')!r}")) from None
        validate_list_options(q, False)
        problem = st.resource_version_problem(
            q.get("resourceVersion", ""), self.store.resource_version, list_request=True
        )
        if problem is not None:
            raise ApiError(problem)
        form = negotiate(request.headers.get("Accept", ""), True)
        cont = q.get("continue")
        if cont:
            token_id, offset, rv = _decode_continue(cont)
            snap = self.store.find_snapshot(token_id)
            if snap is None:
                raise ApiError(st.gone(CONTINUE_TOO_OLD))
        else:
            snap = self.store.snapshot(rt, route.namespace or None, self._predicate(rt, q))
            token_id, offset = "", 0
        end = offset + limit if limit > 0 else len(snap.entries)
        page = snap.entries[offset:end]
        meta: dict[str, Any] = {"resourceVersion": str(snap.rv)}
        if end < len(snap.entries):
            if not token_id:
                token_id = self.store.keep_snapshot(snap)
            meta["continue"] = _encode_continue(token_id, end, snap.rv)
            if not (q.get("labelSelector") or q.get("fieldSelector")):
                # A filtered list cannot count what is left without reading it: kube-apiserver leaves it out.
                meta["remainingItemCount"] = len(snap.entries) - end
        if form == "table":
            table = self._table(rt, [e.obj for e in page], str(snap.rv))
            table.setdefault("metadata", {}).update(meta)
            return _json(table)
        if form == "partial":
            items = [
                {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": e.obj["metadata"]}
                for e in page
            ]
            return _json(
                {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "items": items}
            )
        if form != "json":
            return self._represent(
                {
                    "kind": rt.list_kind,
                    "apiVersion": rt.api_version,
                    "metadata": meta,
                    "items": [e.obj if rt.custom or form == "protobuf" else json.loads(e.item_raw) for e in page],
                },
                form,
            )
        head = pieces.dumps({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta})
        # A built-in type's list items carry no kind or apiVersion (the list says them); a custom resource's do.
        items = b",".join(e.raw for e in page) if rt.custom else b",".join(e.item_raw for e in page)
        body = head[:-1] + b',"items":[' + items + b"]}"
        return web.Response(body=body, headers={"Content-Type": JSON_CT})

    async def _create(self, request: web.Request, route: Route) -> web.Response:
        rt = route.rt
        body = await self._body(request)
        if route.subresource == "eviction":
            return await self._evict(request, route, body)
        if route.subresource == "binding":
            return self._bind(request, route, body)
        if route.subresource == "token":
            return self._token_request(request, route, body)
        if route.name or route.subresource:
            raise ApiError(st.method_not_allowed(rt.group, rt.plural, route.name))
        if not isinstance(body, dict):
            raise ApiError(st.bad_request("the body of the request is not a Kubernetes object"))
        self._check_kind(rt, body)
        _fold_string_data(rt, body)
        obj = self.store.create(
            rt,
            body,
            namespace=route.namespace or None,
            dry_run=self._dry_run(request),
            field_manager=self._manager(request),
            decode_mode=self._field_validation(request),
        )
        return self._answer(request, obj, 201)

    @staticmethod
    def _check_kind(rt: ResourceType, body: dict) -> None:
        kind, api_version = body.get("kind"), body.get("apiVersion")
        if (kind and kind != rt.kind) or (api_version and api_version != rt.api_version):
            if api_version in (None, rt.api_version) and not rt.custom:
                # The codec decodes the body as the kind it names, then fails to convert it to the URL's kind.
                version = rt.version
                internal = {"": "core", "rbac.authorization.k8s.io": "rbac"}.get(rt.group, rt.group.split(".")[0])
                raise ApiError(
                    st.bad_request(
                        f'{kind} in version "{version}" cannot be handled as a {rt.kind}: converting '
                        f"({version}.{kind}) to ({internal}.{rt.kind}): unknown conversion"
                    )
                )
            raise ApiError(
                st.bad_request(
                    f"the API version in the data ({api_version}) does not match the expected API version "
                    f"({rt.api_version})"
                    if api_version != rt.api_version
                    else f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
                )
            )

    async def _update(self, request: web.Request, route: Route) -> web.Response:
        rt = route.rt
        if not route.name:
            raise ApiError(st.method_not_allowed(rt.group, rt.plural))
        body = await self._body(request)
        if not isinstance(body, dict):
            raise ApiError(st.bad_request("the body of the request is not a Kubernetes object"))
        self._check_kind(rt, body)
        _fold_string_data(rt, body)
        sub = route.subresource or None
        if sub == "finalize":
            sub = None
        if sub == "scale":
            return self._set_scale(request, route, body)
        obj = self.store.update(
            rt,
            body,
            sub,
            namespace=route.namespace or None,
            name=route.name,
            dry_run=self._dry_run(request),
            field_manager=self._manager(request),
            decode_mode=self._field_validation(request),
        )
        return self._answer(request, obj)

    PATCH_TYPES = {
        "application/merge-patch+json": "merge",
        "application/strategic-merge-patch+json": "strategic",
        "application/json-patch+json": "json",
        "application/apply-patch+yaml": "apply",
    }

    async def _patch(self, request: web.Request, route: Route) -> web.Response:
        rt = route.rt
        if not route.name:
            raise ApiError(st.method_not_allowed(rt.group, rt.plural))
        ct = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
        ptype = self.PATCH_TYPES.get(ct)
        if ptype is None:
            raise ApiError(st.unsupported_media_type(ct))
        if ptype == "strategic" and rt.custom:
            # Custom resources have no Go struct to carry patch strategies: the real server refuses the type.
            raise ApiError(
                st.status(
                    415,
                    "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types include: "
                    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                )
            )
        body = await self._body(request)
        if body is None:
            raise ApiError(st.bad_request("the patch body is empty"))
        force = _truthy(request.query.get("force"))
        if route.subresource == "scale":
            e = self.store.entry(rt, route.namespace or None, route.name)
            if e is None:
                raise ApiError(st.not_found(rt.group, rt.plural, route.name))
            scale = self._scale_of(e.obj)
            try:
                if ptype == "json":
                    patched = pieces.apply_json_patch(scale, body)
                elif ptype in ("merge", "strategic"):
                    patched = pieces.apply_json_merge_patch(scale, body)
                else:
                    raise ApiError(st.unsupported_media_type(ct))
            except pieces.PatchError as exc:
                raise ApiError(
                    st.status(
                        getattr(exc, "code", 422),
                        "Invalid" if getattr(exc, "code", 422) == 422 else "BadRequest",
                        str(exc),
                    )
                ) from None
            return self._set_scale(request, route, patched)
        manager = request.query.get("fieldManager") if ptype == "apply" else self._manager(request)
        obj, created = self.store.patch(
            rt,
            route.namespace or None,
            route.name,
            body,
            ptype,
            route.subresource or None,
            dry_run=self._dry_run(request),
            field_manager=manager,
            force=force,
            decode_mode=self._field_validation(request),
        )
        return self._answer(request, obj, 201 if created else 200)

    async def _delete(self, request: web.Request, route: Route) -> web.Response:
        rt = route.rt
        body = await self._body(request)
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise ApiError(st.bad_request("the body of the request is not DeleteOptions"))
        q = request.query
        grace = body.get("gracePeriodSeconds")
        if q.get("gracePeriodSeconds") not in (None, ""):
            try:
                grace = int(q["gracePeriodSeconds"])
            except ValueError:
                raise ApiError(st.bad_request("gracePeriodSeconds must be an integer")) from None
        policy = q.get("propagationPolicy") or body.get("propagationPolicy")
        if body.get("orphanDependents") is True and not policy:
            policy = "Orphan"
        dry = self._dry_run(request, body)
        if not route.name:
            snap = self.store.snapshot(rt, route.namespace or None, self._predicate(rt, q))
            items = []
            for e in snap.entries:
                md = e.obj["metadata"]
                try:
                    obj, _ = self.store.delete(
                        rt,
                        md.get("namespace"),
                        md["name"],
                        grace_period_seconds=grace,
                        propagation_policy=policy,
                        dry_run=dry,
                    )
                    # A built-in type's list items carry no kind or apiVersion (a custom resource's do).
                    items.append(
                        obj if rt.custom else {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
                    )
                except ApiError:
                    pass
            return _json(
                {
                    "kind": rt.list_kind,
                    "apiVersion": rt.api_version,
                    "metadata": {"resourceVersion": str(self.store.resource_version)},
                    "items": items,
                }
            )
        obj, gone = self.store.delete(
            rt,
            route.namespace or None,
            route.name,
            grace_period_seconds=grace,
            propagation_policy=policy,
            preconditions=body.get("preconditions"),
            dry_run=dry,
        )
        # apiserver's store and delete handler: an object still there (finalizers, grace, a terminating
        # namespace) is answered as it is now; a removed one as itself or as a Status, per its registry; 202 only
        # for a pending deletion with orphanDependents: false.
        if gone and rt.key not in resources.RETURN_DELETED_OBJECT:
            return self._answer(request, st.success(rt.group, rt.plural, route.name, obj["metadata"].get("uid")))
        return self._answer(request, obj, 202 if not gone and body.get("orphanDependents") is False else 200)
