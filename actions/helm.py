"""Helm for the switch: which release owns an object, `helm get values`, and a `helm upgrade` with merged values, shown
before it runs."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import shlex
import shutil
from typing import Any

from dragoman.fleet.errors import ExitCode, UserError

RELEASE = "meta.helm.sh/release-name"
RELEASE_NS = "meta.helm.sh/release-namespace"
# Where the charts dragoman meets are published (dra-facts.md §d); an operator's own repo alias is not known to us.
CHART_SOURCES: dict[str, list[str]] = {
    "nvidia-device-plugin": ["nvidia-device-plugin", "--repo", "https://nvidia.github.io/k8s-device-plugin"],
    "dra-driver-nvidia-gpu": ["oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu"],
    "nvidia-dra-driver-gpu": ["nvidia-dra-driver-gpu", "--repo", "https://helm.ngc.nvidia.com/nvidia"],
}
DRA_CHART = "dra-driver-nvidia-gpu"
DRA_CHART_VERSION = "0.4.0"


def helm_binary() -> str | None:
    """`helm` on PATH, or None (then dragoman says what to run instead of running it)."""
    return shutil.which("helm")


MAX_RELEASE_NAME = 53  # Helm's own limit (`helm install` refuses longer names)


def release_problem(release: object, namespace: object) -> str:
    """Empty when `release` is a Helm release name (lowercase DNS-1123 subdomain, at most 53 characters) and `namespace`
    a namespace name; else what is wrong. The name goes into a file name and a command line: what a cluster's
    annotation says is checked before either."""
    from dragoman.fleet.errors import printable
    from dragoman.fleet.k8s.names import is_dns1123_label, is_dns1123_subdomain

    if not isinstance(release, str) or is_dns1123_subdomain(release) or len(release) > MAX_RELEASE_NAME:
        return f"the Helm release name {printable(repr(release), 80)} is not one Helm makes"
    if not isinstance(namespace, str) or is_dns1123_label(namespace):
        return f"the Helm release namespace {printable(repr(namespace), 80)} is not a namespace name"
    return ""


def release_of(obj: dict) -> tuple[str, str] | None:
    """(release, namespace) of the Helm release that owns an object, from the annotations Helm writes; a UserError
    when those annotations hold something that is not a release name (they are the cluster's word, not ours)."""
    md = obj.get("metadata") or {}
    ann = md.get("annotations") or {}
    if ann.get(RELEASE):
        release, namespace = ann[RELEASE], ann.get(RELEASE_NS) or md.get("namespace", "")
        problem = release_problem(release, namespace)
        if problem:
            raise UserError(
                f"{md.get('namespace', '')}/{md.get('name', '')}'s annotation {RELEASE}: {problem}; dragoman will not "
                "use it in a file name or a helm command. Fix the annotation, or migrate by hand.",
                ExitCode.PROBLEM,
            )
        return release, namespace
    return None


def chart_of(obj: dict) -> tuple[str, str] | None:
    """(chart, version) from the helm.sh/chart label ("<chart>-<version>")."""
    label = ((obj.get("metadata") or {}).get("labels") or {}).get("helm.sh/chart") or ""
    if "-" not in label:
        return None
    name, _, version = label.rpartition("-")
    if not version[:1].isdigit() and not version.startswith("v"):
        return None
    return name, version


def cluster_flags(cluster: Any) -> list[str]:
    """--kubeconfig/--kube-context so helm talks to the cluster dragoman talks to."""
    out: list[str] = []
    sources = list(getattr(getattr(cluster, "config", None), "sources", None) or [])
    if sources:
        out += ["--kubeconfig", sources[0]]
    if getattr(cluster, "context_name", None):
        out += ["--kube-context", cluster.context_name]
    return out


def command_text(args: list[str]) -> str:
    return "helm " + " ".join(shlex.quote(a) for a in args)


async def run(args: list[str], *, timeout: float = 600.0) -> str:
    """Run helm; its stdout. A failure is a sentence with helm's own message."""
    exe = helm_binary()
    if exe is None:
        raise UserError(
            "helm is not on PATH; run the helm command shown in the plan by hand, or install helm.", ExitCode.PROBLEM
        )
    proc = await asyncio.create_subprocess_exec(
        exe, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        raise UserError(f"`{command_text(args)}` did not finish in {timeout:g} s.", ExitCode.PROBLEM) from None
    if proc.returncode != 0:
        msg = err.decode(errors="replace").strip().splitlines()
        raise UserError(
            f"`{command_text(args[:3])} …` failed: {msg[-1] if msg else f'exit {proc.returncode}'}", ExitCode.PROBLEM
        )
    return out.decode(errors="replace")


async def get_values(cluster: Any, release: str, namespace: str) -> dict:
    """The values the release was installed with (`helm get values -o json`, user-supplied only)."""
    text = await run(["get", "values", release, "-n", namespace, "-o", "json", *cluster_flags(cluster)])
    data = json.loads(text or "null")
    return data if isinstance(data, dict) else {}


async def release_info(cluster: Any, release: str, namespace: str) -> dict | None:
    """`helm list` entry of the release ({name, namespace, chart: "<name>-<version>", app_version, revision}), or
    None."""
    text = await run(["list", "-n", namespace, "--filter", f"^{release}$", "-o", "json", *cluster_flags(cluster)])
    for r in json.loads(text or "[]") or []:
        if r.get("name") == release:
            return r
    return None


def split_chart(chart: str) -> tuple[str, str]:
    name, _, version = chart.rpartition("-")
    return (name, version) if name else (chart, "")


def values_path(release: str) -> str:
    """Where the merged values of `release` go (the path shown in the plan's helm command). Only a path: nothing is
    written while a plan is made (`--plan` and `--read-only` write nothing); write_values writes it when the step
    runs."""
    problem = release_problem(release, "default")
    if problem:
        raise UserError(f"{problem}; dragoman will not use it in a file name.", ExitCode.PROBLEM)
    d = pathlib.Path(os.environ.get("XDG_STATE_HOME") or pathlib.Path.home() / ".local" / "state") / "dragoman" / "helm"
    return str(d / f"{release}-values.json")


def write_values(path: str, values: dict) -> None:
    """The values file, written as every state file is (fleet/safefile.py: its folder made 0700 when absent, never
    through a symbolic link or over anything but a regular file, 0600, atomic)."""
    from dragoman.fleet.safefile import write_atomic

    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot make the folder {folder} for helm's values ({exc.strerror or exc}).") from None
    write_atomic(path, lambda f: f.write(json.dumps(values, indent=2, sort_keys=True)), "helm's values")


def upgrade_args(
    cluster: Any, release: str, namespace: str, chart: str, version: str, values_path: str, *, install: bool = False
) -> list[str]:
    """`helm upgrade [--install]` of the installed chart and version with the merged values file (no --reuse-values:
    the file already holds every earlier value)."""
    source = CHART_SOURCES.get(chart, [chart])
    args = (
        ["upgrade"]
        + (["--install"] if install else [])
        + [release, source[0], *source[1:], "--version", version, "-n", namespace]
    )
    if install:
        args.append("--create-namespace")
    args += ["-f", values_path, "--wait", *cluster_flags(cluster)]
    return args


def merged(base: dict, patch: dict) -> dict:
    """Deep merge: maps merge, anything else from `patch` replaces (as helm merges -f files)."""
    out = json.loads(json.dumps(base))
    for k, v in patch.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merged(out[k], v)
        else:
            out[k] = json.loads(json.dumps(v))
    return out
