"""One real control plane for the whole control-plane suite (it takes a minute or two to come up and settle):
test_differential.py runs first (file order) and removes what it added; test_real_demo.py's flows follow."""

from __future__ import annotations

import os
import pathlib

import pytest

from tests.controlplane.support import Served, real_served


@pytest.fixture(scope="session")
def real(tmp_path_factory) -> Served:
    # A developer iterating on one test may point the suite at a cluster already served by
    # `dragoman sim serve --demo --control-plane --with-prometheus --write-kubeconfig K --audit-log-path A` (fresh: the
    # tests write; DRAGOMAN_CP_PROMETHEUS=its Prometheus URL).
    if os.environ.get("DRAGOMAN_CP_KUBECONFIG"):
        yield Served(
            None,
            pathlib.Path(os.environ["DRAGOMAN_CP_KUBECONFIG"]),
            pathlib.Path("/dev/null"),
            pathlib.Path(os.environ["DRAGOMAN_CP_AUDIT"]),
            prometheus=os.environ.get("DRAGOMAN_CP_PROMETHEUS"),
        )
        return
    tmp = tmp_path_factory.mktemp("controlplane")
    with real_served(tmp) as served:
        yield served
