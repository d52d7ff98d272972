"""The ctrl+p palette: only what fits the current screen (its own commands, then the views to jump to), named `noun:
verb`."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from dragoman.tui.app import DragomanApp
    from dragoman.tui.screens.base import PaletteCommand


class ScreenCommands(Provider):
    def _commands(self) -> list[PaletteCommand]:
        app = cast("DragomanApp", self.app)  # a provider's app is typed as a bare App
        screen = self.screen
        cmds = list(screen.palette_commands()) if hasattr(screen, "palette_commands") else []
        current = getattr(getattr(screen, "view", None), "name", None)
        from dragoman.tui.views import VIEW_DOCS

        current = current or getattr(screen, "name", None)
        for name, digit, aliases, doc in VIEW_DOCS:
            if name != current and name != "ctx":
                # The aliases are in the searched name, so "mig" finds the wizard and "po" the stuck pods.
                also = f" ({' '.join(aliases)})" if aliases else ""
                cmds.append(
                    (
                        f"view: {name}{also}",
                        f":{name}{' or ' + digit if digit else ''} — {doc}",
                        partial(app.jump, name),
                    )
                )
        if getattr(app.feed, "syncer", None) is not None:
            cmds.append(("cluster: relist", "list every kind again (ctrl+r)", app.action_relist))
            cmds.append(
                ("cluster: switch context", "pick another kubeconfig context (:ctx)", app.action_switch_context)
            )
        cmds.append(("help: keys", "every key of this screen (?)", app.action_help))
        return cmds

    async def discover(self) -> Hits:
        for name, help_text, cb in self._commands():
            yield DiscoveryHit(name, cb, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, cb in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), cb, help=help_text)
