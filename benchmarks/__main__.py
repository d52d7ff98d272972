"""`python -m dragoman.benchmarks [--quick] [NAME ...]`: run the benchmarks and print one table."""

from __future__ import annotations

import argparse
import importlib
import platform
import os
import sys

from dragoman.benchmarks.harness import format_table

# Each module offers `run(quick: bool) -> list[Figure]`. Later issues append here.
BENCHMARKS = ("cel", "sim", "scheduler", "controllers", "model", "sync", "tui", "playground")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dragoman.benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a small fleet and fewer runs, for a smoke test")
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"benchmarks to run (default: all of {', '.join(BENCHMARKS)})")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r}; choose from {', '.join(BENCHMARKS)}")
    figures = []
    for name in args.names or BENCHMARKS:
        module = importlib.import_module(f"dragoman.benchmarks.bench_{name}")
        print(f"running {name} ...", file=sys.stderr, flush=True)
        figures.extend(module.run(quick=args.quick))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(format_table(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
