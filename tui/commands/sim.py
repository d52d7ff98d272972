"""`dragoman sim serve`: the embedded cluster on loopback."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sim", help="the embedded simulated cluster")
    simsub = p.add_subparsers(dest="sim_command", metavar="SUBCOMMAND", required=True)
    serve = simsub.add_parser("serve", help="serve the Kubernetes API on loopback")
    serve.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    from dragoman.fleet.errors import UserError

    raise UserError("`dragoman sim serve` is being built.")
