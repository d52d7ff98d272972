"""The simulator answers as the Kubernetes release the real control plane that judges it is built from."""

from __future__ import annotations

from dragoman.sim.api import openapi
from dragoman.sim.controlplane import build
from dragoman.sim.server.discovery import SERVER_VERSION


def test_the_simulator_reports_the_judges_release():
    assert SERVER_VERSION["gitVersion"] == build.KUBE_VERSION == "v1.37.2"
    assert (SERVER_VERSION["major"], SERVER_VERSION["minor"], SERVER_VERSION["minCompatibilityMinor"]) == (
        "1",
        "37",
        "36",
    )
    # kube-apiserver v1.37.2 writes its OpenAPI documents' info.version as major.minor.
    assert openapi.openapi_v3_document("", "v1")["info"] == {"title": "Kubernetes", "version": "1.37"}
