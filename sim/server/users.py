"""Who can call the simulator: users with bearer tokens, the admin, and the anonymous user."""

from __future__ import annotations

import dataclasses
import secrets


def new_token() -> str:
    """A bearer token for one run: 256 random bits, so no two runs (and no shipped scenario) share one."""
    return secrets.token_urlsafe(32)


@dataclasses.dataclass
class User:
    """A user the scenario defines: a bearer token and groups (RBAC decides the rest)."""

    name: str
    token: str
    groups: tuple[str, ...] = ()

    @property
    def all_groups(self) -> list[str]:
        if self.name == "system:anonymous":
            return list(self.groups)
        return [*self.groups, "system:authenticated"]


ADMIN = "admin"
# Who a request without credentials is, as the real server names it (--anonymous-auth).
ANONYMOUS = User("system:anonymous", "", ("system:unauthenticated",))
