"""The CEL playground on the demo: live counts, compile errors at their position, runtime errors and their reach, the
first false clause, completion, starts, generation, dry run and apply through the audit log, read-only."""

from __future__ import annotations

import json

import kubernetes_validate
import yaml
from dragoman.sim.scenarios import DEMO_PATH
from dragoman.tui.app import DragomanApp
from dragoman.tui.screens.playground import GenerateScreen, PlaygroundScreen
from dragoman.tui.source import open_cluster_feed
from textual.widgets import DataTable, Input, Select, Static, TextArea

from tests.support.sim import running_simulator
from tests.tui.conftest import demo_app, ready, wait_for

H100 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"'


def text_of(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def counts(app) -> str:
    return text_of(app, "#cel-counts")


async def open_playground(pilot, app) -> PlaygroundScreen:
    await pilot.press("colon", *"cel", "enter")
    await wait_for(pilot, lambda: isinstance(app.screen, PlaygroundScreen) and app.screen.ready, 30, "the playground")
    await wait_for(pilot, lambda: "devices" in counts(app), 30, "the first counts")
    return app.screen


async def set_expression(pilot, screen: PlaygroundScreen, text: str) -> None:
    screen.editor.load_text(text)
    await wait_for(
        pilot,
        lambda: screen.outcome is not None and screen.outcome.expression == text and screen.shown_gen == screen.gen,
        30,
        f"evaluation of {text!r}",
    )


def table_rows(screen) -> list[tuple]:
    t = screen.query_one("#cel-table", DataTable)
    return [tuple(str(c) for c in t.get_row_at(i)) for i in range(t.row_count)]


async def test_typing_changes_counts_syntax_errors_runtime_errors_and_false_clauses():
    async with demo_app() as (_sim, app, pilot):
        screen = await open_playground(pilot, app)
        # The default selector: every GPU-driver device.
        # (a100-lab's two fabric-attached devices are another driver's: in the total, not in the match)
        assert "match 187" in counts(app) and "of 189 devices" in counts(app)
        # Beside the match, what the allocator could give now and what keeps the others.
        assert "allocatable now 141/187 (43 held, 2 tainted, 1 blocked by counters)" in counts(app)
        # Typing, key by key, narrows it (`:` and `/` are text in the editor, not a jump or a filter).
        screen.editor.move_cursor(screen.editor.document.end)
        await pilot.press(*' && device.attributes["gpu.nvidia.com"].architecture == "Hopper"')
        await wait_for(pilot, lambda: "match 24 " in counts(app), 30, "Hopper counts")
        assert isinstance(app.screen, PlaygroundScreen) and "Hopper" in screen.editor.text
        # Without the vendor: the line has no room for it. 26: a100-lab's two fabric-attached H100s (another driver).
        assert "H100 80GB HBM3 24/26" in counts(app)
        assert "by pool: h100-dra 24/24" in counts(app)  # by the nodes' pool label, not one resource pool per node

        # A syntax error shows its position.
        await set_expression(pilot, screen, 'device.driver == "gpu.nvidia.com" &&& true')
        err = text_of(app, "#cel-error")
        assert "line 1, column" in err and "^" in err
        # cel-go recovers to more errors: the line says how many there are (the CLI prints them all), and it never
        # wraps, so a long message cannot push the caret line out of the three-line box.
        await set_expression(pilot, screen, 'device.driver == "x" &&& 1 ++')
        err = text_of(app, "#cel-error")
        assert "line 1, column 24:" in err and err.splitlines()[0].endswith("(1 of 3 errors)")
        assert err.splitlines()[2].endswith("^") and len(err.splitlines()) == 3
        assert screen.query_one("#cel-error", Static).styles.text_wrap == "nowrap"

        # A missing key: the reason, how many devices it hits, and that it blocks scheduling.
        await set_expression(pilot, screen, 'device.attributes["gpu.nvidia.com"].index < 4')
        await wait_for(pilot, lambda: screen.explained_gen == screen.gen, 30, "error reasons")
        errors = text_of(app, "#cel-errors")
        assert (
            "no such key: index" in errors
            and "189 devices" in errors
            and "blocks scheduling of every pod using this selector" in errors
        )
        assert "error 189" in counts(app)

        # A && B && C: the first false clause by its source text, per device.
        expr = (
            'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu" '
            '&& device.attributes["gpu.nvidia.com"].architecture == "Hopper"'
        )
        await set_expression(pilot, screen, expr)
        await wait_for(pilot, lambda: screen.explained_gen == screen.gen, 30, "rows")
        rows = table_rows(screen)
        why = {r[3]: r[1] for r in rows}  # result, why, product, device, pool
        # The A100 MIG slices fail two clauses: their first false one, by its source text.
        mig = next(r for r in rows if "mig" in r[3])
        assert mig[0] == "· no match" and mig[1] == 'type == "gpu"'  # as a person reads it
        # The whole A100s fail one clause only: near misses, first, with the clause and their own value.
        a100 = next(r for r in rows if r[2].startswith("A100") and "mig" not in r[3])
        assert a100[0] == "~ near miss" and a100[1] == 'only `architecture == "Hopper"` is false: it has Ampere'
        assert rows[0][0] == "~ near miss"
        assert any("match" in r[0] and not r[1] for r in rows) and why


async def test_completion_offers_what_only_this_fleet_publishes():
    async with demo_app() as (_sim, app, pilot):
        screen = await open_playground(pilot, app)
        screen.editor.load_text("")
        await pilot.press(*'device.attributes["gpu.nvidia.com"].')
        comp = screen.completion
        await wait_for(pilot, lambda: comp.display and comp.candidates, 10, "completions after ].")
        labels = [c.label for c in comp.candidates]
        # `profile` exists only because the demo has MIG devices; `addressingMode` only on its H100s; no fixed list.
        assert "profile" in labels and "addressingMode" in labels and "index" not in labels
        assert any("×" in c.detail for c in comp.candidates)
        await pilot.press(*"prof", "tab")
        assert screen.editor.text.endswith(".profile")
        await pilot.press(*' == "')
        await wait_for(pilot, lambda: comp.display and comp.candidates, 10, "value completions")
        assert comp.candidates[0].label == '"1g.10gb"'
        await pilot.press("tab")
        assert screen.editor.text.endswith('.profile == "1g.10gb"')
        await wait_for(pilot, lambda: "match 119 " in counts(app), 30, "MIG counts")


async def test_counts_follow_live_slice_events_past_the_cached_groupings():
    # The evaluation keeps per-device-set caches (value columns, groupings, the names devices publish): a slice
    # event must reach the next keystroke's counts, including a name that no device published before.
    async with demo_app() as (sim, app, pilot):
        screen = await open_playground(pilot, app)
        flag = 'device.attributes["gpu.nvidia.com"].canary == "yes"'
        await set_expression(pilot, screen, f"{H100} || {flag}")
        await wait_for(pilot, lambda: "match 24 " in counts(app), 30, "H100 counts")
        await set_expression(pilot, screen, f"{H100} || ({flag})")  # the group of "no canary anywhere" is cached now
        entry = next(
            e
            for e in sim.store.entries("resourceslices")
            if (e.obj["spec"].get("devices") or [{}])[0].get("attributes", {}).get("productName", {}).get("string")
            == "NVIDIA H100 80GB HBM3"
        )
        sl = sim.store.get("resourceslices", None, entry.obj["metadata"]["name"])
        sl["spec"]["devices"][0]["attributes"]["productName"] = {"string": "NVIDIA H200"}
        sl["spec"]["devices"][1]["attributes"]["canary"] = {"string": "yes"}
        sim.store.update("resourceslices", sl)
        model = app.feed.model
        await wait_for(
            pilot,
            lambda: any(
                (d.get("attributes") or {}).get("canary")
                for s in model.current_slices()
                for d in s["spec"].get("devices") or ()
            ),
            30,
            "the slice event",
        )
        # The next keystroke evaluates the new devices: one H100 fewer, one canary more (it is also an H100).
        screen.editor.move_cursor(screen.editor.document.end)
        await pilot.press("space")
        await wait_for(
            pilot,
            lambda: screen.outcome.expression.endswith(" ") and screen.shown_gen == screen.gen,
            30,
            "re-evaluation",
        )
        assert "match 23 " in counts(app), counts(app)
        await set_expression(pilot, screen, flag)
        assert "match 1 " in counts(app), counts(app)
        await set_expression(pilot, screen, 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"')
        assert "match 1 " in counts(app), counts(app)


async def test_open_in_playground_from_a_stuck_pod_and_from_a_class():
    async with demo_app() as (_sim, app, pilot):
        await pilot.press("colon", *"pending", "enter")
        await wait_for(
            pilot,
            lambda: (
                getattr(app.screen, "view", None) is not None
                and app.screen.view.name == "pending"
                and app.screen.populated
            ),
            30,
            "stuck pods",
        )
        table = app.screen.table
        key = ("research", "llm-eval-tjswx")
        assert table.move_to(key)
        assert table.cursor_key == key
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PlaygroundScreen), 10, "the playground")
        screen = app.screen
        await wait_for(
            pilot, lambda: screen.explained_gen == screen.gen and screen.explained_gen >= 0, 30, "explained rows"
        )
        assert "h100-80gi" in text_of(app, "#cel-title")
        assert "class gpu.nvidia.com" in text_of(app, "#cel-base")
        assert "match 0 " in counts(app)
        # Why it waits: the H100s publish 81559Mi, less than 80Gi.
        reasons = dict(screen.outcome.false_clauses)
        assert reasons.get("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0") == 24
        # Issue 30: the near miss first, per product, with the H100s' own value (the stuck-pod page's words).
        near = text_of(app, "#cel-errors").splitlines()
        assert near[0] == "24 NVIDIA H100 80GB HBM3 left out only by `memory >= 80Gi`: they have 81559Mi"
        table = screen.query_one("#cel-table", DataTable)
        assert str(table.get_row_at(0)[0]) == "~ near miss"

        # The device table moves as every table does, and filters with `/` (the editor types `/` as text).
        await pilot.press("ctrl+t")
        assert screen.focused is table and table.row_count > 30
        await pilot.press("G")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("g")
        assert table.cursor_row == 0
        await pilot.press("end")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("home", "slash", *"result=near-miss", "enter")
        await pilot.pause(0.2)
        rows = table_rows(screen)
        assert len(rows) == 67 and all(r[0] == "~ near miss" for r in rows)  # 24 H100s, 43 whole A100s
        assert screen.focused is table  # back where `/` was typed
        assert screen.outcome.summary["notMatched"] == 189  # the counts stay the fleet's
        await pilot.press("slash", *"mig-19-0", "enter")
        await pilot.pause(0.2)
        assert table_rows(screen) and all("mig-19-0" in r[3] for r in table_rows(screen))
        await pilot.press("slash", "enter")  # empty: every row again
        await pilot.pause(0.2)
        assert table.row_count == len(screen.outcome.rows)
        await pilot.press("ctrl+t")

        # ctrl+o: start from an existing class and see what it matches today.
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "PickerScreen", 10, "the picker")
        picker = app.screen
        idx = next(i for i, (t, _) in enumerate(picker.items) if t == "DeviceClass mig-1g.10gb.nvidia.com")
        picker.query_one("#picker").highlighted = idx
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, PlaygroundScreen) and "match 119 " in counts(app), 30, "class counts"
        )
        # History keeps the pod's selector.
        await pilot.press("ctrl+e")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "PickerScreen", 10, "history")
        assert any("80Gi" in t for t, _ in app.screen.items)
        await pilot.press("escape")


async def test_tiers_class_yaml_save_dry_run_and_apply_are_audited(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    async with demo_app() as (sim, app, pilot):
        screen = await open_playground(pilot, app)
        await set_expression(pilot, screen, H100)
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, GenerateScreen) and app.screen.ready, 10, "generate")
        gen = app.screen
        # Tier classes, one per MIG profile the fleet publishes.
        gen.query_one("#gen-kind", Select).value = "tiers-mig"
        await wait_for(pilot, lambda: "mig-1g-10gb" in gen.query_one("#gen-yaml", TextArea).text, 10, "MIG tiers")
        assert "deviceclass.resource.kubernetes.io/mig-1g-10gb" in str(gen.query_one("#gen-notes", Static).render())
        gen.query_one("#gen-kind", Select).value = "tiers-product"
        await wait_for(
            pilot, lambda: "nvidia-h100-80gb-hbm3" in gen.query_one("#gen-yaml", TextArea).text, 10, "product tiers"
        )
        for doc in yaml.safe_load_all(gen.query_one("#gen-yaml", TextArea).text):
            assert kubernetes_validate.validate(doc, "1.37.0", strict=True) == "1.37"

        # A DeviceClass taking over nvidia.com/gpu: the blast-radius warning.
        gen.query_one("#gen-kind", Select).value = "class"
        gen.query_one("#gen-name", Input).value = "h100-only"
        gen.query_one("#gen-ern", Input).value = "nvidia.com/gpu"
        await wait_for(
            pilot, lambda: "blast radius" in str(gen.query_one("#gen-warnings", Static).render()), 10, "warning"
        )
        gen.query_one("#gen-ern", Input).value = ""
        await wait_for(
            pilot, lambda: "extendedResourceName" not in gen.query_one("#gen-yaml", TextArea).text, 10, "no ern"
        )
        doc = yaml.safe_load(gen.query_one("#gen-yaml", TextArea).text)
        assert kubernetes_validate.validate(doc, "1.37.0", strict=True) == "1.37"
        assert doc["spec"]["selectors"][0]["cel"]["expression"] == H100

        # Save to a file.
        out = tmp_path / "h100.yaml"
        gen.query_one("#gen-path", Input).value = str(out)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: out.exists(), 10, "the file")
        assert yaml.safe_load(out.read_text())["metadata"]["name"] == "h100-only"

        # Server dry run: validated by the simulator, nothing stored.
        sim.request_log.clear()
        await pilot.press("ctrl+t")
        await wait_for(
            pilot, lambda: "would be created" in str(gen.query_one("#gen-status", Static).render()), 30, "dry run"
        )
        assert not sim.request_log.writes()
        assert sim.store.get("deviceclasses", None, "h100-only") is None

        # Apply: the one confirmation gate (actions/confirm.py) as the wizard has it. Under a production-looking context
        # its name must be typed exactly: Apply stays disabled until then.
        app.feed.info.context = "gke_acme_us-central1_ml-prod"
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmWriteScreen", 10, "confirmation")
        assert [w for _p, w in app.screen.typed] == ["gke_acme_us-central1_ml-prod"]
        assert app.screen.focused.id == "typed-0" and app.screen.query_one("#confirm").disabled
        await pilot.press(*"ml-prod", "enter")
        assert app.screen.query_one("#confirm").disabled and not sim.request_log.writes()
        app.screen.focused.value = ""
        await pilot.press(*"gke_acme_us-central1_ml-prod", "enter")
        assert not app.screen.query_one("#confirm").disabled
        await pilot.click("#confirm")
        await wait_for(
            pilot,
            lambda: (
                "created" in str(gen.query_one("#gen-status", Static).render())
                and "would" not in str(gen.query_one("#gen-status", Static).render())
            ),
            30,
            "apply",
        )
        writes = sim.request_log.writes()
        assert [(w.method, w.resource) for w in writes] == [("POST", "deviceclasses.resource.k8s.io")]
        assert sim.store.get("deviceclasses", None, "h100-only") is not None
        got = await app.feed.cluster.get("/apis/resource.k8s.io/v1/deviceclasses/h100-only")
        assert got["spec"]["selectors"][0]["cel"]["expression"] == H100
        records = [
            json.loads(line) for line in (tmp_path / "state" / "dragoman" / "audit.jsonl").read_text().splitlines()
        ]
        assert [r["record"] for r in records] == ["intent", "outcome"]
        assert (
            records[0]["object"] == {"kind": "DeviceClass", "namespace": "", "name": "h100-only"}
            and records[1]["result"] == "applied"
        )


async def test_claim_template_with_pod_snippet_validates():
    async with demo_app() as (_sim, app, pilot):
        screen = await open_playground(pilot, app)
        await set_expression(pilot, screen, 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"')
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, GenerateScreen) and app.screen.ready, 10, "generate")
        gen = app.screen
        gen.query_one("#gen-kind", Select).value = "template"
        gen.query_one("#gen-name", Input).value = "hopper"
        gen.query_one("#gen-ns", Input).value = "research"
        await wait_for(
            pilot,
            lambda: (
                "ResourceClaimTemplate" in gen.query_one("#gen-yaml", TextArea).text
                and "name: hopper" in gen.query_one("#gen-yaml", TextArea).text
            ),
            10,
            "template",
        )
        text = gen.query_one("#gen-yaml", TextArea).text
        tpl, snippet = text.split("# pod side")
        doc = yaml.safe_load(tpl)
        assert kubernetes_validate.validate(doc, "1.37.0", strict=True) == "1.37"
        assert doc["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.nvidia.com"
        assert "resourceClaimTemplateName: hopper" in snippet and "claims:" in snippet
        assert "drop the matching limits" in str(gen.query_one("#gen-warnings", Static).render())


async def test_read_only_has_no_apply_and_writes_nothing():
    async with running_simulator(scenario_path=DEMO_PATH) as sim:
        feed = await open_cluster_feed(str(sim.kubeconfig_path), None, badge="DEMO", read_only=True)
        app = DragomanApp(feed, kubeconfig=str(sim.kubeconfig_path), read_only=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: ready(app), 60, "the demo fleet to load")
            screen = await open_playground(pilot, app)
            await set_expression(pilot, screen, H100)
            sim.request_log.clear()
            await pilot.press("ctrl+g")
            await wait_for(pilot, lambda: isinstance(app.screen, GenerateScreen) and app.screen.ready, 10, "generate")
            gen = app.screen
            # The apply and dry-run keys do not exist here: not in the footer, not run.
            actions = {b.binding.action for b in app.active_bindings.values()}
            assert "save" in actions and "apply" not in actions and "dry_run" not in actions
            await pilot.press("ctrl+g")
            await pilot.press("ctrl+t")
            await pilot.pause(0.5)
            assert app.screen is gen and "apply" not in str(gen.query_one("#gen-status", Static).render())
            assert not sim.request_log.writes()


async def test_refilling_the_table_in_place_shows_what_a_full_refill_shows():
    # Keystrokes that keep the row count change the differing cells only; the table must end up as a full refill's.
    from dragoman.fleet.cel_playground import Outcome
    from dragoman.widgets.cel_results import COLUMNS, fill
    from textual.app import App

    class Two(App):
        def compose(self):
            for name in ("inplace", "full"):
                t = DataTable(id=name)
                t.add_columns(*COLUMNS)
                yield t

    def outcome(reasons: list[str], devices: int = 6) -> Outcome:
        kinds = ["error", "no-match", "match"]
        return Outcome(
            "x",
            rows=[
                (
                    kinds[i % 3],
                    "d",
                    f"pool-{i}",
                    f"gpu-{i}",
                    "n",
                    "H100",
                    "" if i % 3 == 2 else reasons[i % len(reasons)],
                )
                for i in range(devices)
            ],
        )

    steps = [
        outcome(["no such key: p"]),
        outcome(["no such key: pr", "a longer clause == [x] than before"]),
        outcome(["short"]),
        outcome(["short", "two\nlines of clause"]),
        outcome(["short"], devices=4),
        outcome(["grown again, and now wider than any clause before it"], 4),
    ]
    app = Two()
    async with app.run_test(size=(120, 30)) as pilot:
        a, b = app.query_one("#inplace", DataTable), app.query_one("#full", DataTable)
        seen = []
        for step in steps:
            a.move_cursor(row=2)
            fill(a, step)
            b._cel_rows = None  # forget what is shown: a full refill
            fill(b, step)
            await pilot.pause()
            rows = [[str(c) for c in t.get_row_at(i)] for t in (a, b) for i in range(t.row_count)]
            assert rows[: a.row_count] == rows[a.row_count :] and a.row_count == len(step.rows)
            assert [c.content_width for c in a.columns.values()] == [c.content_width for c in b.columns.values()]
            assert a.virtual_size == b.virtual_size and a.cursor_coordinate == b.cursor_coordinate == (0, 0)
            seen.append(rows)
        assert (
            seen[3][1][1] == "two" and seen[1][1][1] == "a longer clause == [x] than before"
        )  # a first line; brackets are text (the why column is second)
        assert a.columns[list(a.columns)[1]].content_width == len(
            "grown again, and now wider than any clause before it"
        )


async def test_a_keystroke_that_leaves_the_completions_reading_the_same_keeps_the_list_and_its_highlight():
    # Rebuilding the list on every keystroke relaid the whole screen out (a frame of the device table with it); the
    # list is kept while it reads the same, and what tab inserts comes from the newest candidates.
    from dragoman.widgets.cel_editor import CompletionList
    from dragoman.widgets.completion import Candidate
    from textual.app import App

    class Host(App):
        def compose(self):
            yield CompletionList(id="c")

    async with Host().run_test() as pilot:
        comp = pilot.app.query_one("#c", CompletionList)
        comp.show([Candidate("productName", 1, "productName", "string"), Candidate("profile", 1, "profile", "string")])
        await pilot.pause()
        first = comp.get_option_at_index(0)
        comp.highlighted = 1
        # One more letter typed ("p" -> "pr"): the same labels, each replacing one more character.
        newer = [Candidate("productName", 2, "productName", "string"), Candidate("profile", 2, "profile", "string")]
        comp.show(newer)
        await pilot.pause()
        assert comp.get_option_at_index(0) is first and comp.highlighted == 1
        assert comp.current() is newer[1] and comp.display
        # Another letter that narrows the list: rebuilt, highlight back on the first.
        comp.show([Candidate("profile", 3, "profile", "string")])
        await pilot.pause()
        assert comp.option_count == 1 and comp.highlighted == 0 and comp.current().replace == 3
        comp.show([])
        await pilot.pause()
        assert not comp.display and comp.current() is None


async def test_the_counts_line_is_drawn_once_and_whole():
    """ "allocatable now" comes with the counts (Evaluated), not with the explanation after them: the counts line of a
    keystroke is drawn once, already whole, before the explanation, and the explanation does not redraw it."""
    async with demo_app() as (_sim, app, pilot):
        screen = await open_playground(pilot, app)
        static = screen.query_one("#cel-counts", Static)
        drawn: list[tuple[str, bool]] = []
        real_update = static.update

        def update(content="", *a, **k):
            drawn.append((str(content), screen.explained_gen == screen.gen))  # (the text, explained already?)
            return real_update(content, *a, **k)

        static.update = update  # type: ignore[method-assign]
        await set_expression(pilot, screen, H100)
        await wait_for(pilot, lambda: screen.explained_gen == screen.gen, 30, "the explanation")
        await pilot.pause(0.2)
        # The demo is live: the default selector's line may be drawn again meanwhile (a claim allocated changes its
        # "allocatable now"); this selector's line is drawn once.
        drawn = [d for d in drawn if "match 24 " in d[0]]
        assert len(drawn) == 1, drawn
        text, explained = drawn[0]
        assert "match 24 " in text and "allocatable now 1/24 (23 held)" in text and not explained, drawn[0]


async def test_a_pasted_control_character_is_shown_escaped_with_the_caret_under_its_error():
    async with demo_app() as (_sim, app, pilot):
        screen = await open_playground(pilot, app)
        await set_expression(pilot, screen, 'device.driver == "\x1b[31m" &&& true')
        shown = text_of(app, "#cel-error")
        assert "\x1b" not in shown, repr(shown)
        first, snippet, caret = shown.split("\n")[:3]
        assert first.startswith("✗ line 1, column 28: Syntax error")
        at = caret.index("^")
        assert "\\x1b[31m" in snippet and snippet[at - 2 : at + 1] == "&&&", (snippet, caret)
