"""dragoman where SREs already are: `dragoman explain` (the TUI's describe page, headless), the k9s plugin that runs it
(the exact command line k9s would run), `kubectl dragoman` through real kubectl, `--version` and shell completion."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest
import yaml
from dragoman.sim.scenarios import DEMO_PATH

from dragoman import __version__
from tests.support.serve import served
from tests.tui.conftest import demo_app, wait_for

BIN = pathlib.Path(sys.executable).parent
STUCK = ("Pod", "research", "llm-eval-tjswx")  # the demo's Job pod whose claim template's selector matches nothing
L4_NODE = "gke-ml-prod-l4-serve-b6676f05-zj2f"


def _run(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "dragoman"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def _k9s_args(plugin: dict, env: dict[str, str]) -> list[str]:
    """What k9s executes for a plugin (internal/view/actions.go pluginAction): `command` with each arg's $VARs
    substituted from its environment of the selected row, longest names first; no shell."""
    out = []
    for arg in plugin["args"]:
        for key in sorted(env, key=len, reverse=True):
            arg = arg.replace(f"${key}", env[key])
        out.append(arg)
    return [plugin["command"], *out]


@pytest.fixture(scope="module")
def demo_kubeconfig(tmp_path_factory):
    with served(DEMO_PATH, tmp_path_factory.mktemp("explain")) as kubeconfig:
        yield kubeconfig


def test_the_k9s_plugin_runs_explain_on_the_selected_pod_node_and_claim(demo_kubeconfig, tmp_path) -> None:
    out = _run("k9s-plugin", "--command", str(BIN / "dragoman"))
    assert out.returncode == 0, out.stderr
    plugins = yaml.safe_load(out.stdout)["plugins"]
    assert {p["scopes"][0] for p in plugins.values()} == {"pods", "nodes", "resourceclaims"}
    assert all(p["shortCut"] == "Shift-E" and p["command"] == str(BIN / "dragoman") for p in plugins.values())
    assert not any(p.get("background") for p in plugins.values())  # k9s gives it the terminal (the pager)
    # The definition shipped in the package is the same, with the plain name for PATH to find.
    from dragoman.tui.commands.k9s_plugin import shipped_text

    shipped = yaml.safe_load(shipped_text())["plugins"]
    assert {k: {**v, "command": "x"} for k, v in shipped.items()} == {
        k: {**v, "command": "x"} for k, v in plugins.items()
    }
    assert {p["command"] for p in shipped.values()} == {"dragoman"}

    k9s_env = {"CONTEXT": "dragoman-sim-viewer", "KUBECONFIG": str(demo_kubeconfig), "CLUSTER": "dragoman-sim"}
    pod = _k9s_args(plugins["dragoman-pod"], {**k9s_env, "NAMESPACE": STUCK[1], "NAME": STUCK[2]})
    run = subprocess.run(pod, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    # The finding first: what is wrong with the stuck pod, its evidence and the fix; exit 1 (an error finding).
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "Describe Pod research/llm-eval-tjswx" and lines[2] == "Findings:"
    assert lines[3].startswith("  [error] pending-selector: pod research/llm-eval-tjswx cannot get its devices")
    assert "fix: Fix the selector of ResourceClaimTemplate" in run.stdout and "h100-80gi" in run.stdout
    assert "Owners:\n  Job llm-eval" in run.stdout

    node = _k9s_args(plugins["dragoman-node"], {**k9s_env, "NAMESPACE": "", "NAME": L4_NODE})
    run = subprocess.run(node, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert run.stdout.startswith(f"Describe Node {L4_NODE}\n"), run.stderr
    assert "GPUs:\n  pool: l4-serve" in run.stdout

    claim = re.search(r"model → (\S+)", pod_text := "\n".join(lines))
    assert claim, pod_text
    rc = _k9s_args(plugins["dragoman-resourceclaim"], {**k9s_env, "NAMESPACE": "research", "NAME": claim.group(1)})
    run = subprocess.run(rc, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert run.stdout.startswith(f"Describe ResourceClaim research/{claim.group(1)}\n"), run.stderr
    assert "allocated: no" in run.stdout


async def test_explain_prints_what_the_tuis_describe_page_shows() -> None:
    cli = await _async_run("explain", "pod", f"{STUCK[1]}/{STUCK[2]}", "--snapshot", str(DEMO_PATH))
    async with demo_app() as (_sim, app, pilot):
        app.open_detail(STUCK, "describe")
        await wait_for(
            pilot,
            lambda: getattr(app.screen, "mode", "") == "describe" and getattr(app.screen, "ready", False),
            what="the describe page",
        )
        heading = str(app.screen.query_one("#heading").render())
        body = str(app.screen.query_one("#detail-text").content)  # the page's text (drawn with hanging indents)
    assert cli.stdout.splitlines()[0] == heading
    assert cli.stdout.splitlines()[1:] == body.rstrip("\n").splitlines()[1:]


async def _async_run(*args: str) -> subprocess.CompletedProcess:
    import asyncio

    return await asyncio.to_thread(_run, *args)


def test_explain_refuses_what_it_cannot_explain_with_a_sentence() -> None:
    snap = ["--snapshot", str(DEMO_PATH)]
    cases = [
        (["explain", "banana", "x", *snap], "is not a kind dragoman explains"),
        (["explain", "pod", "research/nope", *snap], "Pod research/nope is not in the fleet read from snapshot"),
        (["explain", "node", "a/b", *snap], "a Node has no namespace"),
        (["explain", "pod", "a/b", "-n", "c", *snap], "names namespace 'a' but -n says 'c'"),
        (["explain", "pod", "/x", *snap], "give a Pod as NAMESPACE/NAME"),
        (["explain", "pod", "x\x1b[2J", *snap], "default/x\\x1b[2J is not in the fleet"),
    ]
    for args, says in cases:
        out = _run(*args)
        assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr, (args, out.stderr)
        assert out.stdout == ""
    ok = _run("explain", "no", L4_NODE, *snap, "-o", "json")
    import json

    doc = json.loads(ok.stdout)
    assert ok.returncode == 0 and doc["object"] == {"kind": "Node", "namespace": None, "name": L4_NODE}
    assert [s["name"] for s in doc["sections"]][:2] == ["Findings", "GPUs"]


@pytest.mark.kubectl
def test_kubectl_finds_the_plugin_and_kubectl_dragoman_check_honours_its_flags(demo_kubeconfig, tmp_path) -> None:
    from tests.support.kubectl import ensure_binary

    kubectl = ensure_binary("kubectl")
    path = tmp_path / "bin"
    path.mkdir()
    (path / "kubectl-dragoman").symlink_to(BIN / "kubectl-dragoman")
    env = {"PATH": f"{path}:{kubectl.parent}:/usr/bin:/bin", "HOME": str(tmp_path), "KUBECONFIG": "/nonexistent"}
    found = subprocess.run([str(kubectl), "plugin", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert str(path / "kubectl-dragoman") in found.stdout, found.stdout + found.stderr
    args = ["dragoman", "check", f"--kubeconfig={demo_kubeconfig}", "--context", "dragoman-sim-viewer"]
    check = subprocess.run([str(kubectl), *args], capture_output=True, text=True, env=env, timeout=120)
    assert check.returncode == 1, check.stderr  # the demo has error findings
    assert check.stdout.startswith("Fleet read from context dragoman-sim-viewer at https://127.0.0.1:")
    assert "pending-selector" in check.stdout
    # KUBECONFIG from the environment, as kubectl hands it on, when no flag is given.
    env["KUBECONFIG"] = str(demo_kubeconfig)
    cel = subprocess.run(
        [str(kubectl), "dragoman", "cel", "device.driver == 'gpu.nvidia.com'"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert cel.returncode == 0 and "match" in cel.stdout, cel.stdout + cel.stderr
    # migrate's plan through kubectl, as the viewer context given on the command line: its RBAC gaps are the plan's.
    plan = subprocess.run(
        [str(kubectl), "dragoman", "migrate", "--pool", "l4-serve", "--plan", *args[2:]],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert plan.returncode == 3 and "Migration plan mig-l4-serve-" in plan.stdout, plan.stdout + plan.stderr
    assert "(context dragoman-sim-viewer)" in plan.stdout and "user 'viewer' may not" in plan.stdout
    usage = subprocess.run([str(kubectl), "dragoman", "--help"], capture_output=True, text=True, env=env, timeout=60)
    assert usage.stdout.startswith("usage: kubectl dragoman ")


def test_version_and_completion_come_from_the_parser() -> None:
    from importlib.metadata import version

    out = _run("--version")
    assert out.stdout == f"dragoman {__version__}\n" and version("dragoman") == __version__
    bash = _run("completion", "bash")
    assert bash.returncode == 0 and "shtab" in bash.stdout
    # Every subcommand and a subcommand's flags are offered, and the script is valid bash.
    for word in ("explain", "k9s-plugin", "migrate", "--with-prometheus", "--accept-capacity-change"):
        assert word in bash.stdout, word
    assert subprocess.run(["bash", "-n"], input=bash.stdout, text=True).returncode == 0
    zsh = _run("completion", "zsh")
    assert zsh.returncode == 0 and zsh.stdout.startswith("#compdef dragoman")
    bad = _run("completion", "fish")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
