"""Findings about accounting (findings.md, "Accounting"): allocatable readers and quotas."""

from __future__ import annotations

from collections.abc import Iterable

from dragoman.fleet.diagnose.context import Context, node_ref, plural
from dragoman.fleet.findings import Finding, make_finding
from dragoman.fleet.model import (
    claim_requests,
    claim_spec,
    is_bridge_claim,
    request_alternatives,
)
from dragoman.fleet.ownership import GPU


def accounting(ctx: Context) -> Iterable[Finding]:
    m = ctx.m
    for pool in sorted(ctx.pools.values(), key=lambda p: p.name):
        if pool.target != "dra":
            continue
        nodes = [
            v
            for v in m.pool_nodes(pool.name)
            if v.is_gpu and v.allocatable_gpu == 0 and not any(v.mig_allocatable.values())
        ]
        if not nodes:
            continue
        devices = sum(v.devices_gpu for v in nodes)
        yield make_finding(
            "allocatable-readers",
            [node_ref(v.name) for v in nodes],
            f"pool {pool.name}: {plural(len(nodes), 'node')} on DRA report 0 allocatable nvidia.com/gpu; "
            f"sums of node allocatable miss {plural(devices, 'device')}",
            [
                (
                    f"{plural(len(nodes), 'node')} with allocatable nvidia.com/gpu 0 or absent, {devices} devices "
                    "in their ResourceSlices"
                )
            ],
            pool=pool.name,
        )
    if ctx.gpu_class is None:
        return
    for (ns, qname), quota in sorted(m.objects["ResourceQuota"].items()):
        hard = (quota.get("spec") or {}).get("hard") or {}
        if f"requests.{GPU}" not in hard:
            continue
        plain = []
        for (cns, cname), claim in sorted(m.objects["ResourceClaim"].items()):
            if cns != ns or is_bridge_claim(claim):
                continue
            cls = {
                b.get("deviceClassName")
                for r in claim_requests(claim_spec(claim, "ResourceClaim").get("devices"))
                for _, b in request_alternatives(r)
            }
            if ctx.gpu_class in cls:
                plain.append(("ResourceClaim", cns, cname))
        if not plain:
            continue
        used = ((quota.get("status") or {}).get("used") or {}).get(f"requests.{GPU}")
        yield make_finding(
            "quota-claims-now-count",
            [("ResourceQuota", ns, qname)] + plain,
            f"namespace {ns}: {plural(len(plain), 'plain claim')} of {ctx.gpu_class} now "
            f"{'counts' if len(plain) == 1 else 'count'} against quota {qname}'s requests.{GPU}",
            [
                (
                    f"ResourceQuota {qname}: requests.{GPU} hard {hard[f'requests.{GPU}']}, used "
                    f"{used if used is not None else '?'}"
                ),
                "claims: " + ", ".join(c[2] for c in plain[:5]),
            ],
            quota=qname,
            namespace=ns,
        )
