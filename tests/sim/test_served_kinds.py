"""Kinds real tools need from the simulator (issue 16, item 3): Secrets, Services, CRDs, the auth reviews and
serviceaccounts/token — and dragoman itself never reading the Secrets it now serves."""

from __future__ import annotations

import asyncio
import base64
import pathlib
import ssl

import aiohttp
import yaml

from tests.badinput.badinput_support import run_cli
from tests.support.sim import running_simulator

RELEASE = {
    "apiVersion": "v1",
    "kind": "Secret",
    "type": "helm.sh/release.v1",
    "metadata": {
        "name": "sh.helm.release.v1.web.v1",
        "namespace": "default",
        "labels": {"owner": "helm", "name": "web"},
    },
    "data": {"release": base64.b64encode(b"H4sIAAAAAAAA-release-payload").decode()},
}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}


class Client:
    def __init__(self, sim, user: str = "admin") -> None:
        cfg = sim.kubeconfig()
        ca = base64.b64decode(cfg["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        self.ctx = ssl.create_default_context(cadata=ca)
        self.url = sim.url
        self.headers = {"Authorization": f"Bearer {sim.users[user].token}"}

    async def __call__(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        async with aiohttp.ClientSession(headers=self.headers) as s:
            async with s.request(method, self.url + path, json=body, ssl=self.ctx) as r:
                return r.status, await r.json()


async def test_secrets_are_served_with_string_data_folded_into_data() -> None:
    async with running_simulator() as sim:
        call = Client(sim)
        code, obj = await call(
            "POST",
            "/api/v1/namespaces/default/secrets",
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "s"},
                "stringData": {"k": "v"},
                "data": {"o": "dw=="},
            },
        )
        assert code == 201 and obj["data"] == {"o": "dw==", "k": "dg=="} and "stringData" not in obj
        code, listed = await call("GET", "/api/v1/namespaces/default/secrets?labelSelector=owner%3Dhelm")
        assert code == 200 and listed["kind"] == "SecretList" and listed["items"] == []


async def test_the_kubernetes_service_and_the_custom_kinds_crds_exist() -> None:
    async with running_simulator() as sim:
        call = Client(sim)
        code, svc = await call("GET", "/api/v1/namespaces/default/services/kubernetes")
        assert (
            code == 200
            and svc["spec"]["ports"][0]["port"] == 443
            and svc["metadata"]["labels"]["component"] == "apiserver"
        )
        code, crd = await call(
            "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/prometheusrules.monitoring.coreos.com"
        )
        assert (
            code == 200
            and crd["spec"]["group"] == "monitoring.coreos.com"
            and crd["spec"]["names"]["kind"] == "PrometheusRule"
        )
        assert {c["type"]: c["status"] for c in crd["status"]["conditions"]}["Established"] == "True"
        code, _ = await call("GET", "/apis/monitoring.coreos.com/v1/namespaces/default/prometheusrules")
        assert code == 200


async def test_whoami_rules_review_token_request_and_token_review() -> None:
    async with running_simulator(users=[{"name": "viewer", "clusterRoles": ["view"]}]) as sim:
        viewer, admin = Client(sim, "viewer"), Client(sim)
        code, me = await viewer(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        )
        assert code == 201 and me["status"]["userInfo"] == {"username": "viewer", "groups": ["system:authenticated"]}
        code, rules = await viewer(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {"spec": {"namespace": "default"}}
        )
        assert (
            code == 201
            and {"verbs": ["get", "list", "watch"], "apiGroups": ["*"], "resources": ["*"]}
            in rules["status"]["resourceRules"]
        )
        assert not any("create" in r["verbs"] and "pods" in r["resources"] for r in rules["status"]["resourceRules"])
        # The bootstrap policy every authenticated user has (system:basic-user, system:discovery), as rbac.py holds it.
        assert {
            "verbs": ["create"],
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
        } in rules["status"]["resourceRules"]
        assert any(
            "/version" in r["nonResourceURLs"] and "/apis/*" in r["nonResourceURLs"]
            for r in rules["status"]["nonResourceRules"]
        )
        code, _ = await viewer("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {"spec": {}})
        assert code == 422
        code, tr = await admin(
            "POST", "/api/v1/namespaces/default/serviceaccounts/default/token", {"spec": {"expirationSeconds": 600}}
        )
        assert code == 201 and tr["kind"] == "TokenRequest" and tr["status"]["token"]
        token = tr["status"]["token"]
        # The token works as that service account, and a TokenReview says who it is.
        code, review = await admin("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {"spec": {"token": token}})
        assert code == 201 and review["status"]["authenticated"] is True
        assert review["status"]["user"]["username"] == "system:serviceaccount:default:default"
        code, review = await admin("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {"spec": {"token": "nope"}})
        assert code == 201 and not review["status"].get("authenticated")
        code, _ = await viewer("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {"spec": {"token": token}})
        assert code == 403  # view does not grant create tokenreviews
        sa = Client(sim)
        sa.headers = {"Authorization": f"Bearer {token}"}
        code, _ = await sa("GET", "/api/v1/nodes")
        assert code == 403  # authenticated as the service account, which RBAC grants nothing
        code, _ = await admin("POST", "/api/v1/namespaces/default/serviceaccounts/absent/token", {})
        assert code == 404


async def test_dragoman_snapshot_never_reads_the_secrets_the_simulator_serves(tmp_path: pathlib.Path) -> None:
    async with running_simulator(objects=[NODE, RELEASE]) as sim:
        out = tmp_path / "snap.yaml"
        code, _o, err = await asyncio.to_thread(run_cli, "snapshot", str(out), "--kubeconfig", str(sim.kubeconfig_path))
        assert code == 0, err
        text = out.read_text()
        assert "kind: Secret" not in text and RELEASE["data"]["release"] not in text and "n1" in text
        assert yaml.safe_load(text)["kind"] == "List"
        assert not [r for r in sim.request_log if r.resource == "secrets"]
