"""From a request to a handler: path parsing into a Route, the verb, health and discovery paths, authorization, faults,
and the request log."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import traceback
from typing import Any

from aiohttp import web
from dragoman.fleet.k8s.registry import ResourceType
from dragoman.sim import pieces, resources
from dragoman.sim.api import status as st
from dragoman.sim.requestlog import Request
from dragoman.sim.server.discovery import SERVER_VERSION
from dragoman.sim.server.users import ANONYMOUS, User
from dragoman.sim.server.wire import AGGREGATED_CT, _json, _status_response, _truthy, gzipped_like_apiserver
from dragoman.sim.store import ApiError

log = logging.getLogger("dragoman.sim")

# The review kinds: a POST answered from the caller's identity and RBAC, never stored (handler method names).
REVIEWS = {
    "selfsubjectaccessreviews.authorization.k8s.io": "_self_subject_access_review",
    "selfsubjectrulesreviews.authorization.k8s.io": "_self_subject_rules_review",
    "selfsubjectreviews.authentication.k8s.io": "_self_subject_review",
    "tokenreviews.authentication.k8s.io": "_token_review",
}

ALWAYS_ALLOWED_PATHS = ("/healthz", "/readyz", "/livez", "/version")


@dataclasses.dataclass
class Route:
    rt: ResourceType
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    watch: bool = False


def _resource_route(group: str, version: str, parts: list[str]) -> Route | None:
    watch = False
    if parts and parts[0] == "watch":
        watch, parts = True, parts[1:]
    if not parts:
        return None
    namespace = ""
    if parts[0] == "namespaces" and len(parts) >= 3 and (group, version, parts[2]) in resources.BY_GV_PLURAL:
        rt = resources.BY_GV_PLURAL[(group, version, parts[2])]
        if not rt.namespaced:
            return None
        namespace, parts = parts[1], parts[2:]
    rt = resources.BY_GV_PLURAL.get((group, version, parts[0]))
    if rt is None:
        return None
    if rt.namespaced is False and namespace:
        return None
    name = parts[1] if len(parts) > 1 else ""
    sub = parts[2] if len(parts) > 2 else ""
    if len(parts) > 3 or (sub and sub not in rt.subresources):
        return None
    return Route(rt, namespace, name, sub, watch)


def _verb(method: str, route: Route, watch: bool) -> str:
    if method in ("GET", "HEAD"):
        if watch:
            return "watch"
        return "get" if route.name else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if route.name else "deletecollection"
    return method.lower()


class RoutingMixin:
    """The one aiohttp handler: authenticate, route, authorize, inject faults, hand to the verb's handler, log."""

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.request_count += 1
        path = request.path
        if len(path) > 1:
            path = path.rstrip("/")
        user = self._authenticate(request)
        record: dict[str, Any] = {
            "method": request.method,
            "path": path,
            "query": request.query_string,
            "user": user.name if user else "",
            "verb": "",
            "resource": "",
            "subresource": "",
            "namespace": "",
            "name": "",
            "user_agent": request.headers.get("User-Agent", ""),
            "dry_run": request.query.get("dryRun") == "All",
        }
        code = 500
        try:
            resp = await self._dispatch(request, path, user, record)
            code = resp.status
            if record["resource"]:  # the resource handlers' writer; discovery and /metrics have their own
                resp = gzipped_like_apiserver(request, resp)
            return resp
        except ApiError as exc:
            code = exc.code
            return _status_response(exc.status, exc.headers)
        except (ConnectionResetError, asyncio.CancelledError):
            code = 499
            raise
        except Exception as exc:  # noqa: BLE001 - a bug answers 500, never kills the server
            log.error("request %s %s failed:\n%s", request.method, request.path_qs, traceback.format_exc())
            code = 500
            return _status_response(st.internal_error(f"{type(exc).__name__}: {exc}"))
        finally:
            self.request_log.add(Request(status=code, **record))

    async def _dispatch(self, request: web.Request, path: str, user: User | None, record: dict) -> web.StreamResponse:
        if path in ALWAYS_ALLOWED_PATHS or path.startswith(("/healthz/", "/readyz/", "/livez/")):
            if path == "/version":
                return _json(SERVER_VERSION)
            return web.Response(text="ok", content_type="text/plain")
        if user is None or (user is ANONYMOUS and not self.anonymous_read):
            raise ApiError(st.unauthorized())
        q = request.query
        accept = request.headers.get("Accept", "")
        parts = [p for p in path.split("/") if p]

        # ---- non-resource paths
        if path == "/metrics":
            ok, _ = self._authorize(user, "get", None, path)
            if not ok:
                raise ApiError(st.forbidden_message(f'forbidden: User "{user.name}" cannot get path "/metrics"'))
            return web.Response(text=self.metrics_text(), content_type="text/plain", charset="utf-8")
        if path == "/api":
            if "as=APIGroupDiscoveryList" in accept:
                return _json(self._aggregated(core=True), content_type=AGGREGATED_CT)
            return _json(
                {
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": f"{self.host}:{self.port}"}
                    ],
                }
            )
        if path == "/apis":
            if "as=APIGroupDiscoveryList" in accept:
                return _json(self._aggregated(core=False), content_type=AGGREGATED_CT)
            return _json(
                {"kind": "APIGroupList", "apiVersion": "v1", "groups": [self._api_group(g) for g in self._groups()]}
            )
        if parts[:1] == ["openapi"]:
            return self._openapi(parts)
        if path == "/api/v1":
            return _json(self._resource_list("", "v1"))
        if len(parts) == 2 and parts[0] == "apis":
            if parts[1] in self._groups():
                return _json({**self._api_group(parts[1]), "kind": "APIGroup", "apiVersion": "v1"})
            raise ApiError(st.resource_type_not_found())
        if len(parts) == 3 and parts[0] == "apis":
            if (parts[1], parts[2]) in resources.group_versions():
                return _json(self._resource_list(parts[1], parts[2]))
            raise ApiError(st.resource_type_not_found())

        route = None
        if len(parts) >= 3 and parts[0] == "api" and parts[1] == "v1":
            route = _resource_route("", "v1", parts[2:])
        elif len(parts) >= 4 and parts[0] == "apis":
            route = _resource_route(parts[1], parts[2], parts[3:])
        if route is None:
            raise ApiError(st.resource_type_not_found())
        rt = route.rt
        watch = route.watch or _truthy(q.get("watch"))
        if route.name and watch and not route.watch:
            raise ApiError(st.method_not_allowed(rt.group, rt.plural, route.name))
        verb = _verb(request.method, route, watch)
        record.update(
            verb=verb, resource=rt.key, subresource=route.subresource, namespace=route.namespace, name=route.name
        )
        if rt.key in REVIEWS:
            if request.method != "POST":
                raise ApiError(st.method_not_allowed(rt.group, rt.plural))
            if user is ANONYMOUS:
                # system:basic-user grants the reviews to system:authenticated only.
                raise ApiError(
                    st.forbidden_message(
                        f'{rt.plural}.{rt.group} is forbidden: User "system:anonymous" cannot create resource '
                        f'"{rt.plural}" in API group "{rt.group}" at the cluster scope',
                        rt.group,
                        rt.plural,
                    )
                )
            return await getattr(self, REVIEWS[rt.key])(request, user)
        if verb not in rt.verbs and not route.subresource:
            raise ApiError(st.method_not_allowed(rt.group, rt.plural, route.name))
        ok, reason = self._authorize(user, verb, route, path)
        if not ok:
            attrs = pieces.RequestAttributes(
                user.name, user.all_groups, verb, rt.group, rt.plural, route.subresource, route.namespace, route.name
            )
            raise ApiError(st.forbidden_message(pieces.forbidden_message(attrs), rt.group, rt.plural, route.name))

        # ---- faults
        if self.faults.active:
            delay = self.faults.latency(verb, rt.key)
            if delay > 0:
                await self.fault_wait(delay)
            inj = self.faults.error(verb, rt.key)
            if inj is not None:
                if inj.code == 429:
                    raise ApiError(
                        st.too_many_requests(
                            "injected fault: too many requests, please try again later", retry_after=inj.retry_after
                        ),
                        {"Retry-After": str(inj.retry_after)},
                    )
                if inj.code == 504:
                    await self.fault_wait(inj.hang)
                    raise ApiError(st.timeout())
                if inj.code == 503:
                    raise ApiError(st.service_unavailable())
                raise ApiError(st.internal_error("injected fault"))
            if verb in ("update", "patch") and self.faults.conflict(verb, rt.key):
                raise ApiError(st.conflict(rt.group, rt.plural, route.name))

        method = request.method
        lost = self.faults.active and self.faults.lost_answer(verb, rt.key)
        if method in ("POST", "PUT", "PATCH"):
            self.store.warnings.clear()
            resp = await self._write(request, route, method)
            if self.store.warnings:
                resp.headers["Warning"] = ", ".join(
                    '299 - "' + w.replace('"', '\\"') + '"' for w in self.store.warnings
                )
                self.store.warnings.clear()
            if lost and resp.status < 300:
                record["lost_answer"] = True
                raise ApiError(st.internal_error("injected fault: the write was made, its answer lost"))
            return resp
        if method in ("GET", "HEAD"):
            if watch:
                return await self._watch(request, route)
            if route.name:
                return self._get(request, route)
            return self._list(request, route)
        if method == "DELETE":
            resp = await self._delete(request, route)
            if lost and resp.status < 300:
                record["lost_answer"] = True
                raise ApiError(st.internal_error("injected fault: the write was made, its answer lost"))
            return resp
        raise ApiError(st.method_not_allowed(rt.group, rt.plural, route.name))
