"""The public types of the DRA CEL environment: compile errors, evaluation outcomes, compiled selectors."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

# Kubernetes' limits for DRA selectors (resource/v1 validation and cel.compile).
MAX_EXPRESSION_LENGTH = 10 * 1024
COST_LIMIT = 1_000_000

# "program": env.Program refused it (a constant conversion the planner folds fails, e.g. `bool("yes")`).
COMPILE_ERROR_KINDS = ("syntax", "undeclared", "type", "non-bool", "too-long", "cost", "unsupported", "program")

ENVIRONMENT_KINDS = ("new", "stored")


@dataclasses.dataclass(frozen=True)
class Environment:
    """Which CEL environment compiles a selector, as dynamic-resource-allocation's cel.GetCompiler builds it.

    `kind` is "new" (NewExpressions: the API server validating a selector being written; what `dragoman cel`
    and the playground check) or "stored" (StoredExpressions: a selector already stored, as the scheduler
    compiles it: every versioned option regardless of feature gates, so `includes()`, dyn-typed attributes
    and `allowMultipleAllocations` are declared). The gates are Kubernetes 1.37's defaults:
    DRAConsumableCapacity (beta, on) declares `device.allowMultipleAllocations` for new selectors;
    DRAListTypeAttributes (alpha, off) declares `includes()` and dyn-typed attributes for new selectors (list-valued
    attributes convert whatever the gates, as v0.37.2's DeviceMatches does; with the gate off the API server drops
    them, so a live cluster has none, and a new selector cannot iterate one: `any` is no comprehension range).
    """

    kind: str = "new"
    consumable_capacity: bool = True
    list_type_attributes: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ENVIRONMENT_KINDS:
            raise ValueError(f"environment kind must be one of {ENVIRONMENT_KINDS}, not {self.kind!r}")

    @property
    def stored(self) -> bool:
        return self.kind == "stored"

    @property
    def declares_includes(self) -> bool:
        return self.stored or self.list_type_attributes

    @property
    def declares_multi_alloc(self) -> bool:
        return self.stored or self.consumable_capacity

    @property
    def dyn_attributes(self) -> bool:
        # attributeTypeV136ListTypeAttributes (dyn) instead of attributeTypeV131 (any).
        return self.stored or self.list_type_attributes


NEW_EXPRESSIONS = Environment("new")
STORED_EXPRESSIONS = Environment("stored")


class CelCompileError(Exception):
    """An expression Kubernetes would reject when the DeviceClass or ResourceClaim is created.

    `line` is 1-based, `column` is 1-based (as cel-go prints `<input>:LINE:COL`); both are None when
    the error has no position (too long, cost). `kind` is one of COMPILE_ERROR_KINDS.

    `issues` holds every error cel-go's parser reports when it refuses the text (parse_errors.celgo_errors), in
    cel-go's words; `message`, `line` and `column` are then the first of them. Empty for other refusals, which are
    one error each.
    """

    def __init__(
        self,
        message: str,
        kind: str,
        line: int | None = None,
        column: int | None = None,
        issues: tuple = (),
        truncated: int = 0,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.line = line
        self.column = column
        self.issues = issues
        self.truncated = truncated

    def bare(self) -> CelCompileError:
        """The same error without a traceback, context or cause: what a cache keeps, and raises afresh on each hit.
        A kept traceback keeps its frames and their locals (parse trees) alive, and re-raising one object lengthens
        its traceback each time: the playground caches a compile error for nearly every prefix typed."""
        return CelCompileError(self.message, self.kind, self.line, self.column, self.issues, self.truncated)

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.line}:{self.column}: {self.message}"
        return self.message

    def caret(self, expression: str, *, terminal: bool = False) -> str:
        """The expression's offending line with a caret under the column, as cel-go draws it (empty without a
        position). `terminal`: control characters escaped, for a person's terminal (parse_errors.caret_pair)."""
        from dragoman.fleet.cel.parse_errors import caret_pair, snippet_of

        if self.line is None:
            return ""
        text = snippet_of(expression, self.line)
        if text is None:
            return ""
        return " | " + caret_pair(text.replace("\t", " "), max(0, (self.column or 1) - 1), terminal)

    def display(self, expression: str, *, terminal: bool = False) -> str:
        """Every error as cel-go's Issues.String() words it: `ERROR: <input>:L:C: message`, then the line and a
        caret; what the API server puts after "compilation failed: " (`terminal`: escaped for a terminal)."""
        from dragoman.fleet.cel.parse_errors import Issue, display

        if self.issues:
            return display(expression, self.issues, self.truncated, terminal=terminal)
        if self.line is None:
            return display(expression, [Issue(-1, -1, self.message)], terminal=terminal)
        return display(expression, [Issue(self.line, (self.column or 1) - 1, self.message)], terminal=terminal)


@dataclasses.dataclass(frozen=True)
class EvalOutcome:
    """The result of one expression on one device: exactly one of `value` and `error` is set."""

    value: bool | None
    error: str | None = None

    @property
    def matched(self) -> bool:
        return self.value is True


TRUE = EvalOutcome(True)
FALSE = EvalOutcome(False)


@dataclasses.dataclass(eq=False)
class CelDevice:
    """One device as the CEL environment sees it: driver, attributes and capacity by domain, converted once.

    Engines cache their own activation on the device (`cache`), so converting a device is paid once
    however many expressions evaluate against it.
    """

    driver: str
    name: str
    attributes: dict[
        str, dict[str, Any]
    ]  # domain -> id -> Python value (str, int, bool, Semver, or a list of one of them)
    capacity: dict[str, dict[str, Any]]  # domain -> id -> Quantity
    allow_multiple_allocations: bool = False
    raw: dict | None = None
    cache: dict = dataclasses.field(default_factory=dict, repr=False)


class CompiledSelector:
    """A checked expression, ready to evaluate on devices. Build with `compile_expression`."""

    expression: str
    attributes_read: frozenset | None  # {(domain, id), ...} read from attributes/capacity; None when unknown
    engine: str
    environment: Environment  # the environment it was compiled in

    def __init__(
        self,
        expression: str,
        attributes_read: frozenset | None,
        engine: str,
        evaluator: Callable[[CelDevice], EvalOutcome],
        environment: Environment | None = None,
    ) -> None:
        self.expression = expression
        self.attributes_read = attributes_read
        self.engine = engine
        self.environment = environment or NEW_EXPRESSIONS
        self._evaluate = evaluator

    def evaluate(self, device: CelDevice) -> EvalOutcome:
        return self._evaluate(device)

    def __repr__(self) -> str:
        return f"CompiledSelector({self.expression!r}, engine={self.engine}, environment={self.environment.kind})"
