"""The one confirmation gate (actions/confirm.py): which words an operator types before a write, for the wizard, the
CLI's migrate and the playground's apply alike."""

from __future__ import annotations

import pytest
from dragoman.actions.confirm import looks_like_production, words_to_type


@pytest.mark.parametrize(
    ("context", "server", "prod"),
    [
        ("ml-prod", "", True),
        ("gke_acme_us-central1_ml-prod", "", True),
        ("staging", "https://api.prd.example.com", True),
        ("live", "", True),
        ("product-lab", "", False),  # a word part, not a substring
        ("dragoman-sim", "https://127.0.0.1:6443", False),
    ],
)
def test_production_looking_contexts(context: str, server: str, prod: bool) -> None:
    assert looks_like_production(context, server) is prod


def test_the_words_in_order_context_then_pool() -> None:
    assert words_to_type("dev", "") == []
    assert [t.word for t in words_to_type("ml-prod", "")] == ["ml-prod"]
    both = words_to_type("ml-prod", "", pool="l4-serve", why="This evicts pods")
    assert [t.word for t in both] == ["ml-prod", "l4-serve"]
    assert both[1].prompt == "This evicts pods. Type the pool name (l4-serve):"
    assert words_to_type("ml-prod", "", patterns=("sim",)) == []
