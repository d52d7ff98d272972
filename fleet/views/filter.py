"""The `/` filter every table view shares: words anywhere in the row, `key=value` on its facets (labels, attributes,
fields); pure, so the same predicate is tested without a terminal."""

from __future__ import annotations

import fnmatch

GLOB = set("*?[")


class RowFilter:
    """The `/` filter: every word must appear somewhere in the row's text, every `key=value` (or `key!=value`) must
    hold for one of the row's labels, attributes or fields. Case-insensitive; `*` and `?` are globs anywhere, and a
    word with no glob matches as a substring (`h100`, `*80GB*`, `productName=NVIDIA*H100*`, `pool!=system`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words: list[str] = []
        self.pairs: list[tuple[str, str, bool]] = []  # (key, value, negated)
        for token in text.split():
            if "=" in token.strip("=") and not token.startswith("="):
                k, _, v = token.partition("=")
                neg = k.endswith("!")
                self.pairs.append((k.rstrip("!").strip().lower(), v.strip().lower(), neg))
            else:
                self.words.append(token.lower())
        self.keys_seen: set[str] = set()  # keys some row had: "no row has a field X" is said only when none did

    def __bool__(self) -> bool:
        return bool(self.words or self.pairs)

    @staticmethod
    def _word(pattern: str, text: str) -> bool:
        if GLOB & set(pattern):
            return fnmatch.fnmatchcase(text, "*" + pattern.strip("*") + "*") if pattern.strip("*") else True
        return pattern in text

    @staticmethod
    def _value(pattern: str, value: str) -> bool:
        if GLOB & set(pattern):
            return fnmatch.fnmatchcase(value, pattern) or fnmatch.fnmatchcase(value.replace(" ", "-"), pattern)
        return value == pattern or value.replace(" ", "-") == pattern

    def __call__(self, key, row, facets) -> bool:
        if self.words:
            blob = " ".join(str(c) for c in row).lower()
            if not all(self._word(w, blob) for w in self.words):
                return False
        if self.pairs:
            lowered = {str(k).lower(): str(v).lower() for k, v in facets.items()}
            for k, v, neg in self.pairs:
                candidates = [val for fk, val in lowered.items() if fk == k or fk.endswith("/" + k)]
                if candidates:
                    self.keys_seen.add(k)
                hit = any(self._value(v, c) for c in candidates)
                if hit == neg:
                    return False
        return True

    def missing_keys(self) -> list[str]:
        """Keys of the filter that no row checked so far has at all (a typo, or a field another view has)."""
        return [k for k, _v, _n in self.pairs if k not in self.keys_seen]


def parse_filter(text: str) -> RowFilter | None:
    """The table predicate for `/text`, or None for no filter."""
    f = RowFilter(text)
    return f if f else None
