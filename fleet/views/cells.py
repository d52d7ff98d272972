"""Table cells as plain data: text plus a tone (ownership, severity) that the table maps to theme styles; glyphs so
colour never stands alone. The cells every view shares (findings counts, GPU counts) are here too."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from dragoman.fleet.findings import SEVERITY_ORDER, Finding
from dragoman.fleet.glyphs import glyph, labelled


class Cell(NamedTuple):
    """A cell's text and its tone; the tone names a component class of the table (never a literal colour)."""

    text: str
    tone: str | None = None

    def __str__(self) -> str:  # filters and tests read cells as text
        return self.text


CellLike = str | Cell

# Tones the table knows: each maps to a `vtable--tone-<tone>` component class styled with theme variables.
TONES = ("dp", "dra", "both", "error", "warning", "info", "ok", "muted", "accent")

# Ownership: a hue AND a glyph and a word, so a colour-blind operator or a monochrome terminal loses nothing.
# The glyphs are fleet/glyphs.py's: one meaning each, in every help screen's legend.
OWNERSHIP = {
    "device-plugin": (labelled("plugin", "plugin"), "dp"),
    "dra": (labelled("dra", "DRA"), "dra"),
    "both": (labelled("error", "BOTH"), "both"),
    "flapping": (labelled("crash", "flapping"), "both"),
    "migrating": (labelled("migrating", "migrating"), "accent"),
    "mixed": (labelled("mixed", "mixed"), "warning"),
    "none": (labelled("none", "none"), "muted"),
}

SEVERITY = {
    "error": (labelled("error", "error"), "error"),
    "warning": (labelled("warning", "warning"), "warning"),
    "info": (labelled("info", "info"), "info"),
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


SEV_GLYPH = {s: glyph(s) for s in ("error", "warning", "info")}


def findings_cell(findings: Iterable[Finding]) -> Cell:
    """Counts by severity with glyphs: `✖2 ▲1`; the tone is the worst severity present."""
    c = Counter(f.severity for f in findings)
    if not c:
        return Cell("—", "muted")
    parts = [f"{SEV_GLYPH[s]}{c[s]}" for s in ("error", "warning", "info") if c.get(s)]
    worst = min(c, key=lambda s: SEVERITY_ORDER.get(s, 9))
    return Cell(" ".join(parts), worst if worst != "info" else "info")


def short_product(product: str) -> str:
    """GPU Feature Discovery's product label, without the vendor prefix a pool column has no room for."""
    for prefix in ("NVIDIA-", "NVIDIA ", "Tesla-"):
        if product.startswith(prefix) and prefix != "Tesla-":
            return product[len(prefix) :]
    return product


def counts_text(counts: dict[str, int], *, shorten=lambda s: s, sep: str = ", ") -> str:
    return sep.join(
        f"{shorten(k)}×{v}" if v != 1 else shorten(k) for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def without_subject(summary: str, kind: str, ns: str, name: str) -> str:
    """A summary without its leading object name, which the row's own OBJECT (or POD) column already shows."""
    full = f"{ns}/{name}" if ns else name
    for subject in (f"{kind} {full}", f"{kind.lower()} {full}", full):
        for sep in (": ", " "):
            if subject and summary.startswith(subject + sep):
                return summary[len(subject) + len(sep) :]
    return summary


def age_text(created: str | None, now: float | None) -> str:
    """An object's age as kubectl and k9s print it (`40s`, `12m`, `3h`, `5d`), judged at the cluster's clock (a
    snapshot at its own time); `—` when either is unknown."""
    from dragoman.fleet.k8s.times import parse_time

    born = parse_time(created)
    if born is None or now is None:
        return "—"
    secs = max(0, int(now - born))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size * (2 if unit != "d" else 1):
            return f"{secs // size}{unit}"
    return f"{secs}s"
