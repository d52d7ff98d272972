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
        super().__init__(f"refused: {what} would write to the cluster, and dragoman runs with --read-only.", ExitCode.REFUSED)
