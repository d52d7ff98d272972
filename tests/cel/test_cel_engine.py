"""The engine's contract: caching, automatic choice with a tested fallback, fleet evaluation, scheduler wording."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from dragoman.fleet import cel
from dragoman.fleet.cel import (
    CelCompileError,
    EvalOutcome,
    cel_device,
    compile_expression,
    evaluate_all,
    evaluate_fleet,
    scheduler_error_message,
)
from dragoman.fleet.cel import engine as engine_mod
from dragoman.fleet.cel.fleeteval import DeviceIndex


def _gpu(name: str, uuid: str, product: str = "NVIDIA H100 80GB HBM3", version: str = "550.54.15") -> dict:
    return {
        "name": name,
        "attributes": {
            "type": {"string": "gpu"},
            "uuid": {"string": uuid},
            "productName": {"string": product},
            "driverVersion": {"version": version},
        },
        "capacity": {"memory": {"value": "81559Mi"}},
    }


def _slices(nodes: int = 20, per: int = 4) -> list[dict]:
    out = []
    for n in range(nodes):
        product = "NVIDIA H100 80GB HBM3" if n % 2 == 0 else "NVIDIA A100-SXM4-40GB"
        devs = [_gpu(f"gpu-{i}", f"GPU-{n}-{i}", product) for i in range(per)]
        out.append(
            {
                "kind": "ResourceSlice",
                "metadata": {"name": f"s{n}"},
                "spec": {
                    "driver": "gpu.nvidia.com",
                    "nodeName": f"node-{n}",
                    "pool": {"name": f"node-{n}", "generation": 1, "resourceSliceCount": 1},
                    "devices": devs,
                },
            }
        )
    return out


def test_compiled_programs_are_cached_by_text() -> None:
    a = compile_expression('device.driver == "x"')
    assert compile_expression('device.driver == "x"') is a
    with pytest.raises(CelCompileError) as first:
        compile_expression("device.nope")
    with pytest.raises(CelCompileError) as second:
        compile_expression("device.nope")
    assert (second.value.message, second.value.kind, second.value.line, second.value.column) == (
        first.value.message,
        first.value.kind,
        first.value.line,
        first.value.column,
    )


def test_a_cached_compile_error_keeps_no_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    # The playground caches an error for nearly every prefix typed: a kept traceback keeps its frames and their parse
    # trees alive (~2,200 tracebacks on the scale fleet, which the UI thread's collector then scans), and re-raising
    # one object lengthens its traceback every time.
    monkeypatch.setattr(engine_mod, "_cache", {})
    checks = []
    real = engine_mod.check_expression
    monkeypatch.setattr(engine_mod, "check_expression", lambda *a: checks.append(a) or real(*a))
    raised = []
    for _ in range(5):
        with pytest.raises(CelCompileError) as err:
            compile_expression("device.nope")
        raised.append(err.value)
    assert len(checks) == 1  # compiled once: the rest came from the cache
    (kept,) = engine_mod._cache.values()
    assert isinstance(kept, CelCompileError)
    assert (kept.__traceback__, kept.__context__, kept.__cause__) == (None, None, None)
    assert len({id(e) for e in raised}) == 5
    depth = [len(list(_frames(e.__traceback__))) for e in raised]
    assert depth[1:] == [depth[1]] * 4  # a hit's traceback is its own raise, not every raise before it


def _frames(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_fast_engine_is_chosen_automatically() -> None:
    assert compile_expression('device.attributes["gpu.nvidia.com"].productName != ""').engine == "fast"


def test_fallback_to_cel_python_when_the_fast_engine_cannot_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    from dragoman.fleet.cel import fast

    def refuse(root):
        raise fast.FastUnsupported("test")

    monkeypatch.setattr(fast, "compile_program", refuse)
    monkeypatch.setattr(engine_mod, "_cache", {})
    expr = (
        'device.attributes["gpu.nvidia.com"].?minor.orValue(0) == 0 && '
        'device.attributes["gpu.nvidia.com"].productName.contains("H100")'
    )
    sel = compile_expression(expr)
    assert sel.engine == "reference"
    dev = cel_device("gpu.nvidia.com", _gpu("gpu-0", "GPU-0"))
    assert sel.evaluate(dev) == EvalOutcome(True)
    missing = compile_expression('device.attributes["gpu.nvidia.com"].minor == 0')
    assert missing.engine == "reference"
    assert missing.evaluate(dev) == EvalOutcome(None, "no such key: minor")


def test_a_fast_engine_crash_on_a_device_falls_back_to_cel_python(monkeypatch: pytest.MonkeyPatch) -> None:
    from dragoman.fleet.cel import reference, runtime  # reference binds its library at import, before the break

    assert reference.FUNCTIONS["lowerAscii"]

    def broken(*args):
        raise TypeError("a bug in the fast path")

    expr = 'device.attributes["gpu.nvidia.com"].productName.lowerAscii() == "nvidia h100 80gb hbm3"'
    monkeypatch.setattr(engine_mod, "_cache", {})
    checked, source = engine_mod.check_expression(expr)
    monkeypatch.setitem(runtime.FUNCTIONS, "lowerAscii", broken)
    fast = engine_mod.build_selector(expr, checked, source, "fast")
    monkeypatch.undo()
    dev = cel_device("gpu.nvidia.com", _gpu("gpu-0", "GPU-0"))
    assert fast.engine == "fast"
    assert fast.evaluate(dev) == EvalOutcome(True)


def test_reference_engine_forced_by_environment() -> None:
    code = "from dragoman.fleet.cel import compile_expression as c; print(c('true').engine)"
    env = dict(os.environ, DRAGOMAN_CEL_ENGINE="reference")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.stdout.strip() == "reference", proc.stderr


def test_outcome_has_exactly_one_of_value_and_error() -> None:
    dev = cel_device("gpu.nvidia.com", _gpu("gpu-0", "GPU-0"))
    ok = compile_expression("true").evaluate(dev)
    bad = compile_expression('device.attributes["gpu.nvidia.com"].minor == 1').evaluate(dev)
    assert (ok.value, ok.error) == (True, None)
    assert bad.value is None and bad.error == "no such key: minor"


def test_evaluate_all_stops_at_first_false_or_error() -> None:
    dev = cel_device("gpu.nvidia.com", _gpu("gpu-0", "GPU-0"))
    t, f = compile_expression("true"), compile_expression("false")
    err = compile_expression('device.attributes["gpu.nvidia.com"].minor == 1')
    assert evaluate_all([t, t], dev).value is True
    assert evaluate_all([t, f, err], dev).value is False
    assert evaluate_all([err, f], dev).error == "no such key: minor"


def test_scheduler_error_message_matches_upstream_shape() -> None:
    msg = scheduler_error_message("class gpu.nvidia.com", 0, "gpu.nvidia.com", "node-1", "gpu-0", "no such key: index")
    # dynamic-resource-allocation cel/errors.go EnhanceRuntimeError wording.
    assert msg == (
        "class gpu.nvidia.com: selector #0 on device gpu.nvidia.com/node-1/gpu-0: CEL runtime error: no "
        "such key: index. consider using CEL optional chaining (.? followed by orValue()) or guarding the "
        "check with has() for optional fields"
    )
    claim = scheduler_error_message("claim ns/c", 1, "d", "p", "x", "no such overload")
    assert claim == "claim ns/c: selector #1 on device d/p/x: CEL runtime error: no such overload"


def test_attributes_read_drives_deduplication() -> None:
    typical = compile_expression('device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")')
    worst = compile_expression('device.attributes["gpu.nvidia.com"].uuid.endsWith("-1")')
    dynamic = compile_expression('device.attributes["gpu.nvidia.com"].exists(k, k == "uuid")')
    assert typical.attributes_read == frozenset({("gpu.nvidia.com", "productName")})
    assert dynamic.attributes_read is None
    index = DeviceIndex(_slices())
    r = evaluate_fleet(typical, index)
    assert r.evaluations == 2
    assert r.summary["matched"] == 40 and r.summary["devices"] == 80
    assert evaluate_fleet(worst, index).evaluations == 80
    assert evaluate_fleet(dynamic, index).evaluations == 80
    # Deduplicated results are still reported per device, the same as without deduplication.
    per_device = [compile_expression(typical.expression).evaluate(d).value for d in index.devices]
    assert [x.result == "match" for x in r.results] == per_device


def test_fleet_summary_counts_per_pool_and_product() -> None:
    r = evaluate_fleet(
        compile_expression('device.attributes["gpu.nvidia.com"].productName.contains("H100")'), _slices(nodes=4, per=2)
    )
    s = r.summary
    assert s["devices"] == 8 and s["matched"] == 4 and s["notMatched"] == 4 and s["errors"] == 0
    assert {p["pool"]: p["matched"] for p in s["pools"]} == {"node-0": 2, "node-1": 0, "node-2": 2, "node-3": 0}
    assert {p["product"]: p["matched"] for p in s["products"]} == {
        "NVIDIA H100 80GB HBM3": 4,
        "NVIDIA A100-SXM4-40GB": 0,
    }


def test_only_the_newest_pool_generation_counts() -> None:
    old = _slices(nodes=1, per=3)[0]
    new = _slices(nodes=1, per=1)[0]
    new["spec"]["pool"]["generation"] = 2
    r = evaluate_fleet(compile_expression("true"), [old, new])
    assert r.summary["devices"] == 1


def test_cancellation_between_chunks() -> None:
    worst = compile_expression('device.attributes["gpu.nvidia.com"].uuid != ""')
    index = DeviceIndex(_slices(nodes=50, per=4))
    stop = threading.Event()
    stop.set()
    r = evaluate_fleet(worst, index, cancel=stop, chunk=10)
    assert r.cancelled and r.evaluations == 0 and r.results == []
    calls = []

    def check() -> bool:
        calls.append(1)
        return len(calls) > 3

    r = evaluate_fleet(worst, index, cancel=check, chunk=10)
    assert r.cancelled and r.evaluations == 30
    assert len(r.results) == 30 and r.summary["devices"] == 30


def test_unconvertible_attribute_fails_every_selector_on_that_device() -> None:
    dev = cel_device("dra.example.com", {"name": "x", "attributes": {"v": {"version": "not-a-version"}}})
    out = compile_expression("true").evaluate(dev)
    assert out.value is None and out.error.startswith("attribute v: parse semantic version")


def test_public_interface_is_reexported() -> None:
    for name in (
        "CelCompileError",
        "CompiledSelector",
        "EvalOutcome",
        "cel_device",
        "compile_expression",
        "evaluate_all",
        "scheduler_error_message",
        "evaluate_fleet",
    ):
        assert hasattr(cel, name)


def test_concurrent_evaluation_on_shared_devices_is_consistent() -> None:
    # The simulator's scheduler and the playground may evaluate the same converted devices from two threads.
    index = DeviceIndex(_slices(nodes=10, per=4))
    exprs = [
        (
            'cel.bind(g, device.attributes["gpu.nvidia.com"], g.productName.contains("H100") && '
            '["GPU-0"].all(p, g.uuid.startsWith(p)))'
        ),
        (
            'device.attributes["gpu.nvidia.com"].exists(k, k == "uuid") && '
            'device.attributes["gpu.nvidia.com"].uuid.endsWith("-1")'
        ),
    ]
    sels = [compile_expression(e) for e in exprs]
    expected = [[s.evaluate(d) for d in index.devices] for s in sels]
    failures: list[str] = []

    def worker(k: int) -> None:
        for _ in range(30):
            got = [sels[k].evaluate(d) for d in index.devices]
            if got != expected[k]:
                failures.append(exprs[k])

    threads = [threading.Thread(target=worker, args=(k % 2,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not failures
    assert sum(o.value is True for o in expected[0]) == 4 and sum(o.value is True for o in expected[1]) == 10


def test_grouping_gives_up_early_when_every_device_differs() -> None:
    index = DeviceIndex(_slices(nodes=150, per=4))  # 600 devices, unique uuids
    worst = compile_expression('device.attributes["gpu.nvidia.com"].uuid.endsWith("-3")')
    r = evaluate_fleet(worst, index)
    assert r.evaluations == 600
    assert [x.result == "match" for x in r.results] == [d.name == "gpu-3" for d in index.devices]
    typical = evaluate_fleet(
        compile_expression('device.attributes["gpu.nvidia.com"].productName.contains("H100")'), index
    )
    assert typical.evaluations == 2 and typical.summary["matched"] == 300


def test_grouping_from_cached_columns_is_the_grouping_by_everything_read() -> None:
    slices = _slices(nodes=6, per=3)
    slices[1]["spec"]["devices"][0]["attributes"]["ecc"] = {"bool": True}
    slices[2]["spec"]["devices"][1]["attributes"]["ecc"] = {"int": 1}  # 1 == True in Python: must stay apart
    slices[3]["spec"]["devices"][2]["capacity"]["memory"] = {"value": "40Gi"}
    index = DeviceIndex(slices)
    dom = "gpu.nvidia.com"

    def by_whole_keys(reads: frozenset) -> list[int]:
        # The plain definition: devices equal in everything read share a group, numbered by first appearance.
        keys: dict = {}
        out = []
        for d in index.devices:
            key = [d.driver, d.allow_multiple_allocations]
            for domain, ident in sorted(reads, key=lambda x: (x[0], x[1] or "")):
                a, c = d.attributes.get(domain), d.capacity.get(domain)
                if ident is None:
                    key += [a is not None, c is not None]
                else:
                    v = a.get(ident, "<missing>") if a is not None else "<missing>"
                    key += [(type(v).__name__, v), c.get(ident, "<missing>") if c is not None else "<missing>"]
            out.append(keys.setdefault(tuple(key), len(keys)))
        return out

    cases = [
        frozenset(),
        frozenset({(dom, "productName")}),
        frozenset({(dom, "prod")}),
        frozenset({(dom, "ecc")}),
        frozenset({(dom, "productName"), (dom, "ecc")}),
        frozenset({(dom, "memory")}),
        frozenset({(dom, None)}),
        frozenset({(dom, "productName"), (dom, "prod"), (dom, "memory"), ("other.example.com", "x")}),
    ]
    for reads in cases:
        reps, group_of = index.grouping(reads)
        assert group_of == by_whole_keys(reads), reads
        assert reps == [group_of.index(g) for g in range(len(reps))]
        tally = index.tally(group_of)
        assert sum(tally.sizes) == len(index) and [group_of.count(g) for g in range(len(reps))] == tally.sizes
        assert sum(n for _, n in tally.pools) == len(index) == sum(n for _, n in tally.products)
    # A name no device publishes (a name half typed) splits nothing: the same grouping as without it.
    assert index.grouping(frozenset({(dom, "productName"), (dom, "prod")})) == index.grouping(
        frozenset({(dom, "productName")})
    )
    assert index.grouping(frozenset({(dom, "ecc")}))[0] == [0, 3, 7]
    # Evaluations over the cached groupings count per device as before.
    r = evaluate_fleet(compile_expression(f'device.attributes["{dom}"].ecc == true'), index)
    assert r.summary["matched"] == 1 and r.summary["errors"] == 16 and r.summary["notMatched"] == 1
    assert {p["pool"]: (p["matched"], p["errors"]) for p in r.summary["pools"]}["node-1"] == (1, 2)


def test_a_fleet_sized_index_leaves_the_young_gc_generations_yet_is_freed_with_the_index() -> None:
    import gc
    import weakref

    from dragoman.fleet.cel.fleeteval import FREEZE_DEVICES

    before = gc.get_freeze_count()
    small = DeviceIndex(_slices(nodes=10, per=4))
    assert len(small.devices) == 40 and gc.get_freeze_count() == before  # a small index is left to the collector
    del small
    index = DeviceIndex(_slices(nodes=FREEZE_DEVICES // 4, per=4))
    try:
        # Its objects went to the permanent generation (no collection rescans them while the operator types) ...
        assert gc.get_freeze_count() > before + FREEZE_DEVICES
        ref = weakref.ref(index.devices[0])
        del index
        # ... and reference counting still frees them when the index goes (no cycles hold them).
        assert ref() is None
    finally:
        gc.unfreeze()


def test_cel_gos_code_point_limit_refuses_even_a_stored_selector() -> None:
    # A stored selector has no length limit, but cel-go's parser refuses more than 100,000 code points (the oracle:
    # "expression code point size exceeds limit"); 15,001 clauses of `true && ` are 120,004.
    long = "true && " * 15_000 + "true"
    with pytest.raises(CelCompileError) as exc:
        engine_mod.check_expression(long, "stored")
    assert exc.value.kind == "syntax" and "code point size exceeds limit" in exc.value.message
    engine_mod.check_expression("true && " * 12_000 + "true", "stored")  # 96,004: within the limit
