"""Discovery: /version, /api, /apis (legacy and aggregated), group and resource lists, and OpenAPI v3."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from aiohttp import web
from dragoman.fleet.k8s import registry
from dragoman.fleet.k8s.registry import ResourceType
from dragoman.sim import pieces, resources
from dragoman.sim.api import status as st
from dragoman.sim.api import version
from dragoman.sim.server.wire import _json
from dragoman.sim.store import ApiError

# `/version` as a release build of kube-apiserver answers it (the real control plane built here from the Go module
# says gitCommit "$Format:%H$" and buildDate 1970, which no release does; the differential compares only the code).
# buildDate is the v1.37.2 tag's time (the Go module proxy's); the commit is a stand-in: no source here records it.
SERVER_VERSION = {
    "major": version.MAJOR,
    "minor": version.MINOR,
    "emulationMajor": version.MAJOR,
    "emulationMinor": version.MINOR,
    "minCompatibilityMajor": version.MAJOR,
    "minCompatibilityMinor": str(int(version.MINOR) - 1),
    "gitVersion": version.GIT_VERSION,
    "gitCommit": "f78e7220d1c3a1b4cbbaa1d8a4b0e6e1e4a7d0c2",
    "gitTreeState": "clean",
    "buildDate": "2026-10-27T12:01:04Z",
    "goVersion": "go1.26.8",
    "compiler": "gc",
    "platform": "linux/amd64",
}


# The order in which kube-apiserver v1.37.2 lists its API groups (`GET /apis`), the simulator's among them.
GROUP_ORDER = [
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "resource.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "storagemigration.k8s.io",
]
# Kinds kube-apiserver stores in another version than the one served (the hash names the stored one).
STORAGE_VERSION = {("resource.k8s.io", "DeviceTaintRule"): "v1beta2"}


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """apiserver's StorageVersionHash: the first 8 bytes of sha256("group/version/kind"), base64 (a client such as
    the storage version migrator compares it to notice a new storage version)."""
    version = STORAGE_VERSION.get((group, kind), version)
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


class DiscoveryMixin:
    """Discovery documents built from sim/resources.py."""

    def _groups(self) -> list[str]:
        out: list[str] = []
        for g, _ in resources.group_versions():
            if g and g not in out:
                out.append(g)
        # kube-aggregator's order (its group priorities), custom resources' groups after the built-in ones.
        return sorted(out, key=lambda g: (GROUP_ORDER.index(g) if g in GROUP_ORDER else len(GROUP_ORDER), g))

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
        for rt in registry.RESOURCES:
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
            if rt.key not in resources.VIRTUAL:
                # A view's hash names what is stored (events.k8s.io Events: the core v1 Event).
                stored = resources.BY_KEY[rt.storage] if rt.storage else rt
                entry["storageVersionHash"] = storage_version_hash(stored.group, stored.version, stored.kind)
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
            # In the order of their paths, as the API installer registers them.
            "resources": sorted(out, key=lambda e: e["name"]),
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
                for rt in registry.RESOURCES:
                    if (rt.group, rt.version) != (g, v):
                        continue
                    # apiserver's installer copies the legacy list entry's group and version, which a built-in
                    # resource leaves empty when they are its group-version's; a CRD's discovery names them.
                    own = (rt.group, rt.version) if rt.custom else ("", "")
                    entry: dict[str, Any] = {
                        "resource": rt.plural,
                        "responseKind": {"group": own[0], "version": own[1], "kind": rt.kind},
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
                        if (sg, sv) == (rt.group, rt.version) and not rt.custom:
                            sg, sv = "", ""
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
