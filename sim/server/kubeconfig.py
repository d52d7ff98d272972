"""The kubeconfig a run hands its clients: one context per user, the run's certificate as the authority."""

from __future__ import annotations

import base64
import os
import pathlib
from collections.abc import Mapping
from typing import Any

import yaml
from dragoman.sim.server.users import ADMIN


def users_kubeconfig(cluster: str, server: str, ca_pem: bytes, users: Mapping[str, Any], user: str | None) -> dict:
    """A kubeconfig for one API server and its token users (the simulator's and the real control plane's runs): one
    context per user, `cluster` for the admin and `<cluster>-<user>` for the others, the current one `user`'s (the
    admin's by default; KeyError for a user it does not have). `ca_pem` is the authority clients verify."""
    if user and user not in users:
        raise KeyError(user)
    contexts, entries = [], []
    for u in users.values():
        ctx = cluster if u.name == ADMIN else f"{cluster}-{u.name}"
        contexts.append({"name": ctx, "context": {"cluster": cluster, "user": u.name, "namespace": "default"}})
        entries.append({"name": u.name, "user": {"token": u.token}})
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [
            {
                "name": cluster,
                "cluster": {"server": server, "certificate-authority-data": base64.b64encode(ca_pem).decode()},
            }
        ],
        "contexts": contexts,
        "users": entries,
        "current-context": cluster if (user or ADMIN) == ADMIN else f"{cluster}-{user}",
    }


class KubeconfigMixin:
    """kubeconfig() and write_kubeconfig() over the simulator's users, URL and certificate."""

    def kubeconfig(self, user: str | None = None) -> dict:
        """A kubeconfig with one context per user (`dragoman-sim` for the admin, `dragoman-sim-<user>` for others);
        the current context is `user`'s (the admin's by default)."""
        # The run's own certificate is the authority: clients verify the simulator (no insecure-skip-tls-verify).
        return users_kubeconfig("dragoman-sim", self.url, self.certificate.cert_pem, self.users, user)

    def write_kubeconfig(self, path: str | os.PathLike, user: str | None = None, *, make_folder: bool = True) -> None:
        """The kubeconfig (it carries this run's tokens): 0600, renamed into place, never over a device, FIFO,
        folder or link (fleet/safefile.py, the one home for such writes). `make_folder=False`: a folder that is gone
        stays gone (FileNotFoundError), as the demo's child needs when its parent gave the run up and removed it."""
        from dragoman.fleet.safefile import write_atomic

        p = pathlib.Path(path)
        if make_folder:
            p.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(str(p), lambda f: yaml.safe_dump(self.kubeconfig(user), f, sort_keys=False), "the kubeconfig")
