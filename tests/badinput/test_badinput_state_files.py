"""Files that are not dragoman's (issue 34): `migrate --plan --read-only` writes nothing (the helm values file once went
through a planted symlink), a release name from a cluster annotation is checked before it names a file, and `sim serve
--write-kubeconfig` never replaces a kubeconfig dragoman did not write."""

from __future__ import annotations

import os
import pathlib

import pytest
import yaml
from dragoman.actions import helm
from dragoman.fleet.errors import UserError

from tests.actions import fake_helm
from tests.actions.migrate_support import T4, base_args, cli, demo
from tests.badinput.badinput_support import assert_sentence, run_cli

NVDP = ("daemonsets.apps", "nvidia-device-plugin", "nvdp-nvidia-device-plugin")


def _tree(root: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


async def test_plan_read_only_writes_no_file_even_through_a_planted_symlink(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    state = tmp_path / "state"
    helm_folder = state / "dragoman" / "helm"
    helm_folder.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file")
    os.symlink(victim, helm_folder / "nvdp-values.json")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    async with demo() as sim:
        helm_dir = tmp_path / "helm"
        fake_helm.install(
            helm_dir,
            {
                "nvidia-device-plugin/nvdp": {
                    "chart": "nvidia-device-plugin-0.18.0",
                    "app_version": "0.18.0",
                    "values": {},
                }
            },
        )
        monkeypatch.setenv("PATH", f"{helm_dir}:{os.environ['PATH']}")
        before = _tree(tmp_path)
        rc = await cli(base_args(sim, tmp_path, T4, "--plan", "--read-only", "--step", "exclude-device-plugin"))
        out = capsys.readouterr().out
        assert rc in (0, 3), out
        assert "helm upgrade nvdp" in out.replace("\n      ", " "), "the plan goes through helm (the case at issue)"
    assert victim.read_text() == "the user's file"
    assert os.path.islink(helm_folder / "nvdp-values.json")
    after = _tree(tmp_path)
    made = sorted(set(after) - set(before) - {"helm/calls.jsonl"})
    assert made == [], f"--plan --read-only wrote {made}"


def test_the_values_file_is_never_written_through_a_symlink(tmp_path: pathlib.Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    path = helm.values_path("nvdp")
    os.makedirs(os.path.dirname(path))
    victim = tmp_path / "victim"
    victim.write_text("keep")
    os.symlink(victim, path)
    with pytest.raises(UserError) as exc:
        helm.write_values(path, {"a": 1})
    assert "symbolic link" in exc.value.message and victim.read_text() == "keep"


@pytest.mark.parametrize(
    "release",
    ["../../../.bashrc", "a/b", "UPPER", "x" * 54, "with space", "", "-lead", "evil\n", 5, ["a"]],
    ids=repr,
)
def test_a_release_name_from_an_annotation_is_checked_before_it_names_a_file(
    release: object, tmp_path: pathlib.Path, monkeypatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    ds = {"metadata": {"name": "nvdp", "namespace": "kube-system", "annotations": {helm.RELEASE: release}}}
    if release:
        with pytest.raises(UserError) as exc:
            helm.release_of(ds)
        assert "not one Helm makes" in exc.value.message
    else:
        assert helm.release_of(ds) is None  # no release at all: not Helm's
    with pytest.raises(UserError):
        helm.values_path(release)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_a_release_name_helm_makes_is_accepted(tmp_path: pathlib.Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    ds = {"metadata": {"namespace": "gpu-operator", "annotations": {helm.RELEASE: "nvdp.v2-a"}}}
    assert helm.release_of(ds) == ("nvdp.v2-a", "gpu-operator")
    assert helm.values_path("nvdp.v2-a") == str(tmp_path / "dragoman" / "helm" / "nvdp.v2-a-values.json")


# ---------------------------------------------------------------------------- sim serve --write-kubeconfig


def test_write_kubeconfig_refuses_a_users_kubeconfig_and_leaves_it_whole(tmp_path: pathlib.Path) -> None:
    kc = tmp_path / "config"
    mine = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "prod", "cluster": {"server": "https://prod.example:6443"}}],
        "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "me"}}],
        "users": [{"name": "me", "user": {"token": "secret"}}],
        "current-context": "prod",
    }
    kc.write_text(yaml.safe_dump(mine))
    before = kc.read_bytes()
    code, _out, err = run_cli("sim", "serve", "--scenario", "demo", "--write-kubeconfig", str(kc))
    assert_sentence(code, err, words=["refusing", "did not write"])
    assert kc.read_bytes() == before


@pytest.mark.parametrize("content", ["not: [valid", "", "just text\n"], ids=["broken-yaml", "empty", "text"])
def test_write_kubeconfig_refuses_any_other_file_that_is_there(tmp_path: pathlib.Path, content: str) -> None:
    kc = tmp_path / "notes.txt"
    kc.write_text(content)
    code, _out, err = run_cli("sim", "serve", "--write-kubeconfig", str(kc))
    assert_sentence(code, err, words=["refusing"])
    assert kc.read_text() == content


def test_write_kubeconfig_may_replace_one_that_sim_serve_wrote(tmp_path: pathlib.Path) -> None:
    from dragoman.tui.commands.controlplane import check_kubeconfig_target, write_kubeconfig

    kc = tmp_path / "dragoman.kubeconfig"
    ours = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "dragoman-sim", "cluster": {"server": "https://127.0.0.1:1"}}],
        "contexts": [{"name": "dragoman-sim", "context": {"cluster": "dragoman-sim", "user": "admin"}}],
        "users": [{"name": "admin", "user": {"token": "t"}}],
        "current-context": "dragoman-sim",
    }
    write_kubeconfig(str(kc), ours)
    check_kubeconfig_target(str(kc))  # a re-run of `sim serve` may write it again
    write_kubeconfig(str(kc), ours)
    assert oct(kc.stat().st_mode & 0o777) == "0o600"
