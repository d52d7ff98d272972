"""The CEL parser's LALR tables are loaded from fleet/cel/gen/cel_lalr.py instead of computed in each process: they
must be exactly the tables the grammar gives, and the loaded parser must parse as the built one does."""

import pathlib

import lark
import pytest
import yaml
from dragoman.fleet.cel import syntax
from dragoman.fleet.cel.gen import cel_lalr

CASES = yaml.safe_load((pathlib.Path(__file__).parent / "upstream_cases.yaml").read_text())
EXPRS = sorted({str(c["expr"]) for c in CASES}) + [
    "device.attributes['gpu.nvidia.com'].productName.matches('A100') && device.capacity['gpu.nvidia.com'].memory"
    " >= quantity('40Gi')",
    "a ? b : c ? d : e",
    "x.exists(y, y > 2u) || [1, 2][0] in {'k': 1}",
    "'''multi\nline'''",
]


def test_the_tables_are_computed_from_this_grammar_and_lark():
    # Stale tables (cel-python's grammar, our options or Lark changed): run fleet/cel/gen/generate.sh's last line.
    assert cel_lalr.DIGEST == syntax.grammar_digest()


def test_stale_tables_are_not_used(monkeypatch):
    monkeypatch.setattr(cel_lalr, "DIGEST", "0" * 64)
    monkeypatch.setattr(syntax, "_PARSER", None)
    built = []
    real = syntax.build_parser
    monkeypatch.setattr(syntax, "build_parser", lambda: built.append(1) or real())
    assert syntax.parse_tree(syntax.Source("1 + 2 == 3")).data == "expr"
    assert built == [1]


def _outcome(parser: lark.Lark, expr: str):
    try:
        tree = parser.parse(expr)
    except lark.exceptions.UnexpectedInput as exc:
        return type(exc).__name__, getattr(exc, "pos_in_stream", None), str(getattr(exc, "token", ""))
    # Trees compare by rule and children; the positions (propagate_positions) are compared through the tokens.
    return tree, [
        (t.type, t.start_pos, t.line, t.column) for t in tree.scan_values(lambda v: isinstance(v, lark.Token))
    ]


@pytest.fixture(scope="module")
def parsers():
    saved = syntax._PARSER
    syntax._PARSER = None
    loaded = syntax._parser()
    syntax._PARSER = saved
    return loaded, syntax.build_parser()


def test_the_loaded_parser_parses_as_the_built_one(parsers):
    loaded, built = parsers
    assert len(EXPRS) > 300
    for expr in EXPRS:
        assert _outcome(loaded, expr) == _outcome(built, expr), expr


def test_the_engine_uses_the_loaded_tables(monkeypatch):
    def no_build():
        raise AssertionError("the tables were computed instead of loaded")

    monkeypatch.setattr(syntax, "build_parser", no_build)
    monkeypatch.setattr(syntax, "_PARSER", None)
    tree = syntax.parse_tree(syntax.Source("device.driver == 'gpu.nvidia.com'"))
    assert tree.data == "expr"
