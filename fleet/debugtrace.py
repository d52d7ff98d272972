"""The `--debug` request trace for support: one line per API request (method, path, status, time), credentials never
written."""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Mapping
from typing import IO, Any

from dragoman.fleet.errors import printable

_out: IO[str] | None = None
_owned = False  # whether _out is a file this module opened (and so closes)
_lock = threading.Lock()
_started = time.monotonic()

# Query parameters whose values could carry a secret (kubectl never sends these, but a proxy or a plugin might).
_SECRET_QUERY = re.compile(r"(token|password|secret|key|auth|credential|signature)", re.IGNORECASE)
# Anything that looks like a bearer token, a JWT or PEM material, should it ever reach a trace line.
_SECRET_TEXT = re.compile(
    r"(Bearer|Basic|--token[= ]|--password[= "
    r"])\s*[A-Za-z0-9._~+/=-]+|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*|-----BEGIN [A-Z "
    r"]+-----[^-]*-----END [A-Z ]+-----",
)
# `scheme://user:password@host`: the userinfo of a URL (a server or proxy address may carry a password).
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]*@")


def redact_url(url: str) -> str:
    """`url` with any userinfo replaced: `https://<redacted>@host`; how every shown or recorded address is written."""
    return _USERINFO.sub(lambda m: m.group("scheme") + "<redacted>@", url)


def enable(target: str | IO[str] = "-") -> None:
    """Trace every request from now on to stderr ("-"), a file path (appended) or an open text stream."""
    global _out, _owned
    _owned = isinstance(target, str) and target != "-"
    if isinstance(target, str):
        if target == "-":
            _out = sys.stderr
        else:
            from dragoman.fleet.safefile import open_append

            # A regular file only (never /dev/full, a FIFO or a link elsewhere), 0600: the trace names the cluster.
            _out = open(open_append(target, "the debug trace"), "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - lives until exit
    else:
        _out = target


def disable() -> None:
    global _out, _owned
    out, _out = _out, None
    if out is not None and _owned:
        out.close()
    _owned = False


def enabled() -> bool:
    return _out is not None


def redact(text: str) -> str:
    """`text` with bearer tokens, JWTs and PEM blocks replaced by <redacted>."""
    text = _SECRET_TEXT.sub(lambda m: (m.group(1).rstrip("= ") + " <redacted>") if m.group(1) else "<redacted>", text)
    return redact_url(text) if "@" in text else text


def _query_text(query: Any) -> str:
    pairs = query.items() if isinstance(query, Mapping) else (query or [])
    parts = []
    for k, v in pairs:
        if v is None:
            continue
        value = "<redacted>" if _SECRET_QUERY.search(str(k)) else str(v)
        if k == "continue" and len(value) > 12:
            value = value[:12] + "…"
        parts.append(f"{k}={value}")
    return ("?" + "&".join(parts)) if parts else ""


def auth_kind(headers: Mapping[str, str] | None, client_cert: bool) -> str:
    """How the request authenticated, in one word, never with the credential itself."""
    value = next((v for k, v in (headers or {}).items() if k.lower() == "authorization"), "")
    scheme = value.split(" ", 1)[0].lower() if value else ""
    kinds = [scheme] if scheme else []
    if client_cert:
        kinds.append("client-cert")
    return "+".join(kinds) or "none"


def record(method: str, path: str, query: Any, status: int | str, seconds: float, *, auth: str = "") -> None:
    """Write one trace line (when enabled): time since start, method, path and query, status, milliseconds, auth
    kind."""
    out = _out
    if out is None:
        return
    line = (
        f"[{time.monotonic() - _started:9.3f}] {method} {path}{_query_text(query)} -> {status} in "
        f"{seconds * 1000:.0f} ms"
    )
    if auth:
        line += f" (auth: {auth})"
    with _lock:
        try:
            out.write(printable(redact(line)) + "\n")
            out.flush()
        except (OSError, ValueError):
            pass  # a trace that cannot be written must not stop the command
