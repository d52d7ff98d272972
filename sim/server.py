"""The simulated Kubernetes API server: HTTPS on loopback, discovery, CRUD, WATCH, tables, RBAC, eviction, faults."""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import datetime
import ipaddress
import json
import logging
import math
import os
import pathlib
import secrets
import ssl
import time
import traceback
from collections.abc import Iterable
from typing import Any

import yaml
from aiohttp import web
from dragoman.fleet.errors import ExitCode, UserError
from dragoman.sim import certs, pieces, resources
from dragoman.sim.api import status as st
from dragoman.sim.clock import Clock, format_time, parse_time
from dragoman.sim.faults import Faults
from dragoman.sim.requestlog import Request, RequestLog
from dragoman.sim.resources import ResourceType
from dragoman.sim.selectors import SelectorError, match_label_selector, parse_field_selector, parse_label_selector
from dragoman.sim.store import ApiError, Entry, Store, Watcher, clone

log = logging.getLogger("dragoman.sim")

SERVER_VERSION = {
    "major": "1",
    "minor": "37",
    "emulationMajor": "1",
    "emulationMinor": "37",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "36",
    "gitVersion": "v1.37.1",
    "gitCommit": "f78e7220d1c3a1b4cbbaa1d8a4b0e6e1e4a7d0c2",
    "gitTreeState": "clean",
    "buildDate": "2026-10-15T12:00:00Z",
    "goVersion": "go1.25.3",
    "compiler": "gc",
    "platform": "linux/amd64",
}

AGGREGATED_CT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
JSON_CT = "application/json"
CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list."
)
ALWAYS_ALLOWED_PATHS = ("/healthz", "/readyz", "/livez", "/version")
# The review kinds: a POST answered from the caller's identity and RBAC, never stored (handler method names).
REVIEWS = {
    "selfsubjectaccessreviews.authorization.k8s.io": "_self_subject_access_review",
    "selfsubjectrulesreviews.authorization.k8s.io": "_self_subject_rules_review",
    "selfsubjectreviews.authentication.k8s.io": "_self_subject_review",
    "tokenreviews.authentication.k8s.io": "_token_review",
}


def new_token() -> str:
    """A bearer token for one run: 256 random bits, so no two runs (and no shipped scenario) share one."""
    return secrets.token_urlsafe(32)


@dataclasses.dataclass
class User:
    """A user the scenario defines: a bearer token and groups (RBAC decides the rest)."""

    name: str
    token: str
    groups: tuple[str, ...] = ()

    @property
    def all_groups(self) -> list[str]:
        if self.name == "system:anonymous":
            return list(self.groups)
        return [*self.groups, "system:authenticated"]


ADMIN = "admin"
# Who a request without credentials is, as the real server names it (--anonymous-auth).
ANONYMOUS = User("system:anonymous", "", ("system:unauthenticated",))
READ_VERBS = frozenset({"get", "list", "watch"})

BOOTSTRAP_RBAC: list[dict] = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "cluster-admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
        "rules": [
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
            {"nonResourceURLs": ["*"], "verbs": ["*"]},
        ],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "view", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "cluster-admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}],
    },
]

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

# The Service the real API server keeps for itself in `default` (`kubectl cluster-info` and in-cluster clients).
KUBERNETES_SERVICE: dict = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {
        "name": "kubernetes",
        "namespace": "default",
        "labels": {"component": "apiserver", "provider": "kubernetes"},
    },
    "spec": {
        "clusterIP": "10.96.0.1",
        "clusterIPs": ["10.96.0.1"],
        "internalTrafficPolicy": "Cluster",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
        "sessionAffinity": "None",
        "type": "ClusterIP",
    },
    "status": {"loadBalancer": {}},
}


def crd_for(rt: ResourceType) -> dict:
    """The CustomResourceDefinition a cluster serving the custom kind `rt` holds, established, schema-less (stored as
    sent, as the simulator does)."""
    names = {"plural": rt.plural, "singular": rt.singular, "kind": rt.kind, "listKind": rt.list_kind}
    if rt.short_names:
        names["shortNames"] = list(rt.short_names)
    if rt.categories:
        names["categories"] = list(rt.categories)
    cond = lambda t, reason, msg: {
        "type": t,
        "status": "True",
        "reason": reason,
        "message": msg,
        "lastTransitionTime": None,
    }  # noqa: E731
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{rt.plural}.{rt.group}"},
        "spec": {
            "group": rt.group,
            "names": names,
            "scope": "Namespaced" if rt.namespaced else "Cluster",
            "versions": [
                {
                    "name": rt.version,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
            "conversion": {"strategy": "None"},
        },
        "status": {
            "acceptedNames": names,
            "storedVersions": [rt.version],
            "conditions": [
                cond("NamesAccepted", "NoConflicts", "no conflicts found"),
                cond("Established", "InitialNamesAccepted", "the initial names have been accepted"),
            ],
        },
    }


# ------------------------------------------------------------------ loopback


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# ------------------------------------------------------------------ paths


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


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true", "yes")


def _encode_continue(token_id: str, offset: int, rv: int) -> str:
    raw = json.dumps({"v": "dragoman.sim/1", "id": token_id, "o": offset, "rv": rv}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[str, int, int]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        return str(data["id"]), int(data["o"]), int(data["rv"])
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise ApiError(
            st.bad_request(
                "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
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


# ---- Accept negotiation: what the real server can answer a GET or LIST with.
YAML_CT = "application/yaml"
PROTOBUF_CT = "application/vnd.kubernetes.protobuf"
_META_GROUP_VERSIONS = {("meta.k8s.io", "v1"), ("meta.k8s.io", "v1beta1")}


def negotiate(accept: str, is_list: bool) -> str:
    """The representation for an Accept header: "json", "yaml", "protobuf", "table" or "partial" (metadata only);
    406 NotAcceptable when no listed media type is one the server has, as the real server answers."""
    if not accept.strip():
        return "json"
    for part in accept.split(","):
        media, *params = [p.strip() for p in part.split(";")]
        media = media.lower()
        opts = dict(p.split("=", 1) for p in params if "=" in p)
        if opts.get("q") == "0":
            continue
        as_ = opts.get("as")
        if as_:
            if (
                media not in ("application/json", "application/yaml", "*/*", "application/*")
                or (opts.get("g"), opts.get("v")) not in _META_GROUP_VERSIONS
            ):
                continue
            if as_ == "Table":
                return "table"
            if as_ == ("PartialObjectMetadataList" if is_list else "PartialObjectMetadata"):
                return "partial"
            continue
        if media in (
            "application/json",
            "*/*",
            "application/*",
            "application/json-patch+json",
            "application/merge-patch+json",
        ):
            return "json"
        if media == YAML_CT:
            return "yaml"
        if media == PROTOBUF_CT:
            return "protobuf"
    raise ApiError(st.not_acceptable())


def _json(
    obj: Any, code: int = 200, headers: dict[str, str] | None = None, content_type: str = JSON_CT
) -> web.Response:
    return web.Response(body=pieces.dumps(obj), status=code, headers={"Content-Type": content_type, **(headers or {})})


def _status_response(status: dict, headers: dict[str, str] | None = None) -> web.Response:
    return _json(status, int(status.get("code", 500)), headers)


# ------------------------------------------------------------------ the simulator


class Simulator:
    """The embedded cluster: a store, a clock, faults, a request log and an HTTPS API on loopback."""

    def __init__(
        self,
        objects: list[dict] | None = None,
        users: Iterable[User | dict] | None = None,
        speed: float = 1.0,
        faults: str = "",
        history_size: int = 20_000,
        validate_load: bool = False,
        anonymous_read: bool = False,
        event_ttl: float = 3600.0,
    ) -> None:
        self.clock = Clock(speed)
        self.store = Store(self.clock, history_size=history_size)
        self.faults = Faults(faults)
        self.request_log = RequestLog()
        self.url = ""
        self.host = ""
        self.port = 0
        # A fresh key and certificate per simulator: HTTPS always, verified by clients through the kubeconfig.
        self.certificate = certs.make_serving_certificate()
        # Requests without a token: 401, unless the scenario lets anonymous clients read (get, list, watch).
        self.anonymous_read = anonymous_read
        self.event_ttl = event_ttl
        # `kubectl logs`: pod_logs(pod, container) -> text; the kubelet controller may install one. Without it a
        # running container's log is empty.
        self.pod_logs: Any = None
        # Real-time seconds between watch bookmarks (the real server sends one about a minute apart).
        self.bookmark_interval = 10.0
        self.users: dict[str, User] = {}
        self._tokens: dict[str, User] = {}
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task] = []
        self._controllers: list[Any] = []
        self._controller_tasks: list[asyncio.Task] = []
        self._dirty_pdb_namespaces: set[str] = set()
        self._pdb_wakeup: asyncio.Event | None = None
        self._watch_streams: set[Watcher] = set()
        self.request_count = 0
        self._started = False
        self.add_user(User(ADMIN, new_token(), ("system:masters",)))
        for u in users or ():
            self.add_user(u)
        self.store.load(self._bootstrap_objects())
        if objects:
            self.store.validate = validate_load
            try:
                self.store.load(objects)
            finally:
                self.store.validate = True
        self.store.subscribe(self._on_change)

    # ---------------------------------------------------------------- users

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

    def _bootstrap_objects(self) -> list[dict]:
        out: list[dict] = [
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": n, "labels": {"kubernetes.io/metadata.name": n}},
            }
            for n in DEFAULT_NAMESPACES
        ]
        out.extend(clone(BOOTSTRAP_RBAC))
        out.append(clone(KUBERNETES_SERVICE))
        out.extend(crd_for(rt) for rt in resources.RESOURCES if rt.custom)
        return out

    # ---------------------------------------------------------------- kubeconfig

    def kubeconfig(self, user: str | None = None) -> dict:
        """A kubeconfig with one context per user (`dragoman-sim` for the admin, `dragoman-sim-<user>` for others);
        the current context is `user`'s (the admin's by default)."""
        cluster = "dragoman-sim"
        # The run's own certificate is the authority: clients verify the simulator (no insecure-skip-tls-verify).
        cluster_entry: dict[str, Any] = {
            "server": self.url,
            "certificate-authority-data": base64.b64encode(self.certificate.cert_pem).decode(),
        }
        contexts, users = [], []
        for u in self.users.values():
            ctx = cluster if u.name == ADMIN else f"{cluster}-{u.name}"
            contexts.append({"name": ctx, "context": {"cluster": cluster, "user": u.name, "namespace": "default"}})
            users.append({"name": u.name, "user": {"token": u.token}})
        current = cluster if (user or ADMIN) == ADMIN else f"{cluster}-{user}"
        if user and user not in self.users:
            raise KeyError(user)
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "preferences": {},
            "clusters": [{"name": cluster, "cluster": cluster_entry}],
            "contexts": contexts,
            "users": users,
            "current-context": current,
        }

    def write_kubeconfig(self, path: str | os.PathLike, user: str | None = None) -> None:
        """The kubeconfig (it carries this run's tokens): 0600, renamed into place, never over a device, FIFO,
        folder or link (fleet/safefile.py, the one home for such writes)."""
        from dragoman.fleet.safefile import write_atomic

        p = pathlib.Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(str(p), lambda f: yaml.safe_dump(self.kubeconfig(user), f, sort_keys=False), "the kubeconfig")

    # ---------------------------------------------------------------- lifecycle

    def add_controller(self, controller: Any) -> None:
        """Run a controller in-process on this simulator's store: `await controller.start(sim)` / `await
        controller.stop()` if it has them, otherwise `controller.run(sim)` as a task cancelled at stop."""
        self._controllers.append(controller)
        if self._started:
            asyncio.get_running_loop().create_task(self._start_controller(controller))

    @property
    def controllers(self) -> list[Any]:
        return list(self._controllers)

    async def _start_controller(self, controller: Any) -> None:
        if hasattr(controller, "start"):
            await controller.start(self)
        elif hasattr(controller, "run"):
            self._controller_tasks.append(asyncio.create_task(controller.run(self)))

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        if not _is_loopback(host):
            raise UserError(
                f"the simulator serves only on loopback; {host} is not a loopback address (use 127.0.0.1 or ::1).",
                ExitCode.INPUT,
            )
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        ssl_ctx = self.certificate.server_context()
        site = web.TCPSite(self._runner, host, port, ssl_context=ssl_ctx, backlog=1024)
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}.", ExitCode.INPUT) from None
        sock = site._server.sockets[0]  # type: ignore[union-attr]
        self.host, self.port = host, sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        self.url = f"https://{shown}:{self.port}"
        self._pdb_wakeup = asyncio.Event()
        self._tasks = [
            asyncio.create_task(self._reaper()),
            asyncio.create_task(self._pdb_worker()),
        ]
        self._dirty_pdb_namespaces.update(ns for (ns, _) in self.store._data["poddisruptionbudgets.policy"])
        self._pdb_wakeup.set()
        self._started = True
        for c in self._controllers:
            await self._start_controller(c)

    async def stop(self) -> None:
        self._started = False
        for c in reversed(self._controllers):
            if hasattr(c, "stop"):
                try:
                    await c.stop()
                except Exception:  # noqa: BLE001
                    log.exception("controller stop failed")
        for t in self._controller_tasks + self._tasks:
            t.cancel()
        for t in self._controller_tasks + self._tasks:
            try:
                await t
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        self._controller_tasks, self._tasks = [], []
        for w in list(self._watch_streams):
            w.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Simulator:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _reaper(self) -> None:
        last_ttl = 0.0
        while True:
            await asyncio.sleep(0.1)
            try:
                self.store.reap()
                if time.monotonic() - last_ttl > 5:
                    last_ttl = time.monotonic()
                    self.store.expire_events(self.event_ttl)
            except Exception:  # noqa: BLE001
                log.exception("reaper failed")

    # ---------------------------------------------------------------- disruption budgets

    def _on_change(self, etype: str, key: str, obj: dict, old: dict | None) -> None:
        if key in ("pods", "poddisruptionbudgets.policy"):
            ns = obj["metadata"].get("namespace", "")
            if ns and (key != "pods" or any(k[0] == ns for k in self.store._data["poddisruptionbudgets.policy"])):
                self._dirty_pdb_namespaces.add(ns)
                if self._pdb_wakeup is not None:
                    self._pdb_wakeup.set()

    async def _pdb_worker(self) -> None:
        assert self._pdb_wakeup is not None
        while True:
            await self._pdb_wakeup.wait()
            self._pdb_wakeup.clear()
            await asyncio.sleep(0.02)
            dirty, self._dirty_pdb_namespaces = self._dirty_pdb_namespaces, set()
            for ns in dirty:
                for e in list(self.store.entries("poddisruptionbudgets.policy", ns)):
                    try:
                        self.refresh_pdb(e.obj["metadata"]["namespace"], e.obj["metadata"]["name"])
                    except ApiError:
                        pass
                    except Exception:  # noqa: BLE001
                        log.exception("pdb status failed")

    @staticmethod
    def _pod_ready(pod: dict) -> bool:
        for c in pod.get("status", {}).get("conditions") or []:
            if c.get("type") == "Ready":
                return c.get("status") == "True"
        return False

    def _pdb_pods(self, pdb: dict) -> list[dict]:
        ns = pdb["metadata"]["namespace"]
        sel = pdb.get("spec", {}).get("selector")
        if sel is None:
            return []
        return [
            e.obj for e in self.store.entries("pods", ns) if match_label_selector(sel, e.obj["metadata"].get("labels"))
        ]

    def compute_pdb_status(self, pdb: dict) -> dict:
        """PodDisruptionBudget status as the disruption controller computes it (expected pods = matching pods)."""
        spec = pdb.get("spec") or {}
        pods = [p for p in self._pdb_pods(pdb) if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]
        old_status = pdb.get("status") or {}
        now = self.clock.now()
        disrupted = {}
        live_names = {p["metadata"]["name"]: p for p in pods}
        for name, stamp in (old_status.get("disruptedPods") or {}).items():
            p = live_names.get(name)
            try:
                fresh = (now - parse_time(stamp)).total_seconds() < 120
            except (TypeError, ValueError):
                fresh = False
            if p is not None and not p["metadata"].get("deletionTimestamp") and fresh:
                disrupted[name] = stamp
        healthy = sum(
            1
            for p in pods
            if self._pod_ready(p)
            and not p["metadata"].get("deletionTimestamp")
            and p["metadata"]["name"] not in disrupted
        )
        expected = len(pods)

        def resolve(value: Any, round_up: bool) -> int:
            if isinstance(value, str) and value.endswith("%"):
                frac = int(value[:-1]) * expected / 100
                return math.ceil(frac) if round_up else math.floor(frac)
            return int(value)

        if spec.get("minAvailable") is not None:
            desired = resolve(spec["minAvailable"], True)
        elif spec.get("maxUnavailable") is not None:
            desired = max(0, expected - resolve(spec["maxUnavailable"], True))
        else:
            desired = expected
        allowed = max(0, healthy - desired)
        cond_status = "True" if allowed > 0 else "False"
        prev = next((c for c in old_status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
        transition = prev.get("lastTransitionTime") if prev and prev.get("status") == cond_status else format_time(now)
        status: dict[str, Any] = {
            "observedGeneration": pdb["metadata"].get("generation", 1),
            "disruptionsAllowed": allowed,
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
            "conditions": [
                {
                    "type": "DisruptionAllowed",
                    "status": cond_status,
                    "reason": "SufficientPods" if allowed > 0 else "InsufficientPods",
                    "message": "",
                    "observedGeneration": pdb["metadata"].get("generation", 1),
                    "lastTransitionTime": transition,
                }
            ],
        }
        if disrupted:
            status["disruptedPods"] = disrupted
        return status

    def refresh_pdb(self, namespace: str, name: str) -> dict | None:
        pdb = self.store.get_ref("poddisruptionbudgets.policy", namespace, name)
        if pdb is None:
            return None
        status = self.compute_pdb_status(pdb)
        if status != pdb.get("status"):
            new = clone(pdb)
            new["status"] = status
            return self.store.update("poddisruptionbudgets.policy", new, "status", check_rv=False)
        return pdb

    # ---------------------------------------------------------------- HTTP

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
                        f'{rt.plural}.{rt.group} is forbidden: User "system:anonymous" cannot create resource "{rt.plural}" in API group "{rt.group}" at the cluster scope',
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
                await asyncio.sleep(delay)
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
                    await asyncio.sleep(inj.hang)
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

    async def _write(self, request: web.Request, route: Route, method: str) -> web.Response:
        if method == "POST":
            return await self._create(request, route)
        if method == "PUT":
            return await self._update(request, route)
        return await self._patch(request, route)

    # ---------------------------------------------------------------- discovery

    def _groups(self) -> list[str]:
        out: list[str] = []
        for g, _ in resources.group_versions():
            if g and g not in out:
                out.append(g)
        return out

    def _api_group(self, group: str) -> dict:
        versions = [v for g, v in resources.group_versions() if g == group]
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}

    @staticmethod
    def _sub_kind(rt: ResourceType, sub: str) -> tuple[str, str, str, list[str]]:
        if sub == "eviction":
            return "policy", "v1", "Eviction", ["create"]
        if sub == "binding":
            return "", "v1", "Binding", ["create"]
        if sub == "token":
            return "authentication.k8s.io", "v1", "TokenRequest", ["create"]
        if sub == "log":
            return "", "v1", "Pod", ["get"]
        if sub == "finalize":
            return rt.group, rt.version, rt.kind, ["update"]
        if sub == "scale":
            return "autoscaling", "v1", "Scale", ["get", "patch", "update"]
        return rt.group, rt.version, rt.kind, ["get", "patch", "update"]

    def _resource_list(self, group: str, version: str) -> dict:
        out = []
        for rt in resources.RESOURCES:
            if (rt.group, rt.version) != (group, version):
                continue
            entry: dict[str, Any] = {
                "name": rt.plural,
                "singularName": rt.singular,
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": list(rt.verbs),
            }
            if rt.short_names:
                entry["shortNames"] = list(rt.short_names)
            if rt.categories:
                entry["categories"] = list(rt.categories)
            out.append(entry)
            for sub in rt.subresources:
                g, v, k, verbs = self._sub_kind(rt, sub)
                sub_entry: dict[str, Any] = {
                    "name": f"{rt.plural}/{sub}",
                    "singularName": "",
                    "namespaced": rt.namespaced,
                    "kind": k,
                    "verbs": verbs,
                }
                if (g, v) != (rt.group, rt.version):
                    sub_entry["group"], sub_entry["version"] = g, v
                out.append(sub_entry)
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": out,
        }

    def _aggregated(self, core: bool) -> dict:
        items = []
        groups = [""] if core else self._groups()
        for group in groups:
            versions = []
            for g, v in resources.group_versions():
                if g != group:
                    continue
                res = []
                for rt in resources.RESOURCES:
                    if (rt.group, rt.version) != (g, v):
                        continue
                    entry: dict[str, Any] = {
                        "resource": rt.plural,
                        "responseKind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
                        "scope": "Namespaced" if rt.namespaced else "Cluster",
                        "singularResource": rt.singular,
                        "verbs": list(rt.verbs),
                    }
                    if rt.short_names:
                        entry["shortNames"] = list(rt.short_names)
                    if rt.categories:
                        entry["categories"] = list(rt.categories)
                    subs = []
                    for sub in rt.subresources:
                        sg, sv, sk, verbs = self._sub_kind(rt, sub)
                        subs.append(
                            {
                                "subresource": sub,
                                "responseKind": {"group": sg, "version": sv, "kind": sk},
                                "verbs": verbs,
                            }
                        )
                    if subs:
                        entry["subresources"] = subs
                    res.append(entry)
                versions.append({"version": v, "resources": res, "freshness": "Current"})
            items.append({"metadata": {"name": group, "creationTimestamp": None}, "versions": versions})
        return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}

    def _openapi(self, parts: list[str]) -> web.Response:
        if parts == ["openapi", "v3"]:
            return _json(pieces.openapi_v3_index(resources.group_versions()))
        if len(parts) >= 3 and parts[1] == "v3":
            rest = parts[2:]
            if rest[:1] == ["api"] and len(rest) == 2:
                doc = pieces.openapi_v3_document("", rest[1])
            elif rest[:1] == ["apis"] and len(rest) == 3:
                doc = pieces.openapi_v3_document(rest[1], rest[2])
            else:
                doc = None
            if doc is not None:
                return _json(doc)
        raise ApiError(st.resource_type_not_found())

    # ---------------------------------------------------------------- reads

    def _predicate(self, rt: ResourceType, q: Any) -> Any:
        try:
            lp = parse_label_selector(q.get("labelSelector"))
            fp = parse_field_selector(q.get("fieldSelector"), rt.field_labels())
        except SelectorError as exc:
            raise ApiError(st.bad_request(str(exc))) from None
        if lp and fp:
            return lambda o: lp(o) and fp(o)
        return lp or fp

    @staticmethod
    def _wants_table(request: web.Request) -> bool:
        return "as=Table" in request.headers.get("Accept", "")

    def _table(self, rt: ResourceType, objs: list[dict], rv: str) -> dict:
        return pieces.table_for(rt.plural, objs, self.clock.now(), rv)

    def _get(self, request: web.Request, route: Route) -> web.Response:
        rt = route.rt
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
                {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta, "items": [e.obj for e in page]},
                form,
            )
        head = pieces.dumps({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta})
        body = head[:-1] + b',"items":[' + b",".join(e.raw for e in page) + b"]}"
        return web.Response(body=body, headers={"Content-Type": JSON_CT})

    async def _watch(self, request: web.Request, route: Route) -> web.StreamResponse:
        rt = route.rt
        q = request.query
        pred = self._predicate(rt, q)
        ns = route.namespace or None
        if route.name:
            name = route.name
            base = pred
            pred = (
                (lambda o: o["metadata"]["name"] == name and base(o))
                if base
                else (lambda o: o["metadata"]["name"] == name)
            )
        validate_list_options(q, True)
        rv_param = q.get("resourceVersion", "")
        send_initial = _truthy(q.get("sendInitialEvents"))
        bookmarks = _truthy(q.get("allowWatchBookmarks"))
        table = self._wants_table(request)
        try:
            timeout = float(q["timeoutSeconds"]) if q.get("timeoutSeconds") else None
        except ValueError:
            raise ApiError(st.bad_request(f"timeoutSeconds: Invalid value: {q.get('timeoutSeconds')!r}")) from None
        w = Watcher(rt, ns, pred, filter_key=(ns, q.get("labelSelector", ""), q.get("fieldSelector", ""), route.name))
        initial: list[tuple[str, Entry]] = []
        error: dict | None = None
        if rv_param in ("", "0") or send_initial:
            initial = [("ADDED", e) for e in self.store.snapshot(rt, ns, w.matches if (ns or pred) else None).entries]
        else:
            try:
                since = int(rv_param)
            except ValueError:
                raise ApiError(
                    st.bad_request(f"resourceVersion: Invalid value: {rv_param!r}: must be an integer")
                ) from None
            try:
                for etype, entry, old in self.store.history_since(rt, since):
                    w.offer(etype, entry, old)
            except ApiError as exc:
                error = exc.status
        if error is None:
            # Registered before the first await: no commit can fall between the snapshot/history and the stream.
            if initial:
                w.queue.extendleft(reversed(initial))
            if send_initial and bookmarks:
                w.queue.append(("BOOKMARK-INITIAL", Entry({"resourceVersion": str(self.store.resource_version)})))
            self.store.add_watcher(w)
            self._watch_streams.add(w)
        resp = web.StreamResponse(status=200, headers={"Content-Type": JSON_CT, "Cache-Control": "no-cache, private"})
        resp.enable_chunked_encoding()
        try:
            await resp.prepare(request)
        except BaseException:
            self.store.remove_watcher(w)
            self._watch_streams.discard(w)
            raise
        if error is not None:
            await resp.write(pieces.dumps({"type": "ERROR", "object": error}) + b"\n")
            await resp.write_eof()
            return resp
        cut_events, cut_after = self.faults.watch_limits(rt.key) if self.faults.active else (None, None)
        started = time.monotonic()
        deadline = started + timeout if timeout else None
        if cut_after is not None:
            deadline = min(deadline or float("inf"), started + cut_after)
        sent = 0
        next_bookmark = started + self.bookmark_interval
        try:
            while True:
                if w.queue:
                    batch = []
                    while w.queue:
                        batch.append(w.queue.popleft())
                        if cut_events is not None and sent + len(batch) >= cut_events:
                            break
                    await resp.write(b"".join(self._event_line(rt, etype, entry, table) for etype, entry in batch))
                    sent += len(batch)
                    if cut_events is not None and sent >= cut_events:
                        break
                    continue
                if w.closed:
                    break
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    break
                if bookmarks and now >= next_bookmark:
                    await resp.write(self._bookmark(rt, False))
                    next_bookmark = now + self.bookmark_interval
                    continue
                wait = 2.0
                if deadline is not None:
                    wait = min(wait, deadline - now)
                if bookmarks:
                    wait = min(wait, max(0.0, next_bookmark - now))
                w.wakeup.clear()
                if not w.queue and not w.closed:
                    try:
                        await asyncio.wait_for(w.wakeup.wait(), timeout=max(wait, 0.001))
                    except TimeoutError:
                        pass
                transport = request.transport
                if transport is None or transport.is_closing():
                    break
            await resp.write_eof()
        except (ConnectionResetError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self.store.remove_watcher(w)
            self._watch_streams.discard(w)
        return resp

    def _bookmark(self, rt: ResourceType, initial_end: bool, rv: str | None = None) -> bytes:
        md: dict[str, Any] = {"resourceVersion": rv or str(self.store.resource_version)}
        if initial_end:
            md["annotations"] = {"k8s.io/initial-events-end": "true"}
        return (
            pieces.dumps(
                {"type": "BOOKMARK", "object": {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": md}}
            )
            + b"\n"
        )

    def _event_line(self, rt: ResourceType, etype: str, entry: Entry, table: bool) -> bytes:
        if etype == "BOOKMARK-INITIAL":
            return self._bookmark(rt, True, entry.obj.get("resourceVersion"))
        if table:
            t = self._table(rt, [entry.obj], entry.obj["metadata"].get("resourceVersion", ""))
            return pieces.dumps({"type": etype, "object": t}) + b"\n"
        return b'{"type":"' + etype.encode() + b'","object":' + entry.raw + b"}\n"

    # ---------------------------------------------------------------- writes

    async def _body(self, request: web.Request, allow_yaml: bool = True) -> Any:
        raw = await request.read()
        if not raw:
            return None
        ct = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
        try:
            if pieces.is_protobuf(raw):
                return pieces.decode_request(raw)
            if ct in ("application/yaml", "application/apply-patch+yaml") and allow_yaml:
                return yaml.safe_load(raw)
            return json.loads(raw)
        except Exception as exc:  # noqa: BLE001 - any parse failure is the client's
            raise ApiError(st.bad_request(f"the request body could not be decoded: {exc}")) from None

    @staticmethod
    def _dry_run(request: web.Request, options: dict | None = None) -> bool:
        values = request.query.getall("dryRun", [])
        if options and isinstance(options.get("dryRun"), list):
            values = [*values, *options["dryRun"]]
        for v in values:
            if v != "All":
                raise ApiError(st.bad_request(f'dryRun: Unsupported value: "{v}": supported values: "All"'))
        return bool(values)

    @staticmethod
    def _field_validation(request: web.Request) -> str:
        mode = request.query.get("fieldValidation") or "Warn"
        if mode not in ("Strict", "Warn", "Ignore"):
            raise ApiError(
                st.bad_request(
                    f'fieldValidation: Unsupported value: "{mode}": supported values: "Ignore", "Strict", "Warn"'
                )
            )
        return mode

    @staticmethod
    def _manager(request: web.Request) -> str:
        fm = request.query.get("fieldManager")
        if fm:
            return fm
        ua = request.headers.get("User-Agent", "")
        return ua.split("/")[0] if ua else "unknown"

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
        return _json(obj, 201)

    @staticmethod
    def _check_kind(rt: ResourceType, body: dict) -> None:
        kind, api_version = body.get("kind"), body.get("apiVersion")
        if (kind and kind != rt.kind) or (api_version and api_version != rt.api_version):
            raise ApiError(
                st.bad_request(
                    f"the API version in the data ({api_version}) does not match the expected API version ({rt.api_version})"
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
        return _json(obj)

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
                    f"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
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
        return _json(obj, 201 if created else 200)

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
                    items.append(obj)
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
            return _json(st.success(rt.group, rt.plural, route.name, obj["metadata"].get("uid")))
        return _json(obj, 202 if not gone and body.get("orphanDependents") is False else 200)

    # ---------------------------------------------------------------- subresources

    def _log(self, request: web.Request, pod: dict) -> web.Response:
        """pods/log: the container must exist and have started, as the kubelet requires."""
        spec = pod.get("spec") or {}
        names = [c.get("name") for c in spec.get("containers") or []]
        name = pod["metadata"]["name"]
        container = request.query.get("container") or ""
        if not container:
            if len(names) != 1:
                raise ApiError(
                    st.bad_request(
                        f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
                    )
                )
            container = names[0]
        if container not in names + [c.get("name") for c in spec.get("initContainers") or []]:
            raise ApiError(st.bad_request(f"container {container} is not valid for pod {name}"))
        statuses = {c.get("name"): c for c in (pod.get("status") or {}).get("containerStatuses") or []}
        state = (statuses.get(container) or {}).get("state") or {}
        if not spec.get("nodeName") or "waiting" in state or not state:
            reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
            raise ApiError(st.bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}'))
        text = self.pod_logs(pod, container) if self.pod_logs else ""
        return web.Response(text=text, content_type="text/plain")

    @staticmethod
    def _scale_of(obj: dict) -> dict:
        """The autoscaling/v1 Scale view of a Deployment, ReplicaSet or StatefulSet."""
        md = obj["metadata"]
        sel = (obj.get("spec") or {}).get("selector") or {}
        parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
        for ex in sel.get("matchExpressions") or []:
            op, key, values = ex.get("operator"), ex.get("key"), ",".join(ex.get("values") or [])
            parts.append(
                {
                    "In": f"{key} in ({values})",
                    "NotIn": f"{key} notin ({values})",
                    "Exists": key,
                    "DoesNotExist": f"!{key}",
                }.get(op, key)
            )
        status: dict[str, Any] = {"replicas": int((obj.get("status") or {}).get("replicas", 0))}
        if parts:
            status["selector"] = ",".join(parts)
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                k: md[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in md
            },
            "spec": {"replicas": int((obj.get("spec") or {}).get("replicas", 1))},
            "status": status,
        }

    def _set_scale(self, request: web.Request, route: Route, scale: Any) -> web.Response:
        rt = route.rt
        if not isinstance(scale, dict) or not isinstance(scale.get("spec"), dict):
            raise ApiError(st.bad_request("the body of the request is not a Scale"))
        replicas = scale["spec"].get("replicas", 0)
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise ApiError(
                st.invalid(
                    "autoscaling",
                    "Scale",
                    route.name,
                    [
                        st.cause(
                            "FieldValueInvalid",
                            "spec.replicas",
                            f"Invalid value: {replicas!r}: must be greater than or equal to 0",
                        )
                    ],
                )
            )
        obj = self.store.get(rt, route.namespace or None, route.name)
        if obj is None:
            raise ApiError(st.not_found(rt.group, rt.plural, route.name))
        want_rv = (scale.get("metadata") or {}).get("resourceVersion")
        if want_rv and want_rv != obj["metadata"]["resourceVersion"]:
            raise ApiError(st.conflict(rt.group, rt.plural, route.name))
        obj.setdefault("spec", {})["replicas"] = replicas
        new = self.store.update(
            rt,
            obj,
            namespace=route.namespace or None,
            name=route.name,
            dry_run=self._dry_run(request),
            field_manager=self._manager(request),
        )
        return _json(self._scale_of(new))

    def _bind(self, request: web.Request, route: Route, body: Any) -> web.Response:
        if not isinstance(body, dict) or not isinstance(body.get("target"), dict) or not body["target"].get("name"):
            raise ApiError(st.bad_request("a Binding needs target.name"))
        pod = self.store.get("pods", route.namespace, route.name)
        if pod is None:
            raise ApiError(st.not_found("", "pods", route.name))
        node = body["target"]["name"]
        if pod.get("spec", {}).get("nodeName"):
            raise ApiError(
                st.conflict(
                    "",
                    "pods/binding",
                    route.name,
                    f'pod {route.name} is already assigned to node "{pod["spec"]["nodeName"]}"',
                )
            )
        if pod["metadata"].get("deletionTimestamp"):
            raise ApiError(
                st.conflict(
                    "", "pods/binding", route.name, f"pod {route.name} is being deleted, cannot be assigned to a host"
                )
            )
        if self._dry_run(request):
            return _json(st.success(), 201)
        pod["spec"]["nodeName"] = node
        self.store.update("pods", pod, namespace=route.namespace, check_rv=False)
        pod = self.store.get("pods", route.namespace, route.name)
        conds = [c for c in pod.get("status", {}).get("conditions") or [] if c.get("type") != "PodScheduled"]
        conds.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": self.clock.timestamp(),
            }
        )
        pod.setdefault("status", {})["conditions"] = conds
        self.store.update("pods", pod, "status", namespace=route.namespace, check_rv=False)
        return _json(st.success(), 201)

    async def _evict(self, request: web.Request, route: Route, body: Any) -> web.Response:
        if body is not None and not isinstance(body, dict):
            raise ApiError(st.bad_request("the body of the request is not an Eviction"))
        body = body or {}
        options = body.get("deleteOptions") or {}
        dry = self._dry_run(request, options)
        ns, name = route.namespace, route.name
        pod = self.store.get_ref("pods", ns, name)
        if pod is None:
            raise ApiError(st.not_found("", "pods", name))
        if body.get("metadata", {}).get("name") not in (None, "", name):
            raise ApiError(st.bad_request(f"name in URL does not match name in Eviction object"))
        grace = options.get("gracePeriodSeconds")
        pre = options.get("preconditions")
        terminal = pod.get("status", {}).get("phase") in ("Succeeded", "Failed")
        if not terminal and not pod["metadata"].get("deletionTimestamp"):
            pdbs = [
                e.obj
                for e in self.store.entries("poddisruptionbudgets.policy", ns)
                if e.obj.get("spec", {}).get("selector") is not None
                and match_label_selector(e.obj["spec"]["selector"], pod["metadata"].get("labels"))
            ]
            if len(pdbs) > 1:
                raise ApiError(st.eviction_multiple_budgets())
            if pdbs:
                pdb = pdbs[0]
                status = self.compute_pdb_status(pdb)
                healthy_pod = self._pod_ready(pod)
                if not healthy_pod and status["currentHealthy"] >= status["desiredHealthy"]:
                    pass  # an unready pod may go when the budget is met (IfHealthyBudget)
                elif status["disruptionsAllowed"] <= 0:
                    raise ApiError(
                        st.eviction_blocked(
                            pdb["metadata"]["name"], ns, status["desiredHealthy"], status["currentHealthy"]
                        )
                    )
                elif not dry:
                    status["disruptionsAllowed"] -= 1
                    status.setdefault("disruptedPods", {})[name] = self.clock.timestamp()
                    if status["disruptionsAllowed"] == 0:
                        status["conditions"][0].update(
                            status="False", reason="InsufficientPods", lastTransitionTime=self.clock.timestamp()
                        )
                    new = clone(pdb)
                    new["status"] = status
                    self.store.update("poddisruptionbudgets.policy", new, "status", check_rv=False)
        self.store.delete("pods", ns, name, grace_period_seconds=grace, preconditions=pre, dry_run=dry)
        return _json(st.success(), 201)

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
                            "Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified",
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
                    f'tokenreviews.authentication.k8s.io is forbidden: User "{user.name}" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope',
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
            # system:basic-user and system:discovery, bound to every authenticated user on a real cluster.
            res_rules += [
                {
                    "verbs": ["create"],
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                },
                {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
            ]
            non_res += [
                {
                    "verbs": ["get"],
                    "nonResourceURLs": [
                        "/api",
                        "/api/*",
                        "/apis",
                        "/apis/*",
                        "/healthz",
                        "/livez",
                        "/openapi",
                        "/openapi/*",
                        "/readyz",
                        "/version",
                        "/version/",
                    ],
                },
            ]
        return self._review(
            "SelfSubjectRulesReview",
            "authorization.k8s.io",
            spec,
            {"resourceRules": res_rules, "nonResourceRules": non_res, "incomplete": False},
        )

    def _token_request(self, request: web.Request, route: Route, body: Any) -> web.Response:
        """serviceaccounts/token: a bearer token for the service account, valid on this simulator for the run."""
        if body is not None and not isinstance(body, dict):
            raise ApiError(st.bad_request("the body of the request is not a TokenRequest"))
        spec = dict((body or {}).get("spec") or {})
        sa = self.store.get("serviceaccounts", route.namespace, route.name)
        if sa is None:
            raise ApiError(st.not_found("", "serviceaccounts", route.name))
        seconds = spec.get("expirationSeconds", 3600)
        if not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < 600 or seconds > 2**32:
            raise ApiError(
                st.invalid(
                    "authentication.k8s.io",
                    "TokenRequest",
                    route.name,
                    [
                        st.cause(
                            "FieldValueInvalid",
                            "spec.expirationSeconds",
                            "Invalid value: may not specify a duration less than 10 minutes",
                        )
                    ],
                )
            )
        spec["expirationSeconds"] = seconds
        spec.setdefault("audiences", ["https://kubernetes.default.svc.cluster.local"])
        spec.setdefault("boundObjectRef", None)
        name = f"system:serviceaccount:{route.namespace}:{route.name}"
        token = new_token()
        if not self._dry_run(request):
            # Each TokenRequest is a new token for the same identity; earlier ones stay valid, as on a real cluster.
            u = User(name, token, ("system:serviceaccounts", f"system:serviceaccounts:{route.namespace}"))
            self._tokens[token] = u
        expires = format_time(self.clock.now() + datetime.timedelta(seconds=seconds))
        out = {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": route.name, "namespace": route.namespace, "creationTimestamp": self.clock.timestamp()},
            "spec": spec,
            "status": {"token": token, "expirationTimestamp": expires},
        }
        return _json(out, 201)

    # ---------------------------------------------------------------- metrics

    def metrics_text(self) -> str:
        counts = self.store.counts()
        sizes = self.store.size_bytes()
        lines = [
            "# HELP apiserver_resource_objects [ALPHA] Number of stored objects at the time of last check split by kind.",
            "# TYPE apiserver_resource_objects gauge",
        ]
        for key, n in sorted(counts.items()):
            rt = resources.BY_KEY[key]
            lines.append(f'apiserver_resource_objects{{group="{rt.group}",resource="{rt.plural}"}} {n}')
        lines += [
            "# HELP apiserver_storage_objects [STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
            "# TYPE apiserver_storage_objects gauge",
        ]
        for key, n in sorted(counts.items()):
            lines.append(f'apiserver_storage_objects{{resource="{key}"}} {n}')
        lines += [
            "# HELP apiserver_storage_size_bytes [STABLE] Size of the storage database file physically allocated in bytes.",
            "# TYPE apiserver_storage_size_bytes gauge",
            f'apiserver_storage_size_bytes{{storage_cluster_id="dragoman-sim"}} {sum(sizes.values())}',
            "# HELP apiserver_registered_watchers [ALPHA] Number of currently registered watchers for a given resources",
            "# TYPE apiserver_registered_watchers gauge",
            f"apiserver_registered_watchers {self.store.watcher_count()}",
            "# HELP apiserver_request_total [STABLE] Counter of apiserver requests.",
            "# TYPE apiserver_request_total counter",
            f"apiserver_request_total {self.request_count}",
        ]
        return "\n".join(lines) + "\n"
