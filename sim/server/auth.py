"""Who a request is and what it may do: users and bearer tokens, RBAC checks, and the review kinds
(SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview, TokenReview)."""

from __future__ import annotations

import copy
from typing import Any

from aiohttp import web
from dragoman.sim import pieces, resources
from dragoman.sim.api import rbac
from dragoman.sim.api import status as st
from dragoman.sim.server.routing import Route
from dragoman.sim.server.users import ANONYMOUS, User, new_token
from dragoman.sim.server.wire import _json
from dragoman.sim.store import ApiError

READ_VERBS = frozenset({"get", "list", "watch"})


class AuthMixin:
    """Authentication, authorization and the review kinds, over the simulator's users, tokens and RBAC objects."""

    def add_user(self, user: User | dict) -> User:
        """Add a user; a dict is {name, token?, groups?, clusterRoles?} (clusterRoles get a ClusterRoleBinding)."""
        if isinstance(user, dict):
            name = user["name"]
            u = User(name, user.get("token") or new_token(), tuple(user.get("groups") or ()))
            for role in user.get("clusterRoles") or ():
                binding = {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": f"dragoman-sim:{name}:{role}"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}],
                }
                if (
                    self.store.get_ref(
                        "clusterrolebindings.rbac.authorization.k8s.io", None, binding["metadata"]["name"]
                    )
                    is None
                ):
                    self.store.create("clusterrolebindings.rbac.authorization.k8s.io", binding)
        else:
            u = user
        old = self.users.get(u.name)
        if old:
            self._tokens.pop(old.token, None)
        self.users[u.name] = u
        self._tokens[u.token] = u
        return u

    def _authenticate(self, request: web.Request) -> User | None:
        """The user of a request's bearer token; ANONYMOUS for no credentials at all; None for a wrong token."""
        auth = request.headers.get("Authorization")
        if auth is None:
            return ANONYMOUS
        if auth.startswith("Bearer "):
            return self._tokens.get(auth[7:].strip())
        return None

    def token_user(self, token: str) -> User | None:
        """The user a bearer token authenticates as (TokenReview asks this)."""
        return self._tokens.get(token)

    def _authorize(self, user: User, verb: str, route: Route | None, path: str) -> tuple[bool, str]:
        if "system:masters" in user.groups:
            return True, ""
        if user is ANONYMOUS:
            # Only a scenario's anonymousRead lets one this far; it reads, never writes, never reads Secrets.
            if verb in READ_VERBS and (route is None or route.rt.key != "secrets") and path != "/metrics":
                return True, ""
            return False, ""
        if route is None:
            attrs = pieces.RequestAttributes(
                user.name, user.all_groups, verb, "", "", "", "", "", non_resource_path=path
            )
        else:
            attrs = pieces.RequestAttributes(
                user.name,
                user.all_groups,
                verb,
                route.rt.group,
                route.rt.plural,
                route.subresource,
                route.namespace,
                route.name,
            )
        return self.check_access(attrs)

    def check_access(self, attrs: Any) -> tuple[bool, str]:
        if "system:masters" in (attrs.groups or []):
            return True, ""
        s = self.store
        return pieces.authorize(
            attrs,
            [e.obj for e in s.entries("roles.rbac.authorization.k8s.io")],
            [e.obj for e in s.entries("clusterroles.rbac.authorization.k8s.io")],
            [e.obj for e in s.entries("rolebindings.rbac.authorization.k8s.io")],
            [e.obj for e in s.entries("clusterrolebindings.rbac.authorization.k8s.io")],
        )

    async def _self_subject_access_review(self, request: web.Request, user: User) -> web.Response:
        body = await self._body(request)
        if not isinstance(body, dict) or not isinstance(body.get("spec"), dict):
            raise ApiError(st.bad_request("a SelfSubjectAccessReview needs a spec"))
        spec = body["spec"]
        ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if ra:
            attrs = pieces.RequestAttributes(
                user.name,
                user.all_groups,
                ra.get("verb", ""),
                ra.get("group", ""),
                ra.get("resource", ""),
                ra.get("subresource", ""),
                ra.get("namespace", ""),
                ra.get("name", ""),
            )
        elif nra:
            attrs = pieces.RequestAttributes(
                user.name,
                user.all_groups,
                nra.get("verb", ""),
                "",
                "",
                "",
                "",
                "",
                non_resource_path=nra.get("path", ""),
            )
        else:
            raise ApiError(
                st.invalid(
                    "authorization.k8s.io",
                    "SelfSubjectAccessReview",
                    "",
                    [
                        st.cause(
                            "FieldValueRequired",
                            "spec.resourceAttributes",
                            "Required value: exactly one of nonResourceAttributes or resourceAttributes must "
                            "be specified",
                        )
                    ],
                )
            )
        allowed, reason = self.check_access(attrs) if "system:masters" not in user.groups else (True, "")
        status: dict[str, Any] = {"allowed": bool(allowed)}
        if reason:
            status["reason"] = reason
        out = {
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None},
            "spec": spec,
            "status": status,
        }
        return _json(out, 201)

    def _review(self, kind: str, group: str, spec: Any, status: dict) -> web.Response:
        out: dict[str, Any] = {
            "kind": kind,
            "apiVersion": f"{group}/v1",
            "metadata": {"creationTimestamp": self.clock.timestamp() if kind == "SelfSubjectReview" else None},
        }
        if spec is not None:
            out["spec"] = spec
        out["status"] = status
        return _json(out, 201)

    @staticmethod
    def _user_info(user: User) -> dict:
        return {"username": user.name, "groups": user.all_groups}

    async def _self_subject_review(self, request: web.Request, user: User) -> web.Response:
        """`kubectl auth whoami`: who the request's credentials are."""
        body = await self._body(request)
        if body is not None and not isinstance(body, dict):
            raise ApiError(st.bad_request("the body of the request is not a SelfSubjectReview"))
        return self._review("SelfSubjectReview", "authentication.k8s.io", None, {"userInfo": self._user_info(user)})

    async def _token_review(self, request: web.Request, user: User) -> web.Response:
        """Whether a token authenticates, and as whom (RBAC: create tokenreviews, as on a real cluster)."""
        ok, _ = self._authorize(user, "create", Route(resources.BY_KEY["tokenreviews.authentication.k8s.io"]), "")
        if not ok:
            raise ApiError(
                st.forbidden_message(
                    f'tokenreviews.authentication.k8s.io is forbidden: User "{user.name}" cannot create '
                    'resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope',
                    "authentication.k8s.io",
                    "tokenreviews",
                )
            )
        body = await self._body(request)
        if not isinstance(body, dict) or not isinstance(body.get("spec"), dict):
            raise ApiError(st.bad_request("a TokenReview needs a spec"))
        spec = body["spec"]
        token = spec.get("token")
        if not isinstance(token, str) or not token:
            raise ApiError(
                st.invalid(
                    "authentication.k8s.io",
                    "TokenReview",
                    "",
                    [st.cause("FieldValueRequired", "spec.token", "Required value")],
                )
            )
        who = self.token_user(token)
        status: dict[str, Any] = (
            {"authenticated": True, "user": self._user_info(who)}
            if who
            else {"user": {}, "error": "invalid bearer token"}
        )
        if spec.get("audiences"):
            status["audiences"] = list(spec["audiences"]) if who else []
        return self._review("TokenReview", "authentication.k8s.io", spec, status)

    async def _self_subject_rules_review(self, request: web.Request, user: User) -> web.Response:
        """`kubectl auth can-i --list`: the rules RBAC grants the caller in spec.namespace."""
        body = await self._body(request)
        if not isinstance(body, dict) or not isinstance(body.get("spec"), dict):
            raise ApiError(st.bad_request("a SelfSubjectRulesReview needs a spec"))
        spec = body["spec"]
        namespace = spec.get("namespace") or ""
        if not namespace:
            raise ApiError(
                st.invalid(
                    "authorization.k8s.io",
                    "SelfSubjectRulesReview",
                    "",
                    [st.cause("FieldValueRequired", "spec.namespace", "Required value")],
                )
            )
        groups = set(user.all_groups)
        if "system:masters" in groups:
            res_rules = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
            non_res = [{"verbs": ["*"], "nonResourceURLs": ["*"]}]
        else:
            res_rules, non_res = [], []
            roles = {
                ("", e.obj["metadata"]["name"]): e.obj
                for e in self.store.entries("clusterroles.rbac.authorization.k8s.io")
            }
            roles.update(
                {
                    (e.obj["metadata"]["namespace"], e.obj["metadata"]["name"]): e.obj
                    for e in self.store.entries("roles.rbac.authorization.k8s.io", namespace)
                }
            )

            def bound(binding: dict) -> bool:
                return any(
                    (sub.get("kind") == "User" and sub.get("name") == user.name)
                    or (sub.get("kind") == "Group" and sub.get("name") in groups)
                    for sub in binding.get("subjects") or []
                )

            bindings = [(e.obj, "") for e in self.store.entries("clusterrolebindings.rbac.authorization.k8s.io")]
            bindings += [
                (e.obj, namespace) for e in self.store.entries("rolebindings.rbac.authorization.k8s.io", namespace)
            ]
            for binding, ns in bindings:
                if not bound(binding):
                    continue
                ref = binding.get("roleRef") or {}
                role = (
                    roles.get(("", ref.get("name")))
                    if ref.get("kind") == "ClusterRole"
                    else roles.get((ns, ref.get("name")))
                )
                for rule in (role or {}).get("rules") or []:
                    if rule.get("nonResourceURLs"):
                        if not ns:  # non-resource rules count only from cluster-wide bindings
                            non_res.append(
                                {
                                    "verbs": list(rule.get("verbs") or []),
                                    "nonResourceURLs": list(rule["nonResourceURLs"]),
                                }
                            )
                    else:
                        r = {
                            "verbs": list(rule.get("verbs") or []),
                            "apiGroups": list(rule.get("apiGroups") or []),
                            "resources": list(rule.get("resources") or []),
                        }
                        if rule.get("resourceNames"):
                            r["resourceNames"] = list(rule["resourceNames"])
                        res_rules.append(r)
            # system:basic-user and system:discovery, bound to every authenticated user on a real cluster: their rules
            # as sim/api/rbac.py's bootstrap policy writes them.
            res_rules += copy.deepcopy(rbac.bootstrap_rules("system:basic-user"))
            non_res += copy.deepcopy(rbac.bootstrap_rules("system:discovery"))
        return self._review(
            "SelfSubjectRulesReview",
            "authorization.k8s.io",
            spec,
            {"resourceRules": res_rules, "nonResourceRules": non_res, "incomplete": False},
        )
