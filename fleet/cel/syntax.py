"""Parsing DRA CEL: optional-syntax rewriting, cel-python's Lark parser, and a small AST with source positions."""

from __future__ import annotations

import bisect
import math
import re
from typing import Any

import lark
from dragoman.fleet.cel.api import CelCompileError
from dragoman.fleet.cel.parse_errors import ACCUMULATOR_NAME, MACROS, RESERVED_IDS, unescape_error

UNSUPPORTED = "valid in Kubernetes, not supported here"
# Placeholders the rewriter puts in for cel-go's optional syntax, which cel-python's grammar lacks.
OPT_SELECT = "__opt_select__"
# `x.`b-c``: a field name in backticks (cel-go's escaped identifiers: letters, digits, _ . - / and space), rewritten to
# `x.__quoted_select__("b-c")` and built as an ordinary field selection.
QUOTED_SELECT = "__quoted_select__"
_QUOTED_FIELD = re.compile(r"\.\s*\??`([A-Za-z0-9_./ -]+)`")
OPT_INDEX = "__opt_index__"
OPT_FUNCS = {
    "of": "__optional_of",
    "none": "__optional_none",
    "ofNonZeroValue": "__optional_ofNonZeroValue",
    "unwrap": "__optional_unwrap",
}
# Optional list elements `[?x]` and map entries `{?k: v}` become `[__opt_elem__(x)]` and `{__opt_key__(k): v}`.
OPT_ELEM = "__opt_elem__"
# The variable cel-go's sortBy macro binds its target to (no selector can name it: '@' is not in identifiers).
SORT_BY_INPUT = "@__sortBy_input__"
OPT_KEY = "__opt_key__"
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# cel-go's lexer makes these keywords whatever follows: never a name (`device.in`, `f(null)` as a field).
_KEYWORDS = frozenset(["in", "true", "false", "null"])
# cel-go's reserved identifiers that its lexer reads as names (the others, true/false/null/in, are keywords).
RESERVED = RESERVED_IDS - _KEYWORDS


class Uint(int):
    """A CEL uint (Python int alone cannot tell `1u` from `1`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


NOT_CONST = type("NotConst", (), {"__repr__": lambda self: "NOT_CONST"})()


class Node:
    """One AST node. kind: lit ident select index call list map and or not neg cond has comp bind optmap.

    list: (items, optional item indices); map: (entries, optional entry indices);
    optmap: (target, variable, expression, flat) for optMap (flat False) and optFlatMap."""

    __slots__ = ("kind", "args", "offset", "type", "const", "members")

    def __init__(self, kind: str, *args: Any, offset: int = 0) -> None:
        self.kind = kind
        self.args = args
        self.offset = offset
        self.type: Any = None
        # What cel-go's planner folds (checker.fold_constants): the node's value, or NOT_CONST.
        self.const: Any = NOT_CONST
        # An `x in [constants]` cel-go plans as a set lookup: runtime.set_members' set (None: the list is empty).
        self.members: Any = NOT_CONST

    def __repr__(self) -> str:
        return f"{self.kind}{self.args!r}"


class Source:
    """The original text, the rewritten text cel-python parses, and the offset map between them."""

    def __init__(self, original: str) -> None:
        self.original = original
        self.rewritten, self._map = _rewrite(original)
        self._line_starts = [0] + [m.end() for m in re.finditer(r"\n", original)]

    def original_offset(self, rewritten_offset: int) -> int:
        if not self._map:
            return min(rewritten_offset, len(self.original))
        i = max(0, min(rewritten_offset, len(self._map) - 1))
        return self._map[i]

    def location(self, offset: int) -> tuple[int, int]:
        """(line, column), both 1-based, of an offset in the original text."""
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def error(self, message: str, kind: str, offset: int | None) -> CelCompileError:
        if offset is None:
            return CelCompileError(message, kind)
        line, col = self.location(offset)
        return CelCompileError(message, kind, line, col)


def _skip_string(text: str, i: int) -> int:
    """Index just past the string literal starting at text[i] (a quote); raw prefixes are handled by the caller."""
    raw = (
        i > 0
        and text[i - 1] in "rR"
        and (i < 2 or not (text[i - 2].isalnum() or text[i - 2] == "_") or text[i - 2] in "bB")
    )
    q = text[i]
    triple = text.startswith(q * 3, i)
    end_seq = q * 3 if triple else q
    j = i + len(end_seq)
    while j < len(text):
        if text[j] == "\\" and not raw:
            j += 2
            continue
        if text.startswith(end_seq, j):
            return j + len(end_seq)
        if text[j] == "\n" and not triple:
            return j
        j += 1
    return j


def _rewrite(text: str) -> tuple[str, list[int]]:
    """Rewrite `.?f`, `[?k]` and `optional.x(` into calls cel-python can parse, keeping an offset map."""
    out: list[str] = []
    omap: list[int] = []

    def emit(s: str, orig: int) -> None:
        out.append(s)
        omap.extend([orig] * len(s))

    changed = False
    i, n = 0, len(text)
    # Stack of open brackets; for `[?` the matching `]` becomes `)`.
    stack: list[str] = []
    prev_sig = ""  # last significant (non-space) character emitted
    while i < n:
        c = text[i]
        if c.isdigit() and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.")):
            m = _INT_THEN_NAME.match(text, i)
            if m:
                # `1.size`, `5.e3`: cel-go's lexer reads an int, a dot and a name (a float needs a digit after its
                # point); cel-python's reads a float. The int in parentheses reads the same for both.
                changed = True
                emit("(", i)
                for k in range(i, m.end(1)):
                    emit(text[k], k)
                emit(")", m.end(1))
                i = m.end(1)
                prev_sig = ")"
                continue
        if c in "\"'":
            j = _skip_string(text, i)
            for k in range(i, j):
                emit(text[k], k)
            i = j
            prev_sig = '"'
            continue
        if c == "." and text.startswith("`", i + 1) or (c == "." and text.startswith("?`", i + 1)):
            m = _QUOTED_FIELD.match(text, i)
            if m:
                changed = True
                optional = text[i + 1] == "?"
                emit(f'.{OPT_SELECT if optional else QUOTED_SELECT}("{m.group(1)}")', i)
                i = m.end()
                prev_sig = ")"
                continue
        if c == "`":
            raise CelCompileError("syntax error: invalid quoted identifier", "syntax", *_loc(text, i))
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j == -1 else j
            for k in range(i, j):
                emit(text[k], k)
            i = j
            continue
        if c == "." and i + 1 < n and text[i + 1] == "?":
            m = re.compile(r"\s*([_A-Za-z][_A-Za-z0-9]*)").match(text, i + 2)
            if m and m.group(1) in _KEYWORDS:
                raise CelCompileError("syntax error: a keyword is no field name", "syntax", *_loc(text, m.start(1)))
            if m:
                changed = True
                emit(f'.{OPT_SELECT}("{m.group(1)}")', i)
                i = m.end()
                prev_sig = ")"
                continue
        top = stack[-1] if stack else ""
        if c == "?" and top in ("L", "{") and prev_sig in ("[", "{", ","):
            # An optional element of a list literal, or an optional entry of a map literal.
            changed = True
            if top == "L":
                emit(f"{OPT_ELEM}(", i)
                stack.append("E")
            else:
                emit(f"{OPT_KEY}(", i)
                stack.append("K0")
            i += 1
            prev_sig = "("
            continue
        if top.startswith("K") and c in "?:":
            depth = int(top[1:])
            if c == "?":
                stack[-1] = f"K{depth + 1}"  # a conditional inside the key: its ':' is not the entry's
            elif depth:
                stack[-1] = f"K{depth - 1}"
            else:
                stack.pop()
                emit(")", i)
        if top == "E" and c in ",]":
            stack.pop()
            emit(")", i)
        if c == "[":
            m = re.compile(r"\?").match(text, i + 1)
            indexing = bool(prev_sig) and (prev_sig.isalnum() or prev_sig in '_)]}"') and not _after_in(text, i)
            if m and indexing:
                changed = True
                emit(f".{OPT_INDEX}(", i)
                stack.append("I")  # closed by `]`, written as `)`
                i += 2
                prev_sig = "("
                continue
            stack.append("[" if indexing else "L")
        elif c in "({":
            stack.append(c)
        elif c in ")]}":
            opener = stack.pop() if stack else ""
            if opener == "E" or opener.startswith("K"):
                # A bracket closing across an optional element or key (`[?f(x) )]`): unbalanced for cel-go too.
                raise CelCompileError("syntax error: unbalanced bracket", "syntax", *_loc(text, i))
            if c == "]" and opener == "I":
                emit(")", i)
                i += 1
                prev_sig = ")"
                continue
        elif (
            c == "o"
            and text.startswith("optional", i)
            and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_."))
        ):
            m = re.compile(r"optional\s*\.\s*([_A-Za-z][_A-Za-z0-9]*)\s*\(").match(text, i)
            if m and m.group(1) in OPT_FUNCS:
                changed = True
                emit(OPT_FUNCS[m.group(1)] + "(", i)
                stack.append("(")  # its `)` must close this call, not an enclosing bracket
                i = m.end()
                prev_sig = "("
                continue
        if c == "," and stack and stack[-1] in ("L", "{"):
            j = i + 1
            while j < n and text[j].isspace():
                j += 1
            if j < n and text[j] in "]}":
                # CEL.g4 takes a trailing comma in a list or map literal (`[1, 2,]`); cel-python's grammar does not.
                changed = True
                i += 1
                continue
        emit(c, i)
        if not c.isspace():
            prev_sig = c
        i += 1
    if not changed:
        return text, []
    omap.append(n)
    return "".join(out), omap


_INT_THEN_NAME = re.compile(r"([0-9]+)\.[_A-Za-z]", re.ASCII)
_CEL_FLOAT = re.compile(r"[0-9]*\.[0-9]+([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+", re.ASCII)
_IN_BEFORE = re.compile(r"(?:^|[^_A-Za-z0-9.])in\s*$")


def _after_in(text: str, i: int) -> bool:
    """`x in [...]`: the bracket after the `in` operator opens a list literal, not an index."""
    return _IN_BEFORE.search(text, max(0, i - 64), i) is not None


_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "?": "?",
}
_ESCAPE_RE = re.compile(
    r"\\(?:([abfnrtv\\'\"`?])|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([0-3][0-7]{2}))"
)


def decode_multiline(text: str) -> str:
    """A triple-quoted CEL string literal's value (cel-python's decoder drops raw newlines)."""
    if text[:1] in "rR":
        return text[4:-3]
    body = text[3:-3]

    def repl(m: re.Match) -> str:
        if m.group(1):
            return _ESCAPES[m.group(1)]
        code = m.group(2) or m.group(3) or m.group(4)
        return chr(int(code, 16)) if code else chr(int(m.group(5), 8))

    return _ESCAPE_RE.sub(repl, body)


def _loc(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


_PARSER: lark.Lark | None = None
# Lark options of our parser; those Lark cannot serialize (the lexer callback) are given again when loading.
_OPTIONS: dict[str, Any] = dict(
    parser="lalr",
    start="expr",
    g_regex_flags=re.M,
    propagate_positions=True,
    maybe_placeholders=False,
    priority="invert",
)


def _grammar() -> str:
    from importlib import resources

    return resources.files("celpy").joinpath("cel.lark").read_text()


def grammar_digest() -> str:
    """What the tables are computed from: cel-python's grammar, our options and the Lark version."""
    import hashlib

    what = f"{_grammar()}\n{sorted(_OPTIONS.items())!r}\n{lark.__version__}"
    return hashlib.sha256(what.encode()).hexdigest()


def build_parser() -> lark.Lark:
    """Our own Lark instance over cel-python's grammar (cel-python's singleton may be rebuilt with another tree class),
    its LALR tables computed from the grammar: ~0.25 s of CPU, which every process that parses CEL would pay."""
    from celpy.celparser import CELParser

    return lark.Lark(_grammar(), lexer_callbacks={"IDENT": CELParser.ambiguous_literals}, **_OPTIONS)


def serialized(parser: lark.Lark) -> tuple[dict, dict]:
    """(data, memo) of a parser as Lark serializes it, without the options it cannot (given again by _parser)."""
    data, memo = parser.memo_serialize([lark.lexer.TerminalDef, lark.grammar.Rule])
    data["options"] = {k: v for k, v in data["options"].items() if k not in ("lexer_callbacks", "g_regex_flags")}
    return data, memo


def _parser() -> lark.Lark:
    """The parser, loaded from the tables fleet/cel/gen/cel_lalr.py holds (~0.03 s; tests/cel/test_cel_lalr.py proves
    it parses as a built one), else built. Lark numbers its states in set order, which changes with the process's hash
    seed: tables from two processes differ in numbering, not in what they accept, so the file is checked by digest."""
    global _PARSER
    if _PARSER is None:
        from celpy.celparser import CELParser

        try:
            from dragoman.fleet.cel.gen.cel_lalr import DATA, DIGEST, MEMO
        except ImportError:  # pragma: no cover - the generated file is part of the package
            DIGEST = ""
        if DIGEST == grammar_digest():
            # Lark's own loader (Lark.load reads the same dict from a pickle): the tables as Lark wrote them.
            _PARSER = lark.Lark.__new__(lark.Lark)._load(
                {"data": DATA, "memo": MEMO},
                lexer_callbacks={"IDENT": CELParser.ambiguous_literals},
                g_regex_flags=_OPTIONS["g_regex_flags"],
                propagate_positions=True,
            )
        else:  # another grammar or Lark than the tables were computed from: compute them
            _PARSER = build_parser()
    return _PARSER


def write_tables(path: str) -> None:
    """Write fleet/cel/gen/cel_lalr.py (fleet/cel/gen/generate.sh runs this)."""
    import pprint

    data, memo = serialized(build_parser())
    text = (
        '"""The LALR tables of the CEL parser (fleet/cel/syntax.py build_parser) as Lark serializes them.\n'
        'Generated by fleet/cel/gen/generate.sh, not edited."""\n\nimport re\n\n'
        f"DIGEST = {grammar_digest()!r}\n"
        f"DATA = {pprint.pformat(data, width=120, sort_dicts=True)}\n"
        f"MEMO = {pprint.pformat(memo, width=120, sort_dicts=True)}\n"
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


_NAME_CHAR = re.compile(r"[_A-Za-z0-9]")


def parse_tree(source: Source) -> lark.Tree:
    """The Lark tree of the rewritten text; syntax errors carry the original line and column."""
    try:
        tree = _parser().parse(source.rewritten)
    except lark.exceptions.UnexpectedEOF:
        raise source.error(
            "syntax error: unexpected end of input", "syntax", source.original_offset(len(source.rewritten))
        ) from None
    except lark.exceptions.UnexpectedToken as ex:
        tok = ex.token
        off = source.original_offset(tok.start_pos if tok.start_pos is not None else len(source.rewritten))
        if tok.type == "$END":
            raise source.error("syntax error: unexpected end of input", "syntax", len(source.original)) from None
        shown = source.original[off : off + max(1, len(str(tok)))] or str(tok)
        if tok.type == "RESERVED":
            raise source.error(f"syntax error: reserved identifier '{tok}'", "syntax", off) from None
        raise source.error(f"syntax error: mismatched input '{shown}'", "syntax", off) from None
    except lark.exceptions.UnexpectedCharacters as ex:
        off = source.original_offset(ex.pos_in_stream)  # type: ignore[arg-type]  # lark types it None
        ch = source.original[off : off + 1]
        raise source.error(f"syntax error: token recognition error at: '{ch}'", "syntax", off) from None
    except lark.exceptions.LarkError as ex:
        raise source.error(f"syntax error: {str(ex).splitlines()[0]}", "syntax", 0) from None
    # Where cel-python's contextual lexer reads what cel-go's longest-match lexer cannot: a keyword as a name, or the
    # `in` operator cut from the front of a name (`x int`, `a includes(b)`). cel-go's words come from parse_errors.
    text = source.rewritten
    for sub in tree.iter_subtrees_topdown():  # iterative: a 12,000-clause stored selector is a deep tree
        for tok in sub.children:
            if isinstance(tok, lark.Token) and tok.type == "IDENT" and tok.value in _KEYWORDS:
                at = source.original_offset(tok.start_pos or 0)
                raise source.error(f"syntax error: '{tok}' is a keyword", "syntax", at)
        left, right = (sub.children + [None, None])[:2] if sub.data == "relation" else (None, None)
        if isinstance(left, lark.Tree) and left.data == "relation_in" and isinstance(right, lark.Tree):
            start = right.meta.start_pos if not right.meta.empty else None
            if start and text[start - 1] == "n" and _NAME_CHAR.match(text, start):
                raise source.error("syntax error: 'in' begins a name", "syntax", source.original_offset(start - 2))
    return tree


# The one-variable existsOne is not a macro in Kubernetes 1.37's cel-go v0.29 (a plain call, refused as undeclared:
# the oracle's answer); the two-variable one is, from the comprehensions extension.
_MACROS_1 = {"all", "exists", "exists_one", "map", "filter"}
_MACROS_2 = {"all", "exists", "exists_one", "existsOne", "transformList", "transformMap", "transformMapEntry"}


class _Builder:
    def __init__(self, source: Source) -> None:
        self.source = source

    def off(self, t: Any) -> int:
        if isinstance(t, lark.Token):
            pos = t.start_pos
        else:
            pos = t.meta.start_pos if not t.meta.empty else 0
        return self.source.original_offset(pos or 0)

    def op_offset(self, left_t: lark.Tree, right_t: lark.Tree, op: str) -> int:
        # cel-go reports an operator's errors at the operator itself.
        text = {"@in": "in"}.get(op, op.strip("_"))
        end = None if left_t.meta.empty else left_t.meta.end_pos  # None for a bare literal token such as `true`
        start = self.source.original_offset(end) if end is not None else 0
        found = self.source.original.find(text, start)
        return found if found != -1 else self.off(right_t)

    def open_paren(self, name_tok: lark.Token) -> int:
        """Where cel-go places a call: at its `(` (the parser gives the call the id of that token)."""
        off = self.off(name_tok)
        at = self.source.original.find("(", off)  # from the name's start: a rewritten name is longer than the text
        return at if at != -1 else off

    def dot_offset(self, name_tok: lark.Token) -> int:
        off = self.off(name_tok)
        dot = self.source.original.rfind(".", 0, off)
        return dot if dot != -1 else off

    def err(self, message: str, kind: str, t: Any) -> CelCompileError:
        return self.source.error(message, kind, self.off(t))

    def build(self, t: lark.Tree) -> Node:
        d = t.data
        ch: list[Any] = t.children
        if d == "expr":
            if len(ch) == 1:
                return self.build(ch[0])
            return Node("cond", self.build(ch[0]), self.build(ch[1]), self.build(ch[2]), offset=self.off(t))
        if d in ("conditionalor", "conditionaland", "relation", "addition", "multiplication"):
            if len(ch) == 1:
                return self.build(ch[0])
            left_t, right_t = ch
            if d in ("conditionalor", "conditionaland"):
                # cel-go's parser balances a chain of && (||) into a tree of logarithmic depth (its logicManager):
                # the same shape here, so a 1,500-clause stored selector is no recursion problem, and the same
                # error wins when several clauses fail.
                kind = "or" if d == "conditionalor" else "and"
                operands = [self.build(x) for x in logic_chain(t)]
                return balanced(kind, operands, self.off(t))
            op = {
                "relation_lt": "_<_",
                "relation_le": "_<=_",
                "relation_gt": "_>_",
                "relation_ge": "_>=_",
                "relation_eq": "_==_",
                "relation_ne": "_!=_",
                "relation_in": "@in",
                "addition_add": "_+_",
                "addition_sub": "_-_",
                "multiplication_mul": "_*_",
                "multiplication_div": "_/_",
                "multiplication_mod": "_%_",
            }[left_t.data]
            left = self.build(left_t.children[0])
            right = self.build(right_t)
            return Node("call", op, None, [left, right], offset=self.op_offset(left_t.children[0], right_t, op))
        if d == "unary":
            if len(ch) == 1:
                return self.build(ch[0])
            opnode, operand = ch
            inner = self.build(operand)
            return Node("not" if opnode.data == "unary_not" else "neg", inner, offset=self.off(t))
        if d in ("member", "primary"):
            return self.build(ch[0])
        if d == "member_dot":
            operand, name = ch
            if str(name) in ("IP", "CIDR") and _is_ident(operand, "net"):
                # The IP and CIDR libraries' type names, values of CEL's `type` type like `int`.
                return Node("ident", f"net.{name}", offset=self.off(operand))
            return Node("select", self.build(operand), str(name), False, offset=self.dot_offset(name))
        if d == "member_dot_arg":
            operand, name = ch[0], str(ch[1])
            args_t = ch[2].children if len(ch) > 2 else []
            return self.method(t, operand, name, args_t, ch[1])
        if d == "member_index":
            operand, key = ch
            # cel-go's index expression is at its `[`.
            at = self.source.original.rfind("[", 0, self.off(key))
            return Node("index", self.build(operand), self.build(key), False, offset=at if at != -1 else self.off(key))
        if d == "member_object":
            raise self.err(
                f"message construction is {UNSUPPORTED} (DRA selectors declare no message types)", "unsupported", t
            )
        if d in ("dot_ident", "dot_ident_arg", "ident_arg") and str(ch[0]) in RESERVED:
            raise self.err(f"syntax error: reserved identifier: {ch[0]}", "syntax", ch[0])  # `if(x)`, `.as`
        if d == "dot_ident":
            # `.device`: the name from the root scope; a selector has no container, so it is the same name.
            return Node("ident", str(ch[0]), offset=self.off(ch[0]))
        if d == "dot_ident_arg":
            args_t = ch[1].children if len(ch) > 1 else []
            return Node("call", str(ch[0]), None, [self.build(a) for a in args_t], offset=self.open_paren(ch[0]))
        if d == "ident":
            if str(ch[0]) in RESERVED:
                raise self.err(f"syntax error: reserved identifier: {ch[0]}", "syntax", ch[0])
            return Node("ident", str(ch[0]), offset=self.off(ch[0]))
        if d == "ident_arg":
            name = str(ch[0])
            args_t = ch[1].children if len(ch) > 1 else []
            if name in (OPT_ELEM, OPT_KEY):  # a `?` in a list or map literal with no element after it (`[?, 1]`)
                raise self.err("syntax error: an optional element needs a value", "syntax", t)
            if name == "has":
                if len(args_t) != 1:
                    raise self.err("invalid argument to has() macro", "syntax", t)
                arg = self.build(args_t[0])
                if arg.kind != "select" or arg.args[2]:
                    raise self.err("invalid argument to has() macro", "syntax", t)
                return Node("has", arg, offset=self.off(t))
            return Node("call", name, None, [self.build(a) for a in args_t], offset=self.open_paren(ch[0]))
        if d == "paren_expr":
            return self.build(ch[0])
        if d == "list_lit":
            items: list[Node] = []
            optional: set[int] = set()
            for a in ch[0].children if ch else []:
                inner = _marked(a, OPT_ELEM)
                if inner is not None:
                    optional.add(len(items))
                    a = inner
                items.append(self.build(a))
            return Node("list", items, frozenset(optional), offset=self.off(t))
        if d == "map_lit":
            entries: list[tuple[Node, Node]] = []
            optional = set()
            if ch:
                kids = ch[0].children
                for k in range(0, len(kids), 2):
                    key_t = kids[k]
                    inner = _marked(key_t, OPT_KEY)
                    if inner is not None:
                        optional.add(len(entries))
                        key_t = inner
                    entries.append((self.build(key_t), self.build(kids[k + 1])))
            return Node("map", entries, frozenset(optional), offset=self.off(t))
        if d == "literal":
            return self.literal(ch[0])
        raise self.err(f"syntax error: unexpected {d}", "syntax", t)

    def literal(self, tok: lark.Token) -> Node:
        from celpy.evaluation import celbytes, celstr

        ty, text = tok.type, str(tok)
        off = self.off(tok)
        if ty == "INT_LIT":
            neg = text.startswith("-")
            body = text[1:] if neg else text
            v = int(body, 16) if body.lower().startswith("0x") else int(body)
            v = -v if neg else v
            if not _INT64_MIN <= v <= _INT64_MAX:
                raise self.source.error("integer literal is out of range", "syntax", off)
            return Node("lit", v, offset=off)
        if ty == "UINT_LIT":
            body = text[:-1]
            if body.startswith("-"):
                raise self.source.error("syntax error: negative uint literal", "syntax", off)
            v = int(body, 16) if body.lower().startswith("0x") else int(body)
            if v > 2**64 - 1:
                raise self.source.error("unsigned integer literal is out of range", "syntax", off)
            return Node("lit", Uint(v), offset=off)
        if ty == "FLOAT_LIT":
            # cel-go's grammar: digits after the point, or an exponent (`5.` and `5.e3` are syntax errors there;
            # cel-python's lexer takes them).
            if re.fullmatch(r"-?[0-9]+\.[eE].*", text):
                # `5.e3` is the int 5 and a field e3 for cel-go's lexer: the checker refuses the selection.
                raise self.source.error("type 'int' does not support field selection", "type", off + text.index("."))
            if not _CEL_FLOAT.fullmatch(text.lstrip("-")):
                raise self.source.error(
                    f"Syntax error: no viable alternative at input '{text}'", "syntax", off + len(text) - 1
                )
            number = float(text)
            if math.isinf(number):
                raise self.source.error("invalid double literal", "syntax", off)  # Go's strconv.ParseFloat: range
            return Node("lit", number, offset=off)
        if ty in ("STRING_LIT", "MLSTRING_LIT", "BYTES_LIT"):
            if "\\" in text and unescape_error(text[1:] if ty == "BYTES_LIT" else text, ty == "BYTES_LIT"):
                raise self.source.error("invalid escape in a literal", "syntax", off)  # cel-go's words: parse_errors
            if not _escapes_valid(text):
                raise self.source.error(
                    "syntax error: token recognition error: invalid escape sequence in a string literal", "syntax", off
                )
            # An escape past U+10FFFF (or a lone surrogate) is no character: a syntax error, as cel-go says, not a
            # ValueError escaping as a traceback (issue 19).
            try:
                if ty == "BYTES_LIT":
                    return Node("lit", bytes(celbytes(tok)), offset=off)
                value = str(celstr(tok)) if ty == "STRING_LIT" else decode_multiline(text)
            except (ValueError, OverflowError):
                raise self.source.error(
                    "syntax error: invalid escape sequence in a string literal", "syntax", off
                ) from None
            if any("\ud800" <= c <= "\udfff" for c in value):
                raise self.source.error("syntax error: a surrogate code point is not a character", "syntax", off)
            return Node("lit", value, offset=off)
        if ty == "BOOL_LIT":
            return Node("lit", text == "true", offset=off)
        if ty == "NULL_LIT":
            return Node("lit", None, offset=off)
        raise self.source.error(f"syntax error: unexpected literal {text}", "syntax", off)

    def method(self, t: lark.Tree, operand_t: lark.Tree, name: str, args_t: list, name_tok: lark.Token) -> Node:
        off = self.off(name_tok)
        # cel.bind(var, init, body) and the comprehension macros take identifiers, not values.
        if name == "bind" and _is_ident(operand_t, "cel"):
            if len(args_t) != 3 or _ident_name(args_t[0]) is None:
                raise self.err("cel.bind() variable name must be a simple identifier", "syntax", t)
            return Node("bind", _ident_name(args_t[0]), self.build(args_t[1]), self.build(args_t[2]), offset=off)
        if name in _MACROS_1 | _MACROS_2 and args_t and _ident_name(args_t[0]) is not None:
            target = self.build(operand_t)
            if (
                len(args_t) >= 3
                and name in _MACROS_2
                and _ident_name(args_t[1]) is not None
                and not (name == "map" and len(args_t) == 3)
            ):
                v1, v2 = _ident_name(args_t[0]), _ident_name(args_t[1])
                if v1 == v2 or ACCUMULATOR_NAME in (v1, v2):
                    raise self.err(f"{name}() cannot expand with these variables", "syntax", t)  # cel-go words it
                exprs = [self.build(a) for a in args_t[2:]]
                if name in ("all", "exists", "exists_one", "existsOne") and len(exprs) != 1:
                    raise self.err(f"{name}() macro takes one predicate", "syntax", t)
                return Node("comp", name, target, v1, v2, exprs, offset=off)
            if name in _MACROS_1 and len(args_t) in (2, 3):
                v1 = _ident_name(args_t[0])
                if v1 == ACCUMULATOR_NAME:
                    raise self.err(f"{name}() cannot expand with this variable", "syntax", t)  # cel-go words it
                exprs = [self.build(a) for a in args_t[1:]]
                if name != "map" and len(exprs) != 1:
                    raise self.err(f"{name}() macro takes one predicate", "syntax", t)
                return Node("comp", name, target, v1, None, exprs, offset=off)
        if name == "sortBy" and len(args_t) == 2 and _ident_name(args_t[0]) is not None:
            # cel-go's ext lists macro: cel.bind(@__sortBy_input__, target,
            # @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(v, key))).
            target = self.build(operand_t)
            if target.kind in ("lit", "map"):
                raise self.err(
                    "sortBy can only be applied to a list, identifier, comprehension, call or select expression",
                    "syntax",
                    t,
                )
            keys = Node(
                "comp",
                "map",
                Node("ident", SORT_BY_INPUT, offset=off),
                _ident_name(args_t[0]),
                None,
                [self.build(args_t[1])],
                offset=off,
            )
            call = Node("call", "@sortByAssociatedKeys", Node("ident", SORT_BY_INPUT, offset=off), [keys], offset=off)
            return Node("bind", SORT_BY_INPUT, target, call, offset=off)
        if name in ("optMap", "optFlatMap") and len(args_t) == 2 and _ident_name(args_t[0]) is not None:
            # cel-go's optional macros: o.optMap(v, e) is o.hasValue() ? optional.of(e[v := o.value()]) :
            # optional.none().
            return Node(
                "optmap",
                self.build(operand_t),
                _ident_name(args_t[0]),
                self.build(args_t[1]),
                name == "optFlatMap",
                offset=off,
            )
        if name in ("optMap", "optFlatMap"):
            raise self.err(f"{name}() takes a variable name and an expression", "syntax", t)
        if name == "isCanonical" and _is_ident(operand_t, "ip"):
            return Node("call", "ip.isCanonical", None, [self.build(a) for a in args_t], offset=self.off(operand_t))
        if name in (OPT_SELECT, QUOTED_SELECT, OPT_INDEX) and len(args_t) != 1:
            raise self.err("syntax error: an optional index takes one key", "syntax", t)  # `x[?]`; cel-go words it
        if name == OPT_SELECT:
            field = self.build(args_t[0]).args[0]
            return Node("select", self.build(operand_t), field, True, offset=off)
        if name == QUOTED_SELECT:
            field = self.build(args_t[0]).args[0]
            return Node("select", self.build(operand_t), field, False, offset=off)
        if name == OPT_INDEX:
            return Node("index", self.build(operand_t), self.build(args_t[0]), True, offset=off)
        if (name, len(args_t), True) in MACROS and (name != "bind" or _is_ident(operand_t, "cel")):
            # A call cel-go's parser expands as a macro, with arguments it cannot expand: its syntax error, which
            # parse_errors words (our parser would take it for an ordinary call).
            raise self.err(f"{name}() cannot expand with these arguments", "syntax", t)
        target = self.build(operand_t)
        # A dotted global name such as strings.quote or sets.contains or lists.range.
        if target.kind == "ident" and target.args[0] in ("strings", "sets", "lists", "math", "base64", "format"):
            return Node(
                "call",
                f"{target.args[0]}.{name}",
                None,
                [self.build(a) for a in args_t],
                offset=self.open_paren(name_tok),
            )
        return Node("call", name, target, [self.build(a) for a in args_t], offset=self.open_paren(name_tok))


def logic_chain(t: lark.Tree) -> list:
    """The operands of a left-deep chain `a && b && c` (or ||) in order, without recursion."""
    d = t.data
    rights = []
    while t.data == d and len(t.children) == 2:
        rights.append(t.children[1])
        t = t.children[0]
    first = t.children[0] if t.data == d else t
    return [first, *reversed(rights)]


def balanced(kind: str, operands: list[Node], offset: int) -> Node:
    """parser/helper.go balancedTree: the middle operand (rounded up) starts the right half."""

    def tree(lo: int, hi: int) -> Node:
        if lo == hi:
            return operands[lo]
        mid = (lo + hi + 1) // 2
        return Node(kind, tree(lo, mid - 1), tree(mid, hi), offset=offset)

    return tree(0, len(operands) - 1)


# CEL.g4's ESC_SEQ: \\ then a character escape, \\[0-3][0-7][0-7], \\x or \\X and two hex digits, \\u four, \\U eight.
_ESCAPE = re.compile(r"\\(?:[abfnrtv\"'\\?`]|[0-3][0-7]{2}|[xX][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})")


def _escapes_valid(text: str) -> bool:
    """Every backslash of a (not raw) string or bytes literal starts an escape cel-go's lexer knows (`"\\4"` is not)."""
    prefix = len(text) - len(text.lstrip("bBrR"))
    if "r" in text[:prefix].lower():
        return True
    i = text.find("\\", prefix)
    while i != -1:
        m = _ESCAPE.match(text, i)
        if m is None:
            return False
        i = text.find("\\", m.end())
    return True


def _ident_name(t: Any) -> str | None:
    # Unwrap expr→…→primary→ident chains of single children.
    while isinstance(t, lark.Tree) and len(t.children) == 1 and t.data != "ident":
        t = t.children[0]
    if isinstance(t, lark.Tree) and t.data == "ident":
        return str(t.children[0])
    return None


def _marked(t: Any, marker: str) -> Any:
    """The argument of a `marker(x)` call the rewriter put in (an optional element or entry), else None."""
    while isinstance(t, lark.Tree) and len(t.children) == 1 and t.data not in ("ident_arg", "ident"):
        t = t.children[0]
    if isinstance(t, lark.Tree) and t.data == "ident_arg" and str(t.children[0]) == marker:
        args = t.children[1].children if len(t.children) > 1 else []
        if len(args) == 1:
            return args[0]
    return None


def _is_ident(t: Any, name: str) -> bool:
    return _ident_name(t) == name


def parse(expression: str) -> tuple[Node, Source]:
    """Parse an expression into our AST; raises CelCompileError (kind syntax or unsupported)."""
    source = Source(expression)
    tree = parse_tree(source)
    return _Builder(source).build(tree), source
