"""k9s's `l` and events (issue 30: a finding's fix said "check the DRA driver pod's logs" and there was no way to):
`l` reads a container's log from the API server's pods/log subresource and shows it as the server sent it, with a
sentence when there is none (the embedded simulator runs no containers; a pod on no node; a snapshot) or when the
server refuses (4xx); the describe page ends with the object's Events and `:events` lists them all."""

from __future__ import annotations

from dragoman.fleet.cluster import ApiError
from dragoman.tui.screens.detail import DetailScreen
from dragoman.tui.screens.logs import LogScreen, containers_of, error_sentence

from tests.tui.conftest import demo_app, snapshot_app, snapshot_copy, static_text, wait_for
from tests.tui.test_tui_snapshots import _keys


def _running_pod_key(app):
    pods = app.feed.fleet.model.objects["Pod"]
    return next(
        k
        for k, p in pods.items()
        if (p.get("spec") or {}).get("nodeName")
        and (p.get("status") or {}).get("phase") == "Running"
        and all("running" in (c.get("state") or {}) for c in (p.get("status") or {}).get("containerStatuses") or [{}])
    )


async def _logs_of(pilot, app, key) -> LogScreen:
    app.push_screen(LogScreen(*key))
    await wait_for(pilot, lambda: isinstance(app.screen, LogScreen) and app.screen.ready, what="the log page")
    return app.screen


async def test_a_running_pods_log_is_shown_as_the_server_sends_it_and_the_simulators_empty_log_says_why() -> None:
    async with demo_app() as (sim, app, pilot):
        key = _running_pod_key(app)
        screen = await _logs_of(pilot, app, key)
        assert "the embedded simulator runs no containers" in screen.text, screen.text
        await pilot.press("escape")
        # A server that has lines: shown as they are, the newest at the bottom.
        sim.pod_logs = lambda pod, container: f"GPU 0: NVIDIA L4 (UUID: GPU-1)\n[{container}] ready\n"
        screen = await _logs_of(pilot, app, key)
        assert screen.text.startswith("GPU 0: NVIDIA L4 (UUID: GPU-1)\n[") and screen.text.endswith("] ready")
        assert "Logs of pod " + f"{key[0]}/{key[1]}" in static_text(screen.query_one("#heading"))


async def test_l_on_a_node_shows_its_dra_driver_pods_log_and_on_a_pending_pod_says_it_has_not_run() -> None:
    async with demo_app(size=(80, 24)) as (sim, app, pilot):
        model = app.feed.fleet.model
        node = next(n for n in model.node_names() if model.node(n).dra_driver)
        driver = model.node(node).dra_driver[0].key
        await _keys("2", lambda a: a.screen.table.move_to(node), "l")(pilot)
        await wait_for(pilot, lambda: isinstance(app.screen, LogScreen) and app.screen.ready, what="the log page")
        assert (app.screen.namespace, app.screen.pod_name) == driver
        await pilot.press("escape")
        pending = next(
            k
            for k, p in model.objects["Pod"].items()
            if not (p.get("spec") or {}).get("nodeName") and p["spec"].get("containers")
        )
        screen = await _logs_of(pilot, app, pending)
        assert "is not on a node yet" in screen.text and "has not run" in screen.text


async def test_a_snapshot_has_no_logs_and_says_so(tmp_path) -> None:
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await _keys("5", "l")(pilot)
        await wait_for(pilot, lambda: isinstance(app.screen, LogScreen) and app.screen.ready, what="the log page")
        assert app.screen.text.startswith("a snapshot holds objects, not logs")


def test_a_refusal_is_one_sentence_with_the_servers_words() -> None:
    forbidden = ApiError(403, "GET", "/api/v1/namespaces/a/pods/p/log", {"reason": "Forbidden", "message": "no."})
    assert error_sentence(forbidden, "a", "p", "c").startswith("not allowed to read the log of pod a/p (no): your role")
    waiting = ApiError(400, "GET", "/x", {"message": 'container "c" in pod "p" is waiting to start: ContainerCreating'})
    said = error_sentence(waiting, "a", "p", "c")
    assert said == (
        'the API server will not give the log of container c (400: container "c" in pod "p" is waiting to start: '
        "ContainerCreating)"
    )


def test_the_default_container_comes_first() -> None:
    pod = {
        "metadata": {"annotations": {"kubectl.kubernetes.io/default-container": "main"}},
        "spec": {"containers": [{"name": "sidecar"}, {"name": "main"}], "initContainers": [{"name": "init"}]},
    }
    assert containers_of(pod) == ["main", "sidecar", "init"]


async def test_events_view_lists_warnings_first_and_enter_opens_the_object_with_its_events(tmp_path) -> None:
    app = snapshot_app(snapshot_copy(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _keys("colon", *"events", "enter")(pilot)
        table = app.screen.table
        rows = [table.row(k) for k in table.keys()]
        assert rows and str(rows[0][1]) == "Warning"
        types = [str(r[1]) for r in rows]
        assert types == sorted(types, key=lambda t: t != "Warning"), "warnings first"
        obj = str(rows[0][0])
        await _keys("enter")(pilot)
        assert isinstance(app.screen, DetailScreen)
        text = static_text(app.screen.query_one("#detail-text"), 160)
        assert text.startswith(obj) and "Events:" in text
        # Said once: the scheduler's words are quoted by the finding above, the event points there.
        assert "(its words are quoted above)" in text or "FailedScheduling" in text.split("Events:")[1]
