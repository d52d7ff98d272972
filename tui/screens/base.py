"""The base of every dragoman screen: its `app` is the DragomanApp, so the type checker knows `app.feed`, `app.jump`,
`app.open_detail` and the rest (Textual types it as a bare App)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from textual.screen import ModalScreen, Screen

if TYPE_CHECKING:
    from dragoman.tui.app import DragomanApp

R = TypeVar("R")
# One entry of the command palette a screen offers: title, help, and what choosing it does.
PaletteCommand = tuple[str, str, Callable[[], object]]


class DragomanScreen(Screen[R], Generic[R]):
    """A full screen of the dragoman app."""

    if TYPE_CHECKING:

        @property  # narrower than Textual's App: the one these screens run on
        def app(self) -> DragomanApp: ...  # type: ignore[override]


class DragomanModal(ModalScreen[R], Generic[R]):
    """A dialog over a dragoman screen."""

    if TYPE_CHECKING:

        @property  # narrower than Textual's App: the one these screens run on
        def app(self) -> DragomanApp: ...  # type: ignore[override]
