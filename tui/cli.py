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


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, unwound like Ctrl+C so every `finally` runs (a demo's child stopped, its folder removed)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class GuardedOutput:
    """Standard output for the headless commands: a reader that left (`| head`) or an output that cannot be written
    (/dev/full, a closed descriptor) is noted instead of raised from the middle of a command, so the command still
    ends with its own exit code (error findings are still 1) and main says what happened in one sentence."""

    def __init__(self, stream: object) -> None:
        self.stream = stream
        self.broken = False  # the reader left: not an error
        self.failed: str = "" if stream is not None else "standard output is closed"

    def _guard(self, call):
        if self.broken or self.failed or self.stream is None:
            return None
        try:
            return call()
        except BrokenPipeError:
            self.broken = True
        except (OSError, ValueError) as exc:  # ValueError: "I/O operation on closed file"
            self.failed = getattr(exc, "strerror", None) or str(exc)
        return None

    def write(self, text: str) -> int:
        self._guard(lambda: self.stream.write(text))  # type: ignore[attr-defined]
        return len(text)

    def flush(self) -> None:
        self._guard(lambda: self.stream.flush())  # type: ignore[attr-defined]

    def isatty(self) -> bool:
        return bool(self._guard(lambda: self.stream.isatty()))  # type: ignore[attr-defined]

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def _quiet_stdout() -> None:
    """Point descriptor 1 at /dev/null: the interpreter's last flush must not complain about a reader that left."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


def _say(line: str) -> None:
    """A line on stderr that cannot itself fail (a closed terminal after SIGHUP, a closed stderr)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def _robust_streams() -> None:
    """Output in any encoding (LANG=C, latin-1, ASCII): what it cannot show is escaped, never a UnicodeEncodeError; a
    closed standard input reads as empty (a prompt is refused, `--snapshot -` is empty), never a None."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
    if sys.stdin is None:
        import io

        sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")


def main(argv: Sequence[str] | None = None, prog: str = "dragoman") -> int:
    from_command_line = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) > MAX_ARGS:
        print(
            f"dragoman: {len(argv)} arguments are more than dragoman reads ({MAX_ARGS}); give fewer (one --case "
            "pattern with shell wildcards selects many cases).",
            file=sys.stderr,
        )
        return int(ExitCode.INPUT)
    _robust_streams()
    try:
        parser = build_parser(prog)
        args = parser.parse_args(argv)  # --help, --version and usage errors exit through argparse, as ever
    except KeyboardInterrupt:
        # Ctrl+C while the command line is still read (its command modules imported, a second or more on a loaded
        # machine): nothing has started, so nothing to stop; the sentence, not a traceback from inside an import.
        _say("dragoman: interrupted.")
        return 128 + 2  # SIGINT
    handler = getattr(args, "handler", None)
    if args.debug or args.debug_file:
        from dragoman.fleet import debugtrace

        try:
            debugtrace.enable(args.debug_file or "-")
        except UserError as exc:
            print(f"dragoman: {printable(exc.message, SENTENCE_LIMIT)}", file=sys.stderr)
            return int(exc.exit_code)
    # Only as the program itself (argv from the command line): a test calling main([...]) in its own process keeps
    # its own signal handling.
    restore = _catch_signals() if from_command_line else (lambda: None)
    # The terminal UI writes to the terminal itself; the headless commands write through the guard.
    out = GuardedOutput(sys.stdout) if handler is not None else None
    saved_stdout = sys.stdout
    if out is not None:
        sys.stdout = out
    code: int
    try:
        _control_plane_needs_demo(args)
        code = int(_run_tui(args)) if handler is None else int(handler(args))
    except UserError as exc:
        # Sentences quote servers, files and plugins: escaped and bounded, so they stay one line of sane length.
        _say(f"dragoman: {printable(exc.message, SENTENCE_LIMIT)}")
        code = int(exc.exit_code)
    except KeyboardInterrupt as exc:
        _quiet_asyncio()
        signum = exc.signum if isinstance(exc, Interrupted) else 2
        _say("dragoman: interrupted." if signum == 2 else f"dragoman: stopped by signal {signum}.")
        code = 128 + signum
    except BrokenPipeError:
        # `dragoman check | head`: the reader left; say nothing more.
        _quiet_stdout()
        code = int(ExitCode.OK)
    finally:
        restore()
        if args.debug or args.debug_file:
            from dragoman.fleet import debugtrace

            debugtrace.disable()
        if out is not None:
            out.flush()
            sys.stdout = saved_stdout
    if out is not None and out.broken:
        _quiet_stdout()  # the reader left (`| head`): the command's own exit code stands
    elif out is not None and out.failed:
        _quiet_stdout()
        _say(f"dragoman: cannot write the output to standard output ({printable(out.failed, 200)}).")
        # The output is lost: whatever the command found, its reader did not get it.
        return max(code, int(ExitCode.INPUT)) if code < 128 else code
    return code


def _control_plane_needs_demo(args: argparse.Namespace) -> None:
    """`--control-plane` of the cluster flags means the demo on the real control plane; without --demo it would be
    ignored silently (`sim serve` and `controlplane diff` have their own)."""
    if getattr(args, "command", None) in ("sim", "controlplane"):
        return
    if getattr(args, "control_plane", None) is not None:
        from dragoman.tui.source import control_plane_dir

        control_plane_dir(args)  # a sentence without --demo or with an empty DIR


def _quiet_asyncio() -> None:
    """The command is being interrupted: asyncio must not print a task's traceback on the way out. A KeyboardInterrupt
    raised inside a task (the signal lands wherever the loop is) is both set on that task and re-raised out of the
    loop, so nobody retrieves it and asyncio logs "Task exception was never retrieved" with a Traceback when the task
    is collected. The sentence `dragoman: stopped by signal N.` is the whole message."""
    import logging

    logging.getLogger("asyncio").disabled = True


def _catch_signals():
    """SIGTERM and SIGHUP unwind like Ctrl+C for the length of one command (restored after). Only the main thread
    may set handlers."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def raise_interrupted(signum: int, _frame: object) -> None:
        _quiet_asyncio()
        raise Interrupted(signum)

    saved = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        saved[sig] = signal.signal(sig, raise_interrupted)
    hook = sys.unraisablehook
    sys.unraisablehook = ours = _redeliver_interrupts(hook)

    def restore() -> None:
        sys.unraisablehook = hook
        for later in ours.pending:
            later.cancel()  # the command is over: an interrupt still on its way would only kill the exit
        for sig, handler in saved.items():
            signal.signal(sig, handler)

    return restore


REDELIVER_DELAY = 0.05  # s: long past the hook's return (microseconds), short beside a person's patience


def _redeliver_interrupts(hook):
    """A signal lands wherever the main thread is: inside a weakref callback or a __del__ (the collector runs them at
    any allocation), Python cannot raise it, prints "Exception ignored in … Traceback … KeyboardInterrupt" and goes
    on as if nothing came. Such an interrupt is sent again instead, silently, so it unwinds the command from the next
    ordinary line; anything else unraisable goes to the hook that was there.

    Sent from another thread a moment later, not raised here: a handler run inside this hook would raise inside the
    hook, which Python reports as "Exception ignored in sys.unraisablehook" and drops (seen under load). Should the
    new signal land in a finalizer again, this hook sends it once more."""
    import os
    import signal
    import threading

    def redeliver(unraisable) -> None:
        exc = unraisable.exc_value
        if not isinstance(exc, KeyboardInterrupt):
            hook(unraisable)
            return
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        later = threading.Timer(REDELIVER_DELAY, os.kill, (os.getpid(), signum))
        later.daemon = True  # never keeps a finished command alive
        redeliver.pending.append(later)  # type: ignore[attr-defined]
        later.start()

    redeliver.pending = []  # type: ignore[attr-defined]

    return redeliver


def kubectl_main() -> int:
    """`kubectl-dragoman`: kubectl runs it for `kubectl dragoman ARGS` with ARGS as given (`check --kubeconfig K
    --context C`), and KUBECONFIG in the environment as kubectl has it; dragoman reads both as kubectl does."""
    return main(prog="kubectl dragoman")


if __name__ == "__main__":
    raise SystemExit(main())
