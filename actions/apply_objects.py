"""Applying a handful of generated objects (the playground's DeviceClasses and claim templates): server-side dry run,
then each write with an audit intent and outcome."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable
from typing import Any

from dragoman.actions import operations
from dragoman.actions.audit import AuditLog
from dragoman.actions.operations import ApplyObject
from dragoman.fleet.errors import ReadOnlyError
from dragoman.fleet.k8s import registry

# What the playground may apply; where each lives is the registry's (fleet/k8s/registry.py).
_APPLICABLE = (
    ("resource.k8s.io/v1", "DeviceClass"),
    ("resource.k8s.io/v1", "ResourceClaimTemplate"),
    ("resource.k8s.io/v1", "ResourceClaim"),
)


@dataclasses.dataclass
class Applied:
    """One object's fate: "created", "replaced", "unchanged" (dry run: "would create" ...), or "failed" with the
    server's message."""

    kind: str
    namespace: str
    name: str
    result: str
    message: str = ""

    @property
    def ref(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


def _collection(obj: dict) -> tuple[str, str]:
    key = (obj.get("apiVersion", ""), obj.get("kind", ""))
    if key not in _APPLICABLE:
        raise ValueError(f"cannot apply {key[1] or 'an object'} ({key[0]}) from the playground")
    rt = registry.of_kind(key[1], key[0])
    ns = (obj.get("metadata") or {}).get("namespace") or ""
    if rt.namespaced and not ns:
        raise ValueError(f"{key[1]} {(obj.get('metadata') or {}).get('name')} needs a namespace")
    return rt.path(ns or None), ns


async def _existing(cluster: Any, path: str, name: str) -> dict | None:
    from dragoman.fleet.cluster import ApiError

    try:
        return await cluster.get(f"{path}/{name}")
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise


async def dry_run(cluster: Any, objects: Iterable[dict]) -> list[Applied]:
    """What applying would do, checked by the server (`dryRun=All`: admission and schema validation, nothing stored)."""
    return await _apply(cluster, list(objects), dry=True)


async def apply_objects(
    cluster: Any,
    objects: Iterable[dict],
    *,
    audit: AuditLog,
    by: dict | None = None,
    read_only: bool = False,
    plan_id: str | None = None,
) -> list[Applied]:
    """Dry-run every object first (all or nothing), then create or replace each, with an audit intent before and outcome
    after."""
    objs = list(objects)
    if read_only:  # before anything is read; the door (operations.write_unplanned) refuses each write again
        raise ReadOnlyError("apply objects from the playground")
    checked = await _apply(cluster, objs, dry=True)
    bad = [a for a in checked if a.result == "failed"]
    if bad:
        return checked
    return await _apply(cluster, objs, dry=False, audit=audit, plan_id=plan_id or f"playground-{uuid.uuid4().hex[:8]}")


async def _apply(
    cluster: Any,
    objs: list[dict],
    *,
    dry: bool,
    audit: AuditLog | None = None,
    plan_id: str = "",
    read_only: bool = False,
) -> list[Applied]:
    from dragoman.fleet.cluster import ApiError

    out = []
    for obj in objs:
        meta = obj.get("metadata") or {}
        name = meta.get("name", "")
        try:
            path, ns = _collection(obj)
        except ValueError as exc:
            out.append(Applied(obj.get("kind", ""), meta.get("namespace", ""), name, "failed", str(exc)))
            continue
        kind = obj["kind"]
        try:
            cur = await _existing(cluster, path, name)
        except ApiError as exc:
            out.append(Applied(kind, ns, name, "failed", exc.message if hasattr(exc, "message") else str(exc)))
            continue
        op = ApplyObject(obj, path, cur)
        if op.done(cur):
            out.append(Applied(kind, ns, name, "would stay unchanged" if dry else "unchanged"))
            continue
        try:
            await operations.write_unplanned(cluster, op, audit=audit, plan_id=plan_id, dry=dry, read_only=read_only)
        except ApiError as exc:
            out.append(Applied(kind, ns, name, "failed", exc.message if hasattr(exc, "message") else str(exc)))
            continue
        done = "created" if cur is None else "replaced"
        out.append(Applied(kind, ns, name, f"would be {done}" if dry else done))
    return out
