"""Generates openapi_schemas.json (the schemas the simulator serves) from kubernetes-validate's bundled 1.37
definitions.

Run: /work/venv/bin/python -m dragoman.sim.api.gen_openapi   (kubernetes-validate is a test dependency only;
the generated JSON ships with dragoman.)
"""

from __future__ import annotations

import json
import pathlib
import re

OUT = pathlib.Path(__file__).with_name("openapi_schemas.json")
VERSION_DIR = "v1.37.0-local"

# Every kind the simulator serves, by (group, version); the roots of the schemas shipped.
SERVED: dict[tuple[str, str], list[str]] = {
    ("", "v1"): [
        "io.k8s.api.core.v1.Namespace",
        "io.k8s.api.core.v1.Node",
        "io.k8s.api.core.v1.Pod",
        "io.k8s.api.core.v1.Event",
        "io.k8s.api.core.v1.ConfigMap",
        "io.k8s.api.core.v1.ResourceQuota",
        "io.k8s.api.core.v1.ServiceAccount",
        "io.k8s.api.core.v1.Binding",
        # helm's release storage, and what `kubectl cluster-info` reads (the `kubernetes` Service).
        "io.k8s.api.core.v1.Secret",
        "io.k8s.api.core.v1.Service",
    ],
    ("authentication.k8s.io", "v1"): [
        # `kubectl auth whoami`, token checks, and serviceaccounts/token.
        "io.k8s.api.authentication.v1.SelfSubjectReview",
        "io.k8s.api.authentication.v1.TokenReview",
        "io.k8s.api.authentication.v1.TokenRequest",
    ],
    ("apiextensions.k8s.io", "v1"): [
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
    ],
    ("apps", "v1"): [
        "io.k8s.api.apps.v1.DaemonSet",
        "io.k8s.api.apps.v1.Deployment",
        "io.k8s.api.apps.v1.ReplicaSet",
        "io.k8s.api.apps.v1.StatefulSet",
    ],
    ("batch", "v1"): ["io.k8s.api.batch.v1.Job", "io.k8s.api.batch.v1.CronJob"],
    ("policy", "v1"): ["io.k8s.api.policy.v1.PodDisruptionBudget", "io.k8s.api.policy.v1.Eviction"],
    ("coordination.k8s.io", "v1"): ["io.k8s.api.coordination.v1.Lease"],
    ("rbac.authorization.k8s.io", "v1"): [
        "io.k8s.api.rbac.v1.Role",
        "io.k8s.api.rbac.v1.ClusterRole",
        "io.k8s.api.rbac.v1.RoleBinding",
        "io.k8s.api.rbac.v1.ClusterRoleBinding",
    ],
    ("authorization.k8s.io", "v1"): [
        "io.k8s.api.authorization.v1.SelfSubjectAccessReview",
        "io.k8s.api.authorization.v1.SelfSubjectRulesReview",
    ],
    # The events.k8s.io view of the core Events (sim/api/events.py converts between the two).
    ("events.k8s.io", "v1"): ["io.k8s.api.events.v1.Event"],
    ("resource.k8s.io", "v1"): [
        "io.k8s.api.resource.v1.DeviceClass",
        "io.k8s.api.resource.v1.ResourceSlice",
        "io.k8s.api.resource.v1.ResourceClaim",
        "io.k8s.api.resource.v1.ResourceClaimTemplate",
        "io.k8s.api.resource.v1.DeviceTaintRule",
    ],
}
COMMON = [
    "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
]
# Descriptions are kept where `kubectl explain` is expected to be read (the DRA API, object metadata, and the
# pod/node/workload fields a migration touches); elsewhere they are dropped to keep the shipped file small.
KEEP_DESCRIPTIONS = re.compile(
    r"^io\.k8s\.api\.resource\.v1\."
    r"|^io\.k8s\.api\.core\.v1\.(Pod|PodSpec|PodStatus|Container|ContainerStatus|PodCondition|Node|NodeSpec|NodeStatus|NodeSystemInfo"
    r"|NodeCondition|NodeAddress|Toleration|Taint|ResourceRequirements|PodResourceClaim|ResourceClaim|Affinity|NodeAffinity|NodeSelector"
    r"|NodeSelectorTerm|NodeSelectorRequirement|PodExtendedResourceClaimStatus|ContainerExtendedResourceRequest)$"
    r"|^io\.k8s\.api\.apps\.v1\.(DaemonSet|DaemonSetSpec|Deployment|DeploymentSpec)$"
    r"|^io\.k8s\.apimachinery\.pkg\.apis\.meta\.v1\.(ObjectMeta|ListMeta|OwnerReference|ManagedFieldsEntry|LabelSelector|LabelSelectorRequirement)$"
)

SPECIAL = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.runtime.RawExtension": {"type": "object"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": {"type": "object"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch": {"type": "object"},
}


def _source() -> dict:
    import kubernetes_validate

    path = (
        pathlib.Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / VERSION_DIR / "_definitions.json"
    )
    return json.loads(path.read_text())["$defs"]


def _convert(node, keep_desc: bool):
    """JSON-Schema (kubernetes-validate flavour) → OpenAPI v3 as the API server writes it."""
    if isinstance(node, list):
        return [_convert(n, keep_desc) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict = {}
    for key, value in node.items():
        if key == "description" and not keep_desc:
            continue
        if key == "$ref":
            out[key] = value.replace("#/$defs/", "#/components/schemas/")
        elif key == "type" and isinstance(value, list):
            kinds = [v for v in value if v != "null"]
            out[key] = kinds[0] if len(kinds) == 1 else kinds
        elif key in ("properties", "patternProperties"):
            out[key] = {k: _convert(v, keep_desc) for k, v in value.items()}
        else:
            out[key] = _convert(value, keep_desc)
    # The server wraps a $ref that has siblings (description, default) in allOf.
    if "$ref" in out and len(out) > 1:
        ref = out.pop("$ref")
        out = {"allOf": [{"$ref": ref}], **out}
    return out


def _refs(node, found: set) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref.rsplit("/", 1)[-1])
        for v in node.values():
            _refs(v, found)
    elif isinstance(node, list):
        for v in node:
            _refs(v, found)


def build() -> dict:
    src = _source()
    roots = set(COMMON)
    for names in SERVED.values():
        for name in names:
            roots.add(name)
            if name + "List" in src:
                roots.add(name + "List")
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name in SPECIAL:
            seen.add(name)
            continue
        seen.add(name)
        found: set[str] = set()
        _refs(src[name], found)
        todo.extend(found - seen)
    schemas = {}
    for name in sorted(seen):
        if name in SPECIAL:
            schemas[name] = dict(SPECIAL[name])
            continue
        schema = _convert(src[name], bool(KEEP_DESCRIPTIONS.search(name)))
        for field in ("apiVersion", "kind"):
            prop = schema.get("properties", {}).get(field)
            if prop:
                prop.pop("enum", None)
        schemas[name] = schema
    served = {f"{g}/{v}" if g else v: names for (g, v), names in SERVED.items()}
    return {"served": served, "schemas": schemas}


def main() -> None:
    data = build()
    OUT.write_text(json.dumps(data, separators=(",", ":"), sort_keys=True))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(data['schemas'])} schemas)")


if __name__ == "__main__":
    main()
