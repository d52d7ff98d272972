"""An in-memory API server for unit tests of actions/: objects by path, resourceVersions, merge patches, dry runs,
evictions, and scripted failures; every request is recorded, so a test says exactly what was sent."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from dragoman.fleet.cluster import ApiError

MERGE = "application/merge-patch+json"


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: maps merge, null removes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


@dataclasses.dataclass
class Sent:
    method: str
    path: str
    body: Any
    dry_run: bool
    content_type: str | None


class FakeCluster:
    """What actions/ asks of a cluster (`get`, `request`, `list_all`, a few names), answered from `objects`."""

    user = "tester"
    context_name = "fake"
    server = "https://fake.invalid"
    kube_system_uid = "uid-kube-system"
    identity = {"server": server, "kubeSystemUID": kube_system_uid}

    def __init__(self, *objects: tuple[str, dict]) -> None:
        self.objects: dict[str, dict] = {}
        self.sent: list[Sent] = []
        self.failures: list[tuple[str, str, int, bool]] = []  # (method, path, status, made-before-failing)
        self._rv = 100
        for path, obj in objects:
            self.put(path, obj)

    # ---------------------------------------------------------------- set-up
    def put(self, path: str, obj: dict) -> dict:
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {})["resourceVersion"] = self._next_rv()
        self.objects[path] = obj
        return obj

    def fail(self, method: str, path: str, status: int, *, made: bool = False) -> None:
        """The next `method` on `path` answers `status`; `made`: the write lands first (a lost answer)."""
        self.failures.append((method, path, status, made))

    def _next_rv(self) -> str:
        self._rv += 1
        return str(self._rv)

    # ---------------------------------------------------------------- what the tests read back
    def writes(self, *, dry_run: bool | None = False) -> list[Sent]:
        """What changed (or would change, dry runs) the cluster; an access review asks, it does not write."""
        return [
            s
            for s in self.sent
            if s.method != "GET"
            and not s.path.endswith("/selfsubjectaccessreviews")
            and (dry_run is None or s.dry_run == dry_run)
        ]

    # ---------------------------------------------------------------- the client's surface
    async def get(self, path: str, **query: Any) -> dict:
        return await self.request("GET", path)

    async def list_all(self, path: str, *, field_selector: str | None = None, **kw: Any) -> tuple[list[dict], str]:
        self.sent.append(Sent("GET", path, None, False, None))
        want = dict(p.split("=", 1) for p in field_selector.split(",")) if field_selector else {}
        items = []
        for p, obj in sorted(self.objects.items()):
            if not _in_collection(p, path):
                continue
            if want.get("spec.nodeName") and (obj.get("spec") or {}).get("nodeName") != want["spec.nodeName"]:
                continue
            items.append(copy.deepcopy(obj))
        return items, str(self._rv)

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: dict | None = None,
        content_type: str | None = None,
        retry: bool | None = None,
        **kw: Any,
    ) -> Any:
        dry = bool(query and query.get("dryRun") == "All")
        self.sent.append(Sent(method, path, copy.deepcopy(body), dry, content_type))
        for i, (m, p, status, made) in enumerate(self.failures):
            if m == method and p == path and not dry:
                del self.failures[i]
                if made:
                    self._apply(method, path, body)
                raise ApiError(status, method, path, {"kind": "Status", "code": status, "message": "scripted"})
        if method == "GET":
            if path not in self.objects:
                raise ApiError(404, method, path, {"kind": "Status", "code": 404, "message": "not found"})
            return copy.deepcopy(self.objects[path])
        if path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
            return {"status": {"allowed": True}}
        if dry:
            return self._check(method, path, body)
        return self._apply(method, path, body)

    # ---------------------------------------------------------------- semantics
    def _check(self, method: str, path: str, body: Any) -> Any:
        target = path.removesuffix("/eviction")
        if method in ("PATCH", "PUT", "DELETE") or path.endswith("/eviction"):
            if target not in self.objects:
                raise ApiError(404, method, path, {"kind": "Status", "code": 404, "message": "not found"})
            rv = ((body or {}).get("metadata") or {}).get("resourceVersion") if method != "DELETE" else None
            if rv and rv != self.objects[target]["metadata"]["resourceVersion"]:
                raise ApiError(409, method, path, {"kind": "Status", "code": 409, "message": "conflict"})
            options = ((body or {}).get("deleteOptions") or body or {}) if method != "PATCH" else {}
            uid = (options.get("preconditions") or {}).get("uid") if isinstance(options, dict) else None
            if uid and uid != self.objects[target]["metadata"].get("uid"):
                raise ApiError(409, method, path, {"kind": "Status", "code": 409, "message": "uid precondition"})
        if method == "POST" and not path.endswith("/eviction"):
            name = body["metadata"]["name"]
            if f"{path}/{name}" in self.objects:
                raise ApiError(409, method, path, {"kind": "Status", "code": 409, "message": "exists"})
        return copy.deepcopy(body)

    def _apply(self, method: str, path: str, body: Any) -> Any:
        self._check(method, path, body)
        if path.endswith("/eviction"):
            del self.objects[path.removesuffix("/eviction")]
            return {"kind": "Status", "status": "Success"}
        if method == "DELETE":
            return self.objects.pop(path)
        if method == "POST":
            return self.put(f"{path}/{body['metadata']['name']}", body)
        if method == "PUT":
            return self.put(path, body)
        if method == "PATCH":
            patched = merge_patch(self.objects[path], body)
            return self.put(path, patched)
        raise AssertionError(f"unexpected {method} {path}")


def _in_collection(path: str, collection: str) -> bool:
    """Whether `path` is an item of `collection` (cluster-wide lists of namespaced kinds included)."""
    if path.rsplit("/", 1)[0] == collection:
        return True
    # /api/v1/pods lists /api/v1/namespaces/<ns>/pods/<name>
    base, _, kind = collection.rpartition("/")
    parts = path.split("/")
    return path.startswith(f"{base}/namespaces/") and len(parts) >= 3 and parts[-2] == kind


def node(name: str, *, unschedulable: bool = False, labels: dict | None = None) -> tuple[str, dict]:
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": labels or {"pool": "gpu"}},
        "spec": {"unschedulable": True} if unschedulable else {},
        "status": {"allocatable": {"nvidia.com/gpu": "4"}},
    }
    return f"/api/v1/nodes/{name}", obj


def pod(
    ns: str, name: str, on: str, *, owner: str = "ReplicaSet", gpus: int = 0, phase: str = "Running"
) -> tuple[str, dict]:
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"uid-{ns}-{name}",
            "labels": {"app": name.rsplit("-", 1)[0]},
            "ownerReferences": [{"kind": owner, "name": f"{name}-owner", "controller": True}] if owner else [],
        },
        "spec": {"nodeName": on, "containers": [{"name": "c", "resources": {"limits": limits}}]},
        "status": {"phase": phase},
    }
    return f"/api/v1/namespaces/{ns}/pods/{name}", obj
