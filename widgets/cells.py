"""Table cells as plain data: text plus a tone (ownership, severity) that the table maps to theme styles; glyphs so colour never stands alone."""

from __future__ import annotations

from typing import NamedTuple, Union


class Cell(NamedTuple):
    """A cell's text and its tone; the tone names a component class of the table (never a literal colour)."""

    text: str
    tone: str | None = None

    def __str__(self) -> str:  # filters and tests read cells as text
        return self.text


CellLike = Union[str, Cell]

# Tones the table knows: each maps to a `vtable--tone-<tone>` component class styled with theme variables.
TONES = ("dp", "dra", "both", "error", "warning", "info", "ok", "muted", "accent")

# Ownership: a hue AND a glyph and a word, so a colour-blind operator or a monochrome terminal loses nothing.
OWNERSHIP = {
    "device-plugin": ("▲ plugin", "dp"),
    "dra": ("● DRA", "dra"),
    "both": ("✖ BOTH", "both"),
    "flapping": ("↯ flapping", "both"),
    "migrating": ("→ migrating", "accent"),
    "mixed": ("◐ mixed", "warning"),
    "none": ("· none", "muted"),
}

SEVERITY = {
    "error": ("✖ error", "error"),
    "warning": ("▲ warning", "warning"),
    "info": ("ℹ info", "info"),
}


def ownership_cell(value: str | None) -> Cell:
    text, tone = OWNERSHIP.get(value or "none", (value or "?", None))
    return Cell(text, tone)


def severity_cell(value: str) -> Cell:
    text, tone = SEVERITY.get(value, (value, None))
    return Cell(text, tone)


def text_of(cell: CellLike) -> str:
    return cell.text if isinstance(cell, Cell) else str(cell)


def tone_of(cell: CellLike) -> str | None:
    return cell.tone if isinstance(cell, Cell) else None
