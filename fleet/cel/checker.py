"""Static checking of DRA CEL: declared names and fields, overloads, the bool result, attributes read; the estimated
cost is fleet/cel/cost.py's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dragoman.fleet.cel import runtime as rt
from dragoman.fleet.cel.api import COST_LIMIT, NEW_EXPRESSIONS, CelCompileError, Environment
from dragoman.fleet.cel.cost import estimate as estimate_cost
from dragoman.fleet.cel.formats import VALIDATORS as FORMAT_NAMES
from dragoman.fleet.cel.runtime import CelRuntimeError, regex_error
from dragoman.fleet.cel.syntax import NOT_CONST, UNSUPPORTED, Node, Source, Uint
from dragoman.fleet.cel.timelib import DURATION_GETTERS, TIMESTAMP_GETTERS

# Types: 'bool' 'int' 'uint' 'double' 'string' 'bytes' 'null' 'type' 'dyn' 'any' 'Quantity' 'Semver' 'device',
# ('list', T), ('map', K, V), ('opt', T).  'any' is what DRA declares attribute values as (AnyType).
B, I, U, D, S, BY, Q, V = "bool", "int", "uint", "double", "string", "bytes", "Quantity", "Semver"
IPT, CIDRT = "IP", "CIDR"
TS, DUR, URLT, FMT = "Timestamp", "Duration", "URL", "NamedFormat"
DYN, ANY = "dyn", "any"
LDYN = ("list", DYN)
LS = ("list", S)
MDYN = ("map", DYN, DYN)
ATTR_MAP = ("map", S, ("map", S, ANY))
# With DRAListTypeAttributes, and in the stored-expression environment, attribute values are dyn (compile.go
# attributeTypeV136ListTypeAttributes) instead of any: the difference is that a dyn value may be iterated.
ATTR_MAP_DYN = ("map", S, ("map", S, DYN))
CAP_MAP = ("map", S, ("map", S, Q))
DEVICE_FIELDS = {"driver": S, "attributes": ATTR_MAP, "capacity": CAP_MAP, "allowMultipleAllocations": B}


def device_fields(env: Environment) -> dict[str, Any]:
    """The fields of kubernetes.DRADevice as the environment declares them."""
    fields = {"driver": S, "attributes": ATTR_MAP_DYN if env.dyn_attributes else ATTR_MAP, "capacity": CAP_MAP}
    if env.declares_multi_alloc:
        fields["allowMultipleAllocations"] = B
    return fields


# Type names are values in CEL: `type(x) == string`.
TYPE_IDENTS = {
    "int": "int",
    "uint": "uint",
    "double": "double",
    "bool": "bool",
    "string": "string",
    "bytes": "bytes",
    "list": "list",
    "map": "map",
    "null_type": "null_type",
    "type": "type",
    "net.IP": "net.IP",
    "net.CIDR": "net.CIDR",
}


def type_str(t: Any) -> str:
    if isinstance(t, TVar):
        return "dyn"  # cel-go reports a free type variable as dyn (substitute(..., typeParamToDyn=true))
    if isinstance(t, tuple):
        if t[0] == "list":
            return f"list({type_str(t[1])})"
        if t[0] == "map":
            return f"map({type_str(t[1])}, {type_str(t[2])})"
        if t[0] == "opt":
            return f"optional_type({type_str(t[1])})"
    return {
        "Quantity": "kubernetes.Quantity",
        "Semver": "kubernetes.Semver",
        "device": "kubernetes.DRADevice",
        "null": "null_type",
        "IP": "net.IP",
        "CIDR": "net.CIDR",
        "Timestamp": "timestamp",
        "Duration": "duration",
        "URL": "kubernetes.URL",
        "NamedFormat": "kubernetes.NamedFormat",
    }.get(t, t)


def is_dyn(t: Any) -> bool:
    # A free type variable (TVar) passes wherever dyn does; what it binds to is Checker.bind's.
    return t == DYN or t == ANY or isinstance(t, TVar)


def assignable(param: Any, arg: Any) -> bool:
    if param == arg or is_dyn(param) or is_dyn(arg):
        return True
    if isinstance(param, tuple) and isinstance(arg, tuple) and param[0] == arg[0] and len(param) == len(arg):
        return all(assignable(p, a) for p, a in zip(param[1:], arg[1:]))
    return False


def join(a: Any, b: Any) -> Any:
    if a == b:
        return a
    if a == ANY or b == ANY:
        return ANY
    if is_dyn(a) or a == "null":
        return b if a == "null" else DYN
    if is_dyn(b) or b == "null":
        return a if b == "null" else DYN
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] and len(a) == len(b):
        return (a[0],) + tuple(join(x, y) for x, y in zip(a[1:], b[1:]))
    return DYN


def _elem(t: Any) -> Any:
    if isinstance(t, tuple) and t[0] == "list":
        return t[1]
    return ANY if t == ANY else DYN


def _opt_elem(t: Any) -> Any:
    e = _elem(t)
    return e[1] if isinstance(e, tuple) and e[0] == "opt" else DYN


def _same(t: Any) -> Any:
    return t if isinstance(t, tuple) else LDYN


# name -> [(receiver type or None for a global, [argument types], result type or fn(receiver, args))]
SIGNATURES: dict[str, list[tuple[Any, list, Any]]] = {
    "contains": [(S, [S], B)],
    "startsWith": [(S, [S], B)],
    "endsWith": [(S, [S], B)],
    "matches": [(S, [S], B), (None, [S, S], B)],
    "find": [(S, [S], S)],
    "findAll": [(S, [S], LS), (S, [S, I], LS)],
    "lowerAscii": [(S, [], S)],
    "upperAscii": [(S, [], S)],
    "trim": [(S, [], S)],
    # ext.Strings v2 (Kubernetes' version) has no string reverse(); lists.reverse() only (the oracle).
    "reverse": [(LDYN, [], lambda r, a: _same(r))],
    "charAt": [(S, [I], S)],
    "indexOf": [(S, [S], I), (S, [S, I], I), (LDYN, [DYN], I)],
    "lastIndexOf": [(S, [S], I), (S, [S, I], I), (LDYN, [DYN], I)],
    "replace": [(S, [S, S], S), (S, [S, S, I], S)],
    "split": [(S, [S], LS), (S, [S, I], LS)],
    "substring": [(S, [I], S), (S, [I, I], S)],
    "join": [(LS, [], S), (LS, [S], S)],
    "strings.quote": [(None, [S], S)],
    "format": [(S, [LDYN], S)],
    "size": [
        (None, [S], I),
        (None, [BY], I),
        (None, [LDYN], I),
        (None, [MDYN], I),
        (S, [], I),
        (BY, [], I),
        (LDYN, [], I),
        (MDYN, [], I),
    ],
    "int": [(None, [x], I) for x in (I, U, D, S, TS, DUR)],
    "uint": [(None, [x], U) for x in (I, U, D, S)],
    "double": [(None, [x], D) for x in (I, U, D, S)],
    "string": [(None, [x], S) for x in (I, U, D, S, B, BY, IPT, CIDRT, TS, DUR)],
    # CEL's standard timestamp and duration (checked literals: ValidateDurationLiterals/ValidateTimestampLiterals).
    "duration": [(None, [S], DUR), (None, [DUR], DUR)],
    "timestamp": [(None, [S], TS), (None, [I], TS), (None, [TS], TS)],
    **{g: [(TS, [], I), (TS, [S], I)] + ([(DUR, [], I)] if g in DURATION_GETTERS else []) for g in TIMESTAMP_GETTERS},
    # library/urls.go
    "url": [(None, [S], URLT)],
    "isURL": [(None, [S], B)],
    "getScheme": [(URLT, [], S)],
    "getHost": [(URLT, [], S)],
    "getHostname": [(URLT, [], S)],
    "getPort": [(URLT, [], S)],
    "getEscapedPath": [(URLT, [], S)],
    "getQuery": [(URLT, [], ("map", S, LS))],
    # library/format.go
    **{f"format.{name}": [(None, [], FMT)] for name in FORMAT_NAMES},
    "format.named": [(None, [S], ("opt", FMT))],
    "validate": [(FMT, [S], ("opt", LS))],
    "bool": [(None, [x], B) for x in (B, S)],
    "bytes": [(None, [x], BY) for x in (BY, S)],
    "semver": [(None, [S], V), (None, [S, B], V)],
    "isSemver": [(None, [S], B), (None, [S, B], B)],
    "quantity": [(None, [S], Q)],
    "isQuantity": [(None, [S], B)],
    "compareTo": [(Q, [Q], I), (V, [V], I)],
    "isGreaterThan": [(Q, [Q], B), (V, [V], B)],
    "isLessThan": [(Q, [Q], B), (V, [V], B)],
    "major": [(V, [], I)],
    "minor": [(V, [], I)],
    "patch": [(V, [], I)],
    "add": [(Q, [Q], Q), (Q, [I], Q)],
    "sub": [(Q, [Q], Q), (Q, [I], Q)],
    "asInteger": [(Q, [], I)],
    "asApproximateFloat": [(Q, [], D)],
    # cel-go declares the name sign but no overload on Quantity in either environment (the oracle: "found no
    # matching overload for 'sign' applied to 'kubernetes.Quantity.()'", new and stored).
    "sign": [],
    "isInteger": [(Q, [], B)],
    # library/lists.go declares these per element type (comparableTypes, summableTypes): see _list_elem_ok.
    "isSorted": [(LDYN, [], B)],
    "sum": [(LDYN, [], lambda r, a: _elem(r))],
    "min": [(LDYN, [], lambda r, a: _elem(r))],
    "max": [(LDYN, [], lambda r, a: _elem(r))],
    # library/ip.go and cidr.go
    "ip": [(None, [S], IPT), (CIDRT, [], IPT)],
    "ip.isCanonical": [(None, [S], B)],
    "isIP": [(None, [S], B)],
    "family": [(IPT, [], I)],
    "isUnspecified": [(IPT, [], B)],
    "isLoopback": [(IPT, [], B)],
    "isLinkLocalMulticast": [(IPT, [], B)],
    "isLinkLocalUnicast": [(IPT, [], B)],
    "isGlobalUnicast": [(IPT, [], B)],
    "cidr": [(None, [S], CIDRT)],
    "isCIDR": [(None, [S], B)],
    "containsIP": [(CIDRT, [S], B), (CIDRT, [IPT], B)],
    "containsCIDR": [(CIDRT, [S], B), (CIDRT, [CIDRT], B)],
    "prefixLength": [(CIDRT, [], I)],
    "masked": [(CIDRT, [], CIDRT)],
    # Declared only for stored selectors or with DRAListTypeAttributes (see Checker._call).
    "includes": [(DYN, [DYN], B)],
    "slice": [(LDYN, [I, I], lambda r, a: _same(r))],
    # sortBy's expansion (syntax.py): the keys must be of one comparable type (checked in Checker._call).
    "@sortByAssociatedKeys": [(LDYN, [LDYN], lambda r, a: _same(r))],
    # ext lists v1: list(list(T)).flatten() is list(T) (a list of non-lists has no overload); flatten(depth) is dyn.
    "flatten": [(("list", LDYN), [], lambda r, a: ("list", _elem(_elem(r)))), (LDYN, [I], LDYN)],
    "distinct": [(LDYN, [], lambda r, a: _same(r))],
    "sort": [(LDYN, [], lambda r, a: _same(r))],
    "lists.range": [(None, [I], ("list", I))],
    "first": [(LDYN, [], lambda r, a: ("opt", _elem(r)))],
    "last": [(LDYN, [], lambda r, a: ("opt", _elem(r)))],
    "sets.contains": [(None, [LDYN, LDYN], B)],
    "sets.equivalent": [(None, [LDYN, LDYN], B)],
    "sets.intersects": [(None, [LDYN, LDYN], B)],
    "__optional_of": [(None, [DYN], lambda r, a: ("opt", a[0]))],
    "__optional_none": [(None, [], ("opt", DYN))],
    "__optional_ofNonZeroValue": [(None, [DYN], lambda r, a: ("opt", a[0]))],
    # optional.unwrap(list(optional(T))) and list(optional(T)).unwrapOpt(): list(T) (cel-go's optional library).
    "__optional_unwrap": [(None, [("list", ("opt", DYN))], lambda r, a: ("list", _opt_elem(a[0])))],
    "unwrapOpt": [(("list", ("opt", DYN)), [], lambda r, a: ("list", _opt_elem(r)))],
    "orValue": [(("opt", DYN), [DYN], lambda r, a: join(r[1] if isinstance(r, tuple) else DYN, a[0]))],
    "hasValue": [(("opt", DYN), [], B)],
    "value": [(("opt", DYN), [], lambda r, a: r[1] if isinstance(r, tuple) else DYN)],
    "or": [(("opt", DYN), [("opt", DYN)], lambda r, a: join(r, a[0]))],
}

# library/lists.go: comparableTypes and summableTypes (durations and timestamps are not in this engine).
_COMPARABLE = (I, U, D, B, S, BY, DUR, TS)
_SUMMABLE = (I, U, D, DUR)
_LIST_TYPED = {"isSorted": _COMPARABLE, "min": _COMPARABLE, "max": _COMPARABLE, "sum": _SUMMABLE, "sort": _COMPARABLE}
_REGEX_FUNCS = {"matches", "find", "findAll"}


# --- type variables: the element type of `[]` and the key and value types of `{}` -----------------------------
# cel-go's checker gives an empty literal a free type variable and binds it in overload resolution
# (checker.resolveOverload): the overloads are tried in declaration order and every one whose parameters fit commits
# its substitutions, so the FIRST declared overload that fits a free variable binds it (`x + x` is bytes, standard.go
# declares add_bytes first; `-x` and `x * x` are double), and a later overload fits only if it agrees with that
# binding (or generalises it to dyn). The binding holds for every later use of the variable. The functions below
# port checker/types.go (internalIsAssignable, isValidTypeSubstitution, mostGeneral, notReferencedIn) over this
# module's types; a variable still free when checking ends is dyn. Only expressions with an empty list or map
# literal ever hold one, so every other expression checks exactly as before.
class TVar:
    """A type variable (cel-go's TypeParamKind)."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __repr__(self) -> str:
        return f"_var{self.n}"


_A, _B = "<A>", "<B>"  # an overload's type parameters, instantiated fresh per resolution (substitute)


def _nullable(t: Any) -> bool:
    # internalIsAssignableNull: isLegacyNullable (opaque, struct, any, duration, timestamp) or null itself.
    if isinstance(t, tuple):
        return t[0] == "opt"
    return t in ("null", ANY, DUR, TS, Q, V, IPT, CIDRT, URLT, FMT, "device")


def _assign(m: dict, t1: Any, t2: Any) -> bool:
    """internalIsAssignable(m, t1, t2): t1 (an argument) fits t2 (a parameter); m takes the substitutions."""
    if isinstance(t2, TVar):
        valid, has_sub = _valid_sub(m, t1, t2)
        if valid:
            return True
        if has_sub:
            return False
    if isinstance(t1, TVar):
        return _valid_sub(m, t2, t1)[0]
    if is_dyn(t1) or is_dyn(t2):
        return True
    if t1 == "null":
        return _nullable(t2)
    if t2 == "null":
        return _nullable(t1)
    if isinstance(t1, tuple) or isinstance(t2, tuple):
        return (
            isinstance(t1, tuple)
            and isinstance(t2, tuple)
            and t1[0] == t2[0]
            and len(t1) == len(t2)
            and all(_assign(m, a, b) for a, b in zip(t1[1:], t2[1:]))
        )
    return t1 == t2


def _valid_sub(m: dict, t1: Any, t2: TVar) -> tuple[bool, bool]:
    """isValidTypeSubstitution: (t1 may stand for t2, t2 already had a substitution)."""
    if t1 is t2:
        return True, True
    sub = m.get(t2)
    if sub is not None:
        if t1 == sub:
            return True, True
        if _assign(m, t1, sub):
            new = t1 if _less_specific(t1, sub) else sub
            if _not_referenced(m, t2, new):
                m[t2] = new
            return True, True
        return False, True
    if _not_referenced(m, t2, t1):
        m[t2] = t1
        return True, False
    return False, False


def _less_specific(t1: Any, t2: Any) -> bool:
    """isEqualOrLessSpecific."""
    if is_dyn(t1):  # dyn, any and a type variable
        return True
    if is_dyn(t2):
        return False
    if isinstance(t1, tuple) and isinstance(t2, tuple):
        return t1[0] == t2[0] and len(t1) == len(t2) and all(_less_specific(a, b) for a, b in zip(t1[1:], t2[1:]))
    return t1 == t2


def _not_referenced(m: dict, t: TVar, within: Any) -> bool:
    if t is within:
        return False
    if isinstance(within, TVar):
        sub = m.get(within)
        return True if sub is None else _not_referenced(m, t, sub)
    if isinstance(within, tuple):
        return all(_not_referenced(m, t, p) for p in within[1:])
    return True


def _has_var(t: Any) -> bool:
    if isinstance(t, TVar):
        return True
    return isinstance(t, tuple) and any(_has_var(p) for p in t[1:])


_NUM_ORDER = [(B, B), (I, I), (I, D), (I, U), (U, U), (U, D), (U, I), (D, D), (D, I), (D, U), (S, S), (BY, BY)]
_NUM_ORDER += [(TS, TS), (DUR, DUR)]
# common/stdlib/standard.go's declaration order, which decides what a free variable binds to.
_OPERATORS: dict[str, list[list]] = {
    "_+_": [[BY, BY], [D, D], [DUR, DUR], [DUR, TS], [TS, DUR], [I, I], [("list", _A), ("list", _A)], [S, S], [U, U]],
    "_-_": [[D, D], [DUR, DUR], [I, I], [TS, DUR], [TS, TS], [U, U]],
    "_*_": [[D, D], [I, I], [U, U]],
    "_/_": [[D, D], [I, I], [U, U]],
    "_%_": [[I, I], [U, U]],
    "-_": [[D], [I]],
    **{op: [list(p) for p in _NUM_ORDER] for op in ("_<_", "_<=_", "_>_", "_>=_")},
    "_==_": [[_A, _A]],
    "_!=_": [[_A, _A]],
    "@in": [[_A, ("list", _A)], [_A, ("map", _A, _B)]],
    "_[_]": [[("list", _A), I], [("map", _A, _B), _A]],
    "_[?_]": [[("list", _A), I], [("map", _A, _B), _A]],
    "_?_:_": [[B, _A, _A]],
    "dyn": [[_A]],
    "type": [[_A]],
    # size: bytes, list, map, string, as global and as member functions (the member form's receiver first).
    "size": [[BY], [("list", _A)], [("map", _A, _B)], [S]],
}
# Conversions declare the identity overload first (int(int), string(string), ...): a free variable binds to it.
_IDENTITY_FIRST = {"int": I, "uint": U, "double": D, "string": S, "bool": B, "bytes": BY, "duration": DUR}
_IDENTITY_FIRST["timestamp"] = TS


def _generic(t: Any, name: str = "") -> Any:
    # SIGNATURES writes a type parameter as dyn (list(A) as list(dyn)); cel-go declares them as parameters, except
    # format's list(dyn) (ext/strings.go), which widens a bound variable to dyn (mostGeneral).
    if name in _TRULY_DYN:
        return t
    if t == DYN:
        return _A
    if isinstance(t, tuple):
        return (t[0],) + tuple(_generic(p) for p in t[1:])
    return t


_TRULY_DYN = {"format"}


def _overloads(name: str, member: bool, stored: bool = False) -> list[list] | None:
    """The overloads of `name` in the call style, as parameter lists (a member's receiver first), in cel-go's order."""
    if name in _OPERATORS:
        return [list(p) for p in _OPERATORS[name]]
    if name == "@sortByAssociatedKeys":
        # ext/lists.go: list(T).@sortByAssociatedKeys(list(U)) for U in its comparableTypes, int first.
        return [[("list", _A), ("list", u)] for u in (I, U, D, B, DUR, TS, S, BY)] if member else []
    if name in _LIST_TYPED:
        # library/lists.go declares these once per element type, in comparableTypes' and summableTypes' order.
        order = [I, U, D, DUR] if name == "sum" else [I, U, D, B, DUR, TS, S, BY]
        return [[("list", t)] for t in order] if member else []
    sigs = SIGNATURES.get(name)
    if sigs is None:
        return None
    out = [
        [_generic(recv, name), *(_generic(p, name) for p in params)]
        if recv is not None
        else [_generic(p, name) for p in params]
        for recv, params, _ in sigs
        if (recv is not None) == member
    ]
    first = _IDENTITY_FIRST.get(name)
    if first is not None:
        out.sort(key=lambda p: p != [first])
    if name in ("indexOf", "lastIndexOf") and not stored:
        # Both ext.Strings and library/lists.go declare these; a new selector's environment has the list overload
        # first (the oracle: x.indexOf('a') makes x a list(string) there, a string in the stored environment).
        out.sort(key=lambda p: not isinstance(p[0], tuple))
    return out


def _instantiate(t: Any, fresh: dict) -> Any:
    if t in (_A, _B):
        return fresh[t]
    if isinstance(t, tuple):
        return (t[0],) + tuple(_instantiate(p, fresh) for p in t[1:])
    return t


class Checked:
    """The result of checking: the annotated AST, the result type, the estimated cost and the attributes read."""

    def __init__(
        self,
        root: Node,
        result_type: Any,
        cost: float,
        attributes_read: frozenset | None,
        env: Environment = NEW_EXPRESSIONS,
    ) -> None:
        self.env = env
        self.root = root
        self.result_type = result_type
        self.cost = cost
        self.attributes_read = attributes_read


class Checker:
    def __init__(self, source: Source, env: Environment = NEW_EXPRESSIONS) -> None:
        self.source = source
        self.env = env
        self.device_fields = device_fields(env)
        # cel-go's AST validators (a constant regex RE2 refuses) run only once the checker found no error.
        self.deferred: list[Callable[[], CelCompileError | None]] = []
        # Type variables (TVar) and their substitutions; the nodes checked, to replace free variables by dyn at the end.
        self.subst: dict[TVar, Any] = {}
        self.nvars = 0
        self.nodes: list[Node] = []
        self.raws: dict[int, Any] = {}

    def _defer(self, error: CelCompileError) -> None:
        self.deferred.append(lambda: error)

    def fresh(self) -> TVar:
        self.nvars += 1
        return TVar(self.nvars)

    def res(self, t: Any) -> Any:
        """substitute(mappings, t, false): t with the bound type variables replaced."""
        if isinstance(t, TVar):
            sub = self.subst.get(t)
            return t if sub is None else self.res(sub)
        if isinstance(t, tuple):
            return (t[0],) + tuple(self.res(p) for p in t[1:])
        return t

    def final(self, t: Any) -> Any:
        """substitute(mappings, t, true): free variables become dyn."""
        t = self.res(t)
        if isinstance(t, TVar):
            return DYN
        if isinstance(t, tuple):
            return (t[0],) + tuple(self.final(p) for p in t[1:])
        return t

    def bind(self, n: Node, name: str, member: bool, types: list) -> None:
        """resolveOverload's substitutions for a call whose argument types hold a type variable: every overload that
        fits, in declaration order, commits its bindings. None fits: no matching overload. Result types and the
        other errors stay with the checks that follow."""
        overloads = _overloads(name, member, self.env.stored)
        if not overloads:
            return
        matched = False
        for params in overloads:
            if len(params) != len(types):
                continue
            fresh = {_A: self.fresh(), _B: self.fresh()}
            m = dict(self.subst)
            if all(_assign(m, t, _instantiate(p, fresh)) for t, p in zip(types, params)):
                self.subst = m
                matched = True
        if not matched:
            shown = [type_str(self.final(t)) for t in types]
            where = f"{shown.pop(0)}." if member else ""
            raise self.err(n, f"found no matching overload for '{name}' applied to '{where}({', '.join(shown)})'")

    def raw(self, n: Node) -> Any:
        return self.raws.get(id(n), n.type)

    def bind_to(self, t: Any, target: Any) -> None:
        """checker.isAssignable(t, target), committed when it holds (a comprehension range or a select: dyn)."""
        m = dict(self.subst)
        if _assign(m, t, target):
            self.subst = m

    def err(self, node: Node, message: str, kind: str = "type") -> CelCompileError:
        return self.source.error(message, kind, node.offset)

    def check(self, n: Node, scope: dict[str, Any]) -> Any:
        t = self._check(n, scope)
        if self.nvars:
            # cel-go's type map keeps the type as set (an identifier's is its type variable, bound or not), and
            # overload resolution reads that: Checker.raw. Everything else reads the substituted type.
            self.raws[id(n)] = t
            t = self.res(t)
            self.nodes.append(n)
        n.type = t
        return t

    def _check(self, n: Node, scope: dict[str, Any]) -> Any:
        k = n.kind
        a = n.args
        if k == "lit":
            v = a[0]
            if isinstance(v, str):
                return S
            if isinstance(v, bytes):
                return BY
            if isinstance(v, bool):
                return B
            if isinstance(v, Uint):
                return U
            if isinstance(v, int):
                return I
            if isinstance(v, float):
                return D
            return "null"
        if k == "ident":
            name = a[0]
            if name in scope:
                t = scope[name]
                return t
            if name == "device":
                return "device"
            if name in TYPE_IDENTS:
                return "type"
            raise self.err(n, f"undeclared reference to '{name}' (in container '')", "undeclared")
        if k == "select":
            operand, field, optional = a
            ot = self.check(operand, scope)
            if self.nvars and isinstance(self.raw(operand), TVar):
                self.bind_to(DYN, self.raw(operand))  # checkSelect: a type variable operand becomes dyn
                ot = self.res(ot)
            if ot == "device":
                if field not in self.device_fields:
                    raise self.err(n, f"undefined field '{field}'", "undeclared")
                if optional:
                    raise self.err(
                        n, f"optional field selection on kubernetes.DRADevice is {UNSUPPORTED}", "unsupported"
                    )
                return self.device_fields[field]
            vt = self._select_type(n, ot, field, operand)
            return ("opt", vt) if optional and not (isinstance(ot, tuple) and ot[0] == "opt") else vt
        if k == "index":
            operand, key, optional = a
            ot = self.check(operand, scope)
            kt = self.check(key, scope)
            if self.nvars:
                raws = [self.raw(operand), self.raw(key)]
                if any(map(_has_var, raws)):
                    self.bind(n, "_[?_]" if optional else "_[_]", False, raws)
                ot, kt = self.res(ot), self.res(kt)
            inner = ot[1] if isinstance(ot, tuple) and ot[0] == "opt" else ot
            if isinstance(inner, tuple) and inner[0] == "list":
                if not (kt in (I, U) or is_dyn(kt)):
                    raise self.err(
                        n, f"found no matching overload for '_[_]' applied to '({type_str(ot)}, {type_str(kt)})'"
                    )
                vt = inner[1]
            elif isinstance(inner, tuple) and inner[0] == "map":
                if not assignable(inner[1], kt):
                    raise self.err(
                        n, f"found no matching overload for '_[_]' applied to '({type_str(ot)}, {type_str(kt)})'"
                    )
                vt = inner[2]
            elif is_dyn(inner):
                vt = DYN  # an index into dyn or `any` is dyn (the oracle: "expected type 'any' but found 'dyn'")
            else:
                raise self.err(
                    n, f"found no matching overload for '_[_]' applied to '({type_str(ot)}, {type_str(kt)})'"
                )
            if optional or (isinstance(ot, tuple) and ot[0] == "opt"):
                return ("opt", vt)
            return vt
        if k in ("and", "or"):
            l, r = a
            lt, rt = self.check(l, scope), self.check(r, scope)
            if self.nvars:
                for operand in (l, r):
                    self.bind_to(self.raw(operand), B)
                lt, rt = self.res(lt), self.res(rt)
            op = "_&&_" if k == "and" else "_||_"
            for t in (lt, rt):
                if not (t == B or is_dyn(t)):
                    raise self.err(
                        n, f"found no matching overload for '{op}' applied to '({type_str(lt)}, {type_str(rt)})'"
                    )
            return B
        if k == "not":
            t = self.check(a[0], scope)
            if self.nvars and _has_var(self.raw(a[0])):
                self.bind_to(self.raw(a[0]), B)
                t = self.res(t)
            if not (t == B or is_dyn(t)):
                raise self.err(n, f"found no matching overload for '!_' applied to '({type_str(t)})'")
            return B
        if k == "neg":
            t = self.check(a[0], scope)
            if self.nvars and _has_var(self.raw(a[0])):
                self.bind(n, "-_", False, [self.raw(a[0])])
                t = self.res(t)
            if not (t in (I, D) or is_dyn(t)):
                raise self.err(n, f"found no matching overload for '-_' applied to '({type_str(t)})'")
            return t
        if k == "cond":
            c, x, y = a
            ct = self.check(c, scope)
            if not (ct == B or is_dyn(ct)):
                raise self.err(n, f"found no matching overload for '_?_:_' applied to '({type_str(ct)}, ...)'")
            xt, yt = self.check(x, scope), self.check(y, scope)
            if self.nvars:
                raws = [self.raw(c), self.raw(x), self.raw(y)]
                if any(map(_has_var, raws)):
                    self.bind(n, "_?_:_", False, raws)
                xt, yt = self.res(xt), self.res(yt)
            if not (assignable(xt, yt) or assignable(yt, xt) or "null" in (xt, yt)):
                raise self.err(
                    n, f"found no matching overload for '_?_:_' applied to '(bool, {type_str(xt)}, {type_str(yt)})'"
                )
            return join(xt, yt)
        if k == "list":
            t = None
            optional = a[1] if len(a) > 1 else ()
            for pos, item in enumerate(a[0]):
                it = self.check(item, scope)
                if pos in optional:
                    it = self._optional_inner(item, it)
                if self.nvars:
                    t = self._join_elem(t, self.raw(item) if pos not in optional else it)
                else:
                    t = it if t is None else join(t, it)
            # An empty list's element type is a type variable (checkCreateList).
            return ("list", t if t is not None else self.fresh())
        if k == "map":
            kt = None
            vt = None
            optional = a[1] if len(a) > 1 else ()
            for pos, (key, val) in enumerate(a[0]):
                ktt, vtt = self.check(key, scope), self.check(val, scope)
                if pos in optional:
                    vtt = self._optional_inner(val, vtt)
                # cel-go's checker takes any key type (the oracle: `{1.0: 1}[1.0] == 1` is true); dragoman's maps are
                # Python dicts, so keys it cannot hash (lists, maps) stay refused here.
                if isinstance(ktt, tuple) and ktt[0] in ("list", "map"):
                    raise self.err(key, f"unsupported map key type: {type_str(ktt)}")
                if self.nvars:
                    kt = self._join_elem(kt, self.raw(key))
                    vt = self._join_elem(vt, self.raw(val) if pos not in optional else vtt)
                else:
                    kt = ktt if kt is None else join(kt, ktt)
                    vt = vtt if vt is None else join(vt, vtt)
            if kt is None:  # an empty map's key and value types are type variables (checkCreateMap)
                return ("map", self.fresh(), self.fresh())
            return ("map", kt, vt)
        if k == "has":
            sel = a[0]
            operand, field, _ = sel.args
            ot = self.check(operand, scope)
            if self.nvars and isinstance(self.raw(operand), TVar):
                self.bind_to(DYN, self.raw(operand))
                ot = self.res(ot)
            if ot == "device":
                if field not in self.device_fields:
                    raise self.err(sel, f"undefined field '{field}'", "undeclared")
            elif not (isinstance(ot, tuple) and ot[0] == "map" or is_dyn(ot)):
                raise self.err(sel, f"type '{type_str(ot)}' does not support field selection")
            sel.type = B
            return B
        if k == "bind":
            var, init, body = a
            it = self.check(init, scope)
            inner = dict(scope)
            inner[var] = it
            bt = self.check(body, inner)
            return bt
        if k == "comp":
            return self._comp(n, scope)
        if k == "optmap":
            target, var, body, flat = a
            tt = self.check(target, scope)
            if isinstance(tt, tuple) and tt[0] == "opt":
                inner_t = tt[1]
            elif is_dyn(tt):
                inner_t = DYN
            else:
                name = "optFlatMap" if flat else "optMap"
                raise self.err(
                    n,
                    f"found no matching overload for 'hasValue' applied to '{type_str(tt)}.()' ({name} needs "
                    "an optional)",
                )
            inner = dict(scope)
            inner[var] = inner_t
            bt = self.check(body, inner)
            if flat:
                if not (isinstance(bt, tuple) and bt[0] == "opt" or is_dyn(bt)):
                    raise self.err(
                        body,
                        f"found no matching overload for '_?_:_' applied to '(bool, {type_str(bt)}, "
                        "optional_type(dyn))'",
                    )
                return bt if isinstance(bt, tuple) else ("opt", DYN)
            return ("opt", bt)
        if k == "call":
            return self._call(n, scope)
        raise self.err(n, f"unexpected {k}", "syntax")

    def _join_elem(self, prev: Any, cur: Any) -> Any:
        """joinTypes where type variables exist: the raw element types (an identifier's is its variable); one
        assignable to the other commits the bindings and keeps the more general (mostGeneral), else join's dyn."""
        if prev is None:
            return cur
        m = dict(self.subst)
        if _assign(m, prev, cur):
            self.subst = m
            return prev if _less_specific(prev, cur) else cur
        return join(self.res(prev), self.res(cur))

    def _optional_inner(self, node: Node, t: Any) -> Any:
        # `[?x]` and `{?k: x}` take an optional x; the aggregate holds its value.
        if isinstance(t, tuple) and t[0] == "opt":
            return t[1]
        if is_dyn(t):
            return DYN
        raise self.err(node, f"expected type 'optional_type' but found '{type_str(t)}'")

    def _select_type(self, n: Node, ot: Any, field: str, operand: Node) -> Any:
        inner = ot[1] if isinstance(ot, tuple) and ot[0] == "opt" else ot
        if isinstance(inner, tuple) and inner[0] == "map":
            if not assignable(inner[1], S):
                raise self.err(n, f"type '{type_str(ot)}' does not support field selection")
            vt = inner[2]
            return ("opt", vt) if isinstance(ot, tuple) and ot[0] == "opt" else vt
        if is_dyn(inner):
            # a field of dyn or `any` is dyn (the oracle: "expected type 'any' but found 'dyn'")
            return ("opt", DYN) if isinstance(ot, tuple) and ot[0] == "opt" else DYN
        raise self.err(n, f"type '{type_str(ot)}' does not support field selection")

    def _comp(self, n: Node, scope: dict[str, Any]) -> Any:
        macro, target, v1, v2, exprs = n.args
        rt = self.check(target, scope)
        if self.nvars and isinstance(self.raw(target), TVar):
            self.bind_to(DYN, self.raw(target))
            rt = self.res(rt)
        if isinstance(rt, TVar):
            # checkComprehension: a type variable range is bound to dyn, and so is the iteration variable.
            self.bind_to(DYN, rt)
            rt = DYN
        if isinstance(rt, tuple) and rt[0] == "list":
            t1, t2 = (I, rt[1]) if v2 else (rt[1], None)
        elif isinstance(rt, tuple) and rt[0] == "map":
            t1, t2 = rt[1], rt[2]
        elif rt == DYN:
            # cel-go iterates dyn but not `any` (checker.checkComprehension): a new selector cannot loop over
            # an attribute unless DRAListTypeAttributes declares attributes dyn.
            t1, t2 = DYN, DYN
        else:
            raise self.err(
                target,
                f"expression of type '{type_str(rt)}' cannot be range of a comprehension (must be list, map, "
                "or dynamic)",
            )
        inner = dict(scope)
        inner[v1] = t1
        if v2:
            inner[v2] = t2
        ets = [self.check(e, inner) for e in exprs]
        if macro in ("all", "exists", "exists_one", "existsOne"):
            if not (ets[0] == B or is_dyn(ets[0])):
                raise self.err(
                    exprs[0], f"found no matching overload for '_&&_' applied to '(bool, {type_str(ets[0])})'"
                )
            return B
        if macro == "filter":
            if not (ets[0] == B or is_dyn(ets[0])):
                raise self.err(exprs[0], f"filter() predicate must be bool, not {type_str(ets[0])}")
            return ("list", t1)
        if macro in ("map", "transformList"):
            if len(exprs) == 2 and not (ets[0] == B or is_dyn(ets[0])):
                raise self.err(exprs[0], f"{macro}() filter must be bool, not {type_str(ets[0])}")
            return ("list", ets[-1])
        if macro == "transformMap":
            return ("map", t1, ets[-1])
        if macro == "transformMapEntry":
            if len(exprs) == 2 and not (ets[0] == B or is_dyn(ets[0])):
                raise self.err(exprs[0], f"{macro}() filter must be bool, not {type_str(ets[0])}")
            et = ets[-1]
            if not (isinstance(et, tuple) and et[0] == "map" or is_dyn(et)):
                raise self.err(
                    exprs[-1],
                    f"found no matching overload for 'cel.@mapInsert' applied to '(map(dyn, dyn), {type_str(et)})'",
                )
            return et if isinstance(et, tuple) else MDYN
        raise self.err(n, f"{macro}() is {UNSUPPORTED}", "unsupported")

    def _call(self, n: Node, scope: dict[str, Any]) -> Any:
        name, target, args = n.args
        tt = self.check(target, scope) if target is not None else None
        ats = [self.check(x, scope) for x in args]
        if self.nvars:
            types = [self.raw(x) for x in ([target] if target is not None else []) + list(args)]
            if any(_has_var(t) for t in types):
                if name != "includes" or self.env.declares_includes:
                    self.bind(n, name, target is not None, types)
            tt = self.res(tt) if target is not None else None
            ats = [self.res(t) for t in ats]
        if name in ("_==_", "_!=_"):
            l, r = ats
            if not (assignable(l, r) or assignable(r, l) or "null" in (l, r)):
                raise self.err(
                    n, f"found no matching overload for '{name}' applied to '({type_str(l)}, {type_str(r)})'"
                )
            return B
        if name in ("_<_", "_<=_", "_>_", "_>=_"):
            l, r = ats
            num = (I, U, D)
            ok = (
                (l in num and r in num)
                or (l == r and l in (S, B, BY, TS, DUR))
                or (is_dyn(l) and (r in num + (S, B, BY, TS, DUR) or is_dyn(r)))
                or (is_dyn(r) and l in num + (S, B, BY, TS, DUR))
            )
            if not ok:
                raise self.err(
                    n, f"found no matching overload for '{name}' applied to '({type_str(l)}, {type_str(r)})'"
                )
            return B
        if name == "@in":
            item, cont = ats
            if isinstance(cont, tuple) and cont[0] == "list":
                ok = assignable(cont[1], item)
            elif isinstance(cont, tuple) and cont[0] == "map":
                ok = assignable(cont[1], item)
            else:
                ok = is_dyn(cont)
            if not ok:
                raise self.err(
                    n, f"found no matching overload for '@in' applied to '({type_str(item)}, {type_str(cont)})'"
                )
            return B
        if name in ("_+_", "_-_", "_*_", "_/_", "_%_"):
            l, r = ats
            allowed = {"_+_": (I, U, D, S, BY), "_-_": (I, U, D), "_*_": (I, U, D), "_/_": (I, U, D), "_%_": (I, U)}[
                name
            ]
            if (
                isinstance(l, tuple)
                and l[0] == "list"
                and name == "_+_"
                and (isinstance(r, tuple) and r[0] == "list" or is_dyn(r))
            ):
                return join(l, r)
            time_result = _TIME_ARITH.get((name, l, r))
            if time_result is not None:
                return time_result
            if (is_dyn(l) and r in (TS, DUR)) or (is_dyn(r) and l in (TS, DUR)):
                return DYN
            if is_dyn(l) and is_dyn(r):
                return DYN
            if is_dyn(l) and (r in allowed or isinstance(r, tuple) and name == "_+_"):
                return r
            if is_dyn(r) and (l in allowed or isinstance(l, tuple) and name == "_+_"):
                return l
            if l == r and l in allowed:
                return l
            raise self.err(n, f"found no matching overload for '{name}' applied to '({type_str(l)}, {type_str(r)})'")
        if name == "dyn":
            if len(ats) != 1 or target is not None:
                raise self.err(n, "found no matching overload for 'dyn'")
            return DYN
        if name == "type":
            if len(ats) != 1 or target is not None:
                raise self.err(n, "found no matching overload for 'type'")
            return "type"
        if name == "includes" and not self.env.declares_includes:
            # Declared for stored selectors and with DRAListTypeAttributes, off in 1.37 (compile_test.go
            # includes-function-compilation-error).
            raise self.err(n, "undeclared reference to 'includes' (in container '')", "undeclared")
        if name == "@sortByAssociatedKeys" and not self._list_elem_ok(ats[0], _COMPARABLE):
            raise self.err(
                n, f"found no matching overload for '{name}' applied to '{type_str(tt)}.({type_str(ats[0])})'"
            )
        if name in _LIST_TYPED and target is not None and not args and not self._list_elem_ok(tt, _LIST_TYPED[name]):
            raise self.err(n, f"found no matching overload for '{name}' applied to '{type_str(tt)}.()'")
        if name in _LIST_TYPED and target is not None and not args and _free_list(target):
            # `[]`'s element type is a type variable: cel-go's checker binds it to the first overload that fits,
            # int (lists.go declares these per type, int first), so `[].sort()` is a list(int).
            return B if name == "isSorted" else (("list", I) if name == "sort" else I)
        sigs = SIGNATURES.get(name)
        if sigs is None:
            raise self.err(n, f"undeclared reference to '{name}' (in container '')", "undeclared")
        matches = []
        for recv, params, result in sigs:
            if (recv is None) != (target is None):
                continue
            if recv is not None and not assignable(recv, tt):
                continue
            if len(params) != len(ats) or not all(assignable(p, x) for p, x in zip(params, ats)):
                continue
            matches.append(result(tt, ats) if callable(result) else result)
        if not matches:
            where = f"{type_str(tt)}." if target is not None else ""
            if target is not None and sigs and all(r is None for r, _, _ in sigs):
                raise self.err(n, f"undeclared reference to '{name}' (in container '')", "undeclared")
            raise self.err(
                n,
                f"found no matching overload for '{name}' applied to '{where}({', '.join(type_str(x) for x in ats)})'",
            )
        self._literal_checks(n, name, target, args)
        rt = matches[0]
        for m in matches[1:]:
            if m != rt:
                rt = ANY if ANY in (tt, *ats) else DYN
                break
        if name in ("orValue", "or") and target is not None and _free_optional(target):
            # optional(T) with T still free (`[].last()`, `optional.none()`): cel-go binds T to the alternative's type.
            rt = ats[0]
        return rt

    @staticmethod
    def _list_elem_ok(tt: Any, allowed: tuple) -> bool:
        if is_dyn(tt):
            return True
        if not (isinstance(tt, tuple) and tt[0] == "list"):
            return True  # not a list at all: the signature check reports it
        return is_dyn(tt[1]) or tt[1] in allowed

    def _format_problem(self, n: Node, fmt: str, items: list[Node]) -> CelCompileError | None:
        problem = format_call_problem(fmt, items)
        if problem is None:
            return None
        message, at = problem
        return self.source.error(message, "type", (at or n).offset)

    def _literal_checks(self, n: Node, name: str, target: Node | None, args: list[Node]) -> None:
        if (
            name == "format"
            and target is not None
            and target.kind == "lit"
            and isinstance(target.args[0], str)
            and len(args) == 1
            and args[0].kind == "list"
        ):
            # Judged once checking is over, on the final types: a type variable bound after this call (or widened to
            # dyn by format's list(dyn) parameter) is what cel-go's validator sees.
            self.deferred.append(lambda: self._format_problem(n, target.args[0], args[0].args[0]))
        # cel.ValidateDurationLiterals / ValidateTimestampLiterals: a constant string that does not convert.
        if name in ("duration", "timestamp") and target is None and len(args) == 1:
            arg = args[0]
            if arg.kind == "lit" and isinstance(arg.args[0], str):
                try:
                    rt.FUNCTIONS[name](arg.args[0])
                except CelRuntimeError:
                    self._defer(self.source.error(f"invalid {name} argument", "type", arg.offset))
        # Kubernetes validates the pattern of `s.matches(<literal>)` at compile time (cel.ValidateRegexLiterals, RE2's
        # grammar), in its own words; the other constant patterns (matches(s, p), find, findAll) fail when the
        # program is planned (fold_constants).
        if name == "matches" and target is not None and len(args) == 1:
            pat = args[0]
            if pat.kind == "lit" and isinstance(pat.args[0], str) and regex_error(pat.args[0]) is not None:
                self._defer(self.source.error("invalid matches argument", "syntax", pat.offset))


# What each string.format() verb takes (ext/formatting.go stringFormatChecker): checked type kinds; dyn always passes.
_FORMAT_VERBS: dict[str, tuple[tuple, str]] = {
    "d": ((I, U), "decimal clause can only be used on integers"),
    "f": ((D, S), "fixed-point clause can only be used on doubles"),
    "e": ((D, S), "scientific clause can only be used on doubles"),
    "b": ((I, U, B), "only integers and bools can be formatted as binary"),
    "x": ((I, U, S, BY), "only integers, byte buffers, and strings can be formatted as hex"),
    "X": ((I, U, S, BY), "only integers, byte buffers, and strings can be formatted as hex"),
    "o": ((I, U), "octal clause can only be used on integers"),
}
_FORMAT_STRING_KINDS = (I, U, D, B, S, TS, BY, DUR, "type", "null")


def _format_kind_ok(t: Any, allowed: tuple) -> bool:
    if t == DYN or isinstance(t, TVar):  # cel.DynType passes (a free type variable is one); `any` does not
        return True
    if isinstance(t, tuple):
        return t[0] in allowed
    return t in allowed


def _format_string_ok(node: Node) -> Node | None:
    """verifyString: the node's type is one %s takes (list and map literals element by element); the bad node."""
    if not _format_kind_ok(node.type, _FORMAT_STRING_KINDS + ("list", "map")):
        return node
    if node.kind == "list":
        for item in node.args[0]:
            bad = _format_string_ok(item)
            if bad is not None:
                return bad
    if node.kind == "map":
        for key, value in node.args[0]:
            bad = _format_string_ok(key) or _format_string_ok(value)
            if bad is not None:
                return bad
    return None


def format_call_problem(fmt: str, items: list[Node]) -> tuple[str, Node | None] | None:
    """cel-go's stringFormatValidator on `"<constant>".format([<list literal>])`: the clauses parse, each argument's
    checked type suits its clause, and no argument is left over. (message, node to point at) or None."""
    i = 0
    arg = 0
    requested = 0
    while i < len(fmt):
        if fmt[i] != "%":
            i += 1
            continue
        if i + 1 < len(fmt) and fmt[i + 1] == "%":
            i += 2
            continue
        requested += 1
        if i + 1 >= len(fmt):
            return "unexpected end of string", None
        if arg >= len(items):
            return f"index {arg} out of range", None
        j = i + 1
        if fmt[j] == ".":
            j += 1
            start = j
            while j < len(fmt) and fmt[j].isascii() and fmt[j].isdigit():
                j += 1
            if j >= len(fmt):
                return (
                    "could not parse formatting clause: error while parsing precision: could not find end of "
                    "precision specifier"
                ), None
            if j == start:
                return (
                    "could not parse formatting clause: error while parsing precision: error while converting "
                    'precision to integer: strconv.Atoi: parsing "": invalid syntax'
                ), None
        verb = fmt[j]
        item = items[arg]
        if verb == "s":
            bad = _format_string_ok(item)
            if bad is not None:
                return (
                    "error during formatting: string clause can only be used on strings, bools, bytes, ints, "
                    f"doubles, maps, lists, types, durations, and timestamps, was given {type_str(bad.type)}"
                ), bad
        elif verb in _FORMAT_VERBS:
            allowed, text = _FORMAT_VERBS[verb]
            if not _format_kind_ok(item.type, allowed):
                return f"error during formatting: {text}, was given {type_str(item.type)}", item
        else:
            return f'could not parse formatting clause: unrecognized formatting clause "{verb}"', None
        i = j + 1
        arg += 1
    if len(items) > requested:
        return f"too many arguments supplied to string.format (expected {requested}, got {len(items)})", None
    return None


# timestamp and duration arithmetic: (operator, left, right) -> result (CEL's standard overloads).
_TIME_ARITH = {
    ("_+_", TS, DUR): TS,
    ("_+_", DUR, TS): TS,
    ("_+_", DUR, DUR): DUR,
    ("_-_", TS, TS): DUR,
    ("_-_", TS, DUR): TS,
    ("_-_", DUR, DUR): DUR,
}


def _free_optional(n: Node) -> bool:
    """An optional whose value type is a type variable: optional.none(), or first()/last() of an unbound list."""
    if n.kind != "call":
        return False
    name, target = n.args[0], n.args[1]
    return name == "__optional_none" or (name in ("first", "last") and target is not None and _free_list(target))


def _free_list(n: Node) -> bool:
    """An empty list literal, or what keeps its element type unbound (distinct, reverse, slice of one)."""
    if n.kind == "list":
        return not n.args[0]
    if n.kind == "call" and n.args[0] in ("distinct", "reverse", "slice") and n.args[1] is not None:
        return _free_list(n.args[1])
    return False


def attributes_read(root: Node) -> frozenset | None:
    """{(domain, id)} the expression reads, (domain, None) for domain presence; None if it reads them dynamically."""
    out: set = set()
    unknown = False
    aliases: dict[str, str] = {}

    def domain_of(n: Node, env: dict[str, str]) -> str | None:
        # device.attributes["d"] / device.capacity["d"] / a cel.bind alias of one.
        if n.kind == "index" and not n.args[2] and n.args[1].kind == "lit" and isinstance(n.args[1].args[0], str):
            op = n.args[0]
            if (
                op.kind == "select"
                and op.args[1] in ("attributes", "capacity")
                and op.args[0].kind == "ident"
                and op.args[0].args[0] == "device"
                and op.args[0].type == "device"
            ):
                return n.args[1].args[0]
        if n.kind == "ident" and n.args[0] in env:
            return env[n.args[0]]
        return None

    def walk(n: Node, env: dict[str, str]) -> None:
        nonlocal unknown
        k = n.kind
        if k == "select":
            d = domain_of(n.args[0], env)
            if d is not None:
                out.add((d, n.args[1]))
                return
        if k == "index":
            d = domain_of(n.args[0], env)
            if d is not None:
                key = n.args[1]
                if key.kind == "lit" and isinstance(key.args[0], str):
                    out.add((d, key.args[0]))
                    return
                unknown = True
                return
            if domain_of(n, env) is not None:
                unknown = True  # a domain's whole map (iterated, sized, compared): any attribute may matter
                return
        if k == "has":
            sel = n.args[0]
            d = domain_of(sel.args[0], env)
            if d is not None:
                out.add((d, sel.args[1]))
                return
        if k == "call" and n.args[0] == "@in":
            item, cont = n.args[2]
            d = domain_of(cont, env)
            if d is not None and item.kind == "lit" and isinstance(item.args[0], str):
                out.add((d, item.args[0]))
                return
            if (
                cont.kind == "select"
                and cont.args[1] in ("attributes", "capacity")
                and cont.args[0].kind == "ident"
                and cont.args[0].args[0] == "device"
                and cont.args[0].type == "device"
                and item.kind == "lit"
                and isinstance(item.args[0], str)
            ):
                out.add((item.args[0], None))
                return
        if k == "bind":
            var, init, body = n.args
            walk_alias = domain_of(init, env)
            if walk_alias is not None:
                walk(body, {**env, var: walk_alias})
            else:
                walk(init, env)
                walk(body, {x: y for x, y in env.items() if x != var})
            return
        if k == "comp":
            _, target, v1, v2, exprs = n.args
            walk(target, env)
            inner = {x: y for x, y in env.items() if x not in (v1, v2)}
            for e in exprs:
                walk(e, inner)
            return
        if k == "ident" and n.args[0] in env:
            unknown = True  # an alias used as a whole map
            return
        if (
            k == "select"
            and n.args[1] in ("attributes", "capacity")
            and n.args[0].kind == "ident"
            and n.args[0].type == "device"
        ):
            unknown = True
            return
        for child in _children(n):
            walk(child, env)

    walk(root, aliases)
    return None if unknown else frozenset(out)


def _children(n: Node) -> list[Node]:
    out = []
    for x in n.args:
        if isinstance(x, Node):
            out.append(x)
        elif isinstance(x, list):
            for y in x:
                if isinstance(y, Node):
                    out.append(y)
                elif isinstance(y, tuple):
                    out.extend(z for z in y if isinstance(z, Node))
    return out


def homogeneous_literals(root: Node, source: Source) -> None:
    """cel.HomogeneousAggregateLiterals (Kubernetes' base environment): a list literal's elements, a map literal's
    keys and its values each of one type, exactly; literals anywhere inside a format() call are exempt."""

    def elem_type(node: Node, optional: bool) -> Any:
        t = node.type
        if optional and isinstance(t, tuple) and t[0] == "opt":
            t = t[1]
        return t

    def free(node: Node) -> bool:
        # An empty literal's element type, and optional.none()'s, is a type variable bound to its neighbours'.
        return (node.kind in ("list", "map") and not node.args[0]) or (
            node.kind == "call" and node.args[0] == "__optional_none"
        )

    def same(nodes: list[tuple[Node, bool]]) -> None:
        first = None
        for node, optional in nodes:
            if free(node):
                continue
            t = elem_type(node, optional)
            if first is None:
                first = t
            elif t != first:
                raise source.error(f"expected type '{type_str(first)}' but found '{type_str(t)}'", "type", node.offset)

    def walk(n: Node, exempt: bool) -> None:
        if n.kind == "call" and n.args[0] == "format":
            exempt = True
        if not exempt and n.kind == "list":
            optional = n.args[1] if len(n.args) > 1 else ()
            same([(x, i in optional) for i, x in enumerate(n.args[0])])
        if not exempt and n.kind == "map":
            optional = n.args[1] if len(n.args) > 1 else ()
            same([(k, False) for k, _ in n.args[0]])
            same([(v, i in optional) for i, (_, v) in enumerate(n.args[0])])
        for child in _children(n):
            walk(child, exempt)

    walk(root, False)


# overloads.IsTypeConversionFunction: the calls cel-go's planner evaluates once when their argument is a constant.
_CONVERSIONS = {"bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp", "type", "uint"}


def fold_constants(root: Node, source: Source) -> None:
    """What cel-go's planner does with OptOptimize (Kubernetes' base environment sets it), decorators.go decOptimize:
    literals, list and map literals of constants and type conversions of a constant are constants (a conversion
    that fails refuses the selector when the program is created: `bool("yes")`), and `x in [constants]` is a set
    lookup (runtime.set_member). Marks `const` and `members` on the nodes; both engines follow them."""

    def fold(n: Node) -> None:
        for child in _children(n):
            fold(child)
        k = n.kind
        if k == "lit":
            n.const = n.args[0]
        elif k == "list":
            items, optional = n.args[0], (n.args[1] if len(n.args) > 1 else ())
            if not optional and all(x.const is not NOT_CONST for x in items):
                n.const = [x.const for x in items]
        elif k == "map":
            entries, optional = n.args[0], (n.args[1] if len(n.args) > 1 else ())
            if not optional and all(a.const is not NOT_CONST and b.const is not NOT_CONST for a, b in entries):
                # Built as a Go map: a repeated key keeps its last value (at run time it would be an error).
                n.const = {a.const: b.const for a, b in entries}
        elif k == "call":
            name, target, args = n.args
            if name in _REGEX_FUNCS and args:
                # cel-go's planner compiles a constant pattern (the Regex library's and the standard matches).
                pat = args[-1] if name == "matches" and target is None else args[0]
                problem = regex_error(pat.const) if isinstance(pat.const, str) else None
                if problem is not None:
                    raise CelCompileError(f"program instantiation failed: {problem}", "program")
            if name in _CONVERSIONS and target is None and len(args) == 1 and args[0].const is not NOT_CONST:
                try:
                    n.const = rt.FUNCTIONS[name](args[0].const)
                except CelRuntimeError as exc:
                    raise _program_error(exc) from None
            elif name == "@in" and isinstance(args[1].type, tuple) and args[1].type[0] == "list":
                if type(args[1].const) is list:
                    try:
                        n.members = rt.set_members(args[1].const)
                    except ValueError:
                        pass  # not all primitives: the ordinary list membership
                    if n.members is None:
                        n.const = False  # `x in []` is the constant false, x unevaluated

    fold(root)


def _program_error(exc: CelRuntimeError) -> CelCompileError:
    return CelCompileError(f"program instantiation failed: {exc.message}", "program")


def check(root: Node, source: Source, env: Environment = NEW_EXPRESSIONS) -> Checked:
    """Check an AST as the environment `env` does for a DRA selector; raises CelCompileError."""
    checker = Checker(source, env)
    t = checker.check(root, {})
    if checker.nvars:
        # cel-go's last step: every type as set, substituted, a variable still free as dyn.
        for node in checker.nodes:
            node.type = checker.final(checker.raw(node))
        t = checker.final(t)
    for deferred in checker.deferred:
        error = deferred()
        if error is not None:
            raise error
    homogeneous_literals(root, source)
    # validateOutputType: bool, or exactly the declared attribute type (any; dyn where attributes are dyn).
    if not (t == B or t == (DYN if env.dyn_attributes else ANY)):
        raise CelCompileError(
            f"must evaluate to bool or the unknown type, not {type_str(t)}", "non-bool", *source.location(0)
        )
    # env.Program (which folds) comes before the estimated cost is checked: a failing fold is the error reported.
    fold_constants(root, source)
    cost = estimate_cost(root, env)[1]
    # Only a selector being created is refused for its estimate (resource/v1 validation); a stored one is compiled
    # as the scheduler compiles it, and its evaluation stops at the runtime cost limit (fast.compile_program).
    if cost > COST_LIMIT and not env.stored:
        raise CelCompileError(
            f"too complex, exceeds cost limit: estimated cost {int(cost):,} is more than the limit of {COST_LIMIT:,}",
            "cost",
        )
    return Checked(root, t, cost, attributes_read(root), env)
