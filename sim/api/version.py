"""The Kubernetes release the simulator answers as: the one the real control plane that judges it is built from
(sim/controlplane/build.py's KUBE_VERSION; tests/sim/test_version.py keeps the two equal)."""

from __future__ import annotations

GIT_VERSION = "v1.37.2"
MAJOR, MINOR = GIT_VERSION[1:].split(".")[:2]
