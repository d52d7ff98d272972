"""Exit codes shared by every command, and the error type that carries a sentence for the operator."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """design.md's exit codes."""

    OK = 0  # done, nothing wrong
    PROBLEM = 1  # done, and it found or hit a problem
    INPUT = 2  # could not read its input or reach the cluster
    REFUSED = 3  # refused on purpose (read-only, lock held, preflight gate, plan drift)


class UserError(Exception):
    """A failure the operator can act on: printed as one sentence, never as a traceback."""

    def __init__(self, message: str, exit_code: ExitCode = ExitCode.INPUT) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class ReadOnlyError(UserError):
    """A write was attempted while --read-only is in force."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"refused: {what} would write to the cluster, and dragoman runs with --read-only.", ExitCode.REFUSED
        )


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), 0x7F)}
_CONTROL.update({0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"})
_CONTROL.update(
    {c: f"\\u{c:04x}" for c in (*range(0x80, 0xA0), 0x2028, 0x2029, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069)}
)


# The most characters of one name (a pool, a node, an object) a line of text output shows: a label value is at most
# 63 characters, so a real pool name is never cut, and a 100,000-character one does not widen every row of a table.
NAME_SHOWN = 64


def shown_words(text: str, limit: int = NAME_SHOWN) -> str:
    """`text` with every word longer than `limit` cut with "…": a sentence quoting a hostile name wraps into a few
    lines, not a thousand."""
    if len(text) <= limit:
        return text
    return " ".join(w if len(w) <= limit else w[: limit - 1] + "…" for w in text.split(" "))


def printable(text: str, limit: int = 0) -> str:
    """`text` safe for one terminal line: control characters (newlines, NUL, ESC, C1, bidi overrides) escaped, lone
    surrogates replaced, and cut to `limit` characters (0: no cut). Whatever a server or a file says is shown this way,
    so it can neither forge lines of output nor drive the terminal."""
    out = text.translate(_CONTROL)
    if any("\ud800" <= ch <= "\udfff" for ch in out):
        out = out.encode("utf-8", "replace").decode("utf-8")
    if limit and len(out) > limit:
        out = out[: limit - 1] + "…"
    return out
