"""A contrast check of what the screen draws: every visible character's colour against its background, from the
compositor's strips (the same cells the terminal gets), as the WCAG contrast ratio.

The threshold is 3:1: WCAG 2.x asks 3:1 of large text and of the parts of an interface that carry meaning (1.4.11);
a terminal cell is small text, but Textual's own muted text and the theme's hues on panels sit between 3 and 4.5, and
what this check exists to catch — a glyph in its own background's colour (● DRA on the highlight) — is near 1:1.
"""

from __future__ import annotations

from dataclasses import dataclass

THRESHOLD = 3.0


def _lin(c: float) -> float:
    c /= 255
    return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4


def luminance(rgb: tuple[int, int, int]) -> float:
    r, g, b = (_lin(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ratio(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@dataclass
class Problem:
    y: int
    x: int
    text: str
    ratio: float
    fg: tuple
    bg: tuple

    def __str__(self) -> str:
        return f"row {self.y} col {self.x} {self.text!r}: {self.ratio:.2f}:1 (fg {self.fg} on bg {self.bg})"


def _rgb(color, default):
    if color is None:
        return default
    t = color.get_truecolor()
    return (t.red, t.green, t.blue)


# Box drawing and block elements: borders, scrollbars (their partial cells: ▋ ▌ …), bars and sparklines, drawn in a
# tone of their background on purpose. Any other character is a glyph or a word that must read.
_NOT_TEXT = {chr(c) for c in range(0x2500, 0x25A0)} | {" "}


def problems(app, threshold: float = THRESHOLD) -> list[Problem]:
    """Runs of visible characters drawn below `threshold` against their own background. Under a modal (a confirmation,
    help) only the modal is read: the screen behind it is dimmed on purpose."""
    screen = app.screen
    strips = screen._compositor.render_strips()
    boxes = [w.region for w in screen.children if w.display] if screen.is_modal else []
    out = []
    for y, strip in enumerate(strips):
        x = 0
        for seg in strip:
            text, style = seg.text, seg.style
            width = len(text)
            inside = not boxes or any(b.y <= y < b.bottom and x < b.right and x + width > b.x for b in boxes)
            if inside and style is not None and text.strip() and not set(text.strip()) <= _NOT_TEXT:
                fg = _rgb(style.color, (224, 224, 224))
                bg = _rgb(style.bgcolor, (0, 0, 0))
                if style.reverse:
                    fg, bg = bg, fg
                if style.dim:
                    fg = tuple(int((f + b) / 2) for f, b in zip(fg, bg))
                r = ratio(fg, bg)
                if r < threshold:
                    out.append(Problem(y, x, text.strip(), r, fg, bg))
            x += width
    return out
