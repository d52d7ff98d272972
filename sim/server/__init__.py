"""The simulated Kubernetes API server, one module per job.

- simulator.py: the Simulator (state, lifecycle, controllers), composed of the mixins below
- routing.py: a request to a Route and a verb, then the handler (health, discovery, faults, the request log)
- users.py / auth.py: users and tokens; RBAC checks and the review kinds
- discovery.py: /version, /api, /apis, resource lists, OpenAPI
- crud.py: get, list, create, update, patch, delete; watch.py: WATCH streams
- subresources.py: pods/log, scale, pods/binding, pods/eviction, serviceaccounts/token
- wire.py: content types, Accept negotiation, request bodies; tls.py: loopback-only HTTPS
- bootstrap.py: what every cluster holds first; kubeconfig.py: the run's kubeconfig; metrics.py: /metrics
- the PodDisruptionBudget status controller lives in sim/controllers/disruption.py
"""

from __future__ import annotations

from dragoman.sim.server.bootstrap import crd_for
from dragoman.sim.server.crud import validate_list_options
from dragoman.sim.server.discovery import SERVER_VERSION
from dragoman.sim.server.routing import Route
from dragoman.sim.server.simulator import Simulator
from dragoman.sim.server.tls import _is_loopback
from dragoman.sim.server.users import ADMIN, ANONYMOUS, User, new_token
from dragoman.sim.server.wire import negotiate

__all__ = [
    "ADMIN",
    "ANONYMOUS",
    "SERVER_VERSION",
    "Route",
    "Simulator",
    "User",
    "_is_loopback",
    "crd_for",
    "negotiate",
    "new_token",
    "validate_list_options",
]
