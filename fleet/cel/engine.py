"""Compiling DRA CEL selectors once (cached by text) and evaluating them per device with Kubernetes' rules."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from typing import Any

from dragoman.fleet.cel.api import (
    COST_LIMIT,
    FALSE,
    MAX_EXPRESSION_LENGTH,
    NEW_EXPRESSIONS,
    STORED_EXPRESSIONS,
    TRUE,
    CelCompileError,
    CelDevice,
    CompiledSelector,
    Environment,
    EvalOutcome,
)
from dragoman.fleet.cel.checker import Checked, check
from dragoman.fleet.cel.parse_errors import MAX_RECURSION_DEPTH as MAX_NESTING
from dragoman.fleet.cel.parse_errors import allow_deep_recursion, celgo_errors
from dragoman.fleet.cel.runtime import CelRuntimeError, type_name
from dragoman.fleet.cel.syntax import Node, parse

ENGINES = ("fast", "reference")
CODE_POINT_LIMIT = 100_000
# DRAGOMAN_CEL_ENGINE=reference forces cel-python everywhere (to compare, or if the fast engine misbehaves).
_FORCED = os.environ.get("DRAGOMAN_CEL_ENGINE", "").strip() or None

_cache: dict[tuple[str, Environment, str], CompiledSelector | CelCompileError] = {}
_cache_lock = threading.Lock()
_CACHE_MAX = 4096


def environment_of(environment: Environment | str | None) -> Environment:
    """An Environment from itself, "new"/"stored" (1.37's default gates) or None (new expressions)."""
    if environment is None or environment == "new":
        return NEW_EXPRESSIONS
    if environment == "stored":
        return STORED_EXPRESSIONS
    if isinstance(environment, Environment):
        return environment
    raise ValueError(f"environment must be 'new', 'stored' or an Environment, not {environment!r}")


_NOT_TEXT = re.compile("[\ud800-\udfff]")
NOT_UTF8 = "the expression is not valid UTF-8: a byte that is not part of any character"
DEEPER_THAN_DRAGOMAN = (
    "the expression is nested too deeply for dragoman's evaluator: dragoman's limit, not the scheduler's, which "
    "evaluates it"
)


def check_expression(expression: str, environment: Environment | str | None = None) -> tuple[Checked, Any]:
    """Parse and check; raises CelCompileError exactly where `environment` (default: the API server
    validating a new selector) would reject the selector."""
    env = environment_of(environment)
    if not isinstance(expression, str):
        raise CelCompileError("expression must be a string", "syntax")
    bad = _NOT_TEXT.search(expression)
    if bad is not None:
        # Bytes that are not UTF-8 on a command line reach Python as lone surrogates (and a JSON file may spell one
        # as an escape): no character, and nothing a manifest can carry to the API server. Before anything encodes it.
        at = bad.start()
        raise CelCompileError(
            NOT_UTF8,
            "syntax",
            expression.count("\n", 0, at) + 1,
            at - (expression.rfind("\n", 0, at) + 1) + 1,
        )
    size = len(expression.encode("utf-8"))  # the API server counts bytes, as Go's len() does
    # Only a selector being written is held to the length limit; Kubernetes never re-validates a stored one (the
    # oracle).
    if size > MAX_EXPRESSION_LENGTH and not env.stored:
        raise CelCompileError(
            f"must have at most {MAX_EXPRESSION_LENGTH} bytes (the expression has {size})", "too-long"
        )
    if len(expression) > CODE_POINT_LIMIT:
        # cel-go's parser (ExpressionSizeCodePointLimit), for a stored selector too, which has no length limit.
        raise CelCompileError(
            f"expression code point size exceeds limit: size: {len(expression)}, limit {CODE_POINT_LIMIT}", "syntax"
        )
    allow_deep_recursion()  # what cel-go takes (250 levels) must not be a RecursionError here
    try:
        root, source = parse(expression)
    except CelCompileError as exc:
        if exc.kind != "syntax":
            raise
        # Our parser found the refusal; cel-go's grammar and error path word it (and may find more than one).
        raise _in_celgo_words(expression) or exc from None
    except RecursionError:
        raise _in_celgo_words(expression) or CelCompileError(
            "the expression is nested too deeply for dragoman's parser", "syntax"
        ) from None
    if _may_nest_past_celgo_limits(expression, root):
        # cel-go's parser stops at 250 nested rules or visits; ours has no such limit. Only a deeply nested
        # expression can get there, and it is compiled once (the cache), so it pays for cel-go's grammar here.
        refused = _in_celgo_words(expression)
        if refused is not None:
            raise refused
    try:
        return check(root, source, env), source
    except RecursionError:
        raise CelCompileError("the expression is nested too deeply for dragoman's checker", "syntax") from None


# Below cel-go's limit of 250 with a margin: the two depths here approximate cel-go's counts (its parser's rules and
# its visitor's calls), and an expression past this pays one parse with cel-go's grammar to know.
NEAR_NESTING = MAX_NESTING - 50
# AST nodes cel-go's visitor does not count: literals, names, the balanced && and || trees, list and map literals.
_UNCOUNTED = frozenset(["lit", "ident", "and", "or", "list", "map"])


def _may_nest_past_celgo_limits(expression: str, root: Node) -> bool:
    if len(expression) <= NEAR_NESTING:  # every level takes a character
        return False
    if sum(map(expression.count, "([{")) > NEAR_NESTING:
        depth = deepest = 0
        for c in expression:  # brackets nest cel-go's grammar rules (strings' brackets only make this cautious)
            if c in "([{":
                depth += 1
                deepest = max(deepest, depth)
            elif c in ")]}":
                depth -= 1
        if deepest > NEAR_NESTING:
            return True
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, Node):
            d += node.kind not in _UNCOUNTED
            if d > NEAR_NESTING:
                return True
            stack.extend((a, d) for a in node.args)
        elif isinstance(node, (list, tuple)):
            stack.extend((a, d) for a in node)
    return False


def _in_celgo_words(expression: str) -> CelCompileError | None:
    """cel-go's parse errors for the expression as one CelCompileError, or None when cel-go's parser accepts it."""
    issues, truncated = celgo_errors(expression)
    if not issues:
        return None
    first = min(issues, key=lambda i: (i.line, i.column))  # ToDisplayString's order (a stable sort)
    line, column = (first.line, first.column + 1) if first.located else (None, None)
    return CelCompileError(first.message, "syntax", line, column, tuple(issues), truncated)


def _outcome(value: Any) -> EvalOutcome:
    if value is True:
        return TRUE
    if value is False:
        return FALSE
    return EvalOutcome(None, f"CEL result of type {type_name(value)} could not be converted to bool")


def _wrap(
    program: Callable[[CelDevice], Any], fallback: Callable[[], Callable[[CelDevice], Any]] | None = None
) -> Callable[[CelDevice], EvalOutcome]:
    reference: list[Callable[[CelDevice], Any]] = []

    def evaluate(device: CelDevice) -> EvalOutcome:
        conv = device.cache.get("conversion_error")
        if conv is not None:
            return EvalOutcome(None, conv)
        try:
            return _outcome(program(device))
        except CelRuntimeError as exc:
            return EvalOutcome(None, exc.message)
        except RecursionError:
            # cel-python recurses several Python frames a level (about 230 nested parentheses at the top of a stack);
            # cel-go evaluates whatever its parser took (250 levels), so the failure is dragoman's, and says so.
            return EvalOutcome(None, DEEPER_THAN_DRAGOMAN)
        except Exception:
            if fallback is None:
                raise
            # A fast-engine bug must not take the caller down: cel-python answers for this device.
            if not reference:
                reference.append(fallback())
            try:
                return _outcome(reference[0](device))
            except CelRuntimeError as exc:
                return EvalOutcome(None, exc.message)

    return evaluate


def build_selector(expression: str, checked: Checked, source: Any, engine: str) -> CompiledSelector:
    """A selector on the named engine; raises ImportError/FastUnsupported when that engine cannot take it."""
    from dragoman.fleet.cel.fast import compile_program
    from dragoman.fleet.cel.reference import compile_program as ref_compile

    # Only a stored selector can be estimated above the limit (a new one is refused); its evaluations are tracked.
    track = checked.cost > COST_LIMIT
    if engine == "fast":
        program = compile_program(checked.root, track_cost=track)
        return CompiledSelector(
            expression,
            checked.attributes_read,
            engine,
            _wrap(program, lambda: ref_compile(checked.root, source)),
            checked.env,
        )
    program = ref_compile(checked.root, source)
    if track:
        # cel-python counts no cost: the fast engine's tracked evaluation decides whether the limit is reached
        # (the one implementation of the runtime limit), and cel-python gives the value when it is not.
        from dragoman.fleet.cel.fast import FastUnsupported

        try:
            program = _within_cost_limit(compile_program(checked.root, track_cost=True), program)
        except FastUnsupported:
            pass  # a construct only cel-python evaluates: it runs without the limit
    return CompiledSelector(expression, checked.attributes_read, engine, _wrap(program), checked.env)


def _within_cost_limit(
    tracked: Callable[[CelDevice], Any], program: Callable[[CelDevice], Any]
) -> Callable[[CelDevice], Any]:
    from dragoman.fleet.cel.fast import COST_LIMIT_ERROR

    def evaluate(device: CelDevice) -> Any:
        try:
            tracked(device)
        except CelRuntimeError as exc:
            if exc.message == COST_LIMIT_ERROR:
                raise
        return program(device)

    return evaluate


def compile_expression(
    expression: str, engine: str | None = None, environment: Environment | str | None = None
) -> CompiledSelector:
    """Compile a DRA selector; raises CelCompileError. `engine` forces "fast" or "reference" (default: fast, else
    reference).

    `environment` is the CEL environment: NEW_EXPRESSIONS ("new", the default) checks the selector as the API
    server checks one being created, which is what an operator writing a selector needs to know;
    STORED_EXPRESSIONS ("stored") compiles it as the scheduler compiles a selector already stored."""
    wanted = engine or _FORCED or "auto"
    env = environment_of(environment)
    key = (wanted, env, expression)
    hit = _cache.get(key)
    if hit is not None:
        if isinstance(hit, CelCompileError):
            raise hit.bare()
        return hit
    try:
        checked, source = check_expression(expression, env)
    except CelCompileError as exc:
        _remember(key, exc.bare())
        raise
    if wanted == "auto":
        try:
            sel = build_selector(expression, checked, source, "fast")
        except Exception:  # noqa: BLE001 - see below
            # The fast engine is an optimisation: anything it cannot take runs on cel-python.
            sel = build_selector(expression, checked, source, "reference")
    else:
        sel = build_selector(expression, checked, source, wanted)
    _remember(key, sel)
    return sel


def _remember(key: tuple[str, Environment, str], value: Any) -> None:
    with _cache_lock:
        if len(_cache) >= _CACHE_MAX:
            _cache.clear()
        _cache[key] = value


def evaluate_all(selectors: list[CompiledSelector], device: CelDevice) -> EvalOutcome:
    """The scheduler's rule: every selector must be true; evaluation stops at the first false or error."""
    for sel in selectors:
        out = sel.evaluate(device)
        if out.value is not True:
            return out
    return TRUE


def scheduler_error_message(owner: str, index: int, driver: str, pool: str, device: str, error: str) -> str:
    """The scheduler's error for a runtime failure (allocator_stable.go); owner is "class <name>" or "claim
    <ns>/<name>"."""
    return (
        f"{owner}: selector #{index} on device {driver}/{pool}/{device}: CEL runtime error: "
        f"{enhance_runtime_error(error)}"
    )


def enhance_runtime_error(error: str) -> str:
    """dynamic-resource-allocation cel.EnhanceRuntimeError: a hint after "no such key" errors."""
    if "no such key:" in error and OPTIONAL_HINT not in error:
        return error + OPTIONAL_HINT
    return error


OPTIONAL_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for "
    "optional fields"
)
