"""The simulator's request log: one record per HTTP request (method, path, user, verb, resource, status), for tests."""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterator


@dataclasses.dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: str
    user: str
    verb: str
    resource: str  # store key ("pods", "daemonsets.apps"); "" for non-resource paths
    subresource: str
    namespace: str
    name: str
    status: int
    user_agent: str = ""
    dry_run: bool = False
    lost_answer: bool = False  # the write was made, then answered 500 (an injected fault)

    @property
    def made(self) -> bool:
        """Whether the request did what it asked, whatever the client was told."""
        return self.status < 300 or self.lost_answer

    @property
    def is_write(self) -> bool:
        """A request that would change the cluster (dry-run ones do not)."""
        return (
            self.method in ("POST", "PUT", "PATCH", "DELETE")
            and not self.dry_run
            and self.resource != "selfsubjectaccessreviews.authorization.k8s.io"
        )


class RequestLog:
    """The last `maxlen` requests, oldest first."""

    def __init__(self, maxlen: int = 100_000) -> None:
        self._records: collections.deque[Request] = collections.deque(maxlen=maxlen)

    def add(self, record: Request) -> None:
        self._records.append(record)

    @property
    def records(self) -> list[Request]:
        return list(self._records)

    def __iter__(self) -> Iterator[Request]:
        return iter(list(self._records))

    def __len__(self) -> int:
        return len(self._records)

    def clear(self) -> None:
        self._records.clear()

    def writes(self) -> list[Request]:
        """Requests that changed (or tried to change) the cluster."""
        return [r for r in self._records if r.is_write]

    def find(
        self, method: str | None = None, path_contains: str = "", user: str | None = None, status: int | None = None
    ) -> list[Request]:
        return [
            r
            for r in self._records
            if (method is None or r.method == method)
            and path_contains in r.path
            and (user is None or r.user == user)
            and (status is None or r.status == status)
        ]
