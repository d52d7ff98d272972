"""Playground pure parts: the first false clause of a selector, and generated classes, tiers and claim templates (valid
1.37 objects)."""

from __future__ import annotations

import kubernetes_validate
import yaml
from dragoman.fleet import cel_generate as G
from dragoman.fleet.cel import cel_device, compile_expression
from dragoman.fleet.cel_explain import Explainer, split_and


def _dev(**attrs):
    raw = {
        "name": "gpu-0",
        "attributes": {k: ({"string": v} if isinstance(v, str) else {"int": v}) for k, v in attrs.items()},
        "capacity": {"memory": {"value": "80Gi"}},
    }
    return cel_device("gpu.nvidia.com", raw)


def test_split_and_keeps_strings_groups_and_looser_operators_whole():
    assert [c.text for c in split_and('a && (b || c) && "x && y"')] == ["a", "(b || c)", '"x && y"']
    assert [c.text for c in split_and("a && b || c")] == ["a && b || c"]
    assert [c.text for c in split_and("(a && b && c)")] == ["a", "b", "c"]
    expr = 'device.driver == "gpu.nvidia.com"  &&  x == 1'
    clauses = split_and(expr)
    assert expr[clauses[1].start :].startswith("x == 1")


def test_first_false_clause_is_named_and_errors_are_skipped():
    expr = (
        'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu" '
        '&& device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"'
    )
    ex = Explainer(expr)
    assert (
        ex.first_false(_dev(type="gpu", productName="NVIDIA L4")).text
        == 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"'
    )
    assert (
        ex.first_false(_dev(type="mig", productName="NVIDIA L4")).text
        == 'device.attributes["gpu.nvidia.com"].type == "gpu"'
    )
    # `index` is missing (an error), but the later clause is false: && makes the whole false, and that clause says why.
    ex2 = Explainer(
        'device.attributes["gpu.nvidia.com"].index < 4 && device.attributes["gpu.nvidia.com"].type == "gpu"'
    )
    dev = _dev(type="mig")
    assert ex2.first_false(dev).text == 'device.attributes["gpu.nvidia.com"].type == "gpu"'
    assert ex2.first_error(dev).text.startswith('device.attributes["gpu.nvidia.com"].index')
    assert compile_expression(ex2.expression).evaluate(dev).value is False


def _valid(objs):
    for o in objs:
        # Raises ValidationError on any schema violation (strict: unknown fields too).
        assert kubernetes_validate.validate(o, "1.37.0", strict=True) == "1.37"


def test_device_class_validates_and_warns_about_taking_over_a_served_name():
    gen = G.device_class(
        "h100",
        'device.driver == "gpu.nvidia.com"',
        extended_resource_name="nvidia.com/gpu",
        served_by={"nvidia.com/gpu": "gpu.nvidia.com"},
    )
    _valid(gen.objects)
    assert gen.objects[0]["spec"]["extendedResourceName"] == "nvidia.com/gpu"
    assert any("blast radius" in w and "gpu.nvidia.com" in w for w in gen.warnings)
    quiet = G.device_class("h100", 'device.driver == "gpu.nvidia.com"', served_by={"nvidia.com/gpu": "gpu.nvidia.com"})
    assert not quiet.warnings and "deviceclass.resource.kubernetes.io/h100" in quiet.notes[0]
    assert G.device_class("Bad_Name", "true").warnings


def test_tier_classes_per_product_and_per_mig_profile_validate_and_select():
    catalogue = {
        "gpu.nvidia.com": {
            "gpu.nvidia.com/productName": {"values": {"NVIDIA A100-SXM4-80GB": 8, "NVIDIA H100 80GB HBM3": 4}},
            "gpu.nvidia.com/profile": {"values": {"1g.10gb": 7, "3g.40gb": 2}},
        }
    }
    prods = G.tier_classes([v for v, _ in G.tier_values(catalogue, "product")], "product")
    assert [o["metadata"]["name"] for o in prods.objects] == ["nvidia-a100-sxm4-80gb", "nvidia-h100-80gb-hbm3"]
    assert any("deviceclass.resource.kubernetes.io/nvidia-h100-80gb-hbm3" in n for n in prods.notes)
    migs = G.tier_classes(
        [v for v, _ in G.tier_values(catalogue, "mig-profile")], "mig-profile", existing=["mig-1g-10gb"]
    )
    assert [o["metadata"]["name"] for o in migs.objects] == ["mig-1g-10gb", "mig-3g-40gb"]
    assert any("exists already" in w for w in migs.warnings)
    _valid(prods.objects + migs.objects)
    sel = compile_expression(migs.objects[0]["spec"]["selectors"][0]["cel"]["expression"])
    assert sel.evaluate(_dev(type="mig", profile="1g.10gb")).value is True
    assert sel.evaluate(_dev(type="mig", profile="3g.40gb")).value is False


def test_claim_template_and_pod_snippet():
    gen = G.claim_template(
        "h100-only",
        "research",
        "gpu.nvidia.com",
        'device.attributes["gpu.nvidia.com"].architecture == "Hopper"',
        count=2,
        served=["nvidia.com/gpu"],
    )
    _valid(gen.objects)
    req = gen.objects[0]["spec"]["spec"]["devices"]["requests"][0]
    assert req["exactly"]["count"] == 2 and req["exactly"]["selectors"]
    assert gen.snippet["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "h100-only"}]
    assert gen.snippet["spec"]["containers"][0]["resources"]["claims"] == [{"name": "gpu"}]
    assert any("drop the matching limits" in w and "nvidia.com/gpu" in w for w in gen.warnings)
    docs = list(yaml.safe_load_all(G.to_yaml(gen.objects + G.device_class("a", "true").objects)))
    assert [d["kind"] for d in docs] == ["ResourceClaimTemplate", "DeviceClass"]
