"""`dragoman explain KIND NAME`: one object's describe page, findings first — the text of the TUI's `d` page, headless
(for scripts, `kubectl dragoman explain`, and the k9s plugin `dragoman k9s-plugin` prints)."""

from __future__ import annotations

import argparse
import json
import sys

# kubectl's names and short names of the kinds a describe page exists for (widgets/detail.py), to the model's kind.
EXPLAINED_KINDS = {
    "pod": "Pod",
    "pods": "Pod",
    "po": "Pod",
    "node": "Node",
    "nodes": "Node",
    "no": "Node",
    "resourceclaim": "ResourceClaim",
    "resourceclaims": "ResourceClaim",
    "claim": "ResourceClaim",
    "deviceclass": "DeviceClass",
    "deviceclasses": "DeviceClass",
    "resourceslice": "ResourceSlice",
    "resourceslices": "ResourceSlice",
    "pool": "Pool",
}
NAMESPACED = {"Pod", "ResourceClaim"}


def register(sub: argparse._SubParsersAction) -> None:
    from dragoman.tui.cli import add_output_flag
    from dragoman.tui.headless import add_source_flags

    p = sub.add_parser(
        "explain",
        help="print one pod's, node's or ResourceClaim's findings and describe page (the TUI's `d`)",
        description="Read the fleet once and print one object's describe page as the TUI shows it: dragoman's "
        "findings about it first (what is wrong, the evidence, the fix), then what it is linked to. KIND: pod, node, "
        "resourceclaim (also deviceclass, resourceslice, pool). NAME: NAMESPACE/NAME for pods and claims (or -n). "
        "Exit 0: nothing of error severity about it; 1: an error finding names it; 2: it is not in the fleet, or "
        "the fleet could not be read.",
    )
    p.add_argument("kind", metavar="KIND", help="pod, node or resourceclaim (kubectl's short names work: po, no)")
    p.add_argument("name", metavar="NAME", help="NAMESPACE/NAME for pods and claims, NAME for nodes")
    p.add_argument("--namespace", "-n", metavar="NS", help="the namespace when NAME has none (default: default)")
    add_source_flags(p)
    p.add_argument(
        "--pool-label",
        metavar="KEY",
        default=argparse.SUPPRESS,
        help="node label that defines pools (auto-detected when absent)",
    )
    p.add_argument(
        "--pager",
        action="store_true",
        help="page the text (less, or $PAGER) when the output is a terminal: k9s clears the screen when a plugin ends",
    )
    add_output_flag(p)
    p.set_defaults(handler=run)


def parse_ref(kind: str, name: str, namespace: str | None) -> tuple[str, str, str]:
    """(Kind, namespace, name) of the command line's KIND and NAME, or a UserError saying what is accepted."""
    from dragoman.fleet.errors import ExitCode, UserError, printable

    k = EXPLAINED_KINDS.get(kind.lower())
    if k is None:
        raise UserError(
            f"explain: {printable(kind, 60)!r} is not a kind dragoman explains; give pod, node or resourceclaim "
            "(or deviceclass, resourceslice, pool).",
            ExitCode.INPUT,
        )
    ns, sep, short = name.rpartition("/")
    if k not in NAMESPACED:
        if sep:
            raise UserError(f"explain: a {k} has no namespace; give its name alone, not {printable(name, 100)!r}.")
        return (k, "", name)
    if sep and namespace and ns != namespace:
        raise UserError(
            f"explain: {printable(name, 100)!r} names namespace {printable(ns, 60)!r} but -n says "
            f"{printable(namespace, 60)!r}; give one.",
            ExitCode.INPUT,
        )
    ns = ns if sep else (namespace or "default")
    if not ns or not short or "/" in ns:
        raise UserError(f"explain: give a {k} as NAMESPACE/NAME, not {printable(name, 100)!r}.", ExitCode.INPUT)
    return (k, ns, short)


def run(args: argparse.Namespace) -> int:
    from dragoman.fleet.diagnose import diagnose
    from dragoman.fleet.errors import ExitCode, UserError, printable
    from dragoman.fleet.findings import ERROR
    from dragoman.fleet.model import FleetModel
    from dragoman.fleet.views.base import Fleet
    from dragoman.tui.headless import read_from_args
    from dragoman.widgets.detail import describe, raw_object

    ref = parse_ref(args.kind, args.name, args.namespace)
    origin = read_from_args(args)
    store = origin.source.store
    model = FleetModel(getattr(args, "pool_label", None))
    model.load_store(store)
    fleet = Fleet(model)
    fleet.set_findings(diagnose(model))
    shown = f"{ref[0]} {ref[1] + '/' if ref[1] else ''}{ref[2]}"
    if raw_object(model, ref, fleet) is None:
        raise UserError(
            f"{printable(shown, 200)} is not in the fleet read from {origin.label}"
            + (" (is the name right?)." if ref[0] != "Pod" else "."),
            ExitCode.INPUT,
        )
    page = describe(fleet, ref)
    mine = [f for f in fleet.findings if tuple(ref) in [tuple(o) for o in f.objects]]
    if args.output == "json":
        doc = {
            "schemaVersion": 1,
            "object": {"kind": ref[0], "namespace": ref[1] or None, "name": ref[2]},
            "source": origin.to_json(),
            "title": page.title,
            "findings": [f.to_json() for f in mine],
            "sections": [{"name": n, "lines": lines} for n, lines in page.sections],
            "links": [
                {"label": label, "kind": r[0], "namespace": r[1] or None, "name": r[2]} for label, r in page.links
            ],
        }
        text = json.dumps(doc, indent=2) + "\n"
    else:
        # The describe page's own heading and text (tui/screens/detail.py draws the same two); names and messages come
        # from the cluster, so each line is escaped.
        body = f"Describe {page.title}\n" + page.text().split("\n", 1)[1]
        text = "\n".join(printable(line) for line in body.rstrip("\n").split("\n")) + "\n"
    if args.pager and args.output == "text" and sys.stdout.isatty():
        import pydoc

        pydoc.pager(text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return int(ExitCode.PROBLEM if any(f.severity == ERROR for f in mine) else ExitCode.OK)
