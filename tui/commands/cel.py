"""`dragoman cel`: evaluate a DRA CEL selector against the devices of a file, as the scheduler would."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

SCHEMA_VERSION = 1


def register(sub: argparse._SubParsersAction) -> None:
    from dragoman.tui.cli import add_output_flag
    from dragoman.tui.headless import add_source_flags

    p = sub.add_parser(
        "cel",
        help="evaluate a CEL device selector against ResourceSlices",
        description="Compile EXPR as the API server does and evaluate it on every device of the newest ResourceSlices "
        "in a file or a live cluster, as the scheduler does. Exit 0: it matched and nothing failed; 1: a "
        "compile error, a runtime error on any device, or no match; 2: the input could not be read.",
    )
    p.add_argument("expression", metavar="EXPR", help="the CEL selector expression")
    p.add_argument(
        "--class",
        dest="device_class",
        metavar="NAME",
        help="combine with the selectors of this DeviceClass (from the same file), as the scheduler does",
    )
    add_source_flags(p)  # the flags every reading command shares (tui/headless.py)
    p.add_argument(
        "--limit", type=int, default=50, metavar="N", help="devices listed per section in text output (0: all)"
    )
    add_output_flag(p)
    p.set_defaults(handler=run)


def load_objects(path: str) -> list[dict]:
    """The Kubernetes objects in a file: one object, a List (items), or several YAML/JSON documents."""
    from dragoman.fleet.errors import ExitCode, UserError
    from dragoman.fleet.safefile import read_documents
    from dragoman.fleet.snapshot import MAX_SNAPSHOT_BYTES

    where = "standard input" if path == "-" else path
    docs = read_documents(path, "the snapshot", max_bytes=MAX_SNAPSHOT_BYTES, expect="Kubernetes YAML or JSON")
    objects: list[dict] = []

    def add(doc: Any) -> None:
        if doc is None:
            return
        if isinstance(doc, list):
            for d in doc:
                add(d)
            return
        if not isinstance(doc, dict):
            raise UserError(
                f"cannot read {where}: expected Kubernetes objects, found a {type(doc).__name__}.", ExitCode.INPUT
            )
        from dragoman.fleet.shapes import normalize_labels, normalize_resource_version, shape_problem

        normalize_labels(doc)
        normalize_resource_version(doc)
        problem = (
            shape_problem(doc) if isinstance(doc.get("kind"), str) and not isinstance(doc.get("items"), list) else None
        )
        if problem:
            raise UserError(f"cannot read {where}: a {doc['kind']} is malformed: {problem}.", ExitCode.INPUT)
        if isinstance(doc.get("items"), list) and str(doc.get("kind", "List")).endswith("List"):
            for d in doc["items"]:
                add(d)
            return
        objects.append(doc)

    for doc in docs:
        add(doc)
    return objects


def run(args: argparse.Namespace) -> int:
    from dragoman.fleet.cel import CelCompileError, compile_expression
    from dragoman.fleet.cel.fleeteval import DeviceIndex, evaluate_fleet
    from dragoman.fleet.errors import ExitCode, UserError
    from dragoman.fleet.k8s import celenv
    from dragoman.fleet.k8s.slices import newest_slices

    snapshot = getattr(args, "snapshot", None)
    if snapshot is None:
        from dragoman.tui.headless import read_from_args

        # Claims and DeviceTaintRules too: which matching devices could be allocated now.
        kinds = ("ResourceSlice", "DeviceClass", "ResourceClaim", "DeviceTaintRule")
        store = read_from_args(args, kinds=kinds).source.store
        objects = [o for k in kinds for o in store.objects(k).values()]
    else:
        objects = load_objects(snapshot)
    slices = [o for o in objects if o.get("kind") == "ResourceSlice"]
    sources: list[tuple[str, str, int | None]] = []  # (expression, label, class selector index)
    if args.device_class:
        cls = next(
            (
                o
                for o in objects
                if o.get("kind") == "DeviceClass" and (o.get("metadata") or {}).get("name") == args.device_class
            ),
            None,
        )
        if cls is None:
            raise UserError(f"DeviceClass {args.device_class} is not in {snapshot or 'the cluster'}.", ExitCode.INPUT)
        for i, sel in enumerate((cls.get("spec") or {}).get("selectors") or []):
            expr = ((sel or {}).get("cel") or {}).get("expression")
            if isinstance(expr, str):
                sources.append((expr, f"class {args.device_class} selector #{i}: ", i))
    sources.append((args.expression, "expression: " if sources else "", None))

    selectors = []
    for expr, _label, class_index in sources:
        # The class's selectors are stored (compiled as the scheduler compiles them); the typed one is checked as the
        # API server checks a selector being written (fleet/k8s/celenv.py).
        environment = celenv.WRITTEN if class_index is None else celenv.STORED
        try:
            selectors.append(compile_expression(expr, environment=environment))
        except CelCompileError as exc:
            return _report_compile_error(args, expr, exc, class_index)
    labels = [label for _, label, _ in sources]
    index = DeviceIndex(slices)
    result = evaluate_fleet(selectors, index, labels=labels)
    summary = result.summary
    engine = selectors[-1].engine
    near, results = _near_misses(result, args.expression, labels[-1])
    now = _allocatable_now(objects, result)
    if args.output == "json":
        doc = {
            "schemaVersion": SCHEMA_VERSION,
            "expression": args.expression,
            "class": args.device_class,
            "engine": engine,
            "compileError": None,
            "summary": summary,
            "nearMisses": [
                {
                    "clause": nm.clause,
                    "product": nm.product,
                    "devices": nm.devices,
                    "values": nm.value_texts,
                    "suggestion": nm.suggestion(),
                }
                for nm in near
            ],
            "results": [r.to_json() for r in results],
            # Of the matches, how many the allocator could give a new request now, the others by what keeps them.
            "allocatableNow": {"matched": now[0], "now": now[1], "notNow": now[2]},
        }
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_text(args, summary, results, near, engine, len(newest_slices(slices)))
        if summary["matched"]:
            from dragoman.fleet.k8s.devicestate import availability_text

            sys.stdout.write(availability_text(*now) + "\n")
    if summary["errors"] or summary["matched"] == 0:
        return int(ExitCode.PROBLEM)
    return int(ExitCode.OK)


def _near_misses(result: Any, expression: str, label: str) -> tuple[list, list]:
    """The near misses of EXPR (devices its one clause alone leaves out, per product; cel_explain.near_misses) and the
    device results with those devices first among the non-matches, each saying its clause and its value."""
    from dragoman.fleet.cel.fleeteval import DeviceResult
    from dragoman.fleet.cel_explain import Explainer, near_misses, short_clause

    last = len(result.labels) - 1 if result.labels else 0
    index = result.index
    candidates = [
        g
        for g, o in enumerate(result.outcomes)
        if o is not None and o.error is None and o.value is False and result.failed_at[g] == last
    ]
    per_group: dict[int, list[tuple[str, int]]] = {}
    wanted = set(candidates)
    for (g, qid), n in index.tally(result.group_of).products:
        if g in wanted:
            per_group.setdefault(g, []).append((index.products[qid], n))
    near, misses = near_misses(expression, [(index.device(result.reps[g]), per_group.get(g, [])) for g in candidates])
    reason = {g: f"{label}{m.reason()}" for g, m in zip(candidates, misses) if m is not None}
    # The others: the first clause that was false, rather than "evaluated to false".
    ex = Explainer(expression)
    other: dict[int, str] = {}
    for g in candidates:
        if g not in reason and len(ex.clauses) > 1:
            clause = ex.first_false(index.device(result.reps[g]))
            if clause is not None:
                other[g] = f"{label}`{short_clause(clause.text)}` is false"
    results = result.results
    if not reason and not other:
        return near, results
    group_of = [g for g in result.group_of if result.outcomes[g] is not None]
    first, rest = [], []
    for r, g in zip(results, group_of):
        if g in reason:
            first.append(DeviceResult(r.driver, r.pool, r.device, r.node, r.result, reason[g]))
        elif g in other:
            rest.append(DeviceResult(r.driver, r.pool, r.device, r.node, r.result, other[g]))
        else:
            rest.append(r)
    return near, first + rest


def _report_compile_error(args: argparse.Namespace, expr: str, exc: Any, class_index: int | None) -> int:
    from dragoman.fleet.cel.engine import NOT_UTF8
    from dragoman.fleet.errors import NAME_SHOWN, ExitCode, printable

    where = (
        f"DeviceClass {printable(args.device_class, NAME_SHOWN)} selector #{class_index}"
        if class_index is not None
        else "the expression"
    )
    if args.output == "json":
        doc = {
            "schemaVersion": SCHEMA_VERSION,
            "expression": args.expression,
            "class": args.device_class,
            "engine": None,
            "compileError": {
                "message": exc.message,
                "line": exc.line,
                "column": exc.column,
                "kind": exc.kind,
                "selector": "expression" if class_index is None else f"class:{class_index}",
                # Every error cel-go's parser reports (the first is the fields above; 1-based columns), and the
                # whole text kube-apiserver puts after "compilation failed: ".
                "errors": [
                    {"line": i.line, "column": i.column + 1, "message": i.message}
                    if i.located
                    else {"line": None, "column": None, "message": i.message}
                    for i in exc.issues
                ]
                or [{"line": exc.line, "column": exc.column, "message": exc.message}],
                "apiServerText": exc.display(expr),
            },
            "summary": None,
            "results": [],
        }
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        pos = f" (line {exc.line}, column {exc.column})" if exc.line is not None else ""
        # The text is a person's (or a cluster's DeviceClass): its control characters are escaped, not sent to the
        # terminal; the JSON above keeps them as the API server's words.
        print(f"compile error in {where}{pos}: {printable(exc.message)}")
        caret = exc.caret(expr, terminal=True)
        if caret:
            print(caret)
        if len(exc.issues) > 1 or exc.truncated:
            # cel-go reports every error it recovers past; the API server's answer lists them all, in these words.
            print(f"All {len(exc.issues) + exc.truncated} errors, as the API server words them:")
            print(exc.display(expr, terminal=True))
        if exc.message == NOT_UTF8:
            # Not a selector the API server could judge: bytes that are no text never become one.
            print("Check the terminal's character set (locale): an expression is UTF-8 text.")
        else:
            print("The API server rejects a DeviceClass or ResourceClaim with this selector.")
    return int(ExitCode.PROBLEM)


def _allocatable_now(objects: list[dict], result) -> tuple[int, int, dict[str, int]]:
    """(matching devices, those the allocator could give now, the others by what keeps them) from the slices, claims
    and DeviceTaintRules read (a snapshot without claims: every match is free)."""
    from dragoman.fleet.k8s.devicestate import availability
    from dragoman.fleet.model import FleetModel

    model = FleetModel()
    model.load_list(o for o in objects if o.get("kind") in ("ResourceSlice", "ResourceClaim", "DeviceTaintRule"))
    matched = [(r.driver, r.pool, r.device) for r in result.results if r.result == "match"]
    return availability(model.device_states(), matched)


def _print_text(args: argparse.Namespace, summary: dict, results: list, near: list, engine: str, n_slices: int) -> None:
    from dragoman.fleet.errors import printable as p

    # Every text read from the expression, a DeviceClass, a ResourceSlice or a snapshot is shown through `p`: its
    # control characters escaped, so none can forge a line of this output or drive the terminal.
    limit = args.limit if args.limit > 0 else None
    out = sys.stdout.write
    out(f"expression: {p(args.expression)}\n")
    if args.device_class:
        out(f"combined with the selectors of DeviceClass {p(args.device_class)}\n")
    out(
        f"{summary['devices']} devices in {n_slices} ResourceSlices: {summary['matched']} match, "
        f"{summary['notMatched']} do not, {summary['errors']} failed "
        f"({summary['distinctEvaluations']} distinct evaluations, {engine} engine)\n"
    )
    if near:
        # First: what one clause alone leaves out is the most useful fact about a selector that matches too little.
        out("\nnear misses (one clause alone leaves them out):\n")
        shown_near = near if limit is None else near[:limit]
        for nm in shown_near:
            hint = nm.suggestion()
            out(f"  {p(nm.sentence())}" + (f" (write {p(hint)} to keep them)" if hint else "") + "\n")
        if len(shown_near) < len(near):
            out(f"  … and {len(near) - len(shown_near)} more\n")
    if summary["devices"]:
        out("\nby pool:\n")
        _table(
            out,
            [
                (f"{p['driver']}/{p['pool']}", p["node"] or "-", p["devices"], p["matched"], p["errors"])
                for p in summary["pools"]
            ],
            ("pool", "node", "devices", "matched", "errors"),
            limit,
        )
        out("\nby product:\n")
        _table(
            out,
            [(p["product"], p["devices"], p["matched"], p["errors"]) for p in summary["products"]],
            ("product", "devices", "matched", "errors"),
            limit,
        )
    for title, kind in (("matches", "match"), ("non-matches, near misses first", "no-match"), ("errors", "error")):
        rows = [r for r in results if r.result == kind]
        if not rows:
            continue
        out(f"\n{title} ({len(rows)}):\n")
        shown = rows if limit is None else rows[:limit]
        for r in shown:
            node = f" on {p(r.node)}" if r.node else ""
            reason = f": {p(r.reason)}" if r.reason else ""
            out(f"  {p(r.driver)}/{p(r.pool)}/{p(r.device)}{node}{reason}\n")
        if len(shown) < len(rows):
            out(f"  … and {len(rows) - len(shown)} more (--limit 0 lists all, --output json gives every device)\n")
    if summary["errors"]:
        out(
            f"\n{summary['errors']} devices failed with a CEL runtime error. The scheduler treats this as "
            "an error, not as "
            "'no match': it aborts scheduling of every pod whose claim uses this selector and retries with backoff. "
            'Guard with `device.driver == "..." &&` or use optional chaining '
            '(device.attributes["domain"].?attr.orValue(default)).\n'
        )
    elif summary["matched"] == 0:
        out("\nno device matches: pods using this selector stay Pending (cannot allocate all claims).\n")


def _table(out: Any, rows: list[tuple], header: tuple, limit: int | None) -> None:
    shown = rows if limit is None else rows[:limit]
    from dragoman.fleet.errors import printable

    cells = [tuple(str(c) for c in header)] + [tuple(printable(str(c)) for c in r) for r in shown]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for r in cells:
        out(
            "  "
            + "  ".join(
                c.ljust(w) if i == 0 or not c.isdigit() else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))
            ).rstrip()
            + "\n"
        )
    if len(shown) < len(rows):
        out(f"  … and {len(rows) - len(shown)} more\n")
