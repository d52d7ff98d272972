"""`python -m dragoman.benchmarks [--quick] [NAME ...]`: run the benchmarks and print one table."""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import re
import sys
import time
import traceback

from dragoman.benchmarks.harness import Figure, format_table

# Each module offers `run(quick: bool) -> list[Figure]`. Later issues append here.
BENCHMARKS = (
    "cel",
    "sim",
    "scheduler",
    "controllers",
    "model",
    "shapes",
    "sync",
    "tui",
    "playground",
    "migration",
    "envelope",
)
# Run only when named (or with their flag): they need more than this checkout (the real control plane's binaries,
# `dragoman controlplane build`) and minutes of their own.
OPT_IN = ("controlplane",)

# Comparisons measured in the same run: (figure, baseline, what the ratio says). Patterns match figure names; a ratio
# row
# is added for every figure whose name matches, against the baseline with the same captured label.
COMPARISONS = (
    (
        r"^fast engine (?P<k>\w+), per evaluation$",
        r"^cel-python \(reference\) (?P<k>\w+), per evaluation$",
        "fast engine ÷ cel-python, {k} (lower is better)",
    ),
    (
        r"^decode (?P<k>[\d,]+) pods \([^)]*\), GC paused then frozen$",
        r"^decode (?P<k>[\d,]+) pods \([^)]*\), json.loads$",
        "decode with GC paused ÷ plain json.loads, {k} pods",
    ),
)


def comparisons(figures: list[Figure]) -> list[Figure]:
    """Ratio rows (medians of the same run) for the COMPARISONS whose two figures are both present."""
    out = []
    for fig_pat, base_pat, label in COMPARISONS:
        bases = {}
        for f in figures:
            m = re.match(base_pat, f.name)
            if m:
                bases[m.group("k")] = f
        for f in figures:
            m = re.match(fig_pat, f.name)
            base = bases.get(m.group("k")) if m else None
            if base is not None and base.median:
                out.append(Figure(label.format(k=m.group("k")), "×", [f.median / base.median], "", None, "same run"))
    return out


def _to_json(f: Figure) -> dict:
    return {
        "name": f.name,
        "unit": f.unit,
        "runs": list(f.runs),
        "target": f.target,
        "note": f.note,
        "verdict": f.verdict,
    }


def _from_json(d: dict) -> Figure:
    verdict = d.get("verdict") or ""
    meets = None if not verdict else (lambda _v, ok=(verdict == "met"): ok)
    return Figure(d["name"], d["unit"], d["runs"], d.get("target", ""), meets, d.get("note", ""))


def run_isolated(name: str, quick: bool) -> tuple[list[Figure], float]:
    """One benchmark in a child process: memory figures (RSS, peak) are its own, not what earlier benchmarks left
    behind."""
    import json
    import subprocess

    t0 = time.perf_counter()
    argv = [sys.executable, "-m", "dragoman.benchmarks", "--child", name] + (["--quick"] if quick else [])
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=None, text=True)
    figures = []
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            figures.append(_from_json(json.loads(line)))
    if proc.returncode != 0 and not figures:
        figures = [Figure(f"{name}: did not run (exit {proc.returncode}; see stderr)", "", [0.0], "", lambda v: False)]
    return figures, time.perf_counter() - t0


def run_one(name: str, quick: bool) -> tuple[list[Figure], float]:
    """One benchmark's figures and its wall time; a benchmark that fails gives one FAILED row instead of ending the
    run."""
    t0 = time.perf_counter()
    try:
        module = importlib.import_module(f"dragoman.benchmarks.bench_{name}")
        figures = list(module.run(quick=quick))
    except Exception as exc:  # noqa: BLE001 - one broken benchmark must not hide the others' figures
        traceback.print_exc(file=sys.stderr)
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:100]
        figures = [Figure(f"{name}: did not run ({reason})", "", [0.0], "", lambda v: False)]
    return figures, time.perf_counter() - t0


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = f", load {os.getloadavg()[0]:.1f}"
    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}{load}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dragoman.benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a small fleet and fewer runs, for a smoke test")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown (for the README)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument(
        "--envelope",
        action="store_true",
        help="run only the envelope benchmark (5,000 nodes, 150,000 pods; several minutes)",
    )
    parser.add_argument(
        "--controlplane",
        action="store_true",
        help="run only the real-control-plane benchmark (etcd + kube-apiserver v1.37, 1,000 nodes; several minutes)",
    )
    parser.add_argument(
        "--in-process", action="store_true", help="run every benchmark in this process (memory figures then add up)"
    )
    parser.add_argument("--child", metavar="NAME", help=argparse.SUPPRESS)
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"benchmarks to run (default: all of {', '.join(BENCHMARKS)}; also {', '.join(OPT_IN)})",
    )
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(BENCHMARKS + OPT_IN))
        return 0
    if args.child:
        import json

        figs, _wall = run_one(args.child, args.quick)
        for f in figs:
            print(json.dumps(_to_json(f)), flush=True)
        return 0
    if args.envelope:
        args.names = [*args.names, "envelope"] if "envelope" not in args.names else args.names
    if args.controlplane and "controlplane" not in args.names:
        args.names = [*args.names, "controlplane"]
    unknown = [n for n in args.names if n not in BENCHMARKS + OPT_IN]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r}; choose from {', '.join(BENCHMARKS + OPT_IN)}")
    started = time.perf_counter()
    header = machine()
    figures: list[Figure] = []
    walls: list[tuple[str, float]] = []
    for name in args.names or BENCHMARKS:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        figs, wall = (run_one if args.in_process else run_isolated)(name, args.quick)
        walls.append((name, wall))
        print(f"  {name}: {len(figs)} figures in {wall:.0f} s", file=sys.stderr, flush=True)
        figures.extend(figs)
    figures.extend(comparisons(figures))
    from dragoman.benchmarks.readme_baseline import compare

    figures.extend(compare(figures))  # the scale fleet's figures against the README's table
    total = time.perf_counter() - started
    print(f"machine: {header}")
    print(
        f"run: {'--quick' if args.quick else 'full'}, {total:.0f} s in all "
        f"({', '.join(f'{n} {w:.0f} s' for n, w in walls)})"
    )
    print(format_table(figures, markdown=args.markdown))
    missed = sum(1 for f in figures if f.verdict == "MISSED")
    print(f"{len(figures)} figures, {sum(1 for f in figures if f.verdict == 'met')} targets met, {missed} missed.")
    # A missed target on a shared machine is a figure, not a failure; a benchmark that could not run is.
    return 1 if any(f.name.endswith(")") and ": did not run (" in f.name for f in figures) else 0


if __name__ == "__main__":
    raise SystemExit(main())
