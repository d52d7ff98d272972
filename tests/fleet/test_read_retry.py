"""A read the API server sheds (429) or fumbles (5xx) is asked again, so one busy moment does not end a command."""

from __future__ import annotations

from dragoman.fleet.cluster import ApiError, connect
from support.sim import running_simulator

NAMESPACES = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("default", "kube-system", "ml")
]


async def test_reads_survive_shed_load_and_writes_are_not_repeated() -> None:
    async with running_simulator(objects=NAMESPACES) as sim:
        cluster = await connect(str(sim.kubeconfig_path), None)
        try:
            sim.faults.set(
                "error=0.3 code=429 retry-after=0 verbs=get,list resources=namespaces; "
                "error=0.2 code=503 verbs=get,list resources=namespaces; seed=3"
            )
            for _ in range(20):
                assert (await cluster.get("/api/v1/namespaces/ml"))["metadata"]["name"] == "ml"
                items, _rv = await cluster.list_all("/api/v1/namespaces")
                assert {"default", "kube-system", "ml"} <= {i["metadata"]["name"] for i in items}
            shed = [r for r in sim.request_log.find(path_contains="/api/v1/namespaces") if r.status in (429, 503)]
            assert len(shed) >= 10  # the faults really fired, and every read still succeeded

            # A write is never repeated on its own: the caller decides (a 503 on create may have landed).
            sim.faults.set("error=1.0 code=503 verbs=create resources=configmaps")
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "ml"}}
            try:
                await cluster.request("POST", "/api/v1/namespaces/ml/configmaps", body)
            except ApiError as exc:
                assert exc.status == 503
            else:
                raise AssertionError("the injected 503 did not reach the caller")
            assert len(sim.request_log.find(method="POST", path_contains="/configmaps")) == 1

            # A caller that knows its write is safe to repeat says so.
            sim.faults.set("error=0.5 code=503 verbs=create resources=configmaps; seed=7")
            made = await cluster.request("POST", "/api/v1/namespaces/ml/configmaps", body, retry=True)
            assert made["metadata"]["name"] == "x"
            posts = sim.request_log.find(method="POST", path_contains="/configmaps")
            assert [r.status for r in posts[1:]] == [503, 503, 201]  # shed twice, then asked again (seed 7 draws)
        finally:
            sim.faults.clear()
            await cluster.close()
