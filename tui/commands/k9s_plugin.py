"""`dragoman k9s-plugin`: the k9s plugin definition shipped with dragoman (tui/k9s_plugins.yaml), printed with its
`command` pointing at this dragoman, ready for k9s' plugins folder."""

from __future__ import annotations

import argparse
import os
import sys

PLUGINS_FILE = "k9s_plugins.yaml"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "k9s-plugin",
        help="print the k9s plugin definition (Shift-E explains the selected pod, node or ResourceClaim)",
        description="Print dragoman's k9s plugins (plugins.yaml format): Shift-E on a pod, a node or a ResourceClaim "
        "runs `dragoman explain` on it with k9s' context and kubeconfig and pages the answer. Install with: "
        'dragoman k9s-plugin > "${XDG_CONFIG_HOME:-$HOME/.config}/k9s/plugins/dragoman.yaml"',
    )
    p.add_argument(
        "--command",
        metavar="PATH",
        help="the dragoman k9s runs (default: this one, by absolute path, so a virtualenv need not be on PATH)",
    )
    p.set_defaults(handler=run)


def shipped_text() -> str:
    """The definition as shipped in the package (its `command` is plain `dragoman`)."""
    from importlib.resources import files

    return files("dragoman.tui").joinpath(PLUGINS_FILE).read_text(encoding="utf-8")


def this_dragoman() -> str:
    """This dragoman's executable: the `dragoman` script beside the running interpreter (a venv's, pipx's), else the
    plain name for PATH to find."""
    beside = os.path.join(os.path.dirname(sys.executable), "dragoman")
    return beside if os.access(beside, os.X_OK) else "dragoman"


def plugins_text(command: str) -> str:
    """The shipped definition with every `command:` set to `command` (quoted as YAML, so any path survives)."""
    import json

    return "".join(
        f"    command: {json.dumps(command)}\n" if line == "    command: dragoman\n" else line
        for line in shipped_text().splitlines(keepends=True)
    )


def run(args: argparse.Namespace) -> int:
    from dragoman.fleet.errors import ExitCode, UserError

    command = args.command or this_dragoman()
    if not command.strip() or "\n" in command:
        raise UserError("--command must be the path of a dragoman executable.", ExitCode.INPUT)
    sys.stdout.write(plugins_text(command))
    sys.stdout.flush()
    return int(ExitCode.OK)
