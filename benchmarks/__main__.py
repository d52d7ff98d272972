"""`python -m dragoman.benchmarks [--quick] [NAME ...] [--only NAME[:PART],...]`: run the benchmarks and print one
table, then the issue's targets (issue 21: the envelope) side by side with what this run measured.

On a machine others share, run it in pieces (`--only envelope:sync`, `--only envelope:tui,envelope:plan`), each saved
with `--save FILE`, and print them together with `--from FILE ...`: every piece keeps its own date and load
average."""

from __future__ import annotations

import argparse
import importlib
import os
import pathlib
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
    "allocator",
    "envelope",
)
# Run only when named (or with their flag): they need more than this checkout (the real control plane's binaries,
# `dragoman controlplane build`) and minutes of their own.
OPT_IN = ("controlplane",)
# Benchmarks that can be run in pieces (`--only envelope:sync`): their module names its PARTS, and run() takes `parts`.
PIECEWISE = ("envelope", "controlplane")


def parts_of(name: str) -> tuple[str, ...]:
    if name not in PIECEWISE:
        return ()
    return tuple(importlib.import_module(f"dragoman.benchmarks.bench_{name}").PARTS)


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


def run_isolated(name: str, quick: bool, parts: list[str] | None = None) -> tuple[list[Figure], float]:
    """One benchmark in a child process: memory figures (RSS, peak) are its own, not what earlier benchmarks left
    behind."""
    import json
    import subprocess

    t0 = time.perf_counter()
    argv = [sys.executable, "-m", "dragoman.benchmarks", "--child", name] + (["--quick"] if quick else [])
    if parts:
        argv += ["--parts", ",".join(parts)]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=None, text=True)
    figures = []
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            figures.append(_from_json(json.loads(line)))
    if proc.returncode != 0 and not figures:
        figures = [Figure(f"{name}: did not run (exit {proc.returncode}; see stderr)", "", [0.0], "", lambda v: False)]
    return figures, time.perf_counter() - t0


def run_one(name: str, quick: bool, parts: list[str] | None = None) -> tuple[list[Figure], float]:
    """One benchmark's figures and its wall time; a benchmark that fails gives one FAILED row instead of ending the
    run. `parts`: only those parts of a benchmark that has them (PARTS)."""
    t0 = time.perf_counter()
    try:
        module = importlib.import_module(f"dragoman.benchmarks.bench_{name}")
        figures = list(module.run(quick=quick, parts=parts) if parts else module.run(quick=quick))
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
    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def load_average() -> str:
    """The machine's load average over 1, 5 and 15 minutes ("" where the system has none)."""
    if not hasattr(os, "getloadavg"):
        return ""
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def parse_only(specs: list[str]) -> dict[str, list[str]]:
    """`--only` values (`envelope`, `envelope:sync,envelope:tui`, `sync`) as {benchmark: [parts]}; [] means whole."""
    out: dict[str, list[str]] = {}
    for spec in specs:
        for item in filter(None, (x.strip() for x in spec.split(","))):
            name, _, part = item.partition(":")
            parts = out.setdefault(name, [])
            if part and part not in parts:
                parts.append(part)
            elif not part:
                out[name] = []  # the whole benchmark wins over any of its parts
    return out


def _check_names(parser: argparse.ArgumentParser, wanted: dict[str, list[str]]) -> None:
    for name, parts in wanted.items():
        if name not in BENCHMARKS + OPT_IN:
            parser.error(f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS + OPT_IN)}")
        have = parts_of(name)
        for part in parts:
            if part not in have:
                parser.error(
                    f"{name} has no part {part!r}"
                    + (f"; its parts are {', '.join(have)}" if have else "; it runs whole (drop the part)")
                )


def _save(path: str, run: dict) -> None:
    import json

    pathlib.Path(path).write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")


def _load_runs(paths: list[str]) -> list[dict]:
    import json

    runs = []
    for path in paths:
        try:
            runs.append(json.loads(pathlib.Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise SystemExit(f"python -m dragoman.benchmarks: cannot read the saved run {path!r} ({exc}).") from None
    return runs


def report(runs: list[dict], *, markdown: bool) -> int:
    """Print the runs' figures as one table, then the issue's targets beside them; each run's machine, date, load."""
    from dragoman.benchmarks.readme_baseline import compare
    from dragoman.benchmarks.targets import format_rows

    # A piece run again replaces its figures from an earlier file (same name), in the earlier one's place.
    latest: dict[str, dict] = {}
    for r in runs:
        for d in r["figures"]:
            latest[d["name"]] = d
    figures = [_from_json(d) for d in latest.values()]
    figures.extend(comparisons(figures))
    if not any(r["mode"].startswith("--quick") for r in runs):
        # The scale fleet's figures against the README's table, which a full run made (a --quick fleet is smaller).
        figures.extend(compare(figures))
    for r in runs:
        walls = ", ".join(f"{n} {w:.0f} s (load {a} -> {b})" for n, w, a, b in r["walls"])
        print(f"run: {r['date']}, {r['mode']}, {r['total_s']:.0f} s; {walls}")
        print(f"machine: {r['machine']}; load average (1/5/15 min) {r['load_start']} at start, {r['load_end']} at end")
    print(format_table(figures, markdown=markdown))
    missed = sum(1 for f in figures if f.verdict == "MISSED")
    print(f"{len(figures)} figures, {sum(1 for f in figures if f.verdict == 'met')} targets met, {missed} missed.")
    print()
    print(format_rows(figures, markdown=markdown))
    # A missed target on a shared machine is a figure, not a failure; a benchmark that could not run is.
    return 1 if any(f.name.endswith(")") and ": did not run (" in f.name for f in figures) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dragoman.benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a small fleet and fewer runs, for a smoke test")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown (for the README)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks (and their parts) and exit")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME[:PART],...",
        help="run only these benchmarks, or parts of one (e.g. envelope:sync,envelope:tui); see --list",
    )
    parser.add_argument(
        "--envelope",
        action="store_true",
        help="run only the envelope benchmark (5,000 nodes, 150,000 pods; tens of minutes): --only envelope",
    )
    parser.add_argument(
        "--controlplane",
        action="store_true",
        help="run only the real-control-plane benchmark (etcd + kube-apiserver v1.37, 1,000 nodes; several minutes); "
        "with --envelope: the envelope on kube-apiserver and on the simulator, side by side (tens of minutes)",
    )
    parser.add_argument(
        "--in-process", action="store_true", help="run every benchmark in this process (memory figures then add up)"
    )
    parser.add_argument("--save", metavar="FILE", help="also write this run (figures, machine, date, load) to FILE")
    parser.add_argument(
        "--from",
        dest="from_files",
        nargs="+",
        metavar="FILE",
        help="run nothing: print the runs saved with --save as one table (pieces of a run taken at different times)",
    )
    parser.add_argument("--child", metavar="NAME", help=argparse.SUPPRESS)
    parser.add_argument("--parts", default="", help=argparse.SUPPRESS)
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"benchmarks to run (default: all of {', '.join(BENCHMARKS)}; also {', '.join(OPT_IN)})",
    )
    args = parser.parse_args(argv)
    if args.list:
        for name in BENCHMARKS + OPT_IN:
            parts = parts_of(name)
            print(f"{name}{' (parts: ' + ', '.join(parts) + ')' if parts else ''}")
        return 0
    if args.child:
        import json

        figs, _wall = run_one(args.child, args.quick, [p for p in args.parts.split(",") if p] or None)
        for f in figs:
            print(json.dumps(_to_json(f)), flush=True)
        return 0
    if args.from_files:
        return report(_load_runs(args.from_files), markdown=args.markdown)
    wanted = parse_only(args.only)
    for name in args.names:
        wanted.setdefault(name, [])
    if args.controlplane and args.envelope:
        # Both flags: the envelope on the real control plane (and on the simulator beside it).
        wanted.setdefault("controlplane", []).append("envelope")
    elif args.envelope:
        wanted.setdefault("envelope", [])
    elif args.controlplane:
        wanted.setdefault("controlplane", [])
    _check_names(parser, wanted)
    plan = list(wanted.items()) or [(n, []) for n in BENCHMARKS]
    started = time.perf_counter()
    run: dict = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "mode": ("--quick" if args.quick else "full")
        + (" --only " + ",".join(f"{n}:{p}" if p else n for n, ps in plan for p in (ps or [""])) if wanted else ""),
        "load_start": load_average(),
        "walls": [],
        "figures": [],
    }
    for name, parts in plan:
        print(f"running {name}{' (' + ', '.join(parts) + ')' if parts else ''} ...", file=sys.stderr, flush=True)
        before = load_average().split("/")[0]
        figs, wall = (run_one if args.in_process else run_isolated)(name, args.quick, parts or None)
        run["walls"].append(
            (name + (":" + "+".join(parts) if parts else ""), wall, before, load_average().split("/")[0])
        )
        print(f"  {name}: {len(figs)} figures in {wall:.0f} s", file=sys.stderr, flush=True)
        run["figures"].extend(_to_json(f) for f in figs)
    run["total_s"] = time.perf_counter() - started
    run["load_end"] = load_average()
    if args.save:
        _save(args.save, run)
    return report([run], markdown=args.markdown)


if __name__ == "__main__":
    raise SystemExit(main())
