"""The one confirmation gate of a write: which words the operator must type before it runs. The TUI draws it in one
modal (tui/screens/confirm.ConfirmWriteScreen), the CLI asks it at one prompt (tui/commands/confirm.ask); the wizard,
the CLI's migrate and the playground's apply all take their words from here."""

from __future__ import annotations

import dataclasses
import re

PROD_PATTERNS = ("prod", "prd", "live")  # context or server names that look like production (--prod-pattern)


def looks_like_production(context: str, server: str, patterns: tuple[str, ...] = PROD_PATTERNS) -> bool:
    """A context whose name or server matches one of the patterns (word parts: `prod` matches `ml-prod`, not
    `product`)."""
    for p in patterns:
        rx = re.compile(rf"(^|[^a-z0-9]){re.escape(p.lower())}([^a-z0-9]|$)")
        if rx.search(context.lower()) or rx.search(server.lower()):
            return True
    return False


@dataclasses.dataclass(frozen=True)
class Typed:
    """One word to type exactly, and the sentence that asks for it."""

    prompt: str
    word: str


def words_to_type(
    context: str,
    server: str,
    *,
    patterns: tuple[str, ...] = PROD_PATTERNS,
    pool: str | None = None,
    why: str = "This is dangerous",
) -> list[Typed]:
    """The context's name when it looks like production; the pool's name when the write is dangerous (`pool` given):
    in that order, each typed exactly before the write is confirmed."""
    out = []
    if looks_like_production(context, server, patterns):
        out.append(Typed(f"Context {context} looks like production. Type its name:", context))
    if pool is not None:
        out.append(Typed(f"{why}. Type the pool name ({pool}):", pool))
    return out
