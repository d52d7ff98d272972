"""Textual's Footer, recomposed only when what it shows changes.

Textual's Footer rebuilds all of its keys whenever a screen's bindings are updated, which Textual signals on every
focus change and screen switch: about ten times for each view opened and left, each rebuild mounting and restyling a
dozen FooterKey widgets (on the envelope fleet ~0.3 s of the six views' opening, profiled). What a footer shows is its
screen's shown bindings (key, description, action, enabled, tooltip, group): when that is what it already shows, the
rebuild would make the same widgets again, so it is skipped.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


def shown(screen: Screen) -> tuple:
    """What a Footer on `screen` is made from: its active bindings, in order (the shown ones and the command palette's,
    which Footer.compose looks up whether shown or not), each with what compose reads of it."""
    out: list[Any] = []
    for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items():
        group = binding.group
        out.append(
            (
                key,
                binding.key,
                binding.key_display,
                binding.description,
                binding.action,
                binding.show,
                binding.tooltip,
                enabled,
                tooltip,
                None if group is None else (group.description, group.compact),
            )
        )
    return tuple(out)


class SteadyFooter(Footer):
    """A Footer that skips rebuilding the keys it already shows (see the module)."""

    _shows: tuple | None = None

    def bindings_changed(self, screen: Screen) -> None:
        if self.is_attached and screen is self.screen and screen.app.app_focus:
            now = shown(screen)
            if now == self._shows and self._bindings_ready:
                return
            self._shows = now
        super().bindings_changed(screen)
