"""The reference engine: cel-python 0.5.0 evaluating DRA selectors, with Kubernetes' library and semantics plugged
in."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.evaluation import CELEvalError
from dragoman.fleet.cel import runtime as rt
from dragoman.fleet.cel.api import CelDevice
from dragoman.fleet.cel.checker import TYPE_IDENTS
from dragoman.fleet.cel.parse_errors import allow_deep_recursion
from dragoman.fleet.cel.runtime import CelRuntimeError
from dragoman.fleet.cel.syntax import (
    NOT_CONST,
    QUOTED_SELECT,
    Node,
    Source,
    Uint,
    _Builder,
    _parser,
    decode_multiline,
    logic_chain,
)


class ReferenceUnsupported(Exception):
    """cel-python cannot evaluate this construct (two-variable comprehensions, transformList, filter-map)."""


class CelDefaultMap(celtypes.MapType):
    """cel-python's view of `device.attributes`: unknown domains read as an empty map."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType()


def to_cel(v: Any) -> Any:
    t = type(v)
    if t is bool:
        return celtypes.BoolType(v)
    if t is Uint:
        return celtypes.UintType(int(v))
    if t is int:
        return celtypes.IntType(v)
    if t is float:
        return celtypes.DoubleType(v)
    if t is str:
        return celtypes.StringType(v)
    if t is bytes:
        return celtypes.BytesType(v)
    if t is list:
        return celtypes.ListType([to_cel(x) for x in v])
    if t is rt.DefaultMap:
        return CelDefaultMap({to_cel(k): to_cel(x) for k, x in v.items()})
    if t is dict:
        return celtypes.MapType({to_cel(k): to_cel(x) for k, x in v.items()})
    if t is rt.Optional_ and v.present:
        return rt.Optional_(True, to_cel(v.value))
    return v


def to_native(v: Any) -> Any:
    if isinstance(v, celtypes.BoolType):
        return bool(v)
    if isinstance(v, celtypes.UintType):
        return Uint(int(v))
    if isinstance(v, celtypes.IntType):
        return int(v)
    if isinstance(v, celtypes.DoubleType):
        return float(v)
    if isinstance(v, celtypes.StringType):
        return str(v)
    if isinstance(v, celtypes.BytesType):
        return bytes(v)
    if isinstance(v, CelDefaultMap):
        return rt.DefaultMap({to_native(k): to_native(x) for k, x in dict.items(v)})
    if isinstance(v, celtypes.MapType):
        return {to_native(k): to_native(x) for k, x in dict.items(v)}
    if isinstance(v, celtypes.ListType):
        return [to_native(x) for x in v]
    if isinstance(v, celtypes.NullType) or v is None:
        return None
    if isinstance(v, rt.Optional_) and v.present:
        return rt.Optional_(True, to_native(v.value))
    return v


class _K8sError(CELEvalError):
    """A runtime error raised by our library inside cel-python; its message is already Kubernetes' text."""


def _wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        for a in args:
            if isinstance(a, CELEvalError):
                return a
        try:
            return to_cel(fn(*(to_native(a) for a in args)))
        except CelRuntimeError as exc:
            return _K8sError(exc.message)

    return call


def _logic(is_and: bool) -> Callable[[Any, Any], Any]:
    # cel-go's commutative &&/||: false (true) wins over errors on either side; other non-bools are errors.
    stop = not is_and

    def op(x: Any, y: Any) -> Any:
        xb = isinstance(x, celtypes.BoolType)
        yb = isinstance(y, celtypes.BoolType)
        if xb and bool(x) == stop:
            return celtypes.BoolType(stop)
        if yb and bool(y) == stop:
            return celtypes.BoolType(stop)
        if isinstance(x, CELEvalError):
            return x
        if isinstance(y, CELEvalError):
            return y
        if xb and yb:
            return celtypes.BoolType(not stop)
        return _K8sError("no such overload")

    return op


def _ternary(c: Any, x: Any, y: Any) -> Any:
    if isinstance(c, CELEvalError):
        return c
    if not isinstance(c, celtypes.BoolType):
        return _K8sError("no such overload")
    return x if c else y


def _index(container: Any, key: Any) -> Any:
    # Map and list lookups without converting the whole container (device.attributes holds every attribute).
    if isinstance(container, CELEvalError):
        return container
    if isinstance(key, CELEvalError):
        return key
    if isinstance(container, celtypes.MapType) and isinstance(key, str) and not isinstance(key, bool):
        k = celtypes.StringType(key)
        if dict.__contains__(container, k):
            return dict.__getitem__(container, k)
        if isinstance(container, CelDefaultMap):
            return celtypes.MapType()
        return _K8sError(f"no such key: {key}")
    return _wrap(rt.index)(container, key)


def _in(item: Any, container: Any) -> Any:
    if isinstance(container, CELEvalError):
        return container
    if isinstance(item, CELEvalError):
        return item
    if isinstance(container, celtypes.MapType) and isinstance(item, str):
        return celtypes.BoolType(dict.__contains__(container, celtypes.StringType(item)))
    return _wrap(rt.op_in)(item, container)


def _opt_access(container: Any, key: Any, select: bool = False) -> Any:
    if isinstance(container, CELEvalError):
        return container
    if isinstance(container, rt.Optional_):
        if not container.present:
            return rt.NONE
        container = container.value
    if isinstance(container, celtypes.MapType) and isinstance(key, str):
        k = celtypes.StringType(key)
        if dict.__contains__(container, k):
            return rt.Optional_(True, dict.__getitem__(container, k))
        if isinstance(container, CelDefaultMap):
            return rt.Optional_(True, celtypes.MapType())
        return rt.NONE
    return _wrap(rt.opt_select if select else rt.opt_index)(container, key)


class _OptMark:
    """What `__opt_elem__(x)` / `__opt_key__(k)` hand to `__opt_list__` / `__opt_map__`: this element is optional."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _opt_mark(v: Any) -> Any:
    return v if isinstance(v, CELEvalError) else _OptMark(v)


def _opt_list(*items: Any) -> Any:
    out = []
    for it in items:
        if isinstance(it, CELEvalError):
            return it
        if isinstance(it, _OptMark):
            o = it.value
            if isinstance(o, CELEvalError):
                return o
            if not isinstance(o, rt.Optional_):
                return _K8sError("no such overload")
            if not o.present:
                continue
            it = o.value
        out.append(it)
    return celtypes.ListType(out)


def _opt_map(*kv: Any) -> Any:
    out: dict = {}
    native_keys: dict = {}
    for i in range(0, len(kv), 2):
        k, v = kv[i], kv[i + 1]
        optional = isinstance(k, _OptMark)
        if optional:
            k = k.value
        if isinstance(k, CELEvalError):
            return k
        nk = to_native(k)
        try:
            if rt._map_find(native_keys, nk)[0]:
                return _K8sError(f"Failed with repeated key: {rt.format_key(nk)}")
        except CelRuntimeError as exc:
            return _K8sError(exc.message)
        native_keys[nk] = True
        if isinstance(v, CELEvalError):
            return v
        if optional:
            if not isinstance(v, rt.Optional_):
                return _K8sError("no such overload")
            if not v.present:
                continue
            v = v.value
        out[k] = v
    return celtypes.MapType(out)


def _iter_range(v: Any) -> Any:
    if isinstance(v, (CELEvalError, celtypes.ListType, celtypes.MapType)):
        return v
    from dragoman.fleet.cel.fast import iterable_error

    return _K8sError(iterable_error(to_native(v)))


def _const_map(*kv: Any) -> Any:
    out: dict = {}
    for i in range(0, len(kv), 2):
        out[kv[i]] = kv[i + 1]
    return celtypes.MapType(out)


def _strict_bool(v: Any) -> Any:
    if isinstance(v, (CELEvalError, celtypes.BoolType)):
        return v
    return _K8sError("no such overload")


def _opt_has(o: Any) -> Any:
    if isinstance(o, CELEvalError):
        return o
    if isinstance(o, rt.Optional_):
        return celtypes.BoolType(o.present)
    return _K8sError("no such overload")


def _functions() -> dict[str, Callable[..., Any]]:
    fns: dict[str, Callable[..., Any]] = {name: _wrap(f) for name, f in rt.FUNCTIONS.items()}
    fns["__k8s_min"] = fns["min"]
    fns["__opt_select__"] = lambda c, k: _opt_access(c, k, True)
    fns["__opt_index__"] = _opt_access
    fns["_==_"] = _wrap(rt.equals)
    fns["_!=_"] = _wrap(rt.not_equals)
    for op in ("_<_", "_<=_", "_>_", "_>=_"):
        fns[op] = _wrap(lambda a, b, op=op: rt.compare(a, b, op))
    fns["_in_"] = _in
    fns["__set_in__"] = _wrap(lambda item, values: rt.set_member(item, rt.set_members(values)))
    fns["__const_map__"] = _const_map
    fns["__opt_has__"] = _opt_has
    fns["__strict_bool__"] = _strict_bool
    fns["__opt_get__"] = lambda o: o.value
    for op in ("_+_", "_-_", "_*_", "_/_", "_%_"):
        fns[op] = _wrap(lambda a, b, op=op: rt.arith(op, a, b))
    fns["-_"] = _wrap(rt.negate)
    fns["!_"] = _wrap(rt.logical_not)
    fns["_[_]"] = _index
    fns["_&&_"] = _logic(True)
    fns["_||_"] = _logic(False)
    fns["_?_:_"] = _ternary
    fns["__iter_range__"] = _iter_range
    fns["__sort_by__"] = _wrap(rt.f_sort_by_keys)
    fns["__opt_elem__"] = _opt_mark
    fns["__opt_key__"] = _opt_mark
    fns["__opt_list__"] = _opt_list
    fns["__opt_map__"] = _opt_map
    return fns


FUNCTIONS = _functions()
_GLOBAL_PACKAGES = ("strings", "sets", "lists", "math", "base64", "format")
_MACROS = {"all", "exists", "exists_one", "existsOne", "map", "filter"}


def _unwrap_ident(t: Any) -> str | None:
    while isinstance(t, lark.Tree) and len(t.children) == 1 and t.data != "ident":
        t = t.children[0]
    if isinstance(t, lark.Tree) and t.data == "ident":
        return str(t.children[0])
    return None


def _substitute(tree: lark.Tree, var: str | None, init: lark.Tree) -> lark.Tree:
    """Replace the identifier `var` by `(init)`; a comprehension rebinding `var` keeps its own."""
    if (
        tree.data == "primary"
        and len(tree.children) == 1
        and isinstance(tree.children[0], lark.Tree)
        and tree.children[0].data == "ident"
        and str(tree.children[0].children[0]) == var
    ):
        return lark.Tree("primary", [lark.Tree("paren_expr", [copy.deepcopy(init)])], tree.meta)
    if tree.data == "member_dot_arg" and str(tree.children[1]) in _MACROS and len(tree.children) > 2:
        args = tree.children[2].children
        if args and _unwrap_ident(args[0]) == var:
            return lark.Tree(tree.data, [_substitute(tree.children[0], var, init), *tree.children[1:]], tree.meta)
    return lark.Tree(
        tree.data, [_substitute(c, var, init) if isinstance(c, lark.Tree) else c for c in tree.children], tree.meta
    )


def _template(text: str, **parts: lark.Tree) -> lark.Tree:
    """`text` parsed, each identifier named in `parts` replaced by (that tree)."""
    tree = _parser().parse(text)
    for name, sub in parts.items():
        tree = _substitute(tree, name, sub)
    return tree


def _has_marker(items: list, marker: str) -> bool:
    from dragoman.fleet.cel.syntax import _marked

    return any(_marked(x, marker) is not None for x in items)


def _prepare(tree: lark.Tree) -> lark.Tree:
    """Rewrite what cel-python's evaluator lacks into what it has (cel.bind, existsOne, dotted globals, min,
    optMap/optFlatMap, optional list elements and map entries, the net.IP/net.CIDR type names)."""
    from dragoman.fleet.cel.syntax import OPT_ELEM, OPT_KEY

    if not isinstance(tree, lark.Tree):
        if isinstance(tree, lark.Token) and tree.type == "MLSTRING_LIT" and tree.value[:1] not in "bB":
            # cel-python drops raw newlines from triple-quoted strings: hand it an equivalent one-line literal.
            return lark.Token("STRING_LIT", json.dumps(decode_multiline(tree.value), ensure_ascii=False))
        return tree
    if tree.data == "ident_arg" and str(tree.children[0]) == "has" and len(tree.children) > 1:
        quoted = _quoted_select(tree.children[1].children[0] if tree.children[1].children else None)
        if quoted is not None:
            # has(x.`b-c`): the key's presence in the map x.
            operand, key = quoted
            return lark.Tree("paren_expr", [_template("__k in __t", __k=_prepare(key), __t=_prepare(operand))])
    if tree.data in ("dot_ident", "dot_ident_arg"):
        # `.name` and `.f(x)`: the root scope's name; a selector has no container, so the plain name.
        plain = "ident" if tree.data == "dot_ident" else "ident_arg"
        return lark.Tree(plain, [_prepare(c) for c in tree.children], tree.meta)
    if tree.data in ("list_lit", "map_lit") and tree.children:
        items = tree.children[0].children
        marker = OPT_ELEM if tree.data == "list_lit" else OPT_KEY
        if _has_marker(items[:: 1 if tree.data == "list_lit" else 2], marker):
            # cel-python's grammar has no optional entries: build the aggregate in a function that drops absent ones.
            fn = "__opt_list__" if tree.data == "list_lit" else "__opt_map__"
            args_tree = lark.Tree("exprlist", [_prepare(c) for c in items])
            return lark.Tree(
                "ident_arg", [lark.Token("IDENT", fn), args_tree]
            )  # in place of the literal, under primary
    if tree.data in ("conditionaland", "conditionalor") and len(tree.children) == 2:
        return _balanced_logic(tree.data, [_prepare(x) for x in logic_chain(tree)])
    if tree.data == "relation" and len(tree.children) == 2 and tree.children[0].data == "relation_in":
        plan = _plan(("in", _builder().op_offset(tree.children[0].children[0], tree.children[1], "@in")))
        if plan is not None:
            # cel-go plans `x in [constants]` as a set lookup, `x in []` as false (checker.fold_constants).
            if plan == "empty":
                return _template("false")
            x, values = _prepare(tree.children[0].children[0]), _prepare(tree.children[1])
            return _template("__set_in__(__x, __l)", __x=x, __l=values)
    if tree.data == "map_lit" and tree.children and _plan(("map", _builder().off(tree))) is not None:
        # A constant map literal is built once as a Go map: a repeated key keeps its last value, no error.
        args_tree = lark.Tree("exprlist", [_prepare(c) for c in tree.children[0].children])
        return lark.Tree("ident_arg", [lark.Token("IDENT", "__const_map__"), args_tree])
    if (
        tree.data == "member_dot"
        and str(tree.children[1]) in ("IP", "CIDR")
        and _unwrap_ident(tree.children[0]) == "net"
    ):
        # cel-python splits dotted names into packages: the type value goes by an undotted name.
        return lark.Tree(
            "member",
            [lark.Tree("primary", [lark.Tree("ident", [lark.Token("IDENT", f"__type_net_{tree.children[1]}")])])],
        )
    if tree.data == "member_dot_arg":
        operand, name = tree.children[0], str(tree.children[1])
        args = tree.children[2].children if len(tree.children) > 2 else []
        op_ident = _unwrap_ident(operand)
        if name in ("optMap", "optFlatMap") and len(args) == 2 and _unwrap_ident(args[0]) is not None:
            target = _prepare(operand)
            body = _substitute(args[1], _unwrap_ident(args[0]), _template("__t.value()", __t=target))
            text = (
                "__t.hasValue() ? __optional_of(__e) : __optional_none()"
                if name == "optMap"
                else "__t.hasValue() ? (__e) : __optional_none()"
            )
            return lark.Tree(
                "member",
                [lark.Tree("primary", [lark.Tree("paren_expr", [_template(text, __t=target, __e=_prepare(body))])])],
            )
        if name == QUOTED_SELECT and len(args) == 1:
            # x.`b-c`: a field of a map (DRA declares no message types), read as cel-python reads x["b-c"].
            return lark.Tree("member_index", [_prepare(operand), _prepare(args[0])], tree.meta)
        if name == "sortBy" and len(args) == 2 and _unwrap_ident(args[0]) is not None:
            # cel-go's macro (syntax.py builds the same): the list ordered by the keys a map() over it computes.
            sort_var = _unwrap_ident(args[0])
            text = f"__sort_by__(__t, __t.map({sort_var}, __k))"
            paren = lark.Tree("paren_expr", [_template(text, __t=_prepare(operand), __k=_prepare(args[1]))])
            return lark.Tree("member", [lark.Tree("primary", [paren])])
        if name in ("orValue", "or") and len(args) == 1:
            # cel-go's evalOptionalOrValue / evalOptionalOr short-circuit: the alternative only when there is no value.
            text = "__opt_has__(__t) ? " + ("__opt_get__(__t)" if name == "orValue" else "__t") + " : __d"
            paren = lark.Tree("paren_expr", [_template(text, __t=_prepare(operand), __d=_prepare(args[0]))])
            return lark.Tree("member", [lark.Tree("primary", [paren])])
        if name in _MACROS and len(args) == 2 and _unwrap_ident(args[0]) is not None:
            # cel-python would iterate a string's characters or fail vaguely on a scalar; cel-go's evalFold
            # takes only lists and maps.
            guarded = lark.Tree(
                "member",
                [
                    lark.Tree(
                        "primary",
                        [
                            lark.Tree(
                                "ident_arg",
                                [lark.Token("IDENT", "__iter_range__"), lark.Tree("exprlist", [_prepare(operand)])],
                            )
                        ],
                    )
                ],
            )
            name_tok = lark.Token("IDENT", "exists_one") if name == "existsOne" else tree.children[1]
            rest = [_prepare(c) for c in tree.children[2:]]
            if name in ("exists_one", "existsOne", "filter"):
                # cel-go folds these with `pred ? ... : ...`: a predicate that is not a bool is an error, where
                # cel-python would count its truthiness.
                var, pred = rest[0].children
                rest[0] = lark.Tree(rest[0].data, [var, _template("__strict_bool__(__p)", __p=pred)], rest[0].meta)
            return lark.Tree(tree.data, [guarded, name_tok, *rest], tree.meta)
        if name == "isCanonical" and op_ident == "ip":
            tok = lark.Token("IDENT", "ip.isCanonical")
            kids = [tok] + ([_prepare(tree.children[2])] if len(tree.children) > 2 else [])
            return lark.Tree("member", [lark.Tree("primary", [lark.Tree("ident_arg", kids)])])
        if name == "bind" and op_ident == "cel":
            var = _unwrap_ident(args[0])
            body = _substitute(args[2], var, _prepare(args[1]))
            return lark.Tree("member", [lark.Tree("primary", [lark.Tree("paren_expr", [_prepare(body)])])])
        if op_ident in _GLOBAL_PACKAGES:
            tok = lark.Token("IDENT", f"{op_ident}.{name}")
            kids = [tok] + ([_prepare(tree.children[2])] if len(tree.children) > 2 else [])
            return lark.Tree("member", [lark.Tree("primary", [lark.Tree("ident_arg", kids)])])
        if name in ("transformList", "transformMap", "transformMapEntry"):
            raise ReferenceUnsupported(name)
        if name in _MACROS and len(args) == 3:
            raise ReferenceUnsupported(f"{name} with three arguments")
        if name == "existsOne":
            tree = lark.Tree(
                tree.data, [tree.children[0], lark.Token("IDENT", "exists_one"), *tree.children[2:]], tree.meta
            )
        elif name == "min" and not args:
            tree = lark.Tree(
                tree.data, [tree.children[0], lark.Token("IDENT", "__k8s_min"), *tree.children[2:]], tree.meta
            )
    return lark.Tree(tree.data, [_prepare(c) for c in tree.children], tree.meta)


def _quoted_select(t: Any) -> tuple[lark.Tree, lark.Tree] | None:
    """(operand, key) of `operand.`key`` (as the rewriter spelled it), else None."""
    while isinstance(t, lark.Tree) and len(t.children) == 1 and t.data != "member_dot_arg":
        t = t.children[0]
    if isinstance(t, lark.Tree) and t.data == "member_dot_arg" and str(t.children[1]) == QUOTED_SELECT:
        return t.children[0], t.children[2].children[0]
    return None


def _balanced_logic(data: str, operands: list) -> lark.Tree:
    """A chain of && (||) as cel-go's parser balances it (syntax.balanced), in cel-python's grammar: a right operand
    that is itself a chain goes in parentheses."""
    inner = "relation" if data == "conditionaland" else "conditionaland"

    def as_operand(t: Any) -> Any:
        if isinstance(t, lark.Tree) and t.data == data:
            chain = t if data == "conditionalor" else lark.Tree("conditionalor", [t])
            paren = lark.Tree("primary", [lark.Tree("paren_expr", [lark.Tree("expr", [chain])])])
            unary = lark.Tree("unary", [lark.Tree("member", [paren])])
            rel = lark.Tree("relation", [lark.Tree("addition", [lark.Tree("multiplication", [unary])])])
            return rel if inner == "relation" else lark.Tree("conditionaland", [rel])
        return t

    def tree(lo: int, hi: int) -> Any:
        if lo == hi:
            return operands[lo]
        mid = (lo + hi + 1) // 2
        left, right = tree(lo, mid - 1), tree(mid, hi)
        if not (isinstance(left, lark.Tree) and left.data == data):
            left = lark.Tree(data, [left])
        return lark.Tree(data, [left, as_operand(right)])

    out = tree(0, len(operands) - 1)
    return out if isinstance(out, lark.Tree) and out.data == data else lark.Tree(data, [out])


_PLANS = threading.local()  # the selector being prepared: its Source and its set lookups by operator offset


def _builder() -> _Builder:
    return _Builder(_PLANS.source)


def _plan(key: tuple[str, int]) -> str | None:
    plans = getattr(_PLANS, "plans", None)
    return plans.get(key) if plans else None


def _plans_of(root: Node) -> dict[tuple[str, int], str]:
    out: dict[tuple[str, int], str] = {}

    def walk(n: Node) -> None:
        if n.kind == "call" and n.args[0] == "@in" and n.members is not NOT_CONST:
            out[("in", n.offset)] = "empty" if n.members is None else "set"
        if n.kind == "map" and n.const is not NOT_CONST:
            out[("map", n.offset)] = "const"
        for child in _node_children(n):
            walk(child)

    walk(root)
    return out


def _node_children(n: Node) -> list[Node]:
    from dragoman.fleet.cel.checker import _children

    return _children(n)


def activation(device: CelDevice) -> dict:
    act = device.cache.get("reference")
    if act is None:
        attributes = device.attributes
        act = {
            "device": celtypes.MapType(
                {
                    celtypes.StringType("driver"): celtypes.StringType(device.driver),
                    celtypes.StringType("attributes"): to_cel(rt.DefaultMap(attributes)),
                    celtypes.StringType("capacity"): to_cel(rt.DefaultMap(device.capacity)),
                    celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(
                        device.allow_multiple_allocations
                    ),
                }
            ),
            **{name.replace("net.", "__type_net_"): rt.CelType(name) for name in TYPE_IDENTS},
        }
        device.cache["reference"] = act
    return act


def _error_message(err: CELEvalError) -> str:
    if isinstance(err, _K8sError):
        return str(err.args[0])
    msg = str(err.args[0]) if err.args else "evaluation error"
    if msg.startswith("no such member in mapping: "):
        return "no such key: " + msg[len("no such member in mapping: ") :].strip("'\"")
    if msg == "no such key" and len(err.args) > 2 and err.args[2]:
        return f"no such key: {rt.format_key(to_native(err.args[2][0]))}"
    if "overload" in msg:
        return "no such overload"
    if "does not support field selection" in msg:
        return msg.split(" with type")[0] if False else "no such overload"
    if "divide by zero" in msg or "division by zero" in msg:
        return "division by zero"
    if "overflow" in msg:
        return "integer overflow"
    return msg


def _macro_errors_are_values() -> None:
    """cel-python's map/filter/exists_one re-raise an error from their expression as an exception (its
    build_macro_eval "exposes exceptions, disabling short-circuit && and ||"), so `false && [1].exists_one(x, 1/0 ==
    1)` failed here where cel-go, whose errors are values, answers false. Return the error as the macro's value."""
    from celpy.evaluation import Evaluator

    original = Evaluator.member_dot_arg
    if getattr(original, "_dragoman", False):
        return

    def member_dot_arg(self: Any, tree: lark.Tree) -> Any:
        try:
            return original(self, tree)
        except CELEvalError as exc:
            if len(tree.children) > 1 and str(tree.children[1]) in ("map", "filter", "exists_one"):
                return exc
            raise

    member_dot_arg._dragoman = True  # type: ignore[attr-defined]
    Evaluator.member_dot_arg = member_dot_arg  # type: ignore[method-assign]


_macro_errors_are_values()

_ENV: celpy.Environment | None = None


def environment() -> celpy.Environment:
    """One cel-python environment for every program (creating one resets the recursion limit each time)."""
    global _ENV
    if _ENV is None:
        _ENV = celpy.Environment()
        allow_deep_recursion()  # cel-python has just set the process's limit to 2,500: back to what cel-go's 250 need
    return _ENV


def compile_program(root: Node, source: Source) -> Callable[[CelDevice], Any]:
    """A function from device to raw result value on cel-python; raises CelRuntimeError."""
    _PLANS.source, _PLANS.plans = source, _plans_of(root)
    try:
        tree = _prepare(_parser().parse(source.rewritten))
    finally:
        _PLANS.source = _PLANS.plans = None
    prog = environment().program(tree, functions=FUNCTIONS)

    def program(device: CelDevice) -> Any:
        try:
            value = prog.evaluate(activation(device))
        except CELEvalError as exc:
            raise CelRuntimeError(_error_message(exc)) from None
        except (TypeError, ValueError, KeyError, AttributeError, IndexError):
            raise CelRuntimeError("no such overload") from None
        if isinstance(value, CELEvalError):
            raise CelRuntimeError(_error_message(value))
        return to_native(value)

    return program
