"""The pending-selector diagnosis names the clause of the CEL selector that excludes every device the pod could use,
with what those devices publish (issue 18's leftover), on the demo fleet's llm-eval pod."""

from __future__ import annotations

import pathlib

import pytest
import yaml
from dragoman.fleet.diagnose import diagnose
from dragoman.fleet.diagnose.selectors import top_level_clauses
from fleet_fixtures import model_of

DEMO_YAML = pathlib.Path(__file__).resolve().parents[2] / "sim" / "scenarios" / "demo.yaml"
MEMORY = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
ARCH = "device.attributes['gpu.nvidia.com'].architecture == 'Hopper'"


@pytest.fixture(scope="module")
def demo_objects() -> list[dict]:
    items: list[dict] = []
    for doc in yaml.load_all(DEMO_YAML.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        if isinstance(doc, dict) and doc.get("kind", "").endswith("List"):
            items.extend(doc.get("items") or [])
        elif isinstance(doc, dict):
            items.append(doc)
    return items


def _pending_selector(objs: list[dict]):
    return next(f for f in diagnose(model_of(*objs)) if f.id == "pending-selector")


def test_the_demo_pending_pod_names_the_memory_clause_and_the_h100s_memory(demo_objects) -> None:
    f = _pending_selector(demo_objects)
    assert f.objects[0] == ("Pod", "research", f.objects[0][2]) and f.objects[0][2].startswith("llm-eval-")
    # 80Gi is 81920Mi; an H100 80GB publishes 81559Mi, so the memory clause, not the architecture, excludes them
    # all on the h100-dra nodes the pod's nodeSelector allows (the A100s that would pass it are elsewhere).
    want = f"{MEMORY} excludes all 24 devices the rest of the selector keeps (NVIDIA H100 80GB HBM3): they have 81559Mi"
    assert f.evidence[0] == "ResourceClaimTemplate h100-80gi request gpu: " + want
    # The summary says it once, short; the evidence holds the whole clause (issue 30: each thing once).
    assert "`memory >= 80Gi` in ResourceClaimTemplate h100-80gi" in f.summary
    assert f.evidence[0] not in f.summary


def test_the_fix_links_the_template_and_says_what_to_write(demo_objects) -> None:
    # Issue 30: "Fix the selector of ResourceClaimTemplate h100-80gi" linked no template and said nothing to write.
    f = _pending_selector(demo_objects)
    assert ("ResourceClaimTemplate", "research", "h100-80gi") in f.objects[1:]  # the describe page links objects[1:]
    assert "ResourceClaimTemplate research/h100-80gi" in f.fix
    # 80G (decimal, what "80GB" means) and 79Gi both keep an H100's 81559Mi; 80Gi (81920Mi) does not.
    assert "write quantity('80G') (or quantity('79Gi'))" in f.fix
    assert "81559Mi" in f.fix


def test_no_single_clause_to_blame_keeps_the_old_sentence(demo_objects) -> None:
    # Ampere and at least 100Gi on the pod's H100 nodes: each clause alone already leaves no device there, so the two
    # exclude together and neither is named.
    objs = []
    for o in demo_objects:
        if o.get("kind") == "ResourceClaimTemplate" and o["metadata"]["name"] == "h100-80gi":
            o = yaml.safe_load(yaml.safe_dump(o))
            sel = o["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]["cel"]
            sel["expression"] = ARCH.replace("Hopper", "Ampere") + " && " + MEMORY.replace("80Gi", "100Gi")
        objs.append(o)
    f = _pending_selector(objs)
    assert (
        f.evidence[0]
        == "ResourceClaimTemplate h100-80gi request gpu: selects no usable device (see its selector finding)"
    )


def test_top_level_clauses_respect_brackets_and_strings() -> None:
    assert top_level_clauses("a && (b && c) && x['p&&q'] == 'r && s'") == ["a", "(b && c)", "x['p&&q'] == 'r && s'"]
    assert top_level_clauses(f"{ARCH} && {MEMORY}") == [ARCH, MEMORY]
