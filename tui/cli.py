"""The `dragoman` command line: the TUI by default, headless subcommands beside it."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from dragoman.fleet.errors import ExitCode, UserError, printable
from dragoman.tui.commands import COMMAND_MODULES

from dragoman import __version__

SENTENCE_LIMIT = 1500  # characters of one error sentence; the rest of a quoted answer helps nobody
# argparse's time grows with the square of the options given (10,000 `--case` flags took 3.5 s of CPU, 20,000 12 s):
# no command line written for dragoman has more than a few dozen, so a flood is refused before it is parsed.
MAX_ARGS = 4096


def number_flag(flag: str, value: float | int | None, *, minimum: float, maximum: float, integer: bool = False) -> None:
    """Refuse a numeric flag outside [minimum, maximum] (or not finite) with a sentence and exit 2 (issue 19: a
    negative --drain-timeout once drained nothing and left the pool cordoned)."""
    import math

    if value is None:
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise UserError(f"{flag} must be a finite number, not {value}.", ExitCode.INPUT)
    if not minimum <= value <= maximum:
        kind = "a whole number" if integer else "a number"
        raise UserError(f"{flag} must be {kind} from {minimum:g} to {maximum:g}, not {value:g}.", ExitCode.INPUT)


def add_cluster_flags(parser: argparse.ArgumentParser) -> None:
    """The flags every cluster-reading command shares (design.md, 'Conventions')."""
    g = parser.add_argument_group("cluster")
    g.add_argument(
        "--kubeconfig", metavar="PATH", help="kubeconfig to read (default: $KUBECONFIG, then ~/.kube/config)"
    )
    g.add_argument("--context", metavar="NAME", help="kubeconfig context to use")
    g.add_argument("--snapshot", metavar="FILE", help="read the fleet from a file instead of a cluster (read-only)")
    g.add_argument("--demo", action="store_true", help="start the embedded simulator with the demo fleet and use it")
    g.add_argument(
        "--control-plane",
        nargs="?",
        const="cache",
        metavar="DIR",
        help="with --demo: run the demo fleet on the real Kubernetes v1.37 control plane (binaries in DIR; default: "
        "those `dragoman controlplane build` made)",
    )
    g.add_argument(
        "--with-prometheus",
        action="store_true",
        help="with --demo --control-plane: run Prometheus beside it, scraping the four components, and read it "
        "(the :load view, the migration's before/after figures)",
    )
    g.add_argument("--pool-label", metavar="KEY", help="node label that defines pools (auto-detected when absent)")
    g.add_argument("--read-only", action="store_true", help="make every write impossible")
    g.add_argument(
        "--prometheus", metavar="URL", help="a Prometheus to query for scheduler metrics in the :load view (optional)"
    )


def add_output_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "-o", choices=("text", "json"), default="text", help="output format")


def build_parser(prog: str = "dragoman") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Walk a GPU fleet from the NVIDIA device plugin to Kubernetes DRA. "
        "Without a subcommand, opens the terminal UI.",
    )
    parser.add_argument("--version", action="version", version=f"dragoman {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="trace every API request (method, path, status, time; credentials redacted) to stderr",
    )
    parser.add_argument(
        "--debug-file", metavar="PATH", help="write that trace to PATH instead (appended; the way to trace the TUI)"
    )
    add_cluster_flags(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"dragoman.tui.commands.{name}")
        module.register(sub)
    return parser


def _run_tui(args: argparse.Namespace) -> int:
    try:
        from dragoman.tui import app as app_module
    except ImportError:
        print(
            "dragoman: the terminal UI is not built yet; try `dragoman cel --help` or `dragoman sim serve --help`.",
            file=sys.stderr,
        )
        return ExitCode.INPUT
    return app_module.run(args)


def main(argv: Sequence[str] | None = None, prog: str = "dragoman") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) > MAX_ARGS:
        print(
            f"dragoman: {len(argv)} arguments are more than dragoman reads ({MAX_ARGS}); give fewer (one --case "
            "pattern with shell wildcards selects many cases).",
            file=sys.stderr,
        )
        return int(ExitCode.INPUT)
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if args.debug or args.debug_file:
        from dragoman.fleet import debugtrace

        try:
            debugtrace.enable(args.debug_file or "-")
        except UserError as exc:
            print(f"dragoman: {printable(exc.message, SENTENCE_LIMIT)}", file=sys.stderr)
            return int(exc.exit_code)
    try:
        if handler is None:
            return int(_run_tui(args))
        return int(handler(args))
    except UserError as exc:
        # Sentences quote servers, files and plugins: escaped and bounded, so they stay one line of sane length.
        print(f"dragoman: {printable(exc.message, SENTENCE_LIMIT)}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print("dragoman: interrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `dragoman check | head`: the reader left; say nothing more.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return int(ExitCode.OK)
    finally:
        if args.debug or args.debug_file:
            from dragoman.fleet import debugtrace

            debugtrace.disable()


def kubectl_main() -> int:
    """`kubectl-dragoman`: kubectl runs it for `kubectl dragoman ARGS` with ARGS as given (`check --kubeconfig K
    --context C`), and KUBECONFIG in the environment as kubectl has it; dragoman reads both as kubectl does."""
    return main(prog="kubectl dragoman")


if __name__ == "__main__":
    raise SystemExit(main())
