"""The local audit log: JSON lines, an intent record before each write and an outcome record after it."""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import uuid
from collections.abc import Iterator
from typing import Any

from dragoman.fleet.debugtrace import redact
from dragoman.fleet.k8s.times import format_micro_time

# Keys that never reach the log, whatever a caller passes (a Secret's data, a token in a kubeconfig...).
_SECRET_KEYS = {
    "token",
    "password",
    "client-key-data",
    "client-certificate-data",
    "stringdata",
    "authorization",
    "bearer",
}


def default_path() -> pathlib.Path:
    """$XDG_STATE_HOME/dragoman/audit.jsonl (default ~/.local/state/dragoman/audit.jsonl)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return pathlib.Path(base) / "dragoman" / "audit.jsonl"


def now() -> str:
    return format_micro_time(dt.datetime.now(dt.UTC))


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("<redacted>" if k.lower() in _SECRET_KEYS else _scrub(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, str) and (
        "Bearer" in value
        or "Basic" in value
        or "--token" in value
        or "--password" in value
        or "eyJ" in value
        or "-----BEGIN" in value
    ):
        return redact(value)  # a kubectl command or a message that quotes a credential
    return value


class AuditLog:
    """Appends records to one JSON-lines file (fsync'd, so a crash right after a write still finds its intent)."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        user: dict | None = None,
        context: str = "",
        cluster: dict | None = None,
    ) -> None:
        self.path = pathlib.Path(path) if path else default_path()
        self.user = user or {}
        self.context = context
        self.cluster = cluster or {}

    def _append(self, record: dict) -> None:
        from dragoman.fleet.safefile import open_append

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            from dragoman.fleet.errors import ExitCode, UserError

            raise UserError(
                f"cannot write the audit log to {self.path} ({exc.strerror or exc}).", ExitCode.INPUT
            ) from None
        line = json.dumps(_scrub(record), sort_keys=False, separators=(",", ":"))
        # A regular file only, never through a link; 0600 even when it existed with another mode (README's promise).
        fd = open_append(str(self.path), "the audit log")
        try:
            os.write(fd, (line + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def _base(self, kind: str, write_id: str, plan_id: str, step: str, obj: dict) -> dict:
        return {
            "time": now(),
            "record": kind,
            "writeId": write_id,
            "planId": plan_id,
            "step": step,
            "user": self.user,
            "context": self.context,
            "cluster": self.cluster,
            "object": obj,
        }

    def intent(
        self,
        *,
        write_id: str | None = None,
        key: str,
        plan_id: str,
        step: str,
        obj: dict,
        verb: str,
        before: Any,
        after: Any,
        command: str = "",
    ) -> str:
        """Record that a write is about to be made; returns its write id (pass it to outcome)."""
        write_id = write_id or uuid.uuid4().hex[:16]
        rec = self._base("intent", write_id, plan_id, step, obj)
        rec.update(key=key, verb=verb, before=before, after=after, command=command)
        self._append(rec)
        return write_id

    def outcome(
        self,
        write_id: str,
        *,
        key: str,
        plan_id: str,
        step: str,
        obj: dict,
        result: str,
        after: Any = None,
        message: str = "",
        observed_on_resume: bool = False,
    ) -> None:
        rec = self._base("outcome", write_id, plan_id, step, obj)
        rec.update(key=key, result=result, after=after, message=message)
        if observed_on_resume:
            rec["observedOnResume"] = True
        self._append(rec)

    def note(self, *, plan_id: str, step: str, message: str, **extra: Any) -> None:
        """A record that is not a write (a lock taken over, a run refused)."""
        rec = {
            "time": now(),
            "record": "note",
            "planId": plan_id,
            "step": step,
            "user": self.user,
            "context": self.context,
            "cluster": self.cluster,
            "message": message,
            **extra,
        }
        self._append(rec)

    def records(self) -> Iterator[dict]:
        from dragoman.fleet.safefile import open_read_regular

        # `--audit-log /dev/zero` once read zeros until 13 GB: only a regular file is read.
        fd = open_read_regular(str(self.path), "the audit log")
        if fd is None:
            return
        with open(fd, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except ValueError:
                    continue  # a line torn by a crash mid-write

    def dangling(self, *, cluster_uid: str | None = None, pool: str | None = None) -> dict[str, dict]:
        """Intents without an outcome, by write key: writes a crash may or may not have made."""
        open_: dict[str, dict] = {}
        for rec in self.records():
            if cluster_uid is not None and (rec.get("cluster") or {}).get("kubeSystemUID") != cluster_uid:
                continue
            if pool is not None and (rec.get("object") or {}).get("pool", pool) != pool:
                continue
            if rec.get("record") == "intent":
                open_[rec["key"]] = rec
            elif rec.get("record") == "outcome":
                found = open_.get(rec.get("key", ""))
                if found and found.get("writeId") == rec.get("writeId"):
                    del open_[rec["key"]]
        return open_
