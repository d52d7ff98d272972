"""widgets/footer.SteadyFooter: rebuilt when what it shows changes, not on every bindings signal."""

import pytest
from dragoman.widgets.footer import SteadyFooter
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Input, Static


class _Demo(App):
    BINDINGS = [Binding("f5", "noop", "Do X"), Binding("f6", "toggle", "Toggle Y")]
    y_enabled = True

    def compose(self) -> ComposeResult:
        yield Input(id="a")
        yield Input(id="b")
        yield Static("body")
        yield SteadyFooter()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        # None: shown greyed out (False would hide it).
        return (True if self.y_enabled else None) if action == "toggle" else True

    def action_noop(self) -> None:
        pass

    def action_toggle(self) -> None:
        pass


@pytest.mark.asyncio
async def test_focus_moves_that_change_nothing_do_not_rebuild_the_keys(monkeypatch):
    composed = []
    real = Footer.compose

    def counting(self):
        composed.append(1)
        return real(self)

    monkeypatch.setattr(Footer, "compose", counting)
    app = _Demo()
    async with app.run_test() as pilot:
        await pilot.pause()
        first = len(composed)
        keys = [k.description for k in app.query("FooterKey")]
        assert "Do X" in keys and "Toggle Y" in keys
        for _ in range(4):  # focus moves: Textual signals updated bindings each time, the same bindings show
            await pilot.press("tab")
            await pilot.pause()
        assert len(composed) == first
        # A binding that changes what the footer shows (disabled now) rebuilds it.
        app.y_enabled = False
        app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert len(composed) > first
        toggle = next(k for k in app.query("FooterKey") if k.description == "Toggle Y")
        assert toggle.has_class("-disabled")
