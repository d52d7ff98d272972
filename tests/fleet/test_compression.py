"""A kubeconfig's `disable-compression: true` (kubectl 1.26+) is honoured: dragoman asks that cluster for uncompressed
answers, so a server on the same machine spends no CPU gzipping a fleet's LISTs; otherwise it asks for gzip, as
kube-apiserver serves large answers best over a network."""

from __future__ import annotations

import pathlib

import pytest
import yaml
from dragoman.fleet import cluster as cluster_mod
from dragoman.fleet.cluster import connect
from dragoman.fleet.errors import UserError
from dragoman.fleet.kubeconfig import resolve
from support.sim import running_simulator

# Enough ConfigMaps that their LIST passes the 128 KiB over which the simulator gzips, as kube-apiserver does.
CMS = [
    {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"c{i:03d}", "namespace": "default"},
        "data": {"k": "v" * 600},
    }
    for i in range(300)
]


@pytest.mark.parametrize("disabled", [False, True])
async def test_a_cluster_that_disables_compression_is_asked_for_none(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, disabled: bool
) -> None:
    inflated: list[str] = []
    real = cluster_mod._decompressor

    def spy(encoding: str, what: str, who: str):
        if encoding:
            inflated.append(encoding)
        return real(encoding, what, who)

    monkeypatch.setattr(cluster_mod, "_decompressor", spy)
    async with running_simulator(objects=CMS) as sim:
        cfg = yaml.safe_load(pathlib.Path(sim.kubeconfig_path).read_text())
        if disabled:
            for c in cfg["clusters"]:
                c["cluster"]["disable-compression"] = True
        path = tmp_path / "kubeconfig"
        path.write_text(yaml.safe_dump(cfg))
        path.chmod(0o600)
        cluster = await connect(str(path), None)
        try:
            items, _rv = await cluster.list_all("/api/v1/namespaces/default/configmaps", limit=1000)
        finally:
            await cluster.close()
        assert {i["metadata"]["name"] for i in items} >= {c["metadata"]["name"] for c in CMS}
        sent = sim.request_log.find(method="GET", path_contains="/configmaps")
        assert sent
    # The simulator gzips this answer for a client that asks (tests/sim/test_divergences.py).
    assert inflated == ([] if disabled else ["gzip"])


def test_disable_compression_must_be_a_boolean(tmp_path: pathlib.Path) -> None:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "a", "cluster": {"server": "https://a:6443", "disable-compression": "true"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "a", "user": "u"}}],
        "current-context": "c",
    }
    path = tmp_path / "kc"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(UserError, match="disable-compression"):
        resolve(str(path), environ={}, home=str(tmp_path))
    cfg["clusters"][0]["cluster"]["disable-compression"] = True
    path.write_text(yaml.safe_dump(cfg))
    assert resolve(str(path), environ={}, home=str(tmp_path)).disable_compression
