"""Serving HTTPS on loopback only: the address check and the listening socket with the run's certificate."""

from __future__ import annotations

import ipaddress
from typing import Any

from aiohttp import web
from dragoman.fleet.errors import ExitCode, UserError


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def listen(app: web.Application, host: str, port: int, certificate: Any) -> tuple[web.AppRunner, int]:
    """Serve `app` over HTTPS with the run's certificate on a loopback `host`; the runner and the bound port."""
    if not _is_loopback(host):
        raise UserError(
            f"the simulator serves only on loopback; {host} is not a loopback address (use 127.0.0.1 or ::1).",
            ExitCode.INPUT,
        )
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    ssl_ctx = certificate.server_context()
    site = web.TCPSite(runner, host, port, ssl_context=ssl_ctx, backlog=1024)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}.", ExitCode.INPUT) from None
    sock = site._server.sockets[0]  # type: ignore[union-attr]
    return runner, sock.getsockname()[1]
