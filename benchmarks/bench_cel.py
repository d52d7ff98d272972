"""DRA CEL over a 40,000-GPU fleet: compile time, cold and warm passes, µs per device, cel-python vs the fast engine,
and both against cel-go as Kubernetes runs it (the oracle in controlplane/celoracle)."""

from __future__ import annotations

import statistics
import time

from dragoman.benchmarks.harness import Figure, time_runs
from dragoman.fleet.cel import cel_device
from dragoman.fleet.cel.engine import build_selector, check_expression
from dragoman.fleet.cel.fleeteval import DeviceIndex, evaluate_fleet
from dragoman.sim.controlplane.celoracle import Oracle

TYPICAL = (
    'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu" && '
    'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100") && '
    'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0 && '
    'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))'
)
# Reads uuid: every device differs, so nothing deduplicates.
WORST = (
    'device.attributes["gpu.nvidia.com"].uuid.startsWith("GPU-") && '
    'device.attributes["gpu.nvidia.com"].productName.lowerAscii().contains("h100") && '
    'device.attributes["gpu.nvidia.com"].?cudaComputeCapability.orValue(semver("0.0.0")).isGreaterThan(semver("8.0.0"))'
)
PRODUCTS = [
    ("NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", "81559Mi"),
    ("NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40960Mi"),
    ("NVIDIA L4", "Ada Lovelace", "8.9.0", "23034Mi"),
]
DRIVERS = ["550.54.15", "535.104.5", "560.35.3"]


def fleet(nodes: int, per_node: int = 8) -> list[dict]:
    """ResourceSlices shaped like the NVIDIA DRA driver's: one pool per node, bare names in gpu.nvidia.com."""
    slices = []
    for n in range(nodes):
        product, arch, cc, mem = PRODUCTS[n % len(PRODUCTS)]
        driver = DRIVERS[(n // 7) % len(DRIVERS)]
        devices = []
        for i in range(per_node):
            devices.append(
                {
                    "name": f"gpu-{i}",
                    "attributes": {
                        "type": {"string": "gpu"},
                        "uuid": {"string": f"GPU-{n:05d}{i:02d}-5a1e-4c2b-9f3d-{n * per_node + i:012x}"},
                        "productName": {"string": product},
                        "brand": {"string": "Nvidia"},
                        "architecture": {"string": arch},
                        "driverVersion": {"version": driver},
                        "cudaDriverVersion": {"version": "12.4.0"},
                        "cudaComputeCapability": {"version": cc},
                        "addressingMode": {"string": "None"},
                        "resource.kubernetes.io/pciBusID": {"string": f"0000:{(i * 16 + 0x1B):02x}:00.0"},
                        "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{i * 16:02x}"},
                    },
                    "capacity": {"memory": {"value": mem}},
                }
            )
        slices.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"node-{n:05d}-gpu.nvidia.com-abcde"},
                "spec": {
                    "driver": "gpu.nvidia.com",
                    "nodeName": f"node-{n:05d}",
                    "pool": {"name": f"node-{n:05d}", "generation": 1, "resourceSliceCount": 1},
                    "devices": devices,
                },
            }
        )
    return slices


def _compile(expr: str, engine: str):
    checked, source = check_expression(expr)
    return build_selector(expr, checked, source, engine)


def _us_per_eval(sel, devices) -> list[float]:
    # Without deduplication: one evaluation per device, activation already cached on the device.
    for d in devices:
        sel.evaluate(d)
    return [t / len(devices) * 1e6 for t in time_runs(lambda: [sel.evaluate(d) for d in devices], runs=3)]


def run(quick: bool) -> list[Figure]:
    nodes = 250 if quick else 5000
    runs = 3 if quick else 5
    slices = fleet(nodes)
    n_devices = nodes * 8
    figures: list[Figure] = []
    lt = lambda limit: lambda v: v < limit  # noqa: E731

    for label, expr in (("typical", TYPICAL), ("worst", WORST)):
        compile_ms = [t * 1e3 for t in time_runs(lambda expr=expr: _compile(expr, "fast"), runs=runs, warmup=1)]
        figures.append(
            Figure(f"compile {label} selector (parse, check, cost, closures)", "ms", compile_ms, "< 10", lt(10))
        )

    # Cold: convert every device, group, evaluate. Warm: the same fleet again (conversion and grouping reused).
    cold: dict[str, list[float]] = {"typical": [], "worst": []}
    warm: dict[str, list[float]] = {"typical": [], "worst": []}
    evaluations: dict[str, int] = {}
    for _ in range(3):
        for label, expr in (("typical", TYPICAL), ("worst", WORST)):
            sel = _compile(expr, "fast")
            t0 = time.perf_counter()
            index = DeviceIndex(slices)
            evaluate_fleet(sel, index)
            cold[label].append((time.perf_counter() - t0) * 1e3)
            for _ in range(2):
                t0 = time.perf_counter()
                r = evaluate_fleet(sel, index)
                warm[label].append((time.perf_counter() - t0) * 1e3)
            evaluations[label] = r.evaluations
    figures.append(
        Figure(f"cold pass typical, fast ({n_devices:,} devices, convert+group+eval)", "ms", cold["typical"], "", None)
    )
    figures.append(
        Figure(
            f"warm pass typical, fast ({evaluations['typical']} distinct evaluations)",
            "ms",
            warm["typical"],
            "< 50",
            lt(50),
        )
    )
    figures.append(Figure(f"cold pass worst, fast ({n_devices:,} devices)", "ms", cold["worst"], "", None))
    figures.append(
        Figure(
            f"warm pass worst, fast ({evaluations['worst']:,} distinct evaluations)",
            "ms",
            warm["worst"],
            "< 500",
            lt(500),
        )
    )
    figures.append(
        Figure("warm pass worst, fast, per device", "µs/device", [w * 1e3 / n_devices for w in warm["worst"]], "", None)
    )

    # Per evaluation, no deduplication: cel-python (the reference engine) on a sample, the fast engine on the fleet.
    sample = [
        cel_device("gpu.nvidia.com", d)
        for s in slices[: max(1, (200 if quick else 1000) // 8)]
        for d in s["spec"]["devices"]
    ]
    everything = DeviceIndex(slices).devices
    for label, expr in (("typical", TYPICAL), ("worst", WORST)):
        ref = _us_per_eval(_compile(expr, "reference"), sample)
        fast = _us_per_eval(_compile(expr, "fast"), everything)
        figures.append(
            Figure(
                f"cel-python (reference) {label}, per evaluation",
                "µs/eval",
                ref,
                "",
                None,
                note=f"{len(sample)} devices",
            )
        )
        figures.append(Figure(f"fast engine {label}, per evaluation", "µs/eval", fast, "", None))
        # A warm pass without the fast engine: every distinct evaluation on cel-python.
        figures.append(
            Figure(
                f"warm pass {label} on cel-python (estimated: µs/eval × {evaluations[label]:,})",
                "ms",
                [u * evaluations[label] / 1e3 for u in ref],
                "",
                None,
            )
        )
    conv = [t / n_devices * 1e6 for t in time_runs(lambda: DeviceIndex(slices), runs=2)]
    figures.append(Figure("device conversion (raw dict -> CEL device + index)", "µs/device", conv, "", None))
    figures += _versus_cel_go(slices, everything, warm, quick)
    return figures


def _versus_cel_go(slices: list[dict], everything: list, warm: dict[str, list[float]], quick: bool) -> list[Figure]:
    """The same selectors on the same devices in cel-go, timed inside the Go process (no start-up, no JSON):
    DeviceMatches as the scheduler calls it (the device's maps built per call), and the compiled program alone."""
    figures: list[Figure] = []
    oracle = Oracle()
    try:
        devices = [{**d, "driver": s["spec"]["driver"]} for s in slices for d in s["spec"]["devices"]]
        n = len(devices)
        oracle.define("fleet", devices)
        repeat = 2 if quick else 3
        for label, expr in (("typical", TYPICAL), ("worst", WORST)):
            ans = oracle.ask(
                [{"op": "eval", "expression": expr, "set": "fleet", "results": False, "repeat": 1}] * repeat
            )
            per_eval = [a["timing"]["nsPerEval"] / 1e3 for a in ans]
            program_only = [a["timing"]["activationReusedNsPerEval"] / 1e3 for a in ans]
            fast = _us_per_eval(_compile(expr, "fast"), everything)
            ours = evaluate_fleet(_compile(expr, "fast"), DeviceIndex(slices)).summary
            theirs = ans[0]["summary"]
            same = (ours["matched"], ours["errors"]) == (theirs["match"], theirs["error"])
            mine = "the same" if same else f"{ours['matched']:,}, {ours['errors']:,}: DIFFERENT"
            agree = f"cel-go matches {theirs['match']:,}, errors {theirs['error']:,}; dragoman {mine}"
            figures.append(
                Figure(
                    f"cel-go DeviceMatches {label}, per evaluation",
                    "µs/eval",
                    per_eval,
                    "",
                    None,
                    note=f"{n:,} devices, timed in Go",
                )
            )
            figures.append(
                Figure(
                    f"cel-go program alone {label}, per evaluation",
                    "µs/eval",
                    program_only,
                    "",
                    None,
                    note="activation built once per device",
                )
            )
            ratio = [statistics.median(fast) / x for x in per_eval]
            figures.append(
                Figure(
                    f"fast engine ÷ cel-go DeviceMatches {label}, per evaluation",
                    "×",
                    ratio,
                    "< 5",
                    lambda v: v < 5,
                    note="same run, same devices",
                )
            )
            ratio_p = [statistics.median(fast) / x for x in program_only]
            figures.append(
                Figure(
                    f"fast engine ÷ cel-go program alone {label}, per evaluation",
                    "×",
                    ratio_p,
                    "",
                    None,
                    note="same run",
                )
            )
            # The scheduler's way over the whole fleet: every device one by one, no deduplication.
            pass_ms = [x * n / 1e3 for x in per_eval]
            figures.append(
                Figure(
                    f"cel-go whole-fleet pass {label} ({n:,} devices one by one)", "ms", pass_ms, "", None, note=agree
                )
            )
            figures.append(
                Figure(
                    f"dragoman warm pass ÷ cel-go whole-fleet pass {label}",
                    "×",
                    [statistics.median(warm[label]) / x for x in pass_ms],
                    "< 1 (dragoman faster)",
                    lambda v: v < 1,
                    note="same run",
                )
            )
            if not same:
                figures[-1].note += "; engines disagree on this fleet"
    finally:
        oracle.close()
    return figures
