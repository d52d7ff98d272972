"""The estimated cost of a DRA selector, as the API server computes it before accepting a new one: cel-go v0.29.2's
estimator (checker/cost.go) ported node for node, with the overload estimators Kubernetes' environment registers
(ext/lists.go and ext/sets.go), Kubernetes' own (apiserver library/cost.go EstimateCallCost) and DRA's size estimator
(dynamic-resource-allocation cel/compile.go sizeEstimator: the maximum sizes of what `device` holds).

cel-go estimates the parsed AST, where macros are comprehensions; dragoman's AST keeps them as `comp`, `bind` and
`optmap` nodes, so `lower` first rebuilds the shape cel-go's macros expand to (parser/macro.go, ext/comprehensions.go,
ext/bindings.go, cel/library.go optMap), with the types the checker gave each node. The coster then follows cost.go
function by function: sizes from literals, from the paths into `device`, from what an estimator says a call returns,
and the union over every overload the checker left a call with (so `dyn + dyn` is costed as a string concatenation
of unknown size, as cel-go does)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dragoman.fleet.cel.api import Environment
from dragoman.fleet.cel.syntax import Node, Uint

MAXU = 2**64 - 1
_TWO64 = math.ldexp(1.0, 64)
Est = tuple[int, int]  # (min, max), both a SizeEstimate's and a CostEstimate's shape
UNKNOWN: Est = (0, MAXU)
STRING_TRAVERSAL = 0.1  # common.StringTraversalCostFactor
REGEX_LENGTH = 0.25  # common.RegexStringLengthCostFactor
LIST_CREATE, MAP_CREATE = 10, 30  # common.ListCreateBaseCost, MapCreateBaseCost
MAX_NAME_FORMAT_REGEX_SIZE, MAX_FORMAT_SIZE = 128, 64  # apiserver cel/limits.go
ACCU = "@result"  # parser.AccumulatorName


# --- saturating arithmetic (cost.go addUint64NoOverflow, multiplyUint64NoOverflow, multiplyByCostFactor) -------


def _sat_add(x: int, y: int) -> int:
    return MAXU if y > 0 and x > MAXU - y else x + y


def _sat_mul(x: int, y: int) -> int:
    return MAXU if y != 0 and x > MAXU // y else x * y


def _by_factor(x: int, y: float) -> int:
    xf = float(x)
    if xf > 0 and y > 0 and xf > _TWO64 / y:
        return MAXU
    c = math.ceil(xf * y)
    return MAXU if c >= _TWO64 else int(c)


def add(a: Est, b: Est) -> Est:
    return (_sat_add(a[0], b[0]), _sat_add(a[1], b[1]))


def mul(a: Est, b: Est) -> Est:
    return (_sat_mul(a[0], b[0]), _sat_mul(a[1], b[1]))


def by_factor(a: Est, f: float) -> Est:
    return (_by_factor(a[0], f), _by_factor(a[1], f))


def union(a: Est, b: Est) -> Est:
    return (min(a[0], b[0]), max(a[1], b[1]))


def fixed(v: int) -> Est:
    return (v, v)


# --- the expression cel-go estimates ----------------------------------------------------------------------------


class X:
    """One node of cel-go's AST: lit, ident, select, call, list, map, comp."""

    __slots__ = ("args", "field", "fn", "items", "kind", "overloads", "target", "test_only", "type", "value")

    def __init__(self, kind: str, t: Any, **kw: Any) -> None:
        self.kind = kind
        self.type = t
        self.value: Any = kw.get("value")
        self.fn: str = kw.get("fn", "")
        self.target: X | None = kw.get("target")
        self.args: list[X] = kw.get("args", [])
        self.overloads: list[str] = kw.get("overloads", [])
        self.field: str = kw.get("field", "")
        self.test_only: bool = kw.get("test_only", False)
        self.items: Any = kw.get("items")


class Comp(X):
    __slots__ = ("accu", "bind", "cond", "init", "iter1", "iter2", "rng", "result", "step")

    def __init__(self, t: Any, rng: X, iter1: str, iter2: str | None, accu: str, init: X, cond: X, step: X, result: X):
        super().__init__("comp", t)
        self.rng, self.iter1, self.iter2, self.accu = rng, iter1, iter2, accu
        self.init, self.cond, self.step, self.result = init, cond, step, result
        # ext/bindings.go cel.bind, sortBy and optMap: an empty range, a false condition, a variable of their own.
        self.bind = rng.kind == "list" and not rng.items and cond.kind == "lit" and cond.value is False and accu != ACCU


def _lit(v: Any, t: Any) -> X:
    return X("lit", t, value=v)


def _ident(name: str, t: Any) -> X:
    return X("ident", t, value=name)


def _call(fn: str, t: Any, args: list[X], overloads: list[str], target: X | None = None) -> X:
    return X("call", t, fn=fn, args=args, overloads=overloads, target=target)


def _kind(t: Any) -> str:
    """cel-go's type kind, as far as cost cares: list, map, opt, dyn (dyn and any), struct (objects) or the name."""
    if isinstance(t, tuple):
        return t[0]
    if t in ("dyn", "any"):
        return "dyn"
    if t in ("device", "Quantity", "Semver", "URL", "NamedFormat"):
        return "struct"
    return t


def is_scalar(t: Any) -> bool:
    if isinstance(t, tuple) and t[0] == "opt":
        return is_scalar(t[1])
    return t in ("bool", "double", "Duration", "int", "Timestamp", "uint")


# Operators and conversions whose cost differs by overload: the overload for each kind of operand that has a cost of
# its own, else "default". An operand of type dyn (or any) leaves every overload it could take, as cel-go's checker
# does, and the estimate is the union of their costs.
_BY_KIND: dict[str, dict[str, str]] = {
    "_+_": {"string": "add_string", "bytes": "add_bytes", "list": "add_list"},
    "_<_": {"string": "less_string", "bytes": "less_bytes"},
    "string": {"bytes": "bytes_to_string"},
    "bytes": {"string": "string_to_bytes"},
    "@in": {"list": "in_list", "map": "in_map"},
    "_[_]": {"list": "index_list", "map": "index_map"},
    "containsIP": {"string": "cidr_contains_ip_string"},
    "containsCIDR": {"string": "cidr_contains_cidr_string"},
}
for _op in ("_<=_", "_>_", "_>=_"):
    _BY_KIND[_op] = _BY_KIND["_<_"]
# Which operand decides: the left of a binary operator (either may be dyn), the only argument of a conversion, the
# container of `in` and of an index, the argument of containsIP/containsCIDR.
_DECIDING = {"@in": 1, "_[_]": 0, "containsIP": 0, "containsCIDR": 0, "string": 0, "bytes": 0}
# Where no operand can take anything but the specific overloads (a list index is never "default").
_NO_DEFAULT = {"@in", "_[_]"}
_SINGLE = {
    "_==_": "equals",
    "_!=_": "not_equals",
    "_&&_": "logical_and",
    "_||_": "logical_or",
    "_?_:_": "conditional",
    "format": "string_format",
    "strings.quote": "strings_quote",
    "startsWith": "starts_with_string",
    "endsWith": "ends_with_string",
    "contains": "contains_string",
    "slice": "list_slice",
    "lists.range": "lists_range",
    "distinct": "list_distinct",
    "sets.contains": "list_sets_contains_list",
    "sets.intersects": "list_sets_intersects_list",
    "sets.equivalent": "list_sets_equivalent_list",
}
# library/lists.go and ext/lists.go comparableTypes, by the element type name cel-go gives the overload id.
_COMPARABLE = {"int": "int", "uint": "uint", "double": "double", "bool": "bool", "Duration": "duration",
               "Timestamp": "timestamp", "string": "string", "bytes": "bytes"}  # fmt: skip


def overloads_of(fn: str, target: Any, args: list[Any], has_target: bool) -> list[str]:
    """The overload ids the checker leaves `fn` with, as far as their costs differ."""
    if fn in _SINGLE:
        return [_SINGLE[fn]]
    if fn == "matches":
        return ["matches_string" if has_target else "matches"]
    if fn == "reverse":
        return ["list_reverse"]
    if fn == "flatten":
        return ["list_flatten_int" if args else "list_flatten"]
    if fn == "ip":
        return ["cidr_ip" if has_target else "string_to_ip"]
    if fn in ("sort", "@sortByAssociatedKeys"):
        elems = (args[0] if fn == "@sortByAssociatedKeys" else target) if (args or target) else None
        et = elems[1] if isinstance(elems, tuple) and elems[0] == "list" else "dyn"
        names = [_COMPARABLE[et]] if et in _COMPARABLE else list(_COMPARABLE.values())
        suffix = "sort" if fn == "sort" else "sortByAssociatedKeys"
        return [f"list_{n}_{suffix}" for n in names]
    by_kind = _BY_KIND.get(fn)
    if by_kind is None:
        return ["default"]
    kinds = [_kind(x) for x in args]
    if fn in _DECIDING:
        deciding = [kinds[_DECIDING[fn]]] if len(kinds) > _DECIDING[fn] else ["dyn"]
    else:  # a binary operator: the kind of the side that is not dyn, else dyn
        deciding = [k for k in kinds if k != "dyn"][:1] or ["dyn"]
    k = deciding[0]
    if k == "dyn":
        return list(by_kind.values()) + ([] if fn in _NO_DEFAULT else ["default"])
    return [by_kind[k]] if k in by_kind else ["default"]


# --- lowering dragoman's AST into the one cel-go's macros produce ------------------------------------------------


def lower(n: Node) -> X:
    k, a, t = n.kind, n.args, n.type
    if k == "lit":
        return _lit(a[0], t)
    if k == "ident":
        return _ident(a[0], t)
    if k == "select":
        operand, field, optional = a
        if optional:
            return _call("_?._", t, [lower(operand), _lit(field, "string")], ["default"])
        return X("select", t, target=lower(operand), field=field)
    if k == "has":
        operand, field, _ = a[0].args
        return X("select", "bool", target=lower(operand), field=field, test_only=True)
    if k == "index":
        operand, key, optional = a
        if optional or (isinstance(operand.type, tuple) and operand.type[0] == "opt"):
            return _call("_[?_]" if optional else "_[_]", t, [lower(operand), lower(key)], ["default"])
        return _call(
            "_[_]", t, [lower(operand), lower(key)], overloads_of("_[_]", None, [operand.type, key.type], False)
        )
    if k in ("and", "or"):
        fn = "_&&_" if k == "and" else "_||_"
        return _call(fn, "bool", [lower(a[0]), lower(a[1])], [_SINGLE[fn]])
    if k == "not":
        return _call("!_", "bool", [lower(a[0])], ["default"])
    if k == "neg":
        return _call("-_", t, [lower(a[0])], ["default"])
    if k == "cond":
        return _call("_?_:_", t, [lower(x) for x in a], ["conditional"])
    if k == "list":
        return X("list", t, items=[lower(x) for x in a[0]])
    if k == "map":
        return X("map", t, items=[(lower(x), lower(y)) for x, y in a[0]])
    if k == "bind":
        var, init, body = a
        return Comp(t, X("list", ("list", "dyn"), items=[]), "#unused", None, var, lower(init),
                    _lit(False, "bool"), _ident(var, init.type), lower(body))  # fmt: skip
    if k == "optmap":
        target, var, body, flat = a
        inner = target.type[1] if isinstance(target.type, tuple) and target.type[0] == "opt" else "dyn"
        value = _call("value", inner, [], ["default"], target=lower(target))
        bound = Comp(body.type, X("list", ("list", "dyn"), items=[]), "#unused", None, var, value,
                     _lit(False, "bool"), _ident(var, inner), lower(body))  # fmt: skip
        then = bound if flat else _call("optional.of", t, [bound], ["default"])
        has = _call("hasValue", "bool", [], ["default"], target=lower(target))
        return _call("_?_:_", t, [has, then, _call("optional.none", t, [], ["default"])], ["conditional"])
    if k == "comp":
        return _lower_comprehension(n)
    if k == "call":
        name, target, args = a
        fn = {"__optional_of": "optional.of", "__optional_none": "optional.none",
              "__optional_ofNonZeroValue": "optional.ofNonZeroValue", "__optional_unwrap": "optional.unwrap"}.get(
            name, name)  # fmt: skip
        tx = lower(target) if target is not None else None
        ids = overloads_of(fn, target.type if target is not None else None, [x.type for x in args], target is not None)
        return _call(fn, t, [lower(x) for x in args], ids, target=tx)
    raise ValueError(f"cost: unexpected node {k}")


def _lower_comprehension(n: Node) -> X:
    macro, target, v1, v2, exprs = n.args
    rng = lower(target)
    t = n.type
    accu = lambda at: _ident(ACCU, at)  # noqa: E731 - a fresh node each time, as cel-go's factory makes
    true, false = _lit(True, "bool"), _lit(False, "bool")
    if macro == "all":
        step = _call("_&&_", "bool", [accu("bool"), lower(exprs[0])], ["logical_and"])
        cond = _call("@not_strictly_false", "bool", [accu("bool")], ["default"])
        return Comp("bool", rng, v1, v2, ACCU, true, cond, step, accu("bool"))
    if macro == "exists":
        step = _call("_||_", "bool", [accu("bool"), lower(exprs[0])], ["logical_or"])
        negated = _call("!_", "bool", [accu("bool")], ["default"])
        cond = _call("@not_strictly_false", "bool", [negated], ["default"])
        return Comp("bool", rng, v1, v2, ACCU, false, cond, step, accu("bool"))
    if macro in ("exists_one", "existsOne"):
        plus = _call("_+_", "int", [accu("int"), _lit(1, "int")], ["default"])
        step = _call("_?_:_", "int", [lower(exprs[0]), plus, accu("int")], ["conditional"])
        result = _call("_==_", "bool", [accu("int"), _lit(1, "int")], ["equals"])
        return Comp("bool", rng, v1, v2, ACCU, _lit(0, "int"), true, step, result)
    if macro in ("map", "filter", "transformList"):
        item = _ident(v1, t[1] if isinstance(t, tuple) else "dyn") if macro == "filter" else lower(exprs[-1])
        appended = _call("_+_", t, [accu(t), X("list", ("list", item.type), items=[item])], ["add_list"])
        step = appended
        if macro == "filter" or len(exprs) == 2:
            step = _call("_?_:_", t, [lower(exprs[0]), appended, accu(t)], ["conditional"])
        return Comp(t, rng, v1, v2, ACCU, X("list", t, items=[]), true, step, accu(t))
    if macro in ("transformMap", "transformMapEntry"):
        if macro == "transformMap":
            insert = _call("cel.@mapInsert", t, [accu(t), _ident(v1, "dyn"), lower(exprs[-1])], ["default"])
        else:
            insert = _call("cel.@mapInsert", t, [accu(t), lower(exprs[-1])], ["default"])
        step = insert if len(exprs) == 1 else _call("_?_:_", t, [lower(exprs[0]), insert, accu(t)], ["conditional"])
        return Comp(t, rng, v1, v2, ACCU, X("map", t, items=[]), true, step, accu(t))
    raise ValueError(f"cost: unexpected macro {macro}")


# --- DRA's size estimator (compile.go sizeEstimator over the declared types) -----------------------------------


class Decl:
    """An apiservercel.DeclType, as far as sizes go."""

    def __init__(self, max_elements: int, key: Decl | None = None, elem: Decl | None = None,
                 fields: dict[str, Decl] | None = None) -> None:  # fmt: skip
        self.max = max_elements
        self.key, self.elem, self.fields = key, elem, fields or {}


def device_decl(env: Environment) -> tuple[Decl, Decl]:
    """kubernetes.DRADevice as the environment declares it, and its attribute value type."""
    domain, ident = Decl(63), Decl(32)
    # attributeTypeV131 (any, 64) or attributeTypeV136ListTypeAttributes (dyn, max(64, 48)): 64 either way.
    attribute = Decl(64)
    inner_attr = Decl(32, ident, attribute)
    outer_attr = Decl(32, domain, inner_attr)
    inner_cap = Decl(32, ident, Decl(0))  # QuantityDeclType declares no maximum
    outer_cap = Decl(32, domain, inner_cap)
    fields = {"driver": Decl(63), "attributes": outer_attr, "capacity": outer_cap}
    if env.declares_multi_alloc:
        fields["allowMultipleAllocations"] = Decl(1)
    return Decl(0, fields=fields), attribute


def dra_size(path: list[str] | None, device: Decl, attribute: Decl) -> Est | None:
    if not path or path[0] != "device":
        return None
    node = device
    for name in path[1:]:
        if name in ("@items", "@values"):
            if node.elem is None:
                return None
            node = node.elem
        elif name == "@keys":
            if node.key is None:
                return None
            node = node.key
        else:
            f = node.fields.get(name)
            if f is None:
                if node.elem is attribute:  # an attribute map: every value has the attribute type's bound
                    node = attribute
                    continue
                return None
            node = f
    return (0, node.max)


# --- the coster ---------------------------------------------------------------------------------------------------


class _Entry:
    """entrySizeEstimate: a list's or map's element (key, value) sizes."""

    __slots__ = ("container", "key", "val")

    def __init__(self, container: str, key: Est, val: Est) -> None:
        self.container, self.key, self.val = container, key, val

    def union(self, other: _Entry | None) -> _Entry | None:
        if other is None:
            return None
        return _Entry(self.container, union(self.key, other.key), union(self.val, other.val))


class _Var:
    __slots__ = ("entry", "path", "size")

    def __init__(self, path: list[str] | None, size: Est | None, entry: _Entry | None) -> None:
        self.path, self.size, self.entry = path, size, entry


class Coster:
    def __init__(self, env: Environment) -> None:
        self.device, self.attribute = device_decl(env)
        self.paths: dict[int, list[str]] = {}
        self.sizes: dict[int, Est] = {}
        self.entries: dict[int, _Entry] = {}
        self.vars: dict[str, list[_Var]] = {}

    # scopes
    def _push(self, name: str, var: _Var) -> None:
        self.vars.setdefault(name, []).append(var)

    def _pop(self, name: str) -> None:
        self.vars[name].pop()

    def _peek(self, name: str) -> _Var | None:
        stack = self.vars.get(name)
        return stack[-1] if stack else None

    def _push_iter(self, name: str, rng: X, which: str) -> None:
        entry = self.entry_size(rng)
        container = entry.container if entry is not None else _kind(rng.type)
        path = list(self.path(rng))
        if which == "single":
            size = entry.key if entry is not None else None
            sub = "@keys"
            if container == "list":
                size, sub = (entry.val if entry is not None else None), "@items"
        elif which == "key":
            size = entry.key if entry is not None else None
            sub = "@indices" if container == "list" else "@keys"
        else:
            size = entry.val if entry is not None else None
            sub = "@items" if container == "list" else "@values"
        self._push(name, _Var(path + [sub], size, None))

    def _push_local(self, name: str, e: X) -> None:
        self._push(name, _Var(self.path(e), self.compute_size(e), self.entry_size(e)))

    # paths and sizes
    def path(self, e: X) -> list[str]:
        if e.kind == "ident":
            v = self._peek(e.value)
            if v is not None:
                return list(v.path or [])
        return list(self.paths.get(id(e), []))

    def compute_size(self, e: X) -> Est | None:
        s = self.sizes.get(id(e))
        if s is not None:
            return s
        s = _expr_size(e)
        if s is not None:
            return s
        s = dra_size(self.path(e), self.device, self.attribute)
        if s is not None:
            self.sizes[id(e)] = s
            return s
        if is_scalar(e.type):
            return (1, 1)
        if e.kind == "ident":
            v = self._peek(e.value)
            if v is not None and v.size is not None:
                return v.size
        return None

    def size_or_unknown(self, e: X) -> Est:
        s = self.compute_size(e)
        return s if s is not None else UNKNOWN

    def entry_size(self, e: X) -> _Entry | None:
        s = self.entries.get(id(e))
        if s is not None:
            return s
        if e.kind == "ident":
            v = self._peek(e.value)
            if v is not None and v.entry is not None:
                return v.entry
        return None

    def _node_size(self, e: X) -> Est:
        """The size an estimator sees for an argument: its computed size, else DRA's, else unknown."""
        path = self.path(e)
        if path and path[0] in (ACCU, "__result__"):
            path = []
        s = self.compute_size(e)
        if s is None:
            s = dra_size(path, self.device, self.attribute)
        return s if s is not None else UNKNOWN

    # costs
    def cost(self, e: X) -> Est:
        k = e.kind
        if k == "lit":
            return (0, 0)
        if k == "ident":
            v = self._peek(e.value)
            self.paths[id(e)] = list(v.path or []) if v is not None else [e.value]
            return (1, 1)
        if k == "select":
            assert e.target is not None
            if e.test_only:
                return add((0, 0), self.cost(e.target))  # PresenceTestHasCost(false): has() costs its operand
            operand = self.cost(e.target)
            if _kind(e.target.type) in ("map", "struct"):
                operand = add(operand, (1, 1))
            self.paths[id(e)] = self.path(e.target) + [e.field]
            return operand
        if k == "call":
            return self._cost_call(e)
        if k == "list":
            total: Est = (0, 0)
            item: Est = (0, 0) if not e.items else (MAXU, 0)
            for x in e.items:
                total = add(total, self.cost(x))
                item = union(item, self.size_or_unknown(x))
            self.entries[id(e)] = _Entry("list", (1, 1), item)
            return add(total, fixed(LIST_CREATE))
        if k == "map":
            total = (0, 0)
            ks: Est = (0, 0) if not e.items else (MAXU, 0)
            vs: Est = (0, 0) if not e.items else (MAXU, 0)
            for kx, vx in e.items:
                total = add(add(total, self.cost(kx)), self.cost(vx))
                ks = union(ks, self.size_or_unknown(kx))
                vs = union(vs, self.size_or_unknown(vx))
            self.entries[id(e)] = _Entry("map", ks, vs)
            return add(total, fixed(MAP_CREATE))
        if k == "comp":
            assert isinstance(e, Comp)
            return self._cost_bind(e) if e.bind else self._cost_comprehension(e)
        return (0, 0)

    def _cost_comprehension(self, c: Comp) -> Est:
        total = add(self.cost(c.rng), self.cost(c.init))
        self._push_local(c.accu, c.init)
        if c.iter2 is not None:
            self._push_iter(c.iter1, c.rng, "key")
            self._push_iter(c.iter2, c.rng, "value")
        else:
            self._push_iter(c.iter1, c.rng, "single")
        loop = self.cost(c.cond)
        step = self.cost(c.step)
        self._pop(c.iter1)
        if c.iter2 is not None:
            self._pop(c.iter2)
        total = add(total, self.cost(c.result))
        self._pop(c.accu)
        count = self.size_or_unknown(c.rng)
        total = add(total, mul(count, add(step, loop)))
        if c.init.kind == "lit":
            s = self.compute_size(c.init)
            if s is not None:
                self.sizes[id(c)] = s
        elif c.init.kind in ("list", "map"):
            self.sizes[id(c)] = count
            entry = self.entry_size(c.step)
            if entry is not None:
                self.entries[id(c)] = entry
        return total

    def _cost_bind(self, c: Comp) -> Est:
        total = add(self.cost(c.rng), self.cost(c.init))
        self._push_local(c.accu, c.init)
        total = add(total, self.cost(c.result))
        self._pop(c.accu)
        self._copy_sizes(c, c.result)
        return total

    def _copy_sizes(self, dst: X, src: X) -> None:
        s = self.compute_size(src)
        if s is not None:
            self.sizes[id(dst)] = s
        entry = self.entry_size(src)
        if entry is not None:
            self.entries[id(dst)] = entry

    def _cost_call(self, e: X) -> Est:
        if e.fn == "dyn" and e.target is None and len(e.args) == 1:
            arg_cost = self.cost(e.args[0])
            self._copy_sizes(e, e.args[0])
            return add((1, 1), arg_cost)
        arg_costs = [self.cost(a) for a in e.args]
        arg_sizes = [self._node_size(a) for a in e.args]
        total: Est = (0, 0)
        target_size: Est | None = None
        if e.target is not None:
            total = add(total, self.cost(e.target))
            target_size = self._node_size(e.target)
        fn_cost: Est = (MAXU, 0)
        result: Est | None = None
        for overload in e.overloads:
            cost, size = self._function_cost(e, overload, target_size, arg_sizes, arg_costs)
            fn_cost = union(fn_cost, cost)
            if size is not None:
                result = size if result is None else union(result, size)
            if overload in ("index_list", "index_map") and e.args:
                entry = self.entry_size(e.args[0])
                result = entry.val if entry is not None else None
                sub = "@items" if overload == "index_list" else "@values"
                self.paths[id(e)] = self.path(e.args[0]) + [sub]
            if result is None:
                result = self.compute_size(e)
        if result is not None:
            self.sizes[id(e)] = result
        return add(total, fn_cost)

    def _function_cost(
        self, e: X, overload: str, target: Est | None, args: list[Est], arg_costs: list[Est]
    ) -> tuple[Est, Est | None]:
        def plus_args(c: Est) -> Est:
            for a in arg_costs:
                c = add(c, a)
            return c

        est = _OVERLOAD_ESTIMATORS.get(overload)
        if est is not None:
            r = est(self, e, target, args)
            if r is not None:
                return plus_args(r[0]), r[1]
        r = self._kubernetes(e, overload, target, args)
        if r is not None:
            return plus_args(r[0]), r[1]
        if overload == "string_format" and target is not None:
            return plus_args(by_factor(target, STRING_TRAVERSAL)), None
        if overload == "string_to_bytes" and len(args) == 1:
            sz = args[0]
            return plus_args(by_factor(sz, STRING_TRAVERSAL)), (sz[0], _sat_mul(sz[1], 4))
        if overload == "bytes_to_string" and len(args) == 1:
            sz = args[0]
            return plus_args(by_factor(sz, STRING_TRAVERSAL)), (sz[0] // 4, sz[1])
        if overload == "strings_quote" and len(args) == 1:
            sz = args[0]
            return plus_args(by_factor(sz, STRING_TRAVERSAL)), (_sat_add(sz[0], 2), _sat_add(_sat_mul(sz[1], 2), 2))
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return plus_args(by_factor(args[0], STRING_TRAVERSAL)), None
        if overload == "in_list" and len(args) == 2:
            return plus_args(by_factor(args[1], 1)), None
        if overload in ("matches", "matches_string"):
            if overload == "matches_string" and target is not None and len(args) == 1:
                s, rx = target, args[0]
            elif overload == "matches" and target is None and len(args) == 2:
                s, rx = args
            else:
                return plus_args((1, 1)), None
            str_cost = by_factor(add(s, (1, 1)), STRING_TRAVERSAL)
            return plus_args(mul(str_cost, by_factor(rx, REGEX_LENGTH))), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            return plus_args(mul(by_factor(target, STRING_TRAVERSAL), by_factor(args[0], STRING_TRAVERSAL))), None
        if overload in ("logical_and", "logical_or"):
            lhs, rhs = arg_costs
            return (lhs[0], add(lhs, rhs)[1]), None
        if overload == "conditional":
            size = union(args[1], args[2])
            a1, a2 = self.entry_size(e.args[1]), self.entry_size(e.args[2])
            merged = a1.union(a2) if a1 is not None else None
            if merged is not None:
                self.entries[id(e)] = merged
            return add(arg_costs[0], union(arg_costs[1], arg_costs[2])), size
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            size = add(args[0], args[1])
            left, right = self.entry_size(e.args[0]), self.entry_size(e.args[1])
            merged = left.union(right) if left is not None else None
            if merged is not None:
                self.entries[id(e)] = merged
            if overload == "add_list":
                return plus_args((1, 1)), size
            return plus_args(by_factor(size, STRING_TRAVERSAL)), size
        if overload in ("less_string", "less_bytes", "equals", "not_equals"):
            smallest = min(args[0][1], args[1][1])
            return plus_args(by_factor((1 if smallest > 0 else 0, smallest), STRING_TRAVERSAL)), None
        return plus_args((1, 1)), None

    def _element_size(self, e: X) -> tuple[Any, Est] | None:
        """library/cost.go listElementNode: the list's element type and the size at the path <list>/@items."""
        t = e.type
        if not (isinstance(t, tuple) and t[0] == "list"):
            return None
        path = self.path(e)
        if path and path[0] in (ACCU, "__result__"):
            path = []
        s = dra_size(path + ["@items"] if path else None, self.device, self.attribute)
        return t[1], (s if s is not None else UNKNOWN)

    def _kubernetes(self, e: X, overload: str, target: Est | None, args: list[Est]) -> tuple[Est, Est | None] | None:
        """apiserver library/cost.go CostEstimator.EstimateCallCost."""
        fn = e.fn
        one = (1, 1)
        if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes"):
            if target is not None:
                assert e.target is not None
                el = self._element_size(e.target)
                if el is not None:
                    cost: Est = (1, 1)
                    if _kind(el[0]) in ("string", "bytes"):
                        cost = add(cost, by_factor(el[1], STRING_TRAVERSAL))
                    return mul(target, cost), None
                if fn == "includes":
                    return mul(target, (1, 1)), None
                return by_factor(target, STRING_TRAVERSAL), None
            return None
        if fn in ("url", "jsonpatch.escapeKey") and len(args) == 1:
            return by_factor(args[0], STRING_TRAVERSAL), args[0]
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            return by_factor(target, STRING_TRAVERSAL), target
        if fn == "replace" and target is not None and len(args) >= 2:
            return self._replace(target, args[0], args[1])
        if fn == "split" and target is not None:
            most = target[1]
            if len(args) > 1 and e.args[1].kind == "lit" and type(e.args[1].value) is int:
                most = e.args[1].value % 2**64
            return by_factor(target, 2 * STRING_TRAVERSAL), (0, most)
        if fn == "join" and target is not None:
            assert e.target is not None
            size: Est = (0, 0)
            el = self._element_size(e.target)
            if el is not None:
                size = mul(target, el[1])
            if args:
                seps = (max(target[0] - 1, 0), max(target[1] - 1, 0))
                size = add(size, mul(args[0], seps))
            return by_factor(size, STRING_TRAVERSAL), size
        if fn in ("find", "findAll") and target is not None and len(args) >= 1:
            str_cost = by_factor(add(target, (1, 1)), STRING_TRAVERSAL)
            return mul(str_cost, by_factor(args[0], REGEX_LENGTH)), (0, target[1])
        if fn in ("cidr", "isIP", "isCIDR") and len(args) >= 1:
            return by_factor(args[0], STRING_TRAVERSAL), None
        if fn == "ip":
            if overload == "cidr_ip":
                return one, None
            if len(args) >= 1:
                return by_factor(args[0], STRING_TRAVERSAL), None
            return None
        if fn == "ip.isCanonical" and len(args) >= 1:
            return by_factor(args[0], 2 * STRING_TRAVERSAL), None
        if fn in ("masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
                  "isLinkLocalUnicast", "isGlobalUnicast"):  # fmt: skip
            return one, None
        if fn in ("containsIP", "containsCIDR") and len(args) >= 1:
            sz = (4, 16)
            c = by_factor(add(sz, sz), STRING_TRAVERSAL)
            if fn == "containsCIDR":
                c = add(add(c, by_factor(sz, STRING_TRAVERSAL)), one)
            if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
                c = add(c, by_factor(args[0], STRING_TRAVERSAL))
            return c, None
        if fn in ("quantity", "isQuantity", "semver", "isSemver") and len(args) >= 1:
            return by_factor(args[0], STRING_TRAVERSAL), None
        if fn == "validate" and len(args) >= 1:
            return by_factor(by_factor(args[0], STRING_TRAVERSAL), MAX_NAME_FORMAT_REGEX_SIZE * REGEX_LENGTH), None
        if fn in ("format.named", "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan",
                  "isLessThan", "compareTo", "add", "sub", "major", "minor", "patch", "getScheme", "getHostname",
                  "getHost", "getPort", "getEscapedPath", "getQuery"):  # fmt: skip
            return one, None
        if fn == "_==_" and len(e.args) == 2:
            lt, rt = e.args[0].type, e.args[1].type
            if lt == rt:
                if lt in ("IP", "CIDR", "Quantity", "Semver"):
                    return one, None
                if lt == "NamedFormat":
                    return by_factor((1, MAX_FORMAT_SIZE), STRING_TRAVERSAL), None
                if lt == "URL":
                    # (library/cost.go reads the right operand's size twice.)
                    rs = self.compute_size(e.args[1])
                    size = union(rs, rs) if rs is not None else (1, 1)
                    return by_factor((1, size[1]), STRING_TRAVERSAL), None
        return None

    @staticmethod
    def _replace(sz: Est, old: Est, new: Est) -> tuple[Est, Est]:
        count_max = retained_max = count_min = retained_min = 0
        if old[0] == 0:
            count_max = sz[1] + 1 if sz[1] < MAXU else sz[1]
            retained_max = sz[1]
        elif new[1] <= old[0]:
            retained_max = sz[1]
        else:
            count_max = math.ceil(float(sz[1]) / float(old[0]))
        if old[1] == 0:
            count_min = sz[0] + 1 if sz[0] < MAXU else sz[0]
            retained_min = sz[0]
        elif old[1] <= new[0]:
            retained_min = sz[0]
        else:
            count_min = math.ceil(float(sz[0]) / float(old[1]))
        size = add(mul((count_min, min(count_max, MAXU)), new), (retained_min, retained_max))
        return by_factor(sz, 2 * STRING_TRAVERSAL), size


def _expr_size(e: X) -> Est | None:
    """computeExprSize: literals (a string's size in code points), list and map literals (their entries)."""
    if e.kind == "lit":
        v = e.value
        if isinstance(v, str):
            return fixed(len(v))
        if isinstance(v, bytes):
            return fixed(len(v))
        if v is None or isinstance(v, (bool, int, float, Uint)):
            return (1, 1)
        return None
    if e.kind in ("list", "map"):
        return fixed(len(e.items))
    return None


# --- ext/lists.go (version 3) and ext/sets.go overload estimators ------------------------------------------------


def _uint_literal(e: X, default: int) -> int:
    # nodeAsUintValue: an int literal, negative as 0; anything else the default.
    if e.kind != "lit" or type(e.value) is not int:
        return default
    return max(e.value, 0)


def _allocating(factor: float, size: Est) -> tuple[Est, Est]:
    # estimateAllocatingListCall: size x factor, plus the call (1) and the list's creation (10).
    return add(add(by_factor(size, factor), (1, 1)), fixed(LIST_CREATE)), size


def _slice(c: Coster, e: X, target: Est | None, args: list[Est]) -> tuple[Est, Est | None] | None:
    if target is None or len(e.args) != 2:
        return None
    start, end = _uint_literal(e.args[0], 0), _uint_literal(e.args[1], target[1])
    return _allocating(1, fixed((end - start) % 2**64))


def _range(c: Coster, e: X, target: Est | None, args: list[Est]) -> tuple[Est, Est | None] | None:
    if e.target is not None or len(e.args) != 1:
        return None
    return _allocating(1, fixed(_uint_literal(e.args[0], MAXU)))


def _reverse(c: Coster, e: X, target: Est | None, args: list[Est]) -> tuple[Est, Est | None] | None:
    if target is None or e.args:
        return None
    return _allocating(1, target)


def _flatten(c: Coster, e: X, target: Est | None, args: list[Est]) -> tuple[Est, Est | None] | None:
    if target is None or len(e.args) > 1:
        return None
    depth = _uint_literal(e.args[0], MAXU) if e.args else 1
    return _allocating(float(depth), target)


def _distinct(c: Coster, e: X, target: Est | None, args: list[Est]) -> tuple[Est, Est | None] | None:
    if target is None or e.args:
        return None
    return _allocating(2.0, mul(target, target))


def _sort_estimator(elem: str, by_keys: bool) -> Callable[..., tuple[Est, Est | None] | None]:
    factor = 2.0 + (STRING_TRAVERSAL if elem in ("string", "bytes") else 0)

    def estimate(c: Coster, e: X, target: Est | None, args: list[Est]) -> tuple[Est, Est | None] | None:
        if target is None or len(e.args) != (1 if by_keys else 0):
            return None
        sz = args[0] if by_keys else target
        return _allocating(factor, mul(sz, sz))

    return estimate


def _sets(factor: float) -> Callable[..., tuple[Est, Est | None] | None]:
    def estimate(c: Coster, e: X, target: Est | None, args: list[Est]) -> tuple[Est, Est | None] | None:
        if len(args) != 2:
            return None
        return add(by_factor(mul(args[0], args[1]), factor), (1, 1)), None

    return estimate


_OVERLOAD_ESTIMATORS: dict[str, Callable[..., tuple[Est, Est | None] | None]] = {
    "list_slice": _slice,
    "list_flatten": _flatten,
    "list_flatten_int": _flatten,
    "lists_range": _range,
    "list_reverse": _reverse,
    "list_distinct": _distinct,
    "list_sets_contains_list": _sets(1),
    "list_sets_intersects_list": _sets(1),
    "list_sets_equivalent_list": _sets(2),
    **{f"list_{t}_sort": _sort_estimator(t, False) for t in _COMPARABLE.values()},
    **{f"list_{t}_sortByAssociatedKeys": _sort_estimator(t, True) for t in _COMPARABLE.values()},
}


def estimate(root: Node, env: Environment) -> Est:
    """The (min, max) cost cel-go's estimator gives a checked selector in `env`."""
    return Coster(env).cost(lower(root))
