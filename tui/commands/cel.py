"""`dragoman cel`: evaluate a DRA CEL selector against the devices of a file or cluster."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cel", help="evaluate a CEL device selector against ResourceSlices")
    p.add_argument("expression", metavar="EXPR")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from dragoman.fleet.errors import UserError

    raise UserError("`dragoman cel` is being built.")
