"""A projected pod's YAML and describe pages show the whole object, read from the API server when the page opens."""

from __future__ import annotations

from dragoman.fleet.projection import Projection

from tests.tui.conftest import demo_app, wait_for


def _dropped(whole: dict, projection: dict) -> list[str]:
    """Field names the projection does not keep (the page must show them)."""
    out = []
    for section in ("spec", "status"):
        out += sorted(set(whole.get(section) or {}) - set(projection.get(section) or {}))
    return out


def _gets(sim, key) -> int:
    return sum(
        1 for r in sim.request_log if r.method == "GET" and r.path == f"/api/v1/namespaces/{key[0]}/pods/{key[1]}"
    )


async def test_yaml_and_describe_of_a_projected_pod_show_the_whole_object() -> None:
    async with demo_app() as (sim, app, pilot):
        pods = app.feed.model.objects["Pod"]
        key, pod = next((k, p) for k, p in sorted(pods.items()) if isinstance(p, Projection))
        whole = sim.store.get("pods", *key)
        dropped = _dropped(whole, pod)
        assert dropped  # e.g. the pod's addresses and qosClass: what the store did not keep
        gets = _gets(sim, key)
        app.open_detail(("Pod", *key), "yaml")
        await wait_for(
            pilot, lambda: getattr(app.screen, "mode", "") == "yaml" and app.screen.ready, what="the YAML page"
        )
        text = str(app.screen.query_one("#detail-text").render())
        assert "reading the whole object" not in text
        for name in dropped:
            assert f"{name}:" in text, name
        assert _gets(sim, key) == gets + 1  # one GET of that pod, through the app's connection
        await pilot.press("d")
        await wait_for(
            pilot, lambda: getattr(app.screen, "mode", "") == "describe" and app.screen.ready, what="the describe page"
        )
        assert key[1] in str(app.screen.query_one("#heading").render())
