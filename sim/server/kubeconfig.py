"""The kubeconfig a run hands its clients: one context per user, the run's certificate as the authority."""

from __future__ import annotations

import base64
import os
import pathlib
from typing import Any

import yaml
from dragoman.sim.server.users import ADMIN


class KubeconfigMixin:
    """kubeconfig() and write_kubeconfig() over the simulator's users, URL and certificate."""

    def kubeconfig(self, user: str | None = None) -> dict:
        """A kubeconfig with one context per user (`dragoman-sim` for the admin, `dragoman-sim-<user>` for others);
        the current context is `user`'s (the admin's by default)."""
        cluster = "dragoman-sim"
        # The run's own certificate is the authority: clients verify the simulator (no insecure-skip-tls-verify).
        cluster_entry: dict[str, Any] = {
            "server": self.url,
            "certificate-authority-data": base64.b64encode(self.certificate.cert_pem).decode(),
        }
        contexts, users = [], []
        for u in self.users.values():
            ctx = cluster if u.name == ADMIN else f"{cluster}-{u.name}"
            contexts.append({"name": ctx, "context": {"cluster": cluster, "user": u.name, "namespace": "default"}})
            users.append({"name": u.name, "user": {"token": u.token}})
        current = cluster if (user or ADMIN) == ADMIN else f"{cluster}-{user}"
        if user and user not in self.users:
            raise KeyError(user)
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "preferences": {},
            "clusters": [{"name": cluster, "cluster": cluster_entry}],
            "contexts": contexts,
            "users": users,
            "current-context": current,
        }

    def write_kubeconfig(self, path: str | os.PathLike, user: str | None = None, *, make_folder: bool = True) -> None:
        """The kubeconfig (it carries this run's tokens): 0600, renamed into place, never over a device, FIFO,
        folder or link (fleet/safefile.py, the one home for such writes). `make_folder=False`: a folder that is gone
        stays gone (FileNotFoundError), as the demo's child needs when its parent gave the run up and removed it."""
        from dragoman.fleet.safefile import write_atomic

        p = pathlib.Path(path)
        if make_folder:
            p.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(str(p), lambda f: yaml.safe_dump(self.kubeconfig(user), f, sort_keys=False), "the kubeconfig")
