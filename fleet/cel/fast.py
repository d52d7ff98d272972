"""The fast engine: a checked DRA CEL AST compiled into Python closures with Kubernetes' semantics."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from dragoman.fleet.cel import runtime as rt
from dragoman.fleet.cel.api import COST_LIMIT, CelDevice
from dragoman.fleet.cel.runtime import EMPTY_MAP, CelRuntimeError, DefaultMap, no_overload, no_such_key
from dragoman.fleet.cel.syntax import NOT_CONST, Node

Fn = Callable[[dict], Any]


class FastUnsupported(Exception):
    """The fast compiler cannot handle a construct; the engine falls back to the reference engine."""


def activation(device: CelDevice) -> dict:
    """The per-device variables, built once and cached on the device."""
    act = device.cache.get("fast")
    if act is None:
        act = {
            "device": {
                "driver": device.driver,
                "attributes": DefaultMap(device.attributes),
                "capacity": DefaultMap(device.capacity),
                "allowMultipleAllocations": device.allow_multiple_allocations,
            }
        }
        device.cache["fast"] = act
    return act


def _is_device(n: Node) -> bool:
    return n.kind == "ident" and n.args[0] == "device" and n.type == "device"


def _str_lit(n: Node) -> str | None:
    if n.kind == "lit" and type(n.args[0]) is str:
        return n.args[0]
    return None


# --- the runtime cost limit ------------------------------------------------------------------------------------
# A stored selector is never refused for its estimated cost; the scheduler's evaluation stops at the runtime cost
# limit instead (cel-go's cost tracker, cel.CostLimit). Only a selector whose estimate is above the limit can reach
# it (an estimate bounds the actual cost), so only those are compiled with tracking: each node adds what cel-go's
# tracker charges for it (interpreter/runtimecost.go, Kubernetes' library/cost.go CallCost, ext/lists.go trackers),
# as measured against the oracle's actualCost: an attribute 1 and 1 per field or index, a call 1, a list literal
# 10 and a map 30, constants and &&, || and ?: nothing, and each macro's own steps per item (its accumulator and
# the calls its expansion makes). Calls whose cost cel-go scales by string size are charged 1 (at most 7 for a
# 64-byte attribute), so a selector within a few percent of the limit may be cut off a little later than in
# Kubernetes.
COST = "@cost"  # the activation's counter: a one-item list shared by every scope of one evaluation
COST_LIMIT_ERROR = "operation cancelled: actual cost limit exceeded"
_tracking = threading.local()


def _charge(e: dict, k: int) -> None:
    c = e[COST]
    c[0] += k
    if c[0] > COST_LIMIT:
        raise CelRuntimeError(COST_LIMIT_ERROR)


def _charged(f: Fn, k: int) -> Fn:
    def charged(e: dict) -> Any:
        v = f(e)
        _charge(e, k)
        return v

    return charged


# ext/lists.go trackers: list-building calls cost their output (trackAllocatingListCall: size x factor + 1 + 10).
_LIST_OUTPUT = {"lists.range", "slice", "reverse", "flatten"}
_LIST_SELF_COMPARE = {"sort", "distinct"}


def _result_charged(f: Fn, name: str) -> Fn:
    def charged(e: dict) -> Any:
        v = f(e)
        n = len(v) if type(v) is list else 1
        _charge(e, 11 + (n if name in _LIST_OUTPUT else 2 * n * n))
        return v

    return charged


def _static_charge(n: Node) -> int:
    if n.const is not NOT_CONST:
        return 0
    k = n.kind
    if k in ("ident", "select", "index", "not", "neg"):
        return 1
    if k == "list":
        return 10
    if k == "map":
        return 30
    if k == "call":
        return 1
    if k == "comp":
        return 2 if n.args[0] in ("exists_one", "existsOne") else 1
    if k == "optmap":
        return 2
    return 0  # lit, and, or, cond, has, bind


def compile_node(n: Node) -> Fn:
    f = _compile_node(n)
    if getattr(_tracking, "on", False):
        if n.kind == "call" and n.const is NOT_CONST and n.args[0] in _LIST_OUTPUT | _LIST_SELF_COMPARE:
            return _result_charged(f, n.args[0])
        k = _static_charge(n)
        if k:
            return _charged(f, k)
    return f


def _compile_node(n: Node) -> Fn:
    if n.const is not NOT_CONST:  # what cel-go's planner folded (checker.fold_constants)
        value = n.const
        return lambda e: value
    k = n.kind
    a = n.args
    if k == "lit":
        v = a[0]
        return lambda e: v
    if k == "ident":
        name = a[0]
        if n.type == "type":
            value = rt.CelType(name)
            return lambda e: e[name] if name in e else value
        return lambda e: e[name]
    if k == "select":
        operand, field, optional = a
        if _is_device(operand):
            return lambda e: e["device"][field]
        # device.attributes["d"].id: two dict lookups, the hot path of every GPU selector.
        if (
            not optional
            and operand.kind == "index"
            and not operand.args[2]
            and _is_device_map(operand.args[0])
            and _str_lit(operand.args[1]) is not None
        ):
            which = operand.args[0].args[1]
            domain = operand.args[1].args[0]

            def attr(e: dict) -> Any:
                m = e["device"][which].get(domain)
                if m is not None:
                    v = m.get(field, _MISSING)
                    if v is not _MISSING:
                        return v
                raise no_such_key(field)

            return attr
        f = compile_node(operand)
        if optional:
            return lambda e: rt.opt_select(f(e), field)

        def sel(e: dict) -> Any:
            m = f(e)
            if type(m) is dict:
                v = m.get(field, _MISSING)
                if v is _MISSING:
                    raise no_such_key(field)
                return v
            return rt.select(m, field)

        return sel
    if k == "index":
        operand, key, optional = a
        if not optional and _is_device_map(operand) and _str_lit(key) is not None:
            which, domain = operand.args[1], key.args[0]
            return lambda e: e["device"][which].get(domain, EMPTY_MAP)
        fo, fk = compile_node(operand), compile_node(key)
        if optional:
            return lambda e: rt.opt_index(fo(e), fk(e))
        return lambda e: rt.index(fo(e), fk(e))
    if k == "and":
        return _and(compile_node(a[0]), compile_node(a[1]))
    if k == "or":
        return _or(compile_node(a[0]), compile_node(a[1]))
    if k == "not":
        f = compile_node(a[0])

        def not_(e: dict) -> bool:
            v = f(e)
            if v is True:
                return False
            if v is False:
                return True
            raise no_overload("!_")

        return not_
    if k == "neg":
        f = compile_node(a[0])
        return lambda e: rt.negate(f(e))
    if k == "cond":
        c, x, y = (compile_node(z) for z in a)

        def cond(e: dict) -> Any:
            v = c(e)
            if v is True:
                return x(e)
            if v is False:
                return y(e)
            raise no_overload("_?_:_")

        return cond
    if k == "list":
        items = [compile_node(x) for x in a[0]]
        optional = a[1] if len(a) > 1 else ()
        if not optional:
            return lambda e: [f(e) for f in items]
        flagged = [(f, pos in optional) for pos, f in enumerate(items)]

        def mk_list(e: dict) -> list:
            out = []
            for f, opt in flagged:
                v = f(e)
                if opt:
                    if type(v) is not rt.Optional_:
                        raise no_overload("[?_]")
                    if not v.present:
                        continue
                    v = v.value
                out.append(v)
            return out

        return mk_list
    if k == "map":
        optional = a[1] if len(a) > 1 else ()
        entries = [(compile_node(x), compile_node(y), pos in optional) for pos, (x, y) in enumerate(a[0])]

        def mk(e: dict) -> dict:
            out: dict = {}
            for fk, fv, opt in entries:
                key = fk(e)
                if rt._map_find(out, key)[0]:
                    raise CelRuntimeError(f"Failed with repeated key: {rt.format_key(key)}")
                v = fv(e)
                if opt:
                    if type(v) is not rt.Optional_:
                        raise no_overload("{?_: _}")
                    if not v.present:
                        continue
                    v = v.value
                out[key] = v
            return out

        return mk
    if k == "has":
        operand, field, _ = a[0].args
        if _is_device(operand):
            return lambda e: True
        f = compile_node(operand)
        return lambda e: rt.has_field(f(e), field)
    if k == "bind":
        var, init, body = a
        fi, fb = compile_node(init), compile_node(body)

        def bind(e: dict) -> Any:
            # A fresh scope: the cached per-device activation is shared and never mutated (thread safety).
            inner = dict(e)
            inner[var] = fi(e)
            return fb(inner)

        return bind
    if k == "comp":
        return _comprehension(n)
    if k == "optmap":
        target, var, body, flat = a
        ft, fb = compile_node(target), compile_node(body)

        def optmap(e: dict) -> Any:
            o = ft(e)
            if type(o) is not rt.Optional_:
                raise no_overload("hasValue")
            if not o.present:
                return rt.NONE
            inner = dict(e)
            inner[var] = o.value
            r = fb(inner)
            if flat:
                if type(r) is not rt.Optional_:
                    raise no_overload("_?_:_")
                return r
            return rt.Optional_(True, r)

        return optmap
    if k == "call":
        return _call(n)
    raise FastUnsupported(k)


_MISSING = object()
_STR_METHODS = {"startsWith": str.startswith, "endsWith": str.endswith, "contains": str.__contains__}


def _is_device_map(n: Node) -> bool:
    return n.kind == "select" and not n.args[2] and n.args[1] in ("attributes", "capacity") and _is_device(n.args[0])


def _and(fl: Fn, fr: Fn) -> Fn:
    def and_(e: dict) -> bool:
        try:
            l = fl(e)
        except CelRuntimeError as err:
            r = fr(e)
            if r is False:
                return False
            raise err
        if l is False:
            return False
        r = fr(e)
        if r is False:
            return False
        if l is True and r is True:
            return True
        raise no_overload("_&&_")

    return and_


def _or(fl: Fn, fr: Fn) -> Fn:
    def or_(e: dict) -> bool:
        try:
            l = fl(e)
        except CelRuntimeError as err:
            r = fr(e)
            if r is True:
                return True
            raise err
        if l is True:
            return True
        r = fr(e)
        if r is True:
            return True
        if l is False and r is False:
            return False
        raise no_overload("_||_")

    return or_


def _call(n: Node) -> Fn:
    name, target, args = n.args
    fargs = [compile_node(x) for x in args]
    if name in ("_==_", "_!=_"):
        fl, fr = fargs
        lit = _str_lit(args[1])
        neg = name == "_!=_"
        if lit is not None:
            # attribute == "literal": a str compare when the left value is a string, the general rule otherwise.
            def eq_lit(e: dict) -> bool:
                v = fl(e)
                if type(v) is str:
                    return (v != lit) if neg else (v == lit)
                return rt.not_equals(v, lit) if neg else rt.equals(v, lit)

            return eq_lit
        if neg:
            return lambda e: rt.not_equals(fl(e), fr(e))
        return lambda e: rt.equals(fl(e), fr(e))
    if name in ("_<_", "_<=_", "_>_", "_>=_"):
        fl, fr = fargs
        return lambda e: rt.compare(fl(e), fr(e), name)
    if name == "@in":
        fl, fr = fargs
        if n.members is not NOT_CONST:
            members = n.members
            return lambda e: rt.set_member(fl(e), members)
        return lambda e: rt.op_in(fl(e), fr(e))
    if name in ("_+_", "_-_", "_*_", "_/_", "_%_"):
        fl, fr = fargs
        return lambda e: rt.arith(name, fl(e), fr(e))
    if name in ("orValue", "or") and target is not None and len(fargs) == 1:
        # cel-go's evalOptionalOrValue / evalOptionalOr short-circuit: the alternative runs only when needed.
        ft, falt = compile_node(target), fargs[0]
        value_of = name == "orValue"

        def or_(e: dict) -> Any:
            o = ft(e)
            if type(o) is not rt.Optional_:
                raise no_overload(name)
            if o.present:
                return o.value if value_of else o
            return falt(e)

        return or_
    fn = rt.FUNCTIONS.get(name)
    if fn is None:
        raise FastUnsupported(name)
    if target is not None:
        ft = compile_node(target)
        if name in _STR_METHODS and len(args) == 1 and _str_lit(args[0]) is not None:
            # "x".startsWith("lit") and friends: straight to str's method when the receiver is a string.
            method, lit = _STR_METHODS[name], args[0].args[0]

            def str_method(e: dict) -> Any:
                v = ft(e)
                if type(v) is str:
                    return method(v, lit)
                return fn(v, lit)

            return str_method
        fargs = [ft] + fargs
    # Literal arguments of constructors fold once (semver("1.2.3"), quantity("40Gi")) unless they fail.
    if name in ("semver", "quantity", "ip", "cidr") and all(x.kind == "lit" for x in args) and target is None:
        try:
            const = fn(*(x.args[0] for x in args))
            return lambda e: const
        except CelRuntimeError:
            pass
    if len(fargs) == 0:
        return lambda e: fn()
    if len(fargs) == 1:
        f0 = fargs[0]
        return lambda e: fn(f0(e))
    if len(fargs) == 2:
        f0, f1 = fargs
        return lambda e: fn(f0(e), f1(e))
    return lambda e: fn(*(f(e) for f in fargs))


def _iter_range(v: Any, two: bool) -> list:
    t = type(v)
    if t is list:
        return list(enumerate(v)) if two else [(x, None) for x in v]
    if t is dict or t is DefaultMap:
        return list(v.items())
    raise CelRuntimeError(iterable_error(v))


def _comprehension(n: Node) -> Fn:
    macro, target, v1, v2, exprs = n.args
    ft = compile_node(target)
    fe = [compile_node(x) for x in exprs]
    two = v2 is not None
    if getattr(_tracking, "on", False):
        fe = _charged_steps(macro, fe)

    def run(e: dict) -> Any:
        items = _iter_range(ft(e), two)
        return loop(dict(e), items)

    def bind(e: dict, item: tuple) -> None:
        if two:
            e[v1], e[v2] = item
        else:
            e[v1] = item[0]

    if macro == "all":
        pred = fe[0]

        def loop(e: dict, items: list) -> bool:
            err = None
            for item in items:
                bind(e, item)
                try:
                    r = pred(e)
                except CelRuntimeError as x:
                    err = err or x
                    continue
                if r is False:
                    return False
                if r is not True:
                    err = err or no_overload("_&&_")
            if err:
                raise err
            return True
    elif macro == "exists":
        pred = fe[0]

        def loop(e: dict, items: list) -> bool:
            err = None
            for item in items:
                bind(e, item)
                try:
                    r = pred(e)
                except CelRuntimeError as x:
                    err = err or x
                    continue
                if r is True:
                    return True
                if r is not False:
                    err = err or no_overload("_||_")
            if err:
                raise err
            return False
    elif macro in ("exists_one", "existsOne"):
        pred = fe[0]

        def loop(e: dict, items: list) -> bool:
            count = 0
            for item in items:
                bind(e, item)
                r = pred(e)
                if r is True:
                    count += 1
                elif r is not False:
                    raise no_overload("_==_")
            return count == 1
    elif macro == "filter":
        pred = fe[0]

        def loop(e: dict, items: list) -> list:  # type: ignore[misc]  # each macro's loop has its own result
            out = []
            for item in items:
                bind(e, item)
                r = pred(e)
                if r is True:
                    out.append(item[0] if not two else item[1])
                elif r is not False:
                    raise no_overload("filter")
            return out
    elif macro in ("map", "transformList"):
        filt = fe[0] if len(fe) == 2 else None
        expr = fe[-1]

        def loop(e: dict, items: list) -> list:  # type: ignore[misc]  # each macro's loop has its own result
            out = []
            for item in items:
                bind(e, item)
                if filt is not None:
                    r = filt(e)
                    if r is False:
                        continue
                    if r is not True:
                        raise no_overload(macro)
                out.append(expr(e))
            return out
    elif macro == "transformMap":
        filt = fe[0] if len(fe) == 2 else None
        expr = fe[-1]

        def loop(e: dict, items: list) -> dict:  # type: ignore[misc]  # each macro's loop has its own result
            out = {}
            for item in items:
                bind(e, item)
                if filt is not None:
                    r = filt(e)
                    if r is False:
                        continue
                    if r is not True:
                        raise no_overload(macro)
                out[item[0]] = expr(e)
            return out
    elif macro == "transformMapEntry":
        filt = fe[0] if len(fe) == 2 else None
        expr = fe[-1]

        def loop(e: dict, items: list) -> dict:  # type: ignore[misc]  # each macro's loop has its own result
            out: dict = {}
            for item in items:
                bind(e, item)
                if filt is not None:
                    r = filt(e)
                    if r is False:
                        continue
                    if r is not True:
                        raise no_overload("_?_:_")
                rt.map_insert_all(out, expr(e))
            return out
    else:
        raise FastUnsupported(macro)
    return run


def _charged_steps(macro: str, fe: list[Fn]) -> list[Fn]:
    """Each item's cost beyond the macro's own expressions: what cel-go's expansion evaluates per item (the loop
    condition, the accumulator, the call that extends it)."""

    def before(f: Fn, k: int) -> Fn:
        def step(e: dict) -> Any:
            _charge(e, k)
            return f(e)

        return step

    def when_true(f: Fn, k: int) -> Fn:
        def step(e: dict) -> Any:
            r = f(e)
            if r is True:
                _charge(e, k)
            return r

        return step

    if macro == "all":  # @not_strictly_false(accu) and accu
        return [before(fe[0], 3)]
    if macro == "exists":  # @not_strictly_false(!accu) and accu
        return [before(fe[0], 4)]
    if macro in ("exists_one", "existsOne"):  # accu + 1 when the predicate holds
        return [when_true(fe[0], 2)]
    if macro == "filter":  # accu + [x]
        return [when_true(fe[0], 13)]
    if macro in ("map", "transformList"):  # accu + [e]
        return fe[:-1] + [before(fe[-1], 12)]
    if macro == "transformMap":  # cel.@mapInsert(accu, k, e)
        return fe[:-1] + [before(fe[-1], 3)]
    if macro == "transformMapEntry":  # cel.@mapInsert(accu, e)
        return fe[:-1] + [before(fe[-1], 2)]
    return fe


def iterable_error(v: Any) -> str:
    """cel-go's error for a comprehension over a value that is not a list or map (interpretable.go evalFold)."""
    return f"got '{rt.go_type_name(v)}', expected iterable type"


def compile_program(root: Node, track_cost: bool = False) -> Callable[[CelDevice], Any]:
    """A function from device to raw result value; raises CelRuntimeError. With `track_cost`, an evaluation past the
    runtime cost limit fails as the scheduler's does."""
    if not track_cost:
        f = compile_node(root)

        def program(device: CelDevice) -> Any:
            return f(activation(device))

        return program
    _tracking.on = True
    try:
        tracked = compile_node(root)
    finally:
        _tracking.on = False

    def tracked_program(device: CelDevice) -> Any:
        return tracked({**activation(device), COST: [0]})

    return tracked_program
