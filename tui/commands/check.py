"""`dragoman check`: the fleet's pools and every finding, read once from a cluster, a snapshot or the demo; exit 1 on an
error."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap

_COUNTS = {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}
_NAME_OR_NULL = {"type": ["string", "null"]}

# The documented shape of `dragoman check --output json` (JSON Schema draft 2020-12). Fields may be added within a
# schemaVersion; a removal or a change of meaning bumps it.
CHECK_JSON_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "dragoman check",
    "type": "object",
    "required": ["schemaVersion", "source", "notes", "poolLabel", "summary", "pools", "findings"],
    "properties": {
        "schemaVersion": {"const": 1},
        "source": {
            "type": "object",
            "required": [
                "type",
                "snapshot",
                "context",
                "server",
                "serverVersion",
                "resourceApiVersions",
                "forbiddenKinds",
            ],
            "properties": {
                "type": {"enum": ["cluster", "snapshot", "demo"]},
                "snapshot": _NAME_OR_NULL,
                "context": _NAME_OR_NULL,
                "server": _NAME_OR_NULL,
                "serverVersion": _NAME_OR_NULL,
                "resourceApiVersions": {"type": "array", "items": {"type": "string"}},
                "forbiddenKinds": {"type": "array", "items": {"type": "string"}},
            },
        },
        "notes": {"type": "array", "items": {"type": "string"}},
        "poolLabel": _NAME_OR_NULL,
        "summary": {
            "type": "object",
            "required": [
                "pools",
                "nodes",
                "gpuNodes",
                "allocatableGpus",
                "devices",
                "devicesFree",
                "errors",
                "warnings",
                "info",
            ],
            "properties": {
                k: {"type": "integer", "minimum": 0}
                for k in (
                    "pools",
                    "nodes",
                    "gpuNodes",
                    "allocatableGpus",
                    "devices",
                    "devicesFree",
                    "errors",
                    "warnings",
                    "info",
                )
            },
        },
        "pools": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "name",
                    "nodes",
                    "gpuNodes",
                    "ownership",
                    "ownershipCounts",
                    "target",
                    "gpuModels",
                    "allocatableGpus",
                    "capacityGpus",
                    "devices",
                    "devicesFree",
                    "kubeletVersions",
                    "sharing",
                    "migration",
                    "cordonedNodes",
                ],
                "properties": {
                    "name": {"type": "string"},
                    "nodes": {"type": "integer", "minimum": 0},
                    "gpuNodes": {"type": "integer", "minimum": 0},
                    "ownership": {"enum": ["device-plugin", "dra", "both", "none", "flapping", "migrating", "mixed"]},
                    "ownershipCounts": _COUNTS,
                    "target": {"enum": ["device-plugin", "dra", None]},
                    "gpuModels": _COUNTS,
                    "allocatableGpus": {"type": "integer", "minimum": 0},
                    "capacityGpus": {"type": "integer", "minimum": 0},
                    "devices": {"type": "integer", "minimum": 0},
                    "devicesFree": {"type": "integer", "minimum": 0},
                    "kubeletVersions": _COUNTS,
                    "sharing": _COUNTS,
                    "migration": _COUNTS,
                    "cordonedNodes": {"type": "integer", "minimum": 0},
                },
            },
        },
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "severity", "title", "pool", "objects", "summary", "evidence", "fix"],
                "properties": {
                    "id": {"type": "string"},
                    "severity": {"enum": ["error", "warning", "info"]},
                    "title": {"type": "string"},
                    "pool": _NAME_OR_NULL,
                    "objects": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["kind", "namespace", "name"],
                            "properties": {
                                "kind": {"type": "string"},
                                "namespace": _NAME_OR_NULL,
                                "name": {"type": "string"},
                            },
                        },
                    },
                    "summary": {"type": "string"},
                    "evidence": {"type": "array", "items": {"type": "string"}},
                    "fix": {"type": "string"},
                },
            },
        },
    },
}


def register(sub: argparse._SubParsersAction) -> None:
    from dragoman.tui.cli import add_output_flag
    from dragoman.tui.headless import add_source_flags

    p = sub.add_parser(
        "check",
        help="print the fleet's pools and every finding (exit 1 on an error)",
        description="Read the fleet once (a cluster through the kubeconfig, a snapshot file, or the demo simulator), "
        "then print its GPU pools with which mechanism serves them, and every finding with its evidence and fix. "
        "Exit 0: no error-severity finding; 1: at least one; 2: the fleet could not be read.",
    )
    add_source_flags(p)
    p.add_argument(
        "--pool-label",
        metavar="KEY",
        default=argparse.SUPPRESS,
        help="node label that defines pools (auto-detected when absent)",
    )
    add_output_flag(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from dragoman.fleet.diagnose import diagnose
    from dragoman.fleet.errors import ExitCode
    from dragoman.fleet.findings import ERROR
    from dragoman.fleet.model import FleetModel
    from dragoman.tui.headless import read_from_args

    # The pods the diagnosis reads, projected as the TUI's live store keeps them: decoded at a third of the cost.
    origin = read_from_args(args, project=True)
    store = origin.source.store
    model = FleetModel(getattr(args, "pool_label", None))
    model.load_store(store)
    findings = diagnose(model)
    rules = prometheus_rules(args, origin)
    if args.output == "json":
        json.dump(check_document(model, findings, origin, rules), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        from dragoman.fleet.errors import printable

        # Names and messages come from servers and files: each line escaped, so none can forge lines or drive the
        # terminal.
        sys.stdout.write(
            "\n".join(printable(line) for line in check_text(model, findings, origin, rules=rules).split("\n"))
        )
    sys.stdout.flush()
    return int(ExitCode.PROBLEM if any(f.severity == ERROR for f in findings) else ExitCode.OK)


def prometheus_rules(args: argparse.Namespace, origin) -> tuple[list[dict] | None, str]:
    """PrometheusRules for the accounting section: from the snapshot file, the demo scenario, or the cluster (read
    again, since the fleet read closed its connection); (None, why) when there are none to read."""
    from dragoman.fleet import accounting
    from dragoman.fleet.errors import UserError

    try:
        if origin.kind == "snapshot":
            from dragoman.fleet.snapshot import load_snapshot

            if origin.source.snapshot == "-":
                return None, "standard input is read once"
            found = accounting.rules_in(load_snapshot(origin.source.snapshot))
            return (found, "") if found else (None, "the snapshot holds no PrometheusRule")
        if origin.kind == "demo" and origin.rules is not None:
            return origin.rules, ""
        if origin.kind == "demo":
            from dragoman.sim import scenario

            return accounting.rules_in(scenario.load("demo").objects), ""
        import asyncio

        return asyncio.run(
            accounting.read_cluster_rules(getattr(args, "kubeconfig", None), getattr(args, "context", None))
        )
    except UserError as exc:
        return None, exc.message


def check_document(model, findings, origin, rules: tuple[list[dict] | None, str] = (None, "")) -> dict:
    """The JSON of `dragoman check --output json`: the report (schemaVersion 1) with where it was read and what is
    missing."""
    from dragoman.fleet.report import check_report

    report = check_report(model, findings, rules=rules[0], rules_note=rules[1])
    return {"schemaVersion": report.pop("schemaVersion"), "source": origin.to_json(), "notes": origin.notes(), **report}


def terminal_width() -> int:
    return max(60, min(shutil.get_terminal_size((80, 24)).columns, 120))


def check_text(
    model, findings, origin, width: int | None = None, rules: tuple[list[dict] | None, str] = (None, "")
) -> str:
    """The text of `dragoman check`: where the fleet was read, what is missing from it, then pools and findings."""
    from dragoman.fleet.report import render_text

    width = width or terminal_width()

    def wrap(text: str, indent: str = "") -> list[str]:
        return textwrap.wrap(
            text, width, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False
        )

    lines = wrap(f"Fleet read from {origin.label}.")
    for note in origin.notes():
        lines += wrap(f"note: {note}")
    return "\n".join(lines) + "\n\n" + render_text(model, findings, width=width, rules=rules[0], rules_note=rules[1])
