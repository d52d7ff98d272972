"""`dragoman migrate`: plan, confirm, apply, verify, resume and roll back the migration of one pool, headless."""

from __future__ import annotations

import argparse
import json
import os
import sys

S = argparse.SUPPRESS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "migrate",
        help="plan and run the migration of one pool (cordon, drain, ...)",
        description="Show the migration plan of a pool, confirm it, and run it step by step with verification. "
        "State lives in the cluster (node annotations, a Lease and a ConfigMap); every write is audited; "
        "a crashed run resumes where it stopped. Exit codes: 0 done, 1 a step or verification failed, "
        "2 input or cluster unreachable, 3 refused (read-only, lock held, preflight, drift, another cluster).",
    )
    p.add_argument("--pool", required=True, metavar="POOL", help="the pool to migrate (value of the pool label)")
    p.add_argument("--plan", action="store_true", help="show the plan and stop (with --output json: the plan file)")
    p.add_argument("--yes", "-y", action="store_true", help="do not prompt; the plan still prints first")
    p.add_argument(
        "--step", action="append", metavar="NAME", help="run only this step (preflight always runs); repeatable"
    )
    p.add_argument(
        "--rollback",
        action="store_true",
        help="undo what the pool's state records as done (with --step: only that step)",
    )
    p.add_argument(
        "--apply-plan", metavar="FILE", help="apply exactly this plan file; refused when the cluster drifted from it"
    )
    p.add_argument("--audit-log", metavar="PATH", help="audit log (default ~/.local/state/dragoman/audit.jsonl)")
    p.add_argument(
        "--batch-size",
        type=int,
        default=0,
        metavar="N",
        help="cordon and drain N nodes at a time (default: the whole pool)",
    )
    p.add_argument("--canary-node", metavar="NAME", default="", help="run the batched steps on this node first")
    p.add_argument(
        "--state-namespace",
        metavar="NS",
        default="kube-system",
        help="namespace of the Lease and ConfigMap (default kube-system)",
    )
    p.add_argument(
        "--drain-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="give up on a drain after this long (default 300)",
    )
    p.add_argument(
        "--drain-concurrency", type=int, default=4, metavar="N", help="evictions in flight at once (default 4)"
    )
    p.add_argument(
        "--evict-retry",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="retry a PDB-blocked eviction this often (default 5)",
    )
    p.add_argument(
        "--wait-for-jobs",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="let Job pods finish for up to this long before evicting them",
    )
    p.add_argument(
        "--force-pod",
        action="append",
        default=[],
        metavar="NS/NAME",
        help="delete this pod without eviction (ignores its PDB); repeatable",
    )
    p.add_argument(
        "--prod-pattern",
        action="append",
        metavar="WORD",
        help="context or server names that look like production (default: prod, prd, live)",
    )
    p.add_argument("--lease-seconds", type=int, default=60, metavar="N", help=S)
    p.add_argument(
        "--accept-capacity-change",
        action="store_true",
        help="accept that the pool serves a different number of nvidia.com/gpu after the switch",
    )
    p.add_argument(
        "--canary-image",
        metavar="IMAGE",
        default="",
        help="image of the verify step's canary pod (default: a CUDA base image running nvidia-smi -L)",
    )
    p.add_argument(
        "--canary-namespace", metavar="NS", default="default", help="namespace of the canary pod (default: default)"
    )
    p.add_argument(
        "--switch-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="how long a switch step waits for the cluster to show its effect (default 300)",
    )
    p.add_argument("--output", "-o", choices=("text", "json"), default="text", help="output format")
    p.add_argument("--kubeconfig", metavar="PATH", default=S, help="kubeconfig to read")
    p.add_argument("--context", metavar="NAME", default=S, help="kubeconfig context to use")
    p.add_argument("--pool-label", metavar="KEY", default=S, help="node label that defines pools")
    p.add_argument("--read-only", action="store_true", default=S, help="make every write impossible")
    p.add_argument("--demo", action="store_true", default=S, help="run against the embedded demo simulator")
    p.add_argument(
        "--prometheus",
        metavar="URL",
        default=S,
        help="a Prometheus scraping the control plane: the before/after figures in the pool's ConfigMap carry its "
        "figures (scheduler queue, claim creations, etcd size, API objects)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from dragoman.fleet.errors import ExitCode, UserError

    _check_flags(args)
    if getattr(args, "snapshot", None):
        raise UserError(
            "refused: a snapshot is read-only; `dragoman migrate` needs a cluster (--kubeconfig/--context or --demo).",
            ExitCode.REFUSED,
        )
    # The plan file first: a file that is not a plan is refused before a demo starts or a cluster is reached.
    args.plan_document = read_plan_file(args.apply_plan) if args.apply_plan is not None else None
    demo = None
    if getattr(args, "demo", False):
        from dragoman.tui.source import DemoProcess, control_plane_dir, with_prometheus

        demo = DemoProcess(control_plane=control_plane_dir(args), prometheus=with_prometheus(args))
    try:
        if demo is not None:
            args.kubeconfig = demo.start()
            args.context = None
            args.prometheus = getattr(args, "prometheus", None) or demo.prometheus_url
            # The demo's writes are audited apart from the operator's (~/.local/state/dragoman/audit.jsonl).
            args.audit_log = args.audit_log or demo.audit_path
        return asyncio.run(_run(args))
    finally:
        if demo is not None:
            demo.stop()


def _out(line: str = "") -> None:
    print(line, flush=True)


def _err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _fit(text: str, width: int = 80) -> str:
    """One progress line wrapped to 80 columns (continuations indented), never cut: the end is often the reason."""
    import textwrap

    return (
        "\n".join(
            textwrap.wrap(text, width=width, subsequent_indent="    ", break_on_hyphens=False, break_long_words=False)
        )
        or text
    )


def _options(args: argparse.Namespace):
    from dragoman.actions.steps import Options

    o = Options(
        state_namespace=args.state_namespace,
        batch_size=args.batch_size,
        canary_node=args.canary_node or "",
        drain_concurrency=args.drain_concurrency,
        drain_timeout=args.drain_timeout,
        evict_retry=args.evict_retry,
        wait_for_jobs=args.wait_for_jobs,
        force_pods=tuple(args.force_pod or ()),
        lease_seconds=args.lease_seconds,
        accept_capacity_change=args.accept_capacity_change,
        canary_image=args.canary_image,
        canary_namespace=args.canary_namespace,
        switch_timeout=args.switch_timeout,
        prometheus_url=getattr(args, "prometheus", None) or "",
    )
    if args.prod_pattern:
        o.prod_patterns = tuple(args.prod_pattern)
    return o


def _confirm(plan, cluster, options) -> bool:
    """The CLI's prompt of the one confirmation gate (actions/confirm.py): each word typed exactly, else y/N."""
    from dragoman.actions.confirm import words_to_type

    if sys.stdin is None or not sys.stdin.isatty():
        from dragoman.fleet.errors import ExitCode, UserError

        raise UserError("refused: no terminal to confirm on; pass --yes to run without a prompt.", ExitCode.REFUSED)
    words = words_to_type(
        cluster.context_name or "",
        cluster.server or "",
        patterns=options.prod_patterns,
        pool=plan.pool if plan.dangerous else None,
        why="This plan evicts pods",
    )
    try:
        for t in words:
            if input(f"{t.prompt.removesuffix(':')} to continue: ").strip() != t.word:
                return False
        # A dangerous plan's pool name was its confirmation; any other plan also asks y/N.
        return plan.dangerous or input("Apply this plan? [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


# Sentinels for numeric flags (flag, attribute, minimum, maximum, integer): a negative --drain-timeout drained
# nothing and left the pool cordoned (issue 19). A day is the longest any wait may be asked for.
_NUMBERS = (
    ("--batch-size", "batch_size", 0, 100_000, True),
    ("--drain-timeout", "drain_timeout", 1, 86_400, False),
    ("--drain-concurrency", "drain_concurrency", 1, 1_000, True),
    ("--evict-retry", "evict_retry", 0.1, 3_600, False),
    ("--wait-for-jobs", "wait_for_jobs", 0, 86_400, False),
    ("--lease-seconds", "lease_seconds", 15, 86_400, True),
    ("--switch-timeout", "switch_timeout", 1, 86_400, False),
)


def _check_flags(args: argparse.Namespace) -> None:
    """Every flag that is a number or a name, checked before anything is read or written (one sentence, exit 2)."""
    import re

    from dragoman.fleet.errors import ExitCode, UserError
    from dragoman.tui.cli import number_flag

    for flag, attr, lo, hi, integer in _NUMBERS:
        number_flag(flag, getattr(args, attr, None), minimum=lo, maximum=hi, integer=integer)
    if getattr(args, "prometheus", None):
        from dragoman.fleet.load import prometheus_url_problem

        problem = prometheus_url_problem(args.prometheus)
        if problem:
            raise UserError(problem + ".", ExitCode.INPUT)
    for flag, attr in (("--state-namespace", "state_namespace"), ("--canary-namespace", "canary_namespace")):
        value = getattr(args, attr, "")
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", value or ""):
            from dragoman.fleet.errors import printable

            raise UserError(
                f"{flag} {printable(value or '(empty)', 80)!r} is not a namespace name (lowercase letters, "
                "digits and '-', at most 63).",
                ExitCode.INPUT,
            )
    if args.audit_log:
        from dragoman.fleet.safefile import check_target

        check_target(args.audit_log, "the audit log")


MAX_PLAN_BYTES = 64 * 1024 * 1024  # a plan of a 2,000-node pool with its evictions is a few MB


def read_plan_file(path: str) -> dict:
    """The plan file, read by the one bounded reader (fleet/safefile.read_documents: at most MAX_PLAN_BYTES, UTF-8,
    no deeper than 100 levels, no alias bomb) — a regular file only — and checked whole
    (actions/plan.plan_problem): anything that is not a plan this dragoman wrote is a sentence, exit 2 — never
    replaced by a fresh plan nobody reviewed."""
    from dragoman.actions.plan import plan_problem
    from dragoman.fleet.errors import ExitCode, UserError
    from dragoman.fleet.safefile import read_documents

    if not path:
        raise UserError("--apply-plan was given an empty file name.", ExitCode.INPUT)
    import stat

    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        mode = stat.S_IFREG  # read_documents says what is wrong (missing, a loop, no permission)
    if not stat.S_ISREG(mode):
        # A plan is a file `migrate --plan -o json` wrote: a FIFO could hold the read forever, a device never ends.
        raise UserError(
            f"the plan file {path} is not a regular file; give the file `dragoman migrate --plan --output json` wrote.",
            ExitCode.INPUT,
        )
    docs = read_documents(
        path, "the plan file", max_bytes=MAX_PLAN_BYTES, expect="a dragoman plan (JSON)", max_depth=100, wait=5
    )
    if len(docs) != 1:
        raise UserError(
            f"the plan file {path} holds {len(docs) or 'no'} documents; a plan file holds one (the JSON `dragoman "
            "migrate --plan --output json` writes).",
            ExitCode.INPUT,
        )
    data = docs[0]
    try:
        json.dumps(data, allow_nan=False)
    except (ValueError, TypeError):
        raise UserError(
            f"the plan file {path} holds NaN, Infinity or a YAML-only value (binary, a set), which no JSON plan holds.",
            ExitCode.INPUT,
        ) from None
    problem = plan_problem(data)
    if problem:
        raise UserError(
            f"the plan file {path} is not a plan dragoman can apply: {problem}; nothing was written. Write one with "
            "`dragoman migrate --plan --output json`.",
            ExitCode.INPUT,
        )
    return data


async def _check_state_namespace(cluster, namespace: str) -> None:
    """The Lease and ConfigMap live in --state-namespace: a namespace that does not exist is the operator's input
    (exit 2 before anything is written), not a failed step halfway through (it exited 1)."""
    from dragoman.fleet.cluster import ApiError
    from dragoman.fleet.errors import ExitCode, UserError

    try:
        await cluster.get(f"/api/v1/namespaces/{namespace}")
    except ApiError as exc:
        if exc.status == 404:
            raise UserError(
                f"the --state-namespace {namespace} does not exist in context {cluster.context_name!r}; "
                "create it or pass another one.",
                ExitCode.INPUT,
            ) from None
        if exc.status != 403:  # may not read namespaces: the Lease write will say so itself
            raise


async def _run(args: argparse.Namespace) -> int:
    from dragoman.actions.runner import Runner
    from dragoman.fleet.cluster import connect
    from dragoman.fleet.errors import ExitCode, UserError

    json_out = args.output == "json"
    options = _options(args)
    read_only = bool(getattr(args, "read_only", False))
    plan_file = getattr(args, "plan_document", None)
    if args.apply_plan is not None:
        if plan_file is None:  # _run called without run(): read it here
            plan_file = read_plan_file(args.apply_plan)
        if plan_file["pool"] != args.pool:
            from dragoman.fleet.errors import printable

            raise UserError(
                f"refused: the plan file is for pool {printable(plan_file['pool'], 80)}, not {args.pool}.",
                ExitCode.REFUSED,
            )

    from dragoman.fleet.glyphs import glyph

    def progress(ev) -> None:
        if json_out:
            return
        where = f" {ev.node}" if ev.node else ""
        mark = {"warning": glyph("warning"), "error": glyph("failed")}.get(ev.level, " ")
        count = f" {ev.done}/{ev.total}" if ev.total else ""
        _out(_fit(f"{mark} {ev.step_id}{where}{count} {ev.message}".rstrip()))

    cluster = await connect(getattr(args, "kubeconfig", None), getattr(args, "context", None))
    try:
        await _check_state_namespace(cluster, args.state_namespace)
        runner = Runner(
            cluster,
            args.pool,
            pool_label=getattr(args, "pool_label", None),
            options=options,
            audit_path=args.audit_log,
            read_only=read_only,
            progress=progress,
            warn=lambda m: _err(f"dragoman: warning: {m}"),
        )
        plan = await runner.prepare(args.step, rollback=args.rollback, plan_file=plan_file)
        from dragoman.actions.plan import render

        if args.plan:
            if json_out:
                _out(json.dumps(plan.to_json(), indent=2))
            else:
                for line in render(plan):
                    _out(line)
            return int(ExitCode.REFUSED if plan.blockers else ExitCode.OK)
        if not json_out:
            for line in render(plan):
                _out(line)
        if plan.blockers:
            raise UserError("refused by preflight, nothing was written: " + " ".join(plan.blockers), ExitCode.REFUSED)
        if not runner.pending_work(plan):
            result = await runner.run(plan)
            if not json_out:
                _out("nothing to do: every step of the plan is already done.")
            else:
                _out(
                    json.dumps(
                        {
                            "schemaVersion": 1,
                            "kind": "MigrationRun",
                            "plan": plan.to_json(),
                            "exitCode": result.exit_code,
                            "steps": result.steps,
                            "problems": result.problems,
                        },
                        indent=2,
                    )
                )
            return result.exit_code
        if read_only:
            raise UserError(
                "refused: the plan would write to the cluster, and dragoman runs with --read-only.", ExitCode.REFUSED
            )
        if not args.yes and not _confirm(plan, cluster, options):
            _err("dragoman: cancelled; nothing was written.")
            return int(ExitCode.REFUSED)
        result = await runner.run(plan)
        if json_out:
            _out(
                json.dumps(
                    {
                        "schemaVersion": 1,
                        "kind": "MigrationRun",
                        "plan": plan.to_json(),
                        "exitCode": result.exit_code,
                        "steps": result.steps,
                        "problems": result.problems,
                    },
                    indent=2,
                )
            )
        else:
            for p in result.problems:
                _out(_fit(f"✗ {p}"))
            done = sum(1 for v in result.steps.values() if v == "done")
            _out(
                f"{'rollback' if plan.rollback else 'migration'} of pool {args.pool}: {done}/{len(plan.steps)} "
                "steps done" + (", stopped on a problem." if result.problems else ".")
            )
            _out(f"audit log: {runner.audit.path}")
        return result.exit_code
    finally:
        await cluster.close()
