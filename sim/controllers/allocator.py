"""The structured-parameters DRA allocator as kube-scheduler runs it for one node: selectors, modes, constraints,
firstAvailable."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dragoman.sim.controllers.selectors import match_node_selector, tolerations_tolerate

FINALIZER = "resource.kubernetes.io/delete-protection"
ALL_MODE_MAX = 32  # resourceapi.AllocationResultsMaxSize


class AllocationError(Exception):
    """Something wrong with a claim or class (a CEL error): kube-scheduler aborts the whole attempt with this
    message."""


class DeviceEntry:
    """One device of the newest generation of its pool, with what the allocator reads from it, converted once."""

    __slots__ = (
        "driver",
        "pool",
        "name",
        "raw",
        "node_name",
        "node_selector",
        "all_nodes",
        "attrs",
        "taints",
        "_cel",
        "key",
    )

    def __init__(
        self,
        driver: str,
        pool: str,
        raw: dict,
        node_name: str | None,
        node_selector: dict | None = None,
        all_nodes: bool = False,
    ) -> None:
        self.driver = driver
        self.pool = pool
        self.name = str(raw.get("name", ""))
        self.raw = raw
        self.node_name = node_name
        self.node_selector = node_selector
        self.all_nodes = all_nodes
        self.key = (driver, pool, self.name)
        attrs = {}
        for qname, attr in (raw.get("attributes") or {}).items():
            full = qname if "/" in qname else f"{driver}/{qname}"
            if isinstance(attr, dict):
                for kind in ("string", "int", "bool", "version"):
                    if attr.get(kind) is not None:
                        attrs[full] = (kind, attr[kind])
                        break
        self.attrs = attrs
        self.taints = raw.get("taints") or []
        self._cel = None

    def cel(self):
        if self._cel is None:
            from dragoman.fleet.cel import cel_device

            self._cel = cel_device(self.driver, self.raw)
        return self._cel

    def available_on(self, node: dict) -> bool:
        if self.node_name is not None:
            return self.node_name == (node.get("metadata") or {}).get("name")
        if self.all_nodes:
            return True
        if self.node_selector is not None:
            return match_node_selector(self.node_selector, node)
        return False

    @property
    def uuid(self) -> str | None:
        attr = (self.raw.get("attributes") or {}).get("uuid") or (self.raw.get("attributes") or {}).get(
            f"{self.driver}/uuid"
        )
        return attr.get("string") if isinstance(attr, dict) else None


class SelectorCache:
    """Compiled expressions and per-device verdicts, shared across scheduling attempts (the scheduler's CEL cache)."""

    def __init__(self, compile_fn: Callable | None = None) -> None:
        self._compile_fn = compile_fn
        self.compiled: dict[str, object] = {}
        # device key -> expressions tuple -> (matched, failing index, error text, is_compile_error)
        self.verdicts: dict[tuple, dict[tuple, tuple]] = {}

    def _compile(self, expr: str):
        if expr in self.compiled:
            return self.compiled[expr]
        fn = self._compile_fn
        if fn is None:
            from dragoman.fleet.cel import compile_expression as fn  # type: ignore[no-redef]
        from dragoman.fleet.cel import CelCompileError

        try:
            out = fn(expr, environment="stored")  # the scheduler compiles selectors already stored
        except CelCompileError as exc:
            out = exc
        self.compiled[expr] = out
        return out

    def verdict(self, exprs: tuple[str, ...], device: DeviceEntry) -> tuple:
        if not exprs:
            return (True, -1, None, False)
        per_device = self.verdicts.get(device.key)
        if per_device is None:
            per_device = self.verdicts[device.key] = {}
        hit = per_device.get(exprs)
        if hit is not None:
            return hit
        result: tuple = (True, -1, None, False)
        for i, expr in enumerate(exprs):
            sel = self._compile(expr)
            if isinstance(sel, Exception):
                result = (False, i, str(sel), True)
                break
            dev = device.cel()
            conv = dev.cache.get("conversion_error")
            if conv:
                result = (False, i, conv, False)
                break
            out = sel.evaluate(dev)
            if out.error is not None:
                result = (False, i, out.error, False)
                break
            if out.value is not True:
                result = (False, -1, None, False)
                break
        per_device[exprs] = result
        return result

    def forget_devices(self, keys: Iterable[tuple]) -> None:
        for k in keys:
            self.verdicts.pop(k, None)


def _selector_exprs(selectors: list | None) -> tuple[str, ...]:
    return tuple(((s or {}).get("cel") or {}).get("expression", "") for s in selectors or [])


def _error_text(owner: str, index: int, device: DeviceEntry, error: str, compile_error: bool) -> str:
    if compile_error:
        return f"{owner}: selector #{index}: CEL compile error: {error}"
    from dragoman.fleet.cel import scheduler_error_message

    return scheduler_error_message(owner, index, device.driver, device.pool, device.name, error)


class _Alternative:
    __slots__ = (
        "result_name",
        "constraint_names",
        "class_name",
        "class_obj",
        "class_exprs",
        "req_exprs",
        "mode",
        "count",
        "admin",
        "tolerations",
    )


def _alternatives(request: dict, classes: dict) -> list[_Alternative]:
    out = []
    if request.get("exactly") is not None:
        items = [(request["name"], request["exactly"])]
    else:
        items = [(f"{request['name']}/{sub.get('name')}", sub) for sub in request.get("firstAvailable") or []]
    for result_name, body in items:
        alt = _Alternative()
        alt.result_name = result_name
        alt.constraint_names = (request["name"], result_name)
        alt.class_name = body.get("deviceClassName", "")
        alt.class_obj = classes.get(alt.class_name)
        alt.class_exprs = _selector_exprs(((alt.class_obj or {}).get("spec") or {}).get("selectors"))
        alt.req_exprs = _selector_exprs(body.get("selectors"))
        alt.mode = body.get("allocationMode") or "ExactCount"
        alt.count = int(body.get("count") or 1)
        alt.admin = bool(body.get("adminAccess"))
        alt.tolerations = body.get("tolerations") or []
        out.append(alt)
    return out


class _ClaimState:
    def __init__(self, claim: dict) -> None:
        self.claim = claim
        meta = claim.get("metadata") or {}
        self.owner = f"claim {meta.get('namespace', '')}/{meta.get('name', '')}"
        devices = (claim.get("spec") or {}).get("devices") or {}
        self.requests = devices.get("requests") or []
        self.constraints = devices.get("constraints") or []
        self.config = devices.get("config") or []
        self.results: list[tuple[str, DeviceEntry, bool]] = []
        self.match_values: dict[int, object] = {}
        self.distinct_values: dict[int, set] = {i: set() for i in range(len(self.constraints))}


def allocate(
    claims: list[dict],
    node: dict,
    devices: list[DeviceEntry],
    allocated: set,
    classes: dict,
    cache: SelectorCache,
    plans: dict | None = None,
) -> list[dict] | None:
    """Allocate every claim on `node` or none: a list of `status.allocation` dicts (one per claim), or None.

    `devices` are the devices available on the node (newest pool generations), in pool order; `allocated` holds the
    (driver, pool, device) keys already in use. Raises AllocationError on a CEL compile or runtime error, as upstream.
    `plans` may carry parsed requests across calls for the same claims (one scheduling attempt over many nodes).
    """
    if plans is None:
        plans = {}

    def alternatives(req: dict) -> list[_Alternative]:
        hit = plans.get(id(req))
        if hit is None or hit[0] is not req:
            hit = plans[id(req)] = (req, _alternatives(req, classes))
        return hit[1]

    if len(claims) == 1:
        fast = _single_request(claims[0], alternatives, node, devices, allocated, cache)
        if fast is not _NO_FAST_PATH:
            return fast

    states = [_ClaimState(c) for c in claims]
    plan: list[tuple[int, list[_Alternative]]] = []
    for ci, st in enumerate(states):
        for req in st.requests:
            plan.append((ci, alternatives(req)))
    in_use_here: set = set()
    selectable_cache: dict[tuple, bool] = {}

    def selectable(ci: int, alt: _Alternative, dev: DeviceEntry) -> bool:
        key = (ci, alt.result_name, dev.key)
        hit = selectable_cache.get(key)
        if hit is not None:
            return hit
        ok = True
        if alt.class_obj is None:
            ok = False
        else:
            matched, idx, err, is_compile = cache.verdict(alt.class_exprs, dev)
            if err is not None:
                raise AllocationError(_error_text(f"class {alt.class_name}", idx, dev, err, is_compile))
            if matched:
                matched, idx, err, is_compile = cache.verdict(alt.req_exprs, dev)
                if err is not None:
                    raise AllocationError(_error_text(states[ci].owner, idx, dev, err, is_compile))
            ok = matched
        if ok:
            for taint in dev.taints:
                if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerations_tolerate(
                    alt.tolerations, taint
                ):
                    ok = False
                    break
        selectable_cache[key] = ok
        return ok

    def constraint_applies(cons: dict, alt: _Alternative) -> bool:
        names = cons.get("requests") or []
        return not names or any(n in names for n in alt.constraint_names)

    def try_add(ci: int, alt: _Alternative, dev: DeviceEntry) -> list | None:
        """Check constraints for `dev`; on success record it and return an undo list."""
        st = states[ci]
        undo = []
        for i, cons in enumerate(st.constraints):
            if not constraint_applies(cons, alt):
                continue
            if cons.get("matchAttribute"):
                val = dev.attrs.get(cons["matchAttribute"])
                if val is None:
                    _undo(st, undo)
                    return None
                if i in st.match_values:
                    if st.match_values[i] != val:
                        _undo(st, undo)
                        return None
                else:
                    st.match_values[i] = val
                    undo.append(("m", i, None))
            elif cons.get("distinctAttribute"):
                val = dev.attrs.get(cons["distinctAttribute"])
                if val is None or val in st.distinct_values[i]:
                    _undo(st, undo)
                    return None
                st.distinct_values[i].add(val)
                undo.append(("d", i, val))
        st.results.append((alt.result_name, dev, alt.admin))
        if not alt.admin:
            in_use_here.add(dev.key)
        return undo

    def remove(ci: int, alt: _Alternative, dev: DeviceEntry, undo: list) -> None:
        st = states[ci]
        st.results.pop()
        if not alt.admin:
            in_use_here.discard(dev.key)
        _undo(st, undo)

    def free(alt: _Alternative, dev: DeviceEntry) -> bool:
        if alt.admin:
            return True
        return dev.key not in allocated and dev.key not in in_use_here

    def place(step: int) -> bool:
        if step == len(plan):
            return True
        ci, alts = plan[step]
        for alt in alts:
            if alt.class_obj is None:
                continue
            if alt.mode == "All":
                chosen = [d for d in devices if selectable(ci, alt, d)]
                if not chosen or len(chosen) > ALL_MODE_MAX or not all(free(alt, d) for d in chosen):
                    continue
                undos = []
                ok = True
                for d in chosen:
                    u = try_add(ci, alt, d)
                    if u is None:
                        ok = False
                        break
                    undos.append((d, u))
                if ok and place(step + 1):
                    return True
                for d, u in reversed(undos):
                    remove(ci, alt, d, u)
                continue
            if pick(step, ci, alt, alt.count, 0):
                return True
        return False

    def pick(step: int, ci: int, alt: _Alternative, remaining: int, start: int) -> bool:
        if remaining == 0:
            return place(step + 1)
        for i in range(start, len(devices)):
            dev = devices[i]
            # "In use" is cheap and checked before selectors, so errors only come from devices actually tested.
            if not free(alt, dev):
                continue
            if not selectable(ci, alt, dev):
                continue
            undo = try_add(ci, alt, dev)
            if undo is None:
                continue
            if pick(step, ci, alt, remaining - 1, i + 1):
                return True
            remove(ci, alt, dev, undo)
            if not states[ci].constraints and step == len(plan) - 1:
                # The last request and no constraints: every free matching device is interchangeable.
                return False
        return False

    if not place(0):
        return None
    node_name = (node.get("metadata") or {}).get("name", "")
    out = []
    for st in states:
        results = []
        node_local = False
        for result_name, dev, admin in st.results:
            r = {"request": result_name, "driver": dev.driver, "pool": dev.pool, "device": dev.name}
            if admin:
                r["adminAccess"] = True
            results.append(r)
            if dev.node_name is not None or dev.node_selector is not None:
                node_local = True
        config = []
        used_requests = {n.split("/")[0] for n, _, _ in st.results} | {n for n, _, _ in st.results}
        for req in st.requests:
            for alt in alternatives(req):
                if alt.result_name not in used_requests or alt.class_obj is None:
                    continue
                for cfg in (alt.class_obj.get("spec") or {}).get("config") or []:
                    entry = {"source": "FromClass", "requests": [alt.result_name]}
                    entry.update({k: v for k, v in cfg.items()})
                    config.append(entry)
        for cfg in st.config:
            entry = {"source": "FromClaim"}
            entry.update({k: v for k, v in cfg.items()})
            config.append(entry)
        allocation: dict = {"devices": {"results": results}}
        if config:
            allocation["devices"]["config"] = config
        if node_local:
            allocation["nodeSelector"] = {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            }
        out.append(allocation)
    return out


_NO_FAST_PATH = object()


def _single_request(claim: dict, alternatives, node: dict, devices: list[DeviceEntry], allocated, cache: SelectorCache):
    """One claim, one ExactCount request, no constraints, config or admin access (the bridge's claims and most
    user claims): the general search would take the first free matching devices in order, so do just that."""
    spec = (claim.get("spec") or {}).get("devices") or {}
    requests = spec.get("requests") or []
    if len(requests) != 1 or spec.get("constraints") or spec.get("config") or requests[0].get("exactly") is None:
        return _NO_FAST_PATH
    (alt,) = alternatives(requests[0])
    if (
        alt.mode != "ExactCount"
        or alt.admin
        or alt.class_obj is None
        or ((alt.class_obj.get("spec") or {}).get("config"))
    ):
        return _NO_FAST_PATH
    meta = claim.get("metadata") or {}
    owner = f"claim {meta.get('namespace', '')}/{meta.get('name', '')}"
    chosen: list[DeviceEntry] = []
    want = alt.count
    for dev in devices:
        if dev.key in allocated:
            continue
        matched, idx, err, is_compile = cache.verdict(alt.class_exprs, dev)
        if err is not None:
            raise AllocationError(_error_text(f"class {alt.class_name}", idx, dev, err, is_compile))
        if not matched:
            continue
        if alt.req_exprs:
            matched, idx, err, is_compile = cache.verdict(alt.req_exprs, dev)
            if err is not None:
                raise AllocationError(_error_text(owner, idx, dev, err, is_compile))
            if not matched:
                continue
        if dev.taints and any(
            t.get("effect") in ("NoSchedule", "NoExecute") and not tolerations_tolerate(alt.tolerations, t)
            for t in dev.taints
        ):
            continue
        chosen.append(dev)
        if len(chosen) == want:
            break
    if len(chosen) < want:
        return None
    node_name = (node.get("metadata") or {}).get("name", "")
    allocation: dict = {
        "devices": {
            "results": [
                {"request": alt.result_name, "driver": d.driver, "pool": d.pool, "device": d.name} for d in chosen
            ]
        }
    }
    if any(d.node_name is not None or d.node_selector is not None for d in chosen):
        allocation["nodeSelector"] = {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]
        }
    return [allocation]


def _undo(st: _ClaimState, undo: list) -> None:
    for kind, i, val in reversed(undo):
        if kind == "m":
            st.match_values.pop(i, None)
        else:
            st.distinct_values[i].discard(val)
    undo.clear()


def allocated_device_keys(claim: dict) -> list[tuple]:
    """(driver, pool, device) of a claim's allocation, except admin-access results (they don't take the device)."""
    alloc = (claim.get("status") or {}).get("allocation") or {}
    out = []
    for r in (alloc.get("devices") or {}).get("results") or []:
        if r.get("adminAccess"):
            continue
        out.append((r.get("driver"), r.get("pool"), r.get("device")))
    return out
