"""cel-go's syntax errors, word for word: its ANTLR grammar, its error listener and recovery, its parser's checks.

dragoman parses selectors with its own parser (syntax.py); this module only words the refusal. When that parser
finds a syntax error (or an expression cel-go's parser refuses for another reason: a macro argument, a literal out of
range, nesting past its limits), `celgo_errors` parses the text the way cel-go v0.29.2's parser/parser.go does —
the same CEL.g4 grammar generated for the same ANTLR version (fleet/cel/gen, see generate.sh there), driven with
the same error strategy — and returns every error cel-go's `parser.Parse` would report, at the same locations, so
`display()` equals what the API server prints after "compilation failed: " (common/errors.go ToDisplayString).

What is ported, from parser/parser.go unless noted:
- the listener `SyntaxError`: "Syntax error: " + ANTLR's message, the reserved-word rewording of "no viable
  alternative at input '.true'", at most 100 reports (then "More than 100 syntax errors" and a stop);
- `recoveryLimitErrorStrategy`: at most 30 recoveries ("error recovery attempt limit exceeded: 30", reported
  through the listener) and 256 tokens consumed per recovery ("error recovery token lookahead limit exceeded");
- `recursionListener`: a rule nested more than 250 times ("expression recursion limit exceeded: 250");
- the visitor's checks: "max recursion depth exceeded" (250), reserved identifiers, operators, int/uint/double
  literals, string and bytes escapes (parser/unescape.go), and the macros' argument errors of the macros the
  Kubernetes CEL environment declares (standard macros, optMap/optFlatMap, cel.bind, the two-variable
  comprehensions, sortBy);
- common.Errors: the 100-error cap and "N more errors were truncated", ordering by location, and the caret snippet.

The ANTLR Python runtime is the one cel-go's Go runtime was generated with (4.13.1); where the two runtimes differ
in a message (the lexer's "token recognition error" is not escaped in Go), the Go wording is kept.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
import threading
from typing import Any

# The ANTLR Python runtime and the generated parser are imported on first use: only a refused selector pays for them.

MAX_RECURSION_DEPTH = 250
ERROR_REPORTING_LIMIT = 100
ERROR_RECOVERY_LIMIT = 30
ERROR_RECOVERY_LOOKAHEAD_LIMIT = 256
MAX_ERRORS_TO_REPORT = 100  # common.NewErrors
MAX_SNIPPET_LENGTH = 16384  # common/error.go, in bytes
ACCUMULATOR_NAME = "__result__"  # parser.AccumulatorName; the hidden "@result" cannot be written
DESCRIPTION = "<input>"

RESERVED_IDS = frozenset(
    "as break const continue else false for function if import in let loop package namespace null return true var "
    "void while".split()
)
_RESERVED_NO_VIABLE = re.compile(r"no viable alternative at input '.(true|false|null)'")
_OPERATORS = frozenset(["<", "<=", ">=", ">", "==", "!=", "in", "*", "/", "%", "+", "-"])

# (function, argument count, receiver style) of every macro in Kubernetes' environment -> the kind of check.
MACROS: dict[tuple[str, int, bool], str] = {
    ("has", 1, False): "has",
    **{(name, 2, True): "quantifier" for name in ("all", "exists", "exists_one")},
    ("map", 2, True): "map",
    ("map", 3, True): "map",
    ("filter", 2, True): "map",
    **{(name, 3, True): "two-var" for name in ("all", "exists", "existsOne", "exists_one")},
    **{(name, n, True): "two-var" for name in ("transformList", "transformMap", "transformMapEntry") for n in (3, 4)},
    ("bind", 3, True): "bind",
    ("sortBy", 2, True): "sortBy",
    ("optMap", 2, True): "optMap",
    ("optFlatMap", 2, True): "optFlatMap",
}
_SORT_BY_TARGETS = frozenset(["list", "select", "ident", "comprehension", "call"])


@dataclasses.dataclass(frozen=True)
class Issue:
    """One error as cel-go's common.Error holds it: 1-based line and 0-based column, both -1 without a location."""

    line: int
    column: int
    message: str

    @property
    def located(self) -> bool:
        return self.line >= 1 and self.column >= 0


class _Source:
    """common.Source and ast.SourceInfo for one text: code points, line offsets, locations and snippets."""

    def __init__(self, text: str) -> None:
        self.text = text
        # runes.NewBufferAndLineOffsets: the offset after each '\n', then len+1 ([0] for an empty text).
        self.line_offsets = [i + 1 for i, c in enumerate(text) if c == "\n"] + [len(text) + 1] if text else [0]
        # ast.NewSourceInfo's base line: the line of offset 0 minus one, which is 1 for an empty text only.
        self.base_line = 0 if text else 1

    def compute_offset(self, line: int, col: int) -> int:
        """SourceInfo.ComputeOffset: a 1-based line and 0-based column to an offset (-1 when out of range)."""
        line += self.base_line
        if line == 1:
            return col
        if line < 1 or line > len(self.line_offsets):
            return -1
        return self.line_offsets[line - 2] + col

    def location_of(self, offset: int) -> tuple[int, int]:
        # SourceInfo.GetLocationByOffset
        line, col = 1, offset
        for lo in self.line_offsets:
            if lo > offset:
                break
            line += 1
            col = offset - lo
        return line, col

    def snippet(self, line: int) -> str | None:
        # sourceImpl.Snippet
        if not self.text:
            return None
        if line == 1:
            start = 0
        elif 1 < line <= len(self.line_offsets):
            start = self.line_offsets[line - 2]
        else:
            return None
        nxt = line + 1
        if 1 < nxt <= len(self.line_offsets):
            return self.text[start : self.line_offsets[nxt - 2] - 1]
        return self.text[start:]


def snippet_of(text: str, line: int) -> str | None:
    """The text of a 1-based line as cel-go's Source.Snippet gives it (None past the end or for an empty text)."""
    return _Source(text).snippet(line)


def display(text: str, issues: list[Issue] | tuple[Issue, ...], truncated: int = 0, *, terminal: bool = False) -> str:
    """common.Errors.ToDisplayString: the errors ordered by location, each with its snippet and caret. `terminal`: for
    a person's terminal, not the API server's words — control characters in messages and snippets escaped
    (fleet/errors.printable), the caret under the same character of the escaped snippet."""
    source = _Source(text)
    ordered = sorted(issues, key=lambda i: (i.line, i.column))  # sort.SliceStable on (line, column)
    out = [_display_one(source, i, terminal) for i in ordered[:MAX_ERRORS_TO_REPORT]]
    if truncated:
        out.append(f"{truncated} more errors were truncated")
    return "\n".join(out)


def _display_one(source: _Source, issue: Issue, terminal: bool = False) -> str:
    # common.Error.ToDisplayString
    message = issue.message
    if terminal:
        from dragoman.fleet.errors import printable

        message = printable(message)
    result = f"ERROR: {DESCRIPTION}:{issue.line}:{issue.column + 1}: {message}"
    snippet = source.snippet(issue.line)
    if snippet is not None and len(snippet.encode("utf-8", "surrogatepass")) <= MAX_SNIPPET_LENGTH:
        snippet = snippet.replace("\t", " ")
        result += "\n | " + caret_pair(snippet, issue.column, terminal)
    return result


def caret_pair(snippet: str, column: int, terminal: bool = False) -> str:
    """The snippet, a newline, ` | ` and the caret line under it; `terminal`: the snippet's control characters
    escaped, the caret moved along with the character it points at."""
    if terminal:
        from dragoman.fleet.errors import printable

        column = len(printable(snippet[:column])) if column > 0 else column
        snippet = printable(snippet)
    return snippet + "\n | " + caret_line(snippet, column)


def caret_line(snippet: str, column: int) -> str:
    """The indicator under a snippet: a dot per code point before the column (a wide dot for a multi-byte one),
    then a caret (wide under a multi-byte code point)."""
    dots = "".join("\uff0e" if ord(c) >= 0x80 else "." for c in snippet[: max(0, column)])
    at = snippet[column : column + 1] if column >= 0 else snippet[:1]
    return dots + ("\uff3e" if at and ord(at) >= 0x80 else "^")


class _Stop(Exception):
    """cel-go's panics that end a parse (recovered in parser.parse): the errors reported so far stand."""


@dataclasses.dataclass
class _Expr:
    """What the visitor needs of an ast.Expr: its kind, its ident name, and the offset of its id (None: no location)."""

    kind: str
    offset: int | None
    name: str = ""


class _Errors:
    def __init__(self, source: _Source) -> None:
        self.source = source
        self.issues: list[Issue] = []
        self.count = 0  # numErrors: every report, kept or not

    def report(self, location: tuple[int, int], message: str) -> None:
        self.count += 1
        if self.count > MAX_ERRORS_TO_REPORT:
            return
        self.issues.append(Issue(location[0], location[1], message))


_NO_LOCATION = (-1, -1)
_lock = threading.Lock()
_runtime: Any = None


def _load() -> Any:
    """The ANTLR runtime, the generated lexer and parser, and the classes built on them (once)."""
    global _runtime
    if _runtime is not None:
        return _runtime
    import antlr4
    from antlr4.atn.ATNState import ATNState
    from antlr4.error.ErrorListener import ErrorListener
    from antlr4.error.Errors import InputMismatchException
    from antlr4.error.ErrorStrategy import DefaultErrorStrategy
    from antlr4.IntervalSet import IntervalSet
    from antlr4.Token import Token
    from antlr4.tree.Tree import ParseTreeListener
    from dragoman.fleet.cel.gen.CELLexer import CELLexer
    from dragoman.fleet.cel.gen.CELParser import CELParser

    _BLOCK_STARTS = (
        ATNState.BLOCK_START,
        ATNState.STAR_BLOCK_START,
        ATNState.PLUS_BLOCK_START,
        ATNState.STAR_LOOP_ENTRY,
    )
    _LOOP_BACKS = (ATNState.PLUS_LOOP_BACK, ATNState.STAR_LOOP_BACK)

    class Lexer(CELLexer):
        def notifyListeners(self, e: Any) -> None:
            # Go's BaseLexer.notifyListeners shows the text as is; the Python runtime escapes \n, \r and \t.
            text = self._input.getText(self._tokenStartCharIndex, self._input.index)
            self.getErrorListenerDispatch().syntaxError(
                self, None, self._tokenStartLine, self._tokenStartColumn, f"token recognition error at: '{text}'", e
            )

    class Listener(ErrorListener):
        """parser.SyntaxError: every ANTLR report, lexer's and parser's, as a "Syntax error: " issue."""

        def __init__(self, run: _Run) -> None:
            self.run = run

        def syntaxError(self, recognizer: Any, offendingSymbol: Any, line: int, column: int, msg: str, e: Any) -> None:
            run = self.run
            loc = run.source.location_of(run.source.compute_offset(line, column))
            if "no viable alternative" in msg:
                msg = _RESERVED_NO_VIABLE.sub(r"mismatched input '\1' expecting IDENTIFIER", msg)
            if run.reports < ERROR_REPORTING_LIMIT:
                run.reports += 1
                run.errors.report(loc, "Syntax error: " + msg)
            else:
                run.errors.report(loc, f"Syntax error: More than {ERROR_REPORTING_LIMIT} syntax errors")
                raise _Stop()

    class Depth(ParseTreeListener):
        """recursionListener: no rule nested more than MAX_RECURSION_DEPTH times."""

        def __init__(self) -> None:
            self.depth: dict[int, int] = {}

        def enterEveryRule(self, ctx: Any) -> None:
            if ctx is None:
                return
            i = ctx.getRuleIndex()
            d = self.depth.get(i, 0) + 1
            self.depth[i] = d
            if d > MAX_RECURSION_DEPTH:
                raise _Internal(f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}")

        def exitEveryRule(self, ctx: Any) -> None:
            if ctx is None:
                return
            i = ctx.getRuleIndex()
            if self.depth.get(i, 0) > 0:
                self.depth[i] -= 1

    class Lookahead:
        """lookaheadConsumer: the parser, with at most ERROR_RECOVERY_LOOKAHEAD_LIMIT tokens consumed."""

        def __init__(self, parser: Any) -> None:
            self.__dict__["_parser"] = parser
            self.__dict__["_consumed"] = 0

        def consume(self) -> Any:
            if self._consumed >= ERROR_RECOVERY_LOOKAHEAD_LIMIT:
                raise _Internal(f"error recovery token lookahead limit exceeded: {ERROR_RECOVERY_LOOKAHEAD_LIMIT}")
            self.__dict__["_consumed"] += 1
            return self._parser.consume()

        def __getattr__(self, name: str) -> Any:
            return getattr(self._parser, name)

        def __setattr__(self, name: str, value: Any) -> None:
            setattr(self._parser, name, value)

    class Strategy(DefaultErrorStrategy):
        """recoveryLimitErrorStrategy."""

        def __init__(self) -> None:
            super().__init__()
            self.attempts = 0

        def _check(self, recognizer: Any) -> None:
            if self.attempts == ERROR_RECOVERY_LIMIT:
                self.attempts += 1
                msg = f"error recovery attempt limit exceeded: {ERROR_RECOVERY_LIMIT}"
                recognizer.notifyErrorListeners(msg, None, None)
                raise _Stop()
            self.attempts += 1

        def sync(self, recognizer: Any) -> None:
            # Go's DefaultErrorStrategy.Sync. The Python runtime's adds the recovery set into the expected-token set
            # the ATN caches for the state, which changes every later parse's recovery (and words).
            if self.inErrorRecoveryMode(recognizer):
                return
            s = recognizer._interp.atn.states[recognizer.state]
            la = recognizer.getTokenStream().LA(1)
            following = recognizer.atn.nextTokens(s)
            if Token.EPSILON in following or la in following:
                return
            if s.stateType in _BLOCK_STARTS:
                if self.singleTokenDeletion(recognizer) is None:
                    raise InputMismatchException(recognizer)
            elif s.stateType in _LOOP_BACKS:
                self.reportUnwantedToken(recognizer)
                expecting = IntervalSet()
                expecting.addSet(recognizer.getExpectedTokens())
                expecting.addSet(self.getErrorRecoverySet(recognizer))
                self.consumeUntil(recognizer, expecting)

        def recover(self, recognizer: Any, e: Any) -> None:
            self._check(recognizer)
            super().recover(Lookahead(recognizer), e)

        def recoverInline(self, recognizer: Any) -> Any:
            self._check(recognizer)
            return super().recoverInline(Lookahead(recognizer))

    _runtime = (antlr4, Lexer, CELParser, Listener, Depth, Strategy)
    return _runtime


class _Internal(_Stop):
    """A stop cel-go reports as an internal error, without a location."""


class _Run:
    def __init__(self, text: str) -> None:
        self.source = _Source(text)
        self.errors = _Errors(self.source)
        self.reports = 0


# cel-go's limits let a selector nest 250 levels (parentheses, operators, selections); each level is several Python
# frames in the parsers here, more than the interpreter's default limit of 1,000 allows.
RECURSION_FLOOR = 10_000


def allow_deep_recursion() -> None:
    """Raise the interpreter's recursion limit to RECURSION_FLOOR, never lower it: the limit is the whole process's,
    so a parse on one thread must not put it back under another thread's feet."""
    if sys.getrecursionlimit() < RECURSION_FLOOR:
        sys.setrecursionlimit(RECURSION_FLOOR)


def celgo_errors(text: str) -> tuple[list[Issue], int]:
    """The errors cel-go's parser reports for `text` (empty when it parses), and how many more it truncated."""
    antlr4, Lexer, CELParser, Listener, Depth, Strategy = _load()
    run = _Run(text)
    allow_deep_recursion()
    with _lock:  # the runtime's shared DFA cache is not meant for concurrent parsers
        lexer = Lexer(antlr4.InputStream(text))
        lexer.removeErrorListeners()
        listener = Listener(run)
        lexer.addErrorListener(listener)
        parser = CELParser(antlr4.CommonTokenStream(lexer))
        parser.removeErrorListeners()
        parser.addErrorListener(listener)
        parser.addParseListener(Depth())
        parser._errHandler = Strategy()
        try:
            tree = parser.start()
            _Visitor(run, CELParser).visit(tree)
        except _Internal as stop:
            run.errors.report(_NO_LOCATION, str(stop))
        except _Stop:
            pass
    truncated = max(0, run.errors.count - MAX_ERRORS_TO_REPORT)
    return run.errors.issues, truncated


class _Visitor:
    """parser.go's visitor, reduced to what decides its errors and their locations."""

    def __init__(self, run: _Run, parser_class: Any) -> None:
        self.run = run
        self.P = parser_class
        self.depth = 0

    # --- locations (parserHelper.id and reportError)

    def offset(self, ctx: Any) -> int | None:
        if ctx is None:
            return None
        tok = ctx.start if hasattr(ctx, "getRuleIndex") else ctx  # a rule's context starts at its first token
        if tok is None:
            return None
        return self.run.source.compute_offset(tok.line, tok.column)

    def location(self, offset: int | None) -> tuple[int, int]:
        return _NO_LOCATION if offset is None else self.run.source.location_of(offset)

    def error(self, ctx: Any, message: str) -> _Expr:
        off = self.offset(ctx)
        self.run.errors.report(self.location(off), message)
        return _Expr("unspecified", off)

    def error_at(self, expr: _Expr, message: str) -> _Expr:
        # A macro's error at an argument's location (reportError with a common.Location).
        loc = self.location(expr.offset)
        self.run.errors.report(loc, message)
        return _Expr("unspecified", self.run.source.compute_offset(*loc))

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_RECURSION_DEPTH:
            raise _Internal("max recursion depth exceeded")

    # --- Visit

    def unnest(self, t: Any) -> Any:
        P = self.P
        while t is not None:
            c = type(t)
            if c is P.ExprContext:
                if t.op is not None:
                    return t
                t = t.e
            elif c is P.ConditionalOrContext or c is P.ConditionalAndContext:
                if t.ops:
                    return t
                t = t.e
            elif c is P.RelationContext:
                if t.op is not None:
                    return t
                t = t.calc()
            elif c is P.CalcContext:
                if t.op is not None:
                    return t
                t = t.unary()
            elif c is P.MemberExprContext:
                t = t.member()
            elif c is P.PrimaryExprContext:
                t = t.primary()
            elif c is P.NestedContext:
                t = t.e
            elif c is P.ConstantLiteralContext:
                t = t.literal()
            else:
                return t
        return t

    def visit(self, tree: Any) -> _Expr:
        P = self.P
        t = self.unnest(tree)
        c = type(t)
        if c in (P.ExprContext, P.RelationContext, P.CalcContext, P.SelectContext, P.MemberCallContext, P.IndexContext):
            self.deeper()
            try:
                return self.visit_counted(t)
            finally:
                self.depth -= 1
        if c is P.StartContext:
            return self.visit(t.e)
        if c is P.ConditionalOrContext or c is P.ConditionalAndContext:
            return self.visit_logic(t, "||" if c is P.ConditionalOrContext else "&&")
        if c is P.LogicalNotContext or c is P.NegateContext:
            if len(t.ops) % 2 == 0:
                return self.visit(t.member())
            self.visit(t.member())
            return _Expr("call", self.offset(t.ops[0]))
        if c is P.IdentContext:
            return self.visit_ident(t)
        if c is P.GlobalCallContext:
            return self.visit_global_call(t)
        if c is P.MapInitializerListContext:
            self.visit_map_entries(t)
            return _Expr("unspecified", None)
        if c is P.UnaryContext:
            return _Expr("literal", self.offset(t))  # "<<error>>"
        if c is P.CreateListContext:
            if t.elems is not None:
                for e in t.elems.elems:
                    self.visit(e.e)
            return _Expr("list", self.offset(t.op))
        if c is P.CreateMessageContext:
            self.visit_fields(t.entries)
            return _Expr("struct", self.offset(t.op))
        if c is P.CreateStructContext:
            if t.entries is not None:
                self.visit(t.entries)
            return _Expr("map", self.offset(t.op))
        if c in (P.IntContext, P.UintContext, P.DoubleContext, P.StringContext, P.BytesContext):
            return self.visit_literal(t)
        if c in (P.BoolTrueContext, P.BoolFalseContext, P.NullContext):
            return _Expr("literal", self.offset(t))
        # "Report at least one error if the parser reaches an unknown parse element."
        if self.run.errors.count == 0:
            name = f"<<*gen.{c.__name__}>>" if t is not None else "<<nil>>"
            self.run.errors.report(_NO_LOCATION, f"unknown parse element encountered: {name}")
        return _Expr("unspecified", None)

    def visit_counted(self, t: Any) -> _Expr:
        P = self.P
        c = type(t)
        if c is P.ExprContext:
            self.visit(t.e)
            op = self.offset(t.op)
            self.visit(t.e1)
            self.visit(t.e2)
            return _Expr("call", op)
        if c is P.RelationContext or c is P.CalcContext:
            text = t.op.text if t.op is not None else ""
            if text not in _OPERATORS:
                return self.error(t, "operator not found")
            sub = t.relation if c is P.RelationContext else t.calc
            self.visit(sub(0))
            op = self.offset(t.op)
            self.visit(sub(1))
            return _Expr("call", op)
        if c is P.SelectContext:
            self.visit(t.member())
            if t.id_ is None or t.op is None:
                return _Expr("unspecified", self.offset(t))
            if type(t.id_) not in (P.SimpleIdentifierContext, P.EscapedIdentifierContext):
                self.error(t.id_, "unsupported ident kind")
            if t.opt is not None:
                return _Expr("call", self.offset(t.op))
            return _Expr("select", self.offset(t.op))
        if c is P.MemberCallContext:
            operand = self.visit(t.member())
            if t.id_ is None:
                return _Expr("unspecified", self.offset(t))
            op = self.offset(t.open_)
            args = self.visit_list(t.args)
            return self.call_or_macro(op, t.id_.text, operand, args)
        # IndexContext
        self.visit(t.member())
        if t.op is None:
            return _Expr("unspecified", self.offset(t))
        op = self.offset(t.op)
        self.visit(t.index)
        return _Expr("call", op)

    def visit_logic(self, t: Any, op: str) -> _Expr:
        self.visit(t.e)
        rest = t.e1
        for i, _tok in enumerate(t.ops):
            if i >= len(rest):
                return self.error(t, f"unexpected character, wanted '{op}'")
            self.visit(rest[i])
        # the balancing logic manager: the tree's root takes the id of the middle operator
        return _Expr("call", self.offset(t.ops[len(t.ops) // 2]))

    def visit_ident(self, t: Any) -> _Expr:
        if t.id_ is None:
            return _Expr("unspecified", self.offset(t))
        name = t.id_.text
        if name in RESERVED_IDS:
            return self.error(t, f"reserved identifier: {name}")
        return _Expr("ident", self.offset(t.id_), ("." if t.leadingDot is not None else "") + name)

    def visit_global_call(self, t: Any) -> _Expr:
        if t.id_ is None:
            return _Expr("unspecified", self.offset(t))
        name = t.id_.text
        if name in RESERVED_IDS:
            return self.error(t, f"reserved identifier: {name}")
        if t.leadingDot is not None:
            name = "." + name
        op = self.offset(t.op)
        args = self.visit_list(t.args)
        return self.call_or_macro(op, name, None, args)

    def visit_list(self, ctx: Any) -> list[_Expr]:
        if ctx is None:
            return []
        return [self.visit(e) for e in ctx.e]

    def visit_map_entries(self, t: Any) -> None:
        if t is None or t.keys is None:
            return
        for i, _col in enumerate(t.cols):
            if i >= len(t.keys) or i >= len(t.values):
                return
            self.visit(t.keys[i].e)
            self.visit(t.values[i])

    def visit_fields(self, t: Any) -> None:
        P = self.P
        if t is None or t.fields is None:
            return
        for i, f in enumerate(t.fields):
            if i >= len(t.cols) or i >= len(t.values):
                return
            if type(f.escapeIdent()) not in (P.SimpleIdentifierContext, P.EscapedIdentifierContext):
                self.error(t, "unsupported ident kind")
                continue
            self.visit(t.values[i])

    def visit_literal(self, t: Any) -> _Expr:
        P = self.P
        c = type(t)
        off = self.offset(t)
        text = t.tok.text
        if c is P.IntContext or c is P.UintContext:
            if c is P.UintContext:
                text = text[:-1]
            base = 10
            if text.startswith("0x"):
                base, text = 16, text[2:]
            neg = c is P.IntContext and t.sign is not None
            try:
                value = int(text, base)
            except ValueError:
                value = None
            value = -value if neg and value is not None else value
            bounds = (-(2**63), 2**63 - 1) if c is P.IntContext else (0, 2**64 - 1)
            if value is None or not bounds[0] <= value <= bounds[1]:
                return self.error(t, "invalid int literal" if c is P.IntContext else "invalid uint literal")
            return _Expr("literal", off)
        if c is P.DoubleContext:
            try:
                ok = not math.isinf(float(text))  # strconv.ParseFloat: out of range is an error
            except ValueError:
                ok = False
            if not ok:
                return self.error(t, "invalid double literal")
            return _Expr("literal", off)
        problem = unescape_error(text[1:] if c is P.BytesContext else text, c is P.BytesContext)
        if problem:
            self.error(t, problem)
        return _Expr("literal", off)

    # --- macros (parser.expandMacro and the expanders)

    def call_or_macro(self, op: int | None, name: str, target: _Expr | None, args: list[_Expr]) -> _Expr:
        kind = MACROS.get((name, len(args), target is not None))
        if kind is None:
            return _Expr("call", op)
        problem = self.macro_error(kind, name, target, args)
        if problem is False:  # the expander declined: an ordinary call
            return _Expr("call", op)
        if isinstance(problem, tuple):
            at, message = problem
            return self.error_at(at, message)
        result = {"has": "select", "optMap": "call", "optFlatMap": "call"}.get(kind, "comprehension")
        return _Expr(result, op)

    def macro_error(
        self, kind: str, name: str, target: _Expr | None, args: list[_Expr]
    ) -> tuple[_Expr, str] | None | bool:
        def ident(e: _Expr) -> str | None:
            return e.name if e.kind == "ident" else None

        def overwrites(v: str) -> bool:
            return v in (ACCUMULATOR_NAME, "@result")

        if kind == "has":
            return None if args[0].kind == "select" else (args[0], "invalid argument to has() macro")
        if kind in ("quantifier", "map"):
            v = ident(args[0])
            if v is None:
                return args[
                    0
                ], "argument must be a simple name" if kind == "quantifier" else "argument is not an identifier"
            if overwrites(v):
                return args[0], "iteration variable overwrites accumulator variable"
            return None
        if kind == "two-var":
            v1, v2 = ident(args[0]), ident(args[1])
            if v1 is None:
                return args[0], "argument must be a simple name"
            if v2 is None:
                return args[1], "argument must be a simple name"
            if v1 == v2:
                return args[1], f"duplicate variable name: {v1}"
            if overwrites(v1):
                return args[0], "iteration variable overwrites accumulator variable"
            if overwrites(v2):
                return args[1], "iteration variable overwrites accumulator variable"
            return None
        assert target is not None
        if kind == "bind":
            if ident(target) != "cel":
                return False
            if ident(args[0]) is None:
                return args[0], "cel.bind() variable names must be simple identifiers"
            return None
        if kind == "sortBy":
            if target.kind not in _SORT_BY_TARGETS:
                return (
                    target,
                    "sortBy can only be applied to a list, identifier, comprehension, call or select expression",
                )
            return self.macro_error("map", "map", target, args)
        # optMap, optFlatMap
        if ident(args[0]) is None:
            return args[0], f"{name}() variable name must be a simple identifier"
        return None


_HEX = frozenset("0123456789abcdefABCDEF")


def unescape_error(value: str, is_bytes: bool) -> str | None:
    """parser/unescape.go's error for a quoted literal (the lexer has already checked its shape), or None."""
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    if len(value) < 2:
        return "unable to unescape string"
    raw = value[0] in "rR"
    if raw:
        value = value[1:]
    n = len(value)
    if value[0] != value[n - 1] or value[0] not in "\"'":
        return "unable to unescape string"
    if n >= 6 and (value.startswith("'''") or value.startswith('"""')):
        if not value.endswith(value[:3]):
            return "unable to unescape string"
        value = '"' + value[3 : n - 3] + '"'
        n = len(value)
    value = value[1 : n - 1]
    if raw or "\\" not in value:
        return None
    i = 0
    while i < len(value):
        if value[i] != "\\":
            i += 1
            continue
        if i + 1 >= len(value):
            return "unable to unescape string, found '\\' as last character"
        c = value[i + 1]
        i += 2
        if c in "abfnrtv\\'\"`?":
            continue
        if c in "xXuU":
            n = {"x": 2, "X": 2, "u": 4, "U": 8}[c]
            if is_bytes and c in "uU":
                return "unable to unescape string"
            digits = value[i : i + n]
            if len(digits) < n or not all(d in _HEX for d in digits):
                return "unable to unescape string"
            i += n
            v = int(digits, 16)
            if not is_bytes and (v > 0x10FFFF or 0xD800 <= v <= 0xDFFF):
                return "invalid unicode code point"
            continue
        if c in "0123":
            digits = value[i : i + 2]
            if len(digits) < 2 or not all("0" <= d <= "7" for d in digits):
                return "unable to unescape octal sequence in string"
            i += 2
            continue
        return "unable to unescape string"
    return None
